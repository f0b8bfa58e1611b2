"""BOKE paper Figs. 1, 2, 4 and 5: kernel regression, KDE, the IKR-UCB acquisition, BOKE vs BOKE+.

    jbo reproduce boke fig1 fig2 fig4 fig5     # runs illustrations.py --figure figN for each

`--figure fig1 fig2 fig4 fig5` (default: all four) picks the figures; each has its own key (split
from key(0)), so one figure alone draws the same picture as all four together. `--quick`: Fig. 5
with 5 BO steps instead of 30 (a smoke run; writes fig5_boke_vs_plus_quick.png).

From the paper: the toy f(x) = -exp(-1.4x) cos(3.5 pi x) on [0, 1] (Eq. 3.5); Fig. 1 fits KR to 10
noisy samples at three bandwidths, the middle one by cross-validation; Fig. 2 is the KDE of 30
samples of 0.7 Beta(3, 8) + 0.3 Beta(10, 2) at three bandwidths, the middle one by likelihood CV;
Fig. 4 is the acquisition after 5 points; Fig. 5 compares BOKE and BOKE+ from the same 5 points.
Ours: noise sd 0.1 ("N(0, 0.01)" read as a variance, D21), the small/large bandwidths (0.01, 0.3),
the CV grids, evenly spaced sample locations in Fig. 1, varsigma = 0.1 and 30 BO steps in Fig. 5.
Writes fig1/fig1_kr.png, fig2/fig2_kde.png, fig4/fig4_acquisition.png, fig5/fig5_boke_vs_plus.png
(under experiments/results/boke/ with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from common import add_update_flag, header, out_path  # noqa: E402
from scipy import stats  # noqa: E402

import jbo  # noqa: E402
from jbo import data, kde, regression  # noqa: E402
from jbo.algorithms import boke  # noqa: E402
from jbo.problems.boke import toy, toy_fn  # noqa: E402

FIGURES = ("fig1", "fig2", "fig4", "fig5")
GRID = jnp.linspace(0, 1, 501)[:, None]
NOISE = 0.1


def kr_curve(x, y, h):
    mask = jnp.ones(len(y), bool)
    return jax.vmap(lambda g: regression.nadaraya_watson(g, x, y, mask, h)[0])(GRID)


def loo_cv_kr(x, y, hs):
    """Leave-one-out squared error of KR for each bandwidth."""
    n = len(y)
    errs = []
    for h in hs:
        masks = ~jnp.eye(n, dtype=bool)
        pred = jax.vmap(lambda i, m: regression.nadaraya_watson(x[i], x, y, m, h)[0])(jnp.arange(n), masks)
        errs.append(float(jnp.mean((pred - y) ** 2)))
    return np.array(errs)


def loo_loglik_kde(x, hs):
    n = x.shape[0]
    out = []
    for h in hs:
        masks = ~jnp.eye(n, dtype=bool)
        ll = jax.vmap(lambda i, m: kde.log_density(x[i], x, m, h))(jnp.arange(n), masks)
        out.append(float(jnp.sum(ll)))
    return np.array(out)


def fig1(key):
    ky = key
    x = ((jnp.arange(10) + 0.5) / 10)[:, None]  # evenly spaced (ours)
    y = jax.vmap(toy_fn)(x) + NOISE * jax.random.normal(ky, (10,))
    hs = np.geomspace(0.01, 0.5, 60)
    h_cv = hs[np.argmin(loo_cv_kr(x, y, hs))]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(GRID[:, 0], jax.vmap(toy_fn)(GRID), "k--", label="f")
    ax.scatter(x[:, 0], y, c="k", zorder=3, label="10 noisy samples")
    for h, lab in ((0.01, "h = 0.01"), (h_cv, f"h = {h_cv:.3f} (LOO-CV)"), (0.3, "h = 0.3")):
        ax.plot(GRID[:, 0], kr_curve(x, y, h), label=lab)
    ax.set(title="Fig. 1: Nadaraya-Watson kernel regression at three bandwidths", xlabel="x")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_path("fig1", "fig1_kr", False, "png"), dpi=110)
    return h_cv


def fig2(key):
    k1, k2, k3 = jax.random.split(key, 3)
    comp = jax.random.bernoulli(k1, 0.3, (30,))
    x = jnp.where(comp, jax.random.beta(k2, 10.0, 2.0, (30,)), jax.random.beta(k3, 3.0, 8.0, (30,)))[:, None]
    hs = np.geomspace(0.005, 0.5, 60)
    h_ml = hs[np.argmax(loo_loglik_kde(x, hs))]
    g = np.asarray(GRID[:, 0])
    true = 0.7 * stats.beta(3, 8).pdf(g) + 0.3 * stats.beta(10, 2).pdf(g)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(g, true, "k--", label="true density")
    ax.plot(x[:, 0], np.zeros(30), "k|", ms=12)
    mask = jnp.ones(30, bool)
    for h, lab in ((0.01, "h = 0.01"), (h_ml, f"h = {h_ml:.3f} (likelihood CV)"), (0.3, "h = 0.3")):
        # p_hat = (2 pi)^(-1/2) (h t)^(-1) W(x): the normalised form of the unnormalised W (spec 2.3)
        ph = jnp.exp(jax.vmap(lambda z: kde.log_kernel_sum(z, x, mask, h))(GRID)) / (np.sqrt(2 * np.pi) * h * 30)
        ax.plot(g, ph, label=lab)
    ax.set(title="Fig. 2: KDE of 30 samples of 0.7 Beta(3,8) + 0.3 Beta(10,2)", xlabel="x", ylim=(0, None))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_path("fig2", "fig2_kde", False, "png"), dpi=110)
    return h_ml


def fig4(key):
    problem = toy().with_noise(NOISE)
    alg = boke.BOKE(num_initial=5)
    params = boke.BOKEParams(varsigma=NOISE)
    tr = jbo.run(alg, problem, key=key, num_steps=6, params=params)
    buf = data.from_arrays(tr.actions[:5], tr.observations[:5], 5)
    h = boke.bandwidth(buf, params.bandwidth_scale)
    beta = boke.beta_t(5.0, NOISE, params.delta)
    m, log_w = jax.vmap(lambda g: regression.nadaraya_watson(g, buf.x, buf.y, buf.mask, h))(GRID)
    acq = jax.vmap(lambda g: boke.ikr_ucb(g, buf, h, beta))(GRID)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(GRID[:, 0], jax.vmap(toy_fn)(GRID), "k--", label="f")
    ax.scatter(buf.x[:, 0], buf.y, c="k", zorder=3, label="5 points")
    ax.plot(GRID[:, 0], m, label="KR mean m_t")
    ax.plot(GRID[:, 0], acq, label=r"IKR-UCB $m_t + \sqrt{\beta_t} W_t^{-1/2}$")
    ax.axvline(float(tr.actions[5, 0]), color="r", lw=1, label=f"6th query x = {float(tr.actions[5, 0]):.3f}")
    ax.set(
        title=f"Fig. 4: IKR-UCB after 5 points (h = {float(h):.3f}, beta = {float(beta):.3f})",
        xlabel="x",
        ylim=(-1.5, 3),
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_path("fig4", "fig4_acquisition", False, "png"), dpi=110)


def fig5(key, steps, quick=False):
    problem = toy().with_noise(NOISE)
    params = boke.BOKEPlusParams(varsigma=NOISE)  # BOKE reads the fields it needs; BOKE+ also p
    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    counts = {}
    for ax, (label, alg) in zip(
        axes, (("BOKE", boke.BOKE(num_initial=5)), ("BOKE+", boke.BOKE(num_initial=5, plus=True)))
    ):
        tr = jbo.run(alg, problem, key=key, num_steps=5 + steps, params=params)  # same key: the same 5 initial points
        x = np.asarray(tr.actions[:, 0])
        ax.plot(GRID[:, 0], jax.vmap(toy_fn)(GRID), "k--", lw=1)
        ax.scatter(x[:5], np.asarray(tr.observations[:5]), c="grey", marker="s", label="initial 5")
        sc = ax.scatter(x[5:], np.asarray(tr.observations[5:]), c=np.arange(steps), cmap="viridis", label="queries")
        ax.set(title=f"{label}: {steps} queries (colour = iteration)", ylabel="y")
        counts[label] = float(np.mean(np.abs(x[5:] - 0.2742) < 0.1))
        ax.legend(fontsize=8)
    fig.colorbar(sc, ax=axes, label="iteration")
    axes[1].set_xlabel("x")
    fig.savefig(out_path("fig5", "fig5_boke_vs_plus", quick, "png"), dpi=110)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="Fig. 5 with 5 BO steps (the others are cheap)")
    ap.add_argument("--figure", nargs="+", choices=FIGURES, default=list(FIGURES), help="which figures (default: all)")
    args = add_update_flag(ap).parse_args()
    header(f"BOKE Figs {', '.join(f[3:] for f in args.figure)}")
    key = jax.random.key(0)
    k1, k2, k4, k5 = jax.random.split(key, 4)
    if "fig1" in args.figure:
        print(f"Fig 1: LOO-CV bandwidth {fig1(k1):.4f}")
    if "fig2" in args.figure:
        print(f"Fig 2: likelihood-CV bandwidth {fig2(k2):.4f}")
    if "fig4" in args.figure:
        fig4(k4)
    if "fig5" in args.figure:
        steps = 5 if args.quick else 30
        counts = fig5(k5, steps, args.quick)
        print(
            f"Fig 5: share of the {steps} queries within 0.1 of x* = 0.2742: "
            + ", ".join(f"{k} {v:.2f}" for k, v in counts.items())
        )


if __name__ == "__main__":
    main()
