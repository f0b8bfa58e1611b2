"""Control-set problems (BO with cost-varying variable subsets, bocvs.md 1): the learner picks a
control set i (a mask over the d variables) and values for its variables; the environment draws the
others from a known law, observes f at the realised full point, and charges a cost for the set.

Free variables are r = 0.5 + s * TN(-0.5/s, 0.5/s) per coordinate (a normal of scale s truncated to
[0, 1], bocvs.md 4.5), or uniform on [0, 1] when s = inf. The value of an action is its expectation
over the free variables, F_i(x) = E_r f(M_i x + (1 - M_i) r), estimated with a fixed Monte-Carlo
sample drawn once per seed at reset (shared by every method: common random numbers). The cost of
set i is cost_mean[i] + cost_std * N(0, 1) where cost_mean[i] >= cost_noise_threshold, clipped to
[0.001, 2] (bocvs.md 7.7). The learner is told the free-variable scale (side information).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo.protocols import Environment
from jbo.spaces import ControlObservation, ControlSets


class ControlState(NamedTuple):
    free_sample: jax.Array  # (num_mc, d) Monte-Carlo sample of the free variables (for the metrics)


def free_variables(key, shape, scale):
    """r = 0.5 + s * TN(-0.5/s, 0.5/s): a normal of scale s centred at 0.5 truncated to [0, 1]
    (s = inf: uniform). Vectorised over `shape` (..., d)."""
    if np.isinf(scale):
        return jax.random.uniform(key, shape)
    return 0.5 + scale * jax.random.truncated_normal(key, -0.5 / scale, 0.5 / scale, shape)


def truncated_normal_variance(scale) -> float:
    """Variance of a normal of scale s centred at 0.5 and truncated to [0, 1] (closed form):
    s^2 (1 - 2 b phi(b) / (2 Phi(b) - 1)) with b = 0.5 / s."""
    from scipy.stats import norm

    s = float(scale)
    if not (s > 0 and np.isfinite(s)):
        raise ValueError(f"the scale must be positive and finite, got {scale!r}")
    b = 0.5 / s
    return s * s * (1.0 - 2.0 * b * norm.pdf(b) / (2.0 * norm.cdf(b) - 1.0))


def scale_for_variance(variance: float) -> float:
    """The scale s whose normal centred at 0.5, truncated to [0, 1], has variance `variance`
    (bocvs.md 4.5: variances are measured after truncation). Root of the closed form by Brent's method;
    a variance must lie in (0, 1/12) (1/12: the uniform limit s -> inf)."""
    from scipy.optimize import brentq

    v = float(variance)
    if not (0.0 < v < 1.0 / 12.0):
        raise ValueError(f"a truncated-normal variance on [0, 1] must lie in (0, 1/12), got {variance!r}")
    hi = 1.0
    while truncated_normal_variance(hi) < v:
        hi *= 2.0
    return float(brentq(lambda s: truncated_normal_variance(s) - v, 1e-6, hi, xtol=1e-14, rtol=1e-14))


def truncated_normal_from_uniform(u, scale):
    """Map uniforms u in (0, 1) to 0.5 + s TN(-0.5/s, 0.5/s) by the inverse CDF (any shape; `scale` may
    be traced; s = inf: u itself, the uniform law). The same uniforms give every scale's sample: runs with different variances share
    their random numbers (bocvs.md 7.9)."""
    from jax.scipy.special import ndtr, ndtri

    s = jnp.asarray(scale)
    uniform = jnp.isinf(s)  # s = inf: the uniform law, the limit of the truncated normal
    s = jnp.where(uniform, 1.0, s)
    lo, hi = ndtr(-0.5 / s), ndtr(0.5 / s)
    return jnp.where(uniform, u, jnp.clip(0.5 + s * ndtri(lo + u * (hi - lo)), 0.0, 1.0))


class ControlSetProblem(Environment):
    """f on [0, 1]^d (a jnp function of one point, maximised), m control sets, a cost per set."""

    name: str = eqx.field(static=True)
    sets: ControlSets
    fn: Callable = eqx.field(static=True)
    cost_mean: jax.Array  # (m,)
    cost_std: float = eqx.field(static=True)
    cost_noise_threshold: float = eqx.field(static=True)
    free_scale: float = eqx.field(static=True)
    noise_std: float = eqx.field(static=True)
    num_mc: int = eqx.field(static=True)
    optimal_value: float | None = eqx.field(static=True)

    def __init__(
        self,
        fn,
        masks,
        cost_mean,
        cost_std: float = 0.0,
        cost_noise_threshold: float = 0.0,
        free_scale: float = float("inf"),
        noise_std: float = 0.0,
        num_mc: int = 1024,
        optimal_value: float | None = None,
        name: str = "control_sets",
    ):
        self.sets = masks if isinstance(masks, ControlSets) else ControlSets(masks)
        c = jnp.asarray(cost_mean, jnp.float64)
        if c.shape != (self.sets.num_sets,) or not bool(jnp.all(c > 0)):
            raise ValueError(f"cost_mean must be {self.sets.num_sets} positive numbers, got {cost_mean}")
        if not (free_scale > 0):
            raise ValueError(f"free_scale must be > 0 (inf: uniform), got {free_scale}")
        for what, v in (("cost_std", cost_std), ("noise_std", noise_std)):
            if not (v >= 0 and np.isfinite(v)):
                raise ValueError(f"{what} must be finite and >= 0, got {v!r}")
        self.fn, self.cost_mean, self.cost_std = fn, c, float(cost_std)
        self.cost_noise_threshold, self.free_scale = float(cost_noise_threshold), float(free_scale)
        self.noise_std, self.num_mc, self.name = float(noise_std), int(num_mc), name
        self.optimal_value = None if optimal_value is None else float(optimal_value)

    @property
    def space(self) -> ControlSets:
        return self.sets

    def side_info(self, env_state) -> dict:
        return {"free_scale": jnp.asarray(self.free_scale)}

    def reset(self, key):
        return ControlState(free_variables(key, (self.num_mc, self.sets.dim), self.free_scale))

    def expected(self, action, free_sample):
        """F_i(x): the mean of f over the Monte-Carlo sample of the free variables."""
        pts = jax.vmap(lambda r: self.sets.compose(action, r))(free_sample)
        return jnp.mean(jax.vmap(self.fn)(pts))

    def step(self, key, state, action, step):
        k_r, k_y, k_c = jax.random.split(key, 3)
        x = self.sets.compose(action, free_variables(k_r, (self.sets.dim,), self.free_scale))
        y = self.fn(x) + self.noise_std * jax.random.normal(k_y)
        mean = self.cost_mean[action.set]
        noisy = jnp.where(mean >= self.cost_noise_threshold, self.cost_std, 0.0)
        cost = jnp.clip(mean + noisy * jax.random.normal(k_c), 0.001, 2.0)
        metrics = {"value": self.expected(action, state.free_sample), "cost": cost, "set": action.set}
        if self.optimal_value is not None:
            metrics["optimal_value"] = self.optimal_value
        return state, ControlObservation(x, y, cost), metrics


__all__ = [
    "ControlSetProblem",
    "ControlState",
    "free_variables",
    "scale_for_variance",
    "truncated_normal_from_uniform",
    "truncated_normal_variance",
]
