"""The engine's metrics against an independent truth.

Every metric of a Trace is recomputed here in NumPy, step by step, from the run's actions and
observations and each environment's truth written out in this file: Branin on its box, a noisy
function on a non-unit box with failed evaluations (NaN and -inf regions), drifting finite arms with
per-arm costs and change points, the uCVS control sets with a cost per query, and the R-PERP kernel
drift. The recomputation follows the documented definitions (jbo/engine.py, docs/concepts.md "The
metrics"):

* best_value: the largest finite value so far, NaN before the first one;
* regret = optimal_value - value; simple_regret = optimal_value - best_value for a fixed optimum, the
  smallest finite regret so far for a per-step one (NaN before the first); cumulative_regret: the sum
  of the finite regrets;
* cost: the environment's cost, else 1, and 0 for initial-design steps with free_initial=True;
  cumulative_cost: their sum;
* active: the cost spent before the step is below the budget; an inactive step holds the last active
  step's metrics and records zero actions and observations, and the algorithm's state is frozen.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

import jbo
from tests.test_ucvs import H6_A, H6_ALPHA, H6_P  # Hartmann-6 from Surjanovic & Bingham, written out there

TOL = 1e-10  # NumPy against XLA: the same formulas, summed in another order
VOCABULARY = (
    "value",
    "best_value",
    "regret",
    "simple_regret",
    "cumulative_regret",
    "cost",
    "cumulative_cost",
    "active",
)


# ---------------------------------------------------------------- the reference
def expected_metrics(truth, actions, observations, num_initial, budget=None, free_initial=False, fixed_optimum=True):
    """The metric vocabulary of one run from the documented definitions.

    truth(t, action, observation) -> (value, optimal value or None, the environment's cost or None),
    evaluated only on active steps (an inactive step's action is not the algorithm's)."""
    num_steps = len(jax.tree.leaves(actions)[0])
    rows, spent, best, smallest, cum_regret, held = [], 0.0, -math.inf, math.inf, 0.0, None
    for t in range(num_steps):
        active = budget is None or spent < budget
        if not active:
            rows.append({**held, "active": False})
            continue
        action = jax.tree.map(lambda a: a[t], actions)
        observation = jax.tree.map(lambda a: a[t], observations)
        value, optimum, env_cost = truth(t, action, observation)
        charged = 0.0 if (free_initial and t < num_initial) else (1.0 if env_cost is None else float(env_cost))
        spent += charged
        if np.isfinite(value):
            best = max(best, value)
        row = {
            "value": value,
            "best_value": best if np.isfinite(best) else math.nan,
            "cost": charged,
            "cumulative_cost": spent,
        }
        if optimum is not None:
            regret = optimum - value
            if np.isfinite(regret):
                cum_regret += regret
                smallest = min(smallest, regret)
            simple = optimum - best if fixed_optimum else smallest
            row.update(
                regret=regret, simple_regret=simple if np.isfinite(simple) else math.nan, cumulative_regret=cum_regret
            )
        held = row
        rows.append({**row, "active": True})
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}


def runs_of(trace, leading: int):
    """The single runs of a trace with `leading` run axes, as NumPy pytrees, with their index."""
    host = jax.tree.map(np.asarray, (trace.actions, trace.observations, trace.metrics, trace.flags, trace.info))
    shape = np.shape(host[2]["value"])[:leading]
    for index in np.ndindex(*shape):
        yield index, jax.tree.map(lambda a: a[index], host)


def check_run(run, truth, num_initial, budget=None, free_initial=False, fixed_optimum=True):
    """Every metric of one run against expected_metrics; inactive steps record nothing."""
    actions, observations, metrics, flags, _ = run
    want = expected_metrics(truth, actions, observations, num_initial, budget, free_initial, fixed_optimum)
    names = set(VOCABULARY)
    assert names <= set(metrics) and "optimal_value" not in metrics  # the optimum becomes the regrets
    assert set(want) == names
    for name in names - {"active"}:
        np.testing.assert_allclose(metrics[name], want[name], rtol=TOL, atol=TOL, err_msg=name)
    np.testing.assert_array_equal(metrics["active"], want["active"])
    idle = ~want["active"]
    for leaf in jax.tree.leaves((actions, observations)):
        assert not np.any(leaf[idle]), "an inactive step records a non-zero action or observation"
    told = np.ones_like(idle)
    for leaf in jax.tree.leaves(observations):
        told &= np.all(np.isfinite(leaf.reshape(len(idle), -1)), axis=1)
    np.testing.assert_array_equal(flags["nonfinite_objective"], ~told & ~idle)
    return want


def keys_of(seed, num_seeds):
    """Seed i of run_seeds uses jax.random.split(key, num_seeds)[i] (its docstring)."""
    return jax.random.split(jax.random.key(seed), num_seeds)


def reset_key(key):
    """The key an environment's reset receives: the engine splits a seed's key into an environment
    stream (initial design, reset, observation noise) and an algorithm stream."""
    env_key, _ = jax.random.split(key)
    return jax.random.split(env_key, 3)[1]


RANDOM = jbo.algorithms.get("random_search", num_initial=3)


# ---------------------------------------------------------------- box problems
BRANIN_OPTIMUM = -0.397887357729738  # min of Branin-Hoo on [-5, 10] x [0, 15] (Dixon & Szego), negated


def branin_np(x):
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return -((x[1] - b * x[0] ** 2 + c * x[0] - 6) ** 2 + 10 * (1 - t) * math.cos(x[0]) + 10)


def box_truth(fn, bounds, optimum):
    lo, hi = np.asarray(bounds, float)

    def truth(t, action, observation):
        return fn(lo + action * (hi - lo)), optimum, None

    return truth


def test_branin_seeds_metrics_from_the_actions():
    prob = jbo.problems.get("branin")
    assert abs(prob.optimal_value - BRANIN_OPTIMUM) < 1e-12
    trace = jbo.run_seeds(RANDOM, prob, key=3, num_steps=12, num_seeds=3)
    truth = box_truth(branin_np, [[-5.0, 0.0], [10.0, 15.0]], BRANIN_OPTIMUM)
    for _, run in runs_of(trace, 1):
        check_run(run, truth, 3)
        np.testing.assert_array_equal(run[1], run[2]["value"])  # noise-free: the observation is f(x)


# A bowl on [-2, 3] x [1, 5] (maximum 0 at (1, 2)) whose evaluation fails (NaN) where x0 < 0.5 and
# returns -inf where x0 > 2.5: failed evaluations, left out of best_value and the regrets.
FAILING_BOUNDS = [[-2.0, 1.0], [3.0, 5.0]]
NOISE = 0.3


def failing_bowl(x):
    bowl = -((x[0] - 1.0) ** 2) - (x[1] - 2.0) ** 2
    return jnp.where(x[0] < 0.5, jnp.nan, jnp.where(x[0] > 2.5, -jnp.inf, bowl))


def failing_bowl_np(x):
    if x[0] < 0.5:
        return math.nan
    if x[0] > 2.5:
        return -math.inf
    return -((x[0] - 1.0) ** 2) - (x[1] - 2.0) ** 2


FAILING = jbo.problems.from_function(failing_bowl, FAILING_BOUNDS, "failing_bowl", 0.0, noise_std=NOISE)
FAILING_TRUTH = box_truth(failing_bowl_np, FAILING_BOUNDS, 0.0)


def test_noisy_box_with_failed_evaluations():
    with pytest.warns(RuntimeWarning, match="objective"):
        trace = jbo.run_seeds(RANDOM, FAILING, key=11, num_steps=10, num_seeds=6, on_nonfinite="warn")
    noise = []
    for _, run in runs_of(trace, 1):
        want = check_run(run, FAILING_TRUTH, 3)
        ok = np.isfinite(want["value"])
        noise.append(run[1][ok] - want["value"][ok])
        assert np.all(np.isnan(run[1][np.isnan(want["value"])]))
    # the cases the definitions single out happened: a NaN and a -inf value, a run that starts with a
    # failed evaluation (best_value NaN at step 0), and every run has a finite value by its end
    values, best = np.asarray(trace.metrics["value"]), np.asarray(trace.metrics["best_value"])
    assert np.isnan(values).any() and np.isneginf(values).any()
    assert np.isnan(best[:, 0]).any() and np.isfinite(best[:, -1]).all()
    noise = np.concatenate(noise)  # value != observation: N(0, NOISE^2) draws
    assert noise.size > 10 and np.all(noise != 0) and 0.5 * NOISE < noise.std() < 1.5 * NOISE


# ---------------------------------------------------------------- finite arms, drifting, with costs
ARMS = np.linspace(0.0, 1.0, 5)[:, None]
ARM_VALUES = np.array(
    [[0.1, 0.5, 0.9, 0.3, -0.2], [1.2, 0.2, -0.4, 0.7, 0.0], [0.0, 0.3, 0.3, -1.0, 2.0]]
)  # three segments
CHANGE_POINTS = (5, 11)
ARM_COSTS = np.array([0.5, 1.0, 2.0, 0.25, 1.5])


def arms_truth(values, costs, change_points):
    def truth(t, action, observation):
        s = np.searchsorted(change_points, t, side="right")  # change points at or before t
        return values[s, int(action)], values[s].max(), None if costs is None else costs[int(action)]

    return truth


def drifting_arms(values=ARM_VALUES, costs=ARM_COSTS):
    return jbo.problems.get(
        "drifting_arms", noise_std=0.2, arms=ARMS, values=values, change_points=CHANGE_POINTS, costs=costs
    )


def test_drifting_arms_in_stacked_environments_dynamic_regret_costs_budget_and_free_initial_steps():
    """run_environments: two drifting arm sets that differ in values and per-arm costs, each seed of each
    against its own environment's truth."""
    other_values, other_costs = ARM_VALUES[:, ::-1] * 2.0, np.array([2.0, 0.5, 0.5, 1.0, 0.75])
    envs = [drifting_arms(), drifting_arms(other_values, other_costs)]
    T, budget = 18, 9.0
    trace = jbo.engine.run_environments(RANDOM, envs, key=2, num_steps=T, num_seeds=3, budget=budget, free_initial=True)
    truths = [arms_truth(ARM_VALUES, ARM_COSTS, CHANGE_POINTS), arms_truth(other_values, other_costs, CHANGE_POINTS)]
    segment = np.searchsorted(CHANGE_POINTS, np.arange(T), side="right")
    for (e, _), run in runs_of(trace, 2):
        want = check_run(run, truths[e], 3, budget, free_initial=True, fixed_optimum=False)
        active = want["active"]
        np.testing.assert_array_equal(run[2]["segment"][active], segment[active])  # a kept metric of the environment
        assert np.all(want["cost"][:3] == 0)
        assert want["cumulative_cost"][active][-1] - budget < max(ARM_COSTS.max(), other_costs.max())
    active = np.asarray(trace.metrics["active"])
    assert active.shape == (2, 3, T)
    assert (~active).any() and active[..., :3].all()  # the budget ran out in some run; initial steps are free


# ---------------------------------------------------------------- control sets: a cost per query
SETS_12D = [(1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), tuple(range(1, 7)), tuple(range(7, 13)), tuple(range(1, 13))]
MASKS = np.array([[j + 1 in s for j in range(12)] for s in SETS_12D])
CHEAP = np.array([0.01, 0.01, 0.01, 0.1, 0.1, 0.1, 1.0])  # the uCVS paper's "cheap" cost set


def hartmann12_np(u):
    """Hartmann-6 (maximised) on the first six of twelve unit-cube coordinates, rows of u (n, 12)."""
    z = u[:, None, :6] - H6_P[None]
    return (H6_ALPHA * np.exp(-(H6_A * z * z).sum(-1))).sum(-1)


def truncated_normal(u, scale):
    """0.5 + s * N(0, 1) truncated to [0, 1], from uniforms by the inverse CDF."""
    lo, hi = special.ndtr(-0.5 / scale), special.ndtr(0.5 / scale)
    return np.clip(0.5 + scale * special.ndtri(lo + u * (hi - lo)), 0.0, 1.0)


def test_control_sets_costs_per_query_budget_and_expected_values():
    variance, num_mc, num_seeds, budget = 0.02, 128, 3, 1.2
    prob = jbo.problems.get("ucvs:hartmann12", noise_std=0.05, num_mc=num_mc, variance=variance)
    scale = float(prob.free_scale)
    b = 0.5 / scale  # the environment's scale gives the stated variance after truncation
    assert stats.truncnorm(-b, b, loc=0.5, scale=scale).var() == pytest.approx(variance, rel=1e-9)
    f_plus = float(prob.f_plus)  # the environment's stated optimum F+ (max over the sets of F*_i)
    trace = jbo.run_seeds(RANDOM, prob, key=5, num_steps=16, num_seeds=num_seeds, budget=budget, free_initial=True)
    for (i,), run in runs_of(trace, 1):
        free = truncated_normal(
            np.asarray(jax.random.uniform(reset_key(keys_of(5, num_seeds)[i]), (num_mc, 12))), scale
        )

        def truth(t, action, observation):
            if t < 3:  # initial-design steps are full-domain queries: f at the point itself
                np.testing.assert_array_equal(observation.x, action.x)
                value = hartmann12_np(action.x[None])[0]
            else:  # the expectation over the reset's free-variable sample, the set's coordinates fixed
                value = hartmann12_np(np.where(MASKS[action.set], action.x, free)).mean()
                m = MASKS[action.set]
                np.testing.assert_array_equal(observation.x[m], action.x[m])
            return value, f_plus, observation.cost

        want = check_run(run, truth, 3, budget, free_initial=True, fixed_optimum=False)
        actions, observations, metrics, _, _ = run
        active = want["active"]
        sets, costs = actions.set[active], observations.cost[active]
        np.testing.assert_array_equal(metrics["set"][active], sets)
        quiet = CHEAP[sets] < 0.1  # below the paper preset's threshold the cost has no noise
        np.testing.assert_array_equal(costs[quiet], CHEAP[sets][quiet])
        assert np.all(np.abs(costs - CHEAP[sets]) < 0.15) and np.all((costs >= 0.001) & (costs <= 2.0))
        assert np.all(observations.y[active] != metrics["value"][active])
    active = np.asarray(trace.metrics["active"])
    assert (~active).any() and active[:, :3].all()


# ---------------------------------------------------------------- drifting truth: the R-PERP kernel drift
def kernel_drift_values(seed, lengthscale=0.5, size=30, functions=3, centres=10):
    """r_perp.md 5.1: f^(b)(x) = sum_u alpha_u exp(-|x - xbar_u|^2 / (2 l^2)) on a size x size grid of
    [0, 1]^2 (first axis slowest), alpha ~ U[-1, 1]^U then xbar ~ U([0, 1]^2)^U per function from
    numpy.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    g = np.linspace(0.0, 1.0, size)
    grid = np.array([(a, b) for a in g for b in g])
    out = []
    for _ in range(functions):
        alpha, xbar = rng.uniform(-1.0, 1.0, centres), rng.uniform(0.0, 1.0, (centres, 2))
        sq = ((grid[:, None, :] - xbar[None]) ** 2).sum(-1)
        out.append(np.exp(-sq / (2 * lengthscale**2)) @ alpha)
    return grid, np.stack(out)


def test_kernel_drift_per_step_optimum_simple_regret_is_the_smallest_regret_so_far():
    T = 30
    prob = jbo.problems.get("kernel_drift", seed=1, horizon=T)
    grid, values = kernel_drift_values(1)
    np.testing.assert_allclose(np.asarray(prob.space.arms), grid, atol=1e-15)
    trace = jbo.run_seeds(RANDOM, prob, key=8, num_steps=T, num_seeds=3)
    truth = arms_truth(values, None, (T // 5, 2 * T // 5))  # f^(1), f^(2), f^(3): abrupt changes at T/5, 2T/5
    for _, run in runs_of(trace, 1):
        want = check_run(run, truth, 3, fixed_optimum=False)
        optimum = want["regret"] + want["value"]
        assert len(np.unique(optimum.round(12))) == 3  # the optimum moves at the change points
        # the smallest instantaneous regret so far, not f*_t - best value
        assert not np.allclose(want["simple_regret"], optimum - want["best_value"])
        assert np.all(run[1] != run[2]["value"])  # observation noise
        np.testing.assert_array_equal(want["cumulative_cost"], np.arange(1, T + 1))  # no costs: 1 per evaluation


# ---------------------------------------------------------------- a GP method, growing segments, a sweep
@pytest.mark.extended
def test_gp_sweep_segments_budget_failed_evaluations_and_frozen_state():
    """GP-UCB over 100 steps (growing segments of 64 and 100 rows) on the failing noisy bowl: a sweep
    of two betas (one seed) with a budget and a free initial design."""
    T, budget = 100, 80.0
    alg = jbo.algorithms.get("gp_ucb", num_initial=3, maximiser=jbo.parts.Maximiser(num_raw=32, num_starts=2, steps=3))
    assert alg.capacities(T) == (64, T)
    params = jbo.engine.stack_params(*[jbo.replace_params(alg.default_params(), beta=b) for b in (0.5, 4.0)])
    trace = jbo.run_sweep(
        alg,
        FAILING,
        key=6,
        num_steps=T,
        num_seeds=1,
        params=params,
        budget=budget,
        free_initial=True,
        on_nonfinite="ignore",
    )
    state = jax.tree.map(np.asarray, trace.final_state.buffer)
    for index, run in runs_of(trace, 2):
        want = check_run(run, FAILING_TRUTH, 3, budget, free_initial=True)
        actions, observations, _, _, info = run
        active = want["active"]
        assert active.sum() == 3 + budget and active[: 3 + int(budget)].all()
        # frozen state: the buffer holds exactly the active steps' finite observations (failed
        # evaluations are not told), in order; the per-step diagnostics of the frozen state stay put
        told = active & np.isfinite(observations)
        assert 0 < told.sum() < active.sum()
        n = int(state.count[index])
        assert n == told.sum() and state.mask[index].sum() == n
        np.testing.assert_array_equal(state.x[index][:n], actions[told])
        np.testing.assert_array_equal(state.y[index][:n], observations[told])
        last = int(np.nonzero(active)[0][-1])
        for name in ("lengthscale", "outputscale", "noise"):
            assert np.all(getattr(info, name)[last:] == getattr(info, name)[last]), name
    # the two settings decided differently (the sweep is real), with the same initial design
    a = np.asarray(trace.actions)
    np.testing.assert_array_equal(a[0, :, :3], a[1, :, :3])
    assert not np.array_equal(a[0], a[1])
