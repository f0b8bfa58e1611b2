import jax
import jax.numpy as jnp
import numpy as np

from jbo import kde, regression

rng = np.random.default_rng(2)
DATA = rng.uniform(size=(12, 2))
CAP = 20
PAD = np.vstack([DATA, np.full((CAP - 12, 2), 0.5)])
MASK = np.arange(CAP) < 12
Y = rng.normal(size=12)
YPAD = np.concatenate([Y, np.zeros(CAP - 12)])


def test_bandwidth_rules_match_formulas():
    sd = DATA.std(0, ddof=1)
    np.testing.assert_allclose(kde.scott(jnp.asarray(PAD), jnp.asarray(MASK)), sd * 12 ** (-1 / 6))
    np.testing.assert_allclose(kde.silverman(jnp.asarray(PAD), jnp.asarray(MASK)), sd * (4 / (4 * 12)) ** (1 / 6))
    # SciPy's gaussian_kde uses the same Scott factor n^(-1/(d+4)) times the data covariance.
    from scipy.stats import gaussian_kde

    assert np.isclose(gaussian_kde(DATA.T).factor, 12 ** (-1 / 6))


def test_log_density_matches_direct_sum():
    h = np.array([0.15, 0.3])
    x = np.array([0.3, 0.6])
    direct = np.mean(np.prod(np.exp(-0.5 * ((x - DATA) / h) ** 2) / (np.sqrt(2 * np.pi) * h), axis=1))
    val = kde.log_density(jnp.asarray(x), jnp.asarray(PAD), jnp.asarray(MASK), jnp.asarray(h))
    np.testing.assert_allclose(np.exp(val), direct, rtol=1e-12)
    unnorm = kde.log_kernel_sum(jnp.asarray(x), jnp.asarray(PAD), jnp.asarray(MASK), jnp.asarray(h))
    np.testing.assert_allclose(np.exp(unnorm), np.sum(np.exp(-0.5 * (((x - DATA) / h) ** 2).sum(1))), rtol=1e-12)


def test_sampling_statistics():
    h = jnp.array([0.05, 0.1])
    s = kde.sample(jax.random.key(0), jnp.asarray(PAD), jnp.asarray(MASK), h, 200000)
    np.testing.assert_allclose(s.mean(0), DATA.mean(0), atol=5e-3)
    np.testing.assert_allclose(s.var(0), DATA.var(0) + np.asarray(h) ** 2, rtol=2e-2)


def test_nadaraya_watson_matches_numpy_and_padding():
    h = 0.2
    x = np.array([0.4, 0.1])
    w = np.exp(-0.5 * (((x - DATA) / h) ** 2).sum(1))
    m, logw = regression.nadaraya_watson(jnp.asarray(x), jnp.asarray(PAD), jnp.asarray(YPAD), jnp.asarray(MASK), h)
    np.testing.assert_allclose(m, (w * Y).sum() / w.sum(), rtol=1e-12)
    np.testing.assert_allclose(logw, np.log(w.sum()), rtol=1e-12)


def test_nadaraya_watson_small_bandwidth_is_nearest_neighbour_with_ties():
    data = jnp.array([[0.1, 0.1], [0.9, 0.9], [0.1, 0.1], [0.5, 0.5]])
    y = jnp.array([1.0, 5.0, 3.0, 7.0])
    m, logw = regression.nadaraya_watson(jnp.array([0.2, 0.15]), data, y, jnp.ones(4, bool), 1e-4)
    assert np.isfinite(logw)
    np.testing.assert_allclose(m, 2.0, rtol=1e-10)  # average of the two tied nearest neighbours
    g = jax.grad(lambda x: regression.nadaraya_watson(x, data, y, jnp.ones(4, bool), 0.3)[0])(jnp.array([0.3, 0.3]))
    assert np.all(np.isfinite(g))
