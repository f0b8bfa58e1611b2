"""uCVS paper (bocvs.md 7.12): the masked GP against NumPy, the expected bounds against direct Monte
Carlo and finite differences, truncated-normal scales, objectives and reference constants against
published values, the decision rules against hand computations, round-robin order and the phase
switch, budget accounting and frozen states, UCB-PSQ on the full set, environments vmapped == looped."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import jbo
from jbo import data, engine, gp, parts
from jbo.algorithms import ucvs as A
from jbo.engine import Spec, Step
from jbo.problems import control
from jbo.problems import ucvs as P
from jbo.spaces import ControlSets

TINY = dict(
    num_mc=8, maximiser=dataclasses.replace(A.MAXIMISER, num_raw=8, num_starts=1, steps=3), growth=data.WHOLE
)  # small inner optimiser, one buffer size: fast compiles


def _np_se(A_, B_, ls, s2):
    return s2 * np.exp(-0.5 * (((A_[:, None, :] - B_[None, :, :]) / ls) ** 2).sum(-1))


def _np_posterior(X, y, Q, ls, s2, noise, c):
    K = _np_se(X, X, ls, s2) + noise * np.eye(len(X))
    kq = _np_se(Q, X, ls, s2)
    mu = c + kq @ np.linalg.solve(K, y - c)
    var = s2 - np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))
    return mu, np.sqrt(np.maximum(var, 1e-12))


def _post(n=9, cap=14, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X, y = rng.uniform(size=(n, d)), rng.normal(size=n)
    hyp = gp.default_params(d, 0.4, 1.3, 1e-3, 0.2)
    return gp.condition(data.from_arrays(jnp.asarray(X), jnp.asarray(y), cap), hyp, A.MODEL), X, y


# ---------------------------------------------------------------- 1. masked GP == unmasked (NumPy)
def test_masked_gp_equals_numpy_on_valid_rows():
    post, X, y = _post()
    Q = np.random.default_rng(20).uniform(size=(6, 4))
    mu, var = gp.predict_batch(post, jnp.asarray(Q))
    noise = 1e-3 + A.MODEL.noise_floor
    mu_np, sd_np = _np_posterior(X, y, Q, 0.4, 1.3, noise, 0.2)
    np.testing.assert_allclose(mu, mu_np, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(var), sd_np, rtol=1e-9, atol=1e-9)
    buf = data.from_arrays(jnp.asarray(X), jnp.asarray(y), 14)
    lml = gp.log_marginal_likelihood(post.params, buf.x, buf.y, buf.mask, A.MODEL)
    K = _np_se(X, X, 0.4, 1.3) + noise * np.eye(len(X))
    ref = stats.multivariate_normal(np.full(len(X), 0.2), K).logpdf(y)
    assert abs(float(lml) - ref) < 1e-9


# ---------------------------------------------------------------- 2. expected bounds
def test_expected_bounds_equal_direct_monte_carlo_and_full_set_is_pointwise():
    post, X, y = _post()
    noise = 1e-3 + A.MODEL.noise_floor
    rng = np.random.default_rng(21)
    R = rng.uniform(size=(32, 4))
    xc = rng.uniform(size=4)
    mask = np.array([True, False, True, False])
    em, es = A.expected_bounds(post, jnp.asarray(xc), jnp.asarray(mask), jnp.asarray(R))
    mu, sd = _np_posterior(X, y, np.where(mask, xc, R), 0.4, 1.3, noise, 0.2)
    assert abs(float(em) - mu.mean()) < 1e-9 and abs(float(es) - sd.mean()) < 1e-9
    u = A.expected_ucb(post, jnp.asarray(xc), jnp.asarray(mask), jnp.asarray(R), 4.0)
    assert abs(float(u) - (mu.mean() + 2.0 * sd.mean())) < 1e-9  # E[mu] + 2 E[sigma], not the sd of E f
    full = jnp.ones(4, bool)
    mu1, sd1 = _np_posterior(X, y, xc[None], 0.4, 1.3, noise, 0.2)
    np.testing.assert_allclose(
        A.expected_ucb(post, jnp.asarray(xc), full, jnp.asarray(R), 4.0), mu1[0] + 2 * sd1[0], rtol=1e-10
    )
    # gradient: finite differences on the controlled coordinates, zero on the free ones
    g = jax.grad(lambda x: A.expected_ucb(post, x, jnp.asarray(mask), jnp.asarray(R), 4.0))(jnp.asarray(xc))
    assert float(g[1]) == 0.0 and float(g[3]) == 0.0
    for j in (0, 2):
        e = np.zeros(4)
        e[j] = 1e-6
        fd = (
            A.expected_ucb(post, jnp.asarray(xc + e), jnp.asarray(mask), jnp.asarray(R), 4.0)
            - A.expected_ucb(post, jnp.asarray(xc - e), jnp.asarray(mask), jnp.asarray(R), 4.0)
        ) / 2e-6
        assert abs(float(g[j]) - float(fd)) < 1e-6


@pytest.mark.parametrize("method", ["adam", "lbfgs"])
def test_full_set_dominates_every_subset(method):
    post, X, y = _post(n=12, d=4, seed=3)
    masks = jnp.asarray([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [1, 1, 1, 1]], bool)
    R = jnp.asarray(np.random.default_rng(5).uniform(size=(64, 4)))
    alg = A.CVS(
        selection=A.BestSet(), num_mc=64, maximiser=parts.Maximiser(num_raw=256, num_starts=4, steps=40, method=method)
    )
    state = A.CVSState(*[None] * len(A.CVSState._fields))._replace(masks=masks, R=R, best_x=jnp.full((4, 4), 0.5))
    score = lambda m, r: lambda x: A.expected_ucb(post, x, m, r, 4.0)  # noqa: E731
    xs, g = jax.jit(lambda k: A.maximize_sets(alg.maximiser, k, score, state, jnp.ones(4, bool)))(jax.random.key(0))
    assert np.all(np.isfinite(g))
    assert np.all(g[3] >= g[:3] - 1e-6), g  # max_x u >= max_x E u (optimiser tolerance)
    # the full set's value is its pointwise UCB at its maximiser; each set's value its expected UCB
    for i in range(4):
        assert abs(float(score(masks[i], R)(xs[i])) - float(g[i])) < 1e-9


@pytest.mark.extended
@pytest.mark.parametrize("kernel", ["se", "matern52"])
def test_expected_sample_path_equals_the_direct_mean_over_rows(kernel):
    """TS-PSQ's g(i, xc) in its rearranged form (row means of the features and, for SE, of the kernel's
    free-coordinate factor, taken once per set) == the plain mean over the rows of the path evaluated
    point by point, in value and gradient; padding rows of the buffer play no part."""
    rng = np.random.default_rng(4)
    X, y = rng.uniform(size=(9, 4)), rng.normal(size=9)
    model = A.MODEL if kernel == "se" else gp.GPModel(kernel=kernel, standardize=False, mean="trainable")
    post = gp.condition(
        data.from_arrays(jnp.asarray(X), jnp.asarray(y), 14),
        gp.default_params(4, jnp.array([0.3, 0.5, 0.4, 0.7]), 1.3, 1e-3, 0.2),
        model,
    )
    path = jbo.acquisitions.thompson_sample(jax.random.key(1), post, 256)
    R, mask = jnp.asarray(rng.uniform(size=(16, 4))), jnp.array([True, False, True, False])

    def direct(xc):  # the path at each composed point, then the mean (what the rearrangement replaces)
        pts = np.where(np.asarray(mask), xc, np.asarray(R))
        return jnp.mean(jnp.stack([jbo.acquisitions.sample_path_value(path, jnp.asarray(p)) for p in pts]))

    g = A.expected_path(path, mask, R)
    for xc in rng.uniform(size=(3, 4)):
        np.testing.assert_allclose(float(g(jnp.asarray(xc))), float(direct(xc)), rtol=1e-12, atol=1e-12)
        grad = np.asarray(jax.grad(g)(jnp.asarray(xc)))
        grad_direct = np.asarray(
            jax.grad(
                lambda x: jnp.mean(
                    jax.vmap(lambda p: jbo.acquisitions.sample_path_value(path, p))(A.compose(mask, x, R))
                )
            )(jnp.asarray(xc))
        )
        np.testing.assert_allclose(grad, grad_direct, rtol=1e-10, atol=1e-12)
        assert grad[1] == 0.0 and grad[3] == 0.0


# ---------------------------------------------------------------- 3. truncated normal
@pytest.mark.parametrize("v,s", [(0.01, 0.100001), (0.02, 0.141821), (0.04, 0.213548), (0.08, 0.906099)])
def test_truncated_normal_scale_reproduces_the_variance(v, s):
    scale = control.scale_for_variance(v)
    assert abs(scale - s) < 1e-6  # bocvs.md 4.5
    tn = stats.truncnorm(-0.5 / scale, 0.5 / scale, loc=0.5, scale=scale)  # SciPy: independent closed form
    assert abs(tn.var() - v) < 1e-12
    n = 200_000
    u = jax.random.uniform(jax.random.key(1), (n,))
    x = np.asarray(control.truncated_normal_from_uniform(u, scale))
    # sampling spread of the moments, from the law's exact moments: sd(mean) = sqrt(v / n) (2.2e-4 to
    # 6.3e-4 here), sd(var) = sqrt((m4 - v^2) / n) (m4 the fourth central moment); 5 sd each
    m4 = tn.expect(lambda t: (t - 0.5) ** 4)
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(v / n)
    assert abs(x.var() - v) < 5 * math.sqrt((m4 - v**2) / n)
    # the whole law: Kolmogorov-Smirnov distance to SciPy's truncated normal below its 0.1% point 1.95 / sqrt(n)
    assert stats.kstest(x, tn.cdf).statistic < 1.95 / math.sqrt(n)
    np.testing.assert_allclose(x[:50], tn.ppf(np.asarray(u[:50])), atol=1e-9)


def test_scale_for_variance_rejects_impossible_variances():
    for v in (0.0, -0.1, 1 / 12, 0.2):
        with pytest.raises(ValueError, match="variance"):
            control.scale_for_variance(v)


# ---------------------------------------------------------------- 4. objectives and reference constants
def test_objective_optima_and_simulator_check_values():
    h = np.array([0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573] + [0.9] * 6)
    assert abs(float(P.hartmann12(jnp.asarray(h))) - 3.32237) < 1e-5
    assert abs(float(P.ackley12(jnp.full(12, 0.5)))) < 1e-12
    assert abs(float(P.levy12(jnp.asarray([0.55] * 6 + [0.1] * 6)))) < 1e-12
    assert abs(float(P.levy12(jnp.zeros(12))) - (-414.41)) < 0.01  # min at u = 0 (bocvs.md 4.2)
    d = P.plant_data()
    lo, hi = d["bounds"]
    near = jax.vmap(P.plant)(jnp.asarray((d["check_X_near"] - lo) / (hi - lo)))
    np.testing.assert_allclose(near, d["check_mean_near"], rtol=1e-8, atol=1e-10)  # GPflow's values
    assert abs(float(P.plant(jnp.asarray(d["argmax_unit"]))) - 2.1941161756) < 1e-9
    a = P.airfoil_data()
    np.testing.assert_allclose(jax.vmap(P.airfoil)(jnp.asarray(a["check_U"])), a["check_mean"], rtol=1e-8)
    np.testing.assert_allclose(a["X"][0], [0.30103, 0, 1, 1, 0.38020], atol=1e-5)  # the first-row transform
    g = jax.grad(P.airfoil)(jnp.asarray(a["X"][0]))  # at a data point: r = 0 stays differentiable
    assert np.all(np.isfinite(g))


def _np_plant(U):
    """The plant simulator written out in NumPy (bocvs.md 4.3): var * exp(-r^2/2) @ w."""
    d = P.plant_data()
    z = d["bounds"][0] + U * (d["bounds"][1] - d["bounds"][0])
    r2 = (((z[:, None, :] - d["Z"][None]) / d["lengthscales0"]) ** 2).sum(-1)
    return d["variance0"] * np.exp(-0.5 * r2) @ d["weights"]


def _np_airfoil(U):
    """The airfoil simulator written out in NumPy (bocvs.md 4.4): c + Matern52(U, X) @ alpha."""
    a = P.airfoil_data()
    r = np.sqrt((((U[:, None, :] - a["X"][None]) / a["lengthscale"]) ** 2).sum(-1))
    k = a["outputscale"] * (1 + np.sqrt(5) * r + 5.0 / 3.0 * r**2) * np.exp(-np.sqrt(5) * r)
    return a["mean_constant"] + k @ a["alpha"]


def _np_plant_vg(u):
    """_np_plant at one point u (5,) and its gradient (the SE kernel's derivative written out)."""
    d = P.plant_data()
    lo, hi = d["bounds"]
    diff = (lo + u * (hi - lo) - d["Z"]) / d["lengthscales0"]
    e = d["variance0"] * np.exp(-0.5 * (diff**2).sum(-1)) * d["weights"]
    return e.sum(), (e @ (-diff / d["lengthscales0"])) * (hi - lo)


def _np_airfoil_vg(U, chunk=512):
    """_np_airfoil at the rows of U (n, 5) and its gradients (n, 5): dk/du = -(5/3) s (1 + sqrt5 r) e^{-sqrt5 r}
    (u - x) / l^2 for the Matern-5/2 k = s (1 + sqrt5 r + 5 r^2 / 3) e^{-sqrt5 r}."""
    a = P.airfoil_data()
    vals, grads = [], []
    for i in range(0, len(U), chunk):
        diff = (U[i : i + chunk, None, :] - a["X"][None]) / a["lengthscale"]
        s5 = math.sqrt(5) * np.sqrt((diff**2).sum(-1))
        k = a["outputscale"] * (1 + s5 + s5**2 / 3) * np.exp(-s5)
        dk = -(5 / 3) * a["outputscale"] * (1 + s5) * np.exp(-s5)
        vals.append(a["mean_constant"] + k @ a["alpha"])
        grads.append(np.einsum("nj,njd->nd", dk * a["alpha"], diff / a["lengthscale"]))
    return np.concatenate(vals), np.concatenate(grads)


# Hartmann-6 written out from Surjanovic & Bingham's virtual library ("hart6"): f = sum_i alpha_i
# exp(-sum_j A_ij (x_j - P_ij)^2) on [0, 1]^6, max 3.32237 (the uCVS objective's sign)
H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
H6_A = np.array(
    [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
)
H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def _np_hartmann6(U):
    return (H6_ALPHA * np.exp(-(H6_A * (U[..., None, :6] - H6_P) ** 2).sum(-1))).sum(-1)


def _np_minus_ackley6(U):
    """-Ackley (a = 20, b = 0.2, c = 2 pi; Surjanovic & Bingham) at z = -32.768 + 65.536 u, first 6 coordinates."""
    z = -32.768 + 65.536 * U[..., :6]
    return 20 * np.exp(-0.2 * np.sqrt((z**2).mean(-1))) + np.exp(np.cos(2 * np.pi * z).mean(-1)) - 20 - math.e


def test_simulators_batched_and_pointwise_equal_numpy_formulas():
    """plant/airfoil at many rows at once (the kernels' cross-covariance matrix, used for the Monte-Carlo
    means) and one point at a time both equal the formulas written out in NumPy; so does env.expected."""
    rng = np.random.default_rng(22)
    U = rng.uniform(size=(64, 5))
    U[0] = P.airfoil_data()["X"][3]  # r = 0 at a data point
    for batch, one, ref in ((P.plant_batch, P.plant, _np_plant), (P.airfoil_batch, P.airfoil, _np_airfoil)):
        want = ref(U)
        np.testing.assert_allclose(np.asarray(batch(jnp.asarray(U))), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(jax.vmap(one)(jnp.asarray(U))), want, rtol=1e-12, atol=1e-12)
    env = P.CVSProblem("airfoil", "cheap", 0.02, num_mc=50)
    R = np.asarray(env.reset(jax.random.key(3)).free_sample)
    x = rng.uniform(size=5)
    got = float(env.expected(2, jnp.asarray(x), jnp.asarray(R)))
    assert abs(got - np.mean(_np_airfoil(np.where(np.asarray(env.sets.masks[2]), x, R)))) < 1e-12


def _minimum_by_search(name):
    """min of f over the unit cube, found here from the formulas written out in NumPy: Hartmann-6 is a sum
    of positive terms (inf >= 0), its smallest corner value 2.8e-8 bounds the minimum from above;
    Levy is a sum of one-coordinate terms (Surjanovic & Bingham: sin^2(pi w_1) + sum_{i<6} (w_i - 1)^2
    (1 + 10 sin^2(pi w_i + 1)) + (w_6 - 1)^2 (1 + sin^2(2 pi w_6)), w = 1 + (z - 1) / 4), each maximised on a
    dense grid; Ackley, plant and airfoil by multi-start L-BFGS-B (Ackley's from its symmetric near-corner
    point z_i = 32.5, where cos(2 pi z_i) = -1, and 4 random points)."""
    from scipy.optimize import minimize

    if name == "hartmann12":
        return _np_hartmann6(np.array(np.meshgrid(*[[0.0, 1.0]] * 6)).reshape(6, -1).T).min()
    if name == "levy12":
        w = 1 + (np.linspace(-10, 10, 200_001) - 1) / 4
        middle = (w - 1) ** 2 * (1 + 10 * np.sin(np.pi * w + 1) ** 2)
        last = (w - 1) ** 2 * (1 + np.sin(2 * np.pi * w) ** 2)
        return -((np.sin(np.pi * w) ** 2 + middle).max() + 4 * middle.max() + last.max())
    rng = np.random.default_rng(25)
    if name == "ackley12":
        starts = np.vstack([np.full(6, (32.5 + 32.768) / 65.536), rng.uniform(size=(4, 6))])
        fun, jac = _np_minus_ackley6, None
    else:  # the plant's minimum lies near an edge of the cube and its basin is small (3% of uniform starts):
        # the design puts a third of its coordinates on a face, and the 16 starts are 0.3 apart (found from
        # 16 of 16 design seeds; the 5 best points of a uniform design find it from half of them)
        fun = _np_plant_vg if name == "plant" else lambda u: tuple(v[0] for v in _np_airfoil_vg(u[None]))
        U = np.clip(rng.uniform(-0.25, 1.25, size=(4000, 5)), 0.0, 1.0)
        design = np.array([fun(u)[0] for u in U]) if name == "plant" else _np_airfoil_vg(U)[0]
        starts, jac = [], True
        for u in U[np.argsort(design)]:
            if all(np.abs(u - s).max() > 0.3 for s in starts):
                starts.append(u)
            if len(starts) == 16:
                break
    runs = [minimize(fun, u0, jac=jac, method="L-BFGS-B", bounds=[(0, 1)] * len(u0)) for u0 in starts]
    return min(float(r.fun) for r in runs)


@pytest.mark.parametrize(
    "name",
    [
        "hartmann12",
        pytest.param(
            "ackley12",
            marks=pytest.mark.xfail(
                strict=True,
                reason="f_lo = -22.29 is above the minimum of -Ackley-6: -22.3203 at z_i = 32.5004 (every i)",
            ),
        ),
        "levy12",
        "plant",
        "airfoil",
    ],
)
def test_shift_f_lo_is_a_lower_bound_and_nearly_attained(name):
    """f - f_lo >= 0 on 4096 random points, and f_lo at most 0.01 below the minimum found here independently
    and not above it (bocvs.md D2; the spec's plant value -1.027 is above the minimum -1.1326). Levy keeps
    the spec's -414.41, the minimum -414.414 (at u = 0) rounded to the printed digits: 0.004 above it."""
    obj = P.OBJECTIVES[name]
    U = jnp.asarray(np.random.default_rng(5).uniform(size=(4096, 12)))
    assert np.asarray(jax.jit(jax.vmap(obj.fn))(U[:, : obj.dim])).min() >= obj.f_lo
    found = _minimum_by_search(name)
    rounding = 0.005 if name == "levy12" else 0.0  # half the last printed digit of the spec's value
    assert found - 0.01 <= obj.f_lo <= found + rounding, (found, obj.f_lo)
    if name == "levy12":
        assert abs(float(P.levy12(jnp.zeros(12))) - found) < 1e-9  # the minimum is at the corner u = 0


def test_plant_maximum_by_search():
    """No point of a 20000-point design + the inducing levels beats 2.1941161756 (local search from the best)."""
    from scipy.optimize import minimize

    fn = jax.jit(jax.vmap(P.plant))
    U = np.random.default_rng(0).uniform(size=(20000, 5))
    d = P.plant_data()
    U = np.concatenate([U, (d["Z"] - d["bounds"][0]) / (d["bounds"][1] - d["bounds"][0])])
    v = np.asarray(fn(jnp.asarray(U)))
    vg = jax.jit(jax.value_and_grad(lambda u: -P.plant(u)))
    best = max(
        -minimize(
            lambda u: tuple(np.asarray(a) for a in vg(jnp.asarray(u))),
            U[i],
            jac=True,
            method="L-BFGS-B",
            bounds=[(0, 1)] * 5,
        ).fun
        for i in np.argsort(-v)[:5]
    )
    assert best <= 2.1941161756 + 1e-8 and best > 2.19411


# spec tables (bocvs.md 4.2-4.4: the spec author's MC estimates, +-0.01; Levy +-0.1) at v = 0.02
SPEC_F_STAR = {
    "hartmann12": (0.955, 1.495, 0.446, 0.446, 3.322, 0.446, 3.322),
    "ackley12": (-14.29, -14.27, -17.82, -17.82, 0.0, -17.82, 0.0),
    "levy12": (-7.49, -10.41, -17.90, -17.90, 0.0, -17.90, 0.0),
    "plant": (0.133, 0.0005, 0.0005, 0.275, 0.111, 0.0014, 2.194),
    "airfoil": (0.064, 0.372, 0.653, 0.727, 0.724, 0.842, 0.754),
}


@pytest.mark.parametrize("name", sorted(SPEC_F_STAR))
def test_recomputed_reference_constants_agree_with_the_spec(name):
    ours = np.asarray(P.F_STAR[(name, 0.02)])
    # airfoil: 2048 MC rows (standard error ~0.012) against the spec's +-0.01
    tol = {"levy12": 0.3, "airfoil": 0.04}.get(name, 0.03)
    # our values come from a stronger search on another sample: agree within the MC error, or above
    # it where the spec's search was weaker
    np.testing.assert_array_less(np.asarray(SPEC_F_STAR[name]) - tol, ours + 1e-12)
    np.testing.assert_allclose(ours, SPEC_F_STAR[name], atol=tol)


@pytest.mark.parametrize(
    "name,acceptable,cheapest",
    [
        ("hartmann12", {5, 7}, {5}),
        ("ackley12", {5, 7}, {5}),
        ("levy12", {1, 2, 3, 4, 5, 6, 7}, {1, 2, 3}),
        ("plant", {7}, {7}),
        ("airfoil", {3, 4, 5, 6, 7}, {3}),
    ],
)
def test_acceptable_sets_and_cheapest_set_of_section_4_7(name, acceptable, cheapest):
    ref = P.reference(name, 0.02, "cheap")
    assert set(np.nonzero(ref["acceptable"])[0] + 1) == acceptable
    assert set(np.nonzero(ref["cheapest"])[0] + 1) == cheapest
    env = P.CVSProblem(name, "cheap", 0.02)
    assert abs(float(env.f_plus) - max(P.F_STAR[(name, 0.02)])) < 1e-12


def test_airfoil_reference_constant_by_independent_numpy_monte_carlo():
    """F*_6 (the airfoil's F+ at v = 0.02: set 6 controls x_1, x_2) searched here: the NumPy formula's mean
    over 512 truncated-normal rows (scipy) maximised on a 3 x 3 grid and polished by L-BFGS-B, then the mean
    at that maximiser over 16384 fresh rows (standard error 0.0027). Measured: maximisers (0.297, 0.293)
    +- 0.004 over 4 searches; fresh means 0.850, 0.860, 0.849 (4096 rows each, searches of 1024 rows) and
    0.847 (this test): F*_6 = 0.850 +- 0.002 (per-row sd 0.337). The committed 0.8631 is the maximum of a
    2048-row mean (standard error 0.0074): 1.8 of those above, with the maximum's small upward bias; the
    spec prints 0.842 +- 0.01. Tolerance: 3 sds of the difference of the two means (0.024)."""
    from scipy.optimize import minimize

    sd = control.scale_for_variance(0.02)
    mask = np.asarray(P.masks(P.SETS_AIRFOIL, 5)[5])
    assert mask.tolist() == [True, True, False, False, False]

    def mean_and_grad(x2, R):
        v, g = _np_airfoil_vg(np.where(mask, np.r_[x2, 0.0, 0.0, 0.0], R))
        return v.mean(), g[:, mask].mean(0)

    R = stats.truncnorm.rvs(-0.5 / sd, 0.5 / sd, loc=0.5, scale=sd, size=(512, 5), random_state=10)
    grid = np.array(np.meshgrid(*[np.linspace(0.1, 0.9, 3)] * 2)).reshape(2, -1).T
    start = grid[np.argmax([mean_and_grad(x, R)[0] for x in grid])]
    neg = lambda x: tuple(-np.asarray(v) for v in mean_and_grad(x, R))  # noqa: E731
    best = minimize(neg, start, jac=True, method="L-BFGS-B", bounds=[(0, 1)] * 2).x
    fresh = stats.truncnorm.rvs(-0.5 / sd, 0.5 / sd, loc=0.5, scale=sd, size=(16384, 5), random_state=11)
    vals = _np_airfoil_vg(np.where(mask, np.r_[best, 0.0, 0.0, 0.0], fresh))[0]
    se = vals.std(ddof=1) / np.sqrt(vals.size)
    committed = P.F_STAR[("airfoil", 0.02)][5]
    assert abs(vals.mean() - committed) < 3 * math.sqrt(se**2 + vals.var(ddof=1) / 2048), (vals.mean(), best, se)
    assert committed == max(P.F_STAR[("airfoil", 0.02)])


def test_hartmann_set_value_by_independent_monte_carlo():
    """F(5, x*) = f(x*) (set 5 controls every active variable) and F(2, x) by NumPy Monte Carlo."""
    env = P.CVSProblem("hartmann12", "cheap", 0.02)
    R = env.free_sample(jax.random.key(3), 4096)
    x = jnp.asarray([0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573] + [0.5] * 6)
    assert abs(float(env.expected(4, x, R)) - 3.32237) < 1e-5
    Rn = np.asarray(R)
    pts = np.where(np.asarray(env.sets.masks[1]), np.asarray(x), Rn)
    ref = _np_hartmann6(pts).mean()
    assert abs(float(env.expected(1, x, R)) - ref) < 1e-10


def test_problem_errors_are_clear():
    with pytest.raises(ValueError, match="unknown uCVS objective"):
        P.CVSProblem("hartmann6")
    with pytest.raises(ValueError, match="unknown cost set"):
        P.CVSProblem("plant", "free")
    with pytest.raises(ValueError, match="7 positive numbers"):
        P.CVSProblem("plant", [0.1, 0.2])
    with pytest.raises(ValueError, match="no reference"):
        P.CVSProblem("plant", "cheap", 0.03)
    with pytest.raises(ValueError, match="preset"):
        P.CVSProblem("plant", preset="mine")
    with pytest.raises(ValueError, match="unknown problem"):
        jbo.problems.get("ucvs:nope")


# ---------------------------------------------------------------- decision rules vs hand computations
def test_alpha_schedules_cost_lcb_and_feasible_set():
    assert float(A.alpha_at(0.1, 0.0, 25, 12, "halve_every")) == pytest.approx(0.1 / 4)
    assert float(A.alpha_at(0.1, 0.0, 11, 12, "halve_every")) == pytest.approx(0.1)
    assert float(A.alpha_at(0.1, 0.0, 99, 12, "halve_once")) == pytest.approx(0.05)
    assert float(A.alpha_at(0.1, 0.0, 99, 12, "constant")) == pytest.approx(0.1)
    assert float(A.alpha_at(0.1, 0.03, 99, 12, "halve_every")) == pytest.approx(0.03)
    counts, sums = jnp.asarray([4, 0, 9]), jnp.asarray([0.4, 0.0, 9.0])
    rad = lambda n: math.sqrt(2 * math.log(20) / n)  # noqa: E731
    np.testing.assert_allclose(A.cost_lcb(sums, counts, 20, clip=False), [0.1 - rad(4), -np.inf, 1 - rad(9)])
    np.testing.assert_allclose(A.cost_lcb(sums, counts, 20, clip=True), [0.0, 0.0, max(1 - rad(9), 0)])
    np.testing.assert_allclose(A.cost_lcb(sums, counts, 1, clip=False)[0], 0.1 - math.sqrt(2 * math.log(2) / 4))
    S1 = A.feasible_set(jnp.asarray([1.0, 0.5, 0.9]), 1.0, 0.1, 0.0)  # > 0.9 strictly
    assert list(np.asarray(S1)) == [True, False, False]
    S1 = A.feasible_set(jnp.asarray([-2.0, -9.0]), -1.0, 0.1, -10.0)  # shifted: 8 > 8.1? no; 1 > 8.1? no
    assert not np.asarray(S1).any()
    assert list(np.asarray(A.feasible_set(jnp.asarray([-1.8, -9.0]), -1.0, 0.1, -10.0))) == [True, False]  # 8.2 > 8.1
    i, S3 = A.cheapest_then_best(
        jnp.asarray([True, True, False, True]), jnp.asarray([0.0, 0.0, 0.0, 0.2]), jnp.asarray([1.0, 3.0, 9.0, 5.0])
    )
    assert int(i) == 1 and list(np.asarray(S3)) == [True, True, False, False]
    i, _ = A.cheapest_last_index(
        jnp.asarray([True, True, False]), jnp.asarray([0.1, 0.1, 0.0]), jnp.asarray([5.0, 1.0, 9.0])
    )
    assert int(i) == 1
    i, _ = A.cheapest_last_index(jnp.zeros(3, bool), jnp.zeros(3), jnp.asarray([1.0, 4.0, 2.0]))
    assert int(i) == 1  # nothing feasible: argmax gU


def test_algorithm_errors_are_clear():
    with pytest.raises(ValueError, match="unknown uCVS method"):
        A.make("nope")
    with pytest.raises(ValueError, match="ExploreThenCommit: unknown preset"):
        A.ExploreThenCommit(preset="nope")
    with pytest.raises(ValueError, match="ExploreThenCommit: unknown alpha schedule"):
        A.make("ucvs", alpha_schedule="nope")
    with pytest.raises(ValueError, match="GroupedETC: unknown groups"):
        A.GroupedETC(groups="nope")
    with pytest.raises(ValueError, match="GroupedETC: plays"):
        A.make("etc", etc_plays=0)
    with pytest.raises(ValueError, match="ThompsonPath: num_features"):
        A.ThompsonPath(num_features=0)
    with pytest.raises(ValueError, match="ExpectedImprovement: num_paths"):
        A.make("ei_naive", num_ei_paths=0)
    with pytest.raises(ValueError, match="configures none of its parts"):
        A.make("ucb_psq", preset="official")
    with pytest.raises(ValueError, match="CVS: selection"):
        A.CVS(selection="ucvs")
    with pytest.raises(ValueError, match="CVS: value"):
        A.CVS(value=A.BestSet())
    with pytest.raises(ValueError, match="CVS: num_mc"):
        A.CVS(num_mc=0)
    with pytest.raises(ValueError, match="Maximiser: method"):
        A.CVS(maximiser=parts.Maximiser(method="sgd"))
    with pytest.raises(ValueError, match="CVS: hypers"):
        A.CVS(hypers="refit")
    spec = jbo.engine.box_spec(3, 10)
    with pytest.raises(ValueError, match="control-set space"):
        A.CVS().init(jax.random.key(0), A.CVS().default_params(), spec)
    spec = Spec(ControlSets(np.eye(3, dtype=bool)), 10, 0, {})
    with pytest.raises(ValueError, match="free_scale"):
        A.CVS().init(jax.random.key(0), A.CVS().default_params(), spec)
    spec = Spec(ControlSets(np.eye(3, dtype=bool)), 10, 0, {"free_scale": 0.2})
    with pytest.raises(ValueError, match="known mean costs"):
        A.make("ucb_cvs").init(jax.random.key(0), A.CVS().default_params(), spec)
    with pytest.raises(ValueError, match="outside"):
        A.make("etc", groups=[[0, 5]]).init(jax.random.key(0), A.CVS().default_params(), spec)
    with pytest.raises(ValueError, match="unknown algorithm"):
        jbo.algorithms.get("ucvs:nope")


# ---------------------------------------------------------------- runs: round robin, switch, budget, PSQ
def _budget_run(alg, env, budget, T, key=0):
    return engine.run_environments(
        alg,
        [env],
        key=jax.random.key(key),
        num_steps=T,
        num_seeds=1,
        params=jbo.replace_params(alg.default_params(), budget=budget),
        budget=budget,
        free_initial=True,
        sequential=True,
        keep_final_state=True,
    )  # test_no_state_change_after_the_budget hands the whole final state to ask


@pytest.fixture(scope="module")
def paper_run():
    env = P.CVSProblem("plant", "moderate", 0.02)
    alg = A.make("ucvs", **TINY)
    return env, _budget_run(alg, env, 6.0, 40)


def test_round_robin_order_and_switch_at_the_exploration_budget(paper_run):
    env, tr = paper_run
    active = np.asarray(tr.metrics["active"][0, 0])
    sets = np.asarray(tr.actions.set[0, 0])
    explore = np.asarray(tr.info.explore[0, 0])
    cost = np.asarray(tr.metrics["cost"][0, 0])
    bo = np.arange(len(sets)) >= 5
    spent_before = np.concatenate([[0.0], np.cumsum(cost)[:-1]])
    # a BO step explores iff the cost spent before it is <= 0.6 C (C = 6)
    np.testing.assert_array_equal(explore[bo & active], spent_before[bo & active] <= 0.6 * 6.0)
    ex = sets[bo & active & explore]
    np.testing.assert_array_equal(ex, np.arange(len(ex)) % 7)  # paper: sets 1, 2, ..., 7, 1, ...
    assert (bo & active & ~explore).sum() >= 2  # the run reached exploitation
    # budget accounting: what was charged while active stays below C + the largest cost
    assert cost[active].sum() <= 6.0 + 1.0 + 0.1 and cost[active].sum() >= 6.0
    assert np.all(cost[:5] == 0)  # the initial design is free


@pytest.mark.extended
def test_no_state_change_after_the_budget(paper_run):
    env, tr = paper_run
    active = np.asarray(tr.metrics["active"][0, 0])
    assert not active[-1]
    alg = A.make("ucvs", **TINY)
    final = jax.tree.map(lambda a: a[0, 0], tr.final_state)
    # an ask with the budget spent returns the state untouched (no work, no bookkeeping)
    action, state = jax.jit(
        lambda s: alg.ask(
            jax.random.key(5),
            s,
            jbo.replace_params(alg.default_params(), budget=6.0),
            Step(jnp.int32(39), jnp.asarray(False)),
        )
    )(final)
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(final)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert int(final.plays) == (active & (np.arange(40) >= 5)).sum()
    counts = np.bincount(np.asarray(tr.actions.set[0, 0])[active & (np.arange(40) >= 5)], minlength=7)
    np.testing.assert_array_equal(final.counts, counts)  # counts updated in both phases


@pytest.mark.extended
def test_official_preset_explores_from_set_two_and_uses_its_rules():
    masks = jnp.asarray(P.masks(P.SETS_PLANT, 5))
    spec = Spec(ControlSets(masks), 30, 0, {"free_scale": jnp.asarray(0.14), "f_lo": jnp.asarray(-1.2)})
    alg = A.CVS(selection=A.ExploreThenCommit(preset="official"), **TINY)
    p = alg.default_params()
    assert p.beta_exploit == pytest.approx(1.96**2) and p.beta_lcb == pytest.approx(0.09) and p.alpha0 == 0
    state = alg.init(jax.random.key(0), p, spec)
    rng = np.random.default_rng(23)
    X = rng.uniform(size=(6, 5))
    state = state._replace(buffer=data.from_arrays(jnp.asarray(X), jnp.asarray(rng.normal(size=6)), 30))
    ask = jax.jit(lambda s: alg.ask(jax.random.key(1), s, p, Step(jnp.int32(7), jnp.asarray(False))))
    sets = []
    for _ in range(3):
        action, state = ask(state)
        sets.append(int(action.set))
        state = state._replace(plays=state.plays + 1)
    assert sets == [1, 2, 3]  # 0-based t % m with t from 1: set 2 first


@pytest.mark.extended
def test_ucb_psq_always_plays_the_full_set():
    env = P.CVSProblem("plant", "cheap", 0.04)
    tr = _budget_run(A.make("ucb_psq", **TINY), env, 8.0, 16)
    active = np.asarray(tr.metrics["active"][0, 0])
    assert np.all(np.asarray(tr.actions.set[0, 0])[5:][active[5:]] == 6)


# the growing segments (engine -> data.resize / gp.resize) are the same for every method: UCB-PSQ (one
# set maximised per step) checks them in the suite; uCVS (54 s: two programs of its 7-set steps) and
# UCB-CVS vmapped run with --runslow
# (UCB-PSQ plays plant's full set, cost 1: a budget of 40 reaches the 48-row bucket)
@pytest.mark.parametrize(
    "method,seq,budget",
    [
        pytest.param("ucb_psq", True, 40.0, marks=pytest.mark.extended),
        pytest.param("ucvs", True, 9.0, marks=pytest.mark.slow),
        pytest.param("ucb_cvs", False, 9.0, marks=pytest.mark.slow),
    ],
)
def test_bucketed_prefix_steps_equal_whole_buffer_steps(method, seq, budget):
    """Each ask works on the smallest prefix of the data that holds it (16, 32, 48 here): the same
    plays as on the whole 48-row buffer (seeds in sequence, or UCB-CVS vmapped over 2 seeds)."""
    env = P.CVSProblem("plant", "cheap", 0.02)
    if seq:
        out = {
            b: _budget_run(A.make(method, **{**TINY, "growth": A.GROWTH if b else data.WHOLE}), env, budget, 48)
            for b in (True, False)
        }
    else:
        out = {
            b: engine.run_environments(
                A.make(method, **{**TINY, "growth": A.GROWTH if b else data.WHOLE}),
                [env],
                key=jax.random.key(3),
                num_steps=48,
                num_seeds=2,
                params=jbo.replace_params(A.CVS().default_params(), budget=budget),
                budget=budget,
                free_initial=True,
            )
            for b in (True, False)
        }
    active = np.asarray(out[False].metrics["active"])
    assert active.sum(-1).min() > 33  # the runs reach the largest bucket
    np.testing.assert_array_equal(np.asarray(out[True].metrics["active"]), active)
    np.testing.assert_array_equal(np.asarray(out[True].actions.set), np.asarray(out[False].actions.set))
    np.testing.assert_allclose(np.asarray(out[True].actions.x), np.asarray(out[False].actions.x), atol=1e-9)


def test_expected_values_chunked_equal_a_direct_mean():
    """The reporting evaluator (chunks of plays, 8 at a time) == the NumPy mean of f over the rows."""
    env = P.CVSProblem("airfoil", "cheap", 0.02)
    key = jax.random.key(11)
    rng = np.random.default_rng(24)
    sets = rng.integers(0, 7, size=(2, 10))
    xs = rng.uniform(size=(2, 10, 5))
    got = np.asarray(P.expected_values(env, sets, xs, key, num=64, chunk=7))
    R = np.asarray(env.free_sample(key, 64))
    masks = np.asarray(env.sets.masks)
    want = np.array(
        [[np.mean(_np_airfoil(np.where(masks[s], x, R))) for s, x in zip(sr, xr)] for sr, xr in zip(sets, xs)]
    )
    assert got.shape == (2, 10)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.extended  # vmapped == looped on GP-UCB: test_exactness
def test_environments_vmapped_equal_looped_and_sequential():
    envs = [P.CVSProblem("plant", c, v) for c, v in (("cheap", 0.02), ("moderate", 0.04))]
    alg = A.CVS(selection=A.RandomSets())
    out = {}
    for seq in (False, True):
        out[seq] = engine.run_environments(
            alg, envs, key=jax.random.key(2), num_steps=12, num_seeds=2, budget=3.0, free_initial=True, sequential=seq
        )
    for e, env in enumerate(envs):
        ref = jbo.run_seeds(alg, env, key=jax.random.key(2), num_steps=12, num_seeds=2, budget=3.0, free_initial=True)
        for name in ("value", "cost", "active", "quality_regret", "cost_regret"):
            for seq in (False, True):
                np.testing.assert_allclose(out[seq].metrics[name][e], ref.metrics[name], rtol=1e-12, atol=1e-12)
    # the cost-set environments share their random numbers: same realised free variables of set plays
    assert np.array_equal(np.asarray(out[True].actions.set[0]), np.asarray(out[True].actions.set[1]))


def test_stack_environments_errors():
    with pytest.raises(ValueError, match="non-empty"):
        engine.stack_environments([])
    with pytest.raises(ValueError, match="static configuration"):
        engine.stack_environments([P.CVSProblem("hartmann12"), P.CVSProblem("ackley12")])


def test_registry_names():
    names = jbo.algorithms.names()
    for n in ("ucvs:ucvs", "ucvs:ucb_psq", "ucvs:ts_psq", "ucvs:etc50"):
        assert n in names
    assert jbo.algorithms.get("ucvs:ucvs", preset="official").selection == A.ExploreThenCommit(preset="official")
    assert jbo.algorithms.get("ucvs:etc50", groups="tiers").selection == A.GroupedETC(groups="tiers")
    assert jbo.algorithms.get("ucvs:ts_psq").value == A.ThompsonPath()
    assert A.make("ei_naive", num_ei_paths=8, num_features=256) == A.CVS(
        selection=A.ValuePerCost(), value=A.ExpectedImprovement(num_paths=8, num_features=256)
    )
    env = jbo.problems.get("ucvs:levy12", cost_set="moderate", variance=0.04, noise_std=0.0)
    assert float(env.noise_std) == 0.0 and float(env.cost_mean[0]) == 0.1


def test_etc_size_groups():
    rule = A.GroupedETC()
    gid, n = rule.group_ids(jnp.asarray(P.masks(P.SETS_12D, 12)))
    assert list(np.asarray(gid)) == [0, 0, 0, 0, 1, 1, -1] and int(n) == 2
    airfoil = jnp.asarray(P.masks(P.SETS_AIRFOIL, 5))
    gid, n = rule.group_ids(airfoil)
    assert list(np.asarray(gid)) == [0] * 7 and int(n) == 1  # airfoil: one group of all sets (D18)
    gid, n = A.GroupedETC(groups="tiers").group_ids(airfoil)
    assert list(np.asarray(gid)) == [0, 0, 0, 1, 1, 1, -1] and int(n) == 2


# ---------------------------------------------------------------- 6. expected behaviour (slow)
@pytest.mark.slow
def test_noise_free_hartmann_cheap_commits_to_the_valid_subset():
    """bocvs.md 7.12 item 6: noise-free f, deterministic costs, Hartmann-12D cheap, paper preset:
    after exploration S1 contains sets 5 and 7, and >= 80% of exploitation plays are on set 5."""
    env = P.CVSProblem("hartmann12", "cheap", 0.02, noise_std=0.0, cost_std=0.0)
    alg = A.CVS(
        selection=A.ExploreThenCommit(),
        num_mc=32,
        maximiser=dataclasses.replace(A.MAXIMISER, num_raw=32, num_starts=2, steps=10),
    )
    tr = engine.run_environments(
        alg, [env], key=jax.random.key(0), num_steps=800, num_seeds=1, budget=100.0, free_initial=True, sequential=True
    )
    active = np.asarray(tr.metrics["active"][0, 0]) & (np.arange(800) >= 5)
    explore = np.asarray(tr.info.explore[0, 0])
    sets = np.asarray(tr.actions.set[0, 0])
    S1 = np.asarray(tr.info.S1[0, 0])
    first = np.nonzero(active & ~explore)[0][0]
    assert S1[first, 4] and S1[first, 6]
    exploit = active & ~explore
    assert (sets[exploit] == 4).mean() >= 0.8


# ---------------------------------------------------------------- EI-naive (an addition, bocvs.md 3.4)
@pytest.mark.extended
def test_ei_naive_expected_improvement_equals_exact_gaussian_monte_carlo():
    """EI(i, xc) from joint RFF sample paths == the same expectation under the exact joint Gaussian
    posterior of f at the composed points and the observed points (NumPy, 200k draws); and its
    gradient in the controlled coordinates equals finite differences for fixed paths."""
    post, X, y = _post(n=3, cap=5, d=2, seed=5)
    mask, xc = np.array([True, False]), np.array([0.3, 0.0])
    R = np.array([[0.0, 0.2], [0.0, 0.5], [0.0, 0.9]])
    Q = np.concatenate([np.where(mask, xc, R), X])
    noise = 1e-3 + A.MODEL.noise_floor
    K = _np_se(X, X, 0.4, 1.3) + noise * np.eye(3)
    kq = _np_se(Q, X, 0.4, 1.3)
    mean = 0.2 + kq @ np.linalg.solve(K, y - 0.2)
    cov = _np_se(Q, Q, 0.4, 1.3) - kq @ np.linalg.solve(K, kq.T)
    f = np.random.default_rng(0).multivariate_normal(mean, cov, size=200_000, method="eigh")
    improvement = np.maximum(f[:, :3].mean(1) - f[:, 3:].max(1), 0.0)
    exact, exact_se = improvement.mean(), improvement.std() / np.sqrt(improvement.size)  # 0.00636, 0.00010

    def ei_of(key):  # 600 paths of 1024 features: one estimate
        paths = A.sample_paths(key, post, 600, 1024)
        return A.expected_improvement(paths, post, A.incumbents(paths, post), jnp.asarray(xc), mask, jnp.asarray(R))

    # centred: over 60 keys the estimates average 0.00646 +- 0.00024 (the RFF paths' bias is within 0.0005 of
    # 0), one estimate spreads by sd 0.0019 (30% of the value). The mean of 16 keys within 4 standard errors
    # (ours, sd / 4, and the exact draws'): 0.0019, so an EI of 0 or one off by more than 30% fails.
    ests = np.asarray(jax.jit(jax.vmap(ei_of))(jax.random.split(jax.random.key(3), 16)))
    se = ests.std(ddof=1) / 4
    assert abs(ests.mean() - exact) < 4 * math.sqrt(se**2 + exact_se**2), (ests.mean(), exact, se)
    paths = A.sample_paths(jax.random.key(3), post, 600, 1024)
    best = A.incumbents(paths, post)
    ei = jax.jit(lambda x: A.expected_improvement(paths, post, best, x, jnp.asarray(mask), jnp.asarray(R)))
    g = jax.jit(jax.grad(ei))(jnp.asarray(xc))
    fd = (ei(jnp.asarray(xc + [1e-6, 0])) - ei(jnp.asarray(xc - [1e-6, 0]))) / 2e-6
    assert float(g[1]) == 0.0 and abs(float(g[0]) - float(fd)) < 1e-5 * max(1.0, abs(float(fd)))


@pytest.mark.slow  # suite time: runs with --runslow
def test_ei_naive_plays_argmax_ei_per_estimated_cost():
    env = P.CVSProblem("plant", "cheap", 0.04)
    alg = A.make("ei_naive", num_ei_paths=8, num_features=256, **TINY)
    tr = _budget_run(alg, env, 4.0, 12)
    ei, sets = np.asarray(tr.info.gU[0, 0]), np.asarray(tr.actions.set[0, 0])
    cost, active = np.asarray(tr.metrics["cost"][0, 0]), np.asarray(tr.metrics["active"][0, 0])
    assert np.all(np.isfinite(np.asarray(tr.metrics["value"]))) and np.all(ei[5:][active[5:]] >= 0)
    counts, sums = np.zeros(ei.shape[1]), np.zeros(ei.shape[1])
    for t in range(5, len(sets)):
        if not active[t]:
            break
        n = np.maximum(counts, 1)
        lcb = np.where(counts > 0, sums / n - np.sqrt(2 * np.log(max(t - 4, 2)) / n), -np.inf)
        assert sets[t] == np.argmax(ei[t] / np.maximum(lcb, 1e-3)), t
        counts[sets[t]] += 1
        sums[sets[t]] += cost[t]
