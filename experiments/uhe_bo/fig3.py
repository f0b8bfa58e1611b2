"""Fig 3 (spec 5.4, D21): bias correction in 2-D on Branin. For UHE-BO and MAP: the points each run
sampled and the GP posterior mean on the real data under the hyper-parameters of the run's last BO
step, against the true function.

    python experiments/uhe_bo/fig3.py [--quick] [--seeds 5] [--budget 100] [--methods uhe_bo,map]

From the paper: the figure's content (sampled points, GP mean under the fitted theta, truth; UHE-BO
vs MAP). Ours (D21): the function (Branin; the paper does not name it), the moment (the end of a
T = 100 run after n0 = 6), and a number for what the paper only shows: the RMSE of the posterior
mean against the truth over a 60 x 60 grid, in units of the standard deviation of f on that grid,
per seed, with the fitted lengthscales (unit-cube coordinates). The plot shows seed 0.
Writes fig3.png and fig3.csv (one row per method and seed) to experiments/results/uhe_bo/fig3/ with --update
(else its scratch mirror).
"""

from __future__ import annotations

import argparse
import sys

import common
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import jbo
from jbo import gp


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--methods", default="uhe_bo,map", help="a subset of uhe_bo,map (smoke runs: one)")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    seeds = a.seeds or (2 if a.quick else 5)
    budget = a.budget or (6 if a.quick else 100)
    common.header(f"UHE fig3: branin, UHE-BO and MAP, {seeds} seeds, T = {budget}")
    prob = common.problem("branin")
    g = np.linspace(0.0, 1.0, 60)
    grid = np.stack(np.meshgrid(g, g, indexing="xy"), -1).reshape(-1, 2)
    truth = np.asarray(jax.vmap(prob.objective_unit)(jnp.asarray(grid)))
    rows, runs = [], {}
    for m in a.methods.split(","):
        alg = common.method(m, prob.dim, a.quick)
        tr = jbo.run_seeds(
            alg, prob, key=jax.random.key(0), num_steps=alg.num_initial + budget, num_seeds=seeds, keep_final_state=True
        )
        st = tr.final_state

        def mean_on_grid(buffer, theta):
            post = gp.condition(buffer, theta, alg.model)
            return gp.predict_batch(post, jnp.asarray(grid))[0]

        mu = np.asarray(jax.vmap(mean_on_grid)(st.buffer, st.theta))
        runs[m] = (np.asarray(st.buffer.x), mu)
        for s in range(seeds):
            rows.append(
                dict(
                    method=m,
                    seed=s,
                    rmse_over_sd=float(np.sqrt(np.mean((mu[s] - truth) ** 2)) / truth.std()),
                    lengthscale_0=float(np.exp(st.theta.log_lengthscale[s, 0])),
                    lengthscale_1=float(np.exp(st.theta.log_lengthscale[s, 1])),
                    final_simple_regret=float(tr.metrics["simple_regret"][s, -1]),
                )
            )
    df = pd.DataFrame(rows)
    df.to_csv(common.out_path("fig3", "fig3", a.quick, "csv"), index=False)
    print(df.groupby("method").agg(["mean", "std"]).T.to_string(), file=sys.stderr)
    plot(grid, truth, runs, common.out_path("fig3", "fig3", a.quick, "png"))


def plot(grid, truth, runs, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = int(np.sqrt(grid.shape[0]))
    xx, yy = grid[:, 0].reshape(n, n), grid[:, 1].reshape(n, n)
    levels = np.linspace(truth.min(), truth.max(), 25)
    fig, axes = plt.subplots(len(runs), 2, figsize=(8, 3.5 * len(runs)), squeeze=False)
    for row, m in enumerate(runs):
        x, mu = runs[m]
        axes[row, 0].contourf(xx, yy, truth.reshape(n, n), levels=levels)
        axes[row, 0].set_title("truth: Branin (maximise -f)")
        axes[row, 1].contourf(xx, yy, mu[0].reshape(n, n), levels=levels, extend="both")
        axes[row, 1].scatter(x[0, :, 0], x[0, :, 1], s=8, c="w", edgecolors="k", linewidths=0.5)
        axes[row, 1].set_title(f"{common.LABELS[m]}: GP mean + sampled points (seed 0)")
        for ax in axes[row]:
            ax.set_xlabel("x1 (unit)")
            ax.set_ylabel("x2 (unit)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
