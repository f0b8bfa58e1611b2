"""mkdocs hooks (mkdocs.yml, ``hooks:``): a notebook page whose source draws figures must show them.

mkdocs-jupyter executes every notebook and embeds each figure a cell displays as an ``<img>`` with
its image data. A notebook that draws off-screen (matplotlib's Agg backend, a figure never shown)
executes cleanly and renders no figure; this hook then logs a warning, which fails the strict build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger(__name__)

# A call that draws: any pyplot function but those that only show, close or switch backends
# (plt.subplots, plt.plot, plt.figure, ...), or jbo.studies.plot.
DRAWS = re.compile(r"\bplt\.(?!show\b|close\b|switch_backend\b|ion\b|ioff\b)\w+\(|\bstudies\.plot\(")
IMAGE = re.compile(r"<img\b[^>]*\bsrc=\"data:image/(?:png|jpeg|svg\+xml);base64,")


def drawing_cells(notebook: dict) -> list[int]:
    """Indices of the code cells of a notebook (its JSON) that draw a figure."""
    return [
        i
        for i, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "code" and DRAWS.search("".join(cell["source"]))
    ]


def missing_figures(notebook: dict, html: str) -> str | None:
    """Why the rendered `html` of `notebook` lacks figures, or None: every cell that draws must add at
    least one embedded image."""
    cells, images = drawing_cells(notebook), len(IMAGE.findall(html))
    if images >= len(cells):
        return None
    return (
        f"{len(cells)} code cell(s) draw a figure (cells {cells}) but the rendered page holds {images} "
        "image(s): show each figure (plt.show(), or display(fig)) with an inline backend, not Agg"
    )


def on_page_content(html, page, config, files):
    if page.file.src_uri.endswith(".ipynb"):
        why = missing_figures(json.loads(Path(page.file.abs_src_path).read_text()), html)
        if why:
            log.warning(f"{page.file.src_uri}: {why}")
    return html
