"""Standard baselines: random search and GP-based BO, assembled from parts (jbo.parts).

A :class:`GPBO` is configured parts, each small and validated on its own:

    acquisition : any jbo.acquisitions.Acquisition (UCB, EI, log-EI, PI, Thompson, mean, std, a
                  user's function, or a contextual piece such as SBO-KDE's);
    model       : one jbo.gp.GPModel (kernel, bounds, priors, trained parameters, mean, noise floor;
                  a prior makes a refit MAP, none maximum likelihood);
    hypers      : the hyper-parameter rule: jbo.parts.Refit (default jbo.parts.GP_REFIT: 1 x 5 Adam
                  steps, refits each time the data has grown by 1 + 1/16 from t = 64) or
                  jbo.parts.FixedHypers;
    maximiser   : jbo.parts.Maximiser, on a box or over a finite arm set (default jbo.parts.GP_MAXIMISER:
                  256 raw points, 5 bounded L-BFGS iterations from each of 5 starts);
    batching    : None (one point per step), jbo.parts.Lies or jbo.parts.JointMC (q-batches);
    design      : the initial design on a box (jbo.parts.LatinHypercube, Sobol, Uniform);
    growth      : jbo.data.Growth, how the buffer grows with the data (engine segments).

It runs on a box, a finite arm set, control sets (the GP sees the realised full points) and
contextual problems (a contextual acquisition puts the GP on (x, c); any other ignores c). One class
serves every paper's GP baseline: the BOKE paper's GP-UCB is a GPBO with the SE kernel, zero mean
and its fixed-hyper-parameter rule (jbo.algorithms.boke), the SBO-KDE paper's methods are GPBOs with
contextual acquisitions (jbo.algorithms.sbo_kde).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jbo import acquisitions, checks, data, gp, kernels, parts
from jbo.acquisitions import check_scalar, srinivas_beta  # noqa: F401  (re-exported: jbo.algorithms.srinivas_beta)
from jbo.parts import (  # noqa: F401  (re-exported: their earlier home)
    BATCH_LIE,
    LIES,
    REFIT_ALL,
    REFIT_GROWTH,
    SCREEN_DATA,
    FixedHypers,
    HypersParams,
    lie_values,
)
from jbo.protocols import Algorithm, Spec, Step
from jbo.spaces import Box, ControlAction, ControlObservation, ControlSets, FiniteArms

Hypers = FixedHypers  # the fixed rule's earlier name


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


# ---------------------------------------------------------------- GP-BO
class GPBOParams(NamedTuple):
    """Traced (sweepable) numbers: the acquisition's and the hyper-parameter rule's."""

    acquisition: Any = ()  # the acquisition's Params (UCBParams, EIParams, ...)
    hypers: Any = HypersParams()  # the hyper-parameter rule's Params (the fixed values, or a refit's start)


class GPBOState(NamedTuple):
    buffer: data.Buffer
    gp_params: gp.GPParams  # last fitted (or the fixed) hyper-parameters
    space: Any  # the action space (finite arms are scored one by one)
    post: Any = None  # fixed hyper-parameters or a refit schedule: the buffer's factor, extended rank-1 in tell
    nonfinite: Any = None  # (2,) bool: the last ask's posterior / acquisition value was not finite
    pending_from: Any = None  # int32, Lies batching: rows from here on are this round's pending points
    batch_points: Any = None  # (q, d), JointMC batching: the round's points, chosen jointly at its first step


class GPBOInfo(NamedTuple):
    """What a GPBO records at every step (Trace.info)."""

    lengthscale: jax.Array  # (d,) the step's lengthscales (fitted or fixed)
    outputscale: jax.Array  # the step's signal variance
    noise: jax.Array  # the step's noise variance, the model's floor included
    nonfinite_model: jax.Array  # bool: the fit or the posterior was not finite (jbo.checks)
    nonfinite_acquisition: jax.Array  # bool: the acquisition's best value was not finite (jbo.checks)


class GPBO(Algorithm):
    """GP-based BO with a Gaussian likelihood, assembled from parts (see the module docstring). Static
    configuration only; numbers are in GPBOParams.

    Each step reads: hyper-parameters by the rule (`hypers`: a Refit refits on its schedule and keeps
    the posterior's factor up to date by rank-1 appends in between; a FixedHypers keeps the factor
    unless the rule's values change) -> posterior -> acquisition -> maximiser. With `batching`, the
    round's first step refits and the round's points are chosen with lies (:class:`jbo.parts.Lies`)
    or jointly (:class:`jbo.parts.JointMC`); :meth:`ask_pending` is the same choice for jbo.AskTell's
    batches and evaluations still running.

    Convenience: `acquisition` may be a name ("ucb", "ei", "log_ei", "pi", "ts", "mean", "std") or a
    function fn(post, x, best); `model` may be a kernel (name, profile or kernel object); every part
    may be given as plain data (jbo.parts.from_config: a dict of its fields, a design's name).
    """

    acquisition: acquisitions.Acquisition = eqx.field(static=True)
    model: gp.GPModel = eqx.field(static=True)
    hypers: Any = eqx.field(static=True)
    maximiser: parts.Maximiser = eqx.field(static=True)
    batching: parts.Lies | parts.JointMC | None = eqx.field(static=True)
    design: parts.Design = eqx.field(static=True)
    growth: data.Growth = eqx.field(static=True)
    capacity: int = eqx.field(static=True)  # buffer rows; 0: the run's num_steps
    num_initial: int = eqx.field(static=True)

    def __init__(
        self,
        acquisition="ucb",
        model=None,
        hypers=None,
        maximiser=None,
        batching=None,
        design=None,
        growth=None,
        capacity: int = 0,
        num_initial: int = 5,
    ):
        given = parts.from_config(
            dict(model=model, hypers=hypers, maximiser=maximiser, batching=batching, design=design, growth=growth)
        )
        self.acquisition = acquisitions.as_acquisition(acquisition)
        self.model = gp.GPModel() if given["model"] is None else gp.as_model(given["model"])
        self.hypers = parts.GP_REFIT if given["hypers"] is None else given["hypers"]
        self.maximiser = parts.GP_MAXIMISER if given["maximiser"] is None else given["maximiser"]
        self.batching = given["batching"]
        self.design = parts.LatinHypercube() if given["design"] is None else given["design"]
        self.growth = data.Growth() if given["growth"] is None else given["growth"]
        self.capacity, self.num_initial = capacity, num_initial

    def __check_init__(self):
        if isinstance(self.acquisition, acquisitions.Thompson) and not kernels.has_fourier_features(self.model.kernel):
            raise ValueError(
                f"Thompson sampling needs random Fourier features, which exist for {kernels.FOURIER}; "
                f"got the kernel {checks.model_note(self)[len(' (kernel ') : -1]}"
            )
        if isinstance(self.num_initial, bool) or not isinstance(self.num_initial, int) or self.num_initial < 1:
            raise ValueError(f"GPBO: num_initial must be an int >= 1, got {self.num_initial!r}")
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity < 0:
            raise ValueError(f"GPBO: capacity must be an int >= 0 (0: the run's num_steps), got {self.capacity!r}")
        if not (hasattr(self.hypers, "default_params") and callable(self.hypers)):
            raise ValueError(
                f"GPBO: hypers must be a hyper-parameter rule (Refit(), FixedHypers()), got {self.hypers!r}"
            )
        if not isinstance(self.maximiser, parts.Maximiser):
            raise ValueError(f"GPBO: maximiser must be a jbo.parts.Maximiser, got {self.maximiser!r}")
        if self.batching is not None and not isinstance(self.batching, (parts.Lies, parts.JointMC)):
            raise ValueError(f"GPBO: batching must be None, Lies(size=q) or JointMC(size=q), got {self.batching!r}")
        if not isinstance(self.design, parts.Design):
            raise ValueError(
                f"GPBO: design must be a jbo.parts.Design (LatinHypercube(), Sobol()), got {self.design!r}"
            )
        if not isinstance(self.growth, data.Growth):
            raise ValueError(f"GPBO: growth must be a jbo.data.Growth, got {self.growth!r}")
        if isinstance(self.batching, parts.JointMC):  # a named error now, not at trace time
            self.acquisition.check_joint()

    # ---------------------------------------------------------------- configuration read by the steps
    @property
    def refits(self) -> bool:
        """Whether the rule fits the hyper-parameters to the data (a Refit), or holds them (FixedHypers)."""
        return bool(getattr(self.hypers, "refits", False))

    @property
    def _lies(self) -> bool:
        return isinstance(self.batching, parts.Lies) and self.batching.size > 1

    @property
    def _joint(self) -> bool:
        return isinstance(self.batching, parts.JointMC) and self.batching.size > 1

    def _keeps_factor(self, capacity: int) -> bool:
        """Whether the state keeps the buffer's factor up to date by rank-1 appends (tell): with fixed
        hyper-parameters, and for a refit schedule that skips steps in a run of `capacity` rows."""
        return not (self._lies or self._joint) and (not self.refits or self._scheduled(capacity))

    def _scheduled(self, capacity: int) -> bool:
        """A refit rule whose schedule skips steps within this capacity (one point per step)."""
        return self.refits and not (self._lies or self._joint) and self.hypers.schedule.skips(capacity)

    def refit_now(self, t) -> jax.Array:
        """Whether step t refits (the refit rule's schedule, :meth:`jbo.parts.RefitSchedule.now`)."""
        return self.hypers.schedule.now(t)

    def default_params(self) -> GPBOParams:
        return GPBOParams(self.acquisition.default_params(), self.hypers.default_params())

    def initial_actions(self, key, spec: Spec):
        if isinstance(spec.space, FiniteArms) or isinstance(self.design, parts.LatinHypercube):
            return super().initial_actions(key, spec)  # the space's own design (a Latin hypercube on a box)
        return self.design(key, self.num_initial, spec.dim)  # of x only (a contextual problem: SBO-KDE spec D7)

    def _width(self, spec: Spec) -> int:
        if self.acquisition.contextual:
            if spec.context_dim < 1:
                raise ValueError(f"{type(self.acquisition).__name__} needs a contextual environment (context_dim >= 1)")
            return spec.dim + spec.context_dim
        return spec.dim

    def init(self, key, params: GPBOParams, spec: Spec) -> GPBOState:
        buffer = data.empty(self.capacity or spec.num_steps, self._width(spec))
        hyp = self.hypers(buffer, params.hypers, self.model)
        post = gp.condition(buffer, hyp, self.model) if self._keeps_factor(buffer.capacity) else None
        points = None
        if self._joint:
            if not isinstance(spec.space, Box):
                raise ValueError(f"JointMC batching chooses points of a box, got {type(spec.space).__name__}")
            points = jnp.zeros((self.batching.size, self._width(spec)))
        return GPBOState(buffer, hyp, spec.space, post, jnp.zeros(2, bool), jnp.int32(0), points)

    # ---------------------------------------------------------------- the pieces of a step
    def fitted(self, key, state: GPBOState, params: GPBOParams) -> gp.GPParams:
        """Hyper-parameters for this step by the rule: its values, or a refit from them (restart 0
        warm-starts from the last fit)."""
        start = self.hypers(state.buffer, params.hypers, self.model)
        if not self.refits:
            return start
        return self.hypers.fit(key, state.buffer, self.model, start, state.gp_params)

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
        """(candidates, mask) of observed points the maximiser screens (none for a contextual GP, whose
        rows are (x, c)): :meth:`jbo.parts.Maximiser.screened`."""
        return self.maximiser.screened(None if self.acquisition.contextual else buffer)

    def pending_posterior(self, key, state: GPBOState, params: GPBOParams, pending_from, refit):
        """(hyper-parameters, posterior) with the rows from `pending_from` on *pending*: points told to
        the state whose values are not to be seen (a batch round's, or evaluations still running).
        Where `refit`, the hyper-parameters are fitted on the rows before pending_from, else kept; the
        posterior conditions on every row, the pending ones carrying lies (the Lies part's, cl_min
        without one)."""
        buf = state.buffer
        pending = buf.mask & (jnp.arange(buf.capacity) >= pending_from)
        real = buf._replace(mask=buf.mask & ~pending)
        hyp = jax.lax.cond(
            refit, lambda: self.fitted(key, state._replace(buffer=real), params), lambda: state.gp_params
        )
        lie = self.batching.lie if isinstance(self.batching, parts.Lies) else BATCH_LIE
        lied = buf._replace(y=jnp.where(pending, lie_values(lie, real, hyp, self.model, buf.x), buf.y))
        return hyp, gp.condition(lied, hyp, self.model)

    def predict(self, state: GPBOState, params: GPBOParams, x: jax.Array) -> jax.Array:
        """Posterior mean at the rows of x (m, d) under the state's last hyper-parameters."""
        return gp.predict_batch(gp.condition(state.buffer, state.gp_params, self.model), x)[0]

    def hypers_and_posterior(self, key, state: GPBOState, params: GPBOParams, step: Step):
        """(hyper-parameters, posterior, pending_from) of this step, as the rule and the batching say."""
        if self._lies:  # a q-batch round: the round's first step refits; its later points are pending
            start = (step.t - self.num_initial) % self.batching.size == 0  # t is unbatched: a real branch
            pending_from = jnp.where(start, state.buffer.count, state.pending_from)
            return *self.pending_posterior(key, state, params, pending_from, start), pending_from
        if self._scheduled(state.buffer.capacity):  # a refit schedule: reuse the factor between refits

            def refit():
                hyp = self.fitted(key, state, params)
                return hyp, gp.condition(state.buffer, hyp, self.model)

            def kept():
                return state.gp_params, gp.refresh(state.post, state.buffer)

            return *jax.lax.cond(self.refit_now(step.t), refit, kept), state.pending_from
        hyp = self.fitted(key, state, params)
        if not self.refits:  # the kept factor, unless the rule's values changed
            return hyp, self.posterior(state, hyp), state.pending_from
        return hyp, gp.condition(state.buffer, hyp, self.model), state.pending_from  # a refit every step

    # ---------------------------------------------------------------- ask / tell
    def ask(self, key, state: GPBOState, params: GPBOParams, step: Step):
        k_fit, k_acq, k_opt = jax.random.split(key, 3)
        if self._joint:
            return self._joint_round(k_fit, k_acq, k_opt, state, params, step)
        hyp, post, pending_from = self.hypers_and_posterior(k_fit, state, params, step)
        return self._choose(k_acq, k_opt, state, params, step, hyp, post, pending_from)

    def _joint_round(self, k_fit, k_acq, k_opt, state: GPBOState, params: GPBOParams, step: Step):
        """JointMC: the round's first step fits, conditions and maximises the q-point acquisition over
        all q points at once (dimension q d); every step of the round plays its point."""
        q, dim = self.batching.size, state.space.dim
        k = (step.t - self.num_initial) % q  # t is unbatched: the cond below is a real branch

        def plan():
            hyp = self.fitted(k_fit, state, params)
            post = gp.condition(state.buffer, hyp, self.model)
            fn = self.acquisition.joint(k_acq, post, state.buffer, params.acquisition, step, q, self.batching.samples)
            flat, best = self.maximiser.box(lambda v: fn(v.reshape(q, dim)), k_opt, q * dim)
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
            action, best = self.maximiser.arms(acq, state.space.arms)
        else:
            buffer = None if self.acquisition.contextual else state.buffer
            action, best = self.maximiser.box(acq, k_opt, dim, buffer)
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

    def info(self, state: GPBOState, params) -> GPBOInfo:
        p = state.gp_params
        return GPBOInfo(
            lengthscale=jnp.exp(p.log_lengthscale),
            outputscale=jnp.exp(p.log_outputscale),
            noise=self.model.noise(p),
            nonfinite_model=state.nonfinite[0],
            nonfinite_acquisition=state.nonfinite[1],
        )
