"""Algorithms on the engine: one module per paper, plus gp_bo for the standard baselines.

``jbo.algorithms.get(name, **options)`` builds a registered algorithm.
"""

from __future__ import annotations

from collections.abc import Callable

from jbo.algorithms import (
    boke,
    cvs,
    nonstationary,
    sbo,
    uhe,  # noqa: E402,F401  (UHE-BO paper)
)
from jbo.algorithms.gp_bo import GPBO, GPBOParams, GPBOState, Hypers, HypersParams, RandomSearch, srinivas_beta


def _gp(acquisition):
    return lambda **o: GPBO(acquisition=o.pop("acquisition", acquisition), **o)


_REGISTRY: dict[str, Callable] = {
    # UHE-BO paper (jbo.algorithms.uhe): "uhe_bo" and its baselines / ablations "uhe:<method>"
    "uhe_bo": lambda **o: uhe.make("uhe_bo", **o),
    **{f"uhe:{m}": (lambda m: lambda **o: uhe.make(m, **o))(m) for m in uhe.NAMES if m != "uhe_bo"},
    "random_search": RandomSearch,
    "gp_ucb": _gp("ucb"),
    "gp_ei": _gp("ei"),
    "gp_log_ei": _gp("log_ei"),
    "gp_pi": _gp("pi"),
    "gp_ts": _gp("ts"),
    "gp_mean": _gp("mean"),
    "gp_std": _gp("std"),
    # BOKE paper (jbo.algorithms.boke)
    "boke": boke.BOKE,
    "boke_plus": lambda **o: boke.BOKE(plus=True, **o),
    "kr_ucb": boke.KRUCB,
    "density_exploration": boke.DensityExploration,
    "boke_gp_ucb": boke.PaperGP,
    "boke_gp_std": lambda **o: boke.PaperGP(acquisition="std", **o),
    # SBO-KDE paper (jbo.algorithms.sbo): GP-BOs with contextual acquisitions (contextual environments)
    **{f"sbo:{m}": (lambda m: lambda **o: sbo.SBO(method=m, **o))(m) for m in sbo.METHODS},
    # uCVS paper (jbo.algorithms.cvs): control sets with unknown costs (jbo.problems.cvs); the paper's four
    # methods (options: preset="official", groups="tiers", ...; the other baselines: cvs.CVS(method=...))
    "cvs:ucvs": lambda **o: cvs.CVS(method="ucvs", **o),
    "cvs:ucb_psq": lambda **o: cvs.CVS(method="ucb_psq", **o),
    "cvs:ts_psq": lambda **o: cvs.CVS(method="ts_psq", **o),
    "cvs:etc50": lambda **o: cvs.CVS(method="etc", **o),
    # R-PERP paper (jbo.algorithms.nonstationary): finite arm sets, non-stationary (dynamic regret)
    "r_perp": nonstationary.RPERP,
    "r_gp_ucb": nonstationary.RGPUCB,
    "sw_gp_ucb": nonstationary.SWGPUCB,
}


def names() -> list[str]:
    return sorted(_REGISTRY)


def register(name: str, factory: Callable) -> None:
    _REGISTRY[name] = factory


def get(name: str, **options):
    """Build a registered algorithm, e.g. get("gp_ucb", fit="map", beta_schedule="srinivas")."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown algorithm {name!r}; registered algorithms: {', '.join(names())}")
    try:
        return _REGISTRY[name](**options)
    except TypeError as e:
        raise ValueError(f"bad options {options} for algorithm {name!r}: {e}") from None


__all__ = [
    "boke",
    "cvs",
    "nonstationary",
    "sbo",
    "GPBO",
    "GPBOParams",
    "GPBOState",
    "Hypers",
    "HypersParams",
    "RandomSearch",
    "get",
    "names",
    "register",
    "srinivas_beta",
]
