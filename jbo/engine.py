"""The engine: Algorithm and Environment protocols, the scan runner, seeds/sweeps by vmap, ask/tell.

One run is a single ``lax.scan`` over ``num_steps`` evaluations:

    step t < num_initial : action = the shared initial design[t]
    step t >= num_initial: action, state = algorithm.ask(key_t, state, params)
    env_state, observation, metrics = environment.step(noise_key_t, env_state, action)
    state = algorithm.tell(key_t', state, params, action, observation)

Common random numbers: a seed's key is split into an *environment* stream (initial design, reset,
observation noise) and an *algorithm* stream. Methods that share ``num_initial`` therefore see the
same initial design and the same noise draws, and differ only by their decisions.

Actions are in the unit cube; environments map them to their own coordinates.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import designs

PyTree = Any


class Spec(NamedTuple):
    """What an algorithm may know about the problem before it starts (static)."""

    dim: int
    num_steps: int
    context_dim: int = 0


class Trace(NamedTuple):
    actions: PyTree  # leading axis: step
    observations: PyTree
    metrics: dict  # name -> (num_steps,) arrays
    final_state: PyTree


class Algorithm(eqx.Module):
    """init / ask / tell over a state pytree. Fields are static configuration; Params are traced."""

    num_initial: eqx.AbstractVar[int]

    def default_params(self) -> PyTree:
        return None

    def initial_actions(self, key, spec: Spec) -> PyTree:
        """The shared initial design (leading axis num_initial); Latin hypercube by default."""
        return designs.latin_hypercube(key, self.num_initial, spec.dim)

    @abc.abstractmethod
    def init(self, key, params, spec: Spec) -> PyTree:
        """Empty state for a run of spec.num_steps evaluations."""

    @abc.abstractmethod
    def ask(self, key, state, params) -> tuple[PyTree, PyTree]:
        """Return (action, state): the next action and any state it updated (fitted models, ...)."""

    @abc.abstractmethod
    def tell(self, key, state, params, action, observation) -> PyTree:
        """Return the state after observing `observation` at `action`."""


class Environment(eqx.Module):
    """A problem that knows the truth: reset/step, with true-value metrics for each step."""

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """Dimension of the action (unit-cube coordinates)."""

    def spec(self, num_steps: int) -> Spec:
        return Spec(self.dim, num_steps, getattr(self, "context_dim", 0))

    @abc.abstractmethod
    def reset(self, key) -> PyTree:
        """Initial environment state."""

    @abc.abstractmethod
    def step(self, key, env_state, action) -> tuple[PyTree, PyTree, dict]:
        """Return (env_state, observation, metrics) for one action."""


# ---------------------------------------------------------------- the runner
def _check_run(algorithm, environment, num_steps):
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
    if not isinstance(environment, Environment):
        raise TypeError(f"environment must be a jbo.Environment, got {type(environment).__name__}")
    if not isinstance(num_steps, (int, np.integer)) or num_steps < 1:
        raise ValueError(f"num_steps must be a positive int, got {num_steps!r}")
    if num_steps < algorithm.num_initial:
        raise ValueError(
            f"num_steps={num_steps} is smaller than the initial design (num_initial={algorithm.num_initial})")


def _split_seed(key):
    env_key, alg_key = jax.random.split(key)
    design_key, reset_key, noise_key = jax.random.split(env_key, 3)
    init_key, step_key = jax.random.split(alg_key)
    return design_key, reset_key, noise_key, init_key, step_key


def _run(algorithm: Algorithm, environment: Environment, key, num_steps: int, params) -> Trace:
    spec = environment.spec(num_steps)
    n0 = algorithm.num_initial
    design_key, reset_key, noise_key, init_key, step_key = _split_seed(key)
    design = algorithm.initial_actions(design_key, spec)
    state = algorithm.init(init_key, params, spec)
    env_state = environment.reset(reset_key)

    def step(carry, t):
        state, env_state = carry
        k_ask, k_tell = jax.random.split(jax.random.fold_in(step_key, t))

        def from_design(state):
            return jax.tree.map(lambda a: a[jnp.minimum(t, n0 - 1)], design), state

        def from_ask(state):
            return algorithm.ask(k_ask, state, params)

        if n0 > 0:  # t is not batched under vmap over seeds/params, so this cond stays a branch
            action, state = jax.lax.cond(t < n0, from_design, from_ask, state)
        else:
            action, state = from_ask(state)
        env_state, obs, metrics = environment.step(jax.random.fold_in(noise_key, t), env_state, action)
        state = algorithm.tell(k_tell, state, params, action, obs)
        return (state, env_state), (action, obs, metrics)

    (state, env_state), (actions, obs, metrics) = jax.lax.scan(step, (state, env_state), jnp.arange(num_steps))
    return Trace(actions, obs, metrics, state)


@eqx.filter_jit
def _run_jit(algorithm, environment, key, num_steps, params):
    return _run(algorithm, environment, key, num_steps, params)


@eqx.filter_jit
def _run_seeds_jit(algorithm, environment, keys, num_steps, params):
    return jax.vmap(lambda k: _run(algorithm, environment, k, num_steps, params))(keys)


@eqx.filter_jit
def _run_sweep_jit(algorithm, environment, keys, num_steps, params):
    per_params = lambda p: jax.vmap(lambda k: _run(algorithm, environment, k, num_steps, p))(keys)  # noqa: E731
    return jax.vmap(per_params)(params)


def _keys(key, num_seeds):
    if not isinstance(num_seeds, (int, np.integer)) or num_seeds < 1:
        raise ValueError(f"num_seeds must be a positive int, got {num_seeds!r}")
    return jax.random.split(key, num_seeds)


def run(algorithm: Algorithm, environment: Environment, key, num_steps: int, params=None) -> Trace:
    """One seed: the whole run as one compiled lax.scan. Metrics have shape (num_steps,)."""
    _check_run(algorithm, environment, num_steps)
    params = algorithm.default_params() if params is None else params
    return _run_jit(algorithm, environment, key, num_steps, params)


def run_seeds(algorithm: Algorithm, environment: Environment, key, num_steps: int, num_seeds: int,
              params=None) -> Trace:
    """`num_seeds` seeds (keys split from `key`) in one compiled program; leading axis = seed.

    Seed i uses jax.random.split(key, num_seeds)[i], so its trace equals run(..., that key, ...).
    """
    _check_run(algorithm, environment, num_steps)
    params = algorithm.default_params() if params is None else params
    return _run_seeds_jit(algorithm, environment, _keys(key, num_seeds), num_steps, params)


def run_sweep(algorithm: Algorithm, environment: Environment, key, num_steps: int, num_seeds: int,
              params) -> Trace:
    """A hyper-parameter sweep: `params` leaves carry a leading axis P; output axes are (P, seed, step).

    Every parameter setting uses the same seeds (common random numbers across the sweep).
    """
    _check_run(algorithm, environment, num_steps)
    sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in jax.tree.leaves(params)}
    if not sizes or None in sizes or len(sizes) != 1:
        raise ValueError("run_sweep needs every leaf of `params` to share one leading (sweep) axis")
    return _run_sweep_jit(algorithm, environment, _keys(key, num_seeds), num_steps, params)


def stack_params(*params):
    """Stack several Params pytrees along a new leading axis (for run_sweep)."""
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *params)


# ---------------------------------------------------------------- host objectives: ask / tell
class Space(eqx.Module):
    """A box in original coordinates, with the maps to and from the unit cube."""

    bounds: jax.Array  # (2, d)

    def __init__(self, bounds):
        b = np.asarray(bounds, dtype=np.float64)
        if b.ndim != 2 or b.shape[0] != 2 or b.shape[1] < 1:
            raise ValueError(f"bounds must have shape (2, d) with d >= 1, got shape {b.shape}")
        if not np.all(np.isfinite(b)):
            raise ValueError("bounds must be finite")
        bad = np.nonzero(b[0] >= b[1])[0]
        if bad.size:
            raise ValueError(f"bounds need lo < hi in every dimension; lo >= hi in dimension(s) {bad.tolist()}")
        self.bounds = jnp.asarray(b)

    @property
    def dim(self) -> int:
        return self.bounds.shape[1]

    def from_unit(self, u):
        return self.bounds[0] + u * (self.bounds[1] - self.bounds[0])

    def to_unit(self, x):
        return (x - self.bounds[0]) / (self.bounds[1] - self.bounds[0])


class AskTell:
    """Drive an Algorithm on an objective evaluated on the host (a simulator, a model fit, a lab).

    `ask` and `tell` are jitted and vmapped over `num_seeds` independent runs, so a batch of host
    evaluations can be done in parallel. Points are exchanged in original coordinates::

        opt = AskTell(jbo.algorithms.get("gp_ucb"), bounds, num_steps=30, key=jax.random.key(0))
        for _ in range(30):
            x = opt.ask()            # (d,) numpy array, or (num_seeds, d) with num_seeds
            opt.tell(x, f(x))
    """

    def __init__(self, algorithm: Algorithm, bounds, num_steps: int, key, params=None, num_seeds: int | None = None):
        if not isinstance(algorithm, Algorithm):
            raise TypeError(f"algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
        self.space = Space(bounds)
        if not isinstance(num_steps, (int, np.integer)) or num_steps < algorithm.num_initial:
            raise ValueError(
                f"num_steps={num_steps!r} must be an int >= the initial design size {algorithm.num_initial}")
        self.algorithm, self.num_steps, self.num_seeds = algorithm, int(num_steps), num_seeds
        self.params = algorithm.default_params() if params is None else params
        # Same seed keys as run(key) (one seed) or run_seeds(key, num_seeds): identical decisions.
        keys = key[None] if num_seeds is None else _keys(key, num_seeds)
        spec = Spec(self.space.dim, self.num_steps)
        parts = jax.vmap(_split_seed)(keys)
        design_keys, _, _, init_keys, self._step_keys = parts
        self.design = np.asarray(jax.vmap(lambda k: algorithm.initial_actions(k, spec))(design_keys))
        self.state = jax.vmap(lambda k: algorithm.init(k, self.params, spec))(init_keys)
        self.t = 0
        self.xs, self.ys = [], []

        @eqx.filter_jit
        def _ask(alg, state, params, step_keys, t):
            ks = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t))[0])(step_keys)
            return jax.vmap(lambda k, s: alg.ask(k, s, params))(ks, state)

        @eqx.filter_jit
        def _tell(alg, state, params, step_keys, t, u, y):
            ks = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t))[1])(step_keys)
            return jax.vmap(lambda k, s, a, o: alg.tell(k, s, params, a, o))(ks, state, u, y)

        self._ask_fn, self._tell_fn = _ask, _tell

    def _out(self, a):
        a = np.asarray(a)
        return a[0] if self.num_seeds is None else a

    def ask(self) -> np.ndarray:
        if self.t >= self.num_steps:
            raise RuntimeError(f"the budget of {self.num_steps} evaluations is spent")
        if self.t < self.algorithm.num_initial:
            u = jnp.asarray(self.design[:, self.t])
        else:
            t = jnp.asarray(self.t, jnp.int32)  # traced: a Python int would be static and re-jit every step
            u, self.state = self._ask_fn(self.algorithm, self.state, self.params, self._step_keys, t)
        return self._out(self.space.from_unit(u))

    def tell(self, x, y) -> None:
        if self.t >= self.num_steps:
            raise RuntimeError(f"the budget of {self.num_steps} evaluations is spent")
        single = self.num_seeds is None
        s = 1 if single else self.num_seeds
        want = (self.space.dim,) if single else (s, self.space.dim)
        x = np.asarray(x, dtype=np.float64)
        if x.shape != want:
            raise ValueError(f"x must have shape {want}, got {x.shape}")
        x = x.reshape(s, self.space.dim)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if y.shape != (s,):
            raise ValueError(f"y must hold {s} value(s), got shape {np.shape(y)}")
        if not np.all(np.isfinite(y)):
            raise ValueError(f"the objective returned a non-finite value: {y.tolist()}")
        u = np.asarray(self.space.to_unit(x))
        if np.any(u < -1e-9) or np.any(u > 1 + 1e-9):
            raise ValueError("x lies outside the bounds")
        self.state = self._tell_fn(self.algorithm, self.state, self.params, self._step_keys, jnp.asarray(self.t, jnp.int32),
                                   jnp.asarray(np.clip(u, 0, 1)), jnp.asarray(y))
        self.xs.append(x.copy())
        self.ys.append(y.copy())
        self.t += 1

    def optimize(self, fn: Callable[[np.ndarray], float], num_evaluations: int | None = None):
        """Loop ask -> fn(x) -> tell; returns (best_x, best_y) (arrays over seeds with num_seeds)."""
        for _ in range(self.num_steps - self.t if num_evaluations is None else num_evaluations):
            x = self.ask()
            if self.num_seeds is None:
                y = fn(x)
            else:
                y = np.array([fn(xi) for xi in x])
            self.tell(x, y)
        return self.best()

    def best(self):
        if not self.ys:
            raise RuntimeError("nothing has been evaluated yet")
        ys, xs = np.stack(self.ys), np.stack(self.xs)  # (t, S), (t, S, d)
        i = np.argmax(ys, 0)
        bx, by = xs[i, np.arange(ys.shape[1])], ys[i, np.arange(ys.shape[1])]
        return (bx[0], by[0]) if self.num_seeds is None else (bx, by)
