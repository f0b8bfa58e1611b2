"""Reduced reproductions of the papers' qualitative claims: slow, skipped unless `pytest --runslow`.

Each test runs one claim on a budget of about a minute on a 2-core CPU and asserts it with a margin
(the measured numbers are in the comments; they are deterministic for the fixed keys). Settings follow
the experiment scripts (experiments/boke/, experiments/sbo_kde/) with fewer seeds or steps, as stated.
"""

import dataclasses
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import designs
from jbo.algorithms import boke
from jbo.problems.boke import SUITE


# ------------------------------------------------------------------ BOKE paper
@pytest.mark.slow
@pytest.mark.parametrize("noisy", [False, True], ids=["noise-free", "noisy"])
def test_boke_and_boke_plus_beat_kr_ucb_on_six_hump_camel(noisy):
    """BOKE paper claim 3 (Figs 6/7): BOKE and BOKE+ clearly beat KR-UCB, "especially under noise".

    Six-Hump-Camel (2-D, panel C) with the script's settings (experiments/boke/synthetic.py, common.py):
    n0 = 10 shared LHS points, T = 100, the methods' defaults (1024 d raw candidates, 10 x 50 Adam),
    varsigma = sigma_eps = 0.1 SD_U(g) in beta_t in both settings; 8 seeds instead of 30 (key 0, as the
    script's run_study). Mean final simple regret (noise-free / noisy): BOKE 0.120 / 0.134, BOKE+ 0.271 /
    0.333, KR-UCB 1.368 / 1.368 (30-seed log: 0.153 / 0.140, 0.269 / 0.262, 0.961 / 0.961).
    With the spec's alpha = 0.5 and n0 = 10, KR-UCB cannot widen before t = n0^2 = 100, so it only
    re-samples its design (same regret with and without noise). We therefore also check BOKE against
    the widening variant alpha = 0.8 (common.py's "KR-UCB a=0.8"): 0.521 / 0.441. BOKE+ against it is
    not robust at 8 seeds (0.271 vs 0.521, 0.333 vs 0.441; 30-seed log: 0.269 vs 0.403, 0.262 vs 0.314),
    so that comparison is not asserted.
    """
    bench = SUITE["six_hump_camel"]
    problem, key, T, seeds = bench.problem(noisy), jax.random.key(0), bench.num_steps, 8
    params = boke.BOKEParams(varsigma=bench.noise_std)

    def final_regret(alg, p=params):
        return float(
            np.mean(
                jbo.run_seeds(alg, problem, key=key, num_steps=T, num_seeds=seeds, params=p).metrics["simple_regret"][
                    :, -1
                ]
            )
        )

    n0 = bench.num_initial
    r_boke = final_regret(boke.BOKE(num_initial=n0))
    r_plus = final_regret(boke.BOKE(num_initial=n0, plus=True))
    r_kr = final_regret(boke.KRUCB(num_initial=n0))
    r_kr08 = final_regret(boke.KRUCB(num_initial=n0), params._replace(alpha=0.8))
    assert r_boke < 0.5 * r_kr, (r_boke, r_kr)  # 0.120 / 0.134 vs 1.368
    assert r_plus < 0.5 * r_kr, (r_plus, r_kr)  # 0.271 / 0.333 vs 1.368
    assert r_boke < 0.5 * r_kr08, (r_boke, r_kr08)  # 0.120 / 0.134 vs 0.521 / 0.441


@pytest.mark.slow
def test_density_exploration_fills_space_faster_than_uniform_at_d4():
    """BOKE paper Fig 3 / claim 6: minimising the KDE is an effective space-filling criterion.

    d = 4, fill distance at t = 100, 4 seeds, with experiments/boke/fill_distance.py's settings (DE with
    128 d candidates and 10 x 50 Adam, one uniform start point, key fold d; sup over 2^16 Sobol probes
    plus the corners; an independent LHS of size t). Measured means: DE 0.402 (seeds 0.391-0.415),
    uniform 0.569 (0.541-0.621), LHS 0.540 (0.517-0.581); the 100-seed log at t = 99: DE 0.399,
    uniform 0.573, LHS 0.565, GP exploration 0.407.
    """
    d, T, seeds = 4, 100, 4
    sobol = designs.sobol(jax.random.key(123), 2**16, d).reshape(-1, 1024, d)
    corners = jnp.asarray(list(itertools.product([0.0, 1.0], repeat=d)), dtype=sobol.dtype)

    @jax.jit
    def fill(points):  # h(X) = max over probes of min_i ||p - x_i||
        def chunk(p):
            return jnp.max(jnp.min(jnp.sqrt(jnp.sum((p[:, None] - points[None]) ** 2, -1)), 1))

        return jnp.maximum(jnp.max(jax.lax.map(chunk, sobol)), chunk(corners))

    prob = jbo.problems.from_function(lambda x: 0.0 * jnp.sum(x), np.stack([np.zeros(d), np.ones(d)]))
    key = jax.random.key(d)
    de = boke.DensityExploration(maximiser=dataclasses.replace(boke.KR_MAXIMISER, num_raw_per_dim=128))
    f_de = np.array([float(fill(p)) for p in jbo.run_seeds(de, prob, key=key, num_steps=T, num_seeds=seeds).actions])
    uniform = jbo.algorithms.RandomSearch(num_initial=1)
    f_un = np.array(
        [float(fill(p)) for p in jbo.run_seeds(uniform, prob, key=key, num_steps=T, num_seeds=seeds).actions]
    )
    f_lhs = np.array(
        [float(fill(designs.latin_hypercube(k, T, d))) for k in jax.random.split(jax.random.fold_in(key, T), seeds)]
    )
    assert f_de.mean() < 0.8 * f_un.mean(), (f_de, f_un)  # 0.402 vs 0.569 (ratio 0.71)
    assert f_de.mean() < 0.85 * f_lhs.mean(), (f_de, f_lhs)  # 0.402 vs 0.540 (ratio 0.74)
    assert f_de.max() < f_un.min(), (f_de, f_un)  # every DE seed beats every uniform seed: 0.415 < 0.541


# ------------------------------------------------------------------ SBO-KDE paper
@pytest.mark.slow
def test_sbo_kde_beats_gp_ucb_on_newsvendor():
    """SBO-KDE paper (Fig 1, Newsvendor): SBO-KDE has lower cumulative regret than context-blind GP-UCB.

    Reduced from experiments/sbo_kde/fig1.py (docs/papers/sbo-kde.md: the T = 60, M = 128 run: SBO-KDE 11.5 +- 0.6 vs GP-UCB
    16.3 +- 1.7): T = 30 evaluations (n0 = 10 shared Sobol points + 20 BO steps), M = 64 KDE samples
    and inner points, 64 raw screening points, 10 starts x 20 Adam steps, sqrt(beta) = 1.5 (default),
    6 seeds from key 100 (the script's). Regret is against the closed-form F* = 0.463943 and counts the
    shared initial design (identical for both methods). Measured: GP-UCB mean 12.84, SBO-KDE 10.94;
    paired gaps 5.01, 1.54, 1.23, 1.14, 1.24, 1.26 (SBO-KDE better on every seed; over 12 seeds it is
    better on all 12, mean gap 2.28, smallest 0.15).
    """
    prob = jbo.problems.get("sbo_kde:newsvendor")
    key, T, seeds = jax.random.key(100), 30, 6
    opts = dict(
        num_initial=10,
        num_samples=64,
        num_inner=64,
        maximiser=dataclasses.replace(jbo.algorithms.sbo_kde.PAPER_MAXIMISER, num_raw=64, num_starts=10, steps=20),
    )

    def cumulative_regret(method):
        tr = jbo.run_seeds(jbo.algorithms.get(f"sbo_kde:{method}", **opts), prob, key=key, num_steps=T, num_seeds=seeds)
        return np.asarray(tr.metrics["cumulative_regret"][:, -1])

    gp, kde = cumulative_regret("gp_ucb"), cumulative_regret("sbo_kde")
    assert kde.mean() < gp.mean() - 1.0, (kde, gp)  # 10.94 vs 12.84 (mean paired gap 1.90)
    assert np.sum(kde < gp) >= 5, (kde, gp)  # 6 of 6
