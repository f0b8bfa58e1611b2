"""Paired comparisons of methods over seeds: is A better than B, worse, comparable, or can we not say?

For a study of your own, :func:`compare_methods` compares two methods of a study table
(:func:`jbo.studies.run_study`: one row per method, problem, seed and step) and :func:`compare_all`
compares every method with a baseline, one row per (problem, method); :func:`compare` takes the two
methods' per-seed values directly. The how-to *Comparing your methods over seeds*
(docs/how-to/compare.md) walks through one.

Two methods run on the same seed keys share each seed's initial design, problem draw and noise
(common random numbers, :mod:`jbo.studies`), so their final results pair by seed. A comparison of
method A against method B looks only at the per-seed differences

    d_i = s(A, seed i) - s(B, seed i),   s = log10(max(value, floor))   (lower is better)

of a lower-is-better quantity (simple regret by default; ``log=False`` compares raw values, for
example a negated accuracy). With ``alpha = 0.05``:

* **better**: an exact two-sided sign test on the non-zero d_i gives p < alpha, A is lower on more
  seeds, and the percentile bootstrap (1 - alpha) interval of the median d lies below zero;
* **worse**: the mirror image;
* **comparable**: neither, and that interval lies inside (-margin, margin); with the default margin
  log10(2), the two medians are within a factor of two of each other;
* **inconclusive**: none of these: too few seeds or too much spread to say.

The sign test needs six paired seeds before p can fall below 0.05 (:func:`min_seeds`), so fewer are
never "better" or "worse".

**Grading paper reproductions.** jbo grades every claim of the papers it reproduces by this same
rule (docs/papers/verdicts.md; the grading lives in experiments/verdicts/run.py and its per-paper
modules, which read the committed result files). A paper's claim is one or more such comparisons,
each with the outcomes the paper's words assert, read through one table, :data:`PHRASES`
(:func:`reading`): "beats" asserts ``better``, "competitive with" ``better`` or ``comparable``,
"comparable to" or "on par with" ``comparable`` only. Where the paper claims a large, clear or
significant advantage, ``better`` holds only when the interval also lies wholly beyond the comparable
margin (an *effect size*; :func:`holds` with ``effect=True``). :func:`grade` turns them into the
claim's verdict: **reproduced** when every comparison has an asserted outcome, **partly** when some
do, **not reproduced** when none do, and **not testable** when there is no paired evidence (one
seed, or no runs). A comparison that asserts "better" on fewer than :func:`min_seeds` seeds is
**underpowered**, evidence neither way (:func:`holds` returns None), and a claim resting only on such
comparisons is not testable at that seed count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

ALPHA = 0.05
MARGIN = math.log10(2.0)  # "comparable": medians within a factor of two (on the log10 scale)
FLOOR = 1e-12  # regrets below this count as this (an exact optimum has regret 0: log10 would be -inf)
RESAMPLES = 4000
OUTCOMES = ("better", "worse", "comparable", "inconclusive")
VERDICTS = ("reproduced", "partly", "not reproduced", "not testable")


class Comparison(NamedTuple):
    """Method A against method B over paired seeds (see the module docstring)."""

    n: int  # paired seeds
    wins: int  # seeds where A is lower
    losses: int  # seeds where A is higher
    ties: int
    p_value: float  # exact two-sided sign test on the non-tied seeds
    median_diff: float  # median of d_i (log10 units when log=True)
    ci_low: float  # percentile bootstrap (1 - alpha) interval of the median d
    ci_high: float
    outcome: str  # one of OUTCOMES
    margin: float = MARGIN  # the comparable margin the comparison was made with (log10 2, or a raw margin)

    @property
    def beyond_margin(self) -> bool:
        """The interval lies wholly beyond the comparable margin: an effect larger than "comparable"."""
        return self.ci_high < -self.margin or self.ci_low > self.margin

    def describe(self, log: bool = True) -> str:
        unit = " decades" if log else ""
        return (
            f"{self.outcome}: lower on {self.wins} of {self.n} seeds (ties {self.ties}), sign test "
            f"p = {self.p_value:.2g}, median difference {self.median_diff:+.2f}{unit} "
            f"[{self.ci_low:+.2f}, {self.ci_high:+.2f}]"
        )


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign-test p-value: P(a Binomial(n, 1/2) count at least as far from n/2 as
    `wins`), n = wins + losses (ties dropped); 1.0 when n = 0."""
    for name, v in (("wins", wins), ("losses", losses)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"sign_test: {name} must be a non-negative int, got {v!r}")
    n = int(wins) + int(losses)
    if n == 0:
        return 1.0
    k = min(int(wins), int(losses))
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def bootstrap_median_interval(d, alpha: float = ALPHA, num_resamples: int = RESAMPLES, seed: int = 0):
    """Percentile bootstrap (1 - alpha) interval of the median of d (a fixed-seed NumPy generator, so
    the interval is reproducible)."""
    d = np.asarray(d, float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(num_resamples, d.size))
    medians = np.median(d[idx], axis=1)
    return float(np.quantile(medians, alpha / 2)), float(np.quantile(medians, 1 - alpha / 2))


def _scores(values, log: bool, floor: float, name: str) -> np.ndarray:
    v = np.asarray(values, float).ravel()
    if not np.all(np.isfinite(v)):
        raise ValueError(f"compare: {name} holds non-finite values at seeds {np.flatnonzero(~np.isfinite(v)).tolist()}")
    if log:
        if np.any(v < 0):
            raise ValueError(f"compare: {name} holds negative values; log=True needs regrets (>= 0)")
        return np.log10(np.maximum(v, floor))
    return v


def compare(
    a,
    b,
    *,
    log: bool = True,
    alpha: float = ALPHA,
    margin: float = MARGIN,
    floor: float = FLOOR,
    num_resamples: int = RESAMPLES,
    seed: int = 0,
) -> Comparison:
    """Method A (per-seed values `a`) against method B (`b`, the same seeds in the same order), lower
    is better: the rule of the module docstring."""
    sa, sb = _scores(a, log, floor, "a"), _scores(b, log, floor, "b")
    if sa.shape != sb.shape:
        raise ValueError(f"compare: a and b must pair seed by seed, got {sa.size} and {sb.size} values")
    if sa.size == 0:
        raise ValueError("compare: no seeds")
    if not 0 < alpha < 1 or not margin > 0:
        raise ValueError(f"compare: alpha must lie in (0, 1) and margin be positive, got {alpha}, {margin}")
    d = sa - sb
    wins, losses = int(np.sum(d < 0)), int(np.sum(d > 0))
    p = sign_test(wins, losses)
    lo, hi = bootstrap_median_interval(d, alpha, num_resamples, seed)
    if p < alpha and wins > losses and hi < 0:
        outcome = "better"
    elif p < alpha and losses > wins and lo > 0:
        outcome = "worse"
    elif -margin < lo and hi < margin:
        outcome = "comparable"
    else:
        outcome = "inconclusive"
    return Comparison(
        sa.size, wins, losses, sa.size - wins - losses, p, float(np.median(d)), lo, hi, outcome, float(margin)
    )


# ---------------------------------------------------------------- a study table
TABLE_COLUMNS = ("method", "problem", "seed", "step")


def _check_table(table, who: str, metric: str) -> None:
    columns = getattr(table, "columns", None)
    if columns is None:
        raise ValueError(f"{who}: table must be a study table (a pandas DataFrame), got {type(table).__name__}")
    missing = [c for c in TABLE_COLUMNS if c not in columns]
    if missing:
        raise ValueError(f"{who}: table lacks the column(s) {missing}; a study table has {list(TABLE_COLUMNS)}")
    if metric not in columns:
        raise ValueError(f"{who}: metric {metric!r} is not a column of the table; it has {sorted(map(str, columns))}")


def _per_seed(table, method, problem, metric: str, step, who: str, argument: str):
    """{seed: value} of one method on one problem: each seed's last step, or step `step`."""
    rows = table[(table["method"] == method) & (table["problem"] == problem)]
    if rows.empty:
        runs = sorted(map(str, table.loc[table["method"] == method, "problem"].unique()))
        raise ValueError(f"{who}: {argument}={method!r} has no rows on problem {problem!r}; it ran on {runs}")
    if step is None:
        rows = rows[rows["step"] == rows.groupby("seed")["step"].transform("max")]
    else:
        at = rows[rows["step"] == step]
        if at.empty:
            raise ValueError(
                f"{who}: step={step!r}: {argument}={method!r} on {problem!r} has steps "
                f"{rows['step'].min()} to {rows['step'].max()}"
            )
        rows = at
    repeated = rows["seed"][rows["seed"].duplicated()].unique().tolist()
    if repeated:
        raise ValueError(
            f"{who}: {argument}={method!r} on {problem!r} has more than one row for seed(s) {repeated[:5]} at one step "
            "(a table concatenated twice, or two runs under one method label?)"
        )
    values = rows.set_index("seed")[metric].astype(float).sort_index()
    bad = values.index[~np.isfinite(values.to_numpy())].tolist()
    if bad:
        raise ValueError(
            f"{who}: metric {metric!r} of {argument}={method!r} on {problem!r} is not finite at seed(s) {bad[:5]} "
            "(simple_regret is NaN where the problem's optimum is unknown)"
        )
    return values


def _pair(table, a, b, problem, metric, step, who, names=("a", "b")):
    """The per-seed values of methods a and b on one problem, paired by seed (a ValueError unless both
    have the same seeds)."""
    va = _per_seed(table, a, problem, metric, step, who, names[0])
    vb = _per_seed(table, b, problem, metric, step, who, names[1])
    if not va.index.equals(vb.index):
        only_a = sorted(set(va.index) - set(vb.index))
        only_b = sorted(set(vb.index) - set(va.index))
        raise ValueError(
            f"{who}: the seeds of {names[0]}={a!r} and {names[1]}={b!r} on {problem!r} do not pair: seeds only in "
            f"{names[0]} {only_a[:10]}, only in {names[1]} {only_b[:10]} (compare methods run on the same seed keys)"
        )
    return va.to_numpy(), vb.to_numpy()


def _methods(table) -> list:
    return list(dict.fromkeys(table["method"]))


def _problems(table) -> list:
    return list(dict.fromkeys(table["problem"]))


def compare_methods(
    table,
    a,
    b,
    *,
    metric: str = "simple_regret",
    step: int | None = None,
    problem=None,
    log: bool = True,
    margin: float = MARGIN,
    alpha: float = ALPHA,
    floor: float = FLOOR,
    num_resamples: int = RESAMPLES,
    seed: int = 0,
) -> Comparison:
    """Method `a` against method `b` of a study table (:func:`jbo.studies.run_study`, or any table with
    the columns method, problem, seed, step and `metric`), lower is better: the rule of the module
    docstring on the two methods' values of `metric` paired by seed.

    step: None compares each seed's last step; an int, the values at that step. problem: the problem
    to compare on; it may be left out when the table holds one problem (:func:`compare_all` compares
    on each problem). log=True compares log10 values (regrets, >= 0); for a higher-is-better metric
    negate it and pass log=False with a margin in its own units. margin, alpha, floor, num_resamples
    and seed are :func:`compare`'s.

    A method, problem or metric that is not in the table, a step a method does not reach, non-finite
    values, or seeds that do not pair (a seed one method has and the other lacks) are ValueErrors
    naming the argument."""
    who = "compare_methods"
    _check_table(table, who, metric)
    methods = _methods(table)
    for argument, method in (("a", a), ("b", b)):
        if method not in methods:
            raise ValueError(f"{who}: {argument}={method!r} is not a method of the table; its methods are {methods}")
    problems = _problems(table)
    if problem is None:
        if len(problems) != 1:
            raise ValueError(
                f"{who}: the table holds {len(problems)} problems {problems}: pass problem= one of them "
                "(compare_all compares on each)"
            )
        problem = problems[0]
    elif problem not in problems:
        raise ValueError(f"{who}: problem={problem!r} is not a problem of the table; its problems are {problems}")
    va, vb = _pair(table, a, b, problem, metric, step, who)
    return compare(va, vb, log=log, alpha=alpha, margin=margin, floor=floor, num_resamples=num_resamples, seed=seed)


def compare_all(
    table,
    baseline,
    *,
    metric: str = "simple_regret",
    step: int | None = None,
    log: bool = True,
    margin: float = MARGIN,
    alpha: float = ALPHA,
    floor: float = FLOOR,
    num_resamples: int = RESAMPLES,
    seed: int = 0,
):
    """Every other method of a study table against `baseline`, on each problem the baseline ran on:
    a pandas DataFrame with one row per (problem, method), in the table's order, and the columns
    problem, method, baseline and the fields of :class:`Comparison` but the margin (n, wins, losses,
    ties, p_value, median_diff, ci_low, ci_high, outcome), each row :func:`compare_methods` of that
    method (as A) against the baseline (as B) with these keywords. A method that did not run on one of
    the baseline's problems is left out of that problem's rows; a baseline that is not in the table is
    a ValueError naming it."""
    import pandas as pd

    who = "compare_all"
    _check_table(table, who, metric)
    methods = _methods(table)
    if baseline not in methods:
        raise ValueError(f"{who}: baseline={baseline!r} is not a method of the table; its methods are {methods}")
    rows = []
    for problem in _problems(table):
        here = _methods(table[table["problem"] == problem])
        if baseline not in here:
            continue
        for method in here:
            if method == baseline:
                continue
            va, vb = _pair(table, method, baseline, problem, metric, step, who, ("method", "baseline"))
            c = compare(
                va, vb, log=log, alpha=alpha, margin=margin, floor=floor, num_resamples=num_resamples, seed=seed
            )
            fields = c._asdict()
            fields.pop("margin")
            rows.append({"problem": problem, "method": method, "baseline": baseline, **fields})
    columns = ["problem", "method", "baseline", *(f for f in Comparison._fields if f != "margin")]
    return pd.DataFrame(rows, columns=columns)


def min_seeds(alpha: float = ALPHA) -> int:
    """The fewest differing seeds at which the two-sided sign test can give p < alpha (6 at 0.05)."""
    n = 1
    while 2.0 * 0.5**n >= alpha:
        n += 1
    return n


def underpowered(comparison: Comparison, alpha: float = ALPHA) -> bool:
    """Too few paired seeds for the sign test ever to reach p < alpha. (Ties among enough seeds are
    evidence of no difference, so they do not make a comparison underpowered.)"""
    return comparison.n < min_seeds(alpha)


def holds(
    comparison: Comparison | None, asserted: Iterable[str], alpha: float = ALPHA, effect: bool = False
) -> bool | None:
    """Whether a comparison has one of the asserted outcomes; None when there is no paired evidence
    (no comparison, one seed), or when it is underpowered and either asserts only "better" / "worse"
    or asserts one of them and its interval lies wholly on that side of zero (those outcomes were out of
    reach, so "comparable" or "inconclusive" says nothing against them; a method lower on every seed is
    not evidence against "better or comparable"). effect=True (the paper claims a large, clear or
    significant advantage): "better" and "worse" hold only when the interval also lies wholly beyond
    the comparable margin."""
    asserted = tuple(asserted)
    bad = [o for o in asserted if o not in OUTCOMES]
    if bad or not asserted:
        raise ValueError(f"holds: asserted outcomes must be a non-empty subset of {OUTCOMES}, got {asserted}")
    if comparison is None or comparison.n < 2:
        return None
    if comparison.outcome in asserted:
        if effect and comparison.outcome in ("better", "worse"):
            return comparison.beyond_margin
        return True
    if underpowered(comparison, alpha):
        directional = all(o in ("better", "worse") for o in asserted)
        leaning = "better" if comparison.ci_high < 0 else "worse" if comparison.ci_low > 0 else None
        if directional or leaning in asserted:
            return None
    return False


# ---------------------------------------------------------------- the paper's words
class Reading(NamedTuple):
    """What a phrase of a paper asserts about A against B: the outcomes that make it hold, and whether
    it claims an effect size (a large, clear or significant advantage: see :func:`holds`)."""

    outcomes: tuple
    effect: bool = False


BETTER = ("better",)
NOT_WORSE = ("better", "comparable")
ALIKE = ("comparable",)
PHRASES: dict[str, Reading] = {
    # A is better than B
    "beats": Reading(BETTER),
    "outperforms": Reading(BETTER),
    "better than": Reading(BETTER),
    "more accurate than": Reading(BETTER),
    "lower regret than": Reading(BETTER),
    "converges faster than": Reading(BETTER),  # graded on a measure of speed (the area under the log-regret curve)
    "cheaper than": Reading(BETTER),
    # ... by a margin the paper states as large, clear or significant
    "clearly beats": Reading(BETTER, True),
    "significantly outperforms": Reading(BETTER, True),
    "a large advantage over": Reading(BETTER, True),
    "much better than": Reading(BETTER, True),
    # A is not worse than B
    "competitive with": Reading(NOT_WORSE),
    "at least as good as": Reading(NOT_WORSE),
    "no worse than": Reading(NOT_WORSE),
    # A and B are alike
    "comparable to": Reading(ALIKE),
    "on par with": Reading(ALIKE),
    "performs similarly to": Reading(ALIKE),
    "similar to": Reading(ALIKE),
    "≈": Reading(ALIKE),
    # A is worse than B (a paper's statement about a baseline it does not favour)
    "worse than": Reading(("worse",)),
}
# The lenient reading the table replaces, for the record of what it changes: every phrase of
# likeness read as "not worse", and no effect size.
LENIENT = {phrase: Reading(NOT_WORSE if r.outcomes == ALIKE else r.outcomes, False) for phrase, r in PHRASES.items()}


def reading(phrase: str, lenient: bool = False) -> Reading:
    """What `phrase` (a key of :data:`PHRASES`) asserts; lenient=True: its :data:`LENIENT` reading."""
    table = LENIENT if lenient else PHRASES
    if phrase not in table:
        raise ValueError(f"reading: unknown phrase {phrase!r}; the table holds {sorted(table)}")
    return table[phrase]


def grade(results: Iterable[bool | None]) -> str:
    """A claim's verdict from its comparisons' :func:`holds`: reproduced (all hold), partly (some),
    not reproduced (none), not testable (no paired evidence at all). Comparisons without evidence
    (None) count as neither."""
    results = [r for r in results if r is not None]
    if not results:
        return "not testable"
    if all(results):
        return "reproduced"
    return "partly" if any(results) else "not reproduced"
