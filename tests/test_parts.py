"""The configured parts algorithms are assembled from: each refuses a bad setting by name, config data
becomes the same part, and the registry's options map onto parts."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import acquisitions, data, parts


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: parts.Maximiser(num_starts=0), "Maximiser: num_starts"),
        (lambda: parts.Maximiser(method="sgd"), "Maximiser: method"),
        (lambda: parts.Maximiser(steps=True), "Maximiser: steps"),
        (lambda: parts.Refit(restarts=0), "Refit: restarts"),
        (lambda: parts.Refit(learning_rate=0.0), "Refit: learning_rate"),
        (lambda: parts.Refit(start="fixed"), "Refit: start"),
        (lambda: parts.RefitSchedule(all_below=0), "RefitSchedule: all_below"),
        (lambda: parts.FixedHypers(lengthscale=-1.0), "FixedHypers: lengthscale"),
        (lambda: parts.Lies(size=4, lie="truth"), "Lies: unknown lie"),
        (lambda: parts.JointMC(size=0), "JointMC: size"),
        (lambda: jbo.algorithms.GPBO(maximiser=parts.Refit()), "GPBO: maximiser"),
        (lambda: jbo.algorithms.GPBO(batching=parts.Maximiser()), "GPBO: batching"),
        (lambda: jbo.algorithms.GPBO(design="halton"), "design: unknown design"),
        (lambda: jbo.algorithms.GPBO(num_initial=0), "GPBO: num_initial"),
        (lambda: jbo.algorithms.GPBO(acquisition="log_ei", batching=parts.JointMC(size=2)), "q-point form of log-EI"),
        (
            lambda: jbo.algorithms.GPBO(
                acquisition=acquisitions.UCB(schedule="srinivas"), batching={"kind": "joint_mc", "size": 2}
            ),
            "Srinivas",
        ),
    ],
)
def test_a_bad_part_is_refused_by_name(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_config_data_become_the_same_parts():
    flat = jbo.algorithms.get(
        "gp_ei",
        maximiser={"num_raw": 64, "steps": 5},
        hypers={"steps": 10, "start": {"lengthscale": 0.3}, "schedule": {"growth": None}},
        batching={"kind": "lies", "size": 4, "lie": "kb"},
        design="sobol",
        growth={"sizes": [8, 16]},
        model={"kernel": "se", "prior": True},
    )
    parted = jbo.algorithms.get(
        "gp_ei",
        maximiser=parts.Maximiser(num_raw=64, steps=5),
        hypers=parts.Refit(
            start=parts.FixedHypers(lengthscale=0.3), steps=10, schedule=parts.RefitSchedule(growth=None)
        ),
        batching=parts.Lies(size=4, lie="kb"),
        design=parts.Sobol(),
        growth=data.Growth(sizes=(8, 16)),
        model=jbo.gp.GPModel(kernel="se", prior=jbo.gp.HyperPrior()),
    )
    assert flat == parted
    assert jbo.algorithms.get("gp_ucb", hypers={"rule": "fixed", "noise": 1e-3}).hypers == parts.FixedHypers(noise=1e-3)
    assert jbo.algorithms.get("gp_ucb", growth=False).growth == data.WHOLE


def test_every_paper_part_is_a_part_instance_and_default():
    uhe_bo, ucvs, sbo_kde, boke = (getattr(jbo.algorithms, m) for m in ("uhe_bo", "ucvs", "sbo_kde", "boke"))
    assert uhe_bo.UHE().refit == uhe_bo.PAPER_REFIT and uhe_bo.UHE().maximiser == uhe_bo.PAPER_MAXIMISER
    assert ucvs.CVS().rule == ucvs.REFIT and ucvs.make("ucb_psq").rule == parts.FixedHypers()
    assert ucvs.CVS().default_params().hypers == parts.HypersParams()
    assert sbo_kde.SBO().hypers == sbo_kde.PAPER_REFIT and isinstance(sbo_kde.SBO().design, parts.Sobol)
    assert boke.PaperGP().maximiser == boke.PAPER_MAXIMISER
    smaller = dataclasses.replace(uhe_bo.PAPER_REFIT, steps=3)
    assert smaller.restarts == 3 and smaller.learning_rate == 0.05


def test_refit_schedule_and_maximiser_pieces():
    schedule = parts.RefitSchedule(all_below=4, growth=1.0)  # then once each time the data double
    got = np.flatnonzero(np.asarray(jax.vmap(schedule.now)(jnp.arange(40))))
    assert got[:4].tolist() == [0, 1, 2, 3] and len(got) == 4 + 4 and all(np.diff(got[4:]) > 3)
    assert not schedule.skips(4) and schedule.skips(5) and not parts.RefitSchedule(growth=None).skips(1000)
    m = parts.Maximiser(num_raw=0, num_raw_per_dim=16)
    assert m.raw(3) == 48 and parts.Maximiser().raw(3) == 512
    arms = jnp.asarray([[0.1], [0.9], [0.5]])
    index, value = m.arms(lambda x: -((x[0] - 0.6) ** 2), arms)
    assert int(index) == 2 and float(value) == pytest.approx(-0.01)
    x, v = parts.Maximiser(num_raw=32, num_starts=2, steps=10).box(
        lambda x: -jnp.sum((x - 0.3) ** 2), jax.random.key(0), 2
    )
    np.testing.assert_allclose(x, [0.3, 0.3], atol=0.05)  # 10 Adam steps from the best raw points
    assert float(v) > -0.01


def test_a_users_acquisition_brings_its_own_q_point_form():
    class Mean(acquisitions.Acquisition):
        def build(self, key, post, buffer, params, step, dim):
            return lambda x: acquisitions.posterior_mean(post, x)

    with pytest.raises(ValueError, match="no q-point form of Mean"):
        jbo.algorithms.GPBO(acquisition=Mean(), batching=parts.JointMC(size=2))

    class JointMean(Mean):
        def joint(self, key, post, buffer, params, step, q, num_samples):
            return lambda X: jnp.sum(jax.vmap(lambda x: acquisitions.posterior_mean(post, x))(X))

    alg = jbo.algorithms.GPBO(acquisition=JointMean(), batching=parts.JointMC(size=2), num_initial=3)
    assert alg.batching.size == 2


def test_far_refit_schedule_and_far_raw_screening():
    """RefitSchedule(far_from, far_growth): below far_from the steps of the plain schedule; at far_from a
    refit; beyond, a refit exactly where floor(log(t / far_from) / log(1 + far_growth)) increases (NumPy
    as the truth). Maximiser(far_capacity, far_num_raw): the raw count of a buffer of more than
    far_capacity rows."""
    plain = parts.RefitSchedule(all_below=8, growth=0.25)
    far = parts.RefitSchedule(all_below=8, growth=0.25, far_from=40, far_growth=1.0)
    t = np.arange(200)
    near, got = (np.asarray(jax.vmap(s.now)(jnp.asarray(t))) for s in (plain, far))
    np.testing.assert_array_equal(got[:40], near[:40])
    level = np.floor(np.log(np.maximum(t[40:], 1) / 40) / np.log(2.0))
    want = np.concatenate([[True], np.diff(level) > 0])
    np.testing.assert_array_equal(got[40:], want)
    assert np.flatnonzero(got[40:]).tolist() == [0, 40, 120]  # t = 40, 80, 160
    m = parts.Maximiser(far_capacity=512, far_num_raw=256)
    assert m.raw(6, 512) == 512 and m.raw(6, 768) == 256 and m.raw(6) == 512
    for bad, match in (
        (lambda: parts.RefitSchedule(far_from=400), "go together"),
        (lambda: parts.RefitSchedule(growth=None, far_from=400, far_growth=0.1), "go together"),
        (lambda: parts.RefitSchedule(far_from=10, far_growth=0.1), "far_from"),
        (lambda: parts.RefitSchedule(far_from=400, far_growth=-1.0), "far_growth"),
        (lambda: parts.Maximiser(far_capacity=512), "go together"),
    ):
        with pytest.raises(ValueError, match=match):
            bad()


def test_pinned_flat_settings_rebuild_the_parts_their_results_used(monkeypatch):
    """The experiments' pins give back the classes' parts exactly (the committed engine results were
    measured with them), and no pin gives GP-BO's defaults: flat settings replace fields of GP_REFIT and
    GP_MAXIMISER."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "experiments"))
    from flat_settings import ADAM_SEARCH, WIDE_SEARCH, gp_options

    wide = gp_options(**WIDE_SEARCH)
    assert wide["hypers"] == parts.Refit() and wide["maximiser"] == parts.Maximiser(method="lbfgs", steps=5)
    adam = gp_options(**ADAM_SEARCH)
    assert adam["hypers"] == parts.Refit() and adam["maximiser"] == parts.Maximiser()
    default = jbo.algorithms.get("gp_ucb", **gp_options(num_initial=10))
    assert default.hypers == parts.GP_REFIT and default.maximiser == parts.GP_MAXIMISER
    assert jbo.algorithms.get("gp_ucb", **gp_options(num_raw=64)).maximiser == dataclasses.replace(
        parts.GP_MAXIMISER, num_raw=64
    )
    assert parts.GP_REFIT.schedule.growth == parts.GP_REFIT_GROWTH != parts.Refit().schedule.growth
