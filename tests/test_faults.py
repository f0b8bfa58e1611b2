"""Faults at the boundary: non-finite values in a compiled run are named after it, failed
evaluations are left out, bad Params and host values get named errors, and AskTell minimises,
starts from data, and saves and resumes to the same next ask."""

import os
import re
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import gp
from jbo.asktell import HostEvaluationError

BRANIN = jbo.problems.get("branin")
SMALL = dict(
    num_initial=4, hypers=jbo.parts.Refit(steps=5), maximiser=jbo.parts.Maximiser(num_raw=32, num_starts=2, steps=3)
)
UCB = jbo.algorithms.get("gp_ucb", **SMALL)
UNIT = jnp.array([[0.0, 0.0], [1.0, 1.0]])


def _bowl(x):
    return -jnp.sum((x - 0.3) ** 2)


def test_a_nan_kernel_is_named_with_its_first_step():
    model = gp.GPModel(kernel=lambda r2: jnp.where(r2 > 0.5, jnp.nan, jnp.exp(-r2)))
    alg = jbo.algorithms.GPBO(model=model, **SMALL)
    with pytest.raises(jbo.NonFiniteError, match="model: .* first at step 4 of the run") as err:
        jbo.run(alg, BRANIN, key=1, num_steps=10)
    assert ("model", 4, ()) in err.value.problems and err.value.trace.metrics["value"].shape == (10,)
    with pytest.warns(RuntimeWarning, match="model"):
        trace = jbo.run(alg, BRANIN, key=1, num_steps=10, on_nonfinite="warn")
    assert np.asarray(trace.info.nonfinite_model)[4:].all() and not np.asarray(trace.info.nonfinite_model)[:4].any()


def test_a_nan_acquisition_names_the_seed_and_a_vector_one_is_refused_when_built():
    alg = jbo.algorithms.GPBO(acquisition=lambda post, x, best: jnp.nan * jnp.sum(x), **SMALL)
    with pytest.raises(jbo.NonFiniteError, match="acquisition: .* first at step 4 of seed 0 .* in 3 of 3 run"):
        jbo.run_seeds(alg, BRANIN, key=1, num_steps=6, num_seeds=3)
    with pytest.raises(ValueError, match="the acquisition <lambda> must return a scalar"):
        jbo.algorithms.GPBO(acquisition=lambda post, x, best: x)


@pytest.mark.extended
def test_failed_evaluations_are_left_out_of_the_model_and_the_regrets():
    """NaN on half the box: the run names the objective; the buffer holds exactly the finite
    evaluations, and the regrets equal those recomputed with NumPy from the finite values."""
    prob = jbo.problems.from_function(lambda x: jnp.where(x[0] > 0.5, jnp.nan, _bowl(x)), UNIT, optimal_value=0.0)
    with pytest.raises(jbo.NonFiniteError, match="objective"):
        jbo.run_seeds(UCB, prob, key=1, num_steps=14, num_seeds=3, keep_final_state=True)  # the same program as below
    tr = jbo.run_seeds(UCB, prob, key=1, num_steps=14, num_seeds=3, on_nonfinite="ignore", keep_final_state=True)
    value = np.asarray(tr.metrics["value"])
    failed = ~np.isfinite(value)
    assert failed.any() and np.array_equal(failed, np.asarray(tr.flags["nonfinite_objective"]))
    np.testing.assert_array_equal(np.asarray(tr.final_state.buffer.count), (~failed).sum(1))
    best = np.maximum.accumulate(np.where(failed, -np.inf, value), axis=1)
    best = np.where(np.isfinite(best), best, np.nan)  # NaN until a seed's first finite evaluation
    assert np.isnan(best).any(), "no seed starts with a failed evaluation: the NaN start is untested"
    np.testing.assert_allclose(np.asarray(tr.metrics["best_value"]), best)
    np.testing.assert_allclose(np.asarray(tr.metrics["simple_regret"]), 0.0 - best)
    np.testing.assert_allclose(
        np.asarray(tr.metrics["cumulative_regret"]), np.cumsum(np.where(failed, 0.0, -value), axis=1)
    )


def test_minus_infinity_regions_do_not_freeze_the_fit():
    prob = jbo.problems.from_function(lambda x: jnp.where(x[0] > 0.5, -jnp.inf, _bowl(x)), UNIT, optimal_value=0.0)
    tr = jbo.run_seeds(UCB, prob, key=1, num_steps=16, num_seeds=2, on_nonfinite="ignore")
    ls = np.asarray(tr.info.lengthscale)
    assert np.all(np.isfinite(ls)) and np.all(np.abs(ls[:, -1] - 0.2) > 1e-3)  # moved from its start
    assert np.all(np.isfinite(np.asarray(tr.metrics["simple_regret"])[:, 4:]))


@pytest.mark.extended  # Params checks at every entry point: test_checks
def test_params_are_checked_by_type_finiteness_and_domain():
    p = UCB.default_params()
    for bad, kind, what in (
        ("high", TypeError, "must be a number"),
        (float("nan"), ValueError, "NaN"),
        (-5.0, ValueError, r"outside its domain \[0, inf\)"),
        (True, TypeError, "number"),
    ):
        with pytest.raises(kind, match=f"UCBParams.beta.*{what}"):
            jbo.replace_params(p, beta=bad)
    bad = p._replace(acquisition=p.acquisition._replace(beta=-1.0))
    with pytest.raises(ValueError, match="GPBO: GPBOParams.acquisition -> UCBParams.beta"):
        jbo.run(UCB, BRANIN, key=0, num_steps=6, params=bad)
    with pytest.raises(ValueError, match=r"BOKEPlusParams.p = 1.5 is outside its domain \[0, 1\]"):
        jbo.replace_params(jbo.algorithms.get("boke_plus").default_params(), p=1.5)
    sweep = jbo.engine.stack_params(p, jbo.replace_params(p, beta=4.0))
    with pytest.raises(ValueError, match="outside"):
        jbo.run_sweep(
            UCB,
            BRANIN,
            key=0,
            num_steps=6,
            num_seeds=1,
            params=jbo.engine.stack_params(p, p._replace(acquisition=(p.acquisition._replace(beta=-2.0)))),
        )
    assert jbo.run_sweep(UCB, BRANIN, key=0, num_steps=6, num_seeds=1, params=sweep).metrics["value"].shape == (2, 1, 6)


def test_a_beaten_optimum_is_warned():
    prob = jbo.problems.from_function(_bowl, UNIT, optimal_value=-0.5)  # the true optimum is 0
    with pytest.warns(RuntimeWarning, match="beat the stated optimal value"):
        jbo.run(jbo.algorithms.get("random_search", num_initial=2), prob, key=0, num_steps=20)


def test_run_study_takes_run_seeds_keywords_and_refuses_positions():
    rs = {"rs": jbo.algorithms.get("random_search", num_initial=2)}
    new = jbo.studies.run_study(rs, ["branin"], key=5, num_steps=6, num_seeds=3, progress=False)
    direct = jbo.run_seeds(rs["rs"], BRANIN, key=5, num_steps=6, num_seeds=3)
    np.testing.assert_array_equal(new["simple_regret"], np.asarray(direct.metrics["simple_regret"]).ravel())
    with pytest.raises(TypeError, match="positional"):
        jbo.studies.run_study(rs, ["branin"], 5, 6, 3, progress=False)
    with pytest.raises(TypeError, match="positional"):
        jbo.run_seeds(rs["rs"], BRANIN, 5, 6, 3)


def test_host_values_that_are_not_numbers_are_named():
    host = jbo.problems.from_callback(lambda x: None, BRANIN.bounds, name="sim")
    with pytest.raises(Exception, match=r"sim: the objective at x=\[.*\] must return a number, got None"):
        jax.block_until_ready(jbo.run(jbo.algorithms.get("random_search", num_initial=2), host, key=0, num_steps=3))
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=6, key=0, num_seeds=2)
    for bad in (None, "1.0", True):
        with pytest.raises(HostEvaluationError, match="seed 0: .* must return a number"):
            opt.optimize(lambda x, bad=bad: bad)
        opt.discard_kept()
    assert opt.t == 0
    opt.ask()
    with pytest.raises(ValueError, match="x must be finite"):
        opt.tell(np.array([[np.nan, 1.0], [0.0, 1.0]]), [1.0, 2.0])


def _f(x):
    return float(BRANIN.objective(jnp.asarray(x)))


def test_asktell_minimize_plays_the_maximisation_of_the_negation():
    up = jbo.AskTell(UCB, BRANIN.bounds, num_steps=7, key=3)
    up.optimize(_f)
    down = jbo.AskTell(UCB, BRANIN.bounds, num_steps=7, key=3, minimize=True)
    down.optimize(lambda x: -_f(x))
    np.testing.assert_array_equal(np.stack(up.xs), np.stack(down.xs))
    (xu, yu), (xd, yd) = up.best(), down.best()
    np.testing.assert_array_equal(xu, xd)
    assert yd == -yu


def test_asktell_failed_evaluations_keep_the_state_and_leave_best():
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=7, key=3, num_seeds=2, on_nonfinite="warn")
    opt.optimize(_f, num_evaluations=5)
    x = opt.ask()
    pending = opt._pending
    with pytest.warns(RuntimeWarning, match=r"seed\(s\) \[1\] is a failed evaluation"):
        opt.tell(x, [_f(x[0]), float("nan")])
    leaf = lambda tree, s: [np.asarray(a)[s] for a in jax.tree.leaves(tree)]  # noqa: E731
    for a, b in zip(leaf(opt.state, 1), leaf(pending, 1)):
        np.testing.assert_array_equal(a, b)
    assert int(opt.state.buffer.count[0]) == 6 and int(opt.state.buffer.count[1]) == 5
    _, best = opt.best()
    assert np.all(np.isfinite(best))


def test_asktell_starts_from_data_as_if_told_step_by_step():
    x0 = np.array([[-2.0, 1.0], [0.0, 5.0], [3.0, 2.0], [8.0, 10.0], [1.0, 1.0]])
    y0 = np.array([_f(x) for x in x0])
    started = jbo.AskTell(UCB, BRANIN.bounds, num_steps=8, key=4, data=(x0, y0))
    by_hand = jbo.AskTell(UCB, BRANIN.bounds, num_steps=8, key=4)
    for x, y in zip(x0, y0):  # one row at a time, an ask in between dropped (tell_data tells from the state before it)
        if by_hand.t >= UCB.num_initial:
            by_hand.ask()
        by_hand.tell_data(x[None], [y])
    assert started.t == 5
    np.testing.assert_array_equal(started.ask(), by_hand.ask())
    with pytest.raises(ValueError, match="do not fit"):
        jbo.AskTell(UCB, BRANIN.bounds, num_steps=4, key=4, data=(x0, y0))


def test_asktell_saved_and_resumed_asks_what_the_uninterrupted_one_asks(tmp_path):
    path = tmp_path / "opt.pkl"
    run = jbo.AskTell(UCB, BRANIN.bounds, num_steps=9, key=2, num_seeds=2)
    for t in range(6):
        x = run.ask()
        if t == 5:  # asked, not told: the save leaves the pending step out
            run.save(path)
            break
        run.tell(x, [_f(p) for p in x])
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    resumed = jbo.AskTell.load(path, UCB)
    assert resumed.t == 5
    for _ in range(4):
        a, b = run.ask(), resumed.ask()
        np.testing.assert_array_equal(a, b)
        ys = [_f(p) for p in a]
        run.tell(a, ys)
        resumed.tell(b, ys)
    np.testing.assert_array_equal(run.best()[1], resumed.best()[1])
    with pytest.raises(ValueError, match="another algorithm"):
        jbo.AskTell.load(path, jbo.algorithms.get("gp_ei", **SMALL))


@pytest.mark.parametrize(
    "name,fn,bounds",
    [
        ("constant", lambda x: jnp.zeros(()), [[0.0, 0.0], [1.0, 1.0]]),
        ("plateau-with-duplicates", lambda x: jnp.round(x[0] * 2.0), [[0.0, 0.0], [1.0, 1.0]]),
        ("tiny-box", lambda x: -jnp.sum(x**2), [[0.0, 0.0], [1e-9, 1e-9]]),
    ],
)
def test_degenerate_data_gives_no_nan(name, fn, bounds):
    prob = jbo.problems.from_function(fn, jnp.asarray(bounds))
    tr = jbo.run_seeds(UCB, prob, key=0, num_steps=12, num_seeds=2)  # raises on any non-finite flag
    for leaf in jax.tree.leaves((tr.actions, tr.metrics, tr.info)):
        assert not np.any(np.isnan(np.asarray(leaf, dtype=np.float64)))


@pytest.mark.extended
def test_twenty_dimensions_give_no_nan():
    prob = jbo.problems.from_function(lambda x: -jnp.sum((x - 0.5) ** 2), jnp.stack([jnp.zeros(20), jnp.ones(20)]))
    alg = jbo.algorithms.get(
        "gp_ucb",
        num_initial=4,
        hypers=jbo.parts.Refit(steps=3),
        maximiser=jbo.parts.Maximiser(num_raw=16, num_starts=1, steps=2),
    )
    tr = jbo.run(alg, prob, key=0, num_steps=8)
    assert np.all(np.isfinite(np.asarray(tr.metrics["value"])))


def test_warnings_are_not_raised_on_a_clean_run():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jbo.run(UCB, BRANIN, key=0, num_steps=6)


# ---------------------------------------------------------------- q-batches and pending points
def _state_after(alg, values, spec):
    """GP-BO state after telling `values` at steps 0, 1, ... (fixed points), each later step asked first
    (the engine's order), with the algorithm's ask and tell compiled."""
    key = jax.random.key(3)
    xs = jax.random.uniform(key, (len(values), 2))
    ask, tell = eqx.filter_jit(alg.ask), eqx.filter_jit(alg.tell)
    state = alg.init(key, alg.default_params(), spec)
    for t, y in enumerate(values):
        step = jbo.Step(jnp.int32(t), jnp.asarray(t < alg.num_initial))
        if t >= alg.num_initial:
            _, state = ask(jax.random.key(t), state, alg.default_params(), step)
        state = tell(key, state, alg.default_params(), xs[t], jnp.asarray(y), step)
    return state, ask


@pytest.mark.parametrize("lie", ["kb", "cl_min"])
def test_a_rounds_points_do_not_see_the_rounds_values(lie):
    """q = 3: the point asked at the round's second step is the same whatever value the round's first
    point got (it is pending: it carries the lie); without batches (q = 1) it is not."""
    spec = jbo.engine.box_spec(2, 12)
    ys = [0.1, 0.5, -0.3, 0.9]  # the design (num_initial = 4), then the round's first point (step 4)
    picks = {}
    for q in (1, 3):
        alg = jbo.algorithms.GPBO(batching=jbo.parts.Lies(size=q, lie=lie), **SMALL)
        for last in (0.0, 5.0):
            state, ask = _state_after(alg, ys + [last], spec)
            x, _ = ask(jax.random.key(9), state, alg.default_params(), jbo.Step(jnp.int32(5), jnp.asarray(False)))
            picks[q, last] = np.asarray(x)
    np.testing.assert_array_equal(picks[3, 0.0], picks[3, 5.0])
    assert not np.allclose(picks[1, 0.0], picks[1, 5.0])


@pytest.mark.extended
def test_batch_runs_keep_one_fit_per_round_and_vmapped_equals_looped():
    alg = jbo.algorithms.GPBO(batching=jbo.parts.Lies(size=4), **SMALL)
    tr = jbo.run_seeds(alg, BRANIN, key=2, num_steps=16, num_seeds=2)
    ls = np.asarray(tr.info.lengthscale)[:, 4:]  # rounds: steps 4-7, 8-11, 12-15
    for r in range(3):
        np.testing.assert_array_equal(ls[:, 4 * r : 4 * r + 4], np.repeat(ls[:, 4 * r : 4 * r + 1], 4, axis=1))
    one = jbo.run(alg, BRANIN, key=jax.random.split(jax.random.key(2), 2)[1], num_steps=16)
    np.testing.assert_allclose(np.asarray(tr.actions[1]), np.asarray(one.actions), rtol=1e-9, atol=1e-12)
    x = np.asarray(tr.actions[0, 4:8])
    assert min(np.linalg.norm(a - b) for i, a in enumerate(x) for b in x[i + 1 :]) > 1e-6  # a spread batch


def test_asktell_batches_complete_in_any_order_and_survive_a_restart(tmp_path):
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=12, key=5)
    opt.optimize(_f, num_evaluations=4)
    batch = opt.ask_batch(3)
    assert batch.shape == (3, 2) and len(opt.pending) == 3
    assert min(np.linalg.norm(a - b) for i, a in enumerate(batch) for b in batch[i + 1 :]) > 1e-6
    opt.tell(batch[2], _f(batch[2]))  # the last one finishes first
    with pytest.raises(ValueError, match="not one of the 2 pending points"):
        opt.tell(batch[2], 1.0)
    more = opt.ask_batch(1)  # chosen with batch[0] and batch[1] still pending
    with pytest.raises(RuntimeError, match=r"3 point\(s\) of ask_batch are pending: optimize does not wait"):
        opt.optimize(_f, num_evaluations=1)
    with pytest.raises(RuntimeError, match="are pending: tell them"):
        opt.tell_data(batch[:1], [1.0])
    assert len(opt.pending) == 3 and opt.t == 5
    opt.save(tmp_path / "opt.pkl")  # the process dies here: three evaluations are pending
    with pytest.warns(RuntimeWarning, match=r"3 evaluation\(s\) were pending"):
        back = jbo.AskTell.load(tmp_path / "opt.pkl", UCB)
    assert [x.tolist() for x, _ in back.pending] == [batch[0].tolist(), batch[1].tolist(), more[0].tolist()]
    for x in (more[0], batch[0], batch[1]):
        back.tell(x, _f(x))
    assert back.t == 8 and not back.pending and int(back.state.buffer.count[0]) == 8
    with pytest.raises(ValueError, match="does not support pending points"):
        jbo.AskTell(jbo.algorithms.get("random_search", num_initial=2), BRANIN.bounds, num_steps=6, key=0).ask_batch(2)


def test_a_hanging_objective_times_out_naming_the_step_and_seed():
    """Only the hanging seed can miss the deadline: the healthy seed's future is complete when submit
    returns (before the deadline starts); the hanging one waits until the test releases it. The healthy
    value is kept, and the retry evaluates the failed seed alone."""
    import threading
    from concurrent.futures import Future, ThreadPoolExecutor

    opt = jbo.AskTell(
        jbo.algorithms.get("random_search", num_initial=2), BRANIN.bounds, num_steps=6, key=0, num_seeds=2
    )
    first = opt.ask()
    healthy, hanging = _f(first[0]), first[1]
    release = threading.Event()

    def objective(x):
        if np.allclose(x, hanging):
            release.wait(60.0)
        return _f(x)

    class HealthyAtSubmit(ThreadPoolExecutor):
        def submit(self, fn, x):
            if np.allclose(x, hanging):
                return super().submit(fn, x)
            done = Future()
            done.set_result(fn(x))
            return done

    with HealthyAtSubmit(2) as pool:
        try:
            with pytest.raises(
                HostEvaluationError,
                match=r"1 of 2 .* at step 0 .*:\n  seed 1: .* TimeoutError: no result within 0.5 s$",
            ) as info:
                opt.optimize(objective, executor=pool, timeout=0.5)
        finally:
            release.set()
    assert opt.t == 0 and [f.seed for f in info.value.failures] == [1]
    assert info.value.observations == [healthy, None]  # the healthy seed's value, kept for the retry
    retried = []
    opt.optimize(lambda x: retried.append(np.asarray(x)) or _f(x), num_evaluations=1)
    assert opt.t == 1 and len(retried) == 1 and np.allclose(retried[0], hanging)
    np.testing.assert_array_equal(np.asarray(opt.observations[0], float), [healthy, _f(hanging)])


def test_best_predicted_is_the_observed_point_with_the_best_posterior_mean():
    """Against the posterior mean recomputed from the state's buffer and hyper-parameters."""
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=8, key=1, minimize=True)
    opt.optimize(lambda x: -_f(x))
    x, value = opt.best_predicted()
    state = jax.tree.map(lambda a: a[0], opt.state)
    post = gp.condition(state.buffer, state.gp_params, UCB.model)
    mean = np.asarray(gp.predict_batch(post, jnp.stack([opt.space.from_host(p) for p in opt.xs]))[0])
    i = int(np.argmax(mean))
    np.testing.assert_array_equal(x, opt.xs[i])
    assert value == pytest.approx(-mean[i], rel=1e-12)


def test_a_problem_to_minimise_runs_as_the_maximisation_of_its_negation():
    f = lambda x: jnp.sum((x - 0.3) ** 2) + 1.0  # noqa: E731
    down = jbo.problems.from_function(f, UNIT, optimal_value=1.0, minimize=True)
    up = jbo.problems.from_function(lambda x: -f(x), UNIT, optimal_value=-1.0)
    a, b = jbo.run(UCB, down, key=3, num_steps=8), jbo.run(UCB, up, key=3, num_steps=8)
    np.testing.assert_array_equal(np.asarray(a.actions), np.asarray(b.actions))
    np.testing.assert_array_equal(np.asarray(a.metrics["simple_regret"]), np.asarray(b.metrics["simple_regret"]))
    f_of_x = np.asarray(jax.vmap(f)(jnp.asarray(down.space.to_host(a.actions))))  # f at the played points
    np.testing.assert_allclose(np.asarray(a.metrics["regret"]), f_of_x - 1.0, rtol=1e-10, atol=1e-12)


def test_run_study_takes_objects_as_well_as_names_and_names_bad_entries():
    rs = jbo.algorithms.get("random_search", num_initial=2)
    table = jbo.studies.run_study([rs, "random_search", rs], [BRANIN], key=0, num_steps=6, num_seeds=2, progress=False)
    assert sorted(set(table["method"])) == ["RandomSearch", "RandomSearch#2", "random_search"]
    assert set(table["problem"]) == {"branin"}
    with pytest.raises(TypeError, match="run_study's problems: 'x' is not a jbo.Environment"):
        jbo.studies.run_study([rs], {"x": 3}, key=0, num_steps=4, num_seeds=2, progress=False)
    with pytest.raises(ValueError, match="run_study's methods is empty"):
        jbo.studies.run_study([], [BRANIN], key=0, num_steps=4, num_seeds=2, progress=False)


def test_monte_carlo_q_acquisitions_reduce_to_the_closed_forms_at_q_1():
    """q = 1: E[mu + sqrt(beta pi / 2) |f - mu|] = mu + sqrt(beta) sigma, E[max(f - best, 0)] = EI, within
    the Monte-Carlo error of 200 000 samples."""
    from jbo import acquisitions, data

    x = jax.random.uniform(jax.random.key(0), (8, 2))
    post = gp.condition(data.from_arrays(x, jnp.sin(5 * x[:, 0]), 8), gp.default_params(2), "se")
    point = jnp.array([[0.35, 0.8]])
    z = jax.random.normal(jax.random.key(1), (200_000, 1))
    mean, var = gp.predict(post, point[0])
    sd = float(np.sqrt(var))
    assert float(acquisitions.q_ucb(post, point, 2.0, z)) == pytest.approx(
        float(mean) + np.sqrt(2.0) * sd, abs=0.01 * sd
    )
    best = float(mean) + 0.3 * sd
    assert float(acquisitions.q_ei(post, point, best, z)) == pytest.approx(
        float(acquisitions.ei(post, point[0], best)), abs=0.01 * sd
    )


@pytest.mark.extended
def test_a_joint_q_round_plays_the_points_chosen_at_its_start():
    alg = jbo.algorithms.GPBO(batching=jbo.parts.JointMC(size=3, samples=32), **SMALL)
    tr = jbo.run_seeds(alg, BRANIN, key=0, num_steps=10, num_seeds=2, keep_final_state=True)
    last = np.asarray(tr.actions[:, 7:10])  # the round of steps 7, 8, 9
    np.testing.assert_array_equal(last, np.asarray(tr.final_state.batch_points))
    assert np.min(np.linalg.norm(last[:, 0] - last[:, 1], axis=-1)) > 1e-6
    with pytest.raises(ValueError, match="no q-point form of PI"):
        jbo.algorithms.GPBO(acquisition="pi", batching=jbo.parts.JointMC(size=2))


# ------------------------------------------------------------------ AskTell: atomic, asked points only
def _leaves(opt):
    """Everything a tell may change, as NumPy copies (state leaves, counters, history)."""
    state = [
        np.array(jax.random.key_data(a) if jnp.issubdtype(a.dtype, jax.dtypes.prng_key) else a)
        for a in jax.tree.leaves(opt.state)
    ]
    return state, opt.t, [np.array(a) for a in opt.actions], len(opt.observations), len(opt.failed)


def _same(a, b):
    (sa, ta, aa, oa, fa), (sb, tb, ab, ob, fb) = a, b
    assert (ta, oa, fa, len(aa)) == (tb, ob, fb, len(ab))
    for u, v in zip(sa + aa, sb + ab):
        np.testing.assert_array_equal(u, v)


X0 = np.array([[-2.0, 1.0], [0.0, 5.0], [3.0, 2.0], [8.0, 10.0], [1.0, 1.0]])
Y0 = np.array([_f(x) for x in X0])


@pytest.mark.parametrize(
    "row, value, message",
    [
        ([20.0, 1.0], 1.0, "x lies outside the bounds"),
        ([np.nan, 1.0], 1.0, "x must be finite"),
        ([1.0, 1.0], np.nan, "non-finite value"),
        ([1.0, 1.0], np.inf, "non-finite value"),
    ],
)
def test_tell_data_checks_every_row_before_telling_any(row, value, message):
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=10, key=0, data=(X0[:2], Y0[:2]))
    opt.ask()  # an ask awaiting its tell: a failed tell_data keeps it too
    before = _leaves(opt)
    x, y = np.vstack([X0[2:4], [row], X0[4:]]), np.r_[Y0[2:4], value, Y0[4:]]
    with pytest.raises(ValueError, match=rf"tell_data row 2 \(x = .*\): .*{message}.*nothing was told"):
        opt.tell_data(x, y)
    _same(_leaves(opt), before)
    assert opt._asked is not None
    opt.tell_data(X0[2:], Y0[2:])  # the retry tells each row once
    whole = jbo.AskTell(UCB, BRANIN.bounds, num_steps=10, key=0, data=(X0, Y0))
    _same(_leaves(opt), _leaves(whole))
    np.testing.assert_array_equal(opt.ask(), whole.ask())


def test_tell_answers_the_last_ask_once():
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=8, key=0)
    with pytest.raises(ValueError, match=r"no ask awaits its tell at step 0 .* use tell_data\(x, y\)"):
        opt.tell(np.array([0.0, 1.0]), 1.0)
    for t in range(6):  # design steps and model steps (t >= num_initial = 4)
        x = opt.ask()
        with pytest.raises(ValueError, match=rf"is not the point ask\(\) proposed at step {t} .* tell_data"):
            opt.tell(np.where(x < 2.5, x + 0.5, x - 0.5), _f(x))  # another point inside the bounds
        before = _leaves(opt)
        opt.tell(x * (1 + 1e-12), _f(x))  # rounding in the user's code is the same point
        with pytest.raises(ValueError, match=rf"no ask awaits its tell at step {t + 1}"):
            opt.tell(x, _f(x))  # the same ask told twice
        assert opt.t == t + 1 and len(opt.actions) == len(before[2]) + 1
    seeds = jbo.AskTell(UCB, BRANIN.bounds, num_steps=8, key=0, num_seeds=2)
    x = seeds.ask()
    with pytest.raises(ValueError, match="is not the point ask"):
        seeds.tell(x[::-1], [_f(p) for p in x])


def test_keys_of_every_kind_give_the_same_decisions_and_other_values_are_named():
    def asks(key):
        opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=6, key=key)
        out = []
        for _ in range(5):
            x = opt.ask()
            out.append(x)
            opt.tell(x, _f(x))
        return np.stack(out)

    want = asks(3)
    for key in (np.int64(3), np.array(3, np.int32), jax.random.key(3), jax.random.PRNGKey(3), jnp.int32(3)):
        np.testing.assert_array_equal(asks(key), want)
    for bad in (True, 1.5, None, "0", [3], np.zeros(2), np.zeros(2, np.uint32)[:1]):
        with pytest.raises(TypeError, match="key must be an int seed"):
            jbo.AskTell(UCB, BRANIN.bounds, num_steps=6, key=bad)
        with pytest.raises(TypeError, match="key must be an int seed"):
            jbo.run(UCB, BRANIN, key=bad, num_steps=5)
    with pytest.raises(ValueError, match=r"key must be one key \(shape \(\)\)"):
        jbo.run_seeds(UCB, BRANIN, key=jax.random.split(jax.random.key(0), 2), num_steps=5, num_seeds=2)


def test_params_of_none_or_no_number_are_named_at_every_entry_point():
    acq = UCB.default_params().acquisition
    for value in (None, "2", [1, "x"], 1j):
        bad = UCB.default_params()._replace(acquisition=acq._replace(beta=value))
        calls = {
            "run": lambda: jbo.run(UCB, BRANIN, key=0, num_steps=5, params=bad),
            "run_seeds": lambda: jbo.run_seeds(UCB, BRANIN, key=0, num_steps=5, num_seeds=2, params=bad),
            "run_sweep": lambda: jbo.run_sweep(UCB, BRANIN, key=0, num_steps=5, num_seeds=2, params=bad),
            "run_study": lambda: jbo.studies.run_study(
                [UCB], [BRANIN], key=0, num_steps=5, num_seeds=2, params=lambda m, p: bad, progress=False
            ),
            "AskTell": lambda: jbo.AskTell(UCB, BRANIN.bounds, num_steps=5, key=0, params=bad),
            "replace_params": lambda: jbo.replace_params(UCB.default_params(), beta=value),
        }
        for name, call in calls.items():
            with pytest.raises(TypeError, match=r"UCBParams.beta must be a number, got"):
                call()


def _saved(tmp_path):
    opt = jbo.AskTell(UCB, BRANIN.bounds, num_steps=8, key=0)
    for _ in range(5):
        x = opt.ask()
        opt.tell(x, _f(x))
    path = tmp_path / "opt.jbo"
    opt.save(path)
    return opt, path


def test_a_file_that_is_not_or_no_longer_a_save_file_is_named(tmp_path):
    opt, path = _saved(tmp_path)
    raw = path.read_bytes()
    head, payload = (
        raw[: raw.index(b"\n", len(jbo.asktell.SAVE_MAGIC)) + 1],
        raw[raw.index(b"\n", len(jbo.asktell.SAVE_MAGIC)) + 1 :],
    )
    flipped = bytearray(raw)
    flipped[-40] ^= 0x01
    cases = {
        "text": (b"x,y\n1,2\n", "is not an AskTell save file"),
        "empty": (b"", "is not an AskTell save file"),
        "random bytes": (np.random.default_rng(1).bytes(300), "is not an AskTell save file"),
        "truncated": (raw[:-25], "is damaged"),
        "one bit flipped": (bytes(flipped), "is damaged"),
        "bad header": (jbo.asktell.SAVE_MAGIC + b"{nonsense\n" + payload, "is an AskTell save file with an unreadable"),
        "a pickle of something else": (
            __import__("pickle").dumps({"format": 1}),
            "is not an AskTell save file \\(it holds no optimiser record",
        ),
    }
    for name, (content, message) in cases.items():
        bad = tmp_path / f"{name}.jbo"
        bad.write_bytes(content)
        with pytest.raises(ValueError, match=rf"{re.escape(str(bad))} {message}"):
            jbo.AskTell.load(bad, UCB)
    with pytest.raises(ValueError, match="cannot read the AskTell save file"):
        jbo.AskTell.load(tmp_path / "missing.jbo", UCB)
    # a save file of the earlier layout (the bare pickle, no header) still loads, to the same next ask
    legacy = tmp_path / "legacy.pkl"
    legacy.write_bytes(payload)
    assert head.startswith(jbo.asktell.SAVE_MAGIC)
    np.testing.assert_array_equal(jbo.AskTell.load(legacy, UCB).ask(), opt.ask())


# ------------------------------------------------------------------ a fit that cannot trust its gradient
def matern_plus_periodic(r2):  # the how-to's profile form: a Matern 5/2 plus a periodic term in r = sqrt(r2)
    r = jnp.sqrt(5.0 * r2)
    return 0.5 * (1 + r + r * r / 3) * jnp.exp(-r) + 0.5 * jnp.exp(-2 * jnp.sin(jnp.pi * jnp.sqrt(r2) / 0.5) ** 2)


@jax.custom_jvp
def nan_derivative(r2):  # a finite kernel whose derivative is NaN (a user's derivative gone wrong)
    return jnp.exp(-0.5 * r2)


@nan_derivative.defjvp
def _nan_derivative_jvp(primals, tangents):
    return nan_derivative(primals[0]), jnp.nan * tangents[0]


@pytest.mark.extended  # a failed restart in the default run: test_fit
def test_a_fit_that_meets_a_nonfinite_loss_or_gradient_fails_visibly():
    x = jax.random.uniform(jax.random.key(0), (12, 2))
    y = jnp.sin(6 * x[:, 0]) + x[:, 1]
    buffer = jbo.data.from_arrays(x, y, capacity=16)
    ys = (y - y.mean()) / y.std(ddof=1)
    mask = jnp.ones(12, bool)
    # the independent facts: the periodic sum is not positive definite in 2-D (its LML is NaN); the
    # other profile's LML is finite while JAX's own gradient of it is NaN
    assert np.isnan(gp.log_marginal_likelihood(gp.default_params(2), x, ys, mask, matern_plus_periodic))
    assert np.isfinite(gp.log_marginal_likelihood(gp.default_params(2), x, ys, mask, nan_derivative))
    grad = jax.grad(gp.log_marginal_likelihood)(gp.default_params(2), x, ys, mask, nan_derivative)
    assert np.isnan(np.asarray(grad.log_lengthscale)).all()
    for kernel in (matern_plus_periodic, nan_derivative):
        for kw in (dict(num_restarts=1), dict(num_restarts=3), dict(method="lbfgs", num_restarts=1, num_steps=10)):
            fitted = gp.fit(jax.random.key(1), buffer, kernel, **kw)
            assert all(np.isnan(np.asarray(a)).all() for a in fitted), (kernel.__name__, kw)
    ok = gp.fit(jax.random.key(1), buffer, "matern52", num_restarts=3)
    assert all(np.isfinite(np.asarray(a)).all() for a in ok)


@pytest.mark.extended
def test_a_profile_in_sqrt_r2_fits_like_the_built_in_kernel():
    """exp(-sqrt(r2)) is Matern 1/2 written by hand: dk/dr2 is infinite at r2 = 0, where the exact
    lengthscale derivative is 0. Its closed-form gradient equals the built-in matern12's and central
    differences of the LML, and its fit equals the built-in's; in 1-D the Matern plus periodic sum is
    positive definite and fits to finite values whose gradient matches central differences."""
    x = jax.random.uniform(jax.random.key(3), (10, 2))
    ys = jnp.cos(5 * x[:, 0]) - x[:, 1]
    ys = (ys - ys.mean()) / ys.std(ddof=1)
    mask = jnp.ones(10, bool)
    by_hand = lambda r2: jnp.exp(-jnp.sqrt(r2))  # noqa: E731
    p = gp.default_params(2, lengthscale=jnp.array([0.3, 0.5]))
    v, g = gp.lml_and_grad(p, x, ys, mask, by_hand)
    v_builtin, g_builtin = gp.lml_and_grad(p, x, ys, mask, "matern12")
    np.testing.assert_allclose(v, v_builtin, rtol=1e-12)
    for a, b in zip(g, g_builtin):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for j in range(2):
        h = 1e-6 * jnp.eye(2)[j]
        lml = lambda s: gp.log_marginal_likelihood(
            p._replace(log_lengthscale=p.log_lengthscale + s * h), x, ys, mask, by_hand
        )  # noqa: E731
        np.testing.assert_allclose(g.log_lengthscale[j], (lml(1.0) - lml(-1.0)) / 2e-6, rtol=1e-5)
    buffer = jbo.data.from_arrays(x, ys, capacity=12)
    fits = [gp.fit(jax.random.key(1), buffer, k, num_restarts=2, num_steps=30) for k in (by_hand, "matern12")]
    for a, b in zip(*fits):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    x1 = x[:, :1]
    assert np.isfinite(gp.log_marginal_likelihood(gp.default_params(1), x1, ys, mask, matern_plus_periodic))
    p1 = gp.default_params(1)
    _, g1 = gp.lml_and_grad(p1, x1, ys, mask, matern_plus_periodic)
    lml1 = lambda s: gp.log_marginal_likelihood(
        p1._replace(log_lengthscale=p1.log_lengthscale + s), x1, ys, mask, matern_plus_periodic
    )  # noqa: E731
    np.testing.assert_allclose(g1.log_lengthscale[0], (lml1(1e-6) - lml1(-1e-6)) / 2e-6, rtol=1e-5)
    fitted = gp.fit(jax.random.key(1), jbo.data.from_arrays(x1, ys, capacity=12), matern_plus_periodic, num_steps=30)
    assert all(np.isfinite(np.asarray(a)).all() for a in fitted)
    assert abs(float(fitted.log_lengthscale[0]) - float(jnp.log(0.2))) > 1e-3  # it moved from its start


def test_a_failed_fit_is_flagged_naming_the_kernel_and_asktell_raises():
    alg = jbo.algorithms.GPBO(model=nan_derivative, **SMALL)
    with pytest.raises(
        jbo.NonFiniteError,
        match=r"(?s)GPBO \(kernel nan_derivative\) on branin met NaN .*\n  model: [^\n]*GP fit failed[^\n]* first at step 4",
    ):
        jbo.run(alg, BRANIN, key=1, num_steps=8)
    with pytest.warns(RuntimeWarning, match="kernel nan_derivative"):
        trace = jbo.run(alg, BRANIN, key=1, num_steps=8, on_nonfinite="warn")
    flags = np.asarray(trace.info.nonfinite_model)
    assert flags[4:].all() and not flags[:4].any()
    # the method keeps its previous (here: its initial) hyper-parameters, so the run goes on from finite ones
    np.testing.assert_allclose(np.asarray(trace.info.lengthscale)[4:], 0.2)
    assert np.isfinite(np.asarray(trace.actions)).all()
    opt = jbo.AskTell(alg, BRANIN.bounds, num_steps=8, key=1)
    for _ in range(4):
        x = opt.ask()
        opt.tell(x, _f(x))
    before = _leaves(opt)
    with pytest.raises(
        jbo.NonFiniteError,
        match=r"AskTell.ask at step 4: GPBO \(kernel nan_derivative\) met NaN or inf:\n  acquisition.*\n  model",
    ):
        opt.ask()
    _same(_leaves(opt), before)
    assert opt._asked is None
