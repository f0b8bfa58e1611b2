"""AskTell.optimize with concurrent.futures executors: parallel evaluation of the seeds' points equals
the serial loop (and the compiled scan), a failed evaluation leaves the optimiser unchanged and names
the point, and a retried run equals an uninterrupted one.

Truths: the serial loop and jbo.run_seeds (the engine's scan on the same problem and keys); the state
before the failure (compared leaf by leaf); the points the objective actually received."""

import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import jax
import numpy as np
import pytest

import jbo
from jbo.asktell import HostEvaluationError
from tests import host_objectives as host

KEY = jax.random.key(5)
T, S = 6, 3
ALG = jbo.algorithms.get(
    "gp_ucb",
    num_initial=3,
    hypers=jbo.parts.Refit(steps=2),
    maximiser=jbo.parts.Maximiser(num_raw=16, num_starts=2, steps=2),
)
BOUNDS = np.array([[-5.0, 0.0], [10.0, 15.0]])


def _opt(num_seeds=S):
    return jbo.AskTell(ALG, BOUNDS, num_steps=T, key=KEY, num_seeds=num_seeds)


def _history(opt):
    return np.stack(opt.xs), np.stack([np.asarray(o) for o in opt.observations])


def _leaves_equal(a, b):
    return all(
        np.array_equal(np.asarray(u), np.asarray(v), equal_nan=True)
        for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


@pytest.fixture(scope="module")
def serial():
    """The uninterrupted serial run: the reference every other run must equal exactly."""
    opt = _opt()
    opt.optimize(host.branin)
    return _history(opt)


@pytest.mark.extended  # AskTell == the scan in the default run: test_properties
def test_serial_loop_equals_the_compiled_scan(serial):
    xs, ys = serial
    prob = jbo.problems.get("branin")
    scan = jbo.run_seeds(ALG, prob, key=KEY, num_steps=T, num_seeds=S)
    np.testing.assert_allclose(prob.space.to_unit(xs.transpose(1, 0, 2)), scan.actions, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ys.T, scan.observations, rtol=1e-9)


def test_thread_pool_equals_serial_and_a_nan_is_reported_then_retried(serial, tmp_path):
    xs, ys = serial
    with ThreadPoolExecutor(max_workers=S) as pool:
        opt = _opt()
        opt.optimize(host.branin, num_evaluations=4, executor=pool)
        flag = tmp_path / "nan"
        flag.touch()
        before = (opt.t, len(opt.actions), opt.state)
        with pytest.raises(HostEvaluationError, match="1 of 3 host evaluation") as err:
            opt.optimize(host.FailOnce(flag, mode="nan"), executor=pool)
        e = err.value
        assert (opt.t, len(opt.actions)) == before[:2] == (4, 4) and _leaves_equal(opt.state, before[2])
        [f] = e.failures
        assert e.step == 4 and isinstance(f.error, ValueError) and "non-finite" in str(f.error)
        np.testing.assert_array_equal(f.action, xs[4, f.seed])  # the point the uninterrupted run evaluated there
        assert [o is None for o in e.observations] == [i == f.seed for i in range(S)]
        np.testing.assert_array_equal(opt.ask(), xs[4])  # deterministic keys: the same points are re-proposed
        opt.optimize(host.branin, executor=pool)  # the retry continues the run
    got_x, got_y = _history(opt)
    np.testing.assert_array_equal(got_x, xs)
    np.testing.assert_array_equal(got_y, ys)


def test_process_pool_equals_serial_and_a_crash_is_reported_then_retried(serial, tmp_path):
    """A 'spawn' pool (forking a multithreaded JAX process can deadlock) running the numpy-only module."""
    xs, ys = serial
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        pids = set(pool.map(host.worker_pid, range(4)))
        assert pids and multiprocessing.current_process().pid not in pids
        opt = _opt()
        opt.optimize(host.branin, num_evaluations=2, executor=pool)
        flag = tmp_path / "crash"
        flag.touch()
        state = opt.state
        with pytest.raises(HostEvaluationError, match="RuntimeError: simulator crashed") as err:
            opt.optimize(host.FailOnce(flag), executor=pool)
        [f] = err.value.failures
        assert err.value.step == 2 and opt.t == 2 and _leaves_equal(opt.state, state)
        assert isinstance(f.error, RuntimeError) and 0 <= f.seed < S
        np.testing.assert_array_equal(f.action, xs[2, f.seed])
        opt.optimize(host.branin, executor=pool)
    got_x, got_y = _history(opt)
    np.testing.assert_array_equal(got_x, xs)
    np.testing.assert_array_equal(got_y, ys)


class _Counting:
    """branin that records every point it is called with (thread-safe) and fails on chosen calls."""

    def __init__(self, fail=lambda x: False):
        self.calls, self.fail, self.lock = [], fail, threading.Lock()

    def __call__(self, x):
        with self.lock:
            self.calls.append(np.array(x))
        if self.fail(x):
            raise OSError("license server unreachable")
        return host.branin(x)


def test_retry_re_evaluates_only_the_failed_seeds_unless_discarded(serial):
    xs, _ = serial
    opt = _opt()
    opt.optimize(host.branin, num_evaluations=3)  # the initial design
    bad = _Counting(fail=lambda x: np.array_equal(x, xs[3, 1]) or np.array_equal(x, xs[3, 2]))
    with pytest.raises(HostEvaluationError) as err:
        opt.optimize(bad)
    assert [f.seed for f in err.value.failures] == [1, 2]
    assert all(isinstance(f.error, OSError) for f in err.value.failures)
    assert "seed 1" in str(err.value) and "seed 2" in str(err.value) and "OSError" in str(err.value)
    again = _Counting()
    opt.optimize(again, num_evaluations=1)  # only seeds 1 and 2 are evaluated again
    np.testing.assert_array_equal(np.stack(again.calls), xs[3, 1:])
    np.testing.assert_array_equal(opt.xs[3], xs[3])
    # discard_kept: a retry re-evaluates every seed of the failed step
    bad = _Counting(fail=lambda x: np.array_equal(x, xs[4, 0]))
    with pytest.raises(HostEvaluationError):
        opt.optimize(bad)
    opt.discard_kept()
    again = _Counting()
    opt.optimize(again, num_evaluations=1)
    np.testing.assert_array_equal(np.stack(again.calls), xs[4])


def test_one_seed_failure_and_bad_arguments():
    opt = jbo.AskTell(
        jbo.algorithms.get("random_search", num_initial=3), BOUNDS, num_steps=T, key=KEY
    )  # cheap to compile
    opt.optimize(host.branin, num_evaluations=3)
    with pytest.raises(HostEvaluationError, match="seed 0") as err:
        opt.optimize(lambda x: "not a number")
    assert err.value.failures[0].seed == 0 and opt.t == 3
    with pytest.raises(TypeError, match="concurrent.futures.Executor"):
        opt.optimize(host.branin, executor=object())
    with pytest.raises(ValueError, match="num_evaluations"):
        opt.optimize(host.branin, num_evaluations=-1)
