"""Shared set-up of the UHE-BO experiments (spec uhe_bo.md 5): methods, problems, one program per
(method, problem) over all seeds, tidy CSV rows, mean +- s.e. plots.

The scripts are the steps of the figures declared in experiments/uhe_bo/figures.py (`jbo reproduce uhe_bo
<figure>` runs them). Each figure's results (PNG + CSV, *_quick for smoke runs) go to
experiments/results/uhe_bo/<figure>/ with --update, else to its scratch mirror (experiments/outdir.py:
$JBO_SCRATCH/uhe_bo/<figure>/), and the scripts that summarise or append to earlier runs read them there
(:func:`out_dir`); a script that joins other figures' runs reads each file from that figure's output
folder where it is there, else the committed one (:func:`find`).

XLA's CPU thread pool is switched to one thread before jax is imported: on this 2-core machine,
shared with other jobs, the multi-threaded pool made a 64-point likelihood evaluation 20-40x slower
in wall time (measured while the load average was ~14); one thread per process is also fairer.
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
# jaxlib's Cholesky and triangular solves for n >= 32 call LAPACK from scipy's OpenBLAS, whose own
# thread pool busy-waits: under the shared machine's load a 32-point likelihood gradient took 65 ms
# with the default pool and 0.2 ms with one thread (load ~14; below 32 points XLA's own
# expansion is used and nothing changes). Every UHE process therefore runs BLAS on one thread.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import jbo  # noqa: E402
from jbo.algorithms import uhe_bo  # noqa: E402
from jbo.studies import machine_info  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from flat_settings import uhe_options  # noqa: E402
from outdir import add_update_flag, committed_dir, missing, output_dir, require  # noqa: E402, F401 (for the scripts)

PAPER = "uhe_bo"
LABELS = {
    "uhe_bo": "UHE-BO",
    "map": "MAP",
    "mcmc": "MCMC",
    "a_gp_ucb": "A-GP-UCB",
    "wdf": "W&dF",
    "portfolio": "Portfolio",
    "random": "Random",
    "ra_bo": "RA-BO",
    "random_exp3": "Random+EXP3",
}
SEVEN = ("uhe_bo", "map", "mcmc", "a_gp_ucb", "wdf", "portfolio", "random")
PROBLEMS = {  # name -> (registry name, options)
    "deceptive2": ("deceptive", {"n": 2}),
    "deceptive3": ("deceptive", {"n": 3}),
    "h1": ("h1", {}),
    "hartmann3": ("hartmann3", {}),
    "branin": ("branin", {}),
    "hartmann6": ("hartmann6", {}),
    # E0 (spec 5.4): Matern-5/2 GP sample paths with a known lengthscale l* = 0.1
    "gp_d1": ("gp_sample", {"dim": 1, "lengthscale": 0.1, "seed": 0}),
    "gp_d2": ("gp_sample", {"dim": 2, "lengthscale": 0.1, "seed": 0}),
    # Fig 2 bottom (spec 5.3), all three REPLACEMENTS of the paper's data sets (jbo/problems/uhe_bo.py)
    "lr": ("uhe_bo:lr_vehicle_like", {}),
    "gb": ("uhe_bo:gb_kc1_like", {}),
    "lunar": ("uhe_bo:lunar", {}),
}
QUICK = dict(
    num_restarts=2,
    fit_steps=5,
    num_raw=64,
    num_starts=2,
    opt_steps=5,
    num_warmup=5,
    num_samples=2,
    num_leapfrog=3,
    grid_candidates=16,
)


def problem(name: str):
    reg, opts = PROBLEMS[name]
    return jbo.problems.get(reg, **opts)


def method(name: str, dim: int, quick: bool = False, **options):
    """D1: n0 = 3d uniform points (shared across methods under one seed); `options`: more UHE settings,
    flat (e.g. bucket_step, fit_steps: see build)."""
    opts = {"num_initial": 3 * dim, **options}
    if quick and name != "random":
        opts.update(QUICK)
    return build(name, **opts)


def build(name: str, cls=None, **flat):
    """uhe_bo.make(name) (or the UHE subclass cls with the same parts) from flat settings (fit_steps, num_raw,
    bucket_step, num_warmup, noise_refit, ...), turned into its parts (flat_settings.uhe_options)."""
    if name == "random":
        return uhe_bo.make(name, **{k: v for k, v in flat.items() if k not in ("bucket", "bucket_step")})
    opts = uhe_options(name, **flat)
    if cls is None:
        return uhe_bo.make(name, **opts)
    configured = uhe_bo.make(name)
    return cls(
        **{
            "schedule": configured.schedule,
            "estimate": configured.estimate,
            "lengthscales": configured.lengthscales,
            **opts,
        }
    )


def run_one(name: str, prob_name: str, budget: int, seeds: int, quick: bool, key=0, log=sys.stderr):
    """All seeds of one method on one problem as one compiled program; returns (rows, timing)."""
    prob = problem(prob_name)
    alg = method(name, prob.dim, quick)
    T = alg.num_initial + budget
    keys = jax.random.split(jax.random.key(key), seeds)
    params = alg.default_params()
    t0 = time.perf_counter()
    prog = jbo.program(alg, prob, keys=keys, num_steps=T, params=params, devices=1, keep_final_state=True, cache=False)
    t1 = time.perf_counter()
    tr = jax.block_until_ready(prog(keys, params))
    t2 = time.perf_counter()
    timing = dict(
        method=name, problem=prob_name, seeds=seeds, steps=T, compile_s=t1 - t0, run_s=t2 - t1, load=os.getloadavg()[0]
    )
    print(json.dumps(timing), file=log, flush=True)
    info = {k: np.asarray(v) for k, v in getattr(tr.info, "_asdict", lambda: tr.info)().items()}
    best = np.asarray(tr.metrics["best_value"])
    sr = np.asarray(tr.metrics.get("simple_regret", np.full_like(best, np.nan)))
    rows = trace_rows(name, prob_name, alg.num_initial, prob.dim, sr, best, info)
    return rows, timing, tr


def trace_rows(name, prob_name, n0, dim, sr, best, info) -> list[dict]:
    """Tidy rows (one per seed and step) from (seeds, T) arrays of simple regret (NaN where the
    optimum is unknown), best value and the algorithm's per-step info."""
    rows = []
    seeds, T = best.shape
    for s in range(seeds):
        for t in range(T):
            row = dict(
                method=name,
                problem=prob_name,
                seed=s,
                step=t,
                evaluation=t + 1 - n0,
                simple_regret=sr[s, t],
                best_value=best[s, t],
            )
            ls = info["lengthscale"][s, t] if "lengthscale" in info else np.full(dim, np.nan)
            for j, v in enumerate(np.atleast_1d(ls)):
                row[f"lengthscale_{j}"] = v
            for k in ("p_random", "random", "noise", "outputscale", "scale"):
                row[k] = info[k][s, t] if k in info else np.nan
            rows.append(row)
    return rows


def out_dir(folder: str) -> Path:
    """The folder of one figure's results: experiments/results/uhe_bo/<folder>/ with --update, else its
    scratch mirror (experiments/outdir.py)."""
    return output_dir(PAPER, folder)


def find(folder: str, name: str) -> Path:
    """The file `name` of the figure `folder` as this run sees it: the one in the output folder when it is
    there (a re-run, or --update), else the committed one (which may not exist either)."""
    path = out_dir(folder) / name
    return path if path.exists() else committed_dir(PAPER, folder, name)


def read_figure(
    figure: str, problems, tags=("",), quick: bool = False, folder: str | None = None, joined: bool = False
) -> pd.DataFrame | None:
    """Every row written so far for `figure` (the file prefix) on `problems`, over the output tags (e.g. ""
    and the MCMC runs' "_mcmc"), last write kept, from the figure's folder (`folder`, default: `figure`);
    joined: each file from the output folder where it is there, else the committed one (find). Fig 4 takes
    its UHE-BO rows from Fig 2 (the same program and keys; Fig 2's folder, else the committed runs). None
    when nothing was written."""
    folder = folder or figure
    names = [f"{figure}{t}_{p}{'_quick' if quick else ''}.csv" for p in problems for t in tags]
    paths = [find(folder, n) if joined else out_dir(folder) / n for n in names]
    frames = [pd.read_csv(path) for path in paths if path.exists()]
    if not frames:
        return None
    df = pd.concat(frames)
    if figure == "fig4" and "uhe_bo" not in set(df.method):
        base = read_figure("fig2", problems, tags, quick, joined=True)
        if base is not None:
            df = pd.concat([df, base[base.method == "uhe_bo"]])
    return df.drop_duplicates(["method", "problem", "seed", "step"], keep="last")


def with_mcmc(tag: str) -> list[str]:
    """The output tags a figure's plot and summary join: `tag` and its MCMC runs (`tag` + "_mcmc")."""
    return [tag] if "_mcmc" in tag else [tag, tag + "_mcmc"]


def out_path(folder: str, name: str, quick: bool, ext: str) -> Path:
    """<name>[_quick].<ext> in the output folder of the figure `folder` (out_dir)."""
    return out_dir(folder) / f"{name}{'_quick' if quick else ''}.{ext}"


def header(what: str) -> None:
    print(f"{what}\nmachine: {machine_info()}", file=sys.stderr, flush=True)


def plot_curves(df: pd.DataFrame, path: Path, metric: str = "simple_regret", log: bool = True, title=""):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    probs = list(dict.fromkeys(df["problem"]))
    # one colour per method in every panel (by first appearance in the whole frame; a panel that lacks a
    # method must not shift the others' colours)
    colour = {m: f"C{i % 10}" for i, m in enumerate(dict.fromkeys(df["method"]))}
    fig, axes = plt.subplots(1, len(probs), figsize=(4.2 * len(probs), 3.4), squeeze=False)
    for ax, p in zip(axes[0], probs):
        sub = df[(df.problem == p) & (df.evaluation >= 0)]
        for m in dict.fromkeys(sub["method"]):
            g = sub[sub.method == m].pivot(index="seed", columns="evaluation", values=metric)
            v = np.log10(np.maximum(g.values, 1e-12)) if log else g.values
            mu = v.mean(0)  # s.e. band only with more than one seed
            se = v.std(0, ddof=1) / np.sqrt(v.shape[0]) if v.shape[0] > 1 else np.zeros_like(mu)
            ax.plot(g.columns, mu, label=LABELS.get(m, m), color=colour[m])
            ax.fill_between(g.columns, mu - se, mu + se, alpha=0.2, color=colour[m])
        ax.set_title(p)
        ax.set_xlabel("evaluation after D0")
        ax.set_ylabel(("log10 " if log else "") + metric.replace("_", " "))
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary(df: pd.DataFrame, metric: str = "simple_regret") -> pd.DataFrame:
    """Final-step mean, s.e. and median of `metric` per problem and method (and the mean log10 for
    the simple regret)."""
    last = df[df.step == df.groupby(["method", "problem"])["step"].transform("max")]
    g = last.groupby(["problem", "method"])[metric]
    out = pd.DataFrame(
        {"mean": g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count()), "median": g.median(), "seeds": g.count()}
    )
    if metric == "simple_regret":
        out.insert(
            3,
            "log10_mean",
            last.assign(l=np.log10(np.maximum(last.simple_regret, 1e-12))).groupby(["problem", "method"])["l"].mean(),
        )
    return out.reset_index()
