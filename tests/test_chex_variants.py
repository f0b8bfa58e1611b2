"""Pure functions give the same numbers with and without jit (chex variants), against NumPy."""

import chex
import jax.numpy as jnp
import numpy as np
from scipy import stats

from jbo import acquisitions, kernels
from tests.test_kernels import numpy_kernel

RNG = np.random.default_rng(5)
X1, X2 = RNG.uniform(size=(5, 3)), RNG.uniform(size=(4, 3))
LS = np.array([0.3, 0.5, 0.9])


class PureFunctionVariants(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_gram_matches_numpy(self):
        gram = self.variant(lambda a, b: kernels.gram("matern52", kernels.KernelParams(jnp.asarray(LS), 1.3), a, b))
        np.testing.assert_allclose(
            gram(jnp.asarray(X1), jnp.asarray(X2)), numpy_kernel("matern52", X1, X2, LS, 1.3), rtol=1e-12
        )

    @chex.variants(with_jit=True, without_jit=True)
    def test_ei_and_ucb_closed_forms_match_scipy(self):
        m, s, best = jnp.array([0.1, -0.4, 2.0]), jnp.array([0.5, 1.0, 0.2]), 0.3
        ei = self.variant(acquisitions.ei_value)(m, s, best)
        z = (np.asarray(m) - best) / np.asarray(s)
        np.testing.assert_allclose(ei, np.asarray(s) * (stats.norm.pdf(z) + z * stats.norm.cdf(z)), rtol=1e-12)
        ucb = self.variant(acquisitions.ucb_value)(m, s, 4.0)
        np.testing.assert_allclose(ucb, np.asarray(m) + 2.0 * np.asarray(s), rtol=1e-15)

    def test_gram_rejects_mismatched_dimensions(self):
        with self.assertRaises(AssertionError):
            kernels.gram("se", kernels.KernelParams(1.0), jnp.zeros((3, 2)), jnp.zeros((3, 4)))
