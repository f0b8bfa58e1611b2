"""Kernel objects (jbo.kernels.Kernel) and their sums, products and scales, against scikit-learn's kernels
and Gaussian-process marginal likelihood (values and gradients), under jit, vmap and grad, and inside the
GP (padding, rank-1 paths, fits, acquisitions, a GP-BO run)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import acquisitions, checks, data, gp
from jbo import kernels as K

sk_kernels = pytest.importorskip("sklearn.gaussian_process.kernels")
sk_gpr = pytest.importorskip("sklearn.gaussian_process")
C = sk_kernels.ConstantKernel


def _sk_linear(offset, variance):  # offset + variance * x.x'
    return C(offset) + C(variance) * sk_kernels.DotProduct(sigma_0=0.0, sigma_0_bounds="fixed")


def _ls(t, i, j):
    return {"log_lengthscale": t[i:j]}


# name -> (dim, our kernel, scikit-learn kernel, theta (sklearn's order) -> our params)
CASES = {
    "matern12": (2, K.Matern12(), sk_kernels.Matern([0.3, 0.7], nu=0.5), lambda t: _ls(t, 0, 2)),
    "matern32": (2, K.Matern32(), sk_kernels.Matern([0.3, 0.7], nu=1.5), lambda t: _ls(t, 0, 2)),
    "matern52": (2, K.Matern52(), sk_kernels.Matern([0.3, 0.7], nu=2.5), lambda t: _ls(t, 0, 2)),
    "rbf": (2, K.RBF(), sk_kernels.RBF([0.4, 0.9]), lambda t: _ls(t, 0, 2)),
    "rq": (
        2,
        K.RationalQuadratic(ard=False),
        sk_kernels.RationalQuadratic(length_scale=0.4, alpha=1.3),  # theta: log alpha, log length_scale
        lambda t: {"log_alpha": t[0], "log_lengthscale": t[1]},
    ),
    "periodic": (
        1,
        K.Periodic(),
        sk_kernels.ExpSineSquared(length_scale=0.8, periodicity=0.6),  # theta: log l, log p
        lambda t: {"log_lengthscale": t[0:1], "log_period": t[1]},
    ),
    "linear": (2, K.Linear(), _sk_linear(0.5, 2.0), lambda t: {"log_offset": t[0], "log_variance": t[1]}),
    "constant": (2, K.Constant(), C(1.7), lambda t: {"log_constant": t[0]}),
    "scale": (
        2,
        2.0 * K.Matern52(),
        C(2.0) * sk_kernels.Matern([0.3, 0.7], nu=2.5),
        lambda t: {"kernel": _ls(t, 1, 3), "log_outputscale": t[0]},
    ),
    "matern52+periodic": (
        1,
        1.5 * K.Matern52() + K.Periodic(),
        C(1.5) * sk_kernels.Matern(0.3, nu=2.5) + sk_kernels.ExpSineSquared(0.8, 0.6),
        lambda t: ({"kernel": _ls(t, 1, 2), "log_outputscale": t[0]}, {"log_lengthscale": t[2:3], "log_period": t[3]}),
    ),
    "rbf*linear": (
        2,
        K.RBF() * K.Linear(),
        sk_kernels.RBF([0.5, 0.9]) * _sk_linear(0.5, 2.0),
        lambda t: (_ls(t, 0, 2), {"log_offset": t[2], "log_variance": t[3]}),
    ),
    "matern32+rq+constant": (
        2,
        K.Matern32() + K.RationalQuadratic(ard=False) + K.Constant(),
        sk_kernels.Matern([0.3, 0.7], nu=1.5) + sk_kernels.RationalQuadratic(0.4, 1.3) + C(0.7),
        lambda t: (_ls(t, 0, 2), {"log_alpha": t[2], "log_lengthscale": t[3]}, {"log_constant": t[4]}),
    ),
}

N, NOISE = 10, 0.05


def _inputs(dim, n=N, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(n, dim)), rng.uniform(size=(n - 3, dim))


def _ours(name, theta, X1, X2, y):
    """Everything the test compares for one case, in one compiled program: Gram values, diagonal,
    cross-covariances (vmap), the single-pair kernel, and the log marginal likelihood with its gradient
    in sklearn's theta by autodiff and by the fit's closed form (lml_and_grad)."""
    dim, kern, _, to_ours = CASES[name]
    model = gp.GPModel(kernel=kern, noise_floor=0.0, mean="zero", standardize=False)
    base = gp.init_params(model, dim, noise=NOISE)

    @jax.jit
    def run(t, t_lml, X1, X2, y):
        p = to_ours(t)
        buf = data.from_arrays(X1, y, N + 4)  # 4 padding rows

        def lml(u):
            return gp.log_marginal_likelihood(base._replace(kernel=to_ours(u)), buf.x, buf.y, buf.mask, model)

        params, pull_back = jax.vjp(to_ours, t_lml)
        v2, g2 = gp.lml_and_grad(base._replace(kernel=params), buf.x, buf.y, buf.mask, model)
        kp = K.KernelParams(1.0, 1.0, 1.0, p)  # the KernelParams route the GP uses
        return {
            "gram": K.gram(kern, kp, X1, X2),
            "diag": kern.diag(p, X1),
            "rows": jax.vmap(lambda x: K.cross(kern, kp, x, X2))(X1),
            "pair": K.kernel(kern)(kp, X1[1], X2[2]),
            "lml": jax.value_and_grad(lml)(t_lml),
            "closed": (v2, pull_back(g2.kernel)[0]),
            "placeholders": jnp.sum(jnp.abs(g2.log_lengthscale)) + jnp.abs(g2.log_outputscale),
        }

    out = run(jnp.asarray(theta), jnp.asarray(theta) + 0.1, jnp.asarray(X1), jnp.asarray(X2), jnp.asarray(y))
    return out, jax.tree.structure(to_ours(jnp.asarray(theta))) == jax.tree.structure(kern.init_params(dim))


@pytest.mark.parametrize("name", CASES)
def test_gram_and_marginal_likelihood_match_sklearn(name):
    dim, _, sk, _ = CASES[name]
    X1, X2 = _inputs(dim)
    y = np.sin(5 * X1[:, 0]) + 0.3 * X1.sum(1)
    out, covered = _ours(name, sk.theta, X1, X2, y)
    assert covered  # the theta -> params mapping fills every parameter of the kernel
    ref_gram = sk(X1, X2)
    np.testing.assert_allclose(out["gram"], ref_gram, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["diag"], sk.diag(X1), rtol=1e-12)
    np.testing.assert_allclose(out["rows"], ref_gram, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["pair"], ref_gram[1, 2], rtol=1e-12)
    reg = sk_gpr.GaussianProcessRegressor(kernel=sk, optimizer=None, normalize_y=False, alpha=NOISE).fit(X1, y)
    ref, ref_grad = reg.log_marginal_likelihood(sk.theta + 0.1, eval_gradient=True)  # away from the start
    for val, grad in (out["lml"], out["closed"]):
        np.testing.assert_allclose(val, ref, rtol=1e-10)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-7, atol=1e-9)
    assert float(out["placeholders"]) == 0.0


COMPOSITE = K.Matern52() + K.Periodic()
MODEL = gp.GPModel(kernel=COMPOSITE)
X, _ = _inputs(2, n=9, seed=3)
Y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2
XQ = _inputs(2, n=7, seed=4)[0]
PARAMS = gp.init_params(MODEL, 2, noise=0.01)._replace(
    kernel=({"log_lengthscale": jnp.log(jnp.array([0.3, 0.6]))}, {"log_lengthscale": jnp.zeros(2), "log_period": 0.3})
)


@jax.jit
def _paths(x, y, xq):
    """Every posterior path of the composite model, in one compiled program (fast tests)."""
    exact = gp.condition(data.from_arrays(x, y, 9), PARAMS, MODEL)
    padded = gp.condition(data.from_arrays(x, y, 16), PARAMS, MODEL)
    first = data.from_arrays(x[:8], y[:8], 16)
    out = {
        "exact": gp.predict_batch(exact, xq),
        "padded": gp.predict_batch(padded, xq),
        "exact_cov": gp.predict_cov(exact, xq),
        "padded_cov": gp.predict_cov(padded, xq),
        "one": jax.vmap(lambda z: gp.predict(padded, z))(xq),
        # rank-1 append of the last row == conditioning on every row with the same standardisation
        "append": gp.predict_batch(
            gp.append(gp.condition(first, PARAMS, MODEL, padded.y_mean, padded.y_std), x[8], y[8]), xq
        ),
        # extend + refresh (a GP-BO tell, then the next ask) == a fresh factorisation
        "refresh": gp.predict_batch(
            gp.refresh(gp.extend(gp.condition(first, PARAMS, MODEL), x[8]), data.from_arrays(x, y, 16)), xq
        ),
    }
    ucb = lambda z: acquisitions.ucb(padded, z, 2.0)  # noqa: E731
    out["ucb"] = jax.vmap(ucb)(xq)
    out["ucb_grad"] = jax.vmap(jax.grad(ucb))(xq)
    eps = 1e-6
    steps = eps * jnp.eye(2)
    out["ucb_fd"] = jax.vmap(lambda z: jax.vmap(lambda e: (ucb(z + e) - ucb(z - e)) / (2 * eps))(steps))(xq)
    out["ucb_one"] = ucb(xq[0])
    buf = data.from_arrays(x, y, 12)
    batch = jax.tree.map(lambda a: jnp.stack([a, a + 0.1]), PARAMS)
    out["lml_vmap"] = jax.vmap(lambda p: gp.log_marginal_likelihood(p, buf.x, buf.y, buf.mask, MODEL))(batch)
    shifted = jax.tree.map(lambda a: a + 0.1, PARAMS)
    out["lml_shifted"] = gp.log_marginal_likelihood(shifted, buf.x, buf.y, buf.mask, MODEL)
    return out


def test_padded_equals_unpadded_rank_one_paths_and_acquisition_gradient():
    xq = jnp.concatenate([jnp.asarray(XQ), jnp.asarray(X[2:3])])  # a data point too (r = 0 there)
    out = _paths(jnp.asarray(X), jnp.asarray(Y), xq)
    for key, tol in (("padded", 1e-11), ("one", 1e-11), ("append", 1e-9), ("refresh", 1e-9)):
        for a, b in zip(out[key], out["exact"]):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol * 1e-2, err_msg=key)
    for a, b in zip(out["padded_cov"], out["exact_cov"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jnp.diag(out["padded_cov"][1]), out["one"][1], rtol=1e-9, atol=1e-12)
    # grad of an acquisition through the composite posterior (jit, vmap, grad) vs central differences
    np.testing.assert_allclose(out["ucb_grad"], out["ucb_fd"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["ucb"][0], out["ucb_one"], rtol=1e-12)
    np.testing.assert_allclose(out["lml_vmap"][1], out["lml_shifted"], rtol=1e-12)


def test_gradients_finite_at_coincident_points():
    kerns = (K.Periodic(), K.Matern12(), K.Matern52() + K.Periodic(), K.RBF() * K.Linear())
    x, Xs = jnp.asarray(X[0]), jnp.asarray(X)

    @jax.jit
    def grads(ps):
        gx = [jax.grad(lambda z, k=k, p=p: k.cross(p, z, x[None])[0])(x) for k, p in zip(kerns, ps)]
        gp_ = [jax.grad(lambda q, k=k: jnp.sum(k.gram(q, Xs, Xs)))(p) for k, p in zip(kerns, ps)]
        return gx, gp_

    gx, gq = grads([k.init_params(2) for k in kerns])
    for k, a, b in zip(kerns, gx, gq):
        assert np.all(np.isfinite(a)), k
        assert all(np.all(np.isfinite(v)) for v in jax.tree.leaves(b)), k


FIXED_PERIOD = gp.GPModel(kernel=K.Matern52() + K.Periodic(period=0.5, fixed=("period",)))


@jax.jit
def _fit(key, x, y):
    buf = data.from_arrays(x, y, 12)
    start = gp.default_params(2)  # kernel=(): completed from the model at trace time
    fitted = gp.fit(key, buf, FIXED_PERIOD, init=start, num_restarts=3, num_steps=30)
    ym, ys = FIXED_PERIOD.standardization(buf.y, buf.mask)
    yz = jnp.where(buf.mask, (buf.y - ym) / ys, 0.0)
    lml = lambda p: gp.log_marginal_likelihood(p, buf.x, yz, buf.mask, FIXED_PERIOD)  # noqa: E731
    return start, fitted, FIXED_PERIOD.clip(fitted), lml(fitted), lml(gp.init_params(FIXED_PERIOD, 2))


def test_fit_moves_only_the_kernel_object_and_noise():
    start, fitted, clipped, lml_fit, lml_init = _fit(jax.random.key(0), jnp.asarray(X), jnp.asarray(Y))
    init = FIXED_PERIOD.kernel.init_params(2)
    assert jax.tree.structure(fitted.kernel) == jax.tree.structure(init)
    assert all(np.all(np.isfinite(a)) for a in jax.tree.leaves(fitted))
    np.testing.assert_array_equal(fitted.log_lengthscale, start.log_lengthscale)  # placeholders never move
    np.testing.assert_array_equal(fitted.log_outputscale, start.log_outputscale)
    np.testing.assert_array_equal(fitted.kernel[1]["log_period"], init[1]["log_period"])  # fixed=("period",)
    assert not np.allclose(fitted.kernel[0]["log_lengthscale"], init[0]["log_lengthscale"])
    assert not np.allclose(fitted.log_noise, start.log_noise)
    for a, b in zip(jax.tree.leaves(clipped), jax.tree.leaves(fitted)):
        np.testing.assert_array_equal(a, b)  # inside the bounds
    assert lml_fit > lml_init + 1.0


@pytest.mark.extended
def test_lbfgs_and_converged_fits_with_a_warm_start():
    buf = data.from_arrays(jnp.asarray(X), jnp.asarray(Y), 12)
    warm = gp.fit(jax.random.key(0), buf, MODEL, num_restarts=2, num_steps=20)
    lbfgs = gp.fit(jax.random.key(1), buf, MODEL, warm_start=warm, num_restarts=2, num_steps=10, method="lbfgs")
    conv = gp.fit_converged(jax.random.key(2), buf, MODEL, warm_start=gp.default_params(2), num_restarts=2)
    ym, ys = MODEL.standardization(buf.y, buf.mask)
    yz = jnp.where(buf.mask, (buf.y - ym) / ys, 0.0)
    lml = lambda p: gp.log_marginal_likelihood(p, buf.x, yz, buf.mask, MODEL)  # noqa: E731
    for p in (lbfgs, conv):
        assert jax.tree.structure(p) == jax.tree.structure(warm)
        assert all(np.all(np.isfinite(a)) for a in jax.tree.leaves(p))
    assert lml(lbfgs) >= lml(warm) - 1e-9  # restart 0 refines the warm start
    assert lml(conv) > lml(gp.init_params(MODEL, 2))


def test_init_params_and_validation():
    for name in ("matern52", "se"):
        a, b = (
            gp.init_params(gp.GPModel(kernel=name), 3, 0.3, 1.2, 1e-3, 0.1),
            gp.default_params(3, 0.3, 1.2, 1e-3, 0.1),
        )
        assert jax.tree.structure(a) == jax.tree.structure(b)
        for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
            np.testing.assert_array_equal(u, v)
    p = gp.init_params(MODEL, 3)
    np.testing.assert_array_equal(p.log_lengthscale, np.zeros(3))
    assert p.kernel[1]["log_lengthscale"].shape == (3,) and p.kernel[1]["log_period"].shape == ()
    assert K.Matern52(active_dims=(1,)).init_params(3)["log_lengthscale"].shape == (1,)
    with pytest.raises(ValueError, match="priors are supported for named kernels only"):
        gp.GPModel(kernel=COMPOSITE, prior=gp.HyperPrior())
    with pytest.raises(ValueError, match="period_bounds"):
        K.Periodic(period_bounds=(1.0, 0.5))
    with pytest.raises(ValueError, match="unknown fixed"):
        K.RBF(fixed=("period",))
    with pytest.raises(ValueError, match="kernel object"):
        K.from_sqdist(COMPOSITE, K.KernelParams(1.0), jnp.zeros(3))


def test_operators_names_and_hashing():
    k = K.Matern52() + K.Periodic()
    assert repr(k) == "Matern52() + Periodic()"
    assert repr(2.0 * (K.RBF() + K.Linear()) * K.Constant()) == "2 * (RBF() + Linear()) * Constant(1)"
    assert repr(K.RBF() + 1.0) == "RBF() + Constant(1)"
    assert isinstance(K.RBF() * 3, K.Scale) and isinstance(K.RBF() * K.RBF(), K.Product)
    assert len((K.RBF() + K.Matern12() + K.Linear()).parts) == 3  # flattened
    assert K.check_name(k) is k and K.describe(k) == "Matern52() + Periodic()"
    assert hash(gp.GPModel(kernel=k)) == hash(gp.GPModel(kernel=K.Matern52() + K.Periodic()))
    assert gp.GPModel(kernel=k) == gp.GPModel(kernel=K.Matern52() + K.Periodic())
    assert gp.GPModel(kernel=k) != gp.GPModel(kernel=K.Matern52() + K.Periodic(period=0.5))
    assert jax.tree.leaves(gp.GPModel(kernel=k)) == []  # static: no traced leaves
    assert checks.model_note(jbo.algorithms.GPBO(model=gp.GPModel(kernel=k))) == " (kernel Matern52() + Periodic())"


@jax.jit
def _features(ls):
    named = K.fourier_features(jax.random.key(5), "matern52", K.KernelParams(ls, 1.7), 2, 64)
    p = {"kernel": {"log_lengthscale": jnp.log(ls)}, "log_outputscale": jnp.log(1.7)}
    same = K.fourier_features(jax.random.key(5), 1.7 * K.Matern52(), K.KernelParams(1.0, 1.0, 1.0, p), 2, 64)
    return named, same


def test_fourier_features_for_single_objects_only():
    named, same = _features(jnp.array([0.3, 0.6]))
    for a, b in zip(named, same):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    with pytest.raises(ValueError, match=r"Matern52\(\) \+ Periodic\(\)"):
        K.fourier_features(jax.random.key(5), COMPOSITE, K.KernelParams(1.0, 1.0, 1.0, PARAMS.kernel), 2, 64)


@pytest.mark.extended
def test_thompson_sampling_with_a_single_object():
    m = gp.GPModel(kernel=K.Matern52())

    @jax.jit
    def value(key):
        post = gp.condition(data.from_arrays(jnp.asarray(X), jnp.asarray(Y), 12), gp.init_params(m, 2), m)
        path = acquisitions.thompson_sample(key, post, 256)
        return acquisitions.sample_path_value(path, jnp.array([0.2, 0.8]))

    assert np.isfinite(float(value(jax.random.key(2))))


def _check_run(trace, model):
    regret = np.asarray(trace.metrics["simple_regret"])
    assert regret.shape[0] == 8 and np.all(np.isfinite(regret))
    final = trace.final_state.gp_params
    assert all(np.all(np.isfinite(a)) for a in jax.tree.leaves(final))
    start = model.kernel.init_params(2)
    for a, b in zip(jax.tree.leaves(final.kernel), jax.tree.leaves(start)):
        assert a.shape[0] == 8
    moved = [
        np.any(np.abs(np.asarray(a) - np.asarray(b)) > 1e-6)
        for a, b in zip(jax.tree.leaves(final.kernel), jax.tree.leaves(start))
    ]
    assert any(moved)


def test_gp_ucb_with_a_composite_kernel_runs():
    """GP-UCB with Matern52() + Periodic() over 8 seeds: the default refit rule starts from
    gp.init_params(model, ...), so the state carries the object's parameters, and fits move them."""
    model = gp.GPModel(kernel=K.Matern52() + K.Periodic())
    alg = jbo.algorithms.GPBO(model=model, num_initial=4)
    trace = jbo.run_seeds(alg, jbo.problems.get("branin"), key=jax.random.key(0), num_steps=12, num_seeds=8)
    _check_run(trace, model)


def test_thompson_gp_bo_takes_the_kernel_objects_that_have_fourier_features():
    assert K.has_fourier_features("se") and K.has_fourier_features(2.0 * K.RBF())
    assert not K.has_fourier_features(K.Periodic()) and not K.has_fourier_features("rq")
    assert not K.has_fourier_features(K.Matern52() + K.Periodic())
    jbo.algorithms.GPBO(acquisition="ts", model=gp.GPModel(kernel=K.Matern52()))  # builds
    with pytest.raises(ValueError, match="Fourier"):
        jbo.algorithms.GPBO(acquisition="ts", model=gp.GPModel(kernel=K.Matern52() + K.Periodic()))
