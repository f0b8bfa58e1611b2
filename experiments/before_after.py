"""A measurement at a reference commit and on this working tree, alternating in one run, so that both
sides see the same machine and load: :func:`alternate`."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository root


def alternate(before: str, repeats: int, measure: Callable) -> tuple[dict, str, str]:
    """``measure(side, tree, repeat, scratch) -> record`` for each repeat, "before" (the commit
    `before`, checked out in a git worktree) then "after" (this tree); returns ({"before": [records],
    "after": [records]}, the before commit, the after commit). `scratch` is a temporary folder removed
    at the end: a measurement copies out what must outlive it."""
    rev = lambda r: subprocess.run(  # noqa: E731
        ["git", "rev-parse", r], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    before_rev, after_rev = rev(before), rev("HEAD")
    runs = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), before_rev], cwd=ROOT, check=True)
        try:
            for r in range(repeats):
                for side, tree in (("before", worktree), ("after", ROOT)):
                    runs[side].append(measure(side, tree, r, Path(tmp)))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
    return runs, before_rev, after_rev


def write(path: Path, script: str, before_rev: str, after_rev: str, **fields) -> None:
    """Write a before/after record to `path`: the command that made it (`script` and this process's
    arguments), the two commits (the after side is the working tree), then `fields` in order."""
    record = {
        "command": " ".join(["python", script] + sys.argv[1:]),
        "before": before_rev,
        "after": after_rev + " (working tree)",
        **fields,
    }
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {path}")
