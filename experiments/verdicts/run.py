"""Grade every claim of the five papers by the one verdict rule (jbo.verdict; docs/papers/verdicts.md)
from the committed result files; writes <paper>.{csv,md}, the tables the paper pages include, and
<paper>_reading.csv into experiments/results/verdicts/ with --update (else its scratch mirror). With
all five papers it also writes reading.md, included by docs/papers/verdicts.md: every claim whose
verdict differs between the phrase table's reading and the lenient one it replaces (likeness read as
"not worse", no effect size).

    python experiments/verdicts/run.py --update           # all five papers
    python experiments/verdicts/run.py --update boke      # one
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402
from common import OUT, add_update_flag, write  # noqa: E402

PAPERS = ("boke", "sbo_kde", "ucvs", "uhe_bo", "r_perp")
PAGES = {"boke": "BOKE", "sbo_kde": "SBO-KDE", "ucvs": "uCVS", "uhe_bo": "UHE-BO", "r_perp": "R-PERP"}


def reading_table() -> str:
    """The claims whose verdict the phrase table's reading changes, paper by paper (Markdown)."""
    lines = ["| paper | claim | lenient reading | the table's reading |", "|---|---|---|---|"]
    same = 0
    for paper in PAPERS:
        r = pd.read_csv(OUT / f"{paper}_reading.csv", dtype=str)
        changed = r[r.verdict != r.verdict_lenient]
        same += len(r) - len(changed)
        lines += [
            f"| {PAGES[paper]} | {c.claim}. {c.text} | {c.verdict_lenient} | **{c.verdict}** |"
            for c in changed.itertuples()
        ]
    return "\n".join(lines) + f"\n\nEvery other claim ({same}) has the same verdict under both readings.\n"


def main(papers=PAPERS):
    for paper in papers:
        if paper not in PAPERS:
            raise SystemExit(f"unknown paper {paper!r}; choose from {PAPERS}")
        module = importlib.import_module(paper)
        table = write(paper, module.claims())
        counts = table.groupby("outcome").size().to_dict() if "outcome" in table else {}
        print(f"{paper}: {len(table)} comparisons {counts}")
    if set(papers) == set(PAPERS):
        (OUT / "reading.md").write_text(reading_table())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("papers", nargs="*", default=list(PAPERS), help=f"some of {', '.join(PAPERS)} (default: all)")
    main(add_update_flag(ap).parse_args().papers)
