"""Recompute the uCVS reference constants (bocvs.md 4.2-4.4, 4.7): F*_i = max_x E f([x^i, X^-i]) for
every objective, control set and variance, F+ = max_i F*_i, and the minimum of f (the alpha-shift f_lo).

Method: a fixed sample of 8192 free-variable rows per variance (uniforms through the inverse
truncated-normal CDF, numpy seed 0); per set, 2048 random control values screened on the first 512
rows, plus the known global maximiser's coordinates where there is one; the 6 best start SciPy
L-BFGS-B on the full 8192-row Monte-Carlo mean (jax gradient), at most 200 iterations each (airfoil,
whose f is a 1503-point GP: 2048 rows and 3 starts).
Minimum of f: 200000 uniform points, the 20 best start L-BFGS-B.

Writes reference_constants.csv into the output folder (experiments/results/ucvs/reference/ with --update,
else its scratch mirror) and, with --update, jbo/problems/data/ucvs_reference.npz (read by
jbo.problems.ucvs); --validate re-evaluates the committed maximisers
(experiments/results/ucvs/reference/reference_constants.csv) -> reference_constants_validation.csv.
`--quick`: 1024 rows, fewer starts (a smoke run; reference_constants_quick.csv; with --validate 1024 rows,
reference_constants_validation_quick.csv).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from scipy.optimize import minimize

from jbo.problems import ucvs
from jbo.problems.control import scale_for_variance, truncated_normal_from_uniform

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, committed_dir, output_dir, updating  # noqa: E402

FIGURE = "reference"  # experiments/results/ucvs/reference/
KNOWN_ARGMAX = {
    "hartmann12": [0.20168952, 0.15001069, 0.47687398, 0.27533243, 0.31165162, 0.65730054] + [0.5] * 6,
    "ackley12": [0.5] * 12,
    "levy12": [0.55] * 6 + [0.5] * 6,
    "plant": list(ucvs.plant_data()["argmax_unit"]),
    "airfoil": [0.147084, 0.466149, 0.273287, 0.929404, 0.774567],  # data README: unconstrained maximiser
}


def set_max(values, mask, R, rng, known, n_screen, n_starts, screen_rows):
    mask = np.asarray(mask)
    idx = np.nonzero(mask)[0]
    Rj = jnp.asarray(R)

    def F(z, rows):
        x = jnp.zeros(R.shape[1]).at[idx].set(z)
        return jnp.mean(values(jnp.where(mask, x, rows)))

    screen = jax.jit(jax.vmap(lambda z: F(z, Rj[:screen_rows])))
    vg = jax.jit(jax.value_and_grad(lambda z: -F(z, Rj)))
    cand = np.concatenate([rng.uniform(size=(n_screen, idx.size)), np.asarray(known)[idx][None]])
    vals = np.concatenate([np.asarray(screen(jnp.asarray(cand[a : a + 256]))) for a in range(0, len(cand), 256)])
    starts = list(cand[np.argsort(-vals)[:n_starts]]) + [np.asarray(known)[idx]]
    best_v, best_z = -np.inf, None
    for z0 in starts:
        res = minimize(
            lambda z: tuple(np.asarray(a, np.float64) for a in vg(jnp.asarray(z))),
            z0,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0, 1)] * idx.size,
            options={"maxiter": 200},
        )
        if -res.fun > best_v:
            best_v, best_z = -res.fun, res.x
    return float(best_v), best_z


def f_min(values, dim, rng, n=200_000, starts=20):
    U = rng.uniform(size=(n, dim))
    v = np.concatenate([np.asarray(jax.jit(values)(jnp.asarray(U[a : a + 8192]))) for a in range(0, n, 8192)])
    vg = jax.jit(jax.value_and_grad(lambda z: values(z[None])[0]))
    best = np.inf
    for z0 in U[np.argsort(v)[:starts]]:
        res = minimize(
            lambda z: tuple(np.asarray(a, np.float64) for a in vg(jnp.asarray(z))),
            z0,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0, 1)] * dim,
        )
        best = min(best, res.fun)
    return float(best)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--objectives", nargs="*", default=list(ucvs.OBJECTIVES))
    ap.add_argument("--variances", nargs="*", type=float, default=list(ucvs.VARIANCES))
    ap.add_argument(
        "--validate",
        action="store_true",
        help="only re-evaluate the committed maximisers on an independent 8192-row sample "
        "(numpy seed 123): reference_constants_validation.csv",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="write reference_constants_check.csv only (the package's npz is left alone)",
    )
    add_update_flag(ap)
    args = ap.parse_args()
    if args.validate:
        return validate(args.objectives, args.variances, args.quick)
    rows_n = 1024 if args.quick else 8192
    n_screen, n_starts = (256, 2) if args.quick else (2048, 6)
    rows, f_star = [], {}
    for name in args.objectives:
        obj = ucvs.OBJECTIVES[name]
        t0 = time.perf_counter()
        fmin = f_min(obj.values, obj.dim, np.random.default_rng(1), n=20_000 if args.quick else 200_000)
        for v in args.variances:
            rng = np.random.default_rng(0)
            U = rng.uniform(size=(rows_n, obj.dim))
            n_rows = rows_n if name != "airfoil" or args.quick else 2048  # airfoil: 1503-point GP per row
            R = np.asarray(truncated_normal_from_uniform(jnp.asarray(U[:n_rows]), scale_for_variance(v)))
            vals = []
            for i, mask in enumerate(ucvs.masks(obj.sets, obj.dim)):
                starts = n_starts if name != "airfoil" else min(n_starts, 3)
                fv, z = set_max(obj.values, mask, R, rng, KNOWN_ARGMAX[name], n_screen, starts, min(512, n_rows))
                vals.append(fv)
                rows.append(
                    {
                        "objective": name,
                        "variance": v,
                        "set": i + 1,
                        "variables": str(obj.sets[i]),
                        "f_star": fv,
                        "argmax": " ".join(f"{a:.5f}" for a in z),
                        "mc_rows": n_rows,
                        "f_min": fmin,
                    }
                )
                print(name, v, i + 1, round(fv, 5), flush=True)
            f_star[(name, v)] = vals
        print(name, "f_min", fmin, f"{time.perf_counter() - t0:.0f}s", flush=True)
        save(rows, f_star, args.quick, args.check)  # after every objective: a long run keeps what it has


def validate(objectives, variances, quick=False):
    """F_i at each committed maximiser on an independent sample: the Monte-Carlo error of F*_i (the
    committed value maximises a noisy mean, so it sits about one standard error above this one)."""
    table = pd.read_csv(committed_dir("ucvs", FIGURE) / "reference_constants.csv")
    n = 1024 if quick else 8192
    out = []
    for name in objectives:
        obj = ucvs.OBJECTIVES[name]
        masks = np.asarray(ucvs.masks(obj.sets, obj.dim))
        values = jax.jit(obj.values)  # one compiled function for every set and variance
        for v in variances:
            U = np.random.default_rng(123).uniform(size=(n, obj.dim))
            R = truncated_normal_from_uniform(jnp.asarray(U), scale_for_variance(v))
            for _, r in table[(table.objective == name) & np.isclose(table.variance, v)].iterrows():
                m = masks[int(r["set"]) - 1]
                x = np.zeros(obj.dim)
                x[np.nonzero(m)[0]] = [float(a) for a in r["argmax"].split()]
                vals = np.asarray(values(jnp.where(m, x, R)))
                out.append(
                    {
                        "objective": name,
                        "variance": v,
                        "set": int(r["set"]),
                        "f_star": r["f_star"],
                        "mc_rows": r["mc_rows"],
                        "f_independent": vals.mean(),
                        "se_independent": vals.std(ddof=1) / np.sqrt(n),
                    }
                )
                print(out[-1], flush=True)
    name = "reference_constants_validation_quick.csv" if quick else "reference_constants_validation.csv"
    pd.DataFrame(out).to_csv(output_dir("ucvs", FIGURE) / name, index=False)


def save(rows, f_star, quick, check=False):
    """Merge into the CSV and (full runs with --update) the package's npz: objectives computed now replace old
    rows. check: only reference_constants_check.csv (compare against the package's constants, change nothing)."""
    name = "reference_constants_quick.csv" if quick else "reference_constants.csv"
    out = output_dir("ucvs", FIGURE) / ("reference_constants_check.csv" if check else name)
    new = pd.DataFrame(rows)
    if out.exists():
        old = pd.read_csv(out)
        new = pd.concat([old[~old.objective.isin(new.objective.unique())], new], ignore_index=True)
    new.to_csv(out, index=False)
    if not quick and not check and updating():
        keys = sorted({(o, float(v)) for o, v in zip(new.objective, new.variance)})
        table = {
            k: new[(new.objective == k[0]) & (new.variance == k[1])].sort_values("set").f_star.tolist() for k in keys
        }
        np.savez(
            ROOT / "jbo/problems/data/ucvs_reference.npz",
            objective=np.array([k[0] for k in keys]),
            variance=np.array([k[1] for k in keys]),
            f_star=np.array([table[k] for k in keys]),
        )


if __name__ == "__main__":
    main()
