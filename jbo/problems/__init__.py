"""Benchmark problems and the registry ``jbo.problems.get(name, **options)``."""
from __future__ import annotations

from typing import Callable

from jbo.problems.base import Problem, ProblemState, from_callback, from_function
from jbo.problems import boke, sprinkler, synthetic

_REGISTRY: dict[str, Callable[..., Problem]] = {
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
}


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
    try:
        problem = _REGISTRY[name](**options)
    except TypeError as e:
        raise ValueError(f"bad options {options} for problem {name!r}: {e}") from None
    return problem.with_noise(noise_std) if noise_std else problem


__all__ = ["Problem", "ProblemState", "from_callback", "from_function", "get", "names", "register", "boke", "sprinkler", "synthetic"]
