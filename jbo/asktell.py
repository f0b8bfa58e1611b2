"""Host objectives: drive any jbo Algorithm on an objective evaluated outside JAX (ask / tell).

The runner's conventions carry over: the same seed keys as :func:`jbo.run` / :func:`jbo.run_seeds`
give identical decisions, and a call that raises leaves the optimiser's state untouched.

Parallel evaluations: :meth:`AskTell.optimize` takes any :class:`concurrent.futures.Executor`
(a process or thread pool here; Ray's or Dask's executor on a cluster: only ``submit`` and
``Future.result`` are used) and evaluates the step's points -- one per seed -- in parallel, with an
optional timeout. For one optimiser, :meth:`AskTell.ask_batch` proposes q points that stay pending
until told, in any order (asynchronous completion); each is chosen with the pending ones carrying
the algorithm's lie (GP-BO: ``ask_pending``).

Also: ``minimize=True``; starting from data (``data=(x, y)``, :meth:`AskTell.tell_data`);
``on_nonfinite`` with the runner's meaning: "raise" (default) refuses a NaN or inf value at the tell;
"warn" and "ignore" record it as a failed evaluation (spent, never told to the model), with a warning
or silently, as a compiled run does;
:meth:`AskTell.save` / :meth:`AskTell.load` (an atomic write; the resumed optimiser asks what the
saved one would have asked); :meth:`AskTell.best` and :meth:`AskTell.best_predicted`.

Failures: a host objective that raises or returns anything but one number (None, a string, a bool,
an array), or a non-finite value by default, makes ``optimize`` raise
:class:`HostEvaluationError` naming every failed point (seed index, the point, the exception) and
carrying the values of the points that succeeded. The optimiser's state, step counter and history
change only on a complete, valid tell, so a failed step changes nothing. The successes of a failed
step are kept (evaluations are the expensive part): the next ``optimize`` call re-asks (the keys are
deterministic, so it re-proposes the same points), checks that the points are the same, evaluates
only the seeds that failed and then tells the whole batch. A retried run therefore equals an
uninterrupted one (tested). :meth:`AskTell.discard_kept` drops the kept values to re-evaluate all.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Executor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import checks
from jbo.protocols import Algorithm, Spec, Step
from jbo.runner import as_key, seed_keys
from jbo.scan import split_seed
from jbo.spaces import Box, ControlObservation, ControlSets, FiniteArms


# Module-level (not per instance): every AskTell with the same algorithm and shapes reuses one compiled
# program instead of tracing and compiling its own.
@eqx.filter_jit
def _ask_fn(alg, state, params, step_keys, t):
    ks = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t))[0])(step_keys)
    step = Step(t, t < alg.num_initial)
    return jax.vmap(lambda k, s: alg.ask(k, s, params, step))(ks, state)


@eqx.filter_jit
def _tell_fn(alg, state, params, step_keys, t, action, obs):
    ks = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t))[1])(step_keys)
    step = Step(t, t < alg.num_initial)
    return jax.vmap(lambda k, s, a, o: alg.tell(k, s, params, a, o, step))(ks, state, action, obs)


@eqx.filter_jit
def _ask_pending_fn(alg, state, params, step_keys, t, pending_from):
    ks = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t))[0])(step_keys)
    step = Step(t, t < alg.num_initial)
    return jax.vmap(lambda k, s: alg.ask_pending(k, s, params, step, pending_from))(ks, state)


@eqx.filter_jit
def _info_fn(alg, state, params):
    """The algorithm's nonfinite_* info flags of every seed's state (jbo.checks)."""
    return checks.nonfinite_flags(jax.vmap(lambda s: alg.info(s, params))(state))


@eqx.filter_jit
def _predict_fn(alg, state, params, x):
    return jax.vmap(lambda s: alg.predict(s, params, x))(state)


def _observed_y(obs):
    """The objective value inside an observation: y, (context, y), or a ControlObservation."""
    if isinstance(obs, ControlObservation):
        return obs.y
    if isinstance(obs, tuple):
        return obs[1]
    return obs


class HostFailure(NamedTuple):
    """One failed host evaluation: the seed index in the batch (0 without num_seeds), the point as
    passed to the objective, and the exception it raised (a ValueError for a non-finite or
    badly shaped value)."""

    seed: int
    action: Any
    error: BaseException


class HostEvaluationError(RuntimeError):
    """Some host evaluations of one step failed; the optimiser's state is unchanged.

    failures: list of HostFailure. observations: one entry per seed, the objective's return value
    where it succeeded and None where it failed (kept by the AskTell for a retry, see the module
    docstring). step: the step index t that was not told.
    """

    def __init__(self, step: int, failures: list, observations: list):
        self.step, self.failures, self.observations = step, list(failures), list(observations)
        lines = [f"  seed {f.seed}: {_short(f.action)} -> {type(f.error).__name__}: {f.error}" for f in self.failures]
        ok = sum(o is not None for o in self.observations)
        super().__init__(
            f"{len(self.failures)} of {len(self.observations)} host evaluation(s) failed at step {step} "
            f"(the optimiser's state is unchanged; the {ok} successful value(s) are kept for a retry):\n"
            + "\n".join(lines)
        )


def _short(action) -> str:
    """A point, printed compactly for an error message."""
    if isinstance(action, tuple):
        return "(" + ", ".join(_short(a) for a in action) + ")"
    a = np.asarray(action)
    return np.array2string(a, precision=6, threshold=12) if a.ndim else repr(a.item())


class AskTell:
    """Drive an Algorithm on an objective evaluated on the host (a simulator, a model fit, a lab).

    `ask` and `tell` are jitted and vmapped over `num_seeds` independent runs, so a batch of host
    evaluations can be done in parallel. Actions and observations are exchanged in the host's terms,
    following the space:

    * a box (`space` = bounds (2, d) or jbo.spaces.Box): ask() gives x in original coordinates;
      tell(x, y);
    * finite arms (jbo.spaces.FiniteArms): ask() gives the arm index (space.arms / bounds give its
      point); tell(index, y);
    * control sets (jbo.spaces.ControlSets): ask() gives (set index, x with the uncontrolled
      coordinates NaN); tell((set, x), (x_full, y, cost)) with the realised full point;
    * contextual problems (context_dim > 0): tell(x, (c, y)) with the observed context c in [0, 1]^dc.

        opt = AskTell(jbo.algorithms.get("gp_ucb"), bounds, num_steps=30, key=jax.random.key(0))
        for _ in range(30):
            x = opt.ask()            # (d,) numpy array, or (num_seeds, d) with num_seeds
            opt.tell(x, f(x))

    or ``opt.optimize(f, executor=pool)`` to evaluate the seeds' points of every step in parallel.

    The same keys as run(key) (one seed) or run_seeds(key, num_seeds): identical decisions. A call
    that raises (bad shape, non-finite value) leaves the optimiser's state untouched.
    """

    def __init__(
        self,
        algorithm: Algorithm,
        space,
        *,
        key,
        num_steps: int,
        params=None,
        num_seeds: int | None = None,
        context_dim: int = 0,
        side_info: dict | None = None,
        minimize: bool = False,
        on_nonfinite: str = "raise",
        data=None,
    ):
        if not isinstance(algorithm, Algorithm):
            raise TypeError(f"algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
        checks.check_on_nonfinite(on_nonfinite)
        if not isinstance(minimize, bool):
            raise TypeError(f"minimize must be True or False, got {minimize!r}")
        self.minimize, self.on_nonfinite = minimize, on_nonfinite
        self.pending: list = []  # (host point, step index) asked by ask_batch, not told yet
        self.space = space if isinstance(space, (Box, FiniteArms, ControlSets)) else Box(space)
        if not isinstance(num_steps, (int, np.integer)) or num_steps < algorithm.num_initial:
            raise ValueError(
                f"num_steps={num_steps!r} must be an int >= the initial design size {algorithm.num_initial}"
            )
        self.algorithm, self.num_steps, self.num_seeds = algorithm, int(num_steps), num_seeds
        self.context_dim = int(context_dim)
        self.params = algorithm.default_params() if params is None else params
        checks.check_params(self.params, f"{type(algorithm).__name__}: ")
        self._key = as_key(key)
        keys = self._key[None] if num_seeds is None else seed_keys(self._key, num_seeds)
        self.spec = Spec(self.space, self.num_steps, self.context_dim, dict(side_info or {}))
        design_keys, _, _, init_keys, self._step_keys = jax.vmap(split_seed)(keys)
        self.design = jax.vmap(lambda k: algorithm.initial_actions(k, self.spec))(design_keys)
        self.state = jax.vmap(lambda k: algorithm.init(k, self.params, self.spec))(init_keys)
        self.t = 0
        self.actions, self.observations, self.failed = [], [], []  # failed: per step, per seed (a NaN or inf y)
        self._pending = None  # the state after this step's ask (None in the initial design)
        self._asked = None  # (t, host action) of the ask awaiting its tell
        self._kept = None  # (t, host action, per-seed values or None) of a step that failed in optimize
        if data is not None:
            self.tell_data(*data)

    @property
    def _seeds(self) -> int:
        return 1 if self.num_seeds is None else self.num_seeds

    def _per_seed(self, value, what):
        """Split a host value into a list over seeds (one seed: [value]); tuples split field-wise."""
        if self.num_seeds is None:
            return [value]
        try:
            items = list(zip(*value)) if isinstance(value, tuple) else list(value)
        except TypeError:
            raise ValueError(f"with num_seeds={self.num_seeds}, the {what} must hold one entry per seed") from None
        if len(items) != self.num_seeds:
            raise ValueError(f"the {what} must hold {self.num_seeds} entries (one per seed), got {len(items)}")
        return items

    def _out(self, actions):
        host = [self.space.to_host(jax.tree.map(lambda a: a[i], actions)) for i in range(self._seeds)]
        if self.num_seeds is None:
            return host[0]
        if isinstance(self.space, ControlSets):
            return np.array([h[0] for h in host]), np.stack([h[1] for h in host])
        return np.stack(host) if isinstance(self.space, Box) else np.array(host)

    def ask(self):
        """The next point (one per seed with num_seeds), to be told before the next ask; while points
        of ask_batch are pending, the next pending point instead (ask_batch(1))."""
        if self.pending:
            return self.ask_batch(1)[0]
        if self.t >= self.num_steps:
            raise RuntimeError(f"the budget of {self.num_steps} evaluations is spent")
        actions, after = self._propose(self.state, self.t)
        out = self._out(actions)
        self._pending, self._asked = after, (self.t, out)
        return out

    def _propose(self, state, t: int):
        """(engine actions, post-ask state) at step t: the design's point while t < num_initial. A
        proposal that met NaN or inf (the algorithm's nonfinite_* info flags, or the action itself)
        raises NonFiniteError and changes nothing."""
        if t < self.algorithm.num_initial:
            return jax.tree.map(lambda a: a[:, t], self.design), None
        step = jnp.asarray(t, jnp.int32)  # traced: a Python int would be static and re-jit every step
        actions, after = _ask_fn(self.algorithm, state, self.params, self._step_keys, step)
        self._check_finite(actions, after, t)
        return actions, after

    def _check_finite(self, actions, state, t: int) -> None:
        """Raise NonFiniteError when the state after an ask at step t flags NaN or inf (the model, the
        acquisition) or the action is not finite, naming the source, the seed and the kernel."""
        flags = {k: np.asarray(v) for k, v in _info_fn(self.algorithm, state, self.params).items()}
        flags[checks.NONFINITE + "action"] = ~np.asarray(jax.vmap(checks.all_finite)(actions))
        found = [(k[len(checks.NONFINITE) :], np.flatnonzero(v).tolist()) for k, v in sorted(flags.items()) if v.any()]
        if not found:
            return
        lines = [f"  {src}: {checks.SOURCES.get(src, 'non-finite values')} (seed(s) {seeds})" for src, seeds in found]
        raise checks.NonFiniteError(
            f"AskTell.ask at step {t}: {type(self.algorithm).__name__}{checks.model_note(self.algorithm)} met "
            "NaN or inf:\n" + "\n".join(lines) + "\nThe optimiser's state is unchanged.",
            None,
            [(src, t, (seeds[0],)) for src, seeds in found],
        )

    # ---------------------------------------------------------------- batches and pending points
    def ask_batch(self, q: int) -> np.ndarray:
        """q points (q, d) to evaluate in parallel; they stay *pending* until told, in any order, as
        the evaluations finish (tell(x, y) with x one of them; asynchronous completion). Each point is
        chosen with every pending point carrying a lie (the algorithm's jbo.parts.Lies lie, "cl_min" without
        one: a constant liar, or the kriging believer's posterior mean), so it moves away from evaluations still running.
        Pending points spend steps of num_steps.
        One optimiser (num_seeds None), a box, and an algorithm with ask_pending (GP-BO: the
        hyper-parameters are fitted on the completed evaluations; the pending ones carry the
        algorithm's lie)."""
        self._check_pending_ok()
        if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or q < 1:
            raise ValueError(f"q must be a positive int, got {q!r}")
        if self.t + len(self.pending) + q > self.num_steps:
            raise RuntimeError(
                f"asking {q} more points exceeds num_steps={self.num_steps} ({self.t} told, "
                f"{len(self.pending)} pending)"
            )
        if self._asked is not None:
            raise RuntimeError("a point from ask() is waiting for its tell; tell it before ask_batch")
        state, pending, out = self.state, list(self.pending), []
        for _ in range(q):
            t = self.t + len(pending)
            if t < self.algorithm.num_initial:
                actions = jax.tree.map(lambda a: a[:, t], self.design)
            else:
                # the state after the ask, without the pending rows: the completed evaluations and the
                # hyper-parameters just fitted on them (the next fit's warm start)
                actions, state = _ask_pending_fn(
                    self.algorithm,
                    self._with_pending(state, pending),
                    self.params,
                    self._step_keys,
                    jnp.asarray(t, jnp.int32),
                    jnp.asarray(self._completed(), jnp.int32),
                )
                self._check_finite(actions, state, t)  # raises before anything changes
            x = self._out(actions)
            pending.append((np.asarray(x), t))
            out.append(x)
        self.state, self.pending = state, pending  # all q points, or none
        return np.stack(out)

    def _check_pending_ok(self):
        if self.num_seeds is not None or not isinstance(self.space, Box) or self.context_dim > 0:
            raise ValueError(
                "pending points and batches need one optimiser (num_seeds=None) on a box, without contexts"
            )
        if not hasattr(self.algorithm, "ask_pending"):
            raise ValueError(
                f"{type(self.algorithm).__name__} does not support pending points (no ask_pending; "
                "GP-BO algorithms have it)"
            )

    def _completed(self) -> int:
        """Evaluations told to the state (failed ones are not)."""
        return self.t - int(sum(bool(f[0]) for f in self.failed))

    def _with_pending(self, state, pending):
        """`state` with every `pending` point appended after the completed ones (its value a
        zero: ask_pending gives every pending row the algorithm's lie instead)."""
        for x, t in pending:
            state = _tell_fn(
                self.algorithm,
                state,
                self.params,
                self._step_keys,
                jnp.asarray(t, jnp.int32),
                self.space.from_host(x)[None],
                jnp.zeros(1),
            )
        return state

    def _take_pending(self, action):
        """Remove the pending point equal to `action` (a tell completing it); None when none matches."""
        a = np.asarray(action, dtype=np.float64)
        for i, (x, _) in enumerate(self.pending):
            if x.shape == a.shape and np.allclose(x, a, rtol=0.0, atol=1e-12 * (1.0 + np.abs(x).max())):
                return self.pending.pop(i)
        return None

    def forget_pending(self, action=None) -> None:
        """Drop one pending point (or all, action=None) whose evaluation will never come back."""
        if action is None:
            self.pending.clear()
        elif self._take_pending(action) is None:
            raise ValueError(f"{_short(action)} is not a pending point")

    def _observation(self, obs):
        """Host observation -> (the engine's form, finite), with the checks that keep a bad value out of
        the state. y is negated with minimize=True (the engine maximises). A non-finite value raises
        a ValueError with on_nonfinite="raise"; with "warn" (a warning) or "ignore" it comes back with
        finite=False."""
        if isinstance(self.space, ControlSets):
            try:
                x, y, cost = obs
            except (TypeError, ValueError):
                raise ValueError("a control-set observation is (x_full, y, cost)") from None
            u = Box(self.space.bounds).from_host(x)  # the realised full point, checked against the bounds
            y, cost = checks.host_number(y, "y"), checks.host_number(cost, "the cost")
            out = ControlObservation(u, jnp.asarray(-y if self.minimize else y), jnp.asarray(cost))
            vals = [y, cost]
        elif self.context_dim > 0:
            try:
                c, y = obs
            except (TypeError, ValueError):
                raise ValueError("a contextual observation is (context, y)") from None
            c = np.asarray(c, dtype=np.float64).reshape(-1)
            if c.shape != (self.context_dim,):
                raise ValueError(f"the context must have shape ({self.context_dim},), got {c.shape}")
            y = checks.host_number(y, "y")
            out, vals = (jnp.asarray(c), jnp.asarray(-y if self.minimize else y)), [y, *c.tolist()]
        else:
            y = checks.host_number(obs, "the objective")
            out, vals = jnp.asarray(-y if self.minimize else y), [y]
        finite = bool(np.all(np.isfinite(vals)))
        if not finite and self.on_nonfinite == "raise":
            raise ValueError(
                f"the objective returned a non-finite value: {vals} (AskTell(..., on_nonfinite='warn' or "
                "'ignore') records it as a failed evaluation instead)"
            )
        return out, finite

    def tell(self, action, observation) -> None:
        """Tell the value of the point the last ask() proposed (one per seed with num_seeds), or of one
        of ask_batch's pending points. A point that was not asked is refused (:meth:`tell_data` adds
        evaluations of points of your own), and so is a second tell of the same ask. With
        on_nonfinite="warn" or "ignore" a NaN or inf value is a failed evaluation: the step is spent, the algorithm
        is not told (that seed's state stays as ask left it) and best() leaves it out."""
        if self.t >= self.num_steps:
            raise RuntimeError(f"the budget of {self.num_steps} evaluations is spent")
        acts, obs = self._checked_row(action, observation)  # every check before anything changes
        if not self.pending:
            if self._asked is None:
                raise ValueError(
                    f"tell() answers ask(), and no ask awaits its tell at step {self.t} (nothing was asked, or "
                    "this ask was told already); to add evaluations of points of your own, use tell_data(x, y)"
                )
            if not _same_points(self._asked[1], action, tolerance=True):
                raise ValueError(
                    f"x = {_short(action)} is not the point ask() proposed at step {self.t} "
                    f"({_short(self._asked[1])}); tell() answers the last ask. To add an evaluation of "
                    "another point, use tell_data(x, y)"
                )
        if self.pending:  # an asynchronous completion: the point must be one of the pending ones
            if self._take_pending(action) is None:
                raise ValueError(f"x = {_short(action)} is not one of the {len(self.pending)} pending points")
        self._commit(action, acts, obs)

    def _checked_row(self, action, observation):
        """(engine actions, (observation, finite) pairs) of one step's host values, one per seed, with
        every check that keeps a bad value out of the state (shape, bounds, numbers)."""
        if isinstance(self.space, Box) and self.num_seeds is not None:
            a = np.asarray(action, dtype=np.float64)
            if a.shape != (self._seeds, self.space.dim):
                raise ValueError(f"x must have shape {(self._seeds, self.space.dim)}, got {a.shape}")
        acts = [self.space.from_host(a) for a in self._per_seed(action, "action")]
        obs = [self._observation(o) for o in self._per_seed(observation, "observation")]
        return acts, obs

    def tell_data(self, x, y) -> None:
        """Start from observations the user already has, or add evaluations of points of your own:
        rows x (n, d) and y (n,) (with num_seeds, the same data for every seed) are told as the next n
        steps, in order, each spending one step of num_steps. Rows told while t < num_initial take the
        place of the initial design's points (n >= num_initial: no design point is asked; to start from
        fewer rows without a design, build the algorithm with num_initial = n); later rows are told as
        if the algorithm had asked them. An ask awaiting its tell is dropped (the next ask proposes
        afresh). Every row is checked before any is told: a bad row raises a ValueError naming it, and
        the optimiser is left exactly as it was."""
        if self.pending:
            raise RuntimeError(
                f"{len(self.pending)} point(s) of ask_batch are pending: tell them (or forget_pending()) before tell_data"
            )
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
            raise ValueError(f"tell_data needs x of shape (n, d) and y of shape (n,), got {x.shape} and {y.shape}")
        if self.t + len(y) > self.num_steps:
            raise ValueError(
                f"{len(y)} rows do not fit: {self.num_steps - self.t} of num_steps={self.num_steps} are left"
            )
        rows = []
        for i, (xi, yi) in enumerate(zip(x, y)):
            action, value = (
                (xi, float(yi))
                if self.num_seeds is None
                else (np.repeat(xi[None], self._seeds, 0), np.full(self._seeds, yi))
            )
            try:
                rows.append((action, *self._checked_row(action, value)))
            except (ValueError, TypeError) as e:
                raise type(e)(
                    f"tell_data row {i} (x = {_short(xi)}, y = {float(yi)!r}): {e}; nothing was told"
                ) from None
        saved = self._snapshot()
        try:
            for action, acts, obs in rows:
                self._pending = None  # told as if the algorithm had asked it: from the state before the ask
                self._commit(action, acts, obs)
        except BaseException:
            self._restore(saved)
            raise

    _MUTABLE = ("state", "t", "actions", "observations", "failed", "pending", "_pending", "_asked", "_kept")

    def _snapshot(self) -> dict:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in ((k, getattr(self, k)) for k in self._MUTABLE)}

    def _restore(self, saved: dict) -> None:
        for k, v in saved.items():
            setattr(self, k, v)

    def _commit(self, action, acts, obs) -> None:
        """Tell checked per-seed engine actions and (observation, finite) pairs: the only place the
        state changes. A failed seed (finite False) keeps the state ask left it in."""
        told = np.array([ok for _, ok in obs])
        values = [o if ok else jax.tree.map(jnp.zeros_like, o) for o, ok in obs]  # a failed value never enters
        actions = jax.tree.map(lambda *a: jnp.stack(a), *acts)
        observations = jax.tree.map(lambda *o: jnp.stack(o), *values)
        state = self.state if self._pending is None else self._pending
        new = _tell_fn(
            self.algorithm, state, self.params, self._step_keys, jnp.asarray(self.t, jnp.int32), actions, observations
        )
        if not told.all():
            keep = jnp.asarray(told)
            new = jax.tree.map(lambda n, o: jnp.where(keep.reshape((-1,) + (1,) * (jnp.ndim(n) - 1)), n, o), new, state)
        if not told.all() and self.on_nonfinite == "warn":
            warnings.warn(
                f"step {self.t}: a non-finite value from seed(s) {np.flatnonzero(~told).tolist()} is a failed "
                "evaluation (spent, not told)",
                RuntimeWarning,
                stacklevel=3,
            )
        self.state = new
        self._pending = self._asked = None
        self._kept = None
        self.actions.append(action)
        self.observations.append(observations)
        self.failed.append(~told)
        self.t += 1

    def optimize(
        self,
        fn: Callable,
        num_evaluations: int | None = None,
        executor: Executor | None = None,
        timeout: float | None = None,
    ):
        """Loop ask -> fn(point) for every seed -> tell (fn returns the observation); returns best().

        fn gets one seed's point in the host's terms (see the class docstring; (set, x) on control
        sets). executor: any concurrent.futures.Executor; the seeds' points of a step are submitted
        to it together (fn and the points must pickle for a process pool) -- results equal the serial
        loop. A step with a failed evaluation raises HostEvaluationError and changes nothing; calling
        optimize again retries it (only the failed seeds are re-evaluated) and continues the run.
        timeout: seconds to wait for each step's results (with an executor): an evaluation that has
        not returned by then fails with a TimeoutError naming the step and seed (its worker may go on
        running: a thread cannot be stopped, so use a process pool for code that can hang).
        """
        if self.pending:
            raise RuntimeError(
                f"{len(self.pending)} point(s) of ask_batch are pending: optimize does not wait for them; "
                "tell them (or forget_pending()) first"
            )
        if timeout is not None and (executor is None or not timeout > 0):
            raise ValueError("timeout needs an executor and a positive number of seconds")
        if executor is not None and not isinstance(executor, Executor) and not hasattr(executor, "submit"):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor (with submit), got {type(executor).__name__}"
            )
        if num_evaluations is not None and (not isinstance(num_evaluations, (int, np.integer)) or num_evaluations < 0):
            raise ValueError(f"num_evaluations must be a non-negative int, got {num_evaluations!r}")
        for _ in range(self.num_steps - self.t if num_evaluations is None else num_evaluations):
            self._optimize_step(fn, executor, timeout)
        return self.best()

    def discard_kept(self) -> None:
        """Forget the successful values of a failed step, so a retry re-evaluates every seed."""
        self._kept = None

    def _optimize_step(self, fn, executor, timeout=None) -> None:
        a = self.ask()
        points = self._per_seed(a, "action")
        values = [_MISSING] * self._seeds
        if self._kept is not None:
            t, kept_a, kept_values = self._kept
            if t == self.t and _same_points(kept_a, a):
                values = list(kept_values)
            else:  # not the step that failed (a manual tell since): nothing to reuse
                self._kept = None
        todo = [i for i, v in enumerate(values) if v is _MISSING]
        failures, obs = [], [None] * self._seeds
        for i, outcome in zip(todo, _evaluate(fn, [points[i] for i in todo], executor, timeout)):
            if isinstance(outcome, BaseException):
                failures.append(HostFailure(i, points[i], outcome))
            else:
                values[i] = outcome
        for i, v in enumerate(values):
            if v is _MISSING:
                continue
            try:
                obs[i] = self._observation(v)  # None, strings, bools, bad shapes and (by default) NaN fail here
            except (ValueError, TypeError) as e:
                failures.append(HostFailure(i, points[i], e))
                values[i] = _MISSING
        if failures:
            failures.sort(key=lambda f: f.seed)
            self._kept = (self.t, a, values)
            raise HostEvaluationError(self.t, failures, [None if v is _MISSING else v for v in values])
        self._commit(a, [self.space.from_host(p) for p in points], obs)

    def best(self):
        """(best action, best observed y): per seed with num_seeds; the smallest y with minimize=True.
        Failed evaluations are left out."""
        if not self.observations:
            raise RuntimeError("nothing has been evaluated yet")
        ys = np.stack([np.asarray(_observed_y(o)) for o in self.observations])  # (t, S), maximisation terms
        ys = np.where(np.stack(self.failed), -np.inf, ys)
        if np.all(np.isneginf(ys), axis=0).any():
            raise RuntimeError("every evaluation of a seed so far failed: there is no best point")
        i = np.argmax(ys, 0)
        acts = [self._per_seed(a, "action") for a in self.actions]  # (t, S)
        sign = -1.0 if self.minimize else 1.0
        best = [(acts[i[s]][s], sign * ys[i[s], s]) for s in range(ys.shape[1])]
        if self.num_seeds is None:
            return best[0]
        bx, by = [b[0] for b in best], np.array([b[1] for b in best])
        return (np.stack(bx) if isinstance(self.space, Box) else bx), by

    # ---------------------------------------------------------------- save and resume
    def save(self, path) -> None:
        """Write the optimiser to `path` atomically (a temporary file in the same folder, then
        os.replace: a process killed while saving leaves the previous file whole). A pending ask
        (asked, not told) is not saved: the resumed optimiser asks that step again with the same keys,
        so it proposes the same points; it loses at most the evaluations still pending. The file is a
        header line (SAVE_MAGIC, then the payload's length and sha256) and a pickle of NumPy arrays
        and plain values: :meth:`load` refuses a file without the header or whose payload does not
        match it (damaged) before unpickling anything; still, load only files you trust."""
        key_data = lambda k: np.asarray(jax.random.key_data(k))  # noqa: E731
        record = {
            "format": 1,  # the record's layout (the file's framing is SAVE_FORMAT)
            "algorithm": _describe(self.algorithm),
            "space": jax.tree.map(np.asarray, self.space),
            "num_steps": self.num_steps,
            "num_seeds": self.num_seeds,
            "context_dim": self.context_dim,
            "side_info": jax.tree.map(np.asarray, self.spec.info),
            "minimize": self.minimize,
            "on_nonfinite": self.on_nonfinite,
            "key": key_data(self._key),
            "params": [a if isinstance(a, (int, float)) else np.asarray(a) for a in jax.tree.leaves(self.params)],
            "state": [key_data(a) if _is_key(a) else np.asarray(a) for a in jax.tree.leaves(self.state)],
            "t": self.t,
            "actions": self.actions,
            "failed": self.failed,
            "pending": self.pending,
            "observations": [jax.tree.map(np.asarray, o) for o in self.observations],
        }
        payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        header = json.dumps(
            {"format": SAVE_FORMAT, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
        )
        path = os.fspath(path)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".asktell-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(SAVE_MAGIC + header.encode() + b"\n" + payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path, algorithm: Algorithm) -> AskTell:
        """Resume an optimiser written by :meth:`save`, driving the same `algorithm` (algorithms may
        hold functions, which are not saved). The next ask equals the one the saved optimiser would
        have made (bit for bit on the same platform)."""
        rec = _read_save_file(path)
        if rec["algorithm"] != _describe(algorithm):
            raise ValueError(
                f"{path} was saved with another algorithm:\n  saved: {rec['algorithm']}\n"
                f"  given: {_describe(algorithm)}"
            )
        key = jax.random.wrap_key_data(jnp.asarray(rec["key"]))
        template = algorithm.default_params()
        params = jax.tree.unflatten(
            jax.tree.structure(template), [a if isinstance(a, (int, float)) else jnp.asarray(a) for a in rec["params"]]
        )
        space = jax.tree.map(jnp.asarray, rec["space"])
        opt = cls(
            algorithm,
            space,
            key=key,
            num_steps=rec["num_steps"],
            params=params,
            num_seeds=rec["num_seeds"],
            context_dim=rec["context_dim"],
            side_info=jax.tree.map(jnp.asarray, rec["side_info"]),
            minimize=rec["minimize"],
            on_nonfinite=rec["on_nonfinite"],
        )
        leaves, tree = jax.tree.flatten(opt.state)
        if len(leaves) != len(rec["state"]):
            raise ValueError(f"{path}: the saved state does not fit this algorithm's state")
        # a.at[...].set(v): the saved values with the fresh leaf's dtype and weak type (a weakly typed
        # leaf restored strongly typed would compile another program, with other rounding)
        opt.state = jax.tree.unflatten(
            tree,
            [
                jax.random.wrap_key_data(jnp.asarray(v)) if _is_key(a) else a.at[...].set(v)
                for a, v in zip(leaves, rec["state"])
            ],
        )
        opt.t, opt.actions, opt.failed = rec["t"], list(rec["actions"]), list(rec["failed"])
        opt.observations = [jax.tree.map(jnp.asarray, o) for o in rec["observations"]]
        opt.pending = list(rec["pending"])
        if opt.pending:
            warnings.warn(
                f"{len(opt.pending)} evaluation(s) were pending when {path} was saved: "
                f"{[x.tolist() for x, _ in opt.pending]}; tell their values when they come back, or "
                "forget_pending()",
                RuntimeWarning,
                stacklevel=2,
            )
        return opt

    def best_predicted(self):
        """(point, predicted value): the observed point with the best posterior mean under the model
        (a noisy objective's best observation can be a lucky draw; this is the model's choice among
        the evaluated points). Per seed with num_seeds; needs an algorithm with predict (GP-BO)."""
        if not hasattr(self.algorithm, "predict"):
            raise ValueError(f"{type(self.algorithm).__name__} has no model to predict with")
        if not self.observations:
            raise RuntimeError("nothing has been evaluated yet")
        acts = [self._per_seed(a, "action") for a in self.actions]  # (t, S)
        failed = np.stack(self.failed)
        sign = -1.0 if self.minimize else 1.0
        out = []
        for s in range(self._seeds):
            xs = [acts[t][s] for t in range(len(acts)) if not failed[t, s]]
            unit = jnp.stack([self.space.from_host(x) for x in xs])
            state = jax.tree.map(lambda a: a[s : s + 1], self.state)
            mean = np.asarray(_predict_fn(self.algorithm, state, self.params, unit))[0]
            i = int(np.argmax(mean))
            out.append((xs[i], sign * float(mean[i])))
        if self.num_seeds is None:
            return out[0]
        return np.stack([o[0] for o in out]), np.array([o[1] for o in out])

    @property
    def xs(self):
        """Host actions told so far (backward-compatible name)."""
        return [np.asarray(a) if isinstance(self.space, Box) else a for a in self.actions]


SAVE_MAGIC = b"jbo AskTell save file\n"
SAVE_FORMAT = 2
_RECORD = (
    "format",
    "algorithm",
    "space",
    "num_steps",
    "num_seeds",
    "context_dim",
    "side_info",
    "minimize",
    "on_nonfinite",
    "key",
    "params",
    "state",
    "t",
    "actions",
    "failed",
    "pending",
    "observations",
)


def _read_save_file(path) -> dict:
    """The record of an AskTell save file; a ValueError naming the file when it is not one, is
    damaged (its payload does not match the header's length and sha256) or cannot be read."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ValueError(f"cannot read the AskTell save file {path}: {e}") from None
    if raw.startswith(SAVE_MAGIC):
        head, _, payload = raw[len(SAVE_MAGIC) :].partition(b"\n")
        try:
            header = json.loads(head)
        except (json.JSONDecodeError, UnicodeDecodeError):
            header = None
        if not isinstance(header, dict) or header.get("format") != SAVE_FORMAT:
            raise ValueError(f"{path} is an AskTell save file with an unreadable or unknown header: {head[:80]!r}")
        if len(payload) != header.get("bytes") or hashlib.sha256(payload).hexdigest() != header.get("sha256"):
            raise ValueError(
                f"{path} is damaged: its payload ({len(payload)} bytes) does not match the length "
                f"({header.get('bytes')}) and sha256 its header records (a truncated or altered file)"
            )
    elif raw[:1] == b"\x80":  # a save file without the header (record format 1): a bare pickle
        payload = raw
    else:
        raise ValueError(f"{path} is not an AskTell save file (it does not start with {SAVE_MAGIC!r})")
    try:
        rec = pickle.loads(payload)
    except Exception as e:  # noqa: BLE001  (any unpickling failure: a damaged or foreign file)
        raise ValueError(f"{path} is not a readable AskTell save file ({type(e).__name__}: {e})") from None
    if not isinstance(rec, dict) or rec.get("format") != 1 or any(k not in rec for k in _RECORD):
        raise ValueError(f"{path} is not an AskTell save file (it holds no optimiser record)")
    return rec


def _is_key(a) -> bool:
    return hasattr(a, "dtype") and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key)


def _describe(algorithm) -> str:
    """The algorithm's repr without memory addresses (a function's repr changes between processes)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(algorithm))


_MISSING = object()  # a seed's value not evaluated yet (None is a value: a faulty objective's)


def _evaluate(fn, points, executor, timeout=None) -> list:
    """fn at every point, serially or through the executor: a list of results or the exceptions raised
    (a TimeoutError for a result not back within `timeout` seconds of the submission)."""
    if executor is None:
        out = []
        for p in points:
            try:
                out.append(fn(p))
            except Exception as e:  # reported per point; KeyboardInterrupt and the like propagate
                out.append(e)
        return out
    futures = []
    for p in points:
        try:
            futures.append(executor.submit(fn, p))
        except Exception as e:  # e.g. a pool that is shut down or broken, an unpicklable fn
            futures.append(e)
    out, deadline = [], None if timeout is None else time.monotonic() + timeout
    for f in futures:
        if isinstance(f, BaseException):
            out.append(f)
            continue
        try:
            out.append(f.result(timeout=None if deadline is None else max(0.0, deadline - time.monotonic())))
        except FutureTimeout:
            f.cancel()
            out.append(TimeoutError(f"no result within {timeout} s"))
        except Exception as e:
            out.append(e)
    return out


def _same_points(a, b, tolerance: bool = False) -> bool:
    """Host actions of one step equal (arrays, ints or (set, x) tuples; NaN marks free coordinates);
    tolerance: equal to rounding (a relative 1e-9), for points that went through a user's code."""
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    if len(la) != len(lb):
        return False
    for u, v in zip(la, lb):
        try:
            u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        if u.shape != v.shape:
            return False
        same = np.allclose(u, v, rtol=1e-9, atol=1e-12, equal_nan=True) if tolerance else np.array_equal(u, v, True)
        if not same:
            return False
    return True
