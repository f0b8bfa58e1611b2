"""Action spaces: what an environment lets the learner choose, in the spec it hands the algorithm.

Three kinds, each an equinox module (arrays are pytree leaves, so a space may differ per seed):

* :class:`Box` — a point of the unit cube [0, 1]^d; the problem maps it to its bounds.
* :class:`FiniteArms` — K candidate points (unit-cube coordinates); the action is an int32 index.
* :class:`ControlSets` — m boolean masks over the d variables; the action is a
  :class:`ControlAction` (set index, unit-cube point). Only the variables of the chosen set are
  controlled; the environment draws the others and reports the realised full point.

Every space knows its shared initial design, a uniformly random action, and the maps between the
engine's actions and the host's (original coordinates), which :class:`jbo.AskTell` uses.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import designs


def _bounds(bounds, dim=None) -> jax.Array:
    if bounds is None:
        if dim is None:
            raise ValueError("a space needs bounds or a dimension")
        return jnp.stack([jnp.zeros(dim), jnp.ones(dim)])
    b = np.asarray(bounds, dtype=np.float64)
    if b.ndim != 2 or b.shape[0] != 2 or b.shape[1] < 1:
        raise ValueError(f"bounds must have shape (2, d) with d >= 1, got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError("bounds must be finite")
    bad = np.nonzero(b[0] >= b[1])[0]
    if bad.size:
        raise ValueError(f"bounds need lo < hi in every dimension; lo >= hi in dimension(s) {bad.tolist()}")
    if dim is not None and b.shape[1] != dim:
        raise ValueError(f"bounds have {b.shape[1]} dimensions, expected {dim}")
    return jnp.asarray(b)


class Box(eqx.Module):
    """A box in original coordinates; actions are unit-cube points (d,)."""

    bounds: jax.Array  # (2, d)

    def __init__(self, bounds=None, dim: int | None = None):
        self.bounds = _bounds(bounds, dim)

    @property
    def dim(self) -> int:
        return self.bounds.shape[1]

    def from_unit(self, u):
        return self.bounds[0] + u * (self.bounds[1] - self.bounds[0])

    def to_unit(self, x):
        return (x - self.bounds[0]) / (self.bounds[1] - self.bounds[0])

    def point(self, action):
        """The unit-cube point an action stands for."""
        return action

    def initial_design(self, key, num: int):
        return designs.latin_hypercube(key, num, self.dim)

    def sample(self, key):
        return jax.random.uniform(key, (self.dim,))

    def to_host(self, action):
        return np.asarray(self.from_unit(action))

    def from_host(self, x):
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.dim,):
            raise ValueError(f"x must have shape ({self.dim},), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"x must be finite, got {x.tolist()}")
        u = np.asarray(self.to_unit(x))
        if np.any(u < -1e-9) or np.any(u > 1 + 1e-9):
            raise ValueError("x lies outside the bounds")
        return jnp.asarray(np.clip(u, 0.0, 1.0))


class FiniteArms(eqx.Module):
    """K arms: points of the unit cube (K, d); the action is an int32 index into them.

    `bounds` (optional) gives the original coordinates the arms stand for (AskTell reports them)."""

    arms: jax.Array  # (K, d) unit-cube coordinates
    bounds: jax.Array  # (2, d)

    def __init__(self, arms, bounds=None):
        a = jnp.asarray(arms, jnp.float64)
        if a.ndim != 2 or a.shape[0] < 1:
            raise ValueError(f"arms must have shape (K, d) with K >= 1, got shape {a.shape}")
        if not bool(jnp.all(jnp.isfinite(a))):
            raise ValueError("arms must be finite")
        self.arms = a
        self.bounds = _bounds(bounds, a.shape[1])

    @property
    def dim(self) -> int:
        return self.arms.shape[1]

    @property
    def num_arms(self) -> int:
        return self.arms.shape[0]

    def point(self, action):
        return self.arms[action]

    def initial_design(self, key, num: int):
        """num distinct arms in random order (with replacement only when num > K)."""
        if num <= self.num_arms:
            return jax.random.permutation(key, self.num_arms)[:num].astype(jnp.int32)
        return jax.random.randint(key, (num,), 0, self.num_arms, jnp.int32)

    def sample(self, key):
        return jax.random.randint(key, (), 0, self.num_arms, jnp.int32)

    def to_host(self, action):
        return int(action)

    def from_host(self, action):
        i = int(action)
        if not 0 <= i < self.num_arms:
            raise ValueError(f"arm index {i} is outside 0..{self.num_arms - 1}")
        return jnp.asarray(i, jnp.int32)


class ControlAction(NamedTuple):
    set: jax.Array  # int32: index of the control set
    x: jax.Array  # (d,) unit-cube values; only the coordinates in the set matter


class ControlObservation(NamedTuple):
    x: jax.Array  # (d,) the realised full point (controlled + drawn coordinates), unit cube
    y: jax.Array  # the observed value
    cost: jax.Array  # the observed cost of the query


class ControlSets(eqx.Module):
    """m control sets, boolean masks (m, d) over the variables; actions are ControlAction."""

    masks: jax.Array  # (m, d) bool
    bounds: jax.Array  # (2, d)

    def __init__(self, masks, bounds=None):
        m = np.asarray(masks)
        if m.ndim != 2 or m.shape[0] < 1:
            raise ValueError(f"control-set masks must have shape (m, d) with m >= 1, got shape {m.shape}")
        if not np.all(m.any(axis=1)):
            raise ValueError(f"control set(s) {np.nonzero(~m.any(axis=1))[0].tolist()} control no variable")
        self.masks = jnp.asarray(m, bool)
        self.bounds = _bounds(bounds, m.shape[1])

    @property
    def dim(self) -> int:
        return self.masks.shape[1]

    @property
    def num_sets(self) -> int:
        return self.masks.shape[0]

    def compose(self, action: ControlAction, free):
        """The full point: the set's coordinates from the action, the others from `free` (d,)."""
        return jnp.where(self.masks[action.set], action.x, free)

    def point(self, action):
        return action.x

    def initial_design(self, key, num: int):
        """Sets in round-robin order with a Latin-hypercube point each."""
        return ControlAction(
            jnp.arange(num, dtype=jnp.int32) % self.num_sets, designs.latin_hypercube(key, num, self.dim)
        )

    def sample(self, key):
        k1, k2 = jax.random.split(key)
        return ControlAction(
            jax.random.randint(k1, (), 0, self.num_sets, jnp.int32), jax.random.uniform(k2, (self.dim,))
        )

    def to_host(self, action):
        """(set index, point in original coordinates; uncontrolled coordinates are NaN)."""
        i = int(action.set)
        x = np.asarray(self.bounds[0] + action.x * (self.bounds[1] - self.bounds[0]))
        return i, np.where(np.asarray(self.masks[i]), x, np.nan)

    def from_host(self, action):
        i, x = action
        i = int(i)
        if not 0 <= i < self.num_sets:
            raise ValueError(f"control-set index {i} is outside 0..{self.num_sets - 1}")
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.dim,):
            raise ValueError(f"x must have shape ({self.dim},), got {x.shape}")
        if not np.all(np.isfinite(x[np.asarray(self.masks[i])])):
            raise ValueError(f"the controlled coordinates of x must be finite, got {x.tolist()}")
        x = np.nan_to_num(x, nan=0.0)  # the uncontrolled coordinates: free (NaN in ask's answer)
        u = (x - np.asarray(self.bounds[0])) / np.asarray(self.bounds[1] - self.bounds[0])
        u = np.where(np.asarray(self.masks[i]), u, 0.5)
        if np.any(u < -1e-9) or np.any(u > 1 + 1e-9):
            raise ValueError("x lies outside the bounds")
        return ControlAction(jnp.asarray(i, jnp.int32), jnp.asarray(np.clip(u, 0.0, 1.0)))


Space = Box | FiniteArms | ControlSets

__all__ = ["Box", "ControlAction", "ControlObservation", "ControlSets", "FiniteArms", "Space"]
