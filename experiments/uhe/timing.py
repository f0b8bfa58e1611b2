"""Fig 4 right / the running-time target: seconds per BO step of UHE-BO, MAP and MCMC, side by side
in one process, on Hartmann3 (T = 100 BO evaluations after n0 = 9) and Deceptive (n = 2).

    python experiments/uhe/timing.py [--quick] [--problems hartmann3,deceptive2]

One seed per method, each run as one compiled program (`jbo.run`); compile time (lowering +
compilation) is measured apart from the run; the run time covers the algorithm and the (cheap,
in-program) objective. The load average is recorded next to every number: others share the CPU.
Writes experiments/results/uhe/timing.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import common  # noqa: F401  (sets XLA_FLAGS before jax)
import jax

import jbo


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--problems", default="hartmann3")
    ap.add_argument("--methods", default="uhe_bo,map,mcmc")
    ap.add_argument("--budget", type=int, default=None)
    a = ap.parse_args(argv)
    budget = a.budget or (6 if a.quick else 100)
    common.header(f"UHE timing, T = {budget}")
    out = {"machine": jbo.studies.machine_info(), "budget": budget, "runs": [],
           "env": {v: os.environ.get(v) for v in ("XLA_FLAGS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}}
    for p in a.problems.split(","):
        prob = common.problem(p)
        for m in a.methods.split(","):
            alg = common.method(m, prob.dim, a.quick)
            T = alg.num_initial + budget
            fn = jax.jit(lambda k: jbo.engine._run(alg, prob, k, T, alg.default_params()))
            load0 = os.getloadavg()
            t0 = time.perf_counter()
            c = fn.lower(jax.random.key(0)).compile()
            t1 = time.perf_counter()
            tr = jax.block_until_ready(c(jax.random.key(0)))
            t2 = time.perf_counter()
            r = dict(method=m, problem=p, steps=T, bo_steps=budget, compile_s=t1 - t0, run_s=t2 - t1,
                     s_per_bo_step=(t2 - t1) / budget, final_simple_regret=float(tr.metrics["simple_regret"][-1]),
                     loadavg_before=load0, loadavg_after=os.getloadavg())
            out["runs"].append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    for p in a.problems.split(","):
        per = {r["method"]: r["s_per_bo_step"] for r in out["runs"] if r["problem"] == p}
        if "map" in per:
            out.setdefault("ratios", {})[p] = {f"{m}_over_map": v / per["map"] for m, v in per.items()}
    path = common.out_path("timing" + ("" if budget == 100 or a.quick else f"_T{budget}"), a.quick, "json")
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out.get("ratios"), indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
