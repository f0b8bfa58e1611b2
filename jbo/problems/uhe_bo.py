"""The UHE-BO paper's real-world problems (uhe_bo.md 5.3), as REPLACEMENTS: no OpenML / HPOBench here.

* ``uhe_bo:lr_vehicle_like`` (replaces LR-Vehicle, d = 2): multinomial logistic regression trained by
  minibatch SGD in pure JAX (so it runs inside the compiled scan), on a Vehicle-like data set shipped
  with the package (`make_classification(846 rows, 18 features, 10 informative, 4 classes,
  random_state=0)`, `data/uhe_bo_vehicle_like.npz`). x = (log10 alpha, log10 eta0) in [-5, 0]^2: alpha
  the L2 weight, eta0 the step size. Fixed 2/3 - 1/3 split (first 564 rows train after one fixed
  shuffle), features standardised with the training statistics, 20 epochs of batches of 47 rows,
  the step size divided by 5 after every 5 epochs without a lower training loss (sklearn's
  "adaptive" rule, per epoch). Value: test accuracy (maximise). Not sklearn's SGDClassifier (one-vs-
  rest, per-sample steps, 1000 epochs).
* ``uhe_bo:gb_kc1_like`` (replaces XGB-SoftwareDefect, d = 4, host): sklearn's
  HistGradientBoostingClassifier on a kc1-like imbalanced set (`make_classification(2109 rows, 21
  features, weights=[0.85], random_state=0)`, `data/uhe_bo_kc1_like.npz`), 2/3 - 1/3 split;
  x = (log2 learning_rate in [-10, 0], log max_depth in [log 1, log 50] rounded, max_features in
  [0.1, 1] (colsample_bytree's analogue), log2 l2_regularization in [-10, 10]); 100 boosting
  iterations (XGBoost at full fidelity uses 2000). Value: test accuracy. Needs scikit-learn.
* ``uhe_bo:lunar`` (d = 12, host): TuRBO's heuristic controller for gymnasium's LunarLander-v3 with
  weights w in [0, 2]^12; value: mean total reward over 50 fixed episode seeds (0..49). Needs
  gymnasium[box2d] (the `uhe` extra).

The host problems are `jbo.problems.from_callback` objectives (usable in a scan) and plain
functions `*_objective(x)` for `jbo.AskTell`. Unit-cube integer rounding happens only inside the
objective (D26): the optimiser sees continuous values.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jbo.problems.base import Problem, from_callback, from_function

_DATA = Path(__file__).resolve().parent / "data"


# ---------------------------------------------------------------- logistic regression in JAX
@cache
def vehicle_split():
    d = np.load(_DATA / "uhe_bo_vehicle_like.npz")
    x, y = d["x"], d["y"]
    perm = np.random.default_rng(0).permutation(len(y))
    x, y = x[perm], y[perm]
    n_tr = 564  # 2/3 of 846
    mu, sd = x[:n_tr].mean(0), x[:n_tr].std(0)
    x = (x - mu) / sd
    return x[:n_tr], y[:n_tr], x[n_tr:], y[n_tr:]


def sgd_logistic_regression(
    x_tr, y_tr, alpha, eta0, num_classes: int, epochs: int = 20, batch: int = 47, patience: int = 5
):
    """Multinomial logistic regression by minibatch SGD (zero start, batches in row order) with L2
    weight `alpha` on the weights and step `eta0`, divided by 5 after `patience` epochs without a
    new best training loss. Returns (W (p, K), b (K,)). Pure jnp: jit / vmap / scan-safe."""
    n, p = x_tr.shape
    nb = n // batch
    xb = x_tr[: nb * batch].reshape(nb, batch, p)
    yb = jax.nn.one_hot(y_tr[: nb * batch], num_classes).reshape(nb, batch, num_classes)
    yall = jax.nn.one_hot(y_tr, num_classes)

    def loss(params, xs, ys):
        W, b = params
        logits = xs @ W + b
        return -jnp.mean(jnp.sum(ys * jax.nn.log_softmax(logits), -1)) + 0.5 * alpha * jnp.sum(W * W)

    grad = jax.grad(loss)

    def epoch(carry, _):
        params, eta, best, stale = carry

        def step(params, xy):
            g = grad(params, *xy)
            return jax.tree.map(lambda a, ga: a - eta * ga, params, g), None

        params, _ = jax.lax.scan(step, params, (xb, yb))
        cur = loss(params, x_tr, yall)
        cur = jnp.where(jnp.isfinite(cur), cur, jnp.inf)
        improved = cur < best
        stale = jnp.where(improved, 0, stale + 1)
        eta = jnp.where(stale >= patience, eta / 5.0, eta)
        stale = jnp.where(stale >= patience, 0, stale)
        return (params, eta, jnp.minimum(best, cur), stale), None

    init = (
        (jnp.zeros((p, num_classes)), jnp.zeros(num_classes)),
        jnp.asarray(eta0, jnp.float64),
        jnp.inf,
        jnp.asarray(0),
    )
    (params, *_), _ = jax.lax.scan(epoch, init, None, length=epochs)
    return params


def lr_accuracy(x):
    """Test accuracy of the SGD logistic regression at x = (log10 alpha, log10 eta0)."""
    x_tr, y_tr, x_te, y_te = (jnp.asarray(a) for a in vehicle_split())
    W, b = sgd_logistic_regression(x_tr, y_tr, 10.0 ** x[0], 10.0 ** x[1], 4)
    pred = jnp.argmax(x_te @ W + b, -1)
    acc = jnp.mean((pred == y_te).astype(jnp.float64))
    return jnp.where(jnp.all(jnp.isfinite(W)), acc, 0.0)


def lr_vehicle_like(noise_std: float = 0.0) -> Problem:
    return from_function(lr_accuracy, [[-5.0, -5.0], [0.0, 0.0]], "uhe_bo:lr_vehicle_like", noise_std=noise_std)


# ---------------------------------------------------------------- gradient boosting on the host
GB_BOUNDS = np.array([[-10.0, 0.0, 0.1, -10.0], [0.0, math.log(50.0), 1.0, 10.0]])


@cache
def _kc1_split():
    d = np.load(_DATA / "uhe_bo_kc1_like.npz")
    x, y = d["x"], d["y"]
    perm = np.random.default_rng(0).permutation(len(y))
    n_tr = (2 * len(y)) // 3
    return x[perm[:n_tr]], y[perm[:n_tr]], x[perm[n_tr:]], y[perm[n_tr:]]


def gb_objective(x, max_iter: int = 100) -> float:
    """Test accuracy of HistGradientBoostingClassifier at x (original coordinates, see module doc)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if x.shape != (4,):
        raise ValueError(f"uhe_bo:gb_kc1_like takes 4 parameters, got shape {x.shape}")
    depth = int(np.clip(np.round(np.exp(x[1])), 1, 50))
    clf = HistGradientBoostingClassifier(
        learning_rate=2.0 ** x[0],
        max_depth=depth,
        max_features=float(np.clip(x[2], 0.1, 1.0)),
        l2_regularization=2.0 ** x[3],
        max_iter=max_iter,
        early_stopping=False,
        random_state=0,
    )
    x_tr, y_tr, x_te, y_te = _kc1_split()
    clf.fit(x_tr, y_tr)
    return float(np.mean(clf.predict(x_te) == y_te))


def gb_kc1_like(noise_std: float = 0.0) -> Problem:
    return from_callback(gb_objective, GB_BOUNDS, "uhe_bo:gb_kc1_like", noise_std=noise_std)


# ---------------------------------------------------------------- Lunar Lander on the host
def heuristic_action(s, w) -> int:
    """TuRBO's heuristic controller (spec 5.3) for the 8-D LunarLander state s and weights w (12,)."""
    angle_targ = s[0] * w[0] + s[2] * w[1]
    angle_targ = min(max(angle_targ, -w[2]), w[2])
    hover_targ = w[3] * abs(s[0])
    angle_todo = (angle_targ - s[4]) * w[4] - s[5] * w[5]
    hover_todo = (hover_targ - s[1]) * w[6] - s[3] * w[7]
    if s[6] or s[7]:
        angle_todo = w[8]
        hover_todo = -s[3] * w[9]
    if hover_todo > abs(angle_todo) and hover_todo > w[10]:
        return 2
    if angle_todo < -w[11]:
        return 3
    if angle_todo > w[11]:
        return 1
    return 0


def lunar_objective(w, seeds=range(50), max_steps: int = 1000) -> float:
    """Mean total reward of the heuristic controller over the fixed episode seeds (terrains, initial
    positions and velocities are fixed by the seed)."""
    w = np.asarray(w, dtype=np.float64).reshape(-1)
    if w.shape != (12,):  # checked first: a wrong input is named even where gymnasium is missing
        raise ValueError(f"uhe_bo:lunar takes 12 weights, got shape {w.shape}")
    try:
        import gymnasium as gym
    except ImportError as e:  # pragma: no cover - depends on the optional extra
        raise ImportError("uhe_bo:lunar needs gymnasium[box2d]: pip install -e '.[uhe_bo]'") from e
    env = gym.make("LunarLander-v3")
    total = 0.0
    for seed in seeds:
        s, _ = env.reset(seed=int(seed))
        ret = 0.0
        for _ in range(max_steps):
            s, r, terminated, truncated, _ = env.step(heuristic_action(s, w))
            ret += r
            if terminated or truncated:
                break
        total += ret
    env.close()
    return total / len(seeds)


def lunar(noise_std: float = 0.0) -> Problem:
    return from_callback(lunar_objective, np.array([[0.0] * 12, [2.0] * 12]), "uhe_bo:lunar", noise_std=noise_std)


PROBLEMS = {"uhe_bo:lr_vehicle_like": lr_vehicle_like, "uhe_bo:gb_kc1_like": gb_kc1_like, "uhe_bo:lunar": lunar}
