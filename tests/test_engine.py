"""Engine: vmapped == looped, determinism, common random numbers, sweeps, ask/tell, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo

T, N0 = 10, 4
PROBLEM = jbo.problems.get("branin", noise_std=0.5)
# Small shapes so the compiled programs are cheap; shared by the tests below.
UCB = jbo.algorithms.get(
    "gp_ucb",
    num_initial=N0,
    hypers=jbo.parts.Refit(steps=10),
    maximiser=jbo.parts.Maximiser(num_raw=64, num_starts=2, steps=5),
)
RANDOM = jbo.algorithms.get("random_search", num_initial=N0)
KEY = jax.random.key(42)


@pytest.fixture(scope="module")
def ucb_seeds():
    return jbo.run_seeds(UCB, PROBLEM, key=KEY, num_steps=T, num_seeds=3)


@pytest.mark.extended  # vmapped == looped in the default run: test_exactness
def test_vmapped_equals_looped(ucb_seeds):
    for i, k in enumerate(jax.random.split(KEY, 3)):
        single = jbo.run(UCB, PROBLEM, key=k, num_steps=T)
        np.testing.assert_allclose(ucb_seeds.actions[i], single.actions, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ucb_seeds.metrics["simple_regret"][i], single.metrics["simple_regret"], rtol=1e-9)


def test_batched_like_keeps_every_value_and_batches_every_leaf():
    """scan.batched_like changes no bit of any leaf (floats with -0.0, NaN and inf, ints, bools, typed keys),
    inside and outside vmap, and under vmap every leaf it returns carries the seed axis, also a constant one
    (vmap with out_axes=None refuses a batched output), so the run's lax.scan batches its step once."""
    tree = {
        "f": jnp.array([-0.0, 0.0, jnp.nan, jnp.inf, 1.5]),
        "i": jnp.arange(3),
        "b": jnp.array([True, False]),
        "k": jax.random.key(3),
    }
    keys = jax.random.split(KEY, 2)

    def bits(t):
        raw = lambda a: jax.random.key_data(a) if jnp.issubdtype(a.dtype, jax.dtypes.prng_key) else a  # noqa: E731
        return [np.asarray(raw(a)).tobytes() for a in jax.tree.leaves(t)]

    assert bits(jbo.scan.batched_like(tree, KEY)) == bits(tree)
    batched = jax.vmap(lambda k: jbo.scan.batched_like(tree, k))(keys)
    for s in range(2):
        assert bits(jax.tree.map(lambda a: a[s], batched)) == bits(tree)
    jax.vmap(lambda k: tree, out_axes=None)(keys)  # a constant tree is not batched ...
    for leaf in tree.values():  # ... each of its leaves is, after batched_like
        with pytest.raises(ValueError, match="out_axes"):
            jax.vmap(lambda k: jbo.scan.batched_like(leaf, k), out_axes=None)(keys)


def test_deterministic(ucb_seeds):
    again = jbo.run_seeds(UCB, PROBLEM, key=KEY, num_steps=T, num_seeds=3)
    np.testing.assert_array_equal(again.actions, ucb_seeds.actions)
    np.testing.assert_array_equal(again.observations, ucb_seeds.observations)


def test_common_random_numbers_across_methods(ucb_seeds):
    rnd = jbo.run_seeds(RANDOM, PROBLEM, key=KEY, num_steps=T, num_seeds=3)
    np.testing.assert_array_equal(rnd.actions[:, :N0], ucb_seeds.actions[:, :N0])  # shared design
    noise_r = rnd.observations - rnd.metrics["value"]
    noise_u = ucb_seeds.observations - ucb_seeds.metrics["value"]
    np.testing.assert_allclose(noise_r, noise_u, atol=1e-9)  # shared noise stream, method-independent
    assert not np.allclose(rnd.actions[:, N0:], ucb_seeds.actions[:, N0:])


def test_metrics_are_consistent(ucb_seeds):
    m = ucb_seeds.metrics
    values = jax.vmap(jax.vmap(PROBLEM.objective_unit))(ucb_seeds.actions)
    np.testing.assert_allclose(m["value"], values, rtol=1e-12)
    np.testing.assert_allclose(m["best_value"], np.maximum.accumulate(np.asarray(values), axis=1))
    np.testing.assert_allclose(m["simple_regret"], PROBLEM.optimal_value - m["best_value"])
    assert np.all(np.diff(m["simple_regret"], axis=1) <= 0)


@pytest.mark.extended
def test_sweep_equals_separate_runs():
    betas = jnp.array([0.5, 4.0])
    params = jbo.engine.stack_params(*[jbo.replace_params(UCB.default_params(), beta=b) for b in [0.5, 4.0]])
    swept = jbo.run_sweep(UCB, PROBLEM, key=KEY, num_steps=T, num_seeds=2, params=params)
    assert swept.actions.shape == (2, 2, T, 2)
    for i, b in enumerate(betas):
        one = jbo.run_seeds(
            UCB,
            PROBLEM,
            key=KEY,
            num_steps=T,
            num_seeds=2,
            params=jbo.replace_params(UCB.default_params(), beta=float(b)),
        )
        np.testing.assert_allclose(swept.actions[i], one.actions, rtol=1e-9, atol=1e-12)


@pytest.mark.slow  # suite time; test_asktell_executor checks the serial loop == run_seeds for 3 seeds
def test_ask_tell_on_host_reproduces_the_scan():
    """The same algorithm, driven by a Python objective through ask/tell, makes the same decisions."""
    problem = jbo.problems.get("branin")
    scan = jbo.run(UCB, problem, key=KEY, num_steps=T)
    opt = jbo.AskTell(UCB, problem.bounds, num_steps=T, key=KEY)
    f = lambda x: float(problem.objective(jnp.asarray(x)))  # noqa: E731  (a plain host function)
    best_x, best_y = opt.optimize(f)
    xs = np.stack(opt.xs)
    np.testing.assert_allclose(problem.space.to_unit(xs), scan.actions, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(best_y, scan.metrics["best_value"][-1], rtol=1e-9)
    with pytest.raises(RuntimeError, match="budget"):
        opt.ask()


def test_ask_tell_batched_seeds():
    problem = jbo.problems.get("branin")
    opt = jbo.AskTell(RANDOM, problem.bounds, num_steps=6, key=KEY, num_seeds=3)
    bx, by = opt.optimize(lambda x: float(problem.objective(jnp.asarray(x))))
    assert bx.shape == (3, 2) and by.shape == (3,)


def test_pure_callback_problem_matches_traced_problem():
    problem = jbo.problems.get("branin")
    host = jbo.problems.from_callback(
        lambda x: float(-jbo.problems.synthetic.branin_min(np.asarray(x))),
        problem.bounds,
        optimal_value=problem.optimal_value,
    )
    a = jbo.run_seeds(RANDOM, problem, key=KEY, num_steps=6, num_seeds=2)
    b = jbo.run_seeds(RANDOM, host, key=KEY, num_steps=6, num_seeds=2)
    np.testing.assert_allclose(a.metrics["simple_regret"], b.metrics["simple_regret"], rtol=1e-12)


# ---------------------------------------------------------------- bad input
def test_error_num_steps_smaller_than_design():
    with pytest.raises(ValueError, match="smaller than the initial design"):
        jbo.run(UCB, PROBLEM, key=KEY, num_steps=N0 - 1)
    with pytest.raises(ValueError, match="initial design"):
        jbo.AskTell(UCB, PROBLEM.bounds, num_steps=N0 - 1, key=KEY)


def test_error_unknown_names():
    with pytest.raises(ValueError, match="unknown problem 'branninn'"):
        jbo.problems.get("branninn")
    with pytest.raises(ValueError, match="unknown algorithm 'gp_ucbb'"):
        jbo.algorithms.get("gp_ucbb")
    with pytest.raises(ValueError, match="unknown acquisition"):
        jbo.algorithms.GPBO(acquisition="foo")
    with pytest.raises(ValueError, match="unknown parameter"):
        jbo.replace_params(UCB.default_params(), betta=1.0)
    with pytest.raises(ValueError, match="bad options"):
        jbo.problems.get("branin", dim=3)


@pytest.mark.parametrize(
    "bounds, msg",
    [
        ([[0.0, 1.0], [1.0, 1.0]], r"lo >= hi in dimension\(s\) \[1\]"),
        ([[0.0, 1.0, 2.0]], r"shape \(2, d\)"),
        ([[0.0, -np.inf], [1.0, 1.0]], "finite"),
    ],
)
def test_error_bad_bounds(bounds, msg):
    with pytest.raises(ValueError, match=msg):
        jbo.spaces.Box(bounds)
    with pytest.raises(ValueError, match=msg):
        jbo.problems.from_function(lambda x: x.sum(), bounds)


def test_error_wrong_shapes():
    with pytest.raises(ValueError, match="trailing dimension 2"):
        PROBLEM.objective(jnp.zeros(3))
    opt = jbo.AskTell(RANDOM, PROBLEM.bounds, num_steps=6, key=KEY)
    opt.ask()
    with pytest.raises(ValueError, match="x must have shape"):
        opt.tell(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="outside the bounds"):
        opt.tell(np.array([100.0, 0.0]), 1.0)


def test_error_non_finite_host_values():
    opt = jbo.AskTell(RANDOM, PROBLEM.bounds, num_steps=6, key=KEY)
    x = opt.ask()
    with pytest.raises(ValueError, match="non-finite"):
        opt.tell(x, float("nan"))
    host = jbo.problems.from_callback(lambda x: float("inf"), PROBLEM.bounds, name="bad_sim")
    with pytest.raises(jbo.NonFiniteError, match="on bad_sim met NaN or inf:\n  objective: .* first at step 0"):
        jbo.run(RANDOM, host, key=KEY, num_steps=5)


def test_error_bad_seed_count_and_types():
    with pytest.raises(ValueError, match="num_seeds"):
        jbo.run_seeds(RANDOM, PROBLEM, key=KEY, num_steps=6, num_seeds=0)
    with pytest.raises(TypeError, match="jbo.Environment"):
        jbo.run(RANDOM, "branin", key=KEY, num_steps=6)
