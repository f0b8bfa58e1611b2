"""Studies: methods x problems x seeds -> a tidy pandas table, save/load, summaries and plots.

Each (method, problem) pair is one compiled program (the scan vmapped over seeds; lax.map with
bitwise=True), and each :class:`Settings` entry is one program for all its labelled settings (a
sweep); compile and run seconds are measured separately (ahead-of-time lowering + compilation, then
execution). All methods use the same seed keys, so they share initial designs and noise (common
random numbers).

Every table has the engine's metric vocabulary (value, best_value, cost, cumulative_cost, active,
and regret, simple_regret, cumulative_regret where the optimum is known). Runs that spend
differently are compared on a **cost axis**: :func:`on_cost_grid` interpolates each run's metric
onto a common grid of cumulative cost (a step function: the value after the last step whose
cumulative cost is <= the grid point; before the first step, the first value), and
:func:`summary` reports the end of each run or the value at a given budget.
"""

from __future__ import annotations

import os
import platform
import sys
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

import jax
import numpy as np

from jbo import algorithms as _algorithms
from jbo import checks, runner
from jbo import problems as _problems
from jbo.lazy import pandas as pd
from jbo.protocols import Algorithm, Environment


class Settings:
    """Labelled settings of one algorithm that :func:`run_study` runs as **one** program, a sweep over
    the settings and the seeds (jbo.run_sweep), each setting's rows under its own label:
    ``Settings(algorithm, {"gp_ucb": params_0, "gp_ei": params_1})``. One compile then serves every
    setting; with a jbo.acquisitions.Choice the settings can be different acquisitions
    (``Settings.choice``). The settings share the study's seed keys, so each is its own program's run
    to rounding (a Choice's GP-EI bit for bit, its GP-UCB to rounding; tests/test_studies.py)."""

    def __init__(self, algorithm: Algorithm, params: Mapping):
        if not isinstance(algorithm, Algorithm):
            raise TypeError(f"Settings: algorithm must be a jbo.Algorithm, got {type(algorithm).__name__}")
        if not isinstance(params, Mapping) or not params:
            raise ValueError("Settings: params must be a non-empty {label: Params} mapping")
        for label, p in params.items():
            if not isinstance(label, str):
                raise TypeError(f"Settings: labels must be strings, got {label!r}")
            checks.check_params(p, f"Settings[{label!r}]: ")
        if len({jax.tree.structure(p) for p in params.values()}) > 1:
            raise ValueError("Settings: every setting's Params must have the same structure (the algorithm's Params)")
        self.algorithm, self.params = algorithm, dict(params)

    @classmethod
    def choice(cls, labelled: Mapping, **options) -> Settings:
        """One GP-BO whose acquisition is a Choice among `labelled` ({label: acquisition}), a setting
        per acquisition at its default Params; `options` are the GP-BO's other parts (registry options
        of "gp_ucb"), e.g. ``Settings.choice({"gp_ucb": "ucb", "gp_ei": "ei"}, num_initial=6)``."""
        from jbo.acquisitions import Choice

        alg = _algorithms.GPBO(acquisition=Choice(*labelled.values()), **options)
        return cls(
            alg, {label: runner.replace_params(alg.default_params(), index=i) for i, label in enumerate(labelled)}
        )

    def __repr__(self) -> str:
        return f"Settings({type(self.algorithm).__name__}, {list(self.params)})"


def _label(item) -> str:
    """A table label for a list entry: the registered name, or the object's name or type."""
    if isinstance(item, str):
        return item
    name = getattr(item, "name", None)
    return name if isinstance(name, str) else type(item).__name__


def _as_dict(items, getter, kind, argument: str):
    """{label: object} from a mapping or a list of registered names and objects (labels of repeated
    types get #2, #3, ...); a named TypeError for anything else."""
    if isinstance(items, Mapping):
        out = dict(items)
    elif isinstance(items, str) or not hasattr(items, "__iter__"):
        raise TypeError(f"run_study's {argument} must be a list or a dict, got {type(items).__name__}")
    else:
        out = {}
        for item in items:
            label, n = _label(item), 2
            while label in out:
                label, n = f"{_label(item)}#{n}", n + 1
            out[label] = item
    for name, obj in list(out.items()):
        if isinstance(obj, Settings) and kind is Algorithm:
            continue
        if isinstance(obj, str):
            out[name] = getter(obj)
        if not isinstance(out[name], kind):
            raise TypeError(f"run_study's {argument}: {name!r} is not a jbo.{kind.__name__} or a registered name")
    if not out:
        raise ValueError(f"run_study's {argument} is empty")
    return out


def compile_seeds(
    algorithm: Algorithm,
    environment: Environment,
    *,
    keys,
    num_steps: int,
    params=None,
    budget=None,
    free_initial: bool = False,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    keep_final_state="small",
    bitwise: bool = False,
    batch: str = "seeds",
):
    """Ahead-of-time compile the run of these keys (vmapped over them, or lax.map with bitwise=True);
    returns (compiled_fn, compile_seconds).
    compiled_fn(keys) equals jbo.run_seeds on the same keys (tested); it accepts any number of keys.
    batch="settings": `params` has a leading settings axis, and compiled_fn(keys) equals jbo.run_sweep
    (axes setting, seed, step).

    The seeds are spread over `devices` (default: all of jax.devices(); 1: no sharding) and cut into
    chunks when one program would not fit `memory_limit` or `chunk_size` asks for it (see
    jbo.parallel); compiled_fn.plan (a jbo.parallel.Plan) holds the predicted memory and the chunks.
    bitwise=True: results bit for bit independent of devices and chunks (see jbo.run_seeds)."""
    b = runner.check_run(algorithm, environment, num_steps, budget)
    params = algorithm.default_params() if params is None else params
    prog = runner.program(
        algorithm,
        environment,
        keys=keys,
        num_steps=num_steps,
        params=params,
        batch=batch,
        budget=b,
        free_initial=free_initial,
        devices=devices,
        chunk_size=chunk_size,
        memory_limit=memory_limit,
        keep_final_state=keep_final_state,
        bitwise=bitwise,
        cache=False,
    )
    fn = lambda ks, p=params: prog(ks, p)  # noqa: E731
    fn.plan = prog.plan
    return fn, prog.compile_seconds


def run_study(
    methods,
    problems,
    *,
    key=0,
    num_steps,
    num_seeds,
    progress: bool = True,
    params=None,
    budget=None,
    free_initial: bool = False,
    devices=None,
    chunk_size=None,
    memory_limit=None,
    bitwise: bool = False,
    on_nonfinite: str = "raise",
) -> pd.DataFrame:
    """Run every method on every problem for `num_seeds` seeds:
    ``run_study(methods, problems, key=0, num_steps=T, num_seeds=S)``, the keywords of :func:`jbo.run_seeds`
    (key: an int seed or a JAX key; default 0).

    methods: {label: Algorithm, registered name or :class:`Settings`} or a list of names; problems
    likewise. A Settings entry is one program whose settings get their own labels (and its own Params;
    `params` below is not asked for them); compile_s and run_s are then that shared program's.
    num_steps: an int, or {problem label: int}. budget: None, a cost, or {problem label: cost}.
    Returns a tidy DataFrame with one row per (method, problem, seed, step): the engine's metrics
    (scalar ones), compile_s and run_s of that (method, problem) program.
    params: None (each algorithm's defaults) or a function (method label, problem label) -> Params.
    devices, chunk_size, memory_limit, bitwise: how each program's seeds are spread over devices and
    chunked (see :func:`compile_seeds`); with progress, each program's plan (chunks, memory) is shown.
    on_nonfinite: each program's trace is checked as :func:`jbo.run` checks it ("raise", "warn", "ignore").
    """
    checks.check_on_nonfinite(on_nonfinite)
    methods = _as_dict(methods, _algorithms.get, Algorithm, "methods")
    problems = _as_dict(problems, _problems.get, Environment, "problems")
    labels = [label for m, alg in methods.items() for label in (alg.params if isinstance(alg, Settings) else [m])]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"run_study's methods: the label(s) {twice} occur more than once (Settings labels included)")
    keys = runner.seed_keys(key, num_seeds)  # an int seed or a key; num_seeds >= 1 (a named error)
    frames, total, i = [], len(methods) * len(problems), 0
    for pname, problem in problems.items():
        steps = num_steps[pname] if isinstance(num_steps, Mapping) else num_steps
        for mname, alg in methods.items():
            i += 1
            shared = isinstance(alg, Settings)
            names = list(alg.params) if shared else [mname]
            if progress:
                what = f"{', '.join(names)} (one program)" if shared else mname
                print(
                    f"[{i}/{total}] {what} on {pname}: {num_seeds} seeds x {steps} steps ...",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
            b = budget.get(pname) if isinstance(budget, Mapping) else budget
            if shared:  # its settings were checked when it was made
                algorithm, p, axes = alg.algorithm, runner.stack_params(*alg.params.values()), ("setting", "seed")
            else:
                algorithm, p, axes = alg, (alg.default_params() if params is None else params(mname, pname)), ("seed",)
                checks.check_params(p, f"{mname}: ")
            fn, compile_s = compile_seeds(
                algorithm,
                problem,
                keys=keys,
                num_steps=steps,
                params=p,
                budget=b,
                free_initial=free_initial,
                devices=devices,
                chunk_size=chunk_size,
                memory_limit=memory_limit,
                keep_final_state=False,
                bitwise=bitwise,
                batch="settings" if shared else "seeds",
            )
            t0 = time.perf_counter()
            trace = jax.block_until_ready(fn(keys))
            run_s = time.perf_counter() - t0
            label = f"{'/'.join(names)}{checks.model_note(algorithm)} on {pname}"
            checks.check_optimum(trace, label)
            checks.check_trace(trace, on_nonfinite, axes, label, problem)
            if progress:
                plan = fn.plan
                where = (
                    f" [{plan.num_devices} devices, {plan.num_chunks} chunk(s) of {plan.chunk_size}, "
                    f"~{plan.bytes_per_chunk / 2**20:.0f} MiB/chunk]"
                )
                print(f" compile {compile_s:.1f} s, run {run_s:.1f} s{where}", file=sys.stderr, flush=True)
            metrics = {k: np.asarray(v) for k, v in trace.metrics.items() if np.ndim(v) == len(axes) + 1}
            seed, step = np.meshgrid(np.arange(num_seeds), np.arange(steps), indexing="ij")
            for j, name in enumerate(names):
                frame = pd.DataFrame(
                    {
                        "method": name,
                        "problem": pname,
                        "seed": seed.ravel(),
                        "step": step.ravel() + 1,
                        **{k: (v[j] if shared else v).ravel() for k, v in metrics.items()},
                    }
                )
                frame["compile_s"], frame["run_s"] = compile_s, run_s
                frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def save(table: pd.DataFrame, path) -> Path:
    """Save a study table (CSV; .pkl keeps dtypes exactly)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_pickle(path) if path.suffix == ".pkl" else table.to_csv(path, index=False)
    return path


TABLE_COLUMNS = ("method", "problem", "seed", "step")


def load(path) -> pd.DataFrame:
    """A study table written by :func:`save` (or a study's table.csv): CSV, or a pickle for .pkl
    (load only pickles you trust). A file that cannot be read, or a table without the columns
    method, problem, seed and step, is a ValueError naming the file."""
    path = Path(path)
    try:
        table = (
            pd.read_pickle(path) if path.suffix == ".pkl" else pd.read_csv(path, dtype={"method": str, "problem": str})
        )
    except FileNotFoundError:
        raise ValueError(f"no study table at {path}") from None
    except Exception as e:  # noqa: BLE001  (empty, binary or malformed: name the file)
        raise ValueError(f"{path} is not a readable study table ({type(e).__name__}: {e})") from None
    missing = [c for c in TABLE_COLUMNS if not isinstance(table, pd.DataFrame) or c not in table]
    if missing:
        raise ValueError(f"{path} is not a study table: it lacks the column(s) {missing}")
    return table


def replace_methods(table: pd.DataFrame, *reruns: pd.DataFrame) -> pd.DataFrame:
    """`table` with each re-run's methods taken from the re-run: a later study of some methods (more
    seeds, other settings) replaces every row of those methods, in the order given; other methods keep
    their rows."""
    for rerun in reruns:
        table = pd.concat([table[~table["method"].isin(set(rerun["method"]))], rerun], ignore_index=True)
    return table


def default_metric(table: pd.DataFrame) -> str:
    """simple_regret where the optimum is known, else best_value."""
    return "simple_regret" if "simple_regret" in table and table["simple_regret"].notna().all() else "best_value"


def on_cost_grid(table: pd.DataFrame, grid, metric: str | None = None) -> pd.DataFrame:
    """Each (problem, method, seed) run's `metric` as a step function of cumulative cost, read at the
    points of `grid`: the value after the last step with cumulative_cost <= c (the first value
    before any). Returns columns problem, method, seed, cost, metric."""
    metric = metric or default_metric(table)
    grid = np.asarray(grid, dtype=np.float64)
    rows = []
    for (prob, meth, seed), g in table.sort_values("step").groupby(["problem", "method", "seed"], sort=False):
        spent, vals = g["cumulative_cost"].to_numpy(), g[metric].to_numpy()
        i = np.searchsorted(spent, grid, side="right") - 1
        rows.append(
            pd.DataFrame({"problem": prob, "method": meth, "seed": seed, "cost": grid, metric: vals[np.maximum(i, 0)]})
        )
    return pd.concat(rows, ignore_index=True)


def summary(
    table: pd.DataFrame,
    metric: str | None = None,
    at_step: int | None = None,
    at_cost: float | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Mean, standard error and median of `metric` per (problem, method), with timings: at each
    run's last step (default), at step `at_step`, or at cumulative cost `at_cost` (cost axis).
    metric: default simple_regret where the optimum is known, else best_value.

    median_low / median_high: the percentile bootstrap (1 - alpha) interval of the median over seeds
    (jbo.verdict.bootstrap_median_interval: 4000 resamples from a fixed-seed generator, so the table
    is reproducible); NaN with one seed."""
    metric = metric or default_metric(table)
    if metric not in table:
        raise ValueError(f"the table has no column {metric!r}; it has {sorted(table.columns)}")
    if at_cost is not None:
        at = on_cost_grid(table, [at_cost], metric)
    elif at_step is not None:
        at = table[table["step"] == at_step]
        if at.empty:
            raise ValueError(f"no run reaches step {at_step}")
    else:
        at = table[table["step"] == table.groupby(["problem", "method"])["step"].transform("max")]
    g = at.groupby(["problem", "method"], sort=False)
    last = table[table["step"] == table.groupby(["problem", "method"])["step"].transform("max")]
    gl = last.groupby(["problem", "method"], sort=False)
    out = pd.DataFrame(
        {
            "seeds": g["seed"].nunique(),
            "steps": gl["step"].max(),
            f"mean_{metric}": g[metric].mean(),
            "stderr": g[metric].std(ddof=1) / np.sqrt(g["seed"].nunique()),
            f"median_{metric}": g[metric].median(),
            "median_low": g[metric].agg(lambda v: _median_interval(v, alpha)[0]),
            "median_high": g[metric].agg(lambda v: _median_interval(v, alpha)[1]),
            "compile_s": gl["compile_s"].first(),
            "run_s": gl["run_s"].first(),
        }
    )
    return out.reset_index()


def _median_interval(values, alpha: float):
    from jbo.verdict import bootstrap_median_interval

    v = np.asarray(values, dtype=np.float64)
    return bootstrap_median_interval(v, alpha) if v.size > 1 else (np.nan, np.nan)


def machine_info() -> str:
    """One line naming the machine and JAX backend (every benchmark prints it)."""
    dev = jax.devices()[0]
    return (
        f"{platform.machine()} {os.cpu_count()} cpus, jax {jax.__version__} backend {jax.default_backend()} "
        f"({dev.device_kind})"
    )


def code_version() -> str:
    """The git commit of the imported jbo ("+dirty" when jbo/ has uncommitted changes), for result files
    that compare code versions (an experiment run against another checkout on PYTHONPATH)."""
    import subprocess

    root = str(Path(__file__).resolve().parents[1])
    head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "jbo"], capture_output=True, text=True)
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def plot(
    table: pd.DataFrame,
    path=None,
    metric: str | None = None,
    log: bool = True,
    floor: float = 1e-12,
    initial=None,
    ncols: int | None = None,
    titles=None,
    cost_grid=None,
):
    """Mean +- standard error of `metric` against step (or against cumulative cost on `cost_grid`),
    one panel per problem; returns the figure.

    initial: a dashed grey line after the initial design (an int, or {problem: int});
    ncols: panels per row; titles: {problem: panel title}.
    """
    metric = metric or default_metric(table)
    if cost_grid is not None:
        table = on_cost_grid(table, cost_grid, metric).rename(columns={"cost": "step"})
    import matplotlib.pyplot as plt  # the session's backend: inline in a notebook, Agg on a headless machine

    probs = list(dict.fromkeys(table["problem"]))
    ncols = min(ncols or len(probs), len(probs))
    nrows = -(-len(probs) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.5 * ncols, 3.6 * nrows), squeeze=False)
    for ax in axes.ravel()[len(probs) :]:
        ax.set_visible(False)
    for ax, prob in zip(axes.ravel(), probs):
        sub = table[table["problem"] == prob]
        for method, grp in sub.groupby("method", sort=False):
            v = grp.pivot(index="seed", columns="step", values=metric).to_numpy()
            if log:
                v = np.maximum(v, floor)
            n = np.sum(~np.isnan(v), axis=0)  # seeds with a value (NaN before a seed's first finite evaluation)
            with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a step no seed has a value at: NaN, not drawn
                mean = np.nanmean(v, axis=0)
                se = np.where(n > 1, np.nanstd(v, axis=0, ddof=1) / np.sqrt(np.maximum(n, 1)), 0.0)
            steps = np.asarray(cost_grid) if cost_grid is not None else np.arange(1, v.shape[1] + 1)
            ax.plot(steps, mean, label=method)
            ax.fill_between(steps, np.maximum(mean - se, floor) if log else mean - se, mean + se, alpha=0.25)
        n0 = initial.get(prob) if isinstance(initial, Mapping) else initial
        if n0:
            ax.axvline(n0 + 0.5, color="grey", ls="--", lw=1)
        ax.set_title((titles or {}).get(prob, prob))
        ax.set_xlabel("cumulative cost" if cost_grid is not None else "evaluations")
        ax.set_ylabel(metric.replace("_", " "))
        if log:
            ax.set_yscale("log")
        ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
    return fig
