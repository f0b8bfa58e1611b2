"""Buffer-size buckets in the uCVS methods: the same run with ``bucket=True`` (each ask on the smallest
power-of-two prefix of the data) and ``bucket=False`` (the whole 750-row buffer), one seed of Levy-12D
cheap, v = 0.02, the grid's acquisition settings. Records compile and run seconds, the plays and the
largest difference of the chosen values. Writes experiments/results/cvs/bucket_check.json.

  python experiments/cvs/bucket_check.py [--methods uCVS "UCB-CVS (known costs)"]
"""
from __future__ import annotations

import argparse
import json
import os
import platform

import numpy as np

import fig1
from jbo.algorithms import cvs as A
from jbo.problems import cvs as P


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", nargs="*", default=["UCB-CVS (known costs)", "uCVS"])
    ap.add_argument("--tmax", type=int, default=750)
    args = ap.parse_args()
    env = P.CVSProblem("levy12", "cheap", 0.02)
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count()}, "tmax": args.tmax, "runs": []}
    for method in args.methods:
        res = {}
        for bucket in (True, False):
            kw = dict(fig1.METHODS[method], num_mc=16, num_raw=16, num_starts=1, opt_steps=5, bucket=bucket)
            if kw["method"] == "ucvs":
                kw["refit"] = False
            trace, tc, tr = fig1.run_program(A.CVS(**kw), [env], 1, args.tmax)
            active = np.asarray(trace.metrics["active"][0, 0])
            res[bucket] = (np.asarray(trace.actions.set[0, 0])[active], np.asarray(trace.actions.x[0, 0])[active])
            out["runs"].append({"method": method, "bucket": bucket, "compile_s": tc, "run_s": tr,
                                "steps": int(active.sum()), "load1": os.getloadavg()[0]})
            print(out["runs"][-1], flush=True)
        (s1, x1), (s0, x0) = res[True], res[False]
        out["runs"][-1]["same_sets"] = bool(s1.shape == s0.shape and np.array_equal(s1, s0))
        out["runs"][-1]["max_abs_x_difference"] = float(np.abs(x1 - x0).max()) if x1.shape == x0.shape else None
    (fig1.OUT / "bucket_check.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
