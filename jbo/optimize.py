"""Inner optimiser: maximise a differentiable function on the unit box [0, 1]^d.

Screen raw uniform candidates (plus optional extra candidates), start a local search from the top-k,
run projected L-BFGS or projected Adam for a fixed number of iterations, and return the best point
seen. Fixed shapes and iteration counts: safe under jit, vmap and scan.

The L-BFGS here is our own bounded version (:func:`lbfgs_step`): optax's L-BFGS direction
(``optax.scale_by_lbfgs``) followed by a projected backtracking (Armijo) line search of at most
``max_linesearch`` trial steps. Every iteration therefore costs at most ``max_linesearch`` function
and gradient evaluations (``max_linesearch`` values and one gradient with value-only trials), under
``vmap`` too (a batched ``while_loop`` stops once every lane's own counter has run out). optax's zoom
line search has no such bound under ``vmap``: one lane of it was seen iterating past 14 000
line-search steps on an ordinary GP fit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import optax

from jbo.batching import batched_like


def clean(v):
    """Non-finite values become -inf (never chosen by a maximiser)."""
    return jnp.where(jnp.isfinite(v), v, -jnp.inf)


_clean = clean


def box_projection(x):
    return jnp.clip(x, 0.0, 1.0)


# ---------------------------------------------------------------- bounded projected L-BFGS (minimisation)
MAX_LINESEARCH = 20  # trial steps per L-BFGS iteration: 1, 1/2, ..., 2^-19 times the L-BFGS step when halving
LINE_SEARCHES = ("halving", "quadratic")
# The quadratic backtracking's next trial step, as a fraction of the last: Nocedal & Wright's safeguard
# (sec. 3.5). A lower bound of 1e-3 instead was worse on hartmann6 at step 60 by the paired rule
# (experiments/engine/long_run_defaults.py --compare line_search; docs/defaults.md).
QUADRATIC_SHRINK = (0.1, 0.5)


def check_line_search(value, where: str) -> None:
    """Refuse a line search that is not one of LINE_SEARCHES, naming `where` (the function or part)."""
    if value not in LINE_SEARCHES:
        raise ValueError(f"{where}: line_search must be one of {LINE_SEARCHES}, got {value!r}")


class LBFGSCarry(NamedTuple):
    """State of one bounded L-BFGS run (minimisation); a pytree, vmappable."""

    x: Any  # current point (pytree), always feasible
    value: jax.Array  # f(x)
    grad: Any  # effective gradient at x: finite, frozen and blocked coordinates zeroed
    state: Any  # optax.scale_by_lbfgs state
    num_evals: jax.Array  # int32: evaluations of f so far (with or without its gradient)
    num_steps: jax.Array  # int32: iterations taken
    failed: jax.Array  # bool: f was not finite at the start (the run never moves; score it as the worst)
    done: jax.Array  # bool: no further progress possible (failed, zero effective gradient, converged to
    #                  rounding, or a steepest-descent step found no decrease); later iterations evaluate nothing
    decrease: jax.Array  # relative decrease of f over the last iteration


def _effective_grad(x, g, project, freeze):
    """The gradient the L-BFGS sees: non-finite entries and frozen coordinates zeroed, and so are
    coordinates the projection blocks (on a bound with the gradient pointing out of the box)."""
    g = jax.tree.map(lambda gi: jnp.where(jnp.isfinite(gi), gi, 0.0), g)
    if freeze is not None:
        g = jax.tree.map(jnp.multiply, g, freeze)
    xt = project(jax.tree.map(jnp.subtract, x, g))
    return jax.tree.map(lambda gi, a, b: jnp.where(a == b, 0.0, gi), g, x, xt)


def lbfgs_start(
    value_and_grad: Callable,
    x0,
    project: Callable = box_projection,
    freeze=None,
    memory_size: int = 10,
    start: tuple | None = None,
) -> LBFGSCarry:
    """Evaluate f at the feasible start x0 (one evaluation; none when `start`, (f(x0), grad f(x0)), is
    given) and set up the L-BFGS memory."""
    v, g = value_and_grad(x0) if start is None else start
    v = jnp.asarray(v)
    failed = ~jnp.isfinite(v)
    g = _effective_grad(x0, g, project, freeze)
    done = failed | (optax.tree.norm(g) == 0.0)
    carry = LBFGSCarry(
        x0,
        v,
        g,
        optax.scale_by_lbfgs(memory_size).init(x0),
        jnp.ones((), jnp.int32),
        jnp.zeros((), jnp.int32),
        failed,
        done,
        jnp.zeros_like(v),
    )
    # batched like x0, so that the loop is batched once; num_steps advances alike in every lane and stays
    # shared (as the loop leaves it: a counter batched per lane changes nothing but the compiled code)
    return batched_like(carry, x0)._replace(num_steps=carry.num_steps)


def lbfgs_step(
    value_and_grad: Callable,
    carry: LBFGSCarry,
    project: Callable = box_projection,
    freeze=None,
    memory_size: int = 10,
    max_linesearch: int = MAX_LINESEARCH,
    c1: float = 1e-4,
    value: Callable | None = None,
    line_search: str = "halving",
) -> LBFGSCarry:
    """One projected L-BFGS iteration with at most `max_linesearch` evaluations (one more with `value`).

    Direction: optax.scale_by_lbfgs on the effective gradient; the memory is reset (steepest descent
    with optax's capped first step) when the last curvature pair is not positive or the direction is
    not a descent direction. Line search: x(t) = project(x - t d) for t = 1, 1/2, ... until
    f(x(t)) <= f(x) + c1 <g, x(t) - x> with f(x(t)) finite; if no trial passes, x stays and the memory
    is reset. The run is `done` when a steepest-descent step (the first one, or one after a reset)
    brings no decrease, or when neither direction promises a decrease above 1e-15 |f| (converged to
    rounding): a done run evaluates nothing more (under vmap its lane idles). The value never
    increases and never becomes non-finite.

    `value` (f alone, optional): the trials then evaluate f without its gradient, and the gradient is
    evaluated once, at the accepted point (one more evaluation of f). Under vmap every lane runs as
    many trials as the lane that backtracks furthest, so where deep backtracking is common (an
    acquisition's search near an observed optimum) this is the cheaper form. It takes the same steps
    unless a trial's value lies within rounding of the Armijo threshold (value and value-and-gradient
    are different programs, equal to rounding).

    `line_search` "quadratic": after a failed trial t the next is the minimiser of the quadratic
    through f(x), the trial's predicted linear change <g, x(t) - x> and f(x(t)) (Nocedal & Wright,
    Numerical Optimization, 2nd ed., sec. 3.5), kept within QUADRATIC_SHRINK = [1/10, 1/2] times t,
    instead of t / 2. Where the first, steepest step (a unit step) overshoots an optimum nearby by
    orders of magnitude, as an acquisition's search from starts near an observed optimum does (the
    accepted step there was ~2^-16 after 16 halvings), it reaches that scale in about 6 trials; where
    t / 2 passes, both take about the same step."""
    check_line_search(line_search, "lbfgs_step")
    lbfgs = optax.scale_by_lbfgs(memory_size)
    x, v, g, state = carry.x, carry.value, carry.grad, carry.state
    vdot = optax.tree.vdot
    # 1. drop a curvature pair that would make the inverse-Hessian estimate indefinite
    s = optax.tree.sub(x, state.params)
    y = optax.tree.sub(g, state.updates)
    bad_pair = (state.count > 0) & ~(vdot(s, y) > 1e-10 * optax.tree.norm(s) * optax.tree.norm(y))
    fresh = lbfgs.init(x)
    state = jax.tree.map(lambda a, b: jnp.where(bad_pair, a, b), fresh, state)
    steepest_used = state.count == 0  # first iteration or memory reset: optax's capped gradient step
    d, state_new = lbfgs.update(g, state, x)
    keep = jax.tree.map(lambda gi: gi != 0.0, g)  # frozen and blocked coordinates do not move
    d = jax.tree.map(lambda di, k: jnp.where(k, di, 0.0), d, keep)
    gnorm = optax.tree.norm(g)
    steepest = optax.tree.scale(jnp.minimum(1.0, 1.0 / jnp.maximum(gnorm, 1e-300)), g)
    descent = jnp.isfinite(optax.tree.norm(d)) & (vdot(g, d) > 0.0)
    d = jax.tree.map(lambda a, b: jnp.where(descent, a, b), d, steepest)
    steepest_used = steepest_used | ~descent
    # the state lbfgs.update(g, fresh, x) leaves (its memory stays empty), without a second two-loop
    restart_state = fresh._replace(count=jnp.ones_like(fresh.count), params=x, updates=g)
    state_new = jax.tree.map(lambda a, b: jnp.where(descent, a, b), state_new, restart_state)

    # 2. bounded backtracking
    def trial(t):
        xt = project(jax.tree.map(lambda a, b: a - t * b, x, d))
        vt, gt = (value(xt), g) if value is not None else value_and_grad(xt)
        vt = jnp.asarray(vt)
        ok = jnp.isfinite(vt) & (vt <= v + c1 * vdot(g, optax.tree.sub(xt, x)))
        return xt, vt, gt, ok

    # converged to rounding: neither this direction nor the steepest one promises a decrease that
    # float64 can resolve (1e-15 relative, ~5 ulp); lets lanes stop instead of line-searching noise
    negligible = jnp.maximum(vdot(g, d), vdot(g, steepest)) <= 1e-15 * jnp.abs(v)
    active = ~carry.done & ~negligible

    def cond(c):
        i, _, _, _, _, ok = c
        return active & (i < max_linesearch) & ~ok

    def body(c):
        i, t, _, _, _, _ = c
        xt, vt, gt, ok = trial(t)
        if line_search == "halving":
            return i + 1, 0.5 * t, xt, vt, gt, ok
        linear = vdot(g, optax.tree.sub(xt, x))  # the trial's predicted change (< 0 along a descent path)
        excess = vt - v - linear  # > 0 where the Armijo test failed on a finite value
        lo, hi = QUADRATIC_SHRINK
        quadratic = jnp.clip(-linear * t / (2.0 * jnp.where(excess > 0.0, excess, 1.0)), lo * t, hi * t)
        return i + 1, jnp.where(jnp.isfinite(vt) & (excess > 0.0), quadratic, hi * t), xt, vt, gt, ok

    # the carry starts as the current point and holds the last trial; only a trial that passes the Armijo
    # test is kept (ok), else the point stays
    i, _, xt, vt, gt, ok = jax.lax.while_loop(
        cond, body, (jnp.zeros((), jnp.int32), jnp.ones_like(v), x, v, g, jnp.zeros((), bool))
    )
    if value is not None:  # the gradient at the accepted trial, only where one passed
        accepted = ok & active
        gt = jax.lax.cond(accepted, lambda: value_and_grad(xt)[1], lambda: g)
        i = i + accepted.astype(i.dtype)
    ok = ok & active
    sel = lambda a, b: jax.tree.map(lambda p, q: jnp.where(ok, p, q), a, b)  # noqa: E731
    x_new = sel(xt, x)
    v_new = jnp.where(ok, vt, v)
    g_new = sel(_effective_grad(xt, gt, project, freeze), g)
    state_new = jax.tree.map(lambda a, b: jnp.where(ok, a, b), state_new, lbfgs.init(x))
    decrease = jnp.where(ok, (v - v_new) / jnp.maximum(jnp.maximum(jnp.abs(v), jnp.abs(v_new)), 1.0), 0.0)
    done = carry.done | negligible | (steepest_used & ~(v_new < v)) | (optax.tree.norm(g_new) == 0.0)
    return LBFGSCarry(
        x_new, v_new, g_new, state_new, carry.num_evals + i, carry.num_steps + 1, carry.failed, done, decrease
    )


def lbfgs_minimize(
    value_and_grad: Callable,
    x0,
    num_steps: int,
    project: Callable = box_projection,
    freeze=None,
    max_linesearch: int = MAX_LINESEARCH,
    memory_size: int = 10,
    value: Callable | None = None,
    start: tuple | None = None,
    line_search: str = "halving",
) -> LBFGSCarry:
    """`num_steps` bounded L-BFGS iterations from x0: at most 1 + num_steps * max_linesearch evaluations
    (1 + num_steps * (max_linesearch + 1) with value-only trials, `value`; `line_search`: see
    :func:`lbfgs_step`), under jit, vmap and scan (fixed trip count; the line search is a while_loop with
    a hard bound)."""
    carry = lbfgs_start(value_and_grad, x0, project, freeze, memory_size, start)

    def step(_, c):
        return lbfgs_step(
            value_and_grad, c, project, freeze, memory_size, max_linesearch, value=value, line_search=line_search
        )

    return jax.lax.fori_loop(0, num_steps, step, carry)


def lbfgs_minimize_converged(
    value_and_grad: Callable,
    x0,
    max_steps: int = 500,
    tol: float = 1e-9,
    gtol: float = 1e-6,
    project: Callable = box_projection,
    freeze=None,
    max_linesearch: int = MAX_LINESEARCH,
    memory_size: int = 10,
) -> LBFGSCarry:
    """Bounded L-BFGS until converged: stops when the largest effective-gradient entry is <= gtol, when
    an iteration decreases f by <= tol relative to max(|f|, 1), when the run is done (see
    :func:`lbfgs_step`), or after `max_steps` iterations (a hard bound: at most 1 + max_steps * max_linesearch
    evaluations, also under vmap)."""
    carry = lbfgs_start(value_and_grad, x0, project, freeze, memory_size)

    def converged(c):
        gmax = jnp.max(jnp.stack([jnp.max(jnp.abs(leaf)) for leaf in jax.tree.leaves(c.grad)]))
        small_step = (c.num_steps > 0) & (c.decrease <= tol)
        return c.done | (gmax <= gtol) | small_step

    def cond(c):
        return (c.num_steps < max_steps) & ~converged(c)

    step = lambda c: lbfgs_step(value_and_grad, c, project, freeze, memory_size, max_linesearch)  # noqa: E731
    return jax.lax.while_loop(cond, step, carry)


# ---------------------------------------------------------------- the acquisition optimiser
def local_search(
    fn: Callable,
    starts: jax.Array,
    num_steps: int = 30,
    method: str = "lbfgs",
    learning_rate: float = 0.05,
    project: Callable = box_projection,
    max_linesearch: int = MAX_LINESEARCH,
    line_search: str = "halving",
):
    """Projected local ascent from each row of `starts` (k, d); returns (points, values).

    `project` maps a point back onto the feasible set after every step (default: the unit box).
    method "lbfgs": the bounded projected L-BFGS above on fn in units of its gradient's norm at the start
    (so its first step is a unit step along the gradient: scale-free), at most 2 + num_steps *
    (max_linesearch + 1) evaluations of fn per start (also under vmap): its line search's trials
    evaluate fn alone and the accepted point its gradient too (:func:`lbfgs_step` with `value`), and
    backtrack by halving or by quadratic interpolation (`line_search`, see :func:`lbfgs_step`);
    "adam": cosine-decayed projected Adam, num_steps + 2 evaluations of fn and its gradient. A start
    where fn is not finite stays put and scores -inf."""
    neg = lambda x: -fn(x)  # noqa: E731
    if method == "lbfgs":

        def one_lbfgs(x0):
            # Each start minimises h = -fn / size, -fn in units of its gradient's norm at the start: h's
            # first (steepest) step is then a unit step along the gradient whatever the units of fn, so
            # the search is scale-free, as the Adam search is. (h keeps fn's offset: the line search's
            # test for a decrease below rounding, 1e-15 |h|, needs the magnitude fn is rounded at.)
            v0, g0 = jax.value_and_grad(neg)(x0)
            size = jnp.linalg.norm(jnp.where(jnp.isfinite(g0), g0, 0.0))
            size = jnp.where(size > 0.0, size, 1.0)
            h = lambda x: neg(x) / size  # noqa: E731
            c = lbfgs_minimize(
                jax.value_and_grad(h),
                x0,
                num_steps,
                project,
                max_linesearch=max_linesearch,
                value=h,
                start=(v0 / size, g0 / size),
                line_search=line_search,
            )
            return c.x, jnp.where(c.failed, -jnp.inf, clean(fn(c.x)))

        return jax.vmap(one_lbfgs)(starts)
    if method != "adam":
        raise ValueError(f"unknown local optimiser {method!r}; choose 'lbfgs' or 'adam'")
    # Cosine-decayed step: large moves early, precise convergence by the last iteration. eps = 0: the
    # step m / sqrt(v) is then invariant to the scale of fn (an acquisition in units of y), where
    # optax's default eps = 1e-8 shrank every step once |grad| ~ 1e-8 (y in units of 1e-8 moved the
    # decisions by up to the box width; experiments/results/engine/scale/robustness_sweep.json). A zero (or
    # underflowing) gradient gives 0/0: such a step is 0.
    opt = optax.adam(optax.cosine_decay_schedule(learning_rate, max(num_steps, 1), alpha=0.01), eps=0.0)

    def one(x0):
        def body(carry, _):
            x, state, best_x, best_v = carry
            v, g = jax.value_and_grad(neg)(x)
            g = jnp.where(jnp.isfinite(g), g, 0.0)
            better = jnp.isfinite(v) & (-v > best_v)
            best_x = jnp.where(better, x, best_x)
            best_v = jnp.where(better, -v, best_v)
            upd, state = opt.update(g, state, x)
            upd = jnp.where(jnp.isfinite(upd), upd, 0.0)
            x = project(optax.apply_updates(x, upd))
            return (x, state, best_x, best_v), None

        v0 = _clean(fn(x0))
        (x, _, bx, bv), _ = jax.lax.scan(body, (x0, opt.init(x0), x0, v0), None, length=num_steps)
        v = _clean(fn(x))
        return jnp.where(v > bv, x, bx), jnp.maximum(v, bv)

    return jax.vmap(one)(starts)


def maximize(
    fn: Callable,
    key,
    dim: int,
    num_raw: int = 512,
    num_starts: int = 8,
    num_steps: int = 30,
    method: str = "lbfgs",
    candidates: jax.Array | None = None,
    candidate_mask: jax.Array | None = None,
    project: Callable = box_projection,
    screen_block: int | None = None,
    line_search: str = "halving",
):
    """Maximise fn: (d,) -> scalar over [0, 1]^d. Returns (x_best, f_best).

    `candidates` (m, d) are screened together with `num_raw` uniform points (e.g. the data, or a
    previous optimum); rows where `candidate_mask` is False are ignored. For a smaller feasible set
    (a ball inside the box, ...) pass feasible `candidates`, num_raw=0 and its `project`ion.
    Both local methods are bounded (see :func:`local_search`): safe under vmap and scan.
    screen_block: None scores every screened point in one vectorised pass; an int b scores them b at a
    time (lax.map with batch_size b), so that an acquisition whose one evaluation holds large arrays
    (contexts x data rows) keeps b points' worth of them alive instead of all: the same values to
    rounding, less memory, more sequential passes. line_search: the L-BFGS search's backtracking
    ("halving" or "quadratic", see :func:`lbfgs_step`).
    """
    if method not in ("lbfgs", "adam"):
        raise ValueError(f"unknown local optimiser {method!r}; choose 'lbfgs' or 'adam'")
    if num_raw < 0 or num_starts < 1 or num_steps < 0:
        raise ValueError(
            f"maximize needs num_raw >= 0, num_starts >= 1, num_steps >= 0; got {num_raw}, {num_starts}, {num_steps}"
        )
    if screen_block is not None and (
        isinstance(screen_block, bool) or not isinstance(screen_block, int) or screen_block < 1
    ):
        raise ValueError(f"maximize: screen_block must be None or a positive int, got {screen_block!r}")
    check_line_search(line_search, "maximize")
    if candidates is not None:
        chex.assert_rank(candidates, 2)
        chex.assert_axis_dimension(candidates, 1, dim)
        if candidate_mask is not None:
            chex.assert_shape(candidate_mask, (candidates.shape[0],))
    elif num_raw < 1:
        raise ValueError("maximize needs num_raw >= 1 or candidates")
    raw = jax.random.uniform(key, (num_raw, dim))
    valid = jnp.ones(num_raw, bool)
    if candidates is not None:
        raw = jnp.concatenate([raw, candidates], 0)
        cm = jnp.ones(candidates.shape[0], bool) if candidate_mask is None else candidate_mask
        valid = jnp.concatenate([valid, cm])
    scores = jax.vmap(fn)(raw) if screen_block is None else jax.lax.map(fn, raw, batch_size=screen_block)
    vals = jnp.where(valid, _clean(scores), -jnp.inf)
    k = min(num_starts, raw.shape[0])
    top_v, top_i = jax.lax.top_k(vals, k)
    if num_steps > 0:
        xs, vs = local_search(fn, raw[top_i], num_steps, method, project=project, line_search=line_search)
    else:
        xs, vs = raw[top_i], top_v
    xs = jnp.concatenate([xs, raw[top_i[:1]]], 0)
    vs = jnp.concatenate([vs, top_v[:1]])
    i = jnp.argmax(vs)
    return xs[i], vs[i]
