"""Nadaraya-Watson kernel regression in log-sum-exp form (stable as the bandwidth shrinks).

Kernels are unnormalised, k(x, x) = 1 (BOKE paper Eqs. 3.2-3.4), and enter only through their
log-weights s_i = log Psi(||x - X_i|| / h):

    gaussian      s = -r^2 / 2          (support: everywhere)
    epanechnikov  s = log(1 - r^2)_+    (support: r < 1)
    uniform       s = 0 if r <= 1       (support: r <= 1)

so W(x) = sum_i exp(s_i) is the unnormalised KDE and the NW weights are softmax(s). For a compact
kernel a point outside every support has W = 0: there the mean falls back to the nearest-neighbour
value (the h -> 0 limit, Prop. 3.1) and log W = -inf; the double-`where` keeps gradients NaN-free.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from jbo import kernels

KERNELS = ("gaussian", "epanechnikov", "uniform")


def check_kernel(name: str) -> None:
    if name not in KERNELS:
        raise ValueError(f"unknown regression kernel {name!r}; choose one of {KERNELS}")


def log_psi(r2: jax.Array, kernel: str = "gaussian") -> jax.Array:
    """log Psi as a function of the squared scaled distance r^2 = ||x - x'||^2 / h^2."""
    check_kernel(kernel)
    if kernel == "gaussian":
        return -0.5 * r2
    inside = r2 < 1.0 if kernel == "epanechnikov" else r2 <= 1.0
    if kernel == "uniform":
        return jnp.where(inside, 0.0, -jnp.inf)
    safe = jnp.where(inside, 1.0 - r2, 1.0)  # double where: no log(<=0) in the unused branch
    return jnp.where(inside, jnp.log(safe), -jnp.inf)


scaled_sq_dist = kernels.sqdist_to_rows  # ||(x - X_i) / h||^2 for every row


def nadaraya_watson(x: jax.Array, data: jax.Array, y: jax.Array, mask: jax.Array, bandwidth, kernel: str = "gaussian"):
    """NW mean at x and log W(x), W(x) = sum_i Psi(||(x - X_i)/h||) over valid rows.

    The weights are softmax(log-weights), so as h -> 0 the mean tends to the nearest-neighbour value
    (averaged over exact ties) without ever forming an underflowing W. `bandwidth` is a scalar or (d,).
    """
    r2 = scaled_sq_dist(x, data, bandwidth)
    s = jnp.where(mask, log_psi(r2, kernel), -jnp.inf)
    y = jnp.where(mask, y, 0.0)
    if kernel == "gaussian":  # every valid weight is positive: no fallback needed
        # one exp per data point serves both the weights and log W (softmax + logsumexp would take two)
        s_max = jax.lax.stop_gradient(jnp.max(s))
        e = jnp.exp(s - s_max)
        z = jnp.sum(e)
        return jnp.sum(e * y) / z, s_max + jnp.log(z)
    covered = jnp.any(jnp.isfinite(s))
    s_safe = jnp.where(covered, s, jnp.where(mask, 0.0, -jnp.inf))  # double where for the empty case
    mean = jnp.sum(jax.nn.softmax(s_safe) * y)
    log_w = jnp.where(covered, logsumexp(s_safe), -jnp.inf)
    # nearest-neighbour value (average over exact ties) where no kernel covers x
    r2m = jnp.where(mask, r2, jnp.inf)
    near = mask & (r2m == jnp.min(r2m))
    nn = jnp.sum(jnp.where(near, y, 0.0)) / jnp.maximum(jnp.sum(near), 1)
    return jnp.where(covered, mean, nn), log_w


def nearest_distance(x: jax.Array, data: jax.Array, mask: jax.Array) -> jax.Array:
    """d(x, X) = min over valid rows of ||x - X_i|| (safe gradient at a data point)."""
    r2 = jnp.min(jnp.where(mask, jnp.sum((x - data) ** 2, -1), jnp.inf))
    return jnp.sqrt(jnp.maximum(r2, 1e-300))
