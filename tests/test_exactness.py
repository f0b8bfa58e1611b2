"""What the project claims about exactness, with XLA's default optimisations on (the rest of the suite
compiles with most of them off; tests/conftest.py), so that the claims hold for the programs users run:

* docs/sharp-bits.md "Determinism": seed i of run_seeds equals run with key split(key, S)[i] to
  rounding, not bit for bit;
* jbo/engine.py "Growing state", docs/concepts.md: a run split into growing segments equals the
  whole-buffer run to rounding;
* jbo/study_config.py: a study resumed after losing a cell equals the uninterrupted study.
"""

import functools
import hashlib
import json
import shutil

import jax
import numpy as np
import pandas as pd
import pytest

import jbo
import jbo.study_config

T = 100  # > 96: the default schedule splits the run into segments of 64 and 100 rows
SMALL_GP = dict(num_initial=3, maximiser=jbo.parts.Maximiser(num_raw=32, num_starts=2, steps=3))
PROBLEM = jbo.problems.get("branin", noise_std=0.1)
KEY = jax.random.key(7)
# "To rounding" for a GP run: the acquisition optimiser amplifies an ulp (docs/how-to/devices.md: a
# GP-UCB run ends within ~1e-8); measured here within 1e-11 in the actions over 100 steps.
ROUNDING = 1e-8


def gp(bucket=True):
    return jbo.algorithms.get("gp_ucb", growth=jbo.data.as_growth(bucket), **SMALL_GP)


def _close(a, b, atol):
    for name in ("actions", "observations"):
        np.testing.assert_allclose(np.asarray(getattr(a, name)), np.asarray(getattr(b, name)), rtol=0, atol=atol)
    for name, v in a.metrics.items():
        np.testing.assert_allclose(np.asarray(v), np.asarray(b.metrics[name]), rtol=0, atol=atol, err_msg=name)


@functools.cache
def runs(bucket):
    """jbo.run of seeds 0 and 1 of split(KEY, 2), computed once for the tests of this module (each
    compiles with XLA's optimisations on)."""
    return [jbo.run(gp(bucket), PROBLEM, key=k, num_steps=T) for k in jax.random.split(KEY, 2)]


@pytest.mark.extended  # at XLA's default settings; segments == whole buffer in the default run: test_growing
def test_segments_equal_the_whole_buffer_to_rounding(xla_optimized):
    assert gp().capacities(T) == (64, T) and gp(bucket=False).capacities(T) == (T,)
    for seg, whole in zip(runs(True), runs(False)):
        _close(seg, whole, ROUNDING)
        assert seg.final_state.buffer.capacity == whole.final_state.buffer.capacity == T
        np.testing.assert_allclose(seg.final_state.buffer.x, whole.final_state.buffer.x, rtol=0, atol=ROUNDING)


@pytest.mark.extended  # at XLA's default settings; vmapped == looped in the default run: test_registry
def test_vmapped_seeds_equal_looped_runs_to_rounding(xla_optimized):
    many = jbo.run_seeds(gp(bucket=False), PROBLEM, key=KEY, num_steps=T, num_seeds=2)
    for i, one in enumerate(runs(False)):
        _close(jax.tree.map(lambda a, i=i: a[i], many._replace(final_state=None, info={})), one, ROUNDING)
        # the initial design and its observations come from the environment stream alone: no rounding
        np.testing.assert_array_equal(np.asarray(many.actions[i, :3]), np.asarray(one.actions[:3]))
        np.testing.assert_array_equal(np.asarray(many.observations[i, :3]), np.asarray(one.observations[:3]))


STUDY = """
name = "exact"
seeds = 2
seed = 5
[methods.random_search]
options = { num_initial = 2 }
[problems.forrester]
steps = [5, 7]
noise_std = 0.2
[problems.branin]
steps = 6
"""


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.extended  # at XLA's default settings; resume in the default run: test_study_config
def test_resumed_study_equals_the_uninterrupted_one(tmp_path, xla_optimized):
    full = jbo.study_config.run(STUDY, tmp_path / "a", progress=False)
    out = tmp_path / "b"
    shutil.copytree(tmp_path / "a", out)
    for name in ("table.csv", "summary.csv", jbo.study_config.PLOT):
        (out / name).unlink(missing_ok=True)
    cells = sorted((out / "cells").glob("*.csv"))
    assert len(cells) == 3
    # lose one cell: its file and its manifest entry, as if the process had been killed before it
    lost = cells[1]
    lost.unlink()
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["finished"][str(int(lost.stem))]
    (out / "manifest.json").write_text(json.dumps(manifest))
    kept = {p.name: _sha(p) for p in cells if p != lost}
    resumed = jbo.study_config.run(STUDY, out, progress=False)
    assert {p.name: _sha(p) for p in cells if p != lost} == kept  # finished cells are read back, not run
    assert lost.exists()
    timing = list(jbo.study_config.TIMING_COLUMNS)
    assert len(resumed) == len(full) == 2 * (5 + 7 + 6)
    pd.testing.assert_frame_equal(resumed.drop(columns=timing), full.drop(columns=timing), check_exact=True)
    pd.testing.assert_frame_equal(
        pd.read_csv(out / "table.csv").drop(columns=timing),
        pd.read_csv(tmp_path / "a" / "table.csv").drop(columns=timing),
        check_exact=True,
    )
