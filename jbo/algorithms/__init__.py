"""Algorithms on the engine: one module per paper, plus gp_bo for the standard baselines.

``jbo.algorithms.get(name, **options)`` builds a registered algorithm; ``register(name, factory)``
adds one (a user module, see jbo.plugins), and installed plug-ins add theirs through the
``jbo.algorithms`` entry-point group, read the first time the registry is asked for its names or for
a name it does not know.
"""

from __future__ import annotations

from collections.abc import Callable

from jbo import parts, plugins
from jbo.algorithms import (
    boke,
    r_perp,
    sbo_kde,
    ucvs,
    uhe_bo,  # noqa: E402,F401  (UHE-BO paper)
)
from jbo.algorithms.gp_bo import (
    GPBO,
    GPBOInfo,
    GPBOParams,
    GPBOState,
    Hypers,
    HypersParams,
    RandomSearch,
    srinivas_beta,
)


def _gp(acquisition):
    return lambda **o: GPBO(acquisition=o.pop("acquisition", acquisition), **o)


def _uhe(**configured):
    """A UHE-BO paper method: uhe_bo.UHE with these parts; an option of a part's name replaces that part
    (e.g. estimate=uhe_bo.PseudoData(noise_refit=True))."""
    return lambda **o: uhe_bo.UHE(**{**configured, **o})


REGISTRY: dict[str, Callable] = {
    # UHE-BO paper (jbo.algorithms.uhe_bo): "uhe_bo" and its baselines / ablations "uhe_bo:<method>", as parts
    "uhe_bo": _uhe(schedule=uhe_bo.PairedEXP3(), estimate=uhe_bo.PseudoData()),
    "uhe_bo:ra_bo": _uhe(schedule=uhe_bo.RandomThenBO(), estimate=uhe_bo.PseudoData()),
    "uhe_bo:random_exp3": _uhe(schedule=uhe_bo.PairedEXP3(), estimate=uhe_bo.RealData()),
    "uhe_bo:map": _uhe(schedule=uhe_bo.EveryStep(), estimate=uhe_bo.RealData()),
    "uhe_bo:mcmc": _uhe(schedule=uhe_bo.EveryStep(), estimate=uhe_bo.HMC()),
    "uhe_bo:a_gp_ucb": _uhe(
        schedule=uhe_bo.EveryStep(), estimate=uhe_bo.RealData(), lengthscales=uhe_bo.ShrinkingLengthscales()
    ),
    "uhe_bo:wdf": _uhe(schedule=uhe_bo.EveryStep(), estimate=uhe_bo.RealData(), lengthscales=uhe_bo.LengthscaleBound()),
    "uhe_bo:portfolio": _uhe(schedule=uhe_bo.Hedge(), estimate=uhe_bo.RealData()),
    "uhe_bo:random": uhe_bo.random_search,
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
    # SBO-KDE paper (jbo.algorithms.sbo_kde): GP-BOs with contextual acquisitions (contextual environments)
    **{f"sbo_kde:{m}": (lambda m: lambda **o: sbo_kde.SBO(method=m, **o))(m) for m in sbo_kde.METHODS},
    # uCVS paper (jbo.algorithms.ucvs): control sets with unknown costs (jbo.problems.ucvs); the paper's four
    # methods as configured parts (options: the parts' fields flat, preset="official", groups="tiers", ...;
    # the other baselines: ucvs.make(name, ...) or ucvs.CVS(selection=..., value=...))
    "ucvs:ucvs": lambda **o: ucvs.make("ucvs", **o),
    "ucvs:ucb_psq": lambda **o: ucvs.make("ucb_psq", **o),
    "ucvs:ts_psq": lambda **o: ucvs.make("ts_psq", **o),
    "ucvs:etc50": lambda **o: ucvs.make("etc", **o),
    # R-PERP paper (jbo.algorithms.r_perp): finite arm sets, non-stationary (dynamic regret)
    "r_perp": r_perp.RPERP,
    "r_gp_ucb": r_perp.RGPUCB,
    "sw_gp_ucb": r_perp.SWGPUCB,
}


BUILTIN = dict(REGISTRY)  # the built-in factories, so that describe() knows a replaced one

DESCRIPTIONS = {  # one line per built-in entry for `jbo algorithms`; they tell the methods apart
    "random_search": "uniform random search after the shared initial design, on any space",
    "gp_ucb": "GP-BO with the upper confidence bound (UCB) acquisition, mu + sqrt(beta) sigma",
    "gp_ei": "GP-BO with the expected improvement (EI) acquisition",
    "gp_log_ei": "GP-BO with the log expected improvement (log EI, stable where EI underflows)",
    "gp_pi": "GP-BO with the probability of improvement (PI) acquisition",
    "gp_ts": "GP-BO with Thompson sampling (a random-Fourier-feature posterior sample path per step)",
    "gp_mean": "GP-BO maximising the posterior mean (pure exploitation)",
    "gp_std": "GP-BO maximising the posterior standard deviation (pure exploration)",
    "boke": "BOKE (BOKE paper, Alg. 2): kernel regression plus a kernel-density exploration bonus (IKR-UCB)",
    "boke_plus": "BOKE+ (BOKE paper, Alg. 3): BOKE whose exploration bonus is drawn on with probability p",
    "kr_ucb": "KR-UCB with progressive widening (Yee et al. 2016; a BOKE paper baseline)",
    "density_exploration": "density exploration (a BOKE paper baseline): the point of least kernel density, ignoring y",
    "boke_gp_ucb": "GP-UCB as in the BOKE paper: SE kernel, fixed lengthscale, beta = 4",
    "boke_gp_std": "the BOKE paper's fixed-lengthscale GP maximising the posterior std (pure exploration)",
    "sbo_kde:sbo_kde": "SBO-KDE (SBO-KDE paper, Alg. 1): UCB averaged over KDE samples of the observed contexts",
    "sbo_kde:drbo_kde": "DRBO-KDE (SBO-KDE paper, Alg. 2): worst-case UCB over a TV ball around the context KDE",
    "sbo_kde:gp_ucb": "GP-UCB on x alone, the context acting as noise (an SBO-KDE paper baseline)",
    "sbo_kde:stableopt": "StableOpt: UCB minimised over the context box mean +- std (an SBO-KDE paper baseline)",
    "sbo_kde:drbo_mmd": "DRBO-MMD (Kirschner et al. 2020): worst-case UCB over an MMD ball around the observed contexts",
    "sbo_kde:minimax_approx": "MinimaxApprox (Tay et al. 2022): a closed-form mid-point approximation of the minimax",
    "sbo_kde:sbo_oracle": "SBO with samples of the true context law (needs oracle=problem.sample_contexts)",
    "sbo_kde:sbo_empirical": "SBO averaged over the observed contexts themselves (a KDE with bandwidth 0)",
    "ucvs:ucvs": "uCVS (uCVS paper, Alg. 1): explore-then-commit over control sets with unknown costs",
    "ucvs:ucb_psq": "UCB-PSQ (Hayashi et al.): the control set and values of the largest expected UCB",
    "ucvs:ts_psq": "TS-PSQ: UCB-PSQ with a posterior sample path in place of the UCB",
    "ucvs:etc50": "ETC-50: each group of control sets played 50 times, then UCB-PSQ",
    "r_perp": "R-PERP (Iwazaki & Takeno): restarting phased elimination with random permutation, finite arms",
    "r_gp_ucb": "R-GP-UCB (Zhou & Shroff 2021): GP-UCB restarted every H steps, finite arms",
    "sw_gp_ucb": "SW-GP-UCB (Zhou & Shroff 2021): GP-UCB on the last W observations, finite arms",
    "uhe_bo": "UHE-BO (UHE-BO paper, Alg. 1): GP-UCB with pseudo-data hyper-parameters, EXP3 over random / BO",
    "uhe_bo:ra_bo": "UHE-BO ablation: random then BO at every pair, pseudo-data hyper-parameters",
    "uhe_bo:random_exp3": "UHE-BO ablation: the EXP3 schedule with the standard MAP fit on the real data",
    "uhe_bo:map": "GP-UCB with a MAP hyper-parameter refit every step (a UHE-BO paper baseline)",
    "uhe_bo:mcmc": "GP-UCB averaged over HMC samples of the hyper-parameters (a UHE-BO paper baseline)",
    "uhe_bo:a_gp_ucb": "A-GP-UCB (Berkenkamp et al. 2019): shrinking lengthscales (a UHE-BO paper baseline)",
    "uhe_bo:wdf": "Wang & de Freitas (2014), Berkenkamp's variant: a lengthscale bound (a UHE-BO paper baseline)",
    "uhe_bo:portfolio": "GP-Hedge with EXP3 over random and GP-UCB (MAP) (a UHE-BO paper baseline)",
    "uhe_bo:random": "uniform random search with the UHE methods' initial design (a UHE-BO paper baseline)",
}


def _load_plugins() -> None:
    plugins.load_entry_points("jbo.algorithms", register, REGISTRY.get)


def names() -> list[str]:
    """Every registered algorithm: the built-ins, register(...)ed ones and installed plug-ins'."""
    _load_plugins()
    return sorted(REGISTRY)


def register(name: str, factory: Callable, replace: bool = False) -> None:
    """Add an algorithm factory ``(**options) -> Algorithm`` under `name`, for get(name, ...), config
    files and the CLI. A name already registered (a built-in included) is refused unless replace=True."""
    plugins.check_entry("algorithm", name, factory, REGISTRY, replace)
    REGISTRY[name] = factory


def describe(name: str) -> str:
    """One line about a registered algorithm (for `jbo algorithms`): DESCRIPTIONS for a built-in,
    else the first paragraph of its factory's docstring ("" when it has none)."""
    if name in DESCRIPTIONS and REGISTRY.get(name) is BUILTIN.get(name):
        return DESCRIPTIONS[name]
    return plugins.doc_line(REGISTRY.get(name))


def get(name: str, **options):
    """Build a registered algorithm, e.g. get("gp_ucb", maximiser=jbo.parts.Maximiser(num_raw=64)).

    A part may be given as plain data, as a config file writes it (jbo.parts.from_config): a dict of
    its fields (``maximiser={"num_raw": 64}``, ``hypers={"steps": 20}`` for a Refit or
    ``{"rule": "fixed", ...}``, ``batching={"kind": "lies", "size": 4}``, ``growth={"step": 128}``,
    ``model={"kernel": "se"}``) or a design's name (``design="sobol"``)."""
    if name not in REGISTRY:
        _load_plugins()
    if name not in REGISTRY:
        raise ValueError(f"unknown algorithm {name!r}; registered algorithms: {', '.join(names())}")
    try:
        return REGISTRY[name](**parts.from_config(options))
    except TypeError as e:
        raise ValueError(f"bad options {options} for algorithm {name!r}: {e}") from None


__all__ = [
    "boke",
    "r_perp",
    "sbo_kde",
    "ucvs",
    "GPBO",
    "GPBOInfo",
    "GPBOParams",
    "GPBOState",
    "Hypers",
    "HypersParams",
    "RandomSearch",
    "describe",
    "get",
    "names",
    "register",
    "srinivas_beta",
]
