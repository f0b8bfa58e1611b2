"""Engine benchmark: GP-UCB (registry defaults: beta = 2, Matern-5/2 ARD, MLE refits of 1 x 5 warm-started
Adam steps on GP-BO's schedule, GP-BO's acquisition search) against the standard BoTorch loop, over the budget
T or the seed count.

T axis (the default): jbo at T = 50, 100, 200, 400 and 1000 on hartmann6 (10 LHS initial points),
8 seeds per T in one compiled program, and BoTorch (SingleTaskGP + fit_gpytorch_mll + optimize_acqf,
num_restarts=10, raw_samples=512; experiments/engine/botorch_loop.py, in its own process) at the same T
with 2 seeds up to T = 100 and 1 above (BOTORCH_SEEDS; its T = 1000 seed takes about an hour here). With --before-steps, jbo also runs the whole-buffer settings
(PREVIOUS: the whole buffer at every step, bucket=False; a refit every step; every observed point
screened), in the same run: what the growing state and the long-run defaults buy.

    python experiments/engine/bench_engine.py --update --before-steps 50 100 200 400   # the T axis, ~80 min here
    python experiments/engine/bench_engine.py --steps 50 100 --botorch-steps 50 --tag quick
    python experiments/engine/bench_engine.py --replot bench_engine_t_axis.json bench_engine_t1000.json --update
    python experiments/engine/bench_engine.py --axis seeds --problem branin --num-initial 6 --steps 50 \
        --seeds 1 8 32 --botorch-seeds 8 --tag refit1x5                 # the seed axis at one T

Compile time (ahead-of-time lowering + XLA compilation) is reported apart from run time. Run time is
one execution after a warm-up execution (T <= 200) or the first execution (larger T, where one
execution is minutes and its fixed costs are negligible). Every run writes what it measured, and on
what machine, to bench_engine_<tag>.json (in experiments/results/engine/ with --update, else its scratch mirror);
the T axis also draws bench_engine_<tag>.png (seconds per seed against T, log-log, with least-squares slopes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np

import jbo
from jbo.studies import compile_seeds
from jbo.studies import machine_info as machine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: flat_settings, outdir
from flat_settings import gp_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

RESULTS = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
BOTORCH_SEEDS = {50: 2, 100: 2, 200: 1, 400: 1, 1000: 1}  # seeds per T for BoTorch (its seconds grow like T^1.7)


PREVIOUS = dict(bucket=False, refit_growth=None, screen_data=True)  # the whole buffer at every step


def time_jbo(problem, steps, seeds, num_initial, fit_restarts, fit_steps, previous=False):
    alg = jbo.algorithms.get(
        "gp_ucb",
        **gp_options(
            num_initial=num_initial, num_restarts=fit_restarts, fit_steps=fit_steps, **(PREVIOUS if previous else {})
        ),
    )
    keys = jax.random.split(jax.random.key(123), seeds)
    fn, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=steps)
    if steps <= 200:
        jax.block_until_ready(fn(keys))  # warm-up execution
    t0 = time.perf_counter()
    trace = jax.block_until_ready(fn(keys))
    run_s = time.perf_counter() - t0
    final = np.asarray(trace.metrics["simple_regret"][:, -1])
    return {
        "steps": steps,
        "seeds": seeds,
        "defaults": "previous" if previous else "current",
        "segments": list(alg.capacities(steps)),
        "compile_s": compile_s,
        "run_s": run_s,
        "s_per_seed": run_s / seeds,
        "seeds_per_s": seeds / run_s,
        "median_final_regret": float(np.median(final)),
        "final_regrets": final.tolist(),
    }


def time_botorch(problem, steps, seeds, num_initial, device):
    script = Path(__file__).with_name("botorch_loop.py")
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            "--seeds",
            str(seeds),
            "--steps",
            str(steps),
            "--num-initial",
            str(num_initial),
            "--device",
            device,
            "--problem",
            problem,
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
        hint = (
            "install it with pip install torch==2.13.0 && pip install -e '.[bench]'"
            if "ModuleNotFound" in why
            else f"BoTorch failed on device {device!r}"
        )
        print(f"BoTorch side skipped ({why}); {hint}")
        return None
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "steps": steps,
        "seeds": seeds,
        "version": res["version"],
        "device": device,
        "s_per_seed": res["seconds_per_seed"],
        "median_final_regret": float(np.median(res["final_regrets"])),
        "final_regrets": res["final_regrets"],
    }


def slope(rows):
    """Least-squares slope of log(seconds per seed) against log(T)."""
    if len(rows) < 2:
        return None
    t = np.log([r["steps"] for r in rows])
    s = np.log([r["s_per_seed"] for r in rows])
    return float(np.polyfit(t, s, 1)[0])


def plot(record, out: Path, extra=()):
    """Seconds per seed against T, log-log; `extra`: (file name, record) of runs of their own (e.g. T =
    1000 with BoTorch), drawn as separate markers."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(figsize=(9.5, 4.2))
    series = [
        ("jbo", [r for r in record["jbo"] if r["defaults"] == "current"], "o-"),
        (
            "jbo, previous defaults (whole buffer, refit every step)",
            [r for r in record["jbo"] if r["defaults"] == "previous"],
            "s--",
        ),
        ("BoTorch", record["botorch"], "^-"),
    ]
    for label, rows, style in series:
        if not rows:
            continue
        k = slope(rows)
        ax.loglog(
            [r["steps"] for r in rows],
            [r["s_per_seed"] for r in rows],
            style,
            label=f"{label}, slope {k:.2f}" if k is not None else label,
        )
    for name, other in extra:
        for label, rows, marker in (("jbo", other["jbo"], "o"), ("BoTorch", other["botorch"], "^")):
            if rows:
                ax.loglog(
                    [r["steps"] for r in rows],
                    [r["s_per_seed"] for r in rows],
                    marker,
                    mfc="none",
                    ms=9,
                    label=f"{label}, its own run ({name})",
                )
    ax.set_xlabel("budget T (evaluations)")
    ax.set_ylabel("seconds per seed (compile excluded)")
    ax.set_title(f"GP-UCB on {record['problem']}: {record['machine']}", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--axis", choices=("steps", "seeds"), default="steps")
    ap.add_argument("--problem", default="hartmann6", choices=("hartmann6", "branin"))
    ap.add_argument("--steps", type=int, nargs="+", default=[50, 100, 200, 400, 1000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[8], help="jbo seeds (one per T on the T axis)")
    ap.add_argument("--num-initial", type=int, default=10)
    ap.add_argument("--before-steps", type=int, nargs="*", default=[], help="T at which jbo also runs PREVIOUS")
    ap.add_argument("--before-seeds", type=int, default=4)
    ap.add_argument("--botorch-steps", type=int, nargs="*", default=[50, 100, 200, 400, 1000])
    ap.add_argument("--botorch-seeds", type=int, default=None, help="default: 2 up to T = 100, then 1")
    ap.add_argument("--fit-restarts", type=int, default=1)  # GP-BO's defaults (chosen by refit_defaults.py)
    ap.add_argument("--fit-steps", type=int, default=5)
    ap.add_argument("--botorch-device", default="cpu", help="torch device of BoTorch's model: cpu or cuda")
    ap.add_argument("--tag", default=None)
    ap.add_argument(
        "--replot",
        nargs="+",
        metavar="FILE",
        help="no run: redraw the figure of the first bench_engine_*.json (in the results folder) with the "
        "runs of the others as extra markers, e.g. --replot bench_engine_t_axis.json bench_engine_t1000.json",
    )
    add_update_flag(ap)
    args = ap.parse_args()
    if args.replot:
        first, *others = (json.loads((RESULTS / name).read_text()) for name in args.replot)
        plot(first, (RESULTS / args.replot[0]).with_suffix(".png"), list(zip(args.replot[1:], others)))
        return
    tag = args.tag or ("t_axis" if args.axis == "steps" else f"refit{args.fit_restarts}x{args.fit_steps}")
    out = RESULTS / f"bench_engine_{tag}.json"
    problem = jbo.problems.get(args.problem)
    record = {
        "command": " ".join(["python", "experiments/engine/bench_engine.py"] + sys.argv[1:]),
        "machine": machine(),
        "load_average_at_start": os.getloadavg(),
        "problem": args.problem,
        "axis": args.axis,
        "task": f"GP-UCB beta=2 Matern-5/2 ARD, per-step MLE refit {args.fit_restarts} x {args.fit_steps} Adam, "
        f"{args.problem}, {args.num_initial} LHS initial points",
        "jbo": [],
        "botorch": [],
    }
    print(f"machine: {record['machine']}\ntask: {record['task']}", flush=True)

    def save():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(record, indent=1))

    cases = (
        [(t, args.before_seeds, True) for t in args.before_steps] + [(t, args.seeds[0], False) for t in args.steps]
        if args.axis == "steps"
        else [(args.steps[0], s, False) for s in args.seeds]
    )
    for steps, seeds, previous in cases:
        row = time_jbo(problem, steps, seeds, args.num_initial, args.fit_restarts, args.fit_steps, previous)
        record["jbo"].append(row)
        print(
            f"jbo T={steps:>5} seeds={seeds:>4} defaults={row['defaults']:8s} segments={row['segments']} "
            f"compile {row['compile_s']:6.1f} s  run {row['run_s']:8.2f} s  {row['s_per_seed']:8.3f} s/seed  "
            f"median final regret {row['median_final_regret']:.3g}",
            flush=True,
        )
        save()
    botorch_steps = args.botorch_steps if args.axis == "steps" else [args.steps[0]]
    for steps in botorch_steps:
        seeds = args.botorch_seeds or BOTORCH_SEEDS.get(steps, 1)
        row = time_botorch(args.problem, steps, seeds, args.num_initial, args.botorch_device)
        if row is None:
            break
        record["botorch"].append(row)
        print(
            f"botorch {row['version']} T={steps:>5} seeds={seeds}: {row['s_per_seed']:8.2f} s/seed  "
            f"median final regret {row['median_final_regret']:.3g}",
            flush=True,
        )
        save()
    ours = {r["steps"]: r for r in record["jbo"] if r["defaults"] == "current"}
    if args.axis == "steps":
        record["ratio_seeds_per_s"] = {
            str(b["steps"]): b["s_per_seed"] / ours[b["steps"]]["s_per_seed"]
            for b in record["botorch"]
            if b["steps"] in ours
        }
        record["slopes"] = {
            "jbo": slope([r for r in record["jbo"] if r["defaults"] == "current"]),
            "jbo_previous_defaults": slope([r for r in record["jbo"] if r["defaults"] == "previous"]),
            "botorch": slope(record["botorch"]),
        }
        for b in record["botorch"]:
            if b["steps"] in ours:
                print(
                    f"T={b['steps']}: jbo {ours[b['steps']]['seeds_per_s']:.3f} seeds/s vs BoTorch "
                    f"{1 / b['s_per_seed']:.4f} -> {record['ratio_seeds_per_s'][str(b['steps'])]:.1f}x"
                )
        print(f"slopes of log s/seed against log T: {record['slopes']}")
    elif record["botorch"]:
        best = record["jbo"][-1]
        record["ratio_seeds_per_s"] = best["seeds_per_s"] * record["botorch"][0]["s_per_seed"]
        print(f"ratio at {best['seeds']} seeds: {record['ratio_seeds_per_s']:.1f}x")
    record["load_average_at_end"] = os.getloadavg()
    save()
    if args.axis == "steps":
        plot(record, out.with_suffix(".png"))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
