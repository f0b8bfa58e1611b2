"""Space-filling designs on the unit cube [0, 1]^d; each is a pure function of a PRNG key."""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np


def uniform(key, n: int, dim: int) -> jax.Array:
    return jax.random.uniform(key, (n, dim))


def latin_hypercube(key, n: int, dim: int) -> jax.Array:
    """One point per stratum in every dimension: (perm_j(arange(n)) + U(0,1)) / n."""
    kp, ku = jax.random.split(key)
    perms = jax.vmap(lambda k: jax.random.permutation(k, n))(jax.random.split(kp, dim)).T  # (n, d)
    return (perms + jax.random.uniform(ku, (n, dim))) / n


@functools.lru_cache(maxsize=64)
def _sobol_integers(n: int, dim: int) -> np.ndarray:
    from scipy.stats import qmc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns when n is not a power of two
        pts = qmc.Sobol(dim, scramble=False).random(n)
    return np.round(pts * 2.0**32).astype(np.uint64).clip(0, 2**32 - 1).astype(np.uint32)


def sobol(key, n: int, dim: int, scramble: bool = True) -> jax.Array:
    """The first n Sobol points (Joe-Kuo directions, from SciPy, as compile-time constants).

    With scramble=True a random digital shift (XOR of every coordinate's 32-bit expansion with one
    random word per dimension) keeps the net property while randomising by the key.
    """
    base = jnp.asarray(_sobol_integers(n, dim))
    if scramble:
        shift = jax.random.bits(key, (dim,), dtype=jnp.uint32)
        base = jnp.bitwise_xor(base, shift)
    return (base.astype(jnp.float64) + (0.5 if scramble else 0.0)) / 2.0**32


def grid(num_per_dim: int, dim: int) -> jax.Array:
    """Full factorial grid with num_per_dim points per axis (endpoints included), (num^d, d)."""
    axis = jnp.linspace(0.0, 1.0, num_per_dim)
    mesh = jnp.meshgrid(*([axis] * dim), indexing="ij")
    return jnp.stack([m.ravel() for m in mesh], axis=-1)


DESIGNS = {"uniform": uniform, "lhs": latin_hypercube, "sobol": sobol}


def get(name: str):
    if name not in DESIGNS:
        raise ValueError(f"unknown design {name!r}; choose one of {sorted(DESIGNS)}")
    return DESIGNS[name]
