"""Where an inner-optimiser step of the uCVS acquisitions spends its time, on a synthetic posterior.

  python experiments/ucvs/inner_speed.py [--quick] [--update]
      ->  inner_speed.json (experiments/results/ucvs/speed/ with --update, else its scratch mirror)

(1) The expected UCB of a 6-of-12 set at n = 750 observations and 16 Monte-Carlo rows (the grid's
largest buffer and acquisition sizes): 17 screened points, one value, one value and gradient, and the
whole inner optimiser (16 + 1 candidates, 1 start x 5 Adam steps). (2) TS-PSQ's expected sample path on
a 2-of-5 set at n = 512 (airfoil's shape): the row-by-row mean of the path against the closed form over
the rows (ucvs.expected_path), 64 values and gradients. ms per call, best of 5 repeats of 20 calls.
--quick (a smoke run): 64 observations in both, best of 1 repeat of 2 calls -> inner_speed_quick.json.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import jbo  # noqa: F401  (float64)
from jbo import acquisitions, data, gp, optimize
from jbo.algorithms import ucvs as A

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("ucvs", "speed")


def ms(fn, *args, calls=20, repeats=5):
    fn = jax.jit(fn)
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            jax.block_until_ready(fn(*args))
        best = min(best, (time.perf_counter() - t) / calls * 1e3)
    return round(best, 3)


def posterior(n, d, seed=0):
    X = jax.random.uniform(jax.random.key(seed), (n, d))
    y = jnp.sin(3.0 * X.sum(1))
    return gp.condition(data.from_arrays(X, y, n), gp.default_params(d, 0.2, 1.0, 1e-4, 0.0), A.MODEL)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a smoke run: 64 observations, 2 calls")
    args = add_update_flag(ap).parse_args()
    timed = functools.partial(ms, calls=2, repeats=1) if args.quick else ms
    out = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, jax {jax.__version__} {jax.default_backend()}",
        "loadavg_before": os.getloadavg(),
    }
    d, n, J = 12, 64 if args.quick else 750, 16
    post = posterior(n, d)
    R = jax.random.uniform(jax.random.key(1), (J, d))
    mask = jnp.arange(d) < 6
    f = lambda x: A.expected_ucb(post, x, mask, R, 4.0)  # noqa: E731
    xs = jax.random.uniform(jax.random.key(3), (17, d))
    out["expected_ucb_n750_d12_rows16_ms"] = {
        "screen_17_points": timed(jax.vmap(f), xs),
        "one_value": timed(f, xs[0]),
        "one_value_and_gradient": timed(jax.value_and_grad(f), xs[0]),
        "inner_optimiser_16_raw_1x5_adam": timed(
            lambda k: optimize.maximize(f, k, d, 16, 1, 5, "adam", candidates=xs[:1]), jax.random.key(4)
        ),
    }
    d, n = 5, 64 if args.quick else 512
    post = posterior(n, d, 1)
    R = jax.random.uniform(jax.random.key(1), (J, d))
    mask = jnp.array([True, True, False, False, False])
    path = acquisitions.thompson_sample(jax.random.key(2), post, 2048)
    xs = jax.random.uniform(jax.random.key(3), (64, d))
    rowwise = lambda x: jnp.mean(jax.vmap(lambda z: acquisitions.sample_path_value(path, z))(A.compose(mask, x, R)))  # noqa: E731
    closed = lambda x: A.expected_sample(path, x, mask, R)  # noqa: E731
    out["ts_expected_path_n512_d5_rows16_64_values_and_gradients_ms"] = {
        "row_by_row": timed(jax.vmap(jax.value_and_grad(rowwise)), xs),
        "closed_form_over_rows": timed(jax.vmap(jax.value_and_grad(closed)), xs),
        "max_abs_difference": float(jnp.max(jnp.abs(jax.vmap(rowwise)(xs) - jax.vmap(closed)(xs)))),
    }
    out["loadavg_after"] = os.getloadavg()
    (OUT / ("inner_speed_quick.json" if args.quick else "inner_speed.json")).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
