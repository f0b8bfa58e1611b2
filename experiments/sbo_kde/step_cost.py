"""How one SBO-KDE step's time grows with the rows held, in alternating repeats: the log-log slope in t
against the paper's order of an acquisition evaluation, O((t² + td)M) (App. C).

    taskset -c 1 python experiments/sbo_kde/step_cost.py [--repeats 3] [--update]
    jbo reproduce sbo_kde step_cost [--budget smoke|default]      # the declared runs (figures.py)

The step is budget_cost.py's (fit + acquisition + inner optimiser at the released code's settings:
M = 1024 KDE samples and inner points, 1024 raw points, 10 starts x 50 Adam steps, the 2 x 60 MAP refit,
on sbo_kde:hartmann, one seed), compiled and warmed up once per capacity (64, 128, 256, 350 rows: the
engine's growing segments for T = 350: the algorithm's capacities), then timed in rounds that visit every
capacity once (--repeats rounds), so that a change of the machine's load falls on every capacity alike. Writes
step_cost.csv (one row per timed step, with the load average read before it) into
experiments/results/sbo_kde/step_cost/ with --update, else its scratch mirror. --quick (a smoke run): T = 100
(capacities 64 and 100), M = 32, 64 raw points, 2 starts x 5 Adam steps; writes step_cost_quick.csv.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import jbo
from jbo import data, parts
from jbo.algorithms import sbo_kde
from jbo.engine import Step
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

T, M = 350, 1024
QUICK = dict(
    T=100, M=32, maximiser=parts.Maximiser(num_raw=64, num_starts=2, steps=5, method="adam", screen_data=False)
)


def prepared(alg, problem, capacity: int, num_steps: int = T):
    """The compiled, warmed-up step at `capacity` rows, and its state (as budget_cost.step_seconds)."""
    key = jax.random.key(0)
    state = alg.init(key, alg.default_params(), problem.spec(num_steps))
    width = state.buffer.x.shape[1]
    x = jax.random.uniform(key, (capacity - 1, width))
    state = state._replace(buffer=data.from_arrays(x, jnp.sin(3 * x).sum(-1), capacity))
    step = Step(jnp.int32(capacity - 1), jnp.bool_(False))
    ask = jax.jit(jax.vmap(lambda k, s: alg.ask(k, s, alg.default_params(), step)[0], in_axes=(0, None)))
    jax.block_until_ready(ask(jax.random.split(key, 1), state))  # compile and warm up
    return ask, state


def slope(rows, secs) -> float:
    """Least-squares slope of log(seconds) on log(rows)."""
    return float(np.polyfit(np.log(np.asarray(rows, float)), np.log(np.asarray(secs, float)), 1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a smoke run: T = 100, M = 32, a small inner optimiser")
    add_update_flag(ap)
    args = ap.parse_args()
    out = output_dir("sbo_kde", "step_cost") / f"step_cost{'_quick' if args.quick else ''}.csv"
    print(f"SBO-KDE step cost, {args.repeats} rounds\nmachine: {machine_info()}", file=sys.stderr, flush=True)
    problem = jbo.problems.get("sbo_kde:hartmann")
    if args.quick:
        num_steps, m = QUICK["T"], QUICK["M"]
        alg = sbo_kde.SBO(method="sbo_kde", num_samples=m, num_inner=m, maximiser=QUICK["maximiser"])
    else:
        num_steps, m = T, M
        alg = sbo_kde.SBO(method="sbo_kde", num_samples=m, num_inner=m)
    caps = tuple(alg.capacities(num_steps))
    steps = {c: prepared(alg, problem, c, num_steps) for c in caps}
    rows = []
    for r in range(args.repeats):
        for c in caps:
            ask, state = steps[c]
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            jax.block_until_ready(ask(jax.random.split(jax.random.key(1 + r), 1), state))
            s = time.perf_counter() - t0
            rows.append((r, c, s, load))
            print(f"round {r}  {c:4d} rows: {s:7.2f} s   load {load:.2f}", flush=True)
    table = pd.DataFrame(rows, columns=["repeat", "rows", "seconds", "load1"])
    table.to_csv(out, index=False)
    for r, g in table.groupby("repeat"):
        top = g[g.rows >= caps[-2]]
        every, last = slope(g.rows, g.seconds), slope(top.rows, top.seconds)
        print(f"round {r}: slope {every:.2f} over all rows, {last:.2f} at the top")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
