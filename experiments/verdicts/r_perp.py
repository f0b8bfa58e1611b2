"""R-PERP (Iwazaki & Takeno, non-stationary kernelized bandits): the paper's claims (§6 Fig 2, Table 1,
Thm 4, Thm 5) and the spec's expectation R-GP-UCB ≈ SW-GP-UCB (spec 5.3, labelled ours) graded by the one
verdict rule (jbo.verdict) from the committed result files, each in its figure's folder
experiments/results/r_perp/<figure>/ (fig2, sensitivity, recheck, timing, permutation; experiments/r_perp/figures.py).
Writes r_perp.{csv,md} (experiments/results/verdicts/ with --update).

    python experiments/verdicts/r_perp.py [--update]

Fig 2's metric is the dynamic cumulative regret R_t at the horizon T = 5000 (lower is better, compared on the
log10 scale: it is positive). Seed i is one environment (three base functions drawn by numpy default_rng(i))
shared by every method, so the methods pair by seed.

The paper does not give λ, so each claim about Fig 2 is graded at every λ with paired evidence (0.01, 0.1, 1),
each on 12 seeds: at λ = 0.01 Fig 2's 12-seed run (fig2_s12.csv.gz), at λ = 0.1 and 1 the runs of the C × λ sweep
of experiments/r_perp/sensitivity.py (sensitivity.csv) at the same C. The sweep also says at which (C, λ)
each claim about R-PERP's regret holds, and gives claim 2 a restart-aware reading: per seed, the regret over the
second half of that seed's last interval against the first half.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re

import numpy as np
import pandas as pd
from common import RESULTS, Claim, Pair, add_update_flag, final_per_seed, paired, write

from jbo.verdict import holds, min_seeds, sign_test

PAPER = "r_perp"
# the figures' folders (experiments/results/r_perp/<figure>/, declared in experiments/r_perp/figures.py)
FIG2_DIR = RESULTS / PAPER / "fig2"  # fig2.py: Fig 2 with the λ ablation, and its 12-seed run at λ = 0.01
RECHECK_DIR = RESULTS / PAPER / "recheck"  # recheck_fig2.py
TIMING_DIR = RESULTS / PAPER / "timing"  # timing.py
PERMUTATION_DIR = RESULTS / PAPER / "permutation"  # permutation.py
SENSITIVITY_DIR = RESULTS / PAPER / "sensitivity"  # sensitivity.py
FIG2 = "experiments/results/r_perp/fig2/fig2.csv.gz"
TIMING = "experiments/results/r_perp/timing/timing.json"
PERMUTATION = "experiments/results/r_perp/permutation/permutation.csv"
KERNELS = {"se": "SE", "matern52": "Matérn-5/2"}
LAMS = (0.01, 0.1, 1.0)
RPERP = "R-PERP (C=0.1)"  # the reproduction preset: C calibrated by us
RPERP_THEORY = "R-PERP (C=1)"  # the theory-literal constant
NO_PERMUTATION = "R-PE no permutation (C=0.1, ours)"
UCBS = ("R-GP-UCB", "SW-GP-UCB")
SWEPT = {RPERP: ("R-PERP", 0.1), RPERP_THEORY: ("R-PERP", 1.0)}  # Fig 2's names -> the sweep's (method, C)
LAST_CHANGE, MIDDLE, T = 2000, 3500, 5000  # f³ holds on (2000, 5000]; its two halves meet at 3500
DELTA = 0.1
CHANGES = {"f1->f2": "f¹ → f²", "f1->-f1": "f¹ → −f¹"}

# the paper's words (§6, the paragraph on Fig 2; Table 1; §4; §5.1-5.2), verbatim from its text
SAID_RANDOM = "We confirm that our R-PERP algorithm achieves superior performance to a simple random sampling baseline."
SAID_SUBLINEAR = (
    "the average regret of R-PERP increases sub-linearly between 2000 and 5000 steps, even if two abrupt changes of "
    "reward functions occur at 1000 and 2000 steps"
)
SAID_UCB = "R-PERP has a worse practical performance than that of UCB-based algorithms."
WHERE_FIG2 = "§6, Fig 2"

SETTINGS = (
    "Differs from the paper: λ is not given (we run 0.01, 0.1 and 1; 0.01 is the reproduction preset), nor "
    "are the noise (ρ = 0.01, ours), B (the exact RKHS norm per instance) or V_T (the realised sup-norm "
    "variation per instance), all told to every method; H_ucb = W rounded up; the UCB width β^{1/2} = B + "
    "(ρ/√λ)√(2(γ̂ + ln 1/δ)) with the greedy γ̂; Random does not use λ, so its one run per seed pairs with "
    "every λ"
)


SENSITIVITY = "experiments/results/r_perp/sensitivity/sensitivity.csv"  # experiments/r_perp/sensitivity.py
MORE_SEEDS = "fig2_s12.csv.gz"  # Fig 2 at λ = 0.01 with 12 seeds (fig2.py --lams 0.01 --seeds 12 --no-ablations)
MORE_SEEDS_PATH = f"experiments/results/r_perp/fig2/{MORE_SEEDS}"


def _source(lam: float) -> str:
    """Where the evidence at λ comes from: Fig 2's 12-seed run at λ = 0.01, the sweep at the other λ (Fig 2's
    5-seed run where either is absent)."""
    if np.isclose(lam, 0.01) and (FIG2_DIR / MORE_SEEDS).exists():
        return "fig2"
    return "sweep" if _sensitivity() is not None else "fig2"


def _sources() -> str:
    """The files the Fig 2 claims read, as their cells name them."""
    used = {_source(lam) for lam in LAMS}
    names = [MORE_SEEDS_PATH if (FIG2_DIR / MORE_SEEDS).exists() else FIG2] if "fig2" in used else []
    return ", ".join(names + ([SENSITIVITY] if "sweep" in used else []))


def _scope() -> str:
    """The budget and seeds behind the Fig 2 claims, per λ, against the paper's."""
    fig2, methods = _fig2(), ["Random", *UCBS, RPERP, RPERP_THEORY]
    where, counts = {}, set()
    for lam in LAMS:
        if _source(lam) == "sweep":
            n, src = int(_sensitivity().groupby(["kernel", "method"]).seed.nunique().min()), "the C × λ sweep"
        else:
            rows = fig2[np.isclose(fig2.lam, lam) & fig2.method.isin(methods)]
            n = int(rows.groupby(["kernel", "method"]).seed.nunique().min())
            src = f"Fig 2's {n}-seed run"
        counts.add(n)
        where.setdefault(src, []).append(lam)
    runs = "; ".join(f"λ = {', '.join(f'{lam:g}' for lam in lams)}: {src}" for src, lams in where.items())
    n = "–".join(str(v) for v in sorted(counts))
    return f"T = {T}, {n} seeds per λ ({runs}); the paper: T = {T}, 5 seeds, λ not given"


def _seeds() -> str:
    sweep = (
        "the sweep's runs draw their noise and permutations from other keys than Fig 2's, and its seeds are the "
        "same 12 instances"
        if _sensitivity() is not None
        else NO_SWEEP
    )
    return (
        f'The paper runs 5 seeds; on 5, 5 of 5 lower gives a sign-test p = {sign_test(5, 0):.3f}, so "beats" '
        f"cannot be shown below {min_seeds()} seeds: the comparisons use 12 paired seeds at every λ. Fig 2's "
        f"12-seed run ({MORE_SEEDS}) holds λ = 0.01 only, and its first five seeds are the 5-seed run's; {sweep}"
    )


def _fig2() -> pd.DataFrame:
    """Fig 2's curves; where the 12-seed run at λ = 0.01 exists, its rows replace the 5-seed run's for the
    (kernel, method) pairs it holds."""
    fig2 = pd.read_csv(FIG2_DIR / "fig2.csv.gz")
    if not (FIG2_DIR / MORE_SEEDS).exists():
        return fig2
    more = pd.read_csv(FIG2_DIR / MORE_SEEDS)
    more = more[np.isclose(more.lam, 0.01)]
    pairs = set(zip(more.kernel, more.method))
    replaced = np.isclose(fig2.lam, 0.01) & pd.Series(
        [(k, m) in pairs for k, m in zip(fig2.kernel, fig2.method)], index=fig2.index
    )
    return pd.concat([fig2[~replaced], more], ignore_index=True)


def _rows(fig2: pd.DataFrame, kernel: str, lam: float, method: str) -> pd.DataFrame:
    rows = fig2[(fig2.kernel == kernel) & np.isclose(fig2.lam, lam) & (fig2.method == method)]
    if rows.empty:
        raise ValueError(f"_rows: no Fig 2 rows for {kernel} λ = {lam:g} {method}")
    return rows


def _at(rows: pd.DataFrame, step: int) -> pd.Series:
    """R_step per seed (the curves are logged every 10 steps), indexed by seed and sorted."""
    at = rows[rows.step == step]
    if at.seed.nunique() != rows.seed.nunique():
        raise ValueError(f"_at: step {step} is not logged for every seed")
    return at.set_index("seed")["cumulative_regret"].sort_index()


def _final(fig2: pd.DataFrame, kernel: str, lam: float, method: str, src: str | None = None) -> pd.Series:
    """R_T per seed of one of Fig 2's methods at λ, from `src` ("fig2" or "sweep"; default: _source(λ))."""
    if (src or _source(lam)) == "sweep":
        name, C = SWEPT.get(method, (method, None))
        return _sens(kernel, name, C, None if method == "Random" else lam).R_T
    lam = 0.01 if method == "Random" else lam  # Random's runs are logged once, under λ = 0.01
    return final_per_seed(_rows(fig2, kernel, lam, method), "cumulative_regret")


def _increments(fig2: pd.DataFrame, kernel: str, lam: float, method: str, src: str | None = None):
    """Per seed, the regret over (3500, 5000] and over (2000, 3500], the two halves of f³'s segment."""
    if (src or _source(lam)) == "sweep":
        name, C = SWEPT[method]
        return _halves(_sens(kernel, name, C, lam))
    rows = _rows(fig2, kernel, lam, method)
    start, middle, end = (_at(rows, s) for s in (LAST_CHANGE, MIDDLE, T))
    return end - middle, middle - start


def _holds(pair: Pair) -> bool | None:
    r = pair.reading()
    return holds(pair.compare(), r.outcomes, effect=r.effect)


def _where_held(pairs: list[Pair], keys: list[tuple[str, float]]) -> str:
    """At which λ (and for which kernel) the comparisons hold, for the verdict's scope: a (kernel, λ) holds when
    all its comparisons do."""
    cells: dict[float, dict[str, bool]] = {}
    for pair, (k, lam) in zip(pairs, keys):
        ok = _holds(pair)
        cell = cells.setdefault(lam, {})
        cell[k] = cell.get(k, True) and ok is True
    held = {lam: [KERNELS[k] for k, ok in c.items() if ok] for lam, c in cells.items()}
    tried = ", ".join(f"{lam:g}" for lam in held)
    if all(len(v) == len(KERNELS) for v in held.values()):
        return f"holds at every λ tried ({tried}), both kernels"
    if not any(held.values()):
        return f"holds at no λ tried ({tried}) for either kernel"
    groups: dict[str, list[float]] = {}
    for lam, v in held.items():
        groups.setdefault("both kernels" if len(v) == len(KERNELS) else f"{v[0]} only" if v else "", []).append(lam)
    said = [f"λ = {', '.join(f'{lam:g}' for lam in lams)} for {who}" for who, lams in groups.items() if who]
    return (
        "holds at "
        + "; at ".join(said)
        + (f"; not at λ = {', '.join(f'{lam:g}' for lam in groups[''])}" if "" in groups else "")
    )


def _fig2_claim(number, text, quote, make, note, ours=False, where=WHERE_FIG2) -> Claim:
    """A Fig 2 claim graded at every kernel and λ: make(kernel, λ) -> its pairs; the scope says where it holds."""
    keys, pairs = [], []
    for k in KERNELS:
        for lam in LAMS:
            made = make(k, lam)
            pairs += made
            keys += [(k, lam)] * len(made)
    return Claim(
        number,
        text,
        pairs,
        _sources(),
        note,
        quote=quote,
        where=where,
        scope=f"{_where_held(pairs, keys)}; {_scope()}",
        ours=ours,
    )


def _five_seeds(fig2: pd.DataFrame, values, what: str) -> str:
    """Fig 2's own 5-seed runs at the λ the sweep decides (values(kernel, λ) -> (a, b) per seed): on how many
    seeds A is lower (`what`: "A lower than B"), for the record (five seeds cannot decide "better" under the rule)."""
    cells = []
    for k in KERNELS:
        for lam in LAMS:
            if _source(lam) != "sweep":
                continue
            a, b = paired(*values(k, lam))
            cells.append(f"{KERNELS[k]} λ = {lam:g} {int(np.sum(a < b))}/{a.size}")
    if not cells:
        return ""
    return f"Fig 2's own 5-seed runs at these λ (fig2.csv.gz), {what} on: {'; '.join(cells)}"


def claims() -> list[Claim]:
    fig2 = _fig2()
    summary = pd.read_csv(FIG2_DIR / "fig2_summary.csv")
    perm = pd.read_csv(PERMUTATION_DIR / "permutation.csv")
    instances = _instances((FIG2_DIR / "fig2.log").read_text())

    def pair(kernel, lam, a, b, phrase):
        fa, fb = _final(fig2, kernel, lam, a), _final(fig2, kernel, lam, b)
        return Pair(f"{KERNELS[kernel]} λ = {lam:g}: {a} vs {b}", *paired(fa, fb), phrase)

    def growth(kernel, lam, method):
        """Per seed, the regret over the second half of f³'s segment against that over the first half: the
        growth slows where the later increment is the lower."""
        return Pair(
            f"{KERNELS[kernel]} λ = {lam:g}: {method} R({T}) − R({MIDDLE}) vs R({MIDDLE}) − R({LAST_CHANGE})",
            *paired(*_increments(fig2, kernel, lam, method)),
            "lower regret than",
            against=f"R({MIDDLE}) − R({LAST_CHANGE})",
        )

    def five(a, b):
        return _five_seeds(
            fig2,
            lambda k, lam: (_final(fig2, k, lam, a, "fig2"), _final(fig2, k, lam, b, "fig2")),
            f"{a} lower than {b}",
        )

    def five_growth(method):
        return _five_seeds(
            fig2,
            lambda k, lam: _increments(fig2, k, lam, method, "fig2"),
            f"{method}'s later increment lower than its earlier",
        )

    recheck = json.loads((RECHECK_DIR / "fig2_recheck.json").read_text())["max_rel_diff"]
    c_note = (
        "R-PERP with C = 0.1, calibrated by us (the paper's C is an absolute constant with no value); the "
        f"smallest active set over Fig 2's run, mean over seeds, is {_min_active(summary, RPERP)}"
    )
    c1_note = (
        "C = 1, the theory-literal constant: R-PERP never eliminates an arm (smallest active set "
        f"{_min_active(summary, RPERP_THEORY)}) and is restarted max-variance space filling"
    )
    linear = _linear_spread(fig2)
    to_random = [
        np.divide(*paired(_final(fig2, k, lam, RPERP_THEORY), _final(fig2, k, lam, "Random")))
        for k in KERNELS
        for lam in LAMS
    ]
    lo, hi = min(float(np.min(r)) for r in to_random), max(float(np.max(r)) for r in to_random)
    h_note = "; ".join(
        f"{KERNELS[k]} H = {min(v['H'] for v in instances[k])}–{max(v['H'] for v in instances[k])}" for k in KERNELS
    )
    vts = [v["V_T"] for vs in instances.values() for v in vs]
    return [
        _fig2_claim(
            "1",
            "R-PERP (C = 0.1, the reproduction preset) has a lower R_T than Random at T = 5000, both kernels, every λ",
            SAID_RANDOM,
            lambda k, lam: [pair(k, lam, RPERP, "Random", "outperforms")],
            f"{c_note}. A re-run of R-PERP (C = 0.1) at λ = 0.01 reproduces Fig 2's curves to {recheck:.1e} "
            f"relative (fig2_recheck.json). {five(RPERP, 'Random')}. "
            f"{_sensitivity_note('R-PERP beats Random')}. {SETTINGS}. {_seeds()}",
        ),
        _fig2_claim(
            "1",
            "R-PERP with the theory-literal constant C = 1 has a lower R_T than Random at T = 5000, both kernels, "
            "every λ",
            SAID_RANDOM,
            lambda k, lam: [pair(k, lam, RPERP_THEORY, "Random", "outperforms")],
            f"{c1_note}. Its R_5000 is {lo:.2f}–{hi:.2f} times Random's per seed. {five(RPERP_THEORY, 'Random')}. "
            + ". ".join(filter(None, (_elimination_note(), SETTINGS, _seeds()))),
        ),
        _fig2_claim(
            "2",
            f"R-PERP (C = 0.1): per seed, the regret over ({MIDDLE}, {T}] is lower than over ({LAST_CHANGE}, "
            f"{MIDDLE}], the two halves of the last function's segment, both kernels, every λ",
            SAID_SUBLINEAR,
            lambda k, lam: [growth(k, lam, RPERP)],
            f"Graded as paired per-seed comparisons, not as checks: both increments come from one run and pair by "
            "seed as two methods do, so the rule's sign test and bootstrap interval separate a real slowdown from "
            "the few-percent seed noise of a linear curve: in Fig 2's runs Random's and C = 1's later increments are "
            f"within {linear:.0%} of the earlier ones and fall below them on some seeds, so a bare per-seed count "
            "would call part of them sublinear (the means' increments are the page's reading). "
            f"Restarts fall inside the segment ({h_note}), each paying a space-filling first batch again; the "
            f"restart-aware reading is the next row. {five_growth(RPERP)}. "
            f"{_sensitivity_note('sublinear on (2000, 5000]')}. {c_note}. {SETTINGS}. {_seeds()}",
        ),
        *_restart_claim(),
        _fig2_claim(
            "2",
            f"R-PERP with the theory-literal C = 1: per seed, the regret over ({MIDDLE}, {T}] is lower than over "
            f"({LAST_CHANGE}, {MIDDLE}], both kernels, every λ",
            SAID_SUBLINEAR,
            lambda k, lam: [growth(k, lam, RPERP_THEORY)],
            f"per-seed increments as in the claim above. {c1_note}; in Fig 2's runs its later increment is within "
            f"{linear:.0%} of the earlier one on every seed, as Random's: linear growth. {five_growth(RPERP_THEORY)}. "
            f"{_at_c_note('sublinear after the last restart', 1.0)}. {SETTINGS}. {_seeds()}",
        ),
        _fig2_claim(
            "3",
            "R-PERP (C = 0.1) has a higher R_T than R-GP-UCB and than SW-GP-UCB at T = 5000, both kernels, every λ",
            SAID_UCB,
            lambda k, lam: [pair(k, lam, RPERP, m, "worse than") for m in UCBS],
            f"{c_note}. {'. '.join(five(RPERP, m) for m in UCBS)}. {_sensitivity_note('both UCB methods beat R-PERP')}. "
            f"{SETTINGS}. {_seeds()}",
        ),
        _fig2_claim(
            "3",
            "R-GP-UCB ≈ SW-GP-UCB in R_T at T = 5000, both kernels, every λ (the spec's expected ordering, spec "
            '5.3: "R-GP-UCB ≈ SW-GP-UCB < R-PERP < Random"; the paper compares the two UCB methods nowhere)',
            "",
            lambda k, lam: [pair(k, lam, "R-GP-UCB", "SW-GP-UCB", "≈")],
            f"{_ucb_note()}. {five('R-GP-UCB', 'SW-GP-UCB')}. {SETTINGS}. {_seeds()}",
            ours=True,
            where="",
        ),
        Claim(
            "4",
            "R-PERP's time per step is within 2× of R-GP-UCB's (Table 1 gives both O(\\|𝒳\\|t²))",
            source=TIMING,
            checks=_cost_checks(json.loads((TIMING_DIR / "timing.json").read_text())),
            note="median time per step of whole T = 5000 runs, R-PERP (C = 0.1, λ = 0.01) against R-GP-UCB "
            'side by side on one CPU, "about the same" read as within 2×; the 5-seed runs share V_T = 4 (one '
            "program), the 1-seed runs use seed 0's realised V_T; at load 3–5 single runs varied up to 2.2×, so "
            "read the ratios as ±20 %. The growth of the cost in t (O(\\|𝒳\\| t²)) and the zero cost inside a query "
            "phase are not measured on their own",
            quote="R/SW-GP-UCB … 𝒪(\\|𝒳\\|t²) … R-PREP (Ours) … 𝒪(\\|𝒳\\|t²)",
            where="Table 1, computational cost at step t ≤ T",
            scope="T = 5000, λ = 0.01, 1 and 5 seeds per kernel, 5 timed repeats",
        ),
        Claim(
            "4",
            "R-PERP is far cheaper than (restarted) OPKB, which needs O(M\\|𝒳\\|³)",
            untestable_reason="OPKB is not implemented (the paper does not run it either), so there is no cost to "
            "compare with",
            quote="the OPKB algorithm suffers from the huge computational complexity 𝒪(M\\|𝒳\\|³)",
            where="§4; Table 1",
        ),
        Claim(
            "5",
            "with a random query order, the batch's confidence bound (β of Eq. 8) contains the batch's average "
            f"function in at least 1 − δ = {1 - DELTA:.0%} of the permutation draws, at the theory-literal C = 1",
            source=PERMUTATION,
            checks=_coverage_checks(perm),
            note=_coverage_note(perm),
            quote="when running Algorithm 1, the following event holds with probability at least 1−δ",
            where="§5.1, Thm 4",
            scope=f"first batch of an interval, λ = 0.01, {perm.seed.nunique()} seeds × 400 draws",
        ),
        Claim(
            "5",
            "Without the permutation, changes aligned with the deterministic query order break the batch's "
            "bound (an extra √(Hγ_H) factor; Fig 1)",
            source=PERMUTATION,
            untestable_reason=_no_permutation_reason(perm, fig2),
            quote="The standard PE algorithm (left) chooses the query points deterministically within each batch. "
            "Thus, intuitively, the environment can arbitrarily choose the reward function f_{1,j}^1 such that the "
            "learner’s estimation error becomes large.",
            where="§5.1, Fig 1",
        ),
        Claim(
            "6",
            "R_T = Õ(T^{2/3} V_T^{1/3}) (SE) and Õ(T^{(2ν+d)/(3ν+d)} V_T^{ν/(3ν+d)}) (Matérn) (Thm 5), "
            "matching the lower bounds of Thm 1; Õ(T^{2/3}(V_T + 1)) with unknown V_T (App. D)",
            untestable_reason="theorems; the committed runs use one horizon (T = 5000) and each instance's own "
            f"V_T ({min(vts):.1f}–{max(vts):.1f}), so the growth of R_T in T at fixed V_T and in V_T at fixed T is "
            "not measured; the ingredients (schedule, elimination, Eq. 8's width) are checked by unit tests only",
            quote="Comparing our lower bounds (Theorem 1) with Theorem 5, we can confirm that R-PERP achieves nearly "
            "optimal regret for SE and Matérn RKHS.",
            where="§5.2, Thm 5",
        ),
    ]


# ---------------------------------------------------------------- the C x λ sweep (sensitivity.py)
@functools.cache
def _sensitivity() -> pd.DataFrame | None:
    """The C × λ sweep of experiments/r_perp/sensitivity.py (one row per kernel, method, C, λ and
    seed), or None where it has not been run."""
    path = SENSITIVITY_DIR / "sensitivity.csv"
    return pd.read_csv(path) if path.exists() else None


def _sens(kernel: str, method: str, C: float | None = None, lam: float | None = None) -> pd.DataFrame:
    """One method's per-seed rows of the sweep (one C and λ where given), indexed by seed and sorted."""
    rows = _sensitivity()
    rows = rows[(rows.kernel == kernel) & (rows.method == method)]
    if C is not None:
        rows = rows[np.isclose(rows.C, C)]
    if lam is not None:
        rows = rows[np.isclose(rows.lam, lam)]
    if rows.empty:
        raise ValueError(f"_sens: no sweep rows for {kernel} {method} C = {C} λ = {lam}")
    return rows.set_index("seed").sort_index()


def _halves(g: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The regret over (3500, 5000] and over (2000, 3500], per seed (fig2's reading, on the sweep's runs)."""
    return g[f"R_{T}"] - g[f"R_{MIDDLE}"], g[f"R_{MIDDLE}"] - g[f"R_{LAST_CHANGE}"]


def _after_restart(g: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The regret over the second and the first half of each seed's last interval (τ, T]."""
    return g.inc_last_second, g.inc_last_first


# each question: (kernel, C, λ) -> the pairs that must all hold for the setting to count, in the paper's words
QUESTIONS = {
    "R-PERP beats Random": lambda k, C, lam: [
        Pair("", *paired(_sens(k, "R-PERP", C, lam).R_T, _sens(k, "Random").R_T), "outperforms")
    ],
    "sublinear on (2000, 5000]": lambda k, C, lam: [
        Pair("", *paired(*_halves(_sens(k, "R-PERP", C, lam))), "lower regret than")
    ],
    "sublinear after the last restart": lambda k, C, lam: [
        Pair("", *paired(*_after_restart(_sens(k, "R-PERP", C, lam))), "lower regret than")
    ],
    "both UCB methods beat R-PERP": lambda k, C, lam: [
        Pair("", *paired(_sens(k, "R-PERP", C, lam).R_T, _sens(k, m, lam=lam).R_T), "worse than") for m in UCBS
    ],
}


def _grid() -> tuple[list[float], list[float], int]:
    """The sweep's C values, λ values and seeds per setting."""
    rp = _sensitivity()
    rp = rp[rp.method == "R-PERP"]
    return sorted(rp.C.unique()), sorted(rp.lam.unique()), int(rp.groupby(["kernel", "C", "lam"]).size().min())


def _sweep_header() -> str:
    cs, lams, n = _grid()
    return (
        f"Sensitivity ({SENSITIVITY.rsplit('/', 1)[-1]}, {n} paired seeds per setting, C ∈ "
        f"{{{', '.join(f'{c:g}' for c in cs)}}} × λ ∈ {{{', '.join(f'{lam:g}' for lam in lams)}}}; the paper gives "
        "neither, C = 1 is the theory-literal constant, C = 0.1 at λ = 0.01 the reproduction preset, λ = 0.01 and 1 "
        "the spec's, the rest ours; every setting graded by the same rule)"
    )


def _sensitivity_note(question: str) -> str:
    """Where in the C × λ sweep a question holds by the rule: per kernel, the settings, grouped by λ, and
    the outcomes elsewhere."""
    if _sensitivity() is None:
        return NO_SWEEP
    cs, lams, _ = _grid()
    parts = []
    for k in KERNELS:
        held, other = {}, []
        for lam in lams:
            held[lam] = []
            for C in cs:
                pairs = QUESTIONS[question](k, C, lam)
                ok = [_holds(p) for p in pairs]
                if all(ok):
                    held[lam].append(C)
                else:
                    other += [p.compare().outcome for p, o in zip(pairs, ok) if not o]
        where = "; ".join(
            f"λ = {lam:g}: " + ("C ∈ {" + ", ".join(f"{c:g}" for c in ok) + "}" if ok else "no C")
            for lam, ok in held.items()
        )
        counts = ", ".join(f"{other.count(o)} {o}" for o in ("comparable", "inconclusive", "worse") if o in other)
        n_ok = sum(len(ok) for ok in held.values())
        parts.append(
            f"{KERNELS[k]}: {n_ok} of {len(cs) * len(lams)} settings ({where})"
            + (f"; the failing comparisons are {counts}" if counts else "")
        )
    return f"{_sweep_header()}: '{question}' holds at {'. '.join(parts)}"


NO_SWEEP = "No sensitivity run (experiments/r_perp/sensitivity.py) in the results"


def _each_cell(pair_at, detail) -> tuple[list[str], int]:
    """pair_at(kernel, λ) graded at every kernel and λ of the sweep: ("<kernel> λ = <λ> <detail>", ...)
    and the sweep's seed count."""
    _, lams, n = _grid()
    cells = []
    for k in KERNELS:
        for lam in lams:
            cells.append(f"{KERNELS[k]} λ = {lam:g} {detail(pair_at(k, lam).compare())}")
    return cells, n


def _at_c_note(question: str, C: float) -> str:
    """The outcomes of one question at one C, per kernel and λ, in the sweep."""
    if _sensitivity() is None:
        return NO_SWEEP
    cells, n = _each_cell(lambda k, lam: QUESTIONS[question](k, C, lam)[0], lambda c: f"{c.outcome} ({c.wins}/{c.n})")
    return f"In the sweep ({SENSITIVITY.rsplit('/', 1)[-1]}, {n} seeds), '{question}' at C = {C:g}: {'; '.join(cells)}"


def _elimination_note() -> str:
    """When R-PERP first eliminates an arm, per kernel and C over the sweep's λ: the median step over the
    seeds that eliminate at all, and how many do where not all."""
    if _sensitivity() is None:
        return ""
    rp = _sensitivity()[lambda d: d.method == "R-PERP"]
    cells = []
    for k in KERNELS:
        per_c = []
        for C, gc in rp[rp.kernel == k].groupby("C"):
            first = gc.groupby("lam").first_elimination
            if gc.first_elimination.isna().all():
                per_c.append(f"C = {C:g} never")
                continue
            med = first.median().dropna()
            some = (first.count() < first.size()).any()
            span = f"{med.min():.0f}" if med.min() == med.max() else f"{med.min():.0f}–{med.max():.0f}"
            per_c.append(
                f"C = {C:g} step {span}"
                + (
                    f" ({first.count().min()}–{first.count().max()} of {first.size().max()} seeds eliminate)"
                    if some
                    else ""
                )
            )
        cells.append(f"{KERNELS[k]}: {', '.join(per_c)}")
    return (
        "The first elimination (`first_elimination`; median over seeds, range over λ) falls at "
        + "; ".join(cells)
        + f" (the first batch of the first interval, N_1 = ⌈√H⌉, ends at step {_first_batch()})"
    )


def _first_batch() -> str:
    """The range of the first batch's size ⌈√H⌉ over the sweep's seeds, per kernel."""
    rp = _sensitivity()
    n1 = {k: [math.isqrt(int(h) - 1) + 1 for h in rp[rp.kernel == k].H.unique()] for k in KERNELS}
    return ", ".join(f"{min(v)}–{max(v)} ({KERNELS[k]})" for k, v in n1.items())


def _ucb_note() -> str:
    """R-GP-UCB against SW-GP-UCB in the sweep at the λ graded on Fig 2's run: a second draw of the noise."""
    if _sensitivity() is None:
        return NO_SWEEP
    _, _, n = _grid()
    cells = []
    for k in KERNELS:
        for lam in (lam for lam in LAMS if _source(lam) == "fig2"):
            c = Pair("", *paired(_sens(k, "R-GP-UCB", lam=lam).R_T, _sens(k, "SW-GP-UCB", lam=lam).R_T)).compare()
            cells.append(f"{KERNELS[k]} λ = {lam:g} {c.outcome} ({c.wins}/{c.n} lower, Δ {c.median_diff:+.2f})")
    return (
        f"The sweep's own runs at the λ graded on Fig 2's run ({SENSITIVITY.rsplit('/', 1)[-1]}, {n} paired seeds, "
        f"other noise draws): {'; '.join(cells)}"
    )


def _restart_pairs(C: float) -> tuple[list[Pair], list[tuple[str, float]]]:
    """Per kernel and λ, R-PERP's regret over the second half of each seed's last interval against the first,
    with the (kernel, λ) of each."""
    _, lams, _ = _grid()
    keys = [(k, lam) for k in KERNELS for lam in lams]
    pairs = [
        Pair(
            f"{KERNELS[k]} λ = {lam:g}: R-PERP (C={C:g}) R(T) − R(m) vs R(m) − R(τ), τ = the seed's last restart",
            *paired(*_after_restart(_sens(k, "R-PERP", C, lam))),
            "lower regret than",
            against="R(m) − R(τ)",
        )
        for k, lam in keys
    ]
    return pairs, keys


def _restart_note() -> str:
    """The windows of the restart-aware reading and the same reading for Random (the linear control)."""
    rp = _sensitivity()
    cells = []
    for k in KERNELS:
        r = _sens(k, "Random")
        c = Pair("", *paired(*_after_restart(r))).compare()
        cells.append(
            f"{KERNELS[k]}: τ = {r.last_restart.min()}–{r.last_restart.max()} (a last interval of "
            f"{T - r.last_restart.max()}–{T - r.last_restart.min()} steps), Random's halves {c.outcome} "
            f"({c.wins}/{c.n} lower, median ratio {r.ratio_last.median():.2f})"
        )
    slope = {
        name: rows.groupby("kernel").loglog_slope_last_half.median().reindex(list(KERNELS))
        for name, rows in (
            ("R-PERP (C = 0.1, every λ)", rp[(rp.method == "R-PERP") & np.isclose(rp.C, 0.1)]),
            ("R-PERP (C = 1)", rp[(rp.method == "R-PERP") & np.isclose(rp.C, 1.0)]),
            ("Random", rp[rp.method == "Random"]),
        )
    }
    return (
        "Per seed, the last interval (τ, T] is one fresh learner on f³ alone (τ = H⌊(T−1)/H⌋, the seed's own H); "
        "m = τ + ⌊(T − τ)/2⌋; 'better' means the later half's regret is lower on enough seeds, i.e. R_t − R_τ over "
        f"t − τ falls. {'; '.join(cells)}. The slope of log R_t against log t over t ∈ [2500, 5000] per seed "
        "(`loglog_slope_last_half`; 1 for a curve linear from t = 0), median: "
        + "; ".join(
            f"{name} " + ", ".join(f"{KERNELS[k]} {v:.2f}" for k, v in sl.items()) for name, sl in slope.items()
        )
    )


def _restart_claim() -> list[Claim]:
    """Claim 2 read per seed after that seed's last restart (from the sweep), where the sweep exists."""
    if _sensitivity() is None:
        return []
    pairs, keys = _restart_pairs(0.1)
    _, _, n = _grid()
    return [
        Claim(
            "2",
            "R-PERP (C = 0.1), read after each seed's last restart τ (our reading of the claim): per seed, the "
            "regret over the second half of (τ, T] is lower than over its first half, both kernels, every λ",
            pairs,
            SENSITIVITY,
            f"{_restart_note()}. {_sensitivity_note('sublinear after the last restart')}. The sweep's runs draw "
            f"their noise and permutations from other keys than Fig 2's. {SETTINGS}",
            quote=SAID_SUBLINEAR,
            where=WHERE_FIG2,
            scope=f"{_where_held(pairs, keys)}; T = {T}, {n} seeds per λ (the C × λ sweep); the paper: T = {T}, "
            "5 seeds, λ not given",
        )
    ]


def _instances(log: str) -> dict[str, list[dict]]:
    """Per kernel, each seed's V_T and H as fig2.log records them."""
    out = {k: [] for k in KERNELS}
    for kernel, vt, h in re.findall(r"^(\w+) seed \d+: B = [\d.]+, V_T = ([\d.]+), H = (\d+)", log, re.M):
        out[kernel].append({"V_T": float(vt), "H": int(h)})
    if not all(out.values()):
        raise ValueError("_instances: fig2.log lists no instances for a kernel")
    return out


def _min_active(summary: pd.DataFrame, method: str) -> str:
    """The smallest active set over the run (mean over seeds), per kernel and λ, or its range if it is one value."""
    rows = summary[summary.method == method]
    if rows.min_active_mean.nunique() == 1:
        return f"{rows.min_active_mean.iloc[0]:.0f} of 900 arms for every kernel and λ"
    return (
        "; ".join(
            f"{KERNELS[k]} λ = {lam:g}: {rows[(rows.kernel == k) & np.isclose(rows.lam, lam)].min_active_mean.iloc[0]:.0f}"
            for k in KERNELS
            for lam in LAMS
        )
        + " of 900 arms"
    )


def _linear_spread(fig2: pd.DataFrame) -> float:
    """The largest relative gap between the two halves' increments of a linear curve (Random; R-PERP with
    C = 1, which never eliminates) over seeds, kernels and λ."""
    gaps = []
    for k in KERNELS:
        for method, lams in (("Random", (0.01,)), (RPERP_THEORY, LAMS)):
            for lam in lams:
                rows = _rows(fig2, k, lam, method)
                start, middle, end = (_at(rows, s) for s in (LAST_CHANGE, MIDDLE, T))
                gaps.append(float(((end - middle) / (middle - start) - 1).abs().max()))
    return max(gaps)


def _cost_checks(timing: dict) -> list[tuple[str, bool]]:
    """R-PERP's median time per step over R-GP-UCB's, per committed run: about the same means within 2×."""
    checks = []
    for run in timing["runs"]:
        ms = {m: v["ms_per_step"] for m, v in run["methods"].items()}
        ratio = ms["R-PERP"] / ms["R-GP-UCB"]
        vt = "realised V_T" if isinstance(run["V_T"], str) else f"V_T = {run['V_T']:g}"
        checks.append(
            (
                f"{KERNELS[run['kernel']]}, {run['seeds']} seed{'s' if run['seeds'] > 1 else ''} ({vt}, H = "
                f"{run['H']}, H_ucb = {run['H_ucb']}): R-PERP {ms['R-PERP']:.3g} ms/step against R-GP-UCB "
                f"{ms['R-GP-UCB']:.3g}, ratio {ratio:.2f} (asserted: within 2×)",
                ratio <= 2.0,
            )
        )
    return checks


def _coverage_checks(perm: pd.DataFrame) -> list[tuple[str, bool]]:
    """Random query order, theory-literal C = 1: the share of permutation draws in which the bound holds at
    every arm, lowest over the batch sizes and seeds, against 1 − δ."""
    rows = perm[perm.order == "random"]
    checks = []
    for (kernel, change, frac), g in rows.groupby(["kernel", "change", "switch_fraction"], sort=False):
        low = g.coverage_C1.min()
        sizes = ", ".join(str(n) for n in sorted(g.N.unique()))
        checks.append(
            (
                f"{KERNELS[kernel]}, {CHANGES.get(change, change)} after {frac:g} of the batch, random order, C = 1: "
                f"the bound holds in {'every draw' if low == 1 else f'at least {low:.0%} of the draws'} "
                f"(N = {sizes}, {g.seed.nunique()} seeds; "
                f"asserted ≥ {1 - DELTA:.0%})",
                low >= 1 - DELTA,
            )
        )
    return checks


def _coverage_note(perm: pd.DataFrame) -> str:
    """Where the bound stands with the C = 0.1 of Fig 2's runs (shares per setting, mean over seeds)."""
    cells = perm.groupby(["kernel", "N", "change", "switch_fraction", "order"])["coverage_C0.1"].mean()
    rand, sel = cells.xs("random", level="order"), cells.xs("selection", level="order")
    rows = perm[perm.order == "random"]
    return (
        "measured on the first batch of an interval (N = 49 or 337) of Fig 2's instances, λ = 0.01, 400 "
        "permutation draws per seed, for oblivious changes only (no adversarial sequence); C is the paper's "
        "unspecified constant, graded at the theory-literal C = 1 (β^{1/2} "
        f"{rows['beta_half_C1'].min():.0f}–{rows['beta_half_C1'].max():.0f}). With the C = 0.1 of Fig 2's R-PERP "
        f"(β^{{1/2}} {rows['beta_half_C0.1'].min():.1f}–{rows['beta_half_C0.1'].max():.1f}) the bound holds in "
        f"only {rand.min():.0%}–{rand.max():.0%} of the random-order draws (selection order "
        f"{sel.min():.0%}–{sel.max():.0%}; mean over seeds per setting): the calibrated runs do not carry Thm 4's "
        "guarantee"
    )


def _no_permutation_reason(perm: pd.DataFrame, fig2: pd.DataFrame) -> str:
    """Why the claim cannot be graded, with what the committed runs do show."""
    w = perm.groupby(["kernel", "N", "change", "switch_fraction", "order"]).w_median.mean()

    def span(change, order):
        v = w.xs((change, order), level=("change", "order"))
        return f"{v.min():.1f}–{v.max():.1f}"

    widths = "; ".join(
        f"{CHANGES[c]}: {span(c, 'selection')} against {span(c, 'random')} for the random order" for c in CHANGES
    )
    ratios = []
    for k in KERNELS:
        a = final_per_seed(_rows(fig2, k, 0.01, NO_PERMUTATION), "cumulative_regret").mean()
        b = final_per_seed(_rows(fig2, k, 0.01, RPERP), "cumulative_regret").mean()
        ratios.append(f"{KERNELS[k]} {a / b:.3f}")
    return (
        "needs a drift sequence built against the design order (as in the lower-bound constructions); the "
        "committed runs hold only oblivious changes (f¹ → f² after a quarter or half of the batch, a sign flip "
        "f¹ → −f¹ halfway), in which the selection order needs the smaller width w* = max_x \\|μ(x) − f̄(x)\\|/σ(x) "
        f"(median w*, mean over seeds per setting: {widths}), and Fig 2's ablation without the permutation "
        f"(R-PE), whose mean R_5000 at λ = 0.01 is R-PERP's times {', '.join(ratios)}"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    table = write(PAPER, claims())
    print(table[["claim", "comparison", "outcome", "holds"]].to_string())
