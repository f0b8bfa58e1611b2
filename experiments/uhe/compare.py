"""Final-step comparison table for the reduced runs: per (figure, problem, method) the mean +- s.e.
of log10 simple regret at the last evaluation and, seed by seed (common random numbers: the same
D0 under one seed), how often UHE-BO ends strictly below the method, equal (both at the same value)
or above it.

    python experiments/uhe/compare.py --tag _s5_T50   -> experiments/results/uhe/compare_s5_T50.csv
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

R = Path(__file__).resolve().parents[1] / "results" / "uhe"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", default="_s5_T50")
    a = ap.parse_args(argv)
    rows = []
    for csv in sorted(R.glob(f"fig*{a.tag}_*.csv")) + sorted(R.glob(f"e0{a.tag}_gp_*.csv")):
        if "summary" in csv.name or "lengthscale" in csv.name:
            continue
        fig = csv.name.split(a.tag)[0]
        df = pd.read_csv(csv).drop_duplicates(["method", "problem", "seed", "step"], keep="last")
        last = df[df.step == df.groupby("method")["step"].transform("max")]
        piv = last.pivot(index="seed", columns="method", values="simple_regret")
        for m in piv.columns:
            v = np.log10(np.maximum(piv[m].values, 1e-12))
            row = dict(figure=fig, problem=df.problem.iloc[0], method=m, seeds=len(v),
                       evaluations=int(df.evaluation.max()), log10_regret_mean=v.mean(),
                       log10_regret_se=v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan,
                       regret_median=float(np.median(piv[m].values)))
            if "uhe_bo" in piv.columns and m != "uhe_bo":
                u, o = piv["uhe_bo"].values, piv[m].values
                close = np.isclose(u, o, rtol=1e-6, atol=1e-9)
                row.update(uhe_better=int(np.sum((u < o) & ~close)), tie=int(np.sum(close)),
                           uhe_worse=int(np.sum((u > o) & ~close)))
            rows.append(row)
    out = pd.DataFrame(rows)
    out.to_csv(R / f"compare{a.tag}.csv", index=False)
    print(out.to_string())


if __name__ == "__main__":
    main()
