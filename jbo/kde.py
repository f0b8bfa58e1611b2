"""Gaussian product-kernel density estimation on masked buffers: bandwidths, log-density, sampling."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp

from jbo.regression import scaled_sq_dist

_LOG_2PI = np.log(2.0 * np.pi)  # NumPy: importing jbo starts no JAX backend


def masked_count_std(x, mask, ddof: int = 1):
    """(number of valid rows, per-column std of the valid rows with `ddof`)."""
    n = jnp.sum(mask)
    m = jnp.sum(jnp.where(mask[:, None], x, 0.0), 0) / jnp.maximum(n, 1)
    var = jnp.sum(jnp.where(mask[:, None], (x - m) ** 2, 0.0), 0) / jnp.maximum(n - ddof, 1)
    return n, jnp.sqrt(var)


def scott(x: jax.Array, mask: jax.Array | None = None, ddof: int = 1) -> jax.Array:
    """Scott's rule per dimension: h_j = sd_j * n^(-1/(d+4)). Returns (d,)."""
    mask = jnp.ones(x.shape[0], bool) if mask is None else mask
    n, sd = masked_count_std(x, mask, ddof)
    return sd * jnp.maximum(n, 1) ** (-1.0 / (x.shape[1] + 4))


def silverman(x: jax.Array, mask: jax.Array | None = None, ddof: int = 1) -> jax.Array:
    """Silverman's rule per dimension: h_j = sd_j * (4 / ((d+2) n))^(1/(d+4)). Returns (d,)."""
    mask = jnp.ones(x.shape[0], bool) if mask is None else mask
    n, sd = masked_count_std(x, mask, ddof)
    d = x.shape[1]
    return sd * (4.0 / ((d + 2.0) * jnp.maximum(n, 1))) ** (1.0 / (d + 4))


def log_kernel_sum(x: jax.Array, data: jax.Array, mask: jax.Array, bandwidth) -> jax.Array:
    """log sum_i exp(-||(x - X_i)/h||^2 / 2) over valid rows: the log of the *unnormalised* KDE W(x)."""
    s = -0.5 * scaled_sq_dist(x, data, bandwidth)
    return logsumexp(jnp.where(mask, s, -jnp.inf))


def log_density(x: jax.Array, data: jax.Array, mask: jax.Array, bandwidth) -> jax.Array:
    """log p_hat(x) of the normalised Gaussian product-kernel KDE over valid rows."""
    d = data.shape[1]
    h = jnp.broadcast_to(bandwidth, (d,))
    n = jnp.sum(mask)
    norm = jnp.log(n) + jnp.sum(jnp.log(h)) + 0.5 * d * _LOG_2PI
    return log_kernel_sum(x, data, mask, h) - norm


def sample(key, data: jax.Array, mask: jax.Array, bandwidth, num: int) -> jax.Array:
    """Draw `num` points from the KDE: a uniformly chosen valid row plus N(0, diag(h^2)) noise.

    Valid rows must be the first `count` rows of the buffer (the layout of jbo.data.Buffer).
    """
    k1, k2 = jax.random.split(key)
    n = jnp.sum(mask)
    idx = jax.random.randint(k1, (num,), 0, jnp.maximum(n, 1))
    return data[idx] + bandwidth * jax.random.normal(k2, (num, data.shape[1]))
