"""Studies from a config file: ``jbo study CONFIG.toml`` runs a grid, cell by cell, resumably.

A study is methods x problems x budgets (steps, and optionally a cost budget) x Params settings, each
for the same seeds. One **cell** is one (problem, steps, budget, method, Params setting): one compiled
program over all seeds (``jbo.studies.run_study`` on that single pair, i.e. one
``jbo.studies.compile_seeds`` program, sharded over devices where that is on). Every cell uses the same
seed keys (common random numbers), exactly as ``run_study``.

Config schema (TOML, read with the standard library's ``tomllib``)::

    name = "demo"                  # optional, free text
    imports = ["my_plugins", "plugins.py"]  # optional: modules (dotted names, or .py paths relative to
                                   # the config's folder) imported first, so the algorithms, problems and
                                   # kernels they register can be named below
    seeds = 16                     # required: seeds per cell, a positive int
    seed = 0                       # master PRNG seed (int >= 0; default 0): keys = split(key(seed), seeds)
    steps = 40                     # evaluations per run: a positive int or a list of them (a budget axis);
                                   # required unless every problem sets its own
    budget = 25.0                  # optional cost budget: a positive number or a list of them (an axis)
    free_initial = false           # optional: the initial design costs nothing (see jbo.engine)
    bitwise = false                # optional: results bit for bit independent of devices and chunks
                                   # (lax.map over seeds, one program per device; see jbo.parallel)

    methods = ["random_search", "gp_ei"]    # registered names with default options, or tables:
    [methods.gp_ucb]               # the label used in the table
    name = "gp_ucb"                # registered name (jbo.algorithms.names()); default: the label
    options = { num_initial = 6 }  # keyword options of jbo.algorithms.get(name, **options)
    params = { beta = [0.5, 2.0] } # Params: a list is an axis of settings (the product of all axes is
                                   # taken); a single value is fixed. For an array-valued field, a value
                                   # of the field's own shape is one setting, one more dimension an axis.

    [problems.branin]              # problems likewise: a list of names or label -> table
    name = "branin"                # registered name (jbo.problems.names()); default: the label
    options = {}                   # keyword options of jbo.problems.get(name, **options)
    noise_std = 0.0                # observation noise (default 0)
    steps = 40                     # overrides the top-level steps (int or list)
    budget = 10.0                  # overrides the top-level budget (number or list)

Unknown keys, unknown names, unknown Params fields, wrong types and non-positive counts are rejected
before anything runs, with a ValueError naming the field and the allowed values.

Output directory (``--out``)::

    manifest.json    config hash, the normalised config, the cell list (written first), and for every
                     finished cell what its file must hold: rows, columns and the file's sha256
    config.toml      a copy of the config as given
    cells/0003.csv   one file per finished cell, written atomically (temporary file, fsync, os.replace)
    table.csv        all cells in cell order (written atomically at the end)
    summary.csv      jbo.studies.summary of the table
    regret.png       jbo.studies.plot of the table (when matplotlib is installed)

A kill at any moment leaves only whole cell files (plus perhaps a temporary file, removed on resume).
Running the same command again **resumes**: finished cells are read back, not run; at most the cell
in flight is lost. A directory written by a different config (another hash of the normalised config)
is refused; ``fresh=True`` (``--fresh``) deletes this module's files there and starts over.

**Cell files are verified, never trusted.** A cell counts as finished only when its file matches
its manifest entry (the sha256 of its bytes) and holds what the cell must hold: one row per (seed,
step), every seed 0..S-1 and step 1..T once, the cell's id, method and problem labels in every row,
and the columns of the entry. A file without an entry (a kill between the cell file and the
manifest) is adopted when it passes the content checks. On resume a file that fails is named, with
the reason, and its cell is run again; :func:`combine` refuses a directory with such a file
(:class:`StudyDataError`, naming the file and the way out), so nothing inconsistent is ever combined;
:func:`verify` reports every cell's state (``jbo study CONFIG --verify``).

Table columns: those of ``jbo.studies.run_study`` (method, problem, seed, step, the engine's scalar
metrics, compile_s, run_s), then ``cell`` (the cell id), ``num_steps``, ``budget`` (NaN without one)
and ``param_<field>`` for every Params field a config sets (array values as JSON text). So that
``jbo.studies.summary`` and ``plot`` keep one curve per cell, the ``method`` label carries the Params
setting of a grid axis (``gp_ucb[beta=0.5]``) and the ``problem`` label the steps / budget when the
problem has more than one (``branin[T=40]``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from jbo.lazy import pandas as pd

TOP_KEYS = (
    "name",
    "imports",
    "seeds",
    "seed",
    "steps",
    "budget",
    "free_initial",
    "bitwise",
    "methods",
    "problems",
)
METHOD_KEYS = ("name", "options", "params")
PROBLEM_KEYS = ("name", "options", "noise_std", "steps", "budget")
TIMING_COLUMNS = ("compile_s", "run_s")
CELL_COLUMNS = ("method", "problem", "seed", "step", *TIMING_COLUMNS, "cell", "num_steps", "budget")
MANIFEST = "manifest.json"
CELLS = "cells"
PLOT = "regret.png"


class StudyDataError(ValueError):
    """A study directory holds a cell file that does not match what its cell must hold."""


class StudyInterrupted(KeyboardInterrupt):
    """A study stopped by Ctrl-C; the message says which cells were kept and how to resume."""


# ------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class Cell:
    index: int
    id: str
    method: str  # table label (with the Params setting of grid axes)
    problem: str  # table label (with steps / budget when the problem has several)
    method_key: str
    problem_key: str
    num_steps: int
    budget: float | None
    params: dict = field(default_factory=dict)  # field -> value as given (JSON-able)
    params_object: Any = None  # the Params pytree


@dataclass
class Study:
    """A validated study: the normalised config, its hash, built algorithms / problems and the cells."""

    config: dict
    hash: str
    algorithms: dict
    problems: dict
    cells: list
    param_fields: list


def _fail(where: str, msg: str):
    raise ValueError(f"study config: {where}: {msg}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_keys(table, allowed, where):
    if not isinstance(table, dict):
        _fail(where, f"must be a table with keys from {list(allowed)}, got {type(table).__name__} {table!r}")
    unknown = [k for k in table if k not in allowed]
    if unknown:
        _fail(where, f"unknown key(s) {unknown}; allowed keys: {list(allowed)}")


def _positive_ints(v, where, required=True):
    if v is None:
        if required:
            _fail(where, "missing; give a positive int or a list of positive ints")
        return None
    vals = v if isinstance(v, list) else [v]
    if not vals or not all(_is_int(x) and x > 0 for x in vals):
        _fail(where, f"must be a positive int or a non-empty list of positive ints, got {v!r}")
    if len(set(vals)) != len(vals):
        _fail(where, f"repeats a value: {v!r}")
    return vals


def _budgets(v, where):
    if v is None:
        return [None]
    vals = v if isinstance(v, list) else [v]
    if not vals or not all(_is_number(x) and math.isfinite(x) and x > 0 for x in vals):
        _fail(where, f"must be a positive finite number or a non-empty list of them, got {v!r}")
    if len(set(vals)) != len(vals):
        _fail(where, f"repeats a value: {v!r}")
    return [float(x) for x in vals]


def _entries(v, kind, keys, where):
    """methods / problems: a list of names or a table label -> table; returns {label: table}."""
    if isinstance(v, list):
        if not v or not all(isinstance(x, str) for x in v):
            _fail(where, f"must be a non-empty list of registered {kind} names or a table of label -> table, got {v!r}")
        if len(set(v)) != len(v):
            _fail(where, f"repeats a name: {v!r}")
        return {name: {"name": name} for name in v}
    if not isinstance(v, dict) or not v:
        _fail(where, f"must be a non-empty list of registered {kind} names or a table of label -> table, got {v!r}")
    out = {}
    for label, entry in v.items():
        _check_keys(entry, keys, f"{where}.{label}")
        out[label] = {**entry, "name": entry.get("name", label)}
        if not isinstance(out[label]["name"], str):
            _fail(f"{where}.{label}.name", f"must be a string, got {out[label]['name']!r}")
        if not isinstance(out[label].get("options", {}), dict):
            _fail(f"{where}.{label}.options", f"must be a table of keyword options, got {out[label]['options']!r}")
    return out


def settable_fields(params) -> dict:
    """{field name: default value} of the Params leaves (NamedTuple fields that are not NamedTuples)
    whose name occurs once, i.e. what jbo.engine.replace_params can set by name."""
    found: dict = {}

    def walk(p):
        if isinstance(p, tuple) and hasattr(p, "_fields"):
            for f in p._fields:
                v = getattr(p, f)
                if isinstance(v, tuple) and hasattr(v, "_fields"):
                    walk(v)
                elif not isinstance(v, (tuple, list, dict)) and v is not None and np.asarray(v).dtype.kind in "biuf":
                    found.setdefault(f, []).append(v)

    walk(params)
    return {k: v[0] for k, v in found.items() if len(v) == 1}


def _convert(value, default, where):
    """A config value as the type and shape of the default leaf (so every setting of a field lowers to
    the same program)."""
    shape = np.shape(default)
    try:
        arr = np.asarray(value, dtype=np.float64 if not isinstance(default, (bool, np.bool_)) else bool)
    except (TypeError, ValueError):
        _fail(where, f"must be a number{' array of shape ' + str(shape) if shape else ''}, got {value!r}")
    if arr.shape != shape:
        _fail(where, f"must have shape {shape} (the default's), got {value!r}")
    if isinstance(default, bool):
        if not isinstance(value, bool):
            _fail(where, f"must be true or false, got {value!r}")
        return value
    if isinstance(value, bool):
        _fail(where, f"must be a number, got {value!r}")
    if isinstance(default, int):
        if not float(arr).is_integer():
            _fail(where, f"must be an int, got {value!r}")
        return int(arr)
    if isinstance(default, float):
        return float(arr)
    import jax.numpy as jnp

    if isinstance(default, np.ndarray):
        return np.asarray(value, dtype=default.dtype)
    return jnp.asarray(value, dtype=default.dtype)


def _param_axes(params_cfg, default_params, algo_name, where):
    """{field: [settings]} from a method's params table (a list of settings is an axis)."""
    if not isinstance(params_cfg, dict):
        _fail(where, f"must be a table of Params field -> value or list of values, got {params_cfg!r}")
    if not params_cfg:
        return {}
    leaves = settable_fields(default_params) if default_params is not None else {}
    axes = {}
    for f, v in params_cfg.items():
        if f not in leaves:
            allowed = sorted(leaves) if leaves else "none (this algorithm has no Params)"
            _fail(f"{where}.{f}", f"unknown Params field for algorithm {algo_name!r}; allowed fields: {allowed}")
        is_axis = isinstance(v, list) and _ndim(v) == np.ndim(leaves[f]) + 1
        settings = v if is_axis else [v]
        if not settings:
            _fail(f"{where}.{f}", "an empty list of settings")
        for s in settings:
            _convert(s, leaves[f], f"{where}.{f}")
        axes[f] = settings
    return axes


def _ndim(v) -> int:
    """Nesting depth of a list value (a ragged or non-numeric list counts by its first element)."""
    n = 0
    while isinstance(v, list) and v:
        n, v = n + 1, v[0]
    return n + (1 if isinstance(v, list) else 0)


def _fmt(v) -> str:
    return json.dumps(v, separators=(",", ":")) if isinstance(v, list) else f"{v:g}" if _is_number(v) else str(v)


def config_hash(config: dict) -> str:
    """sha256 of the normalised config (defaults filled in; comments and layout do not count)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def parse(config) -> Study:
    """Validate and expand a config (a dict, TOML text, or a path to a .toml file) into a Study.
    The config's `imports` are imported first (a .py path relative to the config file's folder)."""
    base = Path.cwd()
    if isinstance(config, Path) or (
        isinstance(config, str)
        and "\n" not in config
        and (config.endswith((".toml", ".yaml", ".yml")) or Path(config).is_file())
    ):
        base = Path(config).resolve().parent
        config = load_toml(config)
    elif isinstance(config, str):
        import tomllib

        try:
            config = tomllib.loads(config)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"study config: not valid TOML: {e}") from None
    if not isinstance(config, dict):
        raise ValueError(f"study config: must be a table (dict), got {type(config).__name__}")
    from jbo import algorithms as algs
    from jbo import problems as probs
    from jbo.engine import replace_params

    _check_keys(config, TOP_KEYS, "top level")
    imports = config.get("imports", [])
    if not isinstance(imports, list) or not all(isinstance(m, str) and m for m in imports):
        _fail("imports", f"must be a list of module names or .py paths, got {imports!r}")
    if imports:
        from jbo import plugins

        plugins.import_modules(imports, "study config: imports", relative_to=base)
    for k in ("seeds", "methods", "problems"):
        if k not in config:
            _fail(k, "missing (required keys: seeds, methods, problems)")
    seeds = config["seeds"]
    if not (_is_int(seeds) and seeds > 0):
        _fail("seeds", f"must be a positive int, got {seeds!r}")
    seed = config.get("seed", 0)
    if not (_is_int(seed) and seed >= 0):
        _fail("seed", f"must be an int >= 0, got {seed!r}")
    free_initial = config.get("free_initial", False)
    if not isinstance(free_initial, bool):
        _fail("free_initial", f"must be true or false, got {free_initial!r}")
    bitwise = config.get("bitwise", False)
    if not isinstance(bitwise, bool):
        _fail("bitwise", f"must be true or false, got {bitwise!r}")
    name = config.get("name", "")
    if not isinstance(name, str):
        _fail("name", f"must be a string, got {name!r}")
    top_steps = _positive_ints(config.get("steps"), "steps", required=False)
    top_budget = _budgets(config.get("budget"), "budget")
    methods = _entries(config["methods"], "algorithm", METHOD_KEYS, "methods")
    problems = _entries(config["problems"], "problem", PROBLEM_KEYS, "problems")

    built_algs, built_probs, norm_methods, norm_problems = {}, {}, {}, {}
    method_settings = {}
    for label, m in methods.items():
        where = f"methods.{label}"
        if m["name"] not in algs.names():
            _fail(f"{where}.name", f"unknown algorithm {m['name']!r}; registered algorithms: {algs.names()}")
        options = m.get("options", {})
        try:
            alg = algs.get(m["name"], **options)
        except ValueError as e:
            _fail(f"{where}.options", str(e))
        built_algs[label] = alg
        defaults = alg.default_params()
        axes = _param_axes(m.get("params", {}), defaults, m["name"], f"{where}.params")
        settings = []
        for combo in itertools.product(*axes.values()):
            values = dict(zip(axes, combo))
            leaves = settable_fields(defaults) if values else {}
            converted = {f: _convert(v, leaves[f], f"{where}.params.{f}") for f, v in values.items()}
            obj = replace_params(defaults, **converted) if values else None
            grid = {f: v for f, v in values.items() if len(axes[f]) > 1}
            suffix = ("[" + ",".join(f"{f}={_fmt(v)}" for f, v in grid.items()) + "]") if grid else ""
            settings.append((label + suffix, values, obj))
        method_settings[label] = settings
        norm_methods[label] = {"name": m["name"], "options": options, "params": m.get("params", {})}
    for label, p in problems.items():
        where = f"problems.{label}"
        if p["name"] not in probs.names():
            _fail(f"{where}.name", f"unknown problem {p['name']!r}; registered problems: {probs.names()}")
        noise = p.get("noise_std", 0.0)
        if not (_is_number(noise) and math.isfinite(noise) and noise >= 0):
            _fail(f"{where}.noise_std", f"must be a number >= 0, got {noise!r}")
        options = p.get("options", {})
        try:
            built_probs[label] = probs.get(p["name"], noise_std=float(noise), **options)
        except ValueError as e:
            _fail(f"{where}.options", str(e))
        steps = _positive_ints(p.get("steps"), f"{where}.steps", required=False) or top_steps
        if steps is None:
            _fail("steps", f"missing: give a top-level steps or {where}.steps")
        budgets = _budgets(p["budget"], f"{where}.budget") if "budget" in p else top_budget
        norm_problems[label] = {
            "name": p["name"],
            "options": options,
            "noise_std": float(noise),
            "steps": steps,
            "budget": budgets,
        }

    cells = []
    for plabel, p in norm_problems.items():
        for steps in p["steps"]:
            for budget in p["budget"]:
                tags = ([f"T={steps}"] if len(p["steps"]) > 1 else []) + (
                    [f"budget={budget:g}"] if len(p["budget"]) > 1 else []
                )
                problem_label = plabel + (f"[{','.join(tags)}]" if tags else "")
                for mlabel, settings in method_settings.items():
                    alg = built_algs[mlabel]
                    if steps < alg.num_initial:
                        _fail(
                            f"problems.{plabel}.steps" if "steps" in problems[plabel] else "steps",
                            f"{steps} is smaller than the initial design of method {mlabel!r} "
                            f"(num_initial={alg.num_initial}); allowed: steps >= {alg.num_initial}",
                        )
                    for method_label, values, obj in settings:
                        parts = (
                            [plabel, f"T={steps}"]
                            + ([f"budget={budget:g}"] if budget is not None else [])
                            + [mlabel]
                            + ([",".join(f"{f}={_fmt(v)}" for f, v in values.items())] if values else [])
                        )
                        cid = "|".join(parts)
                        cells.append(
                            Cell(
                                len(cells), cid, method_label, problem_label, mlabel, plabel, steps, budget, values, obj
                            )
                        )
    normalised = {
        "name": name,
        **({"imports": imports} if imports else {}),  # absent when empty: older study directories resume
        "seeds": seeds,
        "seed": seed,
        "free_initial": free_initial,
        **({"bitwise": True} if bitwise else {}),  # absent when off: older study directories resume
        "methods": norm_methods,
        "problems": norm_problems,
    }
    param_fields = sorted({f for c in cells for f in c.params})
    return Study(normalised, config_hash(normalised), built_algs, built_probs, cells, param_fields)


def load_toml(path) -> dict:
    import tomllib

    path = Path(path)
    if not path.exists():
        raise ValueError(f"study config: no such file {str(path)!r}")
    if path.suffix in (".yaml", ".yml"):
        raise ValueError(
            f"study config: {path} is YAML; jbo reads TOML (the standard library's tomllib; YAML would "
            f"need PyYAML, which jbo does not depend on): write the same keys as a .toml file"
        )
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"study config: {path} is not valid TOML: {e}") from None


# ------------------------------------------------------------------------------------------ disk
def _fsync_dir(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, write) -> Path:
    """Write a file so that a kill at any moment leaves either no file or the whole file: write(tmp)
    into a temporary name in the same directory, fsync, os.replace onto `path`, fsync the directory."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    write(tmp)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    return path


def _cell_path(out: Path, cell: Cell) -> Path:
    return out / CELLS / f"{cell.index:04d}.csv"


LABELS = {"method": str, "problem": str, "cell": str}  # read as text: a label "1" stays "1"


def _read_csv(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=LABELS)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _content_problem(frame, cell: Cell, seeds: int, columns) -> str | None:
    """Why `frame` is not the table of `cell` (None when it is): the columns, one row per (seed,
    step) for seeds 0..seeds-1 and steps 1..T, the cell's labels in every row, numeric metrics."""
    have = list(frame.columns)
    missing = [c for c in columns if c not in have]
    if missing:
        return f"lacks column(s) {missing}"
    want = seeds * cell.num_steps
    if len(frame) != want:
        return f"holds {len(frame)} rows, a cell of {seeds} seeds x {cell.num_steps} steps has {want}"
    for col, label in (("cell", cell.id), ("method", cell.method), ("problem", cell.problem)):
        other = sorted(set(frame[col].astype(str)) - {label})
        if other:
            return f"has rows labelled {col} = {other[:3]}, not {label!r}"
    for col in have:
        if col not in LABELS and not col.startswith("param_") and not pd.api.types.is_numeric_dtype(frame[col]):
            return f"column {col!r} is not numeric"
    pairs = set(zip(frame["seed"].tolist(), frame["step"].tolist()))
    if pairs != {(s, t) for s in range(seeds) for t in range(1, cell.num_steps + 1)}:
        return f"does not hold each seed 0..{seeds - 1} and step 1..{cell.num_steps} exactly once"
    return None


def _required_columns(study: Study) -> list:
    return list(CELL_COLUMNS) + [f"param_{f}" for f in study.param_fields]


def check_cell(out, study: Study, cell: Cell, entry: dict | None) -> str | None:
    """Why the file of `cell` in directory `out` cannot be used (None when it can): missing, changed
    since it was written (its sha256 against the manifest `entry`), unreadable, or not the cell's
    table (see the module docstring). Without an entry only the content is checked."""
    path = _cell_path(Path(out), cell)
    if not path.exists():
        return "the file is missing"
    if entry is not None:
        if entry.get("id") != cell.id:
            return f"the manifest entry is for cell {entry.get('id')!r}"
        digest = _sha256(path)
        if digest != entry.get("sha256"):
            return f"its sha256 {digest[:12]} differs from the {str(entry.get('sha256'))[:12]} recorded when it was written"
    try:
        frame = _read_csv(path)
    except Exception as e:  # noqa: BLE001  (empty, binary or malformed: every parser error is a reason)
        return f"it is not a readable table ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    columns = entry["columns"] if entry is not None else _required_columns(study)
    if entry is not None and list(frame.columns) != list(columns):
        return f"its columns {list(frame.columns)} differ from the recorded {list(columns)}"
    return _content_problem(frame, cell, study.config["seeds"], columns)


def _entry(out: Path, cell: Cell, frame) -> dict:
    path = _cell_path(out, cell)
    return {
        "id": cell.id,
        "file": str(path.relative_to(out)),
        "rows": len(frame),
        "columns": list(frame.columns),
        "sha256": _sha256(path),
    }


def _read_manifest(out: Path) -> dict:
    path = out / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StudyDataError(f"{path} is not a jbo study manifest ({e}); use --fresh to start over") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("cells"), list):
        raise StudyDataError(f"{path} is not a jbo study manifest (no cell list); use --fresh to start over")
    return manifest


def _write_manifest(out: Path, manifest: dict) -> None:
    write_atomic(out / MANIFEST, lambda p: p.write_text(json.dumps(manifest, indent=1, default=str)))


def prepare_output(out: Path, study: Study, config_text: str | None, fresh: bool, report=None) -> set:
    """Create or check the output directory; return the indices of finished cells, each verified
    (:func:`check_cell`). A cell file that fails is reported through `report(message)` (default:
    a line on stderr), deleted and its cell left to run again."""
    report = report or (lambda msg: print(msg, file=sys.stderr, flush=True))
    manifest_path = out / MANIFEST
    ours = [manifest_path, out / CELLS, out / "config.toml", out / "table.csv", out / "summary.csv", out / PLOT]
    if fresh:
        for p in ours:
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    if manifest_path.exists():
        manifest = _read_manifest(out)
        if manifest.get("config_hash") != study.hash:
            raise ValueError(
                f"{out} holds a study written by a different config (hash {str(manifest.get('config_hash'))[:12]} "
                f"vs {study.hash[:12]} for this one); refusing to resume into it. Use --fresh to delete its "
                f"results and start over, or another --out"
            )
        from jbo.studies import code_version

        now = code_version()
        if manifest.get("code_version") != now:
            import warnings

            warnings.warn(
                f"resuming {out}: its cells so far were run by jbo {manifest.get('code_version')}, this is "
                f"jbo {now}; use --fresh if the code change matters",
                stacklevel=3,
            )
    else:
        if (out / CELLS).exists() and any((out / CELLS).iterdir()):
            raise ValueError(f"{out / CELLS} has files but {manifest_path} is missing; use --fresh to start over")
        from jbo.studies import code_version

        manifest = {
            "config_hash": study.hash,
            "config": study.config,
            "cells": [c.id for c in study.cells],
            "code_version": code_version(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "finished": {},
        }
        _write_manifest(out, manifest)
    if config_text is not None and not (out / "config.toml").exists():
        write_atomic(out / "config.toml", lambda p: p.write_text(config_text))
    (out / CELLS).mkdir(exist_ok=True)
    for tmp in (out / CELLS).glob(".*.tmp-*"):  # a write a kill interrupted
        tmp.unlink()
    for name in (MANIFEST, "config.toml", "table.csv", "summary.csv", PLOT):
        for tmp in out.glob(f".{name}.tmp-*"):
            tmp.unlink()
    finished, done, changed = dict(manifest.get("finished", {})), set(), "finished" not in manifest
    for cell in study.cells:
        entry, path = finished.get(str(cell.index)), _cell_path(out, cell)
        if not path.exists() and entry is None:
            continue
        reason = check_cell(out, study, cell, entry)
        if reason is None:
            done.add(cell.index)
            if entry is None:  # written, then killed before the manifest: adopted after the content checks
                finished[str(cell.index)] = _entry(out, cell, _read_csv(path))
                changed = True
            continue
        report(f"{path} (cell {cell.id!r}) cannot be used: {reason}; running the cell again")
        path.unlink(missing_ok=True)
        finished.pop(str(cell.index), None)
        changed = True
    if changed:
        _write_manifest(out, {**manifest, "finished": finished})
    return done


def verify(out, study: Study | None = None) -> list:
    """[(cell index, cell id, reason or None)] for every cell of the study in `out`: None for a
    finished cell whose file passes :func:`check_cell`, "not run" for a cell without a file or
    entry. Without `study`, files are checked against their manifest entries only (sha256, columns,
    rows, cell ids); with it, against what each cell must hold too."""
    out = Path(out)
    manifest = _read_manifest(out)
    finished = manifest.get("finished", {})
    if study is not None and manifest.get("config_hash") != study.hash:
        raise StudyDataError(f"{out} holds a study written by a different config than the one given")
    rows = []
    for i, cid in enumerate(manifest["cells"]):
        entry, path = finished.get(str(i)), out / CELLS / f"{i:04d}.csv"
        if entry is None and not path.exists():
            rows.append((i, cid, "not run"))
        elif study is not None:
            rows.append((i, cid, check_cell(out, study, study.cells[i], entry)))
        elif entry is None:
            rows.append((i, cid, "the file has no manifest entry (not verified)"))
        else:
            rows.append((i, cid, _entry_problem(out, path, cid, entry)))
    return rows


def _entry_problem(out: Path, path: Path, cid: str, entry: dict) -> str | None:
    """check_cell without the study: the manifest entry's sha256, columns, rows and cell id."""
    if not path.exists():
        return "the file is missing"
    digest = _sha256(path)
    if entry.get("id") != cid or digest != entry.get("sha256"):
        return f"its sha256 {digest[:12]} differs from the {str(entry.get('sha256'))[:12]} recorded when it was written"
    frame = _read_csv(path)
    if list(frame.columns) != entry["columns"] or len(frame) != entry["rows"] or set(frame["cell"]) != {cid}:
        return "its content differs from its manifest entry"
    return None


def _cell_frame(study: Study, cell: Cell) -> pd.DataFrame:
    from jbo.studies import run_study

    seeds, seed = study.config["seeds"], study.config["seed"]
    table = run_study(
        {cell.method: study.algorithms[cell.method_key]},
        {cell.problem: study.problems[cell.problem_key]},
        key=seed,
        num_steps=cell.num_steps,
        num_seeds=seeds,
        progress=False,
        params=None if cell.params_object is None else (lambda m, p: cell.params_object),
        budget=cell.budget,
        free_initial=study.config["free_initial"],
        bitwise=study.config.get("bitwise", False),
    )
    table["cell"] = cell.id
    table["num_steps"] = cell.num_steps
    table["budget"] = np.nan if cell.budget is None else cell.budget
    for f in study.param_fields:
        v = cell.params.get(f)
        table[f"param_{f}"] = json.dumps(v) if isinstance(v, list) else (np.nan if v is None else v)
    return table


def run(config, out, fresh: bool = False, progress: bool = True, config_text: str | None = None) -> pd.DataFrame:
    """Run (or resume) a study into directory `out`; returns the combined table (also table.csv).

    config: a path to a .toml file, TOML text or a dict (see the module docstring for the schema).
    Finished cells are verified before they are skipped (a damaged file is named and its cell run
    again). Ctrl-C raises :class:`StudyInterrupted`, whose message says what was kept and how to
    resume."""
    if (
        config_text is None
        and isinstance(config, (str, Path))
        and Path(config).suffix == ".toml"
        and Path(config).exists()
    ):
        config_text = Path(config).read_text()
    study = parse(config)
    out = Path(out)
    done = prepare_output(out, study, config_text, fresh)
    manifest = _read_manifest(out)
    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(study.cells),
        initial=len(done),
        unit="cell",
        file=sys.stderr,
        disable=not progress,
        desc=study.config["name"] or "study",
        dynamic_ncols=True,
    )
    if progress and done:
        bar.write(f"resuming in {out}: {len(done)} of {len(study.cells)} cells already finished", file=sys.stderr)
    try:
        for cell in study.cells:
            if cell.index in done:
                continue
            bar.set_postfix_str(f"{cell.method} on {cell.problem}", refresh=True)
            frame = _cell_frame(study, cell)
            problem = _content_problem(frame, cell, study.config["seeds"], _required_columns(study))
            if problem is not None:  # the runner's own table: a bug, never written
                raise RuntimeError(f"cell {cell.id!r}: the table produced {problem}")
            write_atomic(_cell_path(out, cell), lambda p: frame.to_csv(p, index=False))
            manifest.setdefault("finished", {})[str(cell.index)] = _entry(out, cell, frame)
            _write_manifest(out, manifest)
            done.add(cell.index)
            bar.update(1)
            if progress:
                bar.write(
                    f"[{cell.index + 1}/{len(study.cells)}] {cell.method} on {cell.problem} "
                    f"(T={cell.num_steps}{'' if cell.budget is None else f', budget {cell.budget:g}'}): "
                    f"compile {frame['compile_s'].iloc[0]:.1f} s, run {frame['run_s'].iloc[0]:.1f} s",
                    file=sys.stderr,
                )
    except KeyboardInterrupt:
        raise StudyInterrupted(
            f"interrupted: {len(done)} of {len(study.cells)} cells are finished and kept in {out}; "
            "the same command resumes from there"
        ) from None
    finally:
        bar.close()
    return combine(out, study)


def combine(out, study: Study | None = None) -> pd.DataFrame:
    """The finished cells of `out` as one table (cell order), each verified first (:func:`verify`);
    a cell file that fails raises :class:`StudyDataError` naming it, so nothing inconsistent is
    combined. When every cell is finished, writes table.csv, summary.csv and regret.png (with
    matplotlib) atomically."""
    out = Path(out)
    rows = verify(out, study)
    bad = [(i, cid, reason) for i, cid, reason in rows if reason not in (None, "not run")]
    if bad:
        lines = [f"  {out / CELLS / f'{i:04d}.csv'} (cell {cid!r}): {reason}" for i, cid, reason in bad]
        raise StudyDataError(
            f"{out}: {len(bad)} cell file(s) cannot be combined:\n"
            + "\n".join(lines)
            + "\nrunning the study again (the same `jbo study` command or jbo.study_config.run) runs these cells again"
        )
    frames = [_read_csv(out / CELLS / f"{i:04d}.csv") for i, _, reason in rows if reason is None]
    if not frames:
        raise ValueError(f"{out} has no finished cells")
    table = pd.concat(frames, ignore_index=True)
    if len(frames) == len(rows):
        write_atomic(out / "table.csv", lambda p: table.to_csv(p, index=False))
        from jbo.studies import summary

        summ = summary(table)
        write_atomic(out / "summary.csv", lambda p: summ.to_csv(p, index=False))
        _write_plot(out / PLOT, table)
    return table


def _write_plot(path: Path, table) -> bool:
    """jbo.studies.plot of the table at `path` (atomically); False when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    import matplotlib.pyplot as plt

    from jbo.studies import default_metric, plot

    metric = default_metric(table)
    fig = plot(table, metric=metric, log=metric != "best_value", ncols=min(3, table["problem"].nunique()))
    write_atomic(path, lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)
    return True


def describe(study: Study) -> str:
    """The cells a study will run, one per line."""
    lines = [f"{len(study.cells)} cells x {study.config['seeds']} seeds (config hash {study.hash[:12]}):"]
    lines += [f"  {c.index:4d}  {c.id}" for c in study.cells]
    return "\n".join(lines)
