"""The block size of jbo.linalg's blocked inverses (jbo.linalg.BLOCK), by measurement: for each size, in
a fresh process with the compilation cache off, the LML gradient inside one compiled loop (per
evaluation, the fit's regime; vmapped over 8 seeds, d = 6, best of 3) at N rows, and jbo's default
GP-UCB on hartmann6 (10 initial points, 8 seeds) at T steps: compile seconds, run seconds and the median
final regret. Block 0 means no blocking (a triangular solve against the identity and one matmul).

    python experiments/engine/block_size.py --update                       # blocks 128, 256 and none
    python experiments/engine/block_size.py --blocks 64 128 --rows 400 --steps 400

Writes block_size.json (into experiments/results/engine/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

LOOP = 10  # LML gradient evaluations in the compiled loop


def one(block: int, rows, steps, seeds: int = 8, dim: int = 6) -> dict:
    """Everything for one block size, in this process."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from lml_grad_forms import in_loop  # this folder: the gradient inside a compiled loop

    import jbo
    from jbo import data, gp
    from jbo.studies import compile_seeds

    jbo.linalg.BLOCK = block if block > 0 else 1 << 30  # read when a program is traced
    out = {"block": block, "gradient": [], "runs": []}
    hyp = gp.default_params(dim)
    for n in rows:
        x = jax.random.uniform(jax.random.key(n), (seeds, n, dim))
        bufs = jax.vmap(lambda a: data.from_arrays(a, jnp.sin(3 * a).sum(-1), n))(x)

        f = jax.jit(jax.vmap(lambda b: in_loop(gp.lml_and_grad, hyp, LOOP)(b.x, b.y, b.mask)))
        jax.block_until_ready(f(bufs))
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            jax.block_until_ready(f(bufs))
            best = min(best, time.perf_counter() - t0)
        out["gradient"].append({"rows": n, "ms_per_seed_per_evaluation": 1e3 * best / seeds / LOOP})
    alg = jbo.algorithms.get("gp_ucb", num_initial=10)
    problem = jbo.problems.get("hartmann6")
    keys = jax.random.split(jax.random.key(123), seeds)
    for T in steps:
        fn, compile_s = compile_seeds(alg, problem, keys=keys, num_steps=T)
        t0 = time.perf_counter()
        trace = jax.block_until_ready(fn(keys))
        run_s = time.perf_counter() - t0
        final = np.asarray(trace.metrics["simple_regret"][:, -1])
        out["runs"].append(
            {
                "steps": T,
                "seeds": seeds,
                "compile_s": compile_s,
                "run_s": run_s,
                "median_final_regret": float(np.median(final)),
            }
        )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, nargs="+", default=[128, 256, 0])
    ap.add_argument("--rows", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--steps", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # a child process: one block
    args = add_update_flag(ap).parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.rows, args.steps)))
        return
    from jbo.studies import machine_info

    record = {
        "command": "python experiments/engine/block_size.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
        "load_average_at_start": os.getloadavg(),
        "results": [],
    }
    env = dict(os.environ, JBO_CACHE="0")
    for block in args.blocks:
        cmd = [sys.executable, __file__, "--one", str(block), "--rows", *map(str, args.rows)]
        cmd += ["--steps", *map(str, args.steps)]
        line = subprocess.run(cmd, check=True, env=env, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        record["results"].append(json.loads(line))
        print(line, flush=True)
    record["load_average_at_end"] = os.getloadavg()
    out = output_dir("engine") / "block_size.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
