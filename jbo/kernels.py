"""Stationary kernels k(params, x, x') and random-Fourier-feature approximations.

Every kernel is a pure function of a :class:`KernelParams` pytree and two points of shape (d,).
Lengthscales are ARD (shape (d,), or a scalar broadcast over dimensions); ``outputscale`` is the
prior variance k(x, x). All functions are jit-, vmap- and grad-safe, including at x == x'.

A kernel is named by a built-in name (NAMES), a name given to a user's profile with :func:`register`
(or by an installed plug-in's ``jbo.kernels`` entry point, see jbo.plugins), or the profile itself.

A kernel can also be an *object* (:class:`Kernel`): ``Matern52() + Periodic()``, ``2.0 * RBF()``,
``Linear() * Matern32(active_dims=(0,))``. Each part carries its own hyper-parameters (log values
in a params pytree: :meth:`Kernel.init_params`), bounds and initial values; the functions below
(gram, cross, kernel, fourier_features) accept an object where a name goes, its parameters in the
``kernel`` field of :class:`KernelParams` (or passed directly).
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any, NamedTuple

import chex
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import plugins

NAMES = ("se", "matern12", "matern32", "matern52", "rq")  # the built-in kernels (names() adds registered ones)


class KernelParams(NamedTuple):
    lengthscale: jax.Array  # (d,) or ()
    outputscale: jax.Array | float = 1.0
    alpha: jax.Array | float = 1.0  # rational-quadratic shape; ignored by the others
    kernel: Any = ()  # a kernel object's own parameters (Kernel.init_params); () for a named kernel


def _object_params(params):
    """A kernel object's parameters: the `kernel` field of a KernelParams, or the pytree itself."""
    return params.kernel if isinstance(params, KernelParams) else params


def scaled_sqdist(x1: jax.Array, x2: jax.Array, lengthscale) -> jax.Array:
    """||(x1 - x2) / lengthscale||^2, computed by direct broadcasting (accurate at short range)."""
    z = (x1 - x2) / lengthscale
    return jnp.sum(z * z, axis=-1)


def _coordinate_sum(diff, dim: int):
    """sum_j diff(j)**2 over the d coordinates as an unrolled Python sum of d elementwise terms.

    Callers difference first and scale after, (x_j - y_j) / l_j: a point's distance to itself is then
    exactly 0 under jit. Scaling first, x_j / l_j - y_j / l_j, let XLA:CPU contract the subtraction
    into an FMA whose rounding residue made the diagonal ~1e-17 instead of 0, and the infinite
    derivative of sqrt there turned the Matern LML gradient into NaN (found by the scipy-optimum test).

    XLA:CPU fuses this into one loop over the output; a (d, ...) broadcast reduced over its d axis
    (or a trailing d axis) was 4-26x slower at d = 2 for (562, 50) blocks (measured: 5.9 ms -> 0.22 ms
    for 32 such blocks)."""
    return sum(diff(j) ** 2 for j in range(dim))


def _pairwise_diff(X1: jax.Array, X2: jax.Array, lengthscale):
    """j -> the (n1, n2) block (X1[i, j] - X2[k, j]) / l_j (difference first; see _coordinate_sum)."""
    inv = jnp.broadcast_to(1.0 / jnp.asarray(lengthscale), (X1.shape[1],))
    return lambda j: (X1[:, j, None] - X2[None, :, j]) * inv[j]


def sqdist_to_rows(x: jax.Array, X: jax.Array, lengthscale=1.0) -> jax.Array:
    """||(x - X_i) / lengthscale||^2 for every row of X (n, d) -> (n,); lengthscale scalar or (d,).

    Direct differences (accurate at short range), one coordinate at a time (see _coordinate_sum)."""
    inv = jnp.broadcast_to(1.0 / jnp.asarray(lengthscale), (X.shape[1],))
    return _coordinate_sum(lambda j: (x[j] - X[:, j]) * inv[j], X.shape[1])


def _safe_sqrt(r2):
    # Double-where: sqrt has an infinite derivative at 0; this keeps gradients finite (and 0).
    pos = r2 > 0.0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, r2, 1.0)), 0.0)


def _se(r2, alpha):
    return jnp.exp(-0.5 * r2)


def _matern12(r2, alpha):
    return jnp.exp(-_safe_sqrt(r2))


def _matern32(r2, alpha):
    r = jnp.sqrt(3.0) * _safe_sqrt(r2)
    return (1.0 + r) * jnp.exp(-r)


def _matern52(r2, alpha):
    r = jnp.sqrt(5.0) * _safe_sqrt(r2)
    return (1.0 + r + r * r / 3.0) * jnp.exp(-r)


def _rq(r2, alpha):
    return (1.0 + r2 / (2.0 * alpha)) ** (-alpha)


_PROFILES: dict[str, Callable] = {
    "se": _se,
    "matern12": _matern12,
    "matern32": _matern32,
    "matern52": _matern52,
    "rq": _rq,
}


# The built-in profiles whose slope dk/dr2 stays bounded as r2 -> 0 (Matern-1/2's grows like 1 / sqrt(r2);
# a user's profile is not assumed either way): jbo.gp.lml_and_grad's product form is accurate for these.
BOUNDED_SLOPE = frozenset({"se", "matern32", "matern52", "rq"})

REGISTERED: dict[str, Callable] = {}  # name -> a user's profile r2 -> k(r2) / outputscale


def _load_plugins() -> None:
    plugins.load_entry_points("jbo.kernels", register, REGISTERED.get)


def names() -> list[str]:
    """Every kernel name: the built-ins (NAMES), then registered and installed plug-ins' profiles."""
    _load_plugins()
    return list(NAMES) + sorted(REGISTERED)


def register(name: str, profile: Callable, replace: bool = False) -> None:
    """Give a stationary profile r2 -> k(r2) / outputscale a name that works wherever a kernel name
    does: GPModel(kernel=name), a GP algorithm's model= option, a study config's options. A name
    already registered is refused unless replace=True; the built-in names are never replaced (other
    code, random Fourier features for one, relies on what they mean)."""
    if isinstance(name, str) and name in NAMES:
        raise ValueError(f"register: {name!r} is a built-in kernel and cannot be replaced; choose another name")
    plugins.check_entry("kernel", name, profile, REGISTERED, replace)
    if name in REGISTERED and REGISTERED[name] is not profile:
        jax.clear_caches()  # compiled programs are keyed by the name, not by the profile it stood for
    REGISTERED[name] = profile


def check_name(name) -> str | Callable:
    """A kernel name (built-in or registered), or a user's stationary profile: a callable r2 -> k(r2) /
    outputscale (r2 the lengthscale-scaled squared distance, any shape; k(0) should be 1). A profile,
    or the name it is registered under, works everywhere a built-in does (GP fits, posteriors,
    acquisitions) except random Fourier features."""
    if isinstance(name, Kernel):
        return name
    if callable(name):
        return name
    if isinstance(name, str):
        if name in _PROFILES or name in REGISTERED:
            return name
        _load_plugins()
        if name in REGISTERED:
            return name
    raise ValueError(
        f"unknown kernel {name!r}; choose one of {names()}, register a profile with "
        f"jbo.kernels.register(name, profile), or pass a profile r2 -> k(r2)"
    )


def kernel(name) -> Callable[[KernelParams, jax.Array, jax.Array], jax.Array]:
    """Return k(params, x1, x2) -> scalar for the named kernel (or a user profile, see check_name, or a
    kernel object)."""
    check_name(name)
    if isinstance(name, Kernel):
        return lambda params, x1, x2: name.gram(_object_params(params), x1[None], x2[None])[0, 0]

    def k(params: KernelParams, x1, x2):
        return from_sqdist(name, params, scaled_sqdist(x1, x2, params.lengthscale))

    return k


def sqdist_matrix(X1: jax.Array, X2: jax.Array, lengthscale=1.0) -> jax.Array:
    """||(X1[i] - X2[j]) / lengthscale||^2, shape (n1, n2) (direct differences; see _coordinate_sum)."""
    return _coordinate_sum(_pairwise_diff(X1, X2, lengthscale), X1.shape[1])


def coordinate_sqdists(X1: jax.Array, X2: jax.Array, lengthscale=1.0) -> jax.Array:
    """The d per-coordinate terms ((X1[i, j] - X2[k, j]) / l_j)^2, shape (d, n1, n2): summed over the
    first axis they are sqdist_matrix (used where each coordinate's term is needed, e.g. the
    lengthscale gradient of the marginal likelihood)."""
    diff = _pairwise_diff(X1, X2, lengthscale)
    return jnp.stack([diff(j) ** 2 for j in range(X1.shape[1])])


def from_sqdist(name: str, params: KernelParams, r2: jax.Array) -> jax.Array:
    """k as a function of the lengthscale-scaled squared distance r2 (any shape). Lets a caller that
    owns part of r2 (a fixed block of coordinates) precompute it: r2 is additive over coordinates.
    Named kernels and profiles only: a kernel object is refused (use its gram or cross)."""
    if isinstance(name, Kernel):
        raise ValueError(f"from_sqdist needs a named stationary kernel or profile, not the kernel object {name!r}")
    if callable(name):
        return params.outputscale * name(r2)
    if check_name(name) in REGISTERED:
        return params.outputscale * REGISTERED[name](r2)
    return params.outputscale * _PROFILES[name](r2, params.alpha)


def gram(name: str, params: KernelParams, X1: jax.Array, X2: jax.Array) -> jax.Array:
    """Cross-covariance matrix K[i, j] = k(X1[i], X2[j]), shape (n1, n2)."""
    chex.assert_rank([X1, X2], 2)
    chex.assert_equal_shape_suffix([X1, X2], 1)
    if isinstance(name, Kernel):
        return name.gram(_object_params(params), X1, X2)
    return from_sqdist(name, params, sqdist_matrix(X1, X2, params.lengthscale))


def cross(name: str, params: KernelParams, x: jax.Array, X: jax.Array) -> jax.Array:
    """k(x, X[i]) for one point x (d,) against rows of X (n, d) -> (n,)."""
    if isinstance(name, Kernel):
        return name.cross(_object_params(params), x, X)
    return from_sqdist(name, params, sqdist_to_rows(x, X, params.lengthscale))


# ---------------------------------------------------------------- random Fourier features
_MATERN_NU = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}
FOURIER = ("se", *_MATERN_NU)  # the kernels with random Fourier features (Thompson sampling)


class FourierFeatures(NamedTuple):
    """phi(x) = sqrt(2 s / D) cos(W x + b); E[phi(x) . phi(x')] = k(x, x')."""

    frequencies: jax.Array  # (D, d), already divided by the lengthscales
    phases: jax.Array  # (D,)
    outputscale: jax.Array


def has_fourier_features(kernel) -> bool:
    """Whether :func:`fourier_features` can draw features of this kernel: a named SE or Matern kernel,
    or an object equal to one (RBF, Matern12/32/52 on every coordinate, possibly inside a Scale)."""
    if isinstance(kernel, Kernel):
        with jax.ensure_compile_time_eval():  # a handful of scalars: eager, no program
            return kernel.fourier_spec(kernel.init_params(1)) is not None
    return isinstance(kernel, str) and kernel in FOURIER


def fourier_features(key, name: str, params: KernelParams, dim: int, num_features: int) -> FourierFeatures:
    """Draw an RFF approximation (Rahimi & Recht) of an SE or Matern kernel.

    SE: omega ~ N(0, I). Matern-nu: omega is multivariate Student-t with 2 nu degrees of freedom,
    omega = z * sqrt(nu / g), g ~ Gamma(nu, 1). Frequencies are divided by the lengthscales.
    A kernel object that is one of these (RBF, Matern12/32/52 on every coordinate, possibly inside a
    Scale) draws exactly the features of the named kernel; any other object is refused.
    """
    if isinstance(name, Kernel):
        spec = name.fourier_spec(_object_params(params))
        if spec is None:
            raise ValueError(
                f"random Fourier features exist for SE and Matern kernels (RBF, Matern12/32/52 on every "
                f"coordinate, optionally scaled), not for the kernel object {name!r}"
            )
        named, lengthscale, outputscale = spec
        return fourier_features(key, named, KernelParams(lengthscale, outputscale), dim, num_features)
    if callable(name) or name not in FOURIER:
        raise ValueError(f"random Fourier features exist for SE and Matern kernels, not {name!r}")
    kz, kg, kb = jax.random.split(key, 3)
    z = jax.random.normal(kz, (num_features, dim))
    if name != "se":
        nu = _MATERN_NU[name]
        g = jax.random.gamma(kg, nu, (num_features, 1))
        z = z * jnp.sqrt(nu / g)
    ls = jnp.broadcast_to(jnp.asarray(params.lengthscale, dtype=z.dtype), (dim,))
    phases = jax.random.uniform(kb, (num_features,), maxval=2.0 * jnp.pi)
    return FourierFeatures(z / ls, phases, jnp.asarray(params.outputscale, dtype=z.dtype))


def feature_map(ff: FourierFeatures, x: jax.Array) -> jax.Array:
    """phi(x) for x of shape (..., d) -> (..., D)."""
    num = ff.phases.shape[0]
    return jnp.sqrt(2.0 * ff.outputscale / num) * jnp.cos(x @ ff.frequencies.T + ff.phases)


def prior_sample_path(key, name: str, params: KernelParams, dim: int, num_features: int = 1024):
    """A GP prior sample path f(x) = phi(x) . w, w ~ N(0, I): returns (features, weights)."""
    kf, kw = jax.random.split(key)
    ff = fourier_features(kf, name, params, dim, num_features)
    return ff, jax.random.normal(kw, (num_features,))


# ---------------------------------------------------------------- kernel objects
def describe(kernel) -> str:
    """A short readable name of a kernel: the name, a profile's function name, or an object's repr."""
    if isinstance(kernel, str):
        return kernel
    if isinstance(kernel, Kernel):
        return repr(kernel)
    return getattr(kernel, "__name__", repr(kernel))


def _check_bounds(owner: str, name: str, bounds) -> None:
    lo, hi = bounds
    if not (0 < lo < hi):
        raise ValueError(f"{owner}: {name}_bounds need 0 < lo < hi, got ({lo}, {hi})")


def _num(v) -> str:
    return f"{v:g}" if isinstance(v, Real) else repr(v)


class Kernel(eqx.Module):
    """A kernel as a small composable object: static configuration only (hashable, so a GPModel holding
    one stays a static part of compiled programs); its hyper-parameters live in a separate params
    pytree of unconstrained log values (:meth:`init_params`), projected onto the value-space bounds of
    each part by :meth:`clip`. ``k1 + k2`` is a :class:`Sum`, ``k1 * k2`` a :class:`Product`, ``c * k``
    (c a number) a :class:`Scale` starting at outputscale c, and ``k + c`` adds a :class:`Constant`.
    Every method is jit-, vmap- and grad-safe, also at x == x'."""

    def init_params(self, dim: int):
        """The initial hyper-parameters (log values) for inputs of dimension dim."""
        raise NotImplementedError

    def clip(self, params):
        """Project params onto the bounds (in log space)."""
        raise NotImplementedError

    def trainable(self, dim: int):
        """A pytree like init_params(dim): 1.0 where a fit may move a parameter, 0.0 where it is fixed."""
        raise NotImplementedError

    def values(self, params) -> dict:
        """The hyper-parameter values (exp of the log values), keyed by name, for reading."""
        raise NotImplementedError

    def gram(self, params, X1: jax.Array, X2: jax.Array) -> jax.Array:
        """K[i, j] = k(X1[i], X2[j]), shape (n1, n2)."""
        raise NotImplementedError

    def diag(self, params, X: jax.Array) -> jax.Array:
        """The prior variances k(X[i], X[i]), shape (n,)."""
        raise NotImplementedError

    def cross(self, params, x: jax.Array, X: jax.Array) -> jax.Array:
        """k(x, X[i]) for one point x (d,) against the rows of X (n, d) -> (n,)."""
        return self.gram(params, x[None], X)[0]

    def fourier_spec(self, params):
        """(name, lengthscale, outputscale) of the named kernel this object equals, for random Fourier
        features, or None (the default) when it has none."""
        return None

    def __add__(self, other):
        if isinstance(other, Real):
            other = Constant(float(other))
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum((self, other))

    def __radd__(self, other):
        if isinstance(other, Real):
            return Sum((Constant(float(other)), self))
        return NotImplemented

    def __mul__(self, other):
        if isinstance(other, Real):
            return Scale(self, float(other))
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product((self, other))

    def __rmul__(self, other):
        if isinstance(other, Real):
            return Scale(self, float(other))
        return NotImplemented


class _Leaf(Kernel):
    """A kernel with its own hyper-parameters (no parts). Subclasses list them in _spec(dim):
    (name, initial value, bounds, per-coordinate?). ``active_dims``: the input columns it reads (all by
    default); per-coordinate parameters then have one entry per active column. ``fixed``: names of
    hyper-parameters a fit keeps at their initial value."""

    def _spec(self):
        raise NotImplementedError

    def _dim(self, dim: int) -> int:
        active = getattr(self, "active_dims", None)
        return dim if active is None else len(active)

    def _select(self, X):
        active = getattr(self, "active_dims", None)
        return X if active is None else X[..., list(active)]

    def __check_init__(self):
        names = []
        for name, init, bounds, _ in self._spec():
            _check_bounds(type(self).__name__, name, bounds)
            if np.any(np.asarray(init) <= 0):
                raise ValueError(f"{type(self).__name__}: the initial {name} must be > 0, got {init}")
            names.append(name)
        bad = set(getattr(self, "fixed", ())) - set(names)
        if bad:
            raise ValueError(f"{type(self).__name__}: unknown fixed parameter(s) {sorted(bad)}; choose from {names}")

    def _shape(self, per_dim: bool, dim: int):
        return (self._dim(dim),) if per_dim else ()

    def init_params(self, dim: int):
        return {
            f"log_{name}": jnp.log(jnp.broadcast_to(jnp.asarray(init, jnp.float64), self._shape(per, dim)))
            for name, init, _, per in self._spec()
        }

    def clip(self, params):
        return {
            f"log_{name}": jnp.clip(params[f"log_{name}"], float(np.log(lo)), float(np.log(hi)))
            for name, _, (lo, hi), _ in self._spec()
        }

    def trainable(self, dim: int):
        fixed = getattr(self, "fixed", ())
        return {
            f"log_{name}": jnp.full(self._shape(per, dim), 0.0 if name in fixed else 1.0)
            for name, _, _, per in self._spec()
        }

    def values(self, params) -> dict:
        return {name: jnp.exp(params[f"log_{name}"]) for name, _, _, _ in self._spec()}

    def _options(self) -> str:
        active = getattr(self, "active_dims", None)
        return "" if active is None else f"active_dims={tuple(active)}"

    def __repr__(self):
        return f"{type(self).__name__}({self._options()})"


class _Stationary(_Leaf):
    """k depends on r2 = sum_j ((x_j - x'_j) / l_j)^2 only (ARD lengthscales l, one per active column;
    one shared lengthscale when ard=False)."""

    lengthscale: Any = eqx.field(static=True, default=0.2)
    lengthscale_bounds: tuple = eqx.field(static=True, default=(1e-3, 1e2))
    ard: bool = eqx.field(static=True, default=True)
    active_dims: tuple | None = eqx.field(static=True, default=None)
    fixed: tuple = eqx.field(static=True, default=())

    def _spec(self):
        return (("lengthscale", self.lengthscale, self.lengthscale_bounds, self.ard),)

    def _profile(self, r2, params):
        raise NotImplementedError

    def gram(self, params, X1, X2):
        X1, X2 = self._select(X1), self._select(X2)
        ls = jnp.exp(params["log_lengthscale"])
        return self._profile(sqdist_matrix(X1, X2, ls), params)

    def cross(self, params, x, X):
        x, X = self._select(x), self._select(X)
        return self._profile(sqdist_to_rows(x, X, jnp.exp(params["log_lengthscale"])), params)

    def diag(self, params, X):
        return jnp.ones(X.shape[:-1])

    def fourier_spec(self, params):
        name = {RBF: "se", Matern12: "matern12", Matern32: "matern32", Matern52: "matern52"}.get(type(self))
        if name is None or self.active_dims is not None:
            return None
        return name, jnp.exp(params["log_lengthscale"]), 1.0


class RBF(_Stationary):
    """Squared exponential: k(x, x') = exp(-r^2 / 2), r^2 = sum_j ((x_j - x'_j) / l_j)^2.
    Hyper-parameters: lengthscale l (one per active column; shared when ard=False). k(x, x) = 1."""

    def _profile(self, r2, params):
        return _se(r2, None)


class Matern12(_Stationary):
    """Matern 1/2 (exponential): k(x, x') = exp(-r), r = ||(x - x') / l||. Hyper-parameters: lengthscale
    l (ARD). k(x, x) = 1."""

    def _profile(self, r2, params):
        return _matern12(r2, None)


class Matern32(_Stationary):
    """Matern 3/2: k(x, x') = (1 + sqrt(3) r) exp(-sqrt(3) r), r = ||(x - x') / l||. Hyper-parameters:
    lengthscale l (ARD). k(x, x) = 1."""

    def _profile(self, r2, params):
        return _matern32(r2, None)


class Matern52(_Stationary):
    """Matern 5/2: k(x, x') = (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r), r = ||(x - x') / l||.
    Hyper-parameters: lengthscale l (ARD). k(x, x) = 1."""

    def _profile(self, r2, params):
        return _matern52(r2, None)


class RationalQuadratic(_Stationary):
    """Rational quadratic: k(x, x') = (1 + r^2 / (2 alpha))^(-alpha), r^2 = sum_j ((x_j - x'_j) / l_j)^2.
    Hyper-parameters: lengthscale l (ARD) and the shape alpha > 0 (alpha -> inf gives the RBF).
    k(x, x) = 1."""

    alpha: float = eqx.field(static=True, default=1.0)
    alpha_bounds: tuple = eqx.field(static=True, default=(1e-2, 1e2))

    def _spec(self):
        return super()._spec() + (("alpha", self.alpha, self.alpha_bounds, False),)

    def _profile(self, r2, params):
        return _rq(r2, jnp.exp(params["log_alpha"]))


class Periodic(_Leaf):
    """Periodic (exp-sine-squared): k(x, x') = exp(-2 sum_j sin^2(pi (x_j - x'_j) / p) / l_j^2).
    Hyper-parameters: lengthscale l (one per active column; shared when ard=False) and the period p
    (shared). For one column it is scikit-learn's ExpSineSquared. k(x, x) = 1; the sine of the
    difference (no distance, no square root) keeps gradients finite at x == x'."""

    lengthscale: Any = eqx.field(static=True, default=1.0)
    period: float = eqx.field(static=True, default=1.0)
    lengthscale_bounds: tuple = eqx.field(static=True, default=(1e-2, 1e2))
    period_bounds: tuple = eqx.field(static=True, default=(1e-2, 1e1))
    ard: bool = eqx.field(static=True, default=True)
    active_dims: tuple | None = eqx.field(static=True, default=None)
    fixed: tuple = eqx.field(static=True, default=())

    def _spec(self):
        return (
            ("lengthscale", self.lengthscale, self.lengthscale_bounds, self.ard),
            ("period", self.period, self.period_bounds, False),
        )

    def _terms(self, params, diff, dim):
        inv_ls = jnp.broadcast_to(jnp.exp(-params["log_lengthscale"]), (dim,))
        freq = jnp.pi * jnp.exp(-params["log_period"])
        return sum((jnp.sin(freq * diff(j)) * inv_ls[j]) ** 2 for j in range(dim))

    def gram(self, params, X1, X2):
        X1, X2 = self._select(X1), self._select(X2)
        s = self._terms(params, lambda j: X1[:, j, None] - X2[None, :, j], X1.shape[-1])
        return jnp.exp(-2.0 * s)

    def cross(self, params, x, X):
        x, X = self._select(x), self._select(X)
        return jnp.exp(-2.0 * self._terms(params, lambda j: x[j] - X[:, j], X.shape[-1]))

    def diag(self, params, X):
        return jnp.ones(X.shape[:-1])


class Linear(_Leaf):
    """Linear (dot product): k(x, x') = offset + variance * sum_j x_j x'_j over the active columns.
    Hyper-parameters: variance and offset (both > 0). Not stationary: k(x, x) = offset + variance ||x||^2.
    scikit-learn's DotProduct(sigma_0) is offset = sigma_0^2, variance = 1."""

    variance: float = eqx.field(static=True, default=1.0)
    offset: float = eqx.field(static=True, default=1.0)
    variance_bounds: tuple = eqx.field(static=True, default=(1e-4, 1e2))
    offset_bounds: tuple = eqx.field(static=True, default=(1e-6, 1e2))
    active_dims: tuple | None = eqx.field(static=True, default=None)
    fixed: tuple = eqx.field(static=True, default=())

    def _spec(self):
        return (
            ("offset", self.offset, self.offset_bounds, False),
            ("variance", self.variance, self.variance_bounds, False),
        )

    def gram(self, params, X1, X2):
        X1, X2 = self._select(X1), self._select(X2)
        dot = sum(X1[:, j, None] * X2[None, :, j] for j in range(X1.shape[-1]))
        return jnp.exp(params["log_offset"]) + jnp.exp(params["log_variance"]) * dot

    def cross(self, params, x, X):
        x, X = self._select(x), self._select(X)
        return jnp.exp(params["log_offset"]) + jnp.exp(params["log_variance"]) * (X @ x)

    def diag(self, params, X):
        X = self._select(X)
        return jnp.exp(params["log_offset"]) + jnp.exp(params["log_variance"]) * jnp.sum(X * X, axis=-1)


class Constant(_Leaf):
    """Constant: k(x, x') = c. Hyper-parameter: the constant c > 0 (scikit-learn's ConstantKernel)."""

    constant: float = eqx.field(static=True, default=1.0)
    constant_bounds: tuple = eqx.field(static=True, default=(1e-5, 1e2))
    fixed: tuple = eqx.field(static=True, default=())

    def _spec(self):
        return (("constant", self.constant, self.constant_bounds, False),)

    def gram(self, params, X1, X2):
        return jnp.full((X1.shape[0], X2.shape[0]), jnp.exp(params["log_constant"]))

    def diag(self, params, X):
        return jnp.full(X.shape[:-1], jnp.exp(params["log_constant"]))

    def __repr__(self):
        return f"Constant({_num(self.constant)})"


def _wrapped(k: Kernel) -> str:
    return f"({k!r})" if isinstance(k, Sum) else repr(k)


class Scale(Kernel):
    """An output scale: k(x, x') = s * k_inner(x, x'). Hyper-parameters: the outputscale s (its own,
    bounds outputscale_bounds) and the inner kernel's. ``c * k`` builds Scale(k, outputscale=c).
    Params: {"kernel": inner params, "log_outputscale": log s}."""

    kernel: Kernel = eqx.field(static=True)
    outputscale: float = eqx.field(static=True, default=1.0)
    outputscale_bounds: tuple = eqx.field(static=True, default=(0.05, 20.0))
    fixed: tuple = eqx.field(static=True, default=())  # ("outputscale",) keeps s at its initial value

    def __check_init__(self):
        if not isinstance(self.kernel, Kernel):
            raise ValueError(f"Scale: kernel must be a Kernel object, got {self.kernel!r}")
        if set(self.fixed) - {"outputscale"}:
            raise ValueError(f"Scale: fixed may name 'outputscale' only, got {self.fixed!r}")
        _check_bounds("Scale", "outputscale", self.outputscale_bounds)
        if not self.outputscale > 0:
            raise ValueError(f"Scale: the initial outputscale must be > 0, got {self.outputscale}")

    def init_params(self, dim: int):
        return {
            "kernel": self.kernel.init_params(dim),
            "log_outputscale": jnp.log(jnp.asarray(self.outputscale, jnp.float64)),
        }

    def clip(self, params):
        lo, hi = self.outputscale_bounds
        return {
            "kernel": self.kernel.clip(params["kernel"]),
            "log_outputscale": jnp.clip(params["log_outputscale"], float(np.log(lo)), float(np.log(hi))),
        }

    def trainable(self, dim: int):
        return {"kernel": self.kernel.trainable(dim), "log_outputscale": jnp.asarray(0.0 if self.fixed else 1.0)}

    def values(self, params) -> dict:
        return {"outputscale": jnp.exp(params["log_outputscale"]), "kernel": self.kernel.values(params["kernel"])}

    def gram(self, params, X1, X2):
        return jnp.exp(params["log_outputscale"]) * self.kernel.gram(params["kernel"], X1, X2)

    def cross(self, params, x, X):
        return jnp.exp(params["log_outputscale"]) * self.kernel.cross(params["kernel"], x, X)

    def diag(self, params, X):
        return jnp.exp(params["log_outputscale"]) * self.kernel.diag(params["kernel"], X)

    def fourier_spec(self, params):
        inner = self.kernel.fourier_spec(params["kernel"])
        if inner is None:
            return None
        name, lengthscale, outputscale = inner
        return name, lengthscale, jnp.exp(params["log_outputscale"]) * outputscale

    def __repr__(self):
        return f"{_num(self.outputscale)} * {_wrapped(self.kernel)}"


class _Composite(Kernel):
    parts: tuple = eqx.field(static=True)

    def __check_init__(self):
        if len(self.parts) < 2 or not all(isinstance(k, Kernel) for k in self.parts):
            raise ValueError(f"{type(self).__name__}: needs two or more Kernel objects, got {self.parts!r}")

    def init_params(self, dim: int):
        return tuple(k.init_params(dim) for k in self.parts)

    def clip(self, params):
        return tuple(k.clip(p) for k, p in zip(self.parts, params))

    def trainable(self, dim: int):
        return tuple(k.trainable(dim) for k in self.parts)

    def values(self, params) -> dict:
        return {f"{i}: {k!r}": k.values(p) for i, (k, p) in enumerate(zip(self.parts, params))}


def _flatten(cls, parts):
    out = []
    for k in parts:
        out.extend(k.parts if type(k) is cls else (k,))
    return tuple(out)


class Sum(_Composite):
    """A sum: k(x, x') = sum_i k_i(x, x'). Hyper-parameters: the parts' (params: the tuple of the
    parts' params, in order). ``k1 + k2 + k3`` is one Sum of three parts."""

    def __init__(self, parts):
        self.parts = _flatten(Sum, tuple(parts))

    def gram(self, params, X1, X2):
        return sum(k.gram(p, X1, X2) for k, p in zip(self.parts, params))

    def cross(self, params, x, X):
        return sum(k.cross(p, x, X) for k, p in zip(self.parts, params))

    def diag(self, params, X):
        return sum(k.diag(p, X) for k, p in zip(self.parts, params))

    def __repr__(self):
        return " + ".join(repr(k) for k in self.parts)


class Product(_Composite):
    """A product: k(x, x') = prod_i k_i(x, x'). Hyper-parameters: the parts' (params: the tuple of the
    parts' params, in order). ``k1 * k2 * k3`` is one Product of three parts."""

    def __init__(self, parts):
        self.parts = _flatten(Product, tuple(parts))

    def _prod(self, terms):
        out = terms[0]
        for t in terms[1:]:
            out = out * t
        return out

    def gram(self, params, X1, X2):
        return self._prod([k.gram(p, X1, X2) for k, p in zip(self.parts, params)])

    def cross(self, params, x, X):
        return self._prod([k.cross(p, x, X) for k, p in zip(self.parts, params)])

    def diag(self, params, X):
        return self._prod([k.diag(p, X) for k, p in zip(self.parts, params)])

    def __repr__(self):
        return " * ".join(_wrapped(k) for k in self.parts)
