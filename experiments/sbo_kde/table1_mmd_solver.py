"""SBO-KDE Table 1, the DRBO-MMD row (and GP-UCB, its reference), for one version of the MMD solver.

    PYTHONPATH=<checkout> python experiments/sbo_kde/table1_mmd_solver.py --label smo [--runs 1] [--quick]
    jbo reproduce sbo_kde table1_mmd      # the current solver's rows (figures.py)

The DRBO-MMD worst-case solver replaced an earlier one (16 bisection x 100 FISTA steps, up to 4.5e-2 of the
range of g off the SOCP optimum) by warm-started SMO pair steps (12 x 150, within 1e-5). The target:
Table 1's DRBO-MMD time at most 1.5x the old one. The machine is shared, so the two solvers are
timed back to back, alternately, each by this script run with the checkout that holds it on
PYTHONPATH (the jbo it imports is recorded). Settings as experiments/sbo_kde/table1.py (Ackley, one seed,
100 evaluations, n0 = 10, the paper's M = 1024, 32 raw points for DRBO-MMD, grid 100); compile
seconds separately; the 1-minute load average before and after each run. Appends one row per method
to table1_mmd_solver.csv (experiments/results/sbo_kde/table1_mmd/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import numpy as np
import pandas as pd
from common import LABELS, add_method_args, add_update_flag, header, method_from_args, out_path

import jbo
from jbo.problems import sbo_kde
from jbo.studies import code_version, compile_seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_method_args(ap)
    ap.add_argument("--label", required=True, help="the solver's name in the output (e.g. fista, smo)")
    ap.add_argument("--runs", type=int, default=1)
    add_update_flag(ap)
    args = ap.parse_args()
    T = 14 if args.quick else 100
    header(f"Table 1 DRBO-MMD row, solver {args.label}: jbo {jbo.__file__} at {code_version()}, T = {T}")
    problem = sbo_kde.problem("ackley")
    rows = []
    for name in ("gp_ucb", "drbo_mmd"):
        alg = method_from_args(name, problem, args)
        fn, compile_s = compile_seeds(alg, problem, keys=jax.random.split(jax.random.key(100), 1), num_steps=T)
        for r in range(args.runs):
            k = jax.random.split(jax.random.key(100 + r), 1)
            load0 = os.getloadavg()[0]
            t0 = time.perf_counter()
            tr = jax.block_until_ready(fn(k))
            run_s = time.perf_counter() - t0
            load1 = os.getloadavg()[0]
            regret = float(np.asarray(tr.metrics["regret"])[0, -1])
            rows.append(
                (
                    args.label,
                    code_version(),
                    LABELS[name],
                    r,
                    compile_s,
                    run_s,
                    load0,
                    load1,
                    regret,
                    time.strftime("%Y-%m-%d %H:%M:%S"),
                )
            )
            print(
                f"{args.label:6s} {LABELS[name]:10s} run {r}: compile {compile_s:5.1f} s, run {run_s:7.2f} s, "
                f"load {load0:.2f} -> {load1:.2f}, final regret {regret:.4f}",
                flush=True,
            )
    table = pd.DataFrame(
        rows,
        columns=[
            "solver",
            "jbo_commit",
            "method",
            "run",
            "compile_s",
            "run_s",
            "load_before",
            "load_after",
            "final_regret",
            "time",
        ],
    )
    path = out_path("table1_mmd", "table1_mmd_solver", args.quick, "csv")
    table.to_csv(path, mode="a", header=not path.exists(), index=False)


if __name__ == "__main__":
    main()
