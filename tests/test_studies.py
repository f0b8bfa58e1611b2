import re

import jax
import numpy as np
import pandas as pd
import pytest

import jbo

METHODS = {"random": jbo.algorithms.get("random_search", num_initial=3)}


def test_study_table_save_load_summary_plot(tmp_path):
    table = jbo.studies.run_study(
        METHODS, ["forrester", "branin"], num_seeds=4, num_steps={"forrester": 6, "branin": 8}, key=1, progress=False
    )
    assert set(table.columns) >= {
        "method",
        "problem",
        "seed",
        "step",
        "value",
        "best_value",
        "regret",
        "simple_regret",
        "compile_s",
        "run_s",
    }
    assert len(table) == 4 * 6 + 4 * 8
    # the table agrees with a direct run for the same seed keys
    trace = jbo.run_seeds(
        METHODS["random"], jbo.problems.get("branin"), key=jax.random.key(1), num_steps=8, num_seeds=4
    )
    got = table[table.problem == "branin"].pivot(index="seed", columns="step", values="simple_regret").to_numpy()
    np.testing.assert_allclose(got, np.asarray(trace.metrics["simple_regret"]), rtol=1e-12)
    path = jbo.studies.save(table, tmp_path / "t.csv")
    back = jbo.studies.load(path)
    np.testing.assert_allclose(back["simple_regret"], table["simple_regret"])
    s = jbo.studies.summary(table)
    assert list(s["steps"]) == [6, 8]
    last = table[(table.problem == "branin") & (table.step == 8)]["simple_regret"]
    np.testing.assert_allclose(s[s.problem == "branin"]["mean_simple_regret"].iloc[0], last.mean())
    jbo.studies.plot(table, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_replace_methods_takes_each_rerun_methods_rows():
    import pandas as pd

    first = pd.DataFrame({"method": ["A", "A", "B", "B", "C"], "seed": [0, 1, 0, 1, 0], "v": [1.0, 2, 3, 4, 5]})
    more_b = pd.DataFrame({"method": ["B"] * 3, "seed": [0, 1, 2], "v": [30.0, 40, 50]})
    later_b_and_c = pd.DataFrame({"method": ["B", "C"], "seed": [0, 0], "v": [300.0, 500]})
    got = jbo.studies.replace_methods(first, more_b, later_b_and_c)
    # written out by hand: A untouched, B and C from the last re-run that ran them
    want = {("A", 0): 1.0, ("A", 1): 2.0, ("B", 0): 300.0, ("C", 0): 500.0}
    assert dict(zip(zip(got.method, got.seed), got.v)) == want
    assert len(got) == len(want)
    assert jbo.studies.replace_methods(first).equals(first)


def test_summary_median_interval_is_the_percentile_bootstrap_of_the_median():
    """The median's interval against the exact percentile-bootstrap distribution: for n odd and
    distinct values x_(1) < ... < x_(n), a resample's median is <= x_(j) when at least (n + 1) / 2 of
    its n draws are among the j smallest, P = P(Binomial(n, j / n) >= (n + 1) / 2). The 2.5% and
    97.5% points of that distribution are order statistics; 4000 resamples land on them or next to them."""
    from scipy import stats

    rng = np.random.default_rng(7)
    rows = []
    for method, n in (("a", 11), ("b", 15)):
        v = rng.lognormal(size=n)
        rows += [{"method": method, "problem": "p", "seed": s, "step": 1, "simple_regret": v[s]} for s in range(n)]
    table = pd.DataFrame(rows).assign(compile_s=0.0, run_s=0.0)
    summ = jbo.studies.summary(table)
    for _, row in summ.iterrows():
        v = np.sort(table[table.method == row["method"]]["simple_regret"].to_numpy())
        n = v.size
        cdf = stats.binom.sf((n + 1) // 2 - 1, n, np.arange(1, n + 1) / n)  # P(resample median <= v[j - 1])
        lo, hi = np.searchsorted(cdf, 0.025), np.searchsorted(cdf, 0.975)
        assert v[max(lo - 1, 0)] <= row["median_low"] <= v[lo + 1]
        assert v[hi - 1] <= row["median_high"] <= v[min(hi + 1, n - 1)]
        assert row["median_low"] <= row["median_simple_regret"] <= row["median_high"]
    one = jbo.studies.summary(table[table.seed == 0])
    assert one[["median_low", "median_high"]].isna().all().all()  # one seed: no interval


def test_load_names_a_file_that_is_not_a_study_table(tmp_path):
    for name, content in (
        ("empty.csv", b""),
        ("bytes.csv", np.random.default_rng(0).bytes(200)),
        ("other.csv", b"a,b\n1,2\n"),
    ):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=re.escape(str(tmp_path / name))):
            jbo.studies.load(tmp_path / name)
    with pytest.raises(ValueError, match="no study table at"):
        jbo.studies.load(tmp_path / "missing.csv")


def test_settings_run_as_one_program_with_each_settings_rows():
    """Settings.choice over GP-UCB and GP-EI is one program per problem whose rows equal each method's
    own program: GP-EI bit for bit, GP-UCB to rounding (the closed forms are switched after one
    posterior evaluation, which rounds the UCB gradient differently); the rows carry the settings'
    labels and the shared program's compile and run seconds."""
    kw = dict(key=3, num_steps=10, num_seeds=3, progress=False)
    shared = jbo.studies.Settings.choice({"gp_ucb": "ucb", "gp_ei": "ei"}, num_initial=4)
    one = jbo.studies.run_study({"random_search": "random_search", "gp": shared}, ["branin"], **kw)
    own = jbo.studies.run_study(
        {
            "random_search": "random_search",
            "gp_ucb": jbo.algorithms.get("gp_ucb", num_initial=4),
            "gp_ei": jbo.algorithms.get("gp_ei", num_initial=4),
        },
        ["branin"],
        **kw,
    )
    assert sorted(one["method"].unique()) == ["gp_ei", "gp_ucb", "random_search"]
    key = ["method", "problem", "seed", "step"]
    a, b = (t.sort_values(key).reset_index(drop=True) for t in (one, own))
    ei = a["method"] == "gp_ei"
    np.testing.assert_array_equal(a.loc[ei, "value"], b.loc[ei, "value"])
    ucb = a["method"] == "gp_ucb"
    np.testing.assert_allclose(a.loc[ucb, "value"], b.loc[ucb, "value"], rtol=1e-6)
    gp_rows = a[a["method"] != "random_search"]
    assert gp_rows["compile_s"].nunique() == 1 and gp_rows["run_s"].nunique() == 1


def test_settings_and_study_labels_are_checked():
    alg = jbo.algorithms.get("gp_ucb", num_initial=4)
    with pytest.raises(TypeError, match="Settings: algorithm"):
        jbo.studies.Settings("gp_ucb", {"a": alg.default_params()})
    with pytest.raises(ValueError, match="non-empty"):
        jbo.studies.Settings(alg, {})
    with pytest.raises(ValueError, match=r"Settings\['bad'\]: GPBOParams.acquisition -> UCBParams.beta"):
        jbo.studies.Settings(
            alg,
            {
                "bad": jbo.replace_params(alg.default_params(), beta=1.0)._replace(
                    acquisition=alg.default_params().acquisition._replace(beta=-1.0)
                )
            },
        )
    ei = jbo.algorithms.get("gp_ei", num_initial=4)
    with pytest.raises(ValueError, match="the same structure"):
        jbo.studies.Settings(alg, {"a": alg.default_params(), "b": ei.default_params()})
    shared = jbo.studies.Settings(alg, {"gp_ucb": alg.default_params()})
    with pytest.raises(ValueError, match=r"\['gp_ucb'\] occur more than once"):
        jbo.studies.run_study({"gp_ucb": alg, "s": shared}, ["branin"], num_steps=5, num_seeds=1, progress=False)
