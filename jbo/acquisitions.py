"""Acquisition functions: closed forms of (mean, std) and pure functions of (Posterior, x).

Every `*(post, x, ...)` function takes one point x of shape (d,) and returns a scalar, so it can be
vmapped over candidates and differentiated with jax.grad.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax.scipy.special import log_ndtr, ndtr

from jbo import gp, kernels

_LOG_SQRT_2PI = 0.5 * jnp.log(2.0 * jnp.pi)


# ---------------------------------------------------------------- closed forms
def ucb_value(mean, std, beta):
    return mean + jnp.sqrt(beta) * std


def ei_value(mean, std, best):
    z = (mean - best) / std
    return std * (jnp.exp(-0.5 * z * z - _LOG_SQRT_2PI) + z * ndtr(z))


def log_h(z):
    """log(phi(z) + z Phi(z)), accurate for very negative z (the core of log-EI)."""
    log_phi = -0.5 * z * z - _LOG_SQRT_2PI
    zs = jnp.where(z > -1.0, -1.0, z)  # safe branch for the tail form
    # phi(z) + z Phi(z) = phi(z) (1 + z Phi(z)/phi(z)); Phi/phi from log_ndtr is accurate in the tail.
    tail = log_phi + jnp.log1p(zs * jnp.exp(log_ndtr(zs) - (-0.5 * zs * zs - _LOG_SQRT_2PI)))
    asym = log_phi - 2.0 * jnp.log(jnp.abs(zs))  # z < -1e4: 1 + z Phi/phi ~ 1/z^2
    tail = jnp.where(zs < -1e4, asym, tail)
    zc = jnp.where(z > -1.0, z, 0.0)
    body = jnp.log(jnp.exp(-0.5 * zc * zc - _LOG_SQRT_2PI) + zc * ndtr(zc))
    return jnp.where(z > -1.0, body, tail)


def log_ei_value(mean, std, best):
    return log_h((mean - best) / std) + jnp.log(std)


def pi_value(mean, std, best):
    return ndtr((mean - best) / std)


# ---------------------------------------------------------------- on a posterior
def _mean_std(post: gp.Posterior, x):
    m, v = gp.predict(post, x)
    return m, jnp.sqrt(v)


def posterior_mean(post: gp.Posterior, x):
    return gp.predict(post, x)[0]


def ucb(post: gp.Posterior, x, beta):
    """mean + sqrt(beta) * std."""
    return ucb_value(*_mean_std(post, x), beta)


def ei(post: gp.Posterior, x, best):
    """Expected improvement over `best` (maximisation)."""
    return ei_value(*_mean_std(post, x), best)


def log_ei(post: gp.Posterior, x, best):
    """log EI, finite and with useful gradients far below the incumbent."""
    return log_ei_value(*_mean_std(post, x), best)


def pi(post: gp.Posterior, x, best):
    """Probability of improvement over `best`."""
    return pi_value(*_mean_std(post, x), best)


# ---------------------------------------------------------------- Thompson sampling
class SamplePath(NamedTuple):
    """A posterior sample path by pathwise conditioning (Matheron's rule) on an RFF prior path."""

    features: kernels.FourierFeatures
    weights: jax.Array  # (D,)
    update: jax.Array  # (N,) K~^{-1}(y - f_prior(X) - eps), zero on padding
    posterior: gp.Posterior


def thompson_sample(key, post: gp.Posterior, num_features: int = 1024) -> SamplePath:
    """Draw f ~ GP posterior as f(x) = f0(x) + k(x, X) K~^{-1} (y - f0(X) - eps), f0 an RFF prior path."""
    kf, ke = jax.random.split(key)
    dim = post.x.shape[1]
    ff, w = kernels.prior_sample_path(kf, post.kernel, post.params.kernel_params(), dim, num_features)
    prior_at_data = kernels.feature_map(ff, post.x) @ w
    eps = jnp.sqrt(post.params.noise) * jax.random.normal(ke, prior_at_data.shape)
    rhs = jnp.where(post.mask, gp.residuals(post) - prior_at_data - eps, 0.0)
    update = jnp.where(post.mask, jsl.cho_solve((post.chol, True), rhs), 0.0)
    return SamplePath(ff, w, update, post)


def sample_path_value(path: SamplePath, x):
    """Value of the Thompson sample at one point x (original units)."""
    post = path.posterior
    kx = jnp.where(post.mask, kernels.cross(post.kernel, post.params.kernel_params(), x, post.x), 0.0)
    f = post.params.mean + kernels.feature_map(path.features, x) @ path.weights + kx @ path.update
    return post.y_mean + post.y_std * f
