"""Grading a paper's claims by the one verdict rule (:mod:`jbo.verdict`) from committed result files.

A paper module (``boke.py``, ``sbo_kde.py``, ``ucvs.py``, ``uhe_bo.py``, ``r_perp.py``) lists its
claims; each claim holds the paired comparisons that decide it (per-seed values of the two methods,
lower is better, and the outcomes the paper asserts). The claims read the committed results (RESULTS:
experiments/results, whatever the mode). :func:`write` grades them and writes

    <paper>.csv   one row per comparison (seeds, wins, p, interval, outcome)
    <paper>.md    the claims table that docs/papers/<paper>.md includes

into OUT: experiments/results/verdicts/ with --update, else its scratch mirror (experiments/outdir.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from jbo import verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, committed_dir, output_dir  # noqa: E402, F401 (for the paper modules)

RESULTS = committed_dir()  # the results graded: the committed files
OUT = output_dir("verdicts")  # the tables written: experiments/results/verdicts with --update, else scratch
BETTER = ("better",)
NOT_WORSE = ("better", "comparable")  # "competitive with", "comparable to", "on par with"
COMPARABLE = ("comparable",)


@dataclass
class Pair:
    """One paired comparison of a claim: A (the method the claim favours, or the first of a pair said
    to be comparable) against B. a, b: per-seed values, same seeds in the same order, lower is better."""

    label: str
    a: np.ndarray
    b: np.ndarray
    asserted: tuple = BETTER
    log: bool = True  # compare log10 values (regrets); False: raw values (e.g. a negated accuracy)
    margin: float = verdict.MARGIN

    def compare(self) -> verdict.Comparison | None:
        a, b = np.asarray(self.a, float), np.asarray(self.b, float)
        if a.size < 2:  # one seed: no paired evidence
            return None
        return verdict.compare(a, b, log=self.log, margin=self.margin)


@dataclass
class Claim:
    """A paper claim: its number in the spec, its words, the comparisons that decide it, the result
    files they come from, and a note (settings, caveats, the sensitivity behind a failure)."""

    number: str
    text: str
    pairs: list[Pair] = field(default_factory=list)
    source: str = ""
    note: str = ""
    untestable_reason: str = ""  # when there are no pairs: why the claim cannot be graded
    # measured criteria for claims that are not a comparison of methods over seeds (a cost slope, a
    # rate): (what was measured against what the paper asserts, whether it meets it); they count as
    # comparisons that hold or fail
    checks: list[tuple[str, bool]] = field(default_factory=list)


def final_per_seed(df: pd.DataFrame, value: str, seed: str = "seed", step: str = "step", **where) -> pd.Series:
    """The value at each seed's last step among the rows matching `where` (column == value), indexed
    by seed and sorted, so two methods' series pair by seed."""
    rows = df
    for col, v in where.items():
        rows = rows[rows[col] == v]
    if rows.empty:
        raise ValueError(f"final_per_seed: no rows with {where}")
    last = rows.loc[rows.groupby(seed)[step].idxmax()]
    return last.set_index(seed)[value].sort_index()


def paired(a: pd.Series, b: pd.Series):
    """The two per-seed series on their common seeds (a named error if they share none)."""
    common = a.index.intersection(b.index)
    if len(common) == 0:
        raise ValueError(f"paired: no common seeds ({list(a.index)[:5]} vs {list(b.index)[:5]})")
    return a.loc[common].to_numpy(), b.loc[common].to_numpy()


def grade(claims: list[Claim]):
    """(rows, verdicts): one dict per comparison and the verdict of each claim."""
    rows, verdicts = [], []
    for claim in claims:
        results = []
        for pair in claim.pairs:
            c = pair.compare()
            ok = verdict.holds(c, pair.asserted)
            results.append(ok)
            rows.append(
                {
                    "claim": claim.number,
                    "comparison": pair.label,
                    "asserted": " or ".join(pair.asserted),
                    "log10": pair.log,
                    **(c._asdict() if c is not None else {"n": int(np.size(pair.a)), "outcome": "one seed"}),
                    "holds": ok,
                }
            )
        results += [bool(met) for _, met in claim.checks]
        verdicts.append(verdict.grade(results))
    return rows, verdicts


def describe(c: dict, log: bool = True) -> str:
    """One comparison's outcome and evidence (a Comparison's fields as a dict), as the tables print it."""
    unit = "" if log else " (raw)"
    return (
        f"**{c['outcome']}** ({c['wins']}/{c['n']} lower, p = {c['p_value']:.2g}, "
        f"median Δ{unit} {c['median_diff']:+.2f} [{c['ci_low']:+.2f}, {c['ci_high']:+.2f}])"
    )


def _evidence(pair: Pair, row: dict) -> str:
    if row.get("outcome") == "one seed":
        return f"{pair.label}: one seed"
    mark = {True: "✓", False: "✗"}.get(row["holds"], "○")  # ○: underpowered, evidence neither way
    return f"{mark} {pair.label}: {describe(row, pair.log)}"


def write(paper: str, claims: list[Claim]) -> pd.DataFrame:
    """Grade the claims, write the CSV and the Markdown table, return the per-comparison table."""
    rows, verdicts = grade(claims)
    table = pd.DataFrame(rows)
    table.to_csv(OUT / f"{paper}.csv", index=False)
    lines = [
        "| claim | comparisons (A vs B; Δ = median per-seed difference of log10 values, A − B, with its 95% "
        "bootstrap interval; ✓ holds, ✗ fails, ○ too few seeds to show it) | verdict |",
        "|---|---|---|",
    ]
    i = 0
    for claim, v in zip(claims, verdicts):
        parts = []
        for pair in claim.pairs:
            parts.append(_evidence(pair, rows[i]))
            i += 1
        parts += [f"{'✓' if met else '✗'} {what}" for what, met in claim.checks]
        if not claim.pairs and not claim.checks:
            parts.append(claim.untestable_reason or "no paired runs")
        if claim.pairs and v == "not testable":
            parts.append(f"*too few seeds: the sign test needs {verdict.min_seeds()} paired seeds to reach p < 0.05*")
        if claim.note:
            parts.append(f"*{claim.note}*")
        src = f" (`{claim.source}`)" if claim.source else ""
        lines.append(f"| {claim.number}. {claim.text}{src} | {'<br>'.join(parts)} | **{v}** |")
    (OUT / f"{paper}.md").write_text("\n".join(lines) + "\n")
    return table
