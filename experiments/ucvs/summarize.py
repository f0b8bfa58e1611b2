"""Plots and tables from the CSVs that fig1.py / ablation.py wrote (also from a partial run).

  python experiments/ucvs/summarize.py [--tags fig1 fig1b] [--add-seeds fig1_more] [--out fig1] [--figure fig1_2]
      [--quick] [--update]

Reads the CSVs from the folder it writes to, the figure's (default fig1_2): experiments/results/ucvs/fig1_2/
with --update, else its scratch mirror. --quick reads and writes the files of fig1.py --quick (suffix _quick).
`jbo reproduce ucvs fig1_2` runs it after the grid's fig1.py runs: --tags fig1_grid2_a fig1_grid2_b --out
fig1_grid2, then with fig1_grid3_ts (--out fig1_grid3) and fig1_grid4_ucvs (--out fig1_grid4), and with
--add-seeds fig1_seeds5to9 fig1_seeds5to9_pa fig1_naive --out fig1_seeds10.

Writes <out>_regret.png (Fig 1: simple regret vs cost, mean +- s.e.), <out>_evaluations.png (Fig 2:
evaluations vs cost), <out>_table.csv and <out>_table.md (per cell and method: final simple regret,
R^f, R^c, fraction of plays on i_*, steps; mean +- s.e. over seeds; regret at cost 30 and 60 too) and
<out>_pivot.md (cells x methods: final regret, R^c, plays on i_*, steps).
Where several tags hold the same (objective, method) program, the last tag's run replaces the earlier
ones (a re-run of a few programs after a change), and <out>_timing.md lists which run each came from.
The runs of --add-seeds tags are added to them instead: more seeds of the same programs (fig1.py
--seed-start), or programs of their own (a named error if a seed would be counted twice).
"""

from __future__ import annotations

import argparse

import fig1 as F
import numpy as np
import pandas as pd


def se(x):
    return np.std(x, ddof=1) / np.sqrt(len(x)) if len(x) > 1 else 0.0


def table(curves: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    keys = ["objective", "cost_set", "variance", "method"]
    at = {c: curves[curves.cost == c].groupby(keys).simple_regret.mean() for c in (30.0, 60.0)}
    rows = []
    for k, g in runs.groupby(keys, sort=False):
        rows.append(
            dict(
                zip(keys, k),
                seeds=len(g),
                regret_at_30=at[30.0].get(k, np.nan),
                regret_at_60=at[60.0].get(k, np.nan),
                final_regret=g.final_simple_regret.mean(),
                final_regret_se=se(g.final_simple_regret),
                R_f=g.R_f.mean(),
                R_f_se=se(g.R_f),
                R_c=g.R_c.mean(),
                R_c_se=se(g.R_c),
                frac_on_i_star=g.frac_on_i_star.mean(),
                steps=g.steps.mean(),
                truncated=int(g.truncated.sum()),
            )
        )
    return pd.DataFrame(rows)


def markdown(t: pd.DataFrame) -> str:
    lines = [
        "| objective | costs | v | method | seeds | regret @30 | @60 | final regret | R^f | R^c | on i_* | steps |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in t.itertuples():
        lines.append(
            f"| {r.objective} | {r.cost_set} | {r.variance} | {r.method} | {r.seeds} | {r.regret_at_30:.3g} | "
            f"{r.regret_at_60:.3g} | {r.final_regret:.3g} ± {r.final_regret_se:.2g} | {r.R_f:.4g} ± {r.R_f_se:.2g} | "
            f"{r.R_c:.4g} ± {r.R_c_se:.2g} | {r.frac_on_i_star:.2f} | {r.steps:.0f} |"
        )
    return "\n".join(lines) + "\n"


def pivot(t: pd.DataFrame, value: str, err: str | None = None, fmt: str = "{:.3g}") -> str:
    """One row per cell (objective, costs, v), one column per method: a compact Fig 1 / table view.
    The best (lowest) value of each row is bold."""
    methods = list(dict.fromkeys(t.method))
    lines = ["| objective | costs | v | " + " | ".join(methods) + " |", "|---|---|---:|" + "---:|" * len(methods)]
    for (o, c, v), g in t.groupby(["objective", "cost_set", "variance"], sort=False):
        g = g.set_index("method")
        best = g[value].min()
        cells = []
        for m in methods:
            if m not in g.index:
                cells.append("—")
                continue
            txt = fmt.format(g.loc[m, value]) + (f" ± {g.loc[m, err]:.2g}" if err else "")
            cells.append(f"**{txt}**" if g.loc[m, value] == best else txt)
        lines.append(f"| {o} | {c} | {v} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def timing_markdown(tm: pd.DataFrame) -> str:
    """Seconds per run (run time / runs of the program) and compile seconds, objectives x methods,
    and the totals of the grid (the programs ran in separate processes; load is in the CSVs). The runs
    column counts the runs of the objective's first method."""
    methods = list(dict.fromkeys(tm.method))
    lines = [
        "Run seconds per run (compile seconds of the program in brackets)\n",
        "| objective | runs | " + " | ".join(methods) + " |",
        "|---|---:|" + "---:|" * len(methods),
    ]
    for o, g in tm.groupby("objective", sort=False):
        # a method whose seeds ran in several programs (--add-seeds): their runs and seconds summed
        g = g.groupby("method", sort=False)[["run_s", "compile_s", "lanes"]].sum()
        g["run_s_per_lane"] = g.run_s / g.lanes
        cells = [
            f"{g.loc[m, 'run_s_per_lane']:.1f} ({g.loc[m, 'compile_s']:.0f})" if m in g.index else "—" for m in methods
        ]
        lines.append(f"| {o} | {int(g.lanes.iloc[0])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Totals: run {tm.run_s.sum() / 60:.1f} min, compile {tm.compile_s.sum() / 60:.1f} min over "
        f"{len(tm)} programs ({int(tm.lanes.sum())} runs); load average during the programs "
        f"{tm.load1.min():.1f}-{tm.load1.max():.1f}.",
    ]
    return "\n".join(lines) + "\n"


def latest(frames, tags) -> pd.DataFrame:
    """Concatenate the tags' tables; where several tags hold the same (objective, method) program, keep
    only the last tag's rows (a re-run of some programs replaces the earlier run of them, never doubles
    its seeds). The tag each row came from is in the column ``tag``."""
    frames = [f.assign(tag=t) for f, t in zip(frames, tags)]
    owner = {}
    for f, t in zip(frames, tags):
        for key in set(zip(f.objective, f.method)):
            owner[key] = t
    keep = pd.concat(
        [f[[owner[k] == t for k in zip(f.objective, f.method)]] for f, t in zip(frames, tags)], ignore_index=True
    )
    objectives = list(dict.fromkeys(pd.concat(frames).objective))  # the runs' order, methods as in fig1.py
    methods = list(F.METHODS) + list(F.EXTRAS)
    rank = [
        (objectives.index(o), methods.index(m) if m in methods else len(methods))
        for o, m in zip(keep.objective, keep.method)
    ]
    order = sorted(range(len(keep)), key=lambda i: rank[i])  # stable: rows of one program keep their order
    return keep.iloc[order].reset_index(drop=True)


def provenance(tm: pd.DataFrame) -> str:
    """Which run (tag) each program's numbers come from, when more than one."""
    if tm.tag.nunique() < 2:
        return ""
    lines = ["", "Programs by run (tag):", ""]
    for t, g in tm.groupby("tag", sort=False):
        lines.append(f"- {t}: " + ", ".join(f"{o} {m}" for o, m in zip(g.objective, g.method)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tags", nargs="*", default=["fig1"])
    ap.add_argument("--add-seeds", nargs="*", default=[], help="tags whose runs add seeds (not replace programs)")
    ap.add_argument("--out", default="fig1")
    ap.add_argument("--figure", choices=F.FIGURES, default="fig1_2", help="the folder read and written")
    ap.add_argument("--quick", action="store_true", help="the files of fig1.py --quick (suffix _quick)")
    F.add_update_flag(ap)
    args = ap.parse_args()
    out = F.out_dir(args.figure)
    q = "_quick" if args.quick else ""

    def csv(tag, kind):
        return out / f"{tag}_{kind}{q}.csv"

    F.require(*(csv(t, kind) for t in (*args.tags, *args.add_seeds) for kind in ("curves", "runs")))

    def load(kind):
        frame = latest([pd.read_csv(csv(t, kind)) for t in args.tags], args.tags)
        frame = pd.concat(
            [frame, *(pd.read_csv(csv(t, kind)).assign(tag=t) for t in args.add_seeds)],
            ignore_index=True,
        )
        keys = ["objective", "cost_set", "variance", "method", "seed"] + (["cost"] if kind == "curves" else [])
        if frame.duplicated(keys).any():
            raise ValueError(f"summarize: --add-seeds {args.add_seeds} repeat seeds already in the {kind}")
        return frame

    curves, runs = load("curves"), load("runs")
    F.plot(curves, "simple_regret", out / f"{args.out}_regret{q}.png", "simple regret")
    F.plot(
        curves, "evaluations", out / f"{args.out.replace('fig1', 'fig2')}_evaluations{q}.png", "evaluations", log=False
    )
    t = table(curves, runs)
    t.to_csv(out / f"{args.out}_table{q}.csv", index=False)
    (out / f"{args.out}_table{q}.md").write_text(markdown(t))
    (out / f"{args.out}_pivot{q}.md").write_text(
        "Final simple regret (mean ± s.e. over seeds; bold: lowest in the row)\n\n"
        + pivot(t, "final_regret", "final_regret_se")
        + "\nCost regret R^c at the end of the budget (mean; bold: lowest)\n\n"
        + pivot(t, "R_c", fmt="{:.1f}")
        + "\nFraction of plays on i_* (mean)\n\n"
        + pivot(t, "frac_on_i_star", fmt="{:.2f}").replace("**", "")
        + "\nBO steps for the budget (mean)\n\n"
        + pivot(t, "steps", fmt="{:.0f}").replace("**", "")
    )
    tags = [tag for tag in args.tags if csv(tag, "timing").exists()]
    if tags:
        tm = latest([pd.read_csv(csv(tag, "timing")) for tag in tags], tags)
        added = [pd.read_csv(csv(t, "timing")).assign(tag=t) for t in args.add_seeds]
        tm = pd.concat([tm, *added], ignore_index=True)
        (out / f"{args.out}_timing{q}.md").write_text(timing_markdown(tm) + provenance(tm))
    print(markdown(t))


if __name__ == "__main__":
    main()
