"""BOKE paper, Fig 6 (noise-free): how far the "competitive with GP-UCB" verdict depends on settings
the paper does not state. 30 seeds, the spec's n0 and T, the same seeds (and so the same designs) as
experiments/boke/synthetic.py.

    python experiments/boke/sensitivity.py                     # the four functions BOKE loses on
    python experiments/boke/sensitivity.py --problems forrester --seeds 4   # a smoke run

Grids (each one compiled program per method and function, jbo.run_sweep over the settings):
* BOKE: bandwidth scale c_h in {0.5, 1, 2} x 1/sqrt(12) and varsigma in {0.25, 1, 4} x sigma_eps
  (sigma_eps = 0.1 SD_U(g), the spec's choice), 9 settings;
* BOKE+: the coin's p in {0.25, 0.5, 0.75} at the default c_h and varsigma;
* the paper's GP-UCB (SE kernel, fixed hyper-parameters): lengthscale in {0.5, 1, 2} x 0.5 sqrt(d/6)
  and beta in {1, 4}, 6 settings;
* GP-UCB with the same model and beta = 4 but hyper-parameters fitted by maximum likelihood at every
  step (GPBO fit="mle": 1 restart x 5 warm-started Adam steps), the usual practice.

Writes experiments/results/boke/sensitivity.csv (one row per function, method, setting and seed:
the final simple regret); experiments/verdicts/boke.py reads it.
"""

from __future__ import annotations

import argparse
import itertools
import time

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from common import OUT, header

import jbo
from jbo import acquisitions, gp
from jbo.algorithms import boke
from jbo.algorithms.gp_bo import GPBO, GPBOParams
from jbo.problems.boke import SUITE

DEFAULT_PROBLEMS = ("forrester", "goldstein_price_rescaled", "six_hump_camel", "hartmann3")
BANDWIDTH = (0.5, 1.0, 2.0)  # x 1/sqrt(12)
VARSIGMA = (0.25, 1.0, 4.0)  # x sigma_eps
COIN = (0.25, 0.5, 0.75)
LENGTHSCALE = (0.5, 1.0, 2.0)  # x 0.5 sqrt(d / 6)
BETA = (1.0, 4.0)


def sweeps(bench, dim: int):
    """(method, algorithm, params with a leading sweep axis, one dict of labels per setting)."""
    n0, sig = bench.num_initial, bench.noise_std
    grid = list(itertools.product(BANDWIDTH, VARSIGMA))
    boke_params = boke.BOKEParams(
        bandwidth_scale=jnp.array([c * boke.SCOTT_UNIFORM for c, _ in grid]),
        varsigma=jnp.array([v * sig for _, v in grid]),
        delta=jnp.full(len(grid), 0.1),
    )
    plus_params = boke.BOKEPlusParams(
        bandwidth_scale=jnp.full(len(COIN), boke.SCOTT_UNIFORM),
        varsigma=jnp.full(len(COIN), sig),
        delta=jnp.full(len(COIN), 0.1),
        p=jnp.array(COIN),
    )
    gp_grid = list(itertools.product(LENGTHSCALE, BETA))
    ls0 = 0.5 * np.sqrt(dim / 6.0)
    gp_params = GPBOParams(
        acquisition=acquisitions.UCBParams(beta=jnp.array([b for _, b in gp_grid])),
        hypers=boke.PaperHypersParams(
            lengthscale=jnp.array([m * ls0 for m, _ in gp_grid]), noise_std=jnp.zeros(len(gp_grid))
        ),
    )
    mle = GPBO(
        acquisition=acquisitions.UCB(beta=4.0),
        model=gp.GPModel(kernel="se", mean="zero"),
        fit="mle",
        num_raw_per_dim=1024,
        opt_steps=50,
        screen_data=True,
        num_initial=n0,
    )
    mle_params = jax.tree.map(lambda v: jnp.asarray(v)[None], jbo.replace_params(mle.default_params(), beta=4.0))
    return [
        ("BOKE", boke.BOKE(num_initial=n0), boke_params, [{"c_h": c, "varsigma": v} for c, v in grid]),
        ("BOKE+", boke.BOKE(num_initial=n0, plus=True), plus_params, [{"p": p} for p in COIN]),
        ("GP-UCB", boke.PaperGP(num_initial=n0), gp_params, [{"lengthscale": m, "beta": b} for m, b in gp_grid]),
        ("GP-UCB (MLE refit)", mle, mle_params, [{"beta": 4.0}]),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS))
    ap.add_argument("--seeds", type=int, default=30)
    args = ap.parse_args()
    header(f"BOKE sensitivity (Fig 6, noise-free): {args.seeds} seeds, {args.problems}")
    rows = []
    for name in args.problems:
        bench = SUITE[name]
        problem = bench.problem(False)
        for method, alg, params, labels in sweeps(bench, problem.dim):
            t0 = time.perf_counter()
            trace = jbo.run_sweep(alg, problem, 0, bench.num_steps, args.seeds, params)
            final = np.asarray(trace.metrics["simple_regret"][:, :, -1])
            wall = time.perf_counter() - t0
            print(f"{name:28s} {method:20s} {len(labels)} settings  {wall:7.1f} s", flush=True)
            for k, lab in enumerate(labels):
                for s in range(args.seeds):
                    rows.append(
                        {"problem": f"{bench.panel}: {name}", "method": method, **lab, "seed": s, "final": final[k, s]}
                    )
    pd.DataFrame(rows).to_csv(OUT / "sensitivity.csv", index=False)


if __name__ == "__main__":
    main()
