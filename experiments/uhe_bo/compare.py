"""Final-step comparison table: per (figure, problem, method) the mean +- s.e. of the final metric
(log10 simple regret; the best observed value on the real-world problems, which have no known
optimum) and, seed by seed (common random numbers: the same D0 under one seed), how often UHE-BO
ends strictly better than the method, equal, or worse.

    python experiments/uhe_bo/compare.py --tags "" _mcmc --out compare      (the full-protocol runs)

A figure's rows for one problem are read from every `<figure><tag>_<problem>.csv` of the given tags
(so the MCMC runs, written apart with tag _mcmc, join their figure); Fig 4 takes its UHE-BO rows
from Fig 2 (the same program and keys). Each file is read from its figure's output folder
(experiments/results/uhe_bo/<figure>/ with --update, else its scratch mirror) where a run wrote it there,
else from the committed results, so the table joins what was re-run with what was not; --quick reads the
smoke runs' *_quick files. Writes <out>.csv and <out>.md into experiments/results/uhe_bo/compare/ with
--update (else its scratch mirror).
"""

from __future__ import annotations

import argparse

import common
import numpy as np
import pandas as pd

FIGURES = ("fig2", "fig2_d3", "fig2_realworld", "fig4", "fig5", "e0")
REALWORLD = {"lr", "gb", "lunar"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tags", nargs="+", default=["", "_mcmc"])
    ap.add_argument("--out", default="compare")
    ap.add_argument("--quick", action="store_true", help="the smoke runs' *_quick files")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    out_dir = common.out_dir("compare")
    rows = []
    for fig in FIGURES:
        for problem in common.PROBLEMS:
            df = common.read_figure(fig, [problem], a.tags, a.quick, joined=True)
            if df is None:
                continue
            real = problem in REALWORLD
            metric = "best_value" if real else "simple_regret"
            last = df[df.step == df.groupby("method")["step"].transform("max")]
            piv = last.pivot(index="seed", columns="method", values=metric)
            for m in piv.columns:
                raw = piv[m].dropna().values
                v = raw if real else np.log10(np.maximum(raw, 1e-12))
                row = dict(
                    figure=fig,
                    problem=problem,
                    method=m,
                    seeds=len(v),
                    evaluations=int(df.evaluation.max()),
                    metric="best value" if real else "log10 simple regret",
                    mean=v.mean(),
                    se=v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan,
                    median_raw=float(np.median(raw)),
                )
                if "uhe_bo" in piv.columns and m != "uhe_bo":
                    both = piv[["uhe_bo", m]].dropna()
                    u, o = both["uhe_bo"].values, both[m].values
                    close = np.isclose(u, o, rtol=1e-6, atol=1e-9)
                    better = (u > o) if real else (u < o)
                    row.update(
                        uhe_better=int(np.sum(better & ~close)),
                        tie=int(np.sum(close)),
                        uhe_worse=int(np.sum(~better & ~close)),
                    )
                rows.append(row)
    if not rows:
        raise common.missing(out_dir, f"the figures' CSVs ({', '.join(FIGURES)}, tags {a.tags})")
    out = pd.DataFrame(rows)
    out.to_csv(out_dir / f"{a.out}{'_quick' if a.quick else ''}.csv", index=False)
    md = [
        "| figure | problem | method | seeds | T | metric | mean ± s.e. | UHE-BO better / tie / worse |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in out.itertuples():
        wins = (
            "—"
            if r.method == "uhe_bo" or pd.isna(getattr(r, "uhe_better", np.nan))
            else f"{int(r.uhe_better)} / {int(r.tie)} / {int(r.uhe_worse)}"
        )
        md.append(
            f"| {r.figure} | {r.problem} | {common.LABELS.get(r.method, r.method)} | {r.seeds} | {r.evaluations} | "
            f"{r.metric} | {r.mean:.3f} ± {r.se:.3f} | {wins} |"
        )
    (out_dir / f"{a.out}{'_quick' if a.quick else ''}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
