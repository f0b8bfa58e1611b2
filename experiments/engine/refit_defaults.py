"""Choose GP-BO's default per-step refit by measurement.

GP-UCB (beta = 2, Matern-5/2 ARD, MLE refit every step) with several refit settings on branin,
hartmann6, ackley (dim 4) and levy (dim 4), 32 seeds each, 6 LHS initial points; final simple
regret and run seconds per seed (compile measured apart). Writes refit_defaults.csv (one row per
setting and problem) and .json (the machine, the rule and the choice) into experiments/results/engine/ with
--update, else its scratch mirror.

    python experiments/engine/refit_defaults.py            # ~10 min on 2 CPU cores
    python experiments/engine/refit_defaults.py --quick    # 4 seeds, 2 settings: a smoke run

The rule (stated in docs/defaults.md): per problem, each setting's median final simple regret relative to
the best setting's on that problem; a setting's regret score is the geometric mean of these ratios
over the four problems and its cost the mean seconds per seed. The default is the fastest setting
whose regret score is within 1.5x of the best score (a factor well inside the seed-to-seed spread of
32-seed medians here), i.e. the best final regret per second among the settings that do not give up
accuracy.
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
from flat_settings import ADAM_SEARCH, gp_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
PROBLEMS = {
    "branin": ("branin", {}, 50),
    "hartmann6": ("hartmann6", {}, 60),
    "ackley4": ("ackley", {"dim": 4}, 60),
    "levy4": ("levy", {"dim": 4}, 60),
}
# (restarts, Adam steps): the warm start takes restart 0, the unperturbed defaults restart 1
SETTINGS = [(2, 40), (2, 20), (2, 10), (1, 40), (1, 20), (1, 10), (1, 5)]
RATIO = 1.5


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=32)
    ap.add_argument("--quick", action="store_true")
    add_update_flag(ap)
    args = ap.parse_args()
    seeds = 4 if args.quick else args.seeds
    settings = SETTINGS[:2] if args.quick else SETTINGS
    print(f"machine: {machine_info()}; {seeds} seeds", flush=True)
    rows = []
    for label, (name, opts, T) in PROBLEMS.items():
        problem = jbo.problems.get(name, **opts)
        keys = jax.random.split(jax.random.key(2026), seeds)
        for restarts, steps in settings:
            alg = jbo.algorithms.get(
                "gp_ucb", **gp_options(num_initial=6, num_restarts=restarts, fit_steps=steps, **ADAM_SEARCH)
            )
            fn, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=T)
            t0 = time.perf_counter()
            trace = jax.block_until_ready(fn(keys))
            run_s = time.perf_counter() - t0
            final = np.asarray(trace.metrics["simple_regret"][:, -1])
            rows.append(
                dict(
                    problem=label,
                    restarts=restarts,
                    fit_steps=steps,
                    seeds=seeds,
                    steps=T,
                    compile_s=compile_s,
                    run_s=run_s,
                    s_per_seed=run_s / seeds,
                    median_final_regret=float(np.median(final)),
                    mean_final_regret=float(final.mean()),
                )
            )
            print(
                f"{label:10s} {restarts} x {steps:3d}: compile {compile_s:5.1f} s, run {run_s:6.2f} s, "
                f"median final regret {np.median(final):.3g}",
                flush=True,
            )
    table = pd.DataFrame(rows)
    best = table.groupby("problem")["median_final_regret"].transform("min")
    table["regret_ratio"] = np.maximum(table["median_final_regret"], 1e-12) / np.maximum(best, 1e-12)
    score = (
        table.groupby(["restarts", "fit_steps"])
        .agg(
            regret_score=("regret_ratio", lambda r: float(np.exp(np.mean(np.log(r))))),
            s_per_seed=("s_per_seed", "mean"),
        )
        .reset_index()
    )
    ok = score[score.regret_score <= RATIO * score.regret_score.min()]
    choice = ok.sort_values("s_per_seed").iloc[0]
    stem = "refit_defaults_quick" if args.quick else "refit_defaults"
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / f"{stem}.csv", index=False)
    meta = {
        "machine": machine_info(),
        "seeds": seeds,
        "rule": f"fastest setting with regret score <= {RATIO} x best",
        "scores": score.to_dict(orient="records"),
        "choice": {"num_restarts": int(choice.restarts), "fit_steps": int(choice.fit_steps)},
    }
    (OUT / f"{stem}.json").write_text(json.dumps(meta, indent=1))
    print(score.to_string(index=False))
    print(f"choice: {int(choice.restarts)} restart(s) x {int(choice.fit_steps)} steps")


if __name__ == "__main__":
    main()
