"""XLA's CPU optimisation level for jbo's run programs: compile seconds against run seconds.

jbo compiles its run programs on CPU with ``jbo.parallel.CPU_COMPILER_OPTIONS``. This measures the
choice: each measurement is a fresh Python process with the persistent compilation cache off
(JBO_CACHE=0) that compiles a study program ahead of time (jbo.studies.compile_seeds, 8 seeds), runs
it once and records the compile seconds (and XLA's share), the run seconds per seed and the median
final simple regret. The levels alternate within each repeat so that all see the same machine.

Tasks: default GP-UCB on hartmann6 (10 initial points) at T = 50 (one segment) and T = 100, 200 and
400 (the growing segments), and BOKE on hartmann3 at T = 200 (KDE and kernel-regression work: elementwise
code, which LLVM's optimisation level can change).

    python experiments/engine/compile_options.py --repeats 3
    python experiments/engine/compile_options.py --repeats 3 --levels xla_default O2 cheap_llvm --out compile_options_o2.json
    python experiments/engine/compile_options.py --repeats 2 --levels O2 O2_legacy_fusion --out compile_options_fusion_emitters.json
    python experiments/engine/compile_options.py --repeats 3 --levels xla_default O2 --out compile_options_t100_t200.json \
        --tasks gp_ucb/hartmann6/T100 gp_ucb/hartmann6/T200

Writes compile_options.json (or --out) into experiments/results/engine/ with --update, else its scratch mirror.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
LEVELS = {
    "xla_default": {},
    "O1": {"xla_backend_optimization_level": 1},
    "O2": {"xla_backend_optimization_level": 2},
    "cheap_llvm": {"xla_llvm_disable_expensive_passes": True},
    # -O2 with XLA's older LLVM IR emitters for fusions instead of its MLIR fusion emitters
    "O2_legacy_fusion": {"xla_backend_optimization_level": 2, "xla_cpu_use_fusion_emitters": False},
}
# the classes' search and refit schedule (jbo.parts.Maximiser(), jbo.parts.Refit()), with which the committed
# files were measured
ADAM = {"num_initial": 10, "maximiser": {"method": "adam"}, "hypers": {}}
TASKS = {
    "gp_ucb/hartmann6/T50": ("gp_ucb", ADAM, "hartmann6", 50),
    "gp_ucb/hartmann6/T100": ("gp_ucb", ADAM, "hartmann6", 100),
    "gp_ucb/hartmann6/T200": ("gp_ucb", ADAM, "hartmann6", 200),
    "gp_ucb/hartmann6/T400": ("gp_ucb", ADAM, "hartmann6", 400),
    "boke/hartmann3/T200": ("boke", {}, "hartmann3", 200),
}
CHILD = """
import json, resource, sys, time
import jax
import jax._src.stages as stages
import numpy as np
import jbo, jbo.parallel
from jbo.studies import compile_seeds
jbo.parallel.CPU_COMPILER_OPTIONS = json.loads(sys.argv[1])
jbo.parallel.SHORT_PROGRAM_RUN_STEPS = 0  # every program with exactly the level's options
name, kwargs, problem, steps = json.loads(sys.argv[2])
xla = {"wall": 0.0}
compile_ = stages.Lowered.compile
def timed(self, *a, **k):
    t0 = time.perf_counter()
    out = compile_(self, *a, **k)
    xla["wall"] += time.perf_counter() - t0
    return out
stages.Lowered.compile = timed
alg = jbo.algorithms.get(name, **kwargs)
keys = jax.random.split(jax.random.key(123), 8)
fn, seconds = compile_seeds(alg, jbo.problems.get(problem), keys=keys, num_steps=steps)
t0 = time.perf_counter()
trace = jax.block_until_ready(fn(keys))
run = time.perf_counter() - t0
regret = np.asarray(trace.metrics["simple_regret"])[:, -1]
print(json.dumps({"compile_s": seconds, "xla_s": xla["wall"], "run_s_per_seed": run / len(keys),
                  "median_final_regret": float(np.median(regret)), "final_regret": regret.tolist()}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--tasks",
        nargs="+",
        choices=list(TASKS),
        default=["gp_ucb/hartmann6/T50", "gp_ucb/hartmann6/T400", "boke/hartmann3/T200"],
    )
    ap.add_argument("--levels", nargs="+", choices=list(LEVELS), default=list(LEVELS))
    ap.add_argument("--out", default="compile_options.json", help="file name in the output folder")
    add_update_flag(ap)
    args = ap.parse_args()
    levels = {name: LEVELS[name] for name in args.levels}
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
    from jbo.studies import machine_info

    env = {**os.environ, "JBO_CACHE": "0"}
    runs = {task: {level: [] for level in levels} for task in args.tasks}
    start_load = os.getloadavg()
    for r in range(args.repeats):
        for task in args.tasks:
            for level, options in levels.items():
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, json.dumps(options), json.dumps(TASKS[task])],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=True,
                )
                row = json.loads(out.stdout.strip().splitlines()[-1])
                runs[task][level].append(row)
                print(
                    f"repeat {r} {task:24s} {level:12s} compile {row['compile_s']:6.2f} s  "
                    f"run {row['run_s_per_seed']:7.3f} s/seed  regret {row['median_final_regret']:.3g}",
                    flush=True,
                )
    summary = {
        task: {
            level: {
                "median_compile_s": float(np.median([r["compile_s"] for r in rows])),
                "median_xla_s": float(np.median([r["xla_s"] for r in rows])),
                "median_run_s_per_seed": float(np.median([r["run_s_per_seed"] for r in rows])),
                "median_final_regret": rows[0]["median_final_regret"],
                "same_regrets_every_repeat": all(r["final_regret"] == rows[0]["final_regret"] for r in rows),
            }
            for level, rows in by_level.items()
        }
        for task, by_level in runs.items()
    }
    result = {
        "machine": machine_info(),
        "load_average_at_start": start_load,
        "load_average_at_end": os.getloadavg(),
        "command": "python experiments/engine/compile_options.py " + " ".join(sys.argv[1:]),
        "levels": levels,
        "summary": summary,
        "runs": runs,
    }
    OUT.mkdir(exist_ok=True)
    path = OUT / args.out
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
