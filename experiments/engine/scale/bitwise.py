"""bitwise=True against the default vmapped batch, on one CPU device.

    python experiments/engine/scale/bitwise.py [--methods random_search,gp_ucb,...] [--problem branin]
                                        [--seeds 16] [--steps 30] [--reps 3]

For each method: the same run_seeds program compiled twice through jbo.studies.compile_seeds on one
device, vmapped over the seeds (the default) and with bitwise=True (the seeds one after another by
lax.map), compile seconds apart (compilation cache off), then `--reps` runs of each, alternating, with
the load average next to every timing (the machine is shared); and the largest difference between
the two curves (the same computation, so equal to rounding). Writes bitwise.json (or --out; into
experiments/results/engine/scale/ with --update, else its scratch mirror). Settings are ours (registry defaults, 16 seeds x 30 steps).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JBO_CACHE", "0")  # compile seconds, not cache loads

ROOT = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine", "scale") / "bitwise.json"
METHODS = "random_search,gp_ucb,gp_ei,gp_ts,kr_ucb,boke,uhe_bo"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", default=METHODS)
    ap.add_argument("--problem", default="branin")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    add_update_flag(ap)
    args = ap.parse_args()

    import jax
    import numpy as np

    import jbo
    from jbo.studies import code_version, compile_seeds, machine_info

    problem = jbo.problems.get(args.problem)
    keys = jax.random.split(jax.random.key(0), args.seeds)
    record = {
        "machine": machine_info(),
        "code_version": code_version(),
        "devices": 1,
        "problem": args.problem,
        "seeds": args.seeds,
        "steps": args.steps,
        "reps": args.reps,
        "jax_disable_most_optimizations": os.environ.get("JAX_DISABLE_MOST_OPTIMIZATIONS", "0"),
        "methods": {},
    }
    for name in args.methods.split(","):
        # GP-BO with the Adam search (the class Maximiser), as its committed files were computed
        alg = jbo.algorithms.get(name, **({"maximiser": jbo.parts.Maximiser()} if name.startswith("gp_") else {}))
        fns, m = {}, {}
        for mode in ("vmapped", "bitwise"):
            load = os.getloadavg()[0]
            fns[mode], compile_s = compile_seeds(
                alg,
                problem,
                keys=keys,
                num_steps=args.steps,
                devices=1,
                bitwise=mode == "bitwise",
                keep_final_state=False,
            )
            m[mode] = {"compile_s": compile_s, "load_at_compile": load, "run_s": [], "load_at_run": []}
        traces = {}
        for rep in range(args.reps):
            for mode in ("vmapped", "bitwise") if rep % 2 == 0 else ("bitwise", "vmapped"):
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                traces[mode] = jax.block_until_ready(fns[mode](keys))
                m[mode]["run_s"].append(time.perf_counter() - t0)
                m[mode]["load_at_run"].append(load)
        for mode in m:
            m[mode]["run_s_median"] = float(np.median(m[mode]["run_s"]))
        a, b = traces["vmapped"], traces["bitwise"]
        m["run_ratio_bitwise_over_vmapped"] = m["bitwise"]["run_s_median"] / m["vmapped"]["run_s_median"]
        m["compile_ratio_bitwise_over_vmapped"] = m["bitwise"]["compile_s"] / m["vmapped"]["compile_s"]
        m["max_abs_action_difference"] = float(
            np.max(np.abs(np.asarray(a.actions, float) - np.asarray(b.actions, float)))
        )
        m["max_abs_simple_regret_difference"] = float(
            np.max(np.abs(np.asarray(a.metrics["simple_regret"]) - np.asarray(b.metrics["simple_regret"])))
        )
        record["methods"][name] = m
        print(
            f"{name:14s} compile {m['vmapped']['compile_s']:6.1f} / {m['bitwise']['compile_s']:6.1f} s, run "
            f"{m['vmapped']['run_s_median']:.3f} / {m['bitwise']['run_s_median']:.3f} s (vmapped / bitwise: "
            f"{m['run_ratio_bitwise_over_vmapped']:.2f}x), max |action diff| {m['max_abs_action_difference']:.2g}, "
            f"load {m['vmapped']['load_at_run'][0]:.1f}",
            flush=True,
        )
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")  # after every method: a partial run counts
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
