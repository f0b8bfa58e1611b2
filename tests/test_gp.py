import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import multivariate_normal

from jbo import data, gp, kernels
from tests.test_kernels import numpy_kernel

N, D, CAP = 9, 2, 16


def _data():
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(N, D))
    return x, np.sin(6 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * rng.normal(size=N), rng.uniform(size=(6, D))


X, Y, XQ = _data()  # constants: no test draws from a shared generator
NOISE_FLOOR = 1e-6  # the documented default GPModel.noise_floor, added to the noise variance
PARAMS = gp.GPParams(jnp.log(jnp.array([0.3, 0.5])), jnp.log(1.4), jnp.log(0.05), jnp.asarray(0.2))


def numpy_posterior(name, x, y, xq, p):
    ls, s, noise, m = (
        np.exp(np.asarray(p.log_lengthscale)),
        float(np.exp(p.log_outputscale)),
        float(np.exp(p.log_noise)) + NOISE_FLOOR,
        float(p.mean),
    )
    mu, sd = y.mean(), y.std(ddof=1)
    z = (y - mu) / sd - m
    K = numpy_kernel(name, x, x, ls, s) + noise * np.eye(len(x))
    Kq = numpy_kernel(name, xq, x, ls, s)
    mean = m + Kq @ np.linalg.solve(K, z)
    cov = numpy_kernel(name, xq, xq, ls, s) - Kq @ np.linalg.solve(K, Kq.T)
    return mu + sd * mean, sd**2 * cov


@pytest.mark.parametrize("name", ["se", "matern32", "matern52"])
def test_padded_posterior_matches_direct_numpy_solve(name):
    post = gp.condition(data.from_arrays(jnp.asarray(X), jnp.asarray(Y), CAP), PARAMS, name)
    mean, var = jax.vmap(lambda x: gp.predict(post, x))(jnp.asarray(XQ))
    m_np, c_np = numpy_posterior(name, X, Y, XQ, PARAMS)
    np.testing.assert_allclose(mean, m_np, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(var, np.diag(c_np), rtol=1e-7, atol=1e-10)
    jm, jc = gp.predict_cov(post, jnp.asarray(XQ))
    np.testing.assert_allclose(jm, m_np, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(jc, c_np, rtol=1e-7, atol=1e-10)


def test_padded_equals_unpadded():
    padded = gp.condition(data.from_arrays(jnp.asarray(X), jnp.asarray(Y), CAP), PARAMS)
    exact = gp.condition(data.from_arrays(jnp.asarray(X), jnp.asarray(Y), N), PARAMS)
    for x in XQ:
        np.testing.assert_allclose(gp.predict(padded, jnp.asarray(x)), gp.predict(exact, jnp.asarray(x)), rtol=1e-11)


def test_log_marginal_likelihood_matches_scipy():
    buf = data.from_arrays(jnp.asarray(X), jnp.asarray(Y), CAP)
    ls, s, noise = (
        np.exp(np.asarray(PARAMS.log_lengthscale)),
        float(np.exp(PARAMS.log_outputscale)),
        float(np.exp(PARAMS.log_noise)) + NOISE_FLOOR,
    )
    K = numpy_kernel("matern52", X, X, ls, s) + noise * np.eye(N)
    ref = multivariate_normal(mean=np.full(N, float(PARAMS.mean)), cov=K).logpdf(Y)
    val = gp.log_marginal_likelihood(PARAMS, buf.x, buf.y, buf.mask)
    np.testing.assert_allclose(val, ref, rtol=1e-10)


def test_lml_gradient_matches_finite_differences():
    buf = data.from_arrays(jnp.asarray(X), jnp.asarray(Y), CAP)
    f = lambda v: gp.log_marginal_likelihood(gp.GPParams(v[:2], v[2], v[3], v[4]), buf.x, buf.y, buf.mask)  # noqa
    v0 = jnp.concatenate([PARAMS.log_lengthscale, jnp.stack([PARAMS.log_outputscale, PARAMS.log_noise, PARAMS.mean])])
    g = jax.grad(f)(v0)
    eps = 1e-6
    fd = np.array([(f(v0.at[i].add(eps)) - f(v0.at[i].add(-eps))) / (2 * eps) for i in range(5)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["se", "matern12", "matern32", "matern52", "rq"])
def test_closed_form_lml_gradient_matches_autodiff_and_finite_differences(name):
    """gp.lml_and_grad (the fit's gradient) against reverse mode through the Cholesky and central
    differences, on a padded buffer with a duplicated row (r = 0 off the diagonal)."""
    x = jnp.asarray(np.vstack([X, X[:1]]))
    buf = data.from_arrays(x, jnp.asarray(np.append(Y, Y[0] + 0.05)), CAP)
    val, g = gp.lml_and_grad(PARAMS, buf.x, buf.y, buf.mask, name)
    f = lambda p: gp.log_marginal_likelihood(p, buf.x, buf.y, buf.mask, name)  # noqa: E731
    np.testing.assert_allclose(val, f(PARAMS), rtol=1e-12)
    auto = jax.grad(f)(PARAMS)
    for a, b in zip(g, auto):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
    eps = 1e-6
    flat, unravel = jax.flatten_util.ravel_pytree(PARAMS)
    fd = [(f(unravel(flat.at[i].add(eps))) - f(unravel(flat.at[i].add(-eps)))) / (2 * eps) for i in range(flat.size)]
    np.testing.assert_allclose(jax.flatten_util.ravel_pytree(g)[0], fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["matern12", "matern52"])
def test_closed_form_lml_gradient_by_blocks_at_short_lengthscales(name):
    """The closed form on 300 rows (K~^{-1} by two levels of blocks, with padding), short and long
    lengthscales and a near-duplicate pair (1e-6 apart), against reverse mode through the unblocked
    Cholesky of log_marginal_likelihood: Matern-5/2's lengthscale term (the product form) to 1e-8 of
    the largest entry, Matern-1/2's (elementwise: its slope is unbounded at 0) to 1e-12."""
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(290, 3))
    x[1] = x[0] + 1e-6
    y = np.sin(6 * x).sum(1) + 0.1 * rng.normal(size=290)
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), 300)
    p = gp.GPParams(jnp.log(jnp.array([0.03, 0.3, 3.0])), jnp.log(1.3), jnp.log(0.02), jnp.asarray(0.1))
    val, g = jax.jit(lambda q: gp.lml_and_grad(q, buf.x, buf.y, buf.mask, name))(p)
    f = lambda q: gp.log_marginal_likelihood(q, buf.x, buf.y, buf.mask, name)  # noqa: E731
    np.testing.assert_allclose(val, f(p), rtol=1e-12)
    for a, b in zip(jax.tree.leaves(g), jax.tree.leaves(jax.jit(jax.grad(f))(p))):
        tol = 1e-8 if name in kernels.BOUNDED_SLOPE else 1e-12
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * float(jnp.max(jnp.abs(b))))


def test_prefix_posterior_matches_numpy_and_bucket_sizes():
    post = gp.condition(data.from_arrays(jnp.asarray(X), jnp.asarray(Y), 40), PARAMS, "se")
    m_np, c_np = numpy_posterior("se", X, Y, XQ, PARAMS)
    for size in (N, 16, 32):  # any prefix holding the N = 9 rows is the same posterior
        small = gp.prefix(post, size)
        assert small.chol.shape == (size, size)
        mean, var = gp.predict_batch(small, jnp.asarray(XQ))
        np.testing.assert_allclose(mean, m_np, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(var, np.diag(c_np), rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(data.prefix(data.from_arrays(jnp.asarray(X), jnp.asarray(Y), 40), size).y[:N], Y)
    assert (
        data.bucket_sizes(40) == [16, 32, 40]
        and data.bucket_sizes(16) == [16]
        and data.bucket_sizes(64) == [16, 32, 64]
    )
    # growth capped at max_step (uCVS's 750-row buffer): below 256 rows the same powers of two
    assert data.bucket_sizes(750, max_step=128) == [16, 32, 64, 128, 256, 384, 512, 640, 750]
    assert data.bucket_sizes(750) == [16, 32, 64, 128, 256, 512, 750]
    assert data.bucket_sizes(236, max_step=128) == data.bucket_sizes(236) == [16, 32, 64, 128, 236]
    with pytest.raises(ValueError, match="max_step"):
        data.bucket_sizes(100, max_step=0)


def test_rank_one_append_equals_refactorisation():
    buf = data.from_arrays(jnp.asarray(X[:-1]), jnp.asarray(Y[:-1]), CAP)
    post = gp.condition(buf, PARAMS)
    grown = gp.append(post, jnp.asarray(X[-1]), jnp.asarray(Y[-1]))
    full = gp.condition(
        data.append(buf, jnp.asarray(X[-1]), jnp.asarray(Y[-1])), PARAMS, y_mean=post.y_mean, y_std=post.y_std
    )
    np.testing.assert_allclose(grown.chol, full.chol, atol=1e-10)
    np.testing.assert_allclose(grown.alpha, full.alpha, atol=1e-8)
    for x in XQ:
        np.testing.assert_allclose(gp.predict(grown, jnp.asarray(x)), gp.predict(full, jnp.asarray(x)), rtol=1e-9)


@pytest.mark.parametrize("prior", [None, gp.HyperPrior()])
def test_fit_reaches_scipy_optimum(prior):
    """Adam restarts (fixed iterations) reach the optimum an independent L-BFGS-B finds."""
    from scipy.optimize import minimize

    model = gp.GPModel(prior=prior)
    buf = data.from_arrays(jnp.asarray(X), jnp.asarray(Y), CAP)
    ym, ys = data.masked_mean_std(buf.y, buf.mask)
    yz = jnp.where(buf.mask, (buf.y - ym) / ys, 0.0)

    def obj(p):
        return gp.log_marginal_likelihood(p, buf.x, yz, buf.mask) + model.log_prior(p)

    unpack = lambda v: gp.GPParams(v[:2], v[2], v[3], v[4])  # noqa: E731
    f = jax.jit(jax.value_and_grad(lambda v: -obj(unpack(v))))
    b = [np.log(model.lengthscale_bounds)] * 2 + [np.log(model.outputscale_bounds), np.log(model.noise_bounds)]
    lo, hi = [v[0] for v in b] + [-5], [v[1] for v in b] + [5]
    best = min(
        (
            minimize(
                lambda v: [np.asarray(a, float) for a in f(jnp.asarray(v))],
                v0,
                jac=True,
                method="L-BFGS-B",
                bounds=list(zip(lo, hi)),
            )
            for v0 in np.random.default_rng(2).uniform(-2, 0, size=(6, 5))
        ),
        key=lambda r: r.fun,
    )
    fitted = jax.jit(lambda k: gp.fit(k, buf, model, num_restarts=4, num_steps=200))(jax.random.key(0))
    assert float(obj(fitted)) > -best.fun - 0.05
    assert float(obj(fitted)) > float(obj(gp.default_params(D)))


def test_gamma_and_lognormal_log_probs_match_scipy():
    from scipy import stats

    np.testing.assert_allclose(gp.GammaPrior(3.0, 6.0).log_prob(0.4), stats.gamma(3.0, scale=1 / 6.0).logpdf(0.4))
    np.testing.assert_allclose(
        gp.LogNormalPrior(0.2, 0.7).log_prob(1.3), stats.lognorm(0.7, scale=np.exp(0.2)).logpdf(1.3)
    )


def test_kernel_params_bridge():
    kp = PARAMS.kernel_params()
    assert isinstance(kp, kernels.KernelParams)
    np.testing.assert_allclose(kp.lengthscale, [0.3, 0.5])
