"""Execute every notebook in notebooks/ top to bottom (each cell's assertions must hold)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


# CI's docs build executes every notebook too (mkdocs.yml: execute, no cache, allow_errors false), so the
# suite runs them only with --runslow (about 160 s of CPU)
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
