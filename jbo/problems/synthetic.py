"""Synthetic test functions, returned in MAXIMISATION form (standard minimisation forms negated).

Formulas, domains and optima follow the specs (boke.md 6.3, uhe_bo.md 5.2, bocvs.md 4.2) and the
standard domains BoTorch uses; tests check every optimum by dense search.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jbo import kernels
from jbo.problems.base import Problem
from jbo.spaces import Box as Space

_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array([[3689.0, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]])
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
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def _make(name, bounds, fn, optimal_value, optimizer):
    return Problem(name, Space(bounds), fn, float(optimal_value), jnp.asarray(optimizer, jnp.float64))


def _box(lo, hi, d):
    return np.array([[lo] * d, [hi] * d], dtype=np.float64)


# ---------------------------------------------------------------- 1-D and 2-D classics
def forrester_min(x):
    return (6 * x[0] - 2) ** 2 * jnp.sin(12 * x[0] - 4)


def forrester() -> Problem:
    return _make("forrester", [[0.0], [1.0]], lambda x: -forrester_min(x), 6.020740055767083, [0.7572487844])


def branin_min(x):
    a, b, c, r, s, t = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return a * (x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * jnp.cos(x[0]) + s


def branin() -> Problem:
    return _make(
        "branin", [[-5.0, 0.0], [10.0, 15.0]], lambda x: -branin_min(x), -0.39788735772973816, [math.pi, 2.275]
    )


def goldstein_price_min(x):
    x1, x2 = x[0], x[1]
    a = 1 + (x1 + x2 + 1) ** 2 * (19 - 14 * x1 + 3 * x1**2 - 14 * x2 + 6 * x1 * x2 + 3 * x2**2)
    b = 30 + (2 * x1 - 3 * x2) ** 2 * (18 - 32 * x1 + 12 * x1**2 + 48 * x2 - 36 * x1 * x2 + 27 * x2**2)
    return a * b


def goldstein_price(rescaled: bool = False) -> Problem:
    """Standard on [-2, 2]^2 (min 3 at (0, -1)), or Picheny's rescaled log form on [0, 1]^2."""
    if not rescaled:
        return _make("goldstein_price", _box(-2, 2, 2), lambda x: -goldstein_price_min(x), -3.0, [0.0, -1.0])
    g = lambda u: (jnp.log(goldstein_price_min(4 * u - 2)) - 8.693) / 2.427  # noqa: E731
    return _make(
        "goldstein_price_rescaled", _box(0, 1, 2), lambda u: -g(u), -(math.log(3.0) - 8.693) / 2.427, [0.5, 0.25]
    )


def six_hump_camel_min(x):
    x1, x2 = x[0], x[1]
    return (4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2


def six_hump_camel() -> Problem:
    return _make(
        "six_hump_camel",
        [[-3.0, -2.0], [3.0, 2.0]],
        lambda x: -six_hump_camel_min(x),
        1.0316284534898774,
        [0.0898420131, -0.7126564030],
    )


def hartmann_min(x, A, P):
    return -jnp.sum(_H_ALPHA * jnp.exp(-jnp.sum(A * (x - P) ** 2, axis=1)))


def hartmann3() -> Problem:
    return _make(
        "hartmann3",
        _box(0, 1, 3),
        lambda x: -hartmann_min(x, _H3_A, _H3_P),
        3.8627797869493365,
        [0.114614, 0.555649, 0.852547],
    )


def hartmann6() -> Problem:
    return _make(
        "hartmann6",
        _box(0, 1, 6),
        lambda x: -hartmann_min(x, H6_A, H6_P),
        3.3223680114155147,
        [0.20168952, 0.15001069, 0.47687398, 0.27533243, 0.31165162, 0.65730054],
    )


# ---------------------------------------------------------------- any dimension
def _check_dim(name, dim, lo=1):
    if not isinstance(dim, (int, np.integer)) or dim < lo:
        raise ValueError(f"{name}: dim must be an int >= {lo}, got {dim!r}")


def ackley_min(x):
    d = x.shape[0]
    return (
        -20 * jnp.exp(-0.2 * jnp.sqrt(jnp.sum(x**2) / d + 1e-300))
        - jnp.exp(jnp.sum(jnp.cos(2 * jnp.pi * x)) / d)
        + 20
        + math.e
    )


def ackley(dim: int = 2) -> Problem:
    _check_dim("ackley", dim)
    return _make(f"ackley{dim}", _box(-32.768, 32.768, dim), lambda x: -ackley_min(x), 0.0, np.zeros(dim))


def levy_min(x):
    w = 1 + (x - 1) / 4
    head = jnp.sin(jnp.pi * w[0]) ** 2
    mid = jnp.sum((w[:-1] - 1) ** 2 * (1 + 10 * jnp.sin(jnp.pi * w[:-1] + 1) ** 2))
    tail = (w[-1] - 1) ** 2 * (1 + jnp.sin(2 * jnp.pi * w[-1]) ** 2)
    return head + mid + tail


def levy(dim: int = 2) -> Problem:
    _check_dim("levy", dim)
    return _make(f"levy{dim}", _box(-10, 10, dim), lambda x: -levy_min(x), 0.0, np.ones(dim))


def rosenbrock_min(x):
    return jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (x[:-1] - 1) ** 2)


def rosenbrock(dim: int = 2, rescaled: bool = False) -> Problem:
    """Standard on [-5, 10]^d (min 0 at ones); rescaled: Picheny's 4-D form on [0, 1]^4."""
    _check_dim("rosenbrock", dim, lo=2)
    if not rescaled:
        return _make(f"rosenbrock{dim}", _box(-5, 10, dim), lambda x: -rosenbrock_min(x), 0.0, np.ones(dim))
    if dim != 4:
        raise ValueError(f"rosenbrock: the rescaled form is defined for dim=4 only, got dim={dim}")
    g = lambda u: (rosenbrock_min(15 * u - 5) - 3.827e5) / 3.755e5  # noqa: E731
    return _make("rosenbrock4_rescaled", _box(0, 1, 4), lambda u: -g(u), 3.827e5 / 3.755e5, np.full(4, 0.4))


def sphere6_modified() -> Problem:
    """SFU-code modified sphere on [0, 1]^6: g = (sum 2^i u_i^2 - 1745) / 899, min at the corner u = 0."""
    w = 2.0 ** jnp.arange(1, 7)
    return _make(
        "sphere6_modified", _box(0, 1, 6), lambda u: -(jnp.sum(w * u**2) - 1745.0) / 899.0, 1745.0 / 899.0, np.zeros(6)
    )


def deceptive_g(x, a):
    return jnp.where(
        x <= 0.8 * a,
        -x / a + 0.8,
        jnp.where(
            x <= a, 5 * x / a - 4, jnp.where(x <= (1 + 4 * a) / 5, 5 * (x - a) / (a - 1) + 1, (x - 1) / (1 - a) + 0.8)
        ),
    )


def deceptive(n: int = 2, beta: float = 2.0) -> Problem:
    """Canonical continuous deceptive function (uhe_bo.md 5.2, D20): F = (mean_i g_i(x_i))^beta, F* = 1."""
    _check_dim("deceptive", n)
    alpha = jnp.arange(1, n + 1) / (n + 1.0)
    return _make(
        f"deceptive{n}",
        _box(0, 1, n),
        lambda x: jnp.mean(deceptive_g(x, alpha)) ** beta,
        1.0,
        np.arange(1, n + 1) / (n + 1.0),
    )


def h1(plus_inside: bool = False) -> Problem:
    """van Soest & Casius h1 on [-100, 100]^2, F* = 2 at (8.6998, 6.7665) (uhe_bo.md D19)."""
    c1, c2 = 8.6998, 6.7665

    def f(x):
        num = jnp.sin(x[0] - x[1] / 8) ** 2 + jnp.sin(x[1] + x[0] / 8) ** 2
        r2 = (x[0] - c1) ** 2 + (x[1] - c2) ** 2
        den = jnp.sqrt(r2 + 1) if plus_inside else jnp.sqrt(r2) + 1
        return num / den

    opt = float(f(jnp.array([c1, c2])))
    return _make("h1", _box(-100, 100, 2), f, opt, [c1, c2])


# ---------------------------------------------------------------- GP sample paths
def _dense_argmax(fn_np, grad_np, dim, rng):
    """Global maximum of a smooth function on [0, 1]^d by dense screening plus L-BFGS-B polishing."""
    from scipy.optimize import minimize

    if dim == 1:
        pts = np.linspace(0, 1, 20001)[:, None]
    elif dim == 2:
        g = np.linspace(0, 1, 401)
        pts = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    else:
        pts = rng.uniform(size=(200000, dim))
    vals = fn_np(pts)
    best_x, best_v = pts[np.argmax(vals)], vals.max()
    for x0 in pts[np.argsort(vals)[-10:]]:
        r = minimize(
            lambda x: -fn_np(x[None])[0], x0, jac=lambda x: -grad_np(x), method="L-BFGS-B", bounds=[(0, 1)] * dim
        )
        if -r.fun > best_v:
            best_x, best_v = r.x, -r.fun
    return best_x, best_v


def gp_sample(
    dim: int = 1,
    kernel: str = "matern52",
    lengthscale: float = 0.1,
    outputscale: float = 1.0,
    seed: int = 0,
    num_features: int = 1024,
) -> Problem:
    """A GP prior sample path on [0, 1]^d with a known kernel and lengthscale (random Fourier features).

    The path is fixed by `seed`; its maximum is found at construction by dense search plus polishing.
    """
    _check_dim("gp_sample", dim)
    params = kernels.KernelParams(jnp.full((dim,), float(lengthscale)), float(outputscale))
    ff, w = kernels.prior_sample_path(jax.random.key(seed), kernels.check_name(kernel), params, dim, num_features)
    f = lambda x: kernels.feature_map(ff, x) @ w  # noqa: E731
    fj = jax.jit(jax.vmap(f))
    gj = jax.jit(jax.grad(f))
    x_star, f_star = _dense_argmax(
        lambda p: np.asarray(fj(jnp.asarray(p))),
        lambda x: np.asarray(gj(jnp.asarray(x))),
        dim,
        np.random.default_rng(seed),
    )
    return _make(f"gp_sample_{kernel}_d{dim}_l{lengthscale:g}_s{seed}", _box(0, 1, dim), f, float(f_star), x_star)
