"""BOKE paper: surrogate numerics, schedules, algorithms and problems against independent truths
(NumPy sums, closed forms, finite differences, the spec's reference values, dense search)."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import data, regression
from jbo.algorithms import boke
from jbo.problems import sprinkler as spr
from jbo.problems.boke import SUITE, TOY_OPTIMUM, toy


def _data8():
    rng = np.random.default_rng(0)
    return rng.uniform(size=(8, 2)), rng.normal(size=8)


X8, Y8 = _data8()  # constants: no test draws from a shared generator


def _buffer(n, capacity=12, x=X8, y=Y8):
    return data.from_arrays(jnp.asarray(x[:n]), jnp.asarray(y[:n]), capacity)


def _np_kernel(r2, kernel):
    return {"gaussian": np.exp(-0.5 * r2), "epanechnikov": np.maximum(1 - r2, 0.0), "uniform": (r2 <= 1).astype(float)}[
        kernel
    ]


@pytest.mark.parametrize("kernel", regression.KERNELS)
def test_kernel_regression_matches_numpy_and_padding(kernel):
    x, h, n = np.array([0.4, 0.55]), 0.35, 6
    r2 = np.sum((x - X8[:n]) ** 2, -1) / h**2
    w = _np_kernel(r2, kernel)
    buf = _buffer(n)
    m, log_w = regression.nadaraya_watson(jnp.asarray(x), buf.x, buf.y, buf.mask, h, kernel)
    if w.sum() > 0:
        assert np.isclose(float(m), np.sum(w * Y8[:n]) / w.sum())
        assert np.isclose(float(log_w), np.log(w.sum()))
    m2, lw2 = regression.nadaraya_watson(
        jnp.asarray(x), jnp.asarray(X8[:n]), jnp.asarray(Y8[:n]), jnp.ones(n, bool), h, kernel
    )
    assert np.isclose(float(m), float(m2)) and np.isclose(float(log_w), float(lw2))  # padded == unpadded


@pytest.mark.parametrize("kernel", ["epanechnikov", "uniform"])
def test_compact_kernel_outside_support_is_nearest_neighbour_and_grad_finite(kernel):
    x = jnp.array([0.95, 0.02])
    buf = _buffer(4)
    m, log_w = regression.nadaraya_watson(x, buf.x, buf.y, buf.mask, 0.01, kernel)
    nearest = np.argmin(np.sum((np.asarray(x) - X8[:4]) ** 2, -1))
    assert float(log_w) == -np.inf and np.isclose(float(m), Y8[nearest])
    # the acquisition stays finite and its gradient NaN-free; the fallback grows with d(x, X)
    g = jax.grad(lambda z: boke.ikr_ucb(z, buf, 0.01, 1.0, 1.0, kernel))(x)
    assert np.all(np.isfinite(np.asarray(g)))
    a1 = boke.log_sigma(x, buf, 0.01, kernel)
    a2 = boke.log_sigma(jnp.array([0.99, 0.0]), buf, 0.01, kernel)
    assert float(a1) >= boke.LOG_CAP and float(a2) > float(a1)


def test_density_is_at_least_one_at_data_points():
    """W_t(x_i) >= #[x_i] >= 1, so sigma_hat <= 1 (log_sigma <= 0) at every data point (also with repeats)."""
    x = np.concatenate([X8[:5], X8[:2]])
    buf = data.from_arrays(jnp.asarray(x), jnp.zeros(7), 10)
    for h in (1e-3, 0.1, 1.0):
        ls = jax.vmap(lambda z: boke.log_sigma(z, buf, h))(buf.x[:7])
        assert np.all(np.asarray(ls) <= 1e-12)
    ls_rep = boke.log_sigma(buf.x[0], buf, 1e-4)  # a twice-observed point: W -> 2 as h -> 0
    assert np.isclose(float(ls_rep), -0.5 * np.log(2.0))


def test_ikr_ucb_matches_direct_formula_padded_and_gradient():
    n, h, beta = 7, 0.3, 2.5
    buf = _buffer(n)
    x = jnp.array([0.3, 0.8])
    w = np.exp(-0.5 * np.sum((np.asarray(x) - X8[:n]) ** 2, -1) / h**2)
    expect = np.sum(w * Y8[:n]) / w.sum() + math.sqrt(beta) / math.sqrt(w.sum())
    assert np.isclose(float(boke.ikr_ucb(x, buf, h, beta)), expect)
    assert np.isclose(float(boke.ikr_ucb(x, _buffer(n, capacity=n), h, beta)), expect)
    g = np.asarray(jax.grad(lambda z: boke.ikr_ucb(z, buf, h, beta))(x))
    eps = 1e-6
    fd = [
        (float(boke.ikr_ucb(x.at[i].add(eps), buf, h, beta)) - float(boke.ikr_ucb(x.at[i].add(-eps), buf, h, beta)))
        / (2 * eps)
        for i in range(2)
    ]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_schedules_match_formulas():
    buf = _buffer(8)
    assert np.isclose(float(boke.bandwidth(buf, 0.3)), 0.3 * 8 ** (-1 / 6))
    sd = X8.std(0, ddof=1).mean()
    assert np.isclose(float(boke.bandwidth(buf, 0.3, "scott_data")), sd * 8 ** (-1 / 6))
    assert np.isclose(float(boke.beta_t(20.0, 0.7, 0.1)), 2 * 0.49 * np.log(2 * np.pi**2 * 400 / 0.3))
    auto = boke.noise_level(buf, boke.BOKEParams(), 5)
    assert np.isclose(float(auto), 0.1 * Y8[:5].std(ddof=1))
    assert np.isclose(float(boke.noise_level(buf, boke.BOKEParams(varsigma=0.3), 5)), 0.3)
    with pytest.raises(ValueError, match="bandwidth_rule"):
        boke.BOKE(bandwidth_rule="silver")
    with pytest.raises(ValueError, match="regression kernel"):
        boke.BOKE(kernel="laplace")


def test_arm_statistics_and_distinct_count_match_numpy():
    x = np.concatenate([X8[:5], X8[1:3]])
    y = np.random.default_rng(40).normal(size=7)
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), 11)
    m, log_w = boke.arm_statistics(buf, 0.4)
    K = np.exp(-0.5 * np.sum((x[:, None] - x[None]) ** 2, -1) / 0.16)
    np.testing.assert_allclose(np.asarray(m)[:7], K @ y / K.sum(1))
    np.testing.assert_allclose(np.asarray(log_w)[:7], np.log(K.sum(1)))
    assert int(boke.count_distinct(buf)) == len(np.unique(x, axis=0)) == 5


def test_kernel_radius_and_ball_projection():
    for kernel in regression.KERNELS:
        rho = float(boke.kernel_radius(0.2, 0.6, kernel))
        psi = float(jnp.exp(regression.log_psi(jnp.asarray((rho / 0.2) ** 2 * (1 - 1e-9)), kernel)))
        assert psi >= 0.6 - 1e-6 if kernel != "uniform" else psi == 1.0
    c = jnp.array([0.05, 0.5])
    proj = boke.ball_box_projection(c, 0.1)
    for p in np.random.default_rng(41).uniform(-1, 2, size=(20, 2)):
        q = np.asarray(proj(jnp.asarray(p)))
        assert np.all(q >= 0) and np.all(q <= 1) and np.linalg.norm(q - np.asarray(c)) <= 0.1 + 1e-9


# ---------------------------------------------------------------- algorithms in the engine
SMALL = dict(maximiser=jbo.parts.Maximiser(num_raw_per_dim=64, num_starts=3, steps=10, screen_data=True))
PROBLEM = jbo.problems.get("branin")


@pytest.mark.extended
def test_boke_plus_with_p_one_equals_boke():
    key = jax.random.key(3)
    a = jbo.run(boke.BOKE(num_initial=4, **SMALL), PROBLEM, key=key, num_steps=12, params=boke.BOKEParams())
    b = jbo.run(
        boke.BOKE(num_initial=4, plus=True, **SMALL), PROBLEM, key=key, num_steps=12, params=boke.BOKEPlusParams(p=1.0)
    )
    np.testing.assert_array_equal(np.asarray(a.actions), np.asarray(b.actions))
    assert int(b.final_state.exploit_steps) == 0
    c = jbo.run(
        boke.BOKE(num_initial=4, plus=True, **SMALL), PROBLEM, key=key, num_steps=12, params=boke.BOKEPlusParams(p=0.0)
    )
    assert int(c.final_state.exploit_steps) == 8


@pytest.mark.extended  # vmapped == looped on GP-UCB: test_exactness
def test_boke_seeds_vmapped_equal_looped():
    alg = boke.BOKE(num_initial=4, plus=True, **SMALL)
    tr = jbo.run_seeds(alg, PROBLEM, key=jax.random.key(0), num_steps=9, num_seeds=3)
    for i, k in enumerate(jax.random.split(jax.random.key(0), 3)):
        one = jbo.run(alg, PROBLEM, key=k, num_steps=9)
        np.testing.assert_allclose(np.asarray(tr.actions[i]), np.asarray(one.actions), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "alg, params",
    [
        (boke.BOKE(num_initial=4, bandwidth_rule="scott_data", **SMALL), boke.BOKEParams()),
        pytest.param(boke.BOKE(num_initial=4, plus=True, **SMALL), boke.BOKEPlusParams(), marks=pytest.mark.extended),
        pytest.param(boke.KRUCB(num_initial=4, **SMALL), boke.KRUCBParams(alpha=0.8), marks=pytest.mark.extended),
    ],
)
def test_growing_buffer_equals_whole_buffer(alg, params):
    """Kernel regression reads only the mask: a buffer grown in segments (6, 9, then 14 rows) gives the
    whole buffer's picks and values."""
    key = jax.random.key(5)
    whole = jbo.run(alg, PROBLEM, key=key, num_steps=14, params=params)
    grown_alg = dataclasses.replace(alg, growth=jbo.data.Growth(sizes=(6, 9)))
    assert grown_alg.capacities(14) == (6, 9, 14)
    grown = jbo.run(grown_alg, PROBLEM, key=key, num_steps=14, params=params)
    np.testing.assert_allclose(np.asarray(grown.actions), np.asarray(whole.actions), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(grown.observations), np.asarray(whole.observations), rtol=1e-10)
    with pytest.raises(ValueError, match="growth"):
        boke.BOKE(growth=(9, 6))


def test_boke_without_exploration_exploits_the_best_point():
    """No exploration term (BOKE+ with p = 0, i.e. beta = 0) and a small bandwidth: the chosen point's
    KR mean is ~ max_i y_i (spec 10.7.5)."""
    alg = boke.BOKE(num_initial=8, plus=True, **SMALL)
    params = boke.BOKEPlusParams(p=0.0, bandwidth_scale=0.02)
    tr = jbo.run(alg, PROBLEM, key=jax.random.key(1), num_steps=9, params=params)
    buf = data.from_arrays(tr.actions[:8], tr.observations[:8], 8)
    h = boke.bandwidth(buf, 0.02)
    m, _ = regression.nadaraya_watson(tr.actions[8], buf.x, buf.y, buf.mask, h)
    assert np.isclose(float(m), float(jnp.max(tr.observations[:8])), rtol=1e-6)


@pytest.mark.extended
def test_kr_ucb_widening_limits():
    """alpha -> 0: never widens, only re-samples design points; alpha = 1: widens every step."""
    alg = boke.KRUCB(num_initial=5, **SMALL)
    key = jax.random.key(2)
    never = jbo.run(alg, PROBLEM, key=key, num_steps=13, params=boke.KRUCBParams(alpha=1e-9))
    assert int(never.final_state.exploit_steps) == 8
    design = np.asarray(never.actions[:5])
    for a in np.asarray(never.actions[5:]):
        assert np.any(np.all(design == a, axis=1))
    always = jbo.run(alg, PROBLEM, key=key, num_steps=13, params=boke.KRUCBParams(alpha=1.0))
    assert int(always.final_state.exploit_steps) == 0
    assert len(np.unique(np.asarray(always.actions), axis=0)) == 13


def test_density_exploration_fill_distance_tracks_the_bandwidth():
    """DE's fill distance at d = 2 decays between the bandwidth rate t^(-1/(d+4)) and the covering rate t^(-1/d).

    Tracker defect "the test wants a slope in (-0.8, -0.3), the Fig 3 log measures -0.289": the log is right
    and the old test's claim (spec 10.7 item 6: "slope ~ -1/d") was wrong; the two differed only in the fit
    window. The old test fitted t in {8, 16, 32, 64} of one seed: -0.36 (key 0); the committed 100-seed means
    give -0.425 over t in [8, 49] but -0.289 over the script's window t in [10, 200] (-0.227 over [34, 200]).
    Rerunning this test's own computation (101^2 grid, SMALL optimiser) over the script's window gives the
    log's number: -0.283 (mean of 8 seeds; -0.289 with the script's optimiser settings), so neither the probe
    set, the optimiser budget nor the seeds explain the gap. The local slope flattens as t grows because DE
    only sees the design through W_t, a kernel sum at the Scott bandwidth h_t = c_h t^(-1/(d+4)): holes
    narrower than ~h_t barely lower W_t, so the fill distance settles at the order of h_t (Thm 4.4(a) /
    Cor 4.8: every x ends up within O(h) of the queries). In the committed CSV, fill / h_t is ~0.78 for all
    t in [12, 200] at d = 1 (slope -0.181 vs -1/5) and falls 1.67 -> 1.14 over t in [12, 200] at d = 2. So
    the asymptotic slope is -1/(d+4) = -1/6, not -1/d = -1/2 (the paper claims t^(-1/d) only for GP
    exploration; no design can beat the covering rate t^(-1/d)). Over the script's window the slope lies
    strictly between the two rates.
    """
    d, T = 2, 200
    alg = boke.DensityExploration(**SMALL)
    prob = jbo.problems.from_function(lambda x: jnp.sum(x), [[0.0, 0.0], [1.0, 1.0]])
    pts = np.asarray(jbo.run(alg, prob, key=jax.random.key(0), num_steps=T).actions)
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 101), np.linspace(0, 1, 101)), -1).reshape(-1, 2)  # incl. corners
    fill = np.minimum.accumulate(np.sqrt(((grid[:, None] - pts[None]) ** 2).sum(-1)), axis=1).max(0)  # h(X_t), t=1..T
    ts = np.unique(np.round(np.geomspace(1, T, 16)).astype(int))  # the script's t grid ...
    ts = ts[ts >= 10]  # ... and its fit window [10, T]: 12, 17, ..., 200
    f = fill[ts - 1]
    slope = np.polyfit(np.log(ts), np.log(f), 1)[0]  # key 0: -0.264; keys 0-7: -0.255..-0.298; Fig 3 log: -0.289
    assert -1.0 / d < slope < -1.0 / (d + 4), slope
    # fill / h_t; key 0: 1.52 (t = 12) -> 1.07 (t = 200); keys 0-7 in [1.07, 1.76]
    ratio = f / (boke.SCOTT_UNIFORM * ts ** (-1.0 / (d + 4)))
    assert np.all((0.8 < ratio) & (ratio < 2.0)), ratio
    early = np.polyfit(np.log(ts[ts <= 49]), np.log(f[ts <= 49]), 1)[0]  # key 0: -0.34 (keys 0-7: -0.31..-0.46)
    late = np.polyfit(np.log(ts[ts >= 49]), np.log(f[ts >= 49]), 1)[0]  # key 0: -0.24 (keys 0-7: -0.15..-0.24)
    assert early < late, (early, late)  # the slope flattens towards -1/(d+4): why the fit window matters


def test_paper_gp_matches_direct_solve():
    """The GP-UCB baseline: RBF, l = 0.5 sqrt(d/6), zero mean on standardised y, sigma^2 = s_eps^2/std(y)^2."""
    n, noise_std = 6, 0.3
    alg = boke.PaperGP(num_initial=2)
    buf = _buffer(n)
    state = alg.init(None, alg.default_params(), jbo.engine.box_spec(2, 12))._replace(buffer=buf)
    params = jbo.replace_params(alg.default_params(), noise_std=noise_std)
    hyp = alg.fitted(None, state, params)
    post = jbo.gp.condition(buf, hyp, "se")
    x = np.array([0.2, 0.7])
    mu, sd = Y8[:n].mean(), Y8[:n].std(ddof=1)
    ls = 0.5 * math.sqrt(2 / 6)
    k = lambda a, b: np.exp(-0.5 * np.sum((a[:, None] - b[None]) ** 2, -1) / ls**2)  # noqa: E731
    K = k(X8[:n], X8[:n]) + ((noise_std / sd) ** 2 + alg.model.noise_floor) * np.eye(n)
    kx = k(x[None], X8[:n])[0]
    mean = mu + sd * kx @ np.linalg.solve(K, (Y8[:n] - mu) / sd)
    var = sd**2 * (1 - kx @ np.linalg.solve(K, kx))
    m, v = jbo.gp.predict(post, jnp.asarray(x))
    assert np.isclose(float(m), mean) and np.isclose(float(v), var)


def test_boke_registry_and_bad_input():
    for name in ("boke", "boke_plus", "kr_ucb", "density_exploration", "boke_gp_ucb", "boke_gp_std"):
        assert isinstance(jbo.algorithms.get(name), jbo.Algorithm)
    with pytest.raises(ValueError, match="num_initial"):
        boke.BOKE(num_initial=0)
    with pytest.raises(ValueError, match="smaller than the initial design"):
        jbo.run(boke.BOKE(num_initial=10), PROBLEM, key=jax.random.key(0), num_steps=5)


# ---------------------------------------------------------------- problems
def test_toy_optimum_by_dense_search():
    p = toy()
    xs = np.linspace(0, 1, 200001)
    f = np.asarray(jax.vmap(p.objective)(jnp.asarray(xs)[:, None]))
    assert np.isclose(xs[np.argmax(f)], TOY_OPTIMUM[0], atol=1e-5)
    assert np.isclose(f.max(), TOY_OPTIMUM[1], atol=1e-6) and np.isclose(float(p.objective(jnp.array([0.0]))), -1.0)


def test_suite_noise_levels_match_uniform_sd():
    """sigma_eps = 0.1 SD_U(g): SD_U from the spec's table (4e5 uniform points, printed to 3-4 digits),
    checked by Monte Carlo (2e5 points). The sd of a sample sd is sd sqrt((kurtosis - 1) / (4 n)), the
    spec's has half our variance; tolerance 5 sds of the difference plus half the last printed digit.
    Measured differences: 0.6 to 2.2 of our sds (forrester -0.020, six_hump_camel +0.067, hartmann3 -0.0035)."""
    n = 200_000
    for name, b in SUITE.items():
        p = b.make()
        u = jax.random.uniform(jax.random.key(0), (n, p.dim))
        v = np.asarray(jax.vmap(p.objective_unit)(u))
        sd = v.std()
        se = sd * math.sqrt((np.mean((v - v.mean()) ** 4) / sd**4 - 1) / (4 * n))
        half_digit = 0.5 * 10.0 ** -len(repr(b.sd_u).split(".")[1])
        assert abs(sd - b.sd_u) < 5 * se * math.sqrt(1.5) + half_digit, (name, sd, b.sd_u, se)
        assert np.isclose(b.problem(True).noise_std, 0.1 * b.sd_u)


def test_sprinkler_reference_values_and_optimum():
    out = np.asarray(spr.sprinkler_outputs(jnp.array([33, 18, 2e-6, 0.18, 0.015, 0.0199, 1.54, 7.5])))
    np.testing.assert_allclose(out, [4.218397, 5.321142, 3.124046], atol=5e-7)
    p = jbo.problems.get("sprinkler")
    assert abs(float(p.objective(p.optimizer)) - p.optimal_value) < 1e-9  # our global search (docs/papers/boke.md)
    n = 2000
    u = jax.random.uniform(jax.random.key(1), (n, 8))
    vals = np.asarray(jax.vmap(p.objective_unit)(u))
    assert vals.max() < p.optimal_value
    # spec: mean 4.27 and SD 1.86 over 5000 uniform inputs. Standard errors of the two means' difference
    # sd sqrt(1/n + 1/5000) (0.050 here), of the SDs' sd sqrt((kurtosis - 1) / 4 (1/n + 1/5000)); 5 of
    # them plus half the last printed digit. Measured: mean 4.240, SD 1.877.
    sd = vals.std()
    assert abs(vals.mean() - 4.27) < 5 * sd * math.sqrt(1 / n + 1 / 5000) + 0.005
    kurt = np.mean((vals - vals.mean()) ** 4) / sd**4
    assert abs(sd - 1.86) < 5 * sd * math.sqrt((kurt - 1) / 4 * (1 / n + 1 / 5000)) + 0.005
    with pytest.raises(ValueError, match="output"):
        jbo.problems.get("sprinkler", output="consumption")


def test_hpo_decoding_and_cv_objective():
    from jbo.problems import hpo

    lo = hpo.decode(hpo.RF_SPACE, np.zeros(5))
    hi = hpo.decode(hpo.RF_SPACE, np.ones(5))
    assert (lo["n_estimators"], lo["max_depth"], lo["max_features"]) == (10, 2, 0.1)
    assert (hi["n_estimators"], hi["max_depth"], hi["min_samples_split"], hi["max_features"]) == (200, 30, 20, 1.0)
    assert hpo.decode(hpo.RF_SPACE, np.full(5, 0.5))["max_depth"] == int(np.floor(2 + 0.5 * 29))
    with pytest.raises(ValueError, match="shape"):
        hpo.decode(hpo.XGB_SPACE, np.zeros(5))
    with pytest.raises(ValueError, match="unknown dataset"):
        hpo.load_dataset("california")
    pytest.importorskip("sklearn")
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.metrics import r2_score
    from sklearn.model_selection import KFold

    bounds, f = hpo.cv_objective("rf", "diabetes")
    u = np.array([0.0, 0.2, 0.5, 0.5, 0.0])
    X, y = hpo.load_dataset("diabetes")
    scores = []
    for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
        model = RandomForestRegressor(random_state=0, **hpo.decode(hpo.RF_SPACE, u)).fit(X[tr], y[tr])
        scores.append(r2_score(y[te], model.predict(X[te])))
    assert bounds.shape == (2, 5) and np.isclose(f(u), np.mean(scores))
