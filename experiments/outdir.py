"""Where the experiment scripts write their results, and where they read earlier ones.

The committed results live under ``experiments/results/``. A script run as
``python experiments/<folder>/<script>.py`` writes into a scratch mirror of that tree instead:
``$JBO_SCRATCH/<parts>`` when JBO_SCRATCH is set, else ``<tempdir>/jbo-results/<parts>``
(``tempfile.gettempdir()``). With ``--update`` on its command line, or ``JBO_UPDATE_RESULTS=1`` in the
environment (which child processes inherit), it writes into ``experiments/results/<parts>``, the
committed files. The first folder a script asks for is printed (one line on stderr), so a run says
where it writes.

Reading earlier results:

* a script that builds on files an earlier script wrote (a summary, a plot from CSVs, a run that appends
  to its CSV or goes on where it stopped) reads them from the folder it writes to, :func:`output_dir`:
  the scratch folder by default, the committed files with ``--update``; :func:`require` and
  :func:`missing` name the folder when they are not there;
* a script that checks or grades the committed results (experiments/verdicts/, the re-checks against a
  committed run) reads them from :func:`committed_dir` in either mode, and writes what it makes (tables,
  checks) to :func:`output_dir`.

Scripts in a sub-folder put experiments/ on ``sys.path`` to import this module (their common.py does
it where there is one). ``python experiments/outdir.py [--update]`` prints the root the scripts write to.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
FLAG = "--update"
_announced = False


def updating() -> bool:
    """True when the scripts write into experiments/results (``--update`` or JBO_UPDATE_RESULTS=1)."""
    return FLAG in sys.argv[1:] or os.environ.get("JBO_UPDATE_RESULTS", "") == "1"


def scratch_root() -> Path:
    """The root of the scratch mirror: $JBO_SCRATCH, else <tempdir>/jbo-results."""
    return Path(os.environ.get("JBO_SCRATCH") or Path(tempfile.gettempdir()) / "jbo-results")


def root() -> Path:
    """The root the scripts write to in this process: experiments/results or the scratch mirror."""
    return RESULTS if updating() else scratch_root()


def committed_dir(*parts: str) -> Path:
    """experiments/results/<parts>, the committed results, whatever the mode (for scripts that read them)."""
    return RESULTS.joinpath(*parts)


def output_dir(*parts: str) -> Path:
    """The folder a script writes <parts> into (experiments/results/<parts> or its scratch mirror), created."""
    global _announced
    path = root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    if not _announced and multiprocessing.current_process().name == "MainProcess":  # not in a pool's workers
        _announced = True
        how = "the committed results" if updating() else f"scratch; {FLAG} writes {committed_dir(*parts)}"
        print(f"results go to {path} ({how})", file=sys.stderr, flush=True)
    return path


def missing(folder: Path, what: str) -> SystemExit:
    """The error to raise when the inputs `what` are not in `folder`: it names both, and --update."""
    hint = "" if updating() else f", or add {FLAG} to use the committed ones in {RESULTS}"
    return SystemExit(f"missing in {folder}: {what}; run the script that writes them first{hint}")


def require(*paths: Path) -> None:
    """Exit with a message naming the missing inputs and their folder unless every path exists."""
    absent = [Path(p) for p in paths if not Path(p).exists()]
    if absent:
        raise missing(absent[0].parent, ", ".join(p.name for p in absent))


class _Update(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        if not updating():  # an abbreviation: the folders were chosen from the command line as written
            parser.error(f"write {FLAG} in full")
        setattr(namespace, self.dest, True)


def add_update_flag(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--update`` (write into experiments/results, the committed files) to a script's parser."""
    ap.add_argument(
        FLAG,
        nargs=0,
        action=_Update,
        default=False,
        help="write into experiments/results (the committed files) instead of the scratch folder "
        f"({scratch_root()}; JBO_SCRATCH sets it)",
    )
    return ap


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    print(root())
