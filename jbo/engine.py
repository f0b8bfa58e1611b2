"""The engine: Algorithm and Environment protocols, the scan runner, seeds and sweeps by vmap.

One run is a single ``lax.scan`` over ``num_steps`` steps; with ``step = Step(t, t < num_initial)``:

    t < num_initial : action = the shared initial design[t]
    otherwise       : action, state = algorithm.ask(key_t, state, params, step)
    env_state, observation, metrics = environment.step(noise_key_t, env_state, action, step)
    state = algorithm.tell(key_t', state, params, action, observation, step)
    info  = algorithm.info(state, params)                  # per-step diagnostics, recorded

``t`` is never batched (seeds and sweeps are vmapped *around* the scan), so ``lax.cond`` on the step
index (initial design, batch schedules, restarts, phases) stays a real branch under ``vmap``.

**Spaces and side information.** The environment describes its action space (a box, a finite arm
set, control sets; :mod:`jbo.spaces`), its context dimension, and what the learner is told
(``side_info``: a known noise law, a variation budget, an RKHS bound; per seed where it depends on
the reset) in the :class:`Spec` handed to ``init`` and ``initial_actions``.

**One metric vocabulary.** An environment's ``step`` reports ``value`` (the true, or expected, value
of the action), and where known ``optimal_value`` (this step's optimum, so a drifting objective gives
dynamic regret) and ``cost``; anything else it reports is kept. The runner derives the rest, the same
for every environment: ``best_value``, ``regret`` (instantaneous), ``simple_regret`` (f* - best value for a fixed
optimum; the smallest instantaneous regret so far for a per-step one), ``cumulative_regret``, ``cost``
(charged to the budget: 1 per evaluation unless the environment reports one; 0 for free initial
steps), ``cumulative_cost`` and ``active``. A failed evaluation (a non-finite value; see jbo.checks)
is left out of ``best_value`` and ``simple_regret``; before a run's first finite evaluation both
are NaN, so a NaN-skipping mean over seeds (pandas, jbo.studies) averages the seeds that have one.

**Budgets.** With ``budget=C`` a step is active while the cost spent before it is below C; once the
budget is spent the remaining steps are inactive: the algorithm's and environment's states are
frozen, the metrics are held, ``active`` is False, and the step computes nothing (a ``lax.cond``: a
real branch for one run or seeds run one after another, a select under vmap); its recorded action
and observation are zeros. The scan keeps its fixed length.

Common random numbers: a seed's key is split into an *environment* stream (initial design, reset,
observation noise) and an *algorithm* stream. Methods that share ``num_initial`` therefore see the
same initial design and the same noise draws, and differ only by their decisions.

**Growing state.** A state node registered with :func:`jbo.data.register_growing` (a
:class:`jbo.data.Buffer`, a :class:`jbo.gp.Posterior`) that holds ``num_steps`` rows grows with the
data: the scan is split into segments, segment k runs steps [s_{k-1}, s_k) with every such node cut
to s_k rows, and between segments they are padded to the next size (:func:`jbo.data.grow`). A GP step
then factorises and queries the rows the run can hold so far, not the whole run's capacity, and the
numbers equal the whole-buffer run's to rounding (padding rows are identity rows of the factors). The
sizes come from :meth:`Algorithm.capacities` (default :func:`bucket_schedule`: from 64 rows, or 128 in
runs of at least 384 steps, doubling, then 256 rows more each; runs of at most 96 steps keep the one
whole-buffer program); each segment compiles once.
The contract: such a node receives at most one row per step (the engine's one observation per step).
An algorithm opts out by returning ``(num_steps,)`` from ``capacities`` or with ``bucket=False``.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

import chex
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import checks, data
from jbo.spaces import Box

PyTree = Any


class Spec(eqx.Module):
    """What an algorithm may know about the problem before it starts.

    space: the action space (jbo.spaces). num_steps, context_dim: static. info: side information
    (a dict of arrays; per seed when the environment's reset draws it)."""

    space: Any
    num_steps: int = eqx.field(static=True)
    context_dim: int = eqx.field(static=True, default=0)
    info: dict = eqx.field(default_factory=dict)

    @property
    def dim(self) -> int:
        return self.space.dim


def box_spec(dim: int, num_steps: int, context_dim: int = 0, info=None) -> Spec:
    """A Spec for the unit box [0, 1]^dim (tests, notebooks)."""
    return Spec(Box(dim=dim), num_steps, context_dim, {} if info is None else info)


class Step(NamedTuple):
    """Where a run is: the step index t (int32, unbatched in a scan) and whether it is an initial-design step."""

    t: jax.Array
    initial: jax.Array


class Trace(NamedTuple):
    actions: PyTree  # leading axis: step
    observations: PyTree
    metrics: dict  # name -> (num_steps,) arrays
    info: dict  # the algorithm's per-step diagnostics
    final_state: PyTree


class Algorithm(eqx.Module):
    """init / ask / tell over a state pytree. Fields are static configuration; Params are traced."""

    num_initial: eqx.AbstractVar[int]

    def default_params(self) -> PyTree:
        return None

    def initial_actions(self, key, spec: Spec) -> PyTree:
        """The shared initial design (leading axis num_initial): the space's (a Latin hypercube on a box)."""
        return spec.space.initial_design(key, self.num_initial)

    @abc.abstractmethod
    def init(self, key, params, spec: Spec) -> PyTree:
        """Empty state for a run of spec.num_steps steps."""

    @abc.abstractmethod
    def ask(self, key, state, params, step: Step) -> tuple[PyTree, PyTree]:
        """Return (action, state): the next action and any state it updated (fitted models, ...)."""

    @abc.abstractmethod
    def tell(self, key, state, params, action, observation, step: Step) -> PyTree:
        """Return the state after observing `observation` at `action`."""

    def info(self, state, params) -> dict:
        """Per-step diagnostics recorded in Trace.info (chosen arm, probabilities, phase, hyper-parameters)."""
        return {}

    growth: ClassVar[data.Growth] = data.Growth()  # how growing state grows (an algorithm's field overrides it)

    def capacities(self, num_steps: int) -> tuple[int, ...]:
        """The row capacities a run's growing state passes through (see "Growing state" in the module
        docstring): a static schedule ending at num_steps, the algorithm's :class:`jbo.data.Growth`
        (`growth`, the default rule unless the algorithm declares its own); (num_steps,) keeps every
        buffer whole."""
        return self.growth(num_steps)


class Environment(eqx.Module):
    """A problem that knows the truth: reset/step, with true-value metrics for each step."""

    @property
    @abc.abstractmethod
    def space(self):
        """The action space (jbo.spaces.Box, FiniteArms or ControlSets)."""

    @property
    def dim(self) -> int:
        return self.space.dim

    def side_info(self, env_state) -> dict:
        """What the learner is told about the instance (a dict of arrays); nothing by default."""
        return {}

    def spec(self, num_steps: int, env_state=None) -> Spec:
        info = {} if env_state is None else self.side_info(env_state)
        return Spec(self.space, num_steps, getattr(self, "context_dim", 0), info)

    @abc.abstractmethod
    def reset(self, key) -> PyTree:
        """Initial environment state."""

    @abc.abstractmethod
    def step(self, key, env_state, action, step: Step) -> tuple[PyTree, PyTree, dict]:
        """Return (env_state, observation, metrics) for one action; metrics hold at least "value"."""


# ---------------------------------------------------------------- the metric vocabulary
class _Tally(NamedTuple):
    best_value: jax.Array
    simple_regret: jax.Array
    cumulative_regret: jax.Array
    cumulative_cost: jax.Array


def _tally_init():
    inf = jnp.asarray(jnp.inf)
    return _Tally(-inf, inf, jnp.zeros(()), jnp.zeros(()))


def _derive(raw: dict, tally: _Tally, charged):
    """The shared metric vocabulary from an environment's raw step metrics."""
    if "value" not in raw:
        raise ValueError(f"an environment's step must report 'value'; it reported {sorted(raw)}")
    value = jnp.asarray(raw["value"], jnp.float64)
    best = jnp.maximum(tally.best_value, jnp.where(jnp.isfinite(value), value, -jnp.inf))  # a failed value: left out
    cum_cost = tally.cumulative_cost + charged
    metrics = {k: v for k, v in raw.items() if k != "optimal_value"}
    metrics.update(value=value, best_value=_so_far(best), cost=charged, cumulative_cost=cum_cost)
    simple, cum_regret = tally.simple_regret, tally.cumulative_regret
    if "optimal_value" in raw:
        opt = raw["optimal_value"]
        regret = opt - value
        # A fixed optimum (a number): f* - best value. A per-step optimum (an array, a drifting
        # objective): the smallest instantaneous regret so far. Equal in exact arithmetic for a fixed
        # f*; the first form keeps the rounding of every earlier result (XLA may fuse f(x) into each
        # consumer separately, so opt - value and the reported value can differ in the last ulp).
        counted = jnp.isfinite(regret)  # a failed evaluation (NaN or inf) adds nothing
        simple = (
            opt - best if isinstance(opt, (int, float)) else jnp.minimum(simple, jnp.where(counted, regret, jnp.inf))
        )
        cum_regret = cum_regret + jnp.where(counted, regret, 0.0)
        metrics.update(regret=regret, simple_regret=_so_far(simple), cumulative_regret=cum_regret)
    return metrics, _Tally(best, simple, cum_regret, cum_cost)


def _so_far(tally_value):
    """A best value or simple regret as reported: NaN until the run has a finite evaluation (the
    tally's -inf / +inf start), so a mean over seeds that skips NaN (pandas, jbo.studies) averages
    the seeds that have a value instead of turning infinite."""
    return jnp.where(jnp.isfinite(tally_value), tally_value, jnp.nan)


# ---------------------------------------------------------------- the runner
def _check_run(algorithm, environment, num_steps, budget=None):
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
    if not isinstance(environment, Environment):
        raise TypeError(f"environment must be a jbo.Environment, got {type(environment).__name__}")
    if not isinstance(num_steps, (int, np.integer)) or num_steps < 1:
        raise ValueError(f"num_steps must be a positive int, got {num_steps!r}")
    if num_steps < algorithm.num_initial:
        raise ValueError(
            f"num_steps={num_steps} is smaller than the initial design (num_initial={algorithm.num_initial})"
        )
    if budget is not None and not (np.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be a positive finite cost, got {budget!r}")


def _split_seed(key):
    env_key, alg_key = jax.random.split(key)
    design_key, reset_key, noise_key = jax.random.split(env_key, 3)
    init_key, step_key = jax.random.split(alg_key)
    return design_key, reset_key, noise_key, init_key, step_key


def _zeros(shapes):
    """Zero arrays shaped like a pytree of ShapeDtypeStructs (from jax.eval_shape)."""
    return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)


BUCKET_SMALLEST, BUCKET_FIRST, BUCKET_SHARE = data.BUCKET_SMALLEST, data.BUCKET_FIRST, data.BUCKET_SHARE
BUCKET_STEP, BUCKET_WHOLE = data.BUCKET_STEP, data.BUCKET_WHOLE


def bucket_schedule(
    num_steps: int,
    max_step: int | None = BUCKET_STEP,
    smallest: int = BUCKET_SMALLEST,
    whole: int = BUCKET_WHOLE,
    share: float = BUCKET_SHARE,
    first: int = BUCKET_FIRST,
):
    """The default segment capacities of a run: :class:`jbo.data.Growth` with these settings."""
    return data.Growth(step=max_step, smallest=smallest, whole=whole, share=share, first=first)(num_steps)


def check_bucket(bucket) -> None:
    """An algorithm's `bucket` setting is a bool or a tuple of increasing positive sizes: a named ValueError."""
    if isinstance(bucket, bool):
        return
    try:
        data.Growth(sizes=bucket)
    except ValueError:
        raise ValueError(f"bucket must be True, False or a tuple of increasing positive sizes, got {bucket!r}") from None


def _segments(algorithm: Algorithm, state, num_steps: int):
    """[(first step, last step + 1)] of the run's segments (the second is also the segment's capacity)
    and the growing nodes of the state: one segment unless the state holds growing nodes
    (jbo.data.register_growing) of num_steps rows."""
    marked = data.growing(state, num_steps)
    sizes = tuple(algorithm.capacities(num_steps)) if any(marked) else (num_steps,)
    if len(sizes) == 1:  # one segment: nothing is resized (the program is the whole-buffer one)
        marked = [False] * len(marked)
    if not sizes or sizes[-1] != num_steps or any(b <= a for a, b in zip(sizes, sizes[1:])) or sizes[0] < 1:
        raise ValueError(
            f"{type(algorithm).__name__}.capacities({num_steps}) must increase and end at {num_steps}, got {sizes}"
        )
    starts = (0,) + sizes[:-1]
    return list(zip(starts, sizes)), marked


def _run(
    algorithm: Algorithm, environment: Environment, key, num_steps: int, params, budget=None, free_initial: bool = False
) -> Trace:
    n0 = algorithm.num_initial
    design_key, reset_key, noise_key, init_key, step_key = _split_seed(key)
    env_state = environment.reset(reset_key)
    spec = environment.spec(num_steps, env_state)
    design = algorithm.initial_actions(design_key, spec)
    if n0 > 0:  # a clear error for a custom algorithm whose design does not have num_initial rows
        chex.assert_tree_shape_prefix(design, (n0,), custom_message=f"{type(algorithm).__name__}.initial_actions")
    state = algorithm.init(init_key, params, spec)
    segments, marked = _segments(algorithm, state, num_steps)

    def one(state, env_state, tally, t, first, stop):
        step = Step(t.astype(jnp.int32), t < n0)
        k_ask, k_tell = jax.random.split(jax.random.fold_in(step_key, t))

        def from_design(state):
            return jax.tree.map(lambda a: a[jnp.minimum(t, n0 - 1)], design), state

        def from_ask(state):
            return algorithm.ask(k_ask, state, params, step)

        if stop <= n0:  # a segment of initial-design steps only: nothing to ask
            action, state = from_design(state)
        elif n0 > first:  # t is not batched under vmap over seeds/params, so this cond stays a branch
            action, state = jax.lax.cond(t < n0, from_design, from_ask, state)
        else:
            action, state = from_ask(state)
        env_state, obs, raw = environment.step(jax.random.fold_in(noise_key, t), env_state, action, step)
        told = checks.all_finite(obs)  # a non-finite observation is a failed evaluation: not told
        state = jax.lax.cond(told, lambda s: algorithm.tell(k_tell, s, params, action, obs, step), lambda s: s, state)
        cost = jnp.asarray(raw.pop("cost", 1.0), jnp.float64) if "cost" in raw else jnp.ones(())
        charged = jnp.where(step.initial, 0.0, cost) if free_initial else cost
        metrics, tally = _derive(raw, tally, charged)
        flags = {f"{checks.NONFINITE}objective": ~told, f"{checks.NONFINITE}action": ~checks.all_finite(action)}
        return state, env_state, tally, action, obs, metrics, flags

    def scan_step(carry, t, first, stop):
        if budget is None:
            state, env_state, tally = carry
            state, env_state, tally, action, obs, metrics, flags = one(state, env_state, tally, t, first, stop)
            metrics["active"] = jnp.asarray(True)
            return (state, env_state, tally), (action, obs, metrics, {**algorithm.info(state, params), **flags})
        state, env_state, tally, held = carry
        active = tally.cumulative_cost < budget  # cost spent before this step

        def idle():  # nothing is computed: states frozen, metrics held, zero action and observation
            return (state, env_state, tally) + tuple(_zeros(blank)) + (held, _zeros(no_flags))

        # a real branch when active is unbatched (one run, or seeds run one after another); under vmap over
        # seeds JAX turns it into a select of both sides, which is what the step costs anyway
        state, env_state, tally, action, obs, metrics, flags = jax.lax.cond(
            active, lambda: one(state, env_state, tally, t, first, stop), idle
        )
        metrics = dict(metrics)
        metrics["active"] = active
        held = {k: v for k, v in metrics.items() if k != "active"}
        return (state, env_state, tally, held), (action, obs, metrics, {**algorithm.info(state, params), **flags})

    # Growing state: segment [first, stop) runs with every growing node holding `stop` rows; a step
    # writes at most one row, so the rows written by the segment's end fit
    carry = (data.grow(state, marked, segments[0][1]), env_state, _tally_init())
    if budget is not None:  # the metrics an inactive step holds: the last active step's (step 0 is always active)
        shapes = jax.eval_shape(lambda c: one(*c, jnp.int32(0), *segments[0]), carry)
        blank, no_flags = shapes[3:5], shapes[6]  # an inactive step records zeros and no non-finite flag
        carry = carry + (_zeros(shapes[5]),)
    outs = []
    for k, (first, stop) in enumerate(segments):
        if k > 0:  # pad the growing nodes to this segment's size
            carry = (data.grow(carry[0], marked, stop),) + carry[1:]
        carry, out = jax.lax.scan(lambda c, t: scan_step(c, t, first, stop), carry, jnp.arange(first, stop))
        outs.append(out)
    if len(outs) > 1:
        _check_segment_shapes(algorithm, outs)
    actions, obs, metrics, info = jax.tree.map(lambda *a: jnp.concatenate(a), *outs) if len(outs) > 1 else outs[0]
    return Trace(actions, obs, metrics, info, carry[0])


def _check_segment_shapes(algorithm, outs):
    """Every segment must record the same per-step shapes (an info entry sized by a buffer would not)."""
    ref = jax.tree.map(lambda a: a.shape[1:], outs[0])
    for out in outs[1:]:
        if jax.tree.structure(out) != jax.tree.structure(outs[0]) or jax.tree.map(lambda a: a.shape[1:], out) != ref:
            raise ValueError(
                f"{type(algorithm).__name__}: a per-step record (action, observation, metric or info) "
                "changes shape with the buffer capacity; record capacity-free values, or return "
                "(num_steps,) from capacities() to keep the buffers whole"
            )


SMALL_STATE_ELEMENTS = 1024


def _keep_state(trace: Trace, keep, run_axes: int = 0) -> Trace:
    """Trace.final_state as asked: True the whole state, False None, "small" (the multi-run default)
    the leaves with at most SMALL_STATE_ELEMENTS elements per run (counters, active sets, fitted
    hyper-parameters) and None for the larger ones (data buffers, Gram matrices, factors).
    run_axes: leading run axes of the leaves (0 inside a vmap over runs; 2 for (environment, seed))."""
    if keep is True:
        return trace
    if keep is False:
        return trace._replace(final_state=None)
    per_run = lambda a: np.size(a) // max(1, int(np.prod(np.shape(a)[:run_axes])))  # noqa: E731
    return trace._replace(
        final_state=jax.tree.map(lambda a: a if per_run(a) <= SMALL_STATE_ELEMENTS else None, trace.final_state)
    )


def _check_keep(keep):
    if keep not in (True, False, "small") or isinstance(keep, (int, np.integer)) and not isinstance(keep, bool):
        raise ValueError(f"keep_final_state must be True, False or 'small', got {keep!r}")
    return keep


def _program(algorithm, environment, num_steps, budget=None, free_initial=False, keep_final_state=True, bitwise=False):
    """keys (S,), params -> Trace with a leading seed axis (the scan mapped over seeds, not yet jitted:
    vmapped, or one seed after another with bitwise=True; see jbo.parallel.map_runs)."""
    from jbo.parallel import map_runs

    return lambda keys, params: map_runs(
        lambda k: _keep_state(
            _run(algorithm, environment, k, num_steps, params, budget, free_initial), keep_final_state
        ),
        bitwise,
    )(keys)


# ---------------------------------------------------------------- batches of runs over devices (jbo.parallel)
_RUNNERS: dict = {}  # a few recently compiled batch programs (like jax.jit's cache, for repeated calls)
_RUNNERS_KEPT = 8


def _signature(tree):
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple(
        (np.shape(x), str(x.dtype), bool(getattr(x, "weak_type", False)))
        if hasattr(x, "dtype")
        else ("py", type(x).__name__)
        for x in leaves
    )


def _batch_runner(
    kind,
    static,
    build_program,
    batched,
    replicated,
    out_axis,
    devices,
    chunk_size,
    memory_limit,
    extra=(),
    cache=True,
    bitwise=False,
):
    """The compiled batch program for these inputs, from the cache or compiled now (jbo.parallel);
    returns (runner, compile_seconds: 0.0 on a cache hit). cache=False: always compile, keep nothing."""
    from jbo import parallel

    devs = parallel.resolve_devices(devices)
    bitwise = parallel.check_bitwise(bitwise)  # before the cache key: 1 or np.True_ must not pass as True
    if not cache:
        runner, _, seconds = parallel.compile_runs(
            build_program(),
            batched,
            replicated,
            out_axis=out_axis,
            devices=devs,
            chunk_size=chunk_size,
            memory_limit=memory_limit,
            bitwise=bitwise,
        )
        return runner, seconds
    try:
        leaves, treedef = jax.tree.flatten(static)
        key = (
            kind,
            treedef,
            tuple(leaves),
            _signature(batched),
            _signature(replicated),
            out_axis,
            tuple(d.id for d in devs),
            chunk_size,
            memory_limit,
            extra,
            bitwise,
            tuple(sorted(parallel.CPU_COMPILER_OPTIONS.items())),  # a change of options compiles anew
            bool(jax.config.read("jax_disable_most_optimizations")),  # and so does a change of XLA's optimisations
        )
        hash(key)
    except TypeError:  # an unhashable static field: compile without caching
        key = None
    if key is not None and key in _RUNNERS:
        _RUNNERS[key] = _RUNNERS.pop(key)  # most recently used last
        return _RUNNERS[key], 0.0
    runner, _, seconds = parallel.compile_runs(
        build_program(),
        batched,
        replicated,
        out_axis=out_axis,
        devices=devs,
        chunk_size=chunk_size,
        memory_limit=memory_limit,
        bitwise=bitwise,
    )
    if key is not None:
        _RUNNERS[key] = runner
        while len(_RUNNERS) > _RUNNERS_KEPT:
            _RUNNERS.pop(next(iter(_RUNNERS)))
    return runner, seconds


def _seeds_runner(
    algorithm,
    environment,
    keys,
    num_steps,
    params,
    budget,
    free_initial,
    keep_final_state="small",
    devices=None,
    chunk_size=None,
    memory_limit=None,
    cache=True,
    bitwise=False,
):
    """(runner, compile_seconds) with runner(keys, params) -> Trace (seed axis first) for run_seeds."""
    dyn, static = eqx.partition((algorithm, environment), eqx.is_array)

    def build():
        def program(keys, replicated):
            dyn, params = replicated
            alg, env = eqx.combine(dyn, static)
            return _program(alg, env, num_steps, budget, free_initial, keep_final_state, bitwise)(keys, params)

        return program

    runner, seconds = _batch_runner(
        "seeds",
        (static, num_steps, budget, free_initial, keep_final_state),
        build,
        keys,
        (dyn, params),
        0,
        devices,
        chunk_size,
        memory_limit,
        cache=cache,
        bitwise=bitwise,
    )
    fn = lambda ks, p=params: runner(ks, (dyn, p))  # noqa: E731
    fn.plan = runner.plan
    return fn, seconds


@eqx.filter_jit
def _run_jit(algorithm, environment, key, num_steps, params, budget, free_initial):
    return _run(algorithm, environment, key, num_steps, params, budget, free_initial)


def _run_seeds_jit(algorithm, environment, keys, num_steps, params, budget, free_initial):
    """run_seeds on given keys: the same compiled program (cached) as run_seeds with its defaults."""
    runner, _ = _seeds_runner(algorithm, environment, keys, num_steps, params, budget, free_initial)
    return runner(keys)


def as_key(key, argument: str = "key"):
    """The typed JAX PRNG key every entry point works with, from what a user may pass: an int seed
    (a Python or NumPy integer, or a 0-d integer array; not a bool), a typed key (jax.random.key;
    shape ()) or a legacy uint32 key (jax.random.PRNGKey; shape (2,)). Anything else is a TypeError
    naming `argument`."""
    if isinstance(key, jax.core.Tracer):
        return key
    if isinstance(key, (bool, np.bool_)):
        raise TypeError(f"{argument} must be an int seed or a JAX key, got the bool {key!r}")
    dtype, shape = getattr(key, "dtype", None), np.shape(key) if hasattr(key, "shape") else None
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        if shape != ():
            raise ValueError(
                f"{argument} must be one key (shape ()), got a key array of shape {shape}; pass the key the "
                "seeds are split from"
            )
        return key
    integer = isinstance(key, (int, np.integer)) or (dtype is not None and np.dtype(dtype).kind in "iu" and shape == ())
    if integer:
        try:
            return jax.random.key(int(key))
        except (OverflowError, ValueError, TypeError) as e:
            raise ValueError(f"{argument}: the int seed {int(key)} cannot seed a JAX key ({e})") from None
    if dtype is not None and np.dtype(dtype) == np.uint32 and shape == (2,):  # jax.random.PRNGKey(seed)
        return jax.random.wrap_key_data(jnp.asarray(key))
    what = f"{type(key).__name__} of shape {shape} and dtype {dtype}" if dtype is not None else type(key).__name__
    raise TypeError(
        f"{argument} must be an int seed, a typed JAX key (jax.random.key) or a legacy uint32 key "
        f"(jax.random.PRNGKey), got {what}: {str(key)[:60]}"
    )


def _keys(key, num_seeds):
    if isinstance(num_seeds, bool) or not isinstance(num_seeds, (int, np.integer)) or num_seeds < 1:
        raise ValueError(f"num_seeds must be a positive int, got {num_seeds!r}")
    return jax.random.split(as_key(key), num_seeds)


def _budget(budget):
    return None if budget is None else float(budget)


def _params(algorithm, params, on_nonfinite):
    """The run's Params (the algorithm's defaults for None), checked against their domains."""
    checks.check_on_nonfinite(on_nonfinite)
    params = algorithm.default_params() if params is None else params
    checks.check_params(params, f"{type(algorithm).__name__}: ")
    return params


def _checked(trace, on_nonfinite, axes, algorithm, environment):
    """The post-run checks (jbo.checks: non-finite values, a beaten optimum), labelled with the
    algorithm and problem."""
    name = getattr(environment, "name", None)
    label = (
        f"{type(algorithm).__name__}{checks.model_note(algorithm)} on "
        f"{name if isinstance(name, str) else type(environment).__name__}"
    )
    checks.check_optimum(trace, label)
    return checks.check_trace(trace, on_nonfinite, axes, label, environment)


def run(
    algorithm: Algorithm,
    environment: Environment,
    key,
    num_steps: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    *,
    on_nonfinite: str = "raise",
) -> Trace:
    """One seed: the whole run as one compiled lax.scan. Metrics have shape (num_steps,).

    budget: stop spending once the cumulative cost reaches it (later steps inactive, see the module
    docstring); free_initial: initial-design steps cost nothing. on_nonfinite: "raise" (default),
    "warn" or "ignore" when the run met NaN or inf (see jbo.checks)."""
    _check_run(algorithm, environment, num_steps, budget)
    params = _params(algorithm, params, on_nonfinite)
    trace = _run_jit(algorithm, environment, as_key(key), num_steps, params, _budget(budget), free_initial)
    return _checked(trace, on_nonfinite, (), algorithm, environment)


_PARALLEL_DOC = """
    Over devices and in chunks (jbo.parallel): devices=None spreads the runs over all of
    jax.devices() (every process's, after jbo.parallel.initialize), an int n over the first n,
    devices=1 switches sharding off; chunk_size (runs per compiled chunk) or memory_limit (bytes;
    default 75% of free memory) cut a batch too large for one program into chunks run in a host
    loop. The result equals the single-device, single-chunk run to rounding (bit for bit with
    bitwise=True: the runs are computed one after another, lax.map instead of vmap, and every device
    runs its own one-device program; it equals run() with the same key to rounding, not bit for bit).
    keep_final_state: "small" (default) keeps the final-state leaves with at most
    SMALL_STATE_ELEMENTS elements per run, True the whole state, False none."""


def run_seeds(
    algorithm: Algorithm,
    environment: Environment,
    key,
    num_steps: int,
    num_seeds: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    *,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """`num_seeds` seeds (keys split from `key`) in one compiled program; leading axis = seed.

    Seed i uses jax.random.split(key, num_seeds)[i], so its trace equals run(..., that key, ...).
    on_nonfinite: see :func:`run`.
    """
    _check_run(algorithm, environment, num_steps, budget)
    params = _params(algorithm, params, on_nonfinite)
    keys = _keys(key, num_seeds)
    runner, _ = _seeds_runner(
        algorithm,
        environment,
        keys,
        num_steps,
        params,
        _budget(budget),
        free_initial,
        _check_keep(keep_final_state),
        devices,
        chunk_size,
        memory_limit,
        bitwise=bitwise,
    )
    return _checked(runner(keys), on_nonfinite, ("seed",), algorithm, environment)


def run_sweep(
    algorithm: Algorithm,
    environment: Environment,
    key,
    num_steps: int,
    num_seeds: int,
    params,
    budget=None,
    free_initial: bool = False,
    *,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """A hyper-parameter sweep: `params` leaves carry a leading axis P; output axes are (P, seed, step).

    Every parameter setting uses the same seeds (common random numbers across the sweep). The P x S
    runs form one batch (run p * S + s: setting p, seed s) spread over the devices.
    on_nonfinite: see :func:`run`.
    """
    _check_run(algorithm, environment, num_steps, budget)
    checks.check_on_nonfinite(on_nonfinite)
    checks.check_params(params, f"{type(algorithm).__name__}: ")
    sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in jax.tree.leaves(params)}
    if not sizes or None in sizes or len(sizes) != 1:
        raise ValueError("run_sweep needs every leaf of `params` to share one leading (sweep) axis")
    keep = _check_keep(keep_final_state)
    (num_settings,), keys = sizes, _keys(key, num_seeds)
    flat_keys = jnp.tile(keys, num_settings)
    flat_params = jax.tree.map(lambda a: jnp.repeat(jnp.asarray(a), num_seeds, axis=0), params)
    dyn, static = eqx.partition((algorithm, environment), eqx.is_array)
    b = _budget(budget)
    from jbo.parallel import map_runs

    def build():
        def program(batched, dyn):
            alg, env = eqx.combine(dyn, static)
            return map_runs(lambda k, p: _keep_state(_run(alg, env, k, num_steps, p, b, free_initial), keep), bitwise)(
                *batched
            )

        return program

    runner, _ = _batch_runner(
        "sweep",
        (static, num_steps, b, free_initial, keep),
        build,
        (flat_keys, flat_params),
        dyn,
        0,
        devices,
        chunk_size,
        memory_limit,
        bitwise=bitwise,
    )
    out = runner((flat_keys, flat_params), dyn)
    out = jax.tree.map(lambda a: a.reshape((num_settings, num_seeds) + a.shape[1:]), out)
    return _checked(out, on_nonfinite, ("setting", "seed"), algorithm, environment)


run_seeds.__doc__ += _PARALLEL_DOC
run_sweep.__doc__ += _PARALLEL_DOC


def stack_environments(environments):
    """Stack environments that differ only in array values (the same problem with other cost means,
    variances, noise levels): returns (stacked, axes). A leaf that is equal in every environment is
    kept once (axis None: shared, e.g. the control-set masks); the others get a leading axis E."""
    envs = list(environments)
    if not envs or not all(isinstance(e, Environment) for e in envs):
        raise ValueError("stack_environments needs a non-empty list of jbo Environments")
    tree0 = jax.tree.structure(envs[0])
    for i, e in enumerate(envs[1:], 1):
        if jax.tree.structure(e) != tree0:
            raise ValueError(
                f"environment {i} differs from environment 0 in its static configuration (problem, "
                "function or shapes); only array values may differ"
            )
    columns = list(zip(*[jax.tree.leaves(e) for e in envs]))
    for i, col in enumerate(columns):
        if len({np.shape(a) for a in col}) > 1:
            raise ValueError(f"leaf {i} of the environments has different shapes: {[np.shape(a) for a in col]}")
    shared = [all(np.array_equal(np.asarray(a), np.asarray(col[0])) for a in col[1:]) for col in columns]
    stacked = [col[0] if same else jnp.stack([jnp.asarray(a) for a in col]) for col, same in zip(columns, shared)]
    return jax.tree.unflatten(tree0, stacked), jax.tree.unflatten(tree0, [None if same else 0 for same in shared])


def environments_program(
    algorithm, num_steps, axes, num_envs: int, budget=None, free_initial=False, sequential=False, bitwise=False
):
    """(stacked environments, keys (S,), params) -> Trace with axes (E, S, step) (not yet jitted);
    `axes` and the stacked environments come from :func:`stack_environments`, E = num_envs.

    sequential=False vmaps environments and seeds; True runs them one after the other (lax.map), so a
    lax.cond inside the algorithm on a per-run quantity (a phase, the budget) stays a real branch and
    only the taken branch costs time. bitwise=True maps environments and seeds with lax.map too (see
    jbo.parallel.map_runs), so a run's code does not depend on how many runs share the program."""
    from jbo.parallel import map_runs

    axes_list = jax.tree.leaves(axes, is_leaf=lambda x: x is None)
    one_by_one = sequential or bitwise  # lax.map over environments and seeds, else vmap

    def per_env(env, keys, params):
        return map_runs(lambda k: _run(algorithm, env, k, num_steps, params, budget, free_initial), one_by_one)(keys)

    def program(envs, keys, params):
        leaves, tree = jax.tree.flatten(envs)
        batched = [a for a, ax in zip(leaves, axes_list) if ax is not None]
        if not batched:  # every environment equal: run once, repeat along the environment axis
            return jax.tree.map(lambda a: jnp.broadcast_to(a, (num_envs,) + a.shape), per_env(envs, keys, params))
        if not one_by_one:
            return jax.vmap(per_env, in_axes=(axes, None, None))(envs, keys, params)
        pick = lambda e: jax.tree.unflatten(
            tree,
            [
                a if ax is None else a[e]  # noqa: E731
                for a, ax in zip(leaves, axes_list)
            ],
        )
        return jax.lax.map(lambda e: per_env(pick(e), keys, params), jnp.arange(batched[0].shape[0]))

    return program


def run_environments(
    algorithm: Algorithm,
    environments,
    key,
    num_steps: int,
    num_seeds: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    sequential: bool = False,
    *,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """Several environments that differ only in array values (see :func:`stack_environments`) and
    `num_seeds` seeds in one compiled program; output axes (environment, seed, step). Every
    environment uses the same seed keys: seed i of environment e equals
    run_seeds(algorithm, environments[e], key, num_steps, num_seeds)[i] (tested).
    sequential: see :func:`environments_program`. The seed axis is spread over the devices.
    on_nonfinite: see :func:`run`."""
    environments = list(environments)
    envs, axes = stack_environments(environments)
    _check_run(algorithm, environments[0], num_steps, budget)
    keep = _check_keep(keep_final_state)
    params = _params(algorithm, params, on_nonfinite)
    keys, b = _keys(key, num_seeds), _budget(budget)
    dyn, static = eqx.partition((algorithm, envs), eqx.is_array)
    axes_sig = jax.tree.flatten(axes, is_leaf=lambda x: x is None)

    def build():
        def program(keys, replicated):
            dyn, params = replicated
            alg, envs = eqx.combine(dyn, static)
            prog = environments_program(alg, num_steps, axes, len(environments), b, free_initial, sequential, bitwise)
            return _keep_state(prog(envs, keys, params), keep, run_axes=2)

        return program

    runner, _ = _batch_runner(
        "environments",
        (static, num_steps, b, free_initial, keep),
        build,
        keys,
        (dyn, params),
        1,
        devices,
        chunk_size,
        memory_limit,
        (len(environments), sequential, str(axes_sig)),
        bitwise=bitwise,
    )
    return _checked(runner(keys, (dyn, params)), on_nonfinite, ("environment", "seed"), algorithm, environments[0])


run_environments.__doc__ += _PARALLEL_DOC


def stack_params(*params):
    """Stack several Params pytrees along a new leading axis (for run_sweep)."""
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *params)


def replace_params(params, **values):
    """Params with the named fields replaced, wherever they sit in nested NamedTuples (each name must
    occur exactly once), e.g. replace_params(gp_ucb.default_params(), beta=4.0)."""
    found = {}

    def walk(p):
        if not (isinstance(p, tuple) and hasattr(p, "_fields")):
            return p
        kw = {}
        for f in p._fields:
            v = getattr(p, f)
            if f in values:
                found[f] = found.get(f, 0) + 1
                kw[f] = values[f]
            else:
                kw[f] = walk(v)
        return p._replace(**kw)

    out = walk(params)
    missing = sorted(set(values) - set(found))
    if missing:
        raise ValueError(f"unknown parameter(s) {missing} for {type(params).__name__}")
    twice = sorted(k for k, n in found.items() if n > 1)
    if twice:
        raise ValueError(f"parameter name(s) {twice} occur more than once; replace them on the sub-tuple")
    checks.check_params(out)
    return out
