"""uCVS: Bayesian optimisation with unknown cost-varying variable subsets (Hoang, Nguyen & Tran,
AAAI 2025, arXiv:2412.15863; spec bocvs.md), and its baselines.

At each step the learner picks a control set i (a mask over the d variables) and values x^i for its
variables; the environment draws the others, X^-i ~ P^-i, observes y = f([x^i, X^-i]) + noise and
charges a random cost whose mean c_i is unknown. Everything rests on the **expected bounds** over the
free variables (bocvs.md 1.6), estimated with a fixed Monte-Carlo matrix R of free-variable draws:

    U_t(i, x^i) = E[mu_{t-1}([x^i, X^-i])] + w E[sigma_{t-1}([x^i, X^-i])]     (w = sqrt(beta))
    L_t(i, x^i) = E[mu] - w_l E[sigma],   gU_t(i) = max_x U_t(i, x),   gL_t = max_{i, x} L_t(i, x)

(:func:`expected_bounds`, :func:`expected_ucb`: pure, differentiable functions of the posterior, the
set mask and R). A full control set attains both maxima (E u <= max u), so when one exists gL is
its pointwise LCB maximum and UCB-PSQ plays only it (the [T]/[C] shortcut).

Every method is a :class:`CVS` of two configured parts: a **set-selection rule** (``selection``, a
:class:`Selection`: which set i_t to play; x_t is that set's maximiser) and a **value estimate**
(``value``, a :class:`ValueEstimate`: the g_i(x^i) each set's values are maximised for), with the
shared parts (``hypers``, ``maximiser``, ``growth``) and sizes (``num_initial``, ``num_mc``).
:func:`make` builds the named methods (:data:`NAMES`, the registry's and the experiments' names):

    name        selection                                  value
    ucvs        ExploreThenCommit(preset, alpha_schedule)  ExpectedUCB()
    ucb_psq     BestSet()                                  ExpectedUCB()
    ts_psq      BestSet()                                  ThompsonPath(num_features)
    etc         GroupedETC(groups, plays)                  ExpectedUCB()
    ucb_cvs     KnownCosts()                               ExpectedUCB()
    ucb_naive   ValuePerCost()                             ExpectedUCB()
    ts_naive    ValuePerCost()                             ThompsonPath(num_features)
    ei_naive    ValuePerCost()                             ExpectedImprovement(num_paths, num_features)
    random      RandomSets()                               (unused)

The numbers worth sweeping (beta, beta_exploit, beta_lcb, alpha0, alpha_min, budget,
explore_fraction, eps0, eps_cut, the hyper-parameters) stay traced in :class:`CVSParams`.

**uCVS** (Algorithm 1, :class:`ExploreThenCommit`), explore-then-commit with elimination and no-regret costs:

    exploration  (cost spent <= 0.6 C): play the sets round-robin; x_t = argmax_x U_t(i_t, x);
                 lcb_bar <- max(lcb_bar, gL_t); ucb_bar_i <- min(ucb_bar_i, gU_t(i)) for the played set
    exploitation: lcb_bar <- max(lcb_bar, gL_t); ucb_bar <- min(ucb_bar, gU_t)      (intersected bounds)
                 S1 = {i : ucb_bar_i - f_lo > (1 - alpha_t)(lcb_bar - f_lo)}; if S1 is empty, reset the bounds
                 c_i^LCB = max(c_hat_i - sqrt(2 log t / T_i), 0);  S3 = argmin_{i in S1} c_i^LCB (all ties)
                 i_t = argmax_{i in S3} gU_t(i),  x_t = its maximiser
    every step:  T_i, S_i (plays and cost sums of the played set) updated (the paper's box forgets it)

Presets (bocvs.md 2.3-2.5, ``ExploreThenCommit(preset=...)``): ``"paper"`` is Algorithm 1 as written
with the spec's decisions (beta = 2^2 for u and l, alpha_t = 0.1 * 0.5^floor(n_exploit / d) (D3; ``alpha_schedule``
"halve_once" / "constant"), the f_lo shift (D2), strict ">" (D8), log(max(t, 2)) with t the current
step (D9), clip at 0 + tie-break by gU (D10), round-robin from set 1 (D25)); ``"official"`` is
what the authors' code does: exploration from set 2, no bound bookkeeping, exploitation with UCB
weight 1.96, LCB weight 0.3 on the full set (or every set) together with the best observation,
feasible iff gU(i) >= Lcb_max (alpha = 0), cost LCB c_hat - radius without clip (unplayed: -inf),
ties to the last index, argmax gU when nothing is feasible. Both presets keep the GP hyper-parameters
fixed in exploration and refit them in exploitation (10 Adam steps, lr 0.1, on the marginal
likelihood over mean, output scale and lengthscales, restarted from the initial values every step;
the noise stays at 1e-4, D16).

**Baselines** (bocvs.md 3): ``ucb_psq`` (:class:`BestSet`: play argmax_i gU(i); UCB-PSQ of Hayashi et
al.), ``ts_psq`` (the same with one posterior sample path per step instead of the UCB,
:class:`ThompsonPath`: random Fourier features + pathwise conditioning,
:func:`jbo.acquisitions.thompson_sample`; its mean over the Monte-Carlo rows in closed form per set,
:func:`expected_path`), ``etc`` (ETC-50, :class:`GroupedETC`: groups of sets each played ``plays`` = 50
times by argmax gU inside the group, then UCB-PSQ; groups ``"size"`` = the paper's
one group per set size in increasing size without the full set (D18), ``"tiers"`` = Tay's cost
tiers ((1,2,3), (4,5,6)), or explicit 0-based tuples), ``ucb_cvs`` (:class:`KnownCosts`: Tay et al.'s
UCB-CVS with KNOWN costs, told through the side information: the candidates are the sets whose shifted gU is within a
factor (1 - eps_t) of the best, eps_t = eps0 max(1 - t / t_cut, 0) [ours: the relative form], and
the cheapest candidate is played).
**Additions, not in the paper's figures** (bocvs.md 3.4, :class:`ValuePerCost`): ``ucb_naive`` /
``ts_naive`` (argmax_i (g_i - f_lo) / c_i with c_i the cost LCB c_hat_i - sqrt(2 log t / T_i) floored at
0.001, the environment's smallest cost, and 0.001 for unplayed sets [ours: the floor and the shift keep the
ratio meaningful]), ``ei_naive`` (:class:`ExpectedImprovement`: argmax_i EI_i / c_i with the same floored
cost LCB, where EI_i is the set's expected improvement of its expected value over the incumbent: the mean
over P = ``num_paths`` = 32 posterior draws of max(mean over the Monte-Carlo rows of f_s(x^i, R_j) - max
over the observed points of f_s, 0), maximised over the set's values), ``random`` (:class:`RandomSets`:
uniform set and values: a sanity floor).
EI-naive [ours, where the spec differs]: the spec takes 32 Sobol QMC draws of the exact joint posterior
at the training and Monte-Carlo points; that needs an (n + R)-point Cholesky for every evaluation inside
the inner optimiser. We draw 32 joint sample paths instead (random Fourier features + pathwise
conditioning, as TS-PSQ), which are joint over all points at once and cost one n x n solve per path
per step; the draws are pseudo-random, not QMC. :func:`expected_improvement` is tested against an
exact-Gaussian Monte-Carlo computation.

Shared protocol: the 5 initial points are free uniform full-domain queries (bocvs.md 2.4; the
environment reports them as such), after which every step computes, with masks and fixed shapes,
only what its method needs: the per-set maximisations run one set after another (``lax.map``) under
a ``lax.switch`` (skip / full set with one Monte-Carlo row / expected), and a step after the budget
is spent does no work at all. Each step works on the smallest prefix of the data that holds every
observation (the ``growth`` part, GROWTH: the engine runs the scan in segments whose buffer and posterior grow
with the data from 16 rows, see "Growing state" in jbo.engine): the O(N^2)
per-point posterior costs grow with the data, not the scan length (Levy-12D cheap, 750 steps: UCB-CVS
12.0 -> 1.8 s, uCVS 27.8 -> 18.6 s, same plays; experiments/results/ucvs/speed/bucket_check.json). The prefix
sizes double up to 256 rows and then grow by ``Growth.step`` = 128 (16, ..., 256, 384, 512, 640, 750):
against powers of two (``step=None``) a 750-step uCVS run took 11% less time on Levy-12D and 7%
on airfoil, with the same plays (chosen values within 2.3e-11) and 5-6 s more compile
(experiments/results/ucvs/speed/bucket_step_check.json, measured with the earlier in-step buckets). Under
``vmap`` the per-set branches become selects (everything is computed); run seeds with
``jbo.engine.run_environments(..., sequential=True)`` to keep them real branches.
The inner optimiser is jbo's raw screening + top-k projected Adam (D19, the ``maximiser`` part, MAXIMISER;
``Maximiser(method="lbfgs", ...)``: jbo's
bounded projected L-BFGS, closer to the authors' L-BFGS-B), warm-started at each set's previous
maximiser. Defaults are smaller than the spec's GPU-sized suggestions (num_mc 64 rows for the
acquisitions instead of 256-1500, 64 raw candidates, 2 starts x 15 Adam steps): a 2-core CPU budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jbo import acquisitions, checks, data, gp, kernels, parts
from jbo.parts import HypersParams
from jbo.problems.control import truncated_normal_from_uniform
from jbo.protocols import Algorithm, Spec, Step
from jbo.spaces import ControlAction, ControlObservation, ControlSets

PRESETS = ("paper", "official")
ALPHA_SCHEDULES = ("halve_every", "halve_once", "constant")
GROUPINGS = {"tiers": ((0, 1, 2), (3, 4, 5)), "official": ((4, 0, 1, 2), (5, 3, 6))}

#: The GP of the paper's code (bocvs.md 2.4, D16): SE-ARD, raw (unstandardised) y, a constant mean,
#: lengthscales in [0.01, 1e4]; a refit trains mean, output scale and lengthscales, never the noise.
MODEL = gp.GPModel(
    kernel="se",
    standardize=False,
    mean="trainable",
    train=("lengthscale", "outputscale"),
    lengthscale_bounds=(0.01, 1e4),
    outputscale_bounds=(1e-6, 1e6),
    noise_bounds=(1e-8, 10.0),
)


# ---------------------------------------------------------------- the expected bounds (pure functions)
def compose(mask, xc, R):
    """The query points [x^i, R_j] (n, d): the set's coordinates from xc (d,), the others from R (n, d)."""
    return jnp.where(mask, xc, R)


def expected_bounds(post: gp.Posterior, xc, mask, R):
    """(E[mu], E[sigma]) over the rows of R of the GP posterior at [xc^i, R_j] (Monte-Carlo means).
    The expected UCB is E[mu] + w E[sigma], never E[mu] + w sd(E f) (bocvs.md 7.11)."""
    mu, var = gp.predict_batch(post, compose(mask, xc, R))
    return jnp.mean(mu), jnp.mean(jnp.sqrt(var))


def expected_ucb(post: gp.Posterior, xc, mask, R, beta):
    """U(i, xc) = E[mu] + sqrt(beta) E[sigma] over the rows of R; differentiable in xc (only the set's
    coordinates matter). With a full mask it is the pointwise UCB at xc."""
    m, s = expected_bounds(post, xc, mask, R)
    return m + jnp.sqrt(beta) * s


def expected_lcb(post: gp.Posterior, xc, mask, R, beta):
    """L(i, xc) = E[mu] - sqrt(beta) E[sigma]."""
    m, s = expected_bounds(post, xc, mask, R)
    return m - jnp.sqrt(beta) * s


def expected_sample(path: acquisitions.SamplePath, xc, mask, R):
    """E over the rows of R of one posterior sample path at [xc^i, R_j] (TS-PSQ's g)."""
    return expected_path(path, mask, R)(xc)


def expected_path(path: acquisitions.SamplePath, mask, R):
    """xc -> E_j f([xc^i, R_j]) for one sample path and one set, with what does not depend on xc
    computed here, once per set and step, not once per evaluation of the inner optimiser.

    Exact rearrangements of the mean over the rows of R (equal to the direct mean to rounding; tested):
    the path is f = m + sum_k a_k cos(w_k . x + b_k) + sum_i u_i k(x, X_i). With x = [xc, R_j] split as
    w_k . x = w_k . xc^i + c_jk (c_jk = w_k . R_j^free + b_k),
    mean_j cos(w_k . xc^i + c_jk) = cos(w_k . xc^i) mean_j cos c_jk - sin(w_k . xc^i) mean_j sin c_jk,
    and the SE kernel factorises over coordinates, mean_j k([xc, R_j], X_i) = k(xc^i, X_i^i)
    mean_j exp(-r2_free(R_j, X_i) / 2): one evaluation costs 2D transcendentals and an n-vector kernel
    instead of J times that. Other kernels keep the direct mean for the kernel term. With one row
    (a full set: R drops out) the path is evaluated directly, which is cheaper (D cosines, not 2D)."""
    if R.shape[0] == 1:
        return lambda xc: acquisitions.sample_path_value(path, compose(mask, xc, R[0]))
    post, ff = path.posterior, path.features
    kp = post.params.kernel_params()
    num = ff.phases.shape[0]
    amp = jnp.sqrt(2.0 * ff.outputscale / num) * path.weights  # (D,)
    free = jnp.where(mask, 0.0, R)  # (J, d): the free coordinates, the set's zeroed
    c = free @ ff.frequencies.T + ff.phases  # (J, D)
    cos_mean, sin_mean = amp * jnp.mean(jnp.cos(c), axis=0), amp * jnp.mean(jnp.sin(c), axis=0)
    update = jnp.where(post.mask, path.update, 0.0)
    X_set = jnp.where(mask, post.x, 0.0)
    if post.kernel == "se":
        r2_free = kernels.sqdist_matrix(free, jnp.where(mask, 0.0, post.x), kp.lengthscale)  # (J, N)
        weights = jnp.mean(jnp.exp(-0.5 * r2_free), axis=0) * update  # (N,)

        def kernel_term(xc):
            return kernels.from_sqdist("se", kp, kernels.sqdist_to_rows(xc, X_set, kp.lengthscale)) @ weights
    else:

        def kernel_term(xc):
            K = kernels.gram(post.kernel, kp, compose(mask, xc, R), post.x)  # (J, N)
            return jnp.mean(K @ update)

    def value(xc):
        a = jnp.where(mask, xc, 0.0) @ ff.frequencies.T  # (D,)
        f = post.params.mean + jnp.cos(a) @ cos_mean - jnp.sin(a) @ sin_mean + kernel_term(jnp.where(mask, xc, 0.0))
        return post.y_mean + post.y_std * f

    return value


def sample_paths(key, post: gp.Posterior, num_paths: int, num_features: int):
    """num_paths joint posterior sample paths (RFF prior + pathwise conditioning) as batched
    (features, weights, update); the posterior is shared, not copied per path."""

    def one(k):
        p = acquisitions.thompson_sample(k, post, num_features)
        return p.features, p.weights, p.update

    return jax.vmap(one)(jax.random.split(key, num_paths))


def path_values(paths, post: gp.Posterior, xs):
    """(P, n) values of each sample path at the points xs (n, d)."""

    def per_path(f, w, u):
        path = acquisitions.SamplePath(f, w, u, post)
        return jax.vmap(lambda x: acquisitions.sample_path_value(path, x))(xs)

    return jax.vmap(per_path)(*paths)


def incumbents(paths, post: gp.Posterior):
    """(P,) each path's maximum over the observed points (padding rows excluded)."""
    return jnp.max(jnp.where(post.mask, path_values(paths, post, post.x), -jnp.inf), axis=1)


def expected_improvement(paths, post: gp.Posterior, incumbent, xc, mask, R):
    """EI-naive's EI(i, xc) = mean over paths s of max(mean_j f_s([xc^i, R_j]) - incumbent_s, 0)."""
    value = jax.vmap(lambda f, w, u: expected_sample(acquisitions.SamplePath(f, w, u, post), xc, mask, R))(*paths)
    return jnp.mean(jnp.maximum(value - incumbent, 0.0))


def alpha_at(alpha0, alpha_min, n_exploit, dim: int, schedule: str):
    """alpha_t: 'halve_every' alpha0 0.5^floor(n/d) (D3 default), 'halve_once' (alpha0/2 after d
    exploitation steps), 'constant'; never below alpha_min."""
    if schedule == "halve_every":
        a = alpha0 * 0.5 ** (n_exploit // dim)
    elif schedule == "halve_once":
        a = jnp.where(n_exploit >= dim, 0.5 * alpha0, alpha0)
    else:
        a = jnp.asarray(alpha0, jnp.float64)
    return jnp.maximum(a, alpha_min)


def cost_lcb(cost_sum, counts, t, clip: bool):
    """c_hat_i - sqrt(2 log(max(t, 2)) / T_i): clipped at 0 (paper; unplayed sets 0) or not
    (official; unplayed sets -inf)."""
    n = jnp.maximum(counts, 1)
    lcb = cost_sum / n - jnp.sqrt(2.0 * jnp.log(jnp.maximum(t, 2).astype(jnp.float64)) / n)
    if clip:
        return jnp.where(counts > 0, jnp.maximum(lcb, 0.0), 0.0)
    return jnp.where(counts > 0, lcb, -jnp.inf)


def feasible_set(ucb_bar, lcb_bar, alpha, f_lo, strict: bool = True):
    """S1 = {i : ucb_bar_i - f_lo > (1 - alpha)(lcb_bar - f_lo)} (>= when not strict)."""
    lhs, rhs = ucb_bar - f_lo, (1.0 - alpha) * (lcb_bar - f_lo)
    return lhs > rhs if strict else lhs >= rhs


def cheapest_then_best(S1, c_lcb, gU):
    """Paper: among S1 the sets of minimal cost LCB (ties within 1e-12), then the largest gU."""
    cmin = jnp.min(jnp.where(S1, c_lcb, jnp.inf))
    S3 = S1 & (c_lcb <= cmin + 1e-12)
    return jnp.argmax(jnp.where(S3, gU, -jnp.inf)).astype(jnp.int32), S3


def cheapest_last_index(S1, c_lcb, gU):
    """Official: among S1 the minimal cost LCB, ties to the last index; nothing feasible: argmax gU."""
    m = S1.shape[0]
    cmin = jnp.min(jnp.where(S1, c_lcb, jnp.inf))
    S3 = S1 & (c_lcb <= cmin + 1e-12)
    last = (m - 1 - jnp.argmax(S3[::-1])).astype(jnp.int32)
    return jnp.where(S1.any(), last, jnp.argmax(gU).astype(jnp.int32)), S3


# ---------------------------------------------------------------- parts
_HYPERS = dict(lengthscale=0.2, outputscale=1.0, noise=1e-4, mean=0.0)  # the code's GP (D16)
#: uCVS's refit in exploitation: 10 Adam steps at lr 0.1 from the initial values, one restart.
REFIT = parts.Refit(start=parts.FixedHypers(**_HYPERS), restarts=1, steps=10, learning_rate=0.1)
#: The inner maximiser per set (D19, sized for a 2-core CPU): 64 raw candidates + the set's previous
#: maximiser, 2 starts x 15 projected-Adam steps; method="lbfgs": jbo's bounded projected L-BFGS.
MAXIMISER = parts.Maximiser(num_raw=64, num_starts=2, steps=15, method="adam", screen_data=False)
#: Prefix sizes double from 16 rows up to 256, then grow by 128 (see the module docstring).
GROWTH = data.Growth(step=128, smallest=16, whole=0, share=0.0)


# ---------------------------------------------------------------- params and state
class CVSParams(NamedTuple):
    """Sweepable numbers. beta is the squared UCB weight (jbo's convention): the paper's weight 2 is 4."""

    beta: jax.Array | float = 4.0  # U in exploration (all methods' UCB)
    beta_exploit: jax.Array | float = 4.0  # U in exploitation (official: 1.96^2)
    beta_lcb: jax.Array | float = 4.0  # L (official: 0.3^2)
    alpha0: jax.Array | float = 0.1
    alpha_min: jax.Array | float = 0.0
    budget: jax.Array | float = 100.0  # C, known to the learner
    explore_fraction: jax.Array | float = 0.6  # exploration while spent <= fraction * C
    eps0: jax.Array | float = 0.5  # UCB-CVS
    eps_cut: jax.Array | float = 100.0  # UCB-CVS: eps reaches 0 after this many plays
    hypers: Any = HypersParams(0.2, 1.0, 1e-4, 0.0)
    DOMAIN = {
        "beta": "[0, inf)",
        "beta_exploit": "[0, inf)",
        "beta_lcb": "[0, inf)",
        "alpha0": "[0, 1]",
        "alpha_min": "[0, 1]",
        "budget": "(0, inf)",
        "explore_fraction": "[0, 1]",
        "eps0": "[0, 1]",
        "eps_cut": "(0, inf)",
    }


class CVSInfo(NamedTuple):
    """What a uCVS method records at every step (Trace.info)."""

    explore: jax.Array  # bool: the step was in uCVS's exploration phase
    alpha: jax.Array  # the step's alpha_t (UCB-CVS: eps_t)
    S1: jax.Array  # (m,) bool: the feasible sets (UCB-CVS: the candidates)
    gU: jax.Array  # (m,) each set's maximum expected UCB (-inf: not computed; EI-naive: its EI)
    gL: jax.Array  # the largest expected LCB over sets and values
    lcb_bar: jax.Array  # the intersected lower bound
    ucb_bar: jax.Array  # (m,) the intersected upper bounds
    lengthscale: jax.Array  # (d,) the step's lengthscales
    outputscale: jax.Array  # the step's signal variance
    nonfinite_model: jax.Array  # bool: the hyper-parameters were not finite (jbo.checks)


class CVSState(NamedTuple):
    buffer: data.Buffer
    post: gp.Posterior  # the posterior under the initial (fixed) hyper-parameters, extended by rank-1 appends
    hyp: gp.GPParams  # the hyper-parameters of the last step
    R: jax.Array  # (num_mc, d) the fixed Monte-Carlo matrix of the free variables
    masks: jax.Array  # (m, d)
    f_lo: jax.Array  # the alpha-rule's shift (side information)
    known_cost: jax.Array  # (m,) mean costs told to UCB-CVS (zeros if the environment does not tell them)
    counts: jax.Array  # (m,) plays T_i
    cost_sum: jax.Array  # (m,) S_i
    spent: jax.Array  # cost spent by BO steps
    plays: jax.Array  # BO steps taken
    n_exploit: jax.Array
    lcb_bar: jax.Array
    ucb_bar: jax.Array  # (m,)
    best_x: jax.Array  # (m, d) each set's last maximiser (warm starts)
    # diagnostics of the last ask
    explore: jax.Array
    alpha: jax.Array
    S1: jax.Array  # (m,)
    gU: jax.Array  # (m,)
    gL: jax.Array


def naive_cost(state: CVSState, t):
    """The naive additions' cost estimate: the cost LCB c_hat_i - sqrt(2 log t / T_i) (unplayed: -inf)
    floored at 0.001, the environment's smallest cost."""
    return jnp.maximum(cost_lcb(state.cost_sum, state.counts, t, clip=False), 1e-3)


# ---------------------------------------------------------------- the per-set maximisations
def maximize_sets(maximiser: parts.Maximiser, key, score, state: CVSState, needed):
    """For every set: (maximiser, max) over xc of score(mask, R)(xc), or (warm start, -inf) where not
    needed. One set after another; a full set uses one Monte-Carlo row (R drops out). score(mask, R)
    builds the set's objective once, before the inner optimiser (what does not depend on xc)."""
    masks = state.masks
    m, d = masks.shape
    keys = jax.random.split(key, m)

    def one(args):
        k, mask, warm, need = args
        full = jnp.all(mask)

        def run(R):
            return maximiser.box(score(mask, R), k, d, candidates=warm[None])

        branch = jnp.where(need, jnp.where(full, 1, 2), 0)
        return jax.lax.switch(
            branch, [lambda: (warm, -jnp.inf * jnp.ones(())), lambda: run(state.R[:1]), lambda: run(state.R)]
        )

    return jax.lax.map(one, (keys, masks, state.best_x, needed))


def global_lcb(maximiser: parts.Maximiser, key, post, state: CVSState, beta_lcb):
    """gL = max over sets and values of L: the full set's pointwise LCB maximum when one exists
    (it attains the maximum), otherwise the best set's expected LCB."""
    full = jnp.all(state.masks, axis=1)
    lcb = lambda mask, R: lambda x: expected_lcb(post, x, mask, R, beta_lcb)  # noqa: E731
    _, vals = maximize_sets(maximiser, key, lcb, state, jnp.where(full.any(), full, True))
    return jnp.max(vals)


def _at_least_one(part: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{part}: {name} must be an int >= 1, got {value!r}")


# ---------------------------------------------------------------- value estimates: the g_i(x^i) of a step
class ValueEstimate(eqx.Module):
    """What a set's values are worth at one step, g_i(x^i), maximised per set by the inner optimiser.
    ``objective(key, post, beta)`` -> score(mask, R) -> (xc -> g_i(xc)); ``gain(g, f_lo)``: the value
    above the objective's baseline (the naive rule's numerator), g - f_lo unless the value is already
    an improvement."""

    def objective(self, key, post: gp.Posterior, beta) -> Callable:
        raise NotImplementedError

    def gain(self, g, f_lo):
        return g - f_lo


class ExpectedUCB(ValueEstimate):
    """U_t(i, x^i) = E[mu] + sqrt(beta) E[sigma] over the Monte-Carlo rows (:func:`expected_ucb`), with
    beta = params.beta in uCVS's exploration and params.beta_exploit otherwise."""

    def objective(self, key, post: gp.Posterior, beta) -> Callable:
        return lambda mask, R: lambda x: expected_ucb(post, x, mask, R, beta)


class ThompsonPath(ValueEstimate):
    """One posterior sample path per step (`num_features` random Fourier features + pathwise
    conditioning, :func:`jbo.acquisitions.thompson_sample`), its mean over the Monte-Carlo rows in
    closed form per set (:func:`expected_path`): TS-PSQ's and TS-naive's g."""

    num_features: int = eqx.field(static=True, default=2048)

    def __check_init__(self):
        _at_least_one("ThompsonPath", "num_features", self.num_features)

    def objective(self, key, post: gp.Posterior, beta) -> Callable:
        path = acquisitions.thompson_sample(key, post, self.num_features)
        return lambda mask, R: expected_path(path, mask, R)


class ExpectedImprovement(ValueEstimate):
    """EI-naive's EI_i(x^i): the mean over `num_paths` joint posterior sample paths (`num_features`
    random Fourier features each) of the improvement of the set's expected value over the path's
    incumbent (:func:`expected_improvement`). Already an improvement: its gain is itself."""

    num_paths: int = eqx.field(static=True, default=32)  # bocvs.md 3.4
    num_features: int = eqx.field(static=True, default=2048)

    def __check_init__(self):
        _at_least_one("ExpectedImprovement", "num_paths", self.num_paths)
        _at_least_one("ExpectedImprovement", "num_features", self.num_features)

    def objective(self, key, post: gp.Posterior, beta) -> Callable:
        paths = sample_paths(key, post, self.num_paths, self.num_features)
        best = incumbents(paths, post)
        return lambda mask, R: lambda x: expected_improvement(paths, post, best, x, mask, R)

    def gain(self, g, f_lo):
        return g


# ---------------------------------------------------------------- set-selection rules: i_t (and x_t = its maximiser)
class Turn(NamedTuple):
    """What a selection rule sees at one step."""

    maximiser: parts.Maximiser  # the inner maximiser per set
    value: ValueEstimate  # the value estimate part
    score: Callable  # score(mask, R) -> (xc -> g_i(xc)): the value estimate of this step
    post: gp.Posterior  # this step's posterior
    explore: jax.Array  # bool: the step is in an exploration phase
    t: jax.Array  # the current (1-based) BO step
    params: CVSParams


class Selection(eqx.Module):
    """How a step picks its control set: ``choose(key_u, key_l, state, turn)`` -> (set, each set's
    maximiser (m, d), each set's g (m,) with -inf where not computed, state), x_t being the chosen set's
    maximiser. The defaults here are the baselines': fixed hyper-parameters, no exploration phase, no
    change to the default Params, nothing asked of the side information."""

    uses_model: ClassVar[bool] = True  # False: the rule ignores the GP (RandomSets)

    def default_hypers(self):
        """The hyper-parameter rule when CVS.hypers is None."""
        return parts.FixedHypers(**_HYPERS)

    def default_numbers(self) -> dict:
        """CVSParams fields this rule changes from their defaults."""
        return {}

    def check(self, spec: Spec, num_sets: int) -> None:
        """Raise a ValueError if the environment lacks what the rule needs."""

    def exploring(self, state: CVSState, params: CVSParams):
        """Whether this step is in an exploration phase (fixed hyper-parameters, beta, not beta_exploit)."""
        return jnp.asarray(False)

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        raise NotImplementedError


class ExploreThenCommit(Selection):
    """uCVS (Algorithm 1): exploration while the cost spent is <= params.explore_fraction x the budget,
    the sets round-robin (from set 1, or set 2 with preset "official"); then exploitation with the
    intersected bounds, the feasible sets S1 of the alpha rule (alpha_t of params.alpha0,
    params.alpha_min and `alpha_schedule`: "halve_every" d exploitation steps, "halve_once",
    "constant"), the cheapest by cost LCB and the largest gU among them. preset="official": the
    released code's rules (module docstring) and its default Params (beta_exploit 1.96^2, beta_lcb
    0.3^2, alpha0 0). The hyper-parameters are refitted in exploitation (REFIT) unless CVS.hypers says
    otherwise."""

    preset: str = eqx.field(static=True, default="paper")
    alpha_schedule: str = eqx.field(static=True, default="halve_every")

    def __check_init__(self):
        if self.preset not in PRESETS:
            raise ValueError(f"ExploreThenCommit: unknown preset {self.preset!r}; choose one of {PRESETS}")
        if self.alpha_schedule not in ALPHA_SCHEDULES:
            raise ValueError(
                f"ExploreThenCommit: unknown alpha schedule {self.alpha_schedule!r}; choose one of {ALPHA_SCHEDULES}"
            )

    def default_hypers(self):
        return REFIT

    def default_numbers(self) -> dict:
        if self.preset == "official":
            return dict(beta=4.0, beta_exploit=1.96**2, beta_lcb=0.3**2, alpha0=0.0)
        return {}

    def exploring(self, state: CVSState, params: CVSParams):
        return state.spent <= params.explore_fraction * params.budget

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        m, d = state.masks.shape
        params, explore = turn.params, turn.explore
        official = self.preset == "official"
        i_rr = ((state.plays + (1 if official else 0)) % m).astype(jnp.int32)
        onehot = jnp.arange(m) == i_rr
        xs, gU = maximize_sets(turn.maximiser, key_u, turn.score, state, jnp.where(explore, onehot, True))
        if official:
            return self._official(key_l, state, turn, i_rr, xs, gU)
        gL = global_lcb(turn.maximiser, key_l, turn.post, state, params.beta_lcb)
        alpha = alpha_at(params.alpha0, params.alpha_min, state.n_exploit, d, self.alpha_schedule)
        lcb_bar = jnp.maximum(state.lcb_bar, gL)
        ucb_bar = jnp.where(explore & ~onehot, state.ucb_bar, jnp.minimum(state.ucb_bar, gU))
        S1 = feasible_set(ucb_bar, lcb_bar, alpha, state.f_lo)
        empty = ~S1.any() & ~explore  # reset the intersected bounds
        lcb_bar, ucb_bar = jnp.where(empty, gL, lcb_bar), jnp.where(empty, gU, ucb_bar)
        S1 = jnp.where(empty, feasible_set(ucb_bar, lcb_bar, alpha, state.f_lo), S1)
        i_exp, _ = cheapest_then_best(S1, cost_lcb(state.cost_sum, state.counts, turn.t, clip=True), gU)
        i = jnp.where(explore, i_rr, i_exp)
        state = state._replace(
            lcb_bar=lcb_bar,
            ucb_bar=ucb_bar,
            S1=S1,
            alpha=alpha,
            gL=gL,
            n_exploit=state.n_exploit + (~explore).astype(jnp.int32),
        )
        return i, xs, gU, state

    def _official(self, key_l, state: CVSState, turn: Turn, i_rr, xs, gU):
        """Exploit_CVS of the released code: no bookkeeping, Lcb_max = max(max LCB(0.3), max y)."""
        explore = turn.explore

        def exploit_lcb():
            lcb = global_lcb(turn.maximiser, key_l, turn.post, state, turn.params.beta_lcb)
            return jnp.maximum(lcb, data.best(state.buffer))

        gL = jax.lax.cond(explore, lambda: -jnp.inf * jnp.ones(()), exploit_lcb)
        S1 = gU >= gL
        i_exp, _ = cheapest_last_index(S1, cost_lcb(state.cost_sum, state.counts, turn.t, clip=False), gU)
        i = jnp.where(explore, i_rr, i_exp)
        state = state._replace(
            S1=jnp.where(explore, False, S1),
            gL=gL,
            alpha=jnp.zeros(()),
            n_exploit=state.n_exploit + (~explore).astype(jnp.int32),
        )
        return i, xs, gU, state


class BestSet(Selection):
    """UCB-PSQ (Hayashi et al.) and TS-PSQ: i_t = argmax_i g_i, the set of the largest value (a full
    set dominates: only it is computed when one exists)."""

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        full = jnp.all(state.masks, axis=1)
        xs, g = maximize_sets(turn.maximiser, key_u, turn.score, state, jnp.where(full.any(), full, True))
        return jnp.argmax(g).astype(jnp.int32), xs, g, state


class GroupedETC(Selection):
    """ETC-n: groups of sets, each played `plays` times in turn (argmax g inside the group), then
    :class:`BestSet`. `groups`: "size" (the paper's one group per set size, increasing, without the
    full set, D18), "tiers" (Tay's cost tiers ((1,2,3), (4,5,6))), "official" (the authors' groups) or
    explicit 0-based tuples of set indices."""

    groups: Any = eqx.field(static=True, default="size")
    plays: int = eqx.field(static=True, default=50)

    def __check_init__(self):
        if isinstance(self.groups, str) and self.groups not in ("size",) + tuple(GROUPINGS):
            raise ValueError(
                f"GroupedETC: unknown groups {self.groups!r}; choose 'size', 'tiers', 'official' or tuples"
            )
        _at_least_one("GroupedETC", "plays", self.plays)

    def check(self, spec: Spec, num_sets: int) -> None:
        if not isinstance(self.groups, str):
            bad = [i for g in self.groups for i in g if not 0 <= i < num_sets]
            if bad:
                raise ValueError(f"GroupedETC: groups name set(s) {bad} outside 0..{num_sets - 1}")

    def group_ids(self, masks):
        """(group of each set (m,) int, -1 = none; number of groups) for the configured grouping."""
        m, d = masks.shape
        if isinstance(self.groups, str) and self.groups == "size":
            size = jnp.sum(masks, 1)
            is_full = size == d
            smaller = (size[None, :] < size[:, None]) & ~is_full[None, :]  # (i, j): set j strictly smaller
            # rank of set i's size among the distinct sizes of the non-full sets
            first = jnp.array([jnp.all(~((size[:j] == size[j]) & ~is_full[:j])) for j in range(m)]) & ~is_full
            rank = jnp.sum(smaller & first[None, :], axis=1)
            return jnp.where(is_full, -1, rank).astype(jnp.int32), jnp.sum(first)
        groups = GROUPINGS[self.groups] if isinstance(self.groups, str) else self.groups
        gid = [-1] * m
        for g, members in enumerate(groups):
            for i in members:
                if i < m and gid[i] == -1:
                    gid[i] = g
        return jnp.asarray(gid, jnp.int32), jnp.asarray(len(groups))

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        """The first group with fewer than `plays` plays restricts the candidates; afterwards BestSet.
        A group's plays are the plays of its sets during the group phase: plays so far minus `plays`
        per completed group (the phases follow one another)."""
        gid, num_groups = self.group_ids(state.masks)
        current = state.plays // self.plays  # the group being played
        in_groups = current < num_groups
        full = jnp.all(state.masks, axis=1)
        candidates = jnp.where(in_groups, gid == current, jnp.where(full.any(), full, True))
        xs, g = maximize_sets(turn.maximiser, key_u, turn.score, state, candidates)
        return jnp.argmax(jnp.where(candidates, g, -jnp.inf)).astype(jnp.int32), xs, g, state


class KnownCosts(Selection):
    """UCB-CVS (Tay et al.) with KNOWN mean costs (side information 'cost_mean'): the candidates are
    the sets whose shifted g is within a factor (1 - eps_t) of the best, eps_t = params.eps0
    max(1 - t / params.eps_cut, 0); the cheapest candidate, then the largest g, is played."""

    def check(self, spec: Spec, num_sets: int) -> None:
        if "cost_mean" not in spec.info:
            raise ValueError("KnownCosts (UCB-CVS) needs the known mean costs in the side information ('cost_mean')")

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        params = turn.params
        xs, g = maximize_sets(turn.maximiser, key_u, turn.score, state, jnp.ones(state.masks.shape[0], bool))
        eps = params.eps0 * jnp.maximum(1.0 - state.plays / params.eps_cut, 0.0)
        cand = feasible_set(g, jnp.max(g), eps, state.f_lo, strict=False)
        i, _ = cheapest_then_best(cand, state.known_cost, g)
        return i, xs, g, state._replace(S1=cand, alpha=eps)


class ValuePerCost(Selection):
    """The naive additions (UCB-naive, TS-naive, EI-naive): argmax_i gain(g_i) / c_i, with c_i the
    estimated cost LCB floored at 0.001 (:func:`naive_cost`) and the gain the value estimate's
    (g_i - f_lo, or EI_i itself)."""

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        xs, g = maximize_sets(turn.maximiser, key_u, turn.score, state, jnp.ones(state.masks.shape[0], bool))
        ratio = turn.value.gain(g, state.f_lo) / naive_cost(state, turn.t)
        return jnp.argmax(ratio).astype(jnp.int32), xs, g, state


class RandomSets(Selection):
    """A uniform set and uniform values every step, no model (a sanity floor)."""

    uses_model: ClassVar[bool] = False

    def draw(self, key, num_sets: int, dim: int) -> ControlAction:
        ks, kx = jax.random.split(key)
        i = jax.random.randint(ks, (), 0, num_sets, jnp.int32)
        return ControlAction(i, jax.random.uniform(kx, (dim,)))

    def choose(self, key_u, key_l, state: CVSState, turn: Turn):
        raise NotImplementedError("RandomSets draws its actions without a model (CVS asks draw)")


# ---------------------------------------------------------------- the algorithm
class CVS(Algorithm):
    """A uCVS-paper method on a control-set space, assembled from a set-selection rule (`selection`)
    and a value estimate (`value`); :func:`make` builds the named methods of the module docstring."""

    selection: Selection = eqx.field(static=True, default=ExploreThenCommit())
    value: ValueEstimate = eqx.field(static=True, default=ExpectedUCB())
    num_initial: int = eqx.field(static=True, default=5)
    num_mc: int = eqx.field(static=True, default=64)
    maximiser: parts.Maximiser = eqx.field(static=True, default=MAXIMISER)  # per set, warm-started
    # the hyper-parameter rule: None, the selection rule's default (ExploreThenCommit refits in
    # exploitation, REFIT; the baselines hold them); a Refit: every method refits outside exploration;
    # a FixedHypers: never. Its Params are CVSParams.hypers
    hypers: Any = eqx.field(static=True, default=None)
    growth: data.Growth = eqx.field(static=True, default=GROWTH)  # buffer and posterior grow with the data

    def __check_init__(self):
        if not isinstance(self.selection, Selection):
            raise ValueError(
                f"CVS: selection must be a Selection part (ExploreThenCommit(), BestSet(), ...), got {self.selection!r}"
            )
        if not isinstance(self.value, ValueEstimate):
            raise ValueError(
                f"CVS: value must be a ValueEstimate part (ExpectedUCB(), ThompsonPath(), ...), got {self.value!r}"
            )
        for name in ("num_mc", "num_initial"):
            _at_least_one("CVS", name, getattr(self, name))
        if not isinstance(self.maximiser, parts.Maximiser):
            raise ValueError(f"CVS: maximiser must be a jbo.parts.Maximiser, got {self.maximiser!r}")
        if self.hypers is not None and not isinstance(self.hypers, (parts.Refit, parts.FixedHypers)):
            raise ValueError(f"CVS: hypers must be None, a jbo.parts.Refit or a FixedHypers, got {self.hypers!r}")
        if not isinstance(self.growth, data.Growth):
            raise ValueError(f"CVS: growth must be a jbo.data.Growth, got {self.growth!r}")

    # -------------------------------------------------------------- protocol
    @property
    def rule(self):
        """The hyper-parameter rule in effect (see `hypers`)."""
        return self.hypers if self.hypers is not None else self.selection.default_hypers()

    def default_params(self) -> CVSParams:
        return CVSParams(hypers=self.rule.default_params(), **self.selection.default_numbers())

    def initial_actions(self, key, spec: Spec):
        """num_initial uniform points of the whole domain (the environment treats initial steps as
        full-domain queries; the set recorded is the largest one)."""
        space = self._space(spec)
        largest = jnp.argmax(jnp.sum(space.masks, 1)).astype(jnp.int32)
        return ControlAction(
            jnp.full((self.num_initial,), largest, jnp.int32), jax.random.uniform(key, (self.num_initial, space.dim))
        )

    def _space(self, spec: Spec) -> ControlSets:
        if not isinstance(spec.space, ControlSets):
            raise ValueError(f"the uCVS methods need a control-set space, got {type(spec.space).__name__}")
        return spec.space

    def init(self, key, params: CVSParams, spec: Spec) -> CVSState:
        space = self._space(spec)
        m, d = space.masks.shape
        if "free_scale" not in spec.info:
            raise ValueError("the uCVS methods need the free-variable scale in the side information ('free_scale')")
        self.selection.check(spec, m)
        R = truncated_normal_from_uniform(jax.random.uniform(key, (self.num_mc, d)), spec.info["free_scale"])
        hyp = self._hyp0(params, d)
        inf = jnp.asarray(jnp.inf)
        zeros = jnp.zeros((m,))
        known = jnp.asarray(spec.info.get("cost_mean", zeros), jnp.float64)
        buffer = data.empty(spec.num_steps, d)
        return CVSState(
            buffer,
            gp.condition(buffer, hyp, MODEL),
            hyp,
            R,
            space.masks,
            jnp.asarray(spec.info.get("f_lo", 0.0)),
            known,
            jnp.zeros((m,), jnp.int32),
            zeros,
            jnp.zeros(()),
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.int32),
            -inf,
            jnp.full((m,), jnp.inf),
            jnp.full((m, d), 0.5),
            jnp.asarray(False),
            jnp.zeros(()),
            jnp.zeros((m,), bool),
            jnp.full((m,), -jnp.inf),
            -inf,
        )

    def _hyp0(self, params: CVSParams, dim: int) -> gp.GPParams:
        h = params.hypers
        return gp.default_params(dim, h.lengthscale, h.outputscale, h.noise, h.mean)

    def tell(self, key, state: CVSState, params, action, observation: ControlObservation, step: Step) -> CVSState:
        bo = ~step.initial  # initial points are free and are no plays of a set
        onehot = (jnp.arange(state.counts.shape[0]) == action.set) & bo
        return state._replace(
            buffer=data.append(state.buffer, observation.x, observation.y),
            post=gp.append(state.post, observation.x, observation.y),
            counts=state.counts + onehot.astype(jnp.int32),
            cost_sum=state.cost_sum + jnp.where(onehot, observation.cost, 0.0),
            spent=state.spent + jnp.where(bo, observation.cost, 0.0),
            plays=state.plays + bo.astype(jnp.int32),
        )

    def info(self, state: CVSState, params) -> CVSInfo:
        return CVSInfo(
            explore=state.explore,
            alpha=state.alpha,
            S1=state.S1,
            gU=state.gU,
            gL=state.gL,
            lcb_bar=state.lcb_bar,
            ucb_bar=state.ucb_bar,
            lengthscale=jnp.exp(state.hyp.log_lengthscale),
            outputscale=jnp.exp(state.hyp.log_outputscale),
            nonfinite_model=~checks.all_finite(state.hyp),
        )

    # -------------------------------------------------------------- pieces
    def _refits(self) -> bool:
        return bool(getattr(self.rule, "refits", False))

    def _refit(self, key, state: CVSState, params: CVSParams):
        """(hyper-parameters, posterior) after the rule's fit from the initial values (no warm start:
        restarted every step, as the official code does)."""
        hyp0 = self._hyp0(params, state.R.shape[1])
        hyp = self.rule.fit(key, state.buffer, MODEL, hyp0)
        return hyp, gp.condition(state.buffer, hyp, MODEL)

    # -------------------------------------------------------------- one step
    def ask(self, key, state: CVSState, params: CVSParams, step: Step):
        """One step on the segment's buffer (the engine grows it with the data: Algorithm.capacities); after
        the budget nothing is computed (the step is inactive)."""
        live = state.spent < params.budget
        return jax.lax.cond(live, lambda s: self._ask(key, s, params), lambda s: (self._idle(s), s), state)

    def _idle(self, state):
        return ControlAction(jnp.zeros((), jnp.int32), state.best_x[0])

    def _ask(self, key, state: CVSState, params: CVSParams):
        k_fit, k_u, k_l, k_ts, k_r = jax.random.split(key, 5)
        m, d = state.masks.shape
        if not self.selection.uses_model:
            return self.selection.draw(k_r, m, d), state._replace(explore=jnp.asarray(False))

        explore = self.selection.exploring(state, params)
        hyp0 = self._hyp0(params, d)
        if self._refits():  # fixed hyper-parameters in exploration, a refit otherwise
            hyp, post = jax.lax.cond(explore, lambda: (hyp0, state.post), lambda: self._refit(k_fit, state, params))
        else:
            hyp, post = hyp0, state.post
        beta = jnp.where(explore, params.beta, params.beta_exploit)
        score = self.value.objective(k_ts, post, beta)
        turn = Turn(self.maximiser, self.value, score, post, explore, state.plays + 1, params)
        i, xs, g, state = self.selection.choose(k_u, k_l, state, turn)
        state = state._replace(
            best_x=jnp.where(jnp.isfinite(g)[:, None], xs, state.best_x), hyp=hyp, explore=explore, gU=g
        )
        return ControlAction(i, xs[i]), state


# ---------------------------------------------------------------- the named methods
#: The paper's methods and the additions by name (module docstring): (selection rule, value estimate).
NAMED = {
    "ucvs": (ExploreThenCommit, ExpectedUCB),
    "ucb_psq": (BestSet, ExpectedUCB),
    "ts_psq": (BestSet, ThompsonPath),
    "etc": (GroupedETC, ExpectedUCB),
    "ucb_cvs": (KnownCosts, ExpectedUCB),
    "ucb_naive": (ValuePerCost, ExpectedUCB),
    "ts_naive": (ValuePerCost, ThompsonPath),
    "ei_naive": (ValuePerCost, ExpectedImprovement),
    "random": (RandomSets, ExpectedUCB),
}
NAMES = tuple(NAMED)
#: The parts' fields that make() also takes as flat options (the names result files and config files
#: use): flat name -> the field of the named method's part.
FLAT_OPTIONS = {
    "preset": "preset",
    "alpha_schedule": "alpha_schedule",
    "groups": "groups",
    "etc_plays": "plays",
    "num_features": "num_features",
    "num_ei_paths": "num_paths",
}


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def make(name: str, **options) -> CVS:
    """The named method (NAMES) as a CVS of its parts, e.g. make("ucvs", preset="official") is
    CVS(selection=ExploreThenCommit(preset="official"), value=ExpectedUCB()). The parts' fields may be
    given flat (FLAT_OPTIONS: preset, alpha_schedule, groups, etc_plays, num_features, num_ei_paths;
    a ValueError if the method has no part with that field); an option `selection` or `value` replaces
    that part; the other options go to CVS."""
    if name not in NAMED:
        raise ValueError(f"unknown uCVS method {name!r}; choose one of {NAMES}")
    chosen = {slot: cls for slot, cls in zip(("selection", "value"), NAMED[name]) if slot not in options}
    fields = {slot: {} for slot in chosen}
    for flat, field in FLAT_OPTIONS.items():
        if flat not in options:
            continue
        owners = [slot for slot, cls in chosen.items() if field in {f.name for f in dataclasses.fields(cls)}]
        if not owners:
            names = [cls.__name__ for cls in chosen.values()]
            raise ValueError(f"{name}: the option {flat!r} configures none of its parts {names}")
        fields[owners[0]][field] = _tuples(options.pop(flat))
    return CVS(**{slot: cls(**fields[slot]) for slot, cls in chosen.items()}, **options)


__all__ = [
    "ALPHA_SCHEDULES",
    "BestSet",
    "CVS",
    "CVSInfo",
    "CVSParams",
    "CVSState",
    "ExpectedImprovement",
    "ExpectedUCB",
    "ExploreThenCommit",
    "FLAT_OPTIONS",
    "GROUPINGS",
    "GroupedETC",
    "KnownCosts",
    "MODEL",
    "NAMED",
    "NAMES",
    "PRESETS",
    "RandomSets",
    "Selection",
    "ThompsonPath",
    "Turn",
    "ValueEstimate",
    "ValuePerCost",
    "alpha_at",
    "cheapest_last_index",
    "cheapest_then_best",
    "compose",
    "cost_lcb",
    "expected_bounds",
    "expected_improvement",
    "expected_lcb",
    "expected_path",
    "expected_sample",
    "expected_ucb",
    "feasible_set",
    "global_lcb",
    "incumbents",
    "make",
    "maximize_sets",
    "naive_cost",
    "path_values",
    "sample_paths",
]
