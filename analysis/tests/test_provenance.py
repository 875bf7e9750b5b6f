"""acplot.provenance: binaries, revisions and the cells that ran beside other work."""
import pandas as pd

from acplot.provenance import beside_other_work, summary


def rows():
    return pd.DataFrame([
        {"approach": "lru", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "repetition": 0,
         "binary_sha256": "aa", "git_revision": "abc", "other_cpu_share": 0.01},
        {"approach": "ospaging", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "repetition": 0,
         "binary_sha256": "bb", "git_revision": "abd-dirty", "other_cpu_share": 0.31},
        {"approach": "effpaging", "workload": "readonly", "zipf_theta": 0.25, "mem_ratio": 0.25, "repetition": 0,
         "binary_sha256": None, "git_revision": "abc", "other_cpu_share": 0.08},
        {"approach": "logging", "workload": "readonly", "zipf_theta": 0.25, "mem_ratio": 0.25, "repetition": 0,
         "binary_sha256": "aa", "git_revision": "abc", "other_cpu_share": None},
    ])


def test_cells_beside_other_work_most_first():
    f = beside_other_work(rows())
    assert list(f["approach"]) == ["ospaging", "effpaging"] and list(f["other_cpu_share"]) == [0.31, 0.08]
    assert beside_other_work(rows(), share=0.5).empty


def test_summary_lines_say_what_mixes():
    assert summary(rows()) == [
        "2 binaries (binary_sha256) over 4 rows; 1 rows do not say which",
        "2 harness revision(s), 1 rows from a tree with uncommitted changes",
        "2 of 4 cells ran beside other work (more than 5 % of the machine busy with something else); "
        "the most: ospaging θ=0.99 M/D=0.5 at 31 %; 1 rows did not record it",
    ]
    bare = rows().drop(columns=["binary_sha256", "other_cpu_share"])
    assert summary(bare)[0] == "the rows do not say which binary made them (no binary_sha256 column; 4 rows)"
    assert summary(bare)[-1] == "the machine's load during the cells was not recorded (no other_cpu_share column)"
