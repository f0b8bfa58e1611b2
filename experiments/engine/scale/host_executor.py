"""Parallel host evaluations with AskTell.optimize(executor=...): wall time of serial, thread-pool and
process-pool evaluation of the seeds' points on this machine, and a check that all three give the
same run.

Setting (ours): GP-UCB (small inner optimiser), Branin, 4 seeds x 8 steps; two stand-in simulators:
"waiting" (0.25 s of sleep per evaluation: an external program or a lab, the host idles) and "busy"
(a pure-Python loop of ~0.1-0.2 s per evaluation that holds the GIL). Compile time (the first
optimize on a fresh AskTell) is measured separately and excluded from the per-mode times.

    python experiments/engine/scale/host_executor.py [--update]  ->  host_executor.json (experiments/results/engine/scale/)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _host_sim (numpy only) for the pool workers

import _host_sim  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # experiments/: outdir
from flat_settings import gp_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

T, S = 8, 4
BOUNDS = [[-5.0, 0.0], [10.0, 15.0]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    out = output_dir("engine", "scale") / "host_executor.json"
    os.environ.setdefault("JBO_CACHE", "0")  # a cold compile: no persistent compilation cache (jbo.cache)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    import jax
    import numpy as np

    import jbo
    from jbo.studies import code_version, machine_info

    alg = jbo.algorithms.get(
        "gp_ucb", **gp_options(num_initial=3, fit_steps=5, num_raw=64, num_starts=4, opt_steps=10, opt_method="adam")
    )
    key = jax.random.key(0)

    def fresh():
        return jbo.AskTell(alg, np.asarray(BOUNDS), num_steps=T, key=key, num_seeds=S)

    t0 = time.perf_counter()
    fresh().optimize(_host_sim.branin)  # compiles ask and tell (once per algorithm and shapes)
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = fresh()
    ref.optimize(_host_sim.branin)
    ask_tell_s = time.perf_counter() - t0  # the optimiser's own time per run (instant objective)
    ref_x = np.stack(ref.xs)

    rows = []
    sims = {"waiting": _host_sim.Waiting(0.25), "busy": _host_sim.Busy(2_000_000)}
    ctx = multiprocessing.get_context("spawn")
    for sim_name, sim in sims.items():
        t0 = time.perf_counter()
        for _ in range(4):
            sim(np.array([0.0, 0.0]))
        one_eval = (time.perf_counter() - t0) / 4
        for mode in ("serial", "threads", "processes"):
            pool = None
            if mode == "threads":
                pool = ThreadPoolExecutor(max_workers=S)
            elif mode == "processes":
                pool = ProcessPoolExecutor(max_workers=S, mp_context=ctx)
                list(pool.map(_host_sim.branin, [[0.0, 0.0]] * S))  # start the workers (not timed)
            load = os.getloadavg()
            opt = fresh()
            t0 = time.perf_counter()
            opt.optimize(sim, executor=pool)
            wall = time.perf_counter() - t0
            if pool is not None:
                pool.shutdown()
            same = bool(np.array_equal(np.stack(opt.xs), ref_x))
            rows.append(
                dict(
                    simulator=sim_name,
                    mode=mode,
                    workers=1 if pool is None else S,
                    wall_s=round(wall, 3),
                    seconds_per_evaluation_alone=round(one_eval, 4),
                    evaluations=S * T,
                    same_run_as_serial=same,
                    load_before=[round(v, 2) for v in load],
                    load_after=[round(v, 2) for v in os.getloadavg()],
                )
            )
            print(rows[-1], flush=True)
    for r in rows:
        base = next(q for q in rows if q["simulator"] == r["simulator"] and q["mode"] == "serial")
        r["speedup_vs_serial"] = round(base["wall_s"] / r["wall_s"], 2)
    result = dict(
        what="AskTell.optimize wall time with no executor, a ThreadPoolExecutor and a spawn ProcessPoolExecutor "
        f"({S} workers): GP-UCB on Branin, {S} seeds x {T} steps; every mode must give the serial run exactly",
        machine=machine_info(),
        code_version=code_version(),
        cpu_count=os.cpu_count(),
        compile_s=round(compile_s, 2),
        optimiser_only_run_s=round(ask_tell_s, 2),
        note="the machine is shared: load averages are recorded next to every row; wall times include the "
        "optimiser's own ask/tell time (optimiser_only_run_s with an instant objective)",
        rows=rows,
    )
    out.write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
