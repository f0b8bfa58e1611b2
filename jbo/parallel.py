"""Runs spread over devices and hosts, and batches too large for one program split into chunks.

Every multi-run entry point (``jbo.run_seeds``, ``jbo.run_sweep``, ``jbo.engine.run_environments``,
``jbo.studies.compile_seeds`` / ``run_study``) is a batch of *independent* runs: one scan per seed
(per sweep setting, per environment), vmapped. This module runs such a batch

* **over devices**: a 1-D :class:`jax.sharding.Mesh` over a ``"seeds"`` axis; the batch axis of the
  keys (and of swept Params) is split over it with :func:`jax.shard_map`, so every device runs the
  *unchanged* vmapped program on its own slice of runs (with ``bitwise=True``: a one-device program
  per device, dispatched by the host; see below). There is no collective at all in the
  program (the runs never talk to each other); for a hang we met on several CPU devices of one
  process, which is not a collective, see below.
* **padded**: a run count that is not a multiple of the device count (or of the chunk size) is
  padded with copies of the first run's inputs, and the padded runs are dropped from the result.
* **in chunks**: before anything runs, the chunk program is compiled ahead of time and its memory
  is predicted from ``compiled.memory_analysis()`` (arguments + outputs + temporaries - aliased, on
  every device of the mesh) and compared with the memory available (``psutil`` on CPU, where all
  devices share the host's memory; ``device.memory_stats()`` on an accelerator). If it does not fit
  in ``memory_limit`` (default: 75% of what is available) the batch is cut into chunks of fewer
  runs, a multiple of the device count, and one compiled chunk program is called in a host loop;
  ``chunk_size`` sets the chunk explicitly. :class:`Plan` (logged on the ``jbo.parallel`` logger
  at INFO, returned by :func:`compile_runs`) holds the prediction.
* **over hosts**: :func:`initialize` wraps :func:`jax.distributed.initialize` (JAX's own
  multi-controller runtime; CPU collectives via gloo). Afterwards ``jax.devices()`` lists every
  process's devices, the default mesh spans all of them, every process runs the same script, and
  **every process gets back the full result** (the sharded output is gathered with
  ``multihost_utils.process_allgather``), so the code after a run does not depend on the process.

Results equal the unsharded, unchunked run to rounding: each run's computation does not depend on
which other runs share its program, but XLA compiles the per-device program of an SPMD executable
through another simplification pipeline than a one-device program, and the vectorised run axis rounds
a run differently in a full vector than in a remainder loop (GP-UCB actions within ~1e-10).
**bitwise=True** removes both: the runs are mapped by ``lax.map`` (one after another, so a run's code
does not depend on the batch size) and on several devices each device gets its own one-device
executable, compiled for it and called by the host on its slice; results are then bit for bit the
same on any device count (of one kind), chunk size and padding (tests/test_parallel.py), at the price of the
vectorisation across runs and one compile per device (in parallel threads).

``devices``: None (default) = all of ``jax.devices()``; an int n = the first n of them (``1``
switches sharding off); or a sequence of :class:`jax.Device`.

**Several CPU devices in one process** (``--xla_force_host_platform_device_count``) can hang with
jax/jaxlib 0.10.2: the sharded GP-UCB benchmark (32 seeds x 40 steps, 4 forced devices, 2 cores)
stopped for good, twice, with and without ``--xla_cpu_multi_thread_eigen=false``. gdb: every
device program sat in jaxlib's batched LAPACK triangular solve (``lapack_dtrsm_ffi`` ->
``jax::ParallelBatchMap`` -> ``absl::BlockingCounter::Wait``) on a worker of XLA:CPU's Eigen pool,
waiting for batch tasks it had put on that same pool, while the other workers slept
(experiments/results/engine/scale/sharding_deadlock_gdb*.txt; reproduction:
experiments/engine/scale/sharding_deadlock.py). There is no collective in jbo's sharded programs; the wait
is nested parallelism on one thread pool, and it needs GP matrices large enough for the kernel to
split its batch (not seen at 12 steps). The same wait later hung single-device 10-seed UHE-BO runs
through the batched Cholesky; :mod:`jbo.linalg` now lowers batched Choleskys and triangular solves on
CPU to loops of unbatched calls, which cured those. With it the sharded reproduction finished 5 of 5
runs on the quiet machine but only 2 of 5 within 300 s under load
(experiments/results/engine/scale/sharding_deadlock_lapack_loop*.json), so a race may remain with four device
programs on a 2-thread pool: jbo still warns when it shards over several CPU devices of one process;
accelerators do not use these kernels.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

AXIS = "seeds"
# XLA options for the run programs compiled on CPU ({}: XLA's defaults; accelerators always keep them,
# and so does a process with jax_disable_most_optimizations set). The default, LLVM -O2 for the
# generated kernels instead of XLA's -O3, compiles jbo's run programs 10-30% faster at the
# same run time and the same results to rounding (experiments/engine/compile_options.py, compile_ratio.py).
# -O1 is no faster than -O2 there and aborts the process on one of jbo's programs ("Cannot select:
# X86ISD::SUBV_BROADCAST_LOAD" compiling TS-PSQ's step on x86_64). Set it before the first run; the
# program cache keys on it.
CPU_COMPILER_OPTIONS: dict = {"xla_backend_optimization_level": 2}
# Short programs add SHORT_PROGRAM_OPTIONS: XLA's LLVM IR fusion emitters instead of its MLIR ones
# compile 19-30% faster and run 6-12% slower, with the same results (GP-UCB on hartmann6 at T = 50
# and 400, BOKE at T = 200; experiments/results/engine/compile_options_fusion_emitters.json). That
# pays where compile dominates: a program of at most SHORT_PROGRAM_RUN_STEPS runs x steps, below the
# measured break-even of all three (2,300-6,500 run-steps), e.g. the demo's programs (32 runs x 60
# steps). Only with jbo's options (CPU_COMPILER_OPTIONS non-empty); SHORT_PROGRAM_RUN_STEPS = 0 turns it off.
SHORT_PROGRAM_OPTIONS: dict = {"xla_cpu_use_fusion_emitters": False}
SHORT_PROGRAM_RUN_STEPS: int = 2048


def cpu_compiler_options(run_steps: int | None = None) -> dict | None:
    """The XLA options of a CPU run program of `run_steps` runs x steps (None: unknown, not short);
    None where XLA decides (CPU_COMPILER_OPTIONS empty, or jax_disable_most_optimizations set)."""
    if not CPU_COMPILER_OPTIONS or jax.config.read("jax_disable_most_optimizations"):
        return None
    short = run_steps is not None and run_steps <= SHORT_PROGRAM_RUN_STEPS
    return {**CPU_COMPILER_OPTIONS, **(SHORT_PROGRAM_OPTIONS if short else {})}


log = logging.getLogger("jbo.parallel")


# ---------------------------------------------------------------- hosts and devices
def _warn_cpu_pool(devs):
    import warnings

    local = [d for d in devs if d.process_index == jax.process_index()]
    if len(local) > 1 and local[0].platform == "cpu":
        warnings.warn(
            f"sharding over {len(local)} CPU devices of one process: with jaxlib 0.10.2 a batched LAPACK "
            "kernel (GP methods) can wait forever on XLA:CPU's thread pool (see jbo.parallel); "
            "devices=1 avoids it",
            RuntimeWarning,
            stacklevel=4,
        )


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids=None,
    *,
    cpu_collectives: str | None = "gloo",
    **kwargs,
) -> None:
    """Join a multi-process (multi-host) run: :func:`jax.distributed.initialize` with these arguments
    (None: JAX's cluster auto-detection, e.g. SLURM, Open MPI, Cloud TPU), after selecting the CPU
    collectives implementation (``"gloo"``; None leaves JAX's setting). Call it first thing, before
    any JAX computation (JAX refuses to join once a backend is running; importing jbo does not start
    one). Then ``jax.devices()`` lists all processes' devices and jbo's runners shard over them."""
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        raise RuntimeError(
            "jbo.parallel.initialize must be called before any JAX computation in this process "
            "(a JAX backend is already running; jax.distributed.initialize cannot join after that)"
        )
    if cpu_collectives is not None:
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    jax.distributed.initialize(coordinator_address, num_processes, process_id, local_device_ids, **kwargs)


def resolve_devices(devices=None) -> list:
    """The devices a batch runs on: None -> all of jax.devices() (every process's); n -> the first n;
    or an explicit non-empty sequence of distinct jax.Device (1 device = no sharding)."""
    every = jax.devices()
    if devices is None:
        return list(every)
    if isinstance(devices, bool):
        raise ValueError(
            "devices must be None (all devices), a positive int or a sequence of jax devices, "
            "not a bool; devices=1 switches sharding off"
        )
    if isinstance(devices, (int, np.integer)):
        if not 1 <= devices <= len(every):
            raise ValueError(
                f"devices={devices}: this process sees {len(every)} device(s) ({every[0].platform}); "
                f"ask for 1 to {len(every)}"
            )
        return list(every[: int(devices)])
    try:
        out = list(devices)
    except TypeError:
        raise ValueError(
            f"devices must be None, a positive int or a sequence of jax devices, got {devices!r}"
        ) from None
    if not out or not all(isinstance(d, jax.Device) for d in out):
        raise ValueError(f"devices must be a non-empty sequence of jax.Device, got {devices!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"devices must be distinct, got {out}")
    if jax.process_count() > 1 and {d.process_index for d in out} != set(range(jax.process_count())):
        raise ValueError(
            "in a multi-process run the devices must include at least one device of every process "
            "(every process runs the same program)"
        )
    return out


# ---------------------------------------------------------------- typed PRNG keys <-> raw data
def _is_key(x) -> bool:
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _unkey(tree):
    """Typed key leaves -> their uint32 data (which can be sharded, padded, gathered and concatenated
    like any array); returns (tree, impls) with impls aligned to the leaves (None: not a key)."""
    leaves, treedef = jax.tree.flatten(tree)
    impls, data = [], []
    for x in leaves:
        if not _is_key(x):
            impls.append(None)
            data.append(x)
        elif isinstance(x, jax.ShapeDtypeStruct):  # shapes only
            impls.append(x.dtype._impl)
            data.append(jax.eval_shape(jax.random.key_data, x))
        else:
            impls.append(jax.random.key_impl(x))
            data.append(jax.random.key_data(x))
    return jax.tree.unflatten(treedef, data), impls


def _rekey(tree, impls):
    leaves, treedef = jax.tree.flatten(tree)
    return jax.tree.unflatten(
        treedef, [x if i is None else jax.random.wrap_key_data(x, impl=i) for x, i in zip(leaves, impls)]
    )


# ---------------------------------------------------------------- memory
class Plan(NamedTuple):
    """How a batch of runs is executed, decided before it starts.

    bytes_per_chunk: predicted memory of one chunk program summed over the mesh's devices (from XLA's
    memory analysis: arguments + outputs + temporaries - aliased); bytes_per_device: the same for
    the device holding the most; output_bytes: the assembled result of all runs; available_bytes:
    free memory (host memory on CPU, per device on an accelerator); memory_limit: the figure a chunk
    had to fit (bytes_per_chunk on CPU, bytes_per_device on an accelerator)."""

    num_runs: int
    num_devices: int
    chunk_size: int
    num_chunks: int
    bytes_per_chunk: int
    bytes_per_device: int
    output_bytes: int
    available_bytes: int | None
    memory_limit: int | None

    def describe(self) -> str:
        gib = lambda b: "?" if b is None else f"{b / 2**30:.3g} GiB"  # noqa: E731
        return (
            f"{self.num_runs} runs on {self.num_devices} device(s) in {self.num_chunks} chunk(s) of "
            f"{self.chunk_size}; predicted {gib(self.bytes_per_chunk)} per chunk ({gib(self.bytes_per_device)} "
            f"per device), result {gib(self.output_bytes)}; available {gib(self.available_bytes)}, "
            f"limit {gib(self.memory_limit)}"
        )


def available_memory(devices) -> int | None:
    """Free memory for a program on `devices`: the host's available memory on CPU (all CPU devices
    share it); on an accelerator the smallest (limit - in use) over the devices; None if unknown."""
    if devices[0].platform == "cpu":
        import psutil

        return int(psutil.virtual_memory().available)
    free = []
    for d in devices:
        if d.process_index != jax.process_index():
            continue
        stats = d.memory_stats() or {}
        if "bytes_limit" in stats:
            free.append(int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0)))
    return min(free) if free else None


def _program_bytes(compiled) -> int | None:
    m = compiled.memory_analysis()
    if m is None:
        return None
    return int(
        m.argument_size_in_bytes
        + m.output_size_in_bytes
        + m.temp_size_in_bytes
        - m.alias_size_in_bytes
        + m.generated_code_size_in_bytes
    )


def _nbytes(shapes) -> int:
    return int(sum(math.prod(s.shape) * np.dtype(s.dtype).itemsize for s in jax.tree.leaves(shapes)))


# ---------------------------------------------------------------- the batch executor
def _num_runs(batched) -> int:
    sizes = {np.shape(x)[0] if np.ndim(x) else None for x in jax.tree.leaves(batched)}
    if not sizes or None in sizes or len(sizes) != 1:
        raise ValueError(f"every batched input needs one shared leading (run) axis; got leading sizes {sizes}")
    return int(sizes.pop())


def _put(tree, sharding):
    """Host or device arrays -> arrays laid out by `sharding` (global arrays in a multi-process run)."""
    if jax.process_count() == 1:
        return jax.device_put(tree, sharding)

    def one(x):
        x = np.asarray(x)
        return jax.make_array_from_callback(x.shape, sharding, lambda idx: x[idx])

    return jax.tree.map(one, tree)


def _gather(tree):
    """Outputs -> arrays every process holds whole (multi-process: an all-gather over processes)."""
    if jax.process_count() == 1:
        return tree
    from jax.experimental import multihost_utils

    return jax.tree.map(jnp.asarray, multihost_utils.process_allgather(tree, tiled=True))


def _arrays(tree):
    """Python scalars -> (weakly typed) JAX arrays, as jax.jit would trace them."""
    return jax.tree.map(
        lambda x: x if isinstance(x, (jax.Array, np.ndarray, jax.ShapeDtypeStruct)) else jnp.asarray(x), tree
    )


def _pad(tree, n):
    """Pad the leading axis to n rows with copies of row 0 (their results are dropped)."""

    def one(x):
        extra = n - x.shape[0]
        if extra == 0:
            return x
        x = jnp.asarray(x)
        return jnp.concatenate([x, jnp.broadcast_to(x[:1], (extra,) + x.shape[1:])])

    return jax.tree.map(one, tree)


def check_bitwise(bitwise) -> bool:
    """The `bitwise` setting as a bool; anything but True / False (or a NumPy bool) is a ValueError."""
    if not isinstance(bitwise, (bool, np.bool_)):
        raise ValueError(f"bitwise must be True or False, got {bitwise!r}")
    return bool(bitwise)


def map_runs(fn: Callable, bitwise: bool = False) -> Callable:
    """fn(*one_run_inputs) -> outputs, mapped over the leading run axis of every input.

    bitwise=False: jax.vmap (the runs vectorised together). bitwise=True: jax.lax.map (one run after
    another), so a run's code is the same whatever the number of runs beside it: a run gives the same
    bits in any batch, chunk or padding (tests/test_parallel.py). (Not necessarily the bits of the
    same run compiled alone as a top-level program, e.g. jbo.run: XLA compiles a loop body apart.)"""
    if not check_bitwise(bitwise):
        return jax.vmap(fn)
    return lambda *xs: jax.lax.map(lambda a: fn(*a), xs)


class PerDevice:
    """bitwise=True on several devices: one one-device executable per local device, each run on its
    slice of the chunk, dispatched by the host (no SPMD program; see compile_runs)."""

    def __init__(self, compiled, devices, all_devices, out_axis):
        self.compiled, self.devices, self.out_axis = compiled, devices, out_axis
        self.slots = [all_devices.index(d) for d in devices]  # positions of the local devices' slices
        self.num_devices = len(all_devices)

    def place(self, rd):
        """The replicated inputs on every local device (once per call, not per chunk)."""
        return [jax.device_put(rd, d) for d in self.devices]

    def dispatch(self, bd, rds):
        per = _num_runs(bd) // self.num_devices
        outs = []
        for f, d, i, rd in zip(self.compiled, self.devices, self.slots, rds):
            outs.append(f(jax.device_put(jax.tree.map(lambda x: x[i * per : (i + 1) * per], bd), d), rd))
        return outs

    def finish(self, outs):
        """The devices' outputs as one host (NumPy) tree, gathered over processes."""
        ax = self.out_axis
        local = jax.tree.map(lambda *xs: np.concatenate([np.asarray(x) for x in xs], axis=ax), *outs)
        if jax.process_count() > 1:  # equal, contiguous blocks in process order (checked in compile_runs)
            from jax.experimental import multihost_utils

            local = jax.tree.map(lambda x: np.moveaxis(x, ax, 0), local)
            local = multihost_utils.process_allgather(local, tiled=True)
            local = jax.tree.map(lambda x: np.moveaxis(np.asarray(x), 0, ax), local)
        return local


class BatchRunner:
    """A compiled chunk program and how to call it on a batch of any size (see :func:`compile_runs`)."""

    def __init__(self, compiled, plan: Plan, mesh, out_axis: int, in_impls, out_impls):
        self.compiled, self.plan, self.mesh, self.out_axis = compiled, plan, mesh, out_axis
        self._in_impls, self._out_impls = in_impls, out_impls

    def __call__(self, batched, replicated):
        (bd, rd), _ = _unkey(_arrays((batched, replicated)))
        n, c, ax = _num_runs(bd), self.plan.chunk_size, self.out_axis
        chunks = -(-n // c)
        bd = _pad(bd, chunks * c)
        if isinstance(self.compiled, PerDevice):
            dispatch, finish, rd = self.compiled.dispatch, self.compiled.finish, self.compiled.place(rd)
        else:  # one SPMD program over the mesh
            rd = _put(rd, NamedSharding(self.mesh, P()))
            batch_sharding = NamedSharding(self.mesh, P(AXIS))
            dispatch = lambda b, r: self.compiled(_put(b, batch_sharding), r)  # noqa: E731
            finish = _gather
        take = lambda tree, lo, hi: jax.tree.map(lambda x: jax.lax.slice_in_dim(x, lo, hi, axis=ax), tree)  # noqa: E731
        if chunks == 1:
            out = jax.tree.map(jnp.asarray, finish(dispatch(bd, rd)))  # (a no-op for the SPMD program's arrays)
            out = take(out, 0, n) if n < c else out
        else:  # one compiled program in a host loop; each finished chunk is copied to the host
            parts, pending = [], None
            for i in range(chunks):
                out = dispatch(jax.tree.map(lambda x: x[i * c : (i + 1) * c], bd), rd)
                if pending is not None:
                    parts.append(jax.tree.map(np.asarray, finish(pending)))
                pending = out
            parts.append(jax.tree.map(np.asarray, finish(pending)))
            out = jax.tree.map(lambda *xs: jnp.asarray(np.concatenate(xs, axis=ax)), *parts)
            out = take(out, 0, n)
        return _rekey(out, self._out_impls)


def compile_runs(
    program: Callable,
    batched,
    replicated,
    *,
    out_axis: int = 0,
    devices=None,
    chunk_size: int | None = None,
    memory_limit: float | None = None,
    bitwise: bool = False,
    steps: int | None = None,
):
    """Compile `program` for a batch of independent runs, sharded over devices and chunked to fit memory.

    program(batched, replicated) -> outputs, where every leaf of `batched` (keys, swept Params) has a
    leading run axis and every output leaf has the run axis at position `out_axis`; runs must not
    interact (the program is vmap-like). `batched` / `replicated` may be arrays or
    jax.ShapeDtypeStruct (only shapes are used here). Returns (runner, plan, compile_seconds);
    runner(batched, replicated) runs any number of runs (padded to whole chunks, the padding
    dropped) and returns the outputs, whole, on every process.

    steps: the steps of each run, where known: a CPU program of few runs x steps compiles with
    SHORT_PROGRAM_OPTIONS (see cpu_compiler_options).

    chunk_size: runs per chunk (rounded up to a multiple of the device count); None: all runs in one
    program unless the predicted memory exceeds `memory_limit` (bytes; default 75% of available).

    bitwise: `program` maps its runs with ``map_runs(..., bitwise=True)`` (lax.map), and on several
    devices each device gets its own one-device executable (compiled for it, in threads), called
    by the host on its slice, instead of one SPMD program: XLA compiles the per-device program of
    an SPMD executable through another pipeline than a one-device program, which changes rounding.
    The results are then bit for bit those of one device, any chunk and any padding (on devices of
    one kind: another GPU model or CPU may round differently); the price is no vectorisation across
    runs and one compile per device. The result of a bitwise run on several devices is assembled on
    the host (then on the default device), not left spread over the devices.
    """
    devs = resolve_devices(devices)
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be a positive int (runs per chunk), got {chunk_size!r}")
    if memory_limit is not None and not (np.isfinite(memory_limit) and memory_limit > 0):
        raise ValueError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}")
    if not isinstance(out_axis, int) or out_axis < 0:
        raise ValueError(f"out_axis must be a non-negative int, got {out_axis!r}")
    bitwise = check_bitwise(bitwise)
    nd = len(devs)
    _warn_cpu_pool(devs)
    per_device_programs = bitwise and nd > 1
    mesh = Mesh(np.asarray(devs), (AXIS,))
    to_shape = lambda x: (
        x
        if isinstance(x, jax.ShapeDtypeStruct)
        else jax.ShapeDtypeStruct(  # noqa: E731
            np.shape(x), x.dtype, weak_type=getattr(x, "weak_type", False)
        )
    )
    (bshape, rshape), in_impls = _unkey(jax.tree.map(to_shape, _arrays((batched, replicated))))
    bimpls, rimpls = in_impls[: len(jax.tree.leaves(bshape))], in_impls[len(jax.tree.leaves(bshape)) :]
    num_runs = _num_runs(bshape)
    out_impls = []

    def body(bd, rd):
        out = program(_rekey(bd, bimpls), _rekey(rd, rimpls))
        out, impls = _unkey(out)
        out_impls[:] = impls
        return out

    out_spec = P(*([None] * out_axis), AXIS)
    if per_device_programs:
        jitted = jax.jit(body)  # lowered for each local device in build()
    else:
        fn = (
            body
            if nd == 1
            else jax.shard_map(body, mesh=mesh, in_specs=(P(AXIS), P()), out_specs=out_spec, check_vma=False)
        )
        jitted = jax.jit(
            fn,
            in_shardings=(NamedSharding(mesh, P(AXIS)), NamedSharding(mesh, P())),
            out_shardings=NamedSharding(mesh, out_spec),
        )

    accel = devs[0].platform != "cpu"
    local_devs = [d for d in devs if d.process_index == jax.process_index()]
    local = len(local_devs)
    available = available_memory(devs)
    limit = memory_limit if memory_limit is not None else (None if available is None else 0.75 * available)

    if per_device_programs and jax.process_count() > 1:  # the host gathers equal blocks in process order
        owners = [d.process_index for d in devs]
        counts = [owners.count(p) for p in range(jax.process_count())]
        if owners != sorted(owners) or len(set(counts)) != 1:
            raise ValueError(
                f"bitwise=True over {jax.process_count()} processes needs every process's devices in "
                f"`devices`, the same number from each, in process order (as jax.devices() lists "
                f"them); got devices of processes {owners}"
            )

    def on_device(d, c):
        """Argument shapes of one device's program for chunks of c runs (batched leaves: c // nd rows)."""
        sh = jax.sharding.SingleDeviceSharding(d)
        return (
            jax.tree.map(lambda s: jax.ShapeDtypeStruct((c // nd,) + s.shape[1:], s.dtype, sharding=sh), bshape),
            jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, weak_type=s.weak_type, sharding=sh), rshape),
        )

    def compiler_options(c):
        """XLA's options for a chunk of c runs (None: XLA decides; see cpu_compiler_options)."""
        return None if accel else cpu_compiler_options(None if steps is None else c * steps)

    def compile_other_devices(compiled, c):
        """bitwise on several devices: compile the settled chunk program for the other local devices
        (in threads: XLA compiles in parallel); returns the seconds it took."""
        if not per_device_programs or len(local_devs) == 1:
            return 0.0
        import concurrent.futures

        t0 = time.perf_counter()
        lowered = [jitted.lower(*on_device(d, c)) for d in local_devs[1:]]
        options = compiler_options(c // nd)
        with concurrent.futures.ThreadPoolExecutor(len(lowered)) as pool:
            compiled.compiled += list(pool.map(lambda lo: lo.compile(compiler_options=options), lowered))
        return time.perf_counter() - t0

    def build(c):
        shapes = jax.tree.map(lambda s: jax.ShapeDtypeStruct((c,) + s.shape[1:], s.dtype), bshape)
        t0 = time.perf_counter()
        if not per_device_programs:
            lowered = jitted.lower(shapes, rshape)
            compiled = lowered.compile(compiler_options=compiler_options(c // nd))
            out_per_run = _nbytes(lowered.out_info) / c
        else:  # the one-device program for the first local device (the others once c is settled: compile_other_devices)
            lowered = jitted.lower(*on_device(local_devs[0], c))
            compiled = PerDevice(
                [lowered.compile(compiler_options=compiler_options(c // nd))], local_devs, devs, out_axis
            )
            out_per_run = _nbytes(lowered.out_info) / (c // nd)
        seconds = time.perf_counter() - t0
        per_device = _program_bytes(compiled.compiled[0] if per_device_programs else compiled)
        return compiled, seconds, per_device, out_per_run

    whole = -(-num_runs // nd) * nd
    c = whole if chunk_size is None else min(whole, -(-int(chunk_size) // nd) * nd)
    compiled, seconds, per_device, out_per_run = build(c)
    fits = lambda b: limit is None or b is None or (b if accel else b * local) <= limit  # noqa: E731
    if chunk_size is None:  # memory ~ fixed + per-run * c: a proportional guess, then a line through two programs
        seen = {}
        for _ in range(4):
            if fits(per_device) or c <= nd:
                break
            seen[c] = per_device if accel else per_device * local
            if len(seen) == 1:
                guess = limit / (seen[c] / c)
            else:
                (c0, b0), (c1, b1) = sorted(seen.items())[:2]
                slope = max((b1 - b0) / (c1 - c0), 1.0)
                guess = c0 + (limit - b0) / slope
            c = max(nd, min(c - nd, int(guess) // nd * nd))
            compiled, more, per_device, out_per_run = build(c)
            seconds += more
    if not fits(per_device):
        raise ValueError(
            f"a chunk of {c} run(s) on {nd} device(s) needs a predicted "
            f"{(per_device if accel else per_device * local) / 2**30:.3g} GiB, over the memory limit "
            f"{limit / 2**30:.3g} GiB; give a larger memory_limit, fewer steps, or keep less of the "
            "final state (keep_final_state=False)"
        )
    plan = Plan(
        num_runs,
        nd,
        c,
        -(-num_runs // c),
        -1 if per_device is None else per_device * local,
        -1 if per_device is None else per_device,
        int(out_per_run * num_runs),
        available,
        None if limit is None else int(limit),
    )
    if available is not None and plan.num_chunks > 1 and not accel and plan.output_bytes > available:
        raise ValueError(
            f"the result of {num_runs} runs needs {plan.output_bytes / 2**30:.3g} GiB of host memory, "
            f"more than the {available / 2**30:.3g} GiB available; keep less "
            "(keep_final_state=False) or run fewer seeds"
        )
    seconds += compile_other_devices(compiled, c)
    log.info("jbo.parallel: %s", plan.describe())
    return BatchRunner(compiled, plan, mesh, out_axis, in_impls, out_impls), plan, seconds
