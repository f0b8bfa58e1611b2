"""Nadaraya-Watson kernel regression in log-sum-exp form (stable as the bandwidth shrinks)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp


def nadaraya_watson(x: jax.Array, data: jax.Array, y: jax.Array, mask: jax.Array, bandwidth):
    """Gaussian-kernel NW mean at x and log W(x), W(x) = sum_i exp(-||(x-X_i)/h||^2/2) over valid rows.

    The weights are softmax(scores), so as h -> 0 the mean tends to the nearest-neighbour value
    (averaged over exact ties) without ever forming an underflowing W.
    """
    s = -0.5 * jnp.sum(((x - data) / bandwidth) ** 2, axis=-1)
    s = jnp.where(mask, s, -jnp.inf)
    log_w = logsumexp(s)
    w = jax.nn.softmax(s)
    mean = jnp.sum(w * jnp.where(mask, y, 0.0))
    return mean, log_w
