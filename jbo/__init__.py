"""jbo: a JAX functional experiment engine for Bayesian-optimisation research.

Importing jbo switches JAX to float64: GP, KDE and kernel-regression numerics need it. With jaxlib
0.10.x it also lowers batched Choleskys and triangular solves on CPU to loops of unbatched LAPACK
calls, which avoids a deadlock in that jaxlib (see jbo.linalg; JBO_LAPACK_LOOP=0 turns it off). The
BLAS under JAX's CPU LAPACK calls (SciPy's) runs one thread, so that its spinning threads leave the
cores to XLA's (see jbo.linalg; JBO_LAPACK_THREADS=0 leaves it as it is).
"""

import jax

jax.config.update("jax_enable_x64", True)

from jbo import cache  # noqa: E402

cache.configure_from_env()  # persistent compilation cache (JBO_CACHE=0 turns it off; see jbo.cache)

from jbo import linalg  # noqa: E402

linalg.install()  # batched LAPACK calls on CPU as loops: jaxlib 0.10.x can deadlock on them (jbo.linalg)
linalg.limit_threads()  # one thread for SciPy's BLAS under JAX's CPU LAPACK calls (jbo.linalg)

from jbo import (  # noqa: E402
    acquisitions,
    algorithms,
    bandits,
    checks,
    data,
    designs,
    gp,
    kde,
    kernels,
    metrics,
    optimize,
    parallel,
    parts,
    problems,
    protocols,
    regression,
    runner,
    scan,
    spaces,
    studies,
    study_config,  # studies from a config file: `jbo study CONFIG.toml`
    verdict,
)
from jbo.asktell import AskTell  # noqa: E402
from jbo.checks import NonFiniteError  # noqa: E402
from jbo.engine import (  # noqa: E402
    Algorithm,
    Environment,
    Spec,
    Step,
    Trace,
    program,
    replace_params,
    run,
    run_environments,
    run_seeds,
    run_sweep,
)

__all__ = [
    "Algorithm",
    "AskTell",
    "Environment",
    "NonFiniteError",
    "Spec",
    "Step",
    "Trace",
    "program",
    "replace_params",
    "run",
    "run_environments",
    "run_seeds",
    "run_sweep",
    "acquisitions",
    "algorithms",
    "bandits",
    "checks",
    "data",
    "designs",
    "gp",
    "kde",
    "kernels",
    "metrics",
    "optimize",
    "parallel",
    "parts",
    "problems",
    "protocols",
    "runner",
    "scan",
    "regression",
    "spaces",
    "studies",
    "cache",
    "study_config",
    "verdict",
    "linalg",
]
__version__ = "0.8.0"
