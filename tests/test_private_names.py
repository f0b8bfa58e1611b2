"""No module uses another module's private names: every import and attribute access in jbo/, tests/,
experiments/ and the notebooks is checked (an underscore name belongs to the module that defines it)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


NAMEDTUPLE_API = {"_fields", "_replace", "_asdict", "_make", "_field_defaults"}  # public, despite the underscore


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__")) and name not in NAMEDTUPLE_API


def _sources():
    for folder in ("jbo", "tests", "experiments"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
        yield path.relative_to(ROOT).as_posix(), "\n".join(lines)


def _module_name(rel: str) -> str:
    return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def private_uses(rel: str, source: str) -> list[str]:
    """'file:line name' for each private name of a jbo module used outside that module: imported
    (from jbo.x import _y; import jbo._x) or read as an attribute of an imported jbo module."""
    tree = ast.parse(source)
    own = _module_name(rel)
    modules: dict[str, str] = {}  # local alias -> jbo module it names
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("jbo", "tests"):
                    if any(_private(part) for part in a.name.split(".")):
                        found.append(f"{rel}:{node.lineno} import {a.name}")
                    modules[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("jbo", "tests"):
            if any(_private(part) for part in node.module.split(".")) and node.module != own:
                found.append(f"{rel}:{node.lineno} from {node.module}")
            for a in node.names:
                if _private(a.name) and node.module != own:
                    found.append(f"{rel}:{node.lineno} {node.module}.{a.name}")
                modules[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            chain = []
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                target = ".".join([modules[base.id], *reversed(chain)])
                if target != own:
                    found.append(f"{rel}:{node.lineno} {target}.{node.attr}")
    return found


def test_the_checker_finds_what_it_should():
    src = "import jbo\nfrom jbo.engine import _run\nfrom jbo import gp\nx = gp._fit_objective\ny = jbo.engine._keys\n"
    assert private_uses("tests/x.py", src) == [
        "tests/x.py:2 jbo.engine._run",
        "tests/x.py:4 jbo.gp._fit_objective",
        "tests/x.py:5 jbo.engine._keys",
    ]
    assert private_uses("jbo/gp.py", "from jbo import gp\nz = gp._own\n") == []  # a module's own names
    assert private_uses("tests/y.py", "self._state = 1\nobj._cache = 2\nt._replace(a=1)\n") == []


def test_no_module_uses_another_modules_private_names():
    found = [use for rel, src in _sources() for use in private_uses(rel, src)]
    assert not found, "private names used outside their module:\n" + "\n".join(found)


# The layers of docs/modules.md, from the bottom: a module imports only from its own layer or below.
LAYERS = (
    (
        "lazy",
        "cache",
        "plugins",
        "batching",
        "linalg",
        "kernels",
        "data",
        "designs",
        "optimize",
        "bandits",
        "regression",
    ),
    ("spaces", "gp", "kde", "acquisitions", "checks"),
    ("protocols", "metrics", "scan", "parts"),
    ("parallel",),
    ("runner", "engine"),
    ("algorithms", "problems"),
    ("asktell", "studies", "study_config", "verdict", "reproduce", "cli", "__main__", ""),
)


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else ""
    return next(i for i, names in enumerate(LAYERS) if top in names)


def test_every_module_imports_only_from_its_layer_or_below():
    wrong = []
    for path in sorted((ROOT / "jbo").rglob("*.py")):
        module = _module_name(path.relative_to(ROOT).as_posix())
        for node in ast.walk(ast.parse(path.read_text())):  # imports inside functions count too
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jbo":
                targets = [f"jbo.{a.name}" for a in node.names] if node.module == "jbo" else [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "jbo"]
            else:
                continue
            wrong += [f"{module} imports {t}" for t in targets if _layer(t) > _layer(module)]
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)
