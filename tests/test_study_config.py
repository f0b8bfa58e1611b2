"""Studies from a config file (jbo.study_config, `jbo study`) and the persistent compilation cache (jbo.cache).

The kill/resume test runs the CLI in separate processes (the point is a process killed with SIGKILL);
the same subprocesses check the cache across processes. Everything else is parsing, no compilation.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jbo
import jbo.study_config
from jbo.engine import replace_params

ROOT = Path(__file__).resolve().parents[1]

TINY = """
name = "tiny"
seeds = 2
seed = 3
[methods.random_search]
options = { num_initial = 2 }
[problems.forrester]
steps = [3, 4, 5]
noise_std = 0.1
"""


def _cli(args, env_extra, **kw):
    env = {**os.environ, **env_extra}
    return subprocess.Popen(
        [sys.executable, "-m", "jbo", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _files(d: Path) -> set:
    return {str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()}


def test_kill_resume_equals_uninterrupted_and_cache_is_hit_across_processes(tmp_path):
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY)
    cache = tmp_path / "jax_cache"
    with_cache = {"JBO_CACHE": "1", "JBO_CACHE_DIR": str(cache)}

    # A: the uninterrupted run, in a fresh process with an empty cache directory
    a = _cli(["study", str(cfg), "--out", str(tmp_path / "a"), "--quiet"], with_cache)
    out, err = a.communicate(timeout=300)
    assert a.returncode == 0, err
    full = pd.read_csv(tmp_path / "a" / "table.csv")
    entries = _files(cache)
    assert entries, "the AOT-compiled cells (jbo.studies.compile_seeds) were not written to the cache"

    # B: the same study killed with SIGKILL as soon as its first cell lands (no cache: every cell compiles)
    b_out = tmp_path / "b"
    b = _cli(["study", str(cfg), "--out", str(b_out), "--quiet"], {"JBO_CACHE": "0"})
    first, t0 = b_out / "cells" / "0000.csv", time.monotonic()
    while not first.exists():
        assert b.poll() is None, b.communicate()[1]
        assert time.monotonic() - t0 < 300
        time.sleep(0.005)
    b.send_signal(signal.SIGKILL)
    b.wait(timeout=60)
    landed = sorted(p.name for p in (b_out / "cells").glob("*.csv"))
    assert 1 <= len(landed) < 3, landed  # interrupted mid-study
    assert not (b_out / "table.csv").exists()
    timing = list(jbo.study_config.TIMING_COLUMNS)
    for name in landed:  # whole files only, equal to the uninterrupted run's rows of that cell
        part = pd.read_csv(b_out / "cells" / name).drop(columns=timing)
        want = full[full["cell"] == part["cell"][0]].drop(columns=timing).reset_index(drop=True)
        pd.testing.assert_frame_equal(part, want, check_exact=True)
    before = {n: (b_out / "cells" / n).stat().st_mtime_ns for n in landed}

    # C: the same command resumes (with A's cache): skips finished cells, runs the rest
    c = _cli(["study", str(cfg), "--out", str(b_out)], with_cache)
    out, err = c.communicate(timeout=300)
    assert c.returncode == 0, err
    assert f"{len(landed)} of 3 cells already finished" in err
    assert {n: (b_out / "cells" / n).stat().st_mtime_ns for n in landed} == before  # not re-run
    resumed = pd.read_csv(b_out / "table.csv")
    pd.testing.assert_frame_equal(resumed.drop(columns=timing), full.drop(columns=timing), check_exact=True)
    assert list(full.columns[:4]) == ["method", "problem", "seed", "step"]
    assert {"simple_regret", "compile_s", "run_s", "cell", "num_steps", "budget"} <= set(full.columns)
    assert len(full) == 2 * (3 + 4 + 5)
    # C's programs were all found in A's cache: JAX writes an entry for every miss (jbo sets the
    # thresholds to 0), and no entry was added
    assert _files(cache) == entries
    assert "forrester[T=5]" in out  # the summary printed by the CLI

    # a different config is refused in that directory, naming the problem; --fresh clears it
    other = TINY.replace("seeds = 2", "seeds = 3")
    with pytest.raises(ValueError, match="different config"):
        jbo.study_config.run(other, b_out, progress=False)
    assert (b_out / "table.csv").exists()
    assert jbo.study_config.prepare_output(b_out, jbo.study_config.parse(other), None, fresh=True) == set()
    assert not any((b_out / "cells").iterdir()) and not (b_out / "table.csv").exists()


def _fake_table(method, problem, num_seeds, num_steps, key=0):
    """A complete cell table as run_study builds it (one row per seed and step), with values that
    depend on the key, the labels, the seed and the step, so any edit of a row is visible."""
    seed, step = np.meshgrid(np.arange(num_seeds), np.arange(1, num_steps + 1), indexing="ij")
    rng = np.random.default_rng([key, len(method), len(problem), num_steps])
    return pd.DataFrame(
        {
            "method": method,
            "problem": problem,
            "seed": seed.ravel(),
            "step": step.ravel(),
            "simple_regret": rng.random(seed.size),
            "compile_s": 1.0,
            "run_s": 1.0,
        }
    )


def test_tables_match_run_study_columns_and_params_reach_the_run(monkeypatch, tmp_path):
    """The plumbing, without compiling: each cell calls jbo.studies.run_study on one pair with the cell's
    Params (built by replace_params), seeds and budget; labels and columns as documented."""
    calls = []

    def fake_run_study(
        methods,
        problems,
        key,
        num_steps,
        num_seeds,
        progress=True,
        params=None,
        budget=None,
        free_initial=False,
        bitwise=False,
    ):
        (m, _), (p, _) = next(iter(methods.items())), next(iter(problems.items()))
        calls.append(
            dict(
                m=m,
                p=p,
                seeds=num_seeds,
                steps=num_steps,
                key=key,
                budget=budget,
                params=None if params is None else params(m, p),
                free_initial=free_initial,
                bitwise=bitwise,
            )
        )
        return _fake_table(m, p, num_seeds, num_steps)

    monkeypatch.setattr(jbo.studies, "run_study", fake_run_study)
    cfg = """
seeds = 4
seed = 7
budget = [5.0, 9.0]
free_initial = true
bitwise = true
[methods.ucb]
name = "gp_ucb"
options = { num_initial = 3 }
params = { beta = [0.5, 2], lengthscale = 0.3 }
[methods.random_search]
[problems.b]
name = "branin"
steps = [6, 8]
"""
    table = jbo.study_config.run(cfg, tmp_path / "s", progress=False)
    study = jbo.study_config.parse(cfg)
    assert len(study.cells) == len(calls) == 2 * 2 * (2 + 1)
    defaults = jbo.algorithms.get("gp_ucb", num_initial=3).default_params()
    ucb = [c for c in calls if c["m"].startswith("ucb")]
    assert [c["m"] for c in ucb[:2]] == ["ucb[beta=0.5]", "ucb[beta=2]"]
    for c, beta in zip(ucb, [0.5, 2.0] * 4):
        want = replace_params(defaults, beta=beta, lengthscale=0.3)
        assert c["params"] == want and type(c["params"].acquisition.beta) is float
    assert [c["params"] for c in calls if c["m"] == "random_search"] == [None] * 4
    assert {c["p"] for c in calls} == {"b[T=6,budget=5]", "b[T=6,budget=9]", "b[T=8,budget=5]", "b[T=8,budget=9]"}
    assert all(c["seeds"] == 4 and c["key"] == 7 and c["free_initial"] and c["bitwise"] is True for c in calls)
    assert sorted({(c["steps"], c["budget"]) for c in calls}) == [(6, 5.0), (6, 9.0), (8, 5.0), (8, 9.0)]
    assert list(table.columns) == [
        "method",
        "problem",
        "seed",
        "step",
        "simple_regret",
        "compile_s",
        "run_s",
        "cell",
        "num_steps",
        "budget",
        "param_beta",
        "param_lengthscale",
    ]
    row = table[table["method"] == "ucb[beta=2]"].iloc[0]
    assert (row["param_beta"], row["param_lengthscale"], row["cell"]) == (
        2,
        0.3,
        "b|T=6|budget=5|ucb|beta=2,lengthscale=0.3",
    )
    assert table[table["method"] == "random_search"]["param_beta"].isna().all()
    summ = pd.read_csv(tmp_path / "s" / "summary.csv")
    assert len(summ) == len(study.cells)  # one summary row per cell
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["config_hash"] == study.hash and len(manifest["cells"]) == 12
    # the hash is of the normalised config: layout, comments and spelled-out defaults do not change it
    assert jbo.study_config.parse("# a comment\nseed = 7\n" + cfg.replace("seed = 7\n", "") + "\n").hash == study.hash
    assert jbo.study_config.parse(cfg.replace("free_initial = true", "")).hash != study.hash
    # bitwise = false is the default spelled out (the hash of a config without the key is unchanged)
    assert (
        jbo.study_config.parse(cfg.replace("bitwise = true", "bitwise = false")).hash
        == jbo.study_config.parse(cfg.replace("bitwise = true", "")).hash
        != study.hash
    )


def test_parsed_settings_and_shapes():
    st = jbo.study_config.parse(
        {"seeds": 1, "steps": 5, "methods": {"g": {"name": "gp_ucb", "params": {"beta": 3}}}, "problems": ["branin"]}
    )
    (cell,) = st.cells
    assert cell.method == "g" and cell.problem == "branin" and cell.id == "branin|T=5|g|beta=3"
    assert cell.params_object.acquisition.beta == 3.0 and isinstance(cell.params_object.acquisition.beta, float)


BAD = [
    (
        {"seeds": 2, "steps": 5, "methods": ["random_search"], "problems": ["branin"], "seeds_": 1},
        r"top level: unknown key\(s\) \['seeds_'\]; allowed keys: \['name', 'imports', 'seeds'",
    ),
    ({"steps": 5, "methods": ["random_search"], "problems": ["branin"]}, r"seeds: missing"),
    (
        {"seeds": 0, "steps": 5, "methods": ["random_search"], "problems": ["branin"]},
        r"seeds: must be a positive int, got 0",
    ),
    (
        {"seeds": "4", "steps": 5, "methods": ["random_search"], "problems": ["branin"]},
        r"seeds: must be a positive int, got '4'",
    ),
    (
        {"seeds": 2, "steps": [5, -1], "methods": ["random_search"], "problems": ["branin"]},
        r"steps: must be a positive int or a non-empty list of positive ints, got \[5, -1\]",
    ),
    (
        {"seeds": 2, "steps": 5.5, "methods": ["random_search"], "problems": ["branin"]},
        r"steps: must be a positive int",
    ),
    ({"seeds": 2, "methods": ["random_search"], "problems": ["branin"]}, r"steps: missing"),
    (
        {"seeds": 2, "steps": 5, "methods": ["gp_ucbb"], "problems": ["branin"]},
        r"methods.gp_ucbb.name: unknown algorithm 'gp_ucbb'; registered algorithms: \[.*'gp_ucb'",
    ),
    (
        {"seeds": 2, "steps": 5, "methods": ["random_search"], "problems": {"p": {"name": "braninn"}}},
        r"problems.p.name: unknown problem 'braninn'; registered problems: \[.*'branin'",
    ),
    (
        {
            "seeds": 2,
            "steps": 5,
            "methods": {"u": {"name": "gp_ucb", "params": {"betta": [1, 2]}}},
            "problems": ["branin"],
        },
        r"methods.u.params.betta: unknown Params field for algorithm 'gp_ucb'; allowed fields: \[.*'beta'.*'lengthscale'",
    ),
    (
        {
            "seeds": 2,
            "steps": 5,
            "methods": {"r": {"params": {"beta": 1.0}, "name": "random_search"}},
            "problems": ["branin"],
        },
        r"methods.r.params.beta: unknown Params field .* allowed fields: none",
    ),
    (
        {
            "seeds": 2,
            "steps": 5,
            "methods": {"u": {"name": "gp_ucb", "params": {"beta": "big"}}},
            "problems": ["branin"],
        },
        r"methods.u.params.beta: must be a number",
    ),
    (
        {"seeds": 2, "steps": 5, "methods": {"u": {"name": "gp_ucb", "params": {"beta": []}}}, "problems": ["branin"]},
        r"methods.u.params.beta: an empty list of settings",
    ),
    (
        {
            "seeds": 2,
            "steps": 5,
            "methods": {"u": {"name": "gp_ucb", "params": {"beta": [[1.0]]}}},
            "problems": ["branin"],
        },
        r"methods.u.params.beta: must have shape \(\) \(the default's\), got \[\[1.0\]\]",
    ),
    (
        {"seeds": 2, "steps": 5, "methods": {"u": {"name": "gp_ucb", "option": {}}}, "problems": ["branin"]},
        r"methods.u: unknown key\(s\) \['option'\]; allowed keys: \['name', 'options', 'params'\]",
    ),
    (
        {
            "seeds": 2,
            "steps": 5,
            "methods": {"u": {"name": "gp_ucb", "options": {"fitt": "map"}}},
            "problems": ["branin"],
        },
        r"methods.u.options: bad options .*fitt",
    ),
    (
        {"seeds": 2, "steps": 5, "methods": ["random_search"], "problems": {"b": {"name": "branin", "noise_std": -1}}},
        r"problems.b.noise_std: must be a number >= 0, got -1",
    ),
    (
        {"seeds": 2, "steps": 5, "methods": ["random_search"], "problems": ["branin"], "budget": 0},
        r"budget: must be a positive finite number",
    ),
    (
        {
            "seeds": 2,
            "steps": 3,
            "methods": {"u": {"name": "gp_ucb", "options": {"num_initial": 4}}},
            "problems": ["branin"],
        },
        r"steps: 3 is smaller than the initial design of method 'u' \(num_initial=4\)",
    ),
    ({"seeds": 2, "steps": 5, "methods": [], "problems": ["branin"]}, r"methods: must be a non-empty list"),
    (
        {"seeds": 2, "steps": 5, "methods": ["random_search"], "problems": ["branin"], "free_initial": 1},
        r"free_initial: must be true or false",
    ),
    (
        {"seeds": 2, "steps": 5, "methods": ["random_search"], "problems": ["branin"], "bitwise": "yes"},
        r"bitwise: must be true or false, got 'yes'",
    ),
]


@pytest.mark.parametrize("config, message", BAD, ids=[m.split(":")[0][:30] for _, m in BAD])
def test_bad_config_names_the_field_and_allowed_values(config, message):
    with pytest.raises(ValueError, match=message):
        jbo.study_config.parse(config)


def test_bad_toml_and_cli_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match="not valid TOML"):
        jbo.study_config.parse("seeds = = 2\n")
    with pytest.raises(ValueError, match="no such file"):
        jbo.study_config.parse(str(tmp_path / "missing.toml"))
    (tmp_path / "s.yaml").write_text("seeds: 2\n")
    with pytest.raises(ValueError, match="is YAML; jbo reads TOML"):
        jbo.study_config.parse(str(tmp_path / "s.yaml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("seeds = 2\nsteps = 5\nmethods = ['random_search']\nproblems = ['branin']\nbudgett = 3\n")
    from jbo.cli import main

    assert main(["study", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "unknown key(s) ['budgett']" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # nothing written for a bad config
    good = tmp_path / "good.toml"
    good.write_text(TINY)
    assert main(["study", str(good), "--check"]) == 0
    assert "3 cells x 2 seeds" in capsys.readouterr().out


def test_example_configs_parse():
    for path in sorted((ROOT / "experiments" / "studies").glob("*.toml")):
        study = jbo.study_config.parse(path)
        assert study.cells, path


def test_atomic_write_leaves_whole_file_or_none(tmp_path):
    target = tmp_path / "x.csv"

    def boom(p):
        p.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        jbo.study_config.write_atomic(target, boom)
    assert not target.exists()
    jbo.study_config.write_atomic(target, lambda p: p.write_text("whole"))
    assert target.read_text() == "whole"


def test_cache_settings_from_the_environment(tmp_path, monkeypatch):
    from jbo import cache

    assert cache.resolve({"JBO_CACHE": "0"}) is None and cache.resolve({"JBO_CACHE": "off"}) is None
    assert cache.resolve({"XDG_CACHE_HOME": "/x"}) == Path("/x/jbo/jax")
    assert cache.resolve({"HOME": "/h"}) == Path.home() / ".cache" / "jbo" / "jax"
    assert cache.resolve({"JBO_CACHE": "yes", "JBO_CACHE_DIR": str(tmp_path), "XDG_CACHE_HOME": "/x"}) == tmp_path
    with pytest.raises(ValueError, match=r"JBO_CACHE='maybe' is not understood; use one of \('1', 'on'"):
        cache.resolve({"JBO_CACHE": "maybe"})
    # without a mapping, the process environment, whatever the caller exported
    monkeypatch.setenv("JBO_CACHE", "1")
    monkeypatch.setenv("JBO_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.resolve() == tmp_path / "mine"
    monkeypatch.setenv("JBO_CACHE", "off")
    assert cache.resolve() is None
    monkeypatch.delenv("JBO_CACHE")
    assert cache.resolve() == tmp_path / "mine"  # on by default
    # the suite never uses a user's cache: only its own, emptied at the end (tests/conftest.py)
    assert cache.directory() == Path(os.environ["JBO_SUITE_CACHE_DIR"]).resolve()
    with pytest.raises(ValueError, match="min_compile_time_secs"):
        cache.enable(tmp_path, min_compile_time_secs=-1)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a").write_bytes(b"12")
    (tmp_path / "b").write_bytes(b"345")
    assert cache.usage(tmp_path) == {"directory": str(tmp_path), "entries": 2, "bytes": 5}
    assert cache.clear(tmp_path) == 2 and cache.usage(tmp_path)["entries"] == 0 and tmp_path.exists()


def test_cache_repair_removes_truncated_entries(tmp_path):
    from jax._src import compilation_cache as cc

    from jbo import cache

    whole = cc.compress_executable(b"an executable" * 100)
    (tmp_path / "jit_a-1-cache").write_bytes(whole)
    (tmp_path / "jit_b-2-cache").write_bytes(whole[: len(whole) // 2])  # a write cut by a kill
    assert cache.repair(tmp_path) == ["jit_b-2-cache"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jit_a-1-cache"]


# ------------------------------------------------------------------ verified cell files
SMALL = """
name = "small"
seeds = 2
seed = 5
steps = [6, 8]
methods = ["random_search", "gp_ucb"]
problems = ["forrester"]
"""


@pytest.fixture
def fake_cells(monkeypatch):
    """run_study replaced by _fake_table (no compilation); returns the list of cells it was asked for."""
    calls = []

    def fake_run_study(methods, problems, key, num_steps, num_seeds, **kw):
        (m, _), (p, _) = next(iter(methods.items())), next(iter(problems.items()))
        calls.append(m)
        return _fake_table(m, p, num_seeds, num_steps, key)

    monkeypatch.setattr(jbo.studies, "run_study", fake_run_study)
    return calls


def _truncate(path):
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * 0.8)])


def _header_only(path):
    path.write_text(path.read_text().splitlines()[0] + "\n")


def _stray_row(path):
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[-1].replace("gp_ucb", "bogus").replace("random_search", "bogus")]) + "\n")


def _edit_one_value(path):  # the table still has the right shape and labels: only the checksum sees it
    lines = path.read_text().splitlines()
    fields = lines[2].split(",")
    fields[4] = repr(float(fields[4]) + 0.25)
    path.write_text("\n".join(lines[:2] + [",".join(fields)] + lines[3:]) + "\n")


DAMAGE = {
    "truncated": (_truncate, "sha256"),
    "header only": (_header_only, "sha256"),
    "stray row": (_stray_row, "sha256"),
    "random bytes": (lambda p: p.write_bytes(np.random.default_rng(0).bytes(400)), "sha256"),
    "empty": (lambda p: p.write_bytes(b""), "sha256"),
    "one value edited": (_edit_one_value, "sha256"),
    "deleted": (lambda p: p.unlink(), "the file is missing"),
    "another cell's file": (lambda p: p.write_bytes((p.parent / "0000.csv").read_bytes()), "sha256"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cell_is_named_refused_and_run_again(damage, fake_cells, tmp_path, capsys):
    out = tmp_path / "s"
    whole = jbo.study_config.run(SMALL, out, progress=False)
    assert len(whole) == 2 * (6 + 8) * 2 and len(fake_cells) == 4
    cell = out / "cells" / "0001.csv"
    hurt, reason = DAMAGE[damage]
    hurt(cell)
    # combine refuses, naming the file and why
    with pytest.raises(jbo.study_config.StudyDataError, match=reason) as err:
        jbo.study_config.combine(out, jbo.study_config.parse(SMALL))
    assert str(cell) in str(err.value) and "runs these cells again" in str(err.value)
    # --verify names it and exits 1
    cfg = tmp_path / "small.toml"
    cfg.write_text(SMALL)
    from jbo.cli import main

    capsys.readouterr()
    assert main(["study", str(cfg), "--out", str(out), "--verify"]) == 1
    assert f"BAD      forrester|T=6|gp_ucb: {cell}" in capsys.readouterr().out
    # resuming names the file, runs that cell (and only it) again, and heals the table
    again = jbo.study_config.run(SMALL, out, progress=False)
    assert f"{cell} (cell 'forrester|T=6|gp_ucb') cannot be used" in capsys.readouterr().err
    assert fake_cells[4:] == ["gp_ucb"]
    pd.testing.assert_frame_equal(again, whole, check_exact=True)
    pd.testing.assert_frame_equal(pd.read_csv(out / "table.csv"), whole, check_exact=True)
    assert jbo.study_config.verify(out) == [(i, c.id, None) for i, c in enumerate(jbo.study_config.parse(SMALL).cells)]
    assert main(["study", str(cfg), "--out", str(out), "--verify"]) == 0


def test_a_cell_written_before_its_manifest_entry_is_adopted_only_when_whole(fake_cells, tmp_path, capsys):
    """A kill between the cell file and the manifest leaves a file without an entry: a whole one is
    kept (its content checked against what the cell must hold), a truncated one is run again."""
    out = tmp_path / "s"
    whole = jbo.study_config.run(SMALL, out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    entries = dict(manifest["finished"])
    for k in ("1", "2"):
        del manifest["finished"][k]
    (out / "manifest.json").write_text(json.dumps(manifest))
    _truncate(out / "cells" / "0002.csv")
    with pytest.raises(jbo.study_config.StudyDataError, match="no manifest entry"):
        jbo.study_config.combine(out)  # without the study: nothing unrecorded is combined
    again = jbo.study_config.run(SMALL, out, progress=False)
    assert fake_cells[4:] == ["random_search"]  # cell 2 only; cell 1 adopted
    err = capsys.readouterr().err
    assert "0002.csv" in err and "0001.csv" not in err
    pd.testing.assert_frame_equal(again, whole, check_exact=True)
    assert json.loads((out / "manifest.json").read_text())["finished"] == entries  # the same records as written


def test_cell_content_checks_catch_what_a_checksum_cannot_know(tmp_path):
    """Without a manifest entry the content decides: rows, seeds x steps, labels and numbers."""
    study = jbo.study_config.parse(SMALL)
    cell = study.cells[3]
    good = _fake_table(cell.method, cell.problem, 2, cell.num_steps)
    good["cell"], good["num_steps"], good["budget"] = cell.id, cell.num_steps, np.nan
    (tmp_path / "cells").mkdir()
    path = tmp_path / "cells" / "0003.csv"

    def reason(frame):
        frame.to_csv(path, index=False)
        return jbo.study_config.check_cell(tmp_path, study, cell, None)

    assert reason(good) is None
    assert "holds 15 rows, a cell of 2 seeds x 8 steps has 16" in reason(good.iloc[:-1])
    assert "each seed 0..1" in reason(good.assign(seed=np.where(good["seed"] == 1, 2, good["seed"])))
    assert "method = ['bogus']" in reason(good.assign(method=["bogus"] + [cell.method] * 15))
    assert "lacks column(s) ['cell']" in reason(good.drop(columns="cell"))
    assert "'simple_regret' is not numeric" in reason(good.assign(simple_regret="x"))
    path.write_bytes(b"\x00\xff" * 50)
    assert "not a readable table" in jbo.study_config.check_cell(tmp_path, study, cell, None)


def test_study_output_has_a_plot_and_ctrl_c_keeps_finished_cells(fake_cells, monkeypatch, tmp_path, capsys):
    out = tmp_path / "s"
    jbo.study_config.run(SMALL, out, progress=False)
    assert (out / "regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    calls = []

    def interrupted(methods, problems, key, num_steps, num_seeds, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        m, p = next(iter(methods)), next(iter(problems))
        return _fake_table(m, p, num_seeds, num_steps, key)

    monkeypatch.setattr(jbo.studies, "run_study", interrupted)
    cfg = tmp_path / "small.toml"
    cfg.write_text(SMALL)
    from jbo.cli import main

    assert main(["study", str(cfg), "--out", str(tmp_path / "k"), "--quiet"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"jbo study: interrupted: 1 of 4 cells are finished and kept in {tmp_path / 'k'}; the same command resumes from there"
    ]
    assert jbo.study_config.verify(tmp_path / "k")[0][2] is None


def test_a_config_imports_user_modules_before_it_is_checked(fake_cells, tmp_path):
    (tmp_path / "my_algs.py").write_text(
        "import jbo\n"
        "jbo.algorithms.register('cfg_import_random', lambda **o: jbo.algorithms.RandomSearch(**o), replace=True)\n"
    )
    cfg = tmp_path / "study.toml"
    cfg.write_text(
        SMALL.replace('"gp_ucb"', '"cfg_import_random"').replace("name =", 'imports = ["my_algs.py"]\nname =')
    )
    table = jbo.study_config.run(cfg, tmp_path / "s", progress=False)
    assert set(table["method"]) == {"random_search", "cfg_import_random"}
    with pytest.raises(ValueError, match=r"study config: imports\[0\]: cannot import 'nope.py'"):
        jbo.study_config.parse(SMALL.replace("name =", 'imports = ["nope.py"]\nname ='))
