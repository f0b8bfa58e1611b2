"""SBO-KDE paper: TV closed form vs an LP, KDE bandwidth/sampling/L1 error (App. E), expected-value
rules vs closed forms and Monte Carlo, problem optima and check values, the joint GP padded/unpadded."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats
from scipy import optimize as sopt

import jbo
from jbo import data, gp
from jbo.algorithms import sbo_kde
from jbo.problems import sbo_kde as C


def _eq6_lp(v, u_low, delta):
    """Eq. 6 as an LP in (alpha, beta, t_1..t_M): max -beta - delta alpha + mean(t)."""
    m = len(v)
    c = np.concatenate([[delta, 1.0], -np.ones(m) / m])  # minimise the negative
    A, b = [], []
    for i in range(m):
        row = np.zeros(m + 2)
        row[1] = -1.0
        row[2 + i] = 1.0
        A.append(row)
        b.append(v[i])  # t <= v + beta
        row = np.zeros(m + 2)
        row[0] = -1.0
        row[2 + i] = 1.0
        A.append(row)
        b.append(0.0)  # t <= alpha
    row = np.zeros(m + 2)
    row[0] = -1.0
    row[1] = -1.0
    A.append(row)
    b.append(u_low)  # alpha + beta >= -u_low
    bounds = [(0, None), (None, None)] + [(None, None)] * m
    res = sopt.linprog(c, A_ub=np.array(A), b_ub=np.array(b), bounds=bounds, method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("case", range(6))
def test_tv_closed_form_equals_lp(case):
    rng = np.random.default_rng(case)
    m = 40
    v = rng.normal(size=m)
    u_low = v.min() - rng.uniform(0, 1) if case % 2 == 0 else np.quantile(v, 0.2)  # also v_m < u_low
    delta = [0.05, 0.3, 0.9, 1.5, 0.01, 1.99][case]
    ours = float(sbo_kde.tv_worst_case(jnp.asarray(v), u_low, delta))
    assert np.isclose(ours, _eq6_lp(v, u_low, delta), atol=1e-7)


def test_tv_limits_and_gradient():
    v = jnp.asarray(np.random.default_rng(10).normal(size=64))
    u_low = float(v.min()) - 0.5
    assert np.isclose(float(sbo_kde.tv_worst_case(v, u_low, 0.0)), float(v.mean()))  # delta -> 0: the SAA value
    assert np.isclose(float(sbo_kde.tv_worst_case(v, u_low, 2.0)), u_low)  # all mass can move: inf g
    g = jax.grad(lambda vv: sbo_kde.tv_worst_case(vv, u_low, 0.5))(v)  # 1/M below the threshold, 0 above
    assert np.all(np.isin(np.round(np.asarray(g) * 64, 9), [0.0, 1.0])) and float(g.sum()) > 0
    assert np.isclose(float(sbo_kde.tv_radius(10.0, 1)), 10**-0.4)


def test_kde_bandwidth_and_sampling_statistics():
    rng = np.random.default_rng(18)
    c = jnp.asarray(rng.normal(0.5, 0.1, size=(50, 1)))
    buf_c = jnp.concatenate([c, jnp.zeros((14, 1))])
    mask = jnp.arange(64) < 50
    h = sbo_kde.silverman_bandwidth(buf_c, mask)
    assert np.isclose(float(h[0]), 1.0592 * float(jnp.std(c)) * 50 ** (-0.2), rtol=1e-4)
    num = 200_000
    s = np.asarray(sbo_kde.kde_samples(jax.random.key(0), buf_c, mask, num, h))[:, 0]
    # a KDE sample = a data point + N(0, h^2): mean = data mean, variance = var (ddof 0) + h^2, and fourth
    # central moment mean_i(d_i^4 + 6 d_i^2 h^2) + 3 h^4 (d_i = c_i - mean); the clip to [0, 1] moves a
    # mass below 1e-6 here. Tolerances: 5 sampling sds, sqrt(var / num) and sqrt((m4 - var^2) / num).
    d, hh = np.asarray(c)[:, 0] - float(c.mean()), float(h[0])
    var = np.mean(d**2) + hh**2
    m4 = np.mean(d**4 + 6 * d**2 * hh**2) + 3 * hh**4
    assert abs(s.mean() - float(c.mean())) < 5 * math.sqrt(var / num)
    assert abs(s.var() - var) < 5 * math.sqrt((m4 - var**2) / num)
    # the clip: data near 1 put an atom at 1 of mass mean_i P(c_i + h xi > 1) = mean_i Phi((c_i - 1) / h)
    near = rng.uniform(0.85, 1.0, size=(50, 1))
    hn = sbo_kde.silverman_bandwidth(jnp.asarray(near), jnp.ones(50, bool))
    sn = np.asarray(sbo_kde.kde_samples(jax.random.key(1), jnp.asarray(near), jnp.ones(50, bool), num, hn))[:, 0]
    atom = float(np.mean(stats.norm.cdf((near[:, 0] - 1) / float(hn[0]))))
    assert abs(np.mean(sn == 1.0) - atom) < 5 * math.sqrt(atom * (1 - atom) / num)  # binomial spread
    assert np.mean(sn > 1.0) == 0.0 and np.mean(sn == 0.0) == 0.0  # nothing beyond 1; no mass near 0 to clip


def _kde_l1_errors(rng, n, runs, grid):
    """L1 distance of the Silverman KDE (sbo_kde.silverman_bandwidth, unit-variance Gaussian kernel) of n
    draws of N(0.5, 0.1^2) to that density on `grid` (trapezoid rule), for `runs` independent samples."""
    true = stats.norm(0.5, 0.1).pdf(grid)
    c = rng.normal(0.5, 0.1, size=(runs, n))
    h = np.asarray(jax.vmap(lambda ci: sbo_kde.silverman_bandwidth(ci[:, None], jnp.ones(n, bool))[0])(jnp.asarray(c)))
    kde = [
        np.exp(-0.5 * ((grid[:, None] - ci) / hi) ** 2).sum(1) / (n * hi * math.sqrt(2 * math.pi))
        for ci, hi in zip(c, h)
    ]
    return np.array([np.trapezoid(np.abs(k - true), grid) for k in kde])


# The spec'd estimator's central values and spreads, measured with the Silverman formula written out in
# NumPy (ddof 0) on this grid, over many runs of fresh N(0.5, 0.1^2) samples:
#   n:           10       100      200      300
#   runs:        20000    5000     3000     2000
#   mean L1:     0.3414   0.1419   0.1103   0.0954   (standard errors 0.0010, 0.0007, 0.0007, 0.0007)
#   per-run sd:  0.1441   0.0487   0.0367   0.0303
#   sd / sqrt20: 0.0322   0.0109   0.0082   0.0068   <- Table 2's +- (0.0327, 0.0088, 0.0079, 0.0083)
# So Table 2 prints 20-run averages with their spread; its values lie -0.6, -0.95, +0.65 and +0.1 of that
# spread from the centre. The paper's 0.3222 is not the estimator's central value (0.341): a test
# against 0.3222 with a fixed tolerance passes or fails by the luck of the 20 samples.
KDE_L1_CENTRE = {10: (0.3414, 0.0010), 100: (0.1419, 0.0007)}
KDE_L1_TABLE2 = {10: 0.3222, 100: 0.1315}


@pytest.mark.parametrize("n, runs", [(10, 400), (100, 400)])
def test_kde_l1_error_reproduces_appendix_e(n, runs):
    """Table 2 (normal context): L1 distance of the Silverman KDE to N(0.5, 0.1^2), as an average of runs.
    Centred: the average of 400 runs (standard errors 0.0072 and 0.0024) within 4 standard errors of the
    central value; the paper's 20-run average within 3 sds of the difference of the two averages (0.099
    and 0.034). The kernel of the paper's typo, exp(-|u|^2) (h / sqrt 2), moves the central values by
    +0.045 and +0.015: 6 standard errors. (A ddof-1 sd moves them by at most 0.0025: the bandwidth
    test above checks the formula.)"""
    errs = _kde_l1_errors(np.random.default_rng(n), n, runs, np.linspace(-0.5, 1.5, 4001))
    mean, sd = errs.mean(), errs.std(ddof=1)
    centre, centre_se = KDE_L1_CENTRE[n]
    assert abs(mean - centre) < 4 * math.sqrt(sd**2 / runs + centre_se**2), (mean, centre, sd)
    paper = KDE_L1_TABLE2[n]
    assert abs(mean - paper) < 3 * math.sqrt(sd**2 / 20 + sd**2 / runs), (mean, paper, sd)


def test_newsvendor_optimum_and_expected_value_rules():
    p = C.problem("newsvendor")

    def closed(x):  # F(x) = 8 int_0^x (1 + s^2)^-20 ds - 4 x
        return 8 * integrate.quad(lambda s: (1 + s * s) ** -20, 0, x, epsabs=1e-14, epsrel=1e-13)[0] - 4 * x

    for x in (0.1, C.NEWSVENDOR_OPTIMUM[0], 0.6):
        assert abs(float(p.expected(jnp.array([x]))) - closed(x)) < 1e-12  # the rule is split at the kink c = x
    assert np.isclose(C.NEWSVENDOR_OPTIMUM[0], 0.187790, atol=1e-6)
    assert abs(C.NEWSVENDOR_OPTIMUM[1] - closed(C.NEWSVENDOR_OPTIMUM[0])) < 1e-14
    res = sopt.minimize_scalar(lambda x: -closed(x), bounds=(0, 1), method="bounded", options={"xatol": 1e-9})
    assert np.isclose(res.x, C.NEWSVENDOR_OPTIMUM[0], atol=1e-7) and np.isclose(-res.fun, 0.463943, atol=1e-6)


@pytest.mark.parametrize("name", ["ackley", "modified_branin", "hartmann", "complicated_hartmann", "ackley_4c"])
def test_expected_value_rule_matches_monte_carlo(name):
    p = C.problem(name)
    x = jnp.asarray(np.random.default_rng(17).uniform(size=p.dim))
    c = p.sample_contexts(jax.random.key(1), 400_000)
    vals = jax.vmap(lambda cc: p.fn(x, cc))(c)
    mc, se = float(vals.mean()), float(vals.std() / math.sqrt(vals.shape[0]))
    assert abs(float(p.expected(x)) - mc) < 4 * se  # the rules are exact to ~1e-12 (tests/test_accuracy.py)


def test_published_optimum_values():
    """The spec's 7.2 values (4-5 digits) against the stored optima (converged, in full: test_accuracy.py)
    and F at the spec's rounded maximisers. Ackley and Hartmann agree to the published digits; the
    spec's modified Branin value is 3.1e-4 above the maximum, its ackley_4c value (a QMC estimate)
    8.7e-4 above."""
    for name, published, tol in (
        ("ackley", -10.9523, 5e-5),
        ("hartmann", 2.6136, 5e-5),
        ("modified_branin", -9.6036, 4e-4),
        ("ackley_4c", -16.1987, 1e-3),
    ):
        assert abs(C.OPTIMA[name] - published) < tol, name
    assert np.isclose(float(C.problem("ackley").expected(jnp.array([0.5, 0.5]))), -10.9523, atol=5e-5)
    assert np.isclose(float(C.problem("ackley_4c").expected(jnp.array([0.5, 0.5]))), -16.1987, atol=1e-3)
    h = C.problem("hartmann")
    assert np.isclose(float(h.expected(jnp.array([0.1970, 0.1497, 0.4839, 0.2726, 0.3135]))), 2.6136, atol=1e-4)
    b = C.problem("modified_branin")
    assert np.isclose(float(b.expected(jnp.array([0.1956, 0.1788]))), -9.6036, atol=4e-4)


def test_portfolio_surrogate_check_values():
    d = np.load(C.Path(C.__file__).parent / "data" / "sbo_kde_portfolio_gp.npz")
    sur = C.portfolio_surrogate()
    got = np.asarray(jax.vmap(sur)(jnp.asarray(d["check_X"])))
    np.testing.assert_allclose(got, d["check_mean"], rtol=1e-8, atol=1e-8)


@pytest.mark.extended
def test_joint_gp_padded_equals_unpadded():
    rng = np.random.default_rng(12)
    z = jnp.asarray(rng.uniform(size=(9, 3)))
    y = jnp.asarray(rng.normal(size=9))
    hyp = gp.default_params(3, 0.4, 1.3, 0.01)
    padded = gp.condition(data.from_arrays(z, y, 20), hyp)
    exact = gp.condition(data.from_arrays(z, y, 9), hyp)
    q = jnp.asarray(rng.uniform(size=(5, 3)))
    np.testing.assert_allclose(sbo_kde.ucb(padded, q, 2.25), sbo_kde.ucb(exact, q, 2.25))
    # the batched prediction equals the per-point one, and the direct solve with the 9 points
    m, v = gp.predict_batch(padded, q)
    m1, v1 = jax.vmap(lambda x: gp.predict(exact, x))(q)
    np.testing.assert_allclose(m, m1, rtol=1e-10)
    np.testing.assert_allclose(v, v1, rtol=1e-8, atol=1e-12)
    noise = 0.01 + 1e-6  # the noise variance of hyp plus GPModel's documented noise floor, 1e-6
    K = np.asarray(jbo.kernels.gram("matern52", hyp.kernel_params(), z, z)) + noise * np.eye(9)
    kq = np.asarray(jbo.kernels.gram("matern52", hyp.kernel_params(), q, z))
    ys, mu, sd = np.asarray(y), float(np.mean(np.asarray(y))), float(np.std(np.asarray(y), ddof=1))
    direct = mu + sd * (float(hyp.mean) + kq @ np.linalg.solve(K, (ys - mu) / sd - float(hyp.mean)))
    np.testing.assert_allclose(m, direct, rtol=1e-8)


@pytest.mark.extended
def test_paired_ucb_values_and_danskin_gradient():
    rng = np.random.default_rng(13)
    z = jnp.asarray(rng.uniform(size=(9, 3)))
    hyp = gp.default_params(3, 0.4, 1.0, 0.01)._replace(log_lengthscale=jnp.log(jnp.asarray([0.3, 0.5, 0.2])))
    post = gp.condition(data.from_arrays(z, jnp.asarray(rng.normal(size=9)), 12), hyp)
    cs = jnp.asarray(rng.uniform(size=(64, 1)))
    rows = lambda x: jnp.concatenate([jnp.broadcast_to(x, (64, 2)), cs], 1)  # noqa: E731
    x = jnp.asarray([0.3, 0.6])
    paired = sbo_kde.PairedUCB.build(post, cs, 2)
    np.testing.assert_allclose(paired(x, 1.5), sbo_kde.ucb(post, rows(x), 1.5), rtol=1e-12)
    np.testing.assert_allclose(
        jax.jacobian(lambda x: paired(x, 1.5))(x),
        jax.jacobian(lambda x: sbo_kde.ucb(post, rows(x), 1.5))(x),
        rtol=1e-9,
        atol=1e-12,
    )
    assert np.isclose(float(paired.min(x, 1.5)), float(jnp.min(sbo_kde.ucb(post, rows(x), 1.5))))
    g = jax.grad(lambda x: paired.min(x, 1.5))(x)
    eps = 1e-6
    fd = [
        (
            float(jnp.min(sbo_kde.ucb(post, rows(x + eps * e), 1.5)))
            - float(jnp.min(sbo_kde.ucb(post, rows(x - eps * e), 1.5)))
        )
        / (2 * eps)
        for e in jnp.eye(2)
    ]
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.extended
def test_sbo_methods_run_and_bad_input():
    p = C.problem("newsvendor")
    small = dict(
        num_initial=4,
        num_samples=32,
        num_inner=32,
        maximiser=dataclasses.replace(sbo_kde.PAPER_MAXIMISER, num_raw=32, num_starts=2, steps=5),
        hypers=dataclasses.replace(sbo_kde.PAPER_REFIT, steps=5),
    )
    tr = jbo.run_seeds(sbo_kde.SBO(method="drbo_kde", **small), p, key=jax.random.key(0), num_steps=7, num_seeds=2)
    assert tr.actions.shape == (2, 7, 1) and np.all(np.isfinite(np.asarray(tr.metrics["regret"])))
    assert np.all(np.asarray(tr.metrics["regret"]) >= -1e-5)
    with pytest.raises(ValueError, match="unknown SBO method"):
        sbo_kde.SBO(method="sbo")
    with pytest.raises(ValueError, match="oracle"):
        sbo_kde.SBO(method="sbo_oracle")
    with pytest.raises(ValueError, match="contextual"):
        jbo.run(sbo_kde.SBO(**small), jbo.problems.get("branin"), key=jax.random.key(0), num_steps=6)
    with pytest.raises(ValueError, match="unknown contextual problem"):
        C.problem("rosenbrock")


def test_screening_in_blocks_gives_the_same_run():
    """Maximiser(screen_block=b), which bounds the memory of an acquisition over many contexts, scores the
    raw points b at a time: the same SBO-KDE and MinimaxApprox runs to rounding as the one-pass screening
    (a block that does not divide the 32 raw points included)."""
    p = C.problem("ackley_4c")
    for method in ("sbo_kde", "minimax_approx"):
        runs = []
        for block in (None, 12):
            search = dataclasses.replace(sbo_kde.PAPER_MAXIMISER, num_raw=32, num_starts=2, steps=5, screen_block=block)
            alg = sbo_kde.SBO(
                method=method,
                num_initial=4,
                num_samples=16,
                num_inner=16,
                mmd_grid=16,
                maximiser=search,
                hypers=dataclasses.replace(sbo_kde.PAPER_REFIT, steps=5),
            )
            runs.append(jbo.run_seeds(alg, p, key=jax.random.key(1), num_steps=7, num_seeds=2))
        np.testing.assert_allclose(runs[1].actions, runs[0].actions, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(runs[1].metrics["regret"], runs[0].metrics["regret"], rtol=1e-10, atol=1e-12)


def _socp_reference(g, w_hat, M, delta):
    cons = [
        {"type": "eq", "fun": lambda w: w.sum() - 1},
        {"type": "ineq", "fun": lambda w: delta**2 - (w - w_hat) @ M @ (w - w_hat)},
    ]
    best = np.inf
    for start in (w_hat, np.full_like(w_hat, 1 / len(w_hat))):
        r = sopt.minimize(
            lambda w: w @ g,
            start,
            jac=lambda w: g,
            constraints=cons,
            bounds=[(0, 1)] * len(g),
            method="SLSQP",
            options={"ftol": 1e-12, "maxiter": 500},
        )
        if r.success:
            best = min(best, r.fun)
    return best


@pytest.mark.parametrize("delta", [0.05, 0.2, 5.0])
def test_mmd_worst_case_matches_a_generic_solver(delta):
    grid = sbo_kde.context_grid(12, 1)
    M = np.asarray(jbo.kernels.gram("matern52", jbo.kernels.KernelParams(jnp.array([0.3]), 1.5), grid, grid))
    rng = np.random.default_rng(14)
    g = rng.normal(size=12)
    w_hat = np.asarray(sbo_kde.snapped_weights(grid, jnp.asarray(rng.uniform(size=(7, 1))), jnp.ones(7, bool)))
    ours = float(sbo_kde.mmd_worst_case(jnp.asarray(g), jnp.asarray(w_hat), jnp.asarray(M), delta))
    ref = g.min() if delta == 5.0 else _socp_reference(g, w_hat, M, delta)
    assert ours <= w_hat @ g + 1e-9 and abs(ours - ref) < 1e-6 * (1 + abs(ref))
    # affine equivariance: the worst-case weights do not depend on the units of g
    shifted = float(sbo_kde.mmd_worst_case(jnp.asarray(3 * g + 5), jnp.asarray(w_hat), jnp.asarray(M), delta))
    assert np.isclose(shifted, 3 * ours + 5, rtol=1e-9, atol=1e-9)


def test_minimax_approx_limits_and_continuity():
    grid = sbo_kde.context_grid(16, 1)
    M = jbo.kernels.gram("matern52", jbo.kernels.KernelParams(jnp.array([0.3]), 1.0), grid, grid)
    g = jnp.asarray(np.random.default_rng(15).normal(size=16))
    w_hat = jnp.full(16, 1 / 16)
    f0 = float(w_hat @ g)
    assert np.isclose(float(sbo_kde.minimax_approx(g, w_hat, M, 0.0)), f0)
    assert np.isclose(float(sbo_kde.minimax_approx(g, w_hat, M, 100.0)), float(g.min()))
    deltas = jnp.linspace(0, 3, 3001)
    v = np.asarray(jax.vmap(lambda d: sbo_kde.minimax_approx(g, w_hat, M, d))(deltas))
    assert np.max(np.abs(np.diff(v))) < 1e-2  # continuous (no jumps at eps_l, eps_max)


def test_largest_eigenvalue_bound():
    grid = sbo_kde.context_grid(100, 1)
    for ls in (0.05, 0.2, 0.8):
        M = jbo.kernels.gram("matern52", jbo.kernels.KernelParams(jnp.array([ls]), 2.0), grid, grid)
        top = np.linalg.eigvalsh(np.asarray(M))[-1]
        est = float(sbo_kde.largest_eigenvalue(M))
        assert top <= est <= 1.03 * top
    A = np.random.default_rng(16).normal(size=(30, 30))
    P = jnp.asarray(A @ A.T)
    top = np.linalg.eigvalsh(np.asarray(P))[-1]
    assert top * 0.999 <= float(sbo_kde.largest_eigenvalue(P, 200)) <= 1.03 * top
    # mmd_scale: the same bound for M on zero-sum vectors, i.e. for P M P with P = I - 11'/n
    M = np.asarray(jbo.kernels.gram("matern52", jbo.kernels.KernelParams(jnp.array([0.2]), 2.0), grid, grid))
    proj = np.eye(len(M)) - 1.0 / len(M)
    top = np.linalg.eigvalsh(proj @ M @ proj)[-1]
    assert top <= float(sbo_kde.mmd_scale(jnp.asarray(M))) <= 1.03 * top


# ---------------------------------------------------------------- code_compat: the released code's baselines
def test_code_compat_reflected_inner_boxes():
    key, rng = jax.random.key(4), np.random.default_rng(4)
    ctx_np = rng.uniform(0.2, 0.7, size=(9, 2))
    ctx, mask = jnp.asarray(np.vstack([ctx_np, np.zeros((3, 2))])), jnp.arange(12) < 9
    lb = ctx_np.mean(0) - ctx_np.std(0, ddof=1)  # the box [lb, ub] = mean -+ unbiased std, width ub - lb
    width = 2 * ctx_np.std(0, ddof=1)
    inside = np.asarray(sbo_kde.StableOpt(64).box(key, ctx, mask, 9.0))
    reflected = np.asarray(sbo_kde.StableOpt(64, code_compat=True).box(key, ctx, mask, 9.0))
    assert np.all((inside >= lb - 1e-12) & (inside <= lb + width + 1e-12))
    assert np.all((reflected >= lb - width - 1e-12) & (reflected <= lb + 1e-12))  # [mean - 3 sd, mean - sd]
    np.testing.assert_allclose(reflected, 2 * lb - inside, atol=1e-12)  # the same points mirrored at lb
    unit = np.asarray(sbo_kde.DRBOKDE(8, 64).inner_points(key, 2))
    neg = np.asarray(sbo_kde.DRBOKDE(8, 64, code_compat=True).inner_points(key, 2))
    assert unit.min() >= 0 and unit.max() <= 1 and neg.min() >= -1 and neg.max() <= 0
    np.testing.assert_allclose(neg, -unit, atol=0)


class _Linear:
    """ucb values linear in a scalar x: v_m = a_m x + b_m at the samples, u_low = c x + d at the inner points."""

    def __init__(self, a, b):
        self.a, self.b = jnp.asarray(a), jnp.asarray(b)

    def __call__(self, x, beta):
        return self.a * x[0] + self.b

    def min(self, x, beta):
        return jnp.min(self(x, beta))


def test_code_compat_detaches_u_low():
    a, b = np.random.default_rng(5).normal(size=8), np.arange(8.0)  # x near 0: the order of v is that of b
    samples, inner = _Linear(a, b), _Linear([0.7], [-5.0])
    x, delta = jnp.asarray([0.01]), 0.6  # delta/2 = 0.3 of the mass = 2.4 of the 8 samples moves to u_low
    # closed form (spec 4.3): u* = v_(6), a = (v_1 + .. + v_5 + 3 v_6)/8 - 0.3 (v_6 - u_low)
    grad_v = (a[:5].sum() + 3 * a[5]) / 8 - 0.3 * a[5]
    value = (np.sum(a[:5] * 0.01 + b[:5]) + 3 * (a[5] * 0.01 + b[5])) / 8 - 0.3 * (a[5] * 0.01 + b[5] - (0.007 - 5))
    for compat, expected in ((False, grad_v + 0.3 * 0.7), (True, grad_v)):  # d u_low / dx = 0.7
        f = lambda x, c=compat: sbo_kde.DRBOKDE(code_compat=c).worst_case(samples, inner, x, 2.25, delta)  # noqa: E731
        got, grad = jax.jit(jax.value_and_grad(f))(x)
        assert np.isclose(float(got), value, rtol=1e-12)
        np.testing.assert_allclose(grad, [expected], rtol=1e-10)


def test_code_compat_diagonal_mmd_grid_and_gp_ucb_multiplier():
    axis = np.linspace(0, 1, 10)
    full = np.asarray(sbo_kde.context_grid(100, 2))
    diag = np.asarray(sbo_kde.context_grid(100, 2, diagonal=True))
    assert full.shape == (100, 2) and {tuple(r) for r in full.round(12)} == {
        (p, q) for p in axis.round(12) for q in axis.round(12)
    }
    np.testing.assert_allclose(diag, np.column_stack([axis, axis]), atol=1e-15)  # k = 10 points, all on the diagonal
    np.testing.assert_allclose(
        sbo_kde.context_grid(64, 1, diagonal=True), sbo_kde.context_grid(64, 1)
    )  # dc = 1: unchanged
    assert (
        sbo_kde.acquisition("drbo_mmd", code_compat=True).code_compat
        and not sbo_kde.acquisition("drbo_mmd").code_compat
    )
    mult = lambda m, cc: math.sqrt(sbo_kde.acquisition(m, code_compat=cc).default_params().beta)  # noqa: E731
    assert np.isclose(mult("gp_ucb", False), 1.5) and np.isclose(mult("gp_ucb", True), math.sqrt(1.5))
    assert all(np.isclose(mult(m, True), 1.5) for m in ("sbo_kde", "drbo_kde", "stableopt", "drbo_mmd"))
