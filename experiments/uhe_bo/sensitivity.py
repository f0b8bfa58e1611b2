"""Sensitivity of the UHE-BO comparisons to four settings the paper leaves open or that we reduced:
the UCB multiplier, the GP model's y scale and prior parameterisation, the fit budget, and the noise
variance of UHE-BO's posterior.

    python experiments/uhe_bo/sensitivity.py [--quick] [--seeds 10] [--budget 50] [--problems ...]
        [--methods ...] [--variants ...] [--tag _x] [--no-run]

The committed runs (sensitivity.csv) are the steps of the figure `sensitivity` in
experiments/uhe_bo/figures.py (`jbo reproduce uhe_bo sensitivity`): T = 50 with 8 seeds (default,
kappa_1.96, gpy_like), T = 30 with 6 seeds (default, fit_5x300), T = 100 with 10 seeds (every variant;
Fig 4's ablations RA-BO and Random+EXP3 on deceptive2 and hartmann3; UHE-BO, RA-BO and MAP on E0's
gp_d1 and gp_d2 under default, kappa_1.96 and gpy_like; noise_refit for UHE-BO on hartmann3, deceptive2
and branin and RA-BO on hartmann3). Several of them ran as parallel processes with --tag, their CSVs and
logs then concatenated into sensitivity.csv / sensitivity.log and the summary redone with --no-run
(sensitivity.log records each process); rows of a later run replace those of the same variant, budget,
problem, method and seed, so the steps run one after the other give the same rows.

UHE-BO and the methods of the Fig 2 comparison (MAP, A-GP-UCB, W&dF, Portfolio, Random; MCMC is left
out: one 10-seed HMC program costs 15-45 min here) on Deceptive (n = 2), Hartmann3 and Branin, the
ablations of Fig 4 (RA-BO, Random+EXP3) on Deceptive and Hartmann3, and UHE-BO, RA-BO and MAP on E0's
GP sample paths (gp_d1, gp_d2), under five variants, each applied to every method alike:

    default      the runs of Fig 2 / Fig 5: ucb = mu + sqrt(1.96) sigma (multiplier 1.4, D3), y
                 standardised with D_{t-1} (D9), Gamma(1e-3, 10) priors with the log-Jacobian of
                 phi = log theta, bounds of D10, the fit 3 starts x 40 Adam steps
    kappa_1.96   the same with the multiplier 1.96 (beta = 1.96^2: the other reading of D3)
    gpy_like     a GPy-like model: raw (unstandardised) y with a zero prior mean, and the Gamma(1e-3,
                 10) priors placed in softplus space as GPy does (GPy optimises phi with theta =
                 log(1 + e^phi) and adds that transform's log-Jacobian, log(1 - e^-theta), where the
                 default adds log theta); the signal- and noise-variance upper bounds raised to 1e5
                 (GPy has none; raw Branin values reach 300); the rest as the default
    fit_5x300    the spec's fit budget (D11): 5 starts x 300 Adam steps, for every method's fit
    noise_refit  UHE-BO and RA-BO with UHE(estimate=PseudoData(noise_refit=True)): the posterior and
                 the UCB use the pseudo fit's lengthscales and signal variance with a noise variance
                 refitted by MAP on the real data (jbo.algorithms.uhe_bo.refit_noise), in place of the
                 pseudo fit's own (0.003-0.04 on the noiseless objectives, where MAP's is 1e-6-1e-4);
                 the rest as the default. The
                 other methods fit their noise on the real data already: the variant leaves them as they
                 are, so they are not run again and their default rows (same programs and keys) stand for
                 them (PSEUDO_ONLY)

default and kappa_1.96 differ only in a traced parameter (UHEParams.beta), so they are one
jbo.run_sweep program per (method, problem); the other two are one jbo.run_seeds program each. Every
program uses the keys jax.random.split(key(0), seeds): the seeds, initial designs and keys of the Fig 2 /
Fig 5 runs (common random numbers across methods and variants). Random fits no model, so it runs once
per problem and its rows serve every variant.

Settings from the paper: Matern-5/2 ARD, Gamma(1e-3, 10) priors, beta = 1.96, M = 2|D|. Ours: n0 = 3d
uniform, noiseless objectives, the acquisition optimiser of jbo.algorithms.uhe_bo; the budget T (default
50 BO evaluations, half of the T = 100 of the Fig 2 runs, for time on a 2-core CPU). Writes (into
experiments/results/uhe_bo/sensitivity/ with --update, else its scratch mirror) sensitivity.csv (one row per variant, problem,
method and seed: the final simple regret and the last fitted hyper-parameters), sensitivity.md (median log10
regret and UHE-BO against each method by jbo.verdict.compare, per variant and problem) and appends the command,
the machine and each program's compile and run seconds to sensitivity.log.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from types import SimpleNamespace
from typing import NamedTuple

import common
import jax.numpy as jnp
import numpy as np
import pandas as pd

import jbo
from jbo import gp, verdict
from jbo.algorithms import uhe_bo
from jbo.studies import machine_info

PROBLEMS = ("deceptive2", "hartmann3", "branin")
FIG2_METHODS = ("uhe_bo", "map", "a_gp_ucb", "wdf", "portfolio", "random")  # the default --methods
METHODS = (*FIG2_METHODS, "ra_bo", "random_exp3")  # with Fig 4's ablations (given by --methods)
VARIANTS = ("default", "kappa_1.96", "gpy_like", "fit_5x300", "noise_refit")
PSEUDO_ONLY = ("noise_refit",)  # variants that change only the pseudo-data methods (PSEUDO)
PSEUDO = tuple(m for m in uhe_bo.METHODS if isinstance(uhe_bo.make(m).estimate, uhe_bo.PseudoData))  # uhe_bo, ra_bo
BETA = {"default": 1.96, "kappa_1.96": 1.96**2}  # ucb = mu + sqrt(beta) sigma
BIG = 1e5  # gpy_like: upper bound of the signal and noise variance (raw y)


class SoftplusGamma(NamedTuple):
    """Gamma(concentration, rate) on a positive value theta, plus the log-Jacobian of GPy's Logexp
    transform theta = log(1 + e^phi): log(1 - e^-theta). With GPModel.prior_jacobian = False this is
    GPy's density over its optimisation variable phi (the default model adds log theta instead)."""

    concentration: float
    rate: float

    def log_prob(self, v):
        g = gp.GammaPrior(self.concentration, self.rate).log_prob(v)
        return g + jnp.log(-jnp.expm1(-v))


def gpy_model() -> gp.GPModel:
    """The paper's GP under GPy's conventions: raw y, zero mean, softplus-space priors."""
    g = SoftplusGamma(1e-3, 10.0)
    return gp.GPModel(
        kernel="matern52",
        noise_floor=1e-8,
        lengthscale_bounds=(0.01, 5.0),
        outputscale_bounds=(1e-3, BIG),
        noise_bounds=(1e-6, BIG),
        prior=gp.HyperPrior(g, g, g),
        prior_jacobian=False,
        standardize=False,
        mean="zero",
    )


class GPyLikeUHE(uhe_bo.UHE):
    """jbo's UHE methods with the GPy-like model (every fit, posterior, HMC target and scaling uses
    self.model). The W&dF threshold (0.1) is then in raw-y units."""

    @property
    def model(self) -> gp.GPModel:
        return gpy_model()


def algorithm(method: str, variant: str, dim: int, quick: bool):
    if method == "random" or variant in ("default", "kappa_1.96"):
        return common.method(method, dim, quick)
    opts = {"num_initial": 3 * dim, **(common.QUICK if quick else {})}
    if variant == "noise_refit":
        if method not in PSEUDO:
            raise ValueError(f"noise_refit changes only {PSEUDO}: {method}'s runs are the default's")
        return common.build(method, noise_refit=True, **opts)
    if variant == "fit_5x300":
        return common.build(method, **{**opts, "num_restarts": 5, "fit_steps": 300})
    return common.build(method, GPyLikeUHE, **opts)


def final_rows(variant, problem, method, tr, n0) -> list[dict]:
    """One row per seed: the budget T, the final simple regret and the last step's fitted hyper-parameters
    (the lengthscales' geometric mean and each dimension's)."""
    sr = np.asarray(tr.metrics["simple_regret"])
    budget = sr.shape[-1] - n0
    sr = sr[:, -1]
    info = {k: np.asarray(v)[:, -1] for k, v in getattr(tr.info, "_asdict", lambda: tr.info)().items()}
    rows = []
    for s in range(sr.shape[0]):
        row = dict(variant=variant, budget=budget, problem=problem, method=method, seed=s, simple_regret=sr[s])
        if "lengthscale" in info:
            ls = np.atleast_1d(info["lengthscale"][s])
            row["lengthscale_gm"] = float(np.exp(np.mean(np.log(ls))))
            row.update({f"lengthscale_{j}": float(v) for j, v in enumerate(ls)})
            row["outputscale"] = float(info["outputscale"][s])
            row["noise"] = float(info["noise"][s])
        rows.append(row)
    return rows


def _slice(tr, i):
    """Setting i of a run_sweep trace (metrics and info only)."""
    take = lambda d: {k: np.asarray(a)[i] for k, a in d.items()}  # noqa: E731
    info = tr.info._asdict() if hasattr(tr.info, "_asdict") else tr.info  # UHE's info is a NamedTuple
    return SimpleNamespace(metrics=take(tr.metrics), info=take(info))


def run(method, problem, variants, seeds, budget, quick, log) -> list[dict]:
    """The variants of one (method, problem): default and kappa_1.96 as one run_sweep program over
    beta, the others one run_seeds program each; Random once for all."""
    prob = common.problem(problem)
    rows = []
    todo = ["all"] if method == "random" else []
    if method != "random":
        swept = [v for v in variants if v in BETA]
        own = [v for v in variants if v not in BETA and (v not in PSEUDO_ONLY or method in PSEUDO)]
        todo = ([tuple(swept)] if swept else []) + own
    for job in todo:
        first = job[0] if isinstance(job, tuple) else ("default" if job == "all" else job)
        alg = algorithm(method, first, prob.dim, quick)
        T = alg.num_initial + budget
        t0 = time.perf_counter()
        if isinstance(job, tuple):
            base = alg.default_params()
            params = uhe_bo.UHEParams(
                beta=jnp.array([BETA[v] for v in job]),
                wdf_threshold=jnp.full(len(job), base.wdf_threshold),
                agp_power=jnp.full(len(job), base.agp_power),
            )
            tr = jbo.run_sweep(alg, prob, key=0, num_steps=T, num_seeds=seeds, params=params, on_nonfinite="warn")
            per = [(v, _slice(tr, i)) for i, v in enumerate(job)]
        else:
            tr = jbo.run_seeds(alg, prob, key=0, num_steps=T, num_seeds=seeds, on_nonfinite="warn")
            per = [(v, tr) for v in ([v for v in variants if v not in PSEUDO_ONLY] if job == "all" else [job])]
        wall = time.perf_counter() - t0
        for v, t in per:
            rows += final_rows(v, problem, method, t, alg.num_initial)
        entry = dict(
            method=method,
            problem=problem,
            variants=list(job) if isinstance(job, tuple) else job,
            seeds=seeds,
            steps=T,
            wall_s=round(wall, 1),
            load=round(os.getloadavg()[0], 2),
        )
        print(json.dumps(entry), file=log, flush=True)
        print(json.dumps(entry), file=sys.stderr, flush=True)
    return rows


def with_default(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a variant that changes only the pseudo-data methods (PSEUDO_ONLY), completed with
    the default's rows of the other methods at the same budget and problem (the same programs)."""
    extra = []
    for variant, budget in set(zip(df.variant, df.budget)):
        if variant not in PSEUDO_ONLY:
            continue
        base = df[(df.variant == "default") & (df.budget == budget) & ~df.method.isin(PSEUDO)]
        base = base[base.problem.isin(set(df[(df.variant == variant) & (df.budget == budget)].problem))]
        extra.append(base.assign(variant=variant))
    return pd.concat([df, *extra], ignore_index=True) if extra else df


def summarise(df: pd.DataFrame) -> str:
    """Markdown: per variant and problem, each method's median log10 final regret, and UHE-BO against
    it by the verdict rule (outcome, seeds UHE-BO is lower on, median difference); a PSEUDO_ONLY
    variant's other methods are the default's rows."""
    df = with_default(df)
    lines = []
    for problem in dict.fromkeys(df.problem):
        lines += [
            f"### {problem}",
            "",
            "| variant | method | seeds | median log10 regret | UHE-BO vs it | UHE-BO lower on | median Δ log10 [95%] |",
            "|---|---|---:|---:|---|---:|---|",
        ]
        runs = df[["variant", "budget"]].drop_duplicates()
        runs = sorted(map(tuple, runs.values), key=lambda vb: (-vb[1], VARIANTS.index(vb[0])))
        for variant, budget in runs:
            sub = df[(df.problem == problem) & (df.variant == variant) & (df.budget == budget)]
            ref = sub[sub.method == "uhe_bo"].set_index("seed").simple_regret.sort_index()
            for method in [m for m in METHODS if m in set(sub.method)]:
                r = sub[sub.method == method].set_index("seed").simple_regret.sort_index()
                med = np.median(np.log10(np.maximum(r.values, 1e-12)))
                cell = "—", "", ""
                if method != "uhe_bo" and len(ref):
                    seeds = ref.index.intersection(r.index)
                    c = verdict.compare(ref.loc[seeds].values, r.loc[seeds].values)
                    cell = (
                        c.outcome,
                        f"{c.wins}/{c.n}",
                        f"{c.median_diff:+.2f} [{c.ci_low:+.2f}, {c.ci_high:+.2f}]",
                    )
                lines.append(
                    f"| {variant}, T = {budget} | {common.LABELS[method]} | {len(r)} | {med:.2f} | {cell[0]} | {cell[1]} | {cell[2]} |"
                )
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--methods", default=",".join(FIG2_METHODS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--budget", type=int, default=None, help="BO evaluations after D0 (even)")
    ap.add_argument("--tag", default="", help="suffix of the output names")
    ap.add_argument("--no-run", action="store_true", help="only redo the summary from the CSV")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    seeds = a.seeds or (2 if a.quick else 10)
    budget = a.budget or (6 if a.quick else 50)
    if budget % 2:
        raise ValueError(f"--budget must be even (D7), got {budget}")
    variants = a.variants.split(",")
    bad = set(variants) - set(VARIANTS)
    if bad:
        raise ValueError(f"unknown variant(s) {sorted(bad)}; choose from {VARIANTS}")
    name = "sensitivity" + a.tag
    csv = common.out_path("sensitivity", name, a.quick, "csv")
    if not a.no_run:
        with open(common.out_path("sensitivity", name, a.quick, "log"), "a") as log:
            print(
                f"# python experiments/uhe_bo/sensitivity.py {' '.join(sys.argv[1:] if argv is None else argv)}",
                file=log,
            )
            print(f"# machine: {machine_info()}; {seeds} seeds, T = {budget}", file=log, flush=True)
            common.header(f"UHE sensitivity: {variants}, {seeds} seeds, T = {budget}")
            t0 = time.perf_counter()
            for p in a.problems.split(","):
                for m in a.methods.split(","):
                    rows = pd.DataFrame(run(m, p, variants, seeds, budget, a.quick, log))
                    if csv.exists():  # problems differ in dimension, so align the lengthscale columns
                        rows = pd.concat([pd.read_csv(csv), rows], ignore_index=True)
                    rows.to_csv(csv, index=False)
            print(f"# wall {time.perf_counter() - t0:.0f} s", file=log, flush=True)
    common.require(csv)
    df = pd.read_csv(csv).drop_duplicates(["variant", "budget", "problem", "method", "seed"], keep="last")
    text = (
        f"# UHE-BO sensitivity (`{csv.name}`)\n\n"
        "Final simple regret after the budget in `sensitivity.log`; UHE-BO against each method by the "
        "verdict rule (jbo.verdict.compare on log10 regret, paired by seed).\n\n" + summarise(df)
    )
    common.out_path("sensitivity", name, a.quick, "md").write_text(text)
    print(text, file=sys.stderr)


if __name__ == "__main__":
    main()
