"""Loops under vmap: enter a loop with its carry batched once.

Under vmap, lax.scan, lax.fori_loop and lax.while_loop find which leaves of their carry are batched by
batching the loop's body until that set stops changing. A leaf that starts shared by the lanes (a
zero-filled buffer, an optimiser's zero moments, a constant flag) and is then written with a lane's
values costs one more full batching pass of the body, and of every loop nested in it: for a GP-BO run
the largest part of tracing its program. :func:`batched_like` makes such a carry batched before the
loop, so the body is batched once.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def batched_like(tree, like):
    """`tree` with every leaf unchanged in value, but batched wherever `like` (an array or a typed PRNG
    key) is batched: a select on a predicate computed from `like` that is always false, which XLA folds
    away (no run-time cost, no value changes, -0.0 and NaN included). Outside vmap, or where `like` is
    not batched, nothing changes."""
    leaf = jax.tree.leaves(like)[0]
    if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        leaf = jax.random.key_data(leaf)
    first = jnp.ravel(leaf)[:1]
    never = jnp.any(first != first) & False
    return jax.tree.map(lambda a: jax.lax.select(jnp.broadcast_to(never, jnp.shape(a)), a, a), tree)
