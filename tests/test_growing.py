"""Growing state: runs in segments whose buffers (and cached factors) grow with the data equal runs on
the whole buffer, to rounding, for every GP method; rank-1 appends equal fresh factorisations; a
segment schedule compiles each segment once, with no recompile per step or per seed count."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import data, gp, parts
from jbo.algorithms import GPBO, boke, sbo_kde

T = 24
PAPER_SMALL = parts.Maximiser(num_raw_per_dim=32, steps=8, screen_data=True)  # the BOKE paper's GP, smaller
SMALL = dict(maximiser=parts.Maximiser(num_raw=64, num_starts=2, steps=8))  # a small inner optimiser: fast compiles


def _close(a: jbo.Trace, b: jbo.Trace, tol):
    for name in ("actions", "observations"):
        for x, y in zip(jax.tree.leaves(getattr(a, name)), jax.tree.leaves(getattr(b, name))):
            np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), atol=tol, rtol=0, err_msg=name)
    np.testing.assert_allclose(a.metrics["simple_regret"], b.metrics["simple_regret"], atol=tol, rtol=0)


def test_growth_refuses_bad_settings_by_name():
    for bad in (dict(sizes=(16, 8)), dict(sizes=(0, 4)), dict(sizes="yes"), dict(sizes=(4.0,)), dict(step=0)):
        with pytest.raises(ValueError, match="Growth: (sizes|step)"):
            data.Growth(**bad)
    for bad in (dict(smallest=0), dict(first=True), dict(whole=-1), dict(share=2.0), dict(enabled=1)):
        with pytest.raises(ValueError, match="Growth: " + next(iter(bad))):
            data.Growth(**bad)
    assert data.Growth(sizes=(8, 16, 99))(24) == (8, 16, 24) and data.Growth(enabled=False)(400) == (400,)


def test_growth_schedule_and_segments():
    assert data.Growth()(96) == (96,)  # short runs keep the whole-buffer program
    assert data.Growth()(100) == (64, 100)
    assert data.Growth()(128) == (64, 128)
    assert data.Growth()(200) == (64, 128, 200)
    assert data.Growth()(383) == (64, 128, 256, 383)  # the first segment: within a third of the run
    assert data.Growth()(400) == (128, 256, 400)
    assert data.Growth()(1000) == (128, 256, 512, 768, 1000)  # and at most 128 rows
    assert data.Growth(share=0)(1000) == (64, 128, 256, 512, 768, 1000)
    assert data.Growth(first=256)(1000) == (256, 512, 768, 1000)
    alg = GPBO(growth=data.Growth(sizes=(8, 16, 99)))
    assert alg.capacities(24) == (8, 16, 24) and GPBO(growth=data.WHOLE).capacities(400) == (400,)
    assert GPBO(growth=(8, 16, 99)).growth == alg.growth and GPBO(growth={"step": 128}).growth.step == 128
    with pytest.raises(ValueError, match="GPBO: growth"):
        GPBO(growth="yes")
    # growing nodes: the buffer sized to the run, not a buffer of another size
    state = (data.empty(24, 2), data.empty(5, 2), jnp.zeros(24))
    assert data.growing(state, 24) == [True, False, False]
    grown = data.grow(state, data.growing(state, 24), 8)
    assert grown[0].capacity == 8 and grown[1].capacity == 5 and grown[2].shape == (24,)


@pytest.mark.extended  # segments == whole buffer in the default run
def test_resized_buffer_and_posterior_equal_the_whole_ones():
    rng = np.random.default_rng(0)
    x, y = rng.uniform(size=(6, 3)), rng.normal(size=6)
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), 24)
    params = gp.default_params(3, 0.3)
    whole = gp.condition(buf, params)
    for size in (6, 8, 40):
        small = gp.condition(data.resize(buf, size), params)
        grown = gp.resize(whole, size)
        np.testing.assert_allclose(grown.chol, small.chol, atol=1e-12)
        np.testing.assert_allclose(grown.chol_inv, small.chol_inv, atol=1e-9)
        np.testing.assert_allclose(grown.alpha, small.alpha, atol=1e-9)
        xq = jnp.asarray(rng.uniform(size=(5, 3)))
        for a, b in zip(gp.predict_batch(small, xq), gp.predict_batch(whole, xq)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert data.resize(buf, 40).capacity == 40 and int(data.resize(buf, 40).mask.sum()) == 6


def test_rank1_extend_and_refresh_equal_a_fresh_factorisation():
    """Appending rows one by one (extend) and recomputing alpha (refresh) == condition on the rows."""
    rng = np.random.default_rng(3)
    x, y = rng.uniform(size=(12, 2)), rng.normal(size=12)
    params = gp.default_params(2, jnp.array([0.2, 0.4]), 1.3, 1e-3, 0.1)
    buf = data.empty(16, 2)
    post = gp.condition(buf, params)
    for i in range(12):
        post = gp.extend(post, jnp.asarray(x[i]))
        buf = data.append(buf, jnp.asarray(x[i]), jnp.asarray(y[i]))
    post = gp.refresh(post, buf)
    fresh = gp.condition(buf, params)
    np.testing.assert_allclose(post.chol, fresh.chol, atol=1e-10)
    np.testing.assert_allclose(post.chol_inv, fresh.chol_inv, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(post.alpha, fresh.alpha, rtol=1e-8, atol=1e-8)
    # independent truth: the NumPy Cholesky of the masked Gram matrix
    K = np.asarray(gp.masked_gram("matern52", params, buf.x, buf.mask))
    np.testing.assert_allclose(post.chol, np.linalg.cholesky(K), atol=1e-10)
    # a full factor drops the row, as data.append does
    full = gp.condition(data.from_arrays(jnp.asarray(x[:4]), jnp.asarray(y[:4]), 4), params)
    assert bool(jnp.all(gp.extend(full, jnp.asarray(x[5])).chol == full.chol))


@pytest.mark.parametrize(
    "method",
    ["gp_ucb", *(pytest.param(m, marks=pytest.mark.extended) for m in ("gp_ei", "paper_gp", "paper_gp_noisy"))],
)
def test_segmented_runs_equal_whole_buffer_runs(method):
    prob = jbo.problems.get("branin")
    if method.startswith("paper_gp"):  # fixed hyper-parameters: rank-1 appends in both runs
        make = lambda b: boke.PaperGP(num_initial=4, growth=data.as_growth(b), maximiser=PAPER_SMALL)  # noqa: E731
    else:
        make = lambda b: jbo.algorithms.get(method, num_initial=4, growth=data.as_growth(b), **SMALL)  # noqa: E731
    params = None
    if method == "paper_gp_noisy":  # the noise follows std(y): the factor is refreshed when it changes
        params = jbo.replace_params(make(False).default_params(), noise_std=0.1)
    key = jax.random.key(5)
    seg = jbo.run(make((8, 16)), prob, key=key, num_steps=T, params=params)
    whole = jbo.run(make(False), prob, key=key, num_steps=T, params=params)
    _close(seg, whole, 1e-6)
    assert seg.final_state.buffer.capacity == T


@pytest.mark.slow  # 35 s: its parts are proven by test_rank1_extend_and_refresh_equal_a_fresh_factorisation and
# test_segmented_runs_equal_whole_buffer_runs; run with --runslow
def test_segmented_seeds_equal_looped_seeds_and_fixed_gp_equals_refactorised():
    """vmapped == looped for a segmented run; the rank-1 GP-UCB equals the same GP-UCB refactorised."""
    prob = jbo.problems.get("hartmann3")
    alg = boke.PaperGP(num_initial=4, growth=data.Growth(sizes=(8, 16)), maximiser=PAPER_SMALL)
    key = jax.random.key(2)
    many = jbo.run_seeds(alg, prob, key=key, num_steps=T, num_seeds=3)
    for i, k in enumerate(jax.random.split(key, 3)):
        one = jbo.run(alg, prob, key=k, num_steps=T)
        np.testing.assert_allclose(many.actions[i], one.actions, atol=1e-8)

    fixed = jbo.run(alg, prob, key=key, num_steps=T)
    ref = GPBO(
        acquisition=alg.acquisition,
        model=alg.model,
        hypers=parts.Refit(start=alg.hypers, steps=0),
        num_initial=4,
        maximiser=PAPER_SMALL,
        growth=data.Growth(sizes=(8, 16)),
    )  # fit of 0 steps: the rule's values
    refit = jbo.run(ref, prob, key=key, num_steps=T)
    assert fixed.final_state.post is not None and refit.final_state.post is None
    _close(fixed, refit, 1e-6)


@pytest.mark.extended  # segments == whole buffer on GP-UCB and uCVS by default
def test_contextual_sbo_segments_equal_whole_buffer():
    """SBO-KDE (a GPBO on (x, c) rows, MAP refit); uCVS's segments are checked in test_ucvs."""
    prob = jbo.problems.get("sbo_kde:modified_branin")
    make = lambda b: sbo_kde.SBO(
        method="sbo_kde",
        num_initial=4,
        num_samples=8,
        num_inner=8,
        maximiser=parts.Maximiser(num_raw=32, num_starts=1, steps=4, screen_data=False),
        hypers=dataclasses.replace(sbo_kde.PAPER_REFIT, steps=5, restarts=1),
        growth=data.as_growth(b),
    )  # noqa: E731
    key = jax.random.key(1)
    _close(jbo.run(make((8, 16)), prob, key=key, num_steps=T), jbo.run(make(False), prob, key=key, num_steps=T), 1e-6)


def test_each_segment_compiles_once_for_any_seed_count():
    """ask is traced once per segment; running the compiled program on other seed counts or steps
    traces nothing new."""
    traced = []

    class Counting(GPBO):
        def ask(self, key, state, params, step):
            traced.append(state.buffer.capacity)
            return super().ask(key, state, params, step)

    alg = Counting(num_initial=4, growth=data.Growth(sizes=(8, 16)), **SMALL)
    prob = jbo.problems.get("branin")
    keys = jax.random.split(jax.random.key(0), 2)
    fn, _ = jbo.studies.compile_seeds(alg, prob, keys=keys, num_steps=T)
    assert sorted(traced) == [8, 16, T]
    for n in (2, 3, 5):
        jax.block_until_ready(fn(jax.random.split(jax.random.key(n), n)))
    assert sorted(traced) == [8, 16, T]


@pytest.mark.extended
def test_refit_schedule_refits_on_its_steps_and_reuses_the_factor_between():
    """RefitSchedule(growth): lengthscales change only on refit steps; with all_below >= T it is the default run."""
    prob = jbo.problems.get("branin")
    key = jax.random.key(3)
    default = jbo.run(jbo.algorithms.get("gp_ucb", num_initial=4, **SMALL), prob, key=key, num_steps=T)
    every = jbo.run(
        jbo.algorithms.get("gp_ucb", num_initial=4, hypers=_refit(0.1, T), **SMALL), prob, key=key, num_steps=T
    )
    _close(every, default, 1e-6)
    alg = jbo.algorithms.get("gp_ucb", num_initial=4, hypers=_refit(0.25, 8), **SMALL)
    sched = jbo.run(alg, prob, key=key, num_steps=T)
    refits = np.asarray(jax.vmap(alg.refit_now)(jnp.arange(T)))
    assert refits[:8].all() and 0 < refits[8:].sum() < T - 8
    ls = np.asarray(sched.info.lengthscale)
    changed = np.any(ls[1:] != ls[:-1], axis=1)  # info after step t vs step t - 1
    bo_steps = np.arange(1, T) >= 4
    assert not np.any(changed[bo_steps & ~refits[1:]])  # no refit: the hyper-parameters are carried over
    assert np.any(changed[bo_steps & refits[1:]])
    with pytest.raises(ValueError, match="RefitSchedule: growth"):
        parts.RefitSchedule(growth=-1.0)


def _refit(growth, all_below):
    return parts.Refit(schedule=parts.RefitSchedule(all_below=all_below, growth=growth))


def test_refit_steps_are_every_step_below_refit_all_then_the_growth_levels():
    """refit_now with growth g = 0.25 and all_below = 7: steps 0-6 refit, then step t refits when a power
    1.25^k lies in (t - 1, t], i.e. t = ceil(1.25^k): 1.25^9 = 7.45, ^10 = 9.31, ^11 = 11.64,
    ^12 = 14.55, ^13 = 18.19, ^14 = 22.74, ^15 = 28.42, ^16 = 35.53 (^17 = 44.41 is past the 40 steps).
    Step 7 = all_below is no such step (1.25^8 = 5.96 < 6 < 7 < 7.45), so it is the boundary case: it
    does not refit."""
    alg = GPBO(hypers=_refit(0.25, 7))
    want = set(range(7)) | {8, 10, 12, 15, 19, 23, 29, 36}
    got = np.asarray(jax.vmap(alg.refit_now)(jnp.arange(40)))
    np.testing.assert_array_equal(np.flatnonzero(got), sorted(want))
    assert not bool(alg.refit_now(7))


def test_screening_the_best_observations():
    """Maximiser(screen_data=k) screens the k rows with the largest observations (NumPy argsort as the truth);
    True, or a buffer of at most k rows, screens every row."""
    rng = np.random.default_rng(2)
    x, y = rng.uniform(size=(20, 2)), rng.normal(size=20)
    buf = data.from_arrays(jnp.asarray(x), jnp.asarray(y), 32)
    cands, mask = GPBO(maximiser=parts.Maximiser(screen_data=5)).screened(buf)
    np.testing.assert_array_equal(np.sort(np.asarray(cands), axis=0), np.sort(x[np.argsort(-y)[:5]], axis=0))
    assert bool(mask.all())
    for m in (parts.Maximiser(screen_data=True), parts.Maximiser(screen_data=32)):
        assert GPBO(maximiser=m).screened(buf)[0] is buf.x
    assert parts.Maximiser(screen_data=False).screened(buf) == (None, None)
    with pytest.raises(ValueError, match="Maximiser: screen_data"):
        parts.Maximiser(screen_data=0)
