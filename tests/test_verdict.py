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
