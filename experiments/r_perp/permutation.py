"""What the random order buys (ours, not in the paper): the width a batch's confidence bound needs to
cover the batch's *average* function when the function changes inside the batch.

    jbo reproduce r_perp permutation              # the run below, into experiments/results/r_perp/permutation/
    python experiments/r_perp/permutation.py      # seeds 0-4, N = 49 and 337, 400 draws
    python experiments/r_perp/permutation.py --quick   # smoke run (seeds 0-1 unless --seeds, N = 49, 50 draws)

For each Fig 2 instance (seeds 0-4, SE and Matern-5/2, l = 0.5, lambda = 0.01, rho = 0.01), a batch of
N max-variance picks over the whole grid (the first batch of an interval) is queried while f changes
from f^(1) to f^(2) after a fraction q in {0.25, 0.5} of the batch (the Fig 2 kind of change), or
from f^(1) to -f^(1) halfway (fbar = 0: a change aligned with the selection order, the situation of
the paper's Fig 1 cartoon; an oblivious environment can do this because the first batch's picks do
not depend on data). Thm 4's event is lcb <= fbar <= ucb at every arm,
fbar the mean of the N functions of the batch; the width it needs is w* = max_x |mu(x) - fbar(x)| / sigma(x).
We draw 400 (order, noise) pairs with the random order and 400 noise draws with the selection
(deterministic) order, and report quantiles of w* next to Eq. 8's beta^{1/2} for C in {0, 0.1, 1}
(C = 0 keeps only the RKHS-bias and noise terms). Writes permutation[_quick].csv and permutation[_quick].log
(the load and the means over seeds per setting) into experiments/results/r_perp/permutation/ with --update, else
its scratch mirror.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jbo.algorithms import r_perp as ns
from jbo.problems import r_perp as pn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("r_perp", "permutation")  # experiments/results/r_perp/permutation with --update, else scratch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None, help="instances 0..S-1 (default 5; 2 with --quick)")
    ap.add_argument("--kernels", nargs="+", default=["se", "matern52"])
    add_update_flag(ap)
    args = ap.parse_args()
    seeds, draws, sizes = (
        (range(args.seeds or 2), 50, (49,)) if args.quick else (range(args.seeds or 5), 400, (49, 337))
    )
    T, lam, rows = 5000, 0.01, []
    for kernel in args.kernels:
        for seed in seeds:
            env = pn.kernel_drift(seed, kernel, horizon=T)
            k = pn.known(env)
            arms, F1, F2 = env.arms.arms, env.values[0], env.values[1]
            K = arms.shape[0]
            H = ns.rperp_interval(T, k["variation"], kernel, 2)
            for N in sizes:
                chol = ns.max_variance_design(ns.cholesky_empty(N, K), jnp.ones(K, bool), N, kernel, 0.5, arms, lam)
                cap = chol.picks.shape[0]
                S = chol.picks[:N]
                sd = jnp.sqrt(chol.var)
                for change, q in (("f1->f2", 0.25), ("f1->f2", 0.5), ("f1->-f1", 0.5)):
                    switch, G = int(q * N), (F2 if change == "f1->f2" else -F1)
                    fm = jnp.where((jnp.arange(N) < switch)[:, None], F1[None], G[None])  # f_m, m = query time
                    fbar = fm.mean(0)

                    def width(key, permute):
                        k_perm, k_noise = jax.random.split(key)
                        order = ns.query_order(k_perm, N, cap)[:N] if permute else jnp.arange(N)
                        noise = k["noise_std"] * jax.random.normal(k_noise, (N,))
                        y = jnp.zeros(cap).at[order].set(fm[jnp.arange(N), S[order]] + noise)
                        mu = ns.cholesky_mean(chol, y, N)
                        return jnp.max(jnp.abs(mu - fbar) / sd)

                    keys = jax.random.split(jax.random.key(seed), draws)
                    for permute in (True, False):
                        w = np.asarray(jax.jit(jax.vmap(lambda kk: width(kk, permute)))(keys))
                        rec = {
                            "kernel": kernel,
                            "seed": seed,
                            "N": N,
                            "change": change,
                            "switch_fraction": q,
                            "order": "random" if permute else "selection",
                            "B": k["rkhs_norm"],
                            "w_median": np.median(w),
                            "w_q90": np.quantile(w, 0.9),
                            "w_max": w.max(),
                        }
                        for C in (0.0, 0.1, 1.0):
                            b = float(ns.rperp_beta_half(k["rkhs_norm"], C, lam, k["noise_std"], 0.1, K, T, H))
                            rec[f"beta_half_C{C:g}"] = b
                            rec[f"coverage_C{C:g}"] = float(np.mean(w <= b))
                        rows.append(rec)
                        print({kk: (round(v, 3) if isinstance(v, float) else v) for kk, v in rec.items()}, flush=True)
    table = pd.DataFrame(rows)
    sfx = "_quick" if args.quick else ""
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / f"permutation{sfx}.csv", index=False, float_format="%.5g")
    agg = table.groupby(["kernel", "N", "change", "switch_fraction", "order"])[
        ["w_median", "w_q90", "coverage_C0", "coverage_C0.1", "coverage_C1"]
    ].mean()
    summary = f"load {os.getloadavg()}\n{agg.to_string(float_format=lambda v: f'{v:.3g}')}\n"
    (OUT / f"permutation{sfx}.log").write_text(summary)
    print("\n" + summary, end="")


if __name__ == "__main__":
    main()
