import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo  # noqa: F401  (enables float64; must come before the other jax users)
from jbo import bandits as bd

E1 = math.e - 1.0


# ---------------------------------------------------------------- NumPy references (independent of jbo)
def np_softmax(v):
    v = np.asarray(v, dtype=np.float64)
    z = np.exp(v - v.max())
    return z / z.sum()


def np_logsumexp(v):
    v = np.asarray(v, dtype=np.float64)
    m = v.max()
    return m + np.log(np.exp(v - m).sum())


def uhe_gamma(t):
    """Algorithm 1, line 5, with D5: gamma(t) = min(1, sqrt(4 ln 2 / ((e - 1) t)))."""
    return min(1.0, math.sqrt(4.0 * math.log(2.0) / (E1 * t)))


def portfolio_gamma(t):
    """Spec 4.3 / D17: gamma_t = min(1, sqrt(2 ln 2 / ((e - 1) t)))."""
    return min(1.0, math.sqrt(2.0 * math.log(2.0) / (E1 * t)))


def state_from(log_w, count=0):
    log_w = np.asarray(log_w, dtype=np.float64)
    return bd.BanditState(jnp.asarray(log_w - np_logsumexp(log_w)), jnp.asarray(count, dtype=jnp.int32))


# ---------------------------------------------------------------- EXP3
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("gamma", [None, 0.1, 0.7])
def test_exp3_equal_weights_give_uniform(k, gamma):
    b = bd.exp3(gamma)
    s = b.init(k)
    assert s.log_weights.dtype == jnp.float64 and s.log_weights.shape == (k,)
    assert s.count.dtype == jnp.int32 and int(s.count) == 0
    np.testing.assert_allclose(float(np_logsumexp(np.asarray(s.log_weights))), 0.0, atol=1e-15)
    np.testing.assert_allclose(np.asarray(b.probabilities(s)), np.full(k, 1.0 / k), rtol=1e-14)


@pytest.mark.parametrize("gamma", [None, 0.05, 0.3])
def test_exp3_probabilities_sum_floor_and_formula(gamma):
    k, count = 4, 3
    log_w = np.array([2.0, -5.0, 0.3, -30.0])
    s = state_from(log_w, count)
    p = np.asarray(bd.exp3(gamma).probabilities(s))
    g = gamma if gamma is not None else min(1.0, math.sqrt(k * math.log(k) / (E1 * (count + 1))))
    np.testing.assert_allclose(p.sum(), 1.0, atol=1e-14)
    assert p.min() >= g / k - 1e-15
    np.testing.assert_allclose(p, (1 - g) * np_softmax(log_w) + g / k, rtol=1e-13)


def test_anytime_schedule_values():
    for t in [1, 2, 3, 7, 10, 100]:
        np.testing.assert_allclose(float(bd.anytime_gamma(2, t)), portfolio_gamma(t), rtol=1e-14)
        np.testing.assert_allclose(
            float(bd.anytime_gamma(3, t)), min(1.0, math.sqrt(3 * math.log(3) / (E1 * t))), rtol=1e-14
        )
    assert float(bd.anytime_gamma(1, 5)) == 0.0
    # spec 2.2 note: gamma(1) ~ 1.27 before clipping, gamma(2) ~ 0.90
    assert math.sqrt(4 * math.log(2) / E1) > 1.2 and abs(uhe_gamma(2) - 0.90) < 0.005
    for c in [0, 1, 2, 9, 49]:
        # UHE-BO (two evaluations per round): p at odd t = 2c + 1, update at even t = 2c + 2
        gd, gu = bd.exp3_gammas(jnp.int32(c), 2, None, evals_per_round=2)
        np.testing.assert_allclose([float(gd), float(gu)], [uhe_gamma(2 * c + 1), uhe_gamma(2 * c + 2)], rtol=1e-14)
        # Portfolio (one evaluation per round): t = c + 1 for both
        gd, gu = bd.exp3_gammas(jnp.int32(c), 2, None, evals_per_round=1)
        np.testing.assert_allclose([float(gd), float(gu)], [portfolio_gamma(c + 1)] * 2, rtol=1e-14)
    gd, gu = bd.exp3_gammas(jnp.int32(4), 2, 0.25, evals_per_round=2)
    assert float(gd) == float(gu) == 0.25


def test_exp3_one_update_matches_hand_computation():
    # UHE-BO first round: t = 1 (odd) gives gamma = min(1, 1.27) = 1 -> p = (1/2, 1/2);
    # t = 2 (even): gamma = sqrt(4 ln2 / (2 (e - 1))) = 0.898215..., arm 2 (index 1) gets reward 0.7.
    b = bd.exp3(evals_per_round=2)
    s0 = b.init(2)
    p = b.probabilities(s0)
    np.testing.assert_allclose(np.asarray(p), [0.5, 0.5], rtol=1e-15)
    s1 = b.update(s0, 1, 0.7, p)
    g2 = math.sqrt(2.0 * math.log(2.0) / E1)
    assert abs(g2 - 0.898215) < 1e-6
    w = np.array([1.0, math.exp(g2 * 0.7 / (2 * 0.5))])  # omega_2 = omega_0 * exp(gamma r / (2 p))
    np.testing.assert_allclose(np.asarray(s1.log_weights), np.log(w / w.sum()), rtol=1e-14)
    assert int(s1.count) == 1
    # next round decides at t = 3
    g3 = uhe_gamma(3)
    np.testing.assert_allclose(np.asarray(b.probabilities(s1)), (1 - g3) * w / w.sum() + g3 / 2, rtol=1e-14)
    # omitting p recomputes it from the state (same value here)
    np.testing.assert_allclose(np.asarray(b.update(s0, 1, 0.7).log_weights), np.asarray(s1.log_weights), rtol=1e-14)


def _np_exp3_run(k, arms, rewards, gamma_decide, gamma_update):
    """Auer et al. EXP3 with plain (unnormalised) weights: w_i <- w_i exp(gamma r / (K p_i)) for the played arm."""
    w = np.ones(k)
    ps, logs = [], []
    for r_idx, (a, r) in enumerate(zip(arms, rewards)):
        gd = gamma_decide(r_idx)
        p = (1 - gd) * w / w.sum() + gd / k
        w = w.copy()
        w[a] *= math.exp(gamma_update(r_idx) * r / (k * p[a]))
        ps.append(p)
        logs.append(np.log(w / w.sum()))
    return np.array(ps), np.array(logs)


@pytest.mark.parametrize("case", ["uhe", "portfolio", "const3"])
def test_exp3_recursion_matches_numpy(case):
    rng = np.random.default_rng(11)
    n = 12
    if case == "uhe":
        k, b = 2, bd.exp3(evals_per_round=2)
        gdec, gupd = (lambda c: uhe_gamma(2 * c + 1)), (lambda c: uhe_gamma(2 * c + 2))
    elif case == "portfolio":
        k, b = 2, bd.exp3()
        gdec = gupd = lambda c: portfolio_gamma(c + 1)
    else:
        k, b = 3, bd.exp3(0.2)
        gdec = gupd = lambda c: 0.2
    arms = rng.integers(0, k, size=n)
    rewards = rng.uniform(-0.2, 1.5, size=n)  # D23: scaled rewards, not clipped
    ps_ref, logs_ref = _np_exp3_run(k, arms, rewards, gdec, gupd)
    s = b.init(k)
    for i in range(n):
        p = b.probabilities(s)
        np.testing.assert_allclose(np.asarray(p), ps_ref[i], rtol=1e-12)
        s = b.update(s, int(arms[i]), float(rewards[i]), p)
        np.testing.assert_allclose(np.asarray(s.log_weights), logs_ref[i], rtol=1e-12, atol=1e-13)
    assert int(s.count) == n


def test_exp3_callable_gamma_uses_round_clock():
    b = bd.exp3(lambda g: 0.5 / g)
    s = state_from([0.0, 1.0], count=2)
    p = np.asarray(b.probabilities(s))
    g = 0.5 / 3  # clock g = count + 1 for one evaluation per round
    np.testing.assert_allclose(p, (1 - g) * np_softmax([0.0, 1.0]) + g / 2, rtol=1e-14)
    b2 = bd.exp3(lambda g: 0.5 / g, evals_per_round=2)
    s2 = b2.update(s, 0, 1.0, jnp.asarray(p))
    lw = np.log(np_softmax([0.0, 1.0]))
    lw[0] += (0.5 / 3) * 1.0 / (2 * p[0])  # update clock g = count + 1 = 3
    np.testing.assert_allclose(np.asarray(s2.log_weights), lw - np_logsumexp(lw), rtol=1e-13)


def test_exp3_large_rewards_stay_finite():
    gamma, k = 0.1, 2
    b = bd.exp3(gamma)
    s = b.init(k)
    ref = np.log(np.full(k, 0.5))
    for i in range(40):
        a = 0 if i < 20 else 1  # push arm 0 up, then give huge rewards to the now unlikely arm 1
        p = b.probabilities(s)
        p_np = (1 - gamma) * np_softmax(ref) + gamma / k
        np.testing.assert_allclose(np.asarray(p), p_np, rtol=1e-12)
        s = b.update(s, a, 1e3, p)
        ref[a] += gamma * 1e3 / (k * p_np[a])
        ref = ref - np_logsumexp(ref)
        lw = np.asarray(s.log_weights)
        assert np.all(np.isfinite(lw)) and abs(np_logsumexp(lw)) < 1e-12
        np.testing.assert_allclose(lw, ref, rtol=1e-12)
    # the plain-weight recursion overflows here: exp of a step of gamma * 1e3 / (2 * 0.05) = 1000
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.exp(gamma * 1e3 / (k * gamma / k)))
    p = np.asarray(b.probabilities(s))
    assert np.all(np.isfinite(p)) and abs(p.sum() - 1) < 1e-14 and p.min() >= gamma / k - 1e-15


def test_exp3_max_reward_clips():
    b, bc = bd.exp3(0.2), bd.exp3(0.2, max_reward=5.0)
    s = b.init(2)
    clipped, at_cap = bc.update(s, 1, 10.0), b.update(s, 1, 5.0)
    np.testing.assert_allclose(np.asarray(clipped.log_weights), np.asarray(at_cap.log_weights))
    np.testing.assert_allclose(np.asarray(bc.update(s, 1, -1.0).log_weights), np.asarray(s.log_weights))


# ---------------------------------------------------------------- Hedge
def test_hedge_matches_numpy_softmax_of_cumulative_gains():
    rng = np.random.default_rng(5)
    eta, k, n = 0.7, 4, 8
    gains = rng.normal(size=(n, k)) * 3.0
    b = bd.hedge(eta)
    s = b.init(k)
    np.testing.assert_allclose(np.asarray(b.probabilities(s)), np.full(k, 0.25), rtol=1e-15)
    for i in range(n):
        s = b.update(s, 0, jnp.asarray(gains[i]), None)
        G = gains[: i + 1].sum(axis=0)
        z = np.exp(eta * G - (eta * G).max())
        np.testing.assert_allclose(np.asarray(b.probabilities(s)), z / z.sum(), rtol=1e-12)
        assert abs(np_logsumexp(np.asarray(s.log_weights))) < 1e-12
    assert int(s.count) == n


# ---------------------------------------------------------------- transformations
@pytest.mark.parametrize("name", ["exp3_uhe", "exp3_const", "hedge"])
def test_vmap_equals_loop_and_jit_equals_nojit(name):
    # vmap (under jit) over 8 independent states == a loop of single-state calls, jitted and op by op.
    # K matches the other tests (2 for EXP3, 4 for Hedge) so the op-by-op path reuses compiled kernels.
    k = 4 if name == "hedge" else 2
    n = 8
    b = {"exp3_uhe": bd.exp3(evals_per_round=2), "exp3_const": bd.exp3(0.15), "hedge": bd.hedge(0.5)}[name]
    rng = np.random.default_rng(1)
    lws = rng.normal(size=(n, k)) * 2.0
    lws = lws - np.array([np_logsumexp(r) for r in lws])[:, None]
    counts = rng.integers(0, 20, size=n).astype(np.int32)
    arms = rng.integers(0, k, size=n).astype(np.int32)
    obs = rng.uniform(size=(n, k)) if name == "hedge" else rng.uniform(0, 3, size=n)

    def step(s, a, r):
        p = b.probabilities(s)
        return p, b.update(s, a, r, p)

    states = bd.BanditState(jnp.asarray(lws), jnp.asarray(counts))
    pv, sv = jax.jit(jax.vmap(step))(states, jnp.asarray(arms), jnp.asarray(obs))
    step_jit = jax.jit(step)
    for i in range(n):
        si = bd.BanditState(jnp.asarray(lws[i]), jnp.asarray(counts[i]))
        p_i, s_i = step(si, int(arms[i]), obs[i])  # no jit: op by op
        p_ij, s_ij = step_jit(si, int(arms[i]), obs[i])
        pairs = [(pv[i], p_i), (sv.log_weights[i], s_i.log_weights), (p_ij, p_i), (s_ij.log_weights, s_i.log_weights)]
        for a, bb in pairs:
            np.testing.assert_allclose(np.asarray(a), np.asarray(bb), rtol=1e-13, atol=1e-14)
        assert int(np.asarray(sv.count)[i]) == int(s_i.count) == counts[i] + 1
    assert sv.count.dtype == jnp.int32


def test_grad_through_update_is_finite_and_matches_finite_difference():
    b = bd.exp3(evals_per_round=2)
    s = state_from([0.4, -0.1], count=1)

    def f(r):
        s1 = b.update(s, 1, r, b.probabilities(s))
        return b.probabilities(s1)[1]

    g = float(jax.jit(jax.grad(f))(0.6))
    h, fj = 1e-6, jax.jit(f)
    fd = (float(fj(0.6 + h)) - float(fj(0.6 - h))) / (2 * h)
    assert np.isfinite(g) and g > 0
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    gh = jax.jit(jax.grad(lambda G: bd.hedge(0.3).update(bd.hedge(0.3).init(3), 0, G).log_weights[0]))(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(gh), 0.3 * (np.eye(3)[0] - 1 / 3), rtol=1e-13)


# ---------------------------------------------------------------- sampling
@pytest.mark.parametrize("name", ["exp3", "hedge"])
def test_sample_frequencies_match_probabilities(name):
    n = 20000
    base = np.array([0.2, 0.5, 0.3])
    if name == "exp3":
        b, gamma = bd.exp3(0.1), 0.1
        p_ref = (1 - gamma) * base + gamma / 3
    else:
        b = bd.hedge(1.0)
        p_ref = base
    s = state_from(np.log(base), count=4)
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    arms = jax.jit(jax.vmap(lambda kk: bd.sample(kk, b, s)))(keys)
    assert arms.dtype == jnp.int32 and arms.shape == (n,)
    freq = np.bincount(np.asarray(arms), minlength=3) / n
    se = np.sqrt(p_ref * (1 - p_ref) / n)
    assert np.all(np.abs(freq - p_ref) <= 3 * se), (freq, p_ref)
    assert int(bd.sample(jax.random.PRNGKey(1), b, s)) in (0, 1, 2)
