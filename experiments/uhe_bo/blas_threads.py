"""Why the UHE scripts run BLAS on one thread: the time of one value-and-gradient of the GP log
marginal likelihood (Matern-5/2 ARD, 3-D, the UHE model) on n rows, with scipy-OpenBLAS's default
thread pool and with OPENBLAS_NUM_THREADS=1, each in its own process (the pool is fixed at import).

    python experiments/uhe_bo/blas_threads.py [--quick] [--update]
        -> blas_threads.json (experiments/results/uhe_bo/blas_threads/ with --update, else its scratch mirror)

jaxlib expands small Choleskys itself and calls LAPACK (from scipy's OpenBLAS) from n = 32 on, so
only n >= 32 should differ. The load average is recorded next to every number. --quick (smoke runs):
n = 16 and 32 only, 2 calls each, written to blas_threads_quick.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

CHILD = r"""
import os, time, json
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from jbo import gp
from jbo.algorithms import uhe_bo
model = uhe_bo.paper_model()
p = gp.default_params(3, lengthscale=0.2, outputscale=1.0, noise=1e-3)
g = jax.jit(jax.value_and_grad(lambda p, x, y, m: gp.log_marginal_likelihood(p, x, y, m, model)))
out = []
for n in SIZES:
    x = jax.random.uniform(jax.random.key(n), (n, 3)); y = jnp.sin(6 * x).sum(1); m = jnp.ones(n, bool)
    jax.block_until_ready(g(p, x, y, m))
    t0 = time.perf_counter()
    for _ in range(REPS):
        jax.block_until_ready(g(p, x, y, m))
    out.append(dict(n=n, s_per_call=(time.perf_counter() - t0) / REPS, loadavg=os.getloadavg()[0]))
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n = 16 and 32, 2 calls each (smoke runs)")
    a = add_update_flag(ap).parse_args()
    path = output_dir("uhe_bo", "blas_threads") / f"blas_threads{'_quick' if a.quick else ''}.json"
    sizes, reps = ((16, 32), 2) if a.quick else ((16, 31, 32, 64, 128), 10)
    child = f"SIZES, REPS = {sizes}, {reps}\n" + CHILD
    res = {}
    for label, env in (("default_pool", {}), ("one_thread", {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})):
        e = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        e.update(env)
        r = subprocess.run([sys.executable, "-c", child], env=e, capture_output=True, text=True, check=True)
        res[label] = json.loads(r.stdout.strip().splitlines()[-1])
        print(label, res[label], file=sys.stderr, flush=True)
    path.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
