"""jbo: a JAX functional experiment engine for Bayesian-optimisation research.

Importing jbo switches JAX to float64: GP, KDE and kernel-regression numerics need it.
"""
import jax

jax.config.update("jax_enable_x64", True)

from jbo import (  # noqa: E402
    acquisitions,
    bandits,
    data,
    designs,
    gp,
    kde,
    kernels,
    optimize,
    regression,
    spaces,
)
from jbo.engine import (  # noqa: E402
    Algorithm,
    AskTell,
    Environment,
    Spec,
    Step,
    Trace,
    replace_params,
    run,
    run_seeds,
    run_sweep,
)
from jbo import algorithms, problems, studies  # noqa: E402

__all__ = [
    "Algorithm", "AskTell", "Environment", "Spec", "Step", "Trace", "replace_params", "run", "run_seeds", "run_sweep",
    "acquisitions", "algorithms", "bandits", "data", "designs", "gp", "kde", "kernels", "optimize",
    "problems", "regression", "spaces", "studies",
]
__version__ = "0.1.0"
