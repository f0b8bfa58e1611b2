"""Figs 2 (top), 4 (ablation), 5 and the E0 harness on the synthetic problems (spec 5.2, 5.4).

    python experiments/uhe_bo/synthetic.py --figure fig2 [--quick] [--methods uhe_bo,map] [--seeds 10]
        [--problems ...] [--budget 100] [--tag _x] [--folder gpu_vs_cpu] [--no-run]

fig2: Deceptive (n = 2), h1, Hartmann3, the seven methods; fig4: UHE-BO, RA-BO, Random+EXP3 on
Deceptive and Hartmann3; fig5: Branin and Hartmann6, the seven methods; fig2_d3: Deceptive n = 3.
Settings from the paper: 10 seeds, Matern-5/2 ARD, Gamma(1e-3, 10) priors, beta = 1.96, M = 2|D|,
HMC 200 + 10. Ours (spec 7): n0 = 3d uniform, T = 100 BO evaluations, noiseless objectives, the
fit / optimiser budgets of jbo.algorithms.uhe_bo's docstring. Each (method, problem) is one program;
rows are appended to <figure><tag>_<problem>.csv as each finishes, so a long run can be read while it goes
on. The files go to the figure's folder, experiments/results/uhe_bo/<figure>/ with --update (else its
scratch mirror), or to the folder --folder names (the GPU runs of gpu_vs_cpu).
"""

from __future__ import annotations

import argparse
import sys

import common
import pandas as pd

FIGURES = {
    "fig2": (("deceptive2", "h1", "hartmann3"), common.SEVEN),
    "fig2_d3": (("deceptive3",), common.SEVEN),
    "fig4": (("deceptive2", "hartmann3"), ("uhe_bo", "ra_bo", "random_exp3")),
    "fig5": (("branin", "hartmann6"), common.SEVEN),
    "e0": (("gp_d1", "gp_d2"), ("map", "ra_bo", "uhe_bo")),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--figure", choices=sorted(FIGURES), required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--methods", default=None, help="comma-separated subset")
    ap.add_argument("--problems", default=None, help="comma-separated subset")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--budget", type=int, default=None, help="BO evaluations after D0 (even)")
    ap.add_argument("--tag", default="", help="suffix of the output names (reduced runs)")
    ap.add_argument("--no-run", action="store_true", help="only redo the plot and summaries from the CSVs")
    ap.add_argument("--folder", default=None, help="the figure folder written to (default: --figure's)")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    folder = a.folder or a.figure
    probs, methods = FIGURES[a.figure]
    probs = a.problems.split(",") if a.problems else probs
    methods = a.methods.split(",") if a.methods else methods
    seeds = a.seeds or (2 if a.quick else 10)
    budget = a.budget or (6 if a.quick else 100)
    if budget % 2:
        raise ValueError(f"--budget must be even (D7), got {budget}")
    common.header(f"UHE {a.figure}: {probs} x {methods}, {seeds} seeds, T = {budget}")
    log = open(common.out_path(folder, a.figure + a.tag, a.quick, "log"), "a")
    for p in [] if a.no_run else probs:
        csv = common.out_path(folder, f"{a.figure}{a.tag}_{p}", a.quick, "csv")
        for m in methods:
            rows, timing, _ = common.run_one(m, p, budget, seeds, a.quick, log=log)
            print(timing, file=sys.stderr, flush=True)
            pd.DataFrame(rows).to_csv(csv, mode="a", header=not csv.exists(), index=False)
    # the plot and summaries cover every problem of the figure run so far, with the MCMC runs (tag _mcmc)
    df = common.read_figure(a.figure, FIGURES[a.figure][0], common.with_mcmc(a.tag), a.quick, folder)
    if df is None:
        raise common.missing(common.out_dir(folder), f"{a.figure}{a.tag}_<problem>.csv")
    common.plot_curves(
        df,
        common.out_path(folder, a.figure + a.tag, a.quick, "png"),
        title=f"UHE-BO {a.figure}: log10 simple regret, mean +- s.e.",
    )
    s = common.summary(df)
    s.to_csv(common.out_path(folder, a.figure + a.tag + "_summary", a.quick, "csv"), index=False)
    print(s.to_string(), file=sys.stderr)
    if a.figure == "e0":
        lengthscale_error(df, a.quick, a.tag, folder)


def lengthscale_error(df, quick, tag="", folder="e0"):
    """E0: |log l_t - log l*| (l* = 0.1, mean over the d lengthscales) per step, next to the regret."""
    import numpy as np

    cols = [c for c in df.columns if c.startswith("lengthscale_")]
    df = df.assign(log_ls_error=np.nanmean(np.abs(np.log(df[cols].values) - np.log(0.1)), axis=1))
    df = df[df.evaluation >= 1]
    common.plot_curves(
        df,
        common.out_path(folder, "e0" + tag + "_lengthscale_error", quick, "png"),
        metric="log_ls_error",
        log=False,
        title="E0: |log l_t - log l*|, mean +- s.e.",
    )
    at = df[df.evaluation.isin([10, 20, 30, 50, 100])].groupby(["problem", "method", "evaluation"])["log_ls_error"]
    out = pd.DataFrame({"mean": at.mean(), "se": at.std(ddof=1) / np.sqrt(at.count())}).reset_index()
    out.to_csv(common.out_path(folder, "e0" + tag + "_lengthscale_error", quick, "csv"), index=False)
    print(out.to_string(), file=sys.stderr)


if __name__ == "__main__":
    main()
