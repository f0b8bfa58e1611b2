"""Non-stationary kernelized bandits on a finite arm set (R-PERP paper, spec r_perp.md 5.1).

The Fig. 2 environment: a 30 x 30 grid on [0, 1]^2 (linspace, endpoints included, A15), three base
functions f^(b)(x) = sum_u alpha_u k(x, xbar_u) (U = 10, alpha_u ~ U[-1, 1], xbar_u ~ U([0, 1]^2)),
f_t = f^(1) on t = 1..T/5, f^(2) on T/5+1..2T/5, f^(3) after (abrupt changes). Built on
:class:`jbo.problems.finite.FiniteArmProblem` (one segment per base function), so each step reports
its own optimum and the engine's regret is the dynamic regret. The learner is told (side
information) the exact RKHS norm B = max_b sqrt(alpha^T K(xbar, xbar) alpha) and the realised
sup-norm variation V_T = sum_b max_x |f^(b+1)(x) - f^(b)(x)| on the grid (A4, A5), and the noise rho.

Instances are drawn with ``numpy.random.default_rng(seed)``, alpha then xbar for f^(1), f^(2), f^(3)
in that order: seeds 0, 1, 2 are exactly the instances of the spec's reference runs (their (B, V_T)
are tested). Per-seed instances differ in arrays only, so they stack into one pytree and
:func:`run_instances` vmaps the engine's run over (key, environment) pairs, one program per group of
seeds whose algorithms are equal (a per-seed V_T gives a per-seed restart interval H, which must be
static: the spec's "group seeds by H").

General drift: :func:`drifting` takes any sequence of value vectors (e.g. a user's functions
evaluated at the arms) with abrupt changes or a linear interpolation between them
(:class:`LinearDriftArms`, a slowly varying objective), and computes V_T for either.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import runner
from jbo.problems.finite import FiniteArmProblem
from jbo.protocols import Environment
from jbo.spaces import FiniteArms

KERNELS = ("se", "matern52")


def grid(size: int = 30, dim: int = 2) -> np.ndarray:
    """size^dim points of [0, 1]^dim, linspace per axis (endpoints included), first axis slowest."""
    if size < 2 or dim < 1:
        raise ValueError(f"a grid needs size >= 2 and dim >= 1, got size={size}, dim={dim}")
    g = np.linspace(0.0, 1.0, size)
    return np.stack(np.meshgrid(*([g] * dim), indexing="ij"), -1).reshape(-1, dim)


def kernel_matrix(kernel: str, lengthscale: float, X1, X2) -> np.ndarray:
    """k(X1[i], X2[j]) in NumPy: SE exp(-r^2 / (2 l^2)) or Matern-5/2 (1 + s + s^2/3) e^{-s}, s = sqrt(5) r / l."""
    r = np.sqrt(np.maximum(((np.asarray(X1)[:, None, :] - np.asarray(X2)[None]) ** 2).sum(-1), 0.0)) / lengthscale
    if kernel == "se":
        return np.exp(-0.5 * r * r)
    if kernel == "matern52":
        s = np.sqrt(5.0) * r
        return (1.0 + s + s * s / 3.0) * np.exp(-s)
    raise ValueError(f"unknown kernel {kernel!r}; choose one of {KERNELS}")


class Instance(NamedTuple):
    alpha: np.ndarray  # (S, U) weights
    centres: np.ndarray  # (S, U, d)


def sample_instance(seed: int, num_functions: int = 3, num_centres: int = 10, dim: int = 2) -> Instance:
    """Spec 5.1 / 5.4: per base function, alpha ~ U[-1, 1]^U then xbar ~ U([0, 1]^d)^U from default_rng(seed)."""
    if num_functions < 1 or num_centres < 1:
        raise ValueError(f"need num_functions >= 1 and num_centres >= 1, got {num_functions}, {num_centres}")
    rng = np.random.default_rng(seed)
    alpha, centres = [], []
    for _ in range(num_functions):
        alpha.append(rng.uniform(-1.0, 1.0, num_centres))
        centres.append(rng.uniform(0.0, 1.0, (num_centres, dim)))
    return Instance(np.stack(alpha), np.stack(centres))


def base_values(instance: Instance, arms, kernel: str, lengthscale: float) -> np.ndarray:
    """f^(b)(x) = sum_u alpha_u k(x, xbar_u) at every arm: (S, K)."""
    return np.stack([kernel_matrix(kernel, lengthscale, arms, c) @ a for a, c in zip(*instance)])


def rkhs_norms(instance: Instance, kernel: str, lengthscale: float) -> np.ndarray:
    """||f^(b)||_H = sqrt(alpha^T K(xbar, xbar) alpha) for each base function (exact): (S,)."""
    return np.array([np.sqrt(max(a @ kernel_matrix(kernel, lengthscale, c, c) @ a, 0.0)) for a, c in zip(*instance)])


def sup_variation(values) -> float:
    """sum_b max_x |values[b+1] - values[b]| (the realised sup-norm variation of a piecewise sequence)."""
    v = np.asarray(values, dtype=np.float64)
    return float(np.abs(np.diff(v, axis=0)).max(axis=1).sum()) if v.shape[0] > 1 else 0.0


class LinearDriftArms(Environment):
    """A slowly drifting finite-arm objective: f_t interpolates linearly between anchor value vectors.

    anchors (S, K); knots (S,) increasing steps (0-based) where f_t = anchors[s] exactly; before the
    first knot f_t = anchors[0], after the last f_t = anchors[-1]. Each step's change is
    (anchors[s+1] - anchors[s]) / (knots[s+1] - knots[s]), so V_T = sum_s max |anchors[s+1] - anchors[s]|."""

    name: str = eqx.field(static=True)
    arms: FiniteArms
    anchors: jax.Array
    knots: tuple = eqx.field(static=True)
    noise_std: float = eqx.field(static=True)
    info: dict

    def __init__(self, arms, anchors, knots, noise_std: float = 0.0, name: str = "linear_drift", info=None):
        self.arms = arms if isinstance(arms, FiniteArms) else FiniteArms(arms)
        a = jnp.asarray(anchors, jnp.float64)
        if a.ndim != 2 or a.shape[1] != self.arms.num_arms or a.shape[0] < 2:
            raise ValueError(f"anchors must have shape (S >= 2, {self.arms.num_arms}), got {tuple(a.shape)}")
        ks = tuple(int(k) for k in knots)
        if len(ks) != a.shape[0] or ks[0] < 0 or any(b <= c for c, b in zip(ks, ks[1:])):
            raise ValueError(f"knots must be {a.shape[0]} strictly increasing steps >= 0, got {knots}")
        if not (noise_std >= 0 and np.isfinite(noise_std)):
            raise ValueError(f"noise_std must be finite and >= 0, got {noise_std!r}")
        self.anchors, self.knots, self.noise_std, self.name = a, ks, float(noise_std), name
        self.info = dict(info or {})

    @property
    def space(self) -> FiniteArms:
        return self.arms

    def side_info(self, env_state) -> dict:
        return self.info

    def values_at(self, t):
        k = jnp.asarray(self.knots, jnp.float64)
        tt = jnp.clip(jnp.asarray(t, jnp.float64), k[0], k[-1])
        s = jnp.clip(jnp.searchsorted(k, tt, side="right") - 1, 0, len(self.knots) - 2)
        w = (tt - k[s]) / (k[s + 1] - k[s])
        return (1.0 - w) * self.anchors[s] + w * self.anchors[s + 1]

    def reset(self, key):
        return ()

    def step(self, key, state, action, step):
        vals = self.values_at(step.t)
        value = vals[action]
        y = value + self.noise_std * jax.random.normal(key)
        return state, y, {"value": value, "optimal_value": jnp.max(vals)}


def drifting(
    arms,
    values,
    change_points=None,
    knots=None,
    noise_std: float = 0.0,
    rkhs_norm=None,
    name: str = "drifting_kernel_arms",
):
    """A drifting finite-arm problem from S value vectors (S, K), told its realised V_T (and B if given).

    change_points: abrupt changes (a FiniteArmProblem); knots: linear interpolation (LinearDriftArms).
    Exactly one of the two."""
    if (change_points is None) == (knots is None):
        raise ValueError("give exactly one of change_points (abrupt changes) or knots (linear drift)")
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"values must have shape (S, K), got {v.shape}")
    info = {"variation": jnp.asarray(sup_variation(v)), "noise_std": jnp.asarray(float(noise_std))}
    if rkhs_norm is not None:
        info["rkhs_norm"] = jnp.asarray(float(rkhs_norm))
    if change_points is not None:
        return FiniteArmProblem(arms, v, change_points, noise_std=noise_std, name=name, info=info)
    return LinearDriftArms(arms, v, knots, noise_std, name, info)


def kernel_drift(
    seed: int = 0,
    kernel: str = "se",
    horizon: int = 5000,
    lengthscale: float = 0.5,
    grid_size: int = 30,
    dim: int = 2,
    num_functions: int = 3,
    num_centres: int = 10,
    change_points=None,
    drift: str = "abrupt",
    noise_std: float = 0.01,
):
    """The Fig. 2 environment (spec 5.1) for one seed; drift="linear" interpolates between the same
    base functions over [0, T) instead (knots evenly spaced; ours).

    Side information: rkhs_norm B (max exact norm of the base functions; it bounds every convex
    combination too), variation V_T (realised, on the grid), noise_std rho."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {KERNELS}")
    if drift not in ("abrupt", "linear"):
        raise ValueError(f"unknown drift {drift!r}; choose 'abrupt' or 'linear'")
    arms = grid(grid_size, dim)
    inst = sample_instance(seed, num_functions, num_centres, dim)
    vals = base_values(inst, arms, kernel, lengthscale)
    B = float(rkhs_norms(inst, kernel, lengthscale).max())
    name = f"kernel_drift_{kernel}"
    if drift == "linear":
        knots = np.linspace(0, horizon - 1, num_functions).round().astype(int)
        return drifting(arms, vals, knots=knots, noise_std=noise_std, rkhs_norm=B, name=name)
    if change_points is None:
        if num_functions != 3:
            raise ValueError("pass change_points for a number of base functions other than 3")
        change_points = (horizon // 5, 2 * horizon // 5)
    if max(change_points, default=0) >= horizon:
        raise ValueError(f"change points {tuple(change_points)} must lie inside the horizon T = {horizon}")
    return drifting(arms, vals, change_points=change_points, noise_std=noise_std, rkhs_norm=B, name=name)


def known(env) -> dict:
    """The side information of a (single-instance) environment as Python floats."""
    return {k: float(v) for k, v in env.side_info(None).items()}


# ---------------------------------------------------------------- per-seed instances in one program
def run_instances(algorithms, environments, *, keys, num_steps: int, params=None, progress: bool = False):
    """Run seed i = (algorithms[i], environments[i], keys[i]) for every i; seeds with equal algorithms
    (the same static schedule) run as one program over their (key, environment) pairs (the runner's
    batch="instances": paired, where jbo.run_environments crosses every environment with every seed).

    Each seed's trace equals jbo.run(algorithms[i], environments[i], key=keys[i], num_steps=...) (tested).
    Returns (trace, groups): one Trace with a leading seed axis (final_state: None, the seeds' states
    may differ in shape), and a list of dicts (seeds, algorithm, compile_s, run_s), one per group.
    Compiled programs are cached by the runner (same algorithm, shapes and params structure), so a
    Params change (e.g. another C) re-uses them."""
    algorithms, environments = list(algorithms), list(environments)
    keys = jnp.asarray(keys) if not isinstance(keys, jax.Array) else keys
    S = len(algorithms)
    if len(environments) != S or keys.shape[0] != S:
        raise ValueError(
            f"need one algorithm, environment and key per seed; got {S}, {len(environments)}, {keys.shape[0]}"
        )
    for a, e in zip(algorithms, environments):
        runner.check_run(a, e, num_steps)
    groups: dict = {}
    for i, a in enumerate(algorithms):
        groups.setdefault(a, []).append(i)
    traces, report = [None] * S, []
    for alg, idx in groups.items():
        p = runner.checked_params(alg, params)
        ks = keys[jnp.asarray(idx)]
        prog = runner.program(
            alg,
            [environments[i] for i in idx],
            keys=ks,
            num_steps=num_steps,
            params=p,
            batch="instances",
            devices=1,
            keep_final_state=False,
        )
        t0 = time.perf_counter()
        trace = jax.block_until_ready(prog(ks, p))
        run_s = time.perf_counter() - t0
        for n, i in enumerate(idx):
            traces[i] = jax.tree.map(lambda v, n=n: np.asarray(v[n]), trace)
        report.append({"seeds": idx, "algorithm": alg, "compile_s": prog.compile_seconds, "run_s": run_s})
        if progress:
            print(
                f"  {type(alg).__name__} seeds {idx}: compile {prog.compile_seconds:.1f} s, run {run_s:.1f} s",
                flush=True,
            )
    return jax.tree.map(lambda *v: np.stack(v), *traces), report


__all__ = [
    "Instance",
    "KERNELS",
    "LinearDriftArms",
    "base_values",
    "drifting",
    "grid",
    "kernel_drift",
    "kernel_matrix",
    "known",
    "rkhs_norms",
    "run_instances",
    "sample_instance",
    "sup_variation",
]
