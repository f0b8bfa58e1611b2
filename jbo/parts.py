"""Small configured parts that GP-based algorithms are assembled from.

Each part is an ``equinox.Module`` whose configuration is static (it shapes the program), validated
when it is built (a ``ValueError`` naming the argument), and, where it has numbers worth sweeping, its
own Params NamedTuple from ``default_params()`` (traced leaves, vmappable like any Params):

    hyper-parameter rule : :class:`FixedHypers` (constants) or :class:`Refit` (a fit of the model on
                           the data, warm-started from the last one, on a :class:`RefitSchedule`);
    inner maximiser      : :class:`Maximiser` (raw screening + top-k projected Adam or L-BFGS on the
                           box, or every arm of a finite arm set);
    batching             : :class:`Lies` (one point a step, earlier points of the round carry lies)
                           or :class:`JointMC` (the round's q points at once, Monte-Carlo q-UCB / q-EI);
                           ``None`` is one point per step;
    initial design       : :class:`LatinHypercube`, :class:`Sobol`, :class:`Uniform`.

The model (jbo.gp.GPModel), the acquisition (jbo.acquisitions.Acquisition) and the buffer's growth
schedule (jbo.data.Growth) are parts of the same kind, defined in their own modules. MLE or MAP is the
model's business: a GPModel with a prior is fitted by MAP, one without by maximum likelihood.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import data, designs, gp, optimize

METHODS = ("adam", "lbfgs")

# Refit every step while t < REFIT_ALL, then each time the data has grown by 1/32 (RefitSchedule.now): from
# t = 128, regret no worse than refitting every step on four problems at T = 256, 2.4x cheaper
# (experiments/engine/long_run_defaults.py --compare refit); from t = 64 instead of 128, regret no worse at
# T = 100, 200 and 256 on the same four problems, 10% cheaper at T = 256 and about 20% at T = 200
# (experiments/engine/long_run_defaults.py --compare refit_all --checkpoints 100 200)
REFIT_ALL = 64
REFIT_GROWTH = 1 / 32
# The inner maximiser screens the 128 best observed points with its raw points (every point in a run of
# at most 128 steps): regret no worse than screening all of them on four problems at T = 256, cheaper at
# large N (experiments/engine/long_run_defaults.py --compare screen)
SCREEN_DATA = 128

LIES = ("kb", "cl_min", "cl_max", "cl_mean")
BATCH_LIE = "cl_min"  # chosen by experiments/engine/batch/q_batch.py (hartmann6, q = 4, 16 seeds)


def _int(name: str, value, low: int, part: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{part}: {name} must be an int >= {low}, got {value!r}")


def _method(name: str, value, part: str) -> None:
    if value not in METHODS:
        raise ValueError(f"{part}: {name} must be one of {METHODS}, got {value!r}")


def init_params(model, dim: int, lengthscale, outputscale, noise, mean) -> gp.GPParams:
    """GPParams of `model` from the four hyper-parameters (the model's own initialiser where jbo.gp
    has one, e.g. for composite kernels; otherwise gp.default_params)."""
    make = getattr(gp, "init_params", None)
    if make is not None and model is not None:
        return make(model, dim, lengthscale, outputscale, noise, mean)
    return gp.default_params(dim, lengthscale, outputscale, noise, mean)


# ---------------------------------------------------------------- hyper-parameter rules
class HypersParams(NamedTuple):
    """The fixed (or a refit's starting) hyper-parameters: unit cube, the model's y scale."""

    lengthscale: jax.Array | float = 0.2  # every input dimension's lengthscale
    outputscale: jax.Array | float = 1.0  # signal variance
    noise: jax.Array | float = 1e-4  # noise variance (the model adds its noise floor)
    mean: jax.Array | float = 0.0  # constant prior mean
    DOMAIN = {"lengthscale": "(0, inf)", "outputscale": "(0, inf)", "noise": "[0, inf)"}


class FixedHypers(eqx.Module):
    """Hyper-parameters held at the constants of HypersParams (defaults from these fields). Also the
    start of a :class:`Refit`. A rule is called as ``rule(buffer, params, model) -> GPParams``; a rule of
    one's own (a data-dependent noise, ...) is any module with ``default_params`` and that call."""

    lengthscale: float = eqx.field(static=True, default=0.2)
    outputscale: float = eqx.field(static=True, default=1.0)
    noise: float = eqx.field(static=True, default=1e-4)
    mean: float = eqx.field(static=True, default=0.0)
    refits: ClassVar[bool] = False  # the hyper-parameters are not fitted to the data

    def __check_init__(self):
        for name in ("lengthscale", "outputscale"):
            if not getattr(self, name) > 0:
                raise ValueError(f"FixedHypers: {name} must be > 0, got {getattr(self, name)!r}")
        if not self.noise >= 0:
            raise ValueError(f"FixedHypers: noise must be >= 0, got {self.noise!r}")

    def default_params(self) -> HypersParams:
        return HypersParams(self.lengthscale, self.outputscale, self.noise, self.mean)

    def __call__(self, buffer: data.Buffer, params: HypersParams, model=None) -> gp.GPParams:
        return init_params(model, buffer.x.shape[1], params.lengthscale, params.outputscale, params.noise, params.mean)


class RefitSchedule(eqx.Module):
    """When a :class:`Refit` refits: every step while t < all_below, then each time the data has grown
    by a factor ~1 + growth (growth = 1/32: 22 refits over steps 64-128 instead of 64, 37 over
    128-400 instead of 272). growth=None: every step. far_from, far_growth: from step far_from on
    (a refit there), each time the data has grown by ~1 + far_growth instead. Between refits the
    posterior's factor is extended by rank-1 appends, O(N^2) per step instead of the refit's O(N^3)
    factorisations."""

    all_below: int = eqx.field(static=True, default=REFIT_ALL)
    growth: float | None = eqx.field(static=True, default=REFIT_GROWTH)
    far_from: int | None = eqx.field(static=True, default=None)  # from this step on, refit at far_growth
    far_growth: float | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        _int("all_below", self.all_below, 1, "RefitSchedule")
        for name in ("growth", "far_growth"):
            g = getattr(self, name)
            number = isinstance(g, (int, float)) and not isinstance(g, bool)
            if g is not None and not (number and 0 < g < float("inf")):
                raise ValueError(f"RefitSchedule: {name} must be None or a positive number, got {g!r}")
        if (self.far_from is None) != (self.far_growth is None) or (self.far_from is not None and self.growth is None):
            raise ValueError("RefitSchedule: far_from and far_growth go together, and with a growth")
        if self.far_from is not None:
            _int("far_from", self.far_from, self.all_below, "RefitSchedule")

    def skips(self, capacity: int) -> bool:
        """Whether a run of `capacity` rows has steps that do not refit (a run of at most all_below
        steps refits every step with the plain program)."""
        return self.growth is not None and capacity > self.all_below

    def now(self, t) -> jax.Array:
        """Whether step t refits: t < all_below, or floor(log(t) / log(1 + growth)) increased at t. t
        is the scan's unbatched step index, so the choice is a real branch under vmap over seeds."""
        if self.growth is None:
            return jnp.asarray(True)
        t = jnp.asarray(t, jnp.float64)

        def level(s):
            s = jnp.maximum(s, 1.0)
            near = jnp.floor(jnp.log(s) / jnp.log1p(self.growth))
            if self.far_from is None:
                return near
            f = float(self.far_from)  # from far_from on: one more level, then one per factor 1 + far_growth
            far = (
                np.floor(np.log(f) / np.log1p(self.growth)) + 1 + jnp.floor(jnp.log(s / f) / jnp.log1p(self.far_growth))
            )
            return jnp.where(s < f, near, far)

        return (t < self.all_below) | (level(t) > level(t - 1.0))


class Refit(eqx.Module):
    """Hyper-parameters fitted to the data (MLE, or MAP when the model has a prior) by `restarts` runs
    of `steps` Adam (at `learning_rate`) or bounded L-BFGS steps: restart 0 warm-starts from the last
    fit, the others from `start` (the rule whose values begin every fit; its Params are this rule's
    Params) and perturbations of it (jbo.gp.fit). `schedule`: at which steps to refit.
    Defaults chosen by measurement (experiments/engine/refit_defaults.py; docs/defaults.md)."""

    start: Any = eqx.field(static=True, default=FixedHypers())
    method: str = eqx.field(static=True, default="adam")
    restarts: int = eqx.field(static=True, default=1)
    steps: int = eqx.field(static=True, default=5)
    learning_rate: float = eqx.field(static=True, default=0.1)
    schedule: RefitSchedule = eqx.field(static=True, default=RefitSchedule())
    refits: ClassVar[bool] = True

    def __check_init__(self):
        _method("method", self.method, "Refit")
        _int("restarts", self.restarts, 1, "Refit")
        _int("steps", self.steps, 0, "Refit")
        if not self.learning_rate > 0:
            raise ValueError(f"Refit: learning_rate must be > 0, got {self.learning_rate!r}")
        if not isinstance(self.schedule, RefitSchedule):
            raise ValueError(f"Refit: schedule must be a RefitSchedule, got {self.schedule!r}")
        if not (hasattr(self.start, "default_params") and callable(self.start)):
            raise ValueError(f"Refit: start must be a hyper-parameter rule such as FixedHypers(), got {self.start!r}")

    def default_params(self):
        return self.start.default_params()

    def __call__(self, buffer: data.Buffer, params, model=None) -> gp.GPParams:
        """The start of this step's fit."""
        return self.start(buffer, params, model)

    def fit(self, key, buffer: data.Buffer, model, init: gp.GPParams, warm: gp.GPParams | None = None):
        """The fitted hyper-parameters of `model` on `buffer` from `init` (and the warm start `warm`)."""
        kw = dict(num_restarts=self.restarts, num_steps=self.steps, method=self.method)
        if self.method == "adam":
            kw["learning_rate"] = self.learning_rate
        return gp.fit(key, buffer, model, init=init, warm_start=warm, **kw)


# GP-BO's hyper-parameter rule (GPBO's default `hypers`): the class's 1 x 5 warm-started Adam steps, refitted
# every step while t < 64 and then each time the data has grown by 1 + 1/16 (about half the refits of the
# class's 1 + 1/32). With GP_MAXIMISER's lighter search, no worse by the paired rule on four problems at
# T = 256 (experiments/engine/long_run_defaults.py --compare growth, --compare both; docs/defaults.md). The
# class keeps 1 + 1/32, which uCVS inherits.
GP_REFIT_GROWTH = 1 / 16
GP_REFIT = Refit(schedule=RefitSchedule(growth=GP_REFIT_GROWTH))


# ---------------------------------------------------------------- the inner maximiser
class Maximiser(eqx.Module):
    """Maximise an acquisition over the unit box: screen `num_raw` uniform points (num_raw_per_dim > 0:
    num_raw_per_dim * d instead) together with observed points (`screen_data`: True all, False none,
    an int k the k best), start `num_starts` local searches from the best, each `steps` projected
    Adam or bounded L-BFGS steps (`method`), and return the best point seen (jbo.optimize.maximize).
    `line_search`: how the L-BFGS search backtracks, "halving" or "quadratic" (jbo.optimize.lbfgs_step).
    `screen_block` b scores the screened points b at a time instead of all at once (the same values to
    rounding; an acquisition over many contexts then holds b points' arrays, not all of them). On a
    finite arm set every arm is scored. GPBO's default is :data:`GP_MAXIMISER` (256 raw points, 5
    L-BFGS starts, quadratic backtracking); the class's own defaults are the Adam search at 512 raw
    points and 10 starts."""

    num_raw: int = eqx.field(static=True, default=512)
    num_raw_per_dim: int = eqx.field(static=True, default=0)
    num_starts: int = eqx.field(static=True, default=10)
    steps: int = eqx.field(static=True, default=30)
    method: str = eqx.field(static=True, default="adam")
    screen_data: bool | int = eqx.field(static=True, default=SCREEN_DATA)
    far_capacity: int | None = eqx.field(static=True, default=None)  # above this buffer capacity,
    far_num_raw: int | None = eqx.field(static=True, default=None)  # screen this many raw points
    screen_block: int | None = eqx.field(static=True, default=None)
    line_search: str = eqx.field(static=True, default="halving")  # the L-BFGS search's backtracking

    def __check_init__(self):
        _int("num_raw", self.num_raw, 0, "Maximiser")
        _int("num_raw_per_dim", self.num_raw_per_dim, 0, "Maximiser")
        _int("num_starts", self.num_starts, 1, "Maximiser")
        _int("steps", self.steps, 0, "Maximiser")
        _method("method", self.method, "Maximiser")
        optimize.check_line_search(self.line_search, "Maximiser")
        if (self.far_capacity is None) != (self.far_num_raw is None):
            raise ValueError("Maximiser: far_capacity and far_num_raw go together")
        if self.screen_block is not None:
            _int("screen_block", self.screen_block, 1, "Maximiser")
        if self.far_capacity is not None:
            _int("far_capacity", self.far_capacity, 1, "Maximiser")
            _int("far_num_raw", self.far_num_raw, 0, "Maximiser")
        s = self.screen_data
        if not isinstance(s, bool) and not (isinstance(s, int) and s >= 1):
            raise ValueError(
                f"Maximiser: screen_data must be True, False or a positive int (the best k observations), got {s!r}"
            )

    def raw(self, dim: int, capacity: int | None = None) -> int:
        """Uniform raw points screened in `dim` dimensions (far_num_raw in a buffer of more than
        far_capacity rows)."""
        if self.far_capacity is not None and capacity is not None and capacity > self.far_capacity:
            return self.far_num_raw
        return self.num_raw_per_dim * dim if self.num_raw_per_dim > 0 else self.num_raw

    def screened(self, buffer: data.Buffer | None):
        """(candidates, mask) of observed points screened with the raw points: none (screen_data False,
        or no buffer), every row (True, or a buffer of at most screen_data rows), or the screen_data
        rows with the largest observations (an int k): at N >> k, screening all N rows costs more than
        the raw points and adds no better start."""
        if buffer is None or self.screen_data is False:
            return None, None
        if self.screen_data is True or buffer.capacity <= self.screen_data:
            return buffer.x, buffer.mask
        _, rows = jax.lax.top_k(jnp.where(buffer.mask, buffer.y, -jnp.inf), self.screen_data)
        return buffer.x[rows], buffer.mask[rows]

    def box(self, fn, key, dim: int, buffer: data.Buffer | None = None, candidates=None, candidate_mask=None):
        """(x, fn(x)): the maximiser of fn (d,) -> scalar over [0, 1]^dim, screening the observed
        points of `buffer` (see :meth:`screened`) or the given `candidates`."""
        if buffer is not None:
            candidates, candidate_mask = self.screened(buffer)
        return optimize.maximize(
            fn,
            key,
            dim,
            self.raw(dim, None if buffer is None else buffer.capacity),
            self.num_starts,
            self.steps,
            self.method,
            candidates=candidates,
            candidate_mask=candidate_mask,
            screen_block=self.screen_block,
            line_search=self.line_search,
        )

    def arms(self, fn, arms: jax.Array):
        """(index, value): the arm (a row of `arms`) of largest fn; non-finite values are never chosen."""
        values = optimize.clean(jax.vmap(fn)(arms))
        return jnp.argmax(values).astype(jnp.int32), jnp.max(values)


# GP-BO's acquisition search (GPBO's default `maximiser`): 256 raw points with the class's screening of
# observed points, and 5 starts, each refined by 5 bounded projected L-BFGS iterations.
# - L-BFGS instead of 30 projected Adam steps (both at 512 raw points and 10 starts): on four problems at
#   T = 256 (16 seeds, paired) regret lower on hartmann3 and hartmann6, no worse on branin and levy (d = 4),
#   1.12x the run time; the Adam search re-queried an observed point on 69-91% of the steps, the L-BFGS
#   search on almost none (experiments/engine/long_run_defaults.py --compare search).
# - 256 raw points and 5 starts instead of 512 and 10, with GP_REFIT's schedule: no worse by the paired rule
#   on the same four problems at steps 60, 128 and 256, at 0.50x the seconds per seed
#   (long_run_defaults.py --compare both; docs/defaults.md).
# - The line search backtracking by quadratic interpolation instead of halving (jbo.optimize.lbfgs_step): the
#   first, unit step from a start near an observed optimum overshoots by orders of magnitude, and halving took
#   16-18 evaluations to come back where interpolation takes about 7; no worse by the paired rule on the four problems
#   at steps 60, 128 and 256 (long_run_defaults.py --compare line_search).
# The class keeps the Adam search, which the paper algorithms pin with their own settings.
GP_MAXIMISER = Maximiser(num_raw=256, num_starts=5, method="lbfgs", steps=5, line_search="quadratic")


# ---------------------------------------------------------------- batching
def lie_values(kind: str, real: data.Buffer, hyp: gp.GPParams, model, x: jax.Array) -> jax.Array:
    """Values to tell for pending points x (m, d), chosen before their own values are known (a batch,
    or evaluations still running): "kb" (kriging believer) the posterior mean of the real data at each
    point; "cl_min" / "cl_max" / "cl_mean" (constant liars) the smallest, largest or mean observed
    value (Ginsbourger, Le Riche & Carraro 2010). `real`: the buffer of real observations."""
    if kind == "kb":
        return gp.predict_batch(gp.condition(real, hyp, model), x)[0]
    y = jnp.where(real.mask, real.y, jnp.nan)
    value = {"cl_min": jnp.nanmin, "cl_max": jnp.nanmax, "cl_mean": jnp.nanmean}[kind](y)
    return jnp.full(x.shape[0], value)


class Lies(eqx.Module):
    """Synchronous q-batches chosen one point a step: every engine step proposes one point, `size`
    steps make a round, the round's first step refits, and its later points are chosen with the
    round's earlier points carrying `lie` values (:func:`lie_values`: "cl_min", the default by
    measurement, "cl_max", "cl_mean" or "kb"). Works with any acquisition."""

    size: int = eqx.field(static=True)
    lie: str = eqx.field(static=True, default=BATCH_LIE)

    def __check_init__(self):
        _int("size", self.size, 1, "Lies")
        if self.lie not in LIES:
            raise ValueError(f"Lies: unknown lie {self.lie!r}; choose one of {LIES}")

    def values(self, real: data.Buffer, hyp: gp.GPParams, model, x: jax.Array) -> jax.Array:
        return lie_values(self.lie, real, hyp, model, x)


class JointMC(eqx.Module):
    """Synchronous q-batches chosen jointly: the round's first step maximises the acquisition's
    Monte-Carlo q-point form (Acquisition.joint: q-UCB, q-EI) over all `size` points at once with
    `samples` fixed base samples; every step of the round plays its point. Boxes only."""

    size: int = eqx.field(static=True)
    samples: int = eqx.field(static=True, default=128)

    def __check_init__(self):
        _int("size", self.size, 1, "JointMC")
        _int("samples", self.samples, 1, "JointMC")


# ---------------------------------------------------------------- initial designs
class Design(eqx.Module):
    """An initial design on the unit cube: ``design(key, n, dim) -> (n, dim)``."""

    def __call__(self, key, n: int, dim: int) -> jax.Array:
        raise NotImplementedError


class LatinHypercube(Design):
    """One point per stratum in every dimension (jbo.designs.latin_hypercube); the spaces' default."""

    def __call__(self, key, n: int, dim: int) -> jax.Array:
        return designs.latin_hypercube(key, n, dim)


class Sobol(Design):
    """The first n points of a Sobol sequence, scrambled by a random digital shift (jbo.designs.sobol)."""

    scramble: bool = eqx.field(static=True, default=True)

    def __call__(self, key, n: int, dim: int) -> jax.Array:
        return designs.sobol(key, n, dim, self.scramble)


class Uniform(Design):
    """i.i.d. uniform points."""

    def __call__(self, key, n: int, dim: int) -> jax.Array:
        return designs.uniform(key, n, dim)


# ---------------------------------------------------------------- parts from config values
def _growth(value) -> data.Growth:
    if isinstance(value, dict):
        value = dict(value)
        if isinstance(value.get("sizes"), list):
            value["sizes"] = tuple(value["sizes"])
        return data.Growth(**value)
    if isinstance(value, (bool, tuple, list)):
        return data.as_growth(tuple(value) if isinstance(value, list) else value)
    return value


def _hypers(value):
    """A rule from a dict: {"rule": "fixed", lengthscale, ...} or (default) a Refit's fields, its
    `start` and `schedule` dicts included."""
    if not isinstance(value, dict):
        return value
    value = dict(value)
    rule = value.pop("rule", "refit")
    if rule == "fixed":
        return FixedHypers(**value)
    if rule != "refit":
        raise ValueError(f"hypers: unknown rule {rule!r}; choose 'fixed' or 'refit'")
    if isinstance(value.get("start"), dict):
        value["start"] = FixedHypers(**value["start"])
    if isinstance(value.get("schedule"), dict):
        value["schedule"] = RefitSchedule(**value["schedule"])
    return Refit(**value)


def _batching(value):
    """None, or {"kind": "lies" | "joint_mc", ...fields}."""
    if not isinstance(value, dict):
        return value
    value = dict(value)
    kind = value.pop("kind", "lies")
    kinds = {"lies": Lies, "joint_mc": JointMC}
    if kind not in kinds:
        raise ValueError(f"batching: unknown kind {kind!r}; choose one of {tuple(kinds)}")
    return kinds[kind](**value)


DESIGNS = {"lhs": LatinHypercube, "sobol": Sobol, "uniform": Uniform}


def _design(value):
    if isinstance(value, str):
        if value not in DESIGNS:
            raise ValueError(f"design: unknown design {value!r}; choose one of {tuple(DESIGNS)} or a Design")
        return DESIGNS[value]()
    return value


def _model(value):
    if isinstance(value, dict):
        value = dict(value)
        if isinstance(value.get("prior"), dict):
            value["prior"] = gp.HyperPrior(**value["prior"])
        elif value.get("prior") is True:
            value["prior"] = gp.HyperPrior()
        return gp.GPModel(**value)
    return value


#: How an option given as plain data (a config file's table, a dict) becomes its part.
FROM_CONFIG = {
    "maximiser": lambda v: Maximiser(**v) if isinstance(v, dict) else v,
    "hypers": _hypers,
    "refit": _hypers,
    "batching": _batching,
    "design": _design,
    "growth": _growth,
    "model": _model,
}


def from_config(options: dict) -> dict:
    """`options` with every part given as plain data (a dict, a design's name, a growth's bool or
    sizes) turned into its part; parts and other options pass unchanged."""
    return {k: FROM_CONFIG[k](v) if k in FROM_CONFIG else v for k, v in options.items()}


__all__ = [
    "BATCH_LIE",
    "DESIGNS",
    "Design",
    "FixedHypers",
    "FROM_CONFIG",
    "GP_MAXIMISER",
    "GP_REFIT",
    "GP_REFIT_GROWTH",
    "HypersParams",
    "JointMC",
    "LIES",
    "LatinHypercube",
    "Lies",
    "Maximiser",
    "REFIT_ALL",
    "REFIT_GROWTH",
    "Refit",
    "RefitSchedule",
    "SCREEN_DATA",
    "Sobol",
    "Uniform",
    "from_config",
    "init_params",
    "lie_values",
]
