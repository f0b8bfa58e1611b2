"""The standard BoTorch loop on the engine benchmark tasks (used by bench_engine.py; needs the `bench` extra).

SingleTaskGP + fit_gpytorch_mll + optimize_acqf(UpperConfidenceBound, num_restarts=10, raw_samples=512)
on branin (maximising -branin) or hartmann6 (maximising -hartmann6), unit-cube inputs, standardised outputs, LHS-equivalent Sobol initial
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
H6_A = np.array(
    [[10.0, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
)
H6_P = 1e-4 * np.array(
    [
        [1312.0, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6_max(x: np.ndarray) -> np.ndarray:
    """-hartmann6 (maximised) at unit-cube points x (n, 6)."""
    inner = np.sum(H6_A[None] * (x[:, None, :] - H6_P[None]) ** 2, axis=-1)
    return np.sum(_H6_ALPHA * np.exp(-inner), axis=-1)


PROBLEMS = {"branin": (branin_max, 2, BRANIN_OPT), "hartmann6": (hartmann6_max, 6, 3.3223680114155147)}


def run_seed(
    seed: int,
    num_steps: int = 50,
    num_initial: int = 6,
    beta: float = 2.0,
    device: str = "cpu",
    problem: str = "branin",
):
    import torch
    from botorch.acquisition import UpperConfidenceBound
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood

    f, dim, optimum = PROBLEMS[problem]
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    # Latin hypercube initial design, as in jbo
    perms = np.stack([rng.permutation(num_initial) for _ in range(dim)], 1)
    f64 = dict(dtype=torch.float64, device=device)
    X = torch.tensor((perms + rng.uniform(size=(num_initial, dim))) / num_initial, **f64)
    Y = torch.tensor(f(X.cpu().numpy()), **f64)[:, None]
    bounds = torch.tensor([[0.0] * dim, [1.0] * dim], **f64)
    for _ in range(num_steps - num_initial):
        model = SingleTaskGP(X, Y, outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = UpperConfidenceBound(model, beta=beta)
        cand, _ = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
        X = torch.cat([X, cand])
        Y = torch.cat([Y, torch.tensor(f(cand.detach().cpu().numpy()), **f64)[:, None]])
    return optimum - Y.max().item()


def run(num_seeds: int = 4, num_steps: int = 50, num_initial: int = 6, device: str = "cpu", problem: str = "branin"):
    """Returns (seconds per seed, final simple regrets). A short untimed warm-up run first takes the
    imports and torch's first-call costs out of the timing, as jbo's timing excludes compilation."""
    run_seed(-1 % 2**31, num_initial + 2, num_initial, device=device, problem=problem)
    t0 = time.perf_counter()
    regrets = [run_seed(s, num_steps, num_initial, device=device, problem=problem) for s in range(num_seeds)]
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
    ap.add_argument("--problem", default="branin", choices=sorted(PROBLEMS))
    a = ap.parse_args()
    import botorch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sec, reg = run(a.seeds, a.steps, a.num_initial, a.device, a.problem)
    if a.json:
        print(
            json.dumps(
                {
                    "version": botorch.__version__,
                    "device": a.device,
                    "seconds_per_seed": sec,
                    "final_regrets": reg.tolist(),
                }
            )
        )
    else:
        print(f"botorch {botorch.__version__}: {sec:.2f} s per seed, final simple regrets {reg}")
