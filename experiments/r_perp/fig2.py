"""R-PERP paper Fig. 2: cumulative dynamic regret on the abrupt-change kernel environment, with the
lambda ablation, the ablations of R-PERP (ours), the R_t table against the spec's reference numbers
(r_perp.md 5.4) and R-PERP's concavity on [2000, 5000].

    jbo reproduce r_perp fig2                    # the two runs below, into experiments/results/r_perp/fig2/
    python experiments/r_perp/fig2.py              # T = 5000, 5 seeds, SE and Matern-5/2, 3 lambdas
    python experiments/r_perp/fig2.py --lams 0.01  # Fig 2 alone (the reproduction preset's lambda)
    python experiments/r_perp/fig2.py --lams 0.01 --seeds 12 --no-ablations --tag s12   # Fig 2, 12 seeds
    python experiments/r_perp/fig2.py --quick      # smoke run (T = 300, 2 seeds unless --seeds, 12 x 12 grid)

From the paper: the environment (30 x 30 grid, three base functions sum_u alpha_u k(x, xbar_u),
U = 10, changes at T/5 and 2T/5, T = 5000, SE or Matern-5/2 with l = 0.5), delta = 0.1, 5 seeds,
mean +- 1 s.e., the methods (Random, R-GP-UCB, SW-GP-UCB, R-PERP), H from Thm 5, H_ucb = W from
Zhou & Shroff, beta of R-PERP from Eq. 8. Ours (spec 8): rho = 0.01 Gaussian noise, exact B and the
realised V_T per instance (so H, H_ucb, W are per seed: seeds run in groups of equal H), lambda
(0.01 main, {1, 0.1} ablation), C (theory-literal 1 and the reproduction preset 0.1), the UCB width
B + rho/sqrt(lambda) sqrt(2 (gamma_hat + ln(1/delta))) with the greedy gamma_hat, instances drawn by
numpy default_rng(seed) (seeds 0-2 are the spec's reference instances), JAX keys for noise and
permutations, and the two ablations (no restarts: H = T; no permutation). Writes into the output folder
(experiments/results/r_perp/fig2/ with --update, else its scratch mirror): fig2[_quick].csv.gz (cumulative
regret every 10 steps), fig2_summary[_quick].csv (R_t at 1000/2000/3000/5000, mean and s.e. over all seeds and
over the three reference instances, next to the spec's reference), fig2_lam<lambda>[_quick].png, fig2[_quick].log,
fig2_timing[_quick].json (compile and run seconds per program); --tag s12 adds _s12 to each name.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jax
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from jbo.algorithms import RandomSearch  # noqa: E402
from jbo.algorithms import r_perp as ns  # noqa: E402
from jbo.problems import r_perp as pn  # noqa: E402
from jbo.studies import machine_info  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("r_perp", "fig2")  # experiments/results/r_perp/fig2 with --update, else its scratch mirror
CHECK = (1000, 2000, 3000, 5000)  # the spec reference table's steps
RECORD = (1000, 2000, 3000, 4000, 5000)
# spec 5.4: the spec author's NumPy runs, 3 seeds (the instances of our seeds 0-2), mean R_t at CHECK
REFERENCE = {
    ("se", 1.0): {
        "Random": (723, 1175, 2167, 4152),
        "R-GP-UCB": (151, 315, 483, 759),
        "SW-GP-UCB": (146, 312, 504, 771),
        "R-PERP (C=1)": (736, 1292, 2139, 3823),
        "R-PERP (C=0.1)": (613, 1066, 1830, 2931),
    },
    ("se", 0.01): {
        "Random": (723, 1175, 2167, 4152),
        "R-GP-UCB": (50, 105, 199, 292),
        "SW-GP-UCB": (53, 117, 248, 341),
        "R-PERP (C=1)": (734, 1268, 2141, 3881),
        "R-PERP (C=0.1)": (379, 723, 1377, 1922),
    },
    ("matern52", 1.0): {
        "Random": (694, 1163, 2083, 3925),
        "R-GP-UCB": (227, 445, 685, 1133),
        "SW-GP-UCB": (220, 442, 686, 1125),
        "R-PERP (C=1)": (706, 1259, 2076, 3694),
        "R-PERP (C=0.1)": (667, 1201, 1963, 3507),
    },
    ("matern52", 0.01): {
        "Random": (694, 1163, 2083, 3925),
        "R-GP-UCB": (147, 293, 458, 742),
        "SW-GP-UCB": (146, 297, 481, 763),
        "R-PERP (C=1)": (702, 1214, 2077, 3802),
        "R-PERP (C=0.1)": (564, 993, 1656, 2886),
    },
}
STYLE = {
    "Random": ("grey", "-"),
    "R-GP-UCB": ("tab:blue", "-"),
    "SW-GP-UCB": ("tab:green", "-"),
    "R-PERP (C=1)": ("tab:red", "--"),
    "R-PERP (C=0.1)": ("tab:red", "-"),
    "PE-P no restarts (C=0.1, ours)": ("tab:purple", ":"),
    "R-PE no permutation (C=0.1, ours)": ("tab:orange", ":"),
}


def log(msg, fh):
    print(msg, flush=True)
    fh.write(msg + "\n")
    fh.flush()


def methods(T, kernel, known, lam, ablations):
    """label -> (one algorithm per seed, params)."""
    V = [k["variation"] for k in known]
    ucb = ns.UCBParams(lam=lam)
    out = {
        "Random": ([RandomSearch(num_initial=0)] * len(V), None),
        "R-GP-UCB": ([ns.RGPUCB(T, variation=v, kernel=kernel) for v in V], ucb),
        "SW-GP-UCB": ([ns.SWGPUCB(T, variation=v, kernel=kernel) for v in V], ucb),
        "R-PERP (C=1)": ([ns.RPERP(T, variation=v, kernel=kernel) for v in V], ns.RPERPParams(C=1.0, lam=lam)),
        "R-PERP (C=0.1)": ([ns.RPERP(T, variation=v, kernel=kernel) for v in V], ns.RPERPParams(C=0.1, lam=lam)),
    }
    if ablations:
        p = ns.RPERPParams(C=0.1, lam=lam)
        out["PE-P no restarts (C=0.1, ours)"] = ([ns.RPERP(T, kernel=kernel, restart=False)] * len(V), p)
        out["R-PE no permutation (C=0.1, ours)"] = (
            [ns.RPERP(T, variation=v, kernel=kernel, permute=False) for v in V],
            p,
        )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None, help="seeds (default 5; 2 with --quick)")
    ap.add_argument("--horizon", type=int, default=5000)
    ap.add_argument("--kernels", nargs="+", default=["se", "matern52"])
    ap.add_argument("--lams", nargs="+", type=float, default=[0.01, 1.0, 0.1])
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument("--tag", default="", help="suffix of the output files (a run next to the main one)")
    add_update_flag(ap)
    args = ap.parse_args()
    T, S, grid = (300, args.seeds or 2, 12) if args.quick else (args.horizon, args.seeds or 5, 30)
    sfx = ("_quick" if args.quick else "") + (f"_{args.tag}" if args.tag else "")
    OUT.mkdir(parents=True, exist_ok=True)
    fh = open(OUT / f"fig2{sfx}.log", "w")
    log(
        f"R-PERP Fig 2: T = {T}, {S} seeds, grid {grid}x{grid}, kernels {args.kernels}, lambdas {args.lams}\n"
        f"machine: {machine_info()}; jax {jax.__version__}; load at start {os.getloadavg()}",
        fh,
    )
    rows, curves, timing = [], [], []
    t_all = time.perf_counter()
    for kernel in args.kernels:
        envs = [pn.kernel_drift(s, kernel, horizon=T, grid_size=grid) for s in range(S)]
        known = [pn.known(e) for e in envs]
        for s, k in enumerate(known):
            H = ns.rperp_interval(T, k["variation"], kernel, 2)
            log(
                f"{kernel} seed {s}: B = {k['rkhs_norm']:.3f}, V_T = {k['variation']:.3f}, H = {H}, "
                f"H_ucb = W = {ns.ucb_interval(T, k['variation'], kernel, 2)}, batches of the first interval "
                f"{ns.batch_sizes(min(H, T))}",
                fh,
            )
        keys = jax.random.split(jax.random.key(2024), S)
        for lam in args.lams:
            t_lam = time.perf_counter()
            for label, (algs, params) in methods(T, kernel, known, lam, not args.no_ablations).items():
                if label == "Random" and lam != args.lams[0]:
                    continue  # Random does not depend on lambda
                trace, groups = pn.run_instances(algs, envs, keys=keys, num_steps=T, params=params)
                metrics, info = trace.metrics, trace.info
                for g in groups:
                    timing.append(
                        {
                            "kernel": kernel,
                            "lam": lam,
                            "method": label,
                            "seeds": g["seeds"],
                            "compile_s": round(g["compile_s"], 2),
                            "run_s": round(g["run_s"], 2),
                            "load": os.getloadavg()[0],
                        }
                    )
                    log(
                        f"  {kernel} lam={lam} {label} seeds {g['seeds']}: compile {g['compile_s']:.1f} s, "
                        f"run {g['run_s']:.1f} s, load {os.getloadavg()[0]:.1f}",
                        fh,
                    )
                R = metrics["cumulative_regret"]
                act = getattr(info, "num_active", None)
                for s in range(S):
                    rec = {
                        "kernel": kernel,
                        "lam": lam,
                        "method": label,
                        "seed": s,
                        **{f"R_{c}": R[s, c - 1] for c in RECORD if c <= T},
                        "R_T": R[s, -1],
                        "V_T": known[s]["variation"],
                        "B": known[s]["rkhs_norm"],
                    }
                    if act is not None:
                        rec["min_active"], rec["final_active"] = int(act[s].min()), int(act[s, -1])
                    rows.append(rec)
                    steps = np.arange(9, T, 10)
                    curves.append(
                        pd.DataFrame(
                            {
                                "kernel": kernel,
                                "lam": lam,
                                "method": label,
                                "seed": s,
                                "step": steps + 1,
                                "cumulative_regret": R[s, steps],
                            }
                        )
                    )
            log(f"{kernel} lam={lam}: all methods {time.perf_counter() - t_lam:.0f} s wall", fh)
    log(f"total wall {time.perf_counter() - t_all:.0f} s; load at end {os.getloadavg()}", fh)
    table = pd.DataFrame(rows)
    pd.concat(curves).to_csv(OUT / f"fig2{sfx}.csv.gz", index=False, float_format="%.6g")
    (OUT / f"fig2_timing{sfx}.json").write_text(json.dumps(timing, indent=1))
    summary = summarise(table, T)
    summary.to_csv(OUT / f"fig2_summary{sfx}.csv", index=False, float_format="%.6g")
    log("\n" + summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"), fh)
    plot(pd.concat(curves), args, sfx)


def summarise(table, T):
    """Per (kernel, lambda, method): mean and s.e. (ddof 1) of R_t over all seeds and over seeds 0-2
    (the spec's reference instances), the reference, and the increments over [2000, 3000, 4000, 5000]."""
    out = []
    cols = [c for c in table if c.startswith("R_") and c != "R_T"]
    for (kernel, lam, method), g in table.groupby(["kernel", "lam", "method"], sort=False):
        rec = {"kernel": kernel, "lam": lam, "method": method, "seeds": len(g)}
        for c in cols:
            rec[f"{c}_mean"] = g[c].mean()
            rec[f"{c}_se"] = g[c].std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else np.nan
            rec[f"{c}_mean_seeds012"] = g[g.seed < 3][c].mean()
        ref = REFERENCE.get((kernel, lam), {}).get(method)
        for c, v in zip(CHECK, ref or (np.nan,) * len(CHECK)):
            rec[f"R_{c}_reference"] = v
        if {"R_2000", "R_3000", "R_4000", "R_5000"} <= set(g):  # concavity of the mean curve on [2000, 5000]
            inc = np.diff([g[f"R_{c}"].mean() for c in (2000, 3000, 4000, 5000)])
            rec.update(
                inc_2000_3000=inc[0],
                inc_3000_4000=inc[1],
                inc_4000_5000=inc[2],
                increments_decreasing=bool(inc[0] > inc[1] > inc[2]),
                slope_ratio_4000_5000_vs_2000_3000=inc[2] / inc[0],
            )
        if "min_active" in g:
            rec["min_active_mean"] = g["min_active"].mean()
        out.append(rec)
    return pd.DataFrame(out)


def plot(curves, args, sfx):
    for lam, gl in curves.groupby("lam"):
        kernels = list(dict.fromkeys(gl.kernel))
        fig, axes = plt.subplots(1, len(kernels), figsize=(6 * len(kernels), 4.2), squeeze=False)
        for ax, kernel in zip(axes[0], kernels):
            for method, g in gl[gl.kernel == kernel].groupby("method", sort=False):
                v = g.pivot(index="seed", columns="step", values="cumulative_regret")
                mean = v.mean(axis=0).to_numpy()
                se = v.std(axis=0, ddof=1).to_numpy() / np.sqrt(len(v)) if len(v) > 1 else 0 * mean
                color, ls = STYLE.get(method, ("k", "-"))
                ax.plot(v.columns, mean, color=color, ls=ls, label=method)
                ax.fill_between(v.columns, mean - se, mean + se, color=color, alpha=0.2)
            ax.set_title(f"{'SE' if kernel == 'se' else 'Matern-5/2'}, lambda = {lam:g}")
            ax.set_xlabel("t")
            ax.set_ylabel("cumulative dynamic regret R_t")
            ax.grid(alpha=0.3)
        axes[0, -1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(OUT / f"fig2_lam{lam:g}{sfx}.png", dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
