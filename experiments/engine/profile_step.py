"""Profile one GP-UCB step (registry defaults) at N rows: where the time goes, and the FLOP rate each
part reaches against this machine's measured peak (a large batched float64 matmul in JAX).

Parts, each jit-compiled alone and vmapped over S seeds (as in a multi-seed run), timed as the best of
5 executions after a warm-up: the fit (1 restart x 5 Adam steps; each evaluates the closed-form LML
gradient: a Cholesky, the inverse by blocks and O(N^2) elementwise work), one LML gradient, the LML
gradient inside one compiled loop of 10 evaluations (per evaluation: the fit's regime, where XLA reuses
its buffers; a single call also pays for first touching fresh ones), the Cholesky alone, the conditioning (Cholesky + L^{-1}), the acquisition's raw screening (num_raw
points and the best min(N, 128) observed points) and its Adam search (num_starts x opt_steps). FLOPs are counted analytically (leading
terms: Cholesky N^3/3, triangular inverse N^3, matmul 2 N^3, a posterior query 2 N^2, its gradient
about 3 times a query). The peak is measured at each N; every fraction in the file is taken against
the best of those measurements (a peak measured while the machine was busy would inflate its row's).

    python experiments/engine/profile_step.py                  # N = 400, 8 seeds
    python experiments/engine/profile_step.py --rows 128 400 1000

Writes profile_step.json (into experiments/results/engine/ with --update, else its scratch mirror).
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

import jbo
from jbo import data, gp, optimize
from jbo.engine import Step
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from lml_grad_forms import in_loop  # noqa: E402  (this folder: the gradient inside a compiled loop)
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine") / "profile_step.json"  # experiments/results/engine with --update, else its scratch mirror


LOOP = 10  # evaluations of the LML gradient in the loop row


def best_time(f, *args, repeats=5):
    f = jax.jit(f)
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t0)
    return min(times)


def _factors(post):
    return post.alpha, post.chol_inv  # both outputs, so that XLA keeps the whole factorisation


def profile(n: int, seeds: int, dim: int = 6):
    alg = jbo.algorithms.get("gp_ucb", maximiser=jbo.parts.Maximiser())  # the Adam search it profiles
    model, hyp = alg.model, gp.default_params(dim)
    key = jax.random.key(0)
    x = jax.random.uniform(key, (seeds, n, dim))
    bufs = jax.vmap(lambda a: data.from_arrays(a, jnp.sin(3 * a).sum(-1), n))(x)
    keys = jax.random.split(key, seeds)
    acq_params = alg.default_params().acquisition

    def fit(k, b):
        return gp.fit(
            k,
            b,
            model,
            init=hyp,
            warm_start=hyp,
            num_restarts=alg.hypers.restarts,
            num_steps=alg.hypers.steps,
            learning_rate=alg.hypers.learning_rate,
        )

    def acquisition(k, b):
        post = gp.condition(b, hyp, model)
        return alg.acquisition.build(k, post, b, acq_params, Step(jnp.int32(n), jnp.bool_(False)), dim)

    def screen(k, b):  # the raw points and the observed points the default screens (alg.screened)
        acq = acquisition(k, b)
        raw = jnp.concatenate([jax.random.uniform(k, (alg.maximiser.num_raw, dim)), alg.screened(b)[0]])
        return jax.vmap(acq)(raw)

    def search(k, b):
        acq = acquisition(k, b)
        return optimize.local_search(
            acq, jax.random.uniform(k, (alg.maximiser.num_starts, dim)), alg.maximiser.steps, "adam"
        )[1]

    def lbfgs_search(k, b):  # GP-BO's default search (jbo.parts.GP_MAXIMISER)
        acq = acquisition(k, b)
        m = jbo.parts.GP_MAXIMISER
        return optimize.local_search(
            acq, jax.random.uniform(k, (m.num_starts, dim)), m.steps, m.method, line_search=m.line_search
        )[1]

    def lml_loop(b):  # LOOP evaluations, each moving the lengthscales a little (nothing else is hoisted)
        return in_loop(lambda p, x, y, m: gp.lml_and_grad(p, x, y, m, model), hyp, LOOP)(b.x, b.y, b.mask)

    lml_flops = n**3 / 3 + n**3 + 2 * n**3  # counted as before the blocked inverse, whatever is run
    parts = {
        "fit (1 x 5 Adam)": (jax.vmap(fit), (keys, bufs), alg.hypers.steps * lml_flops),
        "one LML gradient": (jax.vmap(lambda b: gp.lml_and_grad(hyp, b.x, b.y, b.mask, model)), (bufs,), lml_flops),
        "LML gradient in a loop (per evaluation)": (jax.vmap(lml_loop), (bufs,), lml_flops),
        "Cholesky": (
            jax.vmap(lambda b: gp.gram_cholesky(model, gp.masked_gram(model, hyp, b.x, b.mask))),
            (bufs,),
            n**3 / 3,
        ),
        "condition (Cholesky + L^-1)": (
            jax.vmap(lambda b: _factors(gp.condition(b, hyp, model))),
            (bufs,),
            n**3 / 3 + n**3,
        ),
        "raw screening": (
            jax.vmap(screen),
            (keys, bufs),
            (alg.maximiser.num_raw + min(n, alg.maximiser.screen_data)) * 2 * n**2,
        ),
        "Adam search": (jax.vmap(search), (keys, bufs), alg.maximiser.num_starts * alg.maximiser.steps * 3 * 2 * n**2),
        # its number of evaluations depends on the line searches: no flop count
        "L-BFGS search (GP-BO's default)": (jax.vmap(lbfgs_search), (keys, bufs), None),
    }
    rows = []
    for name, (f, args, flops) in parts.items():
        t = best_time(f, *args) / (LOOP if name.startswith("LML gradient in a loop") else 1)
        rows.append(
            {
                "part": name,
                "rows": n,
                "seeds": seeds,
                "ms_per_seed": 1e3 * t / seeds,
                "gflops": None if flops is None else flops / 1e9,
                "gflop_per_s": None if flops is None else seeds * flops / t / 1e9,
            }
        )
    m = 1024
    a = jax.random.normal(key, (seeds, m, m))
    return rows, seeds * 2 * m**3 / best_time(lambda z: z @ z, a) / 1e9


def fractions(rows, peak: float):
    for r in rows:
        r["fraction_of_peak"] = None if r["gflop_per_s"] is None else r["gflop_per_s"] / peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[400])
    ap.add_argument("--seeds", type=int, default=8)
    add_update_flag(ap)
    args = ap.parse_args()
    record = {
        "command": "python experiments/engine/profile_step.py "
        + " ".join(f"--rows {' '.join(map(str, args.rows))} --seeds {args.seeds}".split()),
        "machine": machine_info(),
        "load_average_at_start": os.getloadavg(),
        "parts": [],
    }
    for n in args.rows:
        rows, peak = profile(n, args.seeds)
        record["parts"] += rows
        record.setdefault("peak_gflop_per_s", []).append(peak)
        # against the best peak measured so far: a peak measured while the machine was busy would
        # inflate every fraction of that row; the file's fractions use the run's best peak
        fractions(rows, max(record["peak_gflop_per_s"]))
        print(f"N = {n}, {args.seeds} seeds; peak (batched 1024 x 1024 float64 matmul): {peak:.1f} GFLOP/s")
        for r in rows:
            print(
                f"  {r['part']:30s} {r['ms_per_seed']:9.2f} ms/seed"
                + (
                    ""
                    if r["gflop_per_s"] is None
                    else f"  {r['gflop_per_s']:6.1f} GFLOP/s ({100 * r['fraction_of_peak']:4.1f}% of peak)"
                )
            )
    fractions(record["parts"], max(record["peak_gflop_per_s"]))
    record["load_average_at_end"] = os.getloadavg()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
