"""Benchmark problems and the one registry ``jbo.problems.get(name, **options)``.

Names are unique across papers: the plain names are box problems; ``sbo:<name>`` are the SBO-KDE
paper's contextual problems (x chosen, c ~ p drawn by the environment); ``hpo:<model>_<dataset>``
are the BOKE paper's host-evaluated tuning objectives (need the `hpo` extra); ``drifting_arms`` is
a piecewise-constant finite-arm problem (dynamic regret).
"""

from __future__ import annotations

from collections.abc import Callable

from jbo.problems import (
    boke,
    contextual,
    control,
    cvs,
    finite,
    hpo,
    nonstationary,
    sprinkler,
    synthetic,
    uhe,  # noqa: E402,F401  (UHE-BO paper's real-world replacements)
)
from jbo.problems.base import Problem, ProblemState, from_callback, from_function

_REGISTRY: dict[str, Callable[..., Problem]] = {
    **uhe.PROBLEMS,  # uhe:lr_vehicle_like, uhe:gb_kc1_like, uhe:lunar
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
        f"sbo:{name}": (lambda name: lambda noise_std=0.0: contextual.problem(name, noise_std))(name)
        for name in contextual.PROBLEMS
    },
    **{f"hpo:{m}_{d}": (lambda m, d: lambda: hpo.problem(m, d))(m, d) for m in hpo.SPACES for d in hpo.SUBSTITUTES},
    "drifting_arms": finite.FiniteArmProblem,
    **{f"cvs:{name}": (lambda name: lambda **o: cvs.problem(name, **o))(name) for name in cvs.OBJECTIVES},
    "kernel_drift": nonstationary.kernel_drift,
}


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
    "sbo:": "a contextual problem of the SBO-KDE paper (contexts drawn from an unknown law)",
    "hpo:": "a tuning objective of the BOKE paper (host-evaluated cross-validation; the hpo extra)",
    "cvs:": "a control-set problem of the uCVS paper (cost_set=, variance=)",
    "uhe:": "a real-world replacement problem of the UHE-BO paper (the uhe extra)",
}


def describe(name: str) -> str:
    """One line about a registered problem (for `jbo problems`)."""
    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name]
    family = next((v for k, v in FAMILIES.items() if name.startswith(k)), "")
    doc = " ".join(((getattr(_REGISTRY.get(name), "__doc__", None) or "").strip().split("\n\n")[0]).split())
    return doc or family


def names() -> list[str]:
    return sorted(_REGISTRY)


def register(name: str, factory: Callable[..., Problem]) -> None:
    """Add a problem factory to the registry (paper modules register their own problems)."""
    _REGISTRY[name] = factory


def get(name: str, noise_std: float = 0.0, **options) -> Problem:
    """Build a registered problem; `noise_std` adds Gaussian observation noise, other options go to
    the factory (e.g. get("rosenbrock", dim=4, rescaled=True))."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown problem {name!r}; registered problems: {', '.join(names())}")
    if name.startswith("cvs:"):  # uCVS problems take the noise themselves (default here: noise-free)
        options, noise_std = {**options, "noise_std": noise_std}, 0.0
    if name.startswith("sbo:") or name in ("drifting_arms", "kernel_drift"):
        options = {**options, "noise_std": noise_std} if noise_std else options
        noise_std = 0.0
    try:
        problem = _REGISTRY[name](**options)
    except TypeError as e:
        raise ValueError(f"bad options {options} for problem {name!r}: {e}") from None
    return problem.with_noise(noise_std) if noise_std else problem


__all__ = [
    "Problem",
    "ProblemState",
    "from_callback",
    "from_function",
    "get",
    "names",
    "register",
    "boke",
    "contextual",
    "control",
    "cvs",
    "finite",
    "hpo",
    "nonstationary",
    "sprinkler",
    "synthetic",
]
