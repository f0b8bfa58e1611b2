"""A/B of one method's run time between the working tree's jbo.algorithms.ucvs and another commit's,
in one process, alternating (new, old, new, old, ...) so both see the same machine state.

  python experiments/ucvs/ab_speed.py --base 310a81d --objective hartmann12 --method ts_psq --seeds 5
      -> ab_speed_<method>_<objective>.json (experiments/results/ucvs/speed/ with --update, else its
         scratch mirror)

One cheap-cost, v = 0.02 environment, the grid's acquisition sizes (16 MC rows, 16 candidates, 1 x 5
Adam steps), T_max = 750, the seeds one after another in one program (fig1.run_program). Records compile
and run seconds of every repeat and whether both versions made the same number of steps.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import fig1 as F
import jax
import numpy as np

from jbo.algorithms import ucvs as A
from jbo.problems import ucvs as P

ROOT = Path(__file__).resolve().parents[2]


def load_base(commit: str):
    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:jbo/algorithms/ucvs.py"], check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "cvs_base.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("cvs_base", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["cvs_base"] = mod  # equinox's dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the commit to compare with")
    ap.add_argument("--objective", default="hartmann12")
    ap.add_argument("--method", default="ts_psq")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=2)
    F.add_update_flag(ap)
    a = ap.parse_args()
    base = load_base(a.base)
    envs = [P.CVSProblem(a.objective, "cheap", 0.02)]
    kw = dict(method=a.method, **F.GRID_ACQ)
    runs = []
    for r in range(a.repeats):
        for name, mod in (("working tree", A), (a.base, base)):
            alg = F.cvs(**kw) if mod is A else mod.CVS(**kw)  # the base commit may predate A.make
            trace, tc, tr = F.run_program(alg, envs, a.seeds, 750)
            steps = int(np.asarray(trace.metrics["active"]).sum())
            runs.append(dict(code=name, repeat=r, compile_s=tc, run_s=tr, active_steps=steps, load1=os.getloadavg()[0]))
            print(runs[-1], flush=True)
    out = dict(
        machine=f"{platform.machine()} {os.cpu_count()} cpus, jax {jax.__version__} {jax.default_backend()}",
        objective=a.objective,
        method=a.method,
        seeds=a.seeds,
        cost_set="cheap",
        variance=0.02,
        runs=runs,
    )
    path = F.out_dir("speed") / f"ab_speed_{a.method}_{a.objective}.json"
    path.write_text(json.dumps(out, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
