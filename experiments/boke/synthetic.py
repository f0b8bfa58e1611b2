"""BOKE paper Figs. 6 and 7: six synthetic functions, noise-free and noisy, mean simple regret.

    jbo reproduce boke fig6_7                   # 30 seeds, the spec's n0 and T (spec 6.3)
    jbo reproduce boke fig6_7 --budget smoke    # --quick (2 seeds, 5 BO steps), Forrester, BOKE and GP-UCB

From the paper: the four methods, Gaussian kernel, Scott bandwidth for the KR methods, fixed GP
lengthscale and beta, beta_t from Thm 4.13, a shared LHS design, 30 seeds, mean simple regret.
Ours (the paper gives none of them): the Picheny-rescaled function forms, n0 and T, the noise
sigma_eps = 0.1 SD_U(g) (Fig. 7) and varsigma = sigma_eps in beta_t in BOTH settings, all other
defaults of spec 9 (see jbo/algorithms/boke.py). Regret uses the noise-free f at the queried points.
Extra (ours): KR-UCB with alpha = 0.8, because with the spec's alpha = 0.5 KR-UCB cannot widen before
t = n0^2, i.e. never within the budget for d >= 3.

Writes fig6_fig7_synthetic.csv.gz, fig6_fig7_summary.csv, fig6_synthetic_noise-free.png and
fig7_synthetic_noisy.png (experiments/results/boke/fig6_7/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from common import KRUCB_08, METHODS, add_update_flag, header, methods, out_path, params_for

from jbo import studies
from jbo.problems.boke import SUITE

FIGURE = "fig6_7"  # experiments/boke/figures.py
ALL = METHODS + (KRUCB_08,)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--problems", nargs="+", default=list(SUITE))
    ap.add_argument("--methods", nargs="+", choices=ALL, default=list(ALL), help="(default: all five)")
    add_update_flag(ap)
    args = ap.parse_args()
    seeds = 2 if args.quick else args.seeds
    header(f"BOKE Figs 6/7: {seeds} seeds, methods {METHODS if args.methods == list(ALL) else tuple(args.methods)}")
    frames = []
    for name in args.problems:
        bench = SUITE[name]
        T = bench.num_initial + 5 if args.quick else bench.num_steps
        for noisy in (False, True):
            label = f"{bench.panel}: {name}"
            problem = bench.problem(noisy)
            table = studies.run_study(
                methods(bench.num_initial, tuple(args.methods)),
                {label: problem},
                key=0,
                num_steps=T,
                num_seeds=seeds,
                params=lambda m, p: params_for(m, bench.noise_std, bench.noise_std if noisy else 0.0),
            )
            table["setting"] = "noisy" if noisy else "noise-free"
            table["num_initial"] = bench.num_initial
            frames.append(table)
    table = pd.concat(frames, ignore_index=True)
    keep = [
        "setting",
        "problem",
        "method",
        "seed",
        "step",
        "simple_regret",
        "value",
        "num_initial",
        "compile_s",
        "run_s",
    ]
    table[keep].to_csv(out_path(FIGURE, "fig6_fig7_synthetic", args.quick, "csv.gz"), index=False)

    final = table[table.step == table.groupby(["setting", "problem"]).step.transform("max")]
    summ = (
        final.groupby(["setting", "problem", "method"], sort=False)
        .agg(
            mean_final_regret=("simple_regret", "mean"),
            median_final_regret=("simple_regret", "median"),
            se=("simple_regret", lambda v: v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0),
            compile_s=("compile_s", "first"),
            run_s=("run_s", "first"),
        )
        .reset_index()
    )
    summ.to_csv(out_path(FIGURE, "fig6_fig7_summary", args.quick, "csv"), index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(summ.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    n0 = {f"{b.panel}: {n}": b.num_initial for n, b in SUITE.items()}
    for setting, fig in (("noise-free", "fig6"), ("noisy", "fig7")):
        sub = table[table.setting == setting]
        f = studies.plot(sub, out_path(FIGURE, f"{fig}_synthetic_{setting}", args.quick, "png"), initial=n0, ncols=3)
        f.suptitle(f"BOKE paper {fig.upper()}: {setting}, mean simple regret +- s.e., {seeds} seeds")
        f.tight_layout()
        f.savefig(out_path(FIGURE, f"{fig}_synthetic_{setting}", args.quick, "png"), dpi=110)
    print(f"wrote {out_path(FIGURE, 'fig6_fig7_synthetic', args.quick, 'csv.gz')}", file=sys.stderr)


if __name__ == "__main__":
    main()
