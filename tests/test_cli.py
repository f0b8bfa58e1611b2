"""User code visible to the CLI (jbo.plugins: `--import` modules and installed entry points), the
registries' register(...) checks, registered kernel names, and what `jbo algorithms` / `jbo problems`
list."""

import io
import re
import sys
import uuid
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jbo
from jbo import cli, gp, kernels, plugins

GP_SMALL = dict(
    num_initial=3, hypers=jbo.parts.Refit(steps=3), maximiser=jbo.parts.Maximiser(num_raw=16, num_starts=2, steps=2)
)

# A user's module: an algorithm with a Params domain and a problem, registered when it is imported; it
# imports a sibling module of its folder ({helper}).
PLUGIN = '''
"""A user's methods for jbo."""
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

import jbo
from jbo import data
from {helper} import CENTRE


class PerturbParams(NamedTuple):
    scale: float = 0.1
    DOMAIN = {{"scale": "(0, inf)"}}


class PerturbState(NamedTuple):
    buffer: data.Buffer


class PerturbBest(jbo.Algorithm):
    """The best point so far plus N(0, scale^2) noise, clipped to the box."""

    num_initial: int = eqx.field(static=True, default=3)

    def default_params(self):
        return PerturbParams()

    def init(self, key, params, spec):
        return PerturbState(data.empty(spec.num_steps, spec.dim))

    def ask(self, key, state, params, step):
        b = state.buffer
        best = b.x[jnp.argmax(jnp.where(b.mask, b.y, -jnp.inf))]
        return jnp.clip(best + params.scale * jax.random.normal(key, best.shape), 0.0, 1.0), state

    def tell(self, key, state, params, action, observation, step):
        return PerturbState(data.append(state.buffer, action, observation))


def bowl():
    """A quadratic bowl on [0, 1]^2 with its maximum 0 at CENTRE."""
    return jbo.problems.from_function(
        lambda x: -jnp.sum((x - CENTRE) ** 2), [[0.0, 0.0], [1.0, 1.0]], "bowl", optimal_value=0.0
    )


jbo.algorithms.register("{alg}", PerturbBest)
jbo.problems.register("{prob}", bowl)
'''


@pytest.fixture
def registries(monkeypatch):
    """The registries as copies, restored after the test: what a test registers does not leak."""
    monkeypatch.setattr(jbo.algorithms, "REGISTRY", dict(jbo.algorithms.REGISTRY))
    monkeypatch.setattr(jbo.problems, "REGISTRY", dict(jbo.problems.REGISTRY))
    monkeypatch.setattr(kernels, "REGISTERED", dict(kernels.REGISTERED))
    monkeypatch.setattr(plugins, "loaded_groups", set(plugins.loaded_groups))
    monkeypatch.setattr(sys, "path", list(sys.path))  # import_modules appends a file's folder


def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _plugin(folder) -> tuple:
    """Write a plug-in module (and its sibling) into folder: (path, algorithm name, problem name)."""
    helper, alg, prob = _unique("helper"), _unique("perturb_best"), _unique("bowl")
    (folder / f"{helper}.py").write_text("CENTRE = 0.3\n")
    path = folder / "my_methods.py"
    path.write_text(PLUGIN.format(helper=helper, alg=alg, prob=prob))
    return path, alg, prob


# ------------------------------------------------------------------------------------------ modules
def test_import_modules_imports_a_file_with_a_sibling_once(tmp_path, registries):
    path, alg, prob = _plugin(tmp_path)
    path_entries = len(sys.path)
    (module,) = plugins.import_modules([str(path)], "test")
    assert module.__name__ == plugins.module_name(path.resolve()) and module.__name__.startswith("jbo_user_my_methods_")
    assert alg in jbo.algorithms.names() and prob in jbo.problems.names()
    assert float(jbo.problems.get(prob).optimal_value) == 0.0
    assert sys.path[-1] == str(tmp_path) and len(sys.path) == path_entries + 1  # the file's folder, at the end
    # the same file again (a CLI flag and a config naming it): the module imported first, not run twice
    assert plugins.import_modules([str(path), "json"], "test") == [module, sys.modules["json"]]


def test_import_errors_name_the_module_where_it_came_from_and_the_cause(tmp_path, registries):
    with pytest.raises(ValueError, match=r"^jbo study --import\[0\]: cannot import 'nope\.py': no such file"):
        plugins.import_modules(["nope.py"], "jbo study --import")
    with pytest.raises(ValueError, match=r"imports\[1\]: cannot import 'no_such_mod_xyz': ModuleNotFoundError: .*"):
        plugins.import_modules(["json", "no_such_mod_xyz"], "study config: imports")
    with pytest.raises(ValueError, match=r"\(a file\? give its path, e\.g\. no_such_mod_xyz\.py\)"):
        plugins.import_modules(["no_such_mod_xyz"], "x")
    bad = tmp_path / "bad_module.py"
    bad.write_text("raise RuntimeError('the user module broke\\n on two lines')\n")
    with pytest.raises(ValueError) as e:
        plugins.import_modules([str(bad)], "jbo algorithms --import")
    assert str(e.value) == (
        f"jbo algorithms --import[0]: cannot import {str(bad)!r}: RuntimeError: the user module broke on two lines"
    )
    assert plugins.module_name(bad.resolve()) not in sys.modules  # a failed import leaves nothing behind
    for specs in ("json", None, [""], [3]):
        with pytest.raises(ValueError, match="^here"):
            plugins.import_modules(specs, "here")


def test_cli_lists_and_runs_an_imported_plugin(tmp_path, registries, capsys):
    path, alg, prob = _plugin(tmp_path)
    config = tmp_path / "study.toml"
    config.write_text(f'seeds = 2\nsteps = 6\nmethods = ["{alg}"]\nproblems = ["{prob}"]\n')
    out = tmp_path / "out"
    # without the module the config names nothing known: exit 2 with the config's error
    assert cli.main(["study", str(config), "--out", str(out), "--quiet"]) == 2
    assert f"unknown algorithm {alg!r}" in capsys.readouterr().err
    assert cli.main(["study", str(config), "--import", str(path), "--out", str(out), "--quiet"]) == 0
    table = pd.read_csv(out / "table.csv")
    assert set(table.method) == {alg} and set(table.problem) == {prob} and table.seed.nunique() == 2
    assert table.step.max() == 6 and np.isfinite(table.simple_regret).all()
    capsys.readouterr()
    assert cli.main(["problems", "--import", str(path)]) == 0
    listed = capsys.readouterr().out
    about = "    A quadratic bowl on [0, 1]^2 with its maximum 0 at CENTRE.\n    space: box, d = 2; optimum: 0.0\n"
    assert f"\n{prob}\n{about}" in listed
    assert cli.main(["algorithms", "--import", str(path), "--import", "json"]) == 0
    listed = capsys.readouterr().out
    block = listed.split(f"\n{alg}\n")[1].split("\n    options")[0]
    assert "The best point so far plus N(0, scale^2) noise, clipped to the box." in block
    assert re.search(r"^        scale = 0\.1  \(0, inf\)$", block, re.M), block
    assert cli.main(["algorithms", "--import", str(tmp_path / "missing.py")]) == 2
    assert "jbo algorithms --import[0]: cannot import" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ entry points
EP_MODULE = '''
import jbo


def make_random(**options):
    """Random search, installed as a plug-in."""
    return jbo.algorithms.RandomSearch(**options)


def ridge():
    """A ridge on [0, 1]: f(x) = 1 - |x - 0.5|, installed as a plug-in."""
    return jbo.problems.from_function(lambda x: 1.0 - abs(x[0] - 0.5), [[0.0], [1.0]], "ridge", 1.0)


def cauchy(r2):
    return 1.0 / (1.0 + r2)


NOT_CALLABLE = 3
'''


def _distribution(site, name: str, groups: dict) -> None:
    """An installed distribution as pip leaves it: NAME-1.0.dist-info with METADATA and entry_points.txt."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for g, eps in groups.items())
    )


def test_entry_point_plugins_are_used_by_name_and_broken_ones_skipped(tmp_path, registries, monkeypatch):
    module, dist = _unique("jbo_ep_plugin"), _unique("jbo_test_plugin")
    alg, prob, kern = _unique("ep_random"), _unique("ep_ridge"), _unique("ep_cauchy")
    (tmp_path / f"{module}.py").write_text(EP_MODULE)
    _distribution(
        tmp_path,
        dist,
        {
            "jbo.algorithms": {alg: f"{module}:make_random", "gp_ucb": f"{module}:make_random"},
            "jbo.problems": {
                prob: f"{module}:ridge",
                "ep_broken": f"{module}_missing:ridge",
                "ep_three": f"{module}:NOT_CALLABLE",
            },
            "jbo.kernels": {kern: f"{module}:cauchy", "se": f"{module}:cauchy"},
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "loaded_groups", set())
    gp_ucb = jbo.algorithms.REGISTRY["gp_ucb"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = jbo.algorithms.names()
        listed = io.StringIO()
        cli.listing("problems", listed)  # a broken plug-in is skipped, the listing goes on
        kernel_names = kernels.names()
    messages = [str(w.message) for w in caught]
    assert alg in names and jbo.algorithms.REGISTRY["gp_ucb"] is gp_ucb  # a built-in is never shadowed
    assert any(f"'gp_ucb' = '{module}:make_random'" in m and dist in m and "already registered" in m for m in messages)
    assert any("'ep_broken'" in m and "failed to load: ModuleNotFoundError" in m for m in messages)
    assert any("'ep_three'" in m and "not callable" in m for m in messages)
    assert any("'se'" in m and "built-in kernel" in m for m in messages)
    assert f"\n{prob}\n    A ridge on [0, 1]: f(x) = 1 - |x - 0.5|, installed as a plug-in.\n" in listed.getvalue()
    assert "ep_broken" not in listed.getvalue()
    assert kern in kernel_names and kernel_names[:5] == list(kernels.NAMES)
    # used by name: an algorithm on a problem, and a kernel name in a GP model
    trace = jbo.run_seeds(
        jbo.algorithms.get(alg, num_initial=2), jbo.problems.get(prob), key=jax.random.key(0), num_steps=4, num_seeds=2
    )
    assert np.asarray(trace.metrics["simple_regret"]).shape == (2, 4)
    assert float(kernels.from_sqdist(kern, kernels.KernelParams(1.0, 2.0), jnp.asarray(3.0))) == 0.5
    assert gp.GPModel(kernel=kern).kernel == kern
    sys.modules.pop(module, None)


def test_entry_points_are_read_lazily_and_once(registries, monkeypatch):
    calls = []
    monkeypatch.setattr(plugins, "_entry_points", lambda group: calls.append(group) or [])
    monkeypatch.setattr(plugins, "loaded_groups", set())
    jbo.algorithms.get("random_search")  # a known name: no look-up
    assert calls == []
    jbo.algorithms.names(), jbo.algorithms.names()
    with pytest.raises(ValueError, match="unknown algorithm 'not_there'"):
        jbo.algorithms.get("not_there")
    with pytest.raises(ValueError, match="unknown problem 'not_there'"):
        jbo.problems.get("not_there")
    with pytest.raises(ValueError, match=r"unknown kernel 'not_there'; choose one of \['se'"):
        kernels.check_name("not_there")
    assert calls == ["jbo.algorithms", "jbo.problems", "jbo.kernels"]
    plugins.refresh()
    jbo.problems.names()
    assert calls[-1] == "jbo.problems"


# ------------------------------------------------------------------------------------------ register
@pytest.mark.parametrize("registry", [jbo.algorithms, jbo.problems, kernels], ids=lambda r: r.__name__)
def test_register_refuses_duplicates_bad_names_and_non_callables(registry, registries):
    name = _unique("mine")
    first, second = (lambda **o: None), (lambda **o: None)
    registry.register(name, first)
    with pytest.raises(ValueError, match=f"'{name}' is already registered; choose another name, or pass replace=True"):
        registry.register(name, second)
    registry.register(name, second, replace=True)
    table = kernels.REGISTERED if registry is kernels else registry.REGISTRY
    assert table[name] is second
    for bad in ("", "  ", 3, None, ["a"]):
        with pytest.raises(ValueError, match="name must be a non-empty string"):
            registry.register(bad, first)
    with pytest.raises(ValueError, match="factory must be callable, got 3"):
        registry.register(_unique("other"), 3)
    builtin = "se" if registry is kernels else "gp_ucb" if registry is jbo.algorithms else "branin"
    with pytest.raises(ValueError, match=f"'{builtin}' is"):
        registry.register(builtin, first)


def test_builtin_kernels_cannot_be_replaced(registries):
    for name in kernels.NAMES:
        with pytest.raises(ValueError, match=f"'{name}' is a built-in kernel and cannot be replaced"):
            kernels.register(name, lambda r2: r2, replace=True)


def test_a_replaced_builtin_describes_itself(registries):
    def mine(**options):
        """My own UCB."""
        return jbo.algorithms.RandomSearch(**options)

    jbo.algorithms.register("gp_ucb", mine, replace=True)
    assert jbo.algorithms.describe("gp_ucb") == "My own UCB."


@pytest.mark.extended
def test_a_registered_kernel_works_in_a_gp_model_and_in_algorithm_options(registries):
    def cauchy(r2):
        return 1.0 / (1.0 + r2)

    name = _unique("cauchy")
    kernels.register(name, cauchy)
    x = jax.random.uniform(jax.random.key(0), (10, 2))
    buffer = jbo.data.from_arrays(x, jnp.sin(6 * x[:, 0]) + x[:, 1], capacity=12)
    params = gp.default_params(2, 0.3)
    by_name = gp.predict(gp.condition(buffer, params, gp.GPModel(kernel=name)), jnp.array([0.5, 0.5]))
    by_profile = gp.predict(gp.condition(buffer, params, gp.GPModel(kernel=cauchy)), jnp.array([0.5, 0.5]))
    np.testing.assert_allclose(by_name, by_profile, rtol=1e-12)
    # an algorithm option, as a study config gives it
    study = jbo.study_config.parse(
        {
            "seeds": 2,
            "steps": 5,
            "methods": {"u": {"name": "gp_ucb", "options": {"model": name, **GP_SMALL}}},
            "problems": ["branin"],
        }
    )
    alg = study.algorithms["u"]
    assert alg.model.kernel == name
    trace = jbo.run_seeds(alg, jbo.problems.get("branin"), key=jax.random.key(1), num_steps=5, num_seeds=2)
    assert np.isfinite(np.asarray(trace.metrics["simple_regret"])).all()
    with pytest.raises(ValueError, match=f"unknown kernel 'cauchyy'; choose one of .*'{name}'"):
        jbo.algorithms.get("gp_ucb", model="cauchyy")


# ------------------------------------------------------------------------------------------ listings
def test_algorithms_listing_shows_config_names_defaults_domains_and_distinct_descriptions():
    out = io.StringIO()
    assert cli.listing("algorithms", out) == 0
    text = out.getvalue()
    block = text.split("\ngp_ucb\n")[1].split("\n    options")[0]
    assert block.startswith("    GP-BO with the upper confidence bound (UCB) acquisition")
    assert re.search(r"^        beta\s+= 2\.0\s+\[0, inf\)$", block, re.M), block
    assert re.search(r"^        mean\s+= 0\.0\s+real$", block, re.M), block
    options = text.split("\ngp_ucb\n")[1].split("\n    options: ")[1].split("\n")[0]
    assert options.startswith("num_initial, growth, acquisition") and "maximiser" in options and "batching" in options
    assert "acquisition.beta" not in text and "hypers.lengthscale" not in text  # config names, not paths
    assert "not built with its default options: sbo_oracle needs oracle=" in text
    builtin = set(jbo.algorithms.BUILTIN)
    assert set(jbo.algorithms.DESCRIPTIONS) == builtin
    lines = [jbo.algorithms.describe(n) for n in sorted(builtin)]
    assert all(lines) and len(set(lines)) == len(lines)
    for name in builtin:
        assert f"\n{name}\n    {jbo.algorithms.describe(name)}\n" in "\n" + text


def test_param_rows_name_fields_a_config_cannot_set():
    from typing import NamedTuple

    class Inner(NamedTuple):
        beta: float = 1.0
        DOMAIN = {"beta": "[0, inf)"}

    class Outer(NamedTuple):
        first: Inner = Inner()
        second: Inner = Inner(2.0)
        gamma: float = 0.5
        flag: bool = True
        vector: jax.Array = jnp.array([0.5, 1.5])
        label: str = "x"

    rows = cli.param_rows(Outer())
    assert rows == [
        ("first.beta", "1.0", "[0, inf)", "(name shared by another field: not settable from a config)"),
        ("second.beta", "2.0", "[0, inf)", "(name shared by another field: not settable from a config)"),
        ("gamma", "0.5", "real", ""),
        ("flag", "true", "real", ""),
        ("vector", "[0.5, 1.5]", "real", ""),
        ("label", "'x'", "real", "(not a number: not settable from a config)"),
    ]


def test_problems_listing_shows_every_problem_without_an_error():
    out = io.StringIO()
    assert cli.listing("problems", out) == 0
    text = out.getvalue()
    listed = [line for line in text.splitlines() if not line.startswith(" ")]
    assert listed == jbo.problems.names()
    assert "error" not in text.lower() and "Traceback" not in text
    assert "\nhartmann6\n    Hartmann, 6-D\n    space: box, d = 6; optimum: 3.32236801" in text
    assert "\nsbo_kde:hartmann\n" in text and "space: box, d = 5, context d = 1; optimum: 2.61356" in text
    assert "options: arms (required), values (required), change_points" in text
    assert "ucvs:plant\n" in text and "options: cost_set, variance, noise_std" in text


CHEAP = [
    n
    for n in jbo.problems.ABOUT
    if not n.startswith(("sbo_kde:", "hpo:", "ucvs:")) and n not in ("gp_sample", "drifting_arms")
]
COSTLY = [n for n in jbo.problems.ABOUT if n not in CHEAP and n != "drifting_arms"]


def check_about(name):
    info, problem = jbo.problems.ABOUT[name], jbo.problems.get(name)
    assert jbo.problems.space_text(problem) == info.space, name
    if not isinstance(info.optimum, str):
        value = getattr(problem, "optimal_value", None)
        assert (value is None) == (info.optimum is None), name
        if value is not None:
            assert np.isclose(float(value), info.optimum, rtol=1e-12, atol=1e-12), (name, value)


def test_about_covers_every_builtin_problem_and_matches_the_cheap_ones_built():
    assert set(jbo.problems.ABOUT) == set(jbo.problems.BUILTIN)
    for name in CHEAP:
        check_about(name)
    assert jbo.problems.about("drifting_arms").space.startswith("finite arms given by the options")


@pytest.mark.slow
@pytest.mark.parametrize("name", COSTLY)
def test_about_matches_the_costly_problems_built(name):
    if name.startswith("hpo:"):
        pytest.importorskip("sklearn")
    check_about(name)
