"""SBO-KDE / DRBO-KDE (Huang et al., AAAI 2024): every claim of spec sections 7.4, 8 and 9 graded by the one
verdict rule (jbo.verdict) from the committed result files (experiments/results/sbo_kde/<figure>/, the figures of
experiments/sbo_kde/figures.py), each comparison read through the paper's own
phrase (jbo.verdict.PHRASES). Writes sbo_kde.{csv,md} and sbo_kde_reading.csv (experiments/results/verdicts/
with --update).

    python experiments/verdicts/run.py --update sbo_kde

Metric (the paper's Figs 1 and 2), at each seed's last step, lower is better, compared on the log10 scale:
cumulative regret; for Complicated Hartmann the cumulative observed reward, taken as its shortfall
t·F* − Σ f(x_t, c_t); for the two portfolio problems the cumulative expected reward, taken as the cumulative
regret against the numerically maximised F*. Both are the paper's quantity minus a constant common to every
method of the problem (F* times the step), so each seed's order of two methods is the paper's; the shortfall
and the regret are positive on every final row, so the factor-of-two margin of "comparable" applies.

Settings: the paper states M = 1024 KDE samples (and 1024 inner Sobol points), raw screening 1024 (32 for the
DRBO methods), five seeds (100-104), n0 = 10 and 100 evaluations for Table 1; it does not state the budget
T of Figs 1 and 2: T = 350 is the released code's default. The Fig 1 and Fig 2 runs graded first are ours,
reduced: T = 60, M = 128, raw 256, 10 seeds (REDUCED); each such claim's scope names that budget, and where
the run at the released code's T = 350 (fig1_<problem>_paper_h100*.csv) grades the same claim otherwise,
its verdict is in the scope as well.

Where the code_compat re-run of the baselines exists (fig1.py --code-compat --tag s10_compat: GP-UCB with
√1.5, StableOpt on the reflected box, and the MMD methods' diagonal grid where D_c = 2 if they were re-run,
as the released code runs them), every Fig 1 claim that compares against a baseline is graded a second time with
those baselines in place of jbo's (the spec's), the KDE methods unchanged; its note names the verdict in
each mode.

Where the run at the released code's budget exists (fig1.py at T = 350, M = 1024, raw 1024, 10 x 50 Adam
steps, 5 or 10 seeds, on one H100: fig1_<problem>_paper_h100*.csv), every Fig 1 claim with a pair on that
problem is graded a third time from it, on the methods it ran.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
from common import (
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
FIG1 = "experiments/results/sbo_kde/fig1/fig1_<problem>.csv"
FIG2 = "experiments/results/sbo_kde/fig2/fig2_ackley_4c.csv"
TABLE1 = "experiments/results/sbo_kde/table1/table1_timing.csv"
REPEATS = "experiments/results/sbo_kde/table1_repeats/table1_repeats.csv"
STEP_COST = "experiments/results/sbo_kde/step_cost/step_cost.csv"
BUDGET = "experiments/results/sbo_kde/budget_cost/budget_cost.json"
TABLE2 = "experiments/results/sbo_kde/table2/table2_kde_l1.csv"
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

REDUCED_SCOPE = "T = 60, M = 128, 10 seeds (ours; the paper's M = 1024 and 5 seeds, the released code's T = 350)"
REDUCED = (
    "reduced budget (ours): T = 60 evaluations (n0 = 10 + 50 steps; the paper does not state T, the released "
    "code's default is 350), M = 128 KDE samples and inner Sobol points (the paper's 1024), raw screening 256 "
    "(the paper's 1024; 32 for DRBO-KDE and DRBO-MMD as in the paper), 10 starts (5 for the DRBO methods) × 30 "
    "projected-Adam steps instead of BoTorch's L-BFGS-B restarts; "
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
    "grid 128 (the paper's 1024)"
)
GP_UCB = "GP-UCB multiplies σ by 1.5 as the paper says (the released code: √1.5)"

# the paper's sentences (§4.2 on Fig 1(a), §4.3 on Fig 1(b), App. D on Fig 2, App. E), verbatim
Q_SYNTH = (
    "We can observe that the proposed algorithms, SBO-KDE and DRBO-KDE, outperform all the other baselines on "
    "the synthetic functions."
)
Q_ACKLEY = "In the Ackley function, SBO-KDE performs slightly better than DRBO-KDE"
Q_COMPLICATED = (
    "However, in the Complicated Hartmann function with a more complex context distribution, DRBO-KDE performs better."
)
Q_CLOSE = (
    "In the Modified Branin and original Hartmann functions, the performance of SBO-KDE and DRBO-KDE is very close."
)
Q_GP_UCB = (
    "It is interesting to note that GP-UCB, which does not consider context variable, has an acceptable performance."
)
Q_MMD_GOOD = "DRBO-MMD performs well in the Modified Branin function"
Q_MMD_WORSE = "DRBO-MMD performs well in the Modified Branin function but performs worse in the other functions"
Q_POOR = (
    "StableOpt performs poorly because the robust objective is too pessimistic. DRBO-MMD-MinimaxApprox also has "
    "poor performance"
)
Q_REAL = "SBO-KDE and DRBO-KDE still outperform all the other baselines, with SBO-KDE demonstrating better performance."
Q_NEWSVENDOR = (
    "Among the methods that consider context variable in the newsvendor problem, only SBO-KDE and DRBO-KDE "
    "outperform GP-UCB."
)
Q_PORTFOLIO = "For portfolio optimization with a normal context distribution, DRBO-MMD is competitive with DRBO-KDE"
Q_APP_E = (
    "The last two sub-figures of Figure1(a) in the main paper have shown that SBO-KDE outperforms DRBO-KDE for "
    "the normal distribution, while vice versa for the complicated distribution."
)
FIG2_CLAIM = "Ackley with a 4-D context: SBO-KDE and DRBO-KDE against every baseline (Fig 2)"
Q_FIG2 = "The result is presented in Figure 2, showing that SBO-KDE and DRBO-KDE still outperform other methods."


def claims() -> list[Claim]:
    runs = {p: _fig1(p) for p in {**SYNTHETIC, **REAL}}
    runs["ackley_4c"] = _fig1("ackley_4c")

    def pair(problem, a, b, phrase="outperforms"):
        return _pair(runs[problem], problem, a, b, phrase)

    compat = {p: _fig1_compat(p, runs[p]) for p in {**SYNTHETIC, **REAL}}

    def compat_pair(problem, a, b, phrase="outperforms"):
        """The pair with the released code's baselines, None where the compat run lacks one of them."""
        table, missing = compat[problem]
        if table is None or {a, b} & missing:
            return None
        return _pair(table, problem, a, b, phrase, " [code_compat]")

    budget = _paper_budget_claims()
    fig1 = []
    for default, released in zip(_fig1_claims(pair), _fig1_claims(compat_pair)):
        _with_budget(default, budget)
        fig1.append(default)
        released.pairs = [q for q in released.pairs if q is not None]
        if released.pairs and any(b in q.label for q in released.pairs for b in BASELINES):
            fig1.append(_compat_claim(default, released))
    fig1 += _drbo_kde_compat_claims()
    fig1 += [claim for _, claim in budget]
    timing = pd.read_csv(RESULTS / PAPER / "table1" / "table1_timing.csv")
    repeats = pd.read_csv(RESULTS / PAPER / "table1_repeats" / "table1_repeats.csv")
    steps = pd.read_csv(RESULTS / PAPER / "step_cost" / "step_cost.csv")
    table2 = pd.read_csv(RESULTS / PAPER / "table2" / "table2_kde_l1.csv")
    return fig1 + [
        Claim(
            "7.4",
            FIG2_CLAIM,
            [pair("ackley_4c", m, b) for m in KDE for b in BASELINES],
            FIG2,
            f"MMD grids 3⁴ = 81 points for both DRBO-MMD methods (the paper's 4⁴ = 256 and 6⁴ = 1296); {REDUCED}; "
            f"{STABLEOPT}; {DRBO_MMD} (fig2_ackley_4c_s10_smo.csv)",
            quote=Q_FIG2,
            where="App. D, Fig 2",
            scope=REDUCED_SCOPE,
        ),
        _table1_claim(timing, repeats),
        _complexity_claim(steps, json.loads((RESULTS / PAPER / "budget_cost" / "budget_cost.json").read_text())),
        Claim(
            "8.3",
            "each cell of Table 2 (L1 distance of the KDE of n contexts to the true density, Hartmann's normal and "
            "complicated contexts, n = 10, 100, 200, 300) within two combined standard errors of the paper's",
            source=TABLE2,
            note="20 runs per cell as the paper; contexts clipped to [0, 1] before the KDE as the paper's text, "
            "the spec and jbo do (the released code builds the KDE from unclipped contexts: that variant is in "
            "the file too); the paper's ± taken as a standard error",
            checks=_table2_checks(table2),
            quote="Table 2 gives the average results of 20 independent runs under different number of samples for KDE.",
            where="App. E, Table 2",
            scope="20 runs per cell (the paper's)",
        ),
        Claim(
            "8.3",
            "the KDE's L1 error is greater under the complicated contexts than under the normal ones, at every n",
            source=TABLE2,
            note="clipped contexts (jbo's); the unclipped variant in the same file is greater at every n as well",
            checks=_greater_checks(table2),
            quote="We can observe a greater discrepancy under the complicated distribution.",
            where="App. E, Table 2",
            scope="20 runs per cell (the paper's)",
        ),
        Claim(
            "9",
            "Bayesian cumulative regret of SBO-KDE and DRBO-KDE is Õ(T^((2+D_c)/(4+D_c))); the TV-ball DRO equals "
            "its two-variable dual (Theorems 1, 2; Proposition 2)",
            untestable_reason="theorems: checked only through the unit tests of their ingredients (the closed "
            "form of the TV worst case against an LP solve, the KDE bandwidth)",
            quote="our bound increases to O(T^((2+D_c)/(4+D_c))), which comes from the estimation error of KDE "
            "under the unknown context distribution setting. However, the bound is still sub-linear",
            where="§3.1, Theorem 1; §3.2, Theorem 2, Proposition 2",
            scope="no runs: unit tests of the ingredients",
        ),
    ]


def _fig1_claims(pair) -> list[Claim]:
    """The Fig 1 claims, their pairs made by pair(problem, a, b, phrase)."""
    not_poor = {  # the context-aware baselines the paper calls poor on each synthetic function (§4.2)
        p: [b for b in CONTEXT_AWARE_BASELINES if not (b == MMD and p == "modified_branin")] for p in SYNTHETIC
    }
    return [
        Claim(
            "8.1",
            "SBO-KDE and DRBO-KDE against every baseline on the four synthetic functions (Fig 1)",
            [pair(p, m, b) for p in SYNTHETIC for m in KDE for b in BASELINES],
            FIG1,
            f"{REDUCED}; {STABLEOPT}; {DRBO_MMD}; {MINIMAX_NOTE}; {GP_UCB}",
            quote=Q_SYNTH,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "Ackley: SBO-KDE against DRBO-KDE (Fig 1)",
            [pair("ackley", "SBO-KDE", "DRBO-KDE", "better than")],
            FIG1,
            f"'slightly better' read as 'better than' (the table has no phrase for a slight advantage); {REDUCED}; "
            "DRBO-KDE's inf-ucb Sobol points lie in [0, 1] (the released code's in [−1, 0])",
            quote=Q_ACKLEY,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "Complicated Hartmann: DRBO-KDE against SBO-KDE (Fig 1)",
            [pair("complicated_hartmann", "DRBO-KDE", "SBO-KDE", "better than")],
            FIG1,
            f"{REDUCED}; metric: the cumulative observed reward as its shortfall from t·F*",
            quote=Q_COMPLICATED,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "Modified Branin and Hartmann: SBO-KDE against DRBO-KDE (Fig 1)",
            [pair(p, "SBO-KDE", "DRBO-KDE", "comparable to") for p in ("modified_branin", "hartmann")],
            FIG1,
            f"'very close' read as 'comparable to'; {REDUCED}",
            quote=Q_CLOSE,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.3",
            "Hartmann (normal contexts): SBO-KDE against DRBO-KDE; Complicated Hartmann: DRBO-KDE against SBO-KDE "
            "(Fig 1)",
            [
                pair("hartmann", "SBO-KDE", "DRBO-KDE"),
                pair("complicated_hartmann", "DRBO-KDE", "SBO-KDE"),
            ],
            FIG1,
            "the Hartmann half restates §4.2's Hartmann panel, which §4.2 calls 'very close' (graded as comparable "
            f"in its own row): the two readings cannot both hold on the same runs; {REDUCED}",
            quote=Q_APP_E,
            where="App. E, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "GP-UCB, which ignores the context, against the context-aware baselines the paper calls poor on each "
            "synthetic function: StableOpt and MinimaxApprox on all four, DRBO-MMD on all but Modified Branin (Fig 1)",
            [pair(p, "GP-UCB", b, "no worse than") for p in SYNTHETIC for b in not_poor[p]],
            FIG1,
            "'an acceptable performance' is not a phrase of the table; the paragraph sets it beside the baselines it "
            "calls poor (StableOpt, MinimaxApprox, and DRBO-MMD outside Modified Branin, where it 'performs well'), "
            "and says the KDE methods outperform GP-UCB, so the nearest reading is 'no worse than' each of those "
            f"baselines (not 'competitive' with the KDE methods); {REDUCED}; {GP_UCB}; {STABLEOPT}; {DRBO_MMD}",
            quote=Q_GP_UCB,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "Modified Branin: DRBO-MMD against the other baselines (Fig 1)",
            [pair("modified_branin", MMD, b, "at least as good as") for b in ("GP-UCB", "StableOpt", MINIMAX)],
            FIG1,
            "'performs well' is not a phrase of the table; read as 'at least as good as' every other baseline "
            f"there (the KDE methods are in the first claim); {REDUCED}; {DRBO_MMD}",
            quote=Q_MMD_GOOD,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "Ackley, Hartmann, Complicated Hartmann: DRBO-MMD against GP-UCB (Fig 1)",
            [pair(p, MMD, "GP-UCB", "worse than") for p in ("ackley", "hartmann", "complicated_hartmann")],
            FIG1,
            "'worse in the other functions' read as worse than GP-UCB, the baseline that ignores the context; "
            f"{REDUCED}; {DRBO_MMD}",
            quote=Q_MMD_WORSE,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "StableOpt and DRBO-MMD-MinimaxApprox against GP-UCB on the four synthetic functions (Fig 1)",
            [pair(p, b, "GP-UCB", "worse than") for p in SYNTHETIC for b in ("StableOpt", MINIMAX)],
            FIG1,
            "'performs poorly' read as worse than GP-UCB, the baseline that ignores the context; "
            f"{REDUCED}; {STABLEOPT}; {MINIMAX_NOTE}",
            quote=Q_POOR,
            where="§4.2, Fig 1(a)",
        ),
        Claim(
            "8.1",
            "Real-world problems: SBO-KDE and DRBO-KDE against every baseline (Fig 1)",
            [pair(p, m, b) for p in REAL for m in KDE for b in BASELINES],
            FIG1,
            f"portfolio metric: the cumulative expected reward as cumulative regret against the numerical F*; "
            f"{REDUCED}; {STABLEOPT}; {DRBO_MMD}; {MINIMAX_NOTE}",
            quote=Q_REAL,
            where="§4.3, Fig 1(b)",
        ),
        Claim(
            "8.1",
            "Real-world problems: SBO-KDE against DRBO-KDE (Fig 1)",
            [pair(p, "SBO-KDE", "DRBO-KDE", "better than") for p in REAL],
            FIG1,
            f"SBO-KDE against DRBO-KDE (the baselines are in the claim above); {REDUCED}",
            quote=Q_REAL,
            where="§4.3, Fig 1(b)",
        ),
        Claim(
            "8.1",
            "Newsvendor: SBO-KDE and DRBO-KDE against GP-UCB, and GP-UCB against the other context-aware methods "
            "(Fig 1)",
            [pair("newsvendor", m, "GP-UCB") for m in KDE]
            + [pair("newsvendor", "GP-UCB", b, "no worse than") for b in CONTEXT_AWARE_BASELINES],
            FIG1,
            f"'only' read as: the other context-aware methods do not outperform GP-UCB, so GP-UCB is no worse than "
            f"each; {REDUCED}; {GP_UCB}; {STABLEOPT}; {DRBO_MMD}",
            quote=Q_NEWSVENDOR,
            where="§4.3, Fig 1(b)",
        ),
        Claim(
            "8.1",
            "Portfolio with normal contexts: DRBO-MMD against DRBO-KDE (Fig 1)",
            [pair("portfolio_normal", MMD, "DRBO-KDE", "competitive with")],
            FIG1,
            f"{REDUCED}; {DRBO_MMD}",
            quote=Q_PORTFOLIO,
            where="§4.3, Fig 1(b)",
        ),
    ]


# Re-runs whose methods' rows replace the first run's, in this order: fig1.py --seeds 10 --tag s10 (every
# method but DRBO-MMD, at 10 seeds; DRBO-KDE only on Ackley and Fig 2), --methods drbo_kde --seeds 10
# --tag s10_kde (DRBO-KDE at 10 seeds on the other Fig 1 problems), --methods drbo_mmd --tag smo (DRBO-MMD
# with the SMO solver of its SOCP, 5 seeds), --methods drbo_mmd --seeds 10 --tag s10_smo (the same at 10
# seeds; every problem has it)
MORE_SEEDS = ("s10", "s10_kde", "smo", "s10_smo")


def _stem(problem: str) -> str:
    """The result files' stem and their figure's folder: fig2 for Fig 2's ackley_4c, fig1 for the rest (as
    experiments/sbo_kde/fig1.py)."""
    return "fig2" if problem == "ackley_4c" else "fig1"


def _fig1(problem: str) -> pd.DataFrame:
    """Fig 1's (Fig 2's for ackley_4c) runs of a problem; where a re-run exists (fig1_<problem>_<tag>.csv,
    tags MORE_SEEDS), its methods' rows replace the earlier runs'. Seeds share their keys across the runs
    (jax.random.split is prefix-stable), so a pair with a 5-seed method would use seeds 0-4 of both."""
    stem = _stem(problem)
    reruns = [RESULTS / PAPER / stem / f"{stem}_{problem}_{tag}.csv" for tag in MORE_SEEDS]
    first = pd.read_csv(RESULTS / PAPER / stem / f"{stem}_{problem}.csv")
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
    """(runs, missing): Fig 1's runs of a problem with the baselines code_compat alters taken from the
    code_compat runs (fig1_<problem>_s10_compat*.csv), and those of them the runs lack (DRBO-MMD where D_c = 2
    ran only in jbo's mode; on D_c = 1 problems the MMD methods are the same in both modes).
    (None, None) without the compat file."""
    paths = sorted((RESULTS / PAPER / "fig1").glob(f"fig1_{problem}_{COMPAT}*.csv"))  # also _mmd: a later re-run
    if not paths:
        return None, None
    released = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
    released = released[released.method.isin(BASELINES)]
    changed = {"GP-UCB", "StableOpt"} | ({MMD, MINIMAX} if problem in DC2 else set())
    table = studies.replace_methods(runs, released)
    return table, changed - set(released.method)


def _verdict(claim: Claim) -> str:
    return grade([claim])[1][0]


def _compat_claim(default: Claim, released: Claim) -> Claim:
    """The claim graded again with the released code's baselines, on the pairs that have them; the note
    gives the verdict of jbo's baselines on the same pairs, and on all of the claim's pairs."""
    graded = [q.label.removesuffix(" [code_compat]") for q in released.pairs]
    same = Claim(default.number, default.text, [q for q in default.pairs if q.label in graded])
    v_all, v_same, v_code = (_verdict(c) for c in (default, same, released))
    problems = list(dict.fromkeys(label.split(":")[0] for label in graded))
    everywhere = list(dict.fromkeys(q.label.split(":")[0] for q in default.pairs))
    left = [q.label for q in default.pairs if q.label not in graded and q.label.split(":")[0] in problems]
    where = "" if problems == everywhere else f" (graded on {', '.join(problems)} only: the other problems not re-run)"
    return Claim(
        released.number,
        f"{released.text}, with the released code's baselines{where}",
        released.pairs,
        "experiments/results/sbo_kde/fig1/fig1_<problem>_s10_compat.csv",
        f"on the same pairs, verdict with jbo's (the spec's) baselines: {v_same}; with the released code's: "
        f"{v_code} (jbo's baselines on all the claim's pairs: {v_all}); {COMPAT_NOTE}"
        + (f"; not graded in this mode (an MMD method not re-run where D_c = 2): {', '.join(left)}" if left else ""),
        quote=default.quote,
        where=default.where,
        scope=f"{REDUCED_SCOPE}; the released code's baselines",
    )


def _drbo_kde_compat_claims() -> list[Claim]:
    """Ackley: SBO-KDE against DRBO-KDE as the released code runs it (inf-ucb points in [−1, 0], u_low
    detached), where that run exists."""
    path = RESULTS / PAPER / "fig1" / f"fig1_ackley_{COMPAT}_drbo.csv"
    if not path.exists():
        return []
    runs = _fig1("ackley")
    fa = _final(runs, "ackley", "SBO-KDE")
    fb = _final(pd.read_csv(path), "ackley", "DRBO-KDE")
    return [
        Claim(
            "8.1",
            "Ackley: SBO-KDE against DRBO-KDE as the released code runs it (Fig 1)",
            [Pair("Ackley: SBO-KDE vs DRBO-KDE [code_compat]", *paired(fa, fb), "better than")],
            "experiments/results/sbo_kde/fig1/fig1_ackley_s10_compat_drbo.csv",
            f"{REDUCED}; DRBO-KDE with code_compat: its inf-ucb Sobol points in [−1, 0] and u_low detached",
            quote=Q_ACKLEY,
            where="§4.2, Fig 1(a)",
            scope=f"{REDUCED_SCOPE}; the released code's DRBO-KDE",
        )
    ]


PAPER_BUDGET = "paper_h100"  # fig1.py at the released code's T = 350 on one H100, one file per command
PAPER_BUDGET_NOTE = (
    "the released code's budget T = 350 (n0 = 10; the paper does not state T) with the paper's M = 1024 KDE "
    "samples and inner Sobol points, raw screening 1024 (32 for DRBO-KDE), 10 starts (5 for DRBO-KDE) × 50 "
    "projected-Adam steps, run on one H100 (jax 0.11.2): Hartmann at the paper's 5 seeds (below six seeds no "
    "comparison can come out better or worse) by experiments/engine/gpu_checks.sh, the other problems at 10 seeds (SBO-KDE "
    "and StableOpt on Ackley-4c at 5: 10 did not fit one H100) by "
    "experiments/sbo_kde/paper_budget.py; on Hartmann DRBO-MMD did not finish within the device time (over 140 s "
    "with its compile on the H100), so it has no pair, and on Ackley-4c neither MMD method ran (MinimaxApprox's "
    "6⁴-point grid ran out of the H100's memory while compiling); MinimaxApprox on the paper's grid of 1024 points; "
    "{STABLEOPT}; {GP_UCB}"
)


def _paper_budget_claims() -> list[tuple[str, Claim]]:
    """(the reduced claim's text, the claim graded again) from the runs at the released code's budget
    (fig1_<problem>_paper_h100*.csv, fig2_ackley_4c_paper_h100*.csv), on the problems and methods they hold."""
    runs = {}
    for problem in [*SYNTHETIC, *REAL, "ackley_4c"]:
        stem = _stem(problem)
        paths = sorted((RESULTS / PAPER / stem).glob(f"{stem}_{problem}_{PAPER_BUDGET}*.csv"))
        if paths:
            runs[problem] = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)

    def pair(problem, a, b, phrase="outperforms"):
        table = runs.get(problem)
        if table is None or not {a, b} <= set(table.method):
            return None
        return _pair(table, problem, a, b, phrase, " [T = 350]")

    def scope(claim):
        problems = {q.label.split(":")[0] for q in claim.pairs}
        seeds = sorted({len(q.a) for q in claim.pairs})
        n = "–".join(str(s) for s in (seeds[0], seeds[-1]) if s) if seeds[0] != seeds[-1] else str(seeds[0])
        return f"T = 350 (the released code's), M = 1024, {n} seeds; {', '.join(sorted(problems))} only"

    note = PAPER_BUDGET_NOTE.format(STABLEOPT=STABLEOPT, GP_UCB=GP_UCB)
    out = []
    for claim in _fig1_claims(pair):
        text = claim.text
        claim.pairs = [q for q in claim.pairs if q is not None]
        if claim.pairs:
            where = ", ".join(dict.fromkeys(q.label.split(":")[0] for q in claim.pairs))
            claim.text = f"{text}, at the released code's T = 350 ({where} only)"
            claim.source = f"experiments/results/sbo_kde/fig1/fig1_<problem>_{PAPER_BUDGET}*.csv"
            claim.note, claim.scope = note, scope(claim)
            out.append((text, claim))
    fig2 = [q for q in (pair("ackley_4c", m, b) for m in KDE for b in BASELINES) if q is not None]
    if fig2:
        claim = Claim(
            "7.4",
            f"{FIG2_CLAIM}, at the released code's T = 350",
            fig2,
            f"experiments/results/sbo_kde/fig2/fig2_ackley_4c_{PAPER_BUDGET}*.csv",
            note,
            quote=Q_FIG2,
            where="App. D, Fig 2",
        )
        claim.scope = scope(claim)
        out.append((FIG2_CLAIM, claim))
    return out


def _with_budget(claim: Claim, budget: list[tuple[str, Claim]]) -> None:
    """The reduced claim's scope: its budget and seeds and, where the run at the released code's T = 350
    grades the claim, the verdicts at T = 60 and at T = 350 on the pairs that run holds, when they differ
    (a claim that holds on them only at T = 60 says so)."""
    claim.scope = REDUCED_SCOPE
    for text, other in budget:
        if text != claim.text:
            continue
        labels = {q.label.removesuffix(" [T = 350]") for q in other.pairs}
        same = Claim(claim.number, claim.text, [q for q in claim.pairs if q.label in labels])
        v, w = _verdict(same), _verdict(other)
        if v == w:
            continue
        only = "holds at T = 60 only; " if v == "reproduced" and w == "not reproduced" else ""
        where = " and ".join(dict.fromkeys(q.label.split(":")[0] for q in other.pairs))
        seeds = "–".join(sorted({str(len(q.a)) for q in other.pairs}))
        claim.scope = (
            f"{only}{REDUCED_SCOPE}; on its {where} pairs: {v} at T = 60, {w} at the released code's T = 350 "
            f"(M = 1024, {seeds} seeds)"
        )


def _pair(table: pd.DataFrame, problem: str, a: str, b: str, phrase: str, mode: str = "") -> Pair:
    """A against B on a problem's runs, by the paper's metric at each seed's last step, read through the
    paper's phrase; `mode` tags the label."""
    fa, fb = (_final(table, problem, m) for m in (a, b))
    return Pair(f"{NAMES[problem]}: {a} vs {b}{mode}", *paired(fa, fb), phrase)


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


def _greater_checks(table: pd.DataFrame) -> list[tuple[str, bool]]:
    """At each n, the complicated contexts' L1 error above the normal ones' by more than two combined s.e."""
    rows = table[table.contexts == "clipped"].set_index(["distribution", "samples"])
    out = []
    for n in sorted(rows.index.get_level_values("samples").unique()):
        c, m = rows.loc[("complicated", n)], rows.loc[("normal", n)]
        gap = (c.l1_mean - m.l1_mean) / np.hypot(c.l1_se, m.l1_se)
        out.append(
            (
                f"{n} samples: complicated {c.l1_mean:.3f} ± {c.l1_se:.3f} against normal {m.l1_mean:.3f} ± "
                f"{m.l1_se:.3f} ({gap:+.1f} combined s.e.; greater: above +2)",
                gap > 2.0,
            )
        )
    return out


def _table1_claim(timing: pd.DataFrame, repeats: pd.DataFrame) -> Claim:
    """Table 1's order of the run times (App. C): the one-run timings of every method (table1_timing.csv)
    and, for SBO-KDE against MinimaxApprox, alternating repeats (table1_repeats.csv)."""
    evals = int(repeats.evaluations.iloc[0])
    n = repeats.repeat.nunique()
    return Claim(
        "8.2",
        "Table 1's order of the run times: GP-UCB cheapest; SBO-KDE within a factor of two of StableOpt "
        '("a similar time complexity"); SBO-KDE cheaper than DRBO-KDE ("a bit more expensive than SBO-KDE") '
        'and than MinimaxApprox (Table 1: 30.57 s against 119.04 s); DRBO-MMD the slowest ("very expensive")',
        source=f"{TABLE1}, {REPEATS}",
        note="the paper's M = 1024, raw 1024 (32 for the DRBO methods), 10 × 50 Adam steps instead of BoTorch's "
        "optimiser; the one-run table alone on a 2-core CPU, the repeats on one core of it shared with other "
        "jobs; DRBO-MMD solves its SOCP inside the compiled program (bisection × FISTA), not with CVXPY, the cost "
        "behind the paper's 5255 s; our inner optimiser (raw screening at all M samples, then 10 × 50 Adam "
        "steps) makes SBO-KDE heavier than BoTorch's. "
        "SBO-KDE against MinimaxApprox (4% apart in the one-run table) is cheaper only when that gap exceeds "
        "the spread of a run's work (CPU seconds) here, measured by alternating repeats "
        "(experiments/sbo_kde/table1_repeats.py: "
        f"{n} repeats of each, A, B, A, B, …, in one process on one core, {evals} evaluations: three repeats "
        "at 100 would take about 26 min of CPU, over the 20 min this check may use; both methods time the "
        "same evaluations; the gap between them depends on the evaluations, so the repeats give the spread, "
        "the 100-evaluation table the gap)",
        checks=_table1_checks(timing, repeats),
        quote="We can observe that the runtime order in the table is consistent with our computational complexity "
        "analysis.",
        where="App. C, Table 1",
        scope=f"one 100-evaluation run per method; the spread from {n} alternating repeats of {evals} evaluations "
        "of SBO-KDE and MinimaxApprox (the paper: mean of 10 runs of 100)",
    )


def _table1_checks(timing: pd.DataFrame, repeats: pd.DataFrame) -> list[tuple[str, bool]]:
    """Table 1's order of the run times (seconds per 100 evaluations, measured against the paper's)."""
    s = timing.set_index("method").run_s
    paper = timing.set_index("method").paper_s

    def vs(a, b):
        return f"{a} {s[a]:.0f} s vs {b} {s[b]:.0f} s (paper {paper[a]:.1f} vs {paper[b]:.1f} s; one run each)"

    ratio = s["SBO-KDE"] / s["StableOpt"]
    others = [m for m in s.index if m != MMD]
    slower = [m for m in others if s[m] >= s[MMD]]
    dearer = [m for m in s.index if m != "GP-UCB" and s[m] <= s["GP-UCB"]]
    ok = s["SBO-KDE"] < s["DRBO-KDE"]
    return [
        (f"GP-UCB {s['GP-UCB']:.1f} s the cheapest (paper {paper['GP-UCB']:.2f} s; one run each)", not dearer),
        (f"{vs('SBO-KDE', 'StableOpt')}: within a factor of two ({ratio:.2f}×)", 0.5 <= ratio <= 2.0),
        (f"{vs('SBO-KDE', 'DRBO-KDE')}: SBO-KDE {'cheaper' if ok else 'dearer (the paper: cheaper)'}", ok),
        _repeat_check(repeats, timing),
        (
            f"DRBO-MMD {s[MMD]:.0f} s (paper {paper[MMD]:.0f} s) the slowest"
            + (f": slower are {', '.join(f'{m} {s[m]:.0f} s' for m in slower)}" if slower else ""),
            not slower,
        ),
    ]


def _repeat_check(repeats: pd.DataFrame, timing: pd.DataFrame) -> tuple[str, bool]:
    """SBO-KDE cheaper than MinimaxApprox at Table 1's 100 evaluations: the one-run gap (table1_timing.csv, alone
    on the machine) larger than the spread of a run's work here, the larger relative range (max − min over
    the mean) of the two methods' CPU seconds in the alternating repeats (table1_repeats.csv, at the evaluations
    they time). Their wall seconds, on one core shared with other jobs, measure that core's load more than the
    method: they are reported, not used for the spread."""
    a, b = "SBO-KDE", MINIMAX
    g = repeats.groupby("method")

    def spread(col):
        mean, lo, hi = g[col].mean(), g[col].min(), g[col].max()
        return max((hi[m] - lo[m]) / mean[m] for m in (a, b)), (mean[b] - mean[a]) / mean[b], mean

    cpu, cgap, cmean = spread("cpu_s")
    wall, wgap, wmean = spread("run_s")
    each = {m: ", ".join(f"{v:.0f}" for v in repeats[repeats.method == m].cpu_s) for m in (a, b)}
    s = timing.set_index("method")
    gap = (s.run_s[b] - s.run_s[a]) / s.run_s[b]
    evals, n = int(repeats.evaluations.iloc[0]), repeats.repeat.nunique()
    load = f"load average {repeats.load1.min():.1f}–{repeats.load1.max():.1f}"
    return (
        f"SBO-KDE {s.run_s[a]:.0f} s vs MinimaxApprox {s.run_s[b]:.0f} s at 100 evaluations (paper "
        f"{s.paper_s[a]:.2f} vs {s.paper_s[b]:.2f} s; one run each): {gap:.1%} apart, against a run-to-run spread "
        f"of {cpu:.1%} in CPU seconds ({n} alternating repeats of {evals} evaluations, {load}: SBO-KDE {each[a]} s, "
        f"mean {cmean[a]:.0f}; MinimaxApprox {each[b]} s, mean {cmean[b]:.0f}; {cgap:.0%} apart at {evals}; wall "
        f"seconds {wmean[a]:.0f} vs {wmean[b]:.0f} on average, spread {wall:.0%}): "
        + ("cheaper" if gap > cpu else "not cheaper: the gap is within the spread" if gap > 0 else "dearer"),
        gap > cpu,
    )


def _complexity_claim(steps: pd.DataFrame, budget: dict) -> Claim:
    caps = sorted(steps.rows.unique())
    return Claim(
        "8.2",
        "SBO-KDE's time per step, as a + b·tᵏ in the rows held t (a: the work that does not grow with t): the "
        "exponent k against the paper's 2 (the order of the acquisition evaluations, which dominate the step)",
        source=f"{STEP_COST}, {BUDGET}",
        note="one SBO-KDE step (fit + acquisition + inner optimiser) at the paper's M = 1024, raw 1024, 10 × 50 "
        "Adam steps, 2 × 60 MAP refit, on Hartmann (d = 6), one seed, compiled once per row count and timed in "
        "rounds that visit every row count once (experiments/sbo_kde/step_cost.py, one core of a 2-core CPU shared "
        "with other jobs); budget_cost.json times the same step once per row count on the quiet machine. t² "
        "outweighs td at these t (t ≥ 10d); k is fitted by least squares on each round's four row counts (a "
        "plain log-log slope of the time is flattened by a); the tolerance is the spread of the repeats: the "
        "paper's 2 holds when it lies within the range of the estimates",
        checks=_complexity_checks(steps, budget),
        quote="For SBO-KDE, the time of each evaluation is O((t²+td)M), because M Monte Carlo samples are used "
        "for estimating the acquisition function in SAA.",
        where="App. C",
        scope=f"t = {', '.join(str(c) for c in caps)} rows, {steps.repeat.nunique()} rounds and one quiet timing, "
        "one seed",
    )


def _exponent(rows, secs) -> float:
    """k of the least-squares fit secs ≈ a + b·rows^k (a, b by linear least squares at each k of a fine grid)."""
    t, y = np.asarray(rows, float), np.asarray(secs, float)
    grid = np.linspace(0.5, 4.0, 3501)
    resid = [np.linalg.lstsq(np.c_[np.ones_like(t), t**k], y, rcond=None)[1] for k in grid]
    return float(grid[int(np.argmin([r[0] if len(r) else np.inf for r in resid]))])


def _complexity_checks(steps: pd.DataFrame, budget: dict) -> list[tuple[str, bool]]:
    """The exponent of the t-dependent part of the step time, per round of step_cost.csv and from
    budget_cost.json's timings, against the paper's 2: within the range of those estimates."""
    per = [_exponent(g.rows, g.seconds) for _, g in steps.groupby("repeat")]
    quiet_rows = np.array([float(r) for r in budget["s_per_step"]])
    quiet_secs = np.array(list(budget["s_per_step"].values()), float)
    quiet = _exponent(quiet_rows, quiet_secs)
    est = [*per, quiet]
    mean = steps.groupby("rows").seconds.mean()
    times = ", ".join(f"{s:.1f}" for s in mean)
    loglog = float(np.polyfit(np.log(quiet_rows), np.log(quiet_secs), 1)[0])
    return [
        (
            f"k = {', '.join(f'{k:.2f}' for k in per)} in the {len(per)} rounds (seconds per step at "
            f"{', '.join(str(c) for c in mean.index)} rows: {times}, mean of the rounds, load average "
            f"{steps.load1.min():.1f}–{steps.load1.max():.1f}) and {quiet:.2f} from the quiet timings "
            f"({', '.join(f'{s:.2f}' for s in quiet_secs)} s; their plain log-log slope: {loglog:.2f}): the "
            f"paper's 2 {'lies' if min(est) <= 2.0 <= max(est) else 'does not lie'} within {min(est):.2f}–"
            f"{max(est):.2f}",
            min(est) <= 2.0 <= max(est),
        )
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    table = write(PAPER, claims())
    print(table[["claim", "comparison", "outcome", "holds"]].to_string())
