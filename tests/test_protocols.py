"""Engine v2: action spaces (finite arms, control sets), step information, costs and budgets,
drifting objectives (dynamic regret), per-step algorithm info, side information, ring buffers,
the GP model configuration, composition (user kernels and acquisitions), ask/tell on every space."""

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import data, gp
from jbo.algorithms import sbo_kde
from jbo.engine import Algorithm, Step
from jbo.problems.control import ControlSetProblem
from jbo.problems.finite import FiniteArmProblem
from jbo.spaces import ControlAction, ControlSets, FiniteArms

KEY = jax.random.key(7)
ARMS = np.random.default_rng(3).uniform(size=(6, 2))
VALUES = np.array([[0.1, 0.5, 0.3, 0.9, 0.2, 0.0], [0.8, 0.1, 0.6, 0.0, 0.4, 0.3]])
DRIFT = FiniteArmProblem(ARMS, VALUES, change_points=(7,), costs=[1.0, 0.5, 2.0, 1.5, 0.25, 1.0], noise_std=0.1)


# ---------------------------------------------------------------- a 30-line finite-arm UCB (the notebook's)
class ArmUCBState(NamedTuple):
    sums: jax.Array
    counts: jax.Array
    steps: jax.Array  # the step indices seen by ask/tell (to test step information)


class ArmUCB(Algorithm):
    """Sliding-free UCB1 over a finite arm set, with a discount (a drifting objective)."""

    num_initial: int = 0

    def default_params(self):
        return {"c": 1.0, "discount": 0.9}

    def init(self, key, params, spec):
        k = spec.space.num_arms
        return ArmUCBState(jnp.zeros(k), jnp.zeros(k), jnp.full(spec.num_steps, -1))

    def ask(self, key, state, params, step):
        n = jnp.maximum(state.counts, 1e-9)
        bonus = params["c"] * jnp.sqrt(jnp.log(jnp.sum(state.counts) + 1.0) / n)
        score = jnp.where(state.counts > 0, state.sums / n + bonus, jnp.inf)
        return jnp.argmax(score).astype(jnp.int32), state

    def tell(self, key, state, params, action, observation, step):
        onehot = jax.nn.one_hot(action, state.sums.shape[0])
        g = params["discount"]
        return ArmUCBState(
            g * state.sums + onehot * observation, g * state.counts + onehot, state.steps.at[step.t].set(step.t)
        )

    def info(self, state, params):
        return {"best_arm": jnp.argmax(state.sums / jnp.maximum(state.counts, 1e-9))}


def test_finite_arm_ucb_on_drifting_arms_dynamic_regret_and_info():
    tr = jbo.run(ArmUCB(), DRIFT, key=KEY, num_steps=14)
    a = np.asarray(tr.actions)
    seg = (np.arange(14) >= 7).astype(int)
    value = VALUES[seg, a]
    regret = VALUES[seg].max(1) - value  # dynamic regret: each step's own optimum
    np.testing.assert_allclose(tr.metrics["value"], value)
    np.testing.assert_allclose(tr.metrics["regret"], regret)
    np.testing.assert_allclose(tr.metrics["cumulative_regret"], np.cumsum(regret))
    np.testing.assert_allclose(tr.metrics["simple_regret"], np.minimum.accumulate(regret))
    np.testing.assert_allclose(tr.metrics["best_value"], np.maximum.accumulate(value))
    np.testing.assert_allclose(tr.metrics["cost"], np.asarray(DRIFT.costs)[a])
    np.testing.assert_array_equal(tr.final_state.steps, np.arange(14))  # tell saw every t, in order
    assert tr.info["best_arm"].shape == (14,)
    assert tr.metrics["active"].all()


def test_budget_equals_truncated_run_and_freezes_state():
    """A budgeted run is the unbudgeted run cut where the spent cost reaches the budget."""
    full = jbo.run(ArmUCB(), DRIFT, key=KEY, num_steps=14)
    cost = np.asarray(full.metrics["cost"])
    budget = 6.0
    spent_before = np.concatenate([[0.0], np.cumsum(cost)[:-1]])
    active = spent_before < budget
    k = int(active.sum())
    assert 1 < k < 14
    cut = jbo.run(ArmUCB(), DRIFT, key=KEY, num_steps=14, budget=budget)
    np.testing.assert_array_equal(cut.metrics["active"], active)
    for name in ("value", "regret", "cumulative_regret", "cumulative_cost", "best_value"):
        np.testing.assert_allclose(cut.metrics[name][:k], full.metrics[name][:k])
        np.testing.assert_allclose(cut.metrics[name][k:], full.metrics[name][k - 1])  # held
    assert float(cut.metrics["cumulative_cost"][-1]) <= budget + cost.max()
    for leaf in jax.tree.leaves((cut.actions, cut.observations)):  # an inactive step computes nothing
        np.testing.assert_array_equal(np.asarray(leaf)[k:], 0)
    short = jbo.run(ArmUCB(), DRIFT, key=KEY, num_steps=k)
    # the frozen state equals the state after the k active steps (steps buffer aside: its length differs)
    np.testing.assert_allclose(cut.final_state.sums, short.final_state.sums)
    np.testing.assert_allclose(cut.final_state.counts, short.final_state.counts)


def test_free_initial_steps_and_budget_errors():
    alg = jbo.algorithms.get("random_search", num_initial=3)
    tr = jbo.run(alg, DRIFT, key=KEY, num_steps=8, budget=100.0, free_initial=True)
    assert np.all(np.asarray(tr.metrics["cost"])[:3] == 0) and np.all(np.asarray(tr.metrics["cost"])[3:] > 0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="budget must be a positive finite cost"):
            jbo.run(alg, DRIFT, key=KEY, num_steps=8, budget=bad)


def test_vmapped_equals_looped_on_finite_arms_with_budget():
    seeds = jbo.run_seeds(ArmUCB(), DRIFT, key=KEY, num_steps=14, num_seeds=3, budget=8.0)
    for i, k in enumerate(jax.random.split(KEY, 3)):
        one = jbo.run(ArmUCB(), DRIFT, key=k, num_steps=14, budget=8.0)
        np.testing.assert_array_equal(seeds.actions[i], one.actions)
        np.testing.assert_allclose(seeds.metrics["cumulative_regret"][i], one.metrics["cumulative_regret"])


# ---------------------------------------------------------------- step information and side information
class Recorder(Algorithm):
    """Records what the engine tells it: the spec's side information and every Step."""

    num_initial: int = 2

    def init(self, key, params, spec):
        return {"info": spec.info["secret"], "t": jnp.zeros((), jnp.int32), "initial": jnp.zeros((), bool)}

    def ask(self, key, state, params, step):
        return jnp.full((1,), 0.5), state

    def tell(self, key, state, params, action, observation, step):
        return {**state, "t": step.t, "initial": step.initial}

    def info(self, state, params):
        return {"t": state["t"], "initial": state["initial"], "secret": state["info"]}


class SecretProblem(jbo.Environment):
    """Each seed's reset draws a number the learner is told about (per-seed side information)."""

    @property
    def space(self):
        return jbo.spaces.Box(dim=1)

    def reset(self, key):
        return jax.random.uniform(key)

    def side_info(self, env_state):
        return {"secret": env_state}

    def step(self, key, env_state, action, step):
        return env_state, action[0], {"value": action[0]}


def test_step_and_side_information_reach_the_algorithm():
    tr = jbo.run_seeds(Recorder(), SecretProblem(), key=KEY, num_steps=5, num_seeds=3)
    np.testing.assert_array_equal(tr.info["t"], np.tile(np.arange(5), (3, 1)))
    np.testing.assert_array_equal(tr.info["initial"], np.tile(np.arange(5) < 2, (3, 1)))
    secrets = np.asarray(tr.info["secret"])
    assert np.all(secrets == secrets[:, :1]) and len(set(secrets[:, 0])) == 3  # per seed, constant in time


# ---------------------------------------------------------------- control sets
def _control_problem():
    f = lambda x: -jnp.sum((x - 0.3) ** 2)  # noqa: E731
    masks = [[True, False, False], [False, True, True], [True, True, True]]
    return ControlSetProblem(
        f, masks, cost_mean=[0.1, 0.2, 1.0], cost_std=0.05, cost_noise_threshold=0.15, free_scale=0.2, num_mc=256
    )


def test_control_sets_compose_expected_value_and_costs():
    prob = _control_problem()
    alg = jbo.algorithms.get("random_search", num_initial=3)
    tr = jbo.run(alg, prob, key=KEY, num_steps=10)
    sets, xs = np.asarray(tr.actions.set), np.asarray(tr.actions.x)
    masks = np.asarray(prob.sets.masks)
    full = np.asarray(tr.observations.x)
    np.testing.assert_array_equal(sets[:3], [0, 1, 2])  # round-robin initial design
    # controlled coordinates come from the action; the rest were drawn in [0, 1]
    np.testing.assert_allclose(np.where(masks[sets], full, 0), np.where(masks[sets], xs, 0))
    assert np.all((full >= 0) & (full <= 1))
    np.testing.assert_allclose(tr.observations.y, -((full - 0.3) ** 2).sum(1), rtol=1e-12)
    # expected value by the closed form: E(r - 0.3)^2 = Var r + (E r - 0.3)^2 under the MC sample
    R = np.asarray(prob.reset(jax.random.split(jax.random.split(KEY)[0], 3)[1]).free_sample)
    for s, x, v in zip(sets, xs, np.asarray(tr.metrics["value"])):
        pts = np.where(masks[s], x, R)
        assert np.isclose(v, -((pts - 0.3) ** 2).sum(1).mean(), rtol=1e-10)
    cost = np.asarray(tr.metrics["cost"])
    assert np.allclose(cost[sets == 0], 0.1)  # below the threshold: deterministic
    assert tr.metrics["active"].all()


def test_control_set_costs_follow_the_clipped_normal_law():
    """Set i costs clip(cost_mean[i] + cost_std N(0, 1), 0.001, 2) when cost_mean[i] >= the threshold,
    else exactly cost_mean[i]: 4000 steps per set against the law's moments and the clip's atoms."""
    from scipy import stats

    f = lambda x: jnp.sum(x)  # noqa: E731
    masks = [[True, False], [False, True], [True, True]]
    num = 4000
    keys = jax.random.split(jax.random.key(1), num)

    def costs(prob):  # (3 sets, num steps)
        state = prob.reset(jax.random.key(0))
        step = lambda k, i: prob.step(k, state, ControlAction(i, jnp.full(2, 0.5)), Step(0, False))[1].cost  # noqa: E731
        return np.asarray(jax.jit(jax.vmap(jax.vmap(step, (0, None)), (None, 0)))(keys, jnp.arange(3)))

    plain = costs(ControlSetProblem(f, masks, cost_mean=[0.1, 0.2, 1.0], cost_std=0.05, cost_noise_threshold=0.15))
    assert np.all(plain[0] == 0.1)  # below the threshold: no noise
    for c, mean in ((plain[1], 0.2), (plain[2], 1.0)):  # the clip is 4 sd or more away: a normal; 5 sampling sds
        assert abs(c.mean() - mean) < 5 * 0.05 / math.sqrt(num) and abs(c.std() - 0.05) < 5 * 0.05 / math.sqrt(2 * num)
    # means near the clip bounds: atoms at 0.001 and 2.0 of mass Phi((0.001 - 0.02) / 0.05) and Phi(-1)
    clipped = costs(ControlSetProblem(f, masks, cost_mean=[0.02, 1.95, 1.0], cost_std=0.05))
    for c, at, mass in (
        (clipped[0], 0.001, stats.norm.cdf((0.001 - 0.02) / 0.05)),
        (clipped[1], 2.0, stats.norm.cdf(-1.0)),
    ):
        assert abs(np.mean(c == at) - mass) < 5 * math.sqrt(mass * (1 - mass) / num)  # binomial spread
        assert c.min() >= 0.001 and c.max() <= 2.0


def test_truncated_normal_free_variables_have_the_spec_variance():
    from scipy import stats

    from jbo.problems.control import free_variables

    n = 200_000
    r = np.asarray(free_variables(jax.random.key(0), (n,), 0.2))
    ref = stats.truncnorm(-0.5 / 0.2, 0.5 / 0.2, loc=0.5, scale=0.2)
    # sampling spread from the law's exact moments: sd(mean) = sqrt(v / n) = 4.1e-4, sd(var) =
    # sqrt((m4 - v^2) / n) = 8.3e-5; 5 sd each. The whole law: Kolmogorov-Smirnov distance below its
    # 0.1% point 1.95 / sqrt(n).
    v, m4 = ref.var(), ref.expect(lambda t: (t - 0.5) ** 4)
    assert abs(r.mean() - 0.5) < 5 * math.sqrt(v / n) and abs(r.var() - v) < 5 * math.sqrt((m4 - v**2) / n)
    assert stats.kstest(r, ref.cdf).statistic < 1.95 / math.sqrt(n)


def test_ask_tell_on_control_sets_and_finite_arms_reproduce_the_scan():
    prob = _control_problem()
    alg = jbo.algorithms.get("random_search", num_initial=3)
    scan = jbo.run(alg, prob, key=KEY, num_steps=6)
    opt = jbo.AskTell(alg, prob.space, num_steps=6, key=KEY)
    for t in range(6):
        i, x = opt.ask()
        assert i == int(scan.actions.set[t])
        assert np.all(np.isnan(x) == ~np.asarray(prob.sets.masks[i]))
        np.testing.assert_allclose(x[~np.isnan(x)], np.asarray(scan.actions.x[t])[np.asarray(prob.sets.masks[i])])
        opt.tell((i, x), (np.asarray(scan.observations.x[t]), float(scan.observations.y[t]), 0.1))
    arm = jbo.AskTell(ArmUCB(), DRIFT.space, num_steps=14, key=KEY)
    scan = jbo.run(ArmUCB(), DRIFT, key=KEY, num_steps=14)
    for t in range(14):
        a = arm.ask()
        assert a == int(scan.actions[t])
        arm.tell(a, float(scan.observations[t]))
    assert arm.best()[1] == float(np.max(scan.observations))


def check_failed_tells_change_nothing(alg, bounds, steps, f):
    """A non-finite value and a point of the wrong shape are refused at step 4 (after the state has
    learned from earlier tells); the run then continues exactly as an undisturbed one."""
    clean = jbo.AskTell(alg, bounds, num_steps=steps, key=KEY)
    clean.optimize(f)
    bumpy = jbo.AskTell(alg, bounds, num_steps=steps, key=KEY)
    for t in range(steps):
        x = bumpy.ask()
        if t == 4:
            with pytest.raises(ValueError, match="non-finite"):
                bumpy.tell(x, float("nan"))
            with pytest.raises(ValueError):
                bumpy.tell(x[:1], 1.0)
        bumpy.tell(x, f(x))
    np.testing.assert_allclose(np.stack(bumpy.xs), np.stack(clean.xs))
    assert bumpy.best()[1] == clean.best()[1]


@pytest.mark.slow  # suite time; test_properties proves it on a cheap algorithm, test_asktell_executor that a failed step leaves every state leaf unchanged
def test_failing_host_objective_does_not_corrupt_state():
    problem = jbo.problems.get("branin")
    alg = jbo.algorithms.get(
        "gp_ucb",
        num_initial=3,
        hypers=jbo.parts.Refit(steps=5),
        maximiser=jbo.parts.Maximiser(num_raw=32, num_starts=2, steps=3),
    )
    check_failed_tells_change_nothing(alg, problem.bounds, 6, lambda x: float(problem.objective(jnp.asarray(x))))


@pytest.mark.extended  # AskTell == the scan in the default run: test_properties
def test_ask_tell_drives_a_contextual_method():
    """AskTell drives an SBO method, with (c, y) observations."""
    small = dict(
        num_initial=3,
        num_samples=16,
        num_inner=16,
        hypers=dataclasses.replace(sbo_kde.PAPER_REFIT, steps=3),
        maximiser=dataclasses.replace(sbo_kde.PAPER_MAXIMISER, num_raw=16, num_starts=2, steps=2),
    )
    prob = jbo.problems.get("sbo_kde:newsvendor")
    alg = jbo.algorithms.get("sbo_kde:sbo_kde", **small)
    scan = jbo.run(alg, prob, key=KEY, num_steps=5)
    opt = jbo.AskTell(alg, prob.space.bounds, num_steps=5, key=KEY, context_dim=1)
    for t in range(5):
        x = opt.ask()
        np.testing.assert_allclose(x, scan.actions[t], rtol=1e-7, atol=1e-9)
        c, y = scan.observations
        opt.tell(x, (np.asarray(c[t]), float(y[t])))


# ---------------------------------------------------------------- buffers
def test_ring_buffer_window_and_full_buffer():
    buf = data.empty(4, 1)
    for i in range(6):
        buf = data.append(buf, jnp.array([float(i)]), float(i), wrap=True)
    assert int(buf.count) == 6 and bool(buf.mask.all())
    assert sorted(np.asarray(buf.y).tolist()) == [2, 3, 4, 5]  # the 4 most recent
    w = data.window(buf, 2)
    assert sorted(np.asarray(buf.y)[np.asarray(w.mask)].tolist()) == [4, 5]
    full = data.empty(2, 1)
    for i in range(3):
        full = data.append(full, jnp.array([float(i)]), float(i))
    assert int(full.count) == 2 and bool(data.overflowed(full)) and np.asarray(full.y).tolist() == [0, 1]


def test_gp_on_a_sliding_window_equals_gp_on_the_window_alone():
    rng = np.random.default_rng(30)
    x, y = rng.uniform(size=(9, 2)), rng.normal(size=9)
    buf = data.empty(5, 2)
    for xi, yi in zip(x, y):
        buf = data.append(buf, jnp.asarray(xi), yi, wrap=True)
    win = data.window(buf, 3)
    p = gp.default_params(2, 0.3, 1.0, 0.01)
    a = gp.condition(win, p, "se")
    b = gp.condition(data.from_arrays(jnp.asarray(x[-3:]), jnp.asarray(y[-3:]), 3), p, "se")
    q = jnp.asarray(rng.uniform(size=(4, 2)))
    np.testing.assert_allclose(gp.predict_batch(a, q), gp.predict_batch(b, q), rtol=1e-10)


# ---------------------------------------------------------------- the GP model configuration
def _numpy_gp(x, y, xq, ls, s, noise, mean, standardize):
    mu, sd = (y.mean(), y.std(ddof=1)) if standardize else (0.0, 1.0)
    z = (y - mu) / sd - mean
    k = lambda a, b: s * np.exp(-0.5 * ((a[:, None] - b[None]) ** 2 / ls**2).sum(-1))  # noqa: E731
    K = k(x, x) + noise * np.eye(len(x))
    return mu + sd * (mean + k(xq, x) @ np.linalg.solve(K, z))


@pytest.mark.parametrize("standardize, mean_mode", [(True, "zero"), (False, "constant"), (False, "trainable")])
def test_gp_model_mean_and_standardisation_match_numpy(standardize, mean_mode):
    rng = np.random.default_rng(31)
    x, y, xq = rng.uniform(size=(7, 2)), rng.normal(size=7) * 3 + 1, rng.uniform(size=(3, 2))
    model = gp.GPModel(kernel="se", standardize=standardize, mean=mean_mode, noise_floor=0.0)
    p = gp.default_params(2, 0.4, 1.3, 0.05, 0.7)
    post = gp.condition(data.from_arrays(jnp.asarray(x), jnp.asarray(y), 10), p, model)
    ref = _numpy_gp(x, y, xq, 0.4, 1.3, 0.05, 0.0 if mean_mode == "zero" else 0.7, standardize)
    np.testing.assert_allclose(gp.predict_batch(post, jnp.asarray(xq))[0], ref, rtol=1e-9)


def test_gp_model_frozen_parameters_do_not_move_and_bounds_hold():
    rng = np.random.default_rng(32)
    x, y = rng.uniform(size=(12, 2)), rng.normal(size=12)
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), 12)
    model = gp.GPModel(kernel="matern52", train=("lengthscale",), mean="constant", lengthscale_bounds=(0.05, 0.5))
    start = gp.default_params(2, 0.3, 1.7, 0.02, 0.4)
    fit = gp.fit(jax.random.key(0), buf, model, init=start, num_restarts=3, num_steps=30)
    np.testing.assert_allclose(fit.log_outputscale, start.log_outputscale)
    np.testing.assert_allclose(fit.log_noise, start.log_noise)
    np.testing.assert_allclose(fit.mean, start.mean)
    ls = np.exp(np.asarray(fit.log_lengthscale))
    assert np.all((ls >= 0.05 - 1e-12) & (ls <= 0.5 + 1e-12))
    with pytest.raises(ValueError, match="lengthscale_bounds need 0 < lo < hi"):
        gp.GPModel(lengthscale_bounds=(1.0, 0.5))
    with pytest.raises(ValueError, match="unknown trainable"):
        gp.GPModel(train=("lengthscales",))


def test_prior_jacobian_adds_the_log_values():
    from scipy import stats

    prior = gp.HyperPrior()
    p = gp.default_params(2, jnp.array([0.3, 0.6]), 1.4, 0.02)
    plain, jac = gp.GPModel(prior=prior), gp.GPModel(prior=prior, prior_jacobian=True)
    noise = 0.02 + 1e-6
    ref = (
        stats.gamma(3.0, scale=1 / 6.0).logpdf([0.3, 0.6]).sum()
        + stats.gamma(2.0, scale=1 / 0.15).logpdf(1.4)
        + stats.gamma(1.1, scale=1 / 0.05).logpdf(noise)
    )
    np.testing.assert_allclose(plain.log_prior(p), ref, rtol=1e-10)
    np.testing.assert_allclose(jac.log_prior(p), ref + np.log([0.3, 0.6, 1.4, noise]).sum(), rtol=1e-10)


# ---------------------------------------------------------------- composition
def test_user_kernel_and_user_acquisition_equal_the_built_ins():
    """A user's SE profile and a user's UCB function give the built-in SE / UCB run."""
    prob = jbo.problems.get("branin")
    small = dict(
        num_initial=4, hypers=jbo.parts.Refit(steps=5), maximiser=jbo.parts.Maximiser(num_raw=32, num_starts=2, steps=3)
    )
    built_in = jbo.run(jbo.algorithms.get("gp_ucb", model="se", **small), prob, key=KEY, num_steps=7)
    my_se = lambda r2: jnp.exp(-0.5 * r2)  # noqa: E731
    my_ucb = lambda post, x, best: jbo.acquisitions.ucb(post, x, 2.0)  # noqa: E731
    user = jbo.run(jbo.algorithms.GPBO(acquisition=my_ucb, model=my_se, **small), prob, key=KEY, num_steps=7)
    np.testing.assert_allclose(user.actions, built_in.actions, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="Thompson sampling needs random Fourier features"):
        jbo.algorithms.GPBO(acquisition="ts", model=my_se)


def test_gp_bo_on_finite_arms_scores_every_arm():
    """GP-UCB plays the single best of 40 arms within 20 steps on at least 7 of 8 seeds. Measured on 16
    seeds of this key: GP-UCB on 15 (first at steps 4-12), random search on the same keys on 4; a method
    that finds it with probability 1/4 passes with probability 8 (1/4)^7 (3/4) + (1/4)^8 < 0.001, and one
    that leaves the best arm unscored never does. (The second and third best arms have regret 0.003 and
    0.015: a threshold on the regret lets random search pass.)"""
    arms = FiniteArms(np.random.default_rng(11).uniform(size=(40, 2)))
    f = lambda x: -jnp.sum((x - 0.6) ** 2)  # noqa: E731
    prob = jbo.problems.finite.from_functions([f], arms)
    tr = jbo.run_seeds(
        jbo.algorithms.get("gp_ucb", num_initial=5, hypers=jbo.parts.Refit(steps=10)),
        prob,
        key=KEY,
        num_steps=20,
        num_seeds=8,
    )
    assert tr.actions.dtype == jnp.int32 and int(tr.actions.max()) < 40
    values = -((np.asarray(arms.arms) - 0.6) ** 2).sum(1)
    played_best = (np.asarray(tr.actions) == np.argmax(values)).any(1)
    assert played_best.sum() >= 7, played_best
    np.testing.assert_array_equal(np.asarray(tr.metrics["simple_regret"])[:, -1] == 0, played_best)


def test_paper_gp_with_ei_runs():
    """PaperGP(acquisition="ei") builds and runs (its Params carry xi)."""
    alg = jbo.algorithms.boke.PaperGP(
        acquisition="ei", num_initial=3, maximiser=jbo.parts.Maximiser(num_raw_per_dim=16, steps=3, screen_data=True)
    )
    assert jbo.replace_params(alg.default_params(), xi=0.01).acquisition.xi == 0.01
    tr = jbo.run(alg, jbo.problems.get("branin"), key=KEY, num_steps=5)
    assert np.isfinite(np.asarray(tr.metrics["simple_regret"])).all()


def test_replace_params_finds_nested_fields():
    p = jbo.algorithms.get("gp_ucb").default_params()
    q = jbo.replace_params(p, beta=3.0, lengthscale=0.4)
    assert q.acquisition.beta == 3.0 and q.hypers.lengthscale == 0.4 and p.acquisition.beta == 2.0


# ---------------------------------------------------------------- registry and studies
def test_problem_names_are_unique_and_contextual_problems_are_registered():
    names = jbo.problems.names()
    with pytest.raises(ValueError, match="'ackley' is already registered"):  # a name maps to one problem
        jbo.problems.register("ackley", lambda: jbo.problems.get("branin"))
    assert jbo.problems.get("ackley").name == "ackley2" and jbo.problems.names() == names
    assert isinstance(jbo.problems.get("ackley"), jbo.problems.Problem)
    ctx = jbo.problems.get("sbo_kde:ackley")
    assert ctx.context_dim == 1 and ctx.name == "ackley"
    assert {f"sbo_kde:{n}" for n in jbo.problems.sbo_kde.PROBLEMS} <= set(names)
    assert {"hpo:rf_friedman1", "hpo:xgb_diabetes"} <= set(names)


@pytest.mark.extended
def test_summary_on_a_contextual_study_and_on_a_cost_axis():
    """studies.summary works on contextual studies, with and without a known optimum."""
    small = dict(
        num_initial=3,
        num_samples=8,
        num_inner=8,
        hypers=dataclasses.replace(sbo_kde.PAPER_REFIT, steps=2),
        maximiser=dataclasses.replace(sbo_kde.PAPER_MAXIMISER, num_raw=8, num_starts=1, steps=1),
    )
    table = jbo.studies.run_study(
        {"sbo": jbo.algorithms.get("sbo_kde:sbo_kde", **small)},
        {"nv": jbo.problems.get("sbo_kde:newsvendor"), "pf": jbo.problems.get("sbo_kde:portfolio_uniform")},
        key=0,
        num_steps=4,
        num_seeds=2,
        progress=False,
    )
    s = jbo.studies.summary(table)  # one problem without F*: best value for both
    assert set(s["problem"]) == {"nv", "pf"} and "mean_best_value" in s
    assert "mean_simple_regret" in jbo.studies.summary(table[table.problem == "nv"])  # newsvendor knows F*


def test_cost_grid_is_the_step_function_of_cumulative_cost():
    table = jbo.studies.run_study({"ucb": ArmUCB()}, {"drift": DRIFT}, key=0, num_steps=10, num_seeds=3, progress=False)
    grid = np.array([0.0, 0.5, 2.0, 4.0, 100.0])
    on = jbo.studies.on_cost_grid(table, grid, "simple_regret")
    for seed, g in table.groupby("seed"):
        spent, v = g["cumulative_cost"].to_numpy(), g["simple_regret"].to_numpy()
        want = [v[max(np.sum(spent <= c) - 1, 0)] for c in grid]
        np.testing.assert_allclose(on[on.seed == seed]["simple_regret"], want)
    at = jbo.studies.summary(table, "simple_regret", at_cost=4.0)
    np.testing.assert_allclose(at["mean_simple_regret"], on[on.cost == 4.0]["simple_regret"].mean())


@pytest.mark.extended  # chunks == one program in the default run: test_properties
def test_compile_seeds_equals_run_seeds():
    alg = jbo.algorithms.get(
        "gp_ei",
        num_initial=3,
        hypers=jbo.parts.Refit(steps=5),
        maximiser=jbo.parts.Maximiser(num_raw=32, num_starts=2, steps=3),
    )
    prob = jbo.problems.get("branin")
    keys = jax.random.split(KEY, 2)
    fn, seconds = jbo.studies.compile_seeds(alg, prob, keys=keys, num_steps=6)
    assert seconds > 0
    np.testing.assert_array_equal(fn(keys).actions, jbo.run_seeds(alg, prob, key=KEY, num_steps=6, num_seeds=2).actions)


def test_step_is_a_named_tuple_of_the_step_index():
    s = Step(jnp.int32(3), jnp.bool_(False))
    assert int(s.t) == 3 and not bool(s.initial)
    with pytest.raises(ValueError, match="control set"):
        ControlSets([[False, False], [True, False]])
    assert ControlAction(jnp.int32(0), jnp.zeros(2)).set == 0
