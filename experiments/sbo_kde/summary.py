"""Summarise the Fig 1 / Fig 2 CSVs: the final value of each problem's metric per method (mean and
standard error over seeds) and the methods' order, as a Markdown table for docs/papers/sbo-kde.md.

    python experiments/sbo_kde/summary.py
    python experiments/sbo_kde/summary.py --tags s10 s10_kde smo s10_smo --out fig1_summary_s10.csv

(the last steps of `jbo reproduce sbo_kde fig1`).

Metric as in the paper (spec 7.1): cumulative regret (lower is better); Complicated Hartmann:
cumulative observed reward, Portfolio: cumulative expected reward (higher is better).
Reads the runs from the folders fig1.py writes to (experiments/results/sbo_kde/fig1/ and, for ackley_4c,
experiments/results/sbo_kde/fig2/ with --update, else their scratch mirror; a problem whose runs are not
there is left out) and writes fig1_summary.csv into the fig1 folder. With --tags, the methods of each re-run
<stem>_<problem>_<tag>.csv that exists replace the earlier rows of those methods, in the order given (as the
verdict script reads the 10-seed re-runs), and a cell whose method has fewer seeds than the row's most
says how many in square brackets.
"""

from __future__ import annotations

import argparse

import pandas as pd
from common import add_update_flag, out_dir, problem_figure, require

from jbo import studies
from jbo.problems import sbo_kde

HIGHER = {
    "complicated_hartmann": "cumulative_reward",
    "portfolio_uniform": "cumulative_expected",
    "portfolio_normal": "cumulative_expected",
}
ORDER = list(sbo_kde.PROBLEMS)  # Fig 1's seven, then App. D's ackley_4c


def runs(problem: str, tags: list[str]) -> pd.DataFrame | None:
    """A problem's runs, each re-run in `tags` replacing the rows of the methods it ran."""
    stem = problem_figure(problem)
    folder = out_dir(stem)
    path = folder / f"{stem}_{problem}.csv"
    if not path.exists():
        return None
    reruns = [folder / f"{stem}_{problem}_{tag}.csv" for tag in tags]
    return studies.replace_methods(pd.read_csv(path), *(pd.read_csv(p) for p in reruns if p.exists()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tags", nargs="*", default=[], help="re-runs whose methods replace the earlier rows")
    ap.add_argument("--out", default="fig1_summary.csv", help="file name in the output folder")
    add_update_flag(ap)
    args = ap.parse_args()
    rows = []
    for problem in ORDER:
        t = runs(problem, args.tags)
        if t is None:
            continue
        metric = HIGHER.get(problem, "cumulative_regret")
        last = t[t.step == t.step.max()]
        agg = last.groupby("method")[metric].agg(["mean", "sem", "count"]).reset_index()
        agg = agg.sort_values("mean", ascending=problem not in HIGHER)
        agg["rank"] = range(1, len(agg) + 1)
        agg.insert(0, "problem", problem)
        agg.insert(1, "metric", metric)
        agg["final_step"] = int(t.step.max())
        rows.append(agg)
    if not rows:
        require(*(out_dir(problem_figure(p)) / f"{problem_figure(p)}_{p}.csv" for p in ORDER))
    table = pd.concat(rows)
    table.to_csv(out_dir("fig1") / args.out, index=False)
    methods = ["SBO-KDE", "DRBO-KDE", "GP-UCB", "StableOpt", "DRBO-MMD", "DRBO-MMD-MinimaxApprox"]
    print("| problem (metric, better) | " + " | ".join(methods) + " |")
    print("|---|" + "---:|" * len(methods))
    for problem, g in table.groupby("problem", sort=False):
        g = g.set_index("method")
        better = "higher" if problem in HIGHER else "lower"
        cells = []
        for m in methods:
            if m in g.index:
                r = g.loc[m]
                cell = f"{r['mean']:.4g} ± {r['sem']:.2g} ({int(r['rank'])})"
                if r["count"] < g["count"].max():
                    cell += f" [{int(r['count'])}]"
                cells.append(f"**{cell}**" if r["rank"] == 1 else cell)
            else:
                cells.append("—")
        print(f"| {problem} ({g.metric.iloc[0].replace('_', ' ')}, {better}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
