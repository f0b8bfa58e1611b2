import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import norm

from jbo import acquisitions as acq
from jbo import data, gp

rng = np.random.default_rng(3)
X = rng.uniform(size=(8, 2))
Y = np.cos(5 * X[:, 0]) * X[:, 1]
BUF = data.from_arrays(jnp.asarray(X), jnp.asarray(Y), 12)
POST = gp.condition(BUF, gp.default_params(2, lengthscale=0.3, noise=1e-3))
BEST = float(Y.max())
X0 = jnp.array([0.37, 0.61])


def test_closed_forms_match_scipy():
    m, s, best = 0.3, 0.7, 0.5
    z = (m - best) / s
    np.testing.assert_allclose(acq.ei_value(m, s, best), s * (z * norm.cdf(z) + norm.pdf(z)), rtol=1e-12)
    np.testing.assert_allclose(acq.pi_value(m, s, best), norm.cdf(z), rtol=1e-12)
    np.testing.assert_allclose(acq.ucb_value(m, s, 4.0), m + 2 * s)
    np.testing.assert_allclose(acq.log_ei_value(m, s, best), np.log(s * (z * norm.cdf(z) + norm.pdf(z))), rtol=1e-12)


@pytest.mark.parametrize("z", [-0.5, -1.0, -3.0, -10.0, -30.0])
def test_log_ei_matches_high_precision_reference(z):
    import mpmath

    mpmath.mp.dps = 50
    zz = mpmath.mpf(z)
    ref = mpmath.log(mpmath.npdf(zz) + zz * mpmath.ncdf(zz))
    np.testing.assert_allclose(acq.log_h(jnp.asarray(z)), float(ref), rtol=1e-9)


def test_log_ei_finite_in_far_tail():
    v = acq.log_h(jnp.asarray(-1e5))
    assert np.isfinite(v)
    np.testing.assert_allclose(v, -0.5 * 1e10 - 0.5 * np.log(2 * np.pi) - 2 * np.log(1e5), rtol=1e-9)
    assert np.isfinite(jax.grad(acq.log_h)(jnp.asarray(-40.0)))


ACQS = {
    "ucb": lambda x: acq.ucb(POST, x, 2.0),
    "ei": lambda x: acq.ei(POST, x, BEST),
    "log_ei": lambda x: acq.log_ei(POST, x, BEST),
    "pi": lambda x: acq.pi(POST, x, BEST),
    "mean": lambda x: acq.posterior_mean(POST, x),
    "thompson": lambda x: acq.sample_path_value(acq.thompson_sample(jax.random.key(0), POST, 256), x),
}


@pytest.mark.parametrize("name", list(ACQS))
def test_gradients_match_finite_differences(name):
    f = ACQS[name]
    g = jax.grad(f)(X0)
    eps = 1e-6
    fd = [(f(X0.at[i].add(eps)) - f(X0.at[i].add(-eps))) / (2 * eps) for i in range(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.slow  # suite time: runs with --runslow
def test_thompson_samples_have_posterior_moments(xla_optimized):
    keys = jax.random.split(jax.random.key(5), 2000)
    xs = jnp.array([[0.2, 0.8], [0.9, 0.1]])
    vals = jax.vmap(lambda k: jax.vmap(lambda x: acq.sample_path_value(acq.thompson_sample(k, POST, 2048), x))(xs))(
        keys
    )
    mean, cov = gp.predict_cov(POST, xs)
    assert np.all(np.abs(vals.mean(0) - mean) < 4 * np.sqrt(np.diag(cov) / 2000) + 1e-3)
    np.testing.assert_allclose(np.cov(vals.T), cov, atol=0.15 * np.max(np.diag(cov)) + 1e-4)
