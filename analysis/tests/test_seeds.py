"""acplot.nvm and acplot.remote: the seed papers' claims judged from synthetic rows with known
ratios, and every claim not testable (saying which cells are missing) without their runs."""
import pandas as pd

from acplot import nvm, remote
from acplot.seeds import throughput_table

NOISE = (0.99, 1.0, 1.01)        # per repetition: a spread around the value


def nvm_rows(anti: dict[float, float], disk: dict[float, float], slow8x: float = 1.0,
             disk_slow8x: float = 1.0) -> pd.DataFrame:
    """anti/disk: θ -> throughput at 2x, the 8x variants that times slow8x / disk_slow8x; the same
    numbers under both charge models (the access model's disk side is one approach for both)."""
    out = []
    for wl in ("readheavy", "readonly"):
        for theta in anti:
            for rep, f in enumerate(NOISE):
                values = {}
                for model, m in nvm.MODELS.items():
                    (a2, a8), (d2, d8) = m["anti-caching"], m["disk-oriented"]
                    values.update({a2: anti[theta], a8: anti[theta] * slow8x, d2: disk[theta]})
                    if d8 != d2:
                        values[d8] = disk[theta] * disk_slow8x
                for a, v in values.items():
                    out.append({"approach": a, "workload": wl, "zipf_theta": theta, "mem_ratio": 0.125,
                                "repetition": rep, "throughput_ops_s": v * f})
    return pd.DataFrame(out)


def test_nvm_as_the_paper_says():
    df = nvm_rows({0.99: 130_000, 0.25: 13_000}, {0.99: 10_000, 0.25: 10_000}, slow8x=1.0)
    claims = nvm.check_claims(df).set_index("claim")["verdict"]
    assert len(claims) == 12
    testable = claims[~claims.str.startswith("not testable under this model")]
    assert len(testable) == 11 and all(v.startswith("reproduced") for v in testable), claims.to_dict()
    for model in nvm.MODELS:
        mine = claims[claims.index.str.contains(f"[{model} model", regex=False)]
        assert len(mine) == 6
        assert "θ 0.99: 13.00x" in mine.iloc[0] and "θ 0.25: 1.30x" in mine.iloc[0] and "paper 13x" in mine.iloc[0]
        assert "ratio at θ 0.99 13.00x, at θ 0.25 1.30x" in mine.iloc[1]
    assert claims.iloc[5].startswith("not testable under this model: the disk-oriented device has no latency added")
    assert "ospaging-nvmfile{device_latency=8x} against ospaging-nvmfile{device_latency=2x}" in claims.iloc[11]


def test_nvm_contradicted_where_the_data_says_so():
    # 8x 40 % slower on both sides; anti-caching's ratio per latency: 2x 2.0x and 8x 2.0x at θ 0.99 in
    # the line model (both sides slow down), 2.0x and 1.2x in the access model (its disk side does
    # not): mean 1.60x; at θ 0.25 0.80x (line) and 0.64x (access): behind the disk-oriented design
    df = nvm_rows({0.99: 20_000, 0.25: 8_000}, {0.99: 10_000, 0.25: 10_000}, slow8x=0.6, disk_slow8x=0.6)
    claims = nvm.check_claims(df)["verdict"].tolist()
    assert claims[0].startswith("contradicted") and "θ 0.99: 1.60x" in claims[0] and "θ 0.25: 0.64x" in claims[0]
    assert claims[1].startswith("reproduced")               # still larger at high skew
    assert claims[4].startswith("contradicted") and "-40.0 %" in claims[4]
    assert claims[6].startswith("contradicted") and "θ 0.99: 2.00x" in claims[6] and "θ 0.25: 0.80x" in claims[6]
    assert claims[11].startswith("contradicted") and "-40.0 %" in claims[11]
    t = throughput_table(df)
    row = t[(t["approach"] == "lru-nvm") & (t["zipf_theta"] == 0.99) & (t["workload"] == "readonly")].iloc[0]
    assert row["runs"] == 3 and row["throughput_ops_s"] == 20_000 and row["ci_lo"] < 20_000 < row["ci_hi"]


def test_remote_claims():
    out = []
    for theta in (0.99, 0.5):
        for rep, f in enumerate(NOISE):
            out.append({"approach": "lru-remote", "workload": "readonly", "zipf_theta": theta, "mem_ratio": 0.25,
                        "repetition": rep, "throughput_ops_s": 60_000 * f, "lat_read_mean_us": 16 / f,
                        "data_bytes": 100 << 20, "cgroup_limit_bytes": 40 << 20, "ac_lost_items": 0,
                        "ac_refused_items": 0, "misses": 0, "ac_remote_unreadable": 0})
            out.append({"approach": "lru", "workload": "readonly", "zipf_theta": theta, "mem_ratio": 0.25,
                        "repetition": rep, "throughput_ops_s": 20_000 * f, "lat_read_mean_us": 48 / f,
                        "data_bytes": 100 << 20, "cgroup_limit_bytes": 40 << 20})
    df = pd.DataFrame(out)
    v = remote.check_claims(df)["verdict"].tolist()
    assert v[0].startswith("reproduced") and "mean read latency: 3.00x" in v[0] and "throughput: 3.00x" in v[0]
    assert v[1].startswith("reproduced") and "lost + refused + missed 0" in v[1]
    df.loc[0, "misses"] = 5
    assert remote.check_claims(df)["verdict"].iloc[1].startswith("contradicted")


def test_without_runs_not_testable():
    empty = pd.DataFrame(columns=["approach", "workload"])
    for v in [*nvm.check_claims(empty)["verdict"], *remote.check_claims(empty)["verdict"]]:
        assert (v.startswith("not testable with these results: no cells of") and "experiments/" in v
                or v.startswith("not testable under this model"))
