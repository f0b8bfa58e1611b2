"""What the pseudo-data fit of UHE-BO estimates, against MAP, on BO-like and on i.i.d. data (Branin).

    python experiments/uhe_bo/estimator_bias.py [--quick] [--seeds 10] [--sizes 10,20,40,80] [--no-run]

For every data size n and seed, two data sets on Branin (unit square, noiseless):
  bo   the first n points a UHE-BO run queried (its n0 = 3d = 6 uniform points, then its own choices;
       default settings, all seeds as one jbo.run_seeds program), with their values;
  iid  n i.i.d. uniform points with their values (the first n of one draw per seed).
On each, the hyper-parameters of UHE-BO's GP model (Matern-5/2 ARD, zero mean, standardised y,
Gamma(1e-3, 10) priors with the log-Jacobian, the bounds of D10) are fitted by
  pseudo  UHE-BO's own pseudo-data fit (jbo.algorithms.uhe_bo.fit_pseudo: M = 2n uniform points labelled
          by their nearest observed neighbour, labels standardised with the real data's statistics);
  map     the MAP fit on the real data that UHE's MAP baseline uses (jbo.algorithms.uhe_bo.fit_map);
each at the algorithm's default fit budget (3 starts x 40 Adam steps) and at the spec's D11 budget
(5 starts x 300 Adam steps, the restarts / steps of the algorithm's Refit part), warm-started from the
start the run's first BO step gets. One pseudo-data draw per (n, seed, data) serves both budgets. On the
bo data, "pseudo_in_run" is the estimate the run itself held after its n-th point (its last BO step's fit,
warm-started from the fit before; after a random step, the fit on the first n - 1 points).

Recorded per (n, seed, data, fit): each fitted lengthscale (unit-square coordinates), their geometric
mean, the signal variance and the noise variance (standardised-y units). Writes estimator_bias.csv, a
summary (median and quartiles per n, data and fit: estimator_bias_summary.csv) and estimator_bias.png
(geometric-mean lengthscale and noise variance against n, median with the quartile band) to
experiments/results/uhe_bo/estimator_bias/ with --update, else its scratch mirror.

From the paper and spec: the method, its pseudo data (Eq. 2, M = 2|D|), the GP model and priors, the
problem (Branin, one of Fig 5's; the spec's D21 also uses it for Fig 3), noiseless objectives (D6),
10 seeds, the fit budget of D11 (5 x 300). Ours: the comparison itself (the paper reports no fitted
hyper-parameters), the sizes, the i.i.d. reference data, the default fit budget of jbo's UHE (3 x 40)
and the standalone fits' warm start.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import common
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import jbo
from jbo import data
from jbo.algorithms import uhe_bo

SPEC_BUDGET = dict(restarts=5, steps=300)  # D11: the Refit part's restarts x steps


def budget_name(alg: uhe_bo.UHE) -> str:
    return f"{alg.refit.restarts}x{alg.refit.steps}"


def make_fits(algs: list[uhe_bo.UHE]):
    """(key, x (n, d), y (n,)) -> {fit name: GPParams}: UHE-BO's pseudo-data fit and the MAP fit,
    each at the fit settings of every algorithm in `algs` (same model, same keys)."""

    def fits(key, x, y):
        buf = data.from_arrays(x, y, x.shape[0])
        warm = uhe_bo.start_params(buf)  # the warm start of a run's first BO step
        k_pseudo, k_map = jax.random.split(key)
        out = {}
        for alg in algs:
            kw, b = uhe_bo.fit_kw(alg.refit), budget_name(alg)
            out[f"pseudo_{b}"] = uhe_bo.fit_pseudo(k_pseudo, buf, alg.model, warm, kw, alg.factor)
            out[f"map_{b}"] = uhe_bo.fit_map(k_map, buf, alg.model, warm, kw)
        return out

    return jax.jit(jax.vmap(fits))


def rows_of(ls, outs, noise, n, data_name, fit_name, points=None) -> list[dict]:
    """One row per seed from (seeds, d) lengthscales, (seeds,) signal and noise variances."""
    ls, outs, noise = np.asarray(ls), np.asarray(outs), np.asarray(noise)
    rows = []
    seeds = ls.shape[0]
    for s in range(seeds):
        row = dict(n=n, seed=s, data=data_name, fit=fit_name, points=n if points is None else int(points[s]))
        row["lengthscale_gm"] = float(np.exp(np.mean(np.log(ls[s]))))
        row.update({f"lengthscale_{j}": float(v) for j, v in enumerate(ls[s])})
        row.update(outputscale=float(outs[s]), noise=float(noise[s]))
        rows.append(row)
    return rows


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    cols = ["lengthscale_gm"] + [c for c in df.columns if c.startswith("lengthscale_") and c != "lengthscale_gm"]
    cols += ["outputscale", "noise"]
    g = df.groupby(["n", "data", "fit"], sort=False)[cols]
    parts = {q: g.quantile(q).add_suffix(f"_{name}") for q, name in ((0.25, "q25"), (0.5, "median"), (0.75, "q75"))}
    out = pd.concat(parts.values(), axis=1)
    order = [f"{c}_{s}" for c in cols for s in ("median", "q25", "q75")]
    return out[order].reset_index().sort_values(["n", "data", "fit"]).reset_index(drop=True)


def plot(summary: pd.DataFrame, path, model):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fits = list(dict.fromkeys(summary.fit))
    colour = {f: f"C{i}" for i, f in enumerate(fits)}
    style = {"bo": "-", "iid": "--"}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8))
    for ax, metric, label in (
        (axes[0], "lengthscale_gm", "lengthscale (geometric mean, unit square)"),
        (axes[1], "noise", "noise variance (standardised y)"),
    ):
        lo = model.lengthscale_bounds[0] if metric == "lengthscale_gm" else model.noise_bounds[0] + model.noise_floor
        ax.axhline(lo, color="0.5", lw=0.8, ls=":", label="lower bound (D10)")
        for (d, f), g in summary.groupby(["data", "fit"], sort=False):
            g = g.sort_values("n")
            ax.plot(g.n, g[f"{metric}_median"], style[d], color=colour[f], marker="o", ms=3, label=f"{f} on {d}")
            ax.fill_between(g.n, g[f"{metric}_q25"], g[f"{metric}_q75"], color=colour[f], alpha=0.12)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sorted(set(summary.n)), [str(n) for n in sorted(set(summary.n))])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("n (data points)")
        ax.set_ylabel(label)
    fig.legend(*axes[1].get_legend_handles_labels(), loc="lower center", ncol=5, fontsize=7)
    fig.suptitle(
        "Branin: UHE-BO pseudo-data fit vs MAP, on UHE-BO's first n points (bo, solid) and n uniform points "
        "(iid, dashed); median and quartiles over seeds",
        fontsize=8,
    )
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def measure(prob, algs: list[uhe_bo.UHE], sizes: list[int], seeds: int) -> list[dict]:
    """The two data sets per (n, seed) and every fit on them (see the module docstring); one row each."""
    alg, model = algs[0], algs[0].model

    # (a) BO-like data: one UHE-BO run per seed, long enough that its info at step n (the estimate held
    # with n points) exists for the largest n; an even number of BO evaluations (D7)
    steps = max(sizes) + 1
    steps += (steps - alg.num_initial) % 2
    t0 = time.perf_counter()
    tr = jbo.run_seeds(alg, prob, key=jax.random.key(0), num_steps=steps, num_seeds=seeds)
    x_bo, y_bo = np.asarray(tr.actions), np.asarray(tr.observations)
    print(f"UHE-BO run: {seeds} seeds x {steps} steps, {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    # (b) i.i.d. data: the first n of max(sizes) uniform points per seed, valued like the run's points
    keys = jax.random.split(jax.random.key(1), seeds)
    x_iid = np.asarray(jax.vmap(lambda k: jax.random.uniform(k, (max(sizes), prob.dim)))(keys))
    y_iid = np.asarray(jax.vmap(jax.vmap(prob.objective_unit))(jnp.asarray(x_iid)))
    check = np.asarray(jax.vmap(jax.vmap(prob.objective_unit))(jnp.asarray(x_bo)))
    if not np.allclose(check, y_bo):
        raise RuntimeError("the run's observations are not the noiseless objective at its actions")

    rows = []
    for n in sizes:
        t0 = time.perf_counter()
        fits = make_fits(algs)
        x = jnp.asarray(np.concatenate([x_bo[:, :n], x_iid[:, :n]]))
        y = jnp.asarray(np.concatenate([y_bo[:, :n], y_iid[:, :n]]))
        keys = jax.random.split(jax.random.fold_in(jax.random.key(2), n), 2 * seeds)
        out = jax.block_until_ready(fits(keys, x, y))
        for name, p in out.items():
            ls, outs, noise = np.exp(p.log_lengthscale), np.exp(p.log_outputscale), model.noise(p)
            for i, d in enumerate(("bo", "iid")):
                part = slice(i * seeds, (i + 1) * seeds)
                rows += rows_of(ls[part], outs[part], noise[part], n, d, name)
        info = {k: np.asarray(getattr(tr.info, k)[:, n]) for k in ("lengthscale", "outputscale", "noise", "random")}
        points = n - info["random"].astype(int)  # a random step keeps the fit on n - 1 points
        rows += rows_of(info["lengthscale"], info["outputscale"], info["noise"], n, "bo", "pseudo_in_run", points)
        print(f"n = {n}: fits {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)

    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--sizes", default=None, help="comma-separated data sizes n")
    ap.add_argument("--no-run", action="store_true", help="only redo the summary and the plot from the CSV")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    seeds = a.seeds or (2 if a.quick else 10)
    sizes = [int(v) for v in a.sizes.split(",")] if a.sizes else ([10, 20] if a.quick else [10, 20, 40, 80])
    t_start = time.perf_counter()
    prob = common.problem("branin")
    alg = common.method("uhe_bo", prob.dim, a.quick)
    algs = [alg, dataclasses.replace(alg, refit=dataclasses.replace(alg.refit, **SPEC_BUDGET))]
    csv = common.out_path("estimator_bias", "estimator_bias", a.quick, "csv")
    if a.no_run:
        common.require(csv)
        df = pd.read_csv(csv)
    else:
        common.header(f"UHE estimator bias: branin, n = {sizes}, {seeds} seeds")
        df = pd.DataFrame(measure(prob, algs, sizes, seeds))
        df.to_csv(csv, index=False)
    s = summarise(df)
    s.to_csv(common.out_path("estimator_bias", "estimator_bias_summary", a.quick, "csv"), index=False)
    plot(s, common.out_path("estimator_bias", "estimator_bias", a.quick, "png"), alg.model)
    pd.set_option("display.width", 200)
    for metric in ("lengthscale_gm", "noise", "outputscale"):
        table = s.pivot(index=["data", "fit"], columns="n", values=f"{metric}_median")
        print(f"\nmedian {metric} over seeds\n{table.to_string(float_format=lambda v: f'{v:.3g}')}", file=sys.stderr)
    # the headline comparison: the pseudo-data fit on UHE-BO's own data against MAP on i.i.d. data, per budget
    med = s.set_index(["data", "fit", "n"]).sort_index()
    for b in (budget_name(x) for x in algs):
        ref, ours = med.loc[("iid", f"map_{b}")], med.loc[("bo", f"pseudo_{b}")]
        ratio = pd.DataFrame(
            {
                "lengthscale map(iid) / pseudo(bo)": ref.lengthscale_gm_median / ours.lengthscale_gm_median,
                "noise pseudo(bo) / map(iid)": ours.noise_median / ref.noise_median,
            }
        )
        print(
            f"\nratios of medians, fit budget {b}\n{ratio.T.to_string(float_format=lambda v: f'{v:.3g}')}",
            file=sys.stderr,
        )
    print(f"\nwall time {time.perf_counter() - t_start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
