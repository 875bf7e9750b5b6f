"""acplot.evidence: intervals over repetitions and verdicts as the paper words a claim."""
import math

import pandas as pd
import pytest

from acplot.claims import check_claims, kernel_lower_hit_rate, kernel_lower_hit_rate_worded
from acplot.evidence import judge, margins, t_critical, t_interval


def test_t_interval_against_a_textbook_example():
    # 5 values, mean 5.0, s = 0.158114; t(4, 0.975) = 2.776: half-width 2.776 * 0.158114 / sqrt(5) = 0.19629
    iv = t_interval([5.1, 4.9, 5.0, 5.2, 4.8])
    assert iv.n == 5 and iv.mean == pytest.approx(5.0)
    assert iv.hi - iv.mean == pytest.approx(0.19629, abs=1e-4) and iv.mean - iv.lo == pytest.approx(0.19629, abs=1e-4)
    one = t_interval([3.0])
    assert one.n == 1 and one.mean == 3.0 and math.isnan(one.lo)
    assert t_critical(1) == 12.706 and t_critical(30) == 2.042 and t_critical(100) == 1.960
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_critical(0)
    with pytest.raises(ValueError, match="no values"):
        t_interval([])


def rows(hit, thetas=(0.99, 0.75, 0.5, 0.25), ratios=(0.75, 0.5, 0.25), reps=3, regime=None):
    """hit: approach -> function(θ, M/D, repetition) -> hit rate."""
    out = []
    for t in thetas:
        for r in ratios:
            for rep in range(reps):
                for a, f in hit.items():
                    h = f(t, r, rep)
                    row = {"approach": a, "workload": "readonly", "zipf_theta": t, "mem_ratio": r, "repetition": rep,
                           "hits": round(h * 100000), "disk_hits": 100000 - round(h * 100000), "misses": 0,
                           "throughput_ops_s": 1000.0}
                    if regime is not None:
                        row["regime"] = regime
                    out.append(row)
    return pd.DataFrame(out)


def flat(v, noise=0.002):
    return lambda t, r, rep: v + noise * (rep - 1)


def test_wide_margins_in_12_of_12_slices_reproduce():
    df = rows({"lru": flat(0.90), "alru": flat(0.89), "logging": flat(0.88), "ospaging": flat(0.80),
               "effpaging": flat(0.81)})
    v = kernel_lower_hit_rate_worded(df)
    assert v == "reproduced (holds in 12 of 12 slices; margin +8.50 to +8.50 pp; 3 runs per cell, 95 % t-interval)"


def test_family_means_against_the_strict_per_pair_view():
    # logging below the best kernel approach at θ 0.25, the families' means still apart
    log = lambda t, r, rep: (0.79 if t == 0.25 else 0.88) + 0.002 * (rep - 1)  # noqa: E731
    df = rows({"lru": flat(0.90), "alru": flat(0.89), "logging": log, "ospaging": flat(0.80), "effpaging": flat(0.81)})
    assert kernel_lower_hit_rate_worded(df).startswith("reproduced (holds in 12 of 12 slices")
    strict = kernel_lower_hit_rate(df.assign(hit_rate=df.hits / 100000))
    assert strict.startswith("contradicted (holds in 9 of 12 slices")


def test_overlapping_intervals_are_not_decided_and_say_where():
    # a 0.3 pp margin inside a ±1 pp spread between runs at one slice
    noisy = lambda t, r, rep: 0.803 + (0.01 * (rep - 1) if (t, r) == (0.5, 0.75) else 0.0) + (0.1 if (t, r) != (0.5, 0.75) else 0)  # noqa: E731,E501
    df = rows({"logging": noisy, "ospaging": flat(0.80, 0.0)}, reps=3)
    v = judge(df.assign(hit_rate=df.hits / 100000), "hit_rate", ("logging",), ("ospaging",), "every")
    assert v.startswith("not decided (holds in 11 of 12 slices; the interval contains 0 in 1: readonly θ=0.5 M/D=0.75: +0.30 pp [")
    t = margins(df.assign(hit_rate=df.hits / 100000), "hit_rate", ("logging",), ("ospaging",), "every")
    one = t[(t.zipf_theta == 0.5) & (t.mem_ratio == 0.75)].iloc[0]
    assert one["n"] == 3 and one["state"] == "not decided" and one["margin"].lo < 0 < one["margin"].hi


def test_a_claim_that_fails_somewhere_is_contradicted_with_its_worst_slice():
    worse = lambda t, r, rep: 0.75 if (t, r) == (0.25, 0.25) else 0.9  # noqa: E731
    df = rows({"logging": worse, "ospaging": flat(0.80, 0.001)}, reps=2)
    v = judge(df.assign(hit_rate=df.hits / 100000), "hit_rate", ("logging",), ("ospaging",), "every")
    assert v.startswith("contradicted (holds in 11 of 12 slices, fails in 1; readonly θ=0.25 M/D=0.25: -4.95 pp [-5.59, -4.31]; ")
    assert v.endswith("2 runs per cell, 95 % t-interval)")


def test_true_only_in_the_hdd_regime_is_regime_dependent():
    ssd = rows({"ospaging": flat(0.5), "lru": flat(0.9)}, regime="ssd")      # kernel below: claim fails
    hdd = rows({"ospaging": flat(0.9), "lru": flat(0.5)}, regime="hdd")      # kernel above: holds
    df = pd.concat([ssd, hdd], ignore_index=True)
    v = judge(df.assign(hit_rate=df.hits / 100000), "hit_rate", ("ospaging",), ("lru",), "every")
    assert v.startswith("regime-dependent (hdd: reproduced (holds in 12 of 12 slices; margin +40.00 to +40.00 pp;")
    assert "; ssd: contradicted (holds in 0 of 12 slices, fails in 12;" in v
    both_hold = pd.concat([hdd, hdd.assign(regime="ssd")], ignore_index=True)
    assert judge(both_hold.assign(hit_rate=both_hold.hits / 100000), "hit_rate", ("ospaging",), ("lru",),
                 "every").startswith("reproduced in every regime (hdd: reproduced")


def test_missing_cells_are_not_testable_and_named():
    df = rows({"lru": flat(0.9)})
    v = judge(df.assign(hit_rate=df.hits / 100000), "hit_rate", ("lru",), ("ospaging",), "every")
    assert v == "not testable with these results: no cells of ospaging (hit_rate)"
    v = check_claims(df).set_index("claim")["verdict"]["Kernel approaches (OS Paging, Efficient OS Paging) have lower hit rates than user-space ones (LRU, ALRU, Logging)"]
    assert v.startswith("not testable with these results: needs cells of lru, alru, logging and of ospaging, effpaging")
