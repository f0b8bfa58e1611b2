"""What the released code's SBO-KDE budget costs on this machine: T = 350 evaluations (10 Sobol + 340 BO steps),
M = 1024 KDE samples and 1024 inner points, the paper's raw screening (1024) with 10 starts x 50 Adam
steps and the 2 x 60 MAP refit, 8 problems x 5 seeds.

One SBO-KDE step (fit + acquisition + inner optimiser) is timed at each segment capacity the engine's
growing state uses for T = 350 (64, 128, 256, 350: the algorithm's capacities, jbo.data.Growth) on
sbo_kde:hartmann, one seed after a warm-up, and the run's cost is the sum over its steps of the step
cost at that step's capacity; the whole-buffer cost charges every step at capacity 350. The step's floating-point work is dominated
by the acquisition: every evaluation queries the posterior at M contexts (about 2 M N^2 flops), for
about raw + 3 x starts x steps evaluations per step.

    python experiments/sbo_kde/budget_cost.py            # ~5 min here
    python experiments/sbo_kde/budget_cost.py --seeds 5 --out budget_cost_h100.json   # on a GPU: 5 seeds per program
    jbo reproduce sbo_kde budget_cost [--budget smoke|default|paper]      # the declared runs (figures.py)

Writes budget_cost.json (or --out) into experiments/results/sbo_kde/budget_cost/ with --update, else its scratch
mirror. --quick (a smoke run): T = 100 (capacities 64 and 100), M = 32, 64 raw points, 2 starts x 5 Adam steps;
writes budget_cost_quick.json unless --out is given.
With --seeds S the step is vmapped over S seeds (one program, the way a study runs the paper's 5 seeds of a
problem) and the run's cost is charged per program of S seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import jbo
from jbo import data, parts
from jbo.algorithms import sbo_kde
from jbo.engine import Step
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

T, N0, M, PROBLEMS, SEEDS = 350, 10, 1024, 8, 5
QUICK = dict(
    T=100, M=32, maximiser=parts.Maximiser(num_raw=64, num_starts=2, steps=5, method="adam", screen_data=False)
)


def step_seconds(alg, problem, capacity: int, seeds: int, num_steps: int = T) -> float:
    key = jax.random.key(0)
    spec = problem.spec(num_steps)
    state = alg.init(key, alg.default_params(), spec)
    width = state.buffer.x.shape[1]
    x = jax.random.uniform(key, (capacity - 1, width))
    state = state._replace(buffer=data.from_arrays(x, jnp.sin(3 * x).sum(-1), capacity))
    step = Step(jnp.int32(capacity - 1), jnp.bool_(False))
    ask = jax.jit(jax.vmap(lambda k, s: alg.ask(k, s, alg.default_params(), step)[0], in_axes=(0, None)))
    jax.block_until_ready(ask(jax.random.split(key, seeds), state))  # compile and warm up
    t0 = time.perf_counter()
    jax.block_until_ready(ask(jax.random.split(jax.random.key(1), seeds), state))
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=1, help="seeds per program (the step vmapped over them)")
    ap.add_argument("--out", default=None, help="file name in the output folder (default budget_cost.json)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: T = 100, M = 32, a small inner optimiser")
    add_update_flag(ap)
    args = ap.parse_args()
    out = output_dir("sbo_kde", "budget_cost") / (args.out or f"budget_cost{'_quick' if args.quick else ''}.json")
    problem = jbo.problems.get("sbo_kde:hartmann")
    num_steps, m = (QUICK["T"], QUICK["M"]) if args.quick else (T, M)
    options = {"maximiser": QUICK["maximiser"]} if args.quick else {}
    alg = sbo_kde.SBO(method="sbo_kde", num_samples=m, num_inner=m, **options)
    caps = tuple(alg.capacities(num_steps))
    per_step = {c: step_seconds(alg, problem, c, args.seeds, num_steps) for c in caps}
    for c, s in per_step.items():
        print(f"capacity {c:4d}: {s:7.2f} s per SBO-KDE step ({args.seeds} seed(s), one program)", flush=True)
    starts = (0,) + caps[:-1]
    bo_steps = {c: max(0, c - max(a, N0)) for a, c in zip(starts, caps)}  # BO steps run at each capacity
    grown = sum(bo_steps[c] * per_step[c] for c in caps)
    whole = (num_steps - N0) * per_step[num_steps]
    programs = PROBLEMS * -(-SEEDS // args.seeds)  # each program runs args.seeds seeds of one problem
    flops_per_eval = 2 * m * num_steps**2
    evals = alg.maximiser.num_raw + 3 * alg.maximiser.num_starts * alg.maximiser.steps
    record = {
        "command": " ".join(["python", "experiments/sbo_kde/budget_cost.py"] + sys.argv[1:]),
        "machine": machine_info(),
        "load_average": os.getloadavg(),
        "settings": {
            "T": num_steps,
            "n0": N0,
            "M": m,
            "num_raw": alg.maximiser.num_raw,
            "num_starts": alg.maximiser.num_starts,
            "opt_steps": alg.maximiser.steps,
            "problems": PROBLEMS,
            "seeds": SEEDS,
            "seeds_per_program": args.seeds,
        },
        "capacities": list(caps),
        "s_per_step": {str(c): s for c, s in per_step.items()},
        "bo_steps_at_capacity": {str(c): n for c, n in bo_steps.items()},
        "s_per_run_growing": grown,
        "s_per_run_whole_buffer": whole,
        "hours_per_method_growing": grown * programs / 3600,
        "hours_per_method_whole_buffer": whole * programs / 3600,
        "acquisition_flops_per_step_at_T": flops_per_eval * evals,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1))
    print(
        f"one SBO-KDE program of {args.seeds} seed(s): {grown / 60:.1f} min (growing) vs {whole / 60:.1f} min "
        f"(whole buffer); {programs} programs per method: {grown * programs / 3600:.2f} h vs "
        f"{whole * programs / 3600:.2f} h"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
