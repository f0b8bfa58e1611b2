"""One run: a ``lax.scan`` over the steps of one seed (the runner, jbo.runner, batches it).

One run is a single ``lax.scan`` over ``num_steps`` steps; with ``step = Step(t, t < num_initial)``:

    t < num_initial : action = the shared initial design[t]
    otherwise       : action, state = algorithm.ask(key_t, state, params, step)
    env_state, observation, metrics = environment.step(noise_key_t, env_state, action, step)
    state = algorithm.tell(key_t', state, params, action, observation, step)
    info  = algorithm.info(state, params)                  # per-step diagnostics, recorded

``t`` is never batched (seeds and sweeps are vmapped *around* the scan), so ``lax.cond`` on the step
index (initial design, batch schedules, restarts, phases) stays a real branch under ``vmap``.

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
sizes come from the algorithm's :class:`jbo.data.Growth` (``Algorithm.growth``; the default rule: from
64 rows, or 128 in runs of at least 384 steps, doubling, then 256 rows more each; runs of at most 96
steps keep the one whole-buffer program); each segment compiles once.
The contract: such a node receives at most one row per step (the engine's one observation per step).
An algorithm opts out with ``growth=jbo.data.Growth(enabled=False)``.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jbo import checks, data
from jbo import metrics as vocabulary
from jbo.batching import batched_like
from jbo.protocols import Algorithm, Environment, Step, Trace


def split_seed(key):
    """A seed's key split into its streams: (design, reset, noise) for the environment, (init, step)
    for the algorithm (common random numbers: methods that share num_initial see the same design and
    noise)."""
    env_key, alg_key = jax.random.split(key)
    design_key, reset_key, noise_key = jax.random.split(env_key, 3)
    init_key, step_key = jax.random.split(alg_key)
    return design_key, reset_key, noise_key, init_key, step_key


def zeros(shapes):
    """Zero arrays shaped like a pytree of ShapeDtypeStructs (from jax.eval_shape)."""
    return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)


def segment_plan(algorithm: Algorithm, state, num_steps: int):
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


def one_run(
    algorithm: Algorithm,
    environment: Environment,
    *,
    key,
    num_steps: int,
    params,
    budget: float | None = None,
    free_initial: bool = False,
) -> Trace:
    """One seed's run as lax.scan segments (not jitted; the runner jits, vmaps and shards it): see the
    module docstring. `key` a typed key, `budget` None or a float, `params` checked by the caller."""
    n0 = algorithm.num_initial
    design_key, reset_key, noise_key, init_key, step_key = split_seed(key)
    env_state = environment.reset(reset_key)
    spec = environment.spec(num_steps, env_state)
    design = algorithm.initial_actions(design_key, spec)
    if n0 > 0:  # a clear error for a custom algorithm whose design does not have num_initial rows
        chex.assert_tree_shape_prefix(design, (n0,), custom_message=f"{type(algorithm).__name__}.initial_actions")
    state = algorithm.init(init_key, params, spec)
    segments, marked = segment_plan(algorithm, state, num_steps)

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
        metrics, tally = vocabulary.derive(raw, tally, charged)
        flags = {f"{checks.NONFINITE}objective": ~told, f"{checks.NONFINITE}action": ~checks.all_finite(action)}
        return state, env_state, tally, action, obs, metrics, flags

    def scan_step(carry, t, first, stop):
        if budget is None:
            state, env_state, tally = carry
            state, env_state, tally, action, obs, metrics, flags = one(state, env_state, tally, t, first, stop)
            metrics["active"] = jnp.asarray(True)
            return (state, env_state, tally), (action, obs, metrics, algorithm.info(state, params), flags)
        state, env_state, tally, held = carry
        active = tally.cumulative_cost < budget  # cost spent before this step

        def idle():  # nothing is computed: states frozen, metrics held, zero action and observation
            return (state, env_state, tally) + tuple(zeros(blank)) + (held, zeros(no_flags))

        # a real branch when active is unbatched (one run, or seeds run one after another); under vmap over
        # seeds JAX turns it into a select of both sides, which is what the step costs anyway
        state, env_state, tally, action, obs, metrics, flags = jax.lax.cond(
            active, lambda: one(state, env_state, tally, t, first, stop), idle
        )
        metrics = dict(metrics)
        metrics["active"] = active
        held = {k: v for k, v in metrics.items() if k != "active"}
        return (state, env_state, tally, held), (action, obs, metrics, algorithm.info(state, params), flags)

    # Growing state: segment [first, stop) runs with every growing node holding `stop` rows; a step
    # writes at most one row, so the rows written by the segment's end fit
    carry = (data.grow(state, marked, segments[0][1]), env_state, vocabulary.tally_init())
    if budget is not None:  # the metrics an inactive step holds: the last active step's (step 0 is always active)
        shapes = jax.eval_shape(lambda c: one(*c, jnp.int32(0), *segments[0]), carry)
        blank, no_flags = shapes[3:5], shapes[6]  # an inactive step records zeros and no non-finite flag
        carry = carry + (zeros(shapes[5]),)
    # the algorithm's state and the tally enter the scans batched like the runs, so the step is batched
    # once under vmap; the environment's state is left as it is (a problem's constants stay shared)
    carry = (batched_like(carry[0], key), carry[1], *batched_like(carry[2:], key))
    outs = []
    for k, (first, stop) in enumerate(segments):
        if k > 0:  # pad the growing nodes to this segment's size
            carry = (data.grow(carry[0], marked, stop),) + carry[1:]
        carry, out = jax.lax.scan(lambda c, t: scan_step(c, t, first, stop), carry, jnp.arange(first, stop))
        outs.append(out)
    if len(outs) > 1:
        check_segment_shapes(algorithm, outs)
    actions, obs, metrics, info, flags = (
        jax.tree.map(lambda *a: jnp.concatenate(a), *outs) if len(outs) > 1 else outs[0]
    )
    return Trace(actions, obs, metrics, info, carry[0], flags)


def check_segment_shapes(algorithm, outs):
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


def keep_state(trace: Trace, keep, run_axes: int = 0) -> Trace:
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


def check_keep(keep):
    if keep not in (True, False, "small") or isinstance(keep, (int, np.integer)) and not isinstance(keep, bool):
        raise ValueError(f"keep_final_state must be True, False or 'small', got {keep!r}")
    return keep
