"""Stationary kernels k(params, x, x') and random-Fourier-feature approximations.

Every kernel is a pure function of a :class:`KernelParams` pytree and two points of shape (d,).
Lengthscales are ARD (shape (d,), or a scalar broadcast over dimensions); ``outputscale`` is the
prior variance k(x, x). All functions are jit-, vmap- and grad-safe, including at x == x'.

A kernel is named by a built-in name (NAMES), a name given to a user's profile with :func:`register`
(or by an installed plug-in's ``jbo.kernels`` entry point, see jbo.plugins), or the profile itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from jbo import plugins

NAMES = ("se", "matern12", "matern32", "matern52", "rq")  # the built-in kernels (names() adds registered ones)


class KernelParams(NamedTuple):
    lengthscale: jax.Array  # (d,) or ()
    outputscale: jax.Array | float = 1.0
    alpha: jax.Array | float = 1.0  # rational-quadratic shape; ignored by the others


def scaled_sqdist(x1: jax.Array, x2: jax.Array, lengthscale) -> jax.Array:
    """||(x1 - x2) / lengthscale||^2, computed by direct broadcasting (accurate at short range)."""
    z = (x1 - x2) / lengthscale
    return jnp.sum(z * z, axis=-1)


def _coordinate_sum(diff, dim: int):
    """sum_j diff(j)**2 over the d coordinates as an unrolled Python sum of d elementwise terms.

    Callers difference first and scale after, (x_j - y_j) / l_j: a point's distance to itself is then
    exactly 0 under jit. Scaling first, x_j / l_j - y_j / l_j, let XLA:CPU contract the subtraction
    into an FMA whose rounding residue made the diagonal ~1e-17 instead of 0, and the infinite
    derivative of sqrt there turned the Matern LML gradient into NaN (found by the scipy-optimum test).

    XLA:CPU fuses this into one loop over the output; a (d, ...) broadcast reduced over its d axis
    (or a trailing d axis) was 4-26x slower at d = 2 for (562, 50) blocks (measured: 5.9 ms -> 0.22 ms
    for 32 such blocks)."""
    return sum(diff(j) ** 2 for j in range(dim))


def _pairwise_diff(X1: jax.Array, X2: jax.Array, lengthscale):
    """j -> the (n1, n2) block (X1[i, j] - X2[k, j]) / l_j (difference first; see _coordinate_sum)."""
    inv = jnp.broadcast_to(1.0 / jnp.asarray(lengthscale), (X1.shape[1],))
    return lambda j: (X1[:, j, None] - X2[None, :, j]) * inv[j]


def sqdist_to_rows(x: jax.Array, X: jax.Array, lengthscale=1.0) -> jax.Array:
    """||(x - X_i) / lengthscale||^2 for every row of X (n, d) -> (n,); lengthscale scalar or (d,).

    Direct differences (accurate at short range), one coordinate at a time (see _coordinate_sum)."""
    inv = jnp.broadcast_to(1.0 / jnp.asarray(lengthscale), (X.shape[1],))
    return _coordinate_sum(lambda j: (x[j] - X[:, j]) * inv[j], X.shape[1])


def _safe_sqrt(r2):
    # Double-where: sqrt has an infinite derivative at 0; this keeps gradients finite (and 0).
    pos = r2 > 0.0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, r2, 1.0)), 0.0)


def _se(r2, alpha):
    return jnp.exp(-0.5 * r2)


def _matern12(r2, alpha):
    return jnp.exp(-_safe_sqrt(r2))


def _matern32(r2, alpha):
    r = jnp.sqrt(3.0) * _safe_sqrt(r2)
    return (1.0 + r) * jnp.exp(-r)


def _matern52(r2, alpha):
    r = jnp.sqrt(5.0) * _safe_sqrt(r2)
    return (1.0 + r + r * r / 3.0) * jnp.exp(-r)


def _rq(r2, alpha):
    return (1.0 + r2 / (2.0 * alpha)) ** (-alpha)


_PROFILES: dict[str, Callable] = {
    "se": _se,
    "matern12": _matern12,
    "matern32": _matern32,
    "matern52": _matern52,
    "rq": _rq,
}


_REGISTERED: dict[str, Callable] = {}  # name -> a user's profile r2 -> k(r2) / outputscale


def _load_plugins() -> None:
    plugins.load_entry_points("jbo.kernels", register, _REGISTERED.get)


def names() -> list[str]:
    """Every kernel name: the built-ins (NAMES), then registered and installed plug-ins' profiles."""
    _load_plugins()
    return list(NAMES) + sorted(_REGISTERED)


def register(name: str, profile: Callable, replace: bool = False) -> None:
    """Give a stationary profile r2 -> k(r2) / outputscale a name that works wherever a kernel name
    does: GPModel(kernel=name), an algorithm's kernel= option, a study config's options. A name
    already registered is refused unless replace=True; the built-in names are never replaced (other
    code, random Fourier features for one, relies on what they mean)."""
    if isinstance(name, str) and name in NAMES:
        raise ValueError(f"register: {name!r} is a built-in kernel and cannot be replaced; choose another name")
    plugins.check_entry("kernel", name, profile, _REGISTERED, replace)
    if name in _REGISTERED and _REGISTERED[name] is not profile:
        jax.clear_caches()  # compiled programs are keyed by the name, not by the profile it stood for
    _REGISTERED[name] = profile


def check_name(name) -> str | Callable:
    """A kernel name (built-in or registered), or a user's stationary profile: a callable r2 -> k(r2) /
    outputscale (r2 the lengthscale-scaled squared distance, any shape; k(0) should be 1). A profile,
    or the name it is registered under, works everywhere a built-in does (GP fits, posteriors,
    acquisitions) except random Fourier features."""
    if callable(name):
        return name
    if isinstance(name, str):
        if name in _PROFILES or name in _REGISTERED:
            return name
        _load_plugins()
        if name in _REGISTERED:
            return name
    raise ValueError(
        f"unknown kernel {name!r}; choose one of {names()}, register a profile with "
        f"jbo.kernels.register(name, profile), or pass a profile r2 -> k(r2)"
    )


def kernel(name) -> Callable[[KernelParams, jax.Array, jax.Array], jax.Array]:
    """Return k(params, x1, x2) -> scalar for the named kernel (or a user profile, see check_name)."""
    check_name(name)

    def k(params: KernelParams, x1, x2):
        return from_sqdist(name, params, scaled_sqdist(x1, x2, params.lengthscale))

    return k


def sqdist_matrix(X1: jax.Array, X2: jax.Array, lengthscale=1.0) -> jax.Array:
    """||(X1[i] - X2[j]) / lengthscale||^2, shape (n1, n2) (direct differences; see _coordinate_sum)."""
    return _coordinate_sum(_pairwise_diff(X1, X2, lengthscale), X1.shape[1])


def coordinate_sqdists(X1: jax.Array, X2: jax.Array, lengthscale=1.0) -> jax.Array:
    """The d per-coordinate terms ((X1[i, j] - X2[k, j]) / l_j)^2, shape (d, n1, n2): summed over the
    first axis they are sqdist_matrix (used where each coordinate's term is needed, e.g. the
    lengthscale gradient of the marginal likelihood)."""
    diff = _pairwise_diff(X1, X2, lengthscale)
    return jnp.stack([diff(j) ** 2 for j in range(X1.shape[1])])


def from_sqdist(name: str, params: KernelParams, r2: jax.Array) -> jax.Array:
    """k as a function of the lengthscale-scaled squared distance r2 (any shape). Lets a caller that
    owns part of r2 (a fixed block of coordinates) precompute it: r2 is additive over coordinates."""
    if callable(name):
        return params.outputscale * name(r2)
    if check_name(name) in _REGISTERED:
        return params.outputscale * _REGISTERED[name](r2)
    return params.outputscale * _PROFILES[name](r2, params.alpha)


def gram(name: str, params: KernelParams, X1: jax.Array, X2: jax.Array) -> jax.Array:
    """Cross-covariance matrix K[i, j] = k(X1[i], X2[j]), shape (n1, n2)."""
    chex.assert_rank([X1, X2], 2)
    chex.assert_equal_shape_suffix([X1, X2], 1)
    return from_sqdist(name, params, sqdist_matrix(X1, X2, params.lengthscale))


def cross(name: str, params: KernelParams, x: jax.Array, X: jax.Array) -> jax.Array:
    """k(x, X[i]) for one point x (d,) against rows of X (n, d) -> (n,)."""
    return from_sqdist(name, params, sqdist_to_rows(x, X, params.lengthscale))


# ---------------------------------------------------------------- random Fourier features
_MATERN_NU = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}
FOURIER = ("se", *_MATERN_NU)  # the kernels with random Fourier features (Thompson sampling)


class FourierFeatures(NamedTuple):
    """phi(x) = sqrt(2 s / D) cos(W x + b); E[phi(x) . phi(x')] = k(x, x')."""

    frequencies: jax.Array  # (D, d), already divided by the lengthscales
    phases: jax.Array  # (D,)
    outputscale: jax.Array


def fourier_features(key, name: str, params: KernelParams, dim: int, num_features: int) -> FourierFeatures:
    """Draw an RFF approximation (Rahimi & Recht) of an SE or Matern kernel.

    SE: omega ~ N(0, I). Matern-nu: omega is multivariate Student-t with 2 nu degrees of freedom,
    omega = z * sqrt(nu / g), g ~ Gamma(nu, 1). Frequencies are divided by the lengthscales.
    """
    if callable(name) or name not in FOURIER:
        raise ValueError(f"random Fourier features exist for SE and Matern kernels, not {name!r}")
    kz, kg, kb = jax.random.split(key, 3)
    z = jax.random.normal(kz, (num_features, dim))
    if name != "se":
        nu = _MATERN_NU[name]
        g = jax.random.gamma(kg, nu, (num_features, 1))
        z = z * jnp.sqrt(nu / g)
    ls = jnp.broadcast_to(jnp.asarray(params.lengthscale, dtype=z.dtype), (dim,))
    phases = jax.random.uniform(kb, (num_features,), maxval=2.0 * jnp.pi)
    return FourierFeatures(z / ls, phases, jnp.asarray(params.outputscale, dtype=z.dtype))


def feature_map(ff: FourierFeatures, x: jax.Array) -> jax.Array:
    """phi(x) for x of shape (..., d) -> (..., D)."""
    num = ff.phases.shape[0]
    return jnp.sqrt(2.0 * ff.outputscale / num) * jnp.cos(x @ ff.frequencies.T + ff.phases)


def prior_sample_path(key, name: str, params: KernelParams, dim: int, num_features: int = 1024):
    """A GP prior sample path f(x) = phi(x) . w, w ~ N(0, I): returns (features, weights)."""
    kf, kw = jax.random.split(key)
    ff = fourier_features(kf, name, params, dim, num_features)
    return ff, jax.random.normal(kw, (num_features,))
