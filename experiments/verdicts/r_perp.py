"""R-PERP (Iwazaki & Takeno, non-stationary kernelized bandits): every claim of spec sections 0, 5.3 and 6
graded by the one verdict rule (jbo.verdict) from the committed result files. Writes r_perp.{csv,md}
(experiments/results/verdicts/ with --update).

    python experiments/verdicts/r_perp.py [--update]

Fig 2's metric is the dynamic cumulative regret R_t at the horizon T = 5000 (lower is better, compared on the
log10 scale: it is positive). Seed i is one environment (three base functions drawn by numpy default_rng(i))
shared by every method, so the methods pair by seed.

Where the C × λ sweep of experiments/nonstationary/sensitivity.py (sensitivity.csv, 12 seeds) is in the results,
each claim about R-PERP's regret also says at which (C, λ) it holds, every setting graded by the same rule, and
claim 2 gets a second, restart-aware reading: per seed, the regret over the second half of that seed's last
interval against the first half.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re

import numpy as np
import pandas as pd
from common import BETTER, COMPARABLE, RESULTS, Claim, Pair, add_update_flag, final_per_seed, paired, write

from jbo.verdict import holds, min_seeds, sign_test

PAPER = "r_perp"
NS = RESULTS / "nonstationary"
FIG2 = "experiments/results/nonstationary/fig2.csv.gz"
TIMING = "experiments/results/nonstationary/timing.json"
PERMUTATION = "experiments/results/nonstationary/permutation.csv"
KERNELS = {"se": "SE", "matern52": "Matérn-5/2"}
LAMS = (0.01, 0.1, 1.0)
RPERP = "R-PERP (C=0.1)"  # the reproduction preset: C calibrated by us
RPERP_THEORY = "R-PERP (C=1)"  # the theory-literal constant
NO_PERMUTATION = "R-PE no permutation (C=0.1, ours)"
UCBS = ("R-GP-UCB", "SW-GP-UCB")
LAST_CHANGE, MIDDLE, T = 2000, 3500, 5000  # f³ holds on (2000, 5000]; its two halves meet at 3500
DELTA = 0.1
CHANGES = {"f1->f2": "f¹ → f²", "f1->-f1": "f¹ → −f¹"}

SETTINGS = (
    "Differs from the paper: λ is not given (we run 0.01, 0.1 and 1; 0.01 is the reproduction preset), nor "
    "are the noise (ρ = 0.01, ours), B (the exact RKHS norm per instance) or V_T (the realised sup-norm "
    "variation per instance), all told to every method; H_ucb = W rounded up; the UCB width β^{1/2} = B + "
    "(ρ/√λ)√(2(γ̂ + ln 1/δ)) with the greedy γ̂; Random does not use λ, so its one run per seed pairs with "
    "every λ"
)


SENSITIVITY = "experiments/results/nonstationary/sensitivity.csv"  # experiments/nonstationary/sensitivity.py
MORE_SEEDS = "fig2_s12.csv.gz"  # Fig 2 at λ = 0.01 with 12 seeds (fig2.py --lams 0.01 --seeds 12 --no-ablations)


def _seeds() -> str:
    more = (
        f" At λ = 0.01 the comparisons use the 12-seed run ({MORE_SEEDS}), the first five of whose seeds are "
        "the 5-seed run's"
        if (NS / MORE_SEEDS).exists()
        else ""
    )
    return (
        f'The paper\'s 5 seeds: 5 of 5 lower gives a sign-test p = {sign_test(5, 0):.3f}, so "beats" cannot be '
        f"shown below {min_seeds()} seeds.{more}"
    )


def _fig2() -> pd.DataFrame:
    """Fig 2's curves; where the 12-seed run at λ = 0.01 exists, its rows replace the 5-seed run's for the
    (kernel, method) pairs it holds."""
    fig2 = pd.read_csv(NS / "fig2.csv.gz")
    if not (NS / MORE_SEEDS).exists():
        return fig2
    more = pd.read_csv(NS / MORE_SEEDS)
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


def claims() -> list[Claim]:
    fig2 = _fig2()
    summary = pd.read_csv(NS / "fig2_summary.csv")
    perm = pd.read_csv(NS / "permutation.csv")
    instances = _instances((NS / "fig2.log").read_text())

    def final(kernel, lam, method):
        lam = 0.01 if method == "Random" else lam  # Random's runs are logged once, under λ = 0.01
        return final_per_seed(_rows(fig2, kernel, lam, method), "cumulative_regret")

    def pair(kernel, lam, a, b, asserted):
        fa, fb = final(kernel, lam, a), final(kernel, lam, b)
        return Pair(f"{KERNELS[kernel]} λ = {lam:g}: {a} vs {b}", *paired(fa, fb), asserted)

    def growth(kernel, lam, method):
        """Per seed, the regret over the second half of f³'s segment against that over the first half: the
        growth slows where the later increment is the lower."""
        rows = _rows(fig2, kernel, lam, method)
        start, middle, end = (_at(rows, s) for s in (LAST_CHANGE, MIDDLE, T))
        return Pair(
            f"{KERNELS[kernel]} λ = {lam:g}: {method} R({T}) − R({MIDDLE}) vs R({MIDDLE}) − R({LAST_CHANGE})",
            *paired(end - middle, middle - start),
            BETTER,
        )

    grid = [(k, lam) for k in KERNELS for lam in LAMS]
    recheck = json.loads((NS / "fig2_recheck.json").read_text())["max_rel_diff"]
    c_note = (
        "R-PERP with C = 0.1, calibrated by us (the paper's C is an absolute constant with no value); the "
        f"smallest active set over the run, mean over seeds, is {_min_active(summary, RPERP)}"
    )
    c1_note = (
        "C = 1, the theory-literal constant: R-PERP never eliminates an arm (smallest active set "
        f"{_min_active(summary, RPERP_THEORY)}) and is restarted max-variance space filling"
    )
    linear = _linear_spread(fig2)
    to_random = [np.divide(*paired(final(k, lam, RPERP_THEORY), final(k, lam, "Random"))) for k, lam in grid]
    lo, hi = min(float(np.min(r)) for r in to_random), max(float(np.max(r)) for r in to_random)
    h_note = "; ".join(
        f"{KERNELS[k]} H = {min(v['H'] for v in instances[k])}–{max(v['H'] for v in instances[k])}" for k in KERNELS
    )
    return [
        Claim(
            "1",
            "Fig 2: R-PERP beats Random in both panels (R_T at T = 5000)",
            [pair(k, lam, RPERP, "Random", BETTER) for k, lam in grid],
            FIG2,
            f"{c_note}. A re-run of R-PERP (C = 0.1) at λ = 0.01 reproduces these curves to {recheck:.1e} "
            f"relative (fig2_recheck.json). {SETTINGS}. {_seeds()}",
        ),
        Claim(
            "1",
            "Fig 2: R-PERP beats Random, with the theory-literal constant C = 1",
            [pair(k, lam, RPERP_THEORY, "Random", BETTER) for k, lam in grid],
            FIG2,
            f"{c1_note}. Its R_5000 is {lo:.2f}–{hi:.2f} times Random's per seed: the evidence runs against the "
            "claim, but a 5-seed 'comparable' does not count against 'better' under the rule. "
            + ". ".join(
                filter(None, (_sensitivity_note("R-PERP beats Random"), _elimination_note(), SETTINGS, _seeds()))
            ),
        ),
        Claim(
            "2",
            "Fig 2: R-PERP's regret grows sublinearly from t = 2000 to 5000, despite the two changes",
            [growth(k, lam, RPERP) for k, lam in grid],
            FIG2,
            f"Graded as paired per-seed comparisons, not as checks: per seed, the regret over ({MIDDLE}, {T}] "
            f"against that over ({LAST_CHANGE}, {MIDDLE}], the two halves of the last function's segment (the "
            "means' increments are the page's reading). Both come from one run and pair by seed as two methods "
            "do, so the rule's sign test and bootstrap interval separate a real slowdown from the few-percent "
            "seed noise of a linear curve: Random's and C = 1's later increments are within "
            f"{linear:.0%} of the earlier ones and fall below them on some seeds, so a bare per-seed count would "
            "call part of them sublinear. "
            f"Restarts fall inside the segment ({h_note}), each paying a space-filling first batch again; the "
            "restart-aware reading is the next row. "
            f"{_sensitivity_note('sublinear on (2000, 5000]')}. {c_note}. {SETTINGS}. {_seeds()}",
        ),
        *_restart_claim(),
        Claim(
            "2",
            "Fig 2: R-PERP's regret grows sublinearly from t = 2000 to 5000, with the theory-literal C = 1",
            [growth(k, lam, RPERP_THEORY) for k, lam in grid],
            FIG2,
            f"per-seed increments as in the claim above. {c1_note}; its later increment is within {linear:.0%} of "
            "the earlier one on every seed, as Random's: linear growth, though a 5-seed 'comparable' does not "
            f"count against 'better' under the rule. {_at_c_note('sublinear on (2000, 5000]', 1.0)}. "
            f"{_at_c_note('sublinear after the last restart', 1.0)}. {SETTINGS}. {_seeds()}",
        ),
        Claim(
            "3",
            "Fig 2: R-PERP is worse than both UCB methods (R-GP-UCB and SW-GP-UCB beat it)",
            [pair(k, lam, m, RPERP, BETTER) for k, lam in grid for m in UCBS],
            FIG2,
            f"{c_note}. {_sensitivity_note('both UCB methods beat R-PERP')}. {SETTINGS}. {_seeds()}",
        ),
        Claim(
            "3",
            "Fig 2: R-GP-UCB and SW-GP-UCB are comparable (the paper's ordering R-GP-UCB ≈ SW-GP-UCB)",
            [pair(k, lam, "R-GP-UCB", "SW-GP-UCB", COMPARABLE) for k, lam in grid],
            FIG2,
            f"{_ucb_note()}. {SETTINGS}",
        ),
        Claim(
            "4",
            "Table 1: R-PERP costs about the same per step as GP-UCB",
            source=TIMING,
            checks=_cost_checks(json.loads((NS / "timing.json").read_text())),
            note="median time per step of whole T = 5000 runs, R-PERP (C = 0.1, λ = 0.01) against R-GP-UCB "
            'side by side on one CPU, "about the same" read as within 2×; the 5-seed runs share V_T = 4 (one '
            "program), the 1-seed runs use seed 0's realised V_T; at load 3–5 single runs varied up to 2.2×, so "
            "read the ratios as ±20 %. The growth of the cost in t (O(\\|𝒳\\| t²)) and the zero cost inside a query "
            "phase are not measured on their own",
        ),
        Claim(
            "4",
            "Table 1: R-PERP is far cheaper than (restarted) OPKB, which needs O(M\\|𝒳\\|³)",
            untestable_reason="OPKB is not implemented (the paper does not run it either), so there is no cost to "
            "compare with",
        ),
        Claim(
            "5",
            "Thm 4: with a random query order, the batch's confidence bound (β of Eq. 8) contains the batch's "
            "average function with probability ≥ 1 − δ",
            source=PERMUTATION,
            checks=_coverage_checks(perm),
            note=_coverage_note(perm),
        ),
        Claim(
            "5",
            "Without the permutation, changes aligned with the deterministic query order break the batch's "
            "bound (an extra √(Hγ_H) factor; Fig 1)",
            source=PERMUTATION,
            untestable_reason=_no_permutation_reason(perm, fig2),
        ),
        Claim(
            "6",
            "Theory: R_T = Õ(T^{2/3} V_T^{1/3}) (SE) and Õ(T^{(2ν+d)/(3ν+d)} V_T^{ν/(3ν+d)}) (Matérn) (Thm 5), "
            "matching the lower bounds of Thm 1; Õ(T^{2/3}(V_T + 1)) with unknown V_T (App. D)",
            untestable_reason="theorems; the committed runs use one horizon (T = 5000) and each instance's own "
            f"V_T ({min(v['V_T'] for vs in instances.values() for v in vs):.1f}–"
            f"{max(v['V_T'] for vs in instances.values() for v in vs):.1f}), so the growth of R_T in T at fixed "
            "V_T and in V_T at fixed T is not measured; the ingredients (schedule, elimination, Eq. 8's width) "
            "are checked by unit tests only",
        ),
    ]


# ---------------------------------------------------------------- the C x λ sweep (sensitivity.py)
@functools.cache
def _sensitivity() -> pd.DataFrame | None:
    """The C × λ sweep of experiments/nonstationary/sensitivity.py (one row per kernel, method, C, λ and
    seed), or None where it has not been run."""
    path = NS / "sensitivity.csv"
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


# each question: (kernel, C, λ) -> the pairs that must all hold for the setting to count
QUESTIONS = {
    "R-PERP beats Random": lambda k, C, lam: [
        Pair("", *paired(_sens(k, "R-PERP", C, lam).R_T, _sens(k, "Random").R_T), BETTER)
    ],
    "sublinear on (2000, 5000]": lambda k, C, lam: [Pair("", *paired(*_halves(_sens(k, "R-PERP", C, lam))), BETTER)],
    "sublinear after the last restart": lambda k, C, lam: [
        Pair("", *paired(*_after_restart(_sens(k, "R-PERP", C, lam))), BETTER)
    ],
    "both UCB methods beat R-PERP": lambda k, C, lam: [
        Pair("", *paired(_sens(k, m, lam=lam).R_T, _sens(k, "R-PERP", C, lam).R_T), BETTER) for m in UCBS
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
                comps = [p.compare() for p in pairs]
                if all(holds(c, p.asserted) for c, p in zip(comps, pairs)):
                    held[lam].append(C)
                else:
                    other += [c.outcome for c, p in zip(comps, pairs) if not holds(c, p.asserted)]
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


NO_SWEEP = "No sensitivity run (experiments/nonstationary/sensitivity.py) in the results"


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
    """R-GP-UCB against SW-GP-UCB per kernel and λ in the sweep (12 seeds each)."""
    if _sensitivity() is None:
        return NO_SWEEP
    cells, n = _each_cell(
        lambda k, lam: Pair("", *paired(_sens(k, "R-GP-UCB", lam=lam).R_T, _sens(k, "SW-GP-UCB", lam=lam).R_T)),
        lambda c: f"{c.outcome} ({c.wins}/{c.n} lower, Δ {c.median_diff:+.2f})",
    )
    return f"Sensitivity over λ ({SENSITIVITY.rsplit('/', 1)[-1]}, {n} paired seeds, other noise draws): {'; '.join(cells)}"


def _restart_pairs(C: float) -> list[Pair]:
    """Per kernel and λ, R-PERP's regret over the second half of each seed's last interval against the first."""
    _, lams, _ = _grid()
    return [
        Pair(
            f"{KERNELS[k]} λ = {lam:g}: R-PERP (C={C:g}) R(T) − R(m) vs R(m) − R(τ), τ = the seed's last restart",
            *paired(*_after_restart(_sens(k, "R-PERP", C, lam))),
            BETTER,
        )
        for k in KERNELS
        for lam in lams
    ]


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
    return [
        Claim(
            "2",
            "Fig 2: R-PERP's regret grows sublinearly after the last change, read per seed after that seed's last "
            "restart (the reproduction preset C = 0.1)",
            _restart_pairs(0.1),
            SENSITIVITY,
            f"{_restart_note()}. {_sensitivity_note('sublinear after the last restart')}. The sweep's runs draw "
            f"their noise and permutations from other keys than Fig 2's. {SETTINGS}",
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
