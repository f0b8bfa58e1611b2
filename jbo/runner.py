"""The runner: one program builder behind every entry point.

:func:`program` takes an algorithm, an environment and a declared batch (which axes the runs span) and
returns a compiled :class:`Program`; :func:`run`, :func:`run_seeds`, :func:`run_sweep`,
:func:`run_environments`, jbo.studies, the paired instances of jbo.problems.r_perp and
jbo.AskTell's key schedule are thin wrappers over it and over :func:`seed_keys`. Every entry point takes
the algorithm and the environment positionally and everything else by keyword, in one order and one
vocabulary: ``key, num_steps, num_seeds, params, budget, free_initial``, then how to run
(``devices, chunk_size, memory_limit, keep_final_state, bitwise, sequential``), then
``on_nonfinite`` ("raise", "warn" or "ignore": what to do after a run that met NaN or inf; jbo.checks).

The batches (``batch=``):

    "one"           keys ()        -> one run (jitted; no devices or chunks)
    "seeds"         keys (S,)      -> axes (seed, step)
    "settings"      keys (S,), params with a leading axis P -> (setting, seed, step), every setting
                    with the same seeds (common random numbers across the sweep)
    "environments"  environments that differ only in array values (stack_environments), keys (S,)
                    -> (environment, seed, step), every environment with the same seeds
    "instances"     one environment per key (paired: seed i runs environments[i]) -> (seed, step)

Batches of runs are spread over devices and cut into chunks by jbo.parallel; compiled programs are
kept in a small cache keyed by the static configuration and the input shapes.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jbo import checks, parallel, scan
from jbo.protocols import Algorithm, Environment, Trace
from jbo.scan import check_keep, keep_state

BATCHES = ("one", "seeds", "settings", "environments", "instances")
_RUNNERS: dict = {}  # a few recently compiled batch programs (like jax.jit's cache, for repeated calls)
_RUNNERS_KEPT = 8


def as_key(key, argument: str = "key"):
    """The typed JAX PRNG key every entry point works with, from what a user may pass: an int seed
    (a Python or NumPy integer, or a 0-d integer array; not a bool), a typed key (jax.random.key;
    shape ()) or a legacy uint32 key (jax.random.PRNGKey; shape (2,)). Anything else is a TypeError
    naming `argument`."""
    if isinstance(key, jax.core.Tracer):
        return key
    if isinstance(key, (bool, np.bool_)):
        raise TypeError(f"{argument} must be an int seed or a JAX key, got the bool {key!r}")
    dtype, shape = getattr(key, "dtype", None), np.shape(key) if hasattr(key, "shape") else None
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        if shape != ():
            raise ValueError(
                f"{argument} must be one key (shape ()), got a key array of shape {shape}; pass the key the "
                "seeds are split from"
            )
        return key
    integer = isinstance(key, (int, np.integer)) or (dtype is not None and np.dtype(dtype).kind in "iu" and shape == ())
    if integer:
        try:
            return jax.random.key(int(key))
        except (OverflowError, ValueError, TypeError) as e:
            raise ValueError(f"{argument}: the int seed {int(key)} cannot seed a JAX key ({e})") from None
    if dtype is not None and np.dtype(dtype) == np.uint32 and shape == (2,):  # jax.random.PRNGKey(seed)
        return jax.random.wrap_key_data(jnp.asarray(key))
    what = f"{type(key).__name__} of shape {shape} and dtype {dtype}" if dtype is not None else type(key).__name__
    raise TypeError(
        f"{argument} must be an int seed, a typed JAX key (jax.random.key) or a legacy uint32 key "
        f"(jax.random.PRNGKey), got {what}: {str(key)[:60]}"
    )


def seed_keys(key, num_seeds: int):
    """The num_seeds keys of a batch of seeds, split from `key` (an int seed or a JAX key, see
    :func:`as_key`): seed i of every entry point uses jax.random.split(key, num_seeds)[i]."""
    if isinstance(num_seeds, bool) or not isinstance(num_seeds, (int, np.integer)) or num_seeds < 1:
        raise ValueError(f"num_seeds must be a positive int, got {num_seeds!r}")
    return jax.random.split(as_key(key), num_seeds)


def check_run(algorithm, environment, num_steps, budget=None) -> float | None:
    """Check an entry point's algorithm, environment, num_steps and budget (named errors); returns the
    budget as a float (or None)."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
    if not isinstance(environment, Environment):
        raise TypeError(f"environment must be a jbo.Environment, got {type(environment).__name__}")
    if not isinstance(num_steps, (int, np.integer)) or num_steps < 1:
        raise ValueError(f"num_steps must be a positive int, got {num_steps!r}")
    if num_steps < algorithm.num_initial:
        raise ValueError(
            f"num_steps={num_steps} is smaller than the initial design (num_initial={algorithm.num_initial})"
        )
    if budget is not None and not (np.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be a positive finite cost, got {budget!r}")
    return None if budget is None else float(budget)


def checked_params(algorithm, params, on_nonfinite: str = "raise"):
    """The run's Params (the algorithm's defaults for None), checked against their domains, and
    on_nonfinite checked against its vocabulary."""
    checks.check_on_nonfinite(on_nonfinite)
    params = algorithm.default_params() if params is None else params
    checks.check_params(params, f"{type(algorithm).__name__}: ")
    return params


def _signature(tree):
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple(
        (np.shape(x), str(x.dtype), bool(getattr(x, "weak_type", False)))
        if hasattr(x, "dtype")
        else ("py", type(x).__name__)
        for x in leaves
    )


def _batch_runner(
    kind,
    static,
    build_program,
    batched,
    replicated,
    out_axis,
    devices,
    chunk_size,
    memory_limit,
    extra=(),
    cache=True,
    bitwise=False,
    steps=None,
):
    """The compiled batch program for these inputs, from the cache or compiled now (jbo.parallel);
    returns (runner, compile_seconds: 0.0 on a cache hit). cache=False: always compile, keep nothing."""
    devs = parallel.resolve_devices(devices)
    bitwise = parallel.check_bitwise(bitwise)  # before the cache key: 1 or np.True_ must not pass as True
    if not cache:
        runner, _, seconds = parallel.compile_runs(
            build_program(),
            batched,
            replicated,
            out_axis=out_axis,
            devices=devs,
            chunk_size=chunk_size,
            memory_limit=memory_limit,
            bitwise=bitwise,
            steps=steps,
        )
        return runner, seconds
    try:
        leaves, treedef = jax.tree.flatten(static)
        key = (
            kind,
            treedef,
            tuple(leaves),
            _signature(batched),
            _signature(replicated),
            out_axis,
            tuple(d.id for d in devs),
            chunk_size,
            memory_limit,
            extra,
            bitwise,
            tuple(sorted(parallel.CPU_COMPILER_OPTIONS.items())),  # a change of options compiles anew
            tuple(sorted(parallel.SHORT_PROGRAM_OPTIONS.items())),
            parallel.SHORT_PROGRAM_RUN_STEPS,
            bool(jax.config.read("jax_disable_most_optimizations")),  # and so does a change of XLA's optimisations
        )
        hash(key)
    except TypeError:  # an unhashable static field: compile without caching
        key = None
    if key is not None and key in _RUNNERS:
        _RUNNERS[key] = _RUNNERS.pop(key)  # most recently used last
        return _RUNNERS[key], 0.0
    runner, _, seconds = parallel.compile_runs(
        build_program(),
        batched,
        replicated,
        out_axis=out_axis,
        devices=devs,
        chunk_size=chunk_size,
        memory_limit=memory_limit,
        bitwise=bitwise,
        steps=steps,
    )
    if key is not None:
        _RUNNERS[key] = runner
        while len(_RUNNERS) > _RUNNERS_KEPT:
            _RUNNERS.pop(next(iter(_RUNNERS)))
    return runner, seconds


class Program:
    """A compiled batch of runs: ``program(keys, params)`` -> Trace with the batch's axes first (see
    the module docstring). `keys` and `params` must have the shapes the program was built for.
    compile_seconds: the compile time (0.0 when the program came from the cache); plan: the
    jbo.parallel.Plan (devices, chunks, predicted memory); runner: the jbo.parallel.BatchRunner that
    runs the chunks (its compiled executable); both None for batch="one"."""

    def __init__(self, fn, batch: str, compile_seconds: float, runner=None):
        self._fn, self.batch, self.compile_seconds, self.runner = fn, batch, compile_seconds, runner
        self.plan = None if runner is None else runner.plan

    def __call__(self, keys, params):
        return self._fn(keys, params)


@eqx.filter_jit
def _one(algorithm, environment, key, num_steps, params, budget, free_initial):
    return scan.one_run(
        algorithm, environment, key=key, num_steps=num_steps, params=params, budget=budget, free_initial=free_initial
    )


def _stacked_axes(environment, batch):
    """(stacked environments, their axes) for the batches over environments; (environment, None) else."""
    if batch in ("environments", "instances"):
        return stack_environments(environment)
    return environment, None


def program(
    algorithm: Algorithm,
    environment,
    *,
    keys,
    num_steps: int,
    params,
    batch: str = "seeds",
    budget: float | None = None,
    free_initial: bool = False,
    sequential: bool = False,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    cache: bool = True,
) -> Program:
    """The compiled program of a batch of runs of `algorithm` on `environment` (a list of environments
    for batch="environments" and "instances"), built for these `keys` (one key for batch="one", else
    (S,)) and `params` (with a leading axis P for batch="settings"). Arguments are not checked here
    beyond the batch; the entry points check them (check_run, checked_params).

    sequential (batch="environments"): run environments and seeds one after the other (lax.map), so a
    lax.cond on a per-run quantity (a phase, the budget) stays a real branch. bitwise: every run's
    code does not depend on how many runs share the program (see jbo.parallel.map_runs). cache=False:
    always compile, keep nothing (a study that times its compile)."""
    if batch not in BATCHES:
        raise ValueError(f"program: batch must be one of {BATCHES}, got {batch!r}")
    keep = check_keep(keep_final_state)
    if batch == "one":
        return Program(lambda k, p: _one(algorithm, environment, k, num_steps, p, budget, free_initial), batch, 0.0)
    bitwise = parallel.check_bitwise(bitwise)
    envs, axes = _stacked_axes(environment, batch)
    dyn, static = eqx.partition((algorithm, envs), eqx.is_array)

    def one_run(alg, env, key, p):
        return scan.one_run(alg, env, key=key, num_steps=num_steps, params=p, budget=budget, free_initial=free_initial)

    common = (static, num_steps, budget, free_initial, keep)
    if batch == "seeds":

        def build():
            def prog(keys, replicated):
                dyn, p = replicated
                alg, env = eqx.combine(dyn, static)
                return parallel.map_runs(lambda k: keep_state(one_run(alg, env, k, p), keep), bitwise)(keys)

            return prog

        runner, seconds = _batch_runner(
            "seeds",
            common,
            build,
            keys,
            (dyn, params),
            0,
            devices,
            chunk_size,
            memory_limit,
            cache=cache,
            bitwise=bitwise,
            steps=num_steps,
        )
        return Program(lambda ks, p: runner(ks, (dyn, p)), batch, seconds, runner)

    if batch == "settings":
        sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in jax.tree.leaves(params)}
        if not sizes or None in sizes or len(sizes) != 1:
            raise ValueError("a sweep needs every leaf of `params` to share one leading (sweep) axis")
        ((num_settings,), num_seeds) = sizes, keys.shape[0]

        def flat(ks, p):
            return jnp.tile(ks, num_settings), jax.tree.map(lambda a: jnp.repeat(jnp.asarray(a), num_seeds, axis=0), p)

        def build():
            def prog(batched, dyn):
                alg, env = eqx.combine(dyn, static)
                return parallel.map_runs(lambda k, p: keep_state(one_run(alg, env, k, p), keep), bitwise)(*batched)

            return prog

        runner, seconds = _batch_runner(
            "sweep",
            common,
            build,
            flat(keys, params),
            dyn,
            0,
            devices,
            chunk_size,
            memory_limit,
            cache=cache,
            bitwise=bitwise,
            steps=num_steps,
        )

        def run_settings(ks, p):
            out = runner(flat(ks, p), dyn)
            return jax.tree.map(lambda a: a.reshape((num_settings, num_seeds) + a.shape[1:]), out)

        return Program(run_settings, batch, seconds, runner)

    axes_list = jax.tree.structure(envs).flatten_up_to(axes)  # one axis (None or 0) per leaf of envs
    num_envs = len(environment)
    if batch == "environments":
        one_by_one = sequential or bitwise  # lax.map over environments and seeds, else vmap

        def per_env(alg, env, ks, p):
            return parallel.map_runs(lambda k: one_run(alg, env, k, p), one_by_one)(ks)

        def over_envs(alg, envs, ks, p):
            leaves, tree = jax.tree.flatten(envs)
            batched = [a for a, ax in zip(leaves, axes_list) if ax is not None]
            if not batched:  # every environment equal: run once, repeat along the environment axis
                return jax.tree.map(lambda a: jnp.broadcast_to(a, (num_envs,) + a.shape), per_env(alg, envs, ks, p))
            if not one_by_one:
                return jax.vmap(lambda e: per_env(alg, e, ks, p), in_axes=(axes,))(envs)

            def pick(e):
                return jax.tree.unflatten(tree, [a if ax is None else a[e] for a, ax in zip(leaves, axes_list)])

            return jax.lax.map(lambda e: per_env(alg, pick(e), ks, p), jnp.arange(batched[0].shape[0]))

        def build():
            def prog(ks, replicated):
                dyn, p = replicated
                alg, envs = eqx.combine(dyn, static)
                return keep_state(over_envs(alg, envs, ks, p), keep, run_axes=2)

            return prog

        axes_sig = jax.tree.flatten(axes, is_leaf=lambda x: x is None)
        runner, seconds = _batch_runner(
            "environments",
            common,
            build,
            keys,
            (dyn, params),
            1,
            devices,
            chunk_size,
            memory_limit,
            (num_envs, sequential, str(axes_sig)),
            cache=cache,
            bitwise=bitwise,
            steps=num_envs * num_steps,  # each batched row is a seed on every environment
        )
        return Program(lambda ks, p: runner(ks, (dyn, p)), batch, seconds, runner)

    # "instances": seed i runs environments[i]; the environments' varying leaves are batched with the keys
    if num_envs != keys.shape[0]:
        raise ValueError(f"batch='instances' needs one environment per key; got {num_envs} and {keys.shape[0]}")
    alg_dyn, alg_static = eqx.partition(algorithm, eqx.is_array)
    leaves, tree = jax.tree.flatten(envs)
    varying = [a for a, ax in zip(leaves, axes_list) if ax is not None]
    shared = [a for a, ax in zip(leaves, axes_list) if ax is None]

    def assemble(var, sh):
        it_v, it_s = iter(var), iter(sh)
        return jax.tree.unflatten(tree, [next(it_s) if ax is None else next(it_v) for ax in axes_list])

    def build():
        def prog(batched, replicated):
            alg_dyn, shared, p = replicated
            alg = eqx.combine(alg_dyn, alg_static)
            ks, var = batched
            run_pair = lambda k, v: keep_state(one_run(alg, assemble(v, shared), k, p), keep)  # noqa: E731
            return parallel.map_runs(run_pair, bitwise)(ks, var)

        return prog

    runner, seconds = _batch_runner(
        "instances",
        (alg_static, jax.tree.structure(envs), str(axes_list), num_steps, budget, free_initial, keep),
        build,
        (keys, varying),
        (alg_dyn, shared, params),
        0,
        devices,
        chunk_size,
        memory_limit,
        cache=cache,
        bitwise=bitwise,
        steps=num_steps,
    )
    return Program(lambda ks, p: runner((ks, varying), (alg_dyn, shared, p)), batch, seconds, runner)


def _checked(trace, on_nonfinite, axes, algorithm, environment):
    """The post-run checks (jbo.checks: non-finite values, a beaten optimum), labelled with the
    algorithm and problem."""
    name = getattr(environment, "name", None)
    label = (
        f"{type(algorithm).__name__}{checks.model_note(algorithm)} on "
        f"{name if isinstance(name, str) else type(environment).__name__}"
    )
    checks.check_optimum(trace, label)
    return checks.check_trace(trace, on_nonfinite, axes, label, environment)


def run(
    algorithm: Algorithm,
    environment: Environment,
    *,
    key,
    num_steps: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """One seed: the whole run as one compiled lax.scan. Metrics have shape (num_steps,).

    key: an int seed or a JAX key. budget: stop spending once the cumulative cost reaches it (later
    steps inactive, see jbo.scan); free_initial: initial-design steps cost nothing. on_nonfinite:
    "raise" (default), "warn" or "ignore" when the run met NaN or inf (see jbo.checks)."""
    b = check_run(algorithm, environment, num_steps, budget)
    params = checked_params(algorithm, params, on_nonfinite)
    prog = program(
        algorithm,
        environment,
        keys=None,
        num_steps=num_steps,
        params=params,
        batch="one",
        budget=b,
        free_initial=free_initial,
    )
    return _checked(prog(as_key(key), params), on_nonfinite, (), algorithm, environment)


_PARALLEL_DOC = """
    Over devices and in chunks (jbo.parallel): devices=None spreads the runs over all of
    jax.devices() (every process's, after jbo.parallel.initialize), an int n over the first n,
    devices=1 switches sharding off; chunk_size (runs per compiled chunk) or memory_limit (bytes;
    default 75% of free memory) cut a batch too large for one program into chunks run in a host
    loop. The result equals the single-device, single-chunk run to rounding (bit for bit with
    bitwise=True: the runs are computed one after another, lax.map instead of vmap, and every device
    runs its own one-device program; it equals run() with the same key to rounding, not bit for bit).
    keep_final_state: "small" (default) keeps the final-state leaves with at most
    SMALL_STATE_ELEMENTS elements per run, True the whole state, False none."""


def run_seeds(
    algorithm: Algorithm,
    environment: Environment,
    *,
    key,
    num_steps: int,
    num_seeds: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """`num_seeds` seeds (keys split from `key`) in one compiled program; leading axis = seed.

    Seed i uses jax.random.split(key, num_seeds)[i], so its trace equals run(..., key=that key, ...).
    on_nonfinite: see :func:`run`.
    """
    b = check_run(algorithm, environment, num_steps, budget)
    params = checked_params(algorithm, params, on_nonfinite)
    keys = seed_keys(key, num_seeds)
    prog = program(
        algorithm,
        environment,
        keys=keys,
        num_steps=num_steps,
        params=params,
        batch="seeds",
        budget=b,
        free_initial=free_initial,
        devices=devices,
        chunk_size=chunk_size,
        memory_limit=memory_limit,
        keep_final_state=keep_final_state,
        bitwise=bitwise,
    )
    return _checked(prog(keys, params), on_nonfinite, ("seed",), algorithm, environment)


def run_sweep(
    algorithm: Algorithm,
    environment: Environment,
    *,
    key,
    num_steps: int,
    num_seeds: int,
    params,
    budget=None,
    free_initial: bool = False,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """A hyper-parameter sweep: `params` leaves carry a leading axis P; output axes are (P, seed, step).

    Every parameter setting uses the same seeds (common random numbers across the sweep). The P x S
    runs form one batch (run p * S + s: setting p, seed s) spread over the devices.
    on_nonfinite: see :func:`run`.
    """
    b = check_run(algorithm, environment, num_steps, budget)
    checks.check_on_nonfinite(on_nonfinite)
    checks.check_params(params, f"{type(algorithm).__name__}: ")
    keys = seed_keys(key, num_seeds)
    prog = program(
        algorithm,
        environment,
        keys=keys,
        num_steps=num_steps,
        params=params,
        batch="settings",
        budget=b,
        free_initial=free_initial,
        devices=devices,
        chunk_size=chunk_size,
        memory_limit=memory_limit,
        keep_final_state=keep_final_state,
        bitwise=bitwise,
    )
    return _checked(prog(keys, params), on_nonfinite, ("setting", "seed"), algorithm, environment)


def stack_environments(environments):
    """Stack environments that differ only in array values (the same problem with other cost means,
    variances, noise levels): returns (stacked, axes). A leaf that is equal in every environment is
    kept once (axis None: shared, e.g. the control-set masks); the others get a leading axis E."""
    envs = list(environments)
    if not envs or not all(isinstance(e, Environment) for e in envs):
        raise ValueError("stack_environments needs a non-empty list of jbo Environments")
    tree0 = jax.tree.structure(envs[0])
    for i, e in enumerate(envs[1:], 1):
        if jax.tree.structure(e) != tree0:
            raise ValueError(
                f"environment {i} differs from environment 0 in its static configuration (problem, "
                "function or shapes); only array values may differ"
            )
    columns = list(zip(*[jax.tree.leaves(e) for e in envs]))
    for i, col in enumerate(columns):
        if len({np.shape(a) for a in col}) > 1:
            raise ValueError(f"leaf {i} of the environments has different shapes: {[np.shape(a) for a in col]}")
    shared = [all(np.array_equal(np.asarray(a), np.asarray(col[0])) for a in col[1:]) for col in columns]
    stacked = [col[0] if same else jnp.stack([jnp.asarray(a) for a in col]) for col, same in zip(columns, shared)]
    return jax.tree.unflatten(tree0, stacked), jax.tree.unflatten(tree0, [None if same else 0 for same in shared])


def run_environments(
    algorithm: Algorithm,
    environments,
    *,
    key,
    num_steps: int,
    num_seeds: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    sequential: bool = False,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> Trace:
    """Several environments that differ only in array values (see :func:`stack_environments`) and
    `num_seeds` seeds in one compiled program; output axes (environment, seed, step). Every
    environment uses the same seed keys: seed i of environment e equals
    run_seeds(algorithm, environments[e], key=key, num_steps=..., num_seeds=...)[i] (tested).
    sequential: see :func:`program`. The seed axis is spread over the devices.
    on_nonfinite: see :func:`run`."""
    environments = list(environments)
    stack_environments(environments)  # named errors for environments that cannot share a program
    b = check_run(algorithm, environments[0], num_steps, budget)
    params = checked_params(algorithm, params, on_nonfinite)
    keys = seed_keys(key, num_seeds)
    prog = program(
        algorithm,
        environments,
        keys=keys,
        num_steps=num_steps,
        params=params,
        batch="environments",
        budget=b,
        free_initial=free_initial,
        sequential=sequential,
        devices=devices,
        chunk_size=chunk_size,
        memory_limit=memory_limit,
        keep_final_state=keep_final_state,
        bitwise=bitwise,
    )
    return _checked(prog(keys, params), on_nonfinite, ("environment", "seed"), algorithm, environments[0])


run_seeds.__doc__ += _PARALLEL_DOC
run_sweep.__doc__ += _PARALLEL_DOC
run_environments.__doc__ += _PARALLEL_DOC


def stack_params(*params):
    """Stack several Params pytrees along a new leading axis (for run_sweep)."""
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *params)


def replace_params(params, **values):
    """Params with the named fields replaced, wherever they sit in nested NamedTuples (each name must
    occur exactly once), e.g. replace_params(gp_ucb.default_params(), beta=4.0)."""
    found = {}

    def walk(p):
        if not (isinstance(p, tuple) and hasattr(p, "_fields")):
            return p
        kw = {}
        for f in p._fields:
            v = getattr(p, f)
            if f in values:
                found[f] = found.get(f, 0) + 1
                kw[f] = values[f]
            else:
                kw[f] = walk(v)
        return p._replace(**kw)

    out = walk(params)
    missing = sorted(set(values) - set(found))
    if missing:
        raise ValueError(f"unknown parameter(s) {missing} for {type(params).__name__}")
    twice = sorted(k for k, n in found.items() if n > 1)
    if twice:
        raise ValueError(f"parameter name(s) {twice} occur more than once; replace them on the sub-tuple")
    checks.check_params(out)
    return out
