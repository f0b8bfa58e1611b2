"""Input at the boundary: int seeds wherever a key is taken, named errors for a bad seed count, and
the uniform free-variable law (free_scale = inf) of the control-set problems."""

import jax
import numpy as np
import pytest

import jbo
from jbo.problems.control import truncated_normal_from_uniform


def test_int_seeds_equal_their_keys():
    prob = jbo.problems.get("branin")
    alg = jbo.algorithms.get("random_search", num_initial=2)
    a = jbo.run(alg, prob, key=3, num_steps=6)
    b = jbo.run(alg, prob, key=jax.random.key(3), num_steps=6)
    np.testing.assert_array_equal(a.actions, b.actions)
    c = jbo.run_seeds(alg, prob, key=3, num_steps=6, num_seeds=2)
    d = jbo.run_seeds(alg, prob, key=jax.random.key(3), num_steps=6, num_seeds=2)
    np.testing.assert_array_equal(c.actions, d.actions)
    one = jbo.AskTell(alg, [[0, 0], [1, 1]], num_steps=6, key=3)
    two = jbo.AskTell(alg, [[0, 0], [1, 1]], num_steps=6, key=jax.random.key(3))
    np.testing.assert_array_equal(one.ask(), two.ask())


@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_bad_seed_counts_are_named(bad):
    alg = jbo.algorithms.get("random_search", num_initial=2)
    with pytest.raises(ValueError, match="num_seeds"):
        jbo.run_seeds(alg, jbo.problems.get("branin"), key=0, num_steps=6, num_seeds=bad)
    with pytest.raises(ValueError, match="num_seeds"):
        jbo.studies.run_study({"rs": alg}, ["branin"], key=0, num_steps=6, num_seeds=bad, progress=False)


def test_infinite_free_scale_is_the_uniform_law():
    """s = inf maps u to itself (finite, no 0.5 + inf * 0); a very large s tends to it."""
    u = np.linspace(0.01, 0.99, 7)
    np.testing.assert_array_equal(truncated_normal_from_uniform(u, np.inf), u)
    np.testing.assert_allclose(truncated_normal_from_uniform(u, 1e4), u, atol=1e-6)
    assert np.isfinite(np.asarray(truncated_normal_from_uniform(u, jax.numpy.asarray(np.inf)))).all()
