"""jbo.parallel: runs over devices (forced CPU host devices, in a subprocess), over two processes
(jax.distributed on CPU with gloo), in memory-sized chunks, and the final state a trace keeps.

Truths: the single-device, single-chunk run of the same seeds (padding and chunking must not change
a run: bit for bit), the arrays' own byte counts (the predicted result size), and the full final
state (what the "small" default keeps must be its leaves, unchanged)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import parallel

ROOT = Path(__file__).resolve().parents[1]
KEY = jax.random.key(3)
BRANIN = jbo.problems.get("branin")
T, SEEDS = 6, 5


class ProbeParams(NamedTuple):
    spread: jax.Array | float = 0.5


class ProbeState(NamedTuple):
    xs: jax.Array  # (num_steps, dim): every action so far (a "buffer")
    count: jax.Array
    best: jax.Array
    space: object


class Probe(jbo.Algorithm):
    """A cheap-to-compile algorithm with a real buffer state and a sweepable parameter: a uniform
    draw in a box of half-width `spread` (unit cube) around the best action seen."""

    num_initial: int = eqx.field(static=True, default=2)

    def default_params(self):
        return ProbeParams()

    def init(self, key, params, spec):
        return ProbeState(jnp.zeros((spec.num_steps, spec.dim)), jnp.int32(0), jnp.full(spec.dim, 0.5), spec.space)

    def ask(self, key, state, params, step):
        u = state.best + params.spread * jax.random.uniform(key, state.best.shape, minval=-1.0, maxval=1.0)
        return state.space.from_unit(jnp.clip(u, 0.0, 1.0)), state

    def tell(self, key, state, params, action, observation, step):
        u = state.space.to_unit(action)
        first = state.count == 0
        better = first | (observation > jnp.max(jnp.where(jnp.arange(state.xs.shape[0]) < state.count, 0.0, -jnp.inf)))
        return state._replace(
            xs=state.xs.at[state.count].set(u), count=state.count + 1, best=jnp.where(better, u, state.best)
        )


PROBE = Probe()


def _leaves_equal(a, b, exact=True):
    """Equal trees; exact=False allows float leaves to differ by rounding (see test_chunked_...)."""
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if exact or not np.issubdtype(x.dtype, np.floating):
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------- children (started once, run while the rest runs)
_FOUR_DEVICES = """
import os, json
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, numpy as np, jbo
from jbo import engine
from tests.test_parallel import PROBE, ProbeParams, KEY, T, SEEDS
br = jbo.problems.get("branin")
def same(a, b):  # equal structure and leaves equal to rounding (see the test's docstring)
    return jax.tree.structure(a) == jax.tree.structure(b) and all(
        np.allclose(np.asarray(x), np.asarray(y), rtol=1e-13, atol=1e-13) if np.issubdtype(np.asarray(x).dtype,
        np.floating) else np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(jax.tree.leaves(a),
        jax.tree.leaves(b)))
out = {"devices": len(jax.devices())}
one = jbo.run_seeds(PROBE, br, key=KEY, num_steps=T, num_seeds=SEEDS, devices=1, keep_final_state=False)
fn, _ = jbo.studies.compile_seeds(PROBE, br, keys=jax.random.split(KEY, SEEDS), num_steps=T, keep_final_state=False)
out["plan"] = [fn.plan.num_devices, fn.plan.chunk_size, fn.plan.num_chunks]
four = fn(jax.random.split(KEY, SEEDS))
out["seeds_equal"] = same(one, four)
out["on_devices"] = len(fn(jax.random.split(KEY, 8)).metrics["value"].sharding.device_set)
table = jbo.studies.run_study({"probe": PROBE}, {"branin": br}, key=KEY, num_steps=T, num_seeds=SEEDS, progress=False)
out["study_equal"] = bool(np.allclose(table["value"].to_numpy(), np.asarray(one.metrics["value"]).ravel(),
                                     rtol=1e-13, atol=1e-13))
sweep = ProbeParams(np.array([0.1, 0.3, 0.9]))
s1 = jbo.run_sweep(PROBE, br, key=KEY, num_steps=T, num_seeds=2, params=sweep, devices=1)
s4 = jbo.run_sweep(PROBE, br, key=KEY, num_steps=T, num_seeds=2, params=sweep)  # 6 runs padded to 8
out["sweep_equal"], out["sweep_shape"] = same(s1, s4), list(s4.metrics["value"].shape)
e4 = engine.run_environments(PROBE, [br, br], key=KEY, num_steps=T, num_seeds=SEEDS, keep_final_state=False)
out["environments_equal"] = all(same(jax.tree.map(lambda a: a[e], e4), one) for e in range(2))
# bitwise=True: lax.map over runs and one one-device program per device -> bit for bit equal
exact = lambda a, b: jax.tree.structure(a) == jax.tree.structure(b) and all(  # noqa: E731
    np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
b1 = jbo.run_seeds(PROBE, br, key=KEY, num_steps=T, num_seeds=SEEDS, devices=1, keep_final_state=False, bitwise=True)
fnb, _ = jbo.studies.compile_seeds(PROBE, br, keys=jax.random.split(KEY, SEEDS), num_steps=T, chunk_size=4, keep_final_state=False,
                                   bitwise=True)  # 5 seeds padded to 8, 2 chunks of one run per device
out["bitwise_plan"] = [fnb.plan.num_devices, fnb.plan.chunk_size, fnb.plan.num_chunks]
out["bitwise_identical"] = exact(b1, fnb(jax.random.split(KEY, SEEDS)))
out["bitwise_near_vmapped"] = same(b1, one)
if os.environ.get("JBO_TEST_SLOW"):  # a sweep and environments too (--runslow: 8 more compiles)
    sb1 = jbo.run_sweep(PROBE, br, key=KEY, num_steps=T, num_seeds=2, params=sweep, devices=1, bitwise=True)
    sb4 = jbo.run_sweep(PROBE, br, key=KEY, num_steps=T, num_seeds=2, params=sweep, bitwise=True)
    from jbo.problems import degenerate  # environments that differ in array values (the vmapped branch)
    envs = [degenerate.CASES[k] for k in ("base", "y_huge", "very_noisy")]
    eb4 = engine.run_environments(PROBE, envs, key=KEY, num_steps=T, num_seeds=SEEDS, keep_final_state=False, bitwise=True)
    alone = [jbo.run_seeds(PROBE, e, key=KEY, num_steps=T, num_seeds=SEEDS, devices=1, keep_final_state=False, bitwise=True) for e in envs]
    out["bitwise_slow"] = [exact(sb1, sb4), all(exact(jax.tree.map(lambda a: a[i], eb4), alone[i]) for i in range(3))]
print("RESULT" + json.dumps(out))
"""

_HOST = """
import os, json
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jbo
from jbo import parallel
parallel.initialize("127.0.0.1:{port}", num_processes=2, process_id={pid})
import jax, numpy as np
from tests.test_parallel import PROBE, KEY, T, SEEDS
br = jbo.problems.get("branin")
tr = jbo.run_seeds(PROBE, br, key=KEY, num_steps=T, num_seeds=SEEDS)
fn, _ = jbo.studies.compile_seeds(PROBE, br, keys=jax.random.split(KEY, SEEDS), num_steps=T, chunk_size=4)
ch = fn(jax.random.split(KEY, SEEDS))
bw = jbo.run_seeds(PROBE, br, key=KEY, num_steps=T, num_seeds=SEEDS, bitwise=True)  # each process runs its own 2 devices' slices
print("RESULT" + json.dumps({{"process": jax.process_index(), "devices": len(jax.devices()),
    "bitwise_value": np.asarray(bw.metrics["value"]).tolist(), "bitwise_actions": np.asarray(bw.actions).tolist(),
    "local": len(jax.local_devices()), "chunks": fn.plan.num_chunks,
    "value": np.asarray(tr.metrics["value"]).tolist(), "actions": np.asarray(tr.actions).tolist(),
    "best": np.asarray(tr.final_state.best).tolist(), "chunked_value": np.asarray(ch.metrics["value"]).tolist()}}))
"""


def python_child(code, **extra_env):
    """A child Python; JAX_PLATFORMS=cpu so that its forced host devices are JAX's devices also on a
    machine with an accelerator (where the default backend would be the GPU)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu", **extra_env}
    return subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def child_result(proc, timeout=300):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.split("RESULT", 1)[1])


@pytest.fixture(scope="module")
def children(request):
    """The 4-device child, started first so that it runs while the in-process tests run."""
    slow = {"JBO_TEST_SLOW": "1"} if request.config.getoption("--runslow") else {}
    procs = {"four": python_child(_FOUR_DEVICES, **slow)}
    yield procs
    for p in procs.values():
        if p.poll() is None:
            p.kill()


@pytest.fixture(scope="module")
def whole():
    """The reference: all seeds in one program on one device, the whole final state."""
    return jbo.run_seeds(PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=SEEDS, devices=1, keep_final_state=True)


# ---------------------------------------------------------------- one process, one device
@pytest.mark.slow  # 41 s: chunk independence is proven by test_bitwise_runs_are_identical_on_any_device_count_and_chunk
def test_chunked_and_padded_equal_one_program_and_the_plan_predicts_the_result_size(children, whole):
    """Chunks agree with one program to rounding, not always bit for bit: XLA:CPU vectorises the
    batch axis, and a run's elementwise arithmetic (here from_unit's b0 + u (b1 - b0)) can be
    contracted or rounded differently in a full vector than in the remainder loop of another batch
    size (measured: 1 ulp in 2 of 60 action entries). Counters and integer leaves are exact."""
    # 5 seeds in chunks of 2: three chunks, the last padded with a copy of seed 0, its result dropped
    fn, seconds = jbo.studies.compile_seeds(
        PROBE, BRANIN, keys=jax.random.split(KEY, SEEDS), num_steps=T, chunk_size=2, keep_final_state=True
    )
    _leaves_equal(fn(jax.random.split(KEY, SEEDS)), whole, exact=False)
    plan = fn.plan
    assert (plan.num_runs, plan.num_devices, plan.chunk_size, plan.num_chunks) == (5, 1, 2, 3) and seconds > 0
    assert plan.output_bytes == sum(np.asarray(x).nbytes for x in jax.tree.leaves(whole))  # the 5 runs' trace
    assert 0 < plan.bytes_per_chunk < plan.memory_limit == int(0.75 * plan.available_bytes)
    # automatic: a memory limit between the one-run and the five-run predictions cuts the 5 seeds into
    # chunks (halfway: on a GPU the fixed part of a program's memory dwarfs the per-run part)
    one, five = (
        jbo.studies.compile_seeds(PROBE, BRANIN, keys=jax.random.split(KEY, SEEDS), num_steps=T, chunk_size=c)[
            0
        ].plan.bytes_per_chunk
        for c in (1, None)
    )
    assert one < five
    limit = (one + five) / 2
    auto, _ = jbo.studies.compile_seeds(
        PROBE, BRANIN, keys=jax.random.split(KEY, SEEDS), num_steps=T, memory_limit=limit
    )
    assert auto.plan.num_chunks > 1 and auto.plan.bytes_per_chunk <= limit
    _leaves_equal(auto(jax.random.split(KEY, SEEDS)), whole, exact=False)
    with pytest.raises(ValueError, match="over the memory limit"):
        jbo.studies.compile_seeds(PROBE, BRANIN, keys=jax.random.split(KEY, SEEDS), num_steps=T, memory_limit=16)


def test_final_state_small_by_default(whole, monkeypatch):
    assert jbo.scan.keep_state(whole, False).final_state is None and jbo.scan.keep_state(whole, True) is whole
    # "small": per run, leaves of at most SMALL_STATE_ELEMENTS elements; xs (6 x 2 = 12) goes at 8
    monkeypatch.setattr(jbo.scan, "SMALL_STATE_ELEMENTS", 8)
    small = jax.vmap(lambda tr: jbo.scan.keep_state(tr, "small"))(whole)
    assert small.final_state.xs is None and small.final_state.best is not None
    kept = jax.tree.map(
        lambda s, f: None if s is None else f, small.final_state, whole.final_state, is_leaf=lambda x: x is None
    )  # the whole state's leaves where "small" kept one
    _leaves_equal(kept, small.final_state)
    monkeypatch.undo()
    assert jbo.run_seeds(PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=SEEDS).final_state.xs.shape == (
        SEEDS,
        T,
        2,
    )  # 12 <= 1024: kept


def test_bad_settings_are_named(whole):
    jbo.run_seeds(
        PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=2, bitwise=True
    )  # cached now: bitwise=1 must still be refused
    for bad, match in [
        (dict(devices=0), "devices=0"),
        (dict(devices=True), "not a bool"),
        (dict(devices=99), "ask for 1 to"),
        (dict(devices=[]), "non-empty"),
        (dict(chunk_size=0), "chunk_size"),
        (dict(memory_limit=-1.0), "memory_limit"),
        (dict(keep_final_state="all"), "keep_final_state"),
        (dict(bitwise="yes"), "bitwise"),
        (dict(bitwise=1), "bitwise"),
    ]:
        with pytest.raises(ValueError, match=match):
            jbo.run_seeds(PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=2, **bad)
    jax.devices()  # a backend runs in this process, so initialize must refuse (not try to connect)
    with pytest.raises(RuntimeError, match="before any JAX computation"):
        parallel.initialize("127.0.0.1:1", 2, 0)


# ---------------------------------------------------------------- 4 forced host devices; 2 processes
@pytest.mark.extended  # two devices, a real GP: test_properties
def test_four_forced_host_devices_equal_one_device(children):
    """Seeds (5, padded to 8), a sweep (3 settings x 2 seeds, padded to 8), environments and a study on
    4 CPU devices equal the one-device run (to rounding: see the chunk test and
    test_gp_sharded_agrees_to_rounding)."""
    r = child_result(children["four"])
    assert r["devices"] == 4 and r["plan"] == [4, 8, 1] and r["on_devices"] == 4
    assert r["seeds_equal"] and r["study_equal"] and r["sweep_equal"] and r["environments_equal"], r
    assert r["sweep_shape"] == [3, 2, T]


@pytest.mark.extended  # bitwise on two processes in the default run: test_properties
def test_bitwise_runs_are_identical_on_any_device_count_and_chunk(children):
    """bitwise=True (runs one after another by lax.map; on several devices one one-device program
    per device instead of an SPMD program): 5 seeds on 4 devices, padded to 8, in 2 chunks of one
    run per device, are bit for bit the 5 seeds in one program on one device, which itself equals
    the vmapped run to rounding. With --runslow also a sweep, and three environments that differ (4
    devices) each equal to its own one-device bitwise run_seeds."""
    r = child_result(children["four"])
    assert r["bitwise_plan"] == [4, 4, 2]
    assert r["bitwise_identical"] and r["bitwise_near_vmapped"], r
    assert r.get("bitwise_slow", [True, True]) == [True, True], r


@pytest.mark.slow  # two more processes (~15 s of CPU): over the suite's budget; run with --runslow
def test_two_processes_share_one_mesh_and_each_gets_the_full_result(whole):
    """jbo.parallel.initialize (jax.distributed, gloo on CPU) joins two local processes of 2 devices
    each into one 4-device mesh; each process gets the full result, equal to the one-process run
    (unchunked and in chunks of 4: the chunk loop gathers every chunk over processes); with
    bitwise=True each process runs its own devices' one-device programs and the result is bit for bit
    the one-process, one-device bitwise run."""
    ref = jbo.run_seeds(PROBE, BRANIN, key=KEY, num_steps=T, num_seeds=SEEDS, devices=1, bitwise=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [python_child(_HOST.format(port=port, pid=i)) for i in range(2)]
    for i, proc in enumerate(procs):
        r = child_result(proc)
        assert (r["process"], r["devices"], r["local"], r["chunks"]) == (i, 4, 2, 2)
        for got, want in [
            (r["value"], whole.metrics["value"]),
            (r["actions"], whole.actions),
            (r["best"], whole.final_state.best),
            (r["chunked_value"], whole.metrics["value"]),
        ]:
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(r["bitwise_value"], np.asarray(ref.metrics["value"]))
        np.testing.assert_array_equal(r["bitwise_actions"], np.asarray(ref.actions))


_GP = """
import os, json
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, numpy as np, jbo
gp = jbo.algorithms.get(
    "gp_ucb", num_initial=3, hypers=jbo.parts.Refit(steps=4), maximiser=jbo.parts.Maximiser(num_raw=16, num_starts=2, steps=2)
)
br = jbo.problems.get("branin")
a = jbo.run_seeds(gp, br, key=jax.random.key(0), num_steps=8, num_seeds=8, devices=1)
b = jbo.run_seeds(gp, br, key=jax.random.key(0), num_steps=8, num_seeds=8)
gap = lambda x, y: max(float(np.max(np.abs(np.asarray(u, float) - np.asarray(v, float)))) for u, v in
                       zip(jax.tree.leaves(x), jax.tree.leaves(y)))
c = jbo.run_seeds(gp, br, key=jax.random.key(0), num_steps=8, num_seeds=8, devices=1, bitwise=True)
d = jbo.run_seeds(gp, br, key=jax.random.key(0), num_steps=8, num_seeds=8, bitwise=True)
print("RESULT" + json.dumps({"actions": gap(a.actions, b.actions), "value": gap(a.metrics, b.metrics),
                             "identical": gap(a, b) == 0.0, "bitwise_identical": gap(c, d) == 0.0,
                             "bitwise_vs_vmapped": gap(a.actions, c.actions)}))
"""


@pytest.mark.slow
def test_gp_sharded_agrees_to_rounding():
    """GP-UCB on 4 devices vs 1: XLA compiles the per-device program of a multi-device (SPMD)
    executable through a different algebraic-simplification pipeline than a one-device program (the
    optimised HLO differs in a few divides/multiplies/negates), so a GP fit can differ in the last
    bits; with 2 seeds per device and --xla_disable_hlo_passes=algsimp the runs were bit-identical.
    bitwise=True avoids the SPMD program (one one-device executable per device) and the batch's
    vectorisation (lax.map): then the 4-device run is bit for bit the 1-device one."""
    r = child_result(python_child(_GP))
    assert r["actions"] < 1e-10 and r["value"] < 1e-9, r
    assert r["bitwise_identical"] and r["bitwise_vs_vmapped"] < 1e-10, r


@pytest.mark.extended  # XLA's flags on the CPU programs
def test_cpu_compile_options_change_rounding_only(monkeypatch, xla_optimized):
    """The run programs' CPU compile options (parallel.CPU_COMPILER_OPTIONS, LLVM -O2 by default) give
    the same GP-UCB runs as XLA's default options, to rounding."""
    assert parallel.CPU_COMPILER_OPTIONS == {"xla_backend_optimization_level": 2}
    alg = jbo.algorithms.get("gp_ucb", num_initial=4)
    keys = jax.random.split(KEY, 2)
    ours = jbo.studies.compile_seeds(alg, BRANIN, keys=keys, num_steps=10)[0](keys)
    monkeypatch.setattr(parallel, "CPU_COMPILER_OPTIONS", {})
    xla = jbo.studies.compile_seeds(alg, BRANIN, keys=keys, num_steps=10)[0](keys)
    np.testing.assert_allclose(ours.actions, xla.actions, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ours.observations, xla.observations, rtol=1e-6, atol=1e-9)


def test_short_programs_compile_with_the_short_program_options(monkeypatch, xla_optimized):
    """A CPU program of at most SHORT_PROGRAM_RUN_STEPS runs x steps is compiled with
    SHORT_PROGRAM_OPTIONS on top of CPU_COMPILER_OPTIONS (seen in the options XLA is handed), a longer
    one without, none with XLA's own options; GP-UCB's runs are the same either way."""
    import jax._src.stages as stages

    assert parallel.cpu_compiler_options(parallel.SHORT_PROGRAM_RUN_STEPS) == {
        **parallel.CPU_COMPILER_OPTIONS,
        **parallel.SHORT_PROGRAM_OPTIONS,
    }
    assert parallel.cpu_compiler_options(parallel.SHORT_PROGRAM_RUN_STEPS + 1) == parallel.CPU_COMPILER_OPTIONS
    assert parallel.cpu_compiler_options(None) == parallel.CPU_COMPILER_OPTIONS
    handed = []
    compile_ = stages.Lowered.compile

    def spy(self, *a, **k):
        handed.append(k.get("compiler_options"))
        return compile_(self, *a, **k)

    monkeypatch.setattr(stages.Lowered, "compile", spy)
    alg = jbo.algorithms.get("gp_ucb", num_initial=4)
    keys = jax.random.split(KEY, 2)
    short = jbo.studies.compile_seeds(alg, BRANIN, keys=keys, num_steps=10)[0](keys)
    assert handed[-1] == {**parallel.CPU_COMPILER_OPTIONS, **parallel.SHORT_PROGRAM_OPTIONS}
    monkeypatch.setattr(parallel, "SHORT_PROGRAM_RUN_STEPS", 0)
    long = jbo.studies.compile_seeds(alg, BRANIN, keys=keys, num_steps=10)[0](keys)
    assert handed[-1] == parallel.CPU_COMPILER_OPTIONS
    np.testing.assert_allclose(short.actions, long.actions, rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(parallel, "CPU_COMPILER_OPTIONS", {})
    jbo.studies.compile_seeds(alg, BRANIN, keys=keys, num_steps=10)
    assert handed[-1] is None
