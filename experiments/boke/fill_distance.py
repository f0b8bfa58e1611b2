"""BOKE paper Fig. 3: fill distance of DE (argmin W_t) vs GP-variance exploration vs uniform vs LHS.

    jbo reproduce boke fig3     # fill_distance.py (100 seeds), then --seeds 20 --tag s20 (per seed, graded)

`--quick`: 3 seeds, t <= 20, 2^10 probe points (with `--dims 1 2` a smoke run).

From the paper: the four designs, mean over 100 seeds (our default too; 33 min on 2 CPU cores,
mostly GP-variance exploration; --seeds 20 for a 16-min run), log-log axes. Ours (spec 6.2): d in
{1, 2, 4, 8}, t <= 200 on [0, 1]^d; DE with the Scott bandwidth; GP exploration with the RBF kernel
of the GP-UCB baseline (l = 0.5 sqrt(d/6)), noiseless with jitter; an independent LHS of size t
for each t; every sequential method starts from one uniform point; the sup over the cube is the max
over 2^16 scrambled Sobol points plus the 2^d corners. Both sequential methods screen 128 d random
candidates (+ the data) with 10 starts x 50 Adam steps (the regret experiments use 1024 d; we cut it
here so that 100 seeds of GP exploration at d = 8 fit the time budget).
Writes (experiments/results/boke/fig3/ with --update, else its scratch mirror)
fig3_fill_distance[_<tag>].{png,csv} (means and standard errors) and fig3_fill_distance[_<tag>]_seeds.csv (every seed's fill distance at t = 50, 100 and 200, for the
paired verdicts of experiments/verdicts/boke.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
import time

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from common import add_update_flag, gp_options, header, out_path  # noqa: E402

import jbo  # noqa: E402
from jbo import designs  # noqa: E402
from jbo.algorithms import boke  # noqa: E402


def probe_points(d, num=2**16):
    return designs.sobol(jax.random.key(123), num, d)


@jax.jit
def fill_curve(points, probes):
    """h(X_t) = max over probes of min_{i<=t} ||p - x_i|| for every prefix t of `points` (T, d)."""

    def chunk(p):
        dist = jnp.sqrt(jnp.sum((p[:, None, :] - points[None]) ** 2, -1))  # (P, T)
        return jnp.max(jax.lax.cummin(dist, axis=1), axis=0)

    blocks = probes.reshape(-1, 1024, probes.shape[1]) if probes.shape[0] % 1024 == 0 else probes[None]
    return jnp.max(jax.lax.map(chunk, blocks), axis=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--dims", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--tag", default="", help="output suffix: fig3_fill_distance_<tag>.*")
    add_update_flag(ap)
    args = ap.parse_args()
    seeds, T = (3, 20) if args.quick else (args.seeds, 200)
    name_out = "fig3_fill_distance" + (f"_{args.tag}" if args.tag else "")
    header(f"BOKE Fig 3: fill distance, {seeds} seeds, t <= {T}, d in {args.dims}")
    ts = np.unique(np.round(np.geomspace(1, T, 16)).astype(int))
    opt = dict(maximiser=dataclasses.replace(boke.KR_MAXIMISER, num_raw_per_dim=128))
    rows, per_seed = [], []
    for d in args.dims:
        prob = jbo.problems.from_function(lambda x: 0.0 * jnp.sum(x), np.stack([np.zeros(d), np.ones(d)]))
        probes = probe_points(d, 2**10 if args.quick else 2**16)
        probes = probes[: (probes.shape[0] // 1024) * 1024]  # Sobol part; the corners are scored separately
        key = jax.random.key(d)
        sequential = {
            "DE (argmin KDE)": boke.DensityExploration(**opt),
            "GP exploration (argmax sigma)": boke.PaperGP(
                **gp_options(
                    maximiser=jbo.algorithms.boke.PAPER_MAXIMISER,
                    acquisition="std",
                    num_initial=1,
                    num_raw_per_dim=128,
                    num_starts=10,
                    opt_steps=50,
                )
            ),
            "uniform": jbo.algorithms.RandomSearch(num_initial=1),
        }
        corners = jnp.asarray(np.array(list(itertools.product([0.0, 1.0], repeat=d))))
        for name, alg in sequential.items():
            t0 = time.perf_counter()
            tr = jbo.run_seeds(alg, prob, key=key, num_steps=T, num_seeds=seeds)
            pts = jax.block_until_ready(tr.actions)
            curves = np.stack(
                [np.maximum(np.asarray(fill_curve(p, probes)), np.asarray(fill_curve(p, corners))) for p in pts]
            )
            print(f"d={d} {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
            for t in ts:
                rows.append((d, name, t, curves[:, t - 1].mean(), curves[:, t - 1].std(ddof=1) / np.sqrt(seeds)))
            for t in sorted({min(50, T), min(100, T), T}):
                per_seed += [(d, name, s, t, curves[s, t - 1]) for s in range(seeds)]
        for t in ts:  # an independent LHS of each size t
            keys = jax.random.split(jax.random.fold_in(key, t), seeds)
            vals = [
                max(
                    float(fill_curve(designs.latin_hypercube(k, int(t), d), probes)[-1]),
                    float(fill_curve(designs.latin_hypercube(k, int(t), d), corners)[-1]),
                )
                for k in keys
            ]
            rows.append((d, "LHS", t, np.mean(vals), np.std(vals, ddof=1) / np.sqrt(seeds)))
        print(f"d={d} LHS done", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows, columns=["dim", "method", "t", "mean_fill_distance", "se"])
    table.to_csv(out_path("fig3", name_out, args.quick, "csv"), index=False)
    pd.DataFrame(per_seed, columns=["dim", "method", "seed", "t", "fill_distance"]).to_csv(
        out_path("fig3", name_out + "_seeds", args.quick, "csv"), index=False
    )
    fig, axes = plt.subplots(1, len(args.dims), figsize=(4.2 * len(args.dims), 3.6), squeeze=False)
    print("log-log slope of mean fill distance over t in [10, T] (theory for uniform/LHS: -1/d)")
    for ax, d in zip(axes[0], args.dims):
        sub = table[table.dim == d]
        for name, g in sub.groupby("method", sort=False):
            ax.loglog(g.t, g.mean_fill_distance, marker=".", label=name)
            fit = g[g.t >= min(10, T // 2)]
            slope = np.polyfit(np.log(fit.t), np.log(fit.mean_fill_distance), 1)[0]
            print(f"  d={d} {name:32s} slope {slope:+.3f}   final {g.mean_fill_distance.iloc[-1]:.4f}")
        ax.set(title=f"d = {d}", xlabel="t", ylabel="fill distance")
        ax.legend(fontsize=7)
    fig.suptitle(f"BOKE Fig. 3: fill distance, mean of {seeds} seeds")
    fig.tight_layout()
    fig.savefig(out_path("fig3", name_out, args.quick, "png"), dpi=110)


if __name__ == "__main__":
    main()
