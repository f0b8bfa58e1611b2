"""UHE-BO (Ha et al., arXiv:2306.06844 v1): every claim of spec section 6, with the figures' mechanism
claims (Fig 1 through the E0 harness of spec section 5.4, Fig 3), each quoting the paper and graded by the
one verdict rule (jbo.verdict) read through the phrase table (jbo.verdict.PHRASES) from the committed result
files. Writes uhe_bo.{csv,md}, uhe_bo_reading.csv and uhe_bo_sensitivity.md, every claim under every
sensitivity run (experiments/results/verdicts/ with --update).

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
from common import OUT, RESULTS, Claim, Pair, add_update_flag, final_per_seed, paired, write

from jbo import verdict


def _uhe_common():
    """experiments/uhe_bo/common.py, loaded under its own name (this folder has a common.py too)."""
    path = Path(__file__).resolve().parents[1] / "uhe_bo" / "common.py"
    spec = importlib.util.spec_from_file_location("uhe_common", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PAPER = "uhe_bo"
UHE = RESULTS / "uhe_bo"  # one folder per figure (experiments/uhe_bo/figures.py)
SRC = "experiments/results/uhe_bo/"
# the per-seed, per-step result files of each problem (MCMC, and Fig 4's ablations, in files of their own)
FILES = {
    "deceptive2": ("fig2/fig2_deceptive2.csv", "fig2/fig2_mcmc_deceptive2.csv", "fig4/fig4_deceptive2.csv"),
    "deceptive3": ("fig2_d3/fig2_d3_deceptive3.csv", "fig2_d3/fig2_d3_mcmc_deceptive3.csv"),
    "h1": ("fig2/fig2_h1.csv", "fig2/fig2_mcmc_h1.csv"),
    "hartmann3": ("fig2/fig2_hartmann3.csv", "fig2/fig2_mcmc_hartmann3.csv", "fig4/fig4_hartmann3.csv"),
    "branin": ("fig5/fig5_branin.csv", "fig5/fig5_mcmc_branin.csv"),
    "hartmann6": ("fig5/fig5_hartmann6.csv", "fig5/fig5_mcmc_hartmann6.csv"),
    "lr": ("fig2_realworld/fig2_realworld_lr.csv", "fig2_realworld/fig2_realworld_mcmc_lr.csv"),
    "gb": ("fig2_realworld/fig2_realworld_gb.csv", "fig2_realworld/fig2_realworld_mcmc_gb.csv"),
    "lunar": ("fig2_realworld/fig2_realworld_lunar.csv", "fig2_realworld/fig2_realworld_mcmc_lunar.csv"),
    "gp_d1": ("e0/e0_gp_d1.csv",),
    "gp_d2": ("e0/e0_gp_d2.csv",),
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
STUCK_MARGIN = 0.5  # "comparable" on the per-seed stuck indicator (0 or 1): median difference under half a seed
ACC_MARGIN = 1.0  # "comparable" on raw test accuracy in percentage points: medians within one point
REWARD_MARGIN = 20.0  # "comparable" on raw Lunar reward: within 20 (a tenth of the 200 "solved" line)
MAP_RATIO = 1.5  # "UHE-BO comparable to MAP": within 1.5× of MAP's seconds per BO evaluation, either way
MCMC_RATIO = 5.0  # "much cheaper than MCMC": MCMC at least 5× UHE-BO's seconds per BO evaluation

MODEL = (
    "Differs from the paper: θ fitted by 3 starts × 40 Adam steps (the spec 5 × 300, the paper GPy's optimiser); UCB "
    "maximised over 1024 uniform candidates + the data, 8 starts × 50 projected-Adam steps (the spec 2048); "
    "MCMC by blackjax HMC (step 0.05, 20 leapfrog steps, 200 burn-in + 10 kept; the paper GPy's HMC); A-GP-UCB "
    "is the spec's reconstruction, W&dF Berkenkamp's variant, both on geometric scaling grids (1.1^k up to "
    "20 / 100) with each scaling's maximiser found by screening 256 points + the data"
)
PROTOCOL = "n0 = 3d uniform points, T = 100, 10 seeds, noiseless objectives (the paper states none of these)"
SCOPE = "T = 100, 10 seeds; the paper states neither"
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
# the sensitivity runs (experiments/uhe_bo/sensitivity.py): one row per variant, problem, method and seed
SENS = "sensitivity/sensitivity.csv"
VARIANTS = {
    "default": "default",
    "kappa_1.96": "κ = 1.96",
    "gpy_like": "GPy-like model (raw y, softplus-space prior)",
    "fit_5x300": "fit 5 × 300",
    "noise_refit": "σ_n² refitted on the real data",
}
PSEUDO = ("uhe_bo", "ra_bo")  # the methods that fit θ on the pseudo data (estimate=jbo.algorithms.uhe_bo.PseudoData())
PSEUDO_ONLY = ("noise_refit",)  # variants that change only the pseudo-data methods (sensitivity.py)
SENS_SETTINGS = (
    "default = the settings above (κ = √1.96, standardised y, log-space prior, fit 3 × 40); "
    "UHE-BO, MAP, A-GP-UCB, W&dF, Portfolio and Random on Deceptive (n = 2), Hartmann3 and Branin; the "
    "ablations RA-BO and Random+EXP3 on Deceptive (n = 2) and Hartmann3 at T = 100; UHE-BO, RA-BO and MAP on E0's "
    "GP sample paths (d = 1, 2) at T = 100, all variants but the fit 5 × 300 (MCMC not run: one 10-seed HMC "
    "program costs 15–45 min here; adding it could only add comparisons, so a claim that holds in full at no "
    "variant without it would hold at none with it); each variant applied to every method alike; σ_n² refitted "
    "on the real data (UHE(estimate=PseudoData(noise_refit=True)): the pseudo fit's lengthscales and signal variance, a noise variance "
    "fitted by MAP on the real data, in the posterior and the UCB) changes only UHE-BO and RA-BO, so it runs "
    "them alone at T = 100 (UHE-BO on Deceptive (n = 2), Hartmann3 and Branin, RA-BO on Hartmann3; not run: RA-BO "
    "on Deceptive, and E0's sample paths, for time) and the other methods' rows are the default's; the seeds' initial "
    "designs as above; "
    "budgets T = 100 (10 seeds, as above), 50 and 30"
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
    before they exist. A variant that changes only the pseudo-data methods (PSEUDO_ONLY) takes the other
    methods' rows from the default run at the same budget (the same programs and keys)."""
    path = UHE / SENS
    if not path.exists():
        return None
    df = pd.read_csv(path).drop_duplicates(["variant", "budget", "problem", "method", "seed"], keep="last")
    for variant, budget in sorted(set(zip(df.variant, df.budget))):
        if variant in PSEUDO_ONLY:
            problems = set(df[(df.variant == variant) & (df.budget == budget)].problem)
            base = df[(df.variant == "default") & (df.budget == budget) & ~df.method.isin(PSEUDO)]
            df = pd.concat([df, base[base.problem.isin(problems)].assign(variant=variant)], ignore_index=True)
    ls = np.log(df[[c for c in df.columns if c.startswith("lengthscale_") and c != "lengthscale_gm"]])
    ls_error = (ls - np.log(LS_TRUE)).abs().mean(axis=1)  # E0's value; a row's missing dimensions are NaN
    stuck = (df.simple_regret >= STUCK).astype(float)
    return df.rename(columns={"lengthscale_gm": "lengthscale"}).assign(step=0, ls_error=ls_error, stuck=stuck)


def _runs(sens: pd.DataFrame) -> list[tuple[str, int]]:
    """The sensitivity runs (variant, budget), the paper's budget first."""
    return sorted(set(zip(sens.variant, sens.budget)), key=lambda vb: (-vb[1], list(VARIANTS).index(vb[0])))


def _probe_pair(sub: pd.DataFrame, problem, a, b, phrase, value) -> Pair:
    fa, fb = (final_per_seed(sub, value, problem=problem, method=m) for m in (a, b))
    if value == "stuck":
        return Pair("", *paired(fa, fb), phrase, False, STUCK_MARGIN)
    return Pair("", *paired(fa, fb), phrase)


def probe_grades(sens: pd.DataFrame | None, specs) -> list[tuple[str, str, int, int, list[str], int]]:
    """The claim's comparisons (specs: (problem, A, B, phrase, value) tuples) under every sensitivity run,
    graded by the same rule and phrase table: (run label, verdict, comparisons that hold, comparisons
    graded, those that hold, comparisons not run). A variant that changes only UHE-BO and RA-BO is left out
    of a claim that compares neither (its runs are the default's)."""
    if sens is None:
        return []
    out = []
    pseudo = any(m in PSEUDO for _, a, b, _, _ in specs for m in (a, b))
    for variant, budget in _runs(sens):
        if variant in PSEUDO_ONLY and not pseudo:
            continue
        sub = sens[(sens.variant == variant) & (sens.budget == budget)]
        label = f"{VARIANTS[variant]}, T = {budget}, {sub.seed.nunique()} seeds"
        results, held, absent = [], [], 0
        for problem, a, b, phrase, value in specs:
            have = set(sub[sub.problem == problem].method)
            if a not in have or b not in have:  # the 5 x 300 runs leave out A-GP-UCB and W&dF
                absent += 1
                continue
            pr = _probe_pair(sub, problem, a, b, phrase, value)
            r = pr.reading()
            ok = verdict.holds(pr.compare(), r.outcomes, effect=r.effect)
            results.append(ok)
            what = {"lengthscale": " lengthscale", "ls_error": " lengthscale error", "stuck": " stuck"}.get(value, "")
            if ok:
                held.append(f"{PROBLEMS[problem]}{what} {METHODS[a]} vs {METHODS[b]}")
        grade = verdict.grade(results) if results else "not run"
        out.append((label, grade, len(held), len(results), held, absent))
    return out


def sensitivity(sens: pd.DataFrame | None, specs) -> str:
    """The claim's comparisons under every variant of the sensitivity runs, graded by the same rule
    (jbo.verdict.compare / holds / grade through the phrase table), as a sentence of the claim's note."""
    grades = probe_grades(sens, specs)
    if not grades:
        return ""
    parts, full, run_only = [], [], []
    for label, grade, k, n, held, absent in grades:
        if grade == "not run":
            parts.append(f"{label}: not run")
            continue
        if grade == "reproduced":
            (run_only if absent else full).append(label + (f" ({absent} not run)" if absent else ""))
        which = f": {', '.join(held)}" if grade == "partly" else ""
        left = f"; {absent} not run" if absent else ""
        parts.append(f"{label}: **{grade}** ({k} of {n} hold{which}{left})")
    partial = f" Holds on every comparison run, not all run, at: {', '.join(run_only)}." if run_only else ""
    return (
        f" Sensitivity (`{SRC}{SENS}`; {SENS_SETTINGS}; the same comparisons on these problems, "
        f"graded by the same rule): {'; '.join(parts)}. Holds in full at: {', '.join(full) or 'none of the variants'}."
        + partial
    )


def write_sensitivity_table(sens: pd.DataFrame | None, probes: list[tuple[str, list]]) -> None:
    """uhe_bo_sensitivity.md: every probed claim (rows) under every sensitivity run (columns), graded as in
    the claims' notes: the verdict and the comparisons that hold of those graded."""
    if sens is None:
        return
    cols = [f"{VARIANTS[v]}, T = {b}" for v, b in _runs(sens)]
    lines = ["| claim (comparisons on the sensitivity problems) | " + " | ".join(cols) + " |"]
    lines.append("|---|" + "---|" * len(cols))
    for name, specs in probes:
        cells = dict.fromkeys(cols, "—")
        for label, grade, k, n, _, absent in probe_grades(sens, specs):
            left = f"; {absent} not run" if absent else ""
            cells[label.rsplit(",", 1)[0]] = grade if grade == "not run" else f"{grade} ({k}/{n}{left})"
        lines.append(f"| {name} | " + " | ".join(cells.values()) + " |")
    (OUT / "uhe_bo_sensitivity.md").write_text(
        "\n".join(lines)
        + "\n\n— : the run does not bear on the claim (σ_n² refitted on the real data changes only UHE-BO and "
        "RA-BO). Seeds: 10 at T = 100, 8 at T = 50, 6 at T = 30. From `experiments/results/uhe_bo/sensitivity/sensitivity.csv`.\n"
    )


def claims() -> list[Claim]:
    runs = load()
    sens = load_sensitivity()

    def probe(problems, a_b, phrase, value="simple_regret"):
        return [(p, a, b, phrase, value) for p in problems for a, b in a_b]

    vs_base = [("uhe_bo", m) for m in SENS_BASE]

    def pair(problem, a, b, phrase, value="simple_regret", log=True, margin=None, what="", against=""):
        fa, fb = (final_per_seed(runs, value, problem=problem, method=m) for m in (a, b))
        extra = {} if margin is None else {"margin": margin}
        label = f"{PROBLEMS[problem]}{what}: {METHODS[a]} vs {METHODS[b]}"
        return Pair(label, *paired(fa, fb), phrase, log, against=against, **extra)

    def acc(problem, a, b, phrase, against=""):
        return pair(problem, a, b, phrase, "neg_percent", False, ACC_MARGIN, " (−accuracy %)", against)

    def reward(a, b, phrase):
        return pair("lunar", a, b, phrase, "neg_best", False, REWARD_MARGIN, " (−reward)")

    def ls(problem, a, b):
        return pair(problem, a, b, "beats", "lengthscale", what=" lengthscale (shorter)")

    def stuck(problem, m):
        """m's per-seed stuck indicator (final regret >= STUCK) against UHE-BO's on the same seeds."""
        fa, fb = (
            (final_per_seed(runs, "simple_regret", problem=problem, method=k) >= STUCK).astype(float)
            for k in (m, "uhe_bo")
        )
        label = f"{PROBLEMS[problem]} stuck (final regret ≥ {STUCK:g}): {METHODS[m]} vs UHE-BO"
        return Pair(label, *paired(fa, fb), "worse than", False, STUCK_MARGIN)

    fig2 = (
        f"{SRC}fig2/fig2_<problem>.csv, fig2/fig2_mcmc_<problem>.csv, fig2_d3/fig2_d3_deceptive3.csv, "
        "fig2_d3/fig2_d3_mcmc_deceptive3.csv"
    )
    fig5 = f"{SRC}fig5/fig5_<problem>.csv, fig5/fig5_mcmc_<problem>.csv"
    real = f"{SRC}fig2_realworld/fig2_realworld_<problem>.csv, fig2_realworld/fig2_realworld_mcmc_<problem>.csv"
    fig4 = f"{SRC}fig4/fig4_<problem>.csv, fig2/fig2_<problem>.csv (UHE-BO)"
    synth = f"{SETTINGS}; {DECEPTIVE}; {H1}"
    q_fig2 = (
        "our UHE-BO is significantly better than all baseline methods in the Deceptive and h1 functions whilst "
        "performing comparable on Hartman3 function"
    )
    q_pr = "our proposed method, UHE-BO, also outperforms Porfolio and Random significantly"
    q_ablation = (
        "It can be seen that each component contributes to the success of the proposed method. [...] the method "
        "RA-BO which is quite conservative as it samples data points randomly every 2 iterations. In contrast, "
        "UHE-BO is more efficient because it learns to switch between decisions using EXP3."
    )
    # the claims the sensitivity runs probe, with their comparisons there (uhe_bo_sensitivity.md)
    probes = {
        "deceptive": probe(["deceptive2"], vs_base, "significantly outperforms"),
        "hartmann3": probe(["hartmann3"], vs_base, "comparable to"),
        "stuck": probe(FIG2[:1] + FIG2[3:], [("map", "uhe_bo")], "worse than", "stuck"),
        "explore": probe(["deceptive2", "hartmann3"], [("a_gp_ucb", "map"), ("wdf", "map")], "beats", "lengthscale")
        + probe(["deceptive2", "hartmann3"], [("map", "a_gp_ucb"), ("map", "wdf")], "better than"),
        "portfolio": probe(["deceptive2", "hartmann3"], [("uhe_bo", "portfolio")], "significantly outperforms"),
        "random": probe(["deceptive2", "hartmann3"], [("uhe_bo", "random")], "significantly outperforms"),
        "fig5": probe(["branin"], vs_base, "on par with"),
        "random_exp3": probe(["deceptive2", "hartmann3"], [("uhe_bo", "random_exp3")], "better than"),
        "ra_bo": probe(["deceptive2", "hartmann3"], [("uhe_bo", "ra_bo")], "better than"),
        "e0": probe(["gp_d1", "gp_d2"], [("uhe_bo", "map"), ("ra_bo", "map")], "more accurate than", "ls_error"),
    }
    out = [
        Claim(
            "1",
            "UHE-BO significantly better than every baseline on Deceptive (n = 2 and 3): final simple regret, "
            "interval beyond a factor of two",
            [
                pair(p, "uhe_bo", m, "significantly outperforms")
                for p in ("deceptive2", "deceptive3")
                for m in BASELINES
            ],
            fig2,
            f"{SETTINGS}; {DECEPTIVE}." + sensitivity(sens, probes["deceptive"]),
            quote=q_fig2,
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "1",
            "UHE-BO significantly better than every baseline on h1: final simple regret, interval beyond a "
            "factor of two",
            [pair("h1", "uhe_bo", m, "significantly outperforms") for m in BASELINES],
            fig2,
            f"{SETTINGS}; {H1}. Sensitivity: not run for this claim (the sensitivity runs cover Deceptive (n = 2), "
            "Hartmann3 and Branin)",
            quote=q_fig2,
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "1",
            "UHE-BO comparable to every baseline on Hartmann3 (comparable only: within a factor of two, neither "
            "better nor worse)",
            [pair("hartmann3", "uhe_bo", m, "comparable to") for m in BASELINES],
            fig2,
            f"{SETTINGS}." + sensitivity(sens, probes["hartmann3"]),
            quote=q_fig2,
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "1",
            f"MAP and MCMC get stuck more often than UHE-BO: on each Fig 2 problem, each seed's stuck indicator "
            f"(final simple regret ≥ {STUCK:g}) of MAP / MCMC against UHE-BO's on the same seed, worse by the rule",
            [stuck(p, m) for p in FIG2 for m in ("map", "mcmc")],
            fig2,
            f"'stuck': final simple regret ≥ {STUCK:g}, outside the global optimum's basin (Deceptive's corners and "
            "broad basins, h1's side peaks, Hartmann3's local optimum at regret 0.77); the threshold is ours, the "
            "paper gives no number. The paper's statement is relative to UHE-BO (its performance 'is limited'), so "
            "each seed's indicator (1 stuck, 0 not) is paired with UHE-BO's and graded by the rule on the raw "
            f"difference ('comparable' within {STUCK_MARGIN:g}): MAP / MCMC 'worse than' UHE-BO needs them stuck on "
            "more seeds than UHE-BO, consistently (sign test) and on most seeds (the median). On h1 every method "
            f"ends at regret ≥ {STUCK:g} on every seed (no method finds the narrow peak), so the indicators tie; the "
            f"regret itself is graded in the h1 claim. {synth}."
            + sensitivity(sens, probes["stuck"])
            + " MCMC is not in the sensitivity runs.",
            quote="MAP and MCMC do not take into account the statistical bias and uncertainty issue of not knowing "
            "the true hyperparameters, thus their performance is limited. Based on our observations, they are "
            "easily trapped at a local minimum.",
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "1",
            "A-GP-UCB and W&dF over-explore because their lengthscales only shrink: final lengthscale shorter than "
            "MAP's, and final regret above MAP's",
            [ls(p, m, "map") for p in FIG2 for m in ("a_gp_ucb", "wdf")]
            + [pair(p, "map", m, "better than") for p in FIG2 for m in ("a_gp_ucb", "wdf")],
            fig2,
            "lengthscale: geometric mean over the dimensions of the scaled lengthscales at the last step, unit "
            "cube, log10 compared, 'beats' = shorter; the paper shows only regret curves: the lengthscale and "
            "the regret cost of over-exploring, both against MAP (the fit they scale), are our reading of its "
            f"explanation. {synth}." + sensitivity(sens, probes["explore"]),
            quote="their empirical performance is conservative, as they tend to over-explore the search domain. "
            "This is due to their design of reducing the lengthscales monotonously, leading to the overestimation "
            "of the uncertainty.",
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "1",
            "UHE-BO significantly better than Portfolio on every Fig 2 problem: final simple regret, interval "
            "beyond a factor of two",
            [
                pair(p, "uhe_bo", "portfolio", "significantly outperforms", against=f"Portfolio on {PROBLEMS[p]}")
                for p in FIG2
            ],
            fig2,
            f"Portfolio: EXP3 over {{Random, GP-UCB}} every step, reward μ_t(x_t) scaled by D0. {synth}."
            + sensitivity(sens, probes["portfolio"]),
            quote=q_pr,
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "1",
            "UHE-BO significantly better than Random on every Fig 2 problem: final simple regret, interval beyond "
            "a factor of two",
            [
                pair(p, "uhe_bo", "random", "significantly outperforms", against=f"Random on {PROBLEMS[p]}")
                for p in FIG2
            ],
            fig2,
            f"{synth}." + sensitivity(sens, probes["random"]),
            quote=q_pr,
            where="§7.1, Fig 2 top",
            scope=SCOPE,
        ),
        Claim(
            "2",
            "UHE-BO significantly better than every baseline on the LR and boosting replacements: best test "
            f"accuracy, interval beyond {ACC_MARGIN:g} point",
            [
                acc(p, "uhe_bo", m, "significantly outperforms", against=f"{METHODS[m]} on {PROBLEMS[p]}")
                for p in ("lr", "gb")
                for m in BASELINES
            ],
            real,
            "graded on the in-package replacements, which saturate: the model-based methods end within 0.0005 "
            "accuracy of one another on the same best test accuracy on most seeds (MCMC on the boosting "
            "replacement 0.0014 above UHE-BO), so the paper's data sets (OpenML Vehicle and kc1, a download) "
            f"could still separate them. {REAL}. {MODEL}. {NOT_PROBED})",
            quote="For Logistic Regression with the Vehicle Silhouettes dataset and the XGB Classification with the "
            "Software Defect dataset, UHE-BO outperforms existing methods significantly.",
            where="§7.1, Fig 2 bottom",
            scope="T = 100, 10 seeds, replacements of the paper's data sets; the paper states neither",
        ),
        Claim(
            "2",
            "On Lunar, UHE-BO better than the other methods but MCMC: best mean reward (all five graded; 'most' "
            "would be met by three)",
            [reward("uhe_bo", m, "better than") for m in BASELINES if m != "mcmc"],
            real,
            f"{LUNAR}. {MODEL}. {NOT_PROBED})",
            quote="For Lunar landing, UHE-BO is better than most of approaches, except MCMC when it performs similarly.",
            where="§7.1, Fig 2 bottom",
            scope="T = 200, n0 = 36, 10 seeds; the paper states neither",
        ),
        Claim(
            "2",
            f"On Lunar, UHE-BO and MCMC alike: best mean reward within {REWARD_MARGIN:g} (comparable only)",
            [reward("uhe_bo", "mcmc", "performs similarly to")],
            real,
            f"MCMC run seed by seed under the batch's key for each seed (the same initial design). {LUNAR}. {MODEL}. "
            f"{NOT_PROBED}; MCMC is not in them)",
            quote="For Lunar landing, UHE-BO is better than most of approaches, except MCMC when it performs similarly.",
            where="§7.1, Fig 2 bottom",
            scope="T = 200, n0 = 36, 10 seeds; the paper states neither",
        ),
        Claim(
            "2",
            "Random worse than every other method on each real-world problem (best test accuracy; best mean reward)",
            [
                pair(p, "random", m, "worse than", v, False, mg, w, against=METHODS[m])
                for p, v, mg, w in (
                    ("lr", "neg_percent", ACC_MARGIN, " (−accuracy %)"),
                    ("gb", "neg_percent", ACC_MARGIN, " (−accuracy %)"),
                    ("lunar", "neg_best", REWARD_MARGIN, " (−reward)"),
                )
                for m in OTHERS
            ],
            real,
            f"{REAL}. {LUNAR}. {MODEL}. {NOT_PROBED})",
            quote="The Random method performs poorly in all cases.",
            where="§7.1, Fig 2 bottom",
            scope="LR and boosting replacements T = 100, Lunar T = 200; 10 seeds; the paper states neither",
        ),
        Claim(
            "3",
            "UHE-BO on par with every baseline on Branin and Hartmann6 (comparable only: within a factor of two, "
            "neither better nor worse)",
            [pair(p, "uhe_bo", m, "on par with") for p in ("branin", "hartmann6") for m in BASELINES],
            fig5,
            f"'performs as well as' read as 'on par with' (the table's reading of likeness). {SETTINGS}."
            + sensitivity(sens, probes["fig5"])
            + " Hartmann6 is not in them.",
            quote="The results show that even with these problems, our proposed method, UHE-BO still performs as "
            "well as other baseline methods.",
            where="App. D, Fig 5",
            scope=SCOPE,
        ),
        Claim(
            "4",
            "The pseudo-data loss helps: UHE-BO better than Random+EXP3 (the EXP3 schedule with MAP on the real "
            "data), final simple regret",
            [
                pair(p, "uhe_bo", "random_exp3", "better than", against=f"Random+EXP3 on {PROBLEMS[p]}")
                for p in ("deceptive2", "hartmann3")
            ],
            fig4,
            f"{ABLATION}. {SETTINGS}; {DECEPTIVE}." + sensitivity(sens, probes["random_exp3"]),
            quote=q_ablation,
            where="§7.2, Fig 4 left and middle",
            scope=SCOPE,
        ),
        Claim(
            "4",
            "The EXP3 schedule helps: UHE-BO better than RA-BO (random at every odd step, pseudo-data fit), final "
            "simple regret",
            [
                pair(p, "uhe_bo", "ra_bo", "better than", against=f"RA-BO on {PROBLEMS[p]}")
                for p in ("deceptive2", "hartmann3")
            ],
            fig4,
            f"{ABLATION}. {SETTINGS}; {DECEPTIVE}." + sensitivity(sens, probes["ra_bo"]),
            quote=q_ablation,
            where="§7.2, Fig 4 left and middle",
            scope=SCOPE,
        ),
    ]
    runtime = pd.read_csv(UHE / "fig4_runtime" / "fig4_runtime.csv")
    gpu = json.loads((UHE / "gpu_vs_cpu" / "timing_h100.json").read_text())["runs"]
    gpu = {r["method"]: r["s_per_bo_step"] for r in gpu}
    timing = (
        "one seed per method, T = 100, seconds per BO evaluation with compilation apart, on a 2-core x86_64 CPU "
        "with jax 0.10.2 (the paper: GPy on a Xeon Silver 4208); Hartmann3 and Deceptive (n = 2) inside the "
        "compiled scan, the boosting replacement through AskTell with the boosting fits timed apart; the "
        f"bounds (within {MAP_RATIO:g}× either way; at least {MCMC_RATIO:g}×) are our reading of 'comparable' and "
        f"'much faster'. On one H100 (Hartmann3, not graded: the paper's runs are on a CPU) UHE-BO is "
        f"{gpu['uhe_bo'] / gpu['map']:.2f}× MAP and MCMC {gpu['mcmc'] / gpu['uhe_bo']:.0f}× UHE-BO "
        "(gpu_vs_cpu/timing_h100.json)"
    )
    q_time = "The running time of our method is comparable to MAP whilst much faster than MCMC across three problems."
    time_scope = "T = 100, one seed per method; Deceptive (n = 2), Hartmann3, boosting replacement"
    fig3 = pd.read_csv(UHE / "fig3" / "fig3.csv").assign(step=0)
    f3 = [final_per_seed(fig3, "rmse_over_sd", method=m) for m in ("uhe_bo", "map")]
    out += [
        Claim(
            "5",
            f"UHE-BO's seconds per BO evaluation within {MAP_RATIO:g}× of MAP's, either way",
            source=f"{SRC}fig4_runtime/fig4_runtime.csv",
            note=f"{timing}. Sensitivity: not run for this claim (the sensitivity runs compare regret, not time)",
            checks=_runtime_checks(runtime, "uhe_bo", "map", MAP_RATIO, at_most=True),
            quote=q_time,
            where="§7.2, Fig 4 right",
            scope=time_scope,
        ),
        Claim(
            "5",
            f"MCMC's seconds per BO evaluation at least {MCMC_RATIO:g}× UHE-BO's",
            source=f"{SRC}fig4_runtime/fig4_runtime.csv",
            note=timing,
            checks=_runtime_checks(runtime, "mcmc", "uhe_bo", MCMC_RATIO, at_most=False),
            quote=q_time,
            where="§7.2, Fig 4 right",
            scope=time_scope,
        ),
        Claim(
            "6",
            "The expected simple regret is sub-linear for large T, with an extra O(√(2 log 2 / T)) term (Thm 6.7)",
            untestable_reason="a theorem: every run has one budget (T = 100, 200 on Lunar), so the regret's growth "
            "with T is not measured; the algorithm's bookkeeping is checked by the unit tests only",
            quote="our bound in Theorem 6.7 focuses on the simple regret, applies to large T values and has an "
            "additional term O(√(2 log 2/T)), which are the cost of not knowing the true GP hyperparameters in advance",
            where="§6, after Thm 6.7",
        ),
        Claim(
            "7",
            "The pseudo-data fit's lengthscale more accurate than MAP's on the BO-collected data (E0: lengthscale "
            "error after 100 evaluations, UHE-BO and RA-BO against MAP)",
            [
                pair(p, m, "map", "more accurate than", "ls_error", what=" lengthscale error")
                for p in ("gp_d1", "gp_d2")
                for m in ("uhe_bo", "ra_bo")
            ],
            f"{SRC}e0/e0_gp_d1.csv, e0/e0_gp_d2.csv",
            "the paper reports no number for this (Fig 1 is an illustration): E0 is the spec's harness (section "
            f"5.4), Matérn-5/2 GP sample paths with ℓ₀ = {LS_TRUE:g} drawn by random Fourier features on [0, 1]^d, "
            f"d = 1 and 2, 10 seeds, n0 = 3d, T = 100; lengthscale error = abs(ln ℓ̂ − ln ℓ₀) at the last step, "
            "averaged over the d lengthscales, compared on the "
            f"log10 scale (a factor of two is 'comparable'). {MODEL}."
            + sensitivity(sens, probes["e0"])
            + " The spec's fit budget 5 × 300 is not in the E0 runs; the estimator-bias study "
            "(`experiments/results/uhe_bo/estimator_bias/estimator_bias_summary.csv`) fits both ways at 3 × 40 and 5 × 300 on Branin.",
            quote="To completely correct this statistical bias, we propose to approximate the biased GP "
            "hyperparameter loss function by a non-biased one.",
            where="§5.2, Thm 6.4, Fig 1",
            scope="T = 100, 10 seeds, GP sample paths d = 1, 2 (the spec's harness)",
        ),
        Claim(
            "7",
            "UHE-BO's GP mean under its last fit closer to the true function than MAP's (Branin: RMSE over a grid)",
            [Pair("Branin RMSE of the GP mean / sd of f: UHE-BO vs MAP", *paired(*f3), "more accurate than")],
            f"{SRC}fig3/fig3.csv",
            "the paper does not name Fig 3's function: Branin is the spec's choice (D21); RMSE over a 60 × 60 "
            "grid in units of the standard deviation of f there, 5 seeds, n0 = 3d, T = 100; MAP's final regret is "
            f"the lower on every seed. {MODEL}",
            quote="with our proposed method, unbiased GP hyperparameter estimation can be obtained, and thus, the GP "
            "mean is more accurate.",
            where="§7.2, Fig 3",
            scope="T = 100, 5 seeds",
        ),
    ]
    write_sensitivity_table(
        sens,
        [
            ("UHE-BO significantly better than every baseline on Deceptive", probes["deceptive"]),
            ("UHE-BO comparable to every baseline on Hartmann3", probes["hartmann3"]),
            ("MAP stuck more often than UHE-BO (Deceptive, Hartmann3)", probes["stuck"]),
            ("A-GP-UCB and W&dF over-explore", probes["explore"]),
            ("UHE-BO significantly better than Portfolio", probes["portfolio"]),
            ("UHE-BO significantly better than Random", probes["random"]),
            ("Fig 5: UHE-BO on par with every baseline on Branin", probes["fig5"]),
            ("Ablation: UHE-BO better than Random+EXP3", probes["random_exp3"]),
            ("Ablation: UHE-BO better than RA-BO", probes["ra_bo"]),
            ("E0: pseudo fit's lengthscale more accurate than MAP's", probes["e0"]),
        ],
    )
    return out


def _runtime_checks(runtime: pd.DataFrame, a: str, b: str, bound: float, at_most: bool) -> list[tuple[str, bool]]:
    """Per problem of the running-time panel: A's seconds per BO evaluation over B's, against the bound
    (at_most: within the bound either way, 1 / bound <= ratio <= bound; otherwise at least the bound)."""
    per = runtime.pivot(index="problem", columns="method", values="s_per_bo_evaluation")
    checks = []
    for problem in ("deceptive2", "hartmann3", "gb"):
        ratio = per.loc[problem, a] / per.loc[problem, b]
        asserted = f"asserted within {1 / bound:.2f}–{bound:g}×" if at_most else f"asserted ≥ {bound:g}×"
        checks.append(
            (
                f"{PROBLEMS[problem]}: {METHODS[a]} {per.loc[problem, a]:.3f} s / {METHODS[b]} "
                f"{per.loc[problem, b]:.3f} s per BO evaluation = {ratio:.1f}× ({asserted})",
                1 / bound <= ratio <= bound if at_most else ratio >= bound,
            )
        )
    return checks


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    table = write(PAPER, claims())
    print(table[["claim", "comparison", "outcome", "holds"]].to_string())
