"""UHE-BO (jbo.algorithms.uhe_bo, jbo.problems.uhe_bo) against independent truths: NumPy brute force,
scipy.stats, hand-computed EXP3 recursions, closed-form Gaussian moments, dense grids, and
padded == unpadded / vmapped == looped / bucketed == whole-buffer runs."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import jbo
from jbo import data, gp, kernels, parts
from jbo.algorithms import uhe_bo
from jbo.problems import synthetic

# tiny settings that still run every code path (compile time dominates)
TINY = dict(
    num_initial=4,
    refit=dataclasses.replace(uhe_bo.PAPER_REFIT, restarts=2, steps=3),
    maximiser=dataclasses.replace(uhe_bo.PAPER_MAXIMISER, num_raw=32, num_starts=2, steps=3),
)
# and tiny versions of the parts that have sizes of their own
TINY_PARTS = {
    "mcmc": dict(estimate=uhe_bo.HMC(num_warmup=3, num_samples=2, num_leapfrog=2)),
    "a_gp_ucb": dict(lengthscales=uhe_bo.ShrinkingLengthscales(grid_candidates=8)),
    "wdf": dict(lengthscales=uhe_bo.LengthscaleBound(grid_candidates=8)),
}


def _data(n=12, d=2, cap=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, d))
    y = np.sin(3 * x).sum(1) + 0.1 * rng.normal(size=n)
    return data.from_arrays(jnp.asarray(x), jnp.asarray(y), cap), x, y


# ---------------------------------------------------------------- pseudo data (spec 2.3, 8.5; tests 3)
def test_nearest_labels_match_numpy_brute_force_and_skip_padding():
    buf, x, y = _data(n=9, d=3, cap=14)
    # padding rows sit exactly on some query points: they must never be chosen
    xq = np.random.default_rng(1).uniform(size=(40, 3))
    bx = np.asarray(buf.x).copy()
    bx[9:] = xq[:5]
    idx = np.asarray(uhe_bo.nearest_labels(jnp.asarray(xq), jnp.asarray(bx), buf.mask))
    d2 = ((xq[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.testing.assert_array_equal(idx, d2.argmin(1))
    assert idx.max() < 9
    # ties go to the lowest index (D24)
    tie = uhe_bo.nearest_labels(
        jnp.array([[0.5, 0.5]]), jnp.array([[0.4, 0.5], [0.6, 0.5], [0.5, 0.4]]), jnp.ones(3, bool)
    )
    assert int(tie[0]) == 0


def test_pseudo_data_has_two_n_rows_labelled_by_nearest_neighbour():
    buf, x, y = _data(n=7, d=2, cap=10)
    pseudo = uhe_bo.pseudo_data(jax.random.key(3), buf, factor=2)
    assert pseudo.x.shape == (20, 2) and int(pseudo.mask.sum()) == 14 and int(pseudo.count) == 14
    xp = np.asarray(pseudo.x)[:14]
    want = y[((xp[:, None] - x[None]) ** 2).sum(-1).argmin(1)]
    np.testing.assert_allclose(np.asarray(pseudo.y)[:14], want, rtol=0, atol=0)
    assert np.all(np.asarray(pseudo.y)[14:] == 0)
    # a smaller bucket gives the same first rows (bucketing changes no number)
    small = uhe_bo.pseudo_data(jax.random.key(3), buf, factor=2, size=16)
    np.testing.assert_array_equal(np.asarray(small.x), np.asarray(pseudo.x)[:16])
    np.testing.assert_array_equal(np.asarray(small.y), np.asarray(pseudo.y)[:16])


@pytest.mark.extended
def test_pseudo_fit_equals_map_fit_when_the_pseudo_data_are_the_data():
    """Test 2 of 8.10: with x' = X the labels are y itself, and the pseudo loss (labels standardised by
    D's statistics, D9) is the MAP loss on D: the same fit, restart for restart."""
    buf, x, y = _data(n=12, d=2, cap=16)
    model = uhe_bo.paper_model()
    idx = np.asarray(uhe_bo.nearest_labels(buf.x, buf.x, buf.mask))[:12]
    np.testing.assert_array_equal(idx, np.arange(12))
    warm = gp.default_params(2, 0.3, 1.0, 1e-3)
    kw = dict(num_restarts=3, num_steps=10, learning_rate=0.05, method="adam")
    a = uhe_bo.fit_on(jax.random.key(0), buf, buf, model, warm, kw)
    b = uhe_bo.fit_map(jax.random.key(0), buf, model, warm, kw)
    for u, v in zip(a, b):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- priors, likelihood, HMC
def test_gamma_prior_with_jacobian_matches_scipy():
    """log p(phi) = log Gamma(theta; a = 1e-3, rate 10) + log theta for every hyper-parameter (spec 2.5)."""
    import dataclasses

    model = dataclasses.replace(uhe_bo.paper_model(), noise_floor=0.0)
    p = gp.GPParams(
        jnp.log(jnp.array([0.05, 0.7])), jnp.log(jnp.asarray(1.3)), jnp.log(jnp.asarray(2e-4)), jnp.zeros(())
    )
    vals = np.array([0.05, 0.7, 1.3, 2e-4])
    want = np.sum(scipy.stats.gamma.logpdf(vals, a=1e-3, scale=1 / 10.0) + np.log(vals))
    assert np.isclose(float(model.log_prior(p)), want, rtol=1e-12)
    # the effective density in phi is a*phi - b*exp(phi) + const
    const = 1e-3 * math.log(10.0) - math.lgamma(1e-3)
    assert np.isclose(want, np.sum(1e-3 * np.log(vals) - 10 * vals + const), rtol=1e-12)
    weak = dataclasses.replace(uhe_bo.paper_model("weak"), noise_floor=0.0)
    want_weak = np.sum(scipy.stats.gamma.logpdf(vals, a=1e-3, scale=1 / 0.1) + np.log(vals))
    assert np.isclose(float(weak.log_prior(p)), want_weak, rtol=1e-12)
    with pytest.raises(ValueError, match="unknown prior"):
        uhe_bo.paper_model("flat")


def test_log_posterior_padded_equals_unpadded_and_numpy():
    """Test 1 of 8.10 for the HMC target: padding adds nothing; the value equals a direct NumPy
    Gaussian log density of the standardised y under the Matern-5/2 kernel, plus the scipy prior."""
    buf, x, y = _data(n=10, d=2, cap=17)
    tight = data.from_arrays(buf.x[:10], buf.y[:10], 10)
    model = uhe_bo.paper_model()
    z = jnp.array([math.log(0.3), math.log(0.5), math.log(0.8), math.log(1e-3)])
    a, b = float(uhe_bo.log_posterior(model, buf)(z)), float(uhe_bo.log_posterior(model, tight)(z))
    assert np.isclose(a, b, rtol=1e-12)
    ys = (y - y.mean()) / y.std(ddof=1)
    r = np.sqrt((((x[:, None] - x[None]) / np.array([0.3, 0.5])) ** 2).sum(-1))
    K = 0.8 * (1 + math.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-math.sqrt(5) * r) + (1e-3 + 1e-8) * np.eye(10)
    lml = scipy.stats.multivariate_normal(np.zeros(10), K).logpdf(ys)
    vals = np.array([0.3, 0.5, 0.8, 1e-3 + 1e-8])
    prior = np.sum(scipy.stats.gamma.logpdf(vals, a=1e-3, scale=0.1) + np.log(vals))
    assert np.isclose(a, lml + prior, rtol=1e-9)
    assert float(uhe_bo.log_posterior(model, buf)(z.at[0].set(math.log(9.0)))) == -np.inf  # outside the box


def test_hmc_recovers_the_moments_of_a_gaussian():
    """blackjax HMC as used by the MCMC baseline, on a correlated 2-D Gaussian with known moments."""
    mu = jnp.array([0.5, -1.0])
    cov = jnp.array([[0.3, 0.1], [0.1, 0.2]])
    prec = jnp.linalg.inv(cov)
    logp = lambda z: -0.5 * (z - mu) @ prec @ (z - mu)  # noqa: E731
    chains = jax.jit(jax.vmap(lambda k: uhe_bo.hmc_samples(k, logp, jnp.zeros(2), 100, 400, 0.2, 8)))(
        jax.random.split(jax.random.key(0), 8)
    )
    s = np.asarray(chains).reshape(-1, 2)
    np.testing.assert_allclose(s.mean(0), mu, atol=0.06)
    np.testing.assert_allclose(np.cov(s.T), cov, atol=0.04)


def test_information_gain_matches_numpy():
    buf, x, y = _data(n=8, d=2, cap=12)
    model = uhe_bo.paper_model()
    th = gp.default_params(2, 0.3, 1.5, 1e-2)
    r = np.sqrt((((x[:, None] - x[None]) / 0.3) ** 2).sum(-1))
    K = 1.5 * (1 + math.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-math.sqrt(5) * r)
    want = 0.5 * np.linalg.slogdet(np.eye(8) + K / (1e-2 + 1e-8))[1]
    assert np.isclose(float(uhe_bo.information_gain(buf, model, th)), want, rtol=1e-10)


@pytest.mark.slow  # suite time: runs with --runslow
def test_hyperparameter_recovery_on_iid_gp_sample():
    """Test 5 of 8.10: 200 i.i.d. points of a Matern-5/2 RFF sample path with l* = 0.2: the MAP
    lengthscale (the paper's priors) is within 25%."""
    ff, w = kernels.prior_sample_path(jax.random.key(3), "matern52", kernels.KernelParams(jnp.full(1, 0.2)), 1, 2048)
    x = jax.random.uniform(jax.random.key(5), (200, 1))
    y = kernels.feature_map(ff, x) @ w
    buf = data.from_arrays(x, y, 200)
    th = uhe_bo.fit_map(
        jax.random.key(0),
        buf,
        uhe_bo.paper_model(),
        gp.default_params(1, 0.2, 1.0, 1e-3),
        dict(num_restarts=2, num_steps=30, method="lbfgs"),
    )
    ls = float(jnp.exp(th.log_lengthscale[0]))
    assert abs(ls / 0.2 - 1) < 0.25, ls


def test_ucb_gradient_is_finite_at_a_training_input():
    buf, x, y = _data(n=10, d=2, cap=12)
    post = gp.condition(buf, gp.default_params(2, 0.2, 1.0, 1e-6), uhe_bo.paper_model())
    g = jax.grad(lambda z: jbo.acquisitions.ucb(post, z, 1.96))(buf.x[3])
    assert np.all(np.isfinite(np.asarray(g)))


# ---------------------------------------------------------------- problems (test 6)
def test_deceptive_optimum_and_continuity_at_every_breakpoint():
    for n in (2, 3):
        prob = jbo.problems.get("deceptive", n=n)
        alpha = np.arange(1, n + 1) / (n + 1)
        assert np.isclose(float(prob.objective(jnp.asarray(alpha))), 1.0, atol=1e-12)
        grid = np.linspace(0, 1, 201)
        for i, a in enumerate(alpha):  # g_i is continuous at 4a/5, a, (1 + 4a)/5 and spans [0, 1]
            for b in (0.8 * a, a, (1 + 4 * a) / 5):
                lo, hi = synthetic.deceptive_g(jnp.array([b - 1e-9, b + 1e-9]), a)
                assert abs(float(lo) - float(hi)) < 1e-6, (n, i, b)
            g = np.asarray(synthetic.deceptive_g(jnp.asarray(grid), a))
            assert g.max() <= 1.0 + 1e-12 and g.min() >= -1e-12
            assert np.isclose(float(synthetic.deceptive_g(jnp.asarray(a), a)), 1.0)
            assert np.isclose(float(synthetic.deceptive_g(jnp.asarray(0.0), a)), 0.8)
            assert np.isclose(float(synthetic.deceptive_g(jnp.asarray(1.0), a)), 0.8)
    # the n = 2 corner local optima have F = 0.64; the dense maximum is the stated optimum
    prob = jbo.problems.get("deceptive", n=2)
    assert np.isclose(float(prob.objective(jnp.array([0.0, 0.0]))), 0.64)
    g = np.linspace(0, 1, 601)
    pts = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    assert np.asarray(prob.objective(jnp.asarray(pts))).max() <= 1.0 + 1e-12


def test_h1_optimum_and_plus_inside_switch():
    for inside in (False, True):
        prob = jbo.problems.get("h1", plus_inside=inside)
        assert np.isclose(prob.optimal_value, 2.0, atol=1e-6)
        pts = np.random.default_rng(0).uniform(-100, 100, size=(20000, 2))
        assert np.asarray(prob.objective(jnp.asarray(pts))).max() <= prob.optimal_value + 1e-9


# ---------------------------------------------------------------- the algorithm
def test_bad_configuration_raises_clear_errors():
    with pytest.raises(ValueError, match="UHE: schedule"):
        uhe_bo.UHE(schedule="paired")
    with pytest.raises(ValueError, match="UHE: estimate"):
        uhe_bo.UHE(estimate=uhe_bo.LengthscaleBound())
    with pytest.raises(ValueError, match="UHE: lengthscales"):
        uhe_bo.UHE(lengthscales=uhe_bo.RealData())
    with pytest.raises(ValueError, match="UHE: lengthscales must be None with estimate=HMC"):
        uhe_bo.make("mcmc", lengthscales=uhe_bo.LengthscaleBound())
    for bad, match in (
        (lambda: uhe_bo.HMC(num_samples=0), "HMC: num_samples"),
        (lambda: uhe_bo.HMC(num_warmup=-1), "HMC: num_warmup"),
        (lambda: uhe_bo.HMC(step_size=0.0), "HMC: step_size"),
        (lambda: uhe_bo.ShrinkingLengthscales(grid_candidates=0), "ShrinkingLengthscales: grid_candidates"),
        (lambda: uhe_bo.LengthscaleBound(ratio=1.0), "LengthscaleBound: ratio"),
        (lambda: uhe_bo.PseudoData(noise_refit="yes"), "PseudoData: noise_refit"),
    ):
        with pytest.raises(ValueError, match=match):
            bad()
    with pytest.raises(ValueError, match="num_initial"):
        uhe_bo.UHE(num_initial=1)
    with pytest.raises(ValueError, match="factor"):
        uhe_bo.UHE(factor=0)
    with pytest.raises(ValueError, match="unknown UHE method"):
        uhe_bo.make("ucb")
    with pytest.raises(ValueError, match="pairs"):
        jbo.run(uhe_bo.UHE(**TINY), jbo.problems.get("branin"), key=jax.random.key(0), num_steps=5)
    arms = jbo.spaces.FiniteArms(jnp.linspace(0, 1, 5)[:, None])
    with pytest.raises(ValueError, match="box"):
        uhe_bo.UHE(**TINY).init(jax.random.key(0), uhe_bo.UHEParams(), jbo.Spec(arms, 10))


def _hand_exp3(trace_info, obs, n0, T):
    """Replay Algorithm 1's bookkeeping in NumPy from the recorded arms, probabilities, observations."""
    arm, p0, gam, rew, rnd = (np.asarray(trace_info[k]) for k in ("arm", "p_random", "gamma", "reward", "random"))
    y = np.asarray(obs)
    lo, hi = y[:n0].min(), y[:n0].max()
    w = np.array([1.0, 1.0])
    for k in range(T - n0):
        t_paper = k + 1
        s = n0 + k
        if t_paper % 2 == 1:
            g = min(1.0, math.sqrt(4 * math.log(2) / ((math.e - 1) * t_paper)))
            p = (1 - g) * w / w.sum() + g / 2
            assert np.isclose(gam[s], g, rtol=1e-12) and np.isclose(p0[s], p[0], rtol=1e-10)
            assert rnd[s] == (arm[s] == 0)
        else:
            assert arm[s] == arm[s - 1] and not rnd[s]  # the even step repeats the arm, always BO
            r = (max(y[s], y[s - 1]) - lo) / (hi - lo)
            assert np.isclose(rew[s], r, rtol=1e-10)
            g_even = min(1.0, math.sqrt(4 * math.log(2) / ((math.e - 1) * t_paper)))
            a = arm[s]
            w[a] *= math.exp(g_even * r / (2 * p[a]))


@pytest.mark.extended
def test_uhe_bo_pairs_rewards_and_exp3_bookkeeping_match_a_hand_replay():
    prob = jbo.problems.get("branin")
    alg = uhe_bo.UHE(**TINY)
    T = 4 + 14  # the engine's segments hold 16, then 18 rows
    tr = jbo.run_seeds(alg, prob, key=jax.random.key(2), num_steps=T, num_seeds=3)
    for s in range(3):
        _hand_exp3({k: v[s] for k, v in tr.info._asdict().items()}, tr.observations[s], 4, T)
    assert np.all(np.isfinite(np.asarray(tr.metrics["simple_regret"])))
    # vmapped == looped, and the same key gives the same trace (test 7)
    one = jbo.run(alg, prob, key=jax.random.split(jax.random.key(2), 3)[1], num_steps=T)
    np.testing.assert_allclose(np.asarray(tr.actions[1]), np.asarray(one.actions), rtol=1e-8, atol=1e-10)
    again = jbo.run(alg, prob, key=jax.random.split(jax.random.key(2), 3)[1], num_steps=T)
    np.testing.assert_array_equal(np.asarray(one.actions), np.asarray(again.actions))
    # growing segments == the whole buffer every step
    assert alg.capacities(T) == (16, 18)
    whole = jbo.run(
        uhe_bo.UHE(growth=jbo.data.WHOLE, **TINY), prob, key=jax.random.split(jax.random.key(2), 3)[1], num_steps=T
    )
    np.testing.assert_allclose(np.asarray(whole.actions), np.asarray(one.actions), rtol=1e-6, atol=1e-8)


def test_methods_are_uhe_with_their_parts():
    """The registry's configurations (module docstring's table); make is a lookup of them."""
    want = {
        "uhe_bo": (uhe_bo.PairedEXP3(), uhe_bo.PseudoData(), None),
        "ra_bo": (uhe_bo.RandomThenBO(), uhe_bo.PseudoData(), None),
        "random_exp3": (uhe_bo.PairedEXP3(), uhe_bo.RealData(), None),
        "map": (uhe_bo.EveryStep(), uhe_bo.RealData(), None),
        "mcmc": (uhe_bo.EveryStep(), uhe_bo.HMC(), None),
        "a_gp_ucb": (uhe_bo.EveryStep(), uhe_bo.RealData(), uhe_bo.ShrinkingLengthscales()),
        "wdf": (uhe_bo.EveryStep(), uhe_bo.RealData(), uhe_bo.LengthscaleBound()),
        "portfolio": (uhe_bo.Hedge(), uhe_bo.RealData(), None),
    }
    assert tuple(want) == uhe_bo.METHODS
    for name, (schedule, estimate, lengthscales) in want.items():
        alg = uhe_bo.make(name, num_initial=5)
        assert (alg.schedule, alg.estimate, alg.lengthscales, alg.num_initial) == (schedule, estimate, lengthscales, 5)
        assert alg == jbo.algorithms.get(name if name == "uhe_bo" else f"uhe_bo:{name}", num_initial=5)
    assert uhe_bo.UHE() == uhe_bo.make("uhe_bo")  # the defaults are UHE-BO's parts
    assert uhe_bo.HMC() == uhe_bo.HMC(num_warmup=200, num_samples=10, step_size=0.05, num_leapfrog=20)
    assert (uhe_bo.ShrinkingLengthscales().largest, uhe_bo.LengthscaleBound().largest) == (100.0, 20.0)
    # a config file's tables (jbo.algorithms.get passes them on): {"kind": name, ...fields} or the name
    got = jbo.algorithms.get("uhe_bo:mcmc", estimate={"kind": "hmc", "num_warmup": 3}, lengthscales=None)
    assert got.estimate == uhe_bo.HMC(num_warmup=3) and got.schedule == uhe_bo.EveryStep()
    assert uhe_bo.UHE(schedule="hedge", estimate="real_data") == uhe_bo.make("portfolio")
    with pytest.raises(ValueError, match="UHE: lengthscales kind"):
        uhe_bo.UHE(lengthscales={"kind": "shrink"})


def test_bad_parts_are_named():
    for bad in (dict(growth=True), dict(refit=parts.FixedHypers()), dict(maximiser={"num_raw": 8})):
        with pytest.raises(ValueError, match=f"UHE: {next(iter(bad))}"):
            uhe_bo.UHE(**bad)
    assert isinstance(
        uhe_bo.make("random", growth=jbo.data.Growth(step=32)), uhe_bo.UHERandom
    )  # nothing grows: accepted


@pytest.mark.slow  # 17 s of CPU; the segments themselves are tested in test_growing
def test_bucket_step_runs_equal_the_whole_buffer():
    """Finer segments (growth step 4 at capacity 24: buffers of 16, 20, 24 rows, pseudo fits on 32,
    40, 48 points) play the run of the whole buffer every step."""
    fine_growth = dataclasses.replace(uhe_bo.GROWTH, step=4)
    assert uhe_bo.UHE(growth=fine_growth).capacities(24) == (16, 20, 24)
    prob = jbo.problems.get("branin")
    key = jax.random.key(5)
    fine = jbo.run(uhe_bo.UHE(growth=fine_growth, **TINY), prob, key=key, num_steps=24)
    whole = jbo.run(uhe_bo.UHE(growth=jbo.data.WHOLE, **TINY), prob, key=key, num_steps=24)
    np.testing.assert_allclose(np.asarray(fine.actions), np.asarray(whole.actions), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(np.asarray(fine.info.arm), np.asarray(whole.info.arm))


def test_exp3_two_step_hand_example():
    """One UHE-BO pair by hand: p = (1/2, 1/2) at t = 1; arm 0 earns r = 0.8 at t = 2 with
    gamma(2) = sqrt(4 ln 2 / (2 (e - 1))); at t = 3 gamma(3) mixes the new weights."""
    bandit = uhe_bo.UHE().schedule.bandit
    st = bandit.init(2)
    p = np.asarray(bandit.probabilities(st))
    np.testing.assert_allclose(p, [0.5, 0.5])
    st = bandit.update(st, 0, 0.8, jnp.asarray(p))
    g2 = math.sqrt(4 * math.log(2) / (2 * (math.e - 1)))
    w = np.array([math.exp(g2 * 0.8 / (2 * 0.5)), 1.0])
    g3 = math.sqrt(4 * math.log(2) / (3 * (math.e - 1)))
    want = (1 - g3) * w / w.sum() + g3 / 2
    got = np.asarray(bandit.probabilities(st))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isclose(got.sum(), 1.0) and got.min() >= g3 / 2


def test_ra_bo_alternates_random_and_bo_steps():
    alg = uhe_bo.make("ra_bo", **TINY)
    tr = jbo.run(alg, jbo.problems.get("branin"), key=jax.random.key(4), num_steps=4 + 6)
    np.testing.assert_array_equal(np.asarray(tr.info.random)[4:], [True, False] * 3)
    assert np.all(np.asarray(tr.info.p_random)[4:] == 1.0)


def _numpy_noise_loss(x, y, ls, outputscale, noise):
    """-(log N(y_std | 0, K + noise I) + log prior of the noise with its Jacobian) / n in NumPy and scipy:
    Matern-5/2 ARD, y standardised (ddof 1), Gamma(1e-3, rate 10) on the noise variance (+ log value),
    the noise floor 1e-8 of the paper's model added."""
    ys = (y - y.mean()) / y.std(ddof=1)
    r = np.sqrt((((x[:, None] - x[None]) / ls) ** 2).sum(-1))
    v = noise + 1e-8
    K = outputscale * (1 + math.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-math.sqrt(5) * r) + v * np.eye(len(y))
    lml = scipy.stats.multivariate_normal(np.zeros(len(y)), K).logpdf(ys)
    return -(lml + scipy.stats.gamma.logpdf(v, a=1e-3, scale=0.1) + math.log(v)) / len(y)


@pytest.mark.extended
def test_refit_noise_keeps_the_pseudo_fit_and_minimises_the_real_data_loss_in_the_noise():
    """noise_refit's σ_n²: the MAP loss on the real data in the noise alone, lengthscales and signal
    variance held at the pseudo fit's; against a bounded scalar minimisation of the NumPy loss."""
    import scipy.optimize

    buf, x, y = _data(n=12, d=2, cap=16)
    ls, out = np.array([0.3, 0.5]), 0.8
    theta = gp.GPParams(jnp.log(jnp.asarray(ls)), jnp.log(jnp.asarray(out)), jnp.log(jnp.asarray(0.04)), jnp.zeros(()))
    kw = dict(num_restarts=3, num_steps=400, learning_rate=0.05, method="adam")
    got = uhe_bo.refit_noise(jax.random.key(0), buf, uhe_bo.paper_model(), theta, jnp.log(jnp.asarray(1e-5)), kw)
    np.testing.assert_array_equal(np.asarray(got.log_lengthscale), np.asarray(theta.log_lengthscale))
    assert float(got.log_outputscale) == float(theta.log_outputscale) and float(got.mean) == 0.0
    opt = scipy.optimize.minimize_scalar(
        lambda u: _numpy_noise_loss(x, y, ls, out, math.exp(u)),
        bounds=(math.log(1e-6), 0.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert math.log(1e-6) + 2 < opt.x < -2  # an interior optimum (log 0.0019), away from the bounds 1e-6 and 1
    assert abs(float(got.log_noise) - opt.x) < 0.05
    assert _numpy_noise_loss(x, y, ls, out, math.exp(float(got.log_noise))) - opt.fun < 1e-5
    # the pseudo fit's noise (0.04) is not where the real data put it
    assert abs(math.log(0.04) - opt.x) > 0.5


@pytest.mark.extended  # refit_noise's loss in the default run
def test_noise_refit_changes_only_the_posterior_noise_of_the_first_bo_step():
    """At the first BO step the pseudo fit is the default run's (same keys and data): the recorded
    lengthscales and signal variance are equal, the noise variance is the refit's, not the pseudo
    fit's. Only the pseudo-data methods take the option."""
    prob = jbo.problems.get("branin")
    key = jax.random.key(6)
    base = jbo.run(uhe_bo.UHE(**TINY), prob, key=key, num_steps=4 + 2)
    refit = jbo.run(uhe_bo.UHE(estimate=uhe_bo.PseudoData(noise_refit=True), **TINY), prob, key=key, num_steps=4 + 2)
    s = 4 if not bool(base.info.random[4]) else 5  # the first BO step
    np.testing.assert_array_equal(np.asarray(refit.actions[:s]), np.asarray(base.actions[:s]))
    np.testing.assert_array_equal(np.asarray(refit.info.lengthscale[s]), np.asarray(base.info.lengthscale[s]))
    assert float(refit.info.outputscale[s]) == float(base.info.outputscale[s])
    assert float(refit.info.noise[s]) != float(base.info.noise[s])
    with pytest.raises(TypeError, match="noise_refit"):
        uhe_bo.RealData(noise_refit=True)  # the real-data fit has its own noise variance already
    assert uhe_bo.make("ra_bo", estimate=uhe_bo.PseudoData(noise_refit=True)).schedule == uhe_bo.RandomThenBO()


@pytest.mark.slow
@pytest.mark.parametrize("name", uhe_bo.NAMES)
def test_every_uhe_method_runs_vmapped_equals_looped(name):
    alg = uhe_bo.make(name, **({"num_initial": 4} if name == "random" else {**TINY, **TINY_PARTS.get(name, {})}))
    prob = jbo.problems.get("deceptive", n=2)
    tr = jbo.run_seeds(alg, prob, key=jax.random.key(1), num_steps=10, num_seeds=2)
    assert np.all(np.isfinite(np.asarray(tr.metrics["simple_regret"])))
    one = jbo.run(alg, prob, key=jax.random.split(jax.random.key(1), 2)[0], num_steps=10)
    np.testing.assert_allclose(np.asarray(tr.actions[0]), np.asarray(one.actions), rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- real-world replacements (spec 5.3)
def test_lr_objective_equals_a_numpy_replay_of_the_same_sgd():
    from jbo.problems import uhe_bo as pu

    x_tr, y_tr, x_te, y_te = pu.vehicle_split()
    alpha, eta = 10.0**-3, 10.0**-1
    W, b = np.zeros((18, 4)), np.zeros(4)
    Y = np.eye(4)[y_tr]

    def loss_grad(W, b, xs, ys):
        z = xs @ W + b
        z = z - z.max(1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        loss = -np.mean(np.sum(ys * np.log(p), 1)) + 0.5 * alpha * np.sum(W * W)
        return loss, xs.T @ (p - ys) / len(xs) + alpha * W, (p - ys).mean(0)

    best, stale, step = np.inf, 0, eta
    for _ in range(20):
        for i in range(len(y_tr) // 47):
            sl = slice(47 * i, 47 * (i + 1))
            _, gW, gb = loss_grad(W, b, x_tr[sl], Y[sl])
            W, b = W - step * gW, b - step * gb
        cur = loss_grad(W, b, x_tr, Y)[0]
        stale = 0 if cur < best else stale + 1
        best = min(best, cur)
        if stale >= 5:
            step, stale = step / 5, 0
    want = np.mean(np.argmax(x_te @ W + b, 1) == y_te)
    got = float(pu.lr_accuracy(jnp.array([-3.0, -1.0])))
    assert abs(got - want) < 1e-12 and 0.4 < got < 1.0
    prob = jbo.problems.get("uhe_bo:lr_vehicle_like")
    assert prob.dim == 2 and np.allclose(np.asarray(prob.bounds), [[-5, -5], [0, 0]])


def test_lunar_heuristic_controller_by_hand_and_objective_determinism():
    from jbo.problems import uhe_bo as pu

    w = np.arange(12) / 10.0
    s = np.array([0.1, 0.5, -0.2, -0.3, 0.05, 0.02, 0.0, 0.0])
    angle_targ = min(max(0.1 * 0.0 + -0.2 * 0.1, -0.2), 0.2)
    hover_targ = 0.3 * 0.1
    angle_todo = (angle_targ - 0.05) * 0.4 - 0.02 * 0.5
    hover_todo = (hover_targ - 0.5) * 0.6 - (-0.3) * 0.7
    want = (
        2
        if hover_todo > abs(angle_todo) and hover_todo > 1.0
        else (3 if angle_todo < -1.1 else (1 if angle_todo > 1.1 else 0))
    )
    assert pu.heuristic_action(s, w) == want
    legs = s.copy()
    legs[6] = 1.0  # a leg touches: angle_todo = w8 = 0.8, hover_todo = -s3 * w9 = 0.27 -> 0 (|0.8| > w11 = 1.1? no)
    assert pu.heuristic_action(legs, w) == 0
    with pytest.raises(ValueError, match="12 weights"):
        pu.lunar_objective(np.ones(3))
    pytest.importorskip("gymnasium")
    pytest.importorskip("Box2D")
    a = pu.lunar_objective(np.ones(12), seeds=range(2))
    assert a == pu.lunar_objective(np.ones(12), seeds=range(2)) and np.isfinite(a)
