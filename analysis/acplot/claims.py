"""The claims of Zhang et al. (ICDE 2015) (and three of DeBrabant et al. (VLDB 2013)) checked against a run's rows. Each check returns
"reproduced", "contradicted (<our numbers>)" or "not testable with these results: <what is
missing>", computed from the data (claims the paper words about families or pairs of approaches
are judged as worded, with margins and intervals over the repetitions, by acplot.evidence: there
"not decided" and "regime-dependent" are verdicts too, and the strict per-pair check is kept as a
second view); a claim about data the rows do not carry (Fig 2's CPU counters,
lz4, UVMM, block-merge or block-size variants) says what is missing.

The paper's five approaches are our lru (H-Store's LRU), alru (Redis's aging LRU at 1 µs, 22 bits),
logging (Siberia), ospaging and effpaging; user-space = lru, alru, logging; kernel = ospaging,
effpaging. The variants (alru-hstore, alru-redis, ospaging-file, memcached) are drawn in the
figures but take part only in the claims that name them. A claim holds when it holds in every
(workload, θ, M/D) slice the run has; otherwise the slice farthest from it is quoted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from acplot.cells import SLICE, hit_rates, slice_means
from acplot.evidence import judge

PAPER = {"lru": "LRU", "alru": "ALRU", "logging": "Logging", "ospaging": "OS Paging", "effpaging": "Efficient OS Paging"}
USER = ("lru", "alru", "logging")
KERNEL = ("ospaging", "effpaging")
SHORTAGE = 0.25          # the paper's "shortage of memory": M/D 1/4
FIG2 = ("tracking_method", "instructions_overhead_pct", "l1i_overhead_pct", "l1d_overhead_pct", "time_overhead_pct")
REPRODUCED = "reproduced"


def contradicted(detail: str) -> str:
    return f"contradicted ({detail})"


def not_testable(why: str) -> str:
    return f"not testable with these results: {why}"


@dataclass(frozen=True)
class Claim:
    source: str
    text: str
    figure: str          # the figure (file stem) that shows it
    check: Callable[[pd.DataFrame], str]
    # what check reads: the run's cells over YCSB's values (one row per configuration:
    # acplot.runs.hit_rate_rows, ycsb_rows); "disk": those whose spill device was the disk (a claim
    # about throughput or latency); "values": every row, whatever its values (valuekind); "fig2":
    # the table of `acbench fig2`
    data: str = "cells"
    # the claim as the paper words it, with its evidence (acplot.evidence); None: `check` is both
    wording: Callable[[pd.DataFrame], str] | None = None


def _slice_name(key: tuple) -> str:
    wl, theta, ratio = key
    return f"{wl} θ={theta:g} M/D={ratio:g}"


def _values(df: pd.DataFrame, col: str) -> str:
    return ", ".join(f"{v:g}" for v in sorted(df[col].dropna().unique()))


def _present(table: pd.DataFrame, names: tuple[str, ...]) -> list[str]:
    return [a for a in names if a in table.columns]


def _pairwise(df: pd.DataFrame, value: str, better: tuple[str, ...], worse: tuple[str, ...],
              what: str, fmt: str) -> str:
    """Holds when in every slice the worst of `better` is above the best of `worse`."""
    table = slice_means(df, value)
    b, w = _present(table, better), _present(table, worse)
    if not b or not w:
        return not_testable(f"needs cells of {', '.join(better)} and of {', '.join(worse)}; "
                            f"this run has {', '.join(map(str, table.columns))}")
    rows = table[b + w].dropna(how="any")
    if rows.empty:
        return not_testable(f"no slice (workload, θ, M/D) with all of {', '.join(b + w)}")
    worst_gap, worst = None, None
    held = 0
    for key, r in rows.iterrows():
        lo, hi = r[b].idxmin(), r[w].idxmax()
        gap = r[lo] - r[hi]
        held += gap > 0
        if worst_gap is None or gap < worst_gap:
            worst_gap, worst = gap, (key, lo, r[lo], hi, r[hi])
    if held == len(rows):
        return REPRODUCED
    key, lo, vlo, hi, vhi = worst
    return contradicted(f"holds in {held} of {len(rows)} slices; {_slice_name(key)}: {what} of {lo} "
                        f"{fmt.format(vlo)} ≤ {hi} {fmt.format(vhi)}")


def _with_hit_rate(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(hit_rate=hit_rates(df))


def kernel_lower_hit_rate(df: pd.DataFrame) -> str:
    return _pairwise(_with_hit_rate(df), "hit_rate", USER, KERNEL, "hit rate", "{:.3f}")


def logging_highest_hit_rate(df: pd.DataFrame) -> str:
    others = tuple(a for a in PAPER if a != "logging")
    return _pairwise(_with_hit_rate(df), "hit_rate", ("logging",), others, "hit rate", "{:.3f}")


def _judge(df: pd.DataFrame, value: str, better: tuple[str, ...], worse: tuple[str, ...], how: str,
           relative: bool = False) -> str:
    """acplot.evidence.judge over the approaches of each side that the run has (a side with none
    is not testable)."""
    there = set(map(str, df["approach"].unique()))
    b, w = tuple(a for a in better if a in there), tuple(a for a in worse if a in there)
    if not b or not w:
        return not_testable(f"needs cells of {', '.join(better)} and of {', '.join(worse)}; "
                            f"this run has {', '.join(sorted(there))}")
    return judge(df, value, b, w, how, relative)


def kernel_lower_hit_rate_worded(df: pd.DataFrame) -> str:
    """The user-space family's mean hit rate above the kernel family's, per slice."""
    return _judge(_with_hit_rate(df), "hit_rate", USER, KERNEL, "family")


def logging_highest_hit_rate_worded(df: pd.DataFrame) -> str:
    return _judge(_with_hit_rate(df), "hit_rate", ("logging",), tuple(a for a in PAPER if a != "logging"), "every")


def kernel_win_shortage_worded(df: pd.DataFrame) -> str:
    """At M/D ≤ 1/4 the kernel family's mean throughput above the user-space family's (in %)."""
    short = df[df["mem_ratio"] <= SHORTAGE + 1e-9]
    if short.empty:
        return not_testable(f"no cell at a memory shortage (M/D ≤ {SHORTAGE:g}); this run has M/D "
                            f"{_values(df, 'mem_ratio')}")
    return _judge(short, "throughput_ops_s", KERNEL, USER, "family", relative=True)


def _pair_worded(better: str, worse: str, value: str = "throughput_ops_s") -> Callable[[pd.DataFrame], str]:
    def check(df: pd.DataFrame) -> str:
        d = _with_hit_rate(df) if value == "hit_rate" else df
        return _judge(d, value, (better,), (worse,), "every", relative=value != "hit_rate")
    check.__doc__ = f"{better} above {worse} ({value}), per slice, with intervals"
    return check


def lru_alru_degrade(df: pd.DataFrame) -> str:
    """Throughput (Fig 4) falls from the highest to the lowest θ at every M/D, and from the largest
    to the smallest M/D at every θ, for lru and alru."""
    thetas, ratios = sorted(df["zipf_theta"].unique()), sorted(df["mem_ratio"].unique())
    if len(thetas) < 2 or len(ratios) < 2:
        return not_testable(f"needs at least two θ and two M/D; this run has θ {_values(df, 'zipf_theta')}, "
                            f"M/D {_values(df, 'mem_ratio')}")
    table = slice_means(df, "throughput_ops_s")
    names = _present(table, ("lru", "alru"))
    if not names:
        return not_testable("no lru or alru cells")
    checks = []     # (ratio low/high, description)
    for a in names:
        s = table[a].dropna()
        for wl in s.index.get_level_values("workload").unique():
            w = s.xs(wl, level="workload")
            for ratio in ratios:
                hi, lo = w.get((thetas[-1], ratio)), w.get((thetas[0], ratio))
                if hi is not None and lo is not None:
                    checks.append((lo / hi, f"{a} {wl} M/D={ratio:g}: θ {thetas[0]:g} {lo:,.0f} vs "
                                            f"θ {thetas[-1]:g} {hi:,.0f} ops/s"))
            for theta in thetas:
                hi, lo = w.get((theta, ratios[-1])), w.get((theta, ratios[0]))
                if hi is not None and lo is not None:
                    checks.append((lo / hi, f"{a} {wl} θ={theta:g}: M/D {ratios[0]:g} {lo:,.0f} vs "
                                            f"M/D {ratios[-1]:g} {hi:,.0f} ops/s"))
    if not checks:
        return not_testable("lru/alru lack the corner cells (highest and lowest θ and M/D)")
    bad = [c for c in checks if c[0] >= 1]
    if not bad:
        return REPRODUCED
    worst = max(bad)
    return contradicted(f"throughput does not fall in {len(bad)} of {len(checks)} comparisons; {worst[1]}")


def kernel_win_shortage(df: pd.DataFrame) -> str:
    short = df[df["mem_ratio"] <= SHORTAGE + 1e-9]
    if short.empty:
        return not_testable(f"no cell at a memory shortage (M/D ≤ {SHORTAGE:g}); this run has M/D "
                            f"{_values(df, 'mem_ratio')}")
    table = slice_means(short, "throughput_ops_s")
    b, w = _present(table, KERNEL), _present(table, USER)
    if not b or not w:
        return not_testable("needs kernel (ospaging, effpaging) and user-space (lru, alru, logging) cells "
                            f"at M/D ≤ {SHORTAGE:g}")
    rows = table[b + w].dropna(how="any")
    if rows.empty:
        return not_testable(f"no slice at M/D ≤ {SHORTAGE:g} with all of {', '.join(b + w)}")
    held, worst = 0, None
    for key, r in rows.iterrows():
        k, u = r[b].idxmax(), r[w].idxmax()
        ratio = r[k] / r[u]
        held += ratio > 1
        if worst is None or ratio < worst[0]:
            worst = (ratio, key, k, r[k], u, r[u])
    if held == len(rows):
        return REPRODUCED
    _, key, k, vk, u, vu = worst
    return contradicted(f"holds in {held} of {len(rows)} slices; {_slice_name(key)}: best kernel {k} "
                        f"{vk:,.0f} ops/s ≤ best user-space {u} {vu:,.0f} ops/s")


def effpaging_beats_ospaging(df: pd.DataFrame) -> str:
    return _pairwise(df, "throughput_ops_s", ("effpaging",), ("ospaging",), "throughput", "{:,.0f} ops/s")


PAPER_THETA = 0.99                  # Fig 2's Zipf skew in the paper (acbench fig2 also runs 0.5)


def _fig2(df: pd.DataFrame, method: str, column: str) -> float | str:
    """The method's value of column in the Fig 2 table, or the not-testable verdict."""
    missing = [c for c in FIG2 if c not in df.columns]
    if missing:
        return not_testable(f"needs Fig 2's per-access CPU cost of each tracking method (the table of "
                            f"`acbench fig2`, ACBENCH_FIG2); the rows lack {', '.join(missing)}")
    sel = df["tracking_method"] == method
    if "zipf_theta" in df.columns and (df["zipf_theta"] == PAPER_THETA).any():
        sel &= df["zipf_theta"] == PAPER_THETA       # the paper's Fig 2 skew, not a mean over several
    rows = df[sel][column].dropna()
    if rows.empty:
        return not_testable(f"no Fig 2 row for tracking method {method!r}")
    return float(rows.mean())


def vma_over_80(df: pd.DataFrame) -> str:
    """Time per access measured natively (the fault's kernel part included)."""
    v = _fig2(df, "vma", "time_overhead_pct")
    if isinstance(v, str):
        return v
    return REPRODUCED if v > 80 else contradicted(f"VMA protection adds {v:.1f} % time per access")


def alru_l1i_90(df: pd.DataFrame) -> str:
    """The paper puts it down to the timer's context switches: kernel code, which a user-space cache
    simulator (callgrind, our source without hardware counters) does not see."""
    v = _fig2(df, "alru", "l1i_overhead_pct")
    if isinstance(v, str):
        return v
    if 80 <= v <= 100:
        return REPRODUCED
    source = str(df["counter_source"].iloc[0]) if "counter_source" in df.columns else ""
    if "callgrind" in source:
        return not_testable(f"ALRU adds {v:.1f} % L1I misses in user space; the misses the paper attributes to "
                            f"the timer's context switches are the kernel's, which callgrind's cache simulation "
                            f"does not see (no hardware counters here)")
    return contradicted(f"ALRU's share of L1I misses {v:.1f} %")


TRACKERS = ("lru", "alru", "logging")      # Fig 2's tuple-level tracking methods the claims compare


def _fig2_values(df: pd.DataFrame, column: str) -> dict[str, float] | str:
    out = {}
    for m in TRACKERS:
        v = _fig2(df, m, column)
        if isinstance(v, str):
            return v
        out[m] = v
    return out


def alru_light(df: pd.DataFrame) -> str:
    """§IV-B: "ALRU is quite light-weight in terms of both instructions used and L1 data cache misses":
    its instruction and L1D overheads the lowest of the tuple-level trackers (lru, alru, logging)."""
    out = []
    for col, what in (("instructions_overhead_pct", "instructions"), ("l1d_overhead_pct", "L1D misses")):
        v = _fig2_values(df, col)
        if isinstance(v, str):
            return v
        low = min(v, key=v.get)
        if low != "alru":
            out.append(f"{what}: {low} +{v[low]:.1f} % below alru +{v['alru']:.1f} %")
    return REPRODUCED if not out else contradicted("; ".join(out))


def lru_high_l1d(df: pd.DataFrame) -> str:
    """§IV-B: "LRU list update is likely to cause a high data cache miss rate": lru's L1D overhead the
    highest of the tuple-level trackers."""
    v = _fig2_values(df, "l1d_overhead_pct")
    if isinstance(v, str):
        return v
    top = max(v, key=v.get)
    if top == "lru":
        return REPRODUCED
    return contradicted(f"{top} +{v[top]:.1f} % L1D misses above lru +{v['lru']:.1f} %")


def logging_poor_throughput(df: pd.DataFrame) -> str:
    """§IV-F: logging "does not perform well in terms of throughput ... its tuple-level swapping": its
    throughput below lru's and alru's in every slice on the disk."""
    return _pairwise(df, "throughput_ops_s", ("lru", "alru"), ("logging",), "throughput", "{:,.0f} ops/s")


def logging_poor_throughput_worded(df: pd.DataFrame) -> str:
    return _judge(df, "throughput_ops_s", ("lru", "alru"), ("logging",), "every", relative=True)


NOT_MUCH_PP = 5.0     # "the hit rate is not improved much": effpaging at most this far above ospaging


def effpaging_not_much_better(df: pd.DataFrame) -> str:
    """§IV-C: "Even with a re-organization phase by users (i.e., Efficient OS Paging), the hit rate is
    not improved much": effpaging's hit rate at most NOT_MUCH_PP pp above ospaging's in every slice
    (the margin's interval, once cells are repeated)."""
    from acplot.evidence import margins
    t = margins(_with_hit_rate(df), "hit_rate", ("effpaging",), ("ospaging",), "every")
    if t.empty:
        return not_testable("needs effpaging and ospaging cells in the same slices")
    tops = [(iv.hi if iv.n > 1 else iv.mean, r) for iv, (_, r) in zip(t["margin"], t.iterrows())]
    bad = [(m, r) for m, r in tops if m > NOT_MUCH_PP]
    lo, hi = min(iv.mean for iv in t["margin"]), max(iv.mean for iv in t["margin"])
    span = f"effpaging − ospaging {lo:+.2f} to {hi:+.2f} pp over {len(t)} slices"
    if not bad:
        return f"{REPRODUCED} ({span}; at most +{NOT_MUCH_PP:g} pp in every slice)"
    m, r = max(bad, key=lambda x: x[0])
    return contradicted(f"{span}; {r['workload']} θ={r['zipf_theta']:g} M/D={r['mem_ratio']:g}: {m:+.2f} pp")


# the options that choose a codec: spilled records' (ac_compress) and uvmm's pages (ac_uvmm_compress)
COMPRESS_OPTIONS = ("ac_compress", "ac_uvmm_compress")


def _uncompressed_twin(name: str) -> str:
    """The approach that differs from `name` only in its codec option (lru-lz4 -> lru, uvmm-raw ->
    uvmm: the same policy and options but the codec, harness/acbench/approaches.py); `name` itself
    otherwise (a grid that set the compression another way compares rows of one approach name)."""
    try:
        from acbench.approaches import APPROACHES
    except ImportError:
        return name
    a = APPROACHES.get(name)
    key = next((k for k in COMPRESS_OPTIONS if a is not None and k in a.options), None)
    if key is None:
        return name
    plain = {k: v for k, v in a.options.items() if k != key}
    twins = [b.name for b in APPROACHES.values() if b.policy == a.policy and b.options == plain and b.pages == a.pages]
    return twins[0] if twins else name


def lz4_cuts_spill_io(df: pd.DataFrame) -> str:
    """Spill bytes written with lz4 at least 20 % below those of the same approach without it
    (lru-lz4 against lru, uvmm against uvmm-raw), in the same workload, θ, M/D and kind of values."""
    need = ("ac_compression", "ac_tier", "ac_bytes_written")
    missing = [c for c in need if c not in df.columns]
    if missing:
        return not_testable(f"no cell ran with lz4 compression (the rows lack {', '.join(missing)})")
    if "ac_uvmm_compress" in df.columns:   # uvmm's codec is its pages' (its records' column says none)
        df = df.assign(ac_compression=df["ac_uvmm_compress"].where(df["ac_uvmm_compress"].notna(),
                                                                   df["ac_compression"]))
    kinds = ["p_valuekind"] if "p_valuekind" in df.columns else []
    if kinds:   # a grid that leaves valuekind unset runs YCSB's values
        df = df.assign(p_valuekind=df["p_valuekind"].fillna("ycsb"))
    df = df.assign(pair=df["approach"].astype(str).map(_uncompressed_twin))
    keys = ["pair", "ac_tier", *SLICE, *kinds]
    t = df.pivot_table(index=keys, columns="ac_compression", values="ac_bytes_written", aggfunc="mean")
    if "lz4" not in t.columns or "none" not in t.columns or t[["lz4", "none"]].dropna().empty:
        return not_testable("no cell pair with and without lz4 (same approach, workload, θ, M/D)")
    pairs = t[["lz4", "none"]].dropna()
    cut = 1 - pairs["lz4"] / pairs["none"]
    if (cut > 0.2).all():
        return REPRODUCED

    def where(key: tuple) -> str:
        return f" ({key[0]} over {key[1]}, {key[-1]} values)" if kinds else ""

    def pct(v: float) -> str:   # a few bytes more with lz4 (records kept as they are) read 0.0, not -0.0
        return f"{round(100 * v, 1) + 0.0:.1f} %"
    worst = cut.idxmin()
    others = [f"{pct(v)}{where(k)}" for k, v in cut.drop(worst).items()]
    rest = f"; the other pairs: {', '.join(others)}" if others and kinds else ""
    return contradicted(f"smallest cut {pct(cut.min())}{where(worst)}{rest}")


def _uvmm_against(df: pd.DataFrame, value: str, others: tuple[str, ...], what: str, fmt: str) -> str:
    """uvmm's `value` above each of `others` in every slice where uvmm and at least one of them ran."""
    if "uvmm" not in set(df["approach"]):
        return not_testable("no cells of approach uvmm")
    table = slice_means(_with_hit_rate(df), value)
    there = [a for a in others if a in table.columns]
    table = table[["uvmm", *there]].dropna(subset=["uvmm"]) if there else pd.DataFrame()
    table = table.dropna(how="all", subset=there) if there else table
    if table.empty:
        return not_testable(f"no slice with uvmm and any of {', '.join(others)}")
    out, cases = [], 0
    for key, r in table.iterrows():
        for a in there:
            if pd.isna(r[a]):
                continue
            cases += 1
            if r[a] >= r["uvmm"]:
                out.append(f"{_slice_name(key)}: {a} {fmt.format(r[a])} ≥ uvmm {fmt.format(r['uvmm'])}")
    if not out:
        return REPRODUCED
    return contradicted(f"{what} not above in {len(out)} of {cases} comparisons; {out[0]}")


def uvmm_above_kernel_hit_rate(df: pd.DataFrame) -> str:
    """§VI-C: UVMM's user-space knowledge (access logging) gives it higher hit rates than the kernel's
    paging (ospaging, effpaging), slice by slice."""
    return _uvmm_against(df, "hit_rate", KERNEL, "hit rate", "{:.4f}")


def uvmm_above_user_throughput(df: pd.DataFrame) -> str:
    """§VI-C: UVMM's hardware translation and page-granular I/O give it higher throughput than the
    user-space approaches (lru, alru, logging), slice by slice."""
    return _uvmm_against(df, "throughput_ops_s", USER, "throughput", "{:,.0f} ops/s")


def uvmm_above_kernel_hit_rate_worded(df: pd.DataFrame) -> str:
    return _judge(_with_hit_rate(df), "hit_rate", ("uvmm",), KERNEL, "every")


def uvmm_above_user_throughput_worded(df: pd.DataFrame) -> str:
    return _judge(df, "throughput_ops_s", ("uvmm",), USER, "every", relative=True)


def uvmm_best(df: pd.DataFrame) -> str:
    if "uvmm" not in set(df["approach"]):
        return not_testable("no cells of approach uvmm")
    d = _with_hit_rate(df)
    out = []
    for value in ("hit_rate", "throughput_ops_s"):
        table = slice_means(d, value)
        table = table[_present(table, ("uvmm", *PAPER))].dropna(how="any")
        for key, r in table.iterrows():
            if r.idxmax() != "uvmm":
                out.append(f"{_slice_name(key)}: {value} of {r.idxmax()} {r.max():.4g} > uvmm {r['uvmm']:.4g}")
    return REPRODUCED if not out else contradicted(f"{len(out)} slice/metric(s) not best; {out[0]}")


# DeBrabant et al.'s (VLDB 2013) block claims compare lru with a variant that differs in one setting only
# (harness/acbench/approaches.py; experiments/blocks-paper.toml): block merge, and blocks of 4 MiB
# against lru's 1 MiB. Other approaches over blocks (alru-hstore, lru-lz4, ...) differ in more.
MERGE_PAIR = ("lru", "lru-block-merge")
BLOCK_PAIR = ("lru", "lru-4m")


def tuple_merge_beats_block(df: pd.DataFrame) -> str:
    """lru (tuple merge: a fetch brings back one item) above lru-block-merge (its whole block) in
    throughput, in every slice where both ran."""
    return _pairwise(df, "throughput_ops_s", MERGE_PAIR[:1], MERGE_PAIR[1:], "throughput", "{:,.0f} ops/s")


def larger_blocks_lower(df: pd.DataFrame) -> str:
    """lru with 1 MiB blocks above lru-4m in throughput, in every slice where both ran."""
    return _pairwise(df, "throughput_ops_s", BLOCK_PAIR[:1], BLOCK_PAIR[1:], "throughput", "{:,.0f} ops/s")


def alru_sampling_near_baseline(df: pd.DataFrame) -> str:
    """H-Store's aLRU (alru-hstore) within 7 % (DeBrabant et al., VLDB 2013: 2–7 %) of the throughput without anti-caching
    (memcached) where the data fits in memory (M/D ≥ 1)."""
    fits = df[df["mem_ratio"] >= 1]
    table = slice_means(fits, "throughput_ops_s") if not fits.empty else pd.DataFrame()
    if fits.empty or not {"alru-hstore", "memcached"} <= set(table.columns):
        return not_testable(f"needs alru-hstore and memcached cells with all data in memory (M/D ≥ 1); "
                            f"this run has M/D {_values(df, 'mem_ratio')}")
    pairs = table[["alru-hstore", "memcached"]].dropna()
    ratio = pairs["alru-hstore"] / pairs["memcached"]
    if (ratio >= 0.93).all():
        return REPRODUCED
    return contradicted(f"alru-hstore at {100 * ratio.min():.0f} % of memcached's throughput, "
                        f"{_slice_name(ratio.idxmin())}")


CLAIMS = (
    Claim("002 §IV-C, Fig 3", "Kernel approaches (OS Paging, Efficient OS Paging) have lower hit rates than "
          "user-space ones (LRU, ALRU, Logging)", "fig3-hitrate", kernel_lower_hit_rate,
          wording=kernel_lower_hit_rate_worded),
    Claim("002 §IV-C, Fig 3", "Logging has the highest hit rate", "fig3-hitrate", logging_highest_hit_rate,
          wording=logging_highest_hit_rate_worded),
    Claim("002 §IV-F, Fig 4", "LRU/ALRU throughput degrades as skew drops and memory shrinks", "fig4",
          lru_alru_degrade, "disk"),
    Claim("002 §IV-F, Fig 4", "Under memory shortage (M/D 1/4) kernel approaches win on throughput", "fig4",
          kernel_win_shortage, "disk", wording=kernel_win_shortage_worded),
    Claim("002 §IV-F, Fig 4", "Efficient OS paging beats OS paging (throughput)", "fig4", effpaging_beats_ospaging, "disk",
          wording=_pair_worded("effpaging", "ospaging")),
    Claim("002 §IV-B, Fig 2", "VMA protection tracking costs > 80 %", "fig2", vma_over_80, "fig2"),
    Claim("002 §IV-B, Fig 2", "ALRU accounts for ~90 % of L1I misses", "fig2", alru_l1i_90, "fig2"),
    Claim("002 §IV-B, Fig 2", "ALRU is light in instructions and L1D misses", "fig2", alru_light, "fig2"),
    Claim("002 §IV-B, Fig 2", "LRU list updates cause a high L1D miss rate", "fig2", lru_high_l1d, "fig2"),
    Claim("002 §IV-C, Fig 3", "Efficient OS paging's hit rate is not improved much over OS paging", "fig3-hitrate",
          effpaging_not_much_better),
    Claim("002 §IV-F, Fig 4", "Logging's throughput is poor (tuple-level swapping)", "fig4", logging_poor_throughput,
          "disk", wording=logging_poor_throughput_worded),
    Claim("002 §IV-E", "lz4 cuts spill I/O by > 20 %", "", lz4_cuts_spill_io, "values"),
    Claim("002 §VI", "UVMM is best overall (hit rate and throughput)", "fig3-hitrate, fig4", uvmm_best, "disk"),
    Claim("002 §VI-C", "UVMM's hit rate is above the kernel approaches'", "fig3-hitrate", uvmm_above_kernel_hit_rate,
          wording=uvmm_above_kernel_hit_rate_worded),
    Claim("002 §VI-C", "UVMM's throughput is above the user-space approaches'", "fig4", uvmm_above_user_throughput,
          "disk", wording=uvmm_above_user_throughput_worded),
    Claim("000 §5.1", "Tuple merge beats block merge (throughput)", "", tuple_merge_beats_block, "disk",
          wording=_pair_worded(*MERGE_PAIR)),
    Claim("000 §5.2", "Larger blocks lower throughput", "", larger_blocks_lower, "disk",
          wording=_pair_worded(*BLOCK_PAIR)),
    Claim("000 §5.4", "aLRU sampling is within a few % (≤ 7 %) of the throughput without anti-caching",
          "", alru_sampling_near_baseline, "disk"),
)
REQUIRED = ("approach", *SLICE, "hits", "disk_hits", "throughput_ops_s")


def check_claims(df: pd.DataFrame, fig2: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per claim: source, claim, verdict (as the paper words it, with its evidence), strict
    (the per-pair check: every approach of one side above every approach of the other in every
    slice; the same as verdict for claims without a worded check), figure. fig2: the table of
    `acbench fig2` (None: its claims are not testable)."""
    from acplot.runs import disk_rows, hit_rate_rows, require, ycsb_rows
    require(df, REQUIRED, "the reproduction report")
    f2 = fig2 if fig2 is not None else pd.DataFrame()
    disk, hits = ycsb_rows(disk_rows(df)), ycsb_rows(hit_rate_rows(df))
    rows = []
    for c in CLAIMS:
        if c.data == "disk" and disk.empty:
            verdict = strict = not_testable("every cell ran on the RAM device (spill_device = ram: hit rates "
                                            "only); throughput needs cells on the disk (e.g. "
                                            "experiments/fig4-paper.toml)")
        else:
            data = {"fig2": f2, "disk": disk, "values": df}.get(c.data, hits)
            strict = c.check(data)
            verdict = c.wording(data) if c.wording is not None else strict
        rows.append({"source": c.source, "claim": c.text, "verdict": verdict, "strict": strict, "figure": c.figure})
    return pd.DataFrame(rows)


def verdict_kind(verdict: str) -> str:
    """reproduced / contradicted / not decided / regime-dependent / not testable."""
    for kind in (REPRODUCED, "contradicted", "not decided", "regime-dependent", "not testable"):
        if verdict.startswith(kind):
            return kind
    raise ValueError(f"not a verdict: {verdict!r}")
