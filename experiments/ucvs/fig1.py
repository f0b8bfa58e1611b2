"""uCVS paper, Figs 1-2 and the R^f / R^c / i_* table: every method on objectives x cost sets x
variances x seeds, budget C = 100, 5 free initial points (bocvs.md 4.1).

One compiled program per (objective, method): the cost sets and variances of an objective are
environments that differ only in array values, run with the seeds one after the other
(``jbo.program(..., batch="environments", sequential=True)``) so that a step computes only its own
branch (exploration: one set; exploitation: every set; after the budget: nothing). Compile time is
measured ahead of time and reported apart from run time, with the machine load.

Outputs in the folder of --figure (default fig1_2: experiments/results/ucvs/fig1_2/ with --update, else its
scratch mirror; acq_sizes: the runs at the spec's suggested acquisition sizes; speed: re-runs that time the
grid's programs); <tag> is --tag, suffix _quick for --quick:
  <tag>_curves.csv  per run, on the cost grid 0..100: simple regret (F on an independent 8192-row
                    free-variable sample, and on the environment's own 1500-row sample), evaluations
  <tag>_runs.csv    per run: steps, spent, truncated, R^f, R^c (alpha = 0.1, shifted), fraction of plays on i_*
  <tag>_timing.csv  per program: compile s, run s, lanes, load average
  <tag>.log         one line per program
  <tag>_regret.png, and the evaluations plot (<tag> with fig1 -> fig2)_evaluations.png

`jbo reproduce ucvs fig1_2` runs the grid, its re-runs, seeds 5-9 and the naive additions, then
summarize.py (experiments/ucvs/figures.py declares every step).

Settings from the paper: budget 100, exploration <= 60, beta = 2^2 (weight 2), alpha 0.1 halved every
d exploitation steps, cost sets cheap / moderate, variances 0.02 / 0.04, 5 seeds, 5 free initial points,
SE-ARD GP with l = 0.2, noise 1e-4 (the code's). Ours (bocvs.md 6): observation noise 0.01, cost noise
std 0.02 on sets with c >= 0.1, the alpha shift f_lo, and the inner optimiser / Monte-Carlo sizes
below (a CPU budget; the paper does not state them).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pandas as pd

import jbo  # noqa: F401
from jbo import data, engine, parts
from jbo.algorithms import ucvs as A
from jbo.problems import ucvs as P

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, output_dir, require  # noqa: E402, F401 (also for the other scripts here)

PAPER = "ucvs"
#: the figures (folders under experiments/results/ucvs/) whose runs this script writes (--figure)
FIGURES = ("fig1_2", "acq_sizes", "speed")
BUDGET = 100.0
GRID = np.linspace(0.0, BUDGET, 101)
METHODS = {
    "uCVS": dict(method="ucvs"),
    "UCB-PSQ": dict(method="ucb_psq"),
    "TS-PSQ": dict(method="ts_psq"),
    "ETC-50": dict(method="etc"),
    "ETC-50 (tiers)": dict(method="etc", groups="tiers"),
    "UCB-CVS (known costs)": dict(method="ucb_cvs"),
    "random": dict(method="random"),
}
#: the grid's acquisition sizes (a CPU budget; the spec suggests 256 MC rows, 512 candidates, top-4 x 30
#: steps): the defaults of the command line below, shared by the speed checks (ab_speed, bucket_check)
GRID_ACQ = dict(num_mc=16, num_raw=16, num_starts=1, opt_steps=5)
EXTRAS = {
    "UCB-naive": dict(method="ucb_naive"),
    "TS-naive": dict(method="ts_naive"),
    "EI-naive": dict(method="ei_naive"),
}


def out_dir(figure: str = "fig1_2") -> Path:
    """The folder a figure's files go to: experiments/results/ucvs/<figure> with --update, else its scratch
    mirror (experiments/outdir.py)."""
    return output_dir(PAPER, figure)


def add_args(ap):
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 seed, tiny optimiser, T = 60 (--tmax sets it)")
    ap.add_argument("--objectives", nargs="*", default=list(P.OBJECTIVES))
    ap.add_argument("--costs", nargs="*", default=["cheap", "moderate"])
    ap.add_argument("--variances", nargs="*", type=float, default=[0.02, 0.04])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument(
        "--seed-start",
        type=int,
        default=0,
        help="run seeds seed_start .. seed_start + seeds - 1 (a run's seed is the same whatever the others: "
        "more seeds can be added to a grid later)",
    )
    ap.add_argument("--methods", nargs="*", default=list(METHODS), help="names of METHODS or EXTRAS")
    ap.add_argument("--extras", action="store_true", help="also the additions UCB-naive, TS-naive, EI-naive")
    ap.add_argument("--num-mc", type=int, default=GRID_ACQ["num_mc"], help="free-variable rows of the acquisitions")
    ap.add_argument("--num-raw", type=int, default=GRID_ACQ["num_raw"])
    ap.add_argument("--starts", type=int, default=GRID_ACQ["num_starts"])
    ap.add_argument("--opt-steps", type=int, default=GRID_ACQ["opt_steps"])
    ap.add_argument("--opt-method", choices=["adam", "lbfgs"], default="adam", help="the inner optimiser")
    ap.add_argument(
        "--refit",
        choices=["spec", "never"],
        default="never",
        help="uCVS hyper-parameters in exploitation: spec = 10 Adam steps every step; never = fixed",
    )
    ap.add_argument(
        "--tmax",
        type=int,
        default=None,
        help="scan length (steps incl. the initial design; default 750, 60 with --quick)",
    )
    ap.add_argument(
        "--bucket-step",
        default="128",
        help="growth cap of the data-prefix buckets (CVS.growth.step); 'none' = powers of two, "
        "as fig1_grid2 / fig1_grid3 / fig1_grid3_check and ablation2 / ablation_grid ran",
    )
    ap.add_argument("--eval-rows", type=int, default=8192)
    ap.add_argument("--tag", default="fig1")


def build(name, opts, args):
    kw = dict(opts)
    if args.quick:
        kw.update(num_mc=4, num_raw=4, num_starts=1, opt_steps=2)
    else:
        kw.update(
            num_mc=args.num_mc,
            num_raw=args.num_raw,
            num_starts=args.starts,
            opt_steps=args.opt_steps,
            opt_method=args.opt_method,
            bucket_step=None if args.bucket_step == "none" else int(args.bucket_step),
        )
    if kw["method"] == "ucvs" and args.refit == "never":
        kw["refit"] = False
    return cvs(**kw)


def cvs(
    method="ucvs",
    num_raw=64,
    num_starts=2,
    opt_steps=15,
    opt_method="adam",
    bucket=True,
    bucket_step=128,
    refit=None,
    **kw,
):
    """A.CVS from this script's flat settings (the names its command line and result files use): the
    named method (A.make: its selection rule and value estimate, with their flat options preset,
    alpha_schedule, groups, ...), the inner maximiser, the growth of the data prefix (bucket,
    bucket_step) and refit=False for fixed hyper-parameters, as parts."""
    maximiser = parts.Maximiser(num_raw=num_raw, num_starts=num_starts, steps=opt_steps, method=opt_method)
    growth = dataclasses.replace(A.GROWTH, step=bucket_step) if bucket else data.WHOLE
    hypers = parts.FixedHypers() if refit is False else A.REFIT if refit else None
    return A.make(method, maximiser=maximiser, growth=growth, hypers=hypers, **kw)


def run_program(alg, envs, seeds, tmax, params=None, seed_start=0):
    """(trace with axes (E, S, T), compile s, run s) of seeds seed_start .. seed_start + seeds - 1: seed s
    has the key split(key(2025), n)[s] for any n > s (a prefix of a longer split is the shorter split)."""
    params = alg.default_params() if params is None else params
    keys = jax.random.split(jax.random.key(2025), seed_start + seeds)[seed_start:]
    t0 = time.perf_counter()
    compiled = program(alg, envs, keys, tmax, params, BUDGET)
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    trace = jax.block_until_ready(compiled(keys, params))
    return trace, t_compile, time.perf_counter() - t0


def program(alg, envs, keys, tmax, params, budget):
    """The compiled program (compiled now, never from a cache) of the environments and keys, free
    initial points, environments and seeds one after the other (jbo.program(batch="environments",
    sequential=True)): program(keys, params) -> trace with axes (E, S, T)."""
    return engine.program(
        alg,
        list(envs),
        keys=keys,
        num_steps=tmax,
        params=params,
        batch="environments",
        budget=budget,
        free_initial=True,
        sequential=True,
        cache=False,
    )


def post_process(trace, envs, method, objective, eval_rows, seed_start=0):
    """Per-run curves on the cost grid and run summaries (run s of the trace is seed seed_start + s)."""
    curves, runs = [], []
    m = trace.metrics
    for e, env in enumerate(envs):
        S = m["value"].shape[1]
        for s in range(S):
            active = np.asarray(m["active"][e, s]) & ~np.asarray(m["initial"][e, s])
            sets = np.asarray(trace.actions.set[e, s])[active]
            xs = np.asarray(trace.actions.x[e, s])[active]
            cost = np.asarray(m["cost"][e, s])[active]
            f_acq = np.asarray(m["value"][e, s])[active]
            seed = seed_start + s
            f_eval = np.asarray(P.expected_values(env, sets, xs, jax.random.key(7 + seed), eval_rows))
            f_plus = float(env.f_plus)
            cum = np.cumsum(cost)
            idx = np.searchsorted(cum, GRID, side="right") - 1
            simple = f_plus - np.maximum.accumulate(f_eval)
            simple_acq = f_plus - np.maximum.accumulate(f_acq)
            first = lambda a: np.where(idx >= 0, a[np.maximum(idx, 0)], a[0])  # noqa: E731  before the first step: the first value
            curves.append(
                pd.DataFrame(
                    {
                        "objective": objective,
                        "cost_set": cost_name(env),
                        "variance": float(env.variance),
                        "method": method,
                        "seed": seed,
                        "cost": GRID,
                        "simple_regret": first(simple),
                        "simple_regret_own_sample": first(simple_acq),
                        "evaluations": idx + 1,
                    }
                )
            )
            qreg = np.asarray(m["quality_regret"][e, s])[active]
            runs.append(
                {
                    "objective": objective,
                    "cost_set": cost_name(env),
                    "variance": float(env.variance),
                    "method": method,
                    "seed": seed,
                    "steps": int(active.sum()),
                    "spent": float(cum[-1]),
                    "truncated": bool(cum[-1] < BUDGET),
                    "final_simple_regret": float(simple[-1]),
                    "R_f": float(qreg.sum()),
                    "R_c": float(np.asarray(m["cost_regret"][e, s])[active].sum()),
                    "frac_on_i_star": float(np.asarray(m["on_cheapest"][e, s])[active].mean()),
                    "set_counts": " ".join(str(c) for c in np.bincount(sets, minlength=7)),
                }
            )
    return curves, runs


def cost_name(env):
    c = tuple(np.round(np.asarray(env.cost_mean), 6))
    return next((k for k, v in P.COST_SETS.items() if tuple(v) == c), str(c))


def plot(curves: pd.DataFrame, column: str, path, ylabel, log=True):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    objs = list(dict.fromkeys(curves.objective))
    cells = list(dict.fromkeys(zip(curves.cost_set, curves.variance)))
    fig, axes = plt.subplots(len(objs), len(cells), figsize=(3.6 * len(cells), 2.8 * len(objs)), squeeze=False)
    for r, o in enumerate(objs):
        for c, (cs, v) in enumerate(cells):
            ax = axes[r, c]
            sub = curves[(curves.objective == o) & (curves.cost_set == cs) & (curves.variance == v)]
            for meth, g in sub.groupby("method", sort=False):
                tab = g.pivot_table(index="cost", columns="seed", values=column)
                mean, se = tab.mean(axis=1), tab.std(axis=1, ddof=1).fillna(0) / np.sqrt(tab.shape[1])
                ax.plot(tab.index, mean, label=meth)
                ax.fill_between(tab.index, mean - se, mean + se, alpha=0.2)
            if log:
                ax.set_yscale("log")
            ax.set_title(f"{o}, {cs}, v={v}", fontsize=9)
            ax.set_xlabel("cost spent")
            ax.set_ylabel(ylabel)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_args(ap)
    ap.add_argument("--figure", choices=FIGURES, default="fig1_2", help="the folder the files go to")
    add_update_flag(ap)
    args = ap.parse_args()
    out = out_dir(args.figure)
    seeds = 1 if args.quick else args.seeds
    tmax = args.tmax or (60 if args.quick else 750)
    suffix = "_quick" if args.quick else ""
    methods = {k: {**METHODS, **EXTRAS}[k] for k in args.methods}
    if args.extras:
        methods.update(EXTRAS)
    curves, runs, timing = [], [], []
    log = open(out / f"{args.tag}{suffix}.log", "a")
    for objective in args.objectives:
        envs = [P.CVSProblem(objective, c, v) for c in args.costs for v in args.variances]
        for name, opts in methods.items():
            alg = build(name, opts, args)
            trace, tc, tr = run_program(alg, envs, seeds, tmax, seed_start=args.seed_start)
            load = os.getloadavg()
            c, r = post_process(
                trace, envs, name, objective, 1024 if args.quick else args.eval_rows, seed_start=args.seed_start
            )
            curves += c
            runs += r
            timing.append(
                {
                    "objective": objective,
                    "method": name,
                    "compile_s": tc,
                    "run_s": tr,
                    "lanes": len(envs) * seeds,
                    "run_s_per_lane": tr / (len(envs) * seeds),
                    "tmax": tmax,
                    "load1": load[0],
                    "load5": load[1],
                    "load15": load[2],
                }
            )
            line = (
                f"{objective:11s} {name:22s} compile {tc:6.1f}s run {tr:7.1f}s ({len(envs) * seeds} runs) "
                f"load {load[0]:.1f}/{load[1]:.1f}; truncated runs {sum(x['truncated'] for x in r)}"
            )
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()
            pd.concat(curves).to_csv(out / f"{args.tag}_curves{suffix}.csv", index=False)
            pd.DataFrame(runs).to_csv(out / f"{args.tag}_runs{suffix}.csv", index=False)
            pd.DataFrame(timing).to_csv(out / f"{args.tag}_timing{suffix}.csv", index=False)
    table = pd.concat(curves)
    plot(table, "simple_regret", out / f"{args.tag}_regret{suffix}.png", "simple regret")
    plot(
        table,
        "evaluations",
        out / f"{args.tag.replace('fig1', 'fig2')}_evaluations{suffix}.png",
        "evaluations",
        log=False,
    )
    print("wrote", out)


if __name__ == "__main__":
    main()
