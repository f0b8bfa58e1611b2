"""Every python block in the README and the docs runs as written (blocks of one page share a namespace,
in order, as a reader would run them)."""

import json
import re
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if "notebooks" not in p.parts)
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def _blocks(path):
    return BLOCK.findall(path.read_text())


# the heaviest pages' code runs in CI's extended step (the README's in every run)
EXTENDED_PAGES = (
    "getting-started.md",
    "asktell.md",
    "kernel.md",
    "devices.md",
    "sweeps.md",
    "compare.md",
    "parts.md",
    "algorithm.md",
)


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.extended) if p.name in EXTENDED_PAGES else p for p in PAGES if _blocks(p)],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_page_code_runs(path, tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # files a block writes land in a scratch folder
    namespace = {"__name__": "__docs__"}
    for i, code in enumerate(_blocks(path)):
        try:
            exec(compile(code, f"{path.name}[block {i}]", "exec"), namespace)
        except Exception as e:  # name the page and the block
            raise AssertionError(f"{path.relative_to(ROOT)}, python block {i}: {type(e).__name__}: {e}") from e


def _hooks():
    """docs/hooks.py, the module mkdocs.yml registers under `hooks:`."""
    import importlib.util

    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_build_runs_the_notebook_figure_hook():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert "docs/hooks.py" in config["hooks"] and config["strict"] is True  # a warning fails the build
    assert "hooks.py" in config["exclude_docs"].split()  # the hook is not published with the pages


def _code(source):
    return {"cell_type": "code", "source": source, "outputs": [], "metadata": {}, "execution_count": None}


def test_a_notebook_page_that_draws_without_an_image_fails_the_build(tmp_path, caplog):
    """A notebook whose source draws in two cells: its page passes with an embedded image per drawing
    cell and warns (which fails the strict build) with fewer; a notebook that only prints needs none."""
    hooks = _hooks()
    draws = {
        "cells": [
            _code(["%matplotlib inline\n", "import matplotlib.pyplot as plt\n"]),
            _code("fig, ax = plt.subplots()\nax.plot([1, 2])\nplt.show()"),
            {"cell_type": "markdown", "source": "plt.plot( in prose", "metadata": {}},
            _code("fig = jbo.studies.plot(table)\ndisplay(fig)"),
        ]
    }
    prints = {"cells": [_code("import matplotlib.pyplot as plt\nprint(1)")]}
    img = '<img alt="" src="data:image/png;base64,iVBORw0KGgo=">'
    assert hooks.drawing_cells(draws) == [1, 3] and hooks.drawing_cells(prints) == []
    assert hooks.missing_figures(draws, f"<div>{img}</div><div>{img}</div>") is None
    assert "2 code cell(s) draw a figure (cells [1, 3])" in hooks.missing_figures(draws, f"<div>{img}</div>")
    assert hooks.missing_figures(draws, "<pre>no figure</pre>") is not None
    assert hooks.missing_figures(prints, "<pre>1</pre>") is None

    path = tmp_path / "draws.ipynb"
    path.write_text(json.dumps(draws))
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/draws.ipynb", abs_src_path=str(path)))
    with caplog.at_level("WARNING", logger="mkdocs"):
        assert hooks.on_page_content("<p>no figure</p>", page=page, config={}, files=[]) == "<p>no figure</p>"
        assert hooks.on_page_content(f"<p>{img}{img}</p>", page=page, config={}, files=[]) is not None
    assert [r.levelname for r in caplog.records] == ["WARNING"] and "notebooks/draws.ipynb" in caplog.text
    assert caplog.records[0].name.startswith("mkdocs.")  # counted by the strict build's warning counter
