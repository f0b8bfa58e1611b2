"""BOKE / BOKE+ (Zhu et al. 2025, arXiv:2502.06178 v1) and the baselines of its experiments.

Surrogate: Nadaraya-Watson kernel regression m_t (Eq. 3.1) and the *unnormalised* kernel density
W_t(x) = sum_i k(x, x_i; h_t) (Eq. 3.9), both recomputed every step with the current bandwidth
h_t = c_h t^(-1/(d+4)) (Scott's rule in unit-cube coordinates; t counts every point, the initial
design included). Per step, with t the current number of points (spec D2, D22):

    BOKE    x_{t+1} = argmax m_t(x) + sqrt(beta_t) W_t(x)^(-1/2)            (IKR-UCB, Eq. 3.12)
    BOKE+   q ~ Bernoulli(p); x_{t+1} = argmax m_t(x) + q sqrt(beta_t) W_t(x)^(-1/2)   (Alg. 3)
    DE      x_{t+1} = argmin W_t(x)                                           (Eq. 3.10)
    KR-UCB  best arm by Eq. A.4; if t^alpha >= #distinct, widen: argmin W_t on the kernel ball (A.5)

    beta_t = 2 varsigma^2 log(2 pi^2 t^2 / (3 delta))                         (Thm 4.13, M_Psi = 1)

BOKE+ draws q and runs ONE optimisation of the mixed acquisition: no lax.cond, so nothing runs
twice under vmap, and p = 1 reproduces BOKE exactly for the same keys.

Decisions where the paper is silent (spec section 9; also on the docs page docs/papers/boke.md):
  * c_h = 1/sqrt(12) (D1), option bandwidth_rule="scott_data" uses the mean per-dimension std of X_t.
  * varsigma: Params.varsigma when > 0, else 0.1 * std(y over the initial design), which depends
    only on the shared design (D3). delta = 0.1. Raw y, no standardisation.
  * BOKE+ p = 0.5 (D8). KR-UCB: C = sqrt(2) varsigma, tau = e^(-1/2) (rho = h_t), alpha = 0.5 (D10).
  * Inner optimiser (D9): 1024 d uniform candidates + the data, top 10 starts, 50 iterations. The
    paper used L-BFGS-B; we default to projected Adam with a cosine-decayed step (every committed
    result uses it; jbo's bounded projected L-BFGS is maximiser=Maximiser(method="lbfgs", ...)). Adam's steps do not scale
    with the gradient, so the huge gradients of W^(-1/2) in empty corners are harmless.
  * log W^(-1/2) is capped at LOG_CAP = 300; where a compact kernel covers nothing (W = 0) it is
    LOG_CAP + d(x, X_t), so ties break towards the point farthest from the data (D19).

Also here: the paper's GP-UCB baseline (App. A.1: RBF kernel, FIXED lengthscale and beta) and GP
pure exploration (argmax of the GP std, Fig. 3): a jbo.algorithms.gp_bo.GPBO composed with the SE
kernel, a zero prior mean and the paper's fixed-hyper-parameter rule (PaperHypers).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from jbo import acquisitions, data, gp, kde, optimize, parts, regression
from jbo.algorithms.gp_bo import GPBO
from jbo.protocols import Algorithm, Spec

LOG_CAP = 300.0
SCOTT_UNIFORM = 1.0 / math.sqrt(12.0)  # std of U[0, 1]


class BOKEParams(NamedTuple):
    """BOKE's traced (sweepable) numbers."""

    bandwidth_scale: jax.Array | float = SCOTT_UNIFORM  # c_h in h_t = c_h t^(-1/(d+4))
    varsigma: jax.Array | float = 0.0  # sub-Gaussian noise level in beta_t; <= 0: 0.1 std(y_design)
    delta: jax.Array | float = 0.1  # confidence level in beta_t
    DOMAIN = {"bandwidth_scale": "(0, inf)", "delta": "(0, 1)"}


class BOKEPlusParams(NamedTuple):
    """BOKE+'s: BOKE's and the coin."""

    bandwidth_scale: jax.Array | float = SCOTT_UNIFORM
    varsigma: jax.Array | float = 0.0
    delta: jax.Array | float = 0.1
    p: jax.Array | float = 0.5  # probability of an IKR-UCB step
    DOMAIN = {"bandwidth_scale": "(0, inf)", "delta": "(0, 1)", "p": "[0, 1]"}


class KRUCBParams(NamedTuple):
    """KR-UCB's."""

    bandwidth_scale: jax.Array | float = SCOTT_UNIFORM
    varsigma: jax.Array | float = 0.0  # enters C = sqrt(2) varsigma when C <= 0
    C: jax.Array | float = 0.0  # exploration weight; <= 0: sqrt(2) varsigma
    tau: jax.Array | float = math.exp(-0.5)  # kernel-neighbourhood level k(x, x~) > tau
    alpha: jax.Array | float = 0.5  # progressive-widening exponent
    DOMAIN = {"bandwidth_scale": "(0, inf)", "tau": "(0, 1)", "alpha": "(0, inf)"}


class DEParams(NamedTuple):
    """Density exploration's: only the bandwidth."""

    bandwidth_scale: jax.Array | float = SCOTT_UNIFORM
    DOMAIN = {"bandwidth_scale": "(0, inf)"}


class KRState(NamedTuple):
    buffer: data.Buffer
    exploit_steps: jax.Array  # BOKE+: steps with q = 0; KR-UCB: steps that re-sampled an arm


# ---------------------------------------------------------------- schedules
def bandwidth(buffer: data.Buffer, scale, rule: str = "scott") -> jax.Array:
    """h_t = c t^(-1/(d+4)), c = `scale` ("scott") or the mean per-dimension std of X_t ("scott_data")."""
    d = buffer.x.shape[1]
    t = jnp.maximum(buffer.count, 1).astype(jnp.float64)
    if rule == "scott":
        c = scale
    elif rule == "scott_data":
        c = jnp.maximum(jnp.mean(kde.masked_count_std(buffer.x, buffer.mask, ddof=1)[1]), 1e-6)
    else:
        raise ValueError(f"unknown bandwidth_rule {rule!r}; choose 'scott' or 'scott_data'")
    return c * t ** (-1.0 / (d + 4))


def beta_t(t, varsigma, delta):
    """Thm 4.13 with M_Psi = 1: beta_t = 2 varsigma^2 log(2 pi^2 t^2 / (3 delta))."""
    t = jnp.maximum(t, 1.0)
    return 2.0 * varsigma**2 * jnp.log(2.0 * math.pi**2 * t**2 / (3.0 * delta))


def noise_level(buffer: data.Buffer, params: BOKEParams, num_initial: int):
    """varsigma: the given level, or 0.1 std(y) over the initial design (rows 0..n0-1, shared by all methods)."""
    y0 = buffer.y[:num_initial]
    auto = 0.1 * jnp.std(y0, ddof=1 if num_initial > 1 else 0)
    return jnp.where(params.varsigma > 0, params.varsigma, auto)


# ---------------------------------------------------------------- surrogate and acquisitions
def log_sigma(x, buffer: data.Buffer, h, kernel: str = "gaussian", log_w=None):
    """log sigma_hat = -1/2 log W_t(x), capped at LOG_CAP; LOG_CAP + d(x, X_t) where W = 0."""
    if log_w is None:
        log_w = regression.nadaraya_watson(x, buffer.x, buffer.y, buffer.mask, h, kernel)[1]
    finite = jnp.isfinite(log_w)
    ls = jnp.minimum(-0.5 * jnp.where(finite, log_w, 0.0), LOG_CAP)
    if kernel == "gaussian":
        return ls
    return jnp.where(finite, ls, LOG_CAP + regression.nearest_distance(x, buffer.x, buffer.mask))


def ikr_ucb(x, buffer: data.Buffer, h, beta, q=1.0, kernel: str = "gaussian"):
    """a_t(x) = m_t(x) + q sqrt(beta_t) W_t(x)^(-1/2): IKR-UCB for q = 1, pure exploitation for q = 0."""
    m, log_w = regression.nadaraya_watson(x, buffer.x, buffer.y, buffer.mask, h, kernel)
    return m + q * jnp.sqrt(beta) * jnp.exp(log_sigma(x, buffer, h, kernel, log_w))


def _check_common(kernel, bandwidth_rule, num_initial):
    regression.check_kernel(kernel)
    if bandwidth_rule not in ("scott", "scott_data"):
        raise ValueError(f"unknown bandwidth_rule {bandwidth_rule!r}; choose 'scott' or 'scott_data'")
    if num_initial < 1:
        raise ValueError("kernel-regression BO needs num_initial >= 1")


#: D9: 1024 d uniform candidates + every observed point, the best 10 refined by 50 projected-Adam steps.
KR_MAXIMISER = parts.Maximiser(num_raw_per_dim=1024, num_starts=10, steps=50, method="adam", screen_data=True)


class _KernelBO(Algorithm):
    """Shared configuration and bookkeeping of the kernel-regression methods."""

    num_initial: int = eqx.field(static=True, default=5)
    kernel: str = eqx.field(static=True, default="gaussian")
    bandwidth_rule: str = eqx.field(static=True, default="scott")
    maximiser: parts.Maximiser = eqx.field(static=True, default=KR_MAXIMISER)  # D9; its raw(d) also sizes KR-UCB's ball
    # how the buffer grows with the data (engine segments); the default keeps the whole buffer from the
    # first step, as the committed results ran (the same picks with data.Growth(), tested)
    growth: data.Growth = eqx.field(static=True, default=data.WHOLE)

    def __check_init__(self):
        _check_common(self.kernel, self.bandwidth_rule, self.num_initial)
        if not isinstance(self.maximiser, parts.Maximiser):
            raise ValueError(f"maximiser must be a jbo.parts.Maximiser, got {self.maximiser!r}")
        if not isinstance(self.growth, data.Growth):
            raise ValueError(f"growth must be a jbo.data.Growth, got {self.growth!r}")

    def init(self, key, params, spec: Spec) -> KRState:
        return KRState(data.empty(spec.num_steps, spec.dim), jnp.zeros((), jnp.int32))

    def tell(self, key, state: KRState, params, action, observation, step) -> KRState:
        return state._replace(buffer=data.append(state.buffer, action, observation))

    def _maximize(self, fn, key, buffer: data.Buffer, **kw):
        d, m = buffer.x.shape[1], self.maximiser
        if "candidates" not in kw:
            kw["candidates"], kw["candidate_mask"] = m.screened(buffer)
        num_raw = kw.pop("num_raw", m.raw(d))
        return optimize.maximize(fn, key, d, num_raw, m.num_starts, m.steps, m.method, **kw)[0]


class BOKE(_KernelBO):
    """BOKE (plus=False, Alg. 2) and BOKE+ (plus=True, Alg. 3)."""

    plus: bool = eqx.field(static=True, default=False)

    def default_params(self):
        return BOKEPlusParams() if self.plus else BOKEParams()

    def ask(self, key, state: KRState, params: BOKEParams | BOKEPlusParams, step):
        k_coin, k_opt = jax.random.split(key)
        buf = state.buffer
        h = bandwidth(buf, params.bandwidth_scale, self.bandwidth_rule)
        beta = beta_t(buf.count.astype(jnp.float64), noise_level(buf, params, self.num_initial), params.delta)
        q = jax.random.bernoulli(k_coin, params.p) if self.plus else jnp.array(True)
        x = self._maximize(lambda x: ikr_ucb(x, buf, h, beta, q.astype(jnp.float64), self.kernel), k_opt, buf)
        return x, state._replace(exploit_steps=state.exploit_steps + (~q).astype(jnp.int32))


class DensityExploration(_KernelBO):
    """DE: x_{t+1} = argmin_x W_t(x) (maximise log sigma_hat); a space-filling design that ignores y."""

    num_initial: int = eqx.field(static=True, default=1)

    def default_params(self) -> DEParams:
        return DEParams()

    def ask(self, key, state: KRState, params: DEParams, step):
        buf = state.buffer
        h = bandwidth(buf, params.bandwidth_scale, self.bandwidth_rule)
        return self._maximize(lambda x: log_sigma(x, buf, h, self.kernel), key, buf), state


def kernel_radius(h, tau, kernel: str = "gaussian"):
    """rho with {x : k(x, x~; h) > tau} = {||x - x~|| < rho}."""
    r2 = {"gaussian": 2.0 * jnp.log(1.0 / tau), "epanechnikov": 1.0 - tau, "uniform": jnp.ones_like(tau)}[kernel]
    return h * jnp.sqrt(r2)


def ball_box_projection(center, radius, sweeps: int = 4):
    """Approximate projection onto {||x - center|| <= radius} intersected with [0, 1]^d (alternating)."""

    def project(x):
        for _ in range(sweeps):
            v = x - center
            n = jnp.sqrt(jnp.sum(v**2) + 1e-300)
            x = jnp.clip(center + v * jnp.minimum(1.0, radius / n), 0.0, 1.0)
        return x

    return project


def arm_statistics(buffer: data.Buffer, h, kernel: str = "gaussian"):
    """m_t(x_i) and log W_t(x_i) at every stored point, from the masked (N, N) kernel matrix."""
    r2 = jnp.sum((buffer.x[:, None, :] - buffer.x[None, :, :]) ** 2, -1) / h**2
    s = jnp.where(buffer.mask[None, :], regression.log_psi(r2, kernel), -jnp.inf)
    log_w = logsumexp(s, axis=1)
    m = jax.nn.softmax(s, axis=1) @ jnp.where(buffer.mask, buffer.y, 0.0)
    return m, log_w


def count_distinct(buffer: data.Buffer) -> jax.Array:
    """Number of distinct valid rows (exact equality)."""
    eq = jnp.all(buffer.x[:, None, :] == buffer.x[None, :, :], -1) & buffer.mask[None, :]
    earlier = jnp.tril(eq, k=-1)  # a valid j < i equal to row i
    return jnp.sum(buffer.mask & ~jnp.any(earlier, axis=1))


class KRUCB(_KernelBO):
    """KR-UCB with progressive widening (Yee et al. 2016, as in the paper's App. A.2, Alg. 5)."""

    def default_params(self) -> KRUCBParams:
        return KRUCBParams()

    def ask(self, key, state: KRState, params: KRUCBParams, step):
        k_ball, k_opt = jax.random.split(key)
        buf = state.buffer
        n = buf.count.astype(jnp.float64)
        h = bandwidth(buf, params.bandwidth_scale, self.bandwidth_rule)
        varsigma = noise_level(buf, params, self.num_initial)
        C = jnp.where(params.C > 0, params.C, math.sqrt(2.0) * varsigma)
        # Eq. A.4: finite-arm UCB over the stored points
        m, log_w = arm_statistics(buf, h, self.kernel)
        log_total = logsumexp(jnp.where(buf.mask, log_w, -jnp.inf))
        score = m + C * jnp.sqrt(log_total) * jnp.exp(-0.5 * log_w)
        best = buf.x[jnp.argmax(jnp.where(buf.mask, score, -jnp.inf))]
        # Eq. A.5: the least dense point of the kernel ball around the best arm, intersected with the box
        rho = kernel_radius(h, params.tau, self.kernel)
        widen = n**params.alpha >= count_distinct(buf)

        def widened():  # uniform candidates in the ball around the best arm, clipped to the box
            d = buf.x.shape[1]
            num = self.maximiser.raw(d)
            k_dir, k_rad = jax.random.split(k_ball)
            z = jax.random.normal(k_dir, (num, d))
            z = z / jnp.linalg.norm(z, axis=1, keepdims=True) * jax.random.uniform(k_rad, (num, 1)) ** (1.0 / d)
            cands = jnp.clip(best + rho * z, 0.0, 1.0)
            return self._maximize(
                lambda x: log_sigma(x, buf, h, self.kernel),
                k_opt,
                buf,
                num_raw=0,
                candidates=cands,
                candidate_mask=None,
                project=ball_box_projection(best, rho),
            )

        # lax.cond: a real branch for one seed (ask/tell, timing); under vmap it runs both and selects
        x = jax.lax.cond(widen, widened, lambda: best)
        return x, state._replace(exploit_steps=state.exploit_steps + (~widen).astype(jnp.int32))


# ---------------------------------------------------------------- the paper's GP baselines
class PaperHypersParams(NamedTuple):
    lengthscale: jax.Array | float = 0.0  # <= 0: 0.5 sqrt(d/6) on the unit cube
    noise_std: jax.Array | float = 0.0  # sigma_eps in y units; 0: jitter only (noise-free runs)
    DOMAIN = {"noise_std": "[0, inf)"}


class PaperHypers(eqx.Module):
    """The BOKE paper's fixed GP hyper-parameters (App. A.1, spec 3.5): lengthscale 0.5 sqrt(d/6)
    (or the given one), outputscale 1 on standardised y, noise variance sigma_eps^2 / std(y)^2
    (floored at 1e-12; the model adds its 1e-6 noise floor)."""

    def default_params(self) -> PaperHypersParams:
        return PaperHypersParams()

    def __call__(self, buffer: data.Buffer, params: PaperHypersParams, model=None) -> gp.GPParams:
        d = buffer.x.shape[1]
        ls = jnp.where(params.lengthscale > 0, params.lengthscale, 0.5 * math.sqrt(d / 6.0))
        _, y_std = data.masked_mean_std(buffer.y, buffer.mask)
        noise = jnp.maximum((params.noise_std / y_std) ** 2, 1e-12)
        return parts.init_params(model, d, ls, 1.0, noise, 0.0)


#: The BOKE paper's inner maximiser: 1024 d raw candidates, every observed point screened (as in all of
#: this paper's runs), 10 starts x 50 projected-Adam steps.
PAPER_MAXIMISER = parts.Maximiser(num_raw_per_dim=1024, steps=50, screen_data=True)
PAPER_MODEL = gp.GPModel(kernel="se", mean="zero")


def PaperGP(acquisition="ucb", num_initial: int = 5, **options) -> GPBO:  # noqa: N802  (a configured GPBO)
    """GP-UCB as in the BOKE paper: RBF kernel, FIXED lengthscale (PaperHypers), beta = 4
    (sqrt(beta) = 2), zero prior mean on standardised y, PAPER_MAXIMISER. acquisition="std" is GP pure
    exploration (argmax sigma_t, the Fig. 3 comparison); any other acquisition works too. options:
    further GPBO parts (maximiser, model, growth, ...), replacing the paper's."""
    acq = acquisitions.UCB(beta=4.0) if acquisition == "ucb" else acquisition
    options = {"model": PAPER_MODEL, "maximiser": PAPER_MAXIMISER, "hypers": PaperHypers(), **options}
    return GPBO(acquisition=acq, num_initial=num_initial, **options)


__all__ = [
    "BOKE",
    "BOKEParams",
    "BOKEPlusParams",
    "DEParams",
    "DensityExploration",
    "KRUCBParams",
    "KRState",
    "KRUCB",
    "LOG_CAP",
    "PaperGP",
    "PaperHypers",
    "PaperHypersParams",
    "arm_statistics",
    "ball_box_projection",
    "bandwidth",
    "beta_t",
    "count_distinct",
    "ikr_ucb",
    "kernel_radius",
    "log_sigma",
    "noise_level",
]
