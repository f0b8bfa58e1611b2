"""Every figure of the five papers as a declared study: ``jbo reproduce <paper> [<figure>...]``.

A paper declares its figures and tables in ``experiments/<paper>/figures.py`` as one :class:`Paper`
(``PAPER = Paper(...)``). Each :class:`Figure` names its methods, problems, the settings that come from
the paper and those that are ours, the claims its files grade (numbers of
``experiments/verdicts/<paper>.py``), and its budgets: ``smoke`` (seconds, run by CI so that no
declaration rots), ``default`` (what the committed results used) and ``paper`` (the paper's or the
released code's budget, often GPU-sized). A :class:`Budget` is a list of :class:`Step` s, each one
script of ``experiments/<paper>/`` with its arguments, and the estimated wall time on the 2-core CPU
the committed results ran on and, where measured, on one GPU (a budget with no CPU estimate is
GPU-only).

Running (:func:`reproduce`): each step runs in a child process from the repository root with
``JBO_SCRATCH=<out>``, so the scripts (experiments/outdir.py) write ``<out>/<paper>/<figure>/``; with
``update=True`` they write the committed files under ``experiments/results/`` instead. A finished step
is recorded under ``<out>/.reproduce/`` with the hash of its script, its arguments and the settings, so
the same command after a kill goes on where it stopped (a step whose script changed runs again);
each step's output is kept in a log beside it. At the end the figure's claims are graded by
``experiments/verdicts/run.py`` over the committed results with the re-run's files in their place
(``JBO_GRADE_ROOT``, read by experiments/verdicts/common.py), and each verdict is printed next to the
committed one.

The index: each paper's ``experiments/results/<paper>/INDEX.md`` (figure -> declaration -> command ->
result files -> claims graded) is generated from the declarations (:func:`index_text`) and included in
the paper's docs page; tests/test_reproduce.py fails if it is stale.

This module is the paper-independent machinery; it reads the declarations from the repository it is
run in (the folder holding ``experiments/``: the working directory or one above it, or ``root=``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

PAPERS = ("boke", "sbo_kde", "ucvs", "uhe_bo", "r_perp")
BUDGETS = ("smoke", "default", "paper")


@dataclasses.dataclass(frozen=True)
class Step:
    """One script run: ``python <script> <args>`` from the repository root. ``seeds``: the script's flag
    for the number of seeds (``--seeds N`` on jbo reproduce replaces or adds it), or None when the
    step takes none."""

    script: str
    args: tuple[str, ...] = ()
    seeds: str | None = None

    def __post_init__(self):
        if not self.script.endswith(".py"):
            raise ValueError(f"Step: script {self.script!r} is not a Python file")
        object.__setattr__(self, "args", tuple(str(a) for a in self.args))

    def argv(self, seeds: int | None = None) -> list[str]:
        """The arguments with the seed count replaced (or added) when ``seeds`` is given."""
        args = list(self.args)
        if seeds is not None and self.seeds:
            if self.seeds in args:
                args[args.index(self.seeds) + 1] = str(seeds)
            else:
                args += [self.seeds, str(seeds)]
        return args

    def command(self, seeds: int | None = None) -> str:
        return shlex.join(["python", self.script, *self.argv(seeds)])


@dataclasses.dataclass(frozen=True)
class Budget:
    """A budget level of one figure: its steps, their estimated wall time in minutes on this 2-core CPU
    (None: GPU-only) and on one GPU (None: not measured), and a note (what it cuts, where the time
    comes from)."""

    steps: tuple[Step, ...]
    cpu_minutes: float | None = None
    gpu_minutes: float | None = None
    note: str = ""

    def __post_init__(self):
        object.__setattr__(self, "steps", tuple(self.steps))
        if not self.steps:
            raise ValueError("Budget: steps is empty (a figure with nothing to run sets Figure.not_run)")
        if self.cpu_minutes is None and self.gpu_minutes is None:
            raise ValueError("Budget: give cpu_minutes, gpu_minutes or both (the estimated wall time)")


@dataclasses.dataclass(frozen=True)
class Figure:
    """One figure, table, sensitivity study or timing of a paper.

    name: its folder under experiments/results/<paper>/ and its name on the command line; title: what
    it is, with the paper's numbering; methods, problems: what it runs; paper_settings / our_settings:
    setting -> value, those taken from the paper (or its released code) and those that are ours;
    claims: the claim numbers of experiments/verdicts/<paper>.py that its files grade; budgets:
    "smoke", "default" and, where there is one, "paper"; results: the files it writes in its folder
    (glob patterns; default: every file there); not_run: for a figure with nothing to run (a cartoon,
    a theorem), why."""

    name: str
    title: str
    methods: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    paper_settings: dict = dataclasses.field(default_factory=dict)
    our_settings: dict = dataclasses.field(default_factory=dict)
    claims: tuple[str, ...] = ()
    budgets: dict = dataclasses.field(default_factory=dict)
    results: tuple[str, ...] = ("*",)
    not_run: str = ""

    def __post_init__(self):
        for f in ("methods", "problems", "claims", "results"):
            object.__setattr__(self, f, tuple(getattr(self, f)))
        if not self.name.replace("_", "").isalnum() or self.name != self.name.lower():
            raise ValueError(f"Figure: name {self.name!r} must be lower case letters, digits and _")
        unknown = set(self.budgets) - set(BUDGETS)
        if unknown:
            raise ValueError(f"Figure {self.name}: unknown budgets {sorted(unknown)}; choose from {BUDGETS}")
        if self.not_run and self.budgets:
            raise ValueError(f"Figure {self.name}: not_run and budgets exclude each other")
        if not self.not_run and not {"smoke", "default"} <= set(self.budgets):
            raise ValueError(f"Figure {self.name}: declare the smoke and default budgets (or not_run)")
        if not self.not_run and self.budgets["smoke"].cpu_minutes is None:
            raise ValueError(f"Figure {self.name}: the smoke budget must run on a CPU (cpu_minutes)")


@dataclasses.dataclass(frozen=True)
class Paper:
    """A paper's declarations: its name (one of PAPERS), citation, docs page and figures."""

    name: str
    title: str
    page: str
    figures: tuple[Figure, ...]

    def __post_init__(self):
        object.__setattr__(self, "figures", tuple(self.figures))
        names = [f.name for f in self.figures]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"Paper {self.name}: figure names declared twice: {sorted(dup)}")

    def figure(self, name: str) -> Figure:
        for f in self.figures:
            if f.name == name:
                return f
        raise SystemExit(f"jbo reproduce: {self.name} has no figure {name!r}; it has {[f.name for f in self.figures]}")


# --------------------------------------------------------------------------------------------- loading


def find_root(start: Path | None = None) -> Path:
    """The repository root: the first of `start` (default: the working directory) and its parents that
    holds experiments/ with the paper declarations."""
    here = Path(start or Path.cwd()).resolve()
    for p in (here, *here.parents):
        if (p / "experiments").is_dir() and any((p / "experiments" / n / "figures.py").exists() for n in PAPERS):
            return p
    raise SystemExit(f"jbo reproduce: no experiments/<paper>/figures.py in {here} or above; run it from the repository")


def load_paper(name: str, root: Path) -> Paper:
    """The Paper declared in <root>/experiments/<name>/figures.py."""
    path = root / "experiments" / name / "figures.py"
    if not path.exists():
        raise SystemExit(f"jbo reproduce: paper {name!r} is not declared ({path} is missing); papers: {PAPERS}")
    spec = importlib.util.spec_from_file_location(f"_jbo_figures_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    paper = getattr(module, "PAPER", None)
    if not isinstance(paper, Paper) or paper.name != name:
        raise SystemExit(f"jbo reproduce: {path} must define PAPER = Paper(name={name!r}, ...)")
    return paper


def papers(root: Path, names: Sequence[str] | None = None) -> list[Paper]:
    """The declared papers (the names given, else every paper of PAPERS whose declaration exists)."""
    names = list(names or [n for n in PAPERS if (root / "experiments" / n / "figures.py").exists()])
    return [load_paper(n, root) for n in names]


# ---------------------------------------------------------------------------------------------- running


def _digest(root: Path, step: Step, argv: list[str], update: bool) -> str:
    h = hashlib.sha256()
    h.update((root / step.script).read_bytes())
    h.update(json.dumps([step.script, argv, update]).encode())
    return h.hexdigest()[:16]


def default_out() -> Path:
    """Where a re-run writes without --out: $JBO_SCRATCH, else <tempdir>/jbo-reproduce."""
    return Path(os.environ.get("JBO_SCRATCH") or Path(tempfile.gettempdir()) / "jbo-reproduce")


def results_root(root: Path) -> Path:
    return root / "experiments" / "results"


def _env(out: Path, update: bool, root: Path) -> dict:
    env = dict(os.environ)
    env.pop("JBO_UPDATE_RESULTS", None)
    env.pop("JBO_GRADE_ROOT", None)
    env["JBO_SCRATCH"] = str(out)
    if update:
        env["JBO_UPDATE_RESULTS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_figure(
    root: Path,
    paper: Paper,
    figure: Figure,
    budget: str,
    out: Path,
    *,
    seeds: int | None = None,
    update: bool = False,
    force: bool = False,
    progress=None,
    echo=print,
) -> bool:
    """Run one figure's steps at a budget, skipping the steps already recorded as finished with the same
    hash; True when every step has finished. A failing step stops the figure and prints its log's tail."""
    plan = figure.budgets.get(budget)
    if plan is None:
        echo(f"  {paper.name} {figure.name}: no {budget!r} budget declared (has: {', '.join(figure.budgets)})")
        return False
    state_dir = out / ".reproduce" / paper.name / figure.name / budget
    state_dir.mkdir(parents=True, exist_ok=True)
    done_file = state_dir / "done.json"
    done = json.loads(done_file.read_text()) if done_file.exists() else {}
    for i, step in enumerate(plan.steps):
        argv = step.argv(seeds)
        key = f"{i}:{_digest(root, step, argv, update)}"
        log = state_dir / f"step{i}.log"
        if key in done and not force:
            echo(f"  [{i + 1}/{len(plan.steps)}] done before, skipped: {step.command(seeds)}")
            if progress is not None:
                progress.update(1)
            continue
        echo(f"  [{i + 1}/{len(plan.steps)}] {step.command(seeds)}  (log: {log})")
        t0 = time.perf_counter()
        with open(log, "w") as fh:
            fh.write(f"$ {step.command(seeds)}\n")
            fh.flush()
            rc = subprocess.call(
                [sys.executable, step.script, *argv],
                cwd=root,
                env=_env(out, update, root),
                stdout=fh,
                stderr=subprocess.STDOUT,
            )
        seconds = time.perf_counter() - t0
        if rc != 0:
            tail = "".join(log.read_text().splitlines(keepends=True)[-25:])
            echo(
                f"  step {i + 1} of {paper.name} {figure.name} ({budget}) failed with exit code {rc} after {seconds:.0f} s"
            )
            echo(f"  the end of {log}:\n{tail}")
            return False
        done[key] = {"command": step.command(seeds), "seconds": round(seconds, 1), "finished": time.strftime("%F %T")}
        done_file.write_text(json.dumps(done, indent=1))
        if progress is not None:
            progress.update(1)
    return True


# ---------------------------------------------------------------------------------------------- grading


def overlay(root: Path, out: Path, into: Path) -> Path:
    """A tree of links to the committed results with the re-run's files (every file under <out>/<paper>/)
    in their place: what the graders read as RESULTS (JBO_GRADE_ROOT)."""
    committed = results_root(root)
    for f in committed.rglob("*"):
        if f.is_file() and ".reproduce" not in f.parts:
            dest = into / f.relative_to(committed)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(f.resolve())
    for name in PAPERS:
        fresh = out / name
        if fresh.is_dir() and fresh.resolve() != (committed / name).resolve():
            for f in fresh.rglob("*"):
                if f.is_file():
                    dest = into / name / f.relative_to(fresh)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    if dest.is_symlink() or dest.exists():
                        dest.unlink()
                    dest.symlink_to(f.resolve())
    return into


def grade(root: Path, paper: str, grade_root: Path | None, verdict_out: Path, *, update: bool = False) -> Path:
    """Run experiments/verdicts/run.py for one paper (all papers when paper is None) over grade_root
    (None: the committed files); the tables go under verdict_out/verdicts/ (the committed ones with
    update=True). Returns the folder the tables were written to."""
    env = _env(verdict_out, update, root)
    if grade_root is not None:
        env["JBO_GRADE_ROOT"] = str(grade_root)
    cmd = [sys.executable, "experiments/verdicts/run.py", *([paper] if paper else [])]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"jbo reproduce: grading {paper or 'every paper'} failed:\n{proc.stdout}{proc.stderr}")
    return results_root(root) / "verdicts" if update else verdict_out / "verdicts"


def _verdicts(path: Path) -> list[tuple[str, str, str]]:
    """(claim number, what is graded, verdict) per row of a <paper>_reading.csv (a number may head
    several rows: one per graded statement)."""
    import pandas as pd

    if not path.exists():
        return []
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    return list(zip(table["claim"], table["text"], table["verdict"]))


def compare_verdicts(figure: Figure, graded: Path, committed: list[tuple[str, str, str]], paper: str) -> list[tuple]:
    """(claim, what is graded, verdict now, committed verdict, same?) for each graded row of the
    figure's claims, rows paired by claim number and text."""
    now = {(c, text): v for c, text, v in _verdicts(graded / f"{paper}_reading.csv")}
    before = {(c, text): v for c, text, v in committed}
    keys = [k for k in dict.fromkeys([*now, *before]) if k[0] in figure.claims]
    keys.sort(key=lambda k: figure.claims.index(k[0]))
    rows = []
    for c, text in keys:
        a, b = now.get((c, text), "missing"), before.get((c, text), "missing")
        rows.append((c, text, a, b, a == b))
    return rows


# ------------------------------------------------------------------------------------------------ index


def _minutes(m: float | None) -> str:
    if m is None:
        return "—"
    if m < 1:
        return f"{max(1, round(m * 60))} s"
    if m < 90:
        return f"{m:.0f} min"
    return f"{m / 60:.1f} h"


def result_files(root: Path, paper: str, figure: Figure) -> list[Path]:
    """The committed files of one figure: those under experiments/results/<paper>/<figure>/ matching its
    result patterns (smoke outputs named *_quick*, which git ignores, left out)."""
    folder = results_root(root) / paper / figure.name
    found = set()
    for pattern in figure.results:
        found |= {p for p in folder.glob(pattern) if p.is_file() and "_quick" not in p.name}
    return sorted(found)


def index_text(root: Path, paper: Paper) -> str:
    """The paper's INDEX.md: one section per figure, generated from the declarations."""
    lines = [
        f"<!-- generated by `jbo reproduce --index` from experiments/{paper.name}/figures.py; do not edit -->",
        "",
        f"Every figure and table of {paper.title}, declared in `experiments/{paper.name}/figures.py`; results "
        f"under `experiments/results/{paper.name}/<figure>/`. Times are estimates for the 2-core CPU the "
        "committed results ran on and, where measured, one GPU; `jbo reproduce --list` prints them all.",
        "",
    ]
    for f in paper.figures:
        lines += [f"### {f.name}: {f.title}", ""]
        if f.not_run:
            lines += [f"Not run: {f.not_run}", ""]
            continue
        if f.methods:
            lines.append(f"- methods: {', '.join(f.methods)}")
        if f.problems:
            lines.append(f"- problems: {', '.join(f.problems)}")
        if f.paper_settings:
            lines.append("- from the paper: " + "; ".join(f"{k} = {v}" for k, v in f.paper_settings.items()))
        if f.our_settings:
            lines.append("- ours: " + "; ".join(f"{k} = {v}" for k, v in f.our_settings.items()))
        lines.append(f"- claims graded: {', '.join(f.claims) if f.claims else 'none'}")
        lines += ["", "| budget | command | CPU (2 cores) | one GPU | note |", "|---|---|---|---|---|"]
        for b in BUDGETS:
            if b in f.budgets:
                bud = f.budgets[b]
                cmd = f"`jbo reproduce {paper.name} {f.name}" + ("" if b == "default" else f" --budget {b}") + "`"
                cpu = _minutes(bud.cpu_minutes) if bud.cpu_minutes is not None else "GPU only"
                lines.append(f"| {b} | {cmd} | {cpu} | {_minutes(bud.gpu_minutes)} | {bud.note} |")
        files = result_files(root, paper.name, f)
        shown = ", ".join(f"`{p.name}`" for p in files[:12]) + (
            f" and {len(files) - 12} more" if len(files) > 12 else ""
        )
        lines += ["", f"Results (`experiments/results/{paper.name}/{f.name}/`): {shown or 'none committed'}", ""]
    return "\n".join(lines).rstrip() + "\n"


def index_path(root: Path, paper: str) -> Path:
    return results_root(root) / paper / "INDEX.md"


def write_index(root: Path, names: Sequence[str] | None = None) -> list[Path]:
    written = []
    for p in papers(root, names):
        path = index_path(root, p.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(index_text(root, p))
        written.append(path)
    return written


def stale_indexes(root: Path) -> list[str]:
    """The papers whose committed INDEX.md differs from the one the declarations generate."""
    stale = []
    for p in papers(root):
        path = index_path(root, p.name)
        if not path.exists() or path.read_text() != index_text(root, p):
            stale.append(p.name)
    return stale


# -------------------------------------------------------------------------------------------- listing


def listing(root: Path, names: Sequence[str] | None = None, echo=print) -> None:
    """Every declared figure with its budgets' estimated times (CPU here, one GPU)."""
    for p in papers(root, names):
        echo(f"{p.name}: {p.title} ({len(p.figures)} figures; {p.page})")
        for f in p.figures:
            if f.not_run:
                echo(f"  {f.name:<22} not run: {f.not_run}")
                continue
            times = []
            for b in BUDGETS:
                if b in f.budgets:
                    bud = f.budgets[b]
                    cpu = f"CPU {_minutes(bud.cpu_minutes)}" if bud.cpu_minutes is not None else "GPU only"
                    gpu = f", GPU {_minutes(bud.gpu_minutes)}" if bud.gpu_minutes is not None else ""
                    times.append(f"{b}: {cpu}{gpu}")
            echo(f"  {f.name:<22} {f.title[:60]:<60}  {'; '.join(times)}")


# --------------------------------------------------------------------------------------------- command


def reproduce(
    paper: str,
    figures: Sequence[str] = (),
    *,
    budget: str = "default",
    seeds: int | None = None,
    out: Path | None = None,
    update: bool = False,
    force: bool = False,
    grade_claims: bool = True,
    root: Path | None = None,
    echo=print,
) -> int:
    """Run a paper's figures (all when none are named) at a budget, then grade their claims; 0 when every
    step finished. See the module docstring."""
    from tqdm import tqdm

    if budget not in BUDGETS:
        raise SystemExit(f"jbo reproduce: --budget must be one of {BUDGETS}, got {budget!r}")
    root = root or find_root()
    decl = load_paper(paper, root)
    chosen = [decl.figure(n) for n in figures] if figures else list(decl.figures)
    out = results_root(root) if update else Path(out or default_out()).resolve()
    runnable = [f for f in chosen if budget in f.budgets]
    for f in chosen:
        if f.not_run:
            echo(f"{paper} {f.name}: not run ({f.not_run})")
        elif budget not in f.budgets:
            echo(f"{paper} {f.name}: no {budget} budget (declared: {', '.join(f.budgets)})")
    gpu_only = [f.name for f in runnable if f.budgets[budget].cpu_minutes is None]
    if gpu_only:
        import jax

        if jax.default_backend() == "cpu":
            echo(f"note: {', '.join(gpu_only)} at --budget {budget} are sized for a GPU and this is a CPU")
    total = sum(len(f.budgets[budget].steps) for f in runnable)
    echo(f"jbo reproduce {paper}: {len(runnable)} figures, {total} steps, budget {budget}; results in {out}")
    ok = True
    finished = []
    with tqdm(total=total, unit="step", disable=total == 0, file=sys.stderr) as bar:
        for f in runnable:
            echo(f"{paper} {f.name}: {f.title}")
            if run_figure(root, decl, f, budget, out, seeds=seeds, update=update, force=force, progress=bar, echo=echo):
                finished.append(f)
            else:
                ok = False
    graded = [f for f in finished if f.claims]
    if grade_claims and graded:
        committed = _verdicts(results_root(root) / "verdicts" / f"{paper}_reading.csv")
        echo(f"grading {paper}'s claims of {', '.join(f.name for f in graded)} (experiments/verdicts/{paper}.py)")
        with tempfile.TemporaryDirectory() as tmp:
            tree = None if update else overlay(root, out, Path(tmp) / "results")
            tables = grade(root, paper, tree, Path(tmp) / "graded", update=update)
            for f in graded:
                for claim, text, now, before, same in compare_verdicts(f, tables, committed, paper):
                    said = "same as committed" if same else f"committed: {before}"
                    echo(f"  {f.name} claim {claim}: {now}  ({said}) {text[:70]}")
            if not update:
                keep = out / ".reproduce" / paper / "verdicts"
                shutil.rmtree(keep, ignore_errors=True)
                shutil.copytree(tables, keep)
                echo(f"  the verdict tables of this run: {keep}")
    return 0 if ok else 1


def same_to_rounding(a: Path, b: Path, rtol: float = 1e-12) -> bool:
    """Two per-comparison tables with the same rows and text whose numbers agree to rtol, relative or
    absolute (the last bits of a bootstrap interval or a median move with the BLAS and NumPy build; an
    interval's end near 0 is a difference of nearly equal numbers)."""
    import numpy as np
    import pandas as pd

    x, y = pd.read_csv(a), pd.read_csv(b)
    if list(x.columns) != list(y.columns) or x.shape != y.shape:
        return False
    for col in x.columns:
        u, v = x[col], y[col]
        if pd.api.types.is_float_dtype(u) and pd.api.types.is_float_dtype(v):
            if not np.allclose(u.to_numpy(), v.to_numpy(), rtol=rtol, atol=rtol, equal_nan=True):
                return False
        elif not u.astype(str).equals(v.astype(str)):
            return False
    return True


def regrade(root: Path | None = None, echo=print) -> int:
    """Grade all five papers from the committed files into a scratch folder and compare the tables with
    the committed ones: the verdicts (<paper>_reading.csv), the pages' tables (<paper>.md) and
    reading.md byte for byte, the per-comparison statistics (<paper>.csv) byte for byte or, where a
    last bit moved with the numerical libraries, to 1e-12 (said so); 0 when they agree."""
    root = root or find_root()
    committed = results_root(root) / "verdicts"
    differ, rounding = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tables = grade(root, None, None, Path(tmp))
        for f in sorted(committed.iterdir()):
            if f.suffix not in (".csv", ".md"):
                continue
            new = tables / f.name
            if new.exists() and new.read_bytes() == f.read_bytes():
                continue
            stats = f.suffix == ".csv" and not f.stem.endswith("_reading")
            if new.exists() and stats and same_to_rounding(new, f):
                rounding.append(f.name)
            else:
                differ.append(f.name)
    if differ:
        echo(f"the verdict tables re-run from the committed files differ from the committed ones: {', '.join(differ)}")
        return 1
    extra = f"; {', '.join(rounding)} equal to 1e-12, not to the last bit" if rounding else ""
    echo(f"the verdict tables re-run from the committed files equal the committed ones ({committed}){extra}")
    return 0
