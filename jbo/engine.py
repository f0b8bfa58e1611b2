"""The engine: the public names of the four modules a run is made of, in one place.

    jbo.protocols  Algorithm, Environment, Spec, Step, Trace: what a run is made of
    jbo.metrics    the metric vocabulary every environment's metrics are completed to
    jbo.scan       one run: a lax.scan over the steps, in segments where the state grows
    jbo.runner     the program builder and the entry points: run, run_seeds, run_sweep,
                   run_environments (batches over seeds, settings, environments, paired instances)

``from jbo.engine import Algorithm, run_seeds`` and ``from jbo.runner import run_seeds`` name the same
objects.
"""

from __future__ import annotations

from jbo.data import Growth
from jbo.metrics import Tally, derive
from jbo.protocols import Algorithm, Environment, PyTree, Spec, Step, Trace, box_spec
from jbo.runner import (
    BATCHES,
    Program,
    as_key,
    check_run,
    checked_params,
    program,
    replace_params,
    run,
    run_environments,
    run_seeds,
    run_sweep,
    seed_keys,
    stack_environments,
    stack_params,
)
from jbo.scan import SMALL_STATE_ELEMENTS, one_run, split_seed

__all__ = [
    "BATCHES",
    "SMALL_STATE_ELEMENTS",
    "Algorithm",
    "Environment",
    "Growth",
    "Program",
    "PyTree",
    "Spec",
    "Step",
    "Tally",
    "Trace",
    "as_key",
    "box_spec",
    "check_run",
    "checked_params",
    "derive",
    "one_run",
    "program",
    "replace_params",
    "run",
    "run_environments",
    "run_seeds",
    "run_sweep",
    "seed_keys",
    "split_seed",
    "stack_environments",
    "stack_params",
]
