"""The growth of the uCVS methods' buffer-prefix buckets (``CVS.bucket_step``): powers of two
(16, 32, ..., 512, 750; ``bucket_step=None``, the grids fig1_grid2/fig1_grid3 ran this way) against
growth capped at 128 rows (16, 32, 64, 128, 256, 384, 512, 640, 750; the default since this check).
One seed, cheap costs, v = 0.02, the grid's acquisition settings (16 MC rows, 16 candidates, 1 x 5 Adam
steps, fixed hyper-parameters), T_max = 750, one program per setting, one process. Records compile and
run seconds, the steps, whether the plays (sets) are the same and the largest difference of the
chosen values. Writes experiments/results/cvs/bucket_step_check.json.

  python experiments/cvs/bucket_step_check.py [--objectives levy12 airfoil] [--methods uCVS UCB-PSQ]
"""
from __future__ import annotations

import argparse
import json
import os
import platform

import jax
import numpy as np

import fig1
from jbo.algorithms import cvs as A
from jbo.problems import cvs as P


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objectives", nargs="*", default=["levy12", "airfoil"])
    ap.add_argument("--methods", nargs="*", default=["uCVS", "UCB-PSQ"])
    ap.add_argument("--tmax", type=int, default=750)
    args = ap.parse_args()
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "jax": jax.__version__},
           "tmax": args.tmax, "runs": []}
    for objective in args.objectives:
        env = P.CVSProblem(objective, "cheap", 0.02)
        for method in args.methods:
            res = {}
            for step in (None, 128):
                kw = dict(fig1.METHODS[method], num_mc=16, num_raw=16, num_starts=1, opt_steps=5, bucket_step=step)
                if kw["method"] == "ucvs":
                    kw["refit"] = False
                trace, tc, tr = fig1.run_program(A.CVS(**kw), [env], 1, args.tmax)
                active = np.asarray(trace.metrics["active"][0, 0])
                res[step] = (np.asarray(trace.actions.set[0, 0])[active], np.asarray(trace.actions.x[0, 0])[active])
                out["runs"].append({"objective": objective, "method": method, "bucket_step": step, "compile_s": tc,
                                    "run_s": tr, "steps": int(active.sum()), "load1": os.getloadavg()[0]})
                print(out["runs"][-1], flush=True)
            (s0, x0), (s1, x1) = res[None], res[128]
            same = s1.shape == s0.shape
            out["runs"][-1]["same_sets"] = bool(same and np.array_equal(s1, s0))
            out["runs"][-1]["max_abs_x_difference"] = float(np.abs(x1 - x0).max()) if same else None
            out["runs"][-1]["run_ratio_new_over_old"] = out["runs"][-1]["run_s"] / out["runs"][-2]["run_s"]
            print(out["runs"][-1], flush=True)
    (fig1.OUT / "bucket_step_check.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
