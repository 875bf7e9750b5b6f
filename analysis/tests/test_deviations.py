"""acplot.deviations: the paper's set-up against the rows'."""
import pandas as pd

from acplot.deviations import PAPER, deviations, to_markdown


def test_ours_read_from_the_rows():
    df = pd.DataFrame([
        {"approach": a, "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "repetition": r,
         "kernel": "6.18.44", "cpus": 2, "cpu_model": "EPYC", "spill_device": "disk", "disk_device": "vda",
         "cell_disk_read_latency_mean_us": lat, "page_cluster": 0, "p_recordcount": 1000000, "p_fieldcount": 10,
         "p_fieldlength": 100, "p_requestdistribution": "truezipf", "p_threads": 1, "mode": "in-process"}
        for a, lat in (("lru", 50.0), ("ospaging", 70.0)) for r in range(3)])
    t = deviations(df).set_index("setting")["ours"]
    assert list(deviations(df)["setting"]) == list(PAPER)
    assert t["kernel"] == "6.18.44" and t["cores"] == "2 (EPYC)" and t["vm.page-cluster"] == "0"
    assert t["spill device"] == "vda; mean read latency of a cell's disk reads 0.060 ms (median over 6 cells; 0.050–0.070)"
    assert t["records × item"] == "1,000,000 × 10 × 100 B" and t["repetitions"] == "3"
    assert t["driver"] == "in-process, 1 driver thread(s)"
    hdd = pd.concat([df, df.assign(regime="hdd", io_limit_iops=150)], ignore_index=True)
    assert deviations(hdd).set_index("setting")["ours"]["spill device"].endswith(
        "; regime hdd: the disk limited to 150 IOPS from the measured run (its own cells)")
    md = to_markdown(deviations(df))
    assert md.startswith("| setting | paper | ours | expected effect |\n|---|---|---|---|\n| kernel | Linux 3.8.0 | 6.18.44 |")


def test_what_the_rows_lack_is_said():
    t = deviations(pd.DataFrame([{"approach": "lru", "workload": "readonly", "zipf_theta": 0.99,
                                  "mem_ratio": 0.5}])).set_index("setting")["ours"]
    assert t["kernel"] == "not in the rows" and t["repetitions"] == "not in the rows"
    assert t["spill device"].startswith("no disk latency in the rows")
