"""The LML gradient's lengthscale term in two forms, alternating in one process: jbo.gp.lml_and_grad,
which writes the per-coordinate squared distances D_j as a (d, N, N) array and contracts them with
W dk/dr2 (the stored form), against a form that recomputes each coordinate's squared differences
inside its own reduction (the fused form, here). Both give the same gradient to the last bit (checked
here); the question is whether not storing D saves time. Measured: it does not: XLA fuses the stored
form's D into its consumers already (results/engine/lml_grad_forms.json), so jbo keeps the stored form.
A third form runs the stored one seed after another under the vmap (jax.custom_batching.sequential_vmap):
the same arithmetic per seed (equal to rounding), each seed's (N, N) arrays small enough to stay in cache.

Each form is jit-compiled alone and vmapped over S seeds (as in a multi-seed run) on hartmann6-sized
data (d = 6), Matern-5/2, default hyper-parameters; time is the best of R executions, the forms
alternating. FLOPs are counted as docs/benchmarks.md counts them (Cholesky N^3/3, triangular inverse
N^3, matmul 2 N^3: 10/3 N^3 per gradient) against this machine's peak, a batched 1024 x 1024 float64
matmul in JAX measured in the same run.

    JBO_CACHE=0 python experiments/engine/lml_grad_forms.py --update --rows 128 400 1000
    JBO_CACHE=0 python experiments/engine/lml_grad_forms.py --rows 128 400 512 768 1000 --out lml_grad_sequential.json

Writes lml_grad_forms.json (into experiments/results/engine/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import custom_batching

from jbo import gp, kernels
from jbo.gp import GPParams
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402


def fused_form(params, x, y, mask, model="matern52"):
    """jbo.gp.lml_and_grad with each coordinate's squared differences recomputed inside its reduction."""
    model = gp.as_model(model)
    kp = params.kernel_params()
    r2 = kernels.sqdist_matrix(x, x, kp.lengthscale)
    K0, dk_dr2 = jax.jvp(lambda r: kernels.from_sqdist(model.kernel, kp, r), (r2,), (jnp.ones_like(r2),))
    dk_dr2 = jnp.where(r2 > 0.0, dk_dr2, 0.0)
    value, W, alpha = gp.lml_terms(K0, params, y, mask, model)
    M = W * dk_dr2
    inv = jnp.broadcast_to(1.0 / kp.lengthscale, (x.shape[1],))
    terms = [jnp.sum(M * ((x[:, j, None] - x[None, :, j]) * inv[j]) ** 2) for j in range(x.shape[1])]
    return value, GPParams(
        log_lengthscale=-jnp.stack(terms),
        log_outputscale=0.5 * jnp.sum(W * K0),
        log_noise=0.5 * jnp.trace(W) * jnp.exp(params.log_noise),
        mean=jnp.sum(alpha) if model.mean != "zero" else jnp.zeros_like(params.mean),
    )


def peak(repeats: int) -> float:
    """GFLOP/s of a batched (4, 1024, 1024) float64 matmul, best of `repeats`."""
    a = jax.random.normal(jax.random.key(0), (4, 1024, 1024))
    f = jax.jit(lambda a: a @ a)
    f(a).block_until_ready()
    best = min(_time(f, a) for _ in range(repeats))
    return 4 * 2 * 1024**3 / best / 1e9


def _time(f, *args) -> float:
    t0 = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t0


def main(rows, seeds, repeats, dim=6):
    gflops = peak(repeats)
    out = {
        "command": "python experiments/engine/lml_grad_forms.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
    }
    out.update(peak_gflops=gflops, seeds=seeds, dim=dim, repeats=repeats, rows={})
    params = gp.default_params(dim)
    for n in rows:
        key = jax.random.key(n)
        x = jax.random.uniform(key, (seeds, n, dim))
        y = jax.random.normal(jax.random.fold_in(key, 1), (seeds, n))
        mask = jnp.broadcast_to(jnp.arange(n) < n - 3, (seeds, n))  # a few padded rows, as in a buffer
        stored = lambda x, y, m: gp.lml_and_grad(params, x, y, m)  # noqa: E731
        forms = {
            "stored": jax.jit(jax.vmap(stored)),
            "fused": jax.jit(jax.vmap(lambda x, y, m: fused_form(params, x, y, m))),
            # the stored form one seed after another (lax.map under the vmap): each seed's (N, N)
            # arrays stay in cache, the batched Cholesky and matmuls become a loop over seeds
            "sequential": jax.jit(jax.vmap(custom_batching.sequential_vmap(stored))),
        }
        results = {name: f(x, y, mask) for name, f in forms.items()}  # compile and warm up
        leaves = {name: jax.tree.leaves(r) for name, r in results.items()}
        same = all(bool(jnp.all(a == b)) for a, b in zip(leaves["stored"], leaves["fused"]))
        sequential_rel = max(
            float(jnp.max(jnp.abs(a - b) / jnp.maximum(jnp.abs(a), 1e-300)))
            for a, b in zip(leaves["stored"], leaves["sequential"])
        )
        times = {name: [] for name in forms}
        for _ in range(repeats):  # alternating
            for name, f in forms.items():
                times[name].append(_time(f, x, y, mask))
        flops = seeds * 10 / 3 * n**3
        entry = {"bit_identical": same, "sequential_max_rel_diff": sequential_rel}
        for name, ts in times.items():
            best = min(ts)
            entry[name] = {"ms_per_seed": 1e3 * best / seeds, "pct_of_peak": 100 * flops / best / 1e9 / gflops}
        entry["speedup"] = min(times["stored"]) / min(times["fused"])
        entry["sequential_speedup"] = min(times["stored"]) / min(times["sequential"])
        out["rows"][str(n)] = entry
        print(n, json.dumps(entry), flush=True)
    out["load_average"] = os.getloadavg()
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="lml_grad_forms.json", help="file name in the output folder")
    args = add_update_flag(ap).parse_args()
    result = main(args.rows, args.seeds, args.repeats)
    path = output_dir("engine") / args.out
    path.write_text(json.dumps(result, indent=1))
    print(f"wrote {path}")
