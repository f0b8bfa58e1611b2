"""Host objectives: drive any jbo Algorithm on an objective evaluated outside JAX (ask / tell).

The runner's conventions carry over: the same seed keys as :func:`jbo.run` / :func:`jbo.run_seeds`
give identical decisions, and a call that raises leaves the optimiser's state untouched.

Parallel evaluations: :meth:`AskTell.optimize` takes any :class:`concurrent.futures.Executor`
(a process or thread pool here; Ray's or Dask's executor on a cluster: only ``submit`` and
``Future.result`` are used) and evaluates the step's batch -- one point per seed -- in parallel. No
registered algorithm proposes a q-batch through ``ask`` (every one asks one point per step and seed;
R-PERP's batches are queried one point per step), so the batch is the seed axis.

Failures: a host objective that raises or returns a non-finite value makes ``optimize`` raise
:class:`HostEvaluationError` naming every failed point (seed index, the point, the exception) and
carrying the values of the points that succeeded. The optimiser's state, step counter and history
change only on a complete, valid tell, so a failed step changes nothing. The successes of a failed
step are kept (evaluations are the expensive part): the next ``optimize`` call re-asks (the keys are
deterministic, so it re-proposes the same points), checks that the points are the same, evaluates
only the seeds that failed and then tells the whole batch. A retried run therefore equals an
uninterrupted one (tested). :meth:`AskTell.discard_kept` drops the kept values to re-evaluate all.
"""
from __future__ import annotations

from concurrent.futures import Executor
from typing import Any, Callable, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo.engine import Algorithm, Spec, Step, _keys, _split_seed, as_key
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
        super().__init__(f"{len(self.failures)} of {len(self.observations)} host evaluation(s) failed at step {step} "
                         f"(the optimiser's state is unchanged; the {ok} successful value(s) are kept for a retry):\n"
                         + "\n".join(lines))


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

    def __init__(self, algorithm: Algorithm, space, num_steps: int, key, params=None, num_seeds: int | None = None,
                 context_dim: int = 0, side_info: dict | None = None):
        if not isinstance(algorithm, Algorithm):
            raise TypeError(f"algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
        self.space = space if isinstance(space, (Box, FiniteArms, ControlSets)) else Box(space)
        if not isinstance(num_steps, (int, np.integer)) or num_steps < algorithm.num_initial:
            raise ValueError(
                f"num_steps={num_steps!r} must be an int >= the initial design size {algorithm.num_initial}")
        self.algorithm, self.num_steps, self.num_seeds = algorithm, int(num_steps), num_seeds
        self.context_dim = int(context_dim)
        self.params = algorithm.default_params() if params is None else params
        keys = as_key(key)[None] if num_seeds is None else _keys(key, num_seeds)
        self.spec = Spec(self.space, self.num_steps, self.context_dim, dict(side_info or {}))
        design_keys, _, _, init_keys, self._step_keys = jax.vmap(_split_seed)(keys)
        self.design = jax.vmap(lambda k: algorithm.initial_actions(k, self.spec))(design_keys)
        self.state = jax.vmap(lambda k: algorithm.init(k, self.params, self.spec))(init_keys)
        self.t = 0
        self.actions, self.observations = [], []
        self._pending = None
        self._kept = None  # (t, host action, per-seed values or None) of a step that failed in optimize


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
        if self.t >= self.num_steps:
            raise RuntimeError(f"the budget of {self.num_steps} evaluations is spent")
        if self.t < self.algorithm.num_initial:
            actions = jax.tree.map(lambda a: a[:, self.t], self.design)
        else:
            t = jnp.asarray(self.t, jnp.int32)  # traced: a Python int would be static and re-jit every step
            actions, self._pending = _ask_fn(self.algorithm, self.state, self.params, self._step_keys, t)
        return self._out(actions)

    def _observation(self, obs):
        """Host observation -> the engine's form, with the checks that keep a bad value out of the state."""
        if isinstance(self.space, ControlSets):
            try:
                x, y, cost = obs
            except (TypeError, ValueError):
                raise ValueError("a control-set observation is (x_full, y, cost)") from None
            u = Box(self.space.bounds).from_host(x)  # the realised full point, checked against the bounds
            out = ControlObservation(u, jnp.asarray(float(y)), jnp.asarray(float(cost)))
            vals = [float(y), float(cost)]
        elif self.context_dim > 0:
            try:
                c, y = obs
            except (TypeError, ValueError):
                raise ValueError("a contextual observation is (context, y)") from None
            c = np.asarray(c, dtype=np.float64).reshape(-1)
            if c.shape != (self.context_dim,):
                raise ValueError(f"the context must have shape ({self.context_dim},), got {c.shape}")
            out, vals = (jnp.asarray(c), jnp.asarray(float(y))), [float(y), *c.tolist()]
        else:
            y = np.asarray(obs, dtype=np.float64).reshape(-1)
            if y.shape != (1,):
                raise ValueError(f"y must be one number per seed, got shape {np.shape(obs)}")
            out, vals = jnp.asarray(y[0]), [float(y[0])]
        if not np.all(np.isfinite(vals)):
            raise ValueError(f"the objective returned a non-finite value: {vals}")
        return out

    def tell(self, action, observation) -> None:
        if self.t >= self.num_steps:
            raise RuntimeError(f"the budget of {self.num_steps} evaluations is spent")
        if isinstance(self.space, Box) and self.num_seeds is not None:
            a = np.asarray(action, dtype=np.float64)
            if a.shape != (self._seeds, self.space.dim):
                raise ValueError(f"x must have shape {(self._seeds, self.space.dim)}, got {a.shape}")
        acts = [self.space.from_host(a) for a in self._per_seed(action, "action")]
        obs_items = self._per_seed(observation, "observation")
        obs = [self._observation(o) for o in obs_items]  # every check before anything changes
        self._commit(action, acts, obs)

    def _commit(self, action, acts, obs) -> None:
        """Tell checked per-seed engine actions and observations: the only place the state changes."""
        actions = jax.tree.map(lambda *a: jnp.stack(a), *acts)
        observations = jax.tree.map(lambda *o: jnp.stack(o), *obs)
        state = self.state if self._pending is None else self._pending
        self.state = _tell_fn(self.algorithm, state, self.params, self._step_keys,
                                   jnp.asarray(self.t, jnp.int32), actions, observations)
        self._pending = None
        self._kept = None
        self.actions.append(action)
        self.observations.append(observations)
        self.t += 1

    def optimize(self, fn: Callable, num_evaluations: int | None = None, executor: Executor | None = None):
        """Loop ask -> fn(point) for every seed -> tell (fn returns the observation); returns best().

        fn gets one seed's point in the host's terms (see the class docstring; (set, x) on control
        sets). executor: any concurrent.futures.Executor; the seeds' points of a step are submitted
        to it together (fn and the points must pickle for a process pool) -- results equal the serial
        loop. A step with a failed evaluation raises HostEvaluationError and changes nothing; calling
        optimize again retries it (only the failed seeds are re-evaluated) and continues the run.
        """
        if executor is not None and not isinstance(executor, Executor) and not hasattr(executor, "submit"):
            raise TypeError("executor must be a concurrent.futures.Executor (with submit), "
                            f"got {type(executor).__name__}")
        if num_evaluations is not None and (not isinstance(num_evaluations, (int, np.integer)) or num_evaluations < 0):
            raise ValueError(f"num_evaluations must be a non-negative int, got {num_evaluations!r}")
        for _ in range(self.num_steps - self.t if num_evaluations is None else num_evaluations):
            self._optimize_step(fn, executor)
        return self.best()

    def discard_kept(self) -> None:
        """Forget the successful values of a failed step, so a retry re-evaluates every seed."""
        self._kept = None

    def _optimize_step(self, fn, executor) -> None:
        a = self.ask()
        points = self._per_seed(a, "action")
        values = [None] * self._seeds
        if self._kept is not None:
            t, kept_a, kept_values = self._kept
            if t == self.t and _same_points(kept_a, a):
                values = list(kept_values)
            else:  # not the step that failed (a manual tell since): nothing to reuse
                self._kept = None
        todo = [i for i, v in enumerate(values) if v is None]
        failures, obs = [], [None] * self._seeds
        for i, outcome in zip(todo, _evaluate(fn, [points[i] for i in todo], executor)):
            if isinstance(outcome, BaseException):
                failures.append(HostFailure(i, points[i], outcome))
            else:
                values[i] = outcome
        for i, v in enumerate(values):
            if v is None:
                continue
            try:
                obs[i] = self._observation(v)  # non-finite values and bad shapes fail here
            except (ValueError, TypeError) as e:
                failures.append(HostFailure(i, points[i], e))
                values[i] = None
        if failures:
            failures.sort(key=lambda f: f.seed)
            self._kept = (self.t, a, values)
            raise HostEvaluationError(self.t, failures, values)
        self._commit(a, [self.space.from_host(p) for p in points], obs)

    def best(self):
        """(best action, best observed y): per seed with num_seeds."""
        if not self.observations:
            raise RuntimeError("nothing has been evaluated yet")
        ys = np.stack([np.asarray(_observed_y(o)) for o in self.observations])  # (t, S)
        i = np.argmax(ys, 0)
        acts = [self._per_seed(a, "action") for a in self.actions]  # (t, S)
        best = [(acts[i[s]][s], ys[i[s], s]) for s in range(ys.shape[1])]
        if self.num_seeds is None:
            return best[0]
        bx, by = [b[0] for b in best], np.array([b[1] for b in best])
        return (np.stack(bx) if isinstance(self.space, Box) else bx), by

    @property
    def xs(self):
        """Host actions told so far (backward-compatible name)."""
        return [np.asarray(a) if isinstance(self.space, Box) else a for a in self.actions]


def _evaluate(fn, points, executor) -> list:
    """fn at every point, serially or through the executor: a list of results or the exceptions raised."""
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
    out = []
    for f in futures:
        if isinstance(f, BaseException):
            out.append(f)
            continue
        try:
            out.append(f.result())
        except Exception as e:
            out.append(e)
    return out


def _same_points(a, b) -> bool:
    """Host actions of one step equal (arrays, ints or (set, x) tuples; NaN marks free coordinates)."""
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(u), np.asarray(v), equal_nan=True)
                                      for u, v in zip(la, lb))
