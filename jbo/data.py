"""Fixed-capacity observation buffers with an explicit validity mask.

A :class:`Buffer` holds ``capacity`` rows; ``mask`` says which are data. Every consumer (GP, KDE,
kernel regression) reads only ``mask``, so any subset works: the first n rows (a growing design),
the last W writes of a ring buffer (a sliding window), or a mask the algorithm sets itself
(:func:`restrict`, e.g. "only this batch" or "only observations younger than W steps").

The capacity is the caller's choice (an algorithm may hold a window, a restart interval or the
whole run). What happens when a non-ring buffer is full is defined, not silent: the row is dropped,
``count`` stops, and :func:`overflowed` reports it; a ring buffer (``wrap=True``) overwrites the
oldest row.
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


class Buffer(NamedTuple):
    x: jax.Array  # (N, d) inputs in the unit cube; invalid rows hold `fill`
    y: jax.Array  # (N,) observations; invalid rows hold 0
    mask: jax.Array  # (N,) bool: which rows are data
    count: jax.Array  # int32 scalar: rows written so far (a ring buffer keeps counting past N)

    @property
    def capacity(self) -> int:
        return self.x.shape[0]


def empty(capacity: int, dim: int, fill: float = 0.5) -> Buffer:
    if capacity < 1 or dim < 1:
        raise ValueError(f"a buffer needs capacity >= 1 and dim >= 1, got capacity={capacity}, dim={dim}")
    return Buffer(
        jnp.full((capacity, dim), fill), jnp.zeros((capacity,)), jnp.zeros((capacity,), bool), jnp.zeros((), jnp.int32)
    )


def from_arrays(x: jax.Array, y: jax.Array, capacity: int, fill: float = 0.5) -> Buffer:
    """A buffer of the given capacity holding the rows of (x, y) first."""
    chex.assert_rank(x, 2)
    chex.assert_shape(y, (x.shape[0],))
    n, d = x.shape
    if n > capacity:
        raise ValueError(f"{n} observations do not fit a buffer of capacity {capacity}")
    buf = empty(capacity, d, fill)
    return Buffer(buf.x.at[:n].set(x), buf.y.at[:n].set(y), jnp.arange(capacity) < n, jnp.asarray(n, jnp.int32))


def append(buf: Buffer, x: jax.Array, y: jax.Array, active=True, wrap: bool = False) -> Buffer:
    """Write (x, y) as the next row when `active`.

    wrap=False: row `count`; once the buffer is full the write is dropped and `count` stays at the
    capacity (see :func:`overflowed`). wrap=True (a ring buffer, for sliding windows): row
    `count % capacity`, overwriting the oldest row once full.
    """
    n = buf.capacity
    if wrap:
        ok = jnp.asarray(active)
        i = buf.count % n
    else:
        ok = jnp.logical_and(active, buf.count < n)
        i = jnp.minimum(buf.count, n - 1)
    return Buffer(
        buf.x.at[i].set(jnp.where(ok, x, buf.x[i])),
        buf.y.at[i].set(jnp.where(ok, y, buf.y[i])),
        buf.mask.at[i].set(buf.mask[i] | ok),
        buf.count + ok.astype(jnp.int32),
    )


def overflowed(buf: Buffer) -> jax.Array:
    """True when a non-ring buffer is full, so a further append would be dropped."""
    return buf.count >= buf.capacity


def restrict(buf: Buffer, keep: jax.Array) -> Buffer:
    """The same rows with the validity mask `mask & keep` (arbitrary subsets: windows, batches)."""
    return buf._replace(mask=buf.mask & keep)


def order(buf: Buffer) -> jax.Array:
    """Write index of every row (0 = first written); for a ring buffer, ages are count - 1 - order."""
    n = buf.capacity
    slot = jnp.arange(n)
    wraps = buf.count // n
    return jnp.where(slot < buf.count % n, wraps * n + slot, (wraps - 1) * n + slot)


def window(buf: Buffer, width) -> Buffer:
    """Restrict a (ring) buffer to its `width` most recent writes (a sliding window; width may be traced)."""
    return restrict(buf, order(buf) >= buf.count - width)


def prefix(buf: Buffer, size: int) -> Buffer:
    """The first `size` rows (static): the same data as long as every valid row lies in them (a
    growing, non-ring buffer with at most `size` writes)."""
    return Buffer(buf.x[:size], buf.y[:size], buf.mask[:size], buf.count)


def resize(buf: Buffer, size: int, fill: float = 0.5) -> Buffer:
    """The same buffer with `size` rows (static): cut to its first `size` rows, or padded with invalid
    rows holding `fill`. Lossless while every written row lies in the first `size` rows (a growing,
    non-ring buffer with at most `size` writes), which is how the engine grows a run's buffers."""
    n = buf.capacity
    if size <= n:
        return prefix(buf, size)
    pad = size - n
    return Buffer(
        jnp.concatenate([buf.x, jnp.full((pad,) + buf.x.shape[1:], fill, buf.x.dtype)]),
        jnp.concatenate([buf.y, jnp.zeros((pad,), buf.y.dtype)]),
        jnp.concatenate([buf.mask, jnp.zeros((pad,), bool)]),
        buf.count,
    )


# ---------------------------------------------------------------- growing state (the engine's segments)
_GROWING: dict = {}  # type -> (rows(node) -> int, resize(node, size) -> node)


def register_growing(cls, rows, resize_fn) -> None:
    """Declare a state node type whose leading size grows with the data (a buffer, a cached factor):
    `rows(node)` is its static row capacity and `resize_fn(node, size)` cuts or pads it losslessly.
    The engine resizes every such node whose capacity is the run's length (see :func:`grow`)."""
    _GROWING[cls] = (rows, resize_fn)


def _is_growing(node) -> bool:
    return type(node) in _GROWING


def growing(tree, capacity: int) -> list[bool]:
    """Which nodes of `tree` (in flatten order, growing nodes as one) are growing nodes holding
    `capacity` rows: the ones :func:`grow` resizes."""
    nodes = jax.tree.leaves(tree, is_leaf=_is_growing)
    return [_is_growing(n) and _GROWING[type(n)][0](n) == capacity for n in nodes]


def grow(tree, marked: list[bool], size: int):
    """`tree` with the nodes `marked` by :func:`growing` resized to `size` rows; the rest unchanged."""
    nodes, treedef = jax.tree.flatten(tree, is_leaf=_is_growing)
    return jax.tree.unflatten(treedef, [_GROWING[type(n)][1](n, size) if m else n for n, m in zip(nodes, marked)])


register_growing(Buffer, lambda b: b.capacity, resize)


def check_bucket_step(step, name: str = "bucket_step") -> None:
    """A bucket growth cap is None (powers of two) or a positive int (not a bool): a named ValueError."""
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 1):
        raise ValueError(f"{name} must be a positive int or None (powers of two), got {step!r}")


def bucket_sizes(capacity: int, smallest: int = 16, max_step: int | None = None) -> list[int]:
    """Segment sizes of a growing buffer (:class:`Growth`): sizes below `capacity`
    from `smallest` on, each twice the last or (with `max_step`) the last plus max_step where that is
    smaller, then `capacity`.
    max_step=None: powers of two (16, 32, 64, ...); max_step=128 at capacity 750: 16, 32, 64, 128,
    256, 384, 512, 640, 750 (a step on n = 300 rows then works on 384 of them, not 512)."""
    check_bucket_step(max_step, "bucket max_step")
    sizes, s = [], smallest
    while s < capacity:
        sizes.append(s)
        s = 2 * s if max_step is None else min(2 * s, s + max_step)
    return sizes + [capacity]


BUCKET_SMALLEST = 64  # rows of the first segment, at least
BUCKET_FIRST = 128  # rows of the first segment, at most
BUCKET_SHARE = 1 / 3  # the first segment is the largest smallest * 2^k rows (to BUCKET_FIRST) within this share
BUCKET_STEP = 256  # later segments grow by at most this many rows (None: doubling)
BUCKET_WHOLE = 96  # runs of at most this many steps keep the one whole-buffer program


class Growth(eqx.Module):
    """How a run's growing state (a :class:`Buffer`, a GP factor; :func:`register_growing`) grows with
    the data: the engine runs the scan in segments, segment k with every growing node cut to the k-th
    size. Called with a run's length it returns the sizes, increasing and ending at num_steps.

    enabled: False keeps the whole buffer (one segment, the whole-buffer program).
    sizes: explicit sizes (those below num_steps are used, then num_steps); overrides the rule below.
    The rule (defaults chosen by measurement, experiments/engine/segment_schedule.py; docs/benchmarks.md):
    runs of at most `whole` steps keep one segment; otherwise the first size is the largest
    smallest * 2^k that is at most share * num_steps and at most `first` (at least `smallest`;
    share = 0: `smallest`), then sizes double, growing by at most `step` rows (None: doubling):
    T = 100: 64, 100; T = 200: 64, 128, 200; T = 400: 128, 256, 400; T = 1000: 128, 256, 512, 768,
    1000. Each segment costs about 2-4 s of compile here and saves run time in proportion to the
    seeds (at T = 100 and 128 a 64-row segment saves about 40% of the run, which pays for its compile
    from about 11 seeds); a run of at most 96 steps (the demo, the quick start) keeps its one program.
    """

    enabled: bool = eqx.field(static=True, default=True)
    sizes: tuple | None = eqx.field(static=True, default=None)
    step: int | None = eqx.field(static=True, default=BUCKET_STEP)
    smallest: int = eqx.field(static=True, default=BUCKET_SMALLEST)
    whole: int = eqx.field(static=True, default=BUCKET_WHOLE)
    share: float = eqx.field(static=True, default=BUCKET_SHARE)
    first: int = eqx.field(static=True, default=BUCKET_FIRST)

    def __check_init__(self):
        if not isinstance(self.enabled, bool):
            raise ValueError(f"Growth: enabled must be True or False, got {self.enabled!r}")
        if self.sizes is not None:
            ok = isinstance(self.sizes, tuple) and all(
                isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0 for s in self.sizes
            )
            if not ok or any(b <= a for a, b in zip(self.sizes, self.sizes[1:])):
                raise ValueError(f"Growth: sizes must be a tuple of increasing positive ints, got {self.sizes!r}")
        check_bucket_step(self.step, "Growth: step")
        for name in ("smallest", "first"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"Growth: {name} must be a positive int, got {v!r}")
        if isinstance(self.whole, bool) or not isinstance(self.whole, (int, np.integer)) or self.whole < 0:
            raise ValueError(f"Growth: whole must be an int >= 0, got {self.whole!r}")
        if not (0.0 <= self.share <= 1.0):
            raise ValueError(f"Growth: share must lie in [0, 1], got {self.share!r}")

    def __call__(self, num_steps: int) -> tuple[int, ...]:
        if not self.enabled:
            return (num_steps,)
        if self.sizes is not None:
            return tuple(s for s in self.sizes if s < num_steps) + (num_steps,)
        if num_steps <= self.whole:
            return (num_steps,)
        size = self.smallest
        while 2 * size <= min(self.share * num_steps, self.first):
            size *= 2
        return tuple(bucket_sizes(num_steps, size, self.step))


WHOLE = Growth(enabled=False)  # one segment: every growing node keeps the run's capacity


def check_bucket(bucket) -> None:
    """A `bucket` setting is a bool or a tuple of increasing positive sizes: a named ValueError."""
    if isinstance(bucket, bool) or isinstance(bucket, Growth):
        return
    try:
        Growth(sizes=bucket)
    except ValueError:
        raise ValueError(
            f"bucket must be True, False or a tuple of increasing positive sizes, got {bucket!r}"
        ) from None


def as_growth(bucket, **rule) -> Growth:
    """The Growth of a `bucket` setting: True the rule (with `rule`'s settings), False the whole buffer,
    a tuple of sizes those sizes; a Growth as it is."""
    if isinstance(bucket, Growth):
        return bucket
    if isinstance(bucket, tuple):
        return Growth(sizes=bucket)
    return Growth(enabled=bucket, **rule)


def num_valid(buf: Buffer) -> jax.Array:
    return jnp.sum(buf.mask)


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
