"""The growing segments' schedule, chosen by measurement: compile seconds against run seconds per seed.

A run longer than BUCKET_WHOLE steps is split into scan segments of growing static capacity
(jbo.engine, "Growing state"); each segment compiles its own scan body, and a segment's steps cost
in proportion to its capacity. Each measurement is a fresh Python process with the persistent
compilation cache off (JBO_CACHE=0) that compiles default GP-UCB on hartmann6 (10 initial points)
for 8 seeds with the segments given (GPBO(growth=Growth(sizes=sizes))), runs it once and records the compile
seconds, the run seconds per seed and the final simple regret of every seed (the same in every
schedule up to rounding: a schedule changes shapes, not the algorithm).

    python experiments/engine/segment_schedule.py
    python experiments/engine/segment_schedule.py --steps 400 --again
    python experiments/engine/segment_schedule.py --steps 100 128 --out segment_schedule_o2.json

Writes segment_schedule.json (or --out) into experiments/results/engine/ with --update, else its scratch mirror, keeping
the rows of schedules already measured in that file (with the same seed count) unless --again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
# T: the segment capacities tried (the last is T itself); "default" marks jbo.engine.bucket_schedule(T)
SCHEDULES = {
    100: [(100,), (64, 100)],
    128: [(128,), (64, 128)],
    200: [(100, 200), (128, 200), (64, 128, 200)],
    400: [(200, 400), (128, 256, 400), (100, 200, 400), (64, 128, 256, 400)],
    1000: [(250, 500, 756, 1000), (128, 256, 512, 768, 1000), (64, 128, 256, 512, 768, 1000)],
}
CHILD = """
import json, sys, time
import jax
import numpy as np
import jbo
from jbo.studies import compile_seeds
steps, sizes, seeds = int(sys.argv[1]), tuple(json.loads(sys.argv[2])), int(sys.argv[3])
growth = jbo.data.WHOLE if len(sizes) == 1 else jbo.data.Growth(sizes=tuple(sizes[:-1]))
alg = jbo.algorithms.get(  # the classes' search and refit schedule, with which the committed files were measured
    "gp_ucb", num_initial=10, growth=growth, maximiser=jbo.parts.Maximiser(), hypers=jbo.parts.Refit()
)
keys = jax.random.split(jax.random.key(123), seeds)
fn, seconds = compile_seeds(alg, jbo.problems.get("hartmann6"), keys=keys, num_steps=steps)
t0 = time.perf_counter()
trace = jax.block_until_ready(fn(keys))
run = time.perf_counter() - t0
regret = np.asarray(trace.metrics["simple_regret"])[:, -1]
print(json.dumps({"segments": list(alg.capacities(steps)), "compile_s": seconds, "run_s_per_seed": run / seeds,
                  "median_final_regret": float(np.median(regret)), "final_regret": regret.tolist()}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, nargs="+", default=list(SCHEDULES), choices=list(SCHEDULES))
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--out", default="segment_schedule.json", help="result file name in the output folder")
    ap.add_argument("--again", action="store_true", help="measure schedules already in the result file again")
    add_update_flag(ap)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
    from jbo.engine import bucket_schedule
    from jbo.parallel import CPU_COMPILER_OPTIONS
    from jbo.studies import machine_info

    env = {**os.environ, "JBO_CACHE": "0"}
    path = OUT / args.out
    old = json.loads(path.read_text()) if path.exists() else {}
    rows = [r for r in old.get("rows", []) if old.get("seeds") == args.seeds]
    start_load = os.getloadavg()
    for steps in args.steps:
        for sizes in SCHEDULES[steps]:
            if any(r["steps"] == steps and tuple(r["segments"]) == sizes for r in rows):
                if not args.again:
                    continue
                rows = [r for r in rows if not (r["steps"] == steps and tuple(r["segments"]) == sizes)]
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(steps), json.dumps(sizes), str(args.seeds)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            row = {"steps": steps, "default": tuple(bucket_schedule(steps)) == sizes}
            row.update(json.loads(out.stdout.strip().splitlines()[-1]))
            assert tuple(row["segments"]) == sizes, (row["segments"], sizes)
            rows.append(row)
            print(
                f"T = {steps:4d}  segments {str(sizes):30s} compile {row['compile_s']:6.2f} s  "
                f"run {row['run_s_per_seed']:7.3f} s / seed  median regret {row['median_final_regret']:.3g}"
                + ("  (default)" if row["default"] else ""),
                flush=True,
            )
    for r in rows:  # which schedule is the default now
        r["default"] = tuple(bucket_schedule(r["steps"])) == tuple(r["segments"])
    record = {
        "command": "python experiments/engine/segment_schedule.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
        "load_average": {"start": start_load, "end": os.getloadavg()},
        "runs": old.get("runs", [{"command": old["command"], "load_average": old["load_average"]}] if old else [])
        + [
            {
                "command": "python experiments/engine/segment_schedule.py " + " ".join(sys.argv[1:]),
                "load_average": start_load,
            }
        ],
        "task": "default GP-UCB on hartmann6, 10 initial points, one program of all seeds",
        "seeds": args.seeds,
        "compile_options": CPU_COMPILER_OPTIONS,
        "rows": sorted(rows, key=lambda r: (r["steps"], len(r["segments"]), r["segments"])),
    }
    OUT.mkdir(exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
