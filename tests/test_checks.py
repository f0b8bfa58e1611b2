"""jbo.checks against independent expectations (NumPy re-computations of the flags, domains written
out by hand), the on_nonfinite argument at every entry point, a host objective that raises inside a
compiled run, and the `jbo cache` command on a temporary cache directory."""

import math
import os
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import cache, checks, cli
from jbo.checks import NonFiniteError

ROOT = Path(__file__).resolve().parents[1]
RANDOM = jbo.algorithms.get("random_search", num_initial=2)
BRANIN = jbo.problems.get("branin")


# ---------------------------------------------------------------- all_finite
def _finite_truth(tree):
    floats = [np.asarray(a) for a in jax.tree.leaves(tree) if np.asarray(a).dtype.kind in "fc"]
    return all(np.all(np.isfinite(a)) for a in floats)


@pytest.mark.parametrize(
    "tree",
    [
        {},
        (np.arange(3), np.array([True, False])),  # no floating-point leaf
        {"a": np.ones((2, 3)), "b": (np.float32(2.0), np.arange(4))},
        {"a": np.ones((2, 3)), "b": (np.float32(np.inf), np.arange(4))},
        [np.array([1.0, np.nan]), np.array(np.iinfo(np.int64).max)],
        (jnp.array([-np.inf]), None),
        np.array([1.0 + 2.0j, np.nan + 0.0j]),
        np.zeros((0, 2)),
    ],
)
def test_all_finite_looks_at_floating_point_leaves_only(tree):
    want = _finite_truth(tree)
    assert bool(checks.all_finite(tree)) is want
    assert bool(jax.jit(checks.all_finite)(tree)) is want  # the same inside a compiled program


# ---------------------------------------------------------------- on_nonfinite
def test_check_on_nonfinite_accepts_its_three_values():
    for value in ("raise", "warn", "ignore"):
        assert checks.check_on_nonfinite(value) == value
    for bad in ("fail", "Raise", "", None, 1, True):
        with pytest.raises(ValueError, match=r"on_nonfinite must be one of \('raise', 'warn', 'ignore'\), got"):
            checks.check_on_nonfinite(bad)


ENGINE_VALUES = r"on_nonfinite must be one of \('raise', 'warn', 'ignore'\), got 'explode'"


@pytest.mark.parametrize(
    "call",
    [
        lambda v: jbo.run(RANDOM, BRANIN, key=0, num_steps=4, on_nonfinite=v),
        lambda v: jbo.run_seeds(RANDOM, BRANIN, key=0, num_steps=4, num_seeds=2, on_nonfinite=v),
        lambda v: jbo.run_sweep(
            jbo.algorithms.get("gp_ucb"),
            BRANIN,
            key=0,
            num_steps=6,
            num_seeds=1,
            params=jbo.engine.stack_params(jbo.algorithms.get("gp_ucb").default_params()),
            on_nonfinite=v,
        ),
        lambda v: jbo.engine.run_environments(
            RANDOM, [BRANIN, BRANIN], key=0, num_steps=4, num_seeds=2, on_nonfinite=v
        ),
        lambda v: jbo.studies.run_study(
            {"rs": RANDOM}, {"branin": BRANIN}, key=0, num_steps=4, num_seeds=2, progress=False, on_nonfinite=v
        ),
    ],
    ids=["run", "run_seeds", "run_sweep", "run_environments", "run_study"],
)
def test_every_entry_point_names_a_bad_on_nonfinite_and_the_allowed_values(call):
    with pytest.raises(ValueError, match=ENGINE_VALUES):
        call("explode")


def test_asktell_names_a_bad_on_nonfinite_and_the_allowed_values():
    # the runner's vocabulary: "raise" at the tell, "warn" / "ignore" a failed evaluation with or without a warning
    for bad in ("explode", "fail"):
        with pytest.raises(
            ValueError, match=re.escape(f"on_nonfinite must be one of {checks.ON_NONFINITE}, got {bad!r}")
        ):
            jbo.AskTell(RANDOM, BRANIN.bounds, num_steps=4, key=0, on_nonfinite=bad)


# ---------------------------------------------------------------- check_trace
def _trace(info, metrics=None):
    return jbo.Trace(None, None, {} if metrics is None else metrics, info, None)


def _first(flags):
    """(first step, run index) of the earliest flagged step over runs, the first run in C order on a tie;
    by a plain loop over the runs."""
    best = None
    for index in np.ndindex(*flags.shape[:-1]):
        steps = np.nonzero(flags[index])[0]
        if steps.size and (best is None or steps[0] < best[0]):
            best = (int(steps[0]), tuple(int(i) for i in index))
    return best


def _where_text(index, axes):
    """Named axes as 'seed 2', unnamed ones as 'index 1 of axis 2' (the documented text)."""
    if not index:
        return "the run"
    return ", ".join(f"{axes[k]} {i}" if k < len(axes) else f"index {i} of axis {k}" for k, i in enumerate(index))


@pytest.mark.parametrize(
    "shape, axes",
    [((9,), ()), ((4, 9), ("seed",)), ((3, 4, 9), ("setting", "seed")), ((2, 3, 2, 9), ("environment", "seed"))],
)
def test_check_trace_names_the_first_step_and_run_of_every_source(shape, axes):
    rng = np.random.default_rng(len(shape))
    objective = rng.uniform(size=shape) < 0.08
    objective[(0,) * (len(shape) - 1) + (8,)] = True  # at least one flag
    model = np.zeros(shape, bool)
    model[(-1,) * (len(shape) - 1) + (5,)] = True  # a second source, in the last run
    acquisition = np.zeros(shape, bool)  # a source without a flag: not reported
    info = {
        "nonfinite_objective": objective,
        "nonfinite_model": model,
        "nonfinite_acquisition": acquisition,
        "nonfinite_custom": np.asarray(True),  # 0-d: not a per-step record, not reported
        "lengthscale": np.full(shape, np.nan),  # not a flag
    }
    trace = _trace(info)
    with pytest.raises(NonFiniteError) as err:
        checks.check_trace(trace, "raise", axes, "GPBO on branin")
    e = err.value
    assert e.trace is trace
    expected = []
    lines = str(e).splitlines()
    assert lines[0] == "GPBO on branin met NaN or inf:"
    for source, flags in (("model", model), ("objective", objective)):  # sorted by source
        step, index = _first(flags)
        expected.append((source, step, index))
        runs = flags.reshape(-1, shape[-1])
        counts = f"({int(runs.sum())} step(s) in {int(runs.any(1).sum())} of {runs.shape[0]} run(s))"
        line = next(x for x in lines if x.startswith(f"  {source}: "))
        assert line.endswith(f"first at step {step} of {_where_text(index, axes)} {counts}"), line
        assert checks.SOURCES[source] in line
    assert e.problems == expected
    assert not any(x.startswith(("  acquisition:", "  custom:", "  lengthscale:")) for x in lines)
    assert "on_nonfinite='warn'" in lines[-1]

    with pytest.warns(RuntimeWarning) as record:
        assert checks.check_trace(trace, "warn", axes, "GPBO on branin") is trace
    assert len(record) == 1 and str(record[0].message) == str(e)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert checks.check_trace(trace, "ignore", axes) is trace
        assert checks.check_trace(_trace({"nonfinite_objective": np.zeros(shape, bool)}), "raise", axes) is not None


def test_check_trace_unnamed_axes_and_unknown_sources():
    flags = np.zeros((2, 2, 5), bool)
    flags[1, 0, 3] = True
    flags[0, 1, 3] = True  # the same step: the first run in C order (seed 0, index 1 of the unnamed axis 1)
    with pytest.raises(
        NonFiniteError, match=r"  mine: non-finite values; first at step 3 of seed 0, index 1 of axis 1 \(2 step"
    ):
        checks.check_trace(_trace({"nonfinite_mine": flags}), "raise", ("seed",))
    with pytest.raises(ValueError, match="on_nonfinite must be one of"):
        checks.check_trace(_trace({}), "loud")
    assert checks.check_trace(jbo.Trace(None, None, {}, None, None)).info is None  # no info dict: nothing to check


# ---------------------------------------------------------------- host_number
@pytest.mark.parametrize(
    "value, want",
    [
        (3, 3.0),
        (-2.5, -2.5),
        (np.float32(1.5), 1.5),
        (np.int64(7), 7.0),
        (np.array(4.0), 4.0),
        (np.array([[0.25]]), 0.25),
        ([1.0], 1.0),
        (jnp.asarray(2.0), 2.0),
        (float("nan"), math.nan),
        (-math.inf, -math.inf),
    ],
)
def test_host_number_is_one_float(value, want):
    got = checks.host_number(value, "sim at x=[1]")
    assert type(got) is float and (got == want or (math.isnan(got) and math.isnan(want)))


@pytest.mark.parametrize(
    "value, error, text",
    [
        (None, TypeError, "sim must return a number, got None"),
        ("1.0", TypeError, "sim must return a number, got '1.0'"),
        (b"1", TypeError, "sim must return a number, got b'1'"),
        (True, TypeError, "sim must return a number, got True"),
        (np.bool_(False), TypeError, f"sim must return a number, got {np.bool_(False)!r}"),
        (np.array(["a"]), TypeError, "sim must return a number, got array"),
        (1.0 + 2.0j, TypeError, "sim must return a number, got (1+2j)"),
        (object(), TypeError, "sim must return a number, got <object"),
        ([1.0, 2.0], ValueError, "sim must return one number, got shape (2,)"),
        (np.zeros((0,)), ValueError, "sim must return one number, got shape (0,)"),
    ],
)
def test_host_number_refuses_anything_but_one_number(value, error, text):
    with pytest.raises(error) as err:
        checks.host_number(value, "sim")
    assert str(err.value).startswith(text)


# ---------------------------------------------------------------- check_optimum
@pytest.mark.parametrize(
    "simple, best, warns",
    [
        ([1.0, 0.5, 0.0], [1.0, 1.5, 2.0], False),  # the optimum reached, not beaten
        ([0.1, -2e-9], [3.0, 3.0], False),  # rounding: within 1e-9 of the scale (the largest |best value|, 3)
        ([0.1, -4e-9], [3.0, 3.0], True),
        ([0.1, -2e-9], [0.5, 0.5], True),  # the scale is at least 1
        ([np.nan, -0.25], [np.nan, 7.0], True),  # NaN (no finite evaluation yet) is left out
        ([[5.0, -5e-4]], [[2e6, 2e6]], False),  # the scale is the largest |best value|: 1e-9 * 2e6 = 2e-3
        ([[5.0, -5e-3]], [[2e6, 2e6]], True),
        ([np.nan, np.nan], [np.nan, np.nan], False),
    ],
)
def test_check_optimum_warns_when_a_run_beats_the_stated_optimum(simple, best, warns):
    trace = _trace({}, {"simple_regret": np.asarray(simple), "best_value": np.asarray(best)})
    if warns:
        by = -np.nanmin(simple)
        with pytest.warns(RuntimeWarning, match=rf"^p: the run beat the stated optimal value by {by:.6g} \(simple"):
            checks.check_optimum(trace, "p")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            checks.check_optimum(trace, "p")


def test_check_optimum_without_a_known_optimum_says_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checks.check_optimum(_trace({}, {"value": np.array([1e9])}))
        checks.check_optimum(jbo.Trace(None, None, None, {}, None))


# ---------------------------------------------------------------- Params domains
@pytest.mark.parametrize(
    "text, want",
    [
        ("real", (-math.inf, math.inf, True, True)),
        ("[0, inf)", (0.0, math.inf, False, True)),
        ("(0, 1]", (0.0, 1.0, True, False)),
        ("[-inf, 5]", (-math.inf, 5.0, False, False)),
        ("(-1.5e-3,2e2)", (-1.5e-3, 200.0, True, True)),
        ("  [ -2 , .5 )  ", (-2.0, 0.5, False, True)),
        ("(0, +inf)", (0.0, math.inf, True, True)),
        ("[3, 3]", (3.0, 3.0, False, False)),
    ],
)
def test_parse_domain(text, want):
    assert checks.parse_domain(text) == want


@pytest.mark.parametrize("text", ["[2, 1]", "(3, 3]", "[3, 3)"])
def test_parse_domain_refuses_an_empty_interval(text):
    with pytest.raises(ValueError, match=re.escape(f"the domain {text!r} is empty")):
        checks.parse_domain(text)


@pytest.mark.parametrize(
    "text", ["", "0, 1", "[0 1]", "[a, 1]", "{0, 1}", "Real", "[nan, 1]", "[1e, 2]", "[-, 1]", "[., 1]", None]
)
def test_parse_domain_refuses_what_is_not_an_interval(text):
    with pytest.raises(
        ValueError, match=re.escape(f"a domain is 'real' or an interval such as '[0, inf)', got {text!r}")
    ):
        checks.parse_domain(text)


class Inner(NamedTuple):
    scale: float = 1.0
    DOMAIN = {"scale": "(0, inf)"}


class Knobs(NamedTuple):
    closed: float = 0.5  # [0, 1]
    half_open: float = 0.5  # (0, 1]
    nonnegative: float = 1.0  # [0, inf)
    negative: float = -1.0  # (-inf, 0)
    extended: float = 1.0  # [0, inf]: inf allowed
    free: float = 0.0  # no domain: a finite real number
    said_real: float = 0.0  # "real": the same
    inner: Inner = Inner()
    nothing: tuple = ()  # an empty group: no Params
    DOMAIN = {
        "closed": "[0, 1]",
        "half_open": "(0, 1]",
        "nonnegative": "[0, inf)",
        "negative": "(-inf, 0)",
        "extended": "[0, inf]",
        "said_real": "real",
    }


INSIDE = {  # each domain written out as a NumPy predicate
    "closed": lambda a: (a >= 0) & (a <= 1),
    "half_open": lambda a: (a > 0) & (a <= 1),
    "nonnegative": lambda a: (a >= 0) & (a < np.inf),
    "negative": lambda a: (a > -np.inf) & (a < 0),
    "extended": lambda a: a >= 0,
    "free": np.isfinite,
    "said_real": np.isfinite,
}
TEXT = {**Knobs.DOMAIN, "free": "a finite real number"}
PROBES = [-np.inf, -1.0, -1e-300, 0.0, 1e-300, 0.5, 1.0, np.nextafter(1.0, 2.0), 3.0, np.inf]


def test_param_fields_lists_nested_fields_and_skips_empty_groups():
    assert checks.param_fields(Knobs()) == [
        "closed",
        "half_open",
        "nonnegative",
        "negative",
        "extended",
        "free",
        "said_real",
        "inner.scale",
    ]
    assert checks.param_fields(jbo.algorithms.get("gp_ucb").default_params()) == [
        "acquisition.beta",
        "hypers.lengthscale",
        "hypers.outputscale",
        "hypers.noise",
        "hypers.mean",
    ]
    assert checks.param_fields(None) == [] and checks.param_fields((1.0, 2.0)) == []


@pytest.mark.parametrize("field", list(INSIDE))
def test_check_params_every_domain_form_at_its_edges(field):
    checks.check_params(Knobs())  # the defaults lie inside
    for v in PROBES:
        p = Knobs()._replace(**{field: v})
        if INSIDE[field](np.float64(v)):
            checks.check_params(p)
        else:
            with pytest.raises(
                ValueError, match=re.escape(f"Knobs.{field} = {float(v)!r} is outside its domain {TEXT[field]}")
            ):
                checks.check_params(p)
    with pytest.raises(ValueError, match=re.escape(f"Knobs.{field} is NaN; it must lie in {TEXT[field]}")):
        checks.check_params(Knobs()._replace(**{field: np.nan}))
    # an array: every element checked, the bad ones named
    probes = np.array(PROBES)
    bad = probes[~INSIDE[field](probes)]
    with pytest.raises(ValueError, match=re.escape(f"Knobs.{field} = {bad.tolist()!r} is outside")):
        checks.check_params(Knobs()._replace(**{field: jnp.asarray(probes)}))
    good = probes[INSIDE[field](probes)]
    checks.check_params(Knobs()._replace(**{field: good.reshape(-1, 1)}))


def test_check_params_types_nesting_and_owner():
    for bad in (None, "0.5", True, np.bool_(True), object(), 1j):
        with pytest.raises(TypeError, match=r"^Knobs.closed must be a number, got"):
            checks.check_params(Knobs(closed=bad))
    checks.check_params(Knobs(closed=1, nonnegative=np.int32(3)))  # integers are numbers
    with pytest.raises(
        ValueError, match=re.escape("GPBO: Knobs.inner -> Inner.scale = 0.0 is outside its domain (0, inf)")
    ):
        checks.check_params(Knobs(inner=Inner(0.0)), "GPBO: ")
    with pytest.raises(TypeError, match=re.escape("Knobs.inner -> Inner.scale must be a number, got None")):
        checks.check_params(Knobs(inner=Inner(None)))
    checks.check_params(None)  # not Params: nothing to check
    checks.check_params(3.0)
    # traced values (inside jit) are not checked; the same values outside are
    assert float(jax.jit(lambda p: (checks.check_params(p), p.closed)[1])(Knobs(closed=jnp.asarray(0.5)))) == 0.5
    # the entry points check before a run, naming the algorithm
    params = jbo.replace_params(jbo.algorithms.get("gp_ucb").default_params(), beta=1.0)._replace(
        hypers=jbo.algorithms.gp_bo.HypersParams(lengthscale=-0.1)
    )
    with pytest.raises(ValueError, match=re.escape("GPBO: GPBOParams.hypers -> HypersParams.lengthscale = -0.1")):
        jbo.run(jbo.algorithms.get("gp_ucb"), BRANIN, key=0, num_steps=6, params=params)


# ---------------------------------------------------------------- model_note
def _named_kernel(x, y):
    return x


def test_model_note_names_the_kernel_of_a_model():
    ns = types.SimpleNamespace
    assert checks.model_note(ns(model=ns(kernel="se"))) == " (kernel se)"
    assert checks.model_note(ns(model=ns(kernel=_named_kernel))) == " (kernel _named_kernel)"
    nameless = types.SimpleNamespace()
    assert checks.model_note(ns(model=ns(kernel=nameless))) == f" (kernel {nameless!r})"
    assert checks.model_note(ns(model=ns())) == "" and checks.model_note(RANDOM) == ""
    assert checks.model_note(jbo.algorithms.get("gp_ucb", model="se")) == " (kernel se)"
    assert checks.model_note(jbo.algorithms.get("gp_ucb")) == " (kernel matern52)"


# ---------------------------------------------------------------- a host objective that raises
class Simulator:
    """f(x) = -|x|^2, raising a ValueError at points with x0 > 0.5 while `crash` is set."""

    crash = True

    def __call__(self, x):
        if self.crash and x[0] > 0.5:
            raise ValueError(f"simulator diverged at x={np.asarray(x).tolist()}")
        return float(-np.sum(np.asarray(x) ** 2))


def test_a_host_objective_that_raises_is_a_failed_evaluation_named_after_the_run():
    """A call that raises inside the compiled run is a failed evaluation (NaN observation, spent, left
    out of the best value); after the run NonFiniteError names the problem, the first step and each
    point with its exception; warn mode returns the trace, ignore mode still warns; the process and
    the compiled program keep working."""
    sim = Simulator()
    prob = jbo.problems.from_callback(sim, [[0.0, 0.0], [1.0, 1.0]], name="sim")
    with pytest.raises(
        NonFiniteError,
        match=r"(?s)on sim met NaN or inf:\n  objective: .*the host objective failed at:\n    x=\[0\.[5-9][0-9.e-]*, [0-9.e-]+\] -> ValueError: simulator diverged at x=\[0\.[5-9]",
    ):
        jbo.run(RANDOM, prob, key=0, num_steps=8)
    with pytest.warns(RuntimeWarning, match="ValueError: simulator diverged"):
        trace = jbo.run(RANDOM, prob, key=0, num_steps=8, on_nonfinite="warn")
    x, y = np.asarray(trace.actions), np.asarray(trace.observations)
    crashed = x[:, 0] > 0.5
    assert crashed.any() and np.isnan(y[crashed]).all() and np.isfinite(y[~crashed]).all()
    best = np.maximum.accumulate(np.where(crashed, -np.inf, -np.sum(x**2, axis=1)))
    np.testing.assert_allclose(np.asarray(trace.metrics["best_value"]), np.where(np.isfinite(best), best, np.nan))
    with pytest.warns(RuntimeWarning, match="the host objective failed"):
        jbo.run(RANDOM, prob, key=0, num_steps=8, on_nonfinite="ignore")
    sim.crash = False
    trace = jbo.run(RANDOM, prob, key=0, num_steps=8)  # the same compiled program, now without the crash
    x = np.asarray(trace.actions)
    np.testing.assert_allclose(np.asarray(trace.metrics["value"]), -np.sum(x**2, axis=1), rtol=1e-14)
    assert np.any(x[:, 0] > 0.5)  # the run did visit the points that raised


# ---------------------------------------------------------------- `jbo cache`
def _files(d: Path):
    return [p for p in d.rglob("*") if p.is_file()]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The process's compilation cache moved to a temporary JBO_CACHE_DIR, chosen as `import jbo`
    chooses it (jbo.cache.configure_from_env); the suite's own cache comes back afterwards."""
    before = cache.directory()
    thresholds = (
        jax.config.jax_persistent_cache_min_compile_time_secs,
        jax.config.jax_persistent_cache_min_entry_size_bytes,
    )
    path = tmp_path / "jax_cache"
    monkeypatch.setenv("JBO_CACHE", "1")
    monkeypatch.setenv("JBO_CACHE_DIR", str(path))
    cache.disable()
    try:
        assert cache.configure_from_env() == path.resolve()
        yield path
    finally:
        if before is None:
            cache.disable()
        else:
            cache.enable(before, *thresholds)


def test_cache_command_names_the_directory_counts_repairs_and_clears(cache_dir, capsys):
    jax.block_until_ready(jax.jit(lambda x: jnp.sin(x) * 1.2345 + 6.789)(jnp.arange(5.0)))  # a new program
    entries = _files(cache_dir)
    assert entries, "the program was not written to the temporary cache"

    def usage_line():
        files = _files(cache_dir)
        size = sum(p.stat().st_size for p in files) / 2**20
        return f"persistent compilation cache: {cache_dir.resolve()} ({len(files)} files, {size:.1f} MiB)"

    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out.splitlines() == [usage_line()]

    # a truncated entry (a write cut short by a kill) beside the whole ones
    whole = next(p for p in entries if p.name.endswith("-cache"))
    cut = cache_dir / "jit_cut-0123-cache"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    kept = {p: p.read_bytes() for p in _files(cache_dir) if p != cut}
    assert cli.main(["cache", "--repair"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["removed 1 unreadable entries: jit_cut-0123-cache", usage_line()]
    assert not cut.exists() and {p: p.read_bytes() for p in _files(cache_dir)} == kept
    assert cli.main(["cache", "--repair"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "removed 0 unreadable entries"

    n = len(_files(cache_dir))
    assert cli.main(["cache", "--clear"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"removed {n} files from {cache_dir.resolve()}"
    assert out[1] == f"persistent compilation cache: {cache_dir.resolve()} (0 files, 0.0 MiB)"
    assert cache_dir.is_dir() and not any(cache_dir.iterdir())

    cache.disable()  # JBO_CACHE=0 at import leaves the cache off
    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out.splitlines() == ["persistent compilation cache: off (JBO_CACHE=0)"]


def test_cache_command_in_a_new_process_uses_jbo_cache_dir(tmp_path):
    path = tmp_path / "fresh"
    env = {**os.environ, "JBO_CACHE": "1", "JBO_CACHE_DIR": str(path)}
    done = subprocess.run(
        [sys.executable, "-m", "jbo", "cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"persistent compilation cache: {path.resolve()} (0 files, 0.0 MiB)"
