"""The numbers behind tests/test_robustness.py: every GP-BO method on degenerate problems, with the
largest change of the decisions against the base problem, and GP-UCB with the inner optimiser switched
off (opt_steps=0) and with the bounded L-BFGS search (GP-BO's default search, here at 2 iterations).

Setting (ours, the same as the test): a smooth 2-D function g on the unit square, 2 seeds x 8 steps,
small GP-BO (3 initial points, 3 Adam fit steps, 16 raw candidates, 2 starts x 2 Adam steps); cases
constant y, x on boxes [0, 1e-8]^2 and [-1e8, 1e8]^2, y x 1e-8, y x 1e8, y + 1e6, noise std 100.

    python experiments/engine/scale/robustness_sweep.py [--update]  ->  robustness_sweep.json (experiments/results/engine/scale/)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JBO_CACHE", "0")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jbo  # noqa: E402
from jbo.problems import degenerate  # noqa: E402
from jbo.studies import code_version, machine_info  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # experiments/: outdir
from flat_settings import gp_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine", "scale") / "robustness_sweep.json"
T, S = 8, 2
SMALL = dict(num_initial=3, fit_steps=3, num_raw=16, num_starts=2, opt_steps=2, opt_method="adam")
GP_FAMILY = ("gp_ucb", "gp_ei", "gp_log_ei", "gp_pi", "gp_ts", "gp_mean", "gp_std")


CASES = degenerate.CASES  # jbo.problems.degenerate: the same problems as tests/test_robustness.py


def finite(tree):
    return all(
        np.isfinite(np.asarray(a)).all()
        for a in jax.tree.leaves(tree)
        if np.issubdtype(np.asarray(a).dtype, np.inexact)
    )


def sweep(label, alg):
    load = os.getloadavg()
    t0 = time.process_time()
    trace = jax.block_until_ready(
        jbo.engine.run_environments(
            alg, list(CASES.values()), key=jax.random.key(3), num_steps=T, num_seeds=S, keep_final_state=True
        )
    )
    cpu = time.process_time() - t0
    acts = np.asarray(trace.actions)
    rows = {}
    for i, name in enumerate(CASES):
        sub = jax.tree.map(lambda a: a[i], trace)
        a = acts[i]
        rows[name] = dict(
            finite_curves=bool(
                np.isfinite(np.asarray(sub.metrics["value"])).all()
                and np.isfinite(np.asarray(sub.metrics["best_value"])).all()
            ),
            finite_final_state=finite(sub.final_state) and finite(sub.info),
            actions_in_unit_cube=bool(np.isfinite(a).all() and (a >= 0).all() and (a <= 1).all()),
            max_abs_action_change_vs_base=float(np.abs(a - acts[0]).max()),
            seeds_with_an_exact_duplicate=int(sum(len(np.unique(r, axis=0)) < T for r in a)),
        )
    out = dict(method=label, compile_and_run_cpu_s=round(cpu, 2), load=[round(v, 2) for v in load], cases=rows)
    print(label, round(cpu, 1), {k: f"{v['max_abs_action_change_vs_base']:.1e}" for k, v in rows.items()}, flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    results = [sweep(n, jbo.algorithms.get(n, **gp_options(**SMALL))) for n in GP_FAMILY]
    results.append(
        sweep(
            "gp_ucb opt_steps=0 (screening only)",
            jbo.algorithms.get("gp_ucb", **gp_options(**dict(SMALL, opt_steps=0))),
        )
    )
    results.append(
        sweep("gp_ucb opt_method=lbfgs", jbo.algorithms.get("gp_ucb", **gp_options(**dict(SMALL, opt_method="lbfgs"))))
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            dict(
                what="GP-BO methods on degenerate problems in one program per method (run_environments); per case: finite "
                "curves / final state, actions in the unit cube, max |action - base action| (invariances: x_tiny, "
                "x_huge, y_tiny, y_huge, y_offset see the base problem up to an affine map), seeds whose 8 actions "
                "contain an exact duplicate",
                machine=machine_info(),
                code_version=code_version(),
                settings=dict(T=T, seeds=S, **SMALL),
                note="XLA optimisations on (the test suite turns most off); CPU seconds include the compile",
                results=results,
            ),
            indent=1,
        )
        + "\n"
    )
    print("wrote", OUT)


if __name__ == "__main__":
    main()
