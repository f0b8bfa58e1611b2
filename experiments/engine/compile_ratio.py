"""Compile time of the growing segments against the one whole-buffer program, measured repeatedly, and
where it goes: tracing and lowering (Python, one core) against XLA's compile (HLO passes and LLVM code
generation), with how many cores XLA keeps busy.

Each measurement is a fresh Python process with the persistent compilation cache off (JBO_CACHE=0)
that ahead-of-time compiles default GP-UCB on hartmann6 (10 initial points, 8 seeds, T steps), the
variants alternating so that all see the same machine:
* current: the current defaults (growing segments, compiled with jbo.parallel.CPU_COMPILER_OPTIONS);
* current_xla_default: the same program compiled with XLA's default options (LLVM -O3);
* current_o1, current_o2: the same program at LLVM -O1 / -O2 (xla_backend_optimization_level);
* current_cheap_llvm: the same program with LLVM's expensive passes off (xla_llvm_disable_expensive_passes);
* no_rank1: the segments without the refit schedule's rank-1 branch (RefitSchedule(growth=None));
* refit_from_128: the refit schedule from t = 128 instead of 64 (RefitSchedule(all_below=128)): the first 128-row
  segment of T = 400 then has no rank-1 branch;
* previous: the whole-buffer settings (growth WHOLE, RefitSchedule(growth=None), Maximiser(screen_data=True): one
  program that pays for the whole capacity at every step), compiled with XLA's default options;
* default_search: GP-BO's L-BFGS search (5 iterations from each of 10 starts, 512 raw points) where the others
  pin the class's Adam search.
Every variant keeps the classes' refit schedule (jbo.parts.Refit(): refits at growth 1 + 1/32) and, but for
default_search, the class's search: the settings the committed files were measured with.

--before COMMIT also measures each variant on that commit (a git worktree imported through PYTHONPATH), as
<variant>@<commit>, alternating with this tree's.

    python experiments/engine/compile_ratio.py --steps 400 --repeats 5
    python experiments/engine/compile_ratio.py --steps 400 --repeats 3 --variants current current_xla_default previous
    python experiments/engine/compile_ratio.py --steps 400 --repeats 3 --variants current refit_from_128 previous \
        --out compile_ratio_T400_refit_all.json
    python experiments/engine/compile_ratio.py --steps 400 --repeats 3 --variants current default_search \
        --before a1e4218 --out compile_ratio_T400_batched_carry.json

Writes compile_ratio_T<steps>.json (or --out) into experiments/results/engine/ with --update, else its scratch mirror.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
# name: (algorithm settings, compile options: None = jbo's, {} = XLA's defaults)
VARIANTS = {
    "current": ({}, None),
    "current_xla_default": ({}, {}),
    "current_o1": ({}, {"xla_backend_optimization_level": 1}),
    "current_o2": ({}, {"xla_backend_optimization_level": 2}),
    "current_cheap_llvm": ({}, {"xla_llvm_disable_expensive_passes": True}),
    "no_rank1": ({"hypers": {"schedule": {"growth": None}}}, None),
    "refit_from_128": ({"hypers": {"schedule": {"all_below": 128}}}, None),
    "previous": (
        {"growth": {"enabled": False}, "hypers": {"schedule": {"growth": None}}, "maximiser": {"screen_data": True}},
        {},
    ),
    "default_search": ({"maximiser": "gp_default"}, None),
}
CHILD = """
import json, resource, sys, time
import jax
import jax._src.stages as stages
import jbo, jbo.parallel
from jbo.studies import compile_seeds
options = json.loads(sys.argv[3])
if options is not None:
    jbo.parallel.CPU_COMPILER_OPTIONS = options
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
settings = json.loads(sys.argv[2])
settings.setdefault("maximiser", {})  # the class's Adam search and refit schedule, with which the
settings.setdefault("hypers", {})  # committed files were measured
if settings["maximiser"] == "gp_default":  # GP-BO's L-BFGS search at the class's 512 raw points and 10 starts
    settings["maximiser"] = {"method": "lbfgs", "steps": 5}
alg = jbo.algorithms.get("gp_ucb", num_initial=10, **settings)
keys = jax.random.split(jax.random.key(123), 8)
_, seconds = compile_seeds(alg, jbo.problems.get("hartmann6"), keys=keys, num_steps=int(sys.argv[1]))
print(json.dumps({"compile_s": seconds, "xla_s": xla["wall"], "xla_cpu_s": xla["cpu"],
                  "segments": list(alg.capacities(int(sys.argv[1])))}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=["current", "previous"])
    ap.add_argument("--out", default=None, help="file name in the output folder")
    ap.add_argument("--before", default=None, help="a commit to measure each variant on as well")
    add_update_flag(ap)
    args = ap.parse_args()
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))  # the repository root
    from jbo.parallel import CPU_COMPILER_OPTIONS as jbo_options
    from jbo.studies import machine_info

    env = {**os.environ, "JBO_CACHE": "0"}
    trees = {"": root}  # label suffix: the tree whose jbo the child imports (its working directory)
    if args.before:
        worktree = Path(tempfile.mkdtemp(prefix="jbo_before_")) / "tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(worktree), args.before], check=True)
        trees[f"@{args.before}"] = worktree
    cells = [(which + suffix, which, tree) for which in args.variants for suffix, tree in trees.items()]
    runs = {name: [] for name, _, _ in cells}
    start_load = os.getloadavg()
    for r in range(args.repeats):
        for name, which, tree in cells:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.steps), *map(json.dumps, VARIANTS[which])],
                capture_output=True,
                text=True,
                env={**env, "PYTHONPATH": str(tree)},
                cwd=tree,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["trace_and_lower_s"] = row["compile_s"] - row["xla_s"]
            row["xla_cores_busy"] = row["xla_cpu_s"] / row["xla_s"]
            runs[name].append(row)
            print(
                f"repeat {r}: {name:27s} {row['compile_s']:6.2f} s (trace + lower {row['trace_and_lower_s']:5.2f} s, "
                f"XLA {row['xla_s']:6.2f} s on {row['xla_cores_busy']:.2f} cores)  segments {row['segments']}",
                flush=True,
            )
    fields = ("compile_s", "trace_and_lower_s", "xla_s", "xla_cores_busy")
    medians = {k: {f: float(np.median([r[f] for r in rows])) for f in fields} for k, rows in runs.items()}
    record = {
        "command": f"python experiments/engine/compile_ratio.py --steps {args.steps} --repeats {args.repeats} "
        f"--variants {' '.join(args.variants)}"
        + (f" --before {args.before}" if args.before else "")
        + (f" --out {args.out}" if args.out else ""),
        "machine": machine_info(),
        "load_average": {"start": start_load, "end": os.getloadavg()},
        "steps": args.steps,
        "seeds": 8,
        "variants": {k: {"settings": VARIANTS[k][0], "compile_options": VARIANTS[k][1]} for k in args.variants},
        "before": args.before,
        "jbo_compile_options": jbo_options,
        "segments": {k: rows[0]["segments"] for k, rows in runs.items()},
        "compile_s": {k: [r["compile_s"] for r in rows] for k, rows in runs.items()},
        "runs": runs,
        "medians": medians,
        "median_compile_s": {k: m["compile_s"] for k, m in medians.items()},
    }
    if "current" in runs and "previous" in runs:
        record["ratio_of_medians"] = medians["current"]["compile_s"] / medians["previous"]["compile_s"]
        record["paired_ratios"] = (
            np.array(record["compile_s"]["current"]) / np.array(record["compile_s"]["previous"])
        ).tolist()
    (OUT / (args.out or f"compile_ratio_T{args.steps}.json")).write_text(json.dumps(record, indent=1))
    if args.before:
        subprocess.run(
            ["git", "-C", str(root), "worktree", "remove", "--force", str(trees[f"@{args.before}"])], check=True
        )
    print({k: round(m["compile_s"], 2) for k, m in medians.items()}, "ratio", record.get("ratio_of_medians"))


if __name__ == "__main__":
    main()
