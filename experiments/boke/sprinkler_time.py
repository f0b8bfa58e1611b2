"""BOKE paper Fig. 8, the CPU-time axis measured as it grows with t: the CPU seconds per seed of a run
that stops at step t, for t on a grid, with every buffer growing with the data in the engine's
segments (64, 128, then t rows; for BOKE, BOKE+ and KR-UCB `growth=data.Growth()`, which gives the same picks
as the whole buffer of experiments/boke/sprinkler.py, tested). --whole-buffer times the kernel methods
on buffers that hold t rows from the first step instead.

    jbo reproduce boke fig8     # sprinkler.py, then this with --whole-buffer --out fig8_time_axis_whole,
                                # then this (8 seeds, t = 60, 100, 140, 200)

`--seeds 2 --horizons 44 --methods BOKE GP-UCB --out fig8_time_axis_quick` is a smoke run.

For each method and horizon t: compile (not counted), then run the seeds in one vmapped program and
read the process's CPU time (user + system, all threads) around it; subtract the CPU time of the
simulator on the same batch shape and divide by the seeds. The paper plots CPU time, and CPU time is
less disturbed than wall time by other work on the machine. The methods and settings are those of
experiments/boke/sprinkler.py (n0 = 40, the same seeds); experiments/verdicts/boke.py reads the
regret of that run at the CPU time measured here.

Writes <out>.csv (default fig8_time_axis.csv: method, horizon, cpu_s and wall_s per seed,
objective_cpu_s) and <out>.png (the mean regret of the committed Fig 8 run,
experiments/results/boke/fig8/fig8_sprinkler.csv.gz, against this time axis, linear between the measured
horizons) into Fig 8's folder (experiments/results/boke/fig8/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import time

import jax
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from common import KRUCB_08, METHODS, add_update_flag, committed_dir, header, methods, out_dir, params_for  # noqa: E402

import jbo  # noqa: E402
from jbo import data  # noqa: E402
from jbo.studies import compile_seeds  # noqa: E402

FIGURE = "fig8"  # experiments/boke/figures.py
ALL = METHODS + (KRUCB_08,)


def cpu_seconds() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def objective_cpu(problem, seeds: int, steps: int) -> float:
    """CPU seconds of `steps` vmapped simulator calls on `seeds` points, compile excluded."""
    f = jax.jit(jax.vmap(problem.objective_unit))
    u = jax.random.uniform(jax.random.key(9), (steps, seeds, problem.dim))
    jax.block_until_ready(f(u[0]))
    c0 = cpu_seconds()
    for i in range(steps):
        jax.block_until_ready(f(u[i]))
    return cpu_seconds() - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--horizons", nargs="+", type=int, default=[60, 100, 140, 200])
    ap.add_argument("--methods", nargs="+", choices=ALL, default=list(ALL), help="(default: all five)")
    ap.add_argument("--whole-buffer", action="store_true", help="kernel methods on the whole buffer")
    ap.add_argument("--out", default="fig8_time_axis", help="output stem in the output folder")
    add_update_flag(ap)
    args = ap.parse_args()
    n0 = 40
    header(f"BOKE Fig 8 time axis: sprinkler, {args.seeds} seeds, n0 = {n0}, horizons {args.horizons}")
    problem = jbo.problems.get("sprinkler")
    keys = jax.random.split(jax.random.key(0), args.seeds)
    rows = []
    for name, alg in methods(n0, tuple(args.methods)).items():
        if alg.growth == data.WHOLE and not args.whole_buffer:  # the kernel methods' default
            alg = dataclasses.replace(alg, growth=data.Growth())
        params = params_for(name, 0.0, 0.0)
        for t in args.horizons:
            run, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=t, params=params)
            w0, c0 = time.perf_counter(), cpu_seconds()
            jax.block_until_ready(run(keys).metrics)
            cpu, wall = cpu_seconds() - c0, time.perf_counter() - w0
            obj = objective_cpu(problem, args.seeds, t)
            row = {
                "method": name,
                "horizon": t,
                "segments": " ".join(map(str, alg.capacities(t))),
                "cpu_s": max(cpu - obj, 0.0) / args.seeds,
                "wall_s": wall / args.seeds,
                "objective_cpu_s": obj / args.seeds,
                "compile_s": compile_s,
                "load_1min": os.getloadavg()[0],
            }
            rows.append(row)
            print(
                f"{name:14s} t = {t:4d}  {row['cpu_s']:7.3f} CPU s / seed  ({row['wall_s']:6.3f} s wall / seed, "
                f"compile {compile_s:5.1f} s, load {row['load_1min']:.2f})",
                flush=True,
            )
    axis = pd.DataFrame(rows)
    axis.to_csv(out_dir(FIGURE) / f"{args.out}.csv", index=False)
    plot(axis, n0, args.out)


def plot(axis: pd.DataFrame, n0: int, stem: str) -> None:
    """Mean regret of the committed Fig 8 run (fig8_sprinkler.csv.gz) against the measured CPU time."""
    runs = pd.read_csv(committed_dir("boke", FIGURE, "fig8_sprinkler.csv.gz"))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for method, g in axis.groupby("method", sort=False):
        g = g.sort_values("horizon")
        mean = runs[runs.method == method].groupby("step").simple_regret.mean()
        steps = mean.index.to_numpy()
        cpu = np.interp(steps, np.r_[n0, g.horizon], np.r_[0.0, g.cpu_s])
        keep = steps > n0
        ax.plot(cpu[keep], mean.to_numpy()[keep], label=method)
    ax.set(xscale="log", yscale="log", xlabel="CPU seconds per seed (measured on growing horizons)")
    ax.set(ylabel="mean simple regret (30 seeds)", title="BOKE Fig. 8: sprinkler, regret vs CPU time")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir(FIGURE) / f"{stem}.png", dpi=110)


if __name__ == "__main__":
    main()
