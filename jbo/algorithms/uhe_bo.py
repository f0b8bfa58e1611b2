"""UHE-BO (Ha, Nguyen, Zhang, van den Hengel, arXiv:2306.06844 v1): BO with unbiased GP
hyper-parameter estimation, its baselines and its ablations, on a box.

Algorithm 1, as it runs here (paper t = 1, 2, ... counts BO evaluations after the design D0):

    t odd  : gamma = min(1, sqrt(4 ln 2 / ((e - 1) t)));  p = (1 - gamma) w / sum(w) + gamma / 2
             a ~ p   (arm 0 = "random then BO", arm 1 = "BO then BO")
             arm 0: x_t ~ U([0, 1]^d), no refit        arm 1: BO step
    t even : BO step (whatever the arm)
             r = (max(y_t, y_{t-1}) - min y_D0) / (max y_D0 - min y_D0)
             w_a <- w_a exp(gamma_t r / (2 p_a))      (gamma recomputed at the even t: D4)
    BO step: x'_1..x'_M ~ U([0, 1]^d), M = 2 |D_{t-1}|; y'_j = y of the nearest observed x (L2)
             theta = argmin -log p(y' | x', theta) - log p(theta)        (pseudo-data MAP, Eq. 2)
             GP posterior on the REAL D_{t-1} under theta;  x_t = argmax mu + sqrt(beta) sigma
             (PseudoData(noise_refit=True): theta's noise variance refitted on D_{t-1} first; default off)

`UHE` runs it and every method it is compared with, on the same GP code and priors (Matern-5/2 ARD,
zero mean, y standardised with D_{t-1}'s statistics, Gamma(1e-3, 10) priors on lengthscales, signal
and noise variance with the log-Jacobian of the log transform, bounds of D10). A method is UHE with
three parts: the `schedule` (which steps are random, how the bandit learns), the hyper-parameter
`estimate` (and the UCB built on it) and a `lengthscales` rule applied to that estimate:

    method       schedule        estimate      lengthscales             what it is
    uhe_bo       PairedEXP3()    PseudoData()  None                     the algorithm above
    ra_bo        RandomThenBO()  PseudoData()  None                     ablation: arm 0 always
    random_exp3  PairedEXP3()    RealData()    None                     ablation: MAP on the real data
    map          EveryStep()     RealData()    None                     GP-UCB, MAP refit every step  (B1)
    mcmc         EveryStep()     HMC()         None                     blackjax HMC over log theta,
                                                                        200 burn-in + 10 kept, UCB
                                                                        averaged                      (B2)
    a_gp_ucb     EveryStep()     RealData()    ShrinkingLengthscales()  Berkenkamp et al. (2019), the
                                                                        spec's reconstruction (4.1)   (B3)
    wdf          EveryStep()     RealData()    LengthscaleBound()       Wang & de Freitas (2014) in
                                                                        Berkenkamp's variant (4.2)    (B4)
    portfolio    Hedge()         RealData()    None                     GP-Hedge, EXP3 over {Random,
                                                                        GP-UCB(MAP)} every step       (B5)

These configurations are the registry's "uhe_bo" and "uhe_bo:<method>" (jbo.algorithms; :func:`make` looks
them up, an option of a part's name replacing that part), and :class:`UHERandom` is B6 (uniform
sampling, "uhe_bo:random"). All share the uniform initial design of n0 points
(D1: n0 = 3d in the experiments), so under one seed every method sees the same D0 and noise.

The engine scans over evaluations, not over pairs (spec 8.3 scans over pairs): t is never batched,
so "which step of the pair" is a real `lax.cond` branch under vmap, and the pair's state (the arm
and the p it was drawn with) is carried from the odd to the even step in the State. The random
first step is a `lax.cond` on the (batched) arm: under vmap both sides run, unbatched only one.

Decisions where the paper is silent follow the spec (7): D3 beta = 1.96 as ucb = mu + sqrt(beta)
sigma; D4 gamma recomputed at the even t; D5 gamma <= 1; D7 an odd number of BO steps ends with an
unrewarded draw; D9 y standardised by D_{t-1}, pseudo-labels by the same transform; D10 bounds
l in [0.01, 5], signal variance in [1e-3, 20], noise variance in [1e-6, 1]; D12 Gamma(1e-3, 10) with
the Jacobian (`prior="weak"`: rate 0.1); D13 raw screening + projected Adam; D23 unclipped reward;
D24 L2 nearest neighbour, ties to the lowest index; D25 fresh x' every BO step; D27 no refit at the
random step; D29 latent variance in the UCB.

Where we differ from the spec, for cost on a 2-core CPU (all static fields, so each can be set back):
* D11 restarts: jbo's shared fit (`gp.fit`) with the Refit part's `restarts` = 3 starts (the previous
  fit, the default start, one log-uniform perturbation of lengthscales, signal and noise), each
  `steps` = 40 Adam steps at lr 0.05 (PAPER_REFIT), instead of 5 starts x 300 Adam steps / 100 L-BFGS
  iterations. The starts are gp.fit's layout (perturbations of a default), not log-uniform in the bounds.
* D13: 1024 raw points (not 2048) + the data, the best 8 refined by 50 projected-Adam steps.
* D16 (W&dF) and 4.1 (A-GP-UCB): the scaling grid is geometric (1.1^k, up to 20 and 100), and the
  UCB maximiser of each scaling is found by screening one shared set of `grid_candidates` points
  plus the data (no gradient refinement; fields of the LengthscaleRule parts, like the grid's
  `ratio` and `largest`); the chosen scaling's UCB is then maximised in full.
* Sizes grow with the data: the engine runs the scan in segments whose buffers hold 16, 32, 64, ...
  rows (the `growth` part, GROWTH: smallest 16, doubling), so a step works on the segment's
  prefix of the buffer and twice that many pseudo points; `growth=jbo.data.WHOLE` uses the whole buffer
  every step (same numbers, tested). dataclasses.replace(GROWTH, step=k) caps the growth at k rows per segment
  (data.bucket_sizes): on lunar (236 steps) k = 32 gives 160, 192, 224, 236 instead of one jump
  from 128 to 236 (pseudo fits on 320 ... 472 points instead of always 472).
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jbo import acquisitions, bandits, checks, data, designs, gp, kernels, parts
from jbo.algorithms.gp_bo import RandomSearch
from jbo.protocols import Algorithm, Spec, Step
from jbo.spaces import Box

#: The paper's methods (the registry's "uhe_bo" and "uhe_bo:<method>": jbo.algorithms, made of the parts below).
METHODS = ("uhe_bo", "ra_bo", "random_exp3", "map", "mcmc", "a_gp_ucb", "wdf", "portfolio")
PRIORS = ("paper", "weak")


# ---------------------------------------------------------------- the GP model (spec 2.5, D9, D10, D12)
def paper_model(prior: str = "paper") -> gp.GPModel:
    """Matern-5/2 ARD, zero mean, standardised y, the bounds of D10 and Gamma(1e-3, rate) priors on
    every lengthscale, the signal variance and the noise variance, with the log-Jacobian (GPy's
    transformed-parameter density a*phi - b*exp(phi) in phi = log theta). prior "paper": rate 10
    (GPy's Gamma(1e-3, 10)); "weak": rate 0.1 (D12's sensitivity switch)."""
    if prior not in PRIORS:
        raise ValueError(f"unknown prior {prior!r}; choose one of {PRIORS}")
    g = gp.GammaPrior(1e-3, 10.0 if prior == "paper" else 0.1)
    return gp.GPModel(
        kernel="matern52",
        noise_floor=1e-8,
        lengthscale_bounds=(0.01, 5.0),
        outputscale_bounds=(1e-3, 20.0),
        noise_bounds=(1e-6, 1.0),
        prior=gp.HyperPrior(g, g, g),
        prior_jacobian=True,
        standardize=True,
        mean="zero",
    )


# ---------------------------------------------------------------- the pseudo-data set (spec 2.3, 8.5)
def nearest_labels(xp: jax.Array, x: jax.Array, mask: jax.Array) -> jax.Array:
    """Index of the nearest valid row of x (N, d) for every row of xp (M, d), L2; ties -> lowest index."""
    d2 = kernels.sqdist_matrix(xp, x)
    return jnp.argmin(jnp.where(mask[None, :], d2, jnp.inf), axis=1)


def pseudo_data(
    key, buffer: data.Buffer, factor: int = 2, size: int | None = None, draw_rows: int | None = None
) -> data.Buffer:
    """The pseudo-data set of Eq. (2): M = factor * |D| uniform points, each labelled with the observed
    y of its nearest observed input. Returned as a buffer of `size` rows (default factor * capacity)
    whose first M rows are valid. The points are the first rows of one draw of factor * capacity
    uniform points, so a smaller `size` gives the same pseudo points (bucketing changes no number).
    draw_rows: the rows of that draw (default factor * capacity); a run whose buffer grows in segments
    passes factor * num_steps, so every segment sees the same points."""
    cap, dim = buffer.x.shape
    size = factor * cap if size is None else size
    draw_rows = factor * cap if draw_rows is None else draw_rows
    xp = jax.random.uniform(key, (draw_rows, dim))[:size]
    m = factor * data.num_valid(buffer)
    idx = nearest_labels(xp, buffer.x, buffer.mask)
    valid = jnp.arange(size) < m
    return data.Buffer(xp, jnp.where(valid, buffer.y[idx], 0.0), valid, jnp.minimum(m, size).astype(jnp.int32))


def fit_pseudo(
    key,
    buffer: data.Buffer,
    model: gp.GPModel,
    warm: gp.GPParams,
    fit_kw: dict,
    factor: int = 2,
    size: int | None = None,
    draw_rows: int | None = None,
) -> gp.GPParams:
    """theta-hat of Eq. (2): the MAP loss of `model` on the pseudo-data set, whose labels get the
    standardisation of the real data (D9); then used with the real data's standardisation."""
    k_data, k_fit = jax.random.split(key)
    return fit_on(k_fit, pseudo_data(k_data, buffer, factor, size, draw_rows), buffer, model, warm, fit_kw)


def fit_on(
    key, pseudo: data.Buffer, buffer: data.Buffer, model: gp.GPModel, warm: gp.GPParams, fit_kw: dict
) -> gp.GPParams:
    """The MAP fit of `model` on the rows of `pseudo`, its labels standardised with the mean and std
    of the real data in `buffer` (D9), so theta lives on the scale the real posterior uses."""
    mean, std = model.standardization(buffer.y, buffer.mask)
    pseudo = pseudo._replace(y=jnp.where(pseudo.mask, (pseudo.y - mean) / std, 0.0))
    fixed_scale = dataclasses.replace(model, standardize=False)
    return gp.fit(key, pseudo, fixed_scale, init=start_params(buffer), warm_start=warm, **fit_kw)


def fit_map(key, buffer: data.Buffer, model: gp.GPModel, warm: gp.GPParams, fit_kw: dict) -> gp.GPParams:
    """The standard MAP estimate on the real data (baselines, Random+EXP3)."""
    return gp.fit(key, buffer, model, init=start_params(buffer), warm_start=warm, **fit_kw)


def refit_noise(
    key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, warm_log_noise, fit_kw: dict
) -> gp.GPParams:
    """theta (the pseudo-data fit) with its noise variance refitted on the real data: the MAP loss of
    `model` on `buffer` in the noise alone (model.train = ("noise",)), lengthscales and signal variance
    held at theta's. The starts are gp.fit's layout over the noise: the warm start `warm_log_noise` (the
    previous refit), the MAP fit's default start (noise 1e-3) and, from the third restart on, jitters of it."""
    noise_only = dataclasses.replace(model, train=("noise",))
    init = theta._replace(log_noise=start_params(buffer).log_noise)
    warm = theta._replace(log_noise=jnp.where(jnp.isfinite(warm_log_noise), warm_log_noise, init.log_noise))
    return gp.fit(key, buffer, noise_only, init=init, warm_start=warm, **fit_kw)


def start_params(buffer: data.Buffer) -> gp.GPParams:
    """Where every UHE fit starts (D11): lengthscale 0.2, outputscale 1, noise 1e-3 (PAPER_REFIT.start)."""
    return gp.default_params(buffer.x.shape[1], lengthscale=0.2, outputscale=1.0, noise=1e-3)


# ---------------------------------------------------------------- HMC over log theta (B2, D14)
def _flat(p: gp.GPParams) -> jax.Array:
    return jnp.concatenate([p.log_lengthscale, p.log_outputscale[None], p.log_noise[None]])


def _unflat(z: jax.Array, dim: int) -> gp.GPParams:
    return gp.GPParams(z[:dim], z[dim], z[dim + 1], jnp.zeros((), z.dtype))


def log_posterior(model: gp.GPModel, buffer: data.Buffer):
    """phi -> log p(y | X, theta) + log p(phi) (prior with Jacobian) on the standardised real data;
    -inf outside the hyper-parameter box (a proposal there is rejected)."""
    dim = buffer.x.shape[1]
    mean, std = model.standardization(buffer.y, buffer.mask)
    y = jnp.where(buffer.mask, (buffer.y - mean) / std, 0.0)
    with jax.ensure_compile_time_eval():
        lo = jnp.log(
            jnp.array([model.lengthscale_bounds[0]] * dim + [model.outputscale_bounds[0], model.noise_bounds[0]])
        )
        hi = jnp.log(
            jnp.array([model.lengthscale_bounds[1]] * dim + [model.outputscale_bounds[1], model.noise_bounds[1]])
        )

    def logp(z):
        p = _unflat(z, dim)
        v = gp.log_marginal_likelihood(p, buffer.x, y, buffer.mask, model) + model.log_prior(p)
        inside = jnp.all((z >= lo) & (z <= hi))
        return jnp.where(inside & jnp.isfinite(v), v, -jnp.inf)

    return logp


def hmc_samples(
    key,
    logp,
    start: jax.Array,
    num_warmup: int = 200,
    num_samples: int = 10,
    step_size: float = 0.05,
    num_leapfrog: int = 20,
) -> jax.Array:
    """blackjax HMC (identity mass) from `start`: `num_warmup` discarded transitions, then the next
    `num_samples` states (num_samples, D)."""
    import blackjax

    hmc = blackjax.hmc(
        logp, step_size=step_size, inverse_mass_matrix=jnp.ones(start.shape[0]), num_integration_steps=num_leapfrog
    )

    def body(state, k):
        state, _ = hmc.step(k, state)
        return state, state.position

    _, chain = jax.lax.scan(body, hmc.init(start), jax.random.split(key, num_warmup + num_samples))
    return chain[num_warmup:]


# ---------------------------------------------------------------- lengthscale scaling (B3, B4)
def scaled_ucb_argmax(
    key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, log_scales: jax.Array, beta, num_candidates: int
):
    """For every s in exp(log_scales): lengthscales l / s, the UCB maximiser over one shared screen
    (num_candidates uniform points + the data), its latent posterior std in standardised-y units,
    and (for A-GP-UCB) the posterior used. Returns (points (S, d), stds (S,))."""
    dim = buffer.x.shape[1]
    cand = jnp.concatenate([jax.random.uniform(key, (num_candidates, dim)), buffer.x])
    cmask = jnp.concatenate([jnp.ones(num_candidates, bool), buffer.mask])

    def one(ls):
        post = gp.condition(buffer, theta._replace(log_lengthscale=theta.log_lengthscale - ls), model)
        mu, var = gp.predict_batch(post, cand)
        i = jnp.argmax(jnp.where(cmask, mu + jnp.sqrt(beta * var), -jnp.inf))
        return cand[i], jnp.sqrt(var[i]) / post.y_std

    return jax.vmap(one)(log_scales)


def information_gain(buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams) -> jax.Array:
    """I_theta(A) = 1/2 log|I + sigma_n^-2 K_theta(A)| over the valid rows A of the buffer."""
    noise = model.noise(theta)
    L = gp.gram_cholesky(model, gp.masked_gram(model, theta, buffer.x, buffer.mask))
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diag(L)))  # padding rows add log 1 = 0
    return 0.5 * (logdet - data.num_valid(buffer) * jnp.log(noise))


# ---------------------------------------------------------------- the algorithm
#: D11 as run here: 3 restarts (the previous fit, the default start, one log-uniform perturbation) x 40
#: Adam steps at lr 0.05 (the spec: 5 starts x 300 Adam steps), every BO step.
PAPER_REFIT = parts.Refit(
    start=parts.FixedHypers(lengthscale=0.2, outputscale=1.0, noise=1e-3), restarts=3, steps=40, learning_rate=0.05
)
#: D13 as run here: 1024 raw points (the spec: 2048) + every observed point, the best 8 refined by 50
#: projected-Adam steps.
PAPER_MAXIMISER = parts.Maximiser(num_raw=1024, num_starts=8, steps=50, method="adam", screen_data=True)
#: Segments double from 16 rows (short runs too); Growth(step=k) caps the growth at k rows a segment.
GROWTH = data.Growth(step=None, smallest=16, whole=0, share=0.0)


def fit_kw(refit: parts.Refit) -> dict:
    """jbo.gp.fit's keywords for a Refit part (the module's fit_* functions take them)."""
    kw = dict(num_restarts=refit.restarts, num_steps=refit.steps, method=refit.method)
    if refit.method == "adam":
        kw["learning_rate"] = refit.learning_rate
    return kw


class UHEParams(NamedTuple):
    beta: jax.Array | float = 1.96  # ucb = mu + sqrt(beta) sigma (D3)
    wdf_threshold: jax.Array | float = 0.1  # W&dF: smallest scaling with sigma(x(s)) >= this (standardised y)
    agp_power: jax.Array | float = 0.9  # A-GP-UCB: reference regret p(t) = t^power
    DOMAIN = {"beta": "[0, inf)", "wdf_threshold": "[0, inf)", "agp_power": "(0, inf)"}


class UHEInfo(NamedTuple):
    """What a UHE method records at every step (Trace.info)."""

    lengthscale: jax.Array  # (d,) the lengthscales of the last BO step's posterior
    outputscale: jax.Array  # its signal variance
    noise: jax.Array  # its noise variance
    arm: jax.Array  # int32: the pair's (or step's) arm, 0 = random first
    p_random: jax.Array  # the probability the arm "random first" was drawn with
    gamma: jax.Array  # EXP3's exploration rate of the draw
    reward: jax.Array  # the last scaled reward (0 before the first)
    random: jax.Array  # bool: the step's point was uniform random
    scale: jax.Array  # A-GP-UCB g(t) / W&dF lengthscale scaling of the last step (1 otherwise)
    nonfinite_model: jax.Array  # bool: the hyper-parameters were not finite (jbo.checks)


class UHEState(NamedTuple):
    buffer: data.Buffer
    theta: gp.GPParams  # hyper-parameters of the last BO step's posterior (info; kept at a random step)
    theta_fit: gp.GPParams  # last fitted estimate (warm start of the next fit)
    bandit: bandits.BanditState
    arm: jax.Array  # int32: this pair's (or step's) arm, 0 = random first
    probs: jax.Array  # (2,) the probabilities the arm was drawn with
    gamma: jax.Array  # exploration rate used for the draw
    reward: jax.Array  # last scaled reward (0 before the first)
    random: jax.Array  # bool: the last action was a uniform random point
    scale: jax.Array  # A-GP-UCB g(t) / W&dF scaling s of the last step (1 otherwise)
    log_ls0: jax.Array  # (d,) A-GP-UCB: the MAP lengthscales on D0 (log)
    draw: jax.Array  # (factor * num_steps, 0), empty: its shape carries the pseudo draw's row count


# ---------------------------------------------------------------- the parts a method is made of
# A method (the module docstring's table) is UHE with a schedule, a hyper-parameter estimate and, for
# A-GP-UCB and W&dF, a lengthscale rule applied to that estimate; every part's settings are static.
class Schedule(eqx.Module):
    """Which evaluations are uniform random and how the bandit over {0: random first, 1: BO} learns.
    The base schedule (:class:`EveryStep`) makes every evaluation after the design a BO step."""

    paired: ClassVar[bool] = False  # one decision per pair of evaluations (needs >= 2 BO steps)
    random_steps: ClassVar[bool] = False  # some steps are uniform random: lax.cond(random, random, BO step)

    @property
    def bandit(self) -> bandits.Bandit:
        """EXP3 over the two arms, its gamma counting evaluations in rounds of 2 (paired) or 1."""
        return bandits.exp3(evals_per_round=2 if self.paired else 1)

    def choose(self, key, state: UHEState, k):
        """(arm, probs, gamma, random) at BO step k (0-based: paper t = k + 1): the arm, the probabilities
        and EXP3 rate it was drawn with, and whether this step's point is uniform random."""
        return state.arm, state.probs, state.gamma, jnp.asarray(False)

    def reward(self, state: UHEState, action, step: Step, num_initial: int, model: gp.GPModel) -> UHEState:
        """The state once `action`'s observation is in the buffer: the bandit's reward, if any."""
        return state


class EveryStep(Schedule):
    """Every evaluation after the design is a BO step, no bandit (MAP, MCMC, A-GP-UCB, W&dF)."""


class PairedEXP3(Schedule):
    """Algorithm 1's schedule (UHE-BO; Random+EXP3): at odd t EXP3 draws the pair's arm, 0 = "random then
    BO" (x_t uniform, no refit, D27) or 1 = "BO then BO"; the even t is a BO step and closes the pair
    with r = (max(y_t, y_{t-1}) - min y_D0) / (max y_D0 - min y_D0) (D23), gamma recomputed at the even
    t (D4). An odd number of BO steps ends with an unrewarded draw (D7)."""

    paired: ClassVar[bool] = True
    random_steps: ClassVar[bool] = True

    def draw(self, key, bandit_state: bandits.BanditState):
        """A new pair's (arm, probs, gamma): arm ~ p = (1 - gamma) w / sum(w) + gamma / 2."""
        p = self.bandit.probabilities(bandit_state)
        arm = jax.random.categorical(key, jnp.log(p)).astype(jnp.int32)
        return arm, p, bandits.exp3_gammas(bandit_state.count, 2, None, 2)[0]

    def update(self, bandit_state: bandits.BanditState, arm, r, probs) -> bandits.BanditState:
        """w_a <- w_a exp(gamma_t r / (2 p_a))."""
        return self.bandit.update(bandit_state, arm, r, probs)

    def choose(self, key, state: UHEState, k):
        first = k % 2 == 0  # odd paper t: the bandit decides (t is unbatched: a real branch)
        new = self.draw(key, state.bandit)
        arm, probs, gamma = jax.lax.cond(first, lambda: new, lambda: (state.arm, state.probs, state.gamma))
        return arm, probs, gamma, first & (arm == 0)

    def reward(self, state: UHEState, action, step: Step, num_initial: int, model: gp.GPModel) -> UHEState:
        def close_pair(s):
            y = s.buffer.y
            r = _scaled(jnp.maximum(y[s.buffer.count - 1], y[s.buffer.count - 2]), s.buffer, num_initial)
            return s._replace(bandit=self.update(s.bandit, s.arm, r, s.probs), reward=r)

        second = (~step.initial) & ((step.t - num_initial) % 2 == 1)  # even paper t closes the pair (t unbatched)
        return jax.lax.cond(second, close_pair, lambda s: s, state)


class RandomThenBO(PairedEXP3):
    """RA-BO's schedule (ablation): every pair is "random then BO" (arm 0 always, recorded with p = (1, 0));
    the pair's reward is recorded, the bandit never learns."""

    def draw(self, key, bandit_state: bandits.BanditState):
        return jnp.int32(0), jnp.array([1.0, 0.0]), jnp.zeros(())

    def update(self, bandit_state: bandits.BanditState, arm, r, probs) -> bandits.BanditState:
        return bandit_state


class Hedge(Schedule):
    """GP-Hedge's portfolio (B5): EXP3 over {0: Random, 1: GP-UCB} decides every step; the reward is the
    posterior mean at x_t after adding y_t (Hoffman et al., D17), scaled as in D23."""

    random_steps: ClassVar[bool] = True

    def choose(self, key, state: UHEState, k):
        probs = self.bandit.probabilities(state.bandit)
        arm = jax.random.categorical(key, jnp.log(probs)).astype(jnp.int32)
        return arm, probs, bandits.exp3_gammas(state.bandit.count, 2, None, 1)[0], arm == 0

    def reward(self, state: UHEState, action, step: Step, num_initial: int, model: gp.GPModel) -> UHEState:
        def reward_step(s):
            post = gp.condition(s.buffer, s.theta, model)
            r = _scaled(gp.predict(post, action)[0], s.buffer, num_initial)
            return s._replace(bandit=self.bandit.update(s.bandit, s.arm, r, s.probs), reward=r)

        return jax.lax.cond(step.initial, lambda s: s, reward_step, state)


class Estimate(eqx.Module):
    """The GP hyper-parameters of a BO step and the UCB built on them. The base estimate
    (:class:`RealData`) is the MAP fit on the real data D_{t-1} and the UCB of its posterior."""

    def fit(self, key, buffer: data.Buffer, model: gp.GPModel, warm: gp.GPParams, fit_kw: dict, factor: int, draw_rows):
        """theta-hat, warm-started from `warm` (the last fit)."""
        return fit_map(key, buffer, model, warm, fit_kw)

    def for_posterior(
        self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, last: gp.GPParams, fit_kw: dict
    ) -> gp.GPParams:
        """The hyper-parameters the posterior uses, from the fit theta (`last`: the previous step's)."""
        return theta

    def acquisition(self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, beta):
        """(ucb, the hyper-parameters recorded): mu + sqrt(beta) sigma of the posterior on D_{t-1} under theta."""
        post = gp.condition(buffer, theta, model)
        return (lambda x: acquisitions.ucb(post, x, beta)), theta


class RealData(Estimate):
    """theta = argmin -log p(y | X, theta) - log p(theta) on the real data D_{t-1}: the standard MAP fit
    (Random+EXP3, MAP (B1), A-GP-UCB, W&dF and Portfolio)."""


class PseudoData(Estimate):
    """theta = the MAP fit on the pseudo-data set of Eq. (2) (UHE-BO, RA-BO): M = factor |D_{t-1}| uniform
    points labelled by their nearest observation (:func:`fit_pseudo`), used with the real data's posterior.

    noise_refit (off by default, the spec's reading of the paper): the posterior and the UCB use the pseudo
    fit's lengthscales and signal variance with a noise variance refitted by MAP on the real data
    (:func:`refit_noise`) in place of the pseudo fit's own; the pseudo fit, and its warm start, are unchanged."""

    noise_refit: bool = eqx.field(static=True, default=False)

    def __check_init__(self):
        if not isinstance(self.noise_refit, bool):
            raise ValueError(f"PseudoData: noise_refit must be a bool, got {self.noise_refit!r}")

    def fit(self, key, buffer: data.Buffer, model: gp.GPModel, warm: gp.GPParams, fit_kw: dict, factor: int, draw_rows):
        return fit_pseudo(key, buffer, model, warm, fit_kw, factor, draw_rows=draw_rows)

    def for_posterior(
        self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, last: gp.GPParams, fit_kw: dict
    ) -> gp.GPParams:
        if not self.noise_refit:
            return theta
        k_noise = jax.random.fold_in(key, 1)  # a key of its own; the default path's keys stay as they are
        return refit_noise(k_noise, buffer, model, theta, last.log_noise, fit_kw)


class HMC(Estimate):
    """MCMC (B2): the MAP fit on the real data starts a blackjax HMC chain over log theta (identity mass,
    `step_size`, `num_leapfrog` leapfrog steps, D14): `num_warmup` transitions discarded, the next
    `num_samples` kept; the UCB is averaged over the samples' posteriors and the posterior mean of log
    theta is recorded."""

    num_warmup: int = eqx.field(static=True, default=200)
    num_samples: int = eqx.field(static=True, default=10)
    step_size: float = eqx.field(static=True, default=0.05)
    num_leapfrog: int = eqx.field(static=True, default=20)

    def __check_init__(self):
        _check_int("num_warmup", self.num_warmup, 0, "HMC")
        _check_int("num_samples", self.num_samples, 1, "HMC")
        _check_int("num_leapfrog", self.num_leapfrog, 1, "HMC")
        if not self.step_size > 0:
            raise ValueError(f"HMC: step_size must be > 0, got {self.step_size!r}")

    def acquisition(self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, beta):
        z = hmc_samples(
            key,
            log_posterior(model, buffer),
            _flat(theta),
            self.num_warmup,
            self.num_samples,
            self.step_size,
            self.num_leapfrog,
        )
        samples = jax.vmap(lambda zi: _unflat(zi, buffer.x.shape[1]))(z)
        posts = jax.vmap(lambda p: gp.condition(buffer, p, model))(samples)
        acq = lambda x: jnp.mean(jax.vmap(lambda post: acquisitions.ucb(post, x, beta))(posts))  # noqa: E731
        return acq, jax.tree.map(lambda a: jnp.mean(a, 0), samples)  # recorded: posterior mean of log theta


class LengthscaleRule(eqx.Module):
    """A rule on top of the fit that rescales its lengthscales l -> l / s by one s from the geometric grid
    s = ratio^k <= largest, each scaling's UCB maximiser found by screening `grid_candidates` uniform
    points plus the data (no gradient refinement). ``rule(key, buffer, model, theta, state, k, params)``
    returns (theta, s, log l_0)."""

    ratio: float = eqx.field(static=True, default=1.1)
    largest: float = eqx.field(static=True, default=20.0)
    grid_candidates: int = eqx.field(static=True, default=256)

    def __check_init__(self):
        name = type(self).__name__
        if not self.ratio > 1:
            raise ValueError(f"{name}: ratio must be > 1, got {self.ratio!r}")
        if not self.largest >= 1:
            raise ValueError(f"{name}: largest must be >= 1, got {self.largest!r}")
        _check_int("grid_candidates", self.grid_candidates, 1, name)

    def grid(self) -> jax.Array:
        """log s over the grid: 0, log ratio, 2 log ratio, ... up to log largest."""
        return jnp.log(self.ratio) * jnp.arange(_grid_len(self.ratio, self.largest))

    def __call__(self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, state: UHEState, k, params):
        raise NotImplementedError


class ShrinkingLengthscales(LengthscaleRule):
    """A-GP-UCB (B3; Berkenkamp et al. 2019, the spec's reconstruction 4.1): theta_0 = the MAP fit on D0
    (D15); h(t) = the largest s with sqrt(t beta I_theta0/s) <= t^agp_power (UHEParams), I the information
    gain with the scaling's UCB maximiser added; g(t) = max(g(t-1), h(t)), g(0) = 1; the lengthscales are
    min(l, l_0 / g(t)). Grid up to 100."""

    largest: float = eqx.field(static=True, default=100.0)

    def __call__(self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, state: UHEState, k, params):
        log_ls0 = jnp.where(k == 0, theta.log_lengthscale, state.log_ls0)  # D15: theta_0 = MAP on D0
        t = (k + 1).astype(jnp.float64)
        grid = self.grid()
        base = theta._replace(log_lengthscale=log_ls0)
        pts, _ = scaled_ucb_argmax(key, buffer, model, base, grid, params.beta, self.grid_candidates)
        gains = jax.vmap(
            lambda ls, x: information_gain(
                data.append(buf_grow(buffer), x, 0.0), model, base._replace(log_lengthscale=log_ls0 - ls)
            )
        )(grid, pts)
        ok = jnp.sqrt(t * params.beta * gains) <= t**params.agp_power
        h = jnp.max(jnp.where(ok, jnp.exp(grid), 1.0))
        scale = jnp.maximum(jnp.where(k == 0, 1.0, state.scale), h)  # g(t) = max(g(t-1), h(t)), g(0) = 1
        theta = theta._replace(log_lengthscale=jnp.minimum(theta.log_lengthscale, log_ls0 - jnp.log(scale)))
        return theta, scale, log_ls0


class LengthscaleBound(LengthscaleRule):
    """W&dF (B4; Wang & de Freitas 2014 in Berkenkamp's variant, the spec's 4.2): the smallest s whose UCB
    maximiser has latent posterior std >= wdf_threshold (UHEParams, standardised y), else the largest;
    the lengthscales are l / s. Grid up to 20."""

    def __call__(self, key, buffer: data.Buffer, model: gp.GPModel, theta: gp.GPParams, state: UHEState, k, params):
        grid = self.grid()
        _, stds = scaled_ucb_argmax(key, buffer, model, theta, grid, params.beta, self.grid_candidates)
        ok = stds >= params.wdf_threshold
        i = jnp.where(jnp.any(ok), jnp.argmax(ok), grid.shape[0] - 1)  # first qualifying, else the largest
        return theta._replace(log_lengthscale=theta.log_lengthscale - grid[i]), jnp.exp(grid[i]), state.log_ls0


#: The parts by the names a config file gives them: {"kind": name, ...fields} (or the name alone).
SCHEDULES = {"paired_exp3": PairedEXP3, "random_then_bo": RandomThenBO, "hedge": Hedge, "every_step": EveryStep}
ESTIMATES = {"pseudo_data": PseudoData, "real_data": RealData, "hmc": HMC}
LENGTHSCALE_RULES = {"shrinking": ShrinkingLengthscales, "bound": LengthscaleBound}


def _from_config(kinds: dict, option: str):
    """A converter for UHE's `option`: a part passes unchanged, a kind's name or a dict
    {"kind": name, ...fields} (a config file's table) becomes that part."""

    def convert(value):
        if isinstance(value, str):
            value = {"kind": value}
        if not isinstance(value, dict):
            return value
        fields = dict(value)
        kind = fields.pop("kind", None)
        if kind not in kinds:
            raise ValueError(f"UHE: {option} kind must be one of {tuple(kinds)}, got {kind!r}")
        return kinds[kind](**fields)

    return convert


class UHE(Algorithm):
    """UHE-BO and the methods of the paper's comparison, each UHE with its parts (the module docstring's
    table; jbo.algorithms.get("uhe_bo") / "uhe_bo:<method>" or :func:`make` build them):

    schedule     : :class:`PairedEXP3` (Algorithm 1), :class:`RandomThenBO`, :class:`Hedge` or :class:`EveryStep`;
    estimate     : :class:`PseudoData` (Eq. 2; its noise_refit), :class:`RealData` (MAP) or :class:`HMC`;
    lengthscales : None, :class:`ShrinkingLengthscales` (A-GP-UCB) or :class:`LengthscaleBound` (W&dF).

    A config file names a part by its kind with its fields, e.g. ``estimate = {kind = "hmc", num_warmup = 50}``
    (SCHEDULES, ESTIMATES, LENGTHSCALE_RULES).

    Further static configuration: num_initial (D1: 3d in the experiments), prior ("paper" / "weak"), the
    pseudo-data factor (M = factor |D|), the fit (`refit`, a jbo.parts.Refit: its restarts, steps,
    learning_rate and method; UHE fits at every BO step, so its schedule is not read, and every fit
    starts from lengthscale 0.2, outputscale 1, noise 1e-3), the acquisition's maximiser (`maximiser`, a
    jbo.parts.Maximiser; the data are screened with the raw points) and the buffer's growth (`growth`, a
    jbo.data.Growth). Params (UHEParams): beta, the W&dF threshold and the A-GP-UCB reference-regret power.
    The defaults are UHE-BO's parts.
    """

    schedule: Schedule = eqx.field(static=True, default=PairedEXP3(), converter=_from_config(SCHEDULES, "schedule"))
    estimate: Estimate = eqx.field(static=True, default=PseudoData(), converter=_from_config(ESTIMATES, "estimate"))
    lengthscales: LengthscaleRule | None = eqx.field(
        static=True, default=None, converter=_from_config(LENGTHSCALE_RULES, "lengthscales")
    )
    num_initial: int = eqx.field(static=True, default=6)
    prior: str = eqx.field(static=True, default="paper")
    factor: int = eqx.field(static=True, default=2)
    refit: parts.Refit = eqx.field(static=True, default=PAPER_REFIT)
    maximiser: parts.Maximiser = eqx.field(static=True, default=PAPER_MAXIMISER)
    growth: data.Growth = eqx.field(static=True, default=GROWTH)

    def __check_init__(self):
        if not isinstance(self.schedule, Schedule):
            raise ValueError(
                f"UHE: schedule must be a Schedule (PairedEXP3(), RandomThenBO(), Hedge(), EveryStep()), "
                f"got {self.schedule!r}"
            )
        if not isinstance(self.estimate, Estimate):
            raise ValueError(
                f"UHE: estimate must be an Estimate (PseudoData(), RealData(), HMC()), got {self.estimate!r}"
            )
        if self.lengthscales is not None and not isinstance(self.lengthscales, LengthscaleRule):
            raise ValueError(
                "UHE: lengthscales must be None or a LengthscaleRule (ShrinkingLengthscales(), LengthscaleBound()), "
                f"got {self.lengthscales!r}"
            )
        if self.lengthscales is not None and isinstance(self.estimate, HMC):
            raise ValueError("UHE: lengthscales must be None with estimate=HMC(): the HMC samples set the lengthscales")
        if self.prior not in PRIORS:
            raise ValueError(f"unknown prior {self.prior!r}; choose one of {PRIORS}")
        if self.num_initial < 2:
            raise ValueError(
                f"UHE methods need an initial design of >= 2 points (reward scaling, D23), "
                f"got num_initial={self.num_initial}"
            )
        if self.factor < 1:
            raise ValueError(f"the pseudo-data factor must be >= 1 (M_t >= |D_t-1|), got {self.factor}")
        if not isinstance(self.refit, parts.Refit):
            raise ValueError(f"UHE: refit must be a jbo.parts.Refit, got {self.refit!r}")
        if not isinstance(self.maximiser, parts.Maximiser):
            raise ValueError(f"UHE: maximiser must be a jbo.parts.Maximiser, got {self.maximiser!r}")
        if not isinstance(self.growth, data.Growth):
            raise ValueError(f"UHE: growth must be a jbo.data.Growth, got {self.growth!r}")

    @property
    def model(self) -> gp.GPModel:
        return paper_model(self.prior)

    @property
    def _fit_kw(self) -> dict:
        return fit_kw(self.refit)

    def default_params(self) -> UHEParams:
        return UHEParams()

    def initial_actions(self, key, spec: Spec):
        return designs.uniform(key, self.num_initial, spec.dim)  # D1: i.i.d. uniform

    def init(self, key, params, spec: Spec) -> UHEState:
        if not isinstance(spec.space, Box):
            raise ValueError(f"UHE methods run on a box, got {type(spec.space).__name__}")
        if self.schedule.paired and spec.num_steps - self.num_initial < 2:
            raise ValueError(
                f"{type(self.schedule).__name__} evaluates in pairs: num_steps={spec.num_steps} leaves "
                f"{spec.num_steps - self.num_initial} BO steps after the {self.num_initial}-point design; "
                f"need at least 2"
            )
        dim = spec.dim
        theta = start_params(data.empty(1, dim))
        return UHEState(
            data.empty(spec.num_steps, dim),
            theta,
            theta,
            self.schedule.bandit.init(2),
            jnp.int32(1),
            jnp.full(2, 0.5),
            jnp.zeros(()),
            jnp.zeros(()),
            jnp.asarray(False),
            jnp.ones(()),
            theta.log_lengthscale,
            jnp.zeros((self.factor * spec.num_steps, 0)),
        )

    # ---------------------------------------------------------------- ask: choose the arm, then the point
    def ask(self, key, state: UHEState, params: UHEParams, step: Step):
        k_arm, k_rand, k_bo = jax.random.split(key, 3)
        k = step.t - self.num_initial  # 0-based BO step: paper t = k + 1
        arm, probs, gamma, random = self.schedule.choose(k_arm, state, k)

        def random_step():  # x_t ~ U([0, 1]^d), no refit (D27)
            return (
                jax.random.uniform(k_rand, (state.buffer.x.shape[1],)),
                state.theta,
                state.theta_fit,
                state.scale,
                state.log_ls0,
            )

        def bo_step():
            return self._bo(k_bo, state, params, step)

        # a cond whose predicate is batched (the arm differs across vmapped seeds) runs both sides
        step_out = jax.lax.cond(random, random_step, bo_step) if self.schedule.random_steps else bo_step()
        x, theta, theta_fit, scale, log_ls0 = step_out
        return x, state._replace(
            theta=theta,
            theta_fit=theta_fit,
            arm=arm,
            probs=probs,
            gamma=gamma,
            random=random,
            scale=scale,
            log_ls0=log_ls0,
        )

    def _bo(self, key, state: UHEState, params: UHEParams, step: Step):
        """The BO step on the segment's buffer (the engine grows it with the data): fit theta, the
        posterior's hyper-parameters, the lengthscale rule, then x_t = argmax of the UCB."""
        k_fit, k_acq, k_grid = jax.random.split(key, 3)
        buf = state.buffer
        model, kw = self.model, self._fit_kw
        theta = self.estimate.fit(k_fit, buf, model, state.theta_fit, kw, self.factor, state.draw.shape[0])
        theta_fit = gp.keep_finite(theta, state.theta_fit)  # a failed fit (NaN) is flagged by info()
        theta = self.estimate.for_posterior(k_fit, buf, model, theta, state.theta, kw)
        scale, log_ls0 = jnp.ones(()), state.log_ls0
        if self.lengthscales is not None:
            theta, scale, log_ls0 = self.lengthscales(
                k_grid, buf, model, theta, state, step.t - self.num_initial, params
            )
        acq, theta = self.estimate.acquisition(k_grid, buf, model, theta, params.beta)
        x = self.maximiser.box(acq, k_acq, buf.x.shape[1], buf)[0]
        return x, theta, theta_fit, scale, log_ls0

    # ---------------------------------------------------------------- tell: record, reward the arm
    def tell(self, key, state: UHEState, params: UHEParams, action, observation, step: Step):
        state = state._replace(buffer=data.append(state.buffer, action, observation))
        return self.schedule.reward(state, action, step, self.num_initial, self.model)

    def info(self, state: UHEState, params) -> UHEInfo:
        p = state.theta
        return UHEInfo(
            lengthscale=jnp.exp(p.log_lengthscale),
            outputscale=jnp.exp(p.log_outputscale),
            noise=self.model.noise(p),
            arm=state.arm,
            p_random=state.probs[0],
            gamma=state.gamma,
            reward=state.reward,
            random=state.random,
            scale=state.scale,
            nonfinite_model=~checks.all_finite(p),
        )


def buf_grow(buf: data.Buffer) -> data.Buffer:
    """The buffer with one more (invalid) row, so a point can be appended whatever its fill."""
    return data.Buffer(
        jnp.concatenate([buf.x, buf.x[:1]]),
        jnp.concatenate([buf.y, jnp.zeros(1)]),
        jnp.concatenate([buf.mask, jnp.zeros(1, bool)]),
        jnp.minimum(buf.count, data.num_valid(buf)).astype(jnp.int32),
    )


def _scaled(r, buffer: data.Buffer, n0: int):
    """D23: (r - min y_D0) / (max y_D0 - min y_D0), D0 = the first n0 rows; a flat D0 scales by 1."""
    d0 = jnp.arange(buffer.capacity) < n0
    lo = jnp.min(jnp.where(d0, buffer.y, jnp.inf))
    hi = jnp.max(jnp.where(d0, buffer.y, -jnp.inf))
    span = hi - lo
    return (r - lo) / jnp.where(span > 1e-12, span, 1.0)


def _grid_len(ratio: float, top: float) -> int:
    return int(math.floor(math.log(top) / math.log(ratio) + 1e-9)) + 1


# ---------------------------------------------------------------- B6: random search
class UHERandom(RandomSearch):
    """Uniform random search (B6) with the UHE methods' uniform initial design (D1)."""

    num_initial: int = eqx.field(static=True, default=6)

    def initial_actions(self, key, spec: Spec):
        return designs.uniform(key, self.num_initial, spec.dim)


def make(method: str, **options):
    """The paper's method by name, one of NAMES: the registry's configured parts ("uhe_bo", "uhe_bo:<method>"
    in jbo.algorithms), an option of a part's name replacing that part. "random" fits nothing, so the
    option `growth` is accepted and has nothing to act on."""
    from jbo.algorithms import BUILTIN  # the registry imports this module

    if method not in NAMES:
        raise ValueError(f"unknown UHE method {method!r}; choose one of {NAMES}")
    return BUILTIN["uhe_bo" if method == "uhe_bo" else f"uhe_bo:{method}"](**options)


def random_search(**options) -> UHERandom:
    """B6 (the registry's "uhe_bo:random"): :class:`UHERandom`, the option `growth` dropped (nothing grows)."""
    return UHERandom(**{k: v for k, v in options.items() if k != "growth"})


def _check_int(name: str, value, low: int, part: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{part}: {name} must be an int >= {low}, got {value!r}")


NAMES = METHODS + ("random",)
__all__ = [
    "METHODS",
    "NAMES",
    "UHE",
    "UHEInfo",
    "UHEParams",
    "UHEState",
    "UHERandom",
    "ESTIMATES",
    "LENGTHSCALE_RULES",
    "SCHEDULES",
    "EveryStep",
    "Estimate",
    "HMC",
    "Hedge",
    "LengthscaleBound",
    "LengthscaleRule",
    "PairedEXP3",
    "PseudoData",
    "RandomThenBO",
    "RealData",
    "Schedule",
    "ShrinkingLengthscales",
    "random_search",
    "fit_map",
    "fit_pseudo",
    "hmc_samples",
    "refit_noise",
    "fit_on",
    "information_gain",
    "log_posterior",
    "make",
    "nearest_labels",
    "paper_model",
    "pseudo_data",
    "scaled_ucb_argmax",
    "start_params",
    "fit_kw",
    "GROWTH",
    "PAPER_MAXIMISER",
    "PAPER_REFIT",
]
