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


def colour_rows(times: dict[str, tuple[float, ...]], hits: dict[str, tuple[float, ...]]) -> pd.DataFrame:
    """approach -> run times (s) and disk hits of repetitions 0.. at mem_ratio 0.8 (hotscans, 1000 reads)."""
    out = []
    for a, ts in times.items():
        for rep, (t, h) in enumerate(zip(ts, hits[a])):
            out.append({"approach": a, "workload": "hotscans", "zipf_theta": 0.99, "mem_ratio": 0.8,
                        "repetition": rep, "run_duration_s": t, "disk_hits": h, "reads_total": 1000,
                        "ac_uvmm_pinned_pages": 900 if "colours" in a else 0})
    return pd.DataFrame(out)


LRU, LRU_C = "emt", "emt{ac_emt_colours=1}"
FIFO, FIFO_C = "emt{ac_emt_evict=fifo}", "emt{ac_emt_evict=fifo,ac_emt_colours=1}"


def test_colours_speed_up_per_repetition():
    """E3: the speedup is run time without colours over with, per repetition; saved hits a fraction."""
    df = colour_rows({LRU: (10, 12, 11), LRU_C: (5, 6, 5.5), FIFO: (9, 9, 9), FIFO_C: (8, 8.5, 8.2)},
                     {LRU: (400, 400, 400), LRU_C: (300, 300, 300), FIFO: (500, 500, 500), FIFO_C: (400, 400, 400)})
    t = emt.colour_effect(df).set_index("evict")
    assert t.loc["lru", "speedup"] == 2 and t.loc["lru", "runs"] == 3 and t.loc["lru", "speedup_lo"] == 2
    assert abs(t.loc["fifo", "saved_hits"] - 0.2) < 1e-12 and t.loc["lru", "disk_hits_per_read_colours"] == 0.3
    v = emt.check_colour_claim(df)["verdict"].iloc[0]
    assert v.startswith("reproduced") and "lru M/D 0.80: speedup 2.00x" in v and "900 pages pinned" in v, v
    assert "disk hits per read 0.400 -> 0.300 (-25 %)" in v, v
    assert "paper: 2.9x at the higher memory limits" in v


def test_colours_slower_is_contradicted_and_missing_is_not_testable():
    df = colour_rows({LRU: (10, 10, 10), LRU_C: (12, 12.5, 12.2), FIFO: (9, 9, 9), FIFO_C: (8, 8.5, 8.2)},
                     {LRU: (400,) * 3, LRU_C: (390,) * 3, FIFO: (500,) * 3, FIFO_C: (400,) * 3})
    assert emt.check_colour_claim(df)["verdict"].iloc[0].startswith("contradicted")
    # half the room pinned is quoted, never judged: a slower run of it decides nothing
    half = df[df["approach"] == LRU_C].assign(approach="emt{ac_emt_colours=1,ac_log_hot_fill=0.5}",
                                             run_duration_s=100.0)
    ok = colour_rows({LRU: (10,) * 3, LRU_C: (5,) * 3, FIFO: (9,) * 3, FIFO_C: (8,) * 3},
                     {LRU: (400,) * 3, LRU_C: (300,) * 3, FIFO: (500,) * 3, FIFO_C: (400,) * 3})
    v = emt.claim_colours(pd.concat([ok, half]))
    assert v.startswith("reproduced") and "lru, hot fill 0.5 M/D 0.80: speedup 0.10x" in v and "(quoted, not judged)" in v, v
    assert emt.claim_colours(None) == "not testable with these results: no run of experiments/emt-colours.toml"
    assert emt.claim_colours(df[df["approach"] != FIFO_C]) == (
        "not testable with these results: no cells of emt{ac_emt_evict=fifo,ac_emt_colours=1}"
        " (run experiments/emt-colours.toml)")
