"""Numerical robustness sweep: every GP method of the GP-BO family on degenerate data.

One compiled program per method runs all degenerate problems at once (jbo.engine.run_environments:
they differ only in array values) for 2 seeds and a few steps, and checks finite curves, actions inside
the unit cube and a finite final state. Degenerate cases: constant y, inputs on a box of width 1e-8
and 2e8, outputs scaled by 1e-8 and 1e8, outputs offset by 1e6 (tiny variation on a large mean), and
noise 100x the signal range. Duplicated design points are checked at the GP level against a closed
form (n copies of a point with noise s^2 are one observation of their mean with noise s^2 / n).

The GP methods work on the unit cube, so input scaling reaches them only through the rounding of the
box map (the environment here evaluates its objective in original coordinates); output scaling is
absorbed by the standardisation of y. Both are invariances, checked: the decisions on the scaled
problems equal those on the base problem.

Covered elsewhere, not here (their GPs are the same jbo.gp): the SBO-KDE methods (contextual, test_sbo_kde),
UHE-BO (MCMC hyper-parameters, test_uhe_bo), uCVS (control sets, test_ucvs), R-PERP (finite arms,
test_r_perp); tests/test_registry.py checks that every registered algorithm's actions lie in
its action space.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import data, gp
from jbo.problems import degenerate

KEY = jax.random.key(3)
T, S = 8, 2
GP_FAMILY = ("gp_ucb", "gp_ei", "gp_log_ei", "gp_pi", "gp_ts", "gp_mean", "gp_std")
# ~6 s of CPU each (compiling one GP-BO program); the suite runs two that differ where it matters (an
# acquisition in units of y optimised by Adam; a unitless one that re-samples the incumbent, so exact
# duplicates reach the GP) and the others with --runslow
IN_SUITE = ("gp_ucb", "gp_pi")
SMALL = dict(
    num_initial=3, hypers=jbo.parts.Refit(steps=3), maximiser=jbo.parts.Maximiser(num_raw=16, num_starts=2, steps=2)
)


# the degenerate problems (box, output scale, offset, noise as array values): jbo.problems.degenerate
CASES = degenerate.CASES
# invariances: these see exactly the base problem up to an affine map of x or of y (with optax's absolute
# Adam eps = 1e-8 in jbo.optimize.local_search, y x 1e-8 would move the decisions of every acquisition
# valued in units of y, as steps shrink once |grad| ~ 1e-8; see test_local_search_is_scale_free)
INVARIANT = ("x_tiny", "x_huge", "y_tiny", "y_huge", "y_offset")


def _finite_tree(tree):
    leaves = [np.asarray(a) for a in jax.tree.leaves(tree)]
    return all(np.isfinite(a).all() for a in leaves if np.issubdtype(a.dtype, np.inexact))


@pytest.mark.extended
@pytest.mark.parametrize(
    "name",
    [
        n if n == "gp_ucb" else pytest.param(n, marks=pytest.mark.extended if n in IN_SUITE else pytest.mark.slow)
        for n in GP_FAMILY
    ],
)
def test_gp_method_on_degenerate_problems(name):
    _sweep(jbo.algorithms.get(name, **SMALL), duplicates=name == "gp_pi")


@pytest.mark.extended
def test_default_search_on_degenerate_problems():
    """GP-UCB with GP-BO's default search (bounded L-BFGS, jbo.parts.GP_MAXIMISER, at a small size):
    the same checks, and the same decisions on the scaled and offset problems (its first step is
    scale-free)."""
    search = dataclasses.replace(jbo.parts.GP_MAXIMISER, num_raw=16, num_starts=2)
    _sweep(jbo.algorithms.get("gp_ucb", **dict(SMALL, maximiser=search)), duplicates=False)


def _sweep(alg, duplicates: bool):
    trace = jbo.engine.run_environments(
        alg,
        list(CASES.values()),
        key=KEY,
        num_steps=T,
        num_seeds=S,  # axes (case, seed, step)
        keep_final_state=True,
    )  # every leaf of the final state
    names = list(CASES)
    for i, case in enumerate(names):
        for k in ("value", "best_value"):
            assert np.isfinite(np.asarray(trace.metrics[k][i])).all(), (case, k)
        acts = np.asarray(trace.actions[i])
        assert np.isfinite(acts).all() and (acts >= 0).all() and (acts <= 1).all(), case
        sub = jax.tree.map(lambda a: a[i], trace)
        assert _finite_tree(sub.final_state) and _finite_tree(sub.info), case
    base = np.asarray(trace.actions[names.index("base")])
    for case in INVARIANT:
        np.testing.assert_allclose(np.asarray(trace.actions[names.index(case)]), base, atol=1e-6, err_msg=case)
    # the very noisy problem is a noisy version of the base one: the noise-free values stay in g's range
    v = np.asarray(trace.metrics["value"][names.index("very_noisy")])
    assert (v > -1.5).all() and (v < 0.6).all()
    if duplicates:  # PI re-samples its incumbent: exact duplicates reach the GP (and the refit)
        assert any(len(np.unique(a, axis=0)) < T for a in base)


# ---------------------------------------------------------------- the core pieces on degenerate input
@pytest.mark.parametrize(
    "method, cases, atol",
    [
        ("adam", ((1e-8, 0.0), (1e8, 0.0), (1e-8, 1e3)), 1e-12),
        # the L-BFGS's line search compares values, so a large offset on a tiny scale is left out
        ("lbfgs", ((1e-8, 0.0), (1e8, 0.0), (1.0, 1e3)), 1e-9),
    ],
)
def test_local_search_is_scale_free(method, cases, atol):
    """maximize(c f + b) returns maximize(f)'s point for c = 1e-8 and 1e8 and an offset b, for both
    local searches. (Defects found by the sweep) Adam's step m / sqrt(v) does not depend on the scale
    of the function with eps = 0, where optax's default eps = 1e-8 moved a function of scale 1e-8 about
    half as far; the bounded L-BFGS works on f in units of its gradient's norm at each start, where the
    plain L-BFGS's capped first step min(1, 1/|g|) g made the point depend on c. A flat function (zero
    gradient: 0/0 in Adam's step) stays finite."""
    from jbo import optimize

    def f(x):
        return -jnp.sum((x - jnp.array([0.3, 0.7])) ** 2) + 0.2 * jnp.sin(6.0 * x[0])

    run = jax.jit(
        lambda c, b: optimize.maximize(
            lambda x: c * f(x) + b, jax.random.key(0), 2, num_raw=8, num_starts=2, num_steps=6, method=method
        )
    )
    x1, v1 = run(1.0, 0.0)
    for c, b in cases:
        x, v = run(c, b)
        np.testing.assert_allclose(np.asarray(x), np.asarray(x1), atol=atol, err_msg=str((c, b)))
        np.testing.assert_allclose(float(v), c * float(v1) + b, rtol=1e-12)
    x, v = run(0.0, 2.0)
    assert np.isfinite(np.asarray(x)).all() and float(v) == 2.0


def test_duplicated_points_equal_one_averaged_observation():
    """Closed form: n observations y_1..y_n at the same x with noise s^2 give the posterior of one
    observation of their mean with noise s^2 / n. With s^2 = 1e-6 (the default model's noise floor, the
    least noise a fit can reach) three exact duplicates make a nearly singular Gram matrix (condition
    number ~3e6); the Cholesky and the solves must still hold. Truth: the averaged problem, solved in
    NumPy."""
    rng = np.random.default_rng(0)
    x0 = rng.uniform(size=2)
    others = rng.uniform(size=(4, 2))
    y_dup, y_oth = np.array([0.3, 0.5, 0.1]), rng.normal(size=4)
    s2, n = 1e-6, 3
    model = gp.GPModel(kernel="se", noise_floor=0.0, standardize=False, mean="zero")
    params = gp.default_params(2, 0.3, 1.0, s2)
    dup = data.from_arrays(
        jnp.asarray(np.vstack([np.tile(x0, (n, 1)), others])), jnp.asarray(np.concatenate([y_dup, y_oth])), 10
    )
    one = data.from_arrays(
        jnp.asarray(np.vstack([x0, others])), jnp.asarray(np.concatenate([[y_dup.mean()], y_oth])), 10
    )
    # the averaged observation has noise s2 / n and the other rows s2 (a per-row noise, which jbo.gp does
    # not offer): the reference posterior is computed directly in NumPy
    q = rng.uniform(size=(5, 2))
    m_dup, v_dup = eqx.filter_jit(lambda b, q: gp.predict_batch(gp.condition(b, params, model), q))(dup, jnp.asarray(q))

    def k(a, b):
        d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / 0.3**2
        return np.exp(-0.5 * d2)

    X1 = np.asarray(one.x[:5])
    noise = np.diag([s2 / n] + [s2] * 4)
    K = k(X1, X1) + noise
    kq = k(q, X1)
    m_ref = kq @ np.linalg.solve(K, np.asarray(one.y[:5]))
    v_ref = 1.0 - np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))
    np.testing.assert_allclose(np.asarray(m_dup), m_ref, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(v_dup), np.maximum(v_ref, 1e-12), rtol=1e-5, atol=1e-9)


def test_constant_y_and_duplicates_fit_and_condition_finitely():
    """Constant y (zero spread: the standardisation must not divide by 0) on duplicated points: the fit
    is finite and inside the model's bounds, and the posterior mean is the constant everywhere
    (zero residuals: the closed form)."""
    x = jnp.asarray(np.vstack([np.full((4, 2), 0.25), np.random.default_rng(1).uniform(size=(4, 2))]))
    buf = data.from_arrays(x, jnp.full(8, 7.5), 12)
    model = gp.GPModel()
    p = eqx.filter_jit(gp.fit)(jax.random.key(0), buf, model, num_restarts=2, num_steps=5)
    assert all(np.isfinite(np.asarray(a)).all() for a in p)
    assert np.allclose(np.asarray(model.clip(p).log_noise), np.asarray(p.log_noise))
    m, v = eqx.filter_jit(lambda b, p, q: gp.predict_batch(gp.condition(b, p, model), q))(
        buf, p, jnp.asarray(np.random.default_rng(2).uniform(size=(6, 2)))
    )
    np.testing.assert_allclose(np.asarray(m), 7.5, rtol=1e-12)
    assert np.isfinite(np.asarray(v)).all() and (np.asarray(v) >= 0).all()
