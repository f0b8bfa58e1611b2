"""SBO-KDE paper Table 1, measured: seconds for 100 evaluations on Ackley, every method in one run.

    python experiments/sbo_kde/table1.py [--samples 1024] [--runs 1] [--quick] [--methods gp_ucb sbo_kde ...]
    jbo reproduce sbo_kde table1 [--budget smoke|default|paper]      # the declared runs (figures.py)

Each method is one compiled program (the scan over 100 evaluations, n0 = 10); compile seconds are
measured separately (ahead-of-time) and excluded from the run seconds, which are the mean over
--runs seeds run one after another (the paper: mean +- sd of 10 runs, BoTorch/CVXPY on a CPU).
Settings as experiments/sbo_kde/fig1.py. Writes table1_timing.csv into experiments/results/sbo_kde/table1/ with
--update, else its scratch mirror.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np
import pandas as pd
from common import LABELS, PAPER_METHODS, add_method_args, add_update_flag, header, method_from_args, out_path

from jbo.problems import sbo_kde
from jbo.studies import compile_seeds

PAPER = {
    "GP-UCB": 11.35,
    "DRBO-MMD": 5254.65,
    "DRBO-MMD-MinimaxApprox": 119.04,
    "StableOpt": 32.75,
    "SBO-KDE": 30.57,
    "DRBO-KDE": 180.61,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_method_args(ap)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument(
        "--methods", nargs="+", default=list(PAPER_METHODS), help="only these (default: the paper's six; GP-UCB kept)"
    )
    add_update_flag(ap)
    args = ap.parse_args()
    T, M = (14, 32) if args.quick else (100, args.samples)
    header(
        f"SBO-KDE Table 1: seconds per {T} evaluations on Ackley, M = {M}, raw cap {args.raw}, MMD grid cap "
        f"{args.max_grid}, opt steps {args.opt_steps}, {args.runs} run(s) each"
    )
    problem = sbo_kde.problem("ackley")
    rows = []
    for name in dict.fromkeys(["gp_ucb", *args.methods]):  # GP-UCB first: the ratios' reference
        alg = method_from_args(name, problem, args)
        keys = jax.random.split(jax.random.key(100), 1)
        fn, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=T)
        times = []
        for r in range(args.runs):
            k = jax.random.split(jax.random.key(100 + r), 1)
            t0 = time.perf_counter()
            jax.block_until_ready(fn(k))
            times.append(time.perf_counter() - t0)
        label = LABELS[name]
        rows.append((label, compile_s, np.mean(times), np.std(times), PAPER[label]))
        print(
            f"{label:24s} compile {compile_s:6.1f} s   run {np.mean(times):8.2f} s   (paper {PAPER[label]} s)",
            flush=True,
        )
    table = pd.DataFrame(rows, columns=["method", "compile_s", "run_s", "run_sd", "paper_s"])
    base = table.set_index("method").run_s["GP-UCB"]
    table["ratio_to_gp_ucb"] = table.run_s / base
    table["paper_ratio"] = table.paper_s / PAPER["GP-UCB"]
    table.to_csv(out_path("table1", "table1_timing", args.quick, "csv"), index=False)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
