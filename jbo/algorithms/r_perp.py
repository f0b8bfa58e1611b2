"""R-PERP (Iwazaki & Takeno, "Near-Optimal Algorithm for Non-Stationary Kernelized Bandits") and its
baselines, on a finite candidate set (a jbo.spaces.FiniteArms action space).

Algorithm 1 (R-PERP), as built here:

    for each interval i of length T_i = min(H, T - (i-1) H):           # restart: forget everything
        X_1 <- all arms;  N_0 <- 1
        for each batch j:  N_j <- min(ceil(sqrt(T_i N_{j-1})), T_i - used)   # batch_schedule
            S_j <- N_j greedy max-variance picks in X_j, conditioning on S_j only (a multiset)
            query S_j in a uniformly random order                      # the permutation
            if the interval is used up: next interval                  # no CB after the last batch
            mu, sigma <- KRR on this batch's (x, y) only (regulariser lambda)
            X_{j+1} <- {x in X_j : mu + b sigma >= max_{X_j} (mu - b sigma)},  b = beta_T^{1/2} (Eq. 8)

The restart interval H (Thm 5) and the batch schedule depend only on (T, H): they are static, built
in Python (:func:`schedule`) and indexed by the engine's unbatched step index, so the selection at a
batch start and the elimination at a batch end are real branches under ``vmap`` over seeds
(the spec's Design A). The greedy picks use an incremental Cholesky on the arm set (spec 2.9): rows
v_m(x) and pivots d_m with sigma^2_m = sigma^2_{m-1} - v_m^2, mean mu = sum_m v_m z_m, z = L^{-1} y.

Cost (ours; the picks are the spec's). Picks, the batch mean and the elimination only ever look at the
active set X_j, so the design runs on the active arms moved to the front (:func:`active_design`), and
a pick's projection reads only a static prefix of W >= |X_j| arms (32, 64, ..., or all; ``lax.switch``):
a batch costs ~ sum_m m W instead of sum_m m |X| (SE batches reach ~1000 picks, mostly repeats on a
small X_j). |X_j| differs per seed, and a batched prefix would turn every block read into a gather,
so the design has its own vmap rule (``jax.custom_batching.custom_vmap``): the seeds run together at
the widest seed's prefix unless that reads more than 1.5 times the entries of running them one after
another, each at its own prefix. The rest of the step is vmapped as usual.

Baselines: R-GP-UCB (restart every H_ucb steps) and SW-GP-UCB (the last W observations), both with
beta^{1/2} = B + (rho / sqrt(lambda)) sqrt(2 (gamma_hat_n + ln(1/delta))) and gamma_hat from the greedy
information-gain proxy (spec 4.2-4.4, A8-A9); random search is jbo.algorithms.RandomSearch.

Ablations (ours, not in the paper): ``RPERP(restart=False)`` (one interval, H = T: phased elimination
with the permutation but no restarts) and ``RPERP(permute=False)`` (queries in selection order).

Known quantities. The paper's learner knows B (RKHS-norm bound), V_T (variation budget) and rho
(noise). B and rho are read per seed from the environment's side information (``spec.info``:
"rkhs_norm", "noise_std") when ``use_side_info`` (the default), else from Params. V_T enters only
H (and H_ucb, W), which must be static: pass ``variation=`` (a number) or ``restart_interval=``
directly. Seeds whose realised V_T differ therefore need one program per distinct H: see
:func:`jbo.problems.r_perp.run_instances`, which groups seeds by their algorithm (the spec's
"group seeds by H"). The spec's Design B (micro-steps with per-seed schedules) is not built: the
engine's scan takes one action per step.

Decisions (spec 8): C and lambda explicit (theory-literal C = 1; reproduction preset C = 0.1,
lambda = 0.01, rho = 0.01: :data:`PRESETS`), H clipped to [2, T], H_ucb and W rounded up and clipped
to [1, T], Q_{T,H} uses the real log2 log2 H (A10), ties go to the first index (A11), picks may
repeat (A12), gamma_hat_n with n = H_ucb or W (A8). Ties (A11) are resolved within 1e-9
(:func:`first_argmax`): the grid's symmetries make exact ties, and a vmapped product rounds differently.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import data, gp, kernels
from jbo.protocols import Algorithm, Spec, Step
from jbo.spaces import FiniteArms

KERNELS = ("se", "matern52")
NU = {"se": math.inf, "matern52": 2.5}
PRESETS = {"theory": dict(C=1.0, lam=0.01), "reproduction": dict(C=0.1, lam=0.01)}


# ---------------------------------------------------------------- schedules and widths (host, static)
def _ceil_sqrt(n: int) -> int:
    """ceil(sqrt(n)) exactly for a positive integer."""
    return math.isqrt(n - 1) + 1


def batch_sizes(length: int) -> list[int]:
    """Alg. 1 line 5: N_j = min(ceil(sqrt(T_i N_{j-1})), T_i - used), N_0 = 1; sums to T_i."""
    if length < 1:
        raise ValueError(f"an interval needs length >= 1, got {length}")
    sizes, prev, used = [], 1, 0
    while used < length:
        n = min(_ceil_sqrt(length * prev), length - used)
        sizes.append(n)
        used, prev = used + n, n
    return sizes


def interval_lengths(horizon: int, restart_interval: int) -> list[int]:
    """T^(i) = min(H, T - (i-1) H) for i = 1..ceil(T/H)."""
    return [min(restart_interval, horizon - s) for s in range(0, horizon, restart_interval)]


class Schedule(NamedTuple):
    """Per-step arrays (length T, numpy) of Algorithm 1's static schedule, and N_max."""

    interval_start: np.ndarray  # bool: first step of an interval (reset the active set)
    batch_start: np.ndarray  # bool: first step of a batch (select N_j points, draw the order)
    batch_len: np.ndarray  # int32: N_j of the batch the step is in
    pos: np.ndarray  # int32: query index m inside the batch (0-based)
    do_update: np.ndarray  # bool: last step of a batch that is not its interval's last (CB + elimination)
    max_batch: int  # N_max over the run


@functools.lru_cache(maxsize=64)
def schedule(horizon: int, restart_interval: int) -> Schedule:
    if not (isinstance(horizon, int) and horizon >= 1):
        raise ValueError(f"the horizon T must be a positive int, got {horizon!r}")
    if not (isinstance(restart_interval, int) and 1 <= restart_interval):
        raise ValueError(f"the restart interval H must be a positive int, got {restart_interval!r}")
    cols = {k: [] for k in ("interval_start", "batch_start", "batch_len", "pos", "do_update")}
    for length in interval_lengths(horizon, restart_interval):
        sizes = batch_sizes(length)
        for j, n in enumerate(sizes):
            last = j == len(sizes) - 1
            for m in range(n):
                cols["interval_start"].append(j == 0 and m == 0)
                cols["batch_start"].append(m == 0)
                cols["batch_len"].append(n)
                cols["pos"].append(m)
                cols["do_update"].append(m == n - 1 and not last)
    arr = {
        k: np.asarray(v, dtype=bool if k in ("interval_start", "batch_start", "do_update") else np.int32)
        for k, v in cols.items()
    }
    return Schedule(**arr, max_batch=int(arr["batch_len"].max()))


def _check_kernel(kernel: str) -> str:
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {KERNELS}")
    return kernel


def _check_positive(name, value):
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def rperp_interval(horizon: int, variation: float, kernel: str, dim: int) -> int:
    """Thm 5's H (spec 2.2), clipped to [2, T] (A7).

    SE: ceil(T^{2/3} V^{-2/3} ln(T)^{(d+2)/3}); Matern-nu: ceil((T/V)^{(2nu+d)/(3nu+d)} ln(T)^{(4nu+d)/(6nu+2d)}).
    Unknown V_T (App. D): pass variation=1."""
    _check_positive("the variation budget V_T", variation)
    T, d = float(horizon), dim
    if _check_kernel(kernel) == "se":
        h = T ** (2 / 3) * variation ** (-2 / 3) * math.log(T) ** ((d + 2) / 3)
    else:
        nu = NU[kernel]
        h = (T / variation) ** ((2 * nu + d) / (3 * nu + d)) * math.log(T) ** ((4 * nu + d) / (6 * nu + 2 * d))
    return int(min(max(math.ceil(h), 2), horizon))


def ucb_interval(horizon: int, variation: float, kernel: str, dim: int) -> int:
    """H_ucb = W = ceil(gamma_tilde_T^{1/4} (T/V)^{1/2}), clipped to [1, T] (spec 4.2-4.3, A6);
    gamma_tilde = ln^{d+1} T (SE), T^{d/(2nu+d)} ln^{2nu/(2nu+d)} T (Matern)."""
    _check_positive("the variation budget V_T", variation)
    T, d = float(horizon), dim
    if _check_kernel(kernel) == "se":
        g = math.log(T) ** (d + 1)
    else:
        nu = NU[kernel]
        g = T ** (d / (2 * nu + d)) * math.log(T) ** (2 * nu / (2 * nu + d))
    return int(min(max(math.ceil(g**0.25 * math.sqrt(T / variation)), 1), horizon))


def union_count(horizon: int, restart_interval: int) -> float:
    """Q_{T,H} = ceil(T/H) (1 + log2 log2 H) of Eq. 8 (the paper's real-valued form, A10)."""
    h = max(restart_interval, 2)
    return math.ceil(horizon / restart_interval) * (1.0 + math.log2(max(math.log2(h), 1e-300)))


def rperp_beta_half(rkhs_norm, C, lam, noise_std, delta, num_arms: int, horizon: int, restart_interval: int):
    """Eq. 8: b = B (C sqrt(L / lambda) + 1) + (rho / sqrt(lambda)) sqrt(2 L), L = ln(4 |X| Q_{T,H} / delta).
    Traceable in B, C, lambda, rho, delta."""
    L = jnp.log(4.0 * num_arms * union_count(horizon, restart_interval) / delta)
    return rkhs_norm * (C * jnp.sqrt(L / lam) + 1.0) + noise_std / jnp.sqrt(lam) * jnp.sqrt(2.0 * L)


def ucb_beta_half(rkhs_norm, gamma, lam, noise_std, delta):
    """Spec A9: B + (rho / sqrt(lambda)) sqrt(2 (gamma + ln(1/delta)))."""
    return rkhs_norm + noise_std / jnp.sqrt(lam) * jnp.sqrt(2.0 * (gamma + jnp.log(1.0 / delta)))


# ---------------------------------------------------------------- pieces (pure, traceable)
def kernel_column(kernel: str, lengthscale, arms, j):
    """k(x, arms[j]) for every arm x: (K,). Unit prior variance (k(x, x) = 1, Asm. 2)."""
    return kernels.cross(kernel, kernels.KernelParams(lengthscale, 1.0), arms[j], arms)


class Cholesky(NamedTuple):
    """Incremental Cholesky of K_SS + lambda I on the arm set (spec 2.9), for a multiset S of picks.

    rows[m] = v_m over the arms (zero for m >= n), pivots[m] = d_m (1 beyond n), var = sigma^2(.; S),
    picks[m] = the arm index of the m-th point of S. L[m, l] = rows[l, picks[m]] (l < m), L[m, m] = d_m."""

    rows: jax.Array  # (N_max, K)
    pivots: jax.Array  # (N_max,)
    var: jax.Array  # (K,)
    picks: jax.Array  # (N_max,) int32


BLOCK = 64  # rows of the incremental Cholesky are stored and read in blocks of this many


def cholesky_empty(capacity: int, num_arms: int) -> Cholesky:
    """An empty factor for up to `capacity` points (rounded up to a multiple of BLOCK)."""
    cap = -(-capacity // BLOCK) * BLOCK
    return Cholesky(jnp.zeros((cap, num_arms)), jnp.ones((cap,)), jnp.ones((num_arms,)), jnp.zeros((cap,), jnp.int32))


MIN_COLS = 32  # the narrowest prefix of arms the design works on when only the leading arms are active


def _prefix_widths(num_arms: int) -> list[int]:
    """Static prefix widths MIN_COLS, 2 MIN_COLS, 4 MIN_COLS, ... (< num_arms), then num_arms."""
    widths, w = [], MIN_COLS
    while w < num_arms:
        widths.append(w)
        w *= 2
    return widths + [num_arms]


def _projection(rows, j, m, width=None):
    """sum_{l < m} v_l v_l(x_j) over the first `width` arms (static; default all), reading only the
    blocks of rows that can be non-zero (rows >= m are zero): the cost of a pick grows with m instead
    of the capacity, and with the width instead of |X|."""
    width = rows.shape[1] if width is None else width

    def block(b, acc):
        blk = jax.lax.dynamic_slice(rows, ((b * BLOCK).astype(jnp.int32), jnp.int32(0)), (BLOCK, width))
        return acc + blk.T @ blk[:, j]

    return jax.lax.fori_loop(0, (m + BLOCK - 1) // BLOCK, block, jnp.zeros(width, rows.dtype))


def cholesky_add(chol: Cholesky, m, j, column, lam, width: int | None = None):
    """Add arm j (its kernel column over the arms) as the m-th point: returns (chol, v_m, d_m).

    c = k(., x_j) - sum_{l<m} v_l v_l(x_j), d = sqrt(sigma^2(x_j) + lambda), v_m = c / d,
    sigma^2 <- max(sigma^2 - v_m^2, 0). width (static, optional): only the first `width` arms are
    updated (column has `width` entries, j < width; the rest of rows[m] and var is left as it was)."""
    K = chol.rows.shape[1]
    width = K if width is None else width
    j = jnp.asarray(j, jnp.int32)
    c = column - _projection(chol.rows, j, m, width)
    d = jnp.sqrt(chol.var[j] + lam)
    v = c / d
    if width == K:
        rows, var = chol.rows.at[m].set(v), jnp.maximum(chol.var - v * v, 0.0)
    else:
        rows = jax.lax.dynamic_update_slice(chol.rows, v[None], (jnp.asarray(m, jnp.int32), jnp.int32(0)))
        var = chol.var.at[:width].set(jnp.maximum(chol.var[:width] - v * v, 0.0))
    return Cholesky(rows, chol.pivots.at[m].set(d), var, chol.picks.at[m].set(j)), v, d


def cholesky_mean(chol: Cholesky, y, n):
    """mu(x) = k(x, S)^T (K_SS + lambda I)^{-1} y over the arms, from the first n points (y aligned with picks).

    Forward substitution z_m = (y_m - sum_{l<m} v_l(x_m) z_l) / d_m (z_l = 0 for l >= m), then mu = rows^T z."""

    def body(m, z):
        return z.at[m].set((y[m] - chol.rows[:, chol.picks[m]] @ z) / chol.pivots[m])

    z = jax.lax.fori_loop(0, n, body, jnp.zeros_like(y))
    return chol.rows.T @ z


TIE_TOL = 1e-9  # variances within this of the maximum count as tied (the grid's symmetries make exact ties)


def first_argmax(scores, mask=None, tol: float = TIE_TOL):
    """The first index whose score is within `tol` of the maximum over `mask` (A11: first index on ties).

    A tolerance rather than exact equality: symmetric points of a grid have equal variances in exact
    arithmetic, and a batched (vmapped) matrix product rounds differently from an unbatched one, so an
    exact argmax would let vmapped and looped runs pick different members of a tie."""
    s = scores if mask is None else jnp.where(mask, scores, -jnp.inf)
    return jnp.argmax(s >= jnp.max(s) - tol).astype(jnp.int32)


def max_variance_design(chol: Cholesky, active, n, kernel, lengthscale, arms, lam) -> Cholesky:
    """Alg. 1 lines 6-10: n greedy picks x_m = argmax_{x in active} sigma^2(x; S) (first index on ties)."""

    def pick(m, chol):
        j = first_argmax(chol.var, active)
        return cholesky_add(chol, m, j, kernel_column(kernel, lengthscale, arms, j), lam)[0]

    return jax.lax.fori_loop(0, n, pick, chol)


def compact_active(active):
    """(order, count): order lists the active arms first, each group in increasing arm index (a stable
    sort, so "the first index on ties" is the same arm after compaction), count = |active|."""
    return jnp.argsort(~active, stable=True).astype(jnp.int32), jnp.sum(active).astype(jnp.int32)


def _active_design(active, n, lengthscale, arms, lam, num_cols, *, kernel: str, capacity: int):
    """The design on the compacted arms, every pick computed on the smallest static prefix of
    W >= num_cols (>= |X_j|) arms (``lax.switch`` over :func:`_prefix_widths`, once per design)."""
    order, count = compact_active(active)
    arms_c = arms[order]
    mask = jnp.arange(arms.shape[0]) < count
    widths = _prefix_widths(arms.shape[0])

    def design(width):
        def pick(m, chol):
            j = first_argmax(chol.var[:width], mask[:width])
            return cholesky_add(chol, m, j, kernel_column(kernel, lengthscale, arms_c[:width], j), lam, width)[0]

        return lambda chol: jax.lax.fori_loop(jnp.int32(0), n, pick, chol)

    index = jnp.searchsorted(jnp.asarray(widths[:-1], jnp.int32), num_cols, side="left")
    chol = jax.lax.switch(index, [design(w) for w in widths], cholesky_empty(capacity, arms.shape[0]))
    return chol, order, count


TOGETHER = 1.5  # vmapped seeds share the widest prefix while S W_max <= TOGETHER sum_s W_s: batched reads are
# cheaper per entry than one seed at a time (5 seeds, T = 5000, 2 cores: 1, 1.5, 2 gave R-PERP / R-GP-UCB
# 1.60, 1.48, 1.96 on SE and 1.78, 1.56, 1.60 on Matern)


def active_design(active, n, kernel: str, lengthscale, arms, lam, capacity: int):
    """:func:`max_variance_design` from an empty factor, computed on the active arms only: the same
    picks (first index on ties), the same variances on X_j, at a cost ~ sum_m m |X_j| (not m |X|).

    The active arms are moved to the front (:func:`compact_active`) and each pick's projection reads
    only a prefix of W >= |X_j| arms of the rows (:func:`_projection`). Returns (chol, order, count):
    chol is over the compacted arms (chol.picks[m] is a position p, the arm is order[p]); entries of
    chol.rows / chol.var at positions >= count are meaningless (R-PERP never reads them).

    Under ``vmap`` (seeds with different X_j) the prefix must stay unbatched, or every block read
    becomes a gather; the batching rule (``jax.custom_batching.custom_vmap``) therefore runs, per
    batch, all seeds together at the widest seed's prefix W_max while S W_max <= TOGETHER sum_s W_s
    (batched work is cheaper per entry), else the seeds one after another (``lax.map``) each at its
    own prefix. Both are exact; the choice is a real branch (it depends only on the batch's counts).
    Under a second, outer ``vmap`` (a Params sweep around the seeds) that choice and the prefix
    become batched: still exact, slower."""
    K = arms.shape[-2]
    core = functools.partial(_active_design, kernel=kernel, capacity=capacity)
    args = (
        jnp.asarray(active, bool),
        jnp.asarray(n, jnp.int32),
        jnp.asarray(lengthscale, jnp.float64),
        jnp.asarray(arms),
        jnp.asarray(lam, jnp.float64),
    )
    f = jax.custom_batching.custom_vmap(lambda *a: core(*a, jnp.sum(a[0]).astype(jnp.int32)))

    @f.def_vmap
    def rule(axis_size, in_batched, *a):
        axes = tuple(0 if b else None for b in in_batched)
        counts = jnp.sum(a[0], axis=-1).astype(jnp.int32)

        def together(a):  # every seed reads the widest seed's prefix
            return jax.vmap(core, in_axes=axes + (None,), axis_size=axis_size)(*a, jnp.max(counts))

        if not in_batched[0]:  # one active set for all: nothing to gain by running them apart
            out = together(a)
        else:

            def apart(a):
                def one(xs):
                    it = iter(xs)
                    return core(*[next(it) if b else x for b, x in zip(in_batched, a)], next(it))

                return jax.lax.map(one, tuple(x for b, x in zip(in_batched, a) if b) + (counts,))

            widths = jnp.asarray(_prefix_widths(K), jnp.int32)
            w = widths[jnp.searchsorted(widths[:-1], counts, side="left")]
            out = jax.lax.cond(axis_size * jnp.max(w) <= TOGETHER * jnp.sum(w), together, apart, a)
        return out, jax.tree.map(lambda _: True, out)

    return f(*args)


def eliminate(active, mean, sd, beta_half):
    """Alg. 1 line 20: keep x in active with ucb(x) >= max_{active} lcb (never empty: the lcb maximiser stays)."""
    best_lcb = jnp.max(jnp.where(active, mean - beta_half * sd, -jnp.inf))
    return active & (mean + beta_half * sd >= best_lcb)


def query_order(key, n, capacity: int):
    """A uniformly random order of the first n slots: perm[m] = the slot queried m-th (slots >= n last)."""
    u = jnp.where(jnp.arange(capacity) < n, jax.random.uniform(key, (capacity,)), jnp.inf)
    return jnp.argsort(u).astype(jnp.int32)


def greedy_information_gain(arms, kernel: str, lengthscale, lam, num: int):
    """Spec 4.4: greedy uncertainty sampling x_s = argmax sigma^2_{s-1} on the arms; returns
    (gamma_hat (num,), F (num,)) with F_n = sum_{s<=n} 1/2 ln(1 + sigma^2_{s-1}(x_s) / lambda) and
    gamma_hat_n = F_n / (1 - 1/e) (submodularity: gamma_n <= gamma_hat_n). Traceable in lambda, lengthscale."""
    chol = cholesky_empty(num, arms.shape[0])

    def step(chol, m):
        j = first_argmax(chol.var)
        gain = 0.5 * jnp.log1p(chol.var[j] / lam)
        return cholesky_add(chol, m, j, kernel_column(kernel, lengthscale, arms, j), lam)[0], gain

    _, gains = jax.lax.scan(step, chol, jnp.arange(num))
    F = jnp.cumsum(gains)
    return F / (1.0 - math.exp(-1.0)), F


def _known(spec: Spec, params, use_side_info: bool):
    """(B, rho): from the environment's side information when told (and use_side_info), else Params."""
    info = spec.info if use_side_info else {}
    B = jnp.asarray(info.get("rkhs_norm", params.rkhs_norm), jnp.float64)
    rho = jnp.asarray(info.get("noise_std", params.noise_std), jnp.float64)
    return B, rho


def _arms(spec: Spec, who: str):
    if not isinstance(spec.space, FiniteArms):
        raise ValueError(f"{who} works on a finite arm set (jbo.spaces.FiniteArms); got {type(spec.space).__name__}")
    return spec.space.arms


def _horizon_check(spec: Spec, horizon: int, who: str):
    if spec.num_steps != horizon:
        raise ValueError(
            f"{who} was built for T = {horizon} steps (its schedule depends on T); the run has {spec.num_steps}"
        )


def _resolve_interval(horizon, variation, interval, rule, kernel, dim, what):
    if not (isinstance(horizon, (int, np.integer)) and horizon >= 1):
        raise ValueError(f"horizon (T) must be a positive int, got {horizon!r}")
    if (variation is None) == (interval is None):
        raise ValueError(f"give exactly one of variation (V_T, sets {what} by the paper's formula) or {what}")
    if interval is not None:
        if not (isinstance(interval, (int, np.integer)) and 1 <= interval <= horizon):
            raise ValueError(f"{what} must be an int in [1, T = {horizon}], got {interval!r}")
        return int(interval)
    return rule(int(horizon), float(variation), kernel, dim)


# ---------------------------------------------------------------- R-PERP
class RPERPParams(NamedTuple):
    """Sweepable numbers. rkhs_norm / noise_std are used only when the environment does not tell them."""

    C: jax.Array | float = 1.0  # absolute constant of Eq. 8 (theory-literal 1; reproduction preset 0.1)
    lam: jax.Array | float = 0.01  # KRR regulariser lambda
    delta: jax.Array | float = 0.1
    lengthscale: jax.Array | float = 0.5
    rkhs_norm: jax.Array | float = 1.0  # B
    noise_std: jax.Array | float = 0.01  # rho
    DOMAIN = {
        "C": "[0, inf)",
        "lam": "(0, inf)",
        "delta": "(0, 1)",
        "lengthscale": "(0, inf)",
        "rkhs_norm": "[0, inf)",
        "noise_std": "[0, inf)",
    }


class RPERPInfo(NamedTuple):
    """What R-PERP records at every step (Trace.info)."""

    num_active: jax.Array  # int: arms still active in the current batch's elimination
    beta_half: jax.Array  # the confidence width beta^{1/2}


class UCBInfo(NamedTuple):
    """What R-GP-UCB and SW-GP-UCB record at every step (Trace.info)."""

    beta_half: jax.Array  # the confidence width beta^{1/2}


class RPERPState(NamedTuple):
    active: jax.Array  # (K,) bool: potential maximisers X_j
    chol: Cholesky  # the current batch's picks S_j (selection order), over the compacted arms (active first)
    order: jax.Array  # (K,) int32: order[p] = the arm at compacted position p (active_design)
    perm: jax.Array  # (N_max,) int32: perm[m] = slot of S_j queried m-th
    y: jax.Array  # (N_max,) observations aligned with the picks (0 beyond N_j)
    arms: jax.Array  # (K, d)
    beta_half: jax.Array  # Eq. 8, constant over the run


class RPERP(Algorithm):
    """Restarting phased elimination with random permutation (Algorithm 1).

    horizon: T. variation: V_T (H from Thm 5) or restart_interval: H directly. restart=False: one
    interval (H = T; ablation, ours). permute=False: query each batch in selection order (ablation, ours)."""

    horizon: int = eqx.field(static=True)
    restart_interval: int = eqx.field(static=True)
    kernel: str = eqx.field(static=True)
    permute: bool = eqx.field(static=True)
    use_side_info: bool = eqx.field(static=True)
    num_initial: int = eqx.field(static=True)

    def __init__(
        self,
        horizon: int = 5000,
        variation: float | None = None,
        restart_interval: int | None = None,
        kernel: str = "se",
        dim: int = 2,
        restart: bool = True,
        permute: bool = True,
        use_side_info: bool = True,
    ):
        self.kernel = _check_kernel(kernel)
        if not restart:
            if restart_interval is not None:
                raise ValueError("restart=False means H = T; do not pass restart_interval")
            variation, restart_interval = None, horizon
        elif variation is None and restart_interval is None:
            variation = 1.0  # App. D: unknown V_T
        self.restart_interval = _resolve_interval(
            horizon, variation, restart_interval, rperp_interval, kernel, dim, "restart_interval"
        )
        self.horizon, self.permute, self.use_side_info = int(horizon), bool(permute), bool(use_side_info)
        self.num_initial = 0

    @property
    def schedule(self) -> Schedule:
        return schedule(self.horizon, self.restart_interval)

    def default_params(self) -> RPERPParams:
        return RPERPParams()

    def init(self, key, params: RPERPParams, spec: Spec) -> RPERPState:
        arms = _arms(spec, "R-PERP")
        _horizon_check(spec, self.horizon, "R-PERP")
        B, rho = _known(spec, params, self.use_side_info)
        K = arms.shape[0]
        chol = cholesky_empty(self.schedule.max_batch, K)
        cap = chol.picks.shape[0]
        beta = rperp_beta_half(B, params.C, params.lam, rho, params.delta, K, self.horizon, self.restart_interval)
        return RPERPState(
            jnp.ones((K,), bool),
            chol,
            jnp.arange(K, dtype=jnp.int32),
            jnp.arange(cap, dtype=jnp.int32),
            jnp.zeros((cap,)),
            arms,
            beta,
        )

    def ask(self, key, state: RPERPState, params: RPERPParams, step: Step):
        s, t = self.schedule, step.t
        n_max, K = state.perm.shape[0], state.arms.shape[0]

        def new_batch(state):
            active = jnp.where(jnp.asarray(s.interval_start)[t], jnp.ones((K,), bool), state.active)
            n = jnp.asarray(s.batch_len)[t]
            chol, order, _ = active_design(active, n, self.kernel, params.lengthscale, state.arms, params.lam, n_max)
            perm = query_order(key, n, n_max) if self.permute else jnp.arange(n_max, dtype=jnp.int32)
            return state._replace(active=active, chol=chol, order=order, perm=perm, y=jnp.zeros((n_max,)))

        state = jax.lax.cond(jnp.asarray(s.batch_start)[t], new_batch, lambda st: st, state)
        return state.order[state.chol.picks[state.perm[jnp.asarray(s.pos)[t]]]], state

    def tell(self, key, state: RPERPState, params: RPERPParams, action, observation, step: Step):
        s, t = self.schedule, step.t
        state = state._replace(y=state.y.at[state.perm[jnp.asarray(s.pos)[t]]].set(observation))

        def update(state):  # lines 18-20: CB from this batch only, then elimination
            mean = cholesky_mean(state.chol, state.y, jnp.asarray(s.batch_len)[t])  # over the compacted arms
            mean = jnp.zeros_like(mean).at[state.order].set(mean)  # back to arm order (only X_j's entries count)
            sd = jnp.zeros_like(mean).at[state.order].set(jnp.sqrt(state.chol.var))
            return state._replace(active=eliminate(state.active, mean, sd, state.beta_half))

        return jax.lax.cond(jnp.asarray(s.do_update)[t], update, lambda st: st, state)

    def info(self, state: RPERPState, params) -> RPERPInfo:
        return RPERPInfo(num_active=jnp.sum(state.active), beta_half=state.beta_half)


# ---------------------------------------------------------------- GP-UCB baselines
class UCBParams(NamedTuple):
    lam: jax.Array | float = 0.01
    delta: jax.Array | float = 0.1
    lengthscale: jax.Array | float = 0.5
    rkhs_norm: jax.Array | float = 1.0
    noise_std: jax.Array | float = 0.01
    DOMAIN = {
        "lam": "(0, inf)",
        "delta": "(0, 1)",
        "lengthscale": "(0, inf)",
        "rkhs_norm": "[0, inf)",
        "noise_std": "[0, inf)",
    }


class RGPUCBState(NamedTuple):
    chol: Cholesky  # data since the last restart
    mean: jax.Array  # (K,) posterior mean, updated online
    count: jax.Array  # int32: points since the last restart
    arms: jax.Array
    beta_half: jax.Array


def _gamma_hat(arms, kernel, params, n: int):
    return greedy_information_gain(arms, kernel, params.lengthscale, params.lam, n)[0][n - 1]


class RGPUCB(Algorithm):
    """R-GP-UCB (Zhou & Shroff 2021): GP-UCB on the data since the last restart; restart every H_ucb steps.

    horizon: T; variation: V_T (H_ucb = ceil(gamma_tilde_T^{1/4} (T/V_T)^{1/2})) or restart_interval
    directly (restart_interval = T: plain GP-UCB). beta^{1/2} from spec A9 with gamma_hat_{H_ucb}."""

    horizon: int = eqx.field(static=True)
    restart_interval: int = eqx.field(static=True)
    kernel: str = eqx.field(static=True)
    use_side_info: bool = eqx.field(static=True)
    num_initial: int = eqx.field(static=True)

    def __init__(
        self,
        horizon: int = 5000,
        variation: float | None = None,
        restart_interval: int | None = None,
        kernel: str = "se",
        dim: int = 2,
        use_side_info: bool = True,
    ):
        self.kernel = _check_kernel(kernel)
        if variation is None and restart_interval is None:
            variation = 1.0
        self.restart_interval = _resolve_interval(
            horizon, variation, restart_interval, ucb_interval, kernel, dim, "restart_interval"
        )
        self.horizon, self.use_side_info, self.num_initial = int(horizon), bool(use_side_info), 0

    def default_params(self) -> UCBParams:
        return UCBParams()

    def init(self, key, params: UCBParams, spec: Spec) -> RGPUCBState:
        arms = _arms(spec, "R-GP-UCB")
        _horizon_check(spec, self.horizon, "R-GP-UCB")
        B, rho = _known(spec, params, self.use_side_info)
        gamma = _gamma_hat(arms, self.kernel, params, self.restart_interval)
        K = arms.shape[0]
        return RGPUCBState(
            cholesky_empty(self.restart_interval, K),
            jnp.zeros((K,)),
            jnp.zeros((), jnp.int32),
            arms,
            ucb_beta_half(B, gamma, params.lam, rho, params.delta),
        )

    def ask(self, key, state: RGPUCBState, params, step: Step):
        K = state.arms.shape[0]
        fresh = state._replace(
            chol=cholesky_empty(self.restart_interval, K), mean=jnp.zeros((K,)), count=jnp.zeros((), jnp.int32)
        )
        state = jax.lax.cond(step.t % self.restart_interval == 0, lambda st: fresh, lambda st: st, state)
        ucb = state.mean + state.beta_half * jnp.sqrt(state.chol.var)
        return jnp.argmax(ucb).astype(jnp.int32), state

    def tell(self, key, state: RGPUCBState, params, action, observation, step: Step):
        col = kernel_column(self.kernel, params.lengthscale, state.arms, action)
        resid = observation - state.mean[action]
        chol, v, d = cholesky_add(state.chol, state.count, action, col, params.lam)
        return state._replace(chol=chol, mean=state.mean + v * resid / d, count=state.count + 1)

    def info(self, state, params) -> UCBInfo:
        return UCBInfo(beta_half=state.beta_half)


class WindowFactor(NamedTuple):
    """The last W observations as R = L^{-1} [K(S, arms) | y_S], L L^T = K_SS + lambda I, S in age order
    (oldest first); rows beyond `count` are zero. sigma^2(x) = 1 - sum_m R[m, x]^2 and
    mu(x) = sum_m R[m, x] R[m, K] over the arms x < K."""

    rows: jax.Array  # (W, K + 1)
    lower: jax.Array  # (W, W) L
    count: jax.Array  # int32


def window_empty(window: int, num_arms: int) -> WindowFactor:
    return WindowFactor(jnp.zeros((window, num_arms + 1)), jnp.zeros((window, window)), jnp.zeros((), jnp.int32))


def window_append(f: WindowFactor, j, column, y, lam) -> WindowFactor:
    """Add (arm j, y) as the newest point: l = L^{-1} k_S(x_j) is R's column j, d = sqrt(sigma^2(x_j) + lambda)."""
    n = f.count
    l = f.rows[:, j]
    d = jnp.sqrt(jnp.maximum(1.0 - l @ l, 0.0) + lam)
    row = (jnp.append(column, y) - f.rows.T @ l) / d
    return WindowFactor(f.rows.at[n].set(row), f.lower.at[n].set(l.at[n].set(d)), n + 1)


def window_drop_oldest(f: WindowFactor) -> WindowFactor:
    """Remove the oldest point of a full window exactly, with no downdate: for L = [[l11, 0], [l21, L22]]
    the remaining points have L' L'^T = L22 L22^T + l21 l21^T (a rank-1 *update*), done by Givens
    rotations [L22 | l21] Q = [L' | 0]; the same rotations map R's rows, R' = (Q^T [R2; r1])[:W-1].
    O(W (W + K)) per call."""

    W = f.lower.shape[0]
    L22 = f.lower[1:, 1:]

    def column(w, k_col):  # rotation k mixes column k of L22 (never touched before) with w
        k, col = k_col
        r = jnp.hypot(col[k], w[k])
        c, s = col[k] / r, w[k] / r
        return -s * col + c * w, (c * col + s * w, c, s)

    _, (cols, c, s) = jax.lax.scan(column, f.lower[1:, 0], (jnp.arange(W - 1), L22.T))

    def row(x, csr):  # the same rotations on R's rows: row k with the running row x (starts at r1)
        ck, sk, rk = csr
        return -sk * rk + ck * x, ck * rk + sk * x

    _, R = jax.lax.scan(row, f.rows[0], (c, s, f.rows[1:]))
    return WindowFactor(
        jnp.zeros_like(f.rows).at[: W - 1].set(R), jnp.zeros_like(f.lower).at[: W - 1, : W - 1].set(cols.T), f.count - 1
    )


class SWGPUCBState(NamedTuple):
    memory: Any  # WindowFactor (default) or a ring data.Buffer (refactor=True)
    arms: jax.Array
    beta_half: jax.Array


class SWGPUCB(Algorithm):
    """SW-GP-UCB (Zhou & Shroff 2021): GP-UCB on the last W observations. W = H_ucb's formula, or `window`.

    Default: the window's factor is kept up to date (append the newest point; remove the oldest by a
    Givens rank-1 update, :func:`window_drop_oldest`): O(W (W + |X|)) per step. refactor=True: a ring
    buffer refactorised every step by jbo.gp.condition (O(W^3 + W^2 |X|); the reference path, equal
    to the default in the tests)."""

    horizon: int = eqx.field(static=True)
    window: int = eqx.field(static=True)
    kernel: str = eqx.field(static=True)
    use_side_info: bool = eqx.field(static=True)
    refactor: bool = eqx.field(static=True)
    num_initial: int = eqx.field(static=True)

    def __init__(
        self,
        horizon: int = 5000,
        variation: float | None = None,
        window: int | None = None,
        kernel: str = "se",
        dim: int = 2,
        use_side_info: bool = True,
        refactor: bool = False,
    ):
        self.kernel = _check_kernel(kernel)
        if variation is None and window is None:
            variation = 1.0
        self.window = _resolve_interval(horizon, variation, window, ucb_interval, kernel, dim, "window")
        self.horizon, self.use_side_info, self.num_initial = int(horizon), bool(use_side_info), 0
        self.refactor = bool(refactor)

    def default_params(self) -> UCBParams:
        return UCBParams()

    def _model(self):
        return gp.GPModel(kernel=self.kernel, standardize=False, mean="zero", noise_floor=0.0)

    def init(self, key, params: UCBParams, spec: Spec) -> SWGPUCBState:
        arms = _arms(spec, "SW-GP-UCB")
        _horizon_check(spec, self.horizon, "SW-GP-UCB")
        B, rho = _known(spec, params, self.use_side_info)
        gamma = _gamma_hat(arms, self.kernel, params, self.window)
        memory = data.empty(self.window, arms.shape[1]) if self.refactor else window_empty(self.window, arms.shape[0])
        return SWGPUCBState(memory, arms, ucb_beta_half(B, gamma, params.lam, rho, params.delta))

    def ask(self, key, state: SWGPUCBState, params, step: Step):
        if self.refactor:
            hyp = gp.GPParams(
                jnp.full((state.arms.shape[1],), jnp.log(params.lengthscale)),
                jnp.zeros(()),
                jnp.log(params.lam),
                jnp.zeros(()),
            )
            mean, var = gp.predict_batch(gp.condition(state.memory, hyp, self._model()), state.arms)
        else:
            R = state.memory.rows
            K = state.arms.shape[0]
            mean, var = R[:, :K].T @ R[:, K], jnp.maximum(1.0 - jnp.sum(R[:, :K] ** 2, axis=0), 0.0)
        # an empty window: the variance is exactly k(x, x) = 1 and the mean 0 (ties -> arm 0)
        return jnp.argmax(mean + state.beta_half * jnp.sqrt(var)).astype(jnp.int32), state

    def tell(self, key, state: SWGPUCBState, params, action, observation, step: Step):
        if self.refactor:
            return state._replace(memory=data.append(state.memory, state.arms[action], observation, wrap=True))
        f = jax.lax.cond(step.t >= self.window, window_drop_oldest, lambda f: f, state.memory)
        col = kernel_column(self.kernel, params.lengthscale, state.arms, action)
        return state._replace(memory=window_append(f, action, col, observation, params.lam))

    def info(self, state, params) -> UCBInfo:
        return UCBInfo(beta_half=state.beta_half)


__all__ = [
    "KERNELS",
    "PRESETS",
    "RPERP",
    "RPERPInfo",
    "RPERPParams",
    "UCBInfo",
    "RPERPState",
    "RGPUCB",
    "SWGPUCB",
    "UCBParams",
    "Cholesky",
    "Schedule",
    "active_design",
    "batch_sizes",
    "cholesky_add",
    "cholesky_empty",
    "cholesky_mean",
    "compact_active",
    "eliminate",
    "first_argmax",
    "greedy_information_gain",
    "interval_lengths",
    "kernel_column",
    "max_variance_design",
    "query_order",
    "rperp_interval",
    "rperp_beta_half",
    "schedule",
    "ucb_beta_half",
    "ucb_interval",
    "union_count",
    "WindowFactor",
    "window_append",
    "window_drop_oldest",
    "window_empty",
]
