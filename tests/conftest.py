import os
import shutil
import tempfile

import pytest

# The suite is compile-bound (hundreds of small programs, each run for a few steps): XLA's optimisation
# passes cost more than they save here. Turning them off changes no result beyond rounding (every
# test compares against tolerances) and cut the CPU time of the registry tests by about 30%. Set in the
# environment so the notebook kernels and CLI subprocesses the tests start inherit it.
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
# The tests neither read nor write a user's persistent compilation cache (jbo.cache; the suite keeps
# its own, below, and tests that check the cache give their subprocess a temporary directory).
os.environ.setdefault("JBO_CACHE", "0")
# On a GPU every xdist worker would otherwise take 75% of the GPU's memory when it starts (JAX's
# preallocation), and the second worker would run out; the suite's programs are small.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jbo  # noqa: E402,F401  (enables float64)

# The suite's own compilation cache, shared by its xdist workers and emptied at the end: the modules
# compile many of the same programs (the registry's algorithms on the same problems, the pages' code,
# the demo), each worker separately and again after every module's clear_caches. Programs that
# compile in under SUITE_CACHE_MIN_SECONDS are not written. Subprocesses the tests start do not use
# it (they keep JBO_CACHE=0 unless a test gives them their own cache).
SUITE_CACHE_ENV = "JBO_SUITE_CACHE_DIR"
SUITE_CACHE_MIN_SECONDS = 0.2


def pytest_configure(config):
    from jbo import cache

    if hasattr(config, "workerinput"):  # an xdist worker: the controller made the directory
        path = os.environ[SUITE_CACHE_ENV]
    else:
        path = tempfile.mkdtemp(prefix="jbo-suite-cache-")
        os.environ[SUITE_CACHE_ENV] = path  # inherited by the workers xdist starts after this
        config._jbo_suite_cache = path
    cache.enable(path, min_compile_time_secs=SUITE_CACHE_MIN_SECONDS)


def pytest_unconfigure(config):
    path = getattr(config, "_jbo_suite_cache", None)
    if path:
        shutil.rmtree(path, ignore_errors=True)


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False, help="run slow reproductions (and the extended tests)"
    )
    parser.addoption(
        "--extended",
        action="store_true",
        default=False,
        help="run the extended tests: a default test's property on more algorithms, seeds or devices",
    )


def pytest_collection_modifyitems(config, items):
    """The default run proves each property on a representative case; `extended` tests repeat it on
    more algorithms, seeds or devices (CI runs them: pytest --extended -m extended), `slow` ones are the
    long reproductions (--runslow runs both)."""
    if config.getoption("--runslow"):
        return
    extended = config.getoption("--extended")
    skip_slow = pytest.mark.skip(reason="slow reproduction: run with --runslow")
    skip_extended = pytest.mark.skip(reason="extended: run with --extended (CI does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
        elif "extended" in item.keywords and not extended:
            item.add_marker(skip_extended)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module: the whole suite in one process otherwise
    holds hundreds of executables (peak RSS 7.8 GB) and crashed late in full runs,
    while every module passes on its own."""
    yield
    import jax

    jax.clear_caches()


@pytest.fixture
def xla_optimized():
    """For the few tests whose cost is running a program, not compiling it (e.g. thousands of Thompson
    samples): compile with XLA's optimisations back on."""
    import jax

    # JAX's in-memory jit caches do not key on this flag: clear them on the way in and out, so a program
    # compiled earlier in the process with the other setting is not reused (jbo's own runner cache keys on it)
    jax.clear_caches()
    jax.config.update("jax_disable_most_optimizations", False)
    yield
    jax.clear_caches()
    jax.config.update("jax_disable_most_optimizations", os.environ.get("JAX_DISABLE_MOST_OPTIMIZATIONS") == "1")
