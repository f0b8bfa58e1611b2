"""Stand-in host simulators for experiments/engine/scale/host_executor.py: numpy only, so the workers of a
'spawn' process pool import them in a fraction of a second (no jax)."""

from __future__ import annotations

import math
import time


def branin(x) -> float:
    """The negated Branin function (maximise) on [-5, 10] x [0, 15]."""
    x1, x2 = float(x[0]), float(x[1])
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return -((x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


class Waiting:
    """branin after waiting `seconds` (an external simulator, a queue, a lab: the host is idle)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __call__(self, x):
        time.sleep(self.seconds)
        return branin(x)


class Busy:
    """branin after `iterations` of a pure-Python loop (CPU-bound work that holds the GIL)."""

    def __init__(self, iterations: int):
        self.iterations = iterations

    def __call__(self, x):
        s = 0.0
        for i in range(self.iterations):
            s += (i % 7) * 1e-12
        return branin(x) + 0.0 * s
