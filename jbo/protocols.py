"""The protocols every run is made of: an :class:`Algorithm` (init / ask / tell over a state pytree),
an :class:`Environment` (reset / step, knowing the truth), the :class:`Spec` an algorithm is given, the
:class:`Step` it is at, and the :class:`Trace` a run records. See jbo.scan for how one run steps them.

**Spaces and side information.** The environment describes its action space (a box, a finite arm
set, control sets; :mod:`jbo.spaces`), its context dimension, and what the learner is told
(``side_info``: a known noise law, a variation budget, an RKHS bound; per seed where it depends on
the reset) in the :class:`Spec` handed to ``init`` and ``initial_actions``.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax

from jbo import data
from jbo.spaces import Box

PyTree = Any


class Spec(eqx.Module):
    """What an algorithm may know about the problem before it starts.

    space: the action space (jbo.spaces). num_steps, context_dim: static. info: side information
    (a dict of arrays; per seed when the environment's reset draws it)."""

    space: Any
    num_steps: int = eqx.field(static=True)
    context_dim: int = eqx.field(static=True, default=0)
    info: dict = eqx.field(default_factory=dict)

    @property
    def dim(self) -> int:
        return self.space.dim


def box_spec(dim: int, num_steps: int, context_dim: int = 0, info=None) -> Spec:
    """A Spec for the unit box [0, 1]^dim (tests, notebooks)."""
    return Spec(Box(dim=dim), num_steps, context_dim, {} if info is None else info)


class Step(NamedTuple):
    """Where a run is: the step index t (int32, unbatched in a scan) and whether it is an initial-design step."""

    t: jax.Array
    initial: jax.Array


class Trace(NamedTuple):
    """What a run records, every leaf with a leading step axis (after any batch axes: seed, setting,
    environment), except final_state."""

    actions: PyTree  # the actions played
    observations: PyTree  # what the environment returned
    metrics: dict  # name -> (num_steps,) arrays: the metric vocabulary (jbo.metrics)
    info: PyTree  # the algorithm's per-step diagnostics: its Info NamedTuple (or a dict)
    final_state: PyTree  # the algorithm's state after the last step (see keep_final_state)
    flags: dict | None = None  # the runner's per-step nonfinite_objective / nonfinite_action (jbo.checks)


class Algorithm(eqx.Module):
    """init / ask / tell over a state pytree. Fields are static configuration; Params are traced."""

    num_initial: eqx.AbstractVar[int]

    def default_params(self) -> PyTree:
        return None

    def initial_actions(self, key, spec: Spec) -> PyTree:
        """The shared initial design (leading axis num_initial): the space's (a Latin hypercube on a box)."""
        return spec.space.initial_design(key, self.num_initial)

    @abc.abstractmethod
    def init(self, key, params, spec: Spec) -> PyTree:
        """Empty state for a run of spec.num_steps steps."""

    @abc.abstractmethod
    def ask(self, key, state, params, step: Step) -> tuple[PyTree, PyTree]:
        """Return (action, state): the next action and any state it updated (fitted models, ...)."""

    @abc.abstractmethod
    def tell(self, key, state, params, action, observation, step: Step) -> PyTree:
        """Return the state after observing `observation` at `action`."""

    def info(self, state, params) -> PyTree:
        """Per-step diagnostics recorded in Trace.info (chosen arm, probabilities, phase, hyper-parameters):
        a NamedTuple of arrays with each field documented (a dict works too); a field named
        ``nonfinite_<source>`` is a flag that jbo.checks looks at after the run. None by default."""
        return {}

    growth: ClassVar[data.Growth] = data.Growth()  # how growing state grows (an algorithm's field overrides it)

    def capacities(self, num_steps: int) -> tuple[int, ...]:
        """The row capacities a run's growing state passes through (see "Growing state" in jbo.scan): a static schedule ending at num_steps, the algorithm's :class:`jbo.data.Growth`
        (`growth`, the default rule unless the algorithm declares its own); (num_steps,) keeps every
        buffer whole."""
        return self.growth(num_steps)


class Environment(eqx.Module):
    """A problem that knows the truth: reset/step, with true-value metrics for each step."""

    @property
    @abc.abstractmethod
    def space(self):
        """The action space (jbo.spaces.Box, FiniteArms or ControlSets)."""

    @property
    def dim(self) -> int:
        return self.space.dim

    def side_info(self, env_state) -> dict:
        """What the learner is told about the instance (a dict of arrays); nothing by default."""
        return {}

    def spec(self, num_steps: int, env_state=None) -> Spec:
        info = {} if env_state is None else self.side_info(env_state)
        return Spec(self.space, num_steps, getattr(self, "context_dim", 0), info)

    @abc.abstractmethod
    def reset(self, key) -> PyTree:
        """Initial environment state."""

    @abc.abstractmethod
    def step(self, key, env_state, action, step: Step) -> tuple[PyTree, PyTree, dict]:
        """Return (env_state, observation, metrics) for one action; metrics hold at least "value"."""
