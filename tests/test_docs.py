"""Every python block in the README and the docs runs as written (blocks of one page share a namespace,
in order, as a reader would run them)."""

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if "notebooks" not in p.parts)
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def _blocks(path):
    return BLOCK.findall(path.read_text())


@pytest.mark.parametrize("path", [p for p in PAGES if _blocks(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_page_code_runs(path, tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # files a block writes land in a scratch folder
    namespace = {"__name__": "__docs__"}
    for i, code in enumerate(_blocks(path)):
        try:
            exec(compile(code, f"{path.name}[block {i}]", "exec"), namespace)
        except Exception as e:  # name the page and the block
            raise AssertionError(f"{path.relative_to(ROOT)}, python block {i}: {type(e).__name__}: {e}") from e
