"""Choose GP-BO's defaults for long runs by measurement: the refit schedule, the data screening and the
acquisition's local search.

Comparisons of GP-UCB (registry defaults otherwise: beta = 2, Matern-5/2 ARD, 1 x 5 warm-started
Adam steps per refit, 10 LHS points; refit, screen, refit_all and far with the classes' 30-step Adam search
and schedule, flat_settings.ADAM_SEARCH; search, lite, growth and both with GP-BO's L-BFGS search at 512 raw
points, 10 starts and refits at growth 1 + 1/32, flat_settings.WIDE_SEARCH) on branin, hartmann3, hartmann6 and levy (d = 4), T = 256, 16 seeds
each, the same keys for both settings (common random numbers):

  --compare refit   refitting the hyper-parameters every step, against refitting every step while
                    t < 128 and then each time the data has grown by a factor 1 + g
                    (Refit(schedule=RefitSchedule(growth=g)); between refits the factor grows by rank-1 appends);
  --compare screen  the inner optimiser screening every observed point with its 512 raw points,
                    against screening only the k observed points with the largest values
                    (Maximiser(screen_data=k)), both with the refit schedule;
  --compare refit_all  the refit schedule from t = 128 (refit every step before), against from t = r
                    (RefitSchedule(all_below=r)), --refit-all, default 64).
  --compare far     beyond t = 400, at T = 1000 (8 seeds): jbo's defaults against refitting each time the
                    data has grown by 1 + --far-growth from t = 400 on (RefitSchedule(far_from=400,
                    far_growth)) and screening --far-raw raw points in buffers of more than --far-capacity
                    rows (Maximiser(far_capacity, far_num_raw)); compared at the final step and at --checkpoints.
  --compare search  the acquisition's local search from each of the 10 starts: 30 cosine-decayed projected
                    Adam steps, against --search-steps bounded projected L-BFGS iterations
                    (Maximiser(method="lbfgs", steps=k)); compared at the final step and at --checkpoints.
  --compare lite    the L-BFGS search at 512 raw points and 10 starts against --lite-raw raw points and
                    --lite-starts starts; compared at the final step and at --checkpoints.
  --compare growth  the refit schedule of a refit each time the data has grown by 1 + 1/32 from t = 64
                    against a growth factor 1 + --growth, with the L-BFGS search at 512 raw points; compared at the final step
                    and at --checkpoints.
  --compare both    the two candidates above together (--lite-raw, --lite-starts and --growth) against 512 raw
                    points, 10 starts and 1 + 1/32: the comparison that made them GP-BO's defaults
                    (jbo.parts.GP_MAXIMISER, jbo.parts.GP_REFIT).
  --compare line_search  GP-BO's default search and schedule with the L-BFGS line search backtracking by
                    halving against quadratic interpolation (Maximiser(line_search=...), jbo.optimize.lbfgs_step;
                    --quadratic-lower: its safeguard's lower end instead of 1/10).

The runs are identical until the settings differ, so each seed's pair is compared: the mean
and standard error over seeds of log10(simple regret of the new setting / the old one) at the
final step (and with --checkpoints at those steps too: a run of T steps is, to rounding, the first T
steps of a longer one), and seconds per seed (compile apart). The rule: the new setting becomes the default if on no problem its
paired mean log10 ratio is above 0 by more than two standard errors (regret no worse), and it is cheaper.
A search that buys regret (--compare search) may instead be below 0 by more than two standard errors at
the final step on at least half the problems and cost at most QUALITY_COST = 1.25 times as much.

    python experiments/engine/long_run_defaults.py --compare refit     # ~15 min on 2 CPU cores
    python experiments/engine/long_run_defaults.py --compare screen    # ~8 min
    python experiments/engine/long_run_defaults.py --compare refit_all --checkpoints 100 200   # ~10 min
    python experiments/engine/long_run_defaults.py --compare far --steps 1000 --seeds 8 --checkpoints 600 800
    python experiments/engine/long_run_defaults.py --compare far --steps 1000 --seeds 16 --problems branin --tag _branin16
    python experiments/engine/long_run_defaults.py --compare search --search-steps 5 --checkpoints 60 128
    python experiments/engine/long_run_defaults.py --compare lite --lite-starts 5 --lite-raw 256 --checkpoints 60 128
    python experiments/engine/long_run_defaults.py --compare growth --growth 0.0625 --checkpoints 60 128
    python experiments/engine/long_run_defaults.py --compare both --growth 0.0625 --checkpoints 60 128
    python experiments/engine/long_run_defaults.py --quick             # 4 seeds, T = 160: a smoke run

Each row also counts the seed's re-queried steps: steps from the 11th on whose point equals an earlier
point of the run (on these noiseless problems such a step learns nothing).
Writes long_run_<compare>.csv (one row per setting, problem and seed) and .json into experiments/results/engine/
with --update, else its scratch mirror.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pandas as pd

import jbo
from jbo.studies import compile_seeds, machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: flat_settings, outdir
from flat_settings import ADAM_SEARCH, WIDE_SEARCH, gp_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
# The settings a comparison does not name: those its committed results were measured with, the classes' Adam
# search and schedule (flat_settings.ADAM_SEARCH) or GP-BO's L-BFGS search at 512 raw points, 10 starts and
# refits at growth 1 + 1/32 (flat_settings.WIDE_SEARCH); line_search runs on GP-BO's defaults (GP_MAXIMISER,
# GP_REFIT) but for the backtracking it compares.
BASE = dict.fromkeys(("refit", "screen", "refit_all", "far"), ADAM_SEARCH)
BASE.update(dict.fromkeys(("search", "lite", "growth", "both"), WIDE_SEARCH), line_search={})
QUALITY_COST = 1.25  # --compare search: the most a search that lowers regret may cost, relative
PROBLEMS = {
    "branin": ("branin", {}),
    "hartmann3": ("hartmann3", {}),
    "hartmann6": ("hartmann6", {}),
    "levy4": ("levy", {"dim": 4}),
}


def requeried(actions: np.ndarray, first: int) -> np.ndarray:
    """Per seed, the steps from `first` on whose point equals an earlier point of the run exactly (on a
    noiseless problem such a step learns nothing)."""
    out = np.zeros(actions.shape[0], int)
    for s, run in enumerate(actions):
        for t in range(first, run.shape[0]):
            out[s] += bool(np.any(np.all(run[:t] == run[t], axis=1)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--steps", type=int, default=256)
    ap.add_argument(
        "--compare",
        choices=tuple(BASE),
        default="refit",
    )
    ap.add_argument("--refit-all", type=int, default=64)
    ap.add_argument("--checkpoints", type=int, nargs="*", default=[], help="steps to compare besides the last")
    ap.add_argument("--growth", type=float, default=1 / 32)
    ap.add_argument("--screen", type=int, default=128)
    ap.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS))
    ap.add_argument("--tag", default="", help="appended to the output file names (long_run_<compare><tag>.*)")
    ap.add_argument("--search-steps", type=int, default=5, help="L-BFGS iterations per start (--compare search)")
    ap.add_argument(
        "--search-reference",
        type=json.loads,
        default={"opt_method": "adam", "opt_steps": 30},
        help="the reference search (--compare search), as flat settings in JSON",
    )
    ap.add_argument("--lite-starts", type=int, default=5, help="L-BFGS starts of the candidate (--compare lite)")
    ap.add_argument("--lite-raw", type=int, default=256, help="raw points of the candidate (--compare lite)")
    ap.add_argument("--far-growth", type=float, default=1 / 8)
    ap.add_argument("--far-raw", type=int, default=256)
    ap.add_argument("--far-capacity", type=int, default=512)
    ap.add_argument(
        "--quadratic-lower",
        type=float,
        default=None,
        help="--compare line_search: the quadratic backtracking's lower safeguard (jbo.optimize.QUADRATIC_SHRINK[0])",
    )
    ap.add_argument("--quick", action="store_true")
    add_update_flag(ap)
    args = ap.parse_args()
    # refit and screen: from t = 128, the setting of their committed results (jbo's default is 64, chosen by refit_all)
    if args.compare == "refit":
        settings = (
            ("every step", dict(refit_growth=None)),
            (f"g = {args.growth:g}", dict(refit_growth=args.growth, refit_all=128)),
        )
    elif args.compare == "screen":
        settings = (
            ("all observed", dict(screen_data=True, refit_all=128)),
            (f"best {args.screen}", dict(screen_data=args.screen, refit_all=128)),
        )
    elif args.compare == "far":
        far = dict(refit_far_from=400, refit_far_growth=args.far_growth, far_capacity=args.far_capacity)
        settings = (
            ("defaults", {}),
            (f"far g = {args.far_growth:g}, raw {args.far_raw}", dict(far, far_num_raw=args.far_raw)),
        )
    elif args.compare == "search":
        reference = args.search_reference
        settings = (
            (" ".join(f"{v}" for v in reference.values()), reference),
            (f"lbfgs {args.search_steps}", dict(opt_method="lbfgs", opt_steps=args.search_steps)),
        )
    elif args.compare == "lite":  # the reference spelled out
        settings = (
            ("raw 512, 10 starts", dict(num_raw=512, num_starts=10)),
            (
                f"raw {args.lite_raw}, {args.lite_starts} starts",
                dict(num_raw=args.lite_raw, num_starts=args.lite_starts),
            ),
        )
    elif args.compare == "growth":  # the reference spelled out
        settings = (
            ("g = 1/32", dict(refit_growth=1 / 32, refit_all=64)),
            (f"g = {args.growth:g}", dict(refit_growth=args.growth)),
        )
    elif args.compare == "both":
        lite = dict(num_raw=args.lite_raw, num_starts=args.lite_starts, refit_growth=args.growth)
        settings = (
            ("raw 512, 10 starts, g = 1/32", dict(num_raw=512, num_starts=10, refit_growth=1 / 32, refit_all=64)),
            (f"raw {args.lite_raw}, {args.lite_starts} starts, g = {args.growth:g}", lite),
        )
    elif args.compare == "line_search":
        settings = (("halving", dict(line_search="halving")), ("quadratic", dict(line_search="quadratic")))
        if args.quadratic_lower is not None:  # a probe of the safeguard; the default is Nocedal & Wright's 1/10
            jbo.optimize.QUADRATIC_SHRINK = (args.quadratic_lower, jbo.optimize.QUADRATIC_SHRINK[1])
    else:
        settings = (("from 128", dict(refit_all=128)), (f"from {args.refit_all}", dict(refit_all=args.refit_all)))
    settings = tuple((name, {**BASE[args.compare], **options}) for name, options in settings)
    seeds, steps = (4, 160) if args.quick else (args.seeds, args.steps)
    keys = jax.random.split(jax.random.key(2024), seeds)
    rows, summary = [], []
    for label, (name, options) in ((k, PROBLEMS[k]) for k in args.problems):
        problem = jbo.problems.get(name, **options)
        finals, curves = {}, {}
        for setting, options in settings:
            alg = jbo.algorithms.get("gp_ucb", **gp_options(num_initial=10, **options))
            fn, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=steps)
            t0 = time.perf_counter()
            trace = jax.block_until_ready(fn(keys))
            run_s = time.perf_counter() - t0
            curves[setting] = np.asarray(trace.metrics["simple_regret"])
            final = curves[setting][:, -1]
            finals[setting] = final
            repeats = requeried(np.asarray(trace.actions), first=10)
            rows += [
                {
                    "problem": label,
                    "setting": setting,
                    "seed": i,
                    "final_simple_regret": float(r),
                    "requeried": int(k),
                    "compile_s": compile_s,
                    "run_s_per_seed": run_s / seeds,
                }
                for i, (r, k) in enumerate(zip(final, repeats))
            ]
            print(
                f"{label:10s} {setting:12s} compile {compile_s:5.1f} s  {run_s / seeds:6.2f} s/seed  "
                f"median final regret {np.median(final):.3g}  re-queried steps (median over seeds) {np.median(repeats):g}",
                flush=True,
            )
        for step in sorted({*(c for c in args.checkpoints if c < steps), steps}):
            old_, new_ = (c[:, step - 1] for c in curves.values())
            ratio = np.log10(np.maximum(new_, 1e-12) / np.maximum(old_, 1e-12))
            summary.append(
                {
                    "problem": label,
                    "step": step,
                    "median_old": float(np.median(old_)),
                    "median_new": float(np.median(new_)),
                    "mean_log10_ratio": float(ratio.mean()),
                    "se_log10_ratio": float(ratio.std(ddof=1) / np.sqrt(seeds)),
                    "better_tie_worse": [int((ratio < 0).sum()), int((ratio == 0).sum()), int((ratio > 0).sum())],
                }
            )
            print(
                f"  step {step}: paired log10 ratio {ratio.mean():+.3f} +- {ratio.std(ddof=1) / np.sqrt(seeds):.3f}; "
                f"new setting better/tie/worse {summary[-1]['better_tie_worse']}",
                flush=True,
            )
    df = pd.DataFrame(rows)
    cost = df.groupby("setting")["run_s_per_seed"].mean().to_dict()
    worse = [f"{s['problem']} at {s['step']}" for s in summary if s["mean_log10_ratio"] > 2 * s["se_log10_ratio"]]
    (old_name, old_opts), (new_name, new_opts) = settings
    finals = [s for s in summary if s["step"] == steps]
    better = [s["problem"] for s in finals if s["mean_log10_ratio"] < -2 * s["se_log10_ratio"]]
    cheaper = cost[new_name] < cost[old_name]
    # a setting that buys regret may cost a little more (--compare search only): better on at least half
    # the problems at the final step, at most QUALITY_COST times the reference's seconds per seed
    buys_regret = args.compare == "search" and 2 * len(better) >= len(finals)
    adopt = not worse and (cheaper or (buys_regret and cost[new_name] <= QUALITY_COST * cost[old_name]))
    record = {
        "command": "python experiments/engine/long_run_defaults.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
        "seeds": seeds,
        "steps": steps,
        "compare": args.compare,
        "settings": {old_name: old_opts, new_name: new_opts},
        "rule": "adopt the new setting if on no problem (at no step compared) the paired mean log10 ratio "
        "exceeds 0 by > 2 s.e., and it is cheaper"
        + (
            f"; or (a search) if it is below 0 by > 2 s.e. at the final step on at least half the problems, "
            f"at most {QUALITY_COST}x the reference's seconds per seed"
            if args.compare == "search"
            else ""
        ),
        "better_on": better,
        "summary": summary,
        "s_per_seed": cost,
        "requeried_steps_median": {
            f"{problem} / {setting}": float(v)
            for (problem, setting), v in df.groupby(["problem", "setting"])["requeried"].median().items()
        },
        "worse_on": worse,
        "adopt": adopt,
    }
    if args.compare == "line_search":
        record["quadratic_shrink"] = list(jbo.optimize.QUADRATIC_SHRINK)
    if not args.quick:
        OUT.mkdir(parents=True, exist_ok=True)
        df.to_csv(OUT / f"long_run_{args.compare}{args.tag}.csv", index=False)
        (OUT / f"long_run_{args.compare}{args.tag}.json").write_text(json.dumps(record, indent=1))
    print(json.dumps({k: record[k] for k in ("s_per_seed", "worse_on", "better_on", "adopt")}))


if __name__ == "__main__":
    main()
