"""The committed Fig 6/7 GP-UCB runs of length 97-128 through the default growing segments.

`jbo.engine.bucket_schedule` splits runs longer than 96 steps into segments (T = 100: 64, 100). Of the
committed BOKE results, the GP-UCB runs on Goldstein-Price and six-hump camel (T = 100, 30 seeds,
noise-free and noisy) were computed with the one whole-buffer program. This re-runs them both ways
(`bucket=False`, the program they came from, and the default segments) with the compile options they
were computed with (XLA's own, `CPU_COMPILER_OPTIONS = {}`) and compares every seed's regret curve
with the committed file (experiments/results/boke/fig6_7/fig6_fig7_synthetic.csv.gz, read there in either
mode), and the two re-runs with each other (the change itself).

    jbo reproduce boke schedule_check

`--quick`: six-hump camel noise-free only, the first 2 seeds (a smoke run; writes schedule_check_quick.json).
Writes schedule_check.json (experiments/results/boke/schedule_check/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
from common import add_update_flag, committed_dir, header, out_path, params_for

from jbo import data, parallel, studies
from jbo.algorithms import boke
from jbo.problems.boke import SUITE

PROBLEMS = ("goldstein_price_rescaled", "six_hump_camel")


def max_rel_final(new, ref) -> float:
    """The largest relative difference of the final regrets (seeds x steps curves)."""
    return float((np.abs(new[:, -1] - ref[:, -1]) / np.maximum(np.abs(ref[:, -1]), 1e-300)).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="six-hump camel noise-free, 2 seeds")
    args = add_update_flag(ap).parse_args()
    header("BOKE Figs 6/7, GP-UCB at T = 100: whole buffer vs default segments, against the committed file")
    parallel.CPU_COMPILER_OPTIONS = {}  # the options the committed file was computed with
    committed = pd.read_csv(committed_dir("boke", "fig6_7", "fig6_fig7_synthetic.csv.gz"))
    rows = []
    for name in PROBLEMS[1:] if args.quick else PROBLEMS:
        bench = SUITE[name]
        for noisy in (False,) if args.quick else (False, True):
            setting = "noisy" if noisy else "noise-free"
            label = f"{bench.panel}: {name}"
            old = committed[(committed.problem == label) & (committed.setting == setting)]
            old = old[old.method == "GP-UCB"].pivot(index="seed", columns="step", values="simple_regret").to_numpy()
            old = old[:2] if args.quick else old
            curves = {}
            for variant, bucket in (("whole buffer", False), ("default segments", True)):
                growth = data.Growth() if bucket else data.WHOLE
                alg = boke.PaperGP(num_initial=bench.num_initial, growth=growth)
                table = studies.run_study(
                    {"GP-UCB": alg},
                    {label: bench.problem(noisy)},
                    key=0,
                    num_steps=bench.num_steps,
                    num_seeds=old.shape[0],
                    params=lambda m, p: params_for(m, bench.noise_std, bench.noise_std if noisy else 0.0),
                )
                new = curves[variant] = table.pivot(index="seed", columns="step", values="simple_regret").to_numpy()
                diff = np.abs(new - old)
                row = {
                    "problem": name,
                    "setting": setting,
                    "variant": variant,
                    "segments": list(alg.capacities(bench.num_steps)),
                    "seeds": int(old.shape[0]),
                    "identical_seeds": int(np.sum(np.all(new == old, axis=1))),
                    "max_abs_diff_curve": float(diff.max()),
                    "max_rel_diff_final": max_rel_final(new, old),
                    "mean_final_committed": float(old[:, -1].mean()),
                    "mean_final_rerun": float(new[:, -1].mean()),
                }
                if variant == "default segments":  # against the whole-buffer re-run: the change itself
                    whole = curves["whole buffer"]
                    row["vs_whole_max_abs_diff_curve"] = float(np.abs(new - whole).max())
                    row["vs_whole_max_rel_diff_final"] = max_rel_final(new, whole)
                rows.append(row)
                print(json.dumps(row), flush=True)
    record = {
        "command": "python experiments/boke/schedule_check.py",
        "machine": studies.machine_info(),
        "compile_options": parallel.CPU_COMPILER_OPTIONS,
        "rows": rows,
    }
    out_path("schedule_check", "schedule_check", args.quick, "json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
