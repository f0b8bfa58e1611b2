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


def _choice_values(choice, params, x, dim=2):
    fn = choice.build(None, POST, BUF, params, 0, dim)
    return fn(x), jax.grad(fn)(x)


def test_choice_acts_as_the_option_its_index_names():
    """Choice(UCB, EI, log-EI, PI, mean, std): at each index the value is the closed form of that option
    at the posterior's mean and std (computed here with SciPy) and the gradient matches finite
    differences; a swept index (vmap) picks per run."""
    choice = acq.Choice("ucb", "ei", "log_ei", "pi", "mean", "std")
    defaults = choice.default_params()
    m, v = (float(a) for a in gp.predict(POST, X0))
    s = np.sqrt(v)
    z = (m - BEST) / s
    ei = s * (z * norm.cdf(z) + norm.pdf(z))
    truth = [m + np.sqrt(2.0) * s, ei, np.log(ei), norm.cdf(z), m, s]
    eps = 1e-6
    for i, want in enumerate(truth):
        p = defaults._replace(index=i)
        value, grad = _choice_values(choice, p, X0)
        np.testing.assert_allclose(value, want, rtol=1e-10)
        fn = choice.build(None, POST, BUF, p, 0, 2)
        fd = [(fn(X0.at[j].add(eps)) - fn(X0.at[j].add(-eps))) / (2 * eps) for j in range(2)]
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-8)
    swept = jax.tree.map(
        lambda *a: jnp.stack([jnp.asarray(b) for b in a]), *[defaults._replace(index=i) for i in range(6)]
    )
    values = jax.vmap(lambda p: choice.build(None, POST, BUF, p, 0, 2)(X0))(swept)
    np.testing.assert_allclose(values, truth, rtol=1e-10)


def test_choice_of_non_marginal_pieces_switches_their_functions():
    """With a piece that is not a function of (mean, std) (a user's function, Thompson), the options'
    own functions are switched: each index gives that option's value exactly."""

    def user(post, x, best):
        return -jnp.sum((x - 0.5) ** 2) + 0.0 * best

    choice = acq.Choice(acq.UCB(beta=4.0), user)
    p = choice.default_params()
    assert float(_choice_values(choice, p, X0)[0]) == float(acq.ucb(POST, X0, 4.0))
    assert float(_choice_values(choice, p._replace(index=1), X0)[0]) == float(user(POST, X0, BEST))


def test_choice_params_name_a_bad_index():
    from jbo import checks

    p = acq.Choice("ucb", "ei").default_params()
    with pytest.raises(ValueError, match=r"ChoiceParams\.index = 2: there are only 2 options"):
        checks.check_params(p._replace(index=2), "GPBO: ")
    with pytest.raises(TypeError, match=r"ChoiceParams\.index must be an int"):
        checks.check_params(p._replace(index=0.5))
    with pytest.raises(ValueError, match=r"ChoiceParams\.options\[0\] -> UCBParams\.beta"):
        checks.check_params(p._replace(options=(acq.UCBParams(-1.0), acq.EIParams())))
    with pytest.raises(ValueError, match="at least one"):
        acq.Choice()
    with pytest.raises(ValueError, match="unknown acquisition"):
        acq.Choice("ucb", "nope")
