"""Compile time of the growing segments against the one whole-buffer program, measured repeatedly.

Each measurement is a fresh Python process with the persistent compilation cache off (JBO_CACHE=0)
that ahead-of-time compiles default GP-UCB on hartmann6 (10 initial points, 8 seeds, T steps) with
the current defaults (growing segments) or the previous ones (bucket=False, refit_growth=None,
screen_data=True: one whole-buffer program), alternating the two, so both see the same machine.

    python experiments/compile_ratio.py --steps 400 --repeats 5

Writes experiments/results/compile_ratio_T<steps>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "results"
CHILD = """
import json, sys
import jax
import jbo
from jbo.studies import compile_seeds
previous = sys.argv[2] == "previous"
extra = dict(bucket=False, refit_growth=None, screen_data=True) if previous else {}
alg = jbo.algorithms.get("gp_ucb", num_initial=10, **extra)
keys = jax.random.split(jax.random.key(123), 8)
_, seconds = compile_seeds(alg, jbo.problems.get("hartmann6"), keys, int(sys.argv[1]))
print(json.dumps({"compile_s": seconds, "segments": list(alg.capacities(int(sys.argv[1])))}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from jbo.studies import machine_info

    env = {**os.environ, "JBO_CACHE": "0"}
    runs = {"current": [], "previous": []}
    segments = {}
    for r in range(args.repeats):
        for which in ("current", "previous"):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.steps), which],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            runs[which].append(row["compile_s"])
            segments[which] = row["segments"]
            print(f"repeat {r}: {which:8s} {row['compile_s']:6.2f} s  segments {row['segments']}", flush=True)
    ratios = np.array(runs["current"]) / np.array(runs["previous"])
    record = {
        "command": f"python experiments/compile_ratio.py --steps {args.steps} --repeats {args.repeats}",
        "machine": machine_info(),
        "load_average_at_start": os.getloadavg(),
        "steps": args.steps,
        "seeds": 8,
        "segments": segments,
        "compile_s": runs,
        "median_compile_s": {k: float(np.median(v)) for k, v in runs.items()},
        "ratio_of_medians": float(np.median(runs["current"]) / np.median(runs["previous"])),
        "paired_ratios": ratios.tolist(),
    }
    (OUT / f"compile_ratio_T{args.steps}.json").write_text(json.dumps(record, indent=1))
    print(
        f"median compile: current {record['median_compile_s']['current']:.2f} s, previous "
        f"{record['median_compile_s']['previous']:.2f} s, ratio {record['ratio_of_medians']:.2f}"
    )


if __name__ == "__main__":
    main()
