"""The notebooks in notebooks/: each executes top to bottom (each cell's assertions must hold), and each
figure a cell draws is shown inline, so the executed notebook (and its page on the docs site) carries it."""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]

# a cell draws when it calls pyplot (other than to show or close) or jbo.studies.plot
DRAWS = re.compile(r"\bplt\.(?!show\b|close\b)\w+\(|\bstudies\.plot\(")
SHOWS = re.compile(r"\bplt\.show\(\)|\bdisplay\(")


def _code_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def _drawing_cells(nb):
    return [i for i, c in _code_cells(nb) if DRAWS.search(c.source)]


def test_the_notebooks_that_import_pyplot_are_the_ones_found_drawing():
    """The checks below see the notebooks that draw (a pattern that matched nothing would pass them all)."""
    nbs = {p.stem: nbformat.read(p, as_version=4) for p in NOTEBOOKS}
    pyplot = {
        name for name, nb in nbs.items() if any("import matplotlib.pyplot" in c.source for _, c in _code_cells(nb))
    }
    assert pyplot and {name for name, nb in nbs.items() if _drawing_cells(nb)} == pyplot


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_figures_are_drawn_inline_and_shown(path):
    """No notebook selects an off-screen backend; one that draws selects the inline backend before its
    first figure, and every cell that draws shows what it drew."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in _code_cells(nb):
        assert "matplotlib.use(" not in cell.source, f"{path.name}, cell {i}: matplotlib.use(...) draws off-screen"
    drawing = _drawing_cells(nb)
    if not drawing:
        return
    inline = [i for i, c in _code_cells(nb) if re.search(r"^%matplotlib inline$", c.source, re.M)]
    assert inline and inline[0] <= drawing[0], f"{path.name}: %matplotlib inline must come before cell {drawing[0]}"
    for i in drawing:
        assert SHOWS.search(nb.cells[i].source), f"{path.name}, cell {i} draws a figure and never shows it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebooks_are_committed_without_outputs(path):
    """The repository holds the notebooks' sources; their outputs come from executing them (the docs
    build, the test below)."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in _code_cells(nb):
        assert cell.outputs == [] and cell.execution_count is None, f"{path.name}, cell {i} holds outputs"


# CI's docs build executes every notebook too (mkdocs.yml: execute, no cache, allow_errors false), so the
# suite runs them only with --runslow (about 160 s of CPU)
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_executes_and_shows_its_figures(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    for i in _drawing_cells(nb):
        images = [o for o in nb.cells[i].outputs if "image/png" in o.get("data", {})]
        assert images, f"{path.name}, cell {i} draws a figure but its executed output holds no image/png"
