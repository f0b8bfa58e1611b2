"""Host-evaluated hyper-parameter tuning objectives of the BOKE paper (Fig. 9): 5-fold CV R^2.

Random forest (5 hyper-parameters) and XGBoost (7), with the spec's bounds (boke.md 6.5): every
parameter maps linearly from [0, 1]; integers map to [lo, hi + 1) and are floored. CV is
KFold(5, shuffle=True, random_state=0), models use random_state=0, so the objective is
deterministic. These objectives run on the host (scikit-learn / xgboost cannot be traced): drive
them with jbo.AskTell.

DATASETS ARE SUBSTITUTES. The paper uses California Housing and Wine Quality (red); neither can be
downloaded here and no PyPI package ships them. We use, and label everywhere:
  * "friedman1" for California Housing: sklearn.datasets.make_friedman1(n_samples=2000,
    n_features=8, noise=1.0, random_state=0) -- generated, 8 features like California's 8;
  * "diabetes" for Wine Quality: sklearn.datasets.load_diabetes() -- shipped with scikit-learn,
    a small real tabular regression set (442 x 10) like red wine's 1,599 x 11.
Needs the `hpo` extra (scikit-learn, xgboost-cpu).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SUBSTITUTES = {"friedman1": "California Housing", "diabetes": "Wine Quality (red)"}
# (name, kind, lo, hi)
RF_SPACE = (
    ("n_estimators", "int", 10, 200),
    ("max_depth", "int", 2, 30),
    ("min_samples_split", "int", 2, 20),
    ("max_features", "real", 0.1, 1.0),
    ("min_impurity_decrease", "real", 0.0, 0.01),
)
XGB_SPACE = (
    ("n_estimators", "int", 10, 300),
    ("max_depth", "int", 2, 10),
    ("learning_rate", "real", 0.01, 0.3),
    ("subsample", "real", 0.5, 1.0),
    ("colsample_bytree", "real", 0.5, 1.0),
    ("gamma", "real", 0.0, 5.0),
    ("min_child_weight", "real", 1.0, 10.0),
)
SPACES = {"rf": RF_SPACE, "xgb": XGB_SPACE}


def load_dataset(name: str):
    from sklearn import datasets

    if name == "friedman1":
        return datasets.make_friedman1(n_samples=2000, n_features=8, noise=1.0, random_state=0)
    if name == "diabetes":
        return datasets.load_diabetes(return_X_y=True)
    raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(SUBSTITUTES)} (substitutes, see module doc)")


def decode(space, u) -> dict:
    """Unit-cube point -> hyper-parameters (integers floored on [lo, hi + 1))."""
    u = np.asarray(u, dtype=np.float64)
    if u.shape != (len(space),):
        raise ValueError(f"expected a point of shape ({len(space)},), got {u.shape}")
    out = {}
    for (name, kind, lo, hi), v in zip(space, np.clip(u, 0.0, 1.0)):
        out[name] = min(int(np.floor(lo + v * (hi + 1 - lo))), hi) if kind == "int" else float(lo + v * (hi - lo))
    return out


def make_model(model: str, hp: dict):
    if model == "rf":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(random_state=0, n_jobs=-1, **hp)
    if model == "xgb":
        from xgboost import XGBRegressor

        return XGBRegressor(random_state=0, n_jobs=-1, **hp)
    raise ValueError(f"unknown model {model!r}; choose 'rf' or 'xgb'")


def cv_objective(model: str, dataset: str) -> tuple[np.ndarray, Callable]:
    """(bounds (2, d) of the unit cube, f(u) = mean 5-fold CV R^2 at the decoded hyper-parameters)."""
    from sklearn.model_selection import KFold, cross_val_score

    if model not in SPACES:
        raise ValueError(f"unknown model {model!r}; choose 'rf' or 'xgb'")
    space = SPACES[model]
    X, y = load_dataset(dataset)
    folds = KFold(5, shuffle=True, random_state=0)

    def f(u):
        return float(np.mean(cross_val_score(make_model(model, decode(space, u)), X, y, cv=folds, scoring="r2")))

    return np.stack([np.zeros(len(space)), np.ones(len(space))]), f


def problem(model: str, dataset: str):
    """The tuning objective as a registered Problem (optimum unknown). It runs on the host through
    jax.pure_callback inside a scan; for real studies drive it with jbo.AskTell instead (the docs
    and experiments/boke/hpo.py do), which keeps the compiled program pure."""
    from jbo.problems.base import from_callback

    bounds, f = cv_objective(model, dataset)
    return from_callback(f, bounds, name=f"hpo:{model}_{dataset}")
