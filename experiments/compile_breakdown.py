"""Where the compile time of a long GP-UCB run goes: tracing and lowering (Python, one core) against
XLA's compile (HLO passes and LLVM code generation), and how many cores XLA keeps busy, for the
default growing segments, the same segments without the refit schedule's rank-1 branch
(refit_growth=None), and the previous one-program default (bucket=False, refit_growth=None,
screen_data=True).

    python experiments/compile_breakdown.py --steps 400 --repeats 2

Each measurement is a fresh process with the persistent compilation cache off (JBO_CACHE=0) that
ahead-of-time compiles default GP-UCB on hartmann6 (10 initial points, 8 seeds), the variants
alternating. Writes experiments/results/compile_breakdown_T<steps>.json.
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
VARIANTS = {
    "segments (default)": {},
    "segments, no rank-1 branch": {"refit_growth": None},
    "one program (previous default)": {"bucket": False, "refit_growth": None, "screen_data": True},
}
CHILD = """
import json, resource, sys, time
import jax
import jax._src.stages as stages
import jbo
from jbo.studies import compile_seeds
xla = {"wall": 0.0, "cpu": 0.0}
compile_ = stages.Lowered.compile
def timed(self, *a, **k):
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    out = compile_(self, *a, **k)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    xla["wall"] += time.perf_counter() - t0
    xla["cpu"] += r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    return out
stages.Lowered.compile = timed
alg = jbo.algorithms.get("gp_ucb", num_initial=10, **json.loads(sys.argv[2]))
keys = jax.random.split(jax.random.key(123), 8)
_, seconds = compile_seeds(alg, jbo.problems.get("hartmann6"), keys, int(sys.argv[1]))
print(json.dumps({"total_s": seconds, "xla_s": xla["wall"], "xla_cpu_s": xla["cpu"],
                  "segments": list(alg.capacities(int(sys.argv[1])))}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from jbo.studies import machine_info

    env = {**os.environ, "JBO_CACHE": "0"}
    runs = {name: [] for name in VARIANTS}
    start_load = os.getloadavg()
    for _ in range(args.repeats):
        for name, kwargs in VARIANTS.items():
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.steps), json.dumps(kwargs)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["trace_and_lower_s"] = row["total_s"] - row["xla_s"]
            row["xla_cores_busy"] = row["xla_cpu_s"] / row["xla_s"]
            runs[name].append(row)
            print(
                f"{name:32s} total {row['total_s']:6.2f} s, trace+lower {row['trace_and_lower_s']:5.2f} s, "
                f"XLA {row['xla_s']:6.2f} s on {row['xla_cores_busy']:.2f} cores",
                flush=True,
            )
    medians = {
        name: {
            k: float(np.median([r[k] for r in rows]))
            for k in ("total_s", "trace_and_lower_s", "xla_s", "xla_cores_busy")
        }
        for name, rows in runs.items()
    }
    record = {
        "command": f"python experiments/compile_breakdown.py --steps {args.steps} --repeats {args.repeats}",
        "machine": machine_info(),
        "load_average": {"start": start_load, "end": os.getloadavg()},
        "steps": args.steps,
        "seeds": 8,
        "variants": VARIANTS,
        "runs": runs,
        "medians": medians,
    }
    (OUT / f"compile_breakdown_T{args.steps}.json").write_text(json.dumps(record, indent=1, default=str))


if __name__ == "__main__":
    main()
