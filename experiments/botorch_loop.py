"""The standard BoTorch loop on the engine benchmark task (used by bench_engine.py; needs the `bench` extra).

SingleTaskGP + fit_gpytorch_mll + optimize_acqf(UpperConfidenceBound, num_restarts=10, raw_samples=512)
on branin (maximising -branin), unit-cube inputs, standardised outputs, LHS-equivalent Sobol initial
design of `num_initial` points, T evaluations in all. `--device cuda` keeps the model's tensors on
the GPU (the objective is evaluated in NumPy either way).
"""
from __future__ import annotations

import math
import time

import numpy as np


def branin_max(x: np.ndarray) -> np.ndarray:
    """-branin at unit-cube points x (n, 2)."""
    x1 = -5 + 15 * x[:, 0]
    x2 = 15 * x[:, 1]
    a, b, c, r, s, t = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return -(a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s)


BRANIN_OPT = -0.39788735772973816


def run_seed(seed: int, num_steps: int = 50, num_initial: int = 6, beta: float = 2.0, device: str = "cpu"):
    import torch
    from botorch.acquisition import UpperConfidenceBound
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    # Latin hypercube initial design, as in jbo
    perms = np.stack([rng.permutation(num_initial) for _ in range(2)], 1)
    f64 = dict(dtype=torch.float64, device=device)
    X = torch.tensor((perms + rng.uniform(size=(num_initial, 2))) / num_initial, **f64)
    Y = torch.tensor(branin_max(X.cpu().numpy()), **f64)[:, None]
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], **f64)
    for _ in range(num_steps - num_initial):
        model = SingleTaskGP(X, Y, outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = UpperConfidenceBound(model, beta=beta)
        cand, _ = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
        X = torch.cat([X, cand])
        Y = torch.cat([Y, torch.tensor(branin_max(cand.detach().cpu().numpy()), **f64)[:, None]])
    return BRANIN_OPT - Y.max().item()


def run(num_seeds: int = 4, num_steps: int = 50, num_initial: int = 6, device: str = "cpu"):
    """Returns (seconds per seed, final simple regrets). A short untimed warm-up run first takes the
    imports and torch's first-call costs out of the timing, as jbo's timing excludes compilation."""
    run_seed(-1 % 2**31, num_initial + 2, num_initial, device=device)
    t0 = time.perf_counter()
    regrets = [run_seed(s, num_steps, num_initial, device=device) for s in range(num_seeds)]
    return (time.perf_counter() - t0) / num_seeds, np.array(regrets)


if __name__ == "__main__":
    import argparse
    import json
    import warnings

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--num-initial", type=int, default=6)
    ap.add_argument("--json", action="store_true", help="print one JSON line (used by bench_engine.py)")
    ap.add_argument("--device", default="cpu", help="torch device of the model: cpu or cuda")
    a = ap.parse_args()
    import botorch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sec, reg = run(a.seeds, a.steps, a.num_initial, a.device)
    if a.json:
        print(json.dumps({"version": botorch.__version__, "device": a.device, "seconds_per_seed": sec,
                          "final_regrets": reg.tolist()}))
    else:
        print(f"botorch {botorch.__version__}: {sec:.2f} s per seed, final simple regrets {reg}")
