"""How accurate jbo's log-EI, DRBO-MMD worst case and contextual metrics are.

    PYTHONPATH=<checkout> python experiments/engine/accuracy.py --tag <name> [--instances 200]

Measures the jbo on PYTHONPATH (its commit is recorded), so the same script measures jbo and any
alternative implementation in another checkout. References are independent of the code under test:
  log-EI    mpmath at 60 digits: log h(z), Phi(z)/h(z), phi(z)/h(z), h = phi + z Phi, on 401 points
            of z in [-1e5, 10] (log-spaced below -1e-3, linear on [0, 10]); the errors of log EI and
            of its two partial derivatives (jax.grad w.r.t. the mean and the standard deviation);
  DRBO-MMD  CVXPY (Clarabel) on the SOCP, random instances in the reference setting (context dimension
            1, 100 grid points, 80 observations, the spec's radius, Matern-5/2 M with random
            lengthscale and scale, g rough or smooth with random offset and scale): the excess of
            jbo's value over the SOCP optimum in units of max g - min g;
  rules     (only where the checkout has the quadrature rules)
            tests/test_accuracy.py's references (adaptive quadrature split at kinks and periods,
            closed forms) at its test points, and the stored optima against the reference at the
            stored maximiser.
Writes accuracy_<tag>.json (into experiments/results/engine/accuracy/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jbo  # noqa: E402
from jbo import acquisitions as acq  # noqa: E402
from jbo import kernels  # noqa: E402
from jbo.algorithms import sbo_kde  # noqa: E402
from jbo.problems import sbo_kde as C  # noqa: E402
from jbo.studies import code_version  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]  # the repository root
OUT = output_dir("engine", "accuracy")  # experiments/results/engine/accuracy with --update, else its scratch mirror


def log_ei_errors():
    import mpmath

    z_grid = np.concatenate([-np.logspace(5, -3, 321), np.linspace(0.0, 10.0, 81)])
    std, best = 0.7, 0.3
    mean = best + z_grid * std
    z = (mean - best) / std  # the z the function sees
    ref = []
    with mpmath.workdps(60):
        for v in z:
            q = mpmath.mpf(float(v))
            phi, cdf = mpmath.npdf(q), mpmath.ncdf(q)
            h = phi + q * cdf
            ref.append((float(mpmath.log(h) + mpmath.log(std)), float(cdf / h / std), float(phi / h / std)))
    ref = np.array(ref)
    f = jax.jit(jax.vmap(acq.log_ei_value, (0, None, None)))
    g = jax.jit(jax.vmap(jax.grad(acq.log_ei_value, (0, 1)), (0, None, None)))
    value = np.asarray(f(jnp.asarray(mean), std, best))
    d_mean, d_std = (np.asarray(a) for a in g(jnp.asarray(mean), std, best))
    out = {}
    for name, ours, truth, floor in (
        ("value", value, ref[:, 0], 1.0),
        ("d_mean", d_mean, ref[:, 1], 0.0),
        ("d_std", d_std, ref[:, 2], 0.0),
    ):
        rel = np.abs(ours - truth) / np.maximum(np.abs(truth), floor)  # value: relative to max(|v|, 1)
        rel = np.where(np.isfinite(rel), rel, np.inf)
        out[name] = {"max_rel_error": float(rel.max()), "at_z": float(z[np.argmax(rel)])}
        for lo, hi in ((-1e5, -1e4), (-1e4, -1e3), (-1e3, -1.0), (-1.0, 10.0)):
            sel = (z >= lo) & (z <= hi)
            out[name][f"max_rel_error_z_in_[{lo:g},{hi:g}]"] = float(rel[sel].max())
    return {"grid_points": int(len(z)), "z_range": [float(z.min()), float(z.max())], **out}


def mmd_instance(rng, n_obs=80):
    grid = sbo_kde.context_grid(100, 1)
    ls = math.exp(rng.uniform(math.log(0.03), math.log(2.0)))
    kp = kernels.KernelParams(jnp.asarray([ls]), float(np.exp(rng.uniform(-3, 3))))
    M = np.asarray(kernels.gram("matern52", kp, grid, grid))
    ctx = np.clip(rng.normal(rng.uniform(0.2, 0.8), rng.uniform(0.03, 0.3), (n_obs, 1)), 0, 1)
    if rng.uniform() < 0.3:
        ctx = rng.uniform(size=(n_obs, 1))
    w_hat = np.asarray(sbo_kde.snapped_weights(grid, jnp.asarray(ctx), jnp.ones(n_obs, bool)))
    x = np.asarray(grid)
    if rng.uniform() < 0.3:
        g = rng.normal(size=len(x))
    else:
        ell = math.exp(rng.uniform(math.log(0.02), math.log(0.5)))
        K = np.exp(-0.5 * np.sum((x[:, None] - x[None]) ** 2, -1) / ell**2) + 1e-9 * np.eye(len(x))
        g = np.linalg.cholesky(K) @ rng.normal(size=len(x)) + 0.05 * rng.normal(size=len(x))
    g = rng.uniform(-5, 5) + math.exp(rng.uniform(-3, 3)) * g
    return g, w_hat, M, float(sbo_kde.mmd_radius(float(n_obs), 0.1))


def mmd_errors(instances: int):
    import cvxpy as cp

    rng = np.random.default_rng(15)
    cases = [mmd_instance(rng) for _ in range(instances)]
    g, w_hat, M, delta = (np.stack([c[i] for c in cases]) for i in range(4))
    ours = np.asarray(jax.jit(jax.vmap(sbo_kde.mmd_worst_case))(*map(jnp.asarray, (g, w_hat, M, delta))))
    ref = []
    for gi, wi, Mi, di in cases:
        lam, V = np.linalg.eigh(Mi)
        L = V * np.sqrt(np.clip(lam, 0, None))
        w = cp.Variable(len(gi))
        prob = cp.Problem(cp.Minimize(gi @ w), [w >= 0, cp.sum(w) == 1, cp.norm(L.T @ (w - wi)) <= di])
        prob.solve(solver=cp.CLARABEL)
        ref.append(prob.value)
    err = (ours - np.array(ref)) / (g.max(1) - g.min(1))
    vertex = np.array(
        [
            (np.eye(len(gi))[np.argmin(gi)] - wi) @ Mi @ (np.eye(len(gi))[np.argmin(gi)] - wi) <= di**2
            for gi, wi, Mi, di in cases
        ]
    )
    return {
        "instances": instances,
        "instances_solved_by_bisection": int(np.sum(~vertex)),
        "max_excess_over_socp_in_range_of_g": float(err.max()),
        "quantiles_excess_50_90_99": [float(q) for q in np.quantile(err, [0.5, 0.9, 0.99])],
        "instances_above_1e-3": int(np.sum(err > 1e-3)),
        "min_excess (negative: below the SOCP optimum, the solver's tolerance)": float(err.min()),
    }


def rule_errors():
    if not hasattr(C, "OPTIMIZERS"):
        return "not measured: this checkout has no quadrature rules"
    sys.path.insert(0, str(ROOT / "tests"))
    import test_accuracy as T

    out = {}
    for name, (ref_fn, xs) in T.REFERENCES.items():
        p = C.problem(name)
        ours = np.asarray(jax.jit(jax.vmap(p.expected))(jnp.asarray(xs, jnp.float64)))
        ref = np.array([ref_fn(np.asarray(x, np.float64)) for x in xs])
        rel = np.abs(ours - ref) / np.maximum(np.abs(ref), 1.0)
        entry = {"points": len(xs), "max_error_rel_to_max(|F|,1)": float(rel.max())}
        if p.optimizer is not None and p.optimal_value is not None:
            f_ref = float(ref_fn(np.asarray(p.optimizer, np.float64)))
            entry.update(
                optimal_value=p.optimal_value,
                optimizer=np.asarray(p.optimizer).tolist(),
                optimum_minus_reference_at_optimizer=p.optimal_value - f_ref,
            )
        out[name] = entry
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--instances", type=int, default=200)
    add_update_flag(ap)
    args = ap.parse_args()
    t0 = time.perf_counter()
    result = {
        "jbo": str(Path(jbo.__file__).parent),
        "jbo_commit": code_version(),
        "load_before": os.getloadavg(),
        "log_ei": log_ei_errors(),
        "drbo_mmd": mmd_errors(args.instances),
        "rules": rule_errors(),
    }
    result["seconds"] = time.perf_counter() - t0
    result["load_after"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"accuracy_{args.tag}.json"
    path.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
