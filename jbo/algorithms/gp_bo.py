"""Standard baselines: random search and GP-based BO (UCB, EI, log-EI, PI, Thompson sampling, and
pure exploration by the posterior std).

Each GP method refits hyper-parameters every step (MLE or MAP, warm-started from the last fit) or
keeps them fixed, conditions the GP once per step, and maximises the acquisition with the inner
optimiser (raw screening + top-k projected L-BFGS). All run inside the engine's scan.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jbo import acquisitions, data, gp, kernels, optimize
from jbo.engine import Algorithm, Spec

ACQUISITIONS = ("ucb", "ei", "log_ei", "pi", "ts", "mean", "std")
FITS = ("fixed", "mle", "map")


# ---------------------------------------------------------------- random search
class RandomState(NamedTuple):
    x: jax.Array  # (d,) a template of the action shape


class RandomSearch(Algorithm):
    """Uniform random search (after the shared initial design)."""

    num_initial: int = eqx.field(static=True, default=5)

    def init(self, key, params, spec: Spec):
        return RandomState(jnp.zeros(spec.dim))

    def ask(self, key, state, params):
        return jax.random.uniform(key, state.x.shape), state

    def tell(self, key, state, params, action, observation):
        return state


# ---------------------------------------------------------------- GP-BO
class GPBOParams(NamedTuple):
    """Traced (sweepable) numbers of the GP baselines."""

    beta: jax.Array | float = 2.0  # UCB weight: mean + sqrt(beta) * std ("constant" schedule)
    delta: jax.Array | float = 0.1  # confidence of the Srinivas schedule
    beta_scale: jax.Array | float = 0.2  # Srinivas et al. scale their theoretical beta down by 5
    xi: jax.Array | float = 0.0  # EI/PI improvement margin over the incumbent
    lengthscale: jax.Array | float = 0.2  # fixed / initial hyper-parameters (unit cube, standardised y)
    outputscale: jax.Array | float = 1.0
    noise: jax.Array | float = 1e-4


class GPBOState(NamedTuple):
    buffer: data.Buffer
    gp_params: gp.GPParams  # last fitted (or the fixed) hyper-parameters


def srinivas_beta(t, dim: int, delta, scale=1.0):
    """Srinivas et al. (2010) Thm 2 on the unit cube (a = b = r = 1), times `scale`:
    beta_t = 2 log(2 t^2 pi^2 / (3 delta)) + 2 d log(t^2 d sqrt(log(4 d / delta)))."""
    t = jnp.maximum(t, 1.0)
    b = 2 * jnp.log(2 * t**2 * math.pi**2 / (3 * delta)) + 2 * dim * jnp.log(t**2 * dim * jnp.sqrt(jnp.log(4 * dim / delta)))
    return scale * b


class GPBO(Algorithm):
    """GP-based BO with a Gaussian likelihood. Static configuration only; numbers are in GPBOParams."""

    num_initial: int = eqx.field(static=True, default=5)
    acquisition: str = eqx.field(static=True, default="ucb")
    beta_schedule: str = eqx.field(static=True, default="constant")  # or "srinivas"
    fit: str = eqx.field(static=True, default="mle")
    kernel: str = eqx.field(static=True, default="matern52")
    prior: gp.HyperPrior | None = eqx.field(static=True, default=None)
    fit_method: str = eqx.field(static=True, default="adam")
    num_restarts: int = eqx.field(static=True, default=2)
    fit_steps: int = eqx.field(static=True, default=40)
    fit_learning_rate: float = eqx.field(static=True, default=0.1)
    num_raw: int = eqx.field(static=True, default=512)
    num_raw_per_dim: int = eqx.field(static=True, default=0)  # > 0: screen num_raw_per_dim * d points instead
    num_starts: int = eqx.field(static=True, default=10)
    opt_steps: int = eqx.field(static=True, default=30)
    opt_method: str = eqx.field(static=True, default="adam")
    num_features: int = eqx.field(static=True, default=1024)

    def __check_init__(self):
        if self.acquisition not in ACQUISITIONS:
            raise ValueError(f"unknown acquisition {self.acquisition!r}; choose one of {ACQUISITIONS}")
        if self.fit not in FITS:
            raise ValueError(f"unknown fit {self.fit!r}; choose one of {FITS}")
        if self.beta_schedule not in ("constant", "srinivas"):
            raise ValueError(f"unknown beta_schedule {self.beta_schedule!r}; choose 'constant' or 'srinivas'")
        kernels.check_name(self.kernel)
        if self.acquisition == "ts" and self.kernel == "rq":
            raise ValueError("Thompson sampling needs random Fourier features: use an SE or Matern kernel")
        if self.num_initial < 1:
            raise ValueError("GP-BO needs num_initial >= 1")

    def default_params(self) -> GPBOParams:
        return GPBOParams()

    def init(self, key, params: GPBOParams, spec: Spec) -> GPBOState:
        hyp = gp.default_params(spec.dim, params.lengthscale, params.outputscale, params.noise)
        return GPBOState(data.empty(spec.num_steps, spec.dim), hyp)

    def fitted(self, key, state: GPBOState, params: GPBOParams) -> gp.GPParams:
        """Hyper-parameters for this step: fixed, or refit (restart 0 warm-starts from the last fit)."""
        if self.fit == "fixed":
            return state.gp_params
        dim = state.buffer.x.shape[1]
        defaults = gp.default_params(dim, params.lengthscale, params.outputscale, params.noise)
        prior = (self.prior or gp.HyperPrior()) if self.fit == "map" else None
        return gp.fit(key, state.buffer, self.kernel, init=defaults, warm_start=state.gp_params, prior=prior,
                      num_restarts=self.num_restarts, num_steps=self.fit_steps, learning_rate=self.fit_learning_rate,
                      method=self.fit_method)

    def acquisition_fn(self, key, post: gp.Posterior, buffer: data.Buffer, params: GPBOParams):
        """The acquisition of this step as a function of one unit-cube point."""
        if self.acquisition == "ucb":
            if self.beta_schedule == "constant":
                beta = params.beta
            else:
                beta = srinivas_beta(buffer.count + 1.0, buffer.x.shape[1], params.delta, params.beta_scale)
            return lambda x: acquisitions.ucb(post, x, beta)
        if self.acquisition == "mean":
            return lambda x: acquisitions.posterior_mean(post, x)
        if self.acquisition == "std":  # pure exploration ("P-greedy"): argmax of the posterior std
            return lambda x: jnp.sqrt(gp.predict(post, x)[1])
        if self.acquisition == "ts":
            path = acquisitions.thompson_sample(key, post, self.num_features)
            return lambda x: acquisitions.sample_path_value(path, x)
        best = data.best(buffer) + params.xi
        fn = {"ei": acquisitions.ei, "log_ei": acquisitions.log_ei, "pi": acquisitions.pi}[self.acquisition]
        return lambda x: fn(post, x, best)

    def ask(self, key, state: GPBOState, params: GPBOParams):
        k_fit, k_acq, k_opt = jax.random.split(key, 3)
        hyp = self.fitted(k_fit, state, params)
        post = gp.condition(state.buffer, hyp, self.kernel)
        acq = self.acquisition_fn(k_acq, post, state.buffer, params)
        dim = state.buffer.x.shape[1]
        num_raw = self.num_raw_per_dim * dim if self.num_raw_per_dim > 0 else self.num_raw
        x, _ = optimize.maximize(acq, k_opt, dim, num_raw, self.num_starts, self.opt_steps,
                                 self.opt_method, candidates=state.buffer.x, candidate_mask=state.buffer.mask)
        return x, state._replace(gp_params=hyp)

    def tell(self, key, state: GPBOState, params, action, observation):
        return state._replace(buffer=data.append(state.buffer, action, observation))
