"""The one verdict rule (jbo.verdict) against independent truths: SciPy's exact binomial test and
bootstrap, and closed-form cases."""

import numpy as np
import pytest
import scipy.stats

from jbo import verdict


@pytest.mark.parametrize("wins,losses", [(0, 0), (5, 0), (6, 0), (7, 3), (3, 7), (15, 15), (22, 8), (1, 29)])
def test_sign_test_equals_scipy_binomtest(wins, losses):
    expected = 1.0 if wins + losses == 0 else scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue
    assert verdict.sign_test(wins, losses) == pytest.approx(expected, rel=1e-12)


def test_bootstrap_interval_matches_scipy():
    d = np.random.default_rng(3).normal(0.4, 1.0, 30)
    lo, hi = verdict.bootstrap_median_interval(d, num_resamples=20000)
    ref = scipy.stats.bootstrap(
        (d,), np.median, confidence_level=0.95, n_resamples=20000, method="percentile", random_state=1
    ).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.06) and hi == pytest.approx(ref.high, abs=0.06)
    assert lo < np.median(d) < hi


def test_compare_outcomes():
    b = 10.0 ** np.random.default_rng(0).uniform(-4, -1, 12)
    better = verdict.compare(b / 10, b)  # ten times lower on every seed
    assert better.outcome == "better" and better.wins == 12 and better.median_diff == pytest.approx(-1.0)
    assert better.p_value == pytest.approx(2 / 2**12)
    assert verdict.compare(b * 10, b).outcome == "worse"
    jitter = 10.0 ** np.random.default_rng(1).uniform(-0.1, 0.1, 12)
    assert verdict.compare(b * jitter, b).outcome == "comparable"  # within a factor 10^0.2 < 2
    five = verdict.compare(b[:5] / 10, b[:5])  # five seeds: p = 1/16 cannot fall below 0.05
    assert five.p_value == pytest.approx(1 / 16) and five.outcome == "inconclusive"
    spread = verdict.compare(b * 10.0 ** np.random.default_rng(2).normal(0, 2, 12), b)
    assert spread.outcome == "inconclusive"
    # exact zeros (an optimum hit exactly) count as the floor, and tie
    tie = verdict.compare(np.zeros(8), np.zeros(8))
    assert tie.ties == 8 and tie.p_value == 1.0 and tie.outcome == "comparable"
    # raw (not log) values, e.g. a negated accuracy
    raw = verdict.compare(-np.full(8, 0.9) - np.arange(8) * 1e-3, -np.full(8, 0.8), log=False, margin=0.01)
    assert raw.outcome == "better"


def test_compare_names_bad_input():
    with pytest.raises(ValueError, match="pair seed by seed"):
        verdict.compare(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"a holds non-finite values at seeds \[1\]"):
        verdict.compare([1.0, np.nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="negative"):
        verdict.compare([-1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="wins"):
        verdict.sign_test(-1, 2)


def test_grade():
    assert verdict.grade([True, True]) == "reproduced"
    assert verdict.grade([True, False]) == "partly"
    assert verdict.grade([False, False]) == "not reproduced"
    assert verdict.grade([None]) == "not testable" and verdict.grade([]) == "not testable"
    assert verdict.grade([None, True]) == "reproduced"
    c = verdict.compare(np.ones(8) * 0.1, np.ones(8))
    assert verdict.holds(c, ["better", "comparable"]) is True
    assert verdict.holds(c, ["worse"]) is False and verdict.holds(None, ["better"]) is None
    with pytest.raises(ValueError, match="asserted"):
        verdict.holds(c, ["wins"])
    # five seeds cannot reach p < 0.05: an inconclusive "better" is no evidence, not a failure
    assert verdict.min_seeds() == 6 and verdict.min_seeds(0.01) == 8
    five = verdict.compare(np.full(5, 0.01), np.full(5, 1.0))
    assert five.outcome == "inconclusive" and verdict.holds(five, ["better"]) is None
    # "better or comparable" with every seed lower: "better" was out of reach, so no evidence either way;
    # with every seed higher, "comparable" was within reach and missed, so it fails
    assert verdict.holds(five, ["better", "comparable"]) is None
    five_worse = verdict.compare(np.full(5, 1.0), np.full(5, 0.01))
    assert five_worse.outcome == "inconclusive" and verdict.holds(five_worse, ["better", "comparable"]) is False
    spread = verdict.compare(np.array([0.01, 1.0, 0.01, 1.0, 0.01]), np.full(5, 0.1))
    assert spread.ci_low < 0 < spread.ci_high and verdict.holds(spread, ["better", "comparable"]) is False
    assert verdict.grade([verdict.holds(five, ["better"])]) == "not testable"


def test_an_effect_size_claim_needs_the_interval_beyond_the_margin():
    """Every seed 10^0.2 = 1.6 times lower: 'better' by the sign test and an interval [-0.2, -0.2]
    below 0, but inside the comparable margin log10 2 = 0.30; 10^0.5 = 3.2 times lower lies beyond it."""
    b = 10.0 ** np.linspace(-4, -1, 12)
    small, large = verdict.compare(b / 10**0.2, b), verdict.compare(b / 10**0.5, b)
    assert small.outcome == large.outcome == "better"
    assert small.ci_high == pytest.approx(-0.2) and large.ci_high == pytest.approx(-0.5)
    assert small.margin == pytest.approx(np.log10(2.0)) and not small.beyond_margin and large.beyond_margin
    assert verdict.holds(small, ("better",)) is True and verdict.holds(small, ("better",), effect=True) is False
    assert verdict.holds(large, ("better",), effect=True) is True
    worse = verdict.compare(b * 10**0.5, b)
    assert verdict.holds(worse, ("worse",), effect=True) is True
    raw = verdict.compare(-np.full(8, 0.9), -np.full(8, 0.85), log=False, margin=0.01)  # 0.05 beyond 0.01
    assert raw.margin == 0.01 and verdict.holds(raw, ("better",), effect=True) is True


def test_the_phrase_table_reads_each_family_one_way():
    assert verdict.reading("beats") == verdict.Reading(("better",), False)
    assert verdict.reading("clearly beats") == verdict.Reading(("better",), True)
    assert verdict.reading("competitive with").outcomes == ("better", "comparable")
    for alike in ("comparable to", "on par with", "performs similarly to", "≈"):
        assert verdict.reading(alike).outcomes == ("comparable",)
        assert verdict.reading(alike, lenient=True).outcomes == ("better", "comparable")
    assert all(not r.effect for r in verdict.LENIENT.values())
    assert set(verdict.LENIENT) == set(verdict.PHRASES)
    for r in verdict.PHRASES.values():
        assert r.outcomes and set(r.outcomes) <= set(verdict.OUTCOMES)
    with pytest.raises(ValueError, match="unknown phrase 'roughly'"):
        verdict.reading("roughly")


# ---------------------------------------------------------------- a study table (compare_methods, compare_all)
def _table(per_method, problem="p", steps=3, seeds=None):
    """A study table built by hand: {method: final value per seed}; each seed's earlier steps are 10x
    its final value (so the final step is the one that decides)."""
    import pandas as pd

    rows = []
    for method, finals in per_method.items():
        for i, v in enumerate(finals):
            s = i if seeds is None else seeds[i]
            for t in range(1, steps + 1):
                rows.append(
                    {
                        "method": method,
                        "problem": problem,
                        "seed": s,
                        "step": t,
                        "simple_regret": v * 10.0 ** (steps - t),
                    }
                )
    return pd.DataFrame(rows)


B12 = 10.0 ** np.random.default_rng(0).uniform(-4, -1, 12)


def test_compare_methods_on_a_table_built_by_hand():
    table = _table({"A": B12 / 10, "B": B12, "same": B12})
    better = verdict.compare_methods(table, "A", "B")
    assert better.outcome == "better" and better.wins == 12 and better.losses == 0 and better.n == 12
    assert better.p_value == pytest.approx(scipy.stats.binomtest(12, 12, 0.5).pvalue, rel=1e-12)
    assert better.median_diff == pytest.approx(-1.0) and better.ci_high == pytest.approx(-1.0)
    assert verdict.compare_methods(table, "B", "A").outcome == "worse"
    alike = verdict.compare_methods(table, "same", "B")
    assert alike.outcome == "comparable" and alike.ties == 12 and alike.p_value == 1.0
    # the same numbers as compare() on the per-seed arrays
    assert better == verdict.compare(B12 / 10, B12)
    # at an earlier step every value is 10x or 100x its final value: the same differences
    assert verdict.compare_methods(table, "A", "B", step=1).median_diff == pytest.approx(-1.0)


def test_compare_methods_against_numpy_and_scipy():
    rng = np.random.default_rng(5)
    a, b = 10.0 ** rng.normal(-2, 1, 15), 10.0 ** rng.normal(-2.5, 1, 15)
    c = verdict.compare_methods(_table({"A": a, "B": b}), "A", "B")
    d = np.log10(a) - np.log10(b)
    wins, losses = int(np.sum(d < 0)), int(np.sum(d > 0))
    assert (c.wins, c.losses, c.n) == (wins, losses, 15)
    assert c.p_value == pytest.approx(scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-12)
    assert c.median_diff == pytest.approx(np.median(d), rel=1e-12)
    assert c.ci_low <= c.median_diff <= c.ci_high
    raw = verdict.compare_methods(_table({"A": a, "B": b}), "A", "B", log=False, margin=0.1)
    assert raw.median_diff == pytest.approx(np.median(a - b), rel=1e-12) and raw.margin == 0.1


def test_compare_methods_pairs_by_seed_not_by_row_order():
    seeds = [7, 3, 11, 0, 5, 9, 2, 8]
    a, b = B12[:8] / 10, B12[:8]
    table = _table({"A": a, "B": b}, seeds=seeds)
    shuffled = table.sample(frac=1.0, random_state=0).reset_index(drop=True)
    assert verdict.compare_methods(shuffled, "A", "B") == verdict.compare_methods(table, "A", "B")
    # B's rows in another seed order pair by seed: A is 10x lower on every seed whatever the order
    import pandas as pd

    reordered = _table({"B": b[::-1]}, seeds=seeds[::-1])
    mixed = pd.concat([table[table.method == "A"], reordered], ignore_index=True)
    c = verdict.compare_methods(mixed, "A", "B")
    assert c.wins == 8 and c.median_diff == pytest.approx(-1.0) and c.outcome == "better"


def test_compare_methods_few_seeds_and_spread():
    five = verdict.compare_methods(_table({"A": B12[:5] / 10, "B": B12[:5]}), "A", "B")
    assert five.n == 5 < verdict.min_seeds() and five.outcome == "inconclusive"
    noisy = B12 * 10.0 ** np.random.default_rng(2).normal(0, 2, 12)
    assert verdict.compare_methods(_table({"A": noisy, "B": B12}), "A", "B").outcome == "inconclusive"


def test_compare_all_one_row_per_problem_and_method():
    import pandas as pd

    table = pd.concat(
        [
            _table({"base": B12, "fast": B12 / 10, "slow": B12 * 10}, problem="p1"),
            _table({"base": B12[:8], "fast": B12[:8]}, problem="p2"),
            _table({"fast": B12}, problem="p3"),  # no baseline here: no rows
        ],
        ignore_index=True,
    )
    out = verdict.compare_all(table, "base")
    assert list(out.columns) == [
        "problem",
        "method",
        "baseline",
        "n",
        "wins",
        "losses",
        "ties",
        "p_value",
        "median_diff",
        "ci_low",
        "ci_high",
        "outcome",
    ]
    assert list(zip(out.problem, out.method)) == [("p1", "fast"), ("p1", "slow"), ("p2", "fast")]
    assert list(out.outcome) == ["better", "worse", "comparable"]
    assert (out.baseline == "base").all() and list(out.n) == [12, 12, 8]
    row = out.iloc[0]
    assert row.p_value == pytest.approx(scipy.stats.binomtest(12, 12, 0.5).pvalue)
    assert row.median_diff == pytest.approx(-1.0)
    one = verdict.compare_methods(table, "slow", "base", problem="p1")
    assert tuple(out.iloc[1][list(verdict.Comparison._fields[:-1])]) == tuple(one[:-1])


def test_compare_methods_names_bad_arguments():
    import pandas as pd

    table = _table({"A": B12[:6], "B": B12[:6]})
    with pytest.raises(ValueError, match=r"a='C' is not a method of the table; its methods are \['A', 'B'\]"):
        verdict.compare_methods(table, "C", "B")
    with pytest.raises(ValueError, match="b='C' is not a method"):
        verdict.compare_methods(table, "A", "C")
    with pytest.raises(ValueError, match="problem='q' is not a problem of the table"):
        verdict.compare_methods(table, "A", "B", problem="q")
    with pytest.raises(ValueError, match="metric 'regret' is not a column"):
        verdict.compare_methods(table, "A", "B", metric="regret")
    with pytest.raises(ValueError, match="step=9"):
        verdict.compare_methods(table, "A", "B", step=9)
    with pytest.raises(ValueError, match=r"do not pair: seeds only in a \[5\], only in b \[\]"):
        verdict.compare_methods(table[~((table.method == "B") & (table.seed == 5))], "A", "B")
    two = pd.concat([table, _table({"A": B12[:6], "B": B12[:6]}, problem="q")], ignore_index=True)
    with pytest.raises(ValueError, match="holds 2 problems .* pass problem="):
        verdict.compare_methods(two, "A", "B")
    assert verdict.compare_methods(two, "A", "B", problem="q").outcome == "comparable"
    with pytest.raises(ValueError, match="b='B' has no rows on problem 'q'"):
        verdict.compare_methods(two[~((two.method == "B") & (two.problem == "q"))], "A", "B", problem="q")
    with pytest.raises(ValueError, match=r"more than one row for seed\(s\) \[0"):
        verdict.compare_methods(pd.concat([table, table]), "A", "B")
    nan = table.assign(simple_regret=np.where(table.seed == 2, np.nan, table.simple_regret))
    with pytest.raises(ValueError, match=r"metric 'simple_regret' of a='A' .* not finite at seed\(s\) \[2\]"):
        verdict.compare_methods(nan, "A", "B")
    with pytest.raises(ValueError, match="lacks the column"):
        verdict.compare_methods(table.drop(columns="seed"), "A", "B")
    with pytest.raises(ValueError, match="baseline='Z' is not a method"):
        verdict.compare_all(table, "Z")
    with pytest.raises(ValueError, match="seeds of method='A' and baseline='B'"):
        verdict.compare_all(table[~((table.method == "B") & (table.seed == 5))], "B")


def test_compare_methods_on_a_run_study_table():
    """End to end: the same algorithm twice on the same seed keys (common random numbers) ties on
    every seed, so it is comparable to itself; the values compared are the table's last step."""
    import jbo

    r = lambda: jbo.algorithms.get("random_search", num_initial=2)  # noqa: E731
    table = jbo.studies.run_study({"r": r(), "again": r()}, ["branin"], key=0, num_steps=6, num_seeds=6, progress=False)
    c = verdict.compare_methods(table, "again", "r")
    assert (c.n, c.ties, c.p_value, c.median_diff, c.outcome) == (6, 6, 1.0, 0.0, "comparable")
    out = verdict.compare_all(table, "r", metric="best_value", log=False, margin=0.1)
    assert list(out.method) == ["again"] and out.outcome.item() == "comparable"
    last = table[(table.method == "r") & (table.step == 6)].sort_values("seed").simple_regret.to_numpy()
    assert verdict.compare_methods(table, "r", "r") == verdict.compare(last, last)
