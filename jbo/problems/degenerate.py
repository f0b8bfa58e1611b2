"""Degenerate test problems for numerical robustness: one smooth bumpy function on the unit square,
evaluated in original coordinates on any box, with an output scale, an offset and observation noise.

The cases differ only in array values (box bounds, scale, offset, noise), so a whole sweep of them
runs in one compiled program per method with :func:`jbo.engine.run_environments`. Used by
tests/test_robustness.py and experiments/engine/scale/robustness_sweep.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jbo.protocols import Environment
from jbo.spaces import Box


def bumpy(u):
    """A smooth bumpy function on the unit square, range about [-1.3, 0.5]."""
    return -jnp.sum((u - 0.3) ** 2) + 0.5 * jnp.sin(5.0 * u[0]) * jnp.cos(3.0 * u[1])


class Degenerate(Environment):
    """y = offset + scale * bumpy(u(x)) + noise_std * N(0, 1), x in original coordinates on `box`."""

    box: Box
    scale: jax.Array
    offset: jax.Array
    noise_std: jax.Array

    @property
    def space(self):
        return self.box

    def reset(self, key):
        return ()

    def step(self, key, state, action, step):
        x = self.box.from_unit(action)  # original coordinates (tiny or huge), then back
        f = self.offset + self.scale * bumpy(self.box.to_unit(x))
        return state, f + self.noise_std * jax.random.normal(key), {"value": f}


def case(lo=0.0, hi=1.0, scale=1.0, offset=0.0, noise=0.0) -> Degenerate:
    """The problem on the box [lo, hi]^2 with output scale, offset and noise std."""
    return Degenerate(
        Box(np.array([[lo, lo], [hi, hi]])),
        jnp.asarray(float(scale)),
        jnp.asarray(float(offset)),
        jnp.asarray(float(noise)),
    )


CASES = {
    "base": case(),
    "constant_y": case(scale=0.0, offset=3.0),
    "x_tiny": case(hi=1e-8),
    "x_huge": case(lo=-1e8, hi=1e8),
    "y_tiny": case(scale=1e-8),
    "y_huge": case(scale=1e8),
    "y_offset": case(offset=1e6),
    "very_noisy": case(noise=100.0),
}
