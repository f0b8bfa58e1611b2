"""The metric vocabulary, the same for every environment.

An environment's ``step`` reports ``value`` (the true, or expected, value of the action), and where
known ``optimal_value`` (this step's optimum, so a drifting objective gives dynamic regret) and
``cost``; anything else it reports is kept. :func:`derive` adds the rest: ``best_value``, ``regret``
(instantaneous), ``simple_regret`` (f* - best value for a fixed optimum; the smallest instantaneous
regret so far for a per-step one), ``cumulative_regret``, ``cost`` (charged to the budget: 1 per
evaluation unless the environment reports one; 0 for free initial steps) and ``cumulative_cost``; the
runner adds ``active``. A failed evaluation (a non-finite value; see jbo.checks) is left out of
``best_value`` and ``simple_regret``; before a run's first finite evaluation both are NaN, so a
NaN-skipping mean over seeds (pandas, jbo.studies) averages the seeds that have one.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Tally(NamedTuple):
    """What the metrics carry from step to step."""

    best_value: jax.Array
    simple_regret: jax.Array
    cumulative_regret: jax.Array
    cumulative_cost: jax.Array


def tally_init() -> Tally:
    inf = jnp.asarray(jnp.inf)
    return Tally(-inf, inf, jnp.zeros(()), jnp.zeros(()))


def derive(raw: dict, tally: Tally, charged):
    """(metrics, tally): the shared metric vocabulary from an environment's raw step metrics `raw`, the
    tally so far and the cost `charged` for this step."""
    if "value" not in raw:
        raise ValueError(f"an environment's step must report 'value'; it reported {sorted(raw)}")
    value = jnp.asarray(raw["value"], jnp.float64)
    best = jnp.maximum(tally.best_value, jnp.where(jnp.isfinite(value), value, -jnp.inf))  # a failed value: left out
    cum_cost = tally.cumulative_cost + charged
    metrics = {k: v for k, v in raw.items() if k != "optimal_value"}
    metrics.update(value=value, best_value=so_far(best), cost=charged, cumulative_cost=cum_cost)
    simple, cum_regret = tally.simple_regret, tally.cumulative_regret
    if "optimal_value" in raw:
        opt = raw["optimal_value"]
        regret = opt - value
        # A fixed optimum (a number): f* - best value. A per-step optimum (an array, a drifting
        # objective): the smallest instantaneous regret so far. Equal in exact arithmetic for a fixed
        # f*; the first form keeps the rounding of every earlier result (XLA may fuse f(x) into each
        # consumer separately, so opt - value and the reported value can differ in the last ulp).
        counted = jnp.isfinite(regret)  # a failed evaluation (NaN or inf) adds nothing
        simple = (
            opt - best if isinstance(opt, (int, float)) else jnp.minimum(simple, jnp.where(counted, regret, jnp.inf))
        )
        cum_regret = cum_regret + jnp.where(counted, regret, 0.0)
        metrics.update(regret=regret, simple_regret=so_far(simple), cumulative_regret=cum_regret)
    return metrics, Tally(best, simple, cum_regret, cum_cost)


def so_far(tally_value):
    """A best value or simple regret as reported: NaN until the run has a finite evaluation (the
    tally's -inf / +inf start), so a mean over seeds that skips NaN (pandas, jbo.studies) averages
    the seeds that have a value instead of turning infinite."""
    return jnp.where(jnp.isfinite(tally_value), tally_value, jnp.nan)
