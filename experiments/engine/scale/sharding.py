"""Sharded vs unsharded multi-seed GP-UCB on 4 forced CPU host devices.

    python experiments/engine/scale/sharding.py [--seeds 16] [--steps 30] [--reps 5] [--problem branin] [--bitwise]

The parent starts one child process with XLA_FLAGS=--xla_force_host_platform_device_count=4 (set
before JAX starts), with a timeout: at 32 seeds x 40 steps the sharded run hung twice in a batched
LAPACK kernel (see jbo.parallel and sharding_deadlock.py), so the defaults are 16 seeds x 30 steps,
and a hang is recorded in the result file instead of blocking. The child compiles the same run_seeds program twice through
jbo.studies.compile_seeds: devices=1 (unsharded, one device) and devices=None (the seeds spread over
the 4 devices with jbo.parallel), then runs each `--reps` times, alternating, with compile and run
seconds apart and the load average next to every timing (the machine is shared). It also compares
the two curves (max |difference| of every metric, and whether they are bit-identical).
--bitwise adds the same two runs with bitwise=True (runs one after another by lax.map; on 4 devices one
one-device executable per device instead of an SPMD program; see jbo.parallel) and compares those
curves too. Writes sharding.json (or --out; experiments/results/engine/scale/ with --update). Settings are ours (16-32 seeds were asked for,
a few dozen steps, on branin or hartmann6); XLA's default optimisations are on (the user's setting).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, output_dir  # noqa: E402


def child(args):
    import time

    import jax
    import numpy as np

    import jbo
    from jbo.studies import code_version, compile_seeds, machine_info

    alg = jbo.algorithms.get("gp_ucb", maximiser=jbo.parts.Maximiser())  # the Adam search, as its committed files
    problem = jbo.problems.get(args.problem)
    keys = jax.random.split(jax.random.key(0), args.seeds)
    modes = {"unsharded": (1, False), "sharded": (None, False)}
    if args.bitwise:
        modes.update(unsharded_bitwise=(1, True), sharded_bitwise=(None, True))
    fns, record = (
        {},
        {
            "machine": machine_info(),
            "code_version": code_version(),
            "devices": len(jax.devices()),
            "cpu_count": os.cpu_count(),
            "xla_flags": os.environ.get("XLA_FLAGS", ""),
            "jax_disable_most_optimizations": os.environ.get("JAX_DISABLE_MOST_OPTIMIZATIONS", "0"),
            "method": "gp_ucb (registry defaults)",
            "problem": args.problem,
            "seeds": args.seeds,
            "steps": args.steps,
            "reps": args.reps,
            "modes": {},
        },
    )
    for name, (devices, bitwise) in modes.items():
        load = os.getloadavg()
        fn, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=args.steps, devices=devices, bitwise=bitwise)
        fns[name] = fn
        record["modes"][name] = {
            "devices": fn.plan.num_devices,
            "bitwise": bitwise,
            "chunk_size": fn.plan.chunk_size,
            "predicted_bytes_per_chunk": fn.plan.bytes_per_chunk,
            "compile_s": compile_s,
            "load_at_compile": load,
            "run_s": [],
            "load_at_run": [],
        }
    traces = {}
    for rep in range(args.reps):
        order = list(modes) if rep % 2 == 0 else list(modes)[::-1]  # alternate, so load drift hits both
        for name in order:
            load = os.getloadavg()
            t0 = time.perf_counter()
            traces[name] = jax.block_until_ready(fns[name](keys))
            record["modes"][name]["run_s"].append(time.perf_counter() - t0)
            record["modes"][name]["load_at_run"].append(load)
    for m in record["modes"].values():
        m["run_s_median"] = float(np.median(m["run_s"]))

    def compare(a, b, suffix=""):
        record["max_abs_metric_difference" + suffix] = {
            k: float(np.max(np.abs(np.asarray(a.metrics[k], float) - np.asarray(b.metrics[k], float))))
            for k in a.metrics
        }
        record["max_abs_action_difference" + suffix] = float(
            np.max(np.abs(np.asarray(a.actions) - np.asarray(b.actions)))
        )
        record["identical" + suffix] = all(
            np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))
        )

    compare(traces["unsharded"], traces["sharded"])
    if args.bitwise:
        compare(traces["unsharded_bitwise"], traces["sharded_bitwise"], "_bitwise")
        compare(traces["unsharded"], traces["unsharded_bitwise"], "_bitwise_vs_vmapped")
        record["slowdown_bitwise_over_vmapped"] = {
            n: record["modes"][n + "_bitwise"]["run_s_median"] / record["modes"][n]["run_s_median"]
            for n in ("unsharded", "sharded")
        }
    record["final_simple_regret_median"] = {
        n: float(np.median(np.asarray(t.metrics["simple_regret"])[:, -1])) for n, t in traces.items()
    }
    un, sh = record["modes"]["unsharded"]["run_s_median"], record["modes"]["sharded"]["run_s_median"]
    record["speedup_sharded_over_unsharded"] = un / sh
    record["target_sharded_no_slower"] = bool(sh <= un)
    print("RESULT" + json.dumps(record))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--problem", default="branin")
    ap.add_argument("--bitwise", action="store_true", help="also the two runs with bitwise=True")
    ap.add_argument("--devices", type=int, default=4, help="forced host devices in the child")
    ap.add_argument("--out", default=None, help="default: sharding.json in the output folder")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before the child counts as hung")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    add_update_flag(ap)
    args = ap.parse_args()
    if args.child:
        return child(args)
    args.out = args.out or str(output_dir("engine", "scale") / "sharding.json")
    flags = f"--xla_force_host_platform_device_count={args.devices}"
    env = {**os.environ, "XLA_FLAGS": flags, "PYTHONPATH": str(ROOT)}
    env.pop("JAX_DISABLE_MOST_OPTIMIZATIONS", None)
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--seeds",
        str(args.seeds),
        "--steps",
        str(args.steps),
        "--reps",
        str(args.reps),
        "--problem",
        args.problem,
    ] + (["--bitwise"] if args.bitwise else [])
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        record = {
            "hung": True,
            "timeout_s": args.timeout,
            "seeds": args.seeds,
            "steps": args.steps,
            "xla_flags": flags,
            "load": os.getloadavg(),
            "note": "the child did not finish: see experiments/engine/scale/sharding_deadlock.py",
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
        sys.exit(f"the child hung (> {args.timeout} s); recorded in {args.out}")
    if proc.returncode != 0:
        sys.exit(proc.stderr[-4000:])
    record = json.loads(proc.stdout.split("RESULT", 1)[1])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    for name, m in record["modes"].items():
        print(
            f"{name:9s} devices={m['devices']} compile {m['compile_s']:.1f} s, run median {m['run_s_median']:.2f} s "
            f"({', '.join(f'{t:.2f}' for t in m['run_s'])}), load {m['load_at_run'][0][0]:.1f}"
        )
    print(
        f"speedup {record['speedup_sharded_over_unsharded']:.2f}x, identical curves: {record['identical']}, "
        f"max |metric difference| {max(record['max_abs_metric_difference'].values()):.3g} -> {args.out}"
    )
    if args.bitwise:
        print(
            f"bitwise: identical curves {record['identical_bitwise']}, slowdown over vmapped "
            f"{record['slowdown_bitwise_over_vmapped']}"
        )


if __name__ == "__main__":
    main()
