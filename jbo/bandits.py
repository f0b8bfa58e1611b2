"""Adversarial bandits as optax-style triples of pure functions over a small state pytree.

Two algorithms share one state and one interface:

* `exp3` - EXP3 (Auer et al. 2002), partial information: only the played arm's reward is seen. Used by UHE-BO
  (spec section 2.2, Algorithm 1: 2 arms, "random then BO" vs "BO then BO", one decision per pair of
  evaluations) and by the Portfolio baseline (spec section 4.3: arms {Random, GP-UCB}, one decision per evaluation).
* `hedge` - Hedge / GP-Hedge (Hoffman et al. 2011), full information: every arm's gain is seen each round.

State and conventions
---------------------
`BanditState(log_weights, count)`. The weights are kept in log space (spec section 8.8): after `init` and after
every `update` they are renormalised, ``log_w <- log_w - logsumexp(log_w)``, so ``logsumexp(log_w) == 0`` and
``exp(log_w)`` is the normalised weight vector ``w / sum(w)``. The probabilities depend only on weight
ratios, so renormalising changes nothing but keeps large (unclipped, spec D23) rewards from overflowing.
`count` (int32) is the number of updates so far, i.e. the number of completed bandit rounds.

Arms are 0-based: arm 0 is the paper's arm 1.

Usage (one round)::

    bandit = exp3(evals_per_round=2)          # UHE-BO
    state = bandit.init(2)
    p = bandit.probabilities(state)          # decide
    arm = sample(key, bandit, state)
    ...                                       # play the arm, observe reward r
    state = bandit.update(state, arm, r, p)   # learn

Every function is pure, has static shapes and no Python branching on array values, so it can be used under
`jax.jit`, `jax.vmap` (e.g. over seeds) and `jax.grad` (e.g. with respect to rewards or gains). Python
branching happens only on configuration (``gamma is None``, ``callable(gamma)``, ``max_reward is None``).
Import `jbo` (or `jbo.bandits`, which imports `jbo`) first so that float64 is enabled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

_E_MINUS_1 = math.e - 1.0


class BanditState(NamedTuple):
    """State shared by all bandits.

    log_weights: (K,) float64 log-weights, renormalised so that ``logsumexp(log_weights) == 0``.
    count: int32 scalar, number of `update` calls so far (rounds played).
    """

    log_weights: jax.Array
    count: jax.Array


class Bandit(NamedTuple):
    """An optax-style triple of pure functions.

    init(num_arms) -> BanditState
        ``num_arms`` is a static Python int K.
    probabilities(state) -> (K,) float64
        The distribution the next arm is drawn from.
    update(state, arm, reward_or_gains, probabilities=None) -> BanditState
        ``arm``: the arm that was played (int scalar); ``reward_or_gains``: scalar reward of the played arm
        (EXP3) or (K,) gains of all arms (Hedge); ``probabilities``: the vector the arm was drawn with
        (None: recompute it from ``state``). Increments ``count`` by one.
    """

    init: Callable[[int], BanditState]
    probabilities: Callable[[BanditState], jax.Array]
    update: Callable[..., BanditState]


def _init(num_arms: int) -> BanditState:
    """Uniform weights, already renormalised: ``log_w = -log K`` for every arm, ``count = 0``."""
    k = int(num_arms)
    if k < 1:
        raise ValueError(f"num_arms must be >= 1, got {num_arms}")
    log_w = jnp.full((k,), -math.log(k), dtype=jnp.float64)
    return BanditState(log_weights=log_w, count=jnp.zeros((), dtype=jnp.int32))


def _renormalise(log_w: jax.Array) -> jax.Array:
    """``log_w - logsumexp(log_w)``: the log of ``w / sum(w)``."""
    return log_w - logsumexp(log_w)


# ---------------------------------------------------------------- EXP3
def anytime_gamma(num_arms: int, rounds) -> jax.Array:
    """EXP3 exploration rate tuned for a horizon of ``rounds`` rounds (Auer et al. 2002, Cor. 3.2):

        gamma(g) = min(1, sqrt(K ln K / ((e - 1) g))),   K = num_arms, g = rounds > 0.

    With K = 2 and g = t / 2 (two evaluations per round) this is the UHE-BO rate
    ``min(1, sqrt(4 ln 2 / ((e - 1) t)))`` of Algorithm 1 with decision D5; with K = 2 and g = t it is the
    Portfolio rate ``min(1, sqrt(2 ln 2 / ((e - 1) t)))`` of decision D17. For K = 1 it is 0.
    ``rounds`` may be a traced array (float or int); the result is float64.
    """
    k = int(num_arms)
    g = jnp.asarray(rounds, dtype=jnp.float64)
    return jnp.minimum(1.0, jnp.sqrt(k * math.log(k) / (_E_MINUS_1 * g)))


def exp3_clocks(count, evals_per_round: int = 1):
    """The EXP3 round clocks ``(g_decide, g_update)`` (float64) of the round that starts at state ``count``.

    A round is ``S = evals_per_round`` consecutive objective evaluations t = S*count + 1, ..., S*count + S
    (1-based iteration index t). The arm is drawn at the first one and the reward/update happens at the last one,
    and the clock is the iteration index in units of rounds, g = t / S:

        g_decide = count + 1 / S      (t = S*count + 1)
        g_update = count + 1          (t = S*count + S)

    S = 1 (Portfolio): both equal ``count + 1``. S = 2 (UHE-BO): ``count + 1/2`` at the odd step and
    ``count + 1`` at the even step, so that `anytime_gamma` reproduces Algorithm 1's ``gamma(t)``, recomputed at
    the odd t for p and at the even t for the update (decision D4, literal reading).
    """
    s = int(evals_per_round)
    if s < 1:
        raise ValueError(f"evals_per_round must be >= 1, got {evals_per_round}")
    c = jnp.asarray(count, dtype=jnp.float64)
    return c + 1.0 / s, c + 1.0


def exp3_gammas(count, num_arms: int, gamma=None, evals_per_round: int = 1):
    """The exploration rates ``(gamma_decide, gamma_update)`` that `exp3` uses at state ``count``.

    * ``gamma`` a number (or array): constant, ``gamma_decide = gamma_update = gamma``.
    * ``gamma=None``: ``anytime_gamma(num_arms, g)`` at the clocks ``g`` of `exp3_clocks`.
    * ``gamma`` callable: ``gamma(g)`` at the same clocks (g: float64 scalar, 1-based round clock).

    Exposed so that a BO loop can record the gamma it used in its trace.
    """
    if gamma is None or callable(gamma):
        g_dec, g_upd = exp3_clocks(count, evals_per_round)
        fn = (lambda g: anytime_gamma(num_arms, g)) if gamma is None else gamma
        return (jnp.asarray(fn(g_dec), dtype=jnp.float64), jnp.asarray(fn(g_upd), dtype=jnp.float64))
    g = jnp.asarray(gamma, dtype=jnp.float64)
    return g, g


def exp3(
    gamma: None | float | jax.Array | Callable[[jax.Array], jax.Array] = None,
    *,
    evals_per_round: int = 1,
    max_reward: float | None = None,
) -> Bandit:
    """EXP3 (Auer et al. 2002, Fig. 1 / spec Algorithm 1 and section 4.3), weights in log space.

    With K arms, normalised log-weights ``log_w`` (``w = exp(log_w)``, ``sum w = 1``) and the rates
    ``(gamma_d, gamma_u) = exp3_gammas(state.count, K, gamma, evals_per_round)``:

    probabilities(state):
        p_i = (1 - gamma_d) * softmax(log_w)_i + gamma_d / K,
        so sum p = 1 and min p >= gamma_d / K.

    update(state, arm, reward, probabilities=p):
        r_hat = r / p[arm]                                   (importance-weighted reward, 0 for other arms)
        log_w[arm] += gamma_u * r_hat / K                    (i.e. w_arm <- w_arm * exp(gamma_u r / (K p_arm)))
        log_w <- log_w - logsumexp(log_w);  count += 1.
        With K = 2 this is Algorithm 1's ``w <- w exp(gamma r / (2 p))``. ``p`` should be the vector the arm was
        drawn with (UHE-BO: the odd-step p, computed with gamma_d); None recomputes ``probabilities(state)``,
        which is the same vector as long as ``state`` has not changed in between.

    Args:
        gamma: exploration rate in [0, 1]. None (default): the anytime rate of `anytime_gamma`,
            ``min(1, sqrt(K ln K / ((e - 1) g)))`` on the round clock g of `exp3_clocks`. A number: constant.
            A callable: ``gamma(g) -> rate`` on the same float64 clock g (1-based, in rounds; not the raw int
            ``count``, so that the odd/even convention below applies to custom schedules too).
        evals_per_round: S, the number of objective evaluations per bandit round (static). It only moves the
            clock: g_decide = count + 1/S, g_update = count + 1. Use S = 2 for UHE-BO (draw at odd t with
            gamma(t_odd), update at even t with gamma(t_even), decisions D4/D5) and S = 1 for the Portfolio
            baseline (gamma_t = min(1, sqrt(2 ln 2 / ((e - 1) t))) at t = count + 1 for both, D17).
        max_reward: None (default, spec D23: no clipping) or c > 0 to clip the reward to [0, c] before the
            update (D23's optional stabiliser, c = 5 suggested there).

    Rewards are assumed scaled by the caller (D23: min-max with the initial design); they enter unclipped
    unless ``max_reward`` is set. Large rewards divided by small p are safe thanks to the renormalisation.
    """
    s = int(evals_per_round)
    if s < 1:
        raise ValueError(f"evals_per_round must be >= 1, got {evals_per_round}")

    def _probabilities(state: BanditState) -> jax.Array:
        k = state.log_weights.shape[-1]
        g_dec, _ = exp3_gammas(state.count, k, gamma, s)
        return (1.0 - g_dec) * jax.nn.softmax(state.log_weights) + g_dec / k

    def update(state: BanditState, arm, reward, probabilities=None) -> BanditState:
        k = state.log_weights.shape[-1]
        p = _probabilities(state) if probabilities is None else jnp.asarray(probabilities)
        _, g_upd = exp3_gammas(state.count, k, gamma, s)
        r = jnp.asarray(reward, dtype=state.log_weights.dtype)
        if max_reward is not None:
            r = jnp.clip(r, 0.0, max_reward)
        arm = jnp.asarray(arm, dtype=jnp.int32)
        step = g_upd * r / (k * p[arm])
        log_w = state.log_weights.at[arm].add(step)
        return BanditState(log_weights=_renormalise(log_w), count=state.count + 1)

    return Bandit(init=_init, probabilities=_probabilities, update=update)


# ---------------------------------------------------------------- Hedge
def hedge(eta) -> Bandit:
    """Hedge / GP-Hedge (Freund & Schapire 1997; Hoffman et al. 2011, Alg. 2), full information.

    With cumulative gains ``G_i = sum_{s <= t} g_{s,i}`` (G = 0 at init) the state stores
    ``log_w = eta * G - logsumexp(eta * G)``:

    probabilities(state):
        p = softmax(log_w) = softmax(eta * G),   i.e. p_i = exp(eta G_i) / sum_j exp(eta G_j).

    update(state, arm, gains, probabilities=None):
        log_w <- log_w + eta * gains;  log_w <- log_w - logsumexp(log_w);  count += 1.
        ``gains`` is the (K,) vector of this round's gains of ALL arms (GP-Hedge: the posterior mean at each
        arm's nominee after the new observation). ``arm`` and ``probabilities`` are accepted for interface
        compatibility with `exp3` and ignored.

    Args:
        eta: learning rate > 0 (a number, or an array when vmapping / differentiating over it).
    """

    def _probabilities(state: BanditState) -> jax.Array:
        return jax.nn.softmax(state.log_weights)

    def update(state: BanditState, arm, gains, probabilities=None) -> BanditState:
        del arm, probabilities
        g = jnp.asarray(gains, dtype=state.log_weights.dtype)
        log_w = state.log_weights + eta * g
        return BanditState(log_weights=_renormalise(log_w), count=state.count + 1)

    return Bandit(init=_init, probabilities=_probabilities, update=update)


# ---------------------------------------------------------------- sampling
def sample(key: jax.Array, bandit: Bandit, state: BanditState) -> jax.Array:
    """Draw an arm ``a ~ Categorical(p)``, ``p = bandit.probabilities(state)``, as an int32 scalar.

    Implemented as ``jax.random.categorical(key, log p)``; arms with p = 0 (only possible for Hedge after
    underflow) have log p = -inf and are never drawn.
    """
    p = bandit.probabilities(state)
    return jax.random.categorical(key, jnp.log(p)).astype(jnp.int32)


__all__ = [
    "Bandit",
    "BanditState",
    "anytime_gamma",
    "exp3",
    "exp3_clocks",
    "exp3_gammas",
    "hedge",
    "sample",
]
