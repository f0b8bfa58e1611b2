"""Contextual (stochastic) problems: the learner picks x, the environment draws a context c ~ p that
the learner never sees in advance, the observation is (c, y) with y = f(x, c) (+ noise).

Metrics use the exact expected objective F(x) = E_{c~p} f(x, c), computed inside the step by a fixed
deterministic rule built once at construction: for independent one-dimensional contexts a tensor
product of Gauss-Legendre nodes on [0, 1] weighted by the density, plus the point masses that
clipping to [0, 1] puts at 0 and 1; otherwise quasi-Monte-Carlo (Sobol points pushed through the
inverse CDF, then clipped). All problems are defined on x in [0, 1]^dx, c in [0, 1]^dc and MAXIMISED
(sbo_kde.md 7; the paper's problems).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtr, ndtri

from jbo import designs, kernels
from jbo.engine import Environment
from jbo.spaces import Box

# ---------------------------------------------------------------- 1-D context distributions (clipped to [0, 1])


class Dist1D(NamedTuple):
    """A distribution on the real line, observed clipped to [0, 1]. Functions of jnp arrays."""

    name: str
    sample: Callable  # (key, shape) -> unclipped draws
    cdf: Callable
    pdf: Callable
    icdf: Callable | None = None  # for QMC in several dimensions


def normal(mu: float, sd: float) -> Dist1D:
    return Dist1D(f"N({mu},{sd}^2)", lambda k, s: mu + sd * jax.random.normal(k, s),
                  lambda c: ndtr((c - mu) / sd), lambda c: jnp.exp(-0.5 * ((c - mu) / sd) ** 2) / (sd * math.sqrt(2 * math.pi)),
                  lambda u: mu + sd * ndtri(u))


def uniform() -> Dist1D:
    return Dist1D("U(0,1)", lambda k, s: jax.random.uniform(k, s), lambda c: jnp.clip(c, 0.0, 1.0),
                  lambda c: jnp.where((c >= 0) & (c <= 1), 1.0, 0.0), lambda u: u)


def burr12(a: float = 2.0, b: float = 20.0) -> Dist1D:
    """Burr XII: CDF 1 - (1 + c^a)^(-b) on c >= 0."""
    icdf = lambda u: ((1 - u) ** (-1.0 / b) - 1) ** (1.0 / a)  # noqa: E731
    cpos = lambda c: jnp.maximum(c, 0.0)  # noqa: E731
    return Dist1D(f"BurrXII({a},{b})", lambda k, s: icdf(jax.random.uniform(k, s)),
                  lambda c: 1 - (1 + cpos(c) ** a) ** (-b),
                  lambda c: jnp.where(c > 0, a * b * cpos(c) ** (a - 1) * (1 + cpos(c) ** a) ** (-(b + 1)), 0.0), icdf)


def complicated_mixture() -> Dist1D:
    """Equal-weight mixture of 6 normals and 2 Cauchys (sbo_kde.md 7.3.4, weights 1/8 each)."""
    locs = jnp.array([0.1, 0.3, 0.4, 0.5, 0.7, 0.8, 0.2, 0.8])
    scales = jnp.array([0.02, 0.075, 0.1, 0.1, 0.075, 0.03, 0.02, 0.02])
    cauchy = jnp.array([False] * 6 + [True] * 2)

    def sample(key, shape):
        k1, k2, k3 = jax.random.split(key, 3)
        comp = jax.random.categorical(k1, jnp.zeros(8), shape=shape)
        z_n = jax.random.normal(k2, shape)
        z_c = jnp.tan(math.pi * (jax.random.uniform(k3, shape) - 0.5))
        return locs[comp] + scales[comp] * jnp.where(cauchy[comp], z_c, z_n)

    def cdf(c):
        z = (c[..., None] - locs) / scales
        return jnp.mean(jnp.where(cauchy, 0.5 + jnp.arctan(z) / math.pi, ndtr(z)), -1)

    def pdf(c):
        z = (c[..., None] - locs) / scales
        dens = jnp.where(cauchy, 1 / (math.pi * (1 + z**2)), jnp.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)) / scales
        return jnp.mean(dens, -1)

    return Dist1D("complicated mixture", sample, cdf, pdf)


def _line_rule(dist: Dist1D, num: int):
    """Nodes and weights on [0, 1] for E[g(clip(c))]: Gauss-Legendre with the density + the two clip atoms."""
    t, w = np.polynomial.legendre.leggauss(num)
    nodes = jnp.asarray(0.5 * (t + 1))
    weights = jnp.asarray(0.5 * w) * dist.pdf(nodes)
    lo, hi = dist.cdf(jnp.array(0.0)), 1 - dist.cdf(jnp.array(1.0))
    return jnp.concatenate([jnp.zeros(1), nodes, jnp.ones(1)]), jnp.concatenate([lo[None], weights, hi[None]])


def expectation_rule(dists: tuple[Dist1D, ...], num_per_dim: int | None = None, num_qmc: int = 2**16):
    """(nodes (Q, dc), weights (Q,)) with sum_q w_q g(nodes_q) ~ E[g(clip(c))], c_j ~ dists[j] independent."""
    dc = len(dists)
    if dc <= 2:
        num = num_per_dim or (1024 if dc == 1 else 96)
        rules = [_line_rule(d, num) for d in dists]
        if dc == 1:
            return rules[0][0][:, None], rules[0][1]
        (n1, w1), (n2, w2) = rules
        g1, g2 = jnp.meshgrid(n1, n2, indexing="ij")
        return jnp.stack([g1.ravel(), g2.ravel()], -1), (w1[:, None] * w2[None, :]).ravel()
    if any(d.icdf is None for d in dists):
        raise ValueError("QMC expectations need an inverse CDF for every context dimension")
    u = designs.sobol(jax.random.key(0), num_qmc, dc)
    u = jnp.clip(u + 0.5 / num_qmc, 1e-12, 1 - 1e-12)  # centre the points: icdf(0) is -inf
    c = jnp.stack([d.icdf(u[:, j]) for j, d in enumerate(dists)], -1)
    return jnp.clip(c, 0.0, 1.0), jnp.full(num_qmc, 1.0 / num_qmc)


def context_sampler(dists: tuple[Dist1D, ...]) -> Callable:
    """(key, num) -> num clipped draws of independent contexts; closes over no arrays (static-safe)."""

    def sample(key, num: int):
        keys = jax.random.split(key, len(dists))
        return jnp.clip(jnp.stack([d.sample(k, (num,)) for d, k in zip(dists, keys)], -1), 0.0, 1.0)

    return sample


# ---------------------------------------------------------------- the environment
class ContextState(NamedTuple):
    pass


class ContextualProblem(Environment):
    """f(x, c) on [0, 1]^dx x [0, 1]^dc, maximised in expectation over c ~ p (unknown to the learner).

    step(key, state, x) draws c (clipped), observes (c, f(x, c) + noise) and reports, from the exact
    expectation rule, value = F(x) and (when known) optimal_value = F*, plus reward = f(x, c); the
    engine derives best value and regrets from them (jbo.engine).
    """

    name: str = eqx.field(static=True)
    decision_dim: int = eqx.field(static=True)
    context_dim: int = eqx.field(static=True)
    fn: Callable = eqx.field(static=True)  # f(x, c) -> scalar
    dists: tuple = eqx.field(static=True)  # one Dist1D per context dimension (independent)
    nodes: jax.Array
    weights: jax.Array
    optimal_value: float | None = eqx.field(static=True, default=None)
    optimizer: jax.Array | None = None
    noise_std: float = eqx.field(static=True, default=0.0)

    @property
    def space(self) -> Box:
        return Box(dim=self.decision_dim)

    def sample_contexts(self, key, num: int):
        """num i.i.d. contexts from the true p, clipped to [0, 1] (for SBO-Oracle and tests)."""
        return context_sampler(self.dists)(key, num)

    def expected(self, x):
        """F(x) = E_c f(x, c) by the fixed rule."""
        vals = jax.vmap(lambda c: self.fn(x, c))(self.nodes)
        return jnp.sum(self.weights * vals)

    def reset(self, key):
        return ContextState()

    def step(self, key, state, action, step=None):
        if jnp.shape(action) != (self.decision_dim,):
            raise ValueError(f"{self.name}: action must have shape ({self.decision_dim},), got {jnp.shape(action)}")
        k_c, k_n = jax.random.split(key)
        c = self.sample_contexts(k_c, 1)[0]
        reward = self.fn(action, c)
        y = reward + self.noise_std * jax.random.normal(k_n)
        metrics = {"value": self.expected(action), "reward": reward}
        if self.optimal_value is not None:
            metrics["optimal_value"] = self.optimal_value
        return state, (c, y), metrics


def make(name, dx, fn, dists, optimal_value=None, optimizer=None, noise_std=0.0, num_per_dim=None):
    nodes, weights = expectation_rule(tuple(dists), num_per_dim)
    opt = None if optimizer is None else jnp.asarray(optimizer, jnp.float64)
    return ContextualProblem(name, dx, len(dists), fn, tuple(dists), nodes, weights, optimal_value, opt, float(noise_std))


# ---------------------------------------------------------------- the paper's problems (sbo_kde.md 7.3)
def ackley_fn(x, c):
    z = 65.536 * jnp.concatenate([x, c]) - 32.768
    d = z.shape[0]
    return (20 * jnp.exp(-0.2 * jnp.sqrt(jnp.sum(z**2) / d + 1e-300)) + jnp.exp(jnp.sum(jnp.cos(2 * math.pi * z)) / d)
            - 20 - math.e)


def _branin(u, v):
    return (v - 5.1 / (4 * math.pi**2) * u**2 + 5 / math.pi * u - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * jnp.cos(u) + 10


def modified_branin_fn(x, c):
    return -jnp.sqrt(_branin(15 * x[0] - 5, 15 * c[0]) * _branin(15 * c[1] - 5, 15 * x[1]))


_H6_ALPHA = jnp.array([1.0, 1.2, 3.0, 3.2])
_H6_A = jnp.array([[10.0, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
                   [17, 8, 0.05, 10, 0.1, 14]])
_H6_P = 1e-4 * jnp.array([[1312.0, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                          [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])


def hartmann_fn(x, c):
    y = jnp.concatenate([x, c])
    return jnp.sum(_H6_ALPHA * jnp.exp(-jnp.sum(_H6_A * (y - _H6_P) ** 2, -1)))


def newsvendor_fn(x, c):
    return 9 * jnp.minimum(x[0], c[0]) + jnp.maximum(0.0, x[0] - c[0]) - 5 * x[0]


NEWSVENDOR_OPTIMUM = (math.sqrt(2 ** (1 / 20) - 1), 0.463943)


class PortfolioSurrogate(NamedTuple):
    X: jax.Array
    alpha: jax.Array
    lengthscale: jax.Array
    outputscale: float
    mean_constant: float
    y_mean: float
    y_std: float

    def __call__(self, z):
        k = kernels.cross("matern52", kernels.KernelParams(self.lengthscale, self.outputscale), z, self.X)
        return self.y_mean + self.y_std * (self.mean_constant + k @ self.alpha)


def portfolio_surrogate() -> PortfolioSurrogate:
    """The authors' fitted GP surrogate of the CVXPortfolio back-test (data README section 1), float64."""
    d = np.load(Path(__file__).parent / "data" / "portfolio_gp.npz")
    return PortfolioSurrogate(jnp.asarray(d["train_X"]), jnp.asarray(d["alpha"]), jnp.asarray(d["lengthscale"]),
                              float(d["outputscale"]), float(d["mean_constant"]), float(d["y_mean"]), float(d["y_std"]))


def problem(name: str, noise_std: float = 0.0) -> ContextualProblem:
    """The paper's problems by name (see PROBLEMS). F* values are our recomputations (tests)."""
    if name == "ackley":
        return make("ackley", 2, ackley_fn, [normal(0.5, 0.15)], OPTIMA["ackley"], [0.5, 0.5], noise_std)
    if name == "ackley_4c":
        return make("ackley_4c", 2, ackley_fn, [normal(0.5, 0.15)] * 4, OPTIMA["ackley_4c"], [0.5, 0.5], noise_std)
    if name == "modified_branin":
        return make("modified_branin", 2, modified_branin_fn, [normal(0.5, 0.1)] * 2, OPTIMA["modified_branin"], None,
                    noise_std)
    if name == "hartmann":
        return make("hartmann", 5, hartmann_fn, [normal(0.5, 0.1)], OPTIMA["hartmann"], None, noise_std)
    if name == "complicated_hartmann":
        return make("complicated_hartmann", 5, hartmann_fn, [complicated_mixture()], OPTIMA["complicated_hartmann"],
                    None, noise_std)
    if name == "newsvendor":
        return make("newsvendor", 1, newsvendor_fn, [burr12(2.0, 20.0)], NEWSVENDOR_OPTIMUM[1],
                    [NEWSVENDOR_OPTIMUM[0]], noise_std)
    if name in ("portfolio_uniform", "portfolio_normal"):
        sur = portfolio_surrogate()
        dists = [uniform()] * 2 if name == "portfolio_uniform" else [normal(0.5, 0.1)] * 2
        return make(name, 3, lambda x, c: sur(jnp.concatenate([x, c])), dists, OPTIMA.get(name), None, noise_std,
                    num_per_dim=32)
    raise ValueError(f"unknown contextual problem {name!r}; choose one of {PROBLEMS}")


PROBLEMS = ("ackley", "modified_branin", "hartmann", "complicated_hartmann", "newsvendor", "portfolio_uniform",
            "portfolio_normal", "ackley_4c")
# F* (maximise): spec 7.2 values, replaced by our own recomputation where the tests find better ones
OPTIMA = {"ackley": -10.9523, "ackley_4c": -16.1987, "modified_branin": -9.6036, "hartmann": 2.6136,
          "complicated_hartmann": 1.9452}
