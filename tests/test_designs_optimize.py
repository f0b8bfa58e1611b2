import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbo import designs, optimize


def test_latin_hypercube_stratifies_every_dimension():
    x = np.asarray(designs.latin_hypercube(jax.random.key(0), 16, 3))
    for j in range(3):
        assert sorted(np.floor(x[:, j] * 16).astype(int)) == list(range(16))


def test_sobol_is_a_net_and_scrambling_keeps_it():
    base = np.asarray(designs.sobol(jax.random.key(0), 16, 2, scramble=False))
    from scipy.stats import qmc

    np.testing.assert_allclose(base, qmc.Sobol(2, scramble=False).random(16))
    s = np.asarray(designs.sobol(jax.random.key(1), 16, 2))
    for pts in (base, s):  # a (0, 4, 2)-net: one point in each 4x4 elementary box
        assert len({(int(a * 4), int(b * 4)) for a, b in pts}) == 16
    assert not np.allclose(s, base)


def test_grid_and_uniform_shapes():
    g = designs.grid(5, 2)
    assert g.shape == (25, 2) and float(g.min()) == 0.0 and float(g.max()) == 1.0
    assert designs.uniform(jax.random.key(0), 7, 3).shape == (7, 3)
    with pytest.raises(ValueError, match="unknown design"):
        designs.get("halton")


@pytest.mark.parametrize("method", ["adam", "lbfgs"])
def test_maximize_finds_interior_and_boundary_optima(method):
    target = jnp.array([0.3, 0.7, 0.55])
    f = lambda x: -jnp.sum((x - target) ** 2 * jnp.array([1.0, 4.0, 9.0]))  # noqa: E731
    x, v = jax.jit(lambda k: optimize.maximize(f, k, 3, 256, 4, 60, method))(jax.random.key(0))
    np.testing.assert_allclose(x, target, atol=1e-3)
    g = lambda x: x[0] + x[1]  # noqa: E731  (maximum at the corner (1, 1))
    x, v = optimize.maximize(g, jax.random.key(1), 2, 64, 4, 60, method)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-6)
    assert np.all((np.asarray(x) >= 0) & (np.asarray(x) <= 1))


def test_maximize_uses_masked_candidates():
    f = lambda x: -jnp.sum((x - 0.123) ** 2)  # noqa: E731
    cands = jnp.array([[0.123, 0.123], [0.9, 0.9]])
    x, _ = optimize.maximize(f, jax.random.key(0), 2, 4, 2, 0, candidates=cands)
    np.testing.assert_allclose(x, [0.123, 0.123])
    x, _ = optimize.maximize(
        f, jax.random.key(0), 2, 4, 2, 0, candidates=cands, candidate_mask=jnp.array([False, True])
    )
    assert not np.allclose(x, [0.123, 0.123])


def test_screening_in_blocks_equals_one_pass():
    """maximize(screen_block=b) scores the screened points b at a time: the scores, and so the starts and
    the result, equal the one-pass screening's to rounding, whether b divides the points or not."""
    rows = jax.random.uniform(jax.random.key(1), (200, 3))
    contexts = jax.random.uniform(jax.random.key(2), (100, 3))
    weights = jax.random.normal(jax.random.key(3), (200, 200)) / 200

    def acq(x):  # per point: a (100, 200) kernel matrix times a (200, 200) matrix, as a GP's k(x, .) L^-1
        k = jnp.exp(-jnp.sum((x + contexts[:, None, :] - rows[None]) ** 2, -1))
        return -jnp.mean((k @ weights) ** 2) + jnp.sum(x)

    def search(key, block):
        return optimize.maximize(acq, key, 3, 200, 4, 5, "lbfgs", screen_block=block)

    key = jax.random.key(0)
    x0, v0 = search(key, None)
    for block in (40, 64):  # 200 points: 5 blocks of 40, or 3 of 64 and a remainder of 8
        x, v = search(key, block)
        np.testing.assert_allclose(x, x0, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(v, v0, rtol=1e-12)
    with pytest.raises(ValueError, match="screen_block"):
        search(key, 0)
