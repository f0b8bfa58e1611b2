"""The LML gradient in several forms, alternating in one process:

- stored: the elementwise form, with K~^{-1} from a whole-matrix triangular inverse and one matmul, and
  the lengthscale term as the per-coordinate squared distances D_j, written as a (d, N, N) array and
  contracted with W dk/dr2 (defined here: jbo's form before its blocked inverse and product form);
- fused: the same with each coordinate's squared differences recomputed inside its own reduction;
- sequential: the stored form one seed after another under the vmap (jax.custom_batching.sequential_vmap):
  the same arithmetic per seed, each seed's (N, N) arrays small enough to stay in cache;
- jbo: jbo.gp.lml_and_grad as it is: the Cholesky factored without JAX's symmetrisation, K~^{-1} by
  2 x 2 blocks (jbo.linalg), the lengthscale term as one product M [u, 1] (see its docstring).

Stored and fused give the same gradient to the last bit, sequential and jbo to rounding (both checked
here). Each form is jit-compiled alone and vmapped over S seeds (as in a multi-seed run) on
hartmann6-sized data (d = 6), Matern-5/2, default hyper-parameters; time is the best of R executions, the
forms alternating. With --loop K each form also runs K evaluations inside one compiled loop (each
feeding the next's lengthscales, as the fit's Adam steps do), timed per evaluation: the fit's regime,
where XLA reuses its buffers and hoists what does not change out of the loop. FLOPs are counted as
docs/benchmarks.md counts them (Cholesky N^3/3, triangular inverse N^3, matmul 2 N^3: 10/3 N^3 per
gradient, whatever a form actually does) against this machine's peak, a batched 1024 x 1024 float64
matmul in JAX measured in the same run.

    JBO_CACHE=0 python experiments/engine/lml_grad_forms.py --update --rows 128 400 1000
    JBO_CACHE=0 python experiments/engine/lml_grad_forms.py --rows 128 400 512 768 1000 --out lml_grad_sequential.json
    JBO_CACHE=0 python experiments/engine/lml_grad_forms.py --rows 128 400 1000 --loop 10 --out lml_grad_blocked.json

Writes lml_grad_forms.json (into experiments/results/engine/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import custom_batching

from jbo import gp, kernels
from jbo.gp import GPParams
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402


def _whole_matrix_terms(K0, params, y, mask, model):
    """(lml, W, alpha) with a symmetrised Cholesky, a whole-matrix triangular inverse and one matmul."""
    eye = jnp.eye(K0.shape[0])
    both = mask[:, None] & mask[None, :]
    L = jnp.linalg.cholesky(jnp.where(both, K0 + model.noise(params) * eye, eye))
    L_inv = jsl.solve_triangular(L, eye, lower=True)
    a = L_inv @ jnp.where(mask, y - model.prior_mean(params), 0.0)
    alpha = L_inv.T @ a
    value = -0.5 * a @ a - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * jnp.sum(mask) * jnp.log(2 * jnp.pi)
    return value, jnp.where(both, jnp.outer(alpha, alpha) - L_inv.T @ L_inv, 0.0), alpha


def _elementwise(params, x, y, mask, model, lengthscale_terms):
    model = gp.as_model(model)
    kp = params.kernel_params()
    D = kernels.coordinate_sqdists(x, x, kp.lengthscale)  # (d, N, N)
    r2 = sum(D[j] for j in range(D.shape[0]))
    K0, dk_dr2 = jax.jvp(lambda r: kernels.from_sqdist(model.kernel, kp, r), (r2,), (jnp.ones_like(r2),))
    dk_dr2 = jnp.where(r2 > 0.0, dk_dr2, 0.0)
    value, W, alpha = _whole_matrix_terms(K0, params, y, mask, model)
    return value, GPParams(
        log_lengthscale=lengthscale_terms(W * dk_dr2, D, kp),
        log_outputscale=0.5 * jnp.sum(W * K0),
        log_noise=0.5 * jnp.trace(W) * jnp.exp(params.log_noise),
        mean=jnp.sum(alpha) if model.mean != "zero" else jnp.zeros_like(params.mean),
    )


def stored_form(params, x, y, mask, model="matern52"):
    """The elementwise form: D stored as a (d, N, N) array and contracted with M = W dk/dr2."""
    return _elementwise(params, x, y, mask, model, lambda M, D, kp: -jnp.sum(M[None] * D, axis=(1, 2)))


def fused_form(params, x, y, mask, model="matern52"):
    """The stored form with each coordinate's squared differences recomputed inside its reduction."""

    def terms(M, D, kp):
        inv = jnp.broadcast_to(1.0 / kp.lengthscale, (x.shape[1],))
        return -jnp.stack([jnp.sum(M * ((x[:, j, None] - x[None, :, j]) * inv[j]) ** 2) for j in range(x.shape[1])])

    return _elementwise(params, x, y, mask, model, terms)


def in_loop(form, params, steps: int):
    """`steps` evaluations of form in one compiled loop, each moving the lengthscales by a small step
    along the last gradient (so nothing but x, y and the mask is loop-invariant)."""

    def run(x, y, m):
        def body(_, carry):
            log_ls, total = carry
            value, grad = form(params._replace(log_lengthscale=log_ls), x, y, m)
            return log_ls + 1e-6 * grad.log_lengthscale, total + value

        return jax.lax.fori_loop(0, steps, body, (params.log_lengthscale, jnp.zeros(())))

    return run


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


def main(rows, seeds, repeats, loop=0, dim=6):
    gflops = peak(repeats)
    out = {
        "command": "python experiments/engine/lml_grad_forms.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
    }
    out.update(peak_gflops=gflops, seeds=seeds, dim=dim, repeats=repeats, loop=loop, rows={})
    params = gp.default_params(dim)
    for n in rows:
        key = jax.random.key(n)
        x = jax.random.uniform(key, (seeds, n, dim))
        y = jax.random.normal(jax.random.fold_in(key, 1), (seeds, n))
        mask = jnp.broadcast_to(jnp.arange(n) < n - 3, (seeds, n))  # a few padded rows, as in a buffer
        named = {"stored": stored_form, "fused": fused_form, "jbo": gp.lml_and_grad}  # (params, x, y, mask)
        bases = {name: functools.partial(f, params) for name, f in named.items()}
        # the stored form one seed after another (lax.map under the vmap): each seed's (N, N) arrays
        # stay in cache, the batched Cholesky and matmuls become a loop over seeds
        bases["sequential"] = custom_batching.sequential_vmap(bases["stored"])
        forms = {name: jax.jit(jax.vmap(f)) for name, f in bases.items()}
        if loop:
            forms.update({f"{name}_in_loop": jax.jit(jax.vmap(in_loop(f, params, loop))) for name, f in named.items()})
        results = {name: f(x, y, mask) for name, f in forms.items()}  # compile and warm up
        leaves = {name: jax.tree.leaves(r) for name, r in results.items() if not name.endswith("_in_loop")}
        same = all(bool(jnp.all(a == b)) for a, b in zip(leaves["stored"], leaves["fused"]))

        def max_rel(other):
            return max(
                float(jnp.max(jnp.abs(a - b) / jnp.maximum(jnp.abs(a), 1e-300)))
                for a, b in zip(leaves["stored"], leaves[other])
            )

        times = {name: [] for name in forms}
        for _ in range(repeats):  # alternating
            for name, f in forms.items():
                times[name].append(_time(f, x, y, mask))
        flops = seeds * 10 / 3 * n**3
        entry = {
            "bit_identical": same,
            "sequential_max_rel_diff": max_rel("sequential"),
            "jbo_max_rel_diff": max_rel("jbo"),
        }
        for name, ts in times.items():
            best = min(ts) / (loop if name.endswith("_in_loop") else 1)
            entry[name] = {"ms_per_seed": 1e3 * best / seeds, "pct_of_peak": 100 * flops / best / 1e9 / gflops}
        entry["speedup"] = min(times["stored"]) / min(times["fused"])
        entry["sequential_speedup"] = min(times["stored"]) / min(times["sequential"])
        entry["jbo_speedup"] = min(times["stored"]) / min(times["jbo"])
        if loop:
            entry["jbo_in_loop_speedup"] = min(times["stored_in_loop"]) / min(times["jbo_in_loop"])
        out["rows"][str(n)] = entry
        print(n, json.dumps(entry), flush=True)
    out["load_average"] = os.getloadavg()
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--loop", type=int, default=0, help="also time K evaluations in one compiled loop (0: no)")
    ap.add_argument("--out", default="lml_grad_forms.json", help="file name in the output folder")
    args = add_update_flag(ap).parse_args()
    result = main(args.rows, args.seeds, args.repeats, args.loop)
    path = output_dir("engine") / args.out
    path.write_text(json.dumps(result, indent=1))
    print(f"wrote {path}")
