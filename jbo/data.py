"""Fixed-capacity observation buffers: rows >= count are padding and are masked out everywhere."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Buffer(NamedTuple):
    x: jax.Array  # (N, d) inputs in the unit cube; padding rows hold `fill`
    y: jax.Array  # (N,) observations; padding rows hold 0
    count: jax.Array  # int32 scalar: number of valid rows

    @property
    def capacity(self) -> int:
        return self.x.shape[0]

    @property
    def mask(self) -> jax.Array:
        return jnp.arange(self.x.shape[0]) < self.count


def empty(capacity: int, dim: int, fill: float = 0.5) -> Buffer:
    return Buffer(jnp.full((capacity, dim), fill), jnp.zeros((capacity,)), jnp.zeros((), jnp.int32))


def from_arrays(x: jax.Array, y: jax.Array, capacity: int, fill: float = 0.5) -> Buffer:
    """A buffer of the given capacity holding the rows of (x, y)."""
    n, d = x.shape
    if n > capacity:
        raise ValueError(f"{n} observations do not fit a buffer of capacity {capacity}")
    buf = empty(capacity, d, fill)
    return Buffer(buf.x.at[:n].set(x), buf.y.at[:n].set(y), jnp.asarray(n, jnp.int32))


def append(buf: Buffer, x: jax.Array, y: jax.Array, active=True) -> Buffer:
    """Write (x, y) at row `count` (when `active`); a full buffer is left unchanged."""
    ok = jnp.logical_and(active, buf.count < buf.capacity)
    i = jnp.minimum(buf.count, buf.capacity - 1)
    return Buffer(
        buf.x.at[i].set(jnp.where(ok, x, buf.x[i])),
        buf.y.at[i].set(jnp.where(ok, y, buf.y[i])),
        buf.count + ok.astype(jnp.int32),
    )


def masked_mean_std(y: jax.Array, mask: jax.Array, min_std: float = 1e-9):
    """Mean and (ddof=1 where possible) standard deviation of the valid entries of y."""
    n = jnp.sum(mask)
    mean = jnp.sum(jnp.where(mask, y, 0.0)) / jnp.maximum(n, 1)
    var = jnp.sum(jnp.where(mask, (y - mean) ** 2, 0.0)) / jnp.maximum(n - 1, 1)
    std = jnp.sqrt(var)
    return mean, jnp.where(std > min_std, std, 1.0)


def best(buf: Buffer) -> jax.Array:
    """Largest valid observation (the incumbent for EI/PI)."""
    return jnp.max(jnp.where(buf.mask, buf.y, -jnp.inf))
