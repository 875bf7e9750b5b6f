"""acplot.emt: EMT's two claims judged from synthetic rows with known run times, and not testable
without the cells."""
import pandas as pd

from acplot import emt


def rows(scan: dict[str, tuple[float, ...]], rand: dict[str, tuple[float, ...]],
         faults: dict[str, tuple[float, ...]]) -> pd.DataFrame:
    """approach -> run times (s) at mem_ratio 2, 0.8, 2/3, 0.5; faults for random reads."""
    out = []
    for wl, table in (("scanonly", scan), ("randomreads", rand)):
        for a, times in table.items():
            for m, t, f in zip((2.0, 0.8, 2 / 3, 0.5), times, faults[a]):
                out.append({"approach": a, "workload": wl, "zipf_theta": 0.99, "mem_ratio": m, "repetition": 0,
                            "run_duration_s": t, "major_faults": f if wl == "randomreads" else 0})
    return pd.DataFrame(out)


def test_as_the_paper_says():
    df = rows({"emt": (1, 6, 6.5, 7), "ospaging": (1, 30, 50, 80), "ospaging-file": (1, 28, 45, 81)},
              {"emt": (1, 3, 4, 5), "ospaging": (1, 4, 6, 9), "ospaging-file": (1, 4, 5, 8)},
              {"emt": (0, 100, 150, 200), "ospaging": (0, 110, 160, 210), "ospaging-file": (0, 105, 150, 205)})
    t = emt.slowdowns(df)
    row = t[(t["workload"] == "scanonly") & (t["approach"] == "ospaging") & (t["mem_ratio"] == 0.5)]
    assert row["slowdown"].iloc[0] == 80
    c = emt.check_claims(df).set_index("claim")["verdict"]
    assert c.iloc[0].startswith("reproduced") and "M/D 0.50: emt 7.0x, malloc 80.0x, mmap 81.0x" in c.iloc[0]
    assert "paper: EMT ~6.5x, malloc and mmap 28-81x" in c.iloc[0]
    assert c.iloc[1].startswith("reproduced") and "faults 200 / 210 / 205 (similar: within 1.5x)" in c.iloc[1]


def test_contradicted_where_the_data_says_so():
    df = rows({"emt": (1, 40, 60, 90), "ospaging": (1, 30, 50, 80), "ospaging-file": (1, 28, 45, 81)},
              {"emt": (1, 5, 7, 10), "ospaging": (1, 4, 6, 9), "ospaging-file": (1, 4, 5, 8)},
              {"emt": (0, 400, 600, 800), "ospaging": (0, 110, 160, 210), "ospaging-file": (0, 105, 150, 205)})
    c = emt.check_claims(df).set_index("claim")["verdict"]
    assert c.iloc[0].startswith("contradicted") and c.iloc[1].startswith("contradicted")
    assert "not similar" in c.iloc[1]


def test_without_runs_not_testable():
    df = pd.DataFrame([{"approach": "emt", "workload": "scanonly", "mem_ratio": 2.0, "run_duration_s": 1.0}])
    for v in emt.check_claims(df)["verdict"]:
        assert v == "not testable with these results: no cells of ospaging, ospaging-file (run experiments/emt.toml)"


def test_repetitions_give_intervals_and_noise_is_not_decided():
    """Three repetitions: the slowdown per repetition against its own unlimited run; a margin whose
    interval spans zero decides nothing."""
    out = []
    for rep, (e, k) in enumerate(((10, 11), (12, 10), (11, 12))):      # emt vs kernel: noise around equal
        for wl in ("scanonly", "randomreads"):
            for a, t in (("emt", e), ("ospaging", k), ("ospaging-file", k)):
                out.append({"approach": a, "workload": wl, "mem_ratio": 2.0, "repetition": rep, "run_duration_s": 1.0,
                            "major_faults": 0})
                out.append({"approach": a, "workload": wl, "mem_ratio": 0.5, "repetition": rep, "run_duration_s": t,
                            "major_faults": 100})
    df = pd.DataFrame(out)
    t = emt.slowdowns(df)
    row = t[(t["workload"] == "scanonly") & (t["approach"] == "emt") & (t["mem_ratio"] == 0.5)].iloc[0]
    assert row["slowdown"] == 11 and row["runs"] == 3 and row["slowdown_lo"] < 11 < row["slowdown_hi"]
    scans, rand = emt.check_claims(df)["verdict"]
    assert scans.startswith("not decided") and "margin +0.00x [-4.30, +4.30]" in scans, scans
    # the faster kernel run over emt's, less 1: 11/10, 10/12, 11/11 -> +0.01 [-0.37, +0.38]
    assert rand.startswith("not decided") and "margin +0.01 [-0.37, +0.38]" in rand, rand


def test_slowdown_figure(tmp_path):
    df = rows({"emt": (1, 6, 6.5, 7), "ospaging": (1, 30, 50, 80), "ospaging-file": (1, 28, 45, 81)},
              {"emt": (1, 3, 4, 5), "ospaging": (1, 4, 6, 9), "ospaging-file": (1, 4, 5, 8)},
              {"emt": (0, 100, 150, 200), "ospaging": (0, 110, 160, 210), "ospaging-file": (0, 105, 150, 205)})
    paths = emt.plot_slowdown(emt.slowdowns(df), tmp_path)
    assert paths == [tmp_path / "emt-slowdown.png"] and paths[0].stat().st_size > 10_000
    assert emt.plot_slowdown(emt.slowdowns(df).iloc[0:0], tmp_path) == []
