"""Benchmark: one Monte-Carlo expected value F(i, x) of the plant and airfoil simulators at 1500 rows
(the environment's sample size), computed as a vmap of per-point formulas (written out below as the
baseline) against one jbo.kernels cross-covariance matrix (``Objective.values``, the form the environment
uses), and as a vmap of the objective's ``fn`` (XLA turns it into the same matrix). Compiled functions, compile time apart,
median of repeated calls. Writes simulator_speed.json (experiments/results/ucvs/speed/ with --update, else its
scratch mirror).

  python experiments/ucvs/simulator_speed.py [--rows 1500] [--repeats 50] [--quick]

--quick (a smoke run): 64 rows, 2 repeats -> simulator_speed_quick.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jbo.problems import ucvs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("ucvs", "speed")


def plant_point(u):
    """The previous per-point plant formula: var * exp(-r^2 / 2) @ w over the inducing inputs."""
    d = ucvs.plant_data()
    z = d["bounds"][0] + u * (d["bounds"][1] - d["bounds"][0])
    r2 = jnp.sum(((z[None, :] - d["Z"]) / d["lengthscales0"]) ** 2, axis=1)
    return d["variance0"] * jnp.exp(-0.5 * r2) @ d["weights"]


def airfoil_point(u):
    """The previous per-point airfoil formula: c + Matern52(u, X) @ alpha with sqrt(r^2 + 1e-36)."""
    d = ucvs.airfoil_data()
    r2 = jnp.sum(((u[None, :] - d["X"]) / d["lengthscale"]) ** 2, axis=1)
    r = jnp.sqrt(r2 + 1e-36)
    k = d["outputscale"] * (1 + 5.0**0.5 * r + 5.0 / 3.0 * r2) * jnp.exp(-(5.0**0.5) * r)
    return d["mean_constant"] + k @ d["alpha"]


def timed(fn, x, repeats):
    t0 = time.perf_counter()
    jax.block_until_ready(fn(x))
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(x))
        times.append(time.perf_counter() - t0)
    return compile_s, float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="a smoke run: 64 rows, 2 repeats")
    add_update_flag(ap)
    args = ap.parse_args()
    if args.quick:
        args.rows, args.repeats = 64, 2
    U = jnp.asarray(np.random.default_rng(0).uniform(size=(args.rows, 5)))
    out = {
        "rows": args.rows,
        "repeats": args.repeats,
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "device": str(jax.devices()[0]),
        "load1_before": os.getloadavg()[0],
        "results": {},
    }
    for name, point in (("plant", plant_point), ("airfoil", airfoil_point)):
        obj = ucvs.OBJECTIVES[name]
        forms = {
            "previous_point_formula_vmapped": jax.jit(lambda X, f=point: jnp.mean(jax.vmap(f)(X))),
            "one_matrix": jax.jit(lambda X, o=obj: jnp.mean(o.values(X))),
            "fn_vmapped": jax.jit(lambda X, f=obj.fn: jnp.mean(jax.vmap(f)(X))),
        }
        res = {}
        for form, f in forms.items():
            c, t = timed(f, U, args.repeats)
            res[form] = {"ms": 1e3 * t, "compile_s": c, "value": float(f(U))}
        res["speedup_one_matrix_over_previous"] = res["previous_point_formula_vmapped"]["ms"] / res["one_matrix"]["ms"]
        out["results"][name] = res
        print(name, out["results"][name], flush=True)
    out["load1_after"] = os.getloadavg()[0]
    (OUT / ("simulator_speed_quick.json" if args.quick else "simulator_speed.json")).write_text(
        json.dumps(out, indent=2)
    )


if __name__ == "__main__":
    main()
