"""Acquisition functions: closed forms of (mean, std), pure functions of (Posterior, x), and the
composable acquisition pieces a GP-BO is built from.

Every `*(post, x, ...)` function takes one point x of shape (d,) and returns a scalar, so it can be
vmapped over candidates and differentiated with jax.grad.

Convention, the same in every module: **beta is the squared UCB weight**, ucb = mean + sqrt(beta) std
(Srinivas et al. 2010). A paper that writes the weight itself (sqrt(beta) = 1.5 in the SBO-KDE
paper) is configured with beta = weight^2.

An :class:`Acquisition` piece has its own Params (``default_params()``, sweepable leaves) and
``build(key, post, buffer, params, step, dim) -> (x -> value)``: the acquisition of one BO step as a
function of one decision point; ``joint(key, post, buffer, params, step, q, num_samples) -> (X -> value)``
is its q-point form where it has one (a batch of q points chosen together). Built-ins: :class:`UCB`, :class:`EI` (and log-EI), :class:`PI`,
:class:`PosteriorMean`, :class:`PosteriorStd`, :class:`Thompson`; :class:`FromFunction` wraps a
user's own ``fn(post, x, best) -> value``; contextual pieces (``contextual = True``) live with their
paper (jbo.algorithms.sbo_kde).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax.scipy.special import ndtr

from jbo import data, gp, kernels

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)  # NumPy: importing jbo starts no JAX backend


# ---------------------------------------------------------------- closed forms
def ucb_value(mean, std, beta):
    return mean + jnp.sqrt(beta) * std


def ei_value(mean, std, best):
    z = (mean - best) / std
    return std * (jnp.exp(-0.5 * z * z - _LOG_SQRT_2PI) + z * ndtr(z))


TAIL_Z = -4.0  # below: the continued fraction; above: phi + z Phi directly (cancellation <= 20x)
_CF_TERMS = 40  # Laplace's continued fraction of the Mills ratio: exact to rounding for u = -z >= 4 at 40 terms


def _log_h_parts(z):
    """(log h(z), Phi(z)/h(z), phi(z)/h(z)) for h(z) = phi(z) + z Phi(z), each to a few ulp relative.

    z > -4: h = phi + z Phi as written (the cancellation loses at most a factor u^2 + 3 ~ 20).
    z <= -4, u = -z: with Laplace's continued fraction D(u) = u + 2/(u + 3/(u + 4/(u + ...))),
    the Mills ratio is Q(u)/phi(u) = 1/(u + 1/D), 1 - u Q/phi = (Q/phi)/D, so h = phi/(u D + 1),
    Phi/h = D and phi/h = u D + 1: no subtraction anywhere, no exp of a large number (so nothing is
    lost to the rounding of -u^2/2 in log_ndtr, the old tail's 2x gradient error), and no asymptotic
    series switch. 40 terms evaluated backwards are exact to rounding for u >= 4 (checked against
    mpmath), so the two branches agree at z = -4 to ~1e-15 in value and both derivatives."""
    body = z > TAIL_Z
    zb = jnp.where(body, z, 0.0)
    phi = jnp.exp(-0.5 * zb * zb - _LOG_SQRT_2PI)
    cdf = ndtr(zb)
    h = phi + zb * cdf
    u = jnp.where(body, -TAIL_Z, -z)
    d = u
    for k in range(_CF_TERMS, 1, -1):
        d = u + k / d
    q = u * d + 1.0
    log_tail = -0.5 * u * u - _LOG_SQRT_2PI - jnp.log(q)
    return (jnp.where(body, jnp.log(h), log_tail), jnp.where(body, cdf / h, d), jnp.where(body, phi / h, q))


@jax.custom_jvp
def log_h(z):
    """log(phi(z) + z Phi(z)) (the core of log-EI), accurate to ~1e-15 relative in value and
    derivative Phi(z)/h(z) for every z from the far tail (-1e5 and below) to large positive z."""
    return _log_h_parts(z)[0]


@log_h.defjvp
def _log_h_jvp(primals, tangents):
    value, dlog, _ = _log_h_parts(primals[0])
    return value, dlog * tangents[0]


@jax.custom_jvp
def _log_ei(mean, std, best):
    return log_h((mean - best) / std) + jnp.log(std)


@_log_ei.defjvp
def _log_ei_jvp(primals, tangents):
    mean, std, best = primals
    dm, ds, db = tangents
    value, dlog, vega = _log_h_parts((mean - best) / std)
    # dEI/dmean = Phi(z), dEI/dstd = phi(z): d log EI = (Phi dm + phi ds - Phi dbest) / (std h), with no
    # 1 - z Phi/h cancellation in the std derivative (it is phi/h itself, ~1e-23 at z = 10).
    return value + jnp.log(std), (dlog * (dm - db) + vega * ds) / std


def log_ei_value(mean, std, best):
    """log EI(mean, std; best); its partial derivatives are the closed forms Phi(z)/(std h(z)) (mean,
    minus that for best) and phi(z)/(std h(z)) (std), accurate to ~1e-15 relative on the whole z range."""
    mean, std, best = jnp.broadcast_arrays(*(jnp.asarray(a, dtype=jnp.result_type(float)) for a in (mean, std, best)))
    return _log_ei(mean, std, best)


def pi_value(mean, std, best):
    return ndtr((mean - best) / std)


# ---------------------------------------------------------------- on a posterior
def _mean_std(post: gp.Posterior, x):
    m, v = gp.predict(post, x)
    return m, jnp.sqrt(v)


def posterior_mean(post: gp.Posterior, x):
    return gp.predict(post, x)[0]


def ucb(post: gp.Posterior, x, beta):
    """mean + sqrt(beta) * std."""
    return ucb_value(*_mean_std(post, x), beta)


def ei(post: gp.Posterior, x, best):
    """Expected improvement over `best` (maximisation)."""
    return ei_value(*_mean_std(post, x), best)


def log_ei(post: gp.Posterior, x, best):
    """log EI, finite and with useful gradients far below the incumbent."""
    return log_ei_value(*_mean_std(post, x), best)


def pi(post: gp.Posterior, x, best):
    """Probability of improvement over `best`."""
    return pi_value(*_mean_std(post, x), best)


# ---------------------------------------------------------------- Thompson sampling
class SamplePath(NamedTuple):
    """A posterior sample path by pathwise conditioning (Matheron's rule) on an RFF prior path."""

    features: kernels.FourierFeatures
    weights: jax.Array  # (D,)
    update: jax.Array  # (N,) K~^{-1}(y - f_prior(X) - eps), zero on padding
    posterior: gp.Posterior


def thompson_sample(key, post: gp.Posterior, num_features: int = 1024) -> SamplePath:
    """Draw f ~ GP posterior as f(x) = f0(x) + k(x, X) K~^{-1} (y - f0(X) - eps), f0 an RFF prior path."""
    kf, ke = jax.random.split(key)
    dim = post.x.shape[1]
    ff, w = kernels.prior_sample_path(kf, post.kernel, post.params.kernel_params(), dim, num_features)
    prior_at_data = kernels.feature_map(ff, post.x) @ w
    eps = jnp.sqrt(post.noise) * jax.random.normal(ke, prior_at_data.shape)
    rhs = jnp.where(post.mask, gp.residuals(post) - prior_at_data - eps, 0.0)
    update = jnp.where(post.mask, jsl.cho_solve((post.chol, True), rhs), 0.0)
    return SamplePath(ff, w, update, post)


def sample_path_value(path: SamplePath, x):
    """Value of the Thompson sample at one point x (original units)."""
    post = path.posterior
    kx = jnp.where(post.mask, kernels.cross(post.kernel, post.params.kernel_params(), x, post.x), 0.0)
    f = post.params.mean + kernels.feature_map(path.features, x) @ path.weights + kx @ path.update
    return post.y_mean + post.y_std * f


# ---------------------------------------------------------------- composable pieces
class Acquisition(eqx.Module):
    """A GP-BO acquisition piece: its Params and the per-step function of a decision point."""

    contextual: ClassVar[bool] = False  # True: the GP is on (x, context) and build() integrates the context out

    def default_params(self):
        return ()

    @abc.abstractmethod
    def build(self, key, post: gp.Posterior, buffer: data.Buffer, params, step, dim: int) -> Callable:
        """The acquisition of this step as a function of one decision point."""

    def joint(self, key, post: gp.Posterior, buffer: data.Buffer, params, step, q: int, num_samples: int) -> Callable:
        """The q-point form of this acquisition: a function X (q, d) -> value whose maximiser is a
        batch of q points chosen together (jbo.parts.JointMC). A piece without one refuses (the
        built-in UCB with a constant beta and EI have Monte-Carlo forms, :func:`q_ucb`, :func:`q_ei`)."""
        raise ValueError(f"no q-point form of {type(self).__name__}: use UCB (constant beta), EI, or define joint()")

    def check_joint(self) -> None:
        """A named ValueError now, before any tracing, when this piece has no q-point form."""
        if type(self).joint is Acquisition.joint:
            self.joint(None, None, None, None, None, 1, 1)


class Marginal(Acquisition):
    """A piece whose value at a point depends on the point only through the posterior's mean and
    standard deviation there (UCB, EI, log-EI, PI, the mean, the std): ``value(key, post, buffer,
    params, step, dim) -> ((mean, std) -> value)``; :meth:`build` composes it with the posterior, and
    :class:`Choice` computes the posterior once for several of them."""

    @abc.abstractmethod
    def value(self, key, post: gp.Posterior, buffer: data.Buffer, params, step, dim: int) -> Callable:
        """The acquisition of this step as a function of the posterior's (mean, std) at a point."""

    def build(self, key, post, buffer, params, step, dim):
        fn = self.value(key, post, buffer, params, step, dim)
        return lambda x: fn(*_mean_std(post, x))


class ChoiceParams(NamedTuple):
    index: jax.Array | int = 0  # the acting option, 0-based (an int; swept: an int array)
    options: tuple = ()  # each option's Params, in the order of Choice.options
    DOMAIN = {"index": "[0, inf)"}

    def check(self, where: str) -> None:
        """The index is an integer below the number of options (checks.check_params calls this)."""
        index = np.asarray(self.index)
        if not np.issubdtype(index.dtype, np.integer):
            raise TypeError(f"{where}index must be an int (the acting option), got {self.index!r}")
        if np.any(index >= len(self.options)):
            raise ValueError(f"{where}index = {index.tolist()!r}: there are only {len(self.options)} options")


class Choice(Acquisition):
    """One of several acquisitions, the one that ``ChoiceParams.index`` names: one compiled program
    serves them all, so a study sweeps acquisitions as Params (jbo.run_sweep, or
    jbo.studies.Settings in run_study) instead of compiling one program for each,
    ``Choice(UCB(), EI())`` or ``Choice("ucb", "ei")``.

    When every option is a :class:`Marginal` the posterior's mean and std at a point are computed once
    and only the closed forms are switched. With a swept index (one per run, vmapped) every option's
    closed form is evaluated and the chosen one selected; with one index only the chosen option runs.
    The chosen option's values are the option's own to rounding: switching the closed forms after one
    posterior evaluation can round a gradient differently (tests/test_acquisitions.py checks each index
    against SciPy's closed forms and finite differences)."""

    options: tuple = eqx.field(static=True)

    def __init__(self, *options):
        self.options = tuple(as_acquisition(o) for o in options)

    def __check_init__(self):
        if not self.options:
            raise ValueError("Choice: give at least one acquisition")
        for i, o in enumerate(self.options):
            if o.contextual or isinstance(o, Choice):
                raise ValueError(
                    f"Choice: option {i} ({type(o).__name__}) is contextual or a Choice; choose among plain pieces"
                )

    def default_params(self):
        return ChoiceParams(0, tuple(o.default_params() for o in self.options))

    def build(self, key, post, buffer, params, step, dim):
        args = (key, post, buffer)
        if all(isinstance(o, Marginal) for o in self.options):
            fns = [o.value(*args, p, step, dim) for o, p in zip(self.options, params.options)]
            return lambda x: jax.lax.switch(params.index, fns, *_mean_std(post, x))
        fns = [o.build(*args, p, step, dim) for o, p in zip(self.options, params.options)]
        return lambda x: jax.lax.switch(params.index, fns, x)


def srinivas_beta(t, dim: int, delta, scale=1.0):
    """Srinivas et al. (2010) Thm 2 on the unit cube (a = b = r = 1), times `scale`:
    beta_t = 2 log(2 t^2 pi^2 / (3 delta)) + 2 d log(t^2 d sqrt(log(4 d / delta)))."""
    t = jnp.maximum(t, 1.0)
    b = 2 * jnp.log(2 * t**2 * math.pi**2 / (3 * delta)) + 2 * dim * jnp.log(
        t**2 * dim * jnp.sqrt(jnp.log(4 * dim / delta))
    )
    return scale * b


class UCBParams(NamedTuple):
    beta: jax.Array | float = 2.0  # ucb = mean + sqrt(beta) std
    DOMAIN = {"beta": "[0, inf)"}


class SrinivasParams(NamedTuple):
    delta: jax.Array | float = 0.1  # confidence of the schedule
    beta_scale: jax.Array | float = 0.2  # Srinivas et al. scale their theoretical beta down by 5
    DOMAIN = {"delta": "(0, 1)", "beta_scale": "[0, inf)"}


class UCB(Marginal):
    """mean + sqrt(beta) std; beta constant (UCBParams, default `beta`) or the Srinivas schedule in the
    number of observations n + 1 (SrinivasParams)."""

    schedule: str = eqx.field(static=True, default="constant")
    beta: float = eqx.field(static=True, default=2.0)  # the default of UCBParams.beta

    def __check_init__(self):
        if self.schedule not in ("constant", "srinivas"):
            raise ValueError(f"unknown beta schedule {self.schedule!r}; choose 'constant' or 'srinivas'")

    def default_params(self):
        return UCBParams(self.beta) if self.schedule == "constant" else SrinivasParams()

    def value(self, key, post, buffer, params, step, dim):
        if self.schedule == "constant":
            beta = params.beta
        else:
            beta = srinivas_beta(buffer.count + 1.0, buffer.x.shape[1], params.delta, params.beta_scale)
        return lambda mean, std: ucb_value(mean, std, beta)

    def check_joint(self) -> None:
        if self.schedule != "constant":
            raise ValueError("no q-point form of UCB with the Srinivas schedule: use a constant beta")

    def joint(self, key, post, buffer, params, step, q: int, num_samples: int) -> Callable:
        """Monte-Carlo q-UCB (:func:`q_ucb`) with num_samples fixed base samples drawn from `key`."""
        self.check_joint()
        z = jax.random.normal(key, (num_samples, q))
        return lambda X: q_ucb(post, X, params.beta, z)


class EIParams(NamedTuple):
    xi: jax.Array | float = 0.0  # improvement margin over the incumbent (best observed y)


class EI(Marginal):
    """Expected improvement over the best observation + xi; log=True: log-EI (stable far below it)."""

    log: bool = eqx.field(static=True, default=False)

    def default_params(self):
        return EIParams()

    def value(self, key, post, buffer, params, step, dim):
        best = data.best(buffer) + params.xi
        fn = log_ei_value if self.log else ei_value
        return lambda mean, std: fn(mean, std, best)

    def check_joint(self) -> None:
        if self.log:
            raise ValueError("no q-point form of log-EI: use EI")

    def joint(self, key, post, buffer, params, step, q: int, num_samples: int) -> Callable:
        """Monte-Carlo q-EI (:func:`q_ei`) with num_samples fixed base samples drawn from `key`."""
        self.check_joint()
        z = jax.random.normal(key, (num_samples, q))
        best = data.best(buffer) + params.xi
        return lambda X: q_ei(post, X, best, z)


class PI(Marginal):
    """Probability of improvement over the best observation + xi."""

    def default_params(self):
        return EIParams()

    def value(self, key, post, buffer, params, step, dim):
        best = data.best(buffer) + params.xi
        return lambda mean, std: pi_value(mean, std, best)


class PosteriorMean(Marginal):
    """Pure exploitation: the posterior mean."""

    def value(self, key, post, buffer, params, step, dim):
        return lambda mean, std: mean


class PosteriorStd(Marginal):
    """Pure exploration ("P-greedy"): the posterior standard deviation."""

    def value(self, key, post, buffer, params, step, dim):
        return lambda mean, std: std


class Thompson(Acquisition):
    """A posterior sample path (pathwise conditioning on `num_features` random Fourier features)."""

    num_features: int = eqx.field(static=True, default=1024)

    def build(self, key, post, buffer, params, step, dim):
        path = thompson_sample(key, post, self.num_features)
        return lambda x: sample_path_value(path, x)


def _name(acquisition) -> str:
    fn = getattr(acquisition, "fn", None)
    return getattr(fn, "__name__", repr(fn)) if fn is not None else type(acquisition).__name__


def check_scalar(acquisition, fn: Callable, dim: int) -> None:
    """A built acquisition `fn` must map one point (dim,) to a scalar: otherwise a ValueError naming
    the acquisition (raised while the run is traced, before anything runs)."""
    out = jax.eval_shape(fn, jax.ShapeDtypeStruct((dim,), jnp.float64))
    shapes = [leaf.shape for leaf in jax.tree.leaves(out)]
    if shapes != [()]:
        raise ValueError(
            f"the acquisition {_name(acquisition)} must return a scalar for one point of shape "
            f"({dim},), got {shapes[0] if len(shapes) == 1 else shapes}"
        )


class FromFunction(Acquisition):
    """A user's acquisition fn(post, x, best) -> value (best: the largest observation so far). Built,
    it is tried on a 2-D posterior (shapes only): a function that does not return a scalar is refused
    at once, naming it (a function that cannot run in 2-D is checked when its run is traced)."""

    fn: Callable = eqx.field(static=True)

    def __check_init__(self):
        def trial():
            post = gp.condition(data.empty(2, 2), gp.default_params(2), "se")
            return self.fn(post, jnp.zeros(2), jnp.zeros(()))

        try:
            out = jax.eval_shape(trial)
        except Exception:  # noqa: BLE001  (a dimension-specific function: checked at trace time instead)
            return
        shapes = [leaf.shape for leaf in jax.tree.leaves(out)]
        if shapes != [()]:
            raise ValueError(
                f"the acquisition {_name(self)} must return a scalar for one point of shape (d,), "
                f"got {shapes[0] if len(shapes) == 1 else shapes} for d = 2"
            )

    def build(self, key, post, buffer, params, step, dim):
        best = data.best(buffer)
        return lambda x: self.fn(post, x, best)


# ---------------------------------------------------------------- Monte-Carlo q-point acquisitions
def _joint_samples(post: gp.Posterior, X: jax.Array, z: jax.Array):
    """(mean (q,), samples (M, q)) of f at the q rows of X: mean + z L^T with L the Cholesky factor of
    the joint covariance (plus 1e-9 times its scale on the diagonal); z (M, q) fixed standard normals
    (the reparameterisation: the samples are differentiable in X)."""
    mean, cov = gp.predict_cov(post, X)
    scale = jnp.maximum(jnp.max(jnp.diag(cov)), 1e-12)
    L = jnp.linalg.cholesky(cov + 1e-9 * scale * jnp.eye(X.shape[0]))
    return mean, mean + z @ L.T


def q_ucb(post: gp.Posterior, X: jax.Array, beta, z: jax.Array):
    """Monte-Carlo q-UCB (Wilson, Hutter & Deisenroth 2018): E[max_j mu_j + sqrt(beta pi / 2) |f_j - mu_j|]
    over the joint posterior at the q rows of X; for q = 1 its expectation is mu + sqrt(beta) sigma."""
    mean, f = _joint_samples(post, X, z)
    return jnp.mean(jnp.max(mean + jnp.sqrt(beta * jnp.pi / 2) * jnp.abs(f - mean), axis=1))


def q_ei(post: gp.Posterior, X: jax.Array, best, z: jax.Array):
    """Monte-Carlo q-EI: E[max_j max(f_j - best, 0)] over the joint posterior at the q rows of X."""
    _, f = _joint_samples(post, X, z)
    return jnp.mean(jnp.max(jnp.maximum(f - best, 0.0), axis=1))


def build_joint(acquisition, key, post, buffer, params, step, q: int, num_samples: int):
    """The q-point form of an acquisition piece (its :meth:`Acquisition.joint`)."""
    return acquisition.joint(key, post, buffer, params, step, q, num_samples)


BUILT_IN = {
    "ucb": UCB,
    "ei": EI,
    "log_ei": lambda: EI(log=True),
    "pi": PI,
    "ts": Thompson,
    "mean": PosteriorMean,
    "std": PosteriorStd,
}


def as_acquisition(acq) -> Acquisition:
    """An Acquisition piece from a piece, a built-in name, or a user function fn(post, x, best)."""
    if isinstance(acq, Acquisition):
        return acq
    if isinstance(acq, str):
        if acq not in BUILT_IN:
            raise ValueError(
                f"unknown acquisition {acq!r}; choose one of {tuple(BUILT_IN)}, an Acquisition, or a "
                f"function fn(post, x, best)"
            )
        return BUILT_IN[acq]()
    if callable(acq):
        return FromFunction(acq)
    raise TypeError(f"an acquisition is a name, a jbo.acquisitions.Acquisition or a function, got {acq!r}")
