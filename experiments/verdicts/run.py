"""Grade every claim of the five papers by the one verdict rule (jbo.verdict; docs/papers/verdicts.md)
from the committed result files; writes <paper>.{csv,md}, the tables the paper pages include, into
experiments/results/verdicts/ with --update (else its scratch mirror).

    python experiments/verdicts/run.py --update           # all five papers
    python experiments/verdicts/run.py --update boke      # one
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import add_update_flag, write  # noqa: E402

PAPERS = ("boke", "sbo_kde", "ucvs", "uhe_bo", "r_perp")


def main(papers=PAPERS):
    for paper in papers:
        if paper not in PAPERS:
            raise SystemExit(f"unknown paper {paper!r}; choose from {PAPERS}")
        module = importlib.import_module(paper)
        table = write(paper, module.claims())
        counts = table.groupby("outcome").size().to_dict() if "outcome" in table else {}
        print(f"{paper}: {len(table)} comparisons {counts}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("papers", nargs="*", default=list(PAPERS), help=f"some of {', '.join(PAPERS)} (default: all)")
    main(add_update_flag(ap).parse_args().papers)
