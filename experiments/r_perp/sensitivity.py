"""R-PERP paper Fig 2: how far the verdicts depend on the two numbers the paper leaves open, the
elimination constant C of Eq. 8 and the GP regulariser lambda. The same environment as fig2.py
(T = 5000, 30 x 30 grid, three base functions, changes at 1000 and 2000), both kernels, 12 seeds.

    jbo reproduce r_perp sensitivity                      # the run below, into experiments/results/r_perp/sensitivity/
    python experiments/r_perp/sensitivity.py              # C x lambda grid, both kernels, 12 seeds
    python experiments/r_perp/sensitivity.py --quick      # smoke run (T = 300, 2 seeds unless --seeds, 12 x 12 grid)

Grid: C in {0.01, 0.03, 0.1, 0.3, 1} x lambda in {0.01, 0.1, 1}. C = 1 is the theory-literal constant and
C = 0.1, lambda = 0.01 the reproduction preset (spec 8; the paper gives neither); lambda = 0.01 and 1 are the
spec's values, 0.1 the one fig2.py adds. R-PERP is one compiled program per seed (each seed has its own H
from its realised V_T), jbo.run_sweep over the 15 (C, lambda) settings; R-GP-UCB and SW-GP-UCB are swept
over lambda the same way, Random runs once per seed. Seed s is numpy default_rng(s)'s instance (as in
fig2.py) and every method of seed s runs on the key jax.random.split(jax.random.key(2024), S)[s] (passed
to run_sweep / run_seeds with one seed), so all methods and settings of a seed share the instance, the
noise and the key stream (common random numbers). These keys are not fig2.py's run keys, so the
reproduction preset's curves here are a second draw of the noise and permutations, not a copy of fig2's.

Per (kernel, method, C, lambda, seed) the CSV holds: R_t at 1000 / 2000 / 3500 / 5000; H and the seed's
last restart tau = H floor((T - 1) / H) (R-PERP's; the same window is used for the other methods); the
regret R(m) - R(tau) and R(T) - R(m) over the two halves of the last interval (m = tau + (T - tau) // 2),
where R-PERP runs one fresh learner on f^3 alone, and their ratio (below 1: R_t - R_tau over t - tau falls,
i.e. sublinear growth after that seed's last restart); the slope of log R_t against log t over the last
half of the run (t in [T/2, T]); for R-PERP the first step at which an arm is eliminated (empty if none),
the smallest active set over the run and over the last interval, and beta^{1/2}. Writes into the output
folder (experiments/results/r_perp/sensitivity/ with --update, else its scratch mirror): sensitivity[_quick].csv,
sensitivity[_quick].md (per setting: mean R_T, R-PERP against Random and the UCB methods, sublinearity after the
last restart, graded by jbo.verdict), sensitivity_curves[_quick].csv.gz (R_t every 50 steps),
sensitivity[_quick].log (command, machine, wall seconds).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import jbo
from jbo import verdict
from jbo.algorithms import RandomSearch
from jbo.algorithms import r_perp as ns
from jbo.problems import r_perp as pn
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("r_perp", "sensitivity")  # experiments/results/r_perp/sensitivity with --update, else scratch
CS = (0.01, 0.03, 0.1, 0.3, 1.0)
LAMS = (0.01, 0.1, 1.0)
RECORD = (1000, 2000, 3500, 5000)
CURVE_EVERY = 50
KEY = 2024  # fig2.py's root key
UCB_COL = {"R-GP-UCB": "rgpucb", "SW-GP-UCB": "swgpucb"}  # column prefixes of the summary


def log(msg, fh):
    print(msg, flush=True)
    fh.write(msg + "\n")
    fh.flush()


def swept(cls, settings: list[dict]):
    """A Params NamedTuple whose every leaf has a leading sweep axis: the defaults, overridden per setting."""
    base = cls()._asdict()
    return cls(**{k: jnp.asarray([float(s.get(k, v)) for s in settings]) for k, v in base.items()})


def last_restart(T: int, H: int) -> int:
    """Steps before the last interval starts: tau = H floor((T - 1) / H)."""
    return H * ((T - 1) // H)


def loglog_slope(R: np.ndarray, lo: int, hi: int) -> float:
    """Least-squares slope of log R_t against log t over t in [lo, hi] (R[t - 1] = R_t)."""
    t = np.arange(lo, hi + 1)
    r = np.maximum(R[t - 1], 1e-12)
    return float(np.polyfit(np.log(t), np.log(r), 1)[0])


def per_seed(R: np.ndarray, T: int, H: int, active: np.ndarray | None) -> dict:
    """The per-seed numbers of the module docstring from one cumulative-regret curve (and active-set sizes)."""
    tau = last_restart(T, H)
    mid = tau + (T - tau) // 2
    r_tau = R[tau - 1] if tau > 0 else 0.0
    first, second = R[mid - 1] - r_tau, R[T - 1] - R[mid - 1]
    rec = {f"R_{c}": float(R[c - 1]) for c in RECORD if c <= T}
    rec.update(
        R_T=float(R[-1]),
        H=H,
        last_restart=tau,
        inc_last_first=float(first),
        inc_last_second=float(second),
        ratio_last=float(second / first) if first > 0 else np.nan,
        loglog_slope_last_half=loglog_slope(R, T // 2, T),
    )
    if active is not None:
        K = int(active.max())
        below = np.flatnonzero(active < K)
        rec.update(
            first_elimination=int(below[0]) + 1 if below.size else np.nan,
            min_active=int(active.min()),
            min_active_last_interval=int(active[tau:].min()),
            frac_eliminated_max=1.0 - active.min() / K,
        )
    return rec


def run_seed(kernel, s, T, grid, key, fh):
    """Every method and setting on seed s: (rows, curves)."""
    env = pn.kernel_drift(s, kernel, horizon=T, grid_size=grid)
    k = pn.known(env)
    v = k["variation"]
    H = ns.rperp_interval(T, v, kernel, 2)
    H_ucb = ns.ucb_interval(T, v, kernel, 2)
    ident = dict(kernel=kernel, seed=s, V_T=v, B=k["rkhs_norm"])
    rows, curves = [], []

    def add(method, R, C=np.nan, lam=np.nan, active=None, beta=np.nan):
        rows.append({**ident, "method": method, "C": C, "lam": lam, "beta_half": beta, **per_seed(R, T, H, active)})
        steps = np.arange(CURVE_EVERY, T + 1, CURVE_EVERY)
        curves.append(
            pd.DataFrame({"kernel": kernel, "method": method, "C": C, "lam": lam, "seed": s, "step": steps,
                          "cumulative_regret": R[steps - 1]})
        )  # fmt: skip

    t0 = time.perf_counter()
    tr = jbo.run_seeds(RandomSearch(num_initial=0), env, key=key, num_steps=T, num_seeds=1)
    add("Random", np.asarray(tr.metrics["cumulative_regret"][0]))
    t_rand = time.perf_counter() - t0

    lam_settings = [{"lam": lam} for lam in LAMS]
    t0 = time.perf_counter()
    for name, alg in (
        ("R-GP-UCB", ns.RGPUCB(T, variation=v, kernel=kernel)),
        ("SW-GP-UCB", ns.SWGPUCB(T, variation=v, kernel=kernel)),
    ):
        tr = jbo.run_sweep(alg, env, key=key, num_steps=T, num_seeds=1, params=swept(ns.UCBParams, lam_settings))
        for p, st in enumerate(lam_settings):
            add(name, np.asarray(tr.metrics["cumulative_regret"][p, 0]), lam=st["lam"])
    t_ucb = time.perf_counter() - t0

    settings = [{"C": c, "lam": lam} for c, lam in itertools.product(CS, LAMS)]
    t0 = time.perf_counter()
    # bitwise: the settings run one after another (lax.map); vmapped, each batch's design would run at the
    # widest setting's active-set prefix (about 9 times slower on one seed here)
    rperp = ns.RPERP(T, variation=v, kernel=kernel)
    tr = jbo.run_sweep(
        rperp, env, key=key, num_steps=T, num_seeds=1, params=swept(ns.RPERPParams, settings), bitwise=True
    )
    for p, st in enumerate(settings):
        add(
            "R-PERP",
            np.asarray(tr.metrics["cumulative_regret"][p, 0]),
            C=st["C"],
            lam=st["lam"],
            active=np.asarray(tr.info.num_active[p, 0]),
            beta=float(tr.info.beta_half[p, 0, -1]),
        )
    t_rperp = time.perf_counter() - t0
    log(
        f"{kernel} seed {s}: V_T = {v:.3f}, H = {H}, H_ucb = W = {H_ucb}, last restart {last_restart(T, H)}; "
        f"wall (compile + run) Random {t_rand:.1f} s, UCBs {t_ucb:.1f} s, R-PERP x{len(settings)} {t_rperp:.1f} s, "
        f"load {os.getloadavg()[0]:.1f}",
        fh,
    )
    return rows, curves


def _compare(a: pd.Series, b: pd.Series) -> verdict.Comparison:
    common = a.index.intersection(b.index)
    return verdict.compare(a.loc[common].to_numpy(), b.loc[common].to_numpy())


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (kernel, C, lambda): R-PERP's mean R_T, elimination, and the rule's outcomes against Random and
    the UCB methods (R_T) and of its last-interval halves (second vs first: better = sublinear)."""
    out = []
    by = lambda g: g.set_index("seed").sort_index()  # noqa: E731
    for kernel, tk in table.groupby("kernel", sort=False):
        rand = by(tk[tk.method == "Random"])
        for (C, lam), g in tk[tk.method == "R-PERP"].groupby(["C", "lam"]):
            g = by(g)
            ucb = {m: by(tk[(tk.method == m) & np.isclose(tk.lam, lam)]) for m in ("R-GP-UCB", "SW-GP-UCB")}
            rec = {"kernel": kernel, "C": C, "lam": lam, "seeds": len(g), "beta_half_min": g.beta_half.min(),
                   "beta_half_max": g.beta_half.max(), "R_T_mean": g.R_T.mean(),
                   "R_T_se": g.R_T.std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else np.nan,
                   "Random_R_T_mean": rand.R_T.mean(), "seeds_eliminating": int(g.first_elimination.notna().sum()),
                   "first_elimination_median": g.first_elimination.median(), "min_active_mean": g.min_active.mean(),
                   "min_active_last_interval_mean": g.min_active_last_interval.mean(),
                   "ratio_last_median": g.ratio_last.median(), "loglog_slope_median": g.loglog_slope_last_half.median(),
                   "Random_ratio_last_median": rand.ratio_last.median()}  # fmt: skip
            comps = {"vs_Random": _compare(g.R_T, rand.R_T), "sublinear": _compare(g.inc_last_second, g.inc_last_first)}
            comps.update({f"{UCB_COL[m]}_vs": _compare(u.R_T, g.R_T) for m, u in ucb.items()})
            for name, c in comps.items():
                rec.update({f"{name}_outcome": c.outcome, f"{name}_wins": c.wins, f"{name}_n": c.n,
                            f"{name}_median_diff": c.median_diff})  # fmt: skip
            out.append(rec)
    return pd.DataFrame(out)


def _outcome(r, name: str) -> str:
    """'outcome (wins/n, median Δ)' of one summary row's comparison."""
    get = lambda f: getattr(r, f"{name}_{f}")  # noqa: E731
    return f"{get('outcome')} ({get('wins')}/{get('n')}, {get('median_diff'):+.2f})"


def markdown(summ: pd.DataFrame, table: pd.DataFrame, T: int) -> str:
    """The short table of the .md file (one row per kernel, C, lambda) and the baselines' rows."""
    lines = [
        f"R-PERP over C x λ (T = {T}, per-seed instances, common random numbers; `sensitivity.csv`). Outcomes by "
        "the one rule (jbo.verdict; A lower on wins/n seeds, median Δ log10 A − B): vs Random and "
        f"UCB vs R-PERP on R_{T}; 'sublinear after the last restart' compares, per seed, the regret over the "
        "second half of the last interval with that over its first half (better = the later half is lower).",
        "",
        f"| kernel | C | λ | β^{{1/2}} | R_{T} mean ± s.e. | seeds eliminating / first elimination (median step) "
        "| smallest active set (mean) | vs Random | R-GP-UCB vs R-PERP | SW-GP-UCB vs R-PERP "
        "| sublinear after the last restart (median ratio) |",
        "|---|---:|---:|---|---:|---|---:|---|---|---|---|",
    ]
    for r in summ.itertuples():
        first = f"{r.first_elimination_median:.0f}" if np.isfinite(r.first_elimination_median) else "—"
        lines.append(
            f"| {r.kernel} | {r.C:g} | {r.lam:g} | {r.beta_half_min:.1f}–{r.beta_half_max:.1f} | "
            f"{r.R_T_mean:.0f} ± {r.R_T_se:.0f} | {r.seeds_eliminating}/{r.seeds} / {first} | {r.min_active_mean:.0f} | "
            f"{_outcome(r, 'vs_Random')} | "
            f"{_outcome(r, 'rgpucb_vs')} | {_outcome(r, 'swgpucb_vs')} | "
            f"{r.sublinear_outcome} ({r.sublinear_wins}/{r.sublinear_n}, ratio {r.ratio_last_median:.2f}) |"
        )
    lines += [
        "",
        f"| kernel | method | λ | R_{T} mean ± s.e. | median ratio of the last-interval halves |",
        "|---|---|---:|---:|---:|",
    ]
    for (kernel, method, lam), g in table[table.method != "R-PERP"].groupby(
        ["kernel", "method", "lam"], dropna=False, sort=False
    ):
        se = g.R_T.std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else np.nan
        lam_s = "—" if np.isnan(lam) else f"{lam:g}"
        lines.append(f"| {kernel} | {method} | {lam_s} | {g.R_T.mean():.0f} ± {se:.0f} | {g.ratio_last.median():.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None, help="seeds (default 12; 2 with --quick)")
    ap.add_argument("--kernels", nargs="+", default=["se", "matern52"])
    add_update_flag(ap)
    args = ap.parse_args()
    T, S, grid = (300, args.seeds or 2, 12) if args.quick else (5000, args.seeds or 12, 30)
    sfx = "_quick" if args.quick else ""
    OUT.mkdir(parents=True, exist_ok=True)
    fh = open(OUT / f"sensitivity{sfx}.log", "w")
    log(
        f"command: python {' '.join(sys.argv)}\nR-PERP sensitivity: T = {T}, {S} seeds, grid {grid}x{grid}, "
        f"kernels {args.kernels}, C {CS}, lambda {LAMS}\nmachine: {machine_info()}; load at start {os.getloadavg()}",
        fh,
    )
    keys = jax.random.split(jax.random.key(KEY), S)
    rows, curves = [], []
    t_all = time.perf_counter()
    for kernel in args.kernels:
        t_k = time.perf_counter()
        for s in range(S):
            r, c = run_seed(kernel, s, T, grid, keys[s], fh)
            rows += r
            curves += c
        log(f"{kernel}: {time.perf_counter() - t_k:.0f} s wall", fh)
        md = write(rows, curves, sfx, T)  # after each kernel, so a stopped run keeps the finished ones
    log(f"total wall {time.perf_counter() - t_all:.0f} s; load at end {os.getloadavg()}\n\n{md}", fh)


def write(rows, curves, sfx, T: int) -> str:
    """The CSV, the curves and the Markdown table; returns the table."""
    table = pd.DataFrame(rows)
    table.to_csv(OUT / f"sensitivity{sfx}.csv", index=False, float_format="%.6g")
    pd.concat(curves).to_csv(OUT / f"sensitivity_curves{sfx}.csv.gz", index=False, float_format="%.6g")
    md = markdown(summary(table), table, T)
    (OUT / f"sensitivity{sfx}.md").write_text(md)
    return md


if __name__ == "__main__":
    sys.exit(main())
