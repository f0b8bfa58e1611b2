"""Grading a paper's claims by the one verdict rule (:mod:`jbo.verdict`) from committed result files.

A paper module (``boke.py``, ``sbo_kde.py``, ``ucvs.py``, ``uhe_bo.py``, ``r_perp.py``) lists its
claims; each claim quotes the paper's words with their section and holds the paired comparisons that
decide it (per-seed values of the two methods, lower is better). What a comparison asserts comes from
one place: the phrase the paper uses, read through :data:`jbo.verdict.PHRASES` ("beats": better;
"competitive with": better or comparable; "comparable to", "on par with": comparable; "clearly
beats", "a large advantage": better beyond the comparable margin). The claims read the committed
results (RESULTS: experiments/results, whatever the mode, or $JBO_GRADE_ROOT when set). :func:`write` grades them and writes

    <paper>.csv          one row per comparison (seeds, wins, p, interval, outcome, phrase, holds)
    <paper>.md           the claims table that docs/papers/<paper>.md includes
    <paper>_reading.csv  each claim's verdict under the table and under the lenient reading it
                         replaces (likeness read as "not worse", no effect size; see run.py)

into OUT: experiments/results/verdicts/ with --update, else its scratch mirror (experiments/outdir.py).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from jbo import verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, committed_dir, output_dir  # noqa: E402, F401 (for the paper modules)

# the results graded: the committed files, or the tree JBO_GRADE_ROOT names (jbo reproduce: the committed
# files with a re-run's files in their place)
RESULTS = Path(os.environ["JBO_GRADE_ROOT"]) if os.environ.get("JBO_GRADE_ROOT") else committed_dir()
OUT = output_dir("verdicts")  # the tables written: experiments/results/verdicts with --update, else scratch


@dataclass
class Pair:
    """One paired comparison of a claim: A (the method the claim favours, or the first of a pair said
    to be comparable) against B. a, b: per-seed values, same seeds in the same order, lower is better.
    phrase: the paper's words for A against B, a key of jbo.verdict.PHRASES (what the comparison
    asserts comes from there alone). against: B's name, for the scope of a partly verdict ("vs Random
    only"); by default the text after the label's last " vs "."""

    label: str
    a: np.ndarray
    b: np.ndarray
    phrase: str = "beats"
    log: bool = True  # compare log10 values (regrets); False: raw values (e.g. a negated accuracy)
    margin: float = verdict.MARGIN
    against: str = ""

    def __post_init__(self):
        verdict.reading(self.phrase)  # a phrase outside the table is an error here, not at grading
        if not self.against:
            self.against = self.label.rsplit(" vs ", 1)[-1] if " vs " in self.label else self.label

    def reading(self, lenient: bool = False) -> verdict.Reading:
        return verdict.reading(self.phrase, lenient)

    def compare(self) -> verdict.Comparison | None:
        a, b = np.asarray(self.a, float), np.asarray(self.b, float)
        if a.size < 2:  # one seed: no paired evidence
            return None
        return verdict.compare(a, b, log=self.log, margin=self.margin)


@dataclass
class Claim:
    """A paper claim: its number in the spec, the paper's own words (`quote`, with `where`: section,
    figure or table), what we grade (`text`), the comparisons that decide it, the result files they
    come from, the scope of the evidence (`scope`: budget and seeds, shown beside the verdict), and a
    note (settings, caveats, the sensitivity behind a failure). ours=True: a statement that is not in
    the paper (the spec's expectation, or a check of our own), labelled so in the table."""

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
    quote: str = ""
    where: str = ""
    scope: str = ""
    ours: bool = False


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


def grade(claims: list[Claim], lenient: bool = False):
    """(rows, verdicts): one dict per comparison and the verdict of each claim, each comparison read
    through the phrase table (lenient=True: the lenient reading, for the record of what it changes)."""
    rows, verdicts = [], []
    for claim in claims:
        results = []
        for pair in claim.pairs:
            c = pair.compare()
            r = pair.reading(lenient)
            ok = verdict.holds(c, r.outcomes, effect=r.effect)
            results.append(ok)
            rows.append(
                {
                    "claim": claim.number,
                    "comparison": pair.label,
                    "phrase": pair.phrase,
                    "asserted": " or ".join(r.outcomes) + (" beyond the margin" if r.effect else ""),
                    "log10": pair.log,
                    **(c._asdict() if c is not None else {"n": int(np.size(pair.a)), "outcome": "one seed"}),
                    "holds": ok,
                }
            )
        results += [bool(met) for _, met in claim.checks]
        verdicts.append(verdict.grade(results))
    return rows, verdicts


def scope_of(claim: Claim, rows: list[dict], v: str) -> str:
    """What a verdict rests on, for its cell: for partly, which comparisons hold (by whom they are
    against when that tells them apart: "vs Random only"), then the claim's budget and seeds."""
    parts = []
    if v == "partly":
        held = [p for p, r in zip(claim.pairs, rows) if r["holds"] is True]
        failed = [p for p, r in zip(claim.pairs, rows) if r["holds"] is False]
        decided = len(held) + len(failed) + len(claim.checks)
        k = len(held) + sum(bool(met) for _, met in claim.checks)
        names = sorted({p.against for p in held})
        if held and not {p.against for p in failed} & set(names) and len(names) < len({p.against for p in claim.pairs}):
            parts.append(f"{k} of {decided}: vs {', '.join(names)} only")
        else:
            parts.append(f"{k} of {decided} hold")
    if claim.scope:
        parts.append(claim.scope)
    return "; ".join(parts)


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
    said = f" \\[{pair.phrase}\\]"  # escaped: a bare [phrase] may read as a cross-reference
    short = ""
    if pair.reading().effect and row["outcome"] == "better" and row["holds"] is False:  # the claimed direction
        short = " — inside the comparable margin, not the large advantage the paper claims"
    return f"{mark} {pair.label}{said}: {describe(row, pair.log)}{short}"


def _claim_cell(claim: Claim) -> str:
    said = f'"{claim.quote}"' + (f" ({claim.where})" if claim.where else "") if claim.quote else ""
    if claim.ours:
        said = "*not in the paper (ours)*"
    src = f" (`{claim.source}`)" if claim.source else ""
    graded = f"{claim.text}{src}"
    return f"{claim.number}. {said}<br>graded: {graded}" if said else f"{claim.number}. {graded}"


def write(paper: str, claims: list[Claim]) -> pd.DataFrame:
    """Grade the claims, write the CSV, the Markdown table and the reading record; return the
    per-comparison table."""
    rows, verdicts = grade(claims)
    _, lenient = grade(claims, lenient=True)
    table = pd.DataFrame(rows)
    table.to_csv(OUT / f"{paper}.csv", index=False)
    pd.DataFrame(
        {
            "claim": [c.number for c in claims],
            "text": [c.text for c in claims],
            "verdict": verdicts,
            "verdict_lenient": lenient,
        }
    ).to_csv(OUT / f"{paper}_reading.csv", index=False)
    lines = [
        "| claim: the paper's words (where), and what is graded | comparisons (A vs B [the paper's phrase]; Δ = "
        "median per-seed difference of log10 values, A − B, with its 95% bootstrap interval; ✓ holds, ✗ fails, "
        "○ too few seeds to show it) | verdict (scope) |",
        "|---|---|---|",
    ]
    i = 0
    for claim, v in zip(claims, verdicts):
        parts, own = [], rows[i : i + len(claim.pairs)]
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
        scope = scope_of(claim, own, v)
        lines.append(f"| {_claim_cell(claim)} | {'<br>'.join(parts)} | **{v}**{f' ({scope})' if scope else ''} |")
    (OUT / f"{paper}.md").write_text("\n".join(lines) + "\n")
    return table
