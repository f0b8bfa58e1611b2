"""Problems as Environments: a box, an objective to MAXIMISE, its optimum, optional Gaussian noise."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo.checks import host_number
from jbo.protocols import Environment
from jbo.spaces import Box


class ProblemState(NamedTuple):
    pass


class Problem(Environment):
    """A black-box objective f(x) on `bounds` (shape (2, d), original coordinates), to be maximised.

    `objective(x)` takes one point of shape (d,) in original coordinates and is vmappable; actions in
    the engine are unit-cube points mapped through the bounds. Observations are f(x) + noise_std * N(0,1);
    each step reports the noise-free value f(x_t) and, when known, the optimum f*, from which the
    engine derives the shared metrics (best value, regrets, costs; see jbo.engine).
    """

    name: str = eqx.field(static=True)
    box: Box
    fn: Callable = eqx.field(static=True)
    optimal_value: float | None = eqx.field(static=True)
    optimizer: jax.Array | None
    noise_std: float = eqx.field(static=True, default=0.0)

    @property
    def space(self) -> Box:
        return self.box

    @property
    def bounds(self) -> jax.Array:
        return self.box.bounds

    def _check(self, x, what):
        if jnp.shape(x)[-1:] != (self.dim,):
            raise ValueError(f"{self.name}: {what} must have trailing dimension {self.dim}, got shape {jnp.shape(x)}")

    # objective and objective_unit are plain functions (properties), not methods: a bound method of a
    # Module is a pytree holding the problem's arrays, which jax.jit cannot hash as a function
    @property
    def objective(self) -> Callable:
        """f(x) for x of shape (d,) (or (..., d), mapped) in original coordinates; a plain function
        (jax.jit, grad and vmap take it as it is)."""

        def objective(x):
            self._check(x, "x")
            x = jnp.asarray(x, jnp.float64)
            return self.fn(x) if x.ndim == 1 else jnp.vectorize(self.fn, signature="(d)->()")(x)

        return objective

    @property
    def objective_unit(self) -> Callable:
        """f at unit-cube coordinates u (shape (d,) or (..., d)); a plain function, as `objective`."""

        def objective_unit(u):
            self._check(u, "u")
            return self.objective(self.space.from_unit(jnp.asarray(u, jnp.float64)))

        return objective_unit

    def host_failures(self) -> list[str]:
        """The failed calls of a host objective (:func:`from_callback`) since the last look, one line
        each (the point and the exception), then forgotten; [] for a traced objective. The entry points
        call it after every run and add the lines to the run's non-finite report."""
        fn = self.fn.fn if isinstance(self.fn, _Negated) else self.fn
        host = getattr(fn, "__self__", None)
        return host.take_failures() if isinstance(host, _HostCall) else []

    def with_noise(self, noise_std: float) -> Problem:
        if not (noise_std >= 0 and np.isfinite(noise_std)):
            raise ValueError(f"noise_std must be finite and >= 0, got {noise_std!r}")
        return Problem(self.name, self.box, self.fn, self.optimal_value, self.optimizer, float(noise_std))

    def reset(self, key):
        return ProblemState()

    def step(self, key, state, action, step=None):
        self._check(action, "action")
        f = self.objective_unit(action)
        # no draw without noise: the same y, and a smaller program (a float64 normal's inverse erf
        # was a quarter of a GP-UCB step's optimised HLO)
        y = f if self.noise_std == 0 else f + self.noise_std * jax.random.normal(key, jnp.shape(f))
        metrics = {"value": f}
        if self.optimal_value is not None:
            metrics["optimal_value"] = self.optimal_value
        return state, y, metrics


def from_function(
    fn: Callable,
    bounds,
    name: str = "custom",
    optimal_value: float | None = None,
    optimizer=None,
    noise_std: float = 0.0,
    minimize: bool = False,
) -> Problem:
    """Wrap a traceable jnp function f(x) (x of shape (d,), original coordinates) as a Problem.
    minimize=True: f is to be minimised and `optimal_value` is its minimum; the problem maximises -f
    (values and best values of a run are those of -f; its regrets are f(x) - min f)."""
    if minimize:
        fn = _Negated(fn)
        optimal_value = None if optimal_value is None else -float(optimal_value)
    space = Box(bounds)
    opt = None if optimizer is None else jnp.asarray(optimizer, jnp.float64)
    if opt is not None and opt.shape != (space.dim,):
        raise ValueError(f"optimizer must have shape ({space.dim},), got {opt.shape}")
    return Problem(name, space, fn, None if optimal_value is None else float(optimal_value), opt).with_noise(noise_std)


class _Negated:
    """-f, for a function to minimise (hashable, so the problem stays a static jit argument)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return -self.fn(x)

    def __eq__(self, other):
        return isinstance(other, _Negated) and other.fn == self.fn

    def __hash__(self):
        return hash((_Negated, self.fn))


class _HostCall:
    """A host function wrapped for jax.pure_callback (hashable by identity).

    A call that raises, or returns anything but one number (None, a string, a bool, an array), is a
    *failed evaluation*: the callback returns NaN, so the run spends the step without telling the
    algorithm (the engine's rule for a non-finite value), and the failure is kept, with its point, for
    the post-run check (:meth:`Problem.host_failures`), which names it. An exception raised through
    jax.pure_callback would instead abort the whole compiled program with an internal JAX error."""

    KEPT = 5  # failures kept with their point and exception; the rest are counted

    def __init__(self, fn, name):
        self.fn, self.name = fn, name
        self.failures, self.count = [], 0  # since the last take_failures()

    def __call__(self, x):
        """One number (NaN and inf pass through: the engine counts them as failed evaluations)."""
        point = np.asarray(x)
        try:
            return np.asarray(host_number(self.fn(point), f"{self.name}: the objective at x={point.tolist()}"))
        except Exception as e:  # noqa: BLE001  (any failure of the user's code: a failed evaluation)
            self.count += 1
            if len(self.failures) < self.KEPT:
                self.failures.append((point.tolist(), e))
            return np.asarray(np.nan)

    def take_failures(self) -> list[str]:
        """One line per kept failure since the last call (and how many more), then forget them."""
        lines = [f"x={x} -> {type(e).__name__}: {e}" for x, e in self.failures]
        if self.count > len(self.failures):
            lines.append(f"and {self.count - len(self.failures)} more")
        self.failures, self.count = [], 0
        return lines

    def traced(self, x):
        return jax.pure_callback(self, jax.ShapeDtypeStruct((), jnp.float64), x, vmap_method="sequential")


def from_callback(
    fn: Callable,
    bounds,
    name: str = "host",
    optimal_value: float | None = None,
    noise_std: float = 0.0,
    minimize: bool = False,
) -> Problem:
    """A Problem whose objective runs on the host through jax.pure_callback (inside the scan).

    A call that raises or returns no number is a failed evaluation (spent, not told; see
    jbo.checks), and the run's post-run check names the point and the exception. Prefer jbo.AskTell
    for expensive objectives: it keeps the scan pure and batches across seeds.
    """
    return from_function(
        _HostCall(fn, name).traced, bounds, name, optimal_value, noise_std=noise_std, minimize=minimize
    )
