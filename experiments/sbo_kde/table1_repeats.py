"""SBO-KDE paper Table 1, SBO-KDE against DRBO-MMD-MinimaxApprox: run seconds from alternating repeats.

    taskset -c 1 python experiments/sbo_kde/table1_repeats.py [--evals 100] [--repeats 3] [--update]
    jbo reproduce sbo_kde table1_repeats [--budget smoke|default|paper]      # the declared runs (figures.py)

Both methods are compiled first (ahead-of-time; compile seconds recorded apart), then run in the order
A, B, A, B, ... (--repeats times each, each repeat on its own seed key 100 + r, the same key for both
methods), so that a change of the machine's load falls on both alike. Settings as table1.py (the
paper's M = 1024 KDE samples and inner Sobol points, raw screening 1024, 10 starts x 50 projected-Adam
steps; MinimaxApprox on the paper's grid of 1024 points); --evals sets the evaluations timed (n0 = 10
included; the paper: 100). Writes table1_repeats.csv (one row per timed run, with the load average
read before it and the process's CPU seconds) into experiments/results/sbo_kde/table1_repeats/ with --update,
else its scratch mirror.
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import pandas as pd
from common import LABELS, add_method_args, add_update_flag, header, method_from_args, out_path

from jbo.problems import sbo_kde
from jbo.studies import compile_seeds

METHODS = ("sbo_kde", "minimax_approx")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_method_args(ap)
    ap.add_argument("--evals", type=int, default=100, help="evaluations timed, n0 = 10 included (the paper: 100)")
    ap.add_argument("--repeats", type=int, default=3)
    add_update_flag(ap)
    args = ap.parse_args()
    T = 14 if args.quick else args.evals
    header(
        f"SBO-KDE Table 1 repeats: seconds per {T} evaluations on Ackley, M = {args.samples}, "
        f"{args.repeats} alternating repeats of {', '.join(LABELS[m] for m in METHODS)}"
    )
    problem = sbo_kde.problem("ackley")
    compiled = {}
    for name in METHODS:
        alg = method_from_args(name, problem, args)
        compiled[name] = compile_seeds(alg, problem, keys=jax.random.split(jax.random.key(100), 1), num_steps=T)
    rows = []
    for r in range(args.repeats):
        for name in METHODS:
            fn, compile_s = compiled[name]
            key = jax.random.split(jax.random.key(100 + r), 1)
            load = os.getloadavg()[0]
            t0, c0 = time.perf_counter(), time.process_time()
            jax.block_until_ready(fn(key))
            run_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
            rows.append((r, LABELS[name], T, compile_s, run_s, cpu_s, load))
            print(
                f"repeat {r}  {LABELS[name]:24s} run {run_s:8.2f} s   cpu {cpu_s:8.2f} s   load {load:.2f}", flush=True
            )
    columns = ["repeat", "method", "evaluations", "compile_s", "run_s", "cpu_s", "load1"]
    table = pd.DataFrame(rows, columns=columns)
    table.to_csv(out_path("table1_repeats", "table1_repeats", args.quick, "csv"), index=False)
    print(table.groupby("method").run_s.agg(["mean", "std", "min", "max"]).to_string())


if __name__ == "__main__":
    main()
