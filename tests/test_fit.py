"""GP hyper-parameter fits against SciPy, and the hard bounds of every L-BFGS path."""

import json
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbo import data, gp, optimize, parts


def _se3():  # SE, d = 3, 30 noisy points, MLE: the data on which optax's vmapped zoom search spun forever
    rng = np.random.default_rng(6)
    x = rng.uniform(size=(30, 3))
    return x, np.sin(3 * x[:, 0]) + np.cos(5 * x[:, 1]) * x[:, 2] + 0.1 * rng.normal(size=30), gp.GPModel(kernel="se")


def _m52_map():  # Matern-5/2, d = 2, 16 points, MAP with the default Gamma priors
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(16, 2))
    return x, np.sin(6 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * rng.normal(size=16), gp.GPModel(prior=gp.HyperPrior())


def _m32():  # Matern-3/2, d = 4, 24 points (in a buffer of 28: padding included), MLE
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(24, 4))
    y = np.exp(-3 * np.sum((x - 0.4) ** 2, 1)) + 0.3 * x[:, 3] + 0.05 * rng.normal(size=24)
    return x, y, gp.GPModel(kernel="matern32")


def _one_blas_thread():
    """SciPy's L-BFGS-B calls BLAS on tiny vectors: with OpenBLAS threads competing for a busy 2-core
    machine each call took ~4 ms instead of ~0.05 ms (measured)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _scipy_best(buf, model, num_starts=20):
    """Best of many SciPy L-BFGS-B runs on LML(standardised y) + log prior, inside the model's bounds."""
    from scipy.optimize import minimize

    ym, ys = data.masked_mean_std(buf.y, buf.mask)
    yz = jnp.where(buf.mask, (buf.y - ym) / ys, 0.0)
    d = buf.x.shape[1]

    def obj(p):
        return gp.log_marginal_likelihood(p, buf.x, yz, buf.mask, model) + model.log_prior(p)

    unpack = lambda v: gp.GPParams(v[:d], v[d], v[d + 1], v[d + 2])  # noqa: E731
    f = jax.jit(jax.value_and_grad(lambda v: -obj(unpack(v))))
    bounds = [tuple(np.log(model.lengthscale_bounds))] * d + [
        tuple(np.log(model.outputscale_bounds)),
        tuple(np.log(model.noise_bounds)),
        (-5.0, 5.0),
    ]
    lo = np.r_[[np.log(0.01)] * d, np.log(0.1), np.log(1e-6), -1.0]
    hi = np.r_[[np.log(10.0)] * d, np.log(10.0), 0.0, 1.0]
    starts = np.random.default_rng(0).uniform(lo, hi, size=(num_starts, d + 3))
    with _one_blas_thread():
        runs = [
            minimize(
                lambda v: [np.asarray(a, float) for a in f(jnp.asarray(v))],
                v0,
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options=dict(maxiter=2000, ftol=1e-13, gtol=1e-9),
            )
            for v0 in starts
        ]
    return obj, max(-r.fun for r in runs)


# the default fit's gap at key 0 (docs/fits-under-vmap.md): Matern-5/2 MAP 1.6e-4, SE 1.2e-3 (2.1e-4 to
# 1.2e-3 over keys 0-2), Matern-3/2 4.2e-2 (1.3e-2 to 4.8e-2 over keys 0-2); each bound is about twice the
# largest measured value. The defaults it starts from are 7.0, 10.7 and 3.1 nats below the optimum, the
# same fit stopped after 20 steps 3.2, 2.6 and 1.5.
@pytest.mark.parametrize(
    "case, default_gap",
    [
        pytest.param(_m52_map, 5e-4, marks=pytest.mark.extended),
        pytest.param(_se3, 3e-3, marks=pytest.mark.slow),
        pytest.param(_m32, 0.1, marks=pytest.mark.slow),
    ],
    ids=["m52_d2_n16_map", "se_d3_n30_mle", "m32_d4_n24_mle"],
)
def test_converged_fit_reaches_scipy_optimum_and_default_gap_is_bounded(case, default_gap):
    x, y, model = case()
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), len(y) + (4 if case is _m32 else 0))
    obj, best = _scipy_best(buf, model)
    key = jax.random.key(0)
    converged = jax.jit(lambda k: gp.fit_converged(k, buf, model))(key)
    default = jax.jit(lambda k: gp.fit(k, buf, model))(key)
    gap_converged, gap_default = best - float(obj(converged)), best - float(obj(default))
    print(
        f"\n{case.__name__}: SciPy best {best:.6f}; gap fit_converged {gap_converged:.2e}, "
        f"fit (adam default) {gap_default:.2e} nats"
    )
    assert abs(gap_converged) < 1e-3  # may be slightly negative: SciPy stops at its own tolerance
    assert -1e-3 < gap_default < default_gap
    for leaf, lo, hi in [
        (converged.log_lengthscale, *model.lengthscale_bounds),
        (converged.log_outputscale, *model.outputscale_bounds),
    ]:
        assert np.all(np.exp(leaf) >= lo * (1 - 1e-12)) and np.all(np.exp(leaf) <= hi * (1 + 1e-12))


_HANG = textwrap.dedent("""
    import json, numpy as np, jax, jax.numpy as jnp
    import jbo
    from jbo import data, gp
    from tests.test_fit import _se3
    x, y, model = _se3()
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), 30)
    init = gp.default_params(3, noise=0.1)
    steps, ls = 100, 20

    def run(k, b):  # the default 4 restarts x 100 steps, vmapped as in gp.fit(method="lbfgs"), which
        # returns best_restart of exactly this report (tested apart); and each restart alone (lax.map)
        together = gp.fit_report(k, b, model, init, num_restarts=4, num_steps=steps, max_linesearch=ls)
        alone = gp.fit_report(k, b, model, init, num_restarts=4, num_steps=steps, max_linesearch=ls, restarts="map")
        return gp.best_restart(together), together, alone

    # the buffer is a jit argument, as in a BO step: with optax's zoom search this fit never returned
    fitted, together, alone = jax.jit(run)(jax.random.key(0), buf)
    ym, ys = data.masked_mean_std(buf.y, buf.mask)
    lml = lambda p: float(gp.log_marginal_likelihood(p, buf.x, (buf.y - ym) / ys, buf.mask, model))
    singles = [lml(jax.tree.map(lambda a: a[i], alone.params)) for i in range(4)]
    print(json.dumps(dict(evals=np.asarray(together.num_evals).tolist(), steps=np.asarray(together.num_steps).tolist(),
                          failed=np.asarray(together.failed).tolist(), fit=lml(fitted), singles=singles,
                          bound=1 + steps * ls, start_noise=np.exp(np.asarray(together.starts.log_noise)).tolist())))
""")


@pytest.mark.extended
def test_vmapped_lbfgs_fit_terminates_within_its_bound():
    """SE data, 30 noisy points in 3-D, noise started at 0.1, 4 vmapped restarts x 100 steps.
    Run in a subprocess under a timeout, so a hang fails the test instead of stalling the suite."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _HANG], capture_output=True, text=True, timeout=150, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert max(r["evals"]) <= r["bound"] and r["steps"] == [100] * 4 and not any(r["failed"])
    assert r["fit"] >= max(r["singles"]) - 1e-8
    assert r["start_noise"][0] == pytest.approx(0.1) and len(set(np.round(r["start_noise"], 9))) == 3


def test_failed_restart_is_scored_worst_and_never_returned():
    rng = np.random.default_rng(0)
    buf = data.from_arrays(jnp.asarray(rng.uniform(size=(8, 1))), jnp.asarray(rng.normal(size=8)), 8)
    model = gp.GPModel(kernel="se")
    bad = gp.default_params(1)._replace(log_outputscale=jnp.asarray(jnp.nan))
    report, fitted = jax.jit(
        lambda k: (
            gp.fit_report(k, buf, model, warm_start=bad, num_restarts=3, num_steps=10),
            gp.fit(k, buf, model, warm_start=bad, num_restarts=3, num_steps=10, method="lbfgs"),
        )
    )(jax.random.key(0))
    assert bool(report.failed[0]) and float(report.loss[0]) == np.inf and not np.any(report.failed[1:])
    assert np.all(np.isfinite(np.asarray(report.loss[1:])))
    best = gp.best_restart(report)
    assert np.isfinite(float(best.log_outputscale))
    for a, b in zip(best, fitted):  # fit(method="lbfgs") is the best restart of the report
        np.testing.assert_array_equal(a, b)
    assert int(report.num_evals[0]) == 1  # a failed restart evaluates only its start


def test_noise_jitter_spares_slots_0_and_1_and_frozen_noise():
    init, warm = gp.default_params(2), gp.default_params(2, noise=3e-3)
    for ws in (None, warm):
        s = gp.restart_starts(jax.random.key(1), gp.GPModel(), init, ws, 6, 2)
        ln = np.asarray(s.log_noise)
        assert ln[0] == (init if ws is None else ws).log_noise and ln[1] == init.log_noise
        assert np.all(ln[2::2] > init.log_noise) and np.all(ln[3::2] < init.log_noise)  # up, down, up, down
        assert np.all(np.abs(ln - init.log_noise) <= gp.NOISE_JITTER)
    frozen = gp.restart_starts(jax.random.key(1), gp.GPModel(train=("lengthscale", "outputscale")), init, None, 6, 2)
    assert np.all(np.asarray(frozen.log_noise) == init.log_noise)
    two = gp.restart_starts(jax.random.key(1), gp.GPModel(), init, None, 2, 2)  # <= 2 restarts: as before
    assert np.all(np.asarray(two.log_noise) == init.log_noise)


def test_bounded_lbfgs_on_hostile_functions():
    """Every lane stops within 1 + steps * max_linesearch evaluations under vmap, whatever f does; a
    start where f is not finite stays put and scores -inf in local_search."""

    def f(x):  # a cliff into NaN right past the minimiser, and a kink
        v = jnp.sum((x - 0.6) ** 2) + jnp.abs(x[0] - 0.2)
        return jnp.where(x[1] > 0.61, jnp.nan, v)

    vg = jax.value_and_grad(f)
    starts = jnp.array([[0.1, 0.1], [0.9, 0.3], [0.5, 0.5], [0.3, 0.8]])  # the last starts in the NaN region
    run = jax.jit(
        jax.vmap(
            lambda x0: (
                optimize.lbfgs_minimize(vg, x0, 25, max_linesearch=7),
                optimize.lbfgs_minimize_converged(vg, x0, max_steps=40, max_linesearch=7),
            )
        )
    )
    c, cc = run(starts)
    assert np.all(np.asarray(c.num_evals) <= 1 + 25 * 7)
    assert list(np.asarray(c.failed)) == [False, False, False, True]
    assert np.all(np.asarray(c.value[:3]) <= np.asarray(jax.vmap(f)(starts[:3])))
    assert np.all(np.asarray(cc.num_steps) <= 40) and np.all(np.asarray(cc.num_evals) <= 1 + 40 * 7)
    g = lambda x: -f(x)  # noqa: E731
    (xs, vs), (x, v) = jax.jit(
        lambda k: (optimize.local_search(g, starts, 25, "lbfgs"), optimize.maximize(g, k, 2, 64, 4, 25, "lbfgs"))
    )(jax.random.key(0))
    assert np.asarray(vs)[3] == -np.inf and np.all(np.isfinite(np.asarray(vs)[:3]))
    assert np.isfinite(float(v)) and float(x[1]) <= 0.61


def test_value_only_line_search_takes_the_same_steps():
    """With `value` the line search's trials evaluate f alone and the accepted point its gradient: the
    same iterates as trials with gradients (to rounding), within 1 + steps * (max_linesearch + 1)
    evaluations, on the hostile function above and on a smooth one whose box-constrained minimum
    SciPy's L-BFGS-B finds."""
    from scipy.optimize import minimize

    A = jnp.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])

    def smooth(x):  # a quadratic with its unconstrained minimum outside the box in x[2]
        z = x - jnp.array([0.3, 0.7, 1.4])
        return z @ A @ z + 0.1 * jnp.sum(x**4)

    def hostile(x):
        v = jnp.sum((x - 0.6) ** 2) + jnp.abs(x[0] - 0.2)
        return jnp.where(x[1] > 0.61, jnp.nan, v)

    for f, starts in (
        (smooth, jax.random.uniform(jax.random.key(3), (6, 3))),
        (hostile, jnp.array([[0.1, 0.1], [0.9, 0.3], [0.5, 0.5], [0.3, 0.8]])),
    ):
        vg = jax.value_and_grad(f)
        both = jax.jit(
            jax.vmap(
                lambda x0: (
                    optimize.lbfgs_minimize(vg, x0, 25, max_linesearch=7),
                    optimize.lbfgs_minimize(vg, x0, 25, max_linesearch=7, value=f),
                )
            )
        )
        full, cheap = both(starts)
        np.testing.assert_allclose(np.asarray(cheap.x), np.asarray(full.x), rtol=0, atol=1e-10)
        np.testing.assert_allclose(np.asarray(cheap.value), np.asarray(full.value), rtol=1e-12)
        assert np.all(np.asarray(cheap.num_steps) == np.asarray(full.num_steps))
        assert np.all(np.asarray(cheap.num_evals) <= 1 + 25 * (7 + 1))
        extra = np.asarray(cheap.num_evals) - np.asarray(full.num_evals)  # one gradient per accepted step
        assert np.all((extra >= 0) & (extra <= np.asarray(cheap.num_steps)))
        assert list(np.asarray(cheap.failed)) == list(np.asarray(full.failed))
    fun = lambda x: float(smooth(jnp.asarray(x)))  # noqa: E731
    jac = lambda x: np.asarray(jax.grad(smooth)(jnp.asarray(x)))  # noqa: E731
    ref = minimize(fun, np.full(3, 0.5), jac=jac, method="L-BFGS-B", bounds=[(0, 1)] * 3, tol=1e-14)
    x, v = optimize.local_search(lambda x: -smooth(x), jnp.full((1, 3), 0.5), 25, "lbfgs")
    np.testing.assert_allclose(np.asarray(x[0]), ref.x, atol=1e-6)
    np.testing.assert_allclose(-float(v[0]), ref.fun, rtol=1e-10)


def test_quadratic_backtracking_lands_on_a_quadratic_minimum():
    """On f(x) = c (x - m)^2 / 2 the quadratic backtracking's interpolant is f itself, so its next trial
    is m (closed form) whenever m lies within the safeguard [1/10, 1/2] of the failed trial; further
    away each trial shrinks by 1/10 until it does. Halving stops at the first power of 2 that passes."""
    c = 100.0
    f = lambda x: 0.5 * c * jnp.sum((x - 0.3) ** 2)  # noqa: E731
    vg = jax.value_and_grad(f)
    start = optimize.lbfgs_start(vg, jnp.zeros(1))  # the unit steepest step goes to x = 1
    quad = optimize.lbfgs_step(vg, start, line_search="quadratic")
    half = optimize.lbfgs_step(vg, start, line_search="halving")
    assert int(quad.num_evals - start.num_evals) == 2 and int(half.num_evals - start.num_evals) == 2
    np.testing.assert_allclose(float(quad.x[0]), 0.3, rtol=0, atol=1e-14)
    assert float(half.x[0]) == 0.5
    # m 3e-3 from x0 (a unit step overshoots 300x): trials 1, 1/10, 1/100, then m; halving needs 1, ..., 2^-8
    m, x0 = 0.5 + 3e-3, jnp.array([0.5])
    f = lambda x: 0.5 * 1e4 * jnp.sum((x - m) ** 2)  # noqa: E731
    vg = jax.value_and_grad(f)
    start = optimize.lbfgs_start(vg, x0)
    quad = optimize.lbfgs_step(vg, start, line_search="quadratic")
    half = optimize.lbfgs_step(vg, start, line_search="halving")
    assert int(quad.num_evals - start.num_evals) == 4 and int(half.num_evals - start.num_evals) == 9
    np.testing.assert_allclose(float(quad.x[0]), m, rtol=0, atol=1e-12)
    assert float(half.value) > float(quad.value)
    # an optimum 1e-9 away: within max_linesearch trials, and the value never increases
    g = lambda x: 0.5 * 1e12 * jnp.sum((x - 0.5 - 1e-9) ** 2)  # noqa: E731
    c2 = optimize.lbfgs_minimize(jax.value_and_grad(g), x0, 3, max_linesearch=4, line_search="quadratic")
    assert int(c2.num_evals) <= 1 + 3 * 4 and float(c2.value) <= float(g(x0))


@pytest.mark.parametrize("line_search", ["halving", "quadratic"])
def test_line_searches_never_increase_and_stay_bounded(line_search):
    """Either backtracking keeps the bounded L-BFGS's promises on the hostile function (a NaN cliff and
    a kink) and reaches SciPy's L-BFGS-B minimum of the smooth box-constrained quadratic."""
    from scipy.optimize import minimize

    def hostile(x):
        v = jnp.sum((x - 0.6) ** 2) + jnp.abs(x[0] - 0.2)
        return jnp.where(x[1] > 0.61, jnp.nan, v)

    starts = jnp.array([[0.1, 0.1], [0.9, 0.3], [0.5, 0.5], [0.3, 0.8]])
    vg = jax.value_and_grad(hostile)
    c = jax.jit(jax.vmap(lambda x0: optimize.lbfgs_minimize(vg, x0, 25, max_linesearch=7, line_search=line_search)))(
        starts
    )
    assert np.all(np.asarray(c.num_evals) <= 1 + 25 * 7)
    assert list(np.asarray(c.failed)) == [False, False, False, True]
    assert np.all(np.asarray(c.value[:3]) <= np.asarray(jax.vmap(hostile)(starts[:3])))
    A = jnp.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])

    def smooth(x):
        z = x - jnp.array([0.3, 0.7, 1.4])
        return z @ A @ z + 0.1 * jnp.sum(x**4)

    fun = lambda x: float(smooth(jnp.asarray(x)))  # noqa: E731
    jac = lambda x: np.asarray(jax.grad(smooth)(jnp.asarray(x)))  # noqa: E731
    ref = minimize(fun, np.full(3, 0.5), jac=jac, method="L-BFGS-B", bounds=[(0, 1)] * 3, tol=1e-14)
    x, v = optimize.local_search(lambda x: -smooth(x), jnp.full((1, 3), 0.5), 25, "lbfgs", line_search=line_search)
    np.testing.assert_allclose(np.asarray(x[0]), ref.x, atol=1e-6)
    np.testing.assert_allclose(-float(v[0]), ref.fun, rtol=1e-10)


def test_unknown_line_search_is_refused():
    f = lambda x: jnp.sum(x**2)  # noqa: E731
    with pytest.raises(ValueError, match="maximize: line_search"):
        optimize.maximize(f, jax.random.key(0), 2, 8, 2, 3, "lbfgs", line_search="cubic")
    with pytest.raises(ValueError, match="Maximiser: line_search"):
        parts.Maximiser(line_search="cubic")
    with pytest.raises(ValueError, match="lbfgs_step: line_search"):
        optimize.lbfgs_minimize(jax.value_and_grad(f), jnp.zeros(2), 2, line_search="zoom")


def test_entry_points_check_shapes():
    buf = data.from_arrays(jnp.linspace(0, 1, 8).reshape(4, 2), jnp.arange(4.0), 6)
    with pytest.raises(AssertionError):
        gp.fit(jax.random.key(0), buf._replace(y=jnp.zeros((6, 1))))
    with pytest.raises(AssertionError):
        gp.fit_converged(jax.random.key(0), buf._replace(mask=jnp.ones(5, bool)))
    with pytest.raises(ValueError, match="num_restarts"):
        gp.fit(jax.random.key(0), buf, num_restarts=0, method="lbfgs")
    f = lambda x: -jnp.sum(x**2)  # noqa: E731
    with pytest.raises(AssertionError):
        optimize.maximize(f, jax.random.key(0), 2, candidates=jnp.zeros((3, 3)))
    with pytest.raises(AssertionError):
        optimize.maximize(f, jax.random.key(0), 2, candidates=jnp.zeros((3, 2)), candidate_mask=jnp.ones(4, bool))


def test_the_fit_stores_nothing_per_coordinate_before_its_loop():
    """gp.tie_rows: the Gram matrix's d coordinate differences are recomputed in each step of the fit,
    not stored before its loop. XLA's own memory analysis of the compiled refit: going from d = 2 to
    d = 12 adds far less than one (N, N) array per seed, where stored differences would add ten."""
    n, seeds = 160, 2

    def temp_bytes(dim):
        x = jax.random.uniform(jax.random.key(dim), (seeds, n, dim))
        bufs = jax.vmap(lambda a: data.from_arrays(a, jnp.sin(3 * a).sum(-1), n))(x)
        keys = jax.random.split(jax.random.key(1), seeds)
        hyp = gp.default_params(dim)
        refit = jax.vmap(lambda k, b: gp.fit(k, b, "matern52", init=hyp, warm_start=hyp, num_restarts=1, num_steps=5))
        return jax.jit(refit).lower(keys, bufs).compile().memory_analysis().temp_size_in_bytes

    one_array_per_seed = seeds * n * n * 8
    assert temp_bytes(12) - temp_bytes(2) < one_array_per_seed
