"""Where a GP-BO run's time goes at a long budget: default GP-UCB on hartmann6 (10 LHS points, 8 seeds, T
steps) against the same run with one part made cheaper, each a fresh compile and one timed run in this process
(compile apart), the variants in the order given:

* default: the reference, GP-BO's L-BFGS search at the classes' 512 raw points and 10 starts (10 starts x 5
  L-BFGS iterations) with the classes' refit schedule (a refit each time the data has grown by 1 + 1/32): the
  settings of the committed file, and of the comparison that chose GP-BO's lighter defaults
  (jbo.parts.GP_MAXIMISER, jbo.parts.GP_REFIT; experiments/engine/long_run_defaults.py --compare both);
* no_local: the search without its local steps (steps=0: the best screened point; a cost probe only, such a
  search re-queries observed points and its regret stalls);
* starts5: 5 L-BFGS starts instead of 10;
* raw256: 256 raw points instead of 512;
* refit_rare: the refit schedule's growth factor 2 (a refit each time the data has doubled) instead of 1 + 1/32.

    python experiments/engine/search_cost.py --steps 400 --update

Writes search_cost_T<steps>.json into experiments/results/engine/ with --update, else its scratch mirror.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

import jbo
from jbo import parts
from jbo.studies import compile_seeds, machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine")  # experiments/results/engine with --update, else its scratch mirror
REFIT = parts.Refit()
SEARCH = parts.Maximiser(method="lbfgs", steps=5)  # the class's 512 raw points and 10 starts
VARIANTS = {
    "default": {},
    "no_local": {"maximiser": dataclasses.replace(SEARCH, steps=0)},
    "starts5": {"maximiser": dataclasses.replace(SEARCH, num_starts=5)},
    "raw256": {"maximiser": dataclasses.replace(SEARCH, num_raw=256)},
    "refit_rare": {"hypers": dataclasses.replace(REFIT, schedule=dataclasses.replace(REFIT.schedule, growth=1.0))},
}
VARIANTS = {name: {"maximiser": SEARCH, "hypers": REFIT, **parts_} for name, parts_ in VARIANTS.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    add_update_flag(ap)
    args = ap.parse_args()
    keys = jax.random.split(jax.random.key(0), args.seeds)
    load, rows = os.getloadavg(), []
    for name in args.variants:
        alg = jbo.algorithms.get("gp_ucb", num_initial=10, **VARIANTS[name])
        fn, compile_s = compile_seeds(alg, jbo.problems.get("hartmann6"), keys=keys, num_steps=args.steps)
        t0 = time.perf_counter()
        trace = jax.block_until_ready(fn(keys))
        run_s = time.perf_counter() - t0
        regret = float(np.median(np.asarray(trace.metrics["simple_regret"])[:, -1]))
        rows.append(
            {
                "variant": name,
                "compile_s": compile_s,
                "run_s": run_s,
                "s_per_seed": run_s / args.seeds,
                "median_final_regret": regret,
            }
        )
        print(
            f"{name:11s} compile {compile_s:5.1f} s  run {run_s:6.1f} s ({run_s / args.seeds:.2f} s/seed)  "
            f"median final regret {regret:.2e}",
            flush=True,
        )
    base = rows[0]["s_per_seed"] if rows[0]["variant"] == "default" else None
    for r in rows:
        r["fraction_of_default"] = None if base is None else r["s_per_seed"] / base
    record = {
        "command": "python experiments/engine/search_cost.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
        "load_average": {"start": load, "end": os.getloadavg()},
        "steps": args.steps,
        "seeds": args.seeds,
        "rows": rows,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"search_cost_T{args.steps}.json").write_text(json.dumps(record, indent=1))
    print(json.dumps({r["variant"]: round(r["fraction_of_default"] or 0, 3) for r in rows}))


if __name__ == "__main__":
    main()
