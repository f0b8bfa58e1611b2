"""SBO-KDE / DRBO-KDE (Huang et al., AAAI 2024): every claim of spec sections 7.4, 8 and 9 graded by the one
verdict rule (jbo.verdict) from the committed result files. Writes sbo_kde.{csv,md} (experiments/results/verdicts/
with --update).

    python experiments/verdicts/sbo_kde.py [--update]

Metric (the paper's Figs 1 and 2), at each seed's last step, lower is better, compared on the log10 scale:
cumulative regret; for Complicated Hartmann the cumulative observed reward, taken as its shortfall
t·F* − Σ f(x_t, c_t); for the two portfolio problems the cumulative expected reward, taken as the cumulative
regret against the numerically maximised F*. Both are the paper's quantity minus a constant common to every
method of the problem (F* times the step), so each seed's order of two methods is the paper's; the shortfall
and the regret are positive on every final row, so the factor-of-two margin of "comparable" applies.

Where the code_compat re-run of the baselines exists (fig1.py --code-compat --tag s10_compat: GP-UCB with
√1.5, StableOpt on the reflected box, and the MMD methods' diagonal grid where D_c = 2 if they were re-run,
as the released code runs them), every Fig 1 claim that compares against a baseline is graded a second time with
those baselines in place of jbo's (the spec's), the KDE methods unchanged; its note names the verdict in
each mode.

Where the paper-budget run exists (fig1.py at T = 350, M = 1024, raw 1024, 10 x 50 Adam steps, 5 seeds, on one
H100: fig1_<problem>_paper_h100*.csv), every Fig 1 claim with a pair on that problem is graded a third time
from it, on the methods it ran.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
from common import (
    BETTER,
    COMPARABLE,
    NOT_WORSE,
    RESULTS,
    Claim,
    Pair,
    add_update_flag,
    final_per_seed,
    grade,
    paired,
    write,
)

from jbo import studies

PAPER = "sbo_kde"
FIG1 = "experiments/results/sbo/fig1_<problem>.csv"
FIG2 = "experiments/results/sbo/fig2_ackley_4c.csv"
TABLE1 = "experiments/results/sbo/table1_timing.csv"
BUDGET = "experiments/results/sbo/budget_cost.json"
SYNTHETIC = {
    "ackley": "Ackley",
    "modified_branin": "Modified Branin",
    "hartmann": "Hartmann",
    "complicated_hartmann": "Complicated Hartmann",
}
REAL = {
    "newsvendor": "Newsvendor",
    "portfolio_uniform": "Portfolio (uniform)",
    "portfolio_normal": "Portfolio (normal)",
}
NAMES = {**SYNTHETIC, **REAL, "ackley_4c": "Ackley-4c"}
KDE = ("SBO-KDE", "DRBO-KDE")
MMD, MINIMAX = "DRBO-MMD", "DRBO-MMD-MinimaxApprox"
BASELINES = ("GP-UCB", "StableOpt", MMD, MINIMAX)
CONTEXT_AWARE_BASELINES = ("StableOpt", MMD, MINIMAX)

REDUCED = (
    "reduced budget: T = 60 evaluations (n0 = 10 + 50 steps; paper 350), M = 128 KDE samples and inner Sobol "
    "points (paper 1024), raw screening 256 (paper 1024; 32 for DRBO-KDE and DRBO-MMD as in the paper), "
    "10 starts (5 for the DRBO methods) × 30 projected-Adam steps instead of BoTorch's L-BFGS-B restarts; "
    "10 seeds: the paper's 5 cannot make the sign test reach p < 0.05, so no comparison could come out better "
    "or worse; every method ran 10 seeds in re-runs at the same settings (fig1.py --seeds 10: --tag s10, "
    "DRBO-KDE with --tag s10_kde where s10 lacks it, DRBO-MMD with --tag s10_smo), whose rows replace the "
    "5-seed runs'. "
    "The runs share every seed's design, contexts and noise, but their trajectories differ (on Ackley "
    "seeds 0-4 end up to 18% apart in cumulative regret: rounding that BO amplifies)"
)
STABLEOPT = (
    "StableOpt minimises over the box [μ̂ − ŝ, μ̂ + ŝ] the paper defines, not the released code's reflected "
    "box [μ̂ − 3ŝ, μ̂ − ŝ]: stronger than the paper's"
)
DRBO_MMD = (
    "DRBO-MMD's SOCP solved inside JAX by bisection × SMO pair steps (12 × 150, within 1e-5 of the range of "
    "the UCB values of CVXPY's optimum), not CVXPY/SCS; on every problem the SMO runs end within about one "
    "standard error of the runs with the bisection × FISTA solver (up to 4.5e-2 off; the SBO-KDE page has both)"
)
MINIMAX_NOTE = (
    "MinimaxApprox is Tay et al.'s mid-point formula with the released code's sign errors corrected, "
    "grid 128 (paper 1024)"
)
GP_UCB = "GP-UCB multiplies σ by 1.5 as the paper says (the released code: √1.5)"


def claims() -> list[Claim]:
    runs = {p: _fig1(p) for p in {**SYNTHETIC, **REAL}}
    runs["ackley_4c"] = _fig1("ackley_4c")

    def pair(problem, a, b, asserted=BETTER):
        return _pair(runs[problem], problem, a, b, asserted)

    compat = {p: _fig1_compat(p, runs[p]) for p in {**SYNTHETIC, **REAL}}

    def compat_pair(problem, a, b, asserted=BETTER):
        """The pair with the released code's baselines, None where the compat run lacks one of them."""
        table, missing = compat[problem]
        if table is None or {a, b} & missing:
            return None
        return _pair(table, problem, a, b, asserted, " [code_compat]")

    fig1 = []
    for default, released in zip(_fig1_claims(pair), _fig1_claims(compat_pair)):
        fig1.append(default)
        released.pairs = [q for q in released.pairs if q is not None]
        if released.pairs and any(b in q.label for q in released.pairs for b in BASELINES):
            fig1.append(_compat_claim(default, released))
    fig1 += _drbo_kde_compat_claims()
    fig1 += _paper_budget_claims()
    timing = pd.read_csv(RESULTS / "sbo" / "table1_timing.csv")
    budget = json.loads((RESULTS / "sbo" / "budget_cost.json").read_text())
    return fig1 + [
        Claim(
            "7.4",
            FIG2_CLAIM,
            [pair("ackley_4c", m, b) for m in KDE for b in BASELINES],
            FIG2,
            f"MMD grids 3⁴ = 81 points for both DRBO-MMD methods (paper 4⁴ = 256 and 6⁴ = 1296); {REDUCED}; "
            f"{STABLEOPT}; {DRBO_MMD} (fig2_ackley_4c_s10_smo.csv)",
        ),
        Claim(
            "8.2",
            "Runtime (Table 1, 100 evaluations on Ackley): SBO-KDE about as cheap as StableOpt and cheaper than "
            "DRBO-MMD-MinimaxApprox and DRBO-KDE; DRBO-MMD by far the slowest",
            source=TABLE1,
            note="the paper's settings (M = 1024, raw 1024, 32 for the DRBO methods), one run per method on a "
            "2-core CPU, no spread; DRBO-MMD solves its SOCP inside the compiled program (bisection × FISTA), "
            "not with CVXPY, the cost behind the paper's 5255 s; our inner optimiser (raw screening at all M "
            "samples, then 10 × 50 Adam steps) makes SBO-KDE heavier than BoTorch's",
            checks=_table1_checks(timing),
        ),
        Claim(
            "8.2",
            "Each acquisition evaluation of SBO-KDE costs O((t² + td)M), on top of the O(t³) GP fit",
            source=BUDGET,
            note="one SBO-KDE step on Hartmann at the paper's settings (M = 1024, raw 1024, 10 × 50 Adam steps, "
            "2 × 60 MAP refit), timed at 64, 128, 256 and 350 rows, one seed",
            checks=_complexity_checks(budget),
        ),
        Claim(
            "8.3",
            "KDE L1 error on the Hartmann contexts falls with the sample size as in Table 2 (App. E)",
            source="experiments/results/sbo/table2_kde_l1.csv",
            note="20 runs per cell as the paper; contexts clipped to [0, 1] before the KDE as the paper's text, "
            "the spec and jbo do (the released code builds the KDE from unclipped contexts: that variant is in "
            "the file too); agreement means within two combined standard errors",
            checks=_table2_checks(pd.read_csv(RESULTS / "sbo" / "table2_kde_l1.csv")),
        ),
        Claim(
            "9",
            "Bayesian cumulative regret of SBO-KDE and DRBO-KDE is Õ(T^((2+D_c)/(4+D_c))); the TV-ball DRO equals "
            "its two-variable dual (Theorems 1, 2; Proposition 2)",
            untestable_reason="theorems: checked only through the unit tests of their ingredients (the closed "
            "form of the TV worst case against an LP solve, the KDE bandwidth)",
        ),
    ]


def _fig1_claims(pair) -> list[Claim]:
    """The Fig 1 claims, their pairs made by pair(problem, a, b, asserted)."""
    return [
        Claim(
            "8.1",
            "SBO-KDE and DRBO-KDE beat all baselines on the four synthetic functions (Fig 1)",
            [pair(p, m, b) for p in SYNTHETIC for m in KDE for b in BASELINES],
            FIG1,
            f"{REDUCED}; {STABLEOPT}; {DRBO_MMD}; {MINIMAX_NOTE}; {GP_UCB}",
        ),
        Claim(
            "8.1",
            "Ackley: SBO-KDE slightly ahead of DRBO-KDE (Fig 1)",
            [pair("ackley", "SBO-KDE", "DRBO-KDE")],
            FIG1,
            f"{REDUCED}; DRBO-KDE's inf-ucb Sobol points lie in [0, 1] (the released code's in [−1, 0])",
        ),
        Claim(
            "8.1",
            "Complicated Hartmann: DRBO-KDE ahead of SBO-KDE (Fig 1)",
            [pair("complicated_hartmann", "DRBO-KDE", "SBO-KDE")],
            FIG1,
            f"{REDUCED}; metric: the cumulative observed reward as its shortfall from t·F*",
        ),
        Claim(
            "8.1",
            "Modified Branin and Hartmann: SBO-KDE and DRBO-KDE nearly tied (Fig 1)",
            [pair(p, "SBO-KDE", "DRBO-KDE", COMPARABLE) for p in ("modified_branin", "hartmann")],
            FIG1,
            REDUCED,
        ),
        Claim(
            "8.1",
            "GP-UCB is surprisingly competitive on the synthetic functions (Fig 1)",
            [pair(p, "GP-UCB", b, NOT_WORSE) for p in SYNTHETIC for b in CONTEXT_AWARE_BASELINES],
            FIG1,
            f"read as: GP-UCB, which ignores the context, does at least as well as each context-aware baseline; "
            f"{REDUCED}; {GP_UCB}; {STABLEOPT}; {DRBO_MMD}",
        ),
        Claim(
            "8.1",
            "DRBO-MMD is good on Modified Branin (Fig 1)",
            [pair("modified_branin", MMD, b, NOT_WORSE) for b in ("GP-UCB", "StableOpt", MINIMAX)],
            FIG1,
            f"read as: at least as good as every other baseline there; {REDUCED}; {DRBO_MMD}",
        ),
        Claim(
            "8.1",
            "DRBO-MMD is worse on the other synthetic functions (Fig 1)",
            [pair(p, "GP-UCB", MMD) for p in ("ackley", "hartmann", "complicated_hartmann")],
            FIG1,
            f"read as: beaten by GP-UCB, the baseline that ignores the context; {REDUCED}; {DRBO_MMD}",
        ),
        Claim(
            "8.1",
            "StableOpt (too pessimistic) and DRBO-MMD-MinimaxApprox (approximation error) are poor (Fig 1)",
            [pair(p, "GP-UCB", b) for p in SYNTHETIC for b in ("StableOpt", MINIMAX)],
            FIG1,
            f"read as: beaten by GP-UCB, the baseline that ignores the context; {REDUCED}; {STABLEOPT}; {MINIMAX_NOTE}",
        ),
        Claim(
            "8.1",
            "Real-world problems: both KDE methods beat all baselines (Fig 1)",
            [pair(p, m, b) for p in REAL for m in KDE for b in BASELINES],
            FIG1,
            f"portfolio metric: the cumulative expected reward as cumulative regret against the numerical F*; "
            f"{REDUCED}; {STABLEOPT}; {DRBO_MMD}; {MINIMAX_NOTE}",
        ),
        Claim(
            "8.1",
            "Real-world problems: SBO-KDE best (Fig 1)",
            [pair(p, "SBO-KDE", "DRBO-KDE") for p in REAL],
            FIG1,
            f"SBO-KDE against DRBO-KDE (the baselines are in the claim above); {REDUCED}",
        ),
        Claim(
            "8.1",
            "Newsvendor: among the context-aware methods only SBO-KDE and DRBO-KDE beat GP-UCB (Fig 1)",
            [pair("newsvendor", m, "GP-UCB") for m in KDE]
            + [pair("newsvendor", "GP-UCB", b, NOT_WORSE) for b in CONTEXT_AWARE_BASELINES],
            FIG1,
            f"the other context-aware methods do not beat GP-UCB: GP-UCB at least as good as each; {REDUCED}; "
            f"{GP_UCB}; {STABLEOPT}; {DRBO_MMD}",
        ),
        Claim(
            "8.1",
            "Portfolio with normal contexts: DRBO-MMD comparable to DRBO-KDE (Fig 1)",
            [pair("portfolio_normal", MMD, "DRBO-KDE", COMPARABLE)],
            FIG1,
            f"{REDUCED}; {DRBO_MMD}",
        ),
    ]


# Re-runs whose methods' rows replace the first run's, in this order: fig1.py --seeds 10 --tag s10 (every
# method but DRBO-MMD, at 10 seeds; DRBO-KDE only on Ackley and Fig 2), --methods drbo_kde --seeds 10
# --tag s10_kde (DRBO-KDE at 10 seeds on the other Fig 1 problems), --methods drbo_mmd --tag smo (DRBO-MMD
# with the SMO solver of its SOCP, 5 seeds), --methods drbo_mmd --seeds 10 --tag s10_smo (the same at 10
# seeds; every problem has it)
MORE_SEEDS = ("s10", "s10_kde", "smo", "s10_smo")


def _stem(problem: str) -> str:
    """The result files' stem: fig2 for Fig 2's ackley_4c, fig1 for the rest (as experiments/sbo/fig1.py)."""
    return "fig2" if problem == "ackley_4c" else "fig1"


def _fig1(problem: str) -> pd.DataFrame:
    """Fig 1's (Fig 2's for ackley_4c) runs of a problem; where a re-run exists (fig1_<problem>_<tag>.csv,
    tags MORE_SEEDS), its methods' rows replace the earlier runs'. Seeds share their keys across the runs
    (jax.random.split is prefix-stable), so a pair with a 5-seed method would use seeds 0-4 of both."""
    stem = _stem(problem)
    reruns = [RESULTS / "sbo" / f"{stem}_{problem}_{tag}.csv" for tag in MORE_SEEDS]
    first = pd.read_csv(RESULTS / "sbo" / f"{stem}_{problem}.csv")
    return studies.replace_methods(first, *(pd.read_csv(path) for path in reruns if path.exists()))


COMPAT = "s10_compat"  # fig1.py --code-compat --seeds 10 --tag s10_compat: the baselines as the released code runs them
DC2 = ("modified_branin", "portfolio_uniform", "portfolio_normal")  # D_c = 2: code_compat changes the MMD grids
COMPAT_NOTE = (
    "code_compat baselines, as the released code runs them (fig1_<problem>_s10_compat.csv, 10 seeds, the same "
    "reduced budget): GP-UCB with σ weighted by √1.5, StableOpt minimising over the reflected box "
    "[μ̂ − 3ŝ, μ̂ − ŝ]; DRBO-MMD and MinimaxApprox are the same in both modes where D_c = 1 (their grid changes "
    "only where D_c > 1); SBO-KDE and DRBO-KDE are jbo's"
)


def _fig1_compat(problem: str, runs: pd.DataFrame):
    """(runs, missing): Fig 1's runs of a problem with the baselines code_compat changes taken from the
    code_compat runs (fig1_<problem>_s10_compat*.csv), and the changed baselines it lacks (DRBO-MMD where D_c = 2 ran only in jbo's mode; on
    D_c = 1 problems the MMD methods are the same in both modes). (None, None) without the compat file."""
    paths = sorted((RESULTS / "sbo").glob(f"fig1_{problem}_{COMPAT}*.csv"))  # also _mmd: a later re-run
    if not paths:
        return None, None
    released = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
    released = released[released.method.isin(BASELINES)]
    changed = {"GP-UCB", "StableOpt"} | ({MMD, MINIMAX} if problem in DC2 else set())
    table = studies.replace_methods(runs, released)
    return table, changed - set(released.method)


def _compat_claim(default: Claim, released: Claim) -> Claim:
    """The claim graded again with the released code's baselines, on the pairs that have them; the note
    gives the verdict of jbo's baselines on the same pairs, and on all of the claim's pairs."""
    graded = [q.label.removesuffix(" [code_compat]") for q in released.pairs]
    same = Claim(default.number, default.text, [q for q in default.pairs if q.label in graded])
    v_all, v_same, v_code = (grade([c])[1][0] for c in (default, same, released))
    problems = list(dict.fromkeys(label.split(":")[0] for label in graded))
    everywhere = list(dict.fromkeys(q.label.split(":")[0] for q in default.pairs))
    left = [q.label for q in default.pairs if q.label not in graded and q.label.split(":")[0] in problems]
    where = "" if problems == everywhere else f" (graded on {', '.join(problems)} only: the other problems not re-run)"
    return Claim(
        released.number,
        f"{released.text}, with the released code's baselines{where}",
        released.pairs,
        "experiments/results/sbo/fig1_<problem>_s10_compat.csv",
        f"on the same pairs, verdict with jbo's (the spec's) baselines: {v_same}; with the released code's: "
        f"{v_code} (jbo's baselines on all the claim's pairs: {v_all}); {COMPAT_NOTE}"
        + (f"; not graded in this mode (an MMD method not re-run where D_c = 2): {', '.join(left)}" if left else ""),
    )


def _drbo_kde_compat_claims() -> list[Claim]:
    """Ackley: SBO-KDE against DRBO-KDE as the released code runs it (inf-ucb points in [−1, 0], u_low
    detached), where that run exists."""
    path = RESULTS / "sbo" / f"fig1_ackley_{COMPAT}_drbo.csv"
    if not path.exists():
        return []
    runs = _fig1("ackley")
    fa = _final(runs, "ackley", "SBO-KDE")
    fb = _final(pd.read_csv(path), "ackley", "DRBO-KDE")
    return [
        Claim(
            "8.1",
            "Ackley: SBO-KDE slightly ahead of DRBO-KDE (Fig 1), with DRBO-KDE as the released code runs it",
            [Pair("Ackley: SBO-KDE vs DRBO-KDE [code_compat]", *paired(fa, fb))],
            "experiments/results/sbo/fig1_ackley_s10_compat_drbo.csv",
            f"{REDUCED}; DRBO-KDE with code_compat: its inf-ucb Sobol points in [−1, 0] and u_low detached",
        )
    ]


FIG2_CLAIM = "Ackley with a 4-D context: SBO-KDE and DRBO-KDE still best (Fig 2)"
PAPER_BUDGET = "paper_h100"  # fig1.py at the paper's settings on one H100, one file per command
PAPER_BUDGET_NOTE = (
    "the paper's budget: T = 350 (n0 = 10), M = 1024 KDE samples and inner Sobol points, raw screening 1024 "
    "(32 for DRBO-KDE), 10 starts (5 for DRBO-KDE) × 50 projected-Adam steps, run on one H100 (jax 0.11.2): "
    "Hartmann at 5 seeds (the paper's count: below six seeds no comparison can come out better or worse) by "
    "experiments/gpu_checks.sh, the other problems at 10 seeds by experiments/sbo/paper_budget.py; on Hartmann "
    "DRBO-MMD did not finish within the device time (over 140 s with its compile on the H100), so it has no "
    "pair; MinimaxApprox on the paper's grid of 1024 points; {STABLEOPT}; {GP_UCB}"
)


def _paper_budget_claims() -> list[Claim]:
    """The Fig 1 and Fig 2 claims graded again from the paper-budget runs (fig1_<problem>_paper_h100*.csv,
    fig2_ackley_4c_paper_h100*.csv), on the problems and methods they hold."""
    runs = {}
    for problem in [*SYNTHETIC, *REAL, "ackley_4c"]:
        paths = sorted((RESULTS / "sbo").glob(f"{_stem(problem)}_{problem}_{PAPER_BUDGET}*.csv"))
        if paths:
            runs[problem] = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)

    def pair(problem, a, b, asserted=BETTER):
        table = runs.get(problem)
        if table is None or not {a, b} <= set(table.method):
            return None
        return _pair(table, problem, a, b, asserted, " [paper budget]")

    out = []
    for claim in _fig1_claims(pair):
        claim.pairs = [q for q in claim.pairs if q is not None]
        if claim.pairs:
            where = ", ".join(dict.fromkeys(q.label.split(":")[0] for q in claim.pairs))
            out.append(
                Claim(
                    claim.number,
                    f"{claim.text}, at the paper's budget ({where} only)",
                    claim.pairs,
                    f"experiments/results/sbo/fig1_<problem>_{PAPER_BUDGET}*.csv",
                    PAPER_BUDGET_NOTE.format(STABLEOPT=STABLEOPT, GP_UCB=GP_UCB),
                )
            )
    fig2 = [q for q in (pair("ackley_4c", m, b) for m in KDE for b in BASELINES) if q is not None]
    if fig2:
        out.append(
            Claim(
                "7.4",
                f"{FIG2_CLAIM}, at the paper's budget",
                fig2,
                f"experiments/results/sbo/fig2_ackley_4c_{PAPER_BUDGET}*.csv",
                PAPER_BUDGET_NOTE.format(STABLEOPT=STABLEOPT, GP_UCB=GP_UCB),
            )
        )
    return out


def _pair(table: pd.DataFrame, problem: str, a: str, b: str, asserted, mode: str = "") -> Pair:
    """A against B on a problem's runs, by the paper's metric at each seed's last step; `mode` tags the label."""
    fa, fb = (_final(table, problem, m) for m in (a, b))
    return Pair(f"{NAMES[problem]}: {a} vs {b}{mode}", *paired(fa, fb), asserted)


def _final(df: pd.DataFrame, problem: str, method: str) -> pd.Series:
    """The paper's metric at each seed's last step, lower is better (see the module docstring)."""
    rows = df[df.method == method]
    if problem == "complicated_hartmann":  # cumulative observed reward, as its shortfall from t·F*
        # the action's expected value: "expected_value" in the first runs' files, "value" in later ones
        value = df["value"] if "value" in df else df["expected_value"]
        if "expected_value" in df:
            value = df["expected_value"].fillna(value)
        f_star = (df.regret + value).median()
        rows = rows.assign(shortfall=rows.step * f_star - rows.cumulative_reward)
        return final_per_seed(rows, "shortfall")
    return final_per_seed(rows, "cumulative_regret")


def _table2_checks(table: pd.DataFrame) -> list[tuple[str, bool]]:
    """Each Table 2 cell (clipped contexts, jbo's convention) against the paper's mean ± standard error."""
    rows = table[table.contexts == "clipped"]
    return [
        (
            f"{r.distribution}, {r.samples} samples: L1 {r.l1_mean:.3f} ± {r.l1_se:.3f} against the paper's "
            f"{r.paper_l1:.3f} ± {r.paper_pm:.3f} ({r.diff_in_se:+.1f} combined s.e.)",
            abs(r.diff_in_se) <= 2.0,
        )
        for r in rows.itertuples()
    ]


def _table1_checks(timing: pd.DataFrame) -> list[tuple[str, bool]]:
    """Table 1's order of the run times (seconds per 100 evaluations, measured against the paper's)."""
    s = timing.set_index("method").run_s
    paper = timing.set_index("method").paper_s

    def vs(a, b):
        return f"{a} {s[a]:.0f} s vs {b} {s[b]:.0f} s (paper {paper[a]:.1f} vs {paper[b]:.1f} s)"

    def cheaper(b):
        ok = s["SBO-KDE"] < s[b]
        return f"{vs('SBO-KDE', b)}: SBO-KDE {'cheaper' if ok else 'dearer (the paper: cheaper)'}", ok

    ratio = s["SBO-KDE"] / s["StableOpt"]
    others = [m for m in s.index if m != MMD]
    slower = [m for m in others if s[m] >= s[MMD]]
    return [
        (f"{vs('SBO-KDE', 'StableOpt')}: within a factor of two ({ratio:.2f}×)", 0.5 <= ratio <= 2.0),
        cheaper(MINIMAX),
        cheaper("DRBO-KDE"),
        (
            f"DRBO-MMD {s[MMD]:.0f} s (paper {paper[MMD]:.0f} s) the slowest"
            + (f": slower are {', '.join(f'{m} {s[m]:.0f} s' for m in slower)}" if slower else ""),
            not slower,
        ),
    ]


def _complexity_checks(budget: dict) -> list[tuple[str, bool]]:
    """Cost slope per step in the rows held (log-log least squares): the O(t²M) acquisition work, not the
    O(t³) fit, dominates at the paper's M, so the slope is at most about 2 (2.3 allowed)."""
    rows = np.array([float(r) for r in budget["s_per_step"]])
    secs = np.array(list(budget["s_per_step"].values()), float)
    slope = np.polyfit(np.log(rows), np.log(secs), 1)[0]
    span = f"{rows.min():.0f} → {rows.max():.0f} rows: {secs.min():.2f} → {secs.max():.2f} s"
    return [(f"SBO-KDE's time per step grows with slope {slope:.2f} in t ({span}; O(t²M): at most 2.3)", slope <= 2.3)]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    table = write(PAPER, claims())
    print(table[["claim", "comparison", "outcome", "holds"]].to_string())
