"""The reported deadlock with forced CPU host devices: reproduction and cause.

    python experiments/engine/scale/sharding_deadlock.py [--timeout 300] [--all] [--bitwise]

A run with 2 forced host devices was seen to deadlock on XLA:CPU". We hit it
ourselves: experiments/engine/scale/sharding.py (GP-UCB with registry defaults, 32 seeds x 40 steps on
branin, 4 forced host devices on 2 cores, sharded by jbo.parallel) stopped using CPU and never
finished. gdb on the hung process (experiments/results/engine/scale/sharding_deadlock_gdb.txt): all 26
threads in futex waits; four "tf_XLAEigen" workers -- one per device program -- inside
CustomCallThunk -> lapack_dtrsm_ffi (jaxlib's batched triangular solve) -> jax::ParallelBatchMap ->
absl::BlockingCounter::Wait, i.e. a kernel running *on* XLA:CPU's intra-op Eigen pool scheduled its
batch on that same pool and waits for it; the main thread in BlockUntilReady. No collective is
involved (jbo's sharded program has none: shard_map, independent runs). The cause is nested
parallelism on one thread pool with several device programs running kernels at once. A second
hang, with XLA_FLAGS=--xla_cpu_multi_thread_eigen=false added (the usual advice for forced host
devices), had the same stacks (sharding_deadlock_gdb_eigen_off.txt): that flag does not avoid it.
We found no setting that does; jbo warns when it shards over several CPU devices of one process,
and devices=1 (or JAX's default of one CPU device) avoids it.

This script runs that program (32 seeds x 40 steps, compiled once, run 5 times) in a child per
configuration (devices, partitioning, cores, Eigen pool on/off) with a wall-clock timeout, and
records whether it compiled, how many runs finished, its times, and the collective ops in the
compiled program. Default configurations:
(4 devices, jbo, 2 cores, pool on), (4, jbo, 2, pool off), (1 device, 2 cores); --all adds 1 core
(taskset) and "auto" (jit + NamedSharding on the keys without shard_map: XLA's partitioner then
inserts collectives for the batched while_loop predicates); --bitwise adds (4 devices, bitwise=True:
one one-device executable per device, dispatched by the host, seeds by lax.map). The hang is a race: a configuration
that finished once may hang on another run, so "finished" is evidence, not proof, of safety.
Writes sharding_deadlock.json (or --out; experiments/results/engine/scale/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, output_dir  # noqa: E402

SEEDS, STEPS, REPEATS = 32, 40, 5
COLLECTIVES = ("all-reduce", "all-gather", "collective-permute", "all-to-all", "reduce-scatter")


def child(path: str):
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    import jbo
    from jbo import parallel

    alg = jbo.algorithms.get(
        "gp_ucb", maximiser=jbo.parts.Maximiser()
    )  # the program of experiments/engine/scale/sharding.py
    problem = jbo.problems.get("branin")
    keys = jax.random.split(jax.random.key(0), SEEDS)
    t0 = time.perf_counter()
    if path in ("jbo", "bitwise"):
        params = alg.default_params()
        prog = jbo.program(
            alg, problem, keys=keys, num_steps=STEPS, params=params, cache=False, bitwise=path == "bitwise"
        )
        compiled = prog.runner.compiled
        compiled = compiled.compiled[0] if isinstance(compiled, parallel.PerDevice) else compiled
        text = compiled.as_text() if compiled is not None else ""
        run = lambda: prog(keys, params)  # noqa: E731
    else:
        mesh = Mesh(np.asarray(jax.devices()), ("seeds",))

        def prog(ks, params):  # the seeds vmapped, then sharded by hand
            return jax.vmap(lambda k: jbo.scan.one_run(alg, problem, key=k, num_steps=STEPS, params=params))(ks)

        jitted = jax.jit(
            prog,
            in_shardings=(NamedSharding(mesh, P("seeds")), NamedSharding(mesh, P())),
            out_shardings=NamedSharding(mesh, P("seeds")),
        )
        compiled = jitted.lower(keys, alg.default_params()).compile()
        text = compiled.as_text()
        run = lambda: compiled(keys, alg.default_params())  # noqa: E731
    compile_s = time.perf_counter() - t0
    counts = {op: len(re.findall(rf"= \S+ {op}(?:-start)?\(", text)) for op in COLLECTIVES}
    print("COMPILED " + json.dumps({"compile_s": compile_s, "collectives": counts}), flush=True)
    times = []
    for i in range(REPEATS):  # the hang is a race: the same compiled program, run many times
        t0 = time.perf_counter()
        out = jax.block_until_ready(run())
        times.append(time.perf_counter() - t0)
        print(f"RUN {i}", flush=True)
    print(
        "RESULT "
        + json.dumps(
            {"run_s": times, "repeats": REPEATS, "finite": bool(np.isfinite(np.asarray(out.metrics["value"])).all())}
        ),
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--all", action="store_true", help="also 1 core (taskset) and the automatic partitioning")
    ap.add_argument("--bitwise", action="store_true", help="also 4 devices with bitwise=True")
    ap.add_argument("--only-bitwise", action="store_true", help="only the 4-device bitwise=True configuration")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help="default: sharding_deadlock.json in the output folder")
    add_update_flag(ap)
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    args.out = args.out or str(output_dir("engine", "scale") / "sharding_deadlock.json")
    from jbo.studies import code_version, machine_info

    rows = []
    pin = shutil.which("taskset")
    configs = [(4, "jbo", 2, True), (4, "jbo", 2, False), (1, "jbo", 2, True)]
    if args.all:
        configs += [(2, "jbo", 1, True), (2, "auto", 2, True), (4, "auto", 2, False)]
    if args.bitwise or args.only_bitwise:
        configs = ([] if args.only_bitwise else configs) + [(4, "bitwise", 2, True)]
    for devices, path, cores, pool in configs:
        if cores == 1 and not pin:
            continue
        flags = f"--xla_force_host_platform_device_count={devices}" + (
            "" if pool else " --xla_cpu_multi_thread_eigen=false"
        )
        env = {**os.environ, "XLA_FLAGS": flags, "PYTHONPATH": str(ROOT)}
        env.pop("JAX_DISABLE_MOST_OPTIMIZATIONS", None)
        cmd = [sys.executable, __file__, "--child", path]
        if cores == 1:
            cmd = [pin, "-c", "0"] + cmd
        load = os.getloadavg()
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
            out, rc, timed_out = proc.stdout, proc.returncode, False
            err = proc.stderr[-1500:]
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, timed_out, err = None, True, ""
        row = {
            "devices": devices,
            "partitioning": path,
            "cores": cores,
            "eigen_pool": pool,
            "xla_flags": flags,
            "timed_out": timed_out,
            "returncode": rc,
            "wall_s": time.perf_counter() - t0,
            "load_before": load,
        }
        for tag in ("COMPILED", "RESULT"):
            m = re.search(tag + r" (\{.*\})", out)
            if m:
                row.update(json.loads(m.group(1)))
        if rc not in (0, None):
            row["stderr_tail"] = err
        row["runs_completed"] = out.count("RUN ")
        row["stage_reached"] = (
            "finished" if "RESULT" in out else ("compiled, hung while running" if "COMPILED" in out else "compiling")
        )
        print(json.dumps(row), flush=True)
        rows.append(row)
    record = {
        "machine": machine_info(),
        "code_version": code_version(),
        "cpu_count": os.cpu_count(),
        "timeout_s": args.timeout,
        "program": f"gp_ucb (registry defaults), {SEEDS} seeds x {STEPS} steps, branin, run {REPEATS} times",
        "runs": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
