"""Benchmark problems and the one registry ``jbo.problems.get(name, **options)``.

Names are unique across papers: the plain names are box problems; ``sbo_kde:<name>`` are the SBO-KDE
paper's contextual problems (x chosen, c ~ p drawn by the environment); ``hpo:<model>_<dataset>``
are the BOKE paper's host-evaluated tuning objectives (need the `hpo` extra); ``drifting_arms`` is
a piecewise-constant finite-arm problem (dynamic regret).

``register(name, factory)`` adds a problem (a user module, see jbo.plugins), and installed plug-ins
add theirs through the ``jbo.problems`` entry-point group, read the first time the registry is asked
for its names or for a name it does not know.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import NamedTuple

from jbo import plugins
from jbo.problems import (
    boke,
    control,
    finite,
    hpo,
    r_perp,
    sbo_kde,
    sprinkler,
    synthetic,
    ucvs,
    uhe_bo,  # noqa: E402,F401  (UHE-BO paper's real-world replacements)
)
from jbo.problems.base import Problem, ProblemState, from_callback, from_function

REGISTRY: dict[str, Callable[..., Problem]] = {
    **uhe_bo.PROBLEMS,  # uhe_bo:lr_vehicle_like, uhe_bo:gb_kc1_like, uhe_bo:lunar
    "forrester": synthetic.forrester,
    "branin": synthetic.branin,
    "goldstein_price": synthetic.goldstein_price,
    "six_hump_camel": synthetic.six_hump_camel,
    "hartmann3": synthetic.hartmann3,
    "hartmann6": synthetic.hartmann6,
    "ackley": synthetic.ackley,
    "levy": synthetic.levy,
    "rosenbrock": synthetic.rosenbrock,
    "sphere6_modified": synthetic.sphere6_modified,
    "deceptive": synthetic.deceptive,
    "h1": synthetic.h1,
    "gp_sample": synthetic.gp_sample,
    "boke_toy": boke.toy,
    "sprinkler": sprinkler.sprinkler,
    **{
        f"sbo_kde:{name}": (lambda name: lambda noise_std=0.0: sbo_kde.problem(name, noise_std))(name)
        for name in sbo_kde.PROBLEMS
    },
    **{f"hpo:{m}_{d}": (lambda m, d: lambda: hpo.problem(m, d))(m, d) for m in hpo.SPACES for d in hpo.SUBSTITUTES},
    "drifting_arms": finite.FiniteArmProblem,
    **{f"ucvs:{name}": (lambda name: lambda **o: ucvs.problem(name, **o))(name) for name in ucvs.OBJECTIVES},
    "kernel_drift": r_perp.kernel_drift,
}
BUILTIN = dict(REGISTRY)  # the built-in factories, so that describe() and about() know a replaced one


DESCRIPTIONS = {  # one line per entry for `jbo problems` (factories with a docstring speak for themselves)
    "ackley": "Ackley's function (many local optima around one global), dim = d",
    "boke_toy": "the BOKE paper's 1-D toy function (Eq. 3.5)",
    "branin": "Branin-Hoo, 2-D, three global optima",
    "forrester": "Forrester et al.'s 1-D function",
    "goldstein_price": "Goldstein-Price, 2-D (rescaled=True: the log form)",
    "hartmann3": "Hartmann, 3-D",
    "hartmann6": "Hartmann, 6-D",
    "levy": "Levy's function, dim = d",
    "rosenbrock": "Rosenbrock's valley, dim = d (rescaled=True: Picheny's 4-D form)",
    "six_hump_camel": "six-hump camel, 2-D",
    "sphere6_modified": "the BOKE paper's modified 6-D sphere",
    "sprinkler": "the 8-D garden-sprinkler simulator (output: range or speed)",
    "drifting_arms": "a finite arm set whose values switch at change points, with per-arm costs",
    "kernel_drift": "R-PERP's Fig 2 environment: a function drifting in an RKHS, exact B and V_T as side information",
}
FAMILIES = {
    "sbo_kde:": "a contextual problem of the SBO-KDE paper (contexts drawn from an unknown law)",
    "hpo:": "a tuning objective of the BOKE paper (host-evaluated cross-validation; the hpo extra)",
    "ucvs:": "a control-set problem of the uCVS paper (cost_set=, variance=)",
    "uhe_bo:": "a real-world replacement problem of the UHE-BO paper (the uhe_bo extra)",
}


class About(NamedTuple):
    """What `jbo problems` shows of a problem: its space and its optimum."""

    space: str  # e.g. "box, d = 5, context d = 1"
    optimum: float | str | None = None  # the optimal value; None: unknown; text: where it comes from


def _box(d: int, context: int = 0) -> str:
    return f"box, d = {d}" + (f", context d = {context}" if context else "")


_SBO_DIMS = {  # (d, context d) of the SBO-KDE problems (sbo_kde.problem)
    "ackley": (2, 1),
    "ackley_4c": (2, 4),
    "modified_branin": (2, 2),
    "hartmann": (5, 1),
    "complicated_hartmann": (5, 1),
    "newsvendor": (1, 1),
    "portfolio_uniform": (3, 2),
    "portfolio_normal": (3, 2),
}
_SBO_OPTIMA = {**sbo_kde.OPTIMA, "newsvendor": sbo_kde.NEWSVENDOR_OPTIMUM[1]}

# Every built-in at its default options, for `jbo problems` to list without building any: some load data,
# run a simulator or search for their optimum when built (tests/test_cli.py checks this against them built).
ABOUT = {
    "forrester": About(_box(1), 6.020740055767083),
    "branin": About(_box(2), -0.39788735772973816),
    "goldstein_price": About(_box(2), -3.0),
    "six_hump_camel": About(_box(2), 1.0316284534898774),
    "hartmann3": About(_box(3), 3.8627797869493365),
    "hartmann6": About(_box(6), 3.3223680114155147),
    "ackley": About(_box(2), 0.0),
    "levy": About(_box(2), 0.0),
    "rosenbrock": About(_box(2), 0.0),
    "sphere6_modified": About(_box(6), 1745.0 / 899.0),
    "deceptive": About(_box(2), 1.0),
    "h1": About(_box(2), 1.99999999992158),
    "gp_sample": About(_box(1), "found when built (dense search of the sample path)"),
    "boke_toy": About(_box(1), boke.TOY_OPTIMUM[1]),
    "sprinkler": About(_box(8), sprinkler.OPTIMAL["range"]),
    **{f"sbo_kde:{n}": About(_box(*_SBO_DIMS[n]), _SBO_OPTIMA.get(n)) for n in sbo_kde.PROBLEMS},
    **{f"hpo:{m}_{d}": About(_box(len(space))) for m, space in hpo.SPACES.items() for d in hpo.SUBSTITUTES},
    "drifting_arms": About("finite arms given by the options arms and values", "moves at the change points"),
    **{
        f"ucvs:{n}": About(f"{len(o.sets)} control sets, d = {o.dim}", "one F* per control set (ucvs.reference)")
        for n, o in ucvs.OBJECTIVES.items()
    },
    "kernel_drift": About("900 arms in d = 2", "moves with the drift (dynamic regret)"),
    "uhe_bo:lr_vehicle_like": About(_box(2)),
    "uhe_bo:gb_kc1_like": About(_box(4)),
    "uhe_bo:lunar": About(_box(12)),
}


def _builtin(name: str) -> bool:
    return name in BUILTIN and REGISTRY.get(name) is BUILTIN[name]


def describe(name: str) -> str:
    """One line about a registered problem (for `jbo problems`)."""
    if name in DESCRIPTIONS and _builtin(name):
        return DESCRIPTIONS[name]
    family = next((v for k, v in FAMILIES.items() if name.startswith(k)), "") if _builtin(name) else ""
    return plugins.doc_line(REGISTRY.get(name)) or family


def space_text(problem) -> str:
    """A problem's space in words: "box, d = 2", "900 arms in d = 2", "7 control sets, d = 12"."""
    from jbo.spaces import Box, ControlSets, FiniteArms

    s = problem.space
    text = (
        _box(s.dim)
        if isinstance(s, Box)
        else f"{s.num_arms} arms in d = {s.dim}"
        if isinstance(s, FiniteArms)
        else f"{s.num_sets} control sets, d = {s.dim}"
        if isinstance(s, ControlSets)
        else type(s).__name__
    )
    context = getattr(problem, "context_dim", 0)
    return text + (f", context d = {context}" if context else "")


def about(name: str) -> About:
    """A registered problem's space and optimum at its default options: from ABOUT for a built-in
    (nothing is built), else by building it with its defaults (a ValueError when that fails); a
    factory with required options is not built and says so."""
    if name in ABOUT and _builtin(name):
        return ABOUT[name]
    required = [k for k, needed in options(name).items() if needed]
    if required:
        return About(f"given by the required options {', '.join(required)}")
    problem = get(name)
    return About(space_text(problem), getattr(problem, "optimal_value", None))


def options(name: str) -> dict[str, bool]:
    """The keyword options of a registered problem's factory, {option: required}, from its signature
    ({} when it takes none or hides them behind **options)."""
    if name not in REGISTRY:
        _load_plugins()
    factory = REGISTRY[name]
    skip = 0
    if name.startswith("ucvs:") and _builtin(name):  # lambda **o: ucvs.problem(objective, **o)
        factory, skip = ucvs.problem, 1
    try:
        params = list(inspect.signature(factory).parameters.values())[skip:]
    except (TypeError, ValueError):
        return {}
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {p.name: p.default is inspect.Parameter.empty for p in params if p.kind not in kinds}


def _load_plugins() -> None:
    plugins.load_entry_points("jbo.problems", register, REGISTRY.get)


def names() -> list[str]:
    """Every registered problem: the built-ins, register(...)ed ones and installed plug-ins'."""
    _load_plugins()
    return sorted(REGISTRY)


def register(name: str, factory: Callable[..., Problem], replace: bool = False) -> None:
    """Add a problem factory ``(**options) -> Environment`` under `name`, for get(name, ...), config
    files and the CLI. A name already registered (a built-in included) is refused unless replace=True."""
    plugins.check_entry("problem", name, factory, REGISTRY, replace)
    REGISTRY[name] = factory


def get(name: str, noise_std: float = 0.0, **options) -> Problem:
    """Build a registered problem; `noise_std` adds Gaussian observation noise, other options go to
    the factory (e.g. get("rosenbrock", dim=4, rescaled=True))."""
    if name not in REGISTRY:
        _load_plugins()
    if name not in REGISTRY:
        raise ValueError(f"unknown problem {name!r}; registered problems: {', '.join(names())}")
    if name.startswith("ucvs:"):  # uCVS problems take the noise themselves (default here: noise-free)
        options, noise_std = {**options, "noise_std": noise_std}, 0.0
    if name.startswith("sbo_kde:") or name in ("drifting_arms", "kernel_drift"):
        options = {**options, "noise_std": noise_std} if noise_std else options
        noise_std = 0.0
    try:
        problem = REGISTRY[name](**options)
    except TypeError as e:
        raise ValueError(f"bad options {options} for problem {name!r}: {e}") from None
    return problem.with_noise(noise_std) if noise_std else problem


__all__ = [
    "ABOUT",
    "DESCRIPTIONS",
    "About",
    "Problem",
    "ProblemState",
    "about",
    "describe",
    "from_callback",
    "from_function",
    "get",
    "names",
    "options",
    "register",
    "space_text",
    "boke",
    "control",
    "finite",
    "hpo",
    "r_perp",
    "sbo_kde",
    "sprinkler",
    "synthetic",
    "ucvs",
]
