"""User code for jbo: modules to import, and installed plug-ins.

**Modules** (``jbo study --import MODULE``, ``jbo algorithms --import MODULE``, a study config's
``imports = [...]``): :func:`import_modules` imports each one before anything is looked up by name.
A module normally registers what it defines when it is imported::

    jbo.algorithms.register("perturb_best", PerturbBest)
    jbo.problems.register("my_problem", my_problem)
    jbo.kernels.register("cauchy", lambda r2: 1.0 / (1.0 + r2))

so its names work wherever a built-in name does. A spec is a dotted module name (imported with
``importlib.import_module`` from ``sys.path`` as it is) or a path to a ``.py`` file. A file is imported
under a name of its own (``jbo_user_<stem>_<hash of its path>``), so two files called ``methods.py``
in different folders do not collide, and importing the same file twice returns the module imported
first (its ``register`` calls run once). Its folder is appended to ``sys.path`` (at the end, so it
shadows no installed module) and stays there: the file's own ``import helpers`` of a sibling module
works at import time and inside functions called later. Nothing else is added to ``sys.path``.

**Installed plug-ins** register through Python entry points, in three groups:

    ``jbo.algorithms``  name = a factory ``(**options) -> Algorithm`` (jbo.algorithms.get(name, ...))
    ``jbo.problems``    name = a factory ``(**options) -> Environment`` (jbo.problems.get(name, ...))
    ``jbo.kernels``     name = a stationary profile ``r2 -> k(r2) / outputscale`` (jbo.kernels)

declared in the plug-in's ``pyproject.toml``::

    [project.entry-points."jbo.algorithms"]
    perturb_best = "my_package.methods:PerturbBest"

A registry reads its group once, the first time it is asked for its names or for a name it does not
know, so ``import jbo`` does not pay for it. An entry point that fails to load, is not callable or
names an entry the registry already holds is skipped with a warning that names it and its
distribution: a broken plug-in never breaks ``jbo algorithms`` or a study that does not use it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

GROUPS = ("jbo.algorithms", "jbo.problems", "jbo.kernels")

loaded_groups: set[str] = set()  # the groups whose entry points were read in this process


# ------------------------------------------------------------------------------------------ modules
def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def is_path(spec: str) -> bool:
    """A spec names a file when it ends in .py or contains a path separator; else it is a module name."""
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def module_name(path: Path) -> str:
    """The name a .py file is imported under: its stem and a hash of its resolved path."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"jbo_user_{stem}_{digest}"


def _import_file(path: Path) -> ModuleType:
    name = module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.append(folder)  # for the file's sibling imports (see the module docstring)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_module(spec, where: str, relative_to=None) -> ModuleType:
    """Import one user module: a dotted module name or a path to a .py file (relative paths from
    `relative_to`, default the working directory). A ValueError names the spec, `where` it came from
    and the underlying error in one line."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"{where}: a module to import is a dotted module name or a path to a .py file, got {spec!r}")
    if is_path(spec):
        path = Path(spec).expanduser()
        if not path.is_absolute() and relative_to is not None:
            path = Path(relative_to) / path
        path = path.resolve()
        if not path.is_file():
            raise ValueError(f"{where}: cannot import {spec!r}: no such file {str(path)!r}")
        load = lambda: _import_file(path)  # noqa: E731
    else:
        load = lambda: importlib.import_module(spec)  # noqa: E731
    try:
        return load()
    except ModuleNotFoundError as e:
        missing = not is_path(spec) and e.name is not None and (spec + ".").startswith(e.name + ".")
        hint = f" (a file? give its path, e.g. {spec.replace('.', '/')}.py)" if missing else ""
        raise ValueError(f"{where}: cannot import {spec!r}: {_one_line(e)}{hint}") from e
    except Exception as e:  # noqa: BLE001  (the user's module raised: name it and where it came from)
        raise ValueError(f"{where}: cannot import {spec!r}: {_one_line(e)}") from e


def import_modules(specs: Iterable, where: str, relative_to=None) -> list[ModuleType]:
    """Import user modules (dotted names or paths to .py files, see the module docstring), in order;
    importing one runs its register(...) calls. `where` says where the specs came from, e.g.
    "jbo study --import" or "study config: imports"; an error names the spec as `where[i]`."""
    if isinstance(specs, str) or not isinstance(specs, Iterable):
        raise ValueError(f"{where}: must be a list of module names or .py paths, got {specs!r}")
    return [import_module(s, f"{where}[{i}]", relative_to) for i, s in enumerate(specs)]


# ------------------------------------------------------------------------------------------ entry points
def _origin(ep) -> str:
    dist = getattr(ep, "dist", None)
    name = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    return f"entry point {ep.name!r} = {ep.value!r} (group {ep.group!r}, from {name})"


def _entry_points(group: str):
    from importlib.metadata import entry_points

    return entry_points(group=group)


def load_entry_points(group: str, add: Callable[[str, Callable], None], has: Callable[[str], object]) -> None:
    """Once per process and group: load each installed entry point of `group` and add(name, factory).

    `has(name)` returns what the registry holds under a name (None when nothing): an entry point whose
    module registered that very object itself is taken as is; one naming a different entry already
    held, one that fails to load and one that is not callable are skipped with a warning."""
    if group in loaded_groups:
        return
    loaded_groups.add(group)  # first: a plug-in that asks the registry for its names must not recurse here
    for ep in _entry_points(group):
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001  (a broken plug-in is skipped, never fatal)
            warnings.warn(f"jbo: skipped {_origin(ep)}: it failed to load: {_one_line(e)}", stacklevel=3)
            continue
        held = has(ep.name)
        if held is obj:
            continue
        if held is not None:
            warnings.warn(f"jbo: skipped {_origin(ep)}: the name {ep.name!r} is already registered", stacklevel=3)
        elif not callable(obj):
            warnings.warn(f"jbo: skipped {_origin(ep)}: it loads {obj!r}, which is not callable", stacklevel=3)
        else:
            try:
                add(ep.name, obj)
            except ValueError as e:
                warnings.warn(f"jbo: skipped {_origin(ep)}: {e}", stacklevel=3)


def refresh() -> None:
    """Forget which entry-point groups were read: the next names() or get() of an unknown name reads
    them again (after installing a plug-in into a running process)."""
    loaded_groups.clear()


def doc_line(obj) -> str:
    """The first paragraph of obj's docstring on one line: how a registered entry without a line of
    its own in a DESCRIPTIONS table describes itself."""
    return " ".join((getattr(obj, "__doc__", None) or "").strip().split("\n\n")[0].split())


def check_entry(kind: str, name, factory, registry, replace: bool) -> None:
    """The checks every register(...) makes: a non-empty string name, a callable factory, and a name
    not already in `registry` unless replace=True."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"register: a {kind} name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise ValueError(f"register({name!r}, ...): the {kind} factory must be callable, got {factory!r}")
    if name in registry and not replace:
        raise ValueError(
            f"register: the {kind} name {name!r} is already registered; choose another name, "
            f"or pass replace=True to replace it"
        )
