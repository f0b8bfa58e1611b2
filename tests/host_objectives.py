"""Host objectives for the AskTell executor tests: numpy only (no jax import), so that the workers of a
'spawn' process pool start in a fraction of a second. Every callable here pickles by reference."""

from __future__ import annotations

import math
import os

import numpy as np


def branin(x) -> float:
    """The negated Branin function (to maximise) on [-5, 10] x [0, 15]; max -0.397887."""
    x1, x2 = float(x[0]), float(x[1])
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return -((x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


class FailOnce:
    """`base`, except that the first call to find the file `flag` removes it and fails: raises a
    RuntimeError (mode "raise") or returns NaN (mode "nan"). os.remove succeeds for exactly one caller,
    so exactly one evaluation fails even when several processes race for it."""

    def __init__(self, flag: str, mode: str = "raise", base=branin):
        if mode not in ("raise", "nan"):
            raise ValueError(f"mode is 'raise' or 'nan', got {mode!r}")
        self.flag, self.mode, self.base = str(flag), mode, base

    def __call__(self, x):
        try:
            os.remove(self.flag)
        except FileNotFoundError:
            return self.base(x)
        if self.mode == "nan":
            return float("nan")
        raise RuntimeError(f"simulator crashed at x={np.asarray(x).tolist()}")


def worker_pid(x) -> int:
    """The process id of the worker that evaluates x (the pool really uses other processes)."""
    return os.getpid()
