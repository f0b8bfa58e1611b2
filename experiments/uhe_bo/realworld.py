"""Fig 2 bottom (spec 5.3): the seven methods on the three real-world problems, all REPLACEMENTS of
the paper's data sets (no OpenML / HPOBench here; see jbo/problems/uhe_bo.py):

    python experiments/uhe_bo/realworld.py [--quick] [--problems lr,gb,lunar] [--methods uhe_bo,map]
                                        [--seeds 10] [--budget 100] [--tag _x] [--no-run]
                                        [--workers 2] [--seed-ids 0,1,2] [--bucket-step 32]
                                        [--folder fig4_runtime]

* lr    (replaces LR-Vehicle, d = 2): SGD logistic regression in pure JAX, so every seed of a method
        runs inside one compiled program, like the synthetic figures;
* gb    (replaces XGB-SoftwareDefect, d = 4): sklearn HistGradientBoosting, evaluated on the host
        through jbo.AskTell (all seeds of a method in one AskTell, one point per seed and step);
* lunar (Lunar Lander, d = 12, gymnasium LunarLander-v3, TuRBO's heuristic controller, mean reward
        over 50 fixed episode seeds), on the host through jbo.AskTell.

From the paper: the seven methods, 10 seeds, Matern-5/2 ARD, the priors, beta = 1.96, M = 2|D|, HMC
200 + 10. Ours (spec 7): n0 = 3d uniform (D1), T = 100 BO evaluations (lr, gb) and 200 (lunar) (D2),
the replacements themselves, and the fit / optimiser budgets of jbo.algorithms.uhe_bo's docstring.
The metric is the best observed value (test accuracy, mean reward), higher is better (D8).
For the host problems the log records, per method, the seconds spent in the algorithm (ask + tell,
compiled once) apart from the seconds spent evaluating the objective. The files (fig2_realworld<tag>_*)
go to experiments/results/uhe_bo/fig2_realworld/ with --update (else its scratch mirror), or to the figure
folder --folder names (fig4_runtime: the one-seed timing runs on the boosting replacement).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import common
import equinox as eqx
import jax
import numpy as np
import pandas as pd

import jbo

HOST = {"gb", "lunar"}
BUDGET = {"lr": 100, "gb": 100, "lunar": 200}


@eqx.filter_jit
def _info(alg, states, params):
    """The algorithm's per-step diagnostics of every run (compiled once per algorithm: the seeds of
    --seed-ids share it)."""
    return jax.vmap(lambda s: alg.info(s, params))(states)


def run_host(
    name: str,
    prob_name: str,
    budget: int,
    seeds: int,
    quick: bool,
    log=sys.stderr,
    pool=None,
    seed_id: int | None = None,
    bucket_step: int | None = None,
):
    """All seeds of one method on a host problem, through one jbo.AskTell (num_seeds = seeds): the
    same keys as run_one's program, so the same initial design D0 under each seed (D1). `pool`: an
    executor evaluating the seeds' points in parallel (the objectives are deterministic, so the values
    are those of the sequential loop); a progress line goes to stderr every 20 evaluations.
    seed_id: run only that seed of the `seeds`-seed batch, alone (one AskTell without num_seeds, on the
    batch's key for that seed: the same D0 and decisions as in the batch, up to rounding) -- for methods
    too slow to run all seeds in one process (MCMC on lunar); its rows carry seed = seed_id."""
    prob = common.problem(prob_name)
    objective = {"gb": jbo.problems.uhe_bo.gb_objective, "lunar": jbo.problems.uhe_bo.lunar_objective}[prob_name]
    alg = common.method(name, prob.dim, quick, bucket_step=bucket_step)
    T = alg.num_initial + budget
    if seed_id is None:
        opt = jbo.AskTell(alg, prob.space, num_steps=T, key=jax.random.key(0), num_seeds=seeds)
    else:
        if not 0 <= seed_id < seeds:
            raise ValueError(f"seed id {seed_id} is outside the {seeds}-seed batch")
        opt = jbo.AskTell(alg, prob.space, num_steps=T, key=jax.random.split(jax.random.key(0), seeds)[seed_id])
    t_alg = t_eval = 0.0
    ys, infos = [], []
    t_first = None
    for t in range(T):
        t0 = time.perf_counter()
        x = opt.ask() if seed_id is None else opt.ask()[None]
        t1 = time.perf_counter()
        y = np.array(list(pool.map(objective, x)) if pool is not None else [objective(xi) for xi in x])
        t2 = time.perf_counter()
        opt.tell(x, y) if seed_id is None else opt.tell(x[0], y[0])
        t3 = time.perf_counter()
        infos.append(jax.tree.map(np.asarray, _info(alg, opt.state, opt.params)))  # diagnostics: not timed
        if t == alg.num_initial:  # the first BO step compiles ask / tell: reported apart
            t_first = (t1 - t0) + (t3 - t2)
        else:
            t_alg += (t1 - t0) + (t3 - t2)
        t_eval += t2 - t1
        ys.append(y)
        if (t + 1) % 20 == 0:
            print(
                f"  {name} on {prob_name}: {t + 1}/{T} evaluations, algorithm {t_alg:.0f} s, objective {t_eval:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    y = np.stack(ys, 1)  # (seeds, T)
    best = np.maximum.accumulate(y, axis=1)
    infos = [i._asdict() if hasattr(i, "_asdict") else dict(i) for i in infos]  # UHE's info is a NamedTuple
    info = {k: np.stack([i[k] for i in infos], 1) for k in infos[0]} if infos[0] else {}
    timing = dict(
        method=name,
        problem=prob_name,
        seeds=seeds if seed_id is None else [seed_id],
        steps=T,
        first_bo_step_s=t_first,
        algorithm_s=t_alg,
        evaluation_s=t_eval,
        bucket_step=bucket_step,
        load=os.getloadavg()[0],
    )
    print(json.dumps(timing), file=log, flush=True)
    rows = common.trace_rows(name, prob_name, alg.num_initial, prob.dim, np.full_like(best, np.nan), best, info)
    if seed_id is not None:
        for row in rows:
            row["seed"] = seed_id
    return rows, timing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--methods", default=",".join(common.SEVEN))
    ap.add_argument("--problems", default="lr,gb,lunar")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--budget", type=int, default=None, help="BO evaluations after D0 (even); default 100, lunar 200")
    ap.add_argument("--tag", default="", help="suffix of the output names (reduced runs)")
    ap.add_argument("--no-run", action="store_true", help="only redo the plot and summary from the CSVs")
    ap.add_argument(
        "--seed-ids",
        default=None,
        help="host problems: run these seeds of the --seeds batch one at a time (e.g. 0,1,2), each "
        "written when it ends: a slow method's seeds spread over several processes",
    )
    ap.add_argument(
        "--bucket-step",
        type=int,
        default=None,
        help="host problems: UHE bucket_step (finer prefix sizes; the same numbers, less work at "
        "large n); default: powers of two",
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=0,
        help="processes evaluating the host objectives (gb, lunar) in parallel; 0: in this process",
    )
    ap.add_argument("--folder", default="fig2_realworld", help="the figure folder written to")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    probs, methods = a.problems.split(","), a.methods.split(",")
    unknown = [p for p in probs if p not in BUDGET]
    if unknown:
        raise ValueError(f"unknown problem(s) {unknown}; choose from {sorted(BUDGET)}")
    seeds = a.seeds or (2 if a.quick else 10)
    common.header(f"UHE fig2 bottom: {probs} x {methods}, {seeds} seeds")
    log = open(common.out_path(a.folder, "fig2_realworld" + a.tag, a.quick, "log"), "a")
    ids = [None] if a.seed_ids is None else [int(i) for i in a.seed_ids.split(",")]
    if ids != [None] and not set(probs) <= HOST:
        raise ValueError(f"--seed-ids is for the host problems {sorted(HOST)}, not {sorted(set(probs) - HOST)}")
    pool = None
    if a.workers > 0:
        import concurrent.futures
        import multiprocessing

        pool = concurrent.futures.ProcessPoolExecutor(a.workers, mp_context=multiprocessing.get_context("spawn"))
    for p in [] if a.no_run else probs:
        budget = a.budget or (6 if a.quick else BUDGET[p])
        if budget % 2:
            raise ValueError(f"--budget must be even (D7), got {budget}")
        csv = common.out_path(a.folder, f"fig2_realworld{a.tag}_{p}", a.quick, "csv")
        for m in methods:
            for i in ids:
                if p in HOST:
                    rows, timing = run_host(
                        m, p, budget, seeds, a.quick, log=log, pool=pool, seed_id=i, bucket_step=a.bucket_step
                    )
                else:
                    rows, timing, _ = common.run_one(m, p, budget, seeds, a.quick, log=log)
                print(timing, file=sys.stderr, flush=True)
                pd.DataFrame(rows).to_csv(csv, mode="a", header=not csv.exists(), index=False)
    if pool is not None:
        pool.shutdown()
    # the plot and summary cover every problem run so far under this tag, with the MCMC runs (tag _mcmc)
    df = common.read_figure(
        "fig2_realworld", list(BUDGET), common.with_mcmc(a.tag), a.quick, a.folder
    )  # last write kept
    if df is None:
        raise common.missing(common.out_dir(a.folder), f"fig2_realworld{a.tag}_<problem>.csv")
    common.plot_curves(
        df,
        common.out_path(a.folder, "fig2_realworld" + a.tag, a.quick, "png"),
        metric="best_value",
        log=False,
        title="UHE-BO Fig 2 bottom (replacements): best observed value, mean +- s.e.",
    )
    s = common.summary(df, metric="best_value")
    s.to_csv(common.out_path(a.folder, "fig2_realworld" + a.tag + "_summary", a.quick, "csv"), index=False)
    print(s.to_string(), file=sys.stderr)


if __name__ == "__main__":
    main()
