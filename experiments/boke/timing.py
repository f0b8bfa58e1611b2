"""BOKE paper Table 1, measured: seconds per BO step against the number of points t, on Hartmann3.

    jbo reproduce boke table1     # both parts; --quick (t = 100, 200, one repeat, 2 seeds) is a smoke run

For each t the buffer has capacity exactly t, filled with t uniform points (re-jitted per size:
the fixed-capacity scan would make the cost flat in t), and one `ask` (surrogate + acquisition
maximisation: 1024 d candidates + data, 10 starts x 50 Adam steps for every method) is timed with
block_until_ready; median of `--repeats` calls with fresh keys, compile excluded. Methods: BOKE,
BOKE+, KR-UCB (in the state these buffers give, i.e. its re-sampling branch), the paper's GP-UCB
(fixed hyper-parameters: one Cholesky per step) and GP-UCB with per-step MLE refit (RBF ARD,
2 restarts x 40 Adam steps), the baseline of the 5x target. Log-log slopes are fitted
over the measured t. The paper gives only the asymptotic table: BOKE O(m t) per step, KR-UCB
O(t^2 + m t), GP-UCB O(t^3 + m t^2).
Second part: 30 seeds of BOKE on Hartmann3 (n0 = 15, T = 150) as one vmapped scan: compile and
run seconds (the "< 30 s after compilation" target).
Writes table1_timing.{csv,png} (experiments/results/boke/table1/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import time

import equinox as eqx
import jax
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from common import add_update_flag, gp_options, header, out_path  # noqa: E402

import jbo  # noqa: E402
from jbo import data  # noqa: E402
from jbo.algorithms import boke  # noqa: E402
from jbo.engine import Step, box_spec  # noqa: E402
from jbo.studies import compile_seeds  # noqa: E402

ask = eqx.filter_jit(lambda alg, key, state, params: alg.ask(key, state, params, Step(state.buffer.count, False))[0])


def time_step(alg, params, problem, t, repeats):
    x = jax.random.uniform(jax.random.key(t), (t, problem.dim))
    y = jax.vmap(problem.objective_unit)(x)
    state = alg.init(jax.random.key(0), params, box_spec(problem.dim, t))
    state = state._replace(buffer=data.from_arrays(x, y, t))
    jax.block_until_ready(ask(alg, jax.random.key(0), state, params))  # compile for this size
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(ask(alg, jax.random.key(r + 1), state, params))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--part", choices=["all", "table", "seeds"], default="all")
    add_update_flag(ap)
    args = ap.parse_args()
    header("BOKE Table 1: time per step against t (Hartmann3, d = 3)")
    problem = jbo.problems.get("hartmann3")
    big = [100, 200, 400, 800, 1600, 3200]
    # a refit at every step (refit_growth=None), 2 restarts x 40 Adam steps, 10 starts: as the committed table was timed
    gp_refit = jbo.algorithms.GPBO(
        **gp_options(
            kernel="se",
            fit="mle",
            fit_restarts=2,
            fit_steps=40,
            refit_growth=None,
            num_raw_per_dim=1024,
            num_starts=10,
            opt_steps=50,
            opt_method="adam",
        )
    )
    methods = {  # name: (algorithm, params, t grid)
        "BOKE": (boke.BOKE(), boke.BOKEParams(varsigma=0.1), big),
        "BOKE+": (boke.BOKE(plus=True), boke.BOKEPlusParams(varsigma=0.1), big),
        "KR-UCB": (boke.KRUCB(), boke.KRUCBParams(varsigma=0.1), big),
        "GP-UCB (fixed)": (boke.PaperGP(), boke.PaperGP().default_params(), big[:5]),
        "GP-UCB (MLE refit)": (
            gp_refit,
            jbo.replace_params(gp_refit.default_params(), beta=4.0, lengthscale=0.35),
            big[:4],
        ),
    }
    if args.part in ("all", "table"):
        table_part(methods, problem, args)
    if args.part in ("all", "seeds"):
        seeds_part(problem, args)


def table_part(methods, problem, args):
    rows = []
    for name, (alg, params, ts) in methods.items():
        for t in ts[:2] if args.quick else ts:
            s = time_step(alg, params, problem, t, 1 if args.quick else args.repeats)
            rows.append((name, t, s))
            print(f"{name:20s} t={t:5d}  {1e3 * s:10.2f} ms/step", flush=True)
    table = pd.DataFrame(rows, columns=["method", "t", "seconds_per_step"])
    table.to_csv(out_path("table1", "table1_timing", args.quick, "csv"), index=False)
    print("\nfitted log-log slopes (seconds per step ~ t^slope):")
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for name, g in table.groupby("method", sort=False):
        slope = np.polyfit(np.log(g.t), np.log(g.seconds_per_step), 1)[0] if len(g) > 1 else float("nan")
        print(f"  {name:20s} slope {slope:.2f} over t = {g.t.min()}..{g.t.max()}")
        ax.loglog(g.t, g.seconds_per_step, marker="o", label=f"{name} (slope {slope:.2f})")
    at = table[table.t == 200].set_index("method").seconds_per_step
    if {"BOKE", "GP-UCB (MLE refit)"} <= set(at.index):
        print(
            f"\nt = 200: GP-UCB (MLE refit) / BOKE = {at['GP-UCB (MLE refit)'] / at['BOKE']:.1f}x, "
            f"GP-UCB (fixed) / BOKE = {at['GP-UCB (fixed)'] / at['BOKE']:.1f}x"
        )
    ax.set(xlabel="t (points in the data set)", ylabel="seconds per step", title="BOKE Table 1, measured (Hartmann3)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_path("table1", "table1_timing", args.quick, "png"), dpi=110)


def seeds_part(problem, args):
    seeds = 2 if args.quick else 30
    keys = jax.random.split(jax.random.key(0), seeds)
    fn, compile_s = compile_seeds(
        boke.BOKE(num_initial=15), problem, keys=keys, num_steps=150, params=boke.BOKEParams(varsigma=0.09546)
    )
    t0 = time.perf_counter()
    tr = jax.block_until_ready(fn(keys))
    print(
        f"\n{seeds} seeds of BOKE on Hartmann3, T = 150, one program: compile {compile_s:.1f} s, "
        f"run {time.perf_counter() - t0:.1f} s, mean final simple regret "
        f"{float(tr.metrics['simple_regret'][:, -1].mean()):.4f}"
    )


if __name__ == "__main__":
    main()
