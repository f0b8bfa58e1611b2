"""jbo.linalg's looped LAPACK lowering against jaxlib's batched calls (docs/design.md, section "Batched
LAPACK calls on CPU"): the same programs run in child processes with JBO_LAPACK_LOOP=0 (JAX's batched
lowering) and =1 (the loop), their actions compared bit for bit; and a 2-seed UHE-BO run through
ask/tell (40 BO steps on Deceptive, n = 2) with a wall-clock timeout in each mode, the run that hung.

    python experiments/engine/scale/lapack_loop_check.py [--update]  ->  lapack_loop_check.json (experiments/results/engine/scale/)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine", "scale") / "lapack_loop_check.json"
CHILD = r"""
import sys, numpy as np, jax, jax.numpy as jnp, jbo
from jbo.algorithms import uhe_bo
from jbo import data
name, path = sys.argv[1], sys.argv[2]
if name == "hmc_target":
    x = jax.random.uniform(jax.random.key(3), (40, 3))
    buf = data.Buffer(x, jnp.sin(5 * x).sum(1), jnp.arange(40) < 37, jnp.int32(37))
    lp = uhe_bo.log_posterior(uhe_bo.paper_model(), buf)
    zs = jnp.array([[-1.5, -1.2, -1.0, 0.1, -5.0], [-0.5, -1.0, -2.0, 0.3, -3.0]])
    out = np.concatenate([np.ravel(jax.jit(jax.vmap(jax.grad(lp)))(zs)), np.ravel(jax.jit(jax.hessian(lp))(zs[0]))])
elif name == "uhe_bo:map":
    tr = jbo.run_seeds(uhe_bo.make("map", num_initial=9), jbo.problems.get("hartmann3"), key=jax.random.key(1), num_steps=35, num_seeds=3)
    out = np.asarray(tr.actions)
elif name == "uhe_bo_asktell":
    alg = uhe_bo.make("uhe_bo", num_initial=6)
    prob = jbo.problems.get("deceptive", n=2)
    opt = jbo.AskTell(alg, prob.space, num_steps=46, key=jax.random.key(0), num_seeds=2)
    f = jax.jit(jax.vmap(prob.objective))
    for t in range(46):
        x = opt.ask(); opt.tell(x, np.asarray(f(jnp.asarray(x))))
    out = np.asarray(opt.best()[1])
else:  # gp_ucb, gp_ei, gp_ts with the Adam search, as the committed file was computed
    tr = jbo.run_seeds(jbo.algorithms.get(name, maximiser=jbo.parts.Maximiser()), jbo.problems.get("branin"), key=jax.random.key(2), num_steps=40, num_seeds=3)
    out = np.asarray(tr.actions)
np.save(path, out)
"""


def child(name, mode, timeout):
    path = f"/tmp/lapack_loop_{name.replace(':', '_')}_{mode}.npy"
    env = dict(os.environ, JBO_LAPACK_LOOP=str(mode), OPENBLAS_NUM_THREADS="1")
    t0 = time.perf_counter()
    try:
        subprocess.run(
            [sys.executable, "-c", CHILD, name, path], env=env, timeout=timeout, check=True, capture_output=True
        )
        return path, time.perf_counter() - t0, False
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root
    from jbo.studies import code_version, machine_info

    rows = []
    for name in ("gp_ucb", "gp_ei", "gp_ts", "hmc_target", "uhe_bo:map", "uhe_bo_asktell"):
        res = {m: child(name, m, 90 if name == "uhe_bo_asktell" else 300) for m in (0, 1)}
        row = {
            "program": name,
            **{f"mode{m}_s": round(r[1], 1) for m, r in res.items()},
            **{f"mode{m}_timed_out": r[2] for m, r in res.items()},
        }
        if res[0][0] and res[1][0]:
            a, b = np.load(res[0][0]), np.load(res[1][0])
            row.update(bit_identical=bool(np.array_equal(a, b)), max_abs_diff=float(np.max(np.abs(a - b))))
        rows.append(row)
        print(json.dumps(row), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {"machine": machine_info(), "code_version": code_version(), "loadavg": os.getloadavg(), "rows": rows},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
