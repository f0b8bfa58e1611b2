"""Time per step of R-PERP against R-GP-UCB (and SW-GP-UCB, Random), measured side by side in one run.

    jbo reproduce r_perp timing                   # the run below, into experiments/results/r_perp/timing/
    python experiments/r_perp/timing.py           # T = 5000, the Fig 2 SE and Matern instances of seed 0
    python experiments/r_perp/timing.py --quick --kernels se   # smoke run (T = 400, 12 x 12 grid, 2 rounds)

Each method runs the whole T-step scan as one compiled program (compile timed apart, ahead of time);
then the programs are executed in turns (round robin, `--repeats` rounds) so that a change of machine
load hits every method alike, and the median run time is divided by T. Both the one-seed program and
the 5-seed program (shared V_T = 4, so every seed has the same H and the seeds are one vmapped
program) are timed. os.getloadavg() is recorded next to every measurement (other jobs share the CPU).
jbo's persistent compilation cache is off here (JBO_CACHE=0 unless set), so compile_s is a real
compile. Writes timing[_quick].json (with the code version) into experiments/results/r_perp/timing/ with
--update, else its scratch mirror.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("JBO_CACHE", "0")  # time real compiles, not loads from jbo's persistent cache

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jbo.algorithms import RandomSearch  # noqa: E402
from jbo.algorithms import r_perp as ns  # noqa: E402
from jbo.problems import r_perp as pn  # noqa: E402
from jbo.studies import code_version, machine_info  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("r_perp", "timing")  # experiments/results/r_perp/timing with --update, else its scratch mirror


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--kernels", nargs="+", default=["se", "matern52"])
    add_update_flag(ap)
    args = ap.parse_args()
    T, grid, reps = (400, 12, 2) if args.quick else (5000, 30, args.repeats)
    result = {
        "machine": machine_info(),
        "jax": jax.__version__,
        "code_version": code_version(),
        "compilation_cache": os.environ["JBO_CACHE"],
        "T": T,
        "grid": grid,
        "load_start": os.getloadavg(),
        "settings": "lambda = 0.01, R-PERP C = 0.1, rho = 0.01, delta = 0.1",
        "runs": [],
    }
    for kernel in args.kernels:
        for seeds, shared in ((1, None), (5, 4.0)):
            envs = [pn.kernel_drift(s, kernel, horizon=T, grid_size=grid) for s in range(seeds)]
            V = [shared or pn.known(e)["variation"] for e in envs]
            cfg = {
                "R-PERP": ([ns.RPERP(T, variation=v, kernel=kernel) for v in V], ns.RPERPParams(C=0.1)),
                "R-GP-UCB": ([ns.RGPUCB(T, variation=v, kernel=kernel) for v in V], ns.UCBParams()),
                "SW-GP-UCB": ([ns.SWGPUCB(T, variation=v, kernel=kernel) for v in V], ns.UCBParams()),
                "Random": ([RandomSearch(num_initial=0)] * seeds, None),
            }
            keys = jax.random.split(jax.random.key(7), seeds)
            runs = {m: [] for m in cfg}
            compile_s, loads = {}, []
            for m, (algs, p) in cfg.items():  # compile (first call) apart
                _, groups = pn.run_instances(algs, envs, keys=keys, num_steps=T, params=p)
                assert len(groups) == 1, "one program per method"
                compile_s[m] = groups[0]["compile_s"]
            for _ in range(reps):
                for m, (algs, p) in cfg.items():
                    loads.append(os.getloadavg()[0])
                    _, groups = pn.run_instances(algs, envs, keys=keys, num_steps=T, params=p)
                    runs[m].append(groups[0]["run_s"])  # the compiled program alone
            rec = {
                "kernel": kernel,
                "seeds": seeds,
                "V_T": "per seed" if shared is None else shared,
                "H": cfg["R-PERP"][0][0].restart_interval,
                "H_ucb": cfg["R-GP-UCB"][0][0].restart_interval,
                "load_during": [float(min(loads)), float(max(loads))],
                "methods": {},
            }
            for m in cfg:
                med = float(np.median(runs[m]))
                rec["methods"][m] = {
                    "compile_s": round(compile_s[m], 2),
                    "run_s_median": round(med, 3),
                    "run_s_all": [round(r, 3) for r in runs[m]],
                    "ms_per_step": round(1e3 * med / T, 4),
                }
            rec["rperp_over_rgpucb"] = round(
                rec["methods"]["R-PERP"]["run_s_median"] / rec["methods"]["R-GP-UCB"]["run_s_median"], 2
            )
            result["runs"].append(rec)
            print(json.dumps(rec), flush=True)
    result["load_end"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"timing{'_quick' if args.quick else ''}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
