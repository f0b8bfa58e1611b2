"""The GP fit's programs and its LML gradient at a reference commit and on this working tree,
alternating in one run (see experiments/before_after.py): temporary memory and run time.

Registry GP-UCB's model (hartmann6's dimension, d = 6), vmapped over S seeds at N rows:

- the per-step refit (1 restart x 5 Adam steps from the previous fit, the regime of a long run's
  refits): XLA's temporary buffer size (``compiled.memory_analysis().temp_size_in_bytes``) and the run
  time per seed, best of --repeats executions after a warm-up;
- the first fit (`gp.fit`'s defaults, 4 restarts x 100 Adam steps): its temporary buffer size only
  (compiled, not run);
- the closed-form LML gradient (`gp.lml_and_grad`), once per call and in a compiled loop of 10
  evaluations (per evaluation; the fit's regime, `lml_grad_forms.in_loop`), best of --repeats, with
  its % of the machine's matmul peak counted as docs/benchmarks.md counts it (10/3 N^3 flops against
  a batched 1024 x 1024 float64 matmul, `lml_grad_forms.peak`).

A fit's loop holds the rows x fixed and moves the hyper-parameters, so XLA's loop-invariant code
motion may store anything computed from x alone before the loop, e.g. the d (N, N) coordinate
differences of the Gram matrix (see `jbo.gp.tie_rows`); that shows as temporary memory.

    python experiments/engine/fit_before_after.py --before 47d8441 --rows 400 1000 --update
    python experiments/engine/fit_before_after.py --before 3b22fa2 --rows 400 1000 --processes 3 --repeats 10 \
        --out fit_before_after_lapack_threads.json --update

Each side runs in a fresh process with the persistent compilation cache off. Writes fit_before_after.json (or --out)
(experiments/results/engine with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir, before_after
from before_after import alternate, write  # noqa: E402
from lml_grad_forms import in_loop, peak  # noqa: E402  (this folder)
from outdir import add_update_flag, output_dir  # noqa: E402

LOOP = 10


def best_ms(f, *args, repeats: int) -> float:
    """Milliseconds of the fastest of `repeats` executions after a warm-up."""
    jax.block_until_ready(f(*args))
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        best = min(best, time.perf_counter() - t0)
    return 1e3 * best


def worker(rows, seeds: int, repeats: int, dim: int = 6) -> dict:
    """The measurements with the jbo this process imports (the side's tree on PYTHONPATH)."""
    import jax.numpy as jnp

    import jbo
    from jbo import data, gp
    from jbo.studies import machine_info

    alg = jbo.algorithms.get("gp_ucb")
    model, hyp = alg.model, gp.default_params(dim)
    out = {"jbo": jbo.__file__, "machine": machine_info(), "peak_gflops": peak(repeats), "rows": {}}
    for n in rows:
        key = jax.random.key(n)
        x = jax.random.uniform(key, (seeds, n, dim))
        bufs = jax.vmap(lambda a: data.from_arrays(a, jnp.sin(3 * a).sum(-1), n))(x)
        keys = jax.random.split(key, seeds)

        def refit(k, b):
            return gp.fit(
                k, b, model, init=hyp, warm_start=hyp, num_restarts=alg.hypers.restarts, num_steps=alg.hypers.steps
            )

        compiled = jax.jit(jax.vmap(refit)).lower(keys, bufs).compile()
        first = jax.jit(jax.vmap(lambda k, b: gp.fit(k, b, model, init=hyp))).lower(keys, bufs).compile()
        grad = jax.jit(jax.vmap(lambda b: gp.lml_and_grad(hyp, b.x, b.y, b.mask, model)))
        form = lambda p, x, y, m: gp.lml_and_grad(p, x, y, m, model)  # noqa: E731
        loop = jax.jit(jax.vmap(lambda b: in_loop(form, hyp, LOOP)(b.x, b.y, b.mask)))
        flops = 10 / 3 * n**3
        row = {
            "refit": f"{alg.hypers.restarts} x {alg.hypers.steps} Adam",
            "refit_temp_mb": compiled.memory_analysis().temp_size_in_bytes / 1e6,
            "refit_ms_per_seed": best_ms(compiled, keys, bufs, repeats=repeats) / seeds,
            "first_fit_temp_mb": first.memory_analysis().temp_size_in_bytes / 1e6,
            "lml_grad_ms_per_seed": best_ms(grad, bufs, repeats=repeats) / seeds,
            "lml_grad_in_loop_ms_per_seed": best_ms(loop, bufs, repeats=repeats) / seeds / LOOP,
        }
        for name in ("lml_grad", "lml_grad_in_loop"):
            row[f"{name}_pct_of_peak"] = 100 * flops / (row[f"{name}_ms_per_seed"] * 1e6) / out["peak_gflops"]
        out["rows"][str(n)] = row
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", help="the reference commit")
    ap.add_argument("--rows", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5, help="executions timed per process (best is kept)")
    ap.add_argument("--processes", type=int, default=2, help="fresh processes per side, alternating")
    ap.add_argument("--out", default="fit_before_after.json", help="file name in the output folder")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    add_update_flag(ap)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.rows, args.seeds, args.repeats)))
        return
    if not args.before:
        ap.error("--before is required")

    def measure(side, tree, r, scratch):
        env = dict(os.environ, JBO_CACHE="0", PYTHONPATH=str(tree))
        env.pop("JBO_UPDATE_RESULTS", None)
        cmd = [sys.executable, __file__, "--worker", "--rows", *map(str, args.rows)]
        cmd += ["--seeds", str(args.seeds), "--repeats", str(args.repeats)]
        done = subprocess.run(cmd, check=True, cwd=tree, env=env, capture_output=True, text=True)
        record = json.loads(done.stdout.strip().splitlines()[-1])
        print(side, r, json.dumps(record["rows"]), flush=True)
        return record

    load_at_start = os.getloadavg()
    runs, before_rev, after_rev = alternate(args.before, args.processes, measure)
    table = []
    for n in args.rows:
        row = {"rows": n, "seeds": args.seeds}
        for side in ("before", "after"):
            recs = [rec["rows"][str(n)] for rec in runs[side]]
            row[f"{side}_refit_temp_mb"] = recs[0]["refit_temp_mb"]
            row[f"{side}_first_fit_temp_mb"] = recs[0]["first_fit_temp_mb"]
            for key in ("refit_ms_per_seed", "lml_grad_ms_per_seed", "lml_grad_in_loop_ms_per_seed"):
                row[f"{side}_{key}"] = min(r[key] for r in recs)
            peaks = [rec["peak_gflops"] for rec in runs[side]]
            for key in ("lml_grad", "lml_grad_in_loop"):  # the best time against the best peak of the side
                row[f"{side}_{key}_pct_of_peak"] = (
                    100 * 10 / 3 * n**3 / (row[f"{side}_{key}_ms_per_seed"] * 1e6) / max(peaks)
                )
        for key in ("refit", "lml_grad", "lml_grad_in_loop"):
            row[f"{key}_time_ratio_after_before"] = row[f"after_{key}_ms_per_seed"] / row[f"before_{key}_ms_per_seed"]
        table.append(row)
        print(json.dumps(row))
    write(
        output_dir("engine") / args.out,
        "experiments/engine/fit_before_after.py",
        before_rev,
        after_rev,
        machine=runs["after"][0]["machine"],
        load_average_at_start=load_at_start,
        load_average_at_end=os.getloadavg(),
        table=table,
        runs=runs,
    )


if __name__ == "__main__":
    main()
