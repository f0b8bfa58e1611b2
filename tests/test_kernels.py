import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbo import kernels

rng = np.random.default_rng(0)
X1, X2 = rng.uniform(size=(5, 3)), rng.uniform(size=(4, 3))
LS = np.array([0.3, 0.7, 1.2])


def numpy_kernel(name, a, b, ls, s, alpha=1.5):
    r = np.sqrt((((a[:, None] - b[None]) / ls) ** 2).sum(-1))
    return (
        s
        * {
            "se": np.exp(-0.5 * r**2),
            "matern12": np.exp(-r),
            "matern32": (1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3) * r),
            "matern52": (1 + np.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-np.sqrt(5) * r),
            "rq": (1 + r**2 / (2 * alpha)) ** (-alpha),
        }[name]
    )


@pytest.mark.parametrize("name", kernels.NAMES)
def test_gram_matches_numpy(name):
    p = kernels.KernelParams(jnp.asarray(LS), 1.7, 1.5)
    K = kernels.gram(name, p, jnp.asarray(X1), jnp.asarray(X2))
    np.testing.assert_allclose(K, numpy_kernel(name, X1, X2, LS, 1.7), rtol=1e-12)
    k = kernels.kernel(name)
    np.testing.assert_allclose(k(p, X1[0], X2[1]), K[0, 1], rtol=1e-12)
    np.testing.assert_allclose(kernels.cross(name, p, jnp.asarray(X1[2]), jnp.asarray(X2)), K[2], rtol=1e-12)


@pytest.mark.parametrize("name", kernels.NAMES)
def test_gradient_finite_at_coincident_points(name):
    p = kernels.KernelParams(jnp.asarray(LS), 1.0, 1.5)
    g = jax.grad(lambda x: kernels.kernel(name)(p, x, jnp.asarray(X1[0])))(jnp.asarray(X1[0]))
    assert np.all(np.isfinite(g))


def test_self_distances_are_exactly_zero_under_jit():
    """jit-compiled distances of a set to itself have an exact-zero diagonal, so the lengthscale
    gradient of a Matern Gram matrix stays finite (an FMA residue there once made it NaN)."""
    ls = jnp.asarray(LS)
    x = jnp.asarray(X1)
    r2 = jax.jit(kernels.sqdist_matrix)(x, x, ls)
    assert np.all(np.diag(np.asarray(r2)) == 0.0)
    rows = jax.jit(jax.vmap(kernels.sqdist_to_rows, (0, None, None)))(x, x, ls)
    assert np.all(np.diag(np.asarray(rows)) == 0.0)
    terms = jax.jit(kernels.coordinate_sqdists)(x, x, ls)
    assert np.all(np.asarray(terms)[:, np.arange(len(X1)), np.arange(len(X1))] == 0.0)
    np.testing.assert_allclose(np.sum(terms, 0), ((X1[:, None] - X1[None]) ** 2 / LS**2).sum(-1), rtol=1e-12)
    f = lambda l: jnp.sum(
        jnp.linalg.cholesky(
            kernels.gram("matern52", kernels.KernelParams(l, 1.0), x, x)  # noqa
            + 1e-6 * jnp.eye(x.shape[0])
        )
    )
    np.testing.assert_allclose(jax.jit(jax.grad(f))(ls), jax.grad(f)(ls), rtol=1e-9)
    assert np.all(np.isfinite(jax.jit(jax.grad(f))(ls)))


def test_unknown_kernel_is_named():
    with pytest.raises(ValueError, match="unknown kernel 'gauss'"):
        kernels.kernel("gauss")


@pytest.mark.parametrize("name", ["se", "matern12", "matern52"])
def test_random_fourier_features_approximate_kernel(name):
    p = kernels.KernelParams(jnp.asarray(LS), 1.3)
    ff = kernels.fourier_features(jax.random.key(1), name, p, 3, 40000)
    approx = kernels.feature_map(ff, jnp.asarray(X1)) @ kernels.feature_map(ff, jnp.asarray(X2)).T
    np.testing.assert_allclose(approx, numpy_kernel(name, X1, X2, LS, 1.3), atol=0.04)
