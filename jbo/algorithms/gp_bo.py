"""Standard baselines: random search and GP-based BO, built by composition.

A :class:`GPBO` is three pieces and an optimiser:

    hyper-parameters : the fixed rule (`hypers`, default :class:`Hypers`: constants in Params) or a
                       refit every step (MLE or MAP of the GPModel, warm-started from the last fit);
    model            : one jbo.gp.GPModel (kernel, bounds, priors, trained parameters, mean, noise floor);
    acquisition      : any jbo.acquisitions.Acquisition (UCB, EI, log-EI, PI, Thompson, mean, std, a
                       user's function, or a contextual piece such as SBO-KDE's);

and it maximises the acquisition with the inner optimiser (raw screening + top-k projected Adam or
L-BFGS), or scores every arm on a finite arm set. It runs on a box, a finite arm set, control sets
(the GP sees the realised full points) and contextual problems (a contextual acquisition puts the GP
on (x, c); any other ignores c). One class serves every paper's GP baseline: the BOKE paper's GP-UCB
is a GPBO with the SE kernel, zero mean and its fixed-hyper-parameter rule (jbo.algorithms.boke),
the SBO-KDE paper's methods are GPBOs with contextual acquisitions (jbo.algorithms.sbo).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jbo import acquisitions, checks, data, designs, gp, kernels, optimize
from jbo.acquisitions import check_scalar, srinivas_beta  # noqa: F401  (re-exported: jbo.algorithms.srinivas_beta)
from jbo.engine import BUCKET_STEP, Algorithm, Spec, Step, check_bucket
from jbo.spaces import Box, ControlAction, ControlObservation, ControlSets, FiniteArms

FITS = ("fixed", "mle", "map")
# Refit every step while t < REFIT_ALL, then each time the data has grown by 1/32 (GPBO.refit_now): from
# t = 128, regret no worse than refitting every step on four problems at T = 256, 2.4x cheaper
# (experiments/long_run_defaults.py --compare refit); from t = 64 instead of 128, regret no worse at
# T = 100, 200 and 256 on the same four problems, 10% cheaper at T = 256 and about 20% at T = 200
# (experiments/long_run_defaults.py --compare refit_all --checkpoints 100 200)
REFIT_ALL = 64
REFIT_GROWTH = 1 / 32
# The inner optimiser screens the 128 best observed points with its raw points (every point in a run of
# at most 128 steps): regret no worse than screening all of them on four problems at T = 256, cheaper at
# large N (experiments/long_run_defaults.py --compare screen)
SCREEN_DATA = 128


# ---------------------------------------------------------------- random search
class RandomState(NamedTuple):
    space: Any  # the action space (its sample() draws the next action)


class RandomSearch(Algorithm):
    """Uniform random actions (after the shared initial design), on any space."""

    num_initial: int = eqx.field(static=True, default=5)

    def init(self, key, params, spec: Spec):
        return RandomState(spec.space)

    def ask(self, key, state, params, step):
        return state.space.sample(key), state

    def tell(self, key, state, params, action, observation, step):
        return state


# ---------------------------------------------------------------- hyper-parameter rules
class HypersParams(NamedTuple):
    """Fixed (fit="fixed") or initial (refits) hyper-parameters: unit cube, model's y scale."""

    lengthscale: jax.Array | float = 0.2
    outputscale: jax.Array | float = 1.0
    noise: jax.Array | float = 1e-4
    mean: jax.Array | float = 0.0
    DOMAIN = {"lengthscale": "(0, inf)", "outputscale": "(0, inf)", "noise": "[0, inf)"}


class Hypers(eqx.Module):
    """The default rule: hyper-parameters are the constants in HypersParams (defaults from the fields)."""

    lengthscale: float = eqx.field(static=True, default=0.2)
    outputscale: float = eqx.field(static=True, default=1.0)
    noise: float = eqx.field(static=True, default=1e-4)
    mean: float = eqx.field(static=True, default=0.0)

    def default_params(self) -> HypersParams:
        return HypersParams(self.lengthscale, self.outputscale, self.noise, self.mean)

    def __call__(self, buffer: data.Buffer, params: HypersParams) -> gp.GPParams:
        return gp.default_params(buffer.x.shape[1], params.lengthscale, params.outputscale, params.noise, params.mean)


class GPBOParams(NamedTuple):
    """Traced (sweepable) numbers: the acquisition's and the hyper-parameter rule's."""

    acquisition: Any = ()
    hypers: Any = HypersParams()


class GPBOState(NamedTuple):
    buffer: data.Buffer
    gp_params: gp.GPParams  # last fitted (or the fixed) hyper-parameters
    space: Any  # the action space (finite arms are scored one by one)
    post: Any = None  # fixed hyper-parameters or a refit schedule: the buffer's factor, extended rank-1 in tell
    nonfinite: Any = None  # (2,) bool: the last ask's posterior / acquisition value was not finite
    pending_from: Any = None  # int32, batch_size > 1: rows from here on are this round's pending points
    batch_points: Any = None  # (q, d), batch_mode "mc": the round's points, chosen jointly at its first step


LIES = ("kb", "cl_min", "cl_max", "cl_mean")
BATCH_LIE = "cl_min"  # chosen by experiments/batch/q_batch.py (hartmann6, q = 4, 16 seeds)


def lie_values(kind: str, real: data.Buffer, hyp: gp.GPParams, model, x: jax.Array) -> jax.Array:
    """Values to tell for pending points x (m, d), chosen before their own values are known (a batch,
    or evaluations still running): "kb" (kriging believer) the posterior mean of the real data at each
    point; "cl_min" / "cl_max" / "cl_mean" (constant liars) the smallest, largest or mean observed
    value (Ginsbourger, Le Riche & Carraro 2010). `real`: the buffer of real observations."""
    if kind == "kb":
        return gp.predict_batch(gp.condition(real, hyp, model), x)[0]
    y = jnp.where(real.mask, real.y, jnp.nan)
    value = {"cl_min": jnp.nanmin, "cl_max": jnp.nanmax, "cl_mean": jnp.nanmean}[kind](y)
    return jnp.full(x.shape[0], value)


class GPBO(Algorithm):
    """GP-based BO with a Gaussian likelihood. Static configuration only; numbers are in GPBOParams.

    Default refit: 1 restart x 5 Adam steps warm-started from the previous step's fit, chosen by
    measurement (experiments/refit_defaults.py; docs/defaults.md), every step while t < refit_all = 64
    and then on a schedule (refit_growth = 1/32, :meth:`refit_now`, chosen by
    experiments/long_run_defaults.py --compare refit and --compare refit_all); between refits the
    factor is extended by rank-1 appends, O(N^2) per step instead of the refit's O(N^3)
    factorisations. refit_growth=None refits every step.
    bucket / bucket_step: the engine's growing segments (jbo.engine, "Growing state").
    batch_size = q > 1: synchronous q-batch BO inside the scan (:meth:`pending_posterior`): every
    engine step proposes one point, q steps make a round, the round's first step refits, and a round's
    points are chosen with the round's earlier points carrying lies (batch_lie: a constant liar
    "cl_min" (default, by measurement) / "cl_max" / "cl_mean", or "kb", the kriging believer), for any
    acquisition. :meth:`ask_pending` is the same choice for jbo.AskTell's batches and evaluations still
    running.

    Convenience arguments: `acquisition` may be a name ("ucb", "ei", "log_ei", "pi", "ts", "mean",
    "std") or a function fn(post, x, best); `kernel` and `prior` build the model when `model` is not
    given; `beta_schedule` ("constant" / "srinivas") and `num_features` configure a named UCB / TS.
    """

    acquisition: acquisitions.Acquisition = eqx.field(static=True)
    model: gp.GPModel = eqx.field(static=True)
    hypers: Any = eqx.field(static=True)
    num_initial: int = eqx.field(static=True)
    fit: str = eqx.field(static=True)
    fit_method: str = eqx.field(static=True)
    num_restarts: int = eqx.field(static=True)
    fit_steps: int = eqx.field(static=True)
    fit_learning_rate: float = eqx.field(static=True)
    num_raw: int = eqx.field(static=True)
    num_raw_per_dim: int = eqx.field(static=True)  # > 0: screen num_raw_per_dim * d points instead
    num_starts: int = eqx.field(static=True)
    opt_steps: int = eqx.field(static=True)
    opt_method: str = eqx.field(static=True)
    screen_data: bool | int = eqx.field(static=True)  # also screen observed points: all, none, or the k best
    design: str = eqx.field(static=True)  # initial design on a box: "lhs" or "sobol"
    capacity: int = eqx.field(static=True)  # buffer rows; 0: the run's num_steps
    refit_growth: float | None = eqx.field(static=True)  # None: refit every step; g: see refit_now
    refit_all: int = eqx.field(static=True)  # with refit_growth: every step while t < refit_all
    bucket: bool | tuple = eqx.field(static=True)  # grow the buffer with the data (engine segments; tuple: sizes)
    bucket_step: int | None = eqx.field(static=True)  # segments grow by at most this many rows (None: doubling)
    batch_size: int = eqx.field(static=True)  # q: points per round, chosen before the round's values are seen
    batch_lie: str = eqx.field(static=True)  # what the round's pending points carry: LIES
    batch_mode: str = eqx.field(static=True)  # "lie" (one point at a time) or "mc" (q-UCB / q-EI, jointly)
    batch_samples: int = eqx.field(static=True)  # Monte-Carlo samples of the joint posterior ("mc")

    def __init__(
        self,
        acquisition="ucb",
        model: gp.GPModel | None = None,
        hypers=None,
        num_initial: int = 5,
        fit: str = "mle",
        fit_method: str = "adam",
        num_restarts: int = 1,
        fit_steps: int = 5,
        fit_learning_rate: float = 0.1,
        num_raw: int = 512,
        num_raw_per_dim: int = 0,
        num_starts: int = 10,
        opt_steps: int = 30,
        opt_method: str = "adam",
        screen_data: bool | int = SCREEN_DATA,
        design: str = "lhs",
        capacity: int = 0,
        kernel="matern52",
        prior: gp.HyperPrior | None = None,
        beta_schedule: str | None = None,
        num_features: int | None = None,
        bucket: bool | tuple = True,
        bucket_step: int | None = BUCKET_STEP,
        refit_growth: float | None = REFIT_GROWTH,
        refit_all: int = REFIT_ALL,
        batch_size: int = 1,
        batch_lie: str = BATCH_LIE,
        batch_mode: str = "lie",
        batch_samples: int = 128,
    ):
        if isinstance(acquisition, str) and acquisition == "ucb" and beta_schedule is not None:
            acquisition = acquisitions.UCB(schedule=beta_schedule)
        elif isinstance(acquisition, str) and acquisition == "ts" and num_features is not None:
            acquisition = acquisitions.Thompson(num_features=num_features)
        elif beta_schedule is not None or num_features is not None:
            raise ValueError("beta_schedule goes with acquisition='ucb' and num_features with 'ts'")
        self.acquisition = acquisitions.as_acquisition(acquisition)
        if fit not in FITS:
            raise ValueError(f"unknown fit {fit!r}; choose one of {FITS}")
        if model is None:
            model = gp.GPModel(kernel=kernel, prior=prior)
        elif prior is not None:
            raise ValueError("pass the prior inside the GPModel, not next to it")
        if fit == "map" and model.prior is None:
            model = dataclasses.replace(model, prior=gp.HyperPrior())
        if fit == "mle" and model.prior is not None:
            raise ValueError("a GPModel with a prior is fitted by MAP: use fit='map'")
        self.model, self.hypers = model, Hypers() if hypers is None else hypers
        self.num_initial, self.fit, self.fit_method = num_initial, fit, fit_method
        self.num_restarts, self.fit_steps, self.fit_learning_rate = num_restarts, fit_steps, fit_learning_rate
        self.num_raw, self.num_raw_per_dim, self.num_starts = num_raw, num_raw_per_dim, num_starts
        if not isinstance(screen_data, bool) and not (isinstance(screen_data, int) and screen_data >= 1):
            raise ValueError(
                f"screen_data must be True, False or a positive int (the best k observations), got {screen_data!r}"
            )
        self.opt_steps, self.opt_method, self.screen_data = opt_steps, opt_method, screen_data
        self.design, self.capacity = design, capacity
        data.check_bucket_step(bucket_step)
        check_bucket(bucket)
        self.bucket, self.bucket_step = bucket, bucket_step
        number = isinstance(refit_growth, (int, float)) and not isinstance(refit_growth, bool)
        if refit_growth is not None and not (number and 0 < refit_growth < float("inf")):
            raise ValueError(f"refit_growth must be None (refit every step) or a positive number, got {refit_growth!r}")
        if isinstance(refit_all, bool) or not isinstance(refit_all, int) or refit_all < 1:
            raise ValueError(f"refit_all must be a positive int, got {refit_all!r}")
        self.refit_growth, self.refit_all = refit_growth, refit_all
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if batch_lie not in LIES:
            raise ValueError(f"unknown batch_lie {batch_lie!r}; choose one of {LIES}")
        self.batch_size, self.batch_lie = batch_size, batch_lie
        if batch_mode not in ("lie", "mc"):
            raise ValueError(f"batch_mode must be 'lie' or 'mc', got {batch_mode!r}")
        if isinstance(batch_samples, bool) or not isinstance(batch_samples, int) or batch_samples < 1:
            raise ValueError(f"batch_samples must be a positive int, got {batch_samples!r}")
        if batch_mode == "mc":  # a named error now, not at trace time
            acquisitions.joint_form(self.acquisition)
        self.batch_mode, self.batch_samples = batch_mode, batch_samples

    def __check_init__(self):
        if isinstance(self.acquisition, acquisitions.Thompson) and self.model.kernel not in kernels.FOURIER:
            raise ValueError(
                f"Thompson sampling needs random Fourier features, which exist for {kernels.FOURIER}; "
                f"got the kernel {checks.model_note(self)[len(' (kernel ') : -1]}"
            )
        if self.num_initial < 1:
            raise ValueError("GP-BO needs num_initial >= 1")
        if self.design not in ("lhs", "sobol"):
            raise ValueError(f"unknown design {self.design!r}; choose 'lhs' or 'sobol'")
        if self.fit_method not in ("adam", "lbfgs") or self.opt_method not in ("adam", "lbfgs"):
            raise ValueError("fit_method and opt_method are 'adam' or 'lbfgs'")

    @property
    def growth(self) -> data.Growth:
        return data.as_growth(self.bucket, step=self.bucket_step)

    def default_params(self) -> GPBOParams:
        return GPBOParams(self.acquisition.default_params(), self.hypers.default_params())

    def initial_actions(self, key, spec: Spec):
        if self.design == "sobol" and not isinstance(spec.space, FiniteArms):
            return designs.sobol(key, self.num_initial, spec.dim)  # Sobol for x only (SBO-KDE spec D7)
        return super().initial_actions(key, spec)

    def _width(self, spec: Spec) -> int:
        if self.acquisition.contextual:
            if spec.context_dim < 1:
                raise ValueError(f"{type(self.acquisition).__name__} needs a contextual environment (context_dim >= 1)")
            return spec.dim + spec.context_dim
        return spec.dim

    def init(self, key, params: GPBOParams, spec: Spec) -> GPBOState:
        buffer = data.empty(self.capacity or spec.num_steps, self._width(spec))
        hyp = self.hypers(buffer, params.hypers)
        post = gp.condition(buffer, hyp, self.model) if self._keeps_factor(buffer.capacity) else None
        points = None
        if self.batch_size > 1 and self.batch_mode == "mc":
            if not isinstance(spec.space, Box):
                raise ValueError(f"batch_mode='mc' chooses points of a box, got {type(spec.space).__name__}")
            points = jnp.zeros((self.batch_size, self._width(spec)))
        return GPBOState(buffer, hyp, spec.space, post, jnp.zeros(2, bool), jnp.int32(0), points)

    def _keeps_factor(self, capacity: int) -> bool:
        """Whether the state keeps the buffer's factor up to date by rank-1 appends (tell): with fixed
        hyper-parameters, and for a refit schedule that skips steps in a run of `capacity` rows."""
        return self.batch_size == 1 and (self.fit == "fixed" or self._scheduled(capacity))

    def _scheduled(self, capacity: int) -> bool:
        """A refit schedule that can skip a step: a refitting model, refit_growth set, and steps at or
        beyond refit_all within this capacity (a run of at most refit_all steps refits every step
        with the plain program)."""
        return (
            self.fit != "fixed" and self.refit_growth is not None and capacity > self.refit_all and self.batch_size == 1
        )

    def refit_now(self, t) -> jax.Array:
        """Whether step t refits (refit_growth = g): every step while t < refit_all, then whenever
        floor(log(t) / log(1 + g)) increases, i.e. each time the data has grown by a factor ~1 + g
        (g = 1/32: 22 refits over steps 64-128 instead of 64, 37 over 128-400 instead of 272). t is
        the scan's unbatched step index, so the choice is a real branch under vmap over seeds."""
        if self.refit_growth is None:
            return jnp.asarray(True)
        t = jnp.asarray(t, jnp.float64)
        level = lambda s: jnp.floor(jnp.log(jnp.maximum(s, 1.0)) / jnp.log1p(self.refit_growth))  # noqa: E731
        return (t < self.refit_all) | (level(t) > level(t - 1.0))

    def fitted(self, key, state: GPBOState, params: GPBOParams) -> gp.GPParams:
        """Hyper-parameters for this step: the fixed rule, or a refit (restart 0 warm-starts from the last fit)."""
        start = self.hypers(state.buffer, params.hypers)
        if self.fit == "fixed":
            return start
        return gp.fit(
            key,
            state.buffer,
            self.model,
            init=start,
            warm_start=state.gp_params,
            num_restarts=self.num_restarts,
            num_steps=self.fit_steps,
            learning_rate=self.fit_learning_rate,
            method=self.fit_method,
        )

    def posterior(self, state: GPBOState, hyp: gp.GPParams) -> gp.Posterior:
        """The posterior of the buffer under fixed hyper-parameters hyp: the factor kept up to date by
        rank-1 appends (tell) is reused, O(N^2), unless hyp changed (a data-dependent rule, e.g. a
        noise relative to std(y)); then the buffer is factorised afresh."""
        same = jnp.all(
            jnp.asarray([jnp.all(a == b) for a, b in zip(jax.tree.leaves(hyp), jax.tree.leaves(state.post.params))])
        )
        return jax.lax.cond(
            same, lambda: gp.refresh(state.post, state.buffer), lambda: gp.condition(state.buffer, hyp, self.model)
        )

    def screened(self, buffer: data.Buffer):
        """(candidates, mask) of observed points screened with the raw points: none (screen_data False,
        or a contextual GP, whose rows are (x, c)), every row (True, or a buffer of at most
        screen_data rows), or the screen_data rows with the largest observations (an int k): at
        N >> k, screening all N rows costs more than the raw points and adds no better start."""
        if self.screen_data is False or self.acquisition.contextual:
            return None, None
        if self.screen_data is True or buffer.capacity <= self.screen_data:
            return buffer.x, buffer.mask
        _, rows = jax.lax.top_k(jnp.where(buffer.mask, buffer.y, -jnp.inf), self.screen_data)
        return buffer.x[rows], buffer.mask[rows]

    def pending_posterior(self, key, state: GPBOState, params: GPBOParams, pending_from, refit):
        """(hyper-parameters, posterior) with the rows from `pending_from` on *pending*: points told to
        the state whose values are not to be seen (a batch round's, or evaluations still running).
        Where `refit`, the hyper-parameters are fitted on the rows before pending_from, else kept; the
        posterior conditions on every row, the pending ones carrying lies (batch_lie, :func:`lie_values`)."""
        buf = state.buffer
        pending = buf.mask & (jnp.arange(buf.capacity) >= pending_from)
        real = buf._replace(mask=buf.mask & ~pending)
        hyp = jax.lax.cond(
            refit, lambda: self.fitted(key, state._replace(buffer=real), params), lambda: state.gp_params
        )
        lied = buf._replace(y=jnp.where(pending, lie_values(self.batch_lie, real, hyp, self.model, buf.x), buf.y))
        return hyp, gp.condition(lied, hyp, self.model)

    def predict(self, state: GPBOState, params: GPBOParams, x: jax.Array) -> jax.Array:
        """Posterior mean at the rows of x (m, d) under the state's last hyper-parameters."""
        return gp.predict_batch(gp.condition(state.buffer, state.gp_params, self.model), x)[0]

    def ask(self, key, state: GPBOState, params: GPBOParams, step: Step):
        k_fit, k_acq, k_opt = jax.random.split(key, 3)
        pending_from = state.pending_from
        if self.batch_size > 1 and self.batch_mode == "mc":
            return self._joint_round(k_fit, k_acq, k_opt, state, params, step)
        if self.batch_size > 1:  # a q-batch round: the round's first step refits; its later points are pending
            start = (step.t - self.num_initial) % self.batch_size == 0  # t is unbatched: a real branch
            pending_from = jnp.where(start, state.buffer.count, state.pending_from)
            hyp, post = self.pending_posterior(k_fit, state, params, pending_from, start)
        elif self._scheduled(state.buffer.capacity):  # a refit schedule: reuse the factor between refits

            def refit():
                hyp = self.fitted(k_fit, state, params)
                return hyp, gp.condition(state.buffer, hyp, self.model)

            hyp, post = jax.lax.cond(
                self.refit_now(step.t), refit, lambda: (state.gp_params, gp.refresh(state.post, state.buffer))
            )
        elif self.fit == "fixed":  # the kept factor, unless the rule's values changed
            hyp = self.fitted(k_fit, state, params)
            post = self.posterior(state, hyp)
        else:  # a refit every step (a short run, or a segment below refit_all): factorise afresh
            hyp = self.fitted(k_fit, state, params)
            post = gp.condition(state.buffer, hyp, self.model)
        return self._choose(k_acq, k_opt, state, params, step, hyp, post, pending_from)

    def _joint_round(self, k_fit, k_acq, k_opt, state: GPBOState, params: GPBOParams, step: Step):
        """batch_mode "mc": the round's first step fits, conditions and maximises the Monte-Carlo q-point
        acquisition over all q points at once (dimension q d); every step of the round plays its point."""
        q, dim = self.batch_size, state.space.dim
        k = (step.t - self.num_initial) % q  # t is unbatched: the cond below is a real branch

        def plan():
            hyp = self.fitted(k_fit, state, params)
            post = gp.condition(state.buffer, hyp, self.model)
            fn = acquisitions.build_joint(
                self.acquisition, k_acq, post, state.buffer, params.acquisition, step, q, self.batch_samples
            )
            num_raw = self.num_raw_per_dim * dim * q if self.num_raw_per_dim > 0 else self.num_raw
            flat, best = optimize.maximize(
                lambda v: fn(v.reshape(q, dim)),
                k_opt,
                q * dim,
                num_raw,
                self.num_starts,
                self.opt_steps,
                self.opt_method,
            )
            bad = jnp.stack([~(checks.all_finite(hyp) & checks.all_finite(post.alpha)), ~jnp.isfinite(best)])
            return hyp, flat.reshape(q, dim), bad

        hyp, points, nonfinite = jax.lax.cond(
            k == 0, plan, lambda: (state.gp_params, state.batch_points, state.nonfinite)
        )
        return points[k], state._replace(
            gp_params=gp.keep_finite(hyp, state.gp_params), batch_points=points, nonfinite=nonfinite
        )

    def ask_pending(self, key, state: GPBOState, params: GPBOParams, step: Step, pending_from):
        """ask with the rows from `pending_from` on pending (jbo.AskTell's batches and evaluations still
        running): hyper-parameters refitted on the rows before, lies on the pending rows. Returns
        (action, state after the ask *without* the pending rows): the completed evaluations with the
        refitted hyper-parameters (the next fit's warm start), ready for the completions' tells."""
        k_fit, k_acq, k_opt = jax.random.split(key, 3)
        hyp, post = self.pending_posterior(k_fit, state, params, pending_from, jnp.asarray(True))
        action, after = self._choose(k_acq, k_opt, state, params, step, hyp, post, pending_from)
        buf = state.buffer
        real = buf._replace(
            mask=buf.mask & (jnp.arange(buf.capacity) < pending_from), count=jnp.asarray(pending_from, buf.count.dtype)
        )
        kept = None if state.post is None else gp.condition(real, hyp, self.model)
        return action, after._replace(buffer=real, post=kept)

    def _choose(self, k_acq, k_opt, state: GPBOState, params: GPBOParams, step: Step, hyp, post, pending_from):
        """The acquisition's maximiser under the posterior `post` (and the state after ask)."""
        dim = state.space.dim
        acq = self.acquisition.build(k_acq, post, state.buffer, params.acquisition, step, dim)
        check_scalar(self.acquisition, acq, dim)
        if isinstance(state.space, FiniteArms):
            values = optimize.clean(jax.vmap(acq)(state.space.arms))
            action, best = jnp.argmax(values).astype(jnp.int32), jnp.max(values)
        else:
            num_raw = self.num_raw_per_dim * dim if self.num_raw_per_dim > 0 else self.num_raw
            cands, cmask = self.screened(state.buffer)
            action, best = optimize.maximize(
                acq,
                k_opt,
                dim,
                num_raw,
                self.num_starts,
                self.opt_steps,
                self.opt_method,
                candidates=cands,
                candidate_mask=cmask,
            )
            if isinstance(state.space, ControlSets):  # one GP on full points; play the largest set
                action = ControlAction(jnp.argmax(jnp.sum(state.space.masks, 1)).astype(jnp.int32), action)
        nonfinite = jnp.stack([~(checks.all_finite(hyp) & checks.all_finite(post.alpha)), ~jnp.isfinite(best)])
        return action, state._replace(
            gp_params=gp.keep_finite(hyp, state.gp_params),
            post=None if state.post is None else post,
            nonfinite=nonfinite,
            pending_from=pending_from,
        )

    def tell(self, key, state: GPBOState, params, action, observation, step):
        if isinstance(observation, ControlObservation):
            z, y = observation.x, observation.y
        elif isinstance(observation, tuple):  # contextual: (c, y)
            c, y = observation
            x = state.space.point(action)
            z = jnp.concatenate([x, c]) if self.acquisition.contextual else x
        else:
            z, y = state.space.point(action), observation
        post = None if state.post is None else gp.extend(state.post, z)
        return state._replace(buffer=data.append(state.buffer, z, y), post=post)

    def info(self, state: GPBOState, params) -> dict:
        p = state.gp_params
        return {
            "lengthscale": jnp.exp(p.log_lengthscale),
            "outputscale": jnp.exp(p.log_outputscale),
            "noise": self.model.noise(p),
            "nonfinite_model": state.nonfinite[0],
            "nonfinite_acquisition": state.nonfinite[1],
        }
