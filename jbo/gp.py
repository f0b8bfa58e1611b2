"""Exact GP regression with a Gaussian likelihood on a fixed-capacity masked buffer.

Factorise once per step with :func:`condition`, then query the returned :class:`Posterior` at many
points with :func:`predict` (O(N^2) per point, never a refactorisation). Padded rows become identity
rows of the Gram matrix and zeros of every cross-covariance, so every result equals the unpadded
computation. Observations are standardised by masked mean and std inside :func:`condition`;
hyper-parameters therefore live on the standardised scale (outputscale ~ 1).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import optax

from jbo import kernels, linalg
from jbo.batching import batched_like
from jbo.data import Buffer, masked_mean_std, register_growing

_LOG_2PI = np.log(2.0 * np.pi)  # NumPy: importing jbo starts no JAX backend (jbo.parallel.initialize)
TRAINABLE = ("lengthscale", "outputscale", "noise")
MEANS = ("zero", "constant", "trainable")


class GPParams(NamedTuple):
    """Unconstrained GP hyper-parameters (standardised-y scale unless the model says otherwise)."""

    log_lengthscale: jax.Array  # (d,)
    log_outputscale: jax.Array  # ()
    log_noise: jax.Array  # () noise variance = exp(log_noise) + model.noise_floor
    mean: jax.Array  # () constant prior mean
    # A kernel object's own parameters (model.kernel.init_params(dim)); () for a named kernel or profile.
    # With a kernel object, log_lengthscale and log_outputscale are placeholders no computation reads.
    kernel: Any = ()

    def kernel_params(self, alpha=1.0) -> kernels.KernelParams:
        return kernels.KernelParams(jnp.exp(self.log_lengthscale), jnp.exp(self.log_outputscale), alpha, self.kernel)


class GammaPrior(NamedTuple):
    concentration: float
    rate: float

    def log_prob(self, v):
        c, r = self.concentration, self.rate
        return c * jnp.log(r) - jax.scipy.special.gammaln(c) + (c - 1.0) * jnp.log(v) - r * v


class LogNormalPrior(NamedTuple):
    loc: float
    scale: float

    def log_prob(self, v):
        z = (jnp.log(v) - self.loc) / self.scale
        return -0.5 * z * z - jnp.log(v * self.scale) - 0.5 * _LOG_2PI


class HyperPrior(NamedTuple):
    """Priors on the hyper-parameter *values* (lengthscale, outputscale, noise variance) for MAP
    fitting; None leaves one unpenalised. Defaults: the BoTorch-legacy Gamma priors."""

    lengthscale: GammaPrior | LogNormalPrior | None = GammaPrior(3.0, 6.0)
    outputscale: GammaPrior | LogNormalPrior | None = GammaPrior(2.0, 0.15)
    noise: GammaPrior | LogNormalPrior | None = GammaPrior(1.1, 0.05)


class GPModel(eqx.Module):
    """Everything about a GP model that is a choice rather than data: one configuration used by every
    algorithm (static: part of the compiled program, hashable).

    kernel: a name in kernels.NAMES, a user profile r2 -> k(r2) / outputscale (kernels.from_sqdist), or a
        kernel object (kernels.Kernel, e.g. ``Matern52() + Periodic()``). An object carries its own
        hyper-parameters, bounds and initial values (params.kernel, see :func:`init_params`); the
        lengthscale/outputscale bounds, train entries and prior below are then not used for them: a
        fit trains every parameter of the object that its parts do not fix (``fixed=``), unless train
        names neither "lengthscale" nor "outputscale"; a prior is refused.
    noise_floor: added to the noise variance (keeps the Cholesky well posed).
    *_bounds: (lo, hi) box for lengthscale, outputscale and noise variance; fits are projected onto it.
    prior: None (maximum likelihood) or a HyperPrior (MAP). prior_jacobian: add log|d value / d log value|
        = the log value of each penalised hyper-parameter, i.e. a density over the log-parameters we
        optimise (off by default, as in BoTorch's MAP and in every run of this repository so far).
    train: which of ("lengthscale", "outputscale", "noise") a fit may change.
    standardize: fit and condition on (y - mean(y)) / std(y) (masked, ddof 1) or on raw y.
    mean: "zero" (prior mean 0), "constant" (params.mean, never trained) or "trainable" (fitted).
    """

    kernel: object = eqx.field(static=True, default="matern52")
    noise_floor: float = eqx.field(static=True, default=1e-6)
    lengthscale_bounds: tuple = eqx.field(static=True, default=(1e-3, 1e2))
    outputscale_bounds: tuple = eqx.field(static=True, default=(0.05, 20.0))  # standardised y: no degenerate scales
    noise_bounds: tuple = eqx.field(static=True, default=(1e-8, 1e1))
    prior: HyperPrior | None = eqx.field(static=True, default=None)
    prior_jacobian: bool = eqx.field(static=True, default=False)
    train: tuple = eqx.field(static=True, default=TRAINABLE)
    standardize: bool = eqx.field(static=True, default=True)
    mean: str = eqx.field(static=True, default="trainable")

    def __check_init__(self):
        kernels.check_name(self.kernel)
        if self.prior is not None and self.is_object:
            raise ValueError(
                f"GPModel: hyper-parameter priors are supported for named kernels only, not for the kernel "
                f"object {kernels.describe(self.kernel)}; use prior=None (maximum likelihood)"
            )
        for name, (lo, hi) in (
            ("lengthscale", self.lengthscale_bounds),
            ("outputscale", self.outputscale_bounds),
            ("noise", self.noise_bounds),
        ):
            if not (0 < lo < hi):
                raise ValueError(f"GPModel: {name}_bounds need 0 < lo < hi, got ({lo}, {hi})")
        if self.noise_floor < 0:
            raise ValueError(f"GPModel: noise_floor must be >= 0, got {self.noise_floor}")
        bad = set(self.train) - set(TRAINABLE)
        if bad:
            raise ValueError(f"GPModel: unknown trainable parameter(s) {sorted(bad)}; choose from {TRAINABLE}")
        if self.mean not in MEANS:
            raise ValueError(f"GPModel: unknown mean {self.mean!r}; choose one of {MEANS}")

    @property
    def is_object(self) -> bool:
        """Whether the kernel is a kernel object (kernels.Kernel) rather than a name or profile."""
        return isinstance(self.kernel, kernels.Kernel)

    def noise(self, params: GPParams):
        """Noise variance on the model's y scale: exp(log_noise) + noise_floor."""
        return jnp.exp(params.log_noise) + self.noise_floor

    def prior_mean(self, params: GPParams):
        return jnp.zeros_like(params.mean) if self.mean == "zero" else params.mean

    def clip(self, p: GPParams) -> GPParams:
        """Project onto the hyper-parameter box (in log space)."""
        with jax.ensure_compile_time_eval():  # eager, as the module constants these bounds replace were
            lb = lambda b: (jnp.log(b[0]), jnp.log(b[1]))  # noqa: E731
        return GPParams(
            jnp.clip(p.log_lengthscale, *lb(self.lengthscale_bounds)),
            jnp.clip(p.log_outputscale, *lb(self.outputscale_bounds)),
            jnp.clip(p.log_noise, *lb(self.noise_bounds)),
            p.mean,
            self.kernel.clip(p.kernel) if self.is_object else p.kernel,
        )

    def trainable(self, dim: int) -> GPParams:
        """1 where a fit may move a parameter, 0 where it is frozen."""
        on = lambda name: 1.0 if name in self.train else 0.0  # noqa: E731
        if self.is_object:  # the placeholders never move; the object's parameters unless the parts fix them
            train_kernel = on("lengthscale") + on("outputscale") > 0
            mask = jax.tree.map(lambda m: m * (1.0 if train_kernel else 0.0), self.kernel.trainable(dim))
            return GPParams(
                jnp.zeros(dim),
                jnp.asarray(0.0),
                jnp.asarray(on("noise")),
                jnp.asarray(1.0 if self.mean == "trainable" else 0.0),
                mask,
            )
        return GPParams(
            jnp.full(dim, on("lengthscale")),
            jnp.asarray(on("outputscale")),
            jnp.asarray(on("noise")),
            jnp.asarray(1.0 if self.mean == "trainable" else 0.0),
        )

    def log_prior(self, p: GPParams):
        """log prior density of the hyper-parameters (0 without a prior); see prior_jacobian."""
        total = jnp.zeros(())
        if self.prior is None:
            return total
        terms = (
            (self.prior.lengthscale, jnp.exp(p.log_lengthscale), p.log_lengthscale),
            (self.prior.outputscale, jnp.exp(p.log_outputscale), p.log_outputscale),
            (self.prior.noise, self.noise(p), jnp.log(self.noise(p))),
        )
        for dist, value, log_value in terms:
            if dist is not None:
                total = total + jnp.sum(dist.log_prob(value))
                if self.prior_jacobian:
                    total = total + jnp.sum(log_value)
        return total

    def standardization(self, y, mask):
        """(mean, std) used to put y on the model's scale (0, 1 when standardize=False)."""
        if self.standardize:
            return masked_mean_std(y, mask)
        return jnp.zeros(()), jnp.ones(())


def as_model(model) -> GPModel:
    """A GPModel, or a kernel name / profile meaning GPModel(kernel=...)."""
    return model if isinstance(model, GPModel) else GPModel(kernel=model)


def default_params(dim: int, lengthscale=0.2, outputscale=1.0, noise=1e-4, mean=0.0) -> GPParams:
    ls = jnp.broadcast_to(jnp.asarray(lengthscale, jnp.float64), (dim,))
    return GPParams(
        jnp.log(ls),
        jnp.log(jnp.asarray(outputscale, jnp.float64)),
        jnp.log(jnp.asarray(noise, jnp.float64)),
        jnp.asarray(mean, jnp.float64),
    )


def init_params(model, dim: int, lengthscale=0.2, outputscale=1.0, noise=1e-4, mean=0.0) -> GPParams:
    """Initial hyper-parameters for `model` (a GPModel or a kernel) on inputs of dimension dim: for a
    named kernel or profile exactly :func:`default_params`; for a kernel object the placeholders
    log_lengthscale = 0 (d,) and log_outputscale = 0, the given noise and mean, and kernel =
    model.kernel.init_params(dim) (lengthscale and outputscale are then unused: the object's parts carry
    their own initial values)."""
    model = as_model(model)
    if not model.is_object:
        return default_params(dim, lengthscale, outputscale, noise, mean)
    return default_params(dim, 1.0, 1.0, noise, mean)._replace(kernel=model.kernel.init_params(dim))


def complete(model, params: GPParams, dim: int) -> GPParams:
    """params with a kernel object's parameters filled in: for a kernel-object model whose params.kernel
    is () (built by :func:`default_params`), kernel = model.kernel.init_params(dim), decided at trace
    time; otherwise params unchanged. :func:`condition`, :func:`fit` (init and warm_start) and the
    likelihood functions call it, so GPParams from default_params work with a kernel object. The rule
    for carried state (a scan carry, a lax.cond's branches, :func:`keep_finite`): a completed GPParams
    has more leaves than an uncompleted one, so start such state from :func:`init_params` (or complete
    it), never mix default_params' () with a fit's result."""
    model = as_model(model)
    if model.is_object and isinstance(params.kernel, tuple) and len(params.kernel) == 0:
        return params._replace(kernel=model.kernel.init_params(dim))
    return params


def tie_rows(x: jax.Array, params: GPParams):
    """(x, params) unchanged, through an optimisation barrier, so that no work on the rows x alone is
    hoisted out of a loop over the hyper-parameters (a fit's steps and restarts, a line search).

    The Gram matrix starts from the d coordinate differences x_ij - x_kj (differences first: exact
    zeros on the diagonal and at repeated points, see jbo.kernels). In a loop that holds x fixed they
    do not depend on the loop, and XLA's loop-invariant code motion stored them before the loop: d
    (N, N) arrays per seed (8 d N^2 bytes, 384 MB for 8 seeds at N = 1000 and d = 6) that every step
    then read back from memory, several times. Tied to the hyper-parameters, the differences are
    recomputed inside each step from the (N, d) rows, which stay in cache; measured in
    `experiments/engine/fit_before_after.py` -> `experiments/results/engine/fit_before_after.json`. Values are
    unchanged (the barrier is the identity); only where XLA computes them moves."""
    return jax.lax.optimization_barrier((x, params))


def masked_gram(model, params: GPParams, x: jax.Array, mask: jax.Array) -> jax.Array:
    """K~ = where(m_i & m_j, K + noise*I, I): invalid rows/columns decouple as identity. The rows are
    tied to the hyper-parameters (:func:`tie_rows`)."""
    model = as_model(model)
    x, params = tie_rows(x, complete(model, params, x.shape[1]))
    K = kernels.gram(model.kernel, params.kernel_params(), x, x)
    eye = jnp.eye(x.shape[0])
    both = mask[:, None] & mask[None, :]
    return jnp.where(both, K + model.noise(params) * eye, eye)


def gram_cholesky(model, K: jax.Array) -> jax.Array:
    """The Cholesky factor of a masked Gram matrix K of `model` (e.g. :func:`masked_gram`). A named
    kernel's Gram matrix is symmetric bit for bit (its entries are functions of squared differences),
    so it is factored as it is; JAX's default symmetrisation, (K + K^T) / 2, changes nothing there, but
    inside a compiled loop (the fit's Adam steps) XLA fused the whole Gram computation, distances,
    square roots and exponentials, into that transposed read and so recomputed it in a cache-hostile
    order, the largest single cost of the fit's step at N = 400 (seen in the profile). A kernel object's
    Gram matrix (any composition) is symmetrised first."""
    return jax.lax.linalg.cholesky(K, symmetrize_input=as_model(model).is_object)


class Posterior(eqx.Module):
    """A conditioned GP: the factorisation is done once; query with predict/predict_cov."""

    model: GPModel = eqx.field(static=True)
    params: GPParams
    x: jax.Array  # (N, d)
    mask: jax.Array  # (N,)
    chol: jax.Array  # (N, N) lower Cholesky factor of K~
    chol_inv: jax.Array  # (N, N) L^{-1}: per-point queries become mat-vecs (see condition)
    alpha: jax.Array  # (N,) K~^{-1} (y_std - mean), zero on padding
    y_mean: jax.Array  # standardisation constants (original units)
    y_std: jax.Array

    @property
    def kernel(self):
        return self.model.kernel

    @property
    def noise(self):
        """Observation-noise variance on the model's (standardised) scale."""
        return self.model.noise(self.params)

    @property
    def prior_mean(self):
        return self.model.prior_mean(self.params)

    @property
    def noise_variance(self):
        """Observation-noise variance in original units."""
        return self.noise * self.y_std**2


def condition(buffer: Buffer, params: GPParams, model="matern52", y_mean=None, y_std=None) -> Posterior:
    """Factorise the GP on the buffer's valid rows. `model`: a GPModel or a kernel name. Pass
    y_mean/y_std to fix the standardisation."""
    model = as_model(model)
    params = complete(model, params, buffer.x.shape[1])
    mask = buffer.mask
    if y_mean is None or y_std is None:
        y_mean, y_std = model.standardization(buffer.y, mask)
    resid = jnp.where(mask, (buffer.y - y_mean) / y_std - model.prior_mean(params), 0.0)
    L = gram_cholesky(model, masked_gram(model, params, buffer.x, mask))
    alpha = jsl.cho_solve((L, True), resid)
    # L^{-1} once per step (one O(N^3) inverse, by blocks: jbo.linalg.tril_inverse): a per-point
    # triangular solve, and above all its gradient inside the inner optimiser, is ~400x slower on
    # XLA:CPU once N > 128 (measured).
    L_inv = linalg.tril_inverse(L)
    return Posterior(model, params, buffer.x, mask, L, L_inv, jnp.where(mask, alpha, 0.0), y_mean, y_std)


def _cross(post: Posterior, x: jax.Array) -> jax.Array:
    return jnp.where(post.mask, kernels.cross(post.kernel, post.params.kernel_params(), x, post.x), 0.0)


def _prior_variance(post: Posterior, xq: jax.Array):
    """k(x, x) at the rows of xq (B, d) for a kernel object; exp(log_outputscale) for a named kernel."""
    if post.model.is_object:
        return post.kernel.diag(post.params.kernel, xq)
    return jnp.exp(post.params.log_outputscale)


def predict(post: Posterior, x: jax.Array, include_noise: bool = False):
    """Posterior mean and variance of f at one point x (d,), original units. vmap for batches."""
    kx = _cross(post, x)
    mean = post.prior_mean + kx @ post.alpha
    v = post.chol_inv @ kx
    prior = _prior_variance(post, x[None])[0] if post.model.is_object else jnp.exp(post.params.log_outputscale)
    var = prior - v @ v + (post.noise if include_noise else 0.0)
    var = jnp.maximum(var, 1e-12)  # clamp before any sqrt: gradients stay finite
    return post.y_mean + post.y_std * mean, post.y_std**2 * var


def predict_batch(post: Posterior, xq: jax.Array):
    """Posterior means and marginal variances (B,) at the rows of xq (B, d), original units: one
    cross-covariance matrix and one GEMM with the cached L^{-1}; equals vmap(predict) (tested)."""
    if post.model.is_object:
        kp = post.params.kernel_params()
        kq = jnp.where(post.mask[None], kernels.gram(post.kernel, kp, xq, post.x), 0.0)
        return _predict_cross(post, kq, _prior_variance(post, xq))
    return predict_sqdist(post, kernels.sqdist_matrix(xq, post.x, post.params.kernel_params().lengthscale))


def predict_sqdist(post: Posterior, r2: jax.Array):
    """predict_batch from the scaled squared distances r2 (B, N) of the query points to the stored
    rows, for callers that assemble r2 from a precomputed part (e.g. a fixed set of context rows).
    Named kernels and profiles only (a kernel object is refused: use :func:`predict_batch`)."""
    kq = jnp.where(post.mask[None], kernels.from_sqdist(post.kernel, post.params.kernel_params(), r2), 0.0)
    return _predict_cross(post, kq, _prior_variance(post, None))


def _predict_cross(post: Posterior, kq: jax.Array, prior):
    """Means and variances (original units) from the masked cross-covariances kq (B, N) and the prior
    variances `prior` ((B,) or a scalar)."""
    mean = post.prior_mean + kq @ post.alpha
    V = kq @ post.chol_inv.T
    var = jnp.maximum(prior - jnp.sum(V * V, axis=1), 1e-12)
    return post.y_mean + post.y_std * mean, post.y_std**2 * var


def predict_cov(post: Posterior, xq: jax.Array):
    """Joint posterior mean (B,) and covariance (B, B) of f at the rows of xq, original units."""
    kq = jax.vmap(lambda x: _cross(post, x))(xq)  # (B, N)
    mean = post.prior_mean + kq @ post.alpha
    V = jsl.solve_triangular(post.chol, kq.T, lower=True)  # (N, B)
    prior = kernels.gram(post.kernel, post.params.kernel_params(), xq, xq)
    cov = prior - V.T @ V
    return post.y_mean + post.y_std * mean, post.y_std**2 * cov


def prefix(post: Posterior, size: int) -> Posterior:
    """The posterior on the first `size` rows (static) of its data: equal to `post` wherever every
    valid row lies among them (padding rows of L and L^{-1} are identity rows, so the sliced factors
    are the factors of the sliced Gram matrix); :func:`resize` cuts a growing posterior with it."""
    return Posterior(
        post.model,
        post.params,
        post.x[:size],
        post.mask[:size],
        post.chol[:size, :size],
        post.chol_inv[:size, :size],
        post.alpha[:size],
        post.y_mean,
        post.y_std,
    )


def resize(post: Posterior, size: int) -> Posterior:
    """The posterior with room for `size` rows (static): :func:`prefix` when smaller, else padded with
    invalid rows (identity rows of L and L^{-1}, zero alpha), which is what :func:`condition` gives
    for padding. Lossless while every valid row lies in the first `size` rows."""
    n = post.x.shape[0]
    if size <= n:
        return prefix(post, size)
    pad = size - n

    def block(a):  # [[a, 0], [0, I]]
        return jnp.block(
            [[a, jnp.zeros((n, pad), a.dtype)], [jnp.zeros((pad, n), a.dtype), jnp.eye(pad, dtype=a.dtype)]]
        )

    return Posterior(
        post.model,
        post.params,
        jnp.concatenate([post.x, jnp.full((pad, post.x.shape[1]), 0.5)]),
        jnp.concatenate([post.mask, jnp.zeros((pad,), bool)]),
        block(post.chol),
        block(post.chol_inv),
        jnp.concatenate([post.alpha, jnp.zeros((pad,))]),
        post.y_mean,
        post.y_std,
    )


register_growing(Posterior, lambda p: p.x.shape[0], resize)


def refresh(post: Posterior, buffer: Buffer) -> Posterior:
    """The posterior of `buffer` that reuses post's factor: valid when post was conditioned (or
    extended, :func:`extend`) on exactly the buffer's valid rows with its hyper-parameters. Only the
    standardisation and alpha = K~^{-1} r are recomputed, with two mat-vecs by the cached L^{-1}:
    O(N^2), equal to :func:`condition` to rounding (tested)."""
    model, mask = post.model, buffer.mask
    y_mean, y_std = model.standardization(buffer.y, mask)
    resid = jnp.where(mask, (buffer.y - y_mean) / y_std - model.prior_mean(post.params), 0.0)
    alpha = post.chol_inv.T @ (post.chol_inv @ resid)
    return Posterior(
        model, post.params, buffer.x, mask, post.chol, post.chol_inv, jnp.where(mask, alpha, 0.0), y_mean, y_std
    )


def extend(post: Posterior, x: jax.Array) -> Posterior:
    """Rank-1 append of the input x to the factor (hyper-parameters fixed): L and L^{-1} gain row n =
    the number of valid rows, in O(N^2), equal to a fresh factorisation (tested). The labels are not
    touched (alpha is stale until :func:`refresh`). A full factor stays as it is, as
    :func:`jbo.data.append` drops the row then."""
    cap = post.mask.shape[0]
    n = jnp.sum(post.mask)
    ok = n < cap
    i = jnp.minimum(n, cap - 1)
    kx = _cross(post, x)
    l = post.chol_inv @ kx  # zero on padding rows
    kxx = kernels.kernel(post.kernel)(post.params.kernel_params(), x, x) + post.noise
    diag = jnp.sqrt(jnp.maximum(kxx - l @ l, 1e-12))
    row = jnp.where(jnp.arange(cap) == i, diag, l)
    # only row i of L changed (it was an identity padding row), so only row i of L^{-1} changes
    inv_row = (jnp.arange(cap) == i) / diag - (l @ post.chol_inv) / diag

    def put(a, new):  # row i of a set to new, unless the factor is full
        return a.at[i].set(jnp.where(ok, new, a[i]))

    return Posterior(
        post.model,
        post.params,
        put(post.x, x),
        put(post.mask, True),
        put(post.chol, row),
        put(post.chol_inv, inv_row),
        post.alpha,
        post.y_mean,
        post.y_std,
    )


def residuals(post: Posterior) -> jax.Array:
    """Standardised residuals (y - y_mean)/y_std - mean recovered from the factorisation (K~ alpha),
    zero on padding: lets updates and pathwise samples reuse a Posterior without the raw y."""
    return jnp.where(post.mask, post.chol @ (post.chol.T @ post.alpha), 0.0)


def append(post: Posterior, x: jax.Array, y: jax.Array) -> Posterior:
    """Rank-1 Cholesky append of one observation for fixed hyper-parameters and standardisation.

    O(N^2) instead of the O(N^3) refactorisation: :func:`extend` for the factor, then alpha for the
    residuals with the new one. Equals `condition` on the extended buffer with the same y_mean/y_std
    (tested). Writes the first invalid row, which must come after every valid one (a growing buffer,
    not a ring).
    """
    n = jnp.sum(post.mask)
    resid = residuals(post).at[n].set((y - post.y_mean) / post.y_std - post.prior_mean)
    new = extend(post, x)
    alpha = jsl.cho_solve((new.chol, True), resid)
    return Posterior(
        new.model,
        new.params,
        new.x,
        new.mask,
        new.chol,
        new.chol_inv,
        jnp.where(new.mask, alpha, 0.0),
        new.y_mean,
        new.y_std,
    )


# ---------------------------------------------------------------- marginal likelihood and fitting
def log_marginal_likelihood(
    params: GPParams, x: jax.Array, y: jax.Array, mask: jax.Array, model="matern52"
) -> jax.Array:
    """log N(y | mean, K + noise I) over the valid rows (y already on the scale of params)."""
    model = as_model(model)
    params = complete(model, params, x.shape[1])
    resid = jnp.where(mask, y - model.prior_mean(params), 0.0)
    L = gram_cholesky(model, masked_gram(model, params, x, mask))
    a = jsl.solve_triangular(L, resid, lower=True)
    n = jnp.sum(mask)
    return -0.5 * a @ a - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * n * _LOG_2PI  # padding adds log 1 = 0


def lml_and_grad(params: GPParams, x: jax.Array, y: jax.Array, mask: jax.Array, model="matern52"):
    """:func:`log_marginal_likelihood` and its gradient with respect to params, in closed form:

        d lml / d theta = 1/2 tr(W dK~/d theta),  W = alpha alpha^T - K~^{-1},  alpha = K~^{-1}(y - mean),
        d lml / d mean = sum(alpha)  (0 for a zero-mean model).

    One Cholesky, K~^{-1} by blocks (:func:`jbo.linalg.tril_inverse`, :func:`jbo.linalg.tril_gram`) and
    one pass over the (N, N) arrays, where reverse mode through the Cholesky costs several triangular
    solves; equal to jax.grad(log_marginal_likelihood) to rounding (tested). For a named kernel, with
    n valid rows, noise variance s2 and the valid-row sums below:

    - d / d log(outputscale): dK/d log(outputscale) = K = K~ - s2 I, so 1/2 tr(W K) =
      1/2 (alpha^T r - s2 alpha^T alpha - n + s2 tr K~^{-1}) with r = y - mean: O(N) once K~^{-1} is known;
    - d / d log(noise): 1/2 tr(W) exp(log_noise) = 1/2 (alpha^T alpha - tr K~^{-1}) exp(log_noise);
    - d / d log(lengthscale_j): dK/d log(l_j) = dk/dr2 * (-2 D_j), D_j[i, k] = (u_ij - u_kj)^2 with
      u = x / l, so the derivative is -sum_ik M_ik D_j[i, k] with M = W * dk/dr2. M is 0 where r2 = 0
      (the diagonal, repeated points), exactly, also for a profile whose dk/dr2 is infinite there
      (e.g. one in sqrt(r2)), where inf * 0 would make the gradient NaN. For a profile whose slope
      dk/dr2 is bounded at 0 (kernels.BOUNDED_SLOPE: se, matern32, matern52, rq), with u centred on
      the valid rows and M symmetric, sum_ik M_ik D_j[i, k] = 2 sum_i u_ij^2 (M 1)_i - 2 sum_i u_ij
      (M u)_ij: all d derivatives are one product M [u, 1] of (N, N) by (N, d + 1), not d elementwise
      passes over (N, N) arrays. Its rounding error, about eps sum_ik |M_ik| (u_ij^2 + u_kj^2), is of
      the elementwise form's order there. Near-duplicate rows under an unbounded slope (Matern-1/2, a
      user's profile) would make it large (2.5e-9 relative, measured, at 1e-6 apart), so those
      contract M with each D_j elementwise.

    For a kernel object the same identity holds with dK/d theta from one reverse-mode pass through the
    object's Gram matrix (a vector-Jacobian product with cotangent W / 2, elementwise work, no
    derivative through the Cholesky); the placeholders log_lengthscale/log_outputscale get 0.
    """
    model = as_model(model)
    if model.is_object:
        return _object_lml_and_grad(complete(model, params, x.shape[1]), x, y, mask, model)
    x, params = tie_rows(x, params)
    kp = params.kernel_params()
    r2 = kernels.sqdist_matrix(x, x, kp.lengthscale)  # direct differences: exact zeros on the diagonal
    K0, dk_dr2 = jax.jvp(lambda r: kernels.from_sqdist(model.kernel, kp, r), (r2,), (jnp.ones_like(r2),))
    value, alpha, K_inv, resid = lml_terms(K0, params, y, mask, model)
    noise, n = model.noise(params), jnp.sum(mask)
    both = mask[:, None] & mask[None, :]
    M = jnp.where(both, jnp.outer(alpha, alpha) - K_inv, 0.0) * jnp.where(r2 > 0.0, dk_dr2, 0.0)
    if isinstance(model.kernel, str) and model.kernel in kernels.BOUNDED_SLOPE:
        u = x / kp.lengthscale
        u = jnp.where(mask[:, None], u - jnp.sum(jnp.where(mask[:, None], u, 0.0), 0) / jnp.maximum(n, 1), 0.0)
        Mu = M @ jnp.concatenate([u, jnp.ones((x.shape[0], 1), u.dtype)], axis=1)  # [M u, M 1]
        grad_lengthscale = 2.0 * jnp.sum(u * Mu[:, :-1], axis=0) - 2.0 * (u * u).T @ Mu[:, -1]
    else:
        grad_lengthscale = -jnp.sum(M[None] * kernels.coordinate_sqdists(x, x, kp.lengthscale), axis=(1, 2))
    tr_inv = jnp.sum(jnp.where(mask, jnp.diagonal(K_inv), 0.0))
    aa = alpha @ alpha
    grad = GPParams(
        log_lengthscale=grad_lengthscale,
        log_outputscale=0.5 * (alpha @ resid - noise * aa - n + noise * tr_inv),
        log_noise=0.5 * (aa - tr_inv) * jnp.exp(params.log_noise),
        mean=jnp.sum(alpha) if model.mean != "zero" else jnp.zeros_like(params.mean),
    )
    return value, grad


def lml_terms(K0, params: GPParams, y, mask, model: GPModel):
    """(lml, alpha, K~^{-1}, r) from the Gram matrix K0 of the rows: one Cholesky of the masked
    K~ = K0 + noise I, its inverse by blocks (jbo.linalg), r = y - mean and alpha = K~^{-1} r on the
    valid rows (K~^{-1} is the identity on padded rows, whose alpha is 0). alpha and the quadratic
    form r^T alpha come from K~^{-1} itself, so L^{-1} is only ever needed by blocks and XLA never
    assembles it (one (N, N) copy fewer)."""
    eye = jnp.eye(K0.shape[0])
    both = mask[:, None] & mask[None, :]
    L = gram_cholesky(model, jnp.where(both, K0 + model.noise(params) * eye, eye))
    K_inv = linalg.tril_gram(linalg.tril_inverse(L))
    resid = jnp.where(mask, y - model.prior_mean(params), 0.0)
    alpha = K_inv @ resid
    value = -0.5 * resid @ alpha - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * jnp.sum(mask) * _LOG_2PI
    return value, alpha, K_inv, resid


def _object_lml_and_grad(params: GPParams, x, y, mask, model: GPModel):
    """:func:`lml_and_grad` for a kernel object: 1/2 tr(W dK/d theta) as a VJP of the Gram matrix."""
    x, params = tie_rows(x, params)
    K0, pull_back = jax.vjp(lambda kp: model.kernel.gram(kp, x, x), params.kernel)
    value, alpha, K_inv, _ = lml_terms(K0, params, y, mask, model)
    W = jnp.where(mask[:, None] & mask[None, :], jnp.outer(alpha, alpha) - K_inv, 0.0)
    grad = GPParams(
        log_lengthscale=jnp.zeros_like(params.log_lengthscale),
        log_outputscale=jnp.zeros_like(params.log_outputscale),
        log_noise=0.5 * jnp.trace(W) * jnp.exp(params.log_noise),
        mean=jnp.sum(alpha) if model.mean != "zero" else jnp.zeros_like(params.mean),
        kernel=pull_back(0.5 * W)[0],
    )
    return value, grad


NOISE_JITTER = 7.0  # restart slots 2, 4, ... raise the log-noise by U(0, 7), slots 3, 5, ... lower it (x 1e3 at most)


def _check_buffer(buffer: Buffer):
    import chex

    chex.assert_rank(buffer.x, 2)
    chex.assert_shape(buffer.y, (buffer.x.shape[0],))
    chex.assert_shape(buffer.mask, (buffer.x.shape[0],))


def _fit_objective(buffer: Buffer, model: GPModel):
    """(loss, loss_and_grad): -(LML + log prior) / n of the clipped parameters on the model's y scale,
    and its value with the closed-form gradient (pulled back through the clip). loss_and_grad's value
    is NaN where a gradient entry of a trained parameter is not finite (e.g. a kernel profile whose
    derivative is NaN): a fit never steps on a gradient it cannot trust, and such a point counts as
    failed (see :func:`fit`)."""
    mask = buffer.mask
    ym, ys = model.standardization(buffer.y, mask)
    y = jnp.where(mask, (buffer.y - ym) / ys, 0.0)
    n = jnp.maximum(jnp.sum(mask), 1)
    has_prior = model.prior is not None

    def loss(p):
        p = model.clip(p)
        val = log_marginal_likelihood(p, buffer.x, y, mask, model)
        if has_prior:
            val = val + model.log_prior(p)
        return -val / n

    def loss_and_grad(p):  # = jax.value_and_grad(loss), with the closed-form LML gradient
        q, pull_back = jax.vjp(model.clip, p)
        val, g = lml_and_grad(q, buffer.x, y, mask, model)
        if has_prior:
            pv, pg = jax.value_and_grad(model.log_prior)(q)
            val, g = val + pv, jax.tree.map(jnp.add, g, pg)
        g = pull_back(jax.tree.map(lambda t: -t / n, g))[0]
        pairs = zip(jax.tree.leaves(g), jax.tree.leaves(trained))
        trusted = jnp.all(jnp.stack([jnp.all(jnp.isfinite(gi) | (on == 0)) for gi, on in pairs]))
        return jnp.where(trusted, -val / n, jnp.nan), g

    trained = model.trainable(buffer.x.shape[1])
    return loss, loss_and_grad


def restart_starts(
    key, model: GPModel, init: GPParams, warm_start: GPParams | None, num_restarts: int, dim: int
) -> GPParams:
    """Start layout shared by every fit: slot 0 is `warm_start` if given, else `init`; with a warm start
    slot 1 is `init`; the other slots perturb `init` log-uniformly, only in what model.train lets a fit
    move (a frozen parameter stays at its start in every slot): lengthscales by U(-1.5, 1.5), the
    output scale by U(-1, 1) and, from slot 2 on and when the model trains it, the log-noise by
    +U(0, NOISE_JITTER) in even slots and -U(0, NOISE_JITTER) in odd ones (one start above and one below
    the init's noise as soon as there are 4 restarts: a fit from a noise at its lower bound would miss a
    better optimum at moderate noise). Slots 0 and 1 keep the noise of their start, so fits with at most
    two restarts start exactly as before. Not clipped: the fits project."""
    if num_restarts < 1:
        raise ValueError(f"a fit needs num_restarts >= 1, got {num_restarts}")
    k1, k2 = jax.random.split(key)
    jitter = GPParams(
        jax.random.uniform(k1, (num_restarts, dim), minval=-1.5, maxval=1.5),
        jax.random.uniform(k2, (num_restarts,), minval=-1.0, maxval=1.0),
        jnp.zeros((num_restarts,)),
        jnp.zeros((num_restarts,)),
    )
    if "noise" in model.train and num_restarts > 2:
        slot = jnp.arange(num_restarts)
        noise = jax.random.uniform(jax.random.fold_in(key, 3), (num_restarts,), maxval=NOISE_JITTER)
        noise = jnp.where(slot % 2 == 0, noise, -noise)  # even slots raise the noise, odd slots lower it
        jitter = jitter._replace(log_noise=jnp.where(slot >= 2, noise, 0.0))
    if model.is_object:  # every log-parameter of the object by U(-1.5, 1.5) (a key of its own)
        shapes = model.kernel.init_params(dim)
        leaves, tree = jax.tree.flatten(shapes)
        keys = jax.random.split(jax.random.fold_in(key, 4), len(leaves))
        draws = [
            jax.random.uniform(k, (num_restarts, *jnp.shape(a)), minval=-1.5, maxval=1.5) for k, a in zip(keys, leaves)
        ]
        jitter = jitter._replace(kernel=jax.tree.unflatten(tree, draws))
    jitter = jax.tree.map(lambda a, on: a.at[0].set(0.0) * on, jitter, model.trainable(dim))  # frozen: no jitter
    starts = jax.tree.map(lambda a, j: a + j, init, jitter)
    if warm_start is not None:  # the warm start takes slot 0 and the unperturbed init slot 1
        place = lambda a, i, w: (a.at[1].set(i) if num_restarts > 1 else a).at[0].set(w)  # noqa: E731
        starts = jax.tree.map(place, starts, init, warm_start)
    return starts


def fit(
    key,
    buffer: Buffer,
    model="matern52",
    init: GPParams | None = None,
    warm_start: GPParams | None = None,
    num_restarts: int = 4,
    num_steps: int = 100,
    learning_rate: float = 0.05,
    method: str = "adam",
    max_linesearch: int = 20,
) -> GPParams:
    """Maximum-likelihood (model.prior None) or MAP hyper-parameters of `model` on the buffer.

    The fixed-iteration fit that runs inside a BO step (jit/vmap/scan-safe, bounded work). `method`:
    "adam" (fixed learning rate, `num_steps` + 1 evaluations per restart) or "lbfgs" (our bounded
    projected L-BFGS, :func:`jbo.optimize.lbfgs_step`: optax's L-BFGS direction and a backtracking line
    search of at most `max_linesearch` trials, so at most 1 + num_steps * max_linesearch evaluations
    per restart, under vmap too). Parameters are projected onto model's bounds after every update;
    parameters not in model.train (and the mean unless it is "trainable") stay at their start.

    `num_restarts` starts are optimised in parallel (vmap): the first is `warm_start` if given (e.g.
    the previous step's fit), then `init` (or the defaults), the rest random log-uniform
    perturbations of `init`, noise included from slot 2 on (see :func:`restart_starts`); with
    num_restarts = 1 and a warm start, only the warm start is refined (a cheap per-step refit).
    Returns the start with the lowest final loss. A restart that met a loss, or a gradient entry of
    a trained parameter, that was not finite has *failed* and never wins; when every restart fails
    (a kernel whose Gram matrix is not positive definite, a profile with a NaN derivative) the fit
    returns NaN hyper-parameters, never its unchanged start: a failed fit is visible to the caller,
    and a GP method flags it (``nonfinite_model``; see jbo.checks). y is put on the model's scale
    exactly as :func:`condition` does. For a converged fit (notebooks, checks) see :func:`fit_converged`.
    """
    model = as_model(model)
    _check_buffer(buffer)
    if method == "lbfgs":
        report = fit_report(
            key,
            buffer,
            model,
            init,
            warm_start,
            num_restarts,
            num_steps,
            method="lbfgs",
            max_linesearch=max_linesearch,
            restarts="vmap",
        )
        return best_restart(report)
    if method != "adam":
        raise ValueError(f"unknown fitting method {method!r}; choose 'adam' or 'lbfgs'")
    dim = buffer.x.shape[1]
    init = init_params(model, dim) if init is None else complete(model, init, dim)
    warm_start = None if warm_start is None else complete(model, warm_start, dim)
    loss, loss_and_grad = _fit_objective(buffer, model)
    starts = restart_starts(key, model, init, warm_start, num_restarts, dim)
    freeze = model.trainable(dim)
    opt = optax.adam(learning_rate)

    def one(p0):
        def body(_, carry):
            p, s, ok = carry
            v, g = loss_and_grad(p)
            g = jax.tree.map(lambda gi, f: jnp.where(jnp.isfinite(gi), gi * f, 0.0), g, freeze)
            upd, s = opt.update(g, s, p)
            return model.clip(optax.apply_updates(p, upd)), s, ok & jnp.isfinite(v)

        # the moments and the flag batched like p0, so that the loop is batched once; the step count
        # stays shared, as the loop leaves it (its schedule then evaluates once for every lane)
        moments = jax.tree.map(
            lambda a: a if jnp.issubdtype(a.dtype, jnp.integer) else batched_like(a, p0), opt.init(p0)
        )
        carry = (p0, moments, batched_like(jnp.asarray(True), p0))
        p, _, ok = jax.lax.fori_loop(0, num_steps, body, carry)
        return p, ok

    ps, ok = jax.vmap(one)(starts)
    if num_restarts == 1:  # nothing to choose between: skip the final loss (one factorisation per step)
        return _failed_as_nan(jax.tree.map(lambda a: a[0], ps), ok[0])
    losses = jax.vmap(loss)(ps)
    losses = jnp.where(jnp.isfinite(losses) & ok, losses, jnp.inf)
    i = jnp.argmin(losses)
    return _failed_as_nan(jax.tree.map(lambda a: a[i], ps), jnp.isfinite(losses[i]))


def keep_finite(new: GPParams, previous: GPParams) -> GPParams:
    """The hyper-parameters a method keeps: `new`, or `previous` after a failed fit (NaN, see
    :func:`fit`), so the next fit warm-starts from finite values. The method flags the failed step
    itself (GP methods: the ``nonfinite_model`` info entry, from the NaN hyper-parameters it used)."""
    ok = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree.leaves(new)]))
    return jax.tree.map(lambda a, b: jnp.where(ok, a, b), new, previous)


def _failed_as_nan(params: GPParams, ok) -> GPParams:
    """params where ok, else NaN everywhere (a failed fit; see :func:`fit`)."""
    return jax.tree.map(lambda a: jnp.where(ok, a, jnp.nan), params)


class FitReport(NamedTuple):
    """Every restart of an L-BFGS fit (leading axis: restart)."""

    params: GPParams  # final (clipped) parameters
    loss: jax.Array  # -(LML + log prior) / n at params; +inf where failed
    failed: jax.Array  # bool: the loss, or a trained parameter's gradient, was not finite at the start (never moved)
    num_evals: jax.Array  # int32: loss-and-gradient evaluations used
    num_steps: jax.Array  # int32: L-BFGS iterations taken
    starts: GPParams  # the (clipped) starting points


def best_restart(report: FitReport) -> GPParams:
    """The parameters of the restart with the lowest loss (failed restarts score +inf); NaN when
    every restart failed (see :func:`fit`)."""
    i = jnp.argmin(report.loss)
    return _failed_as_nan(jax.tree.map(lambda a: a[i], report.params), jnp.isfinite(report.loss[i]))


def fit_report(
    key,
    buffer: Buffer,
    model="matern52",
    init: GPParams | None = None,
    warm_start: GPParams | None = None,
    num_restarts: int = 4,
    num_steps: int = 100,
    method: str = "lbfgs",
    tol: float = 1e-9,
    gtol: float = 1e-6,
    max_linesearch: int = 20,
    restarts: str = "vmap",
) -> FitReport:
    """All restarts of the bounded projected L-BFGS fit, with their losses and work.

    method "lbfgs": `num_steps` iterations per restart (as in :func:`fit`; a restart that has converged
    to rounding, or can no longer decrease the loss, stops evaluating); "converged": iterate until the
    largest projected-gradient entry of the per-point loss is <= gtol, an iteration lowers it by <= tol
    relative to max(|loss|, 1), the run is done (see :func:`jbo.optimize.lbfgs_step`), or `num_steps`
    iterations (a hard bound). Either way a restart costs at most 1 + num_steps * max_linesearch
    evaluations. A restart whose loss is not finite at its start is `failed`, never moves and scores
    +inf. restarts "vmap" runs them in parallel (every lane pays for the slowest, still
    bounded), "map" one after the other (lax.map: each stops on its own). Start layout, loss, clipping
    and frozen parameters are those of :func:`fit`.
    """
    from jbo import optimize

    model = as_model(model)
    _check_buffer(buffer)
    if method not in ("lbfgs", "converged"):
        raise ValueError(f"unknown L-BFGS fit method {method!r}; choose 'lbfgs' or 'converged'")
    if restarts not in ("vmap", "map"):
        raise ValueError(f"restarts is 'vmap' or 'map', got {restarts!r}")
    if num_steps < 0 or max_linesearch < 1:
        raise ValueError(f"need num_steps >= 0 and max_linesearch >= 1, got {num_steps}, {max_linesearch}")
    dim = buffer.x.shape[1]
    init = init_params(model, dim) if init is None else complete(model, init, dim)
    warm_start = None if warm_start is None else complete(model, warm_start, dim)
    _, loss_and_grad = _fit_objective(buffer, model)
    starts = model.clip(restart_starts(key, model, init, warm_start, num_restarts, dim))
    freeze = model.trainable(dim)

    def one(p0):
        if method == "lbfgs":
            c = optimize.lbfgs_minimize(loss_and_grad, p0, num_steps, model.clip, freeze, max_linesearch)
        else:
            c = optimize.lbfgs_minimize_converged(
                loss_and_grad, p0, num_steps, tol, gtol, model.clip, freeze, max_linesearch
            )
        failed = c.failed | ~jnp.isfinite(c.value)
        return FitReport(c.x, jnp.where(failed, jnp.inf, c.value), failed, c.num_evals, c.num_steps, p0)

    return jax.vmap(one)(starts) if restarts == "vmap" else jax.lax.map(one, starts)


def fit_converged(
    key,
    buffer: Buffer,
    model="matern52",
    init: GPParams | None = None,
    warm_start: GPParams | None = None,
    num_restarts: int = 8,
    max_steps: int = 500,
    tol: float = 1e-9,
    gtol: float = 1e-6,
    max_linesearch: int = 20,
) -> GPParams:
    """A converged MLE / MAP fit for notebooks and checks: bounded projected L-BFGS from each of
    `num_restarts` starts (the layout of :func:`fit`), run one after the other with lax.map, each
    until converged (see :func:`fit_report`, method "converged") or `max_steps` iterations; returns the
    best. jit-safe and bounded (at most num_restarts * (1 + max_steps * max_linesearch) evaluations);
    under vmap each restart runs until its slowest lane stops.
    """
    report = fit_report(
        key,
        buffer,
        model,
        init,
        warm_start,
        num_restarts,
        max_steps,
        method="converged",
        tol=tol,
        gtol=gtol,
        max_linesearch=max_linesearch,
        restarts="map",
    )
    return best_restart(report)
