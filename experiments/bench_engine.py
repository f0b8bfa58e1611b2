"""Engine benchmark: GP-UCB with per-step MLE refit on branin, T = 50 evaluations (6 of them LHS).

Measures, for 1, 8 and 32 seeds, the compile seconds (ahead-of-time lowering + XLA compilation of
the vmapped scan) and the run seconds per seed. With the `bench` extra (botorch) installed it also
times the standard BoTorch loop (SingleTaskGP + fit_gpytorch_mll + optimize_acqf, num_restarts=10,
raw_samples=512) on the same task and prints the seeds-per-second ratio and median final regrets.

    python experiments/bench_engine.py [--seeds 1 8 32] [--botorch-seeds 8]
    python experiments/bench_engine.py --fit-restarts 1 --fit-steps 10   # warm-started cheap refit

Every run writes what it measured, and on what machine, to experiments/results/bench_engine_<tag>.json
(tag: the refit setting, e.g. "refit2x40"; --tag overrides).

Refit options: `--fit-restarts R --fit-steps S` = R Adam starts of S steps each BO step (default
1 x 5, GP-BO's default: the previous step's fit refined by 5 Adam steps, still a per-step MLE refit;
2 x 40 was the default before the measurement of experiments/refit_defaults.py).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

import jbo
from jbo.studies import compile_seeds, machine_info as machine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--num-initial", type=int, default=6)
    ap.add_argument("--botorch-seeds", type=int, default=8)
    ap.add_argument("--fit-restarts", type=int, default=1)  # GP-BO's defaults (chosen by refit_defaults.py)
    ap.add_argument("--fit-steps", type=int, default=5)
    ap.add_argument("--skip-botorch", action="store_true")
    ap.add_argument("--botorch-device", default="cpu", help="torch device of BoTorch's model: cpu or cuda")
    ap.add_argument("--tag", default=None)
    args = ap.parse_args()
    default_tag = f"refit{args.fit_restarts}x{args.fit_steps}" + ("" if args.botorch_device == "cpu" else
                                                                 f"_botorch_{args.botorch_device}")
    out = Path(__file__).resolve().parent / "results" / f"bench_engine_{args.tag or default_tag}.json"
    record = {"command": " ".join(["python", "experiments/bench_engine.py"] + sys.argv[1:]), "machine": machine(),
              "load_average_at_start": os.getloadavg(),
              "task": f"GP-UCB beta=2 Matern-5/2 ARD, per-step MLE refit {args.fit_restarts} x {args.fit_steps} Adam, "
                      f"branin, T={args.steps}, {args.num_initial} LHS", "jbo": [], "botorch": None}
    print(f"machine: {machine()}")
    print(f"task: GP-UCB (beta=2, Matern-5/2 ARD, per-step MLE refit: {args.fit_restarts} x {args.fit_steps} Adam "
          f"steps) on branin, T={args.steps}, {args.num_initial} initial LHS points")
    problem = jbo.problems.get("branin")
    alg = jbo.algorithms.get("gp_ucb", num_initial=args.num_initial, num_restarts=args.fit_restarts,
                             fit_steps=args.fit_steps)
    rows = []
    for s in args.seeds:
        keys = jax.random.split(jax.random.key(123), s)
        fn, compile_s = compile_seeds(alg, problem, keys, args.steps)
        jax.block_until_ready(fn(keys))  # warm-up execution
        t0 = time.perf_counter()
        trace = jax.block_until_ready(fn(keys))
        run_s = time.perf_counter() - t0
        final = np.asarray(trace.metrics["simple_regret"][:, -1])
        rows.append((s, compile_s, run_s, run_s / s, s / run_s, float(np.median(final))))
    print(f"{'seeds':>6} {'compile_s':>10} {'run_s':>8} {'s/seed':>8} {'seeds/s':>8} {'median final regret':>20}")
    for r in rows:
        print(f"{r[0]:>6} {r[1]:>10.2f} {r[2]:>8.2f} {r[3]:>8.3f} {r[4]:>8.2f} {r[5]:>20.3g}")
        record["jbo"].append(dict(zip(("seeds", "compile_s", "run_s", "s_per_seed", "seeds_per_s", "median_final_regret"),
                                      r)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1))
    if args.skip_botorch:
        print(f"wrote {out}")
        return
    # BoTorch runs in its own process: sharing one with JAX's thread pools slowed it by ~30% (measured)
    import subprocess

    script = Path(__file__).with_name("botorch_loop.py")
    proc = subprocess.run([sys.executable, str(script), "--seeds", str(args.botorch_seeds), "--steps", str(args.steps),
                           "--num-initial", str(args.num_initial), "--device", args.botorch_device, "--json"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
        hint = ("install it with pip install torch==2.13.0 && pip install -e '.[bench]'" if "ModuleNotFound" in why
                else f"BoTorch failed on device {args.botorch_device!r}")
        print(f"BoTorch side skipped ({why}); {hint}")
        return
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    sec, regrets = res["seconds_per_seed"], np.array(res["final_regrets"])
    print(f"botorch {res['version']}: {args.botorch_seeds} seeds, {sec:.2f} s/seed, {1 / sec:.3f} seeds/s, "
          f"median final regret {np.median(regrets):.3g}")
    best = rows[-1]
    print(f"ratio at {best[0]} seeds: jbo {best[4]:.2f} seeds/s / botorch {1 / sec:.3f} seeds/s = {best[4] * sec:.1f}x; "
          f"median final regret jbo {best[5]:.3g} vs botorch {np.median(regrets):.3g}")
    record["botorch"] = {"version": res["version"], "device": args.botorch_device, "seeds": args.botorch_seeds,
                         "s_per_seed": sec,
                         "median_final_regret": float(np.median(regrets))}
    record["ratio_seeds_per_s"] = best[4] * sec
    record["load_average_at_end"] = os.getloadavg()
    out.write_text(json.dumps(record, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
