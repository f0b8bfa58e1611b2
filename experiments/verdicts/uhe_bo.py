"""UHE-BO (Ha et al., arXiv:2306.06844 v1): every claim of spec section 6, with the figures' mechanism
claims (Fig 1 through the E0 harness of spec section 5.4, Fig 3), graded by the one verdict rule
(jbo.verdict) from the committed result files. Writes uhe_bo.{csv,md} (experiments/results/verdicts/ with
--update).

    python experiments/verdicts/uhe_bo.py [--update]

Every method runs on the same seed keys (common random numbers: one initial design per seed), so the
final values pair by seed. Synthetic problems compare the final simple regret on the log10 scale; the
real-world replacements have no known optimum and compare the negated best value found (test accuracy,
mean reward) on the raw scale, with a margin for "comparable" stated in the claim's note.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
from common import BETTER, NOT_WORSE, RESULTS, Claim, Pair, add_update_flag, final_per_seed, paired, write

from jbo import verdict


def _uhe_common():
    """experiments/uhe/common.py, loaded under its own name (this folder has a common.py too)."""
    path = Path(__file__).resolve().parents[1] / "uhe" / "common.py"
    spec = importlib.util.spec_from_file_location("uhe_common", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PAPER = "uhe_bo"
UHE = RESULTS / "uhe"
SRC = "experiments/results/uhe/"
# the per-seed, per-step result files of each problem (MCMC, and Fig 4's ablations, in files of their own)
FILES = {
    "deceptive2": ("fig2_deceptive2.csv", "fig2_mcmc_deceptive2.csv", "fig4_deceptive2.csv"),
    "deceptive3": ("fig2_d3_deceptive3.csv", "fig2_d3_mcmc_deceptive3.csv"),
    "h1": ("fig2_h1.csv", "fig2_mcmc_h1.csv"),
    "hartmann3": ("fig2_hartmann3.csv", "fig2_mcmc_hartmann3.csv", "fig4_hartmann3.csv"),
    "branin": ("fig5_branin.csv", "fig5_mcmc_branin.csv"),
    "hartmann6": ("fig5_hartmann6.csv", "fig5_mcmc_hartmann6.csv"),
    "lr": ("fig2_realworld_lr.csv", "fig2_realworld_mcmc_lr.csv"),
    "gb": ("fig2_realworld_gb.csv", "fig2_realworld_mcmc_gb.csv"),
    "lunar": ("fig2_realworld_lunar.csv", "fig2_realworld_mcmc_lunar.csv"),
    "gp_d1": ("e0_gp_d1.csv",),
    "gp_d2": ("e0_gp_d2.csv",),
}
PROBLEMS = {
    "deceptive2": "Deceptive (n = 2)",
    "deceptive3": "Deceptive (n = 3)",
    "h1": "h1",
    "hartmann3": "Hartmann3",
    "branin": "Branin",
    "hartmann6": "Hartmann6",
    "lr": "LR replacement",
    "gb": "boosting replacement",
    "lunar": "Lunar Lander",
    "gp_d1": "GP sample d = 1",
    "gp_d2": "GP sample d = 2",
}
METHODS = _uhe_common().LABELS  # the method labels of the UHE-BO experiments
BASELINES = ("map", "mcmc", "a_gp_ucb", "wdf", "portfolio", "random")
OTHERS = ("uhe_bo", "map", "mcmc", "a_gp_ucb", "wdf", "portfolio")  # every method but Random
FIG2 = ("deceptive2", "deceptive3", "h1", "hartmann3")
COLUMNS = ("method", "problem", "seed", "step", "simple_regret", "neg_best", "neg_percent", "lengthscale", "ls_error")
LS_TRUE = 0.1  # E0: the lengthscale of the GP sample paths
STUCK = 0.1  # simple regret at or above which a run has not reached the global optimum's basin
OFTEN = 3  # "often": on at least this many of the 10 seeds
ACC_MARGIN = 1.0  # "comparable" on raw test accuracy in percentage points: medians within one point
REWARD_MARGIN = 20.0  # "comparable" on raw Lunar reward: within 20 (a tenth of the 200 "solved" line)
MAP_RATIO = 1.5  # "UHE-BO ≈ MAP": at most 1.5× MAP's seconds per BO evaluation
MCMC_RATIO = 5.0  # "much cheaper than MCMC": MCMC at least 5× UHE-BO's seconds per BO evaluation

MODEL = (
    "Differs from the paper: θ fitted by 3 starts × 40 Adam steps (the spec 5 × 300, the paper GPy's optimiser); UCB "
    "maximised over 1024 uniform candidates + the data, 8 starts × 50 projected-Adam steps (the spec 2048); "
    "MCMC by blackjax HMC (step 0.05, 20 leapfrog steps, 200 burn-in + 10 kept; the paper GPy's HMC); A-GP-UCB "
    "is the spec's reconstruction, W&dF Berkenkamp's variant, both on geometric scaling grids (1.1^k up to "
    "20 / 100) with each scaling's maximiser found by screening 256 points + the data"
)
PROTOCOL = "n0 = 3d uniform points, T = 100, 10 seeds, noiseless objectives (the paper states none of these)"
SETTINGS = f"{MODEL}; {PROTOCOL}"
DECEPTIVE = (
    "Deceptive in its canonical continuous form (the paper's printed g is discontinuous), at n = 2 and 3 "
    "(the paper does not give n)"
)
H1 = "h1 with the '+1' outside the root, on [−100, 100]² (the paper prints it inside)"
REAL = (
    "REPLACEMENTS of the paper's problems, not reproductions: LR = multinomial minibatch-SGD logistic "
    "regression in JAX (20 epochs, batches of 47) on a make_classification Vehicle-like set, not sklearn's "
    "one-vs-rest SGDClassifier (1000 epochs) on OpenML Vehicle; boosting = sklearn HistGradientBoosting "
    "(100 iterations, max_features in place of colsample_bytree) on a make_classification kc1-like "
    "imbalanced set, not XGBoost (2000 trees) on kc1; both with n0 = 3d, T = 100, 10 seeds (the paper states "
    "neither). Values: the best test accuracy found, in percentage points, negated and compared raw "
    f"(log10 = False), 'comparable' within {ACC_MARGIN:g} point"
)
# the sensitivity runs (experiments/uhe/sensitivity.py): one row per variant, problem, method and seed
SENS = "sensitivity.csv"
VARIANTS = {
    "default": "default",
    "kappa_1.96": "κ = 1.96",
    "gpy_like": "GPy-like model (raw y, softplus-space prior)",
    "fit_5x300": "fit 5 × 300",
}
SENS_SETTINGS = (
    "default = the settings above (κ = √1.96, standardised y, log-space prior, fit 3 × 40); "
    "UHE-BO, MAP, A-GP-UCB, W&dF, Portfolio and Random on Deceptive (n = 2), Hartmann3 and Branin; the "
    "ablations RA-BO and Random+EXP3 on Deceptive (n = 2) and Hartmann3 at T = 100; UHE-BO, RA-BO and MAP on E0's "
    "GP sample paths (d = 1, 2) at T = 100, all variants but the fit 5 × 300 (MCMC not run: one 10-seed HMC "
    "program costs 15–45 min here; adding it could only add comparisons, so a claim that holds in full at no "
    "variant without it would hold at none with it); each variant applied to every method alike; the seeds' "
    "initial designs as above; budgets T = 100 (10 seeds, as above), 50 and 30"
)
NOT_PROBED = "Sensitivity: not run for this claim (the sensitivity runs cover Deceptive (n = 2), Hartmann3 and Branin"
ABLATION = (
    "the paper does not name Fig 4's problems: Deceptive (n = 2) and Hartmann3 are the spec's choice (D22); "
    "UHE-BO's runs are Fig 2's (same seeds and initial designs)"
)
LUNAR = (
    "Lunar: TuRBO's 12-parameter heuristic controller on gymnasium's LunarLander-v3, value = mean total "
    "reward over the fixed episode seeds 0..49, n0 = 36, T = 200, 10 seeds (the paper states neither); the "
    f"best reward found, negated and compared raw (log10 = False), 'comparable' within {REWARD_MARGIN:g} reward"
)


def load() -> pd.DataFrame:
    """Every per-step row of FILES, with the compared values: simple regret, the negated best value
    (raw, and in percent for accuracies), the geometric mean of the fitted lengthscales and (E0)
    lengthscale error abs(ln ℓ̂ − ln ℓ₀) averaged over the dimensions."""
    keep = {"method", "problem", "seed", "step", "simple_regret", "best_value"}
    frames = []
    for problem, files in FILES.items():
        for name in files:
            df = pd.read_csv(UHE / name, usecols=lambda c: c in keep or c.startswith("lengthscale_"))
            if set(df.problem) != {problem}:
                raise ValueError(f"{name}: expected problem {problem}, found {sorted(set(df.problem))}")
            ls = np.log(df[[c for c in df.columns if c.startswith("lengthscale_")]])
            df = df.assign(
                neg_best=-df.best_value,
                neg_percent=-100.0 * df.best_value,
                lengthscale=np.exp(ls.mean(axis=1)),
                ls_error=(ls - np.log(LS_TRUE)).abs().mean(axis=1),
            )
            frames.append(df[[*COLUMNS]])
    runs = pd.concat(frames, ignore_index=True)
    if runs.duplicated(["method", "problem", "seed", "step"]).any():
        raise ValueError("load: one method's run appears in two result files")
    return runs


SENS_BASE = ("map", "a_gp_ucb", "wdf", "portfolio", "random")  # the baselines of the sensitivity runs


def load_sensitivity() -> pd.DataFrame | None:
    """The sensitivity runs' final values (one row per variant, problem, method and seed), or None
    before they exist."""
    path = UHE / SENS
    if not path.exists():
        return None
    df = pd.read_csv(path).drop_duplicates(["variant", "budget", "problem", "method", "seed"], keep="last")
    ls = np.log(df[[c for c in df.columns if c.startswith("lengthscale_") and c != "lengthscale_gm"]])
    ls_error = (ls - np.log(LS_TRUE)).abs().mean(axis=1)  # E0's value; a row's missing dimensions are NaN
    return df.rename(columns={"lengthscale_gm": "lengthscale"}).assign(step=0, ls_error=ls_error)


def sensitivity(sens: pd.DataFrame | None, specs) -> str:
    """The claim's comparisons under every variant of the sensitivity runs, graded by the same rule
    (jbo.verdict.compare / holds / grade). specs: (problem, A, B, asserted, value) tuples."""
    if sens is None:
        return ""
    parts, full = [], []
    runs = sorted(set(zip(sens.variant, sens.budget)), key=lambda vb: (-vb[1], list(VARIANTS).index(vb[0])))
    for variant, budget in runs:
        sub = sens[(sens.variant == variant) & (sens.budget == budget)]
        label = f"{VARIANTS[variant]}, T = {budget}, {sub.seed.nunique()} seeds"
        results, held, absent = [], [], 0
        for problem, a, b, asserted, value in specs:
            have = set(sub[sub.problem == problem].method)
            if a not in have or b not in have:  # the 5 x 300 runs leave out A-GP-UCB and W&dF
                absent += 1
                continue
            fa, fb = (final_per_seed(sub, value, problem=problem, method=m) for m in (a, b))
            c = Pair("", *paired(fa, fb), asserted).compare()
            ok = verdict.holds(c, asserted)
            results.append(ok)
            what = {"lengthscale": " lengthscale", "ls_error": " lengthscale error"}.get(value, "")
            if ok:
                held.append(f"{PROBLEMS[problem]}{what} {METHODS[a]} vs {METHODS[b]}")
        if not results:
            parts.append(f"{label}: not run")
            continue
        grade = verdict.grade(results)
        if grade == "reproduced":
            full.append(label)
        which = f": {', '.join(held)}" if grade == "partly" else ""
        left = f"; {absent} not run" if absent else ""
        parts.append(f"{label}: **{grade}** ({len(held)} of {len(results)} hold{which}{left})")
    return (
        f" Sensitivity (`{SRC}{SENS}`; {SENS_SETTINGS}; the same comparisons on these problems, "
        f"graded by the same rule): {'; '.join(parts)}. Holds in full at: {', '.join(full) or 'none of the variants'}."
    )


def claims() -> list[Claim]:
    runs = load()
    sens = load_sensitivity()

    def probe(problems, a_b, asserted, value="simple_regret"):
        return [(p, a, b, asserted, value) for p in problems for a, b in a_b]

    vs_base = [("uhe_bo", m) for m in SENS_BASE]

    def pair(problem, a, b, asserted, value="simple_regret", log=True, margin=None, what=""):
        fa, fb = (final_per_seed(runs, value, problem=problem, method=m) for m in (a, b))
        extra = {} if margin is None else {"margin": margin}
        label = f"{PROBLEMS[problem]}{what}: {METHODS[a]} vs {METHODS[b]}"
        return Pair(label, *paired(fa, fb), asserted, log, **extra)

    def acc(problem, a, b, asserted):
        return pair(problem, a, b, asserted, "neg_percent", False, ACC_MARGIN, " (−accuracy %)")

    def reward(a, b, asserted):
        return pair("lunar", a, b, asserted, "neg_best", False, REWARD_MARGIN, " (−reward)")

    def ls(problem, a, b):
        return pair(problem, a, b, BETTER, "lengthscale", what=" lengthscale")

    fig2 = f"{SRC}fig2_<problem>.csv, fig2_mcmc_<problem>.csv, fig2_d3_deceptive3.csv, fig2_d3_mcmc_deceptive3.csv"
    fig5 = f"{SRC}fig5_<problem>.csv, fig5_mcmc_<problem>.csv"
    real = f"{SRC}fig2_realworld_<problem>.csv, fig2_realworld_mcmc_<problem>.csv"
    fig4 = f"{SRC}fig4_<problem>.csv, fig2_<problem>.csv (UHE-BO)"
    synth = f"{SETTINGS}; {DECEPTIVE}; {H1}"
    out = [
        Claim(
            "1",
            "Synthetic (Fig 2): UHE-BO is significantly better than all baselines on Deceptive",
            [pair(p, "uhe_bo", m, BETTER) for p in ("deceptive2", "deceptive3") for m in BASELINES],
            fig2,
            f"{SETTINGS}; {DECEPTIVE}." + sensitivity(sens, probe(["deceptive2"], vs_base, BETTER)),
        ),
        Claim(
            "1",
            "Synthetic (Fig 2): UHE-BO is significantly better than all baselines on h1",
            [pair("h1", "uhe_bo", m, BETTER) for m in BASELINES],
            fig2,
            f"{SETTINGS}; {H1}",
        ),
        Claim(
            "1",
            "Synthetic (Fig 2): UHE-BO is comparable to the baselines on Hartmann3",
            [pair("hartmann3", "uhe_bo", m, NOT_WORSE) for m in BASELINES],
            fig2,
            f"{SETTINGS}." + sensitivity(sens, probe(["hartmann3"], vs_base, NOT_WORSE)),
        ),
        Claim(
            "1",
            "Synthetic (Fig 2): MAP and MCMC often get stuck in local optima",
            source=fig2,
            note=f"'stuck': final simple regret ≥ {STUCK:g} (outside the global optimum's basin: Deceptive's "
            f"corners and broad basins, h1's side peaks, Hartmann3's local optimum at regret 0.77); 'often': on at "
            f"least {OFTEN} of the 10 seeds; both thresholds are ours, the paper gives no number. {synth}",
            checks=_stuck_checks(runs),
        ),
        Claim(
            "1",
            "Synthetic (Fig 2): A-GP-UCB and W&dF over-explore because their lengthscales only shrink "
            "(final lengthscale below MAP's, and final regret above MAP's)",
            [ls(p, m, "map") for p in FIG2 for m in ("a_gp_ucb", "wdf")]
            + [pair(p, "map", m, BETTER) for p in FIG2 for m in ("a_gp_ucb", "wdf")],
            fig2,
            "lengthscale: geometric mean over the dimensions of the scaled lengthscales at the last step, unit "
            "cube, log10 compared (lower = shorter); the paper shows only regret curves, the lengthscale and "
            f"the regret cost of over-exploring are our reading of its explanation. {synth}."
            + sensitivity(
                sens,
                probe(["deceptive2", "hartmann3"], [("a_gp_ucb", "map"), ("wdf", "map")], BETTER, "lengthscale")
                + probe(["deceptive2", "hartmann3"], [("map", "a_gp_ucb"), ("map", "wdf")], BETTER),
            ),
        ),
        Claim(
            "1",
            "Synthetic (Fig 2): Portfolio is clearly worse (than UHE-BO)",
            [pair(p, "uhe_bo", "portfolio", BETTER) for p in FIG2],
            fig2,
            f"Portfolio: EXP3 over {{Random, GP-UCB}} every step, reward μ_t(x_t) scaled by D0. {synth}."
            + sensitivity(sens, probe(["deceptive2", "hartmann3"], [("uhe_bo", "portfolio")], BETTER)),
        ),
        Claim(
            "1",
            "Synthetic (Fig 2): Random is clearly worse (than UHE-BO)",
            [pair(p, "uhe_bo", "random", BETTER) for p in FIG2],
            fig2,
            f"{synth}." + sensitivity(sens, probe(["deceptive2", "hartmann3"], [("uhe_bo", "random")], BETTER)),
        ),
        Claim(
            "2",
            "Real-world (Fig 2 bottom): UHE-BO is significantly better on LR-Vehicle and XGB-SoftwareDefect",
            [acc(p, "uhe_bo", m, BETTER) for p in ("lr", "gb") for m in BASELINES],
            real,
            "graded on the in-package replacements, which saturate: the model-based methods end within 0.0005 "
            "accuracy of one another on the same best test accuracy on most seeds (MCMC on the boosting "
            "replacement 0.0014 above UHE-BO), so the paper's data sets (OpenML Vehicle and kc1, a download) "
            f"could still separate them. {REAL}. {MODEL}. {NOT_PROBED})",
        ),
        Claim(
            "2",
            "Real-world (Fig 2 bottom): on Lunar, UHE-BO beats most methods",
            [reward("uhe_bo", m, BETTER) for m in BASELINES if m != "mcmc"],
            real,
            f"all five non-MCMC baselines are graded: 'most' would be met by three of the five. {LUNAR}. {MODEL}. "
            f"{NOT_PROBED})",
        ),
        Claim(
            "2",
            "Real-world (Fig 2 bottom): on Lunar, UHE-BO ties MCMC",
            [reward("uhe_bo", "mcmc", NOT_WORSE)],
            real,
            f"MCMC run seed by seed under the batch's key for each seed (the same initial design). {LUNAR}. {MODEL}. "
            f"{NOT_PROBED}; MCMC is not in them)",
        ),
        Claim(
            "2",
            "Real-world (Fig 2 bottom): Random is poor everywhere",
            [acc(p, m, "random", BETTER) for p in ("lr", "gb") for m in OTHERS]
            + [reward(m, "random", BETTER) for m in OTHERS],
            real,
            f"every other method against Random. {REAL}. {LUNAR}. {MODEL}. {NOT_PROBED})",
        ),
        Claim(
            "3",
            "Fig 5: on the easy problems Branin and Hartmann6 UHE-BO matches the baselines (no loss)",
            [pair(p, "uhe_bo", m, NOT_WORSE) for p in ("branin", "hartmann6") for m in BASELINES],
            fig5,
            f"{SETTINGS}." + sensitivity(sens, probe(["branin"], vs_base, NOT_WORSE)) + " Hartmann6 is not in them.",
        ),
        Claim(
            "4",
            "Ablation (Fig 4): the pseudo-data loss helps: Random+EXP3 (EXP3 schedule, MAP on the real data) "
            "is worse than UHE-BO",
            [pair(p, "uhe_bo", "random_exp3", BETTER) for p in ("deceptive2", "hartmann3")],
            fig4,
            f"{ABLATION}. {SETTINGS}; {DECEPTIVE}."
            + sensitivity(sens, probe(["deceptive2", "hartmann3"], [("uhe_bo", "random_exp3")], BETTER)),
        ),
        Claim(
            "4",
            "Ablation (Fig 4): the EXP3 schedule helps: RA-BO (random at every odd step, pseudo-data fit) is "
            "conservative and worse than UHE-BO",
            [pair(p, "uhe_bo", "ra_bo", BETTER) for p in ("deceptive2", "hartmann3")],
            fig4,
            f"{ABLATION}. {SETTINGS}; {DECEPTIVE}."
            + sensitivity(sens, probe(["deceptive2", "hartmann3"], [("uhe_bo", "ra_bo")], BETTER)),
        ),
    ]
    runtime = pd.read_csv(UHE / "fig4_runtime.csv")
    gpu = json.loads((UHE / "h100" / "timing_h100.json").read_text())["runs"]
    gpu = {r["method"]: r["s_per_bo_step"] for r in gpu}
    timing = (
        "one seed per method, T = 100, seconds per BO evaluation with compilation apart, on a 2-core x86_64 CPU "
        "with jax 0.10.2 (the paper: GPy on a Xeon Silver 4208); Hartmann3 and Deceptive (n = 2) inside the "
        "compiled scan, the boosting replacement through AskTell with the boosting fits timed apart; the "
        f"bounds {MAP_RATIO:g}× and {MCMC_RATIO:g}× are our reading of '≈' and 'much cheaper'. On one H100 "
        f"(Hartmann3, not graded: the paper's runs are on a CPU) UHE-BO is {gpu['uhe_bo'] / gpu['map']:.2f}× MAP "
        f"and MCMC {gpu['mcmc'] / gpu['uhe_bo']:.0f}× UHE-BO (h100/timing_h100.json)"
    )
    fig3 = pd.read_csv(UHE / "fig3.csv").assign(step=0)
    f3 = [final_per_seed(fig3, "rmse_over_sd", method=m) for m in ("uhe_bo", "map")]
    out += [
        Claim(
            "5",
            "Running time (Fig 4 right): UHE-BO costs about as much as MAP",
            source=f"{SRC}fig4_runtime.csv",
            note=f"{timing}. Sensitivity: not run for this claim (the sensitivity runs compare regret, not time)",
            checks=_runtime_checks(runtime, "uhe_bo", "map", MAP_RATIO, at_most=True),
        ),
        Claim(
            "5",
            "Running time (Fig 4 right): UHE-BO is much cheaper than MCMC",
            source=f"{SRC}fig4_runtime.csv",
            note=timing,
            checks=_runtime_checks(runtime, "mcmc", "uhe_bo", MCMC_RATIO, at_most=False),
        ),
        Claim(
            "6",
            "Theory: the expected simple regret is sub-linear for large T, with an extra O(√(log 2 / T)) term "
            "(Thm 6.7)",
            untestable_reason="a theorem: every run has one budget (T = 100, 200 on Lunar), so the regret's growth "
            "with T is not measured; the algorithm's bookkeeping is checked by the unit tests only",
        ),
        Claim(
            "7",
            "Central mechanism (Fig 1, Thm 6.4): fitting θ on the pseudo data gives a less biased lengthscale "
            "than MAP on the BO-collected data (E0: lengthscale error after 100 evaluations)",
            [
                pair(p, m, "map", BETTER, "ls_error", what=" lengthscale error")
                for p in ("gp_d1", "gp_d2")
                for m in ("uhe_bo", "ra_bo")
            ],
            f"{SRC}e0_gp_d1.csv, e0_gp_d2.csv",
            "the paper reports no number for this (Fig 1 is an illustration): E0 is the spec's harness (section "
            f"5.4), Matérn-5/2 GP sample paths with ℓ₀ = {LS_TRUE:g} drawn by random Fourier features on [0, 1]^d, "
            f"d = 1 and 2, 10 seeds, n0 = 3d, T = 100; lengthscale error = abs(ln ℓ̂ − ln ℓ₀) at the last step, "
            "averaged over the d lengthscales, compared on the "
            f"log10 scale (a factor of two is 'comparable'). {MODEL}."
            + sensitivity(sens, probe(["gp_d1", "gp_d2"], [("uhe_bo", "map"), ("ra_bo", "map")], BETTER, "ls_error"))
            + " The spec's fit budget 5 × 300 is not in the E0 runs; the estimator-bias study "
            "(`experiments/results/uhe/estimator_bias_summary.csv`) fits both ways at 3 × 40 and 5 × 300 on Branin.",
        ),
        Claim(
            "7",
            "Fig 3 (Branin): UHE-BO's GP mean under its last fit is closer to the true function than MAP's",
            [Pair("Branin RMSE of the GP mean / sd of f: UHE-BO vs MAP", *paired(*f3), BETTER)],
            f"{SRC}fig3.csv",
            "the paper does not name Fig 3's function: Branin is the spec's choice (D21); RMSE over a 60 × 60 "
            "grid in units of the standard deviation of f there, 5 seeds, n0 = 3d, T = 100; MAP's final regret is "
            f"the lower on every seed. {MODEL}",
        ),
    ]
    return out


def _stuck_checks(runs: pd.DataFrame) -> list[tuple[str, bool]]:
    """On each Fig 2 problem, how many seeds of MAP and of MCMC end at simple regret >= STUCK (UHE-BO's
    count beside them); met when at least OFTEN seeds do."""
    checks = []
    for problem in FIG2:
        counts = {
            m: int((final_per_seed(runs, "simple_regret", problem=problem, method=m) >= STUCK).sum())
            for m in ("map", "mcmc", "uhe_bo")
        }
        for m in ("map", "mcmc"):
            checks.append(
                (
                    f"{PROBLEMS[problem]}: {METHODS[m]} ends at simple regret ≥ {STUCK:g} on {counts[m]} of 10 seeds "
                    f"(UHE-BO {counts['uhe_bo']}; 'often': at least {OFTEN})",
                    counts[m] >= OFTEN,
                )
            )
    return checks


def _runtime_checks(runtime: pd.DataFrame, a: str, b: str, bound: float, at_most: bool) -> list[tuple[str, bool]]:
    """Per problem of the running-time panel: A's seconds per BO evaluation over B's, against the bound
    (at most it when at_most, at least it otherwise)."""
    per = runtime.pivot(index="problem", columns="method", values="s_per_bo_evaluation")
    checks = []
    for problem in ("deceptive2", "hartmann3", "gb"):
        ratio = per.loc[problem, a] / per.loc[problem, b]
        sign = "≤" if at_most else "≥"
        checks.append(
            (
                f"{PROBLEMS[problem]}: {METHODS[a]} {per.loc[problem, a]:.3f} s / {METHODS[b]} "
                f"{per.loc[problem, b]:.3f} s per BO evaluation = {ratio:.1f}× (asserted {sign} {bound:g}×)",
                ratio <= bound if at_most else ratio >= bound,
            )
        )
    return checks


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    table = write(PAPER, claims())
    print(table[["claim", "comparison", "outcome", "holds"]].to_string())
