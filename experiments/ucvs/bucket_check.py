"""Buffer-size buckets in the uCVS methods, one seed, cheap costs, v = 0.02, the grid's acquisition
settings (16 MC rows, 16 candidates, 1 x 5 Adam steps, fixed hyper-parameters), one program per
setting in one process. Records compile and run seconds, the steps, whether the plays (sets) are the
same and the largest difference of the chosen values.

* ``--compare bucket`` (default): ``bucket=True`` (each ask on the smallest power-of-two prefix of the
  data) against ``bucket=False`` (the whole 750-row buffer) on Levy-12D -> bucket_check.json;
* ``--compare step``: bucket growth capped at 128 rows (``bucket_step=128``: 16, ..., 256, 384, 512,
  640, 750; the default) against powers of two (``bucket_step=None``: ..., 256, 512, 750; the grids
  fig1_grid2 / fig1_grid3 ran this way) on Levy-12D and airfoil -> bucket_step_check.json.

  python experiments/ucvs/bucket_check.py [--compare step] [--objectives levy12] [--methods uCVS UCB-PSQ] [--tmax 750]

The files go to experiments/results/ucvs/speed/ with --update, else its scratch mirror (`jbo reproduce ucvs
speed` runs both comparisons).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

import fig1
import jax
import numpy as np

from jbo.problems import ucvs as P

#: --compare -> (option name, baseline value, new value, default objectives, default methods, output)
COMPARISONS = {
    "bucket": ("bucket", False, True, ["levy12"], ["UCB-CVS (known costs)", "uCVS"], "bucket_check.json"),
    "step": ("bucket_step", None, 128, ["levy12", "airfoil"], ["uCVS", "UCB-PSQ"], "bucket_step_check.json"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", choices=list(COMPARISONS), default="bucket")
    ap.add_argument("--objectives", nargs="*", default=None)
    ap.add_argument("--methods", nargs="*", default=None)
    ap.add_argument("--tmax", type=int, default=750)
    ap.add_argument(
        "--out",
        default=None,
        help="output path (default: the comparison's file in the output folder; a bare file name goes there too)",
    )
    fig1.add_update_flag(ap)
    args = ap.parse_args()
    option, old, new, objectives, methods, name = COMPARISONS[args.compare]
    out = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "jax": jax.__version__},
        "tmax": args.tmax,
        "runs": [],
    }
    for objective in args.objectives or objectives:
        env = P.CVSProblem(objective, "cheap", 0.02)
        for method in args.methods or methods:
            res = {}
            for value in (old, new):
                kw = dict(fig1.METHODS[method], **fig1.GRID_ACQ, **{option: value})
                if kw["method"] == "ucvs":
                    kw["refit"] = False
                trace, tc, tr = fig1.run_program(fig1.cvs(**kw), [env], 1, args.tmax)
                active = np.asarray(trace.metrics["active"][0, 0])
                res[value] = (np.asarray(trace.actions.set[0, 0])[active], np.asarray(trace.actions.x[0, 0])[active])
                out["runs"].append(
                    {
                        "objective": objective,
                        "method": method,
                        option: value,
                        "compile_s": tc,
                        "run_s": tr,
                        "steps": int(active.sum()),
                        "load1": os.getloadavg()[0],
                    }
                )
                print(out["runs"][-1], flush=True)
            (s0, x0), (s1, x1) = res[old], res[new]
            same = s1.shape == s0.shape
            last = out["runs"][-1]
            last["same_sets"] = bool(same and np.array_equal(s1, s0))
            last["max_abs_x_difference"] = float(np.abs(x1 - x0).max()) if same else None
            last["run_ratio_new_over_old"] = last["run_s"] / out["runs"][-2]["run_s"]
    path = Path(args.out or name)
    (fig1.out_dir("speed") / path if path.parent == Path(".") else path).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
