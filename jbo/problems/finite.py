"""Finite-arm environments whose objective may change with time (piecewise constant), with optional
per-arm costs and side information.

The learner picks an arm index k; the observation is values[s(t), k] + noise, where the segment s(t)
counts the change points at or before step t. Each step reports that step's optimum, so the engine's
regret is the dynamic regret of non-stationary bandits (r_perp.md 1.3), and its cost (per arm, or 1).
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo.protocols import Environment
from jbo.spaces import FiniteArms


class ArmState(NamedTuple):
    pass


class FiniteArmProblem(Environment):
    """K arms (points of the unit cube), S segments of mean values (S, K), change points (static).

    values[s, k]: the noise-free value of arm k in segment s; segment s covers the steps from
    change_points[s - 1] (0 for s = 0) up to change_points[s] - 1. costs (K,): the cost of pulling
    each arm (None: 1 each). info: side information handed to the learner (e.g. a variation budget,
    an RKHS-norm bound).
    """

    name: str = eqx.field(static=True)
    arms: FiniteArms
    values: jax.Array  # (S, K)
    change_points: tuple = eqx.field(static=True)
    costs: jax.Array | None
    noise_std: float = eqx.field(static=True)
    info: dict

    def __init__(
        self,
        arms,
        values,
        change_points=(),
        costs=None,
        noise_std: float = 0.0,
        name: str = "finite_arms",
        info: dict | None = None,
    ):
        self.arms = arms if isinstance(arms, FiniteArms) else FiniteArms(arms)
        v = jnp.asarray(values, jnp.float64)
        if v.ndim == 1:
            v = v[None]
        K = self.arms.num_arms
        if v.ndim != 2 or v.shape[1] != K:
            raise ValueError(f"values must have shape (segments, {K}), got {tuple(jnp.shape(values))}")
        if not bool(jnp.all(jnp.isfinite(v))):
            raise ValueError("values must be finite")
        cps = tuple(int(c) for c in change_points)
        if len(cps) != v.shape[0] - 1:
            raise ValueError(f"{v.shape[0]} segments need {v.shape[0] - 1} change points, got {len(cps)}")
        if any(b <= a for a, b in zip((0,) + cps, cps)):
            raise ValueError(f"change points must be positive and strictly increasing, got {cps}")
        if costs is not None:
            costs = jnp.asarray(costs, jnp.float64)
            if costs.shape != (K,) or not bool(jnp.all(costs > 0)):
                raise ValueError(f"costs must be {K} positive numbers, got {costs}")
        if not (noise_std >= 0 and np.isfinite(noise_std)):
            raise ValueError(f"noise_std must be finite and >= 0, got {noise_std!r}")
        self.values, self.change_points, self.costs = v, cps, costs
        self.noise_std, self.name, self.info = float(noise_std), name, dict(info or {})

    @property
    def space(self) -> FiniteArms:
        return self.arms

    def side_info(self, env_state) -> dict:
        return self.info

    def segment(self, t):
        """Index of the segment that step t falls in."""
        return (
            sum((t >= c).astype(jnp.int32) for c in self.change_points)
            if self.change_points
            else jnp.zeros((), jnp.int32)
        )

    def reset(self, key):
        return ArmState()

    def step(self, key, state, action, step):
        vals = self.values[self.segment(step.t)]
        value = vals[action]
        y = value + self.noise_std * jax.random.normal(key)
        metrics = {"value": value, "optimal_value": jnp.max(vals), "segment": self.segment(step.t)}
        if self.costs is not None:
            metrics["cost"] = self.costs[action]
        return state, y, metrics


def from_functions(
    fns, arms, change_points=(), costs=None, noise_std: float = 0.0, name: str = "finite_arms", info: dict | None = None
) -> FiniteArmProblem:
    """A drifting finite-arm problem from one jnp function f_s(x) per segment, evaluated at the arms."""
    arms = arms if isinstance(arms, FiniteArms) else FiniteArms(arms)
    values = jnp.stack([jax.vmap(f)(arms.arms) for f in fns])
    return FiniteArmProblem(arms, values, change_points, costs, noise_std, name, info)


__all__ = ["ArmState", "FiniteArmProblem", "from_functions"]
