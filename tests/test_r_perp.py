"""R-PERP paper (r_perp.md): schedules, widths and the information-gain proxy against the spec's
worked values; the incremental Cholesky, the max-variance design and the batch-only mean against dense
NumPy solves; the random order's marginals and the permutation-averaged mean (spec 7.3); elimination
invariants; a stationary instance where the maximiser survives (7.2); R-GP-UCB and SW-GP-UCB replayed
against plain NumPy GP-UCB; the environment's exact B and V_T against the spec's reference instances."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo.algorithms import r_perp as ns
from jbo.problems import r_perp as pn

KEY = jax.random.key(3)


# ---------------------------------------------------------------- schedules and widths (spec 2.2, 2.4, 2.5, 4.4)
@pytest.mark.parametrize(
    "length, sizes",
    [
        (50, [8, 20, 22]),
        (100, [10, 32, 57, 1]),
        (133, [12, 40, 73, 8]),
        (491, [23, 107, 230, 131]),
        (1000, [32, 179, 424, 365]),
        (1390, [38, 230, 566, 556]),
        (2000, [45, 300, 775, 880]),
        (3204, [57, 428, 1172, 1547]),
        (5000, [71, 596, 1727, 2606]),
    ],
)
def test_batch_sizes_match_the_spec_table(length, sizes):
    assert ns.batch_sizes(length) == sizes and sum(sizes) == length


def test_schedule_arrays_cover_every_interval():
    T, H = 1000, 133
    s = ns.schedule(T, H)
    lengths = ns.interval_lengths(T, H)
    assert sum(lengths) == T and lengths[-1] == T - 7 * H and len(s.pos) == T
    starts = np.flatnonzero(s.interval_start)
    np.testing.assert_array_equal(starts, np.arange(0, T, H))
    for a, L in zip(starts, lengths):  # inside one interval: the batches of batch_sizes(L), in order
        sizes = ns.batch_sizes(L)
        b = np.flatnonzero(s.batch_start[a : a + L])
        np.testing.assert_array_equal(np.diff(np.append(b, L)), sizes)
        np.testing.assert_array_equal(s.batch_len[a : a + L], np.repeat(sizes, sizes))
        np.testing.assert_array_equal(s.pos[a : a + L], np.concatenate([np.arange(n) for n in sizes]))
        # a CB after every batch but the last (Alg. 1 line 15)
        np.testing.assert_array_equal(np.flatnonzero(s.do_update[a : a + L]), np.cumsum(sizes)[:-1] - 1)
    assert s.max_batch == max(ns.batch_sizes(H))


@pytest.mark.parametrize(
    "V, se, mat, ucb_se, ucb_mat",
    [
        (1, 5000, 2057, 352.5, 190.5),
        (2, 3204, 1234, 249.3, 134.7),
        (4, 2019, 741, 176.3, 95.2),
        (6, 1541, 550, 143.9, 77.8),
        (8, 1272, 445, 124.6, 67.3),
    ],
)
def test_restart_intervals_match_the_spec_table(V, se, mat, ucb_se, ucb_mat):
    assert ns.rperp_interval(5000, V, "se", 2) == se  # 5086 clipped to T for V = 1
    assert ns.rperp_interval(5000, V, "matern52", 2) == mat
    assert ns.ucb_interval(5000, V, "se", 2) == math.ceil(ucb_se - 0.05)
    assert ns.ucb_interval(5000, V, "matern52", 2) == math.ceil(ucb_mat - 0.05)


def test_confidence_width_of_eq8_matches_the_worked_example():
    assert ns.union_count(5000, 2019) == pytest.approx(13.37, abs=5e-3)
    L = math.log(4 * 900 * ns.union_count(5000, 2019) / 0.1)
    assert L == pytest.approx(13.08, abs=5e-3)
    b = float(ns.rperp_beta_half(2.2, 1.0, 1.0, 0.01, 0.1, 900, 5000, 2019))
    assert b == pytest.approx(2.2 * (math.sqrt(L) + 1) + 0.01 * math.sqrt(2 * L), rel=1e-12)
    assert b == pytest.approx(10.2, abs=0.05)


def test_information_gain_proxy_check_values_and_log_det():
    arms = jnp.asarray(pn.grid())
    for kernel, n, want in (("se", 196, (18.4, 66.0)), ("matern52", 110, (17.6, 96.0))):
        g, F = jax.jit(jax.vmap(lambda lam: ns.greedy_information_gain(arms, kernel, 0.5, lam, n)))(
            jnp.array([1.0, 0.01])
        )
        np.testing.assert_allclose(g[:, -1], want, rtol=0.01)
        assert np.all(np.diff(F) >= 0) and np.all(np.diff(np.diff(F)) <= 1e-12)  # monotone, concave
    # F_n = 1/2 log det(I + K_SS / lambda) of the greedy picks (chain rule), picks by dense variances
    X = pn.grid(8)
    K = pn.kernel_matrix("se", 0.5, X, X)
    lam, n = 0.1, 12
    g, F = ns.greedy_information_gain(jnp.asarray(X), "se", 0.5, lam, n)
    picks = []
    for _ in range(n):
        if picks:
            Kp = K[np.ix_(picks, picks)] + lam * np.eye(len(picks))
            var = 1.0 - np.einsum("ij,ji->i", K[:, picks], np.linalg.solve(Kp, K[picks, :]))
        else:
            var = np.ones(len(X))
        picks.append(int(np.flatnonzero(var >= var.max() - 1e-9)[0]))  # first index on (near-)ties
    logdet = np.linalg.slogdet(np.eye(n) + K[np.ix_(picks, picks)] / lam)[1]
    assert float(F[-1]) == pytest.approx(0.5 * logdet, rel=1e-10)
    np.testing.assert_allclose(g, F / (1 - math.exp(-1)))


# ---------------------------------------------------------------- incremental Cholesky and the design (2.9, 7.5)
def _dense(K, idx, y, lam):
    A = K[np.ix_(idx, idx)] + lam * np.eye(len(idx))
    mean = K[:, idx] @ np.linalg.solve(A, y)
    var = 1.0 - np.einsum("ij,ji->i", K[:, idx], np.linalg.solve(A, K[idx, :]))
    return mean, var


@pytest.mark.parametrize("kernel", ["se", "matern52"])
def test_incremental_cholesky_equals_dense_solve_with_duplicates(kernel):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    K = pn.kernel_matrix(kernel, 0.5, X, X)
    idx = np.array([3, 7, 3, 3, 11, 7, 20, 3, 39, 0, 11, 5])  # repeats, as max-variance picks give
    y = rng.normal(size=len(idx))
    lam, cap = 0.01, 16
    chol = ns.cholesky_empty(cap, 40)
    for m, j in enumerate(idx):
        chol, _, _ = ns.cholesky_add(chol, m, j, ns.kernel_column(kernel, 0.5, jnp.asarray(X), j), lam)
    ypad = jnp.zeros(chol.picks.shape[0]).at[: len(idx)].set(y)
    mean = ns.cholesky_mean(chol, ypad, len(idx))
    want_mean, want_var = _dense(K, idx, y, lam)
    np.testing.assert_allclose(chol.var, want_var, atol=1e-8)
    np.testing.assert_allclose(mean, want_mean, atol=1e-8)


def test_sliding_window_factor_equals_dense_solve_after_many_removals():
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(30, 2))
    K = pn.kernel_matrix("matern52", 0.5, X, X)
    idx, y = rng.integers(0, 30, 80), rng.normal(size=80)  # repeats included
    W, lam = 12, 0.01

    @jax.jit
    def run(idx, y):
        def step(f, t):
            f = jax.lax.cond(t >= W, ns.window_drop_oldest, lambda f: f, f)
            col = ns.kernel_column("matern52", 0.5, jnp.asarray(X), idx[t])
            return ns.window_append(f, idx[t], col, y[t], lam), None

        return jax.lax.scan(step, ns.window_empty(W, 30), jnp.arange(80))[0]

    f = run(jnp.asarray(idx), jnp.asarray(y))
    R = np.asarray(f.rows)
    want_mean, want_var = _dense(K, idx[-W:], y[-W:], lam)
    np.testing.assert_allclose(R[:, :30].T @ R[:, 30], want_mean, atol=1e-8)
    np.testing.assert_allclose(1 - (R[:, :30] ** 2).sum(0), want_var, atol=1e-8)
    L = np.asarray(f.lower)
    np.testing.assert_allclose(L @ L.T, K[np.ix_(idx[-W:], idx[-W:])] + lam * np.eye(W), atol=1e-8)


def test_max_variance_design_equals_brute_force_greedy_on_the_active_set():
    X = pn.grid(10)
    K = pn.kernel_matrix("matern52", 0.5, X, X)
    active = np.zeros(100, bool)
    active[np.random.default_rng(1).choice(100, 9, replace=False)] = True  # small set: repeats happen
    lam, n = 0.01, 30
    chol = ns.max_variance_design(
        ns.cholesky_empty(32, 100), jnp.asarray(active), n, "matern52", 0.5, jnp.asarray(X), lam
    )
    picks = []
    for _ in range(n):
        var = _dense(K, picks, np.zeros(len(picks)), lam)[1] if picks else np.ones(100)
        v = np.where(active, var, -np.inf)
        picks.append(int(np.flatnonzero(v >= v.max() - 1e-9)[0]))  # first index on (near-)ties, A11
    np.testing.assert_array_equal(np.asarray(chol.picks[:n]), picks)
    assert len(set(picks)) < n and all(active[p] for p in picks)
    np.testing.assert_allclose(chol.var, _dense(K, picks, np.zeros(n), lam)[1], atol=1e-8)


@pytest.mark.extended
@pytest.mark.parametrize("sizes", [(5, 9, 140), (40, 55)])
def test_active_design_equals_the_full_design_and_a_dense_solve(sizes):
    """R-PERP's design on the compacted active set (active_design, cost ~ m |X_j|), vmapped over active
    sets of 144 arms (5, 9: heavy repeats, on a prefix of 32 arms; 40, 55: 64; 140: all 144): (5, 9, 140)
    runs the seeds one after another (3 x 144 > 1.5 (32 + 32 + 144)), (40, 55) together at the wider
    prefix. Against the design on all arms (max_variance_design) for each set alone: the same picks and
    variances on the active set; and the batch mean and variance against a dense NumPy solve on the
    multiset of picks (duplicates), 1e-8."""
    X = pn.grid(12)
    K = pn.kernel_matrix("matern52", 0.5, X, X)
    rng = np.random.default_rng(len(sizes))
    actives = np.zeros((len(sizes), 144), bool)
    for act, k in zip(actives, sizes):
        act[rng.choice(144, k, replace=False)] = True
    lam, n = 0.01, 48
    design = jax.vmap(lambda a: ns.active_design(a, n, "matern52", 0.5, jnp.asarray(X), lam, n))
    chols, orders, counts = jax.jit(design)(jnp.asarray(actives))
    for b, active in enumerate(actives):
        full = ns.max_variance_design(
            ns.cholesky_empty(n, 144), jnp.asarray(active), n, "matern52", 0.5, jnp.asarray(X), lam
        )
        chol = jax.tree.map(lambda x: x[b], chols)
        order, count = np.asarray(orders[b]), int(counts[b])
        assert count == active.sum() and np.array_equal(order[:count], np.flatnonzero(active))
        picks = order[np.asarray(chol.picks[:n])]
        np.testing.assert_array_equal(picks, np.asarray(full.picks[:n]))
        assert active[picks].all() and (count > n or len(set(picks.tolist())) <= count)  # repeats when |X_j| < n
        y = rng.normal(size=n)
        want_mean, want_var = _dense(K, picks, y, lam)
        var = np.asarray(chol.var)[:count]
        mean = np.asarray(ns.cholesky_mean(chol, jnp.zeros(chol.picks.shape[0]).at[:n].set(y), n))[:count]
        np.testing.assert_allclose(var, np.asarray(full.var)[active], atol=1e-10)
        np.testing.assert_allclose(var, want_var[active], atol=1e-8)
        np.testing.assert_allclose(mean, want_mean[active], atol=1e-8)


# ---------------------------------------------------------------- the random order (2.6 step 3, 2.8, 7.3)
def test_query_order_is_a_uniform_permutation_of_the_first_n_slots():
    n, cap, draws = 5, 8, 4000
    perms = np.asarray(jax.vmap(lambda k: ns.query_order(k, n, cap))(jax.random.split(KEY, draws)))
    assert np.all(np.sort(perms[:, :n], 1) == np.arange(n)) and np.all(perms[:, n:] == np.arange(n, cap))
    freq = np.stack([(perms[:, :n] == s).mean(0) for s in range(n)])  # slot s queried at position m
    assert np.abs(freq - 1 / n).max() < 4 * math.sqrt(0.2 * 0.8 / draws)
    orders = {tuple(p[:n]) for p in perms}
    assert len(orders) > 100  # not a handful of fixed orders (120 possible)


def test_permutation_averaged_mean_is_the_mean_of_the_average_function():
    """Spec 7.3: for a fixed S and a deterministic sequence f_1..f_N inside the batch, the mean of mu
    over random orders equals mu(x; S, fbar(S)) (exact by linearity; Monte-Carlo error here)."""
    X = pn.grid(6)
    K = pn.kernel_matrix("se", 0.5, X, X)
    S = np.array([0, 35, 5, 30, 17, 17, 22, 9])
    N, lam = len(S), 0.01
    F = np.sin(np.arange(N)[:, None] * 0.7 + 3 * X[:, 0][None]) + X[:, 1][None] * np.arange(N)[:, None] / N  # f_m(x)
    fbar = F.mean(0)
    chol = ns.cholesky_empty(N, 36)
    cap = chol.picks.shape[0]
    for m, j in enumerate(S):
        chol = ns.cholesky_add(chol, m, j, ns.kernel_column("se", 0.5, jnp.asarray(X), j), lam)[0]

    def mean_for(key):
        perm = ns.query_order(key, N, cap)[:N]  # perm[m]: slot queried at time m, observed under f_m
        y = jnp.zeros(cap).at[perm].set(jnp.asarray(F)[jnp.arange(N), jnp.asarray(S)[perm]])
        return ns.cholesky_mean(chol, y, N)

    mus = np.asarray(jax.jit(jax.vmap(mean_for))(jax.random.split(KEY, 3000)))
    want = _dense(K, S, fbar[S], lam)[0]
    se = mus.std(0) / math.sqrt(len(mus))
    assert np.all(np.abs(mus.mean(0) - want) < 5 * se + 1e-12)
    assert np.abs(_dense(K, S, F[np.arange(N), S], lam)[0] - want).max() > 10 * se.max()  # the order matters


# ---------------------------------------------------------------- elimination (2.6 step 7)
def test_elimination_invariants():
    rng = np.random.default_rng(2)
    for _ in range(50):
        active = jnp.asarray(rng.uniform(size=60) < 0.7).at[rng.integers(60)].set(True)
        mean, sd, b = jnp.asarray(rng.normal(size=60)), jnp.asarray(rng.uniform(0, 0.5, 60)), rng.uniform(0, 3)
        new = ns.eliminate(active, mean, sd, b)
        assert bool(jnp.all(~new | active)) and bool(jnp.any(new))  # nested, never empty
        lcb = np.where(active, mean - b * sd, -np.inf)
        assert bool(new[int(np.argmax(lcb))])  # the best lcb survives
        keep = np.asarray(active) & (np.asarray(mean + b * sd) >= lcb.max())  # >=, over the active set
        np.testing.assert_array_equal(new, keep)


@pytest.mark.extended
def test_stationary_instance_keeps_the_maximiser_and_its_regret_flattens():
    """Spec 7.2: f_t = f^(1) for all t and C = 0 (no drift, so the permutation term of Eq. 8 is not
    needed): the true maximiser survives in all 8 seeds, the active set shrinks monotonically, and the
    last 100 steps cost far less regret per step than the first (space-filling) batch."""
    T = 400
    full = pn.kernel_drift(0, "se", horizon=T, grid_size=15)
    vals = np.asarray(full.values)[:1]
    env = pn.drifting(full.arms, vals, change_points=(), noise_std=0.01, rkhs_norm=pn.known(full)["rkhs_norm"])
    tr = jbo.run_seeds(
        ns.RPERP(horizon=T, restart=False), env, key=KEY, num_steps=T, num_seeds=8, params=ns.RPERPParams(C=0.0)
    )
    assert np.asarray(tr.final_state.active)[:, int(np.argmax(vals[0]))].all()
    n_active = np.asarray(tr.info.num_active)
    assert np.all(np.diff(n_active, axis=1) <= 0) and n_active[:, -1].max() < 50  # of 225
    r = np.asarray(tr.metrics["regret"])
    assert r[:, -100:].mean() < 0.15 * r[:, : ns.batch_sizes(T)[0]].mean()


@pytest.mark.extended
def test_rperp_restarts_reset_the_active_set_and_permute_false_queries_in_selection_order():
    T, H = 300, 100
    env = pn.kernel_drift(1, "matern52", horizon=T, grid_size=12)
    p = ns.RPERPParams(C=0.1)
    tr = jbo.run(ns.RPERP(horizon=T, restart_interval=H, kernel="matern52"), env, key=KEY, num_steps=T, params=p)
    n = np.asarray(tr.info.num_active)
    for a in range(0, T, H):
        assert n[a] == 144 and np.all(np.diff(n[a : a + H]) <= 0)
    assert n.min() < 144  # something was eliminated
    plain = jbo.run(
        ns.RPERP(horizon=T, restart_interval=H, kernel="matern52", permute=False), env, key=KEY, num_steps=T, params=p
    )
    s = ns.schedule(T, H)
    first = np.asarray(plain.actions[: s.batch_len[0]])
    X = pn.grid(12)
    chol = ns.max_variance_design(
        ns.cholesky_empty(s.max_batch, 144), jnp.ones(144, bool), s.batch_len[0], "matern52", 0.5, jnp.asarray(X), 0.01
    )
    np.testing.assert_array_equal(first, np.asarray(chol.picks[: s.batch_len[0]]))
    shuffled = np.asarray(tr.actions[: s.batch_len[0]])
    assert sorted(shuffled) == sorted(first) and not np.array_equal(shuffled, first)


# ---------------------------------------------------------------- GP-UCB baselines replayed in NumPy (4.2, 4.3)
def _replay_ucb(X, kernel, actions, ys, lam, beta_half, visible):
    """The arm plain GP-UCB picks at each step from the observations `visible(t)` (dense solves)."""
    K = pn.kernel_matrix(kernel, 0.5, X, X)
    out = []
    for t in range(len(actions)):
        idx = visible(t)
        if len(idx):
            mean, var = _dense(K, actions[idx], ys[idx], lam)
        else:
            mean, var = np.zeros(len(X)), np.ones(len(X))
        out.append(int(np.argmax(mean + beta_half * np.sqrt(np.maximum(var, 0)))))
    return np.array(out)


@pytest.mark.parametrize("kind, every", [("restart", None), ("restart", 25), ("window", 17), ("refactor", 17)])
def test_ucb_baselines_equal_numpy_gp_ucb(kind, every):
    """R-GP-UCB with H = T is plain GP-UCB; with H = 25 it forgets every 25 steps; SW-GP-UCB sees the
    last W (its Givens-updated factor and the refactorising reference path)."""
    T = 60
    env = pn.kernel_drift(2, "se", horizon=T, grid_size=10, noise_std=0.1)
    if kind == "restart":
        alg = ns.RGPUCB(horizon=T, restart_interval=every or T)
        visible = lambda t: np.arange(t - t % alg.restart_interval, t)  # noqa: E731
    else:
        alg = ns.SWGPUCB(horizon=T, window=every, refactor=kind == "refactor")
        visible = lambda t: np.arange(max(0, t - every), t)  # noqa: E731
    tr = jbo.run(alg, env, key=KEY, num_steps=T)
    a, b = np.asarray(tr.actions), float(tr.info.beta_half[0])
    ys = np.asarray(tr.observations)
    np.testing.assert_array_equal(a, _replay_ucb(pn.grid(10), "se", a, ys, 0.01, b, visible))
    n = alg.restart_interval if kind == "restart" else every
    g = float(ns.greedy_information_gain(jnp.asarray(pn.grid(10)), "se", 0.5, 0.01, n)[0][-1])
    assert b == pytest.approx(pn.known(env)["rkhs_norm"] + 0.1 / 0.1 * math.sqrt(2 * (g + math.log(10))), rel=1e-12)


# ---------------------------------------------------------------- environments (5.1, A4, A5)
@pytest.mark.parametrize(
    "kernel, want",
    [("se", [(1.82, 3.25), (0.95, 1.86), (3.03, 7.79)]), ("matern52", [(1.76, 3.02), (1.09, 1.83), (2.93, 7.28)])],
)
def test_reference_instances_have_the_spec_rkhs_norms_and_variations(kernel, want):
    for seed, (B, V) in enumerate(want):
        k = pn.known(pn.kernel_drift(seed, kernel))
        assert round(k["rkhs_norm"], 2) == B and round(k["variation"], 2) == V and k["noise_std"] == 0.01


def _np_kernel(kernel, lengthscale, A, B):
    """The spec's kernels written out: SE exp(-|a - b|^2 / (2 l^2)); Matern-5/2 (1 + sqrt5 r/l + 5 r^2/(3 l^2))
    exp(-sqrt5 r/l)."""
    sq = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    if kernel == "se":
        return np.exp(-sq / (2 * lengthscale**2))
    s = math.sqrt(5) * np.sqrt(sq) / lengthscale
    return (1 + s + 5 * sq / (3 * lengthscale**2)) * np.exp(-s)


def test_exact_rkhs_norm_and_values_against_independent_forms():
    inst = pn.sample_instance(4)
    for kernel in ("se", "matern52"):
        for a, c in zip(*inst):
            np.testing.assert_allclose(pn.kernel_matrix(kernel, 0.5, c, c), _np_kernel(kernel, 0.5, c, c), atol=1e-14)
        # representer form: f = sum_u a_u k(., c_u) interpolates its own values f(c) = K a with minimum norm,
        # so ||f||^2 = f(c)^T K^{-1} f(c)
        norms = pn.rkhs_norms(inst, kernel, 0.5)
        for b, (a, c) in enumerate(zip(*inst)):
            K = _np_kernel(kernel, 0.5, c, c)
            fc = K @ a
            assert norms[b] == pytest.approx(math.sqrt(fc @ np.linalg.solve(K, fc)), rel=1e-8)
    env = pn.kernel_drift(4, "se", horizon=500)
    tr = jbo.run(jbo.algorithms.RandomSearch(num_initial=0), env, key=KEY, num_steps=500)
    vals = np.stack([_np_kernel("se", 0.5, pn.grid(), c) @ a for a, c in zip(*inst)])  # f^(b) at every arm
    seg = np.searchsorted([100, 200], np.arange(500), side="right")  # f^(1) on t < T/5, f^(2) to 2T/5
    a = np.asarray(tr.actions)
    np.testing.assert_allclose(tr.metrics["regret"], vals.max(1)[seg] - vals[seg, a], atol=1e-12)


def test_linear_drift_variation_is_the_realised_sum_of_step_changes():
    env = pn.kernel_drift(1, "matern52", horizon=300, grid_size=10, drift="linear")
    per_step = np.stack([np.asarray(env.values_at(t)) for t in range(300)])
    assert pn.known(env)["variation"] == pytest.approx(np.abs(np.diff(per_step, axis=0)).max(1).sum(), rel=1e-10)
    np.testing.assert_allclose(per_step[0], env.anchors[0])
    np.testing.assert_allclose(per_step[-1], env.anchors[-1])


@pytest.mark.extended  # vmapped == looped on GP-UCB: test_exactness
def test_run_instances_equals_one_run_per_seed():
    """Vmapped (run_instances groups seeds 0 and 1) == one run per seed; 144 arms, so R-PERP's design reads
    its rows over different prefixes of arms, with per-seed active sets."""
    T = 60
    envs = [pn.kernel_drift(s, "se", horizon=T, grid_size=12) for s in range(3)]
    algs = [ns.RPERP(horizon=T, variation=v) for v in (2.0, 2.0, 5.0)]  # seeds 0, 1 share H: one program
    keys = jax.random.split(KEY, 3)
    p = ns.RPERPParams(C=0.1)
    trace, groups = pn.run_instances(algs, envs, keys=keys, num_steps=T, params=p)
    metrics, info = trace.metrics, trace.info
    assert sorted(len(g["seeds"]) for g in groups) == [1, 2]
    for s in range(3):
        one = jbo.run(algs[s], envs[s], key=keys[s], num_steps=T, params=p)
        np.testing.assert_allclose(metrics["cumulative_regret"][s], one.metrics["cumulative_regret"], atol=1e-10)
        np.testing.assert_array_equal(info.num_active[s], one.info.num_active)
    assert not np.array_equal(info.num_active[0], info.num_active[1])  # the grouped seeds' sets differ


# ---------------------------------------------------------------- bad input
def test_bad_input_raises_clear_errors():
    box = jbo.problems.get("branin")
    with pytest.raises(ValueError, match="finite arm set"):
        jbo.run(ns.RPERP(horizon=10), box, key=KEY, num_steps=10)
    env = pn.kernel_drift(0, horizon=50, grid_size=5)
    with pytest.raises(ValueError, match="built for T = 40"):
        jbo.run(ns.RGPUCB(horizon=40), env, key=KEY, num_steps=50)
    with pytest.raises(ValueError, match="unknown kernel"):
        ns.RPERP(kernel="rbf")
    with pytest.raises(ValueError, match="exactly one of"):
        ns.SWGPUCB(horizon=50, variation=2.0, window=10)
    with pytest.raises(ValueError, match="V_T"):
        ns.RPERP(horizon=50, variation=-1.0)
    with pytest.raises(ValueError, match=r"\[1, T = 50\]"):
        ns.RGPUCB(horizon=50, restart_interval=80)
    with pytest.raises(ValueError, match="inside the horizon"):
        pn.kernel_drift(0, horizon=50, change_points=(10, 60))
    with pytest.raises(ValueError, match="knots"):
        pn.drifting(pn.grid(5), np.zeros((2, 25)), knots=(5, 5))


@pytest.mark.slow
def test_reference_numbers_of_spec_5_4_on_the_reference_instances():
    """End to end (spec 9.6): SE, lambda = 0.01, the three reference instances, T = 5000: mean R_t of
    R-GP-UCB and R-PERP (C = 0.1) within 10% of the spec author's runs (other random streams)."""
    T = 5000
    envs = [pn.kernel_drift(s, "se", horizon=T) for s in range(3)]
    V = [pn.known(e)["variation"] for e in envs]
    keys = jax.random.split(jax.random.key(2024), 3)
    for algs, p, want in (
        ([ns.RGPUCB(T, variation=v) for v in V], ns.UCBParams(lam=0.01), (50, 105, 199, 292)),
        ([ns.RPERP(T, variation=v) for v in V], ns.RPERPParams(C=0.1, lam=0.01), (379, 723, 1377, 1922)),
    ):
        metrics = pn.run_instances(algs, envs, keys=keys, num_steps=T, params=p)[0].metrics
        got = metrics["cumulative_regret"][:, [999, 1999, 2999, 4999]].mean(0)
        np.testing.assert_allclose(got, want, rtol=0.1)
