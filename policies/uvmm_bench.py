"""The table of make -C policies bench-uvmm: CPU per page fault served by uvmm's fault thread, by
its check mode and by the kernel's swap-in (ospaging), from one run of experiments/uvmm-bench.toml.

CPU per fault = (CPU per read at M/D 1/4 - CPU per read at M/D 5/4, where nothing faults) x reads /
faults: what serving the faults added, per fault (medians of the repetitions). Faults = the major
faults inside the measured reads (request_major_faults: for uvmm its fetches, for ospaging the
kernel's swap-ins). Usage: uvmm_bench.py RUN_DIR"""
import statistics
import sys

import pandas as pd


def main(run_dir: str) -> None:
    d = pd.read_parquet(f"{run_dir}/cells.parquet")
    d["cpu_s"] = d["cpu_user_s"] + d["cpu_sys_s"]
    reads = d["reads_total"]
    d["cpu_us_per_read"] = d["cpu_s"] * 1e6 / reads
    d["threads"] = d["p_threads"] if "p_threads" in d else d["server_threads"]
    rows = []
    for (a, t), g in d.groupby(["approach", "threads"]):
        short, full = g[g.mem_ratio < 1], g[g.mem_ratio > 1]
        if short.empty or full.empty:
            continue
        base = statistics.median(full.cpu_us_per_read)
        faults = statistics.median(short.request_major_faults)
        per_read = statistics.median(short.cpu_us_per_read)
        n = statistics.median(reads[short.index])
        rows.append((a, t, statistics.median(short.throughput_ops_s), statistics.median(short.hit_rate),
                     faults, faults / statistics.median(short.run_duration_s), per_read, base,
                     (per_read - base) * n / faults if faults else float("nan")))
    print(f"{'approach':<12} {'threads':>7} {'ops/s':>9} {'hit rate':>8} {'faults':>8} {'faults/s':>9} "
          f"{'CPU µs/read':>11} {'in RAM':>7} {'CPU µs/fault':>12}")
    for r in rows:
        print(f"{r[0]:<12} {r[1]:>7} {r[2]:>9.0f} {r[3]:>8.4f} {r[4]:>8.0f} {r[5]:>9.0f} {r[6]:>11.2f} {r[7]:>7.2f} "
              f"{r[8]:>12.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
