"""uCVS ablations (bocvs.md 2.5, D3): the `paper` preset against the `official` one, and the alpha
schedules (halved every d exploitation steps / halved once / constant), with the per-step refit of the
spec (10 Adam steps from the initial hyper-parameters) in exploitation, as in the released code.

Same protocol and outputs as fig1.py (--tag, default "ablation": <tag>_curves.csv, <tag>_runs.csv,
<tag>_timing.csv, <tag>_regret.png, <tag>_evaluations.png) in experiments/results/ucvs/ablation/ with
--update, else its scratch mirror. Default cells: Hartmann-12D and plant, cheap and moderate costs,
v = 0.02 (a CPU budget; --objectives/--costs/--variances widen it). `jbo reproduce ucvs ablation` runs the
committed ablations (ablation_grid, ablation2 with fixed hyper-parameters, ablation_refit with the refit).
"""

from __future__ import annotations

import argparse
import os

import fig1 as F
import pandas as pd

from jbo.algorithms import ucvs as A
from jbo.problems import ucvs as P

VARIANTS = {
    "uCVS paper (alpha halved every d)": dict(preset="paper", alpha_schedule="halve_every"),
    "uCVS paper (alpha halved once)": dict(preset="paper", alpha_schedule="halve_once"),
    "uCVS paper (alpha constant)": dict(preset="paper", alpha_schedule="constant"),
    "uCVS official": dict(preset="official"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    F.add_args(ap)
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.set_defaults(objectives=["hartmann12", "plant"], variances=[0.02], tag="ablation", refit="spec")
    F.add_update_flag(ap)
    args = ap.parse_args()
    out = F.out_dir("ablation")
    seeds = 1 if args.quick else args.seeds
    tmax = args.tmax or (60 if args.quick else 750)
    suffix = "_quick" if args.quick else ""
    curves, runs, timing = [], [], []
    for objective in args.objectives:
        envs = [P.CVSProblem(objective, c, v) for c in args.costs for v in args.variances]
        for name in args.variants:
            opts = VARIANTS[name]
            alg = F.build(name, dict(method="ucvs", **opts), args)
            trace, tc, tr = F.run_program(alg, envs, seeds, tmax)
            load = os.getloadavg()
            c, r = F.post_process(trace, envs, name, objective, 1024 if args.quick else args.eval_rows)
            curves += c
            runs += r
            timing.append(
                {
                    "objective": objective,
                    "method": name,
                    "compile_s": tc,
                    "run_s": tr,
                    "lanes": len(envs) * seeds,
                    "tmax": tmax,
                    "refit": args.refit,
                    "load1": load[0],
                    "load5": load[1],
                }
            )
            print(f"{objective} {name}: compile {tc:.1f}s run {tr:.1f}s load {load[0]:.1f}", flush=True)
            pd.concat(curves).to_csv(out / f"{args.tag}_curves{suffix}.csv", index=False)
            pd.DataFrame(runs).to_csv(out / f"{args.tag}_runs{suffix}.csv", index=False)
            pd.DataFrame(timing).to_csv(out / f"{args.tag}_timing{suffix}.csv", index=False)
    table = pd.concat(curves)
    F.plot(table, "simple_regret", out / f"{args.tag}_regret{suffix}.png", "simple regret")
    F.plot(table, "evaluations", out / f"{args.tag}_evaluations{suffix}.png", "evaluations", log=False)


if __name__ == "__main__":
    assert A.PRESETS == ("paper", "official")
    main()
