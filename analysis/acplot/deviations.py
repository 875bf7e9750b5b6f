"""The report's table of deviations: what the paper's set-up was (Zhang et al., ICDE 2015, §IV-A)
against what the rows say ours was, each with the effect we expect it to have on the verdicts.
Our side is read from the rows (kernel, cores, page-cluster, device latency, scale, threads,
repetitions); a setting the rows do not carry says so."""
from __future__ import annotations

import pandas as pd

# §IV-A: "a single x86_64 Ubuntu machine running Linux 3.8.0 kernel ... dual-socket Intel Xeon
# E5-2603 ... 8GB of DDR3 RAM ... a commodity hard disk of 1TB. One socket connects 4 cores";
# "YCSB Benchmark 0.1.4 with Zipfian distributions"; "one million tuples, each of which has 10
# columns ... 100 bytes"; "the latest stable version 1.4.21 of Memcached"; "executed the YCSB
# benchmark directly inside the server"; "repeated for three times".
PAPER = {
    "kernel": "Linux 3.8.0",
    "cores": "8 (2 × 4, Xeon E5-2603)",
    "spill device": "commodity 1 TB hard disk (a random 4 KiB read: several ms)",
    "vm.page-cluster": "not stated (the kernel's default 3: 8-page swap read-ahead)",
    "memcached": "1.4.21",
    "records × item": "1M × 10 × 100 B",
    "request distribution": "YCSB 0.1.4 Zipfian",
    "driver": "YCSB inside the server, threads not stated",
    "repetitions": "3 (\"not much variation\")",
}
EFFECT = {
    "kernel": "reclaim changed since 3.8 (refault detection for anon pages, swap read-ahead): the kernel "
              "approaches' hit rates and faults per disk hit may differ",
    "cores": "background threads (logging's and effpaging's classifier, memcached's maintainer) compete with the "
             "driver on 2 cores: their rounds fall behind at 2 driver threads",
    "spill device": "a disk hit costs ~0.05–0.1 ms instead of milliseconds: throughput verdicts that turn on I/O "
                    "size and scheduling (kernel approaches winning under shortage) may not carry over",
    "vm.page-cluster": "0 in paging cells (exact fault attribution): no swap read-ahead, fewer speculative reads",
    "memcached": "1.6's segmented LRU, maintainer and crawler (off for the kernel approaches); the item layout "
                 "is the same (1 MiB slab pages)",
    "records × item": "",
    "request distribution": "true Zipf over the keys (acbench truezipf), not YCSB's scrambled approximation: "
                            "hit rates at a given θ are not those of YCSB's generator",
    "driver": "",
    "repetitions": "one run per cell leaves margins inside the noise undecided (acplot.evidence)",
}


def _values(df: pd.DataFrame, col: str, fmt: str = "{}") -> str | None:
    if col not in df.columns:
        return None
    vals = sorted({fmt.format(v) for v in df[col].dropna().unique()})
    return ", ".join(vals) if vals else None


def ours(df: pd.DataFrame) -> dict[str, str]:
    out: dict[str, str] = {}
    missing = "not in the rows"
    out["kernel"] = _values(df, "kernel") or missing
    cores = _values(df, "cpus", "{:g}")
    model = _values(df, "cpu_model")
    out["cores"] = f"{cores} ({model})" if cores and model else (cores or missing)
    disk = df[df["spill_device"].astype(str) == "disk"] if "spill_device" in df.columns else df
    lat_col = "cell_disk_read_latency_mean_us"       # older rows' ms column is upgraded on read
    if lat_col in disk.columns and disk[lat_col].notna().any():
        lat = disk[lat_col].dropna() / 1000.0
        dev = _values(disk, "disk_device") or "disk"
        out["spill device"] = (f"{dev}; mean read latency of a cell's disk reads {lat.median():.3f} ms "
                               f"(median over {len(lat)} cells; {lat.min():.3f}–{lat.max():.3f})")
    else:
        out["spill device"] = "no disk latency in the rows (RAM-device cells, or an older harness)"
    if "regime" in df.columns and (df["regime"].astype(str) == "hdd").any():
        iops = _values(df[df["regime"].astype(str) == "hdd"], "io_limit_iops", "{:g}")
        out["spill device"] += f"; regime hdd: the disk limited to {iops} IOPS from the measured run (its own cells)"
    out["vm.page-cluster"] = _values(df, "page_cluster", "{:g}") or missing
    out["memcached"] = "1.6.18 (memcached-ac)"
    if {"p_recordcount", "p_fieldcount", "p_fieldlength"} <= set(df.columns):
        rec = _values(df, "p_recordcount", "{:,.0f}")
        out["records × item"] = f"{rec} × {_values(df, 'p_fieldcount', '{:g}')} × {_values(df, 'p_fieldlength', '{:g}')} B"
    else:
        out["records × item"] = missing
    out["request distribution"] = _values(df, "p_requestdistribution") or missing
    threads = _values(df, "p_threads", "{:g}")
    mode = _values(df, "mode")
    out["driver"] = f"{mode or 'mode not in the rows'}, {threads or '?'} driver thread(s)"
    if "repetition" in df.columns:
        reps = df.groupby([c for c in ("approach", "workload", "zipf_theta", "mem_ratio") if c in df.columns]
                          )["repetition"].nunique()
        out["repetitions"] = f"{reps.min()}" if reps.min() == reps.max() else f"{reps.min()}–{reps.max()}"
    else:
        out["repetitions"] = missing
    return out


def deviations(df: pd.DataFrame) -> pd.DataFrame:
    o = ours(df)
    return pd.DataFrame([{"setting": k, "paper": PAPER[k], "ours": o[k], "expected effect": EFFECT[k]}
                         for k in PAPER])


def to_markdown(table: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) if v else "–" for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"
