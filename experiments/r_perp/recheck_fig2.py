"""Re-run Fig 2's R-PERP curves on the first seed(s) and compare R_t with the committed fig2.csv.gz.

    jbo reproduce r_perp recheck                         # --seeds 5, into experiments/results/r_perp/recheck/
    python experiments/r_perp/recheck_fig2.py            # seed 0, SE and Matern-5/2, lambda = 0.01
    python experiments/r_perp/recheck_fig2.py --seeds 5  # all five seeds (vmapped where H agrees)
    python experiments/r_perp/recheck_fig2.py --quick    # against fig2.py --quick's fig2_quick.csv.gz

A change that must not move R-PERP's picks (e.g. a faster design) is checked here: the same keys,
instances and settings as fig2.py (R-PERP C = 0.1 and its two ablations), cumulative regret at
t = T/5, 2T/5, ..., T (1000 / 2000 / 3000 / 4000 / 5000) against the committed CSV
(experiments/results/r_perp/fig2/fig2.csv.gz, which stores 6 significant digits), for the kernels it holds.
--quick (the smoke run) does the same at fig2.py --quick's size (T = 300, 12 x 12 grid) against the
fig2_quick.csv.gz that `fig2.py --quick --lams 0.01` wrote into the fig2 folder of the same output tree.
Writes fig2_recheck[_quick].json (into experiments/results/r_perp/recheck/ with --update, else its scratch
mirror) with the code version and the largest relative difference.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

import jax
import numpy as np
import pandas as pd

from jbo.algorithms import r_perp as ns
from jbo.problems import r_perp as pn
from jbo.studies import code_version, machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, committed_dir, output_dir, require  # noqa: E402

OUT = output_dir("r_perp", "recheck")  # experiments/results/r_perp/recheck with --update, else its scratch mirror


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="against fig2.py --quick's run (T = 300, 12 x 12 grid)")
    add_update_flag(ap)
    args = ap.parse_args()
    lam = 0.01
    if args.quick:
        T, grid, path = 300, 12, output_dir("r_perp", "fig2") / "fig2_quick.csv.gz"
        require(path)
    else:
        T, grid, path = 5000, 30, committed_dir("r_perp", "fig2") / "fig2.csv.gz"
    with gzip.open(path, "rt") as fh:
        ref = pd.read_csv(fh)
    steps = tuple(range(T // 5, T + 1, T // 5))
    run_seeds = ref.seed.nunique()
    if args.seeds > run_seeds:
        raise SystemExit(f"recheck_fig2: --seeds {args.seeds}, but {path} holds {run_seeds} seeds")
    keys = jax.random.split(jax.random.key(2024), run_seeds)[: args.seeds]  # fig2.py's keys (S = its seeds)
    result = {
        "machine": machine_info(),
        "code_version": code_version(),
        "load_start": os.getloadavg(),
        "T": T,
        "lam": lam,
        "seeds": args.seeds,
        "rows": [],
    }
    worst = 0.0
    for kernel in dict.fromkeys(ref.kernel):  # se, matern52
        envs = [pn.kernel_drift(s, kernel, horizon=T, grid_size=grid) for s in range(args.seeds)]
        V = [pn.known(e)["variation"] for e in envs]
        p = ns.RPERPParams(C=0.1, lam=lam)
        methods = {
            "R-PERP (C=0.1)": [ns.RPERP(T, variation=v, kernel=kernel) for v in V],
            "PE-P no restarts (C=0.1, ours)": [ns.RPERP(T, kernel=kernel, restart=False)] * len(V),
            "R-PE no permutation (C=0.1, ours)": [ns.RPERP(T, variation=v, kernel=kernel, permute=False) for v in V],
        }
        for name, algs in methods.items():
            metrics = pn.run_instances(algs, envs, keys=keys, num_steps=T, params=p)[0].metrics
            for s in range(args.seeds):
                sel = ref[(ref.kernel == kernel) & (ref.lam == lam) & (ref.method == name) & (ref.seed == s)]
                want = sel.set_index("step").cumulative_regret.loc[list(steps)].to_numpy()
                got = np.asarray(metrics["cumulative_regret"][s])[np.asarray(steps) - 1]
                rel = float(np.max(np.abs(got - want) / np.abs(want)))
                worst = max(worst, rel)
                row = {
                    "kernel": kernel,
                    "method": name,
                    "seed": s,
                    "steps": steps,
                    "R_t_now": [float(g) for g in got],
                    "R_t_committed": [float(w) for w in want],
                    "max_rel_diff": rel,
                }
                result["rows"].append(row)
                print(json.dumps(row), flush=True)
    result["max_rel_diff"] = worst
    result["note"] = (
        "fig2.csv.gz stores 6 significant digits, so a max_rel_diff below ~1e-5 means the same "
        "curves (the same picks); a changed pick moves R_t by far more"
    )
    result["load_end"] = os.getloadavg()
    (OUT / f"fig2_recheck{'_quick' if args.quick else ''}.json").write_text(json.dumps(result, indent=1))
    print("max relative difference", worst)


if __name__ == "__main__":
    main()
