"""jbo reproduce: the machinery on a toy paper in a scratch repository (a step writes into --out, a
finished step is skipped after a kill, an edited script runs again, a failing step is reported with its
log and not recorded, --update writes the committed files, grading reads the committed tree with the
re-run's files in their place), and the repository's own declarations: every paper is declared, every
committed result file of a paper is in one of its figures' folders, each index is fresh and included in
its page, every result path the docs name exists, and the paper pages' commands are `jbo reproduce`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jbo import cli
from jbo import reproduce as rep

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------------------------- a toy repository

TOY_FIGURES = """
from jbo.reproduce import Budget, Figure, Paper, Step

S = "experiments/boke/write.py"
PAPER = Paper(
    name="boke",
    title="a toy paper",
    page="docs/papers/toy.md",
    figures=(
        Figure(
            name="fig1",
            title="Fig 1: two steps",
            methods=("a", "b"),
            claims=("1",),
            budgets={
                "smoke": Budget((Step(S, ("fig1", "x.txt", "--seeds", "2"), seeds="--seeds"),), cpu_minutes=0.1),
                "default": Budget(
                    (Step(S, ("fig1", "x.txt", "--seeds", "5"), seeds="--seeds"), Step(S, ("fig1", "y.txt"))),
                    cpu_minutes=1,
                ),
                "paper": Budget((Step(S, ("fig1", "x.txt", "--seeds", "50"), seeds="--seeds"),), gpu_minutes=2),
            },
        ),
        Figure(name="fail", title="a failing step", budgets={
            "smoke": Budget((Step("experiments/boke/fail.py"),), cpu_minutes=0.1),
            "default": Budget((Step("experiments/boke/fail.py"),), cpu_minutes=0.1),
        }),
        Figure(name="cartoon", title="Fig 2: a drawing", not_run="nothing to compute"),
    ),
)
"""

# writes <root>/boke/<figure>/<file> with the seed count, and counts its runs in <root>/runs.txt
TOY_WRITE = """
import os, sys
from pathlib import Path
figure, name = sys.argv[1], sys.argv[2]
seeds = sys.argv[sys.argv.index("--seeds") + 1] if "--seeds" in sys.argv else "0"
root = Path("experiments/results") if os.environ.get("JBO_UPDATE_RESULTS") == "1" else Path(os.environ["JBO_SCRATCH"])
(root / "boke" / figure).mkdir(parents=True, exist_ok=True)
(root / "boke" / figure / name).write_text(seeds)
with open(root / "runs.txt", "a") as f:
    f.write(f"{figure}/{name}\\n")
"""

# grades claim 1: holds when x.txt (read from RESULTS) names at least 5 seeds
TOY_GRADER = """
import os
from pathlib import Path
results = Path(os.environ.get("JBO_GRADE_ROOT") or "experiments/results")
update = os.environ.get("JBO_UPDATE_RESULTS") == "1"
out = (Path("experiments/results") if update else Path(os.environ["JBO_SCRATCH"])) / "verdicts"
out.mkdir(parents=True, exist_ok=True)
seeds = int((results / "boke" / "fig1" / "x.txt").read_text())
v = "holds" if seeds >= 5 else "not testable"
(out / "boke_reading.csv").write_text(f"claim,text,verdict,verdict_lenient\\n1,toy,{v},{v}\\n")
"""


@pytest.fixture
def toy(tmp_path):
    root = tmp_path / "repo"
    (root / "experiments" / "boke").mkdir(parents=True)
    (root / "experiments" / "verdicts").mkdir()
    (root / "experiments" / "boke" / "figures.py").write_text(TOY_FIGURES)
    (root / "experiments" / "boke" / "write.py").write_text(TOY_WRITE)
    (root / "experiments" / "boke" / "fail.py").write_text("import sys\nprint('the toy step fails')\nsys.exit(3)\n")
    (root / "experiments" / "verdicts" / "run.py").write_text(TOY_GRADER)
    committed = root / "experiments" / "results"
    (committed / "boke" / "fig1").mkdir(parents=True)
    (committed / "boke" / "fig1" / "x.txt").write_text("5")
    (committed / "verdicts").mkdir()
    (committed / "verdicts" / "boke_reading.csv").write_text("claim,text,verdict,verdict_lenient\n1,toy,holds,holds\n")
    return root


def _runs(out: Path) -> list[str]:
    path = out / "runs.txt"
    return path.read_text().split() if path.exists() else []


def test_a_step_writes_into_out_and_a_finished_step_is_skipped(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert rep.reproduce("boke", ["fig1"], budget="smoke", out=out, root=toy) == 0
    assert (out / "boke" / "fig1" / "x.txt").read_text() == "2"
    assert (toy / "experiments" / "results" / "boke" / "fig1" / "x.txt").read_text() == "5"  # committed untouched
    assert _runs(out) == ["fig1/x.txt"]
    printed = capsys.readouterr().out
    # graded over the committed tree with the re-run's x.txt (2 seeds) in its place
    assert "fig1 claim 1: not testable  (committed: holds) toy" in printed
    assert rep.reproduce("boke", ["fig1"], budget="smoke", out=out, root=toy) == 0  # the same command again
    assert _runs(out) == ["fig1/x.txt"] and "done before, skipped" in capsys.readouterr().out
    assert rep.reproduce("boke", ["fig1"], budget="smoke", out=out, root=toy, force=True) == 0
    assert _runs(out) == ["fig1/x.txt"] * 2


def test_a_killed_run_resumes_at_the_unfinished_step_and_an_edited_script_runs_again(toy, tmp_path):
    out = tmp_path / "out"
    plan = rep.load_paper("boke", toy).figure("fig1").budgets["default"]
    # the first step finished, then the run was killed: its record is there, the second's is not
    assert rep.run_figure(toy, rep.load_paper("boke", toy), rep.load_paper("boke", toy).figure("fig1"), "default", out)
    done = out / ".reproduce" / "boke" / "fig1" / "default" / "done.json"
    kept = {k: v for k, v in json.loads(done.read_text()).items() if k.startswith("0:")}
    done.write_text(json.dumps(kept))
    assert rep.reproduce("boke", ["fig1"], out=out, root=toy, grade_claims=False) == 0
    assert _runs(out) == ["fig1/x.txt", "fig1/y.txt", "fig1/y.txt"]
    assert len(plan.steps) == 2
    script = toy / "experiments" / "boke" / "write.py"
    script.write_text(script.read_text() + "\n# edited\n")
    assert rep.reproduce("boke", ["fig1"], out=out, root=toy, grade_claims=False) == 0
    assert _runs(out)[3:] == ["fig1/x.txt", "fig1/y.txt"]


def test_seeds_replace_the_budget_s_seed_count(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert rep.reproduce("boke", ["fig1"], out=out, root=toy, seeds=7) == 0
    assert (out / "boke" / "fig1" / "x.txt").read_text() == "7"
    assert "fig1 claim 1: holds  (same as committed) toy" in capsys.readouterr().out
    step = rep.Step("experiments/boke/write.py", ("a", "--seeds", "3"), seeds="--seeds")
    assert step.argv(9) == ["a", "--seeds", "9"] and step.argv() == ["a", "--seeds", "3"]
    assert rep.Step("s.py", ("a",), seeds="--n").argv(4) == ["a", "--n", "4"]
    assert rep.Step("s.py", ("a",)).argv(4) == ["a"]  # a step without a seed flag keeps its arguments


def test_a_failing_step_is_reported_with_its_log_and_not_recorded(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert rep.reproduce("boke", ["fail"], budget="smoke", out=out, root=toy) == 1
    printed = capsys.readouterr().out
    assert "failed with exit code 3" in printed and "the toy step fails" in printed
    done = out / ".reproduce" / "boke" / "fail" / "smoke" / "done.json"
    assert not done.exists() or done.read_text().strip() in ("", "{}")
    assert rep.reproduce("boke", ["fail"], budget="smoke", out=out, root=toy) == 1  # runs again, fails again
    assert capsys.readouterr().out.count("failed with exit code 3") == 1


def test_update_writes_the_committed_files_and_their_verdicts(toy, tmp_path):
    assert rep.reproduce("boke", ["fig1"], budget="smoke", update=True, root=toy) == 0
    committed = toy / "experiments" / "results"
    assert (committed / "boke" / "fig1" / "x.txt").read_text() == "2"
    assert "not testable" in (committed / "verdicts" / "boke_reading.csv").read_text()


def test_listing_index_and_errors_name_what_is_wrong(toy, tmp_path, capsys):
    assert cli.main(["reproduce", "--list", "--root", str(toy)]) == 0
    printed = capsys.readouterr().out
    assert "fig1" in printed and "smoke: CPU 6 s" in printed and "paper: GPU only, GPU 2 min" in printed
    assert "cartoon" in printed and "not run: nothing to compute" in printed
    assert rep.stale_indexes(toy) == ["boke"]
    rep.write_index(toy)
    assert rep.stale_indexes(toy) == []
    index = (toy / "experiments" / "results" / "boke" / "INDEX.md").read_text()
    assert "`jbo reproduce boke fig1 --budget smoke`" in index and "`x.txt`" in index and "claims graded: 1" in index
    with pytest.raises(SystemExit, match="has no figure 'fig9'"):
        rep.reproduce("boke", ["fig9"], root=toy)
    with pytest.raises(SystemExit, match="paper 'ucvs' is not declared"):
        rep.reproduce("ucvs", root=toy)
    with pytest.raises(ValueError, match="declare the smoke and default budgets"):
        rep.Figure(name="f", title="t", budgets={"default": rep.Budget((rep.Step("a.py"),), cpu_minutes=1)})
    with pytest.raises(ValueError, match="give cpu_minutes, gpu_minutes or both"):
        rep.Budget((rep.Step("a.py"),))
    with pytest.raises(ValueError, match="is not a Python file"):
        rep.Step("a.sh")
    with pytest.raises(ValueError, match="declared twice"):
        rep.Paper("boke", "t", "p", (rep.Figure(name="a", title="", not_run="x"),) * 2)


# --------------------------------------------------------------------------------- this repository


def _declared():
    return {p.name: p for p in rep.papers(ROOT)}


def test_every_paper_is_declared_with_runnable_budgets():
    declared = _declared()
    assert sorted(declared) == sorted(rep.PAPERS)
    for paper in declared.values():
        assert (ROOT / paper.page).exists(), paper.page
        for f in paper.figures:
            for budget in f.budgets.values():
                for step in budget.steps:
                    assert (ROOT / step.script).exists(), f"{paper.name} {f.name}: {step.script} is missing"
                    assert step.script.startswith(f"experiments/{paper.name}/"), (paper.name, f.name, step.script)


def test_every_graded_claim_is_named_by_a_figure():
    import importlib.util
    import sys

    sys.path.insert(0, str(ROOT / "experiments" / "verdicts"))
    try:
        for name, paper in _declared().items():
            table = ROOT / "experiments" / "results" / "verdicts" / f"{name}_reading.csv"
            graded = {line.split(",", 1)[0] for line in table.read_text().splitlines()[1:]}
            named = {c for f in paper.figures for c in f.claims}
            assert graded <= named, f"{name}: claims no figure names: {sorted(graded - named)}"
            assert importlib.util.find_spec(name) is not None
    finally:
        sys.path.remove(str(ROOT / "experiments" / "verdicts"))


def test_every_committed_result_file_is_in_a_figure_folder():
    results = ROOT / "experiments" / "results"
    for name, paper in _declared().items():
        folder = results / name
        owned = {p for f in paper.figures for p in rep.result_files(ROOT, name, f)}
        files = {p for p in folder.rglob("*") if p.is_file() and "_quick" not in p.name} - {folder / "INDEX.md"}
        stray = sorted(str(p.relative_to(results)) for p in files - owned)
        assert not stray, f"{name}: committed files in no figure's folder: {stray[:10]}"
        folders = {p.name for p in folder.iterdir() if p.is_dir()}
        assert folders <= {f.name for f in paper.figures}, f"{name}: folders no figure declares: {folders}"


def test_each_index_is_fresh_and_included_in_its_page():
    assert rep.stale_indexes(ROOT) == [], "run `jbo reproduce --index`"
    for name, paper in _declared().items():
        page = (ROOT / paper.page).read_text()
        assert f'--8<-- "experiments/results/{name}/INDEX.md"' in page, paper.page


def test_paper_pages_run_figures_through_jbo_reproduce():
    for paper in _declared().values():
        page = (ROOT / paper.page).read_text()
        commands = re.findall(r"python3? experiments/\S+", page)
        assert not commands, f"{paper.page} runs scripts directly: {commands[:3]}"
        assert "## Reproduce" in page and "jbo reproduce" in page


PATH = re.compile(r"experiments/results/[A-Za-z0-9_.\-/]+")


def test_every_result_path_the_docs_name_exists():
    pages = [*ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md", ROOT / "experiments" / "README.md"]
    pages += list((ROOT / "experiments" / "results").glob("*/INDEX.md"))
    missing = []
    for page in pages:
        text = page.read_text()
        for m in PATH.finditer(text):
            path = m.group(0).rstrip(".,;:)")
            end = text[m.end() : m.end() + 1]
            if end in "<*{[" and end:  # a pattern (experiments/results/<paper>/...), not a path
                continue
            if not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert not missing, "\n".join(missing[:20])


def test_cli_names_a_missing_paper_and_bad_combinations(capsys):
    assert cli.main(["reproduce"]) == 2
    assert "name a paper" in capsys.readouterr().err
    assert cli.main(["reproduce", "--all", "fig1"]) == 2
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "boke", "--budget", "huge"])


def test_statistics_tables_agree_to_rounding_but_not_beyond(tmp_path):
    a, b, c, d = (tmp_path / f"{n}.csv" for n in "abcd")
    a.write_text("claim,comparison,p_value,holds\n1,x vs y,0.0123,True\n2,x vs z,0.5,False\n")
    b.write_text("claim,comparison,p_value,holds\n1,x vs y,0.012300000000000002,True\n2,x vs z,0.5,False\n")
    c.write_text("claim,comparison,p_value,holds\n1,x vs y,0.0124,True\n2,x vs z,0.5,False\n")
    d.write_text("claim,comparison,p_value,holds\n1,x vs y,0.0123,True\n2,x vs z,0.5,True\n")
    assert rep.same_to_rounding(a, b)  # one ulp
    assert not rep.same_to_rounding(a, c)  # a different p-value
    assert not rep.same_to_rounding(a, d)  # a different outcome
