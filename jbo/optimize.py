"""Inner optimiser: maximise a differentiable function on the unit box [0, 1]^d.

Screen raw uniform candidates (plus optional extra candidates), start a local search from the top-k,
run projected L-BFGS (optax, zoom line search) or projected Adam for a fixed number of iterations,
and return the best point seen. Fixed shapes and iteration counts: safe under jit, vmap and scan.
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import optax


def _clean(v):
    return jnp.where(jnp.isfinite(v), v, -jnp.inf)


def box_projection(x):
    return jnp.clip(x, 0.0, 1.0)


def local_search(fn: Callable, starts: jax.Array, num_steps: int = 30, method: str = "lbfgs",
                 learning_rate: float = 0.05, project: Callable = box_projection):
    """Projected local ascent from each row of `starts` (k, d); returns (points, values).

    `project` maps a point back onto the feasible set after every step (default: the unit box)."""
    neg = lambda x: -fn(x)  # noqa: E731
    if method == "lbfgs":
        opt = optax.lbfgs()
        value_and_grad = optax.value_and_grad_from_state(neg)
    elif method == "adam":
        # Cosine-decayed step: large moves early, precise convergence by the last iteration.
        opt = optax.adam(optax.cosine_decay_schedule(learning_rate, max(num_steps, 1), alpha=0.01))
        value_and_grad = lambda x, state: jax.value_and_grad(neg)(x)  # noqa: E731
    else:
        raise ValueError(f"unknown local optimiser {method!r}; choose 'lbfgs' or 'adam'")

    def one(x0):
        def body(carry, _):
            x, state, best_x, best_v = carry
            v, g = value_and_grad(x, state=state)
            g = jnp.where(jnp.isfinite(g), g, 0.0)
            better = jnp.isfinite(v) & (-v > best_v)
            best_x = jnp.where(better, x, best_x)
            best_v = jnp.where(better, -v, best_v)
            if method == "lbfgs":
                upd, state = opt.update(g, state, x, value=v, grad=g, value_fn=neg)
            else:
                upd, state = opt.update(g, state, x)
            x = project(optax.apply_updates(x, upd))
            return (x, state, best_x, best_v), None

        v0 = _clean(fn(x0))
        (x, _, bx, bv), _ = jax.lax.scan(body, (x0, opt.init(x0), x0, v0), None, length=num_steps)
        v = _clean(fn(x))
        return jnp.where(v > bv, x, bx), jnp.maximum(v, bv)

    return jax.vmap(one)(starts)


def maximize(fn: Callable, key, dim: int, num_raw: int = 512, num_starts: int = 8, num_steps: int = 30,
             method: str = "lbfgs", candidates: jax.Array | None = None, candidate_mask: jax.Array | None = None,
             project: Callable = box_projection):
    """Maximise fn: (d,) -> scalar over [0, 1]^d. Returns (x_best, f_best).

    `candidates` (m, d) are screened together with `num_raw` uniform points (e.g. the data, or a
    previous optimum); rows where `candidate_mask` is False are ignored. For a smaller feasible set
    (a ball inside the box, ...) pass feasible `candidates`, num_raw=0 and its `project`ion.
    """
    raw = jax.random.uniform(key, (num_raw, dim))
    valid = jnp.ones(num_raw, bool)
    if candidates is not None:
        raw = jnp.concatenate([raw, candidates], 0)
        cm = jnp.ones(candidates.shape[0], bool) if candidate_mask is None else candidate_mask
        valid = jnp.concatenate([valid, cm])
    vals = jnp.where(valid, _clean(jax.vmap(fn)(raw)), -jnp.inf)
    k = min(num_starts, raw.shape[0])
    top_v, top_i = jax.lax.top_k(vals, k)
    if num_steps > 0:
        xs, vs = local_search(fn, raw[top_i], num_steps, method, project=project)
    else:
        xs, vs = raw[top_i], top_v
    xs = jnp.concatenate([xs, raw[top_i[:1]]], 0)
    vs = jnp.concatenate([vs, top_v[:1]])
    i = jnp.argmax(vs)
    return xs[i], vs[i]
