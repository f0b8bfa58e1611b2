"""UHE-BO and its baselines on the engine's growing segments against the whole buffer.

Every method of jbo.algorithms.uhe_bo (fit / optimiser budgets cut to keep this short: 10 Adam fit steps,
10 optimiser steps, 128 raw points, 20 HMC warm-up steps) runs branin for 40 steps, 2 seeds, once
with the default segments (buffers of 16, 32, then 40 rows) and once with bucket=False (the whole
40-row buffer at every step). Written to segment_check.json (experiments/results/uhe_bo/segment_check/ with
--update, else its scratch mirror): the largest difference of the regret curves and of the chosen points, and
the time of each run (compile included). --quick (smoke runs): MAP only, 20 steps (buffers of 16, then 20
rows), written to segment_check_quick.json.

    python experiments/uhe_bo/segment_check.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

import jbo
from jbo.algorithms import uhe_bo
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from flat_settings import uhe_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

SHORT = dict(num_initial=6, fit_steps=10, opt_steps=10, num_raw=128, num_warmup=20)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="MAP only, 20 steps (smoke runs)")
    a = add_update_flag(ap).parse_args()
    out = output_dir("uhe_bo", "segment_check") / f"segment_check{'_quick' if a.quick else ''}.json"
    prob, key, steps = jbo.problems.get("branin"), jax.random.key(7), 20 if a.quick else 40
    rows = []
    for name in ("map",) if a.quick else uhe_bo.NAMES:
        kw = {"num_initial": 6} if name == "random" else SHORT
        runs = {}
        for label, extra in (("segments", {}), ("whole", {"growth": jbo.data.WHOLE})):
            alg = (
                uhe_bo.make(name, **kw, **extra)
                if name == "random"
                else uhe_bo.make(name, **uhe_options(name, **kw, **extra))
            )
            t0 = time.perf_counter()
            tr = jax.block_until_ready(jbo.run_seeds(alg, prob, key=key, num_steps=steps, num_seeds=2))
            runs[label] = (tr, time.perf_counter() - t0, list(alg.capacities(steps)))
        (seg, seg_s, caps), (whole, whole_s, _) = runs["segments"], runs["whole"]
        row = {
            "method": name,
            "segments": caps,
            "max_regret_diff": float(
                np.max(np.abs(np.asarray(seg.metrics["simple_regret"]) - np.asarray(whole.metrics["simple_regret"])))
            ),
            "max_point_diff": float(np.max(np.abs(np.asarray(seg.actions) - np.asarray(whole.actions)))),
            "segments_s": seg_s,
            "whole_s": whole_s,
        }
        print(json.dumps(row))
        rows.append(row)
    out.write_text(
        json.dumps(
            {
                "command": "python experiments/uhe_bo/segment_check.py" + (" --quick" if a.quick else ""),
                "machine": machine_info(),
                "problem": "branin",
                "steps": steps,
                "seeds": 2,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
