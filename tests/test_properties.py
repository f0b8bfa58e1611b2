"""The properties the slow tests prove (pytest --runslow), proven in the default run at a size that fits:
fewer seeds, steps, samples, devices or features, each against the same kind of truth. Each section
names the slow test it stands for.

Truths: random search on the same keys, judged by a one-sided sign test on paired seeds (GP methods
beat it); the posterior's mean and covariance (jbo.gp.predict_cov) with the Monte Carlo error of the
samples (Thompson sampling); the run on one device in one program (chunks, devices, processes); the
compiled scan on the same keys (AskTell); an independent dense search (a sample path's optimum).

Not repeated here, each needing a long run or compiled programs of its own (``pytest --runslow -m
slow`` runs them): the papers' reproductions (test_reproductions); uCVS's 800-step commitment, its
bucketed 7-set runs and EI-naive's decision replay (test_ucvs); the 5000-step reference numbers
(test_r_perp); the executed notebooks (test_notebooks; the docs build executes them too); EI,
log-EI, TS, the mean and the std on degenerate problems (test_robustness); every UHE method vmapped ==
looped, finer growth segments and the MAP lengthscale on 200 points (test_uhe_bo); segmented seeds and the
rank-1 GP (test_growing); SE and Matern-3/2 fits against SciPy (test_fit); ucvs:etc50 (test_registry);
bitwise real-GP runs, sweeps and environments on several devices (test_parallel); the four problems
slowest to build (test_cli); PI and the posterior mean against random search (see below).
"""

import socket
from pathlib import Path
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import jbo
from jbo import acquisitions as acq
from jbo import data, gp
from tests.test_parallel import BRANIN, PROBE, child_result
from tests.test_parallel import python_child as parallel_python
from tests.test_protocols import check_failed_tells_change_nothing

ROOT = Path(__file__).resolve().parents[1]
KEY_SEED = 7  # children build the same key from it
KEY = jax.random.key(KEY_SEED)
T, SEEDS = 6, 3  # the toy runs (PROBE: a draw around the best point so far; cheap to compile)


def _cpu():
    """One CPU device: the reference runs compare with child processes, which run on CPU."""
    return jax.devices("cpu")[:1]


def _leaves_close(a, b, rtol=1e-13, atol=1e-13):
    """Equal tree structure; integer leaves equal, float leaves equal to rounding."""
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if np.issubdtype(x.dtype, np.floating):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(x, y)


def python_child(code, num_devices=1):
    """test_parallel's child Python (CPU only) with `num_devices` forced host devices."""
    return parallel_python(code, XLA_FLAGS=f"--xla_force_host_platform_device_count={num_devices}")


@pytest.fixture(scope="module")
def whole():
    """The toy reference: every seed in one program on one CPU device, the whole final state."""
    return jbo.run_seeds(PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=SEEDS, devices=_cpu(), keep_final_state=True)


# ---------------------------------------------------------------- GP methods against random search (test_registry, slow)
# The slow test asks for a median 4x below random search's at 16 seeds on its key; here each seed is a
# pair (the same key: the same initial design), and a method beats random search when it ends with the
# lower simple regret on significantly more than half of the pairs: one-sided sign test, alpha = 0.05
# (24 seeds: at least 17 wins). Cheaper inner loops than the slow test's, 24 steps (the BOKE paper's
# GP-UCB explores hard: fixed lengthscale, sqrt(beta) = 2). Measured wins of 24 on master keys 3000-3005
# (the same settings): GP-EI 21-23, log-EI 21-23, GP-TS 22-23, BOKE's GP-UCB 19-23 (p <= 0.0033); on
# this file's key 22, 22, 24 and 20. PI and the posterior mean are not here: with MLE refits from 4
# design points both re-sample a design point at every step from the first BO step on in about half of
# the seeds (13 of 24 on this file's key; 6 and 8 wins); at the slow test's own settings 5-9 of 16 seeds
# beat random search on keys 11-16, and its median claim holds on key 11 only.
BEAT_GP = dict(
    num_initial=4,
    hypers=jbo.parts.Refit(steps=10),
    maximiser=jbo.parts.Maximiser(num_raw=64, num_starts=2, steps=5),
    growth=jbo.data.WHOLE,
)
BEAT = {
    "gp_ei": BEAT_GP,
    "gp_log_ei": BEAT_GP,
    "gp_ts": dict(BEAT_GP, acquisition=jbo.acquisitions.Thompson(num_features=256)),
    "boke_gp_ucb": dict(
        num_initial=4,
        maximiser=jbo.parts.Maximiser(num_raw_per_dim=32, steps=5, screen_data=True),
        growth=jbo.data.WHOLE,
    ),
}
BEAT_STEPS, BEAT_SEEDS = 24, 24


@pytest.fixture(scope="module")
def random_search_regret():
    tr = jbo.run_seeds(
        jbo.algorithms.get("random_search", num_initial=4), BRANIN, key=KEY, num_steps=BEAT_STEPS, num_seeds=BEAT_SEEDS
    )
    return np.asarray(tr.metrics["simple_regret"][:, -1])


@pytest.mark.parametrize(
    "name", [n if n in ("gp_ei", "boke_gp_ucb") else pytest.param(n, marks=pytest.mark.extended) for n in BEAT]
)
def test_gp_method_beats_random_search_seed_by_seed(name, random_search_regret):
    """On noise-free Branin a GP method ends below random search on significantly more than half of
    the seeds (paired, one-sided sign test at alpha = 0.05)."""
    tr = jbo.run_seeds(
        jbo.algorithms.get(name, **BEAT[name]), BRANIN, key=KEY, num_steps=BEAT_STEPS, num_seeds=BEAT_SEEDS
    )
    ours = np.asarray(tr.metrics["simple_regret"][:, -1])
    wins = int(np.sum(ours < random_search_regret))
    p = stats.binomtest(wins, BEAT_SEEDS, 0.5, alternative="greater").pvalue
    assert p < 0.05, (name, wins, p, ours, random_search_regret)


# ---------------------------------------------------------------- Thompson samples (test_acquisitions, slow: 2000 samples)
def test_thompson_samples_have_the_posterior_mean_and_covariance():
    """Sample paths at two points have the posterior's mean and covariance, to Monte Carlo error.

    Random Fourier features with uniform phases give the prior's covariance exactly in expectation
    over the features (E[2 cos(w.x + b) cos(w.y + b)] = k(x, y)), and the pathwise update is linear,
    so the paths' first two moments are the posterior's for any number of features: the tolerance is
    the samples' own error. With n = 1000 draws each of the 2 means and 3 covariance entries must lie
    within 4.5 standard errors (the covariance entries' errors estimated from the products
    themselves): two-sided 6.8e-6 each under the central limit theorem, 3.4e-5 for the five.
    Measured over keys 100..109: largest |z| 2.45."""
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(8, 2))
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(np.cos(5 * x[:, 0]) * x[:, 1]), 12)
    xs = jnp.array([[0.2, 0.8], [0.9, 0.1]])
    n = 1000

    @jax.jit  # one program (the posterior built eagerly would compile each of its operations)
    def draws_and_moments(keys):
        post = gp.condition(buf, gp.default_params(2, lengthscale=0.3, noise=1e-3))
        path_values = lambda k: jax.vmap(lambda q: acq.sample_path_value(acq.thompson_sample(k, post, 256), q))(xs)
        return jax.vmap(path_values)(keys), *gp.predict_cov(post, xs)

    vals, mean, cov = (np.asarray(a) for a in draws_and_moments(jax.random.split(jax.random.key(100), n)))
    dev = vals - mean  # about the exact mean: the products' mean is an unbiased covariance estimate
    z_mean = dev.mean(0) / np.sqrt(np.diag(cov) / n)
    prod = dev[:, :, None] * dev[:, None, :]
    z_cov = (prod.mean(0) - cov) / (prod.std(0, ddof=1) / np.sqrt(n))
    assert np.all(np.abs(z_mean) < 4.5), (z_mean, dev.mean(0), mean)
    assert np.all(np.abs(z_cov[np.triu_indices(2)]) < 4.5), (z_cov, prod.mean(0), cov)


# ---------------------------------------------------------------- AskTell (test_engine and test_protocols, slow: GP-UCB)
class ClimbParams(NamedTuple):
    radius: jax.Array | float = 0.2


class ClimbState(NamedTuple):
    best_u: jax.Array
    best_y: jax.Array
    count: jax.Array


class Climb(jbo.Algorithm):
    """A cheap-to-compile algorithm whose asks depend on what it was told: a uniform draw within
    `radius` (unit cube) of the best point so far."""

    num_initial: int = eqx.field(static=True, default=2)

    def default_params(self):
        return ClimbParams()

    def init(self, key, params, spec):
        return ClimbState(jnp.full(spec.dim, 0.5), jnp.asarray(0.0), jnp.int32(0))

    def ask(self, key, state, params, step):
        u = state.best_u + params.radius * jax.random.uniform(key, state.best_u.shape, minval=-1.0, maxval=1.0)
        return jnp.clip(u, 0.0, 1.0), state

    def tell(self, key, state, params, action, observation, step):
        better = (state.count == 0) | (observation > state.best_y)
        return ClimbState(
            jnp.where(better, action, state.best_u), jnp.where(better, observation, state.best_y), state.count + 1
        )


def _branin_on_host(x):
    return float(BRANIN.objective(jnp.asarray(x)))


def test_ask_tell_on_host_reproduces_the_scan_and_refuses_past_the_budget():
    """One optimiser driven through ask/tell by a host function makes the decisions of the compiled
    scan on the same key; once num_steps values are told, ask and tell raise."""
    steps = 8
    scan = jbo.run(Climb(), BRANIN, key=KEY, num_steps=steps)
    opt = jbo.AskTell(Climb(), BRANIN.bounds, num_steps=steps, key=KEY)
    best_x, best_y = opt.optimize(_branin_on_host)
    np.testing.assert_allclose(BRANIN.space.to_unit(np.stack(opt.xs)), scan.actions, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(best_y, scan.metrics["best_value"][-1], rtol=1e-12)
    with pytest.raises(RuntimeError, match=f"budget of {steps} evaluations is spent"):
        opt.ask()
    with pytest.raises(RuntimeError, match="budget"):
        opt.tell(best_x, best_y)


def test_ask_batch_refuses_more_points_than_the_budget():
    """Pending points spend steps: a batch that would pass num_steps is refused before anything
    changes, also after part of the budget is out as pending points (within the design: no compile)."""
    alg = jbo.algorithms.get("gp_ucb", num_initial=4)
    opt = jbo.AskTell(alg, BRANIN.bounds, num_steps=4, key=KEY)
    with pytest.raises(RuntimeError, match="exceeds num_steps=4"):
        opt.ask_batch(5)
    assert opt.ask_batch(3).shape == (3, 2) and len(opt.pending) == 3
    with pytest.raises(RuntimeError, match=r"exceeds num_steps=4 \(0 told, 3 pending\)"):
        opt.ask_batch(2)
    assert len(opt.pending) == 3 and opt.t == 0


def test_failed_tells_leave_the_run_as_if_they_never_happened():
    """test_protocols' check on a cheap algorithm (the slow test runs it on GP-UCB)."""
    check_failed_tells_change_nothing(Climb(), BRANIN.bounds, 8, _branin_on_host)


# ---------------------------------------------------------------- chunks, devices, processes (test_parallel, slow)
def test_chunked_and_padded_equal_one_program_and_the_plan_predicts_the_result_size(whole):
    """3 seeds in chunks of 2 (the last padded with a copy of seed 0, its result dropped) equal the
    3 seeds in one program (to rounding: see test_parallel's chunk test); the plan's result size is
    the arrays' own byte count. A memory limit of exactly the 2-run chunk's predicted bytes makes the
    runner cut the 3 runs into chunks of 2 by itself (the 3-run program is over it), with the same
    result; a chunk that cannot fit is refused, naming the limit."""
    keys = jax.random.split(KEY, SEEDS)
    fn, seconds = jbo.studies.compile_seeds(
        PROBE, BRANIN, keys=keys, num_steps=T, devices=_cpu(), chunk_size=2, keep_final_state=True
    )
    _leaves_close(fn(keys), whole)
    plan = fn.plan
    assert (plan.num_runs, plan.num_devices, plan.chunk_size, plan.num_chunks) == (3, 1, 2, 2) and seconds > 0
    assert plan.output_bytes == sum(np.asarray(x).nbytes for x in jax.tree.leaves(whole))
    assert 0 < plan.bytes_per_chunk < plan.memory_limit == int(0.75 * plan.available_bytes)
    auto, _ = jbo.studies.compile_seeds(
        PROBE, BRANIN, keys=keys, num_steps=T, devices=_cpu(), memory_limit=plan.bytes_per_chunk, keep_final_state=True
    )
    assert (auto.plan.chunk_size, auto.plan.num_chunks) == (2, 2), auto.plan
    assert auto.plan.bytes_per_chunk <= plan.bytes_per_chunk
    _leaves_close(auto(keys), whole)
    with pytest.raises(ValueError, match="over the memory limit"):
        jbo.studies.compile_seeds(PROBE, BRANIN, keys=keys, num_steps=T, devices=_cpu(), chunk_size=1, memory_limit=16)


# Each process: one CPU device; together one 2-device mesh. compile_seeds in chunks of 2 (one run per
# device): the chunk loop gathers every chunk over the processes; bitwise=True: each process runs its own
# device's one-device program and the host gathers the blocks.
_MESH_PROCESS = """
import json
import jbo
from jbo import parallel
parallel.initialize("127.0.0.1:{port}", num_processes=2, process_id={pid})
import jax, numpy as np
from tests.test_parallel import PROBE
br = jbo.problems.get("branin")
key = jax.random.key({key})
keys = jax.random.split(key, {seeds})
fn, _ = jbo.studies.compile_seeds(PROBE, br, keys=keys, num_steps={steps}, chunk_size=2, keep_final_state=True)
ch = fn(keys)
bw = jbo.run_seeds(PROBE, br, key=key, num_steps={steps}, num_seeds={seeds}, bitwise=True, keep_final_state=False)
print("RESULT" + json.dumps({{"process": jax.process_index(), "devices": len(jax.devices()),
    "local": len(jax.local_devices()), "chunks": fn.plan.num_chunks,
    "value": np.asarray(ch.metrics["value"]).tolist(), "actions": np.asarray(ch.actions).tolist(),
    "best": np.asarray(ch.final_state.best).tolist(),
    "bitwise_value": np.asarray(bw.metrics["value"]).tolist(), "bitwise_actions": np.asarray(bw.actions).tolist()}}))
"""


@pytest.mark.extended
def test_two_processes_share_one_mesh_and_each_gets_the_full_result(whole):
    """jbo.parallel.initialize joins two local processes of one CPU device each into one 2-device mesh
    (jax.distributed, gloo); each process gets the full result of 3 seeds run in chunks of 2 (padded
    to 4), equal to the one-process, one-device run; with bitwise=True bit for bit the one-device
    bitwise run. (The slow test: two devices per process, also unchunked.)"""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [
        python_child(_MESH_PROCESS.format(port=port, pid=i, key=KEY_SEED, seeds=SEEDS, steps=T), num_devices=1)
        for i in range(2)
    ]
    ref = jbo.run_seeds(
        PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=SEEDS, devices=_cpu(), bitwise=True, keep_final_state=False
    )
    for i, proc in enumerate(procs):
        r = child_result(proc)
        assert (r["process"], r["devices"], r["local"], r["chunks"]) == (i, 2, 1, 2), r
        for got, want in [
            (r["value"], whole.metrics["value"]),
            (r["actions"], whole.actions),
            (r["best"], whole.final_state.best),
        ]:
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(r["bitwise_value"], np.asarray(ref.metrics["value"]))
        np.testing.assert_array_equal(r["bitwise_actions"], np.asarray(ref.actions))


SHARDED_GP = dict(num_initial=3, hypers={"steps": 4}, maximiser={"num_raw": 16, "num_starts": 2, "steps": 2})
_SHARDED_GP = """
import json
import jax, numpy as np, jbo
alg = jbo.algorithms.get("gp_ucb", **{opts!r})
tr = jbo.run_seeds(
    alg, jbo.problems.get("branin"), key=jax.random.key({key}), num_steps={steps}, num_seeds={seeds}, keep_final_state=False
)
print("RESULT" + json.dumps({{"devices": len(jax.devices()), "on": len(tr.metrics["value"].sharding.device_set),
    "actions": np.asarray(tr.actions).tolist(), "value": np.asarray(tr.metrics["value"]).tolist(),
    "best_value": np.asarray(tr.metrics["best_value"]).tolist()}}))
"""


@pytest.mark.extended
def test_gp_sharded_over_two_devices_agrees_with_one_device_to_rounding():
    """GP-UCB (MLE refits, Adam on the acquisition), 4 seeds on 2 CPU devices (one SPMD program, 2
    seeds per device) in a child process, against the same seeds in one program on one device here:
    XLA compiles an SPMD program's per-device part through another simplification pipeline, so the
    fits may differ in the last bits, not more. (The slow test: 8 seeds on 4 devices, and
    bitwise=True bit for bit.)"""
    steps, seeds = 7, 4
    proc = python_child(_SHARDED_GP.format(opts=SHARDED_GP, key=KEY_SEED, steps=steps, seeds=seeds), num_devices=2)
    alg = jbo.algorithms.get("gp_ucb", **SHARDED_GP)
    ref = jbo.run_seeds(alg, BRANIN, key=KEY, num_steps=steps, num_seeds=seeds, devices=_cpu(), keep_final_state=False)
    r = child_result(proc)
    assert (r["devices"], r["on"]) == (2, 2), r
    np.testing.assert_allclose(r["actions"], np.asarray(ref.actions), rtol=0, atol=1e-10)
    np.testing.assert_allclose(r["value"], np.asarray(ref.metrics["value"]), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r["best_value"], np.asarray(ref.metrics["best_value"]), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- problems (test_problems and test_cli, slow)
def test_a_2d_sample_path_peaks_at_its_stated_optimum():
    """The 2-D SE sample path's stated optimum (dense search and polishing when it is built) is its value
    at the stated optimiser, and an independent, finer dense search (test_problems.dense_best: a 601 x
    601 grid and L-BFGS-B from its 8 best points) finds nothing better and reaches it. The slow test's
    path has 1024 Fourier features; 128 here (the searches' cost is the features)."""
    from tests.test_problems import dense_best

    p = jbo.problems.get("gp_sample", dim=2, kernel="se", lengthscale=0.2, seed=3, num_features=128)
    np.testing.assert_allclose(float(p.objective(p.optimizer)), p.optimal_value, rtol=1e-5, atol=1e-5)
    best = dense_best(p, np.random.default_rng(0))
    assert best <= p.optimal_value + 1e-5, (best, p.optimal_value)
    np.testing.assert_allclose(best, p.optimal_value, atol=1e-4)


# the slow test's other problems take 2-6 s of CPU each to build (dense searches for their optima)
SLOW_TO_BUILD = ("gp_sample", "sbo_kde:ackley", "sbo_kde:hartmann", "sbo_kde:complicated_hartmann")


def test_about_matches_the_costly_problems_that_build_in_a_second():
    """jbo.problems.ABOUT's space text and optimum equal the built problem's, for the costly problems
    (contextual, HPO, control-set) that build in about a second."""
    from tests.test_cli import COSTLY, check_about

    names = [n for n in COSTLY if n not in SLOW_TO_BUILD]
    assert len(names) == len(COSTLY) - len(SLOW_TO_BUILD) >= 10
    try:
        import sklearn  # noqa: F401
    except ImportError:  # pragma: no cover
        names = [n for n in names if not n.startswith("hpo:")]
    for name in names:
        check_about(name)
