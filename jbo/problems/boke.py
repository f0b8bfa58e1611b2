"""Problems of the BOKE paper (boke.md 6): the 1-D toy of Eq. 3.5 and the Figs. 6/7 benchmark suite.

`SUITE` lists the six synthetic functions in the paper's panel order with the spec's defaults: the
starred (Picheny-rescaled) forms, the design size n0 and total budget T (spec 6.3, ours), and
SD_U(g), the standard deviation of g under uniform inputs, which sets the relative noise level
sigma_eps = 0.1 SD_U(g) of Fig. 7 and the varsigma of beta_t in BOTH settings (spec D3, D4).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from jbo.problems import synthetic
from jbo.problems.base import Problem
from jbo.spaces import Box as Space

TOY_OPTIMUM = (0.2741972, 0.6757609)  # (x*, f*), checked by dense search in the tests


def toy_fn(x):
    """Eq. 3.5: f(x) = -exp(-1.4 x) cos(3.5 pi x) on [0, 1] (maximise)."""
    return -jnp.exp(-1.4 * x[0]) * jnp.cos(3.5 * math.pi * x[0])


def toy() -> Problem:
    return Problem("boke_toy", Space([[0.0], [1.0]]), toy_fn, TOY_OPTIMUM[1], jnp.array([TOY_OPTIMUM[0]]))


class Benchmark(NamedTuple):
    panel: str
    make: Callable[[], Problem]
    sd_u: float  # SD of g under uniform inputs (spec 6.3 table)
    num_initial: int
    num_steps: int  # T, the initial design included

    @property
    def noise_std(self) -> float:
        return 0.1 * self.sd_u

    def problem(self, noisy: bool) -> Problem:
        p = self.make()
        return p.with_noise(self.noise_std) if noisy else p


SUITE: dict[str, Benchmark] = {
    "forrester": Benchmark("A", synthetic.forrester, 4.458, 5, 50),
    "goldstein_price_rescaled": Benchmark("B", lambda: synthetic.goldstein_price(rescaled=True), 1.005, 10, 100),
    "six_hump_camel": Benchmark("C", synthetic.six_hump_camel, 26.34, 10, 100),
    "hartmann3": Benchmark("D", synthetic.hartmann3, 0.9546, 15, 150),
    "rosenbrock4_rescaled": Benchmark("E", lambda: synthetic.rosenbrock(4, rescaled=True), 0.992, 20, 150),
    "sphere6_modified": Benchmark("F", synthetic.sphere6_modified, 0.0245, 30, 200),
}
