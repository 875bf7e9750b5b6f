"""The NVM paper's anti-caching claims (Arulraj, DeBrabant, Pavlo, Stonebraker, Zdonik, Dulloor; the
seed papers' 004, "NVM+DRAM architecture") checked against a run of experiments/nvm.toml:

  C1  "For the read-heavy workload, the anti-caching system has a 13X throughput advantage over the
      disk-oriented system when skew is high, but only a 1.3X throughput advantage when skew is low,
      with similar trends for the other workload mixes."
      Judged in two parts, per workload: (a) anti-caching (lru-nvm, 2x and 8x: the family mean)
      ahead of the disk-oriented design (ospaging-nvmfile) in every skew; (b) its advantage larger at
      the highest skew than at the lowest (the ratio at θ max minus the ratio at θ min). The ratios
      are quoted beside the paper's 13x and 1.3x.
  C2  "both systems do not exhibit a major change in performance with different NVM latencies":
      lru-nvm at 8x against 2x; "barely" taken as within 10 % (BARELY) in every slice. The
      disk-oriented side runs on a RAM block device with no latency added (no delay target on this
      machine), so its half is not testable.

A margin is computed per repetition (the `repetition` column: the same request seed for every
approach) and given with its 95 % Student t interval (acplot.evidence)."""
from __future__ import annotations

import pandas as pd

from acplot.evidence import HOLDS, FAILS, Interval, t_interval
from acplot.seeds import missing as _missing, state as _state, verdict as _verdict, wide as _wide

ANTI = ("lru-nvm", "lru-nvm{ac_nvm_latency=8x}")
DISK_ORIENTED = "ospaging-nvmfile"
BLOCKS_ON_RAM = "lru"
BARELY = 10.0            # % : "no major change"
PAPER_RATIOS = {"high": 13.0, "low": 1.3}


def ratios(df: pd.DataFrame, workload: str) -> pd.DataFrame:
    """Per θ: anti-caching's throughput (the family mean) over the disk-oriented design's, per
    repetition, as an interval."""
    wide = _wide(df, (*ANTI, DISK_ORIENTED), workload)
    if wide.empty:
        return pd.DataFrame(columns=["zipf_theta", "ratio"])
    r = wide[list(ANTI)].mean(axis=1) / wide[DISK_ORIENTED]
    out = [{"zipf_theta": theta, "ratio": t_interval(g)} for theta, g in r.groupby(level="zipf_theta")]
    return pd.DataFrame(out).sort_values("zipf_theta", ascending=False, ignore_index=True)


def claim_ahead(df: pd.DataFrame, workload: str) -> str:
    """C1 (a): anti-caching's throughput above the disk-oriented design's at every skew."""
    why = _missing(df, (*ANTI, DISK_ORIENTED))
    if why:
        return why
    rs = ratios(df, workload)
    if rs.empty:
        return f"not testable with these results: no {workload} θ with every approach in one repetition"
    states = [_state(Interval(iv.mean - 1, iv.lo - 1, iv.hi - 1, iv.n)) for iv in rs["ratio"]]
    detail = "; ".join(f"θ {t:g}: {iv.mean:.2f}x" + (f" [{iv.lo:.2f}, {iv.hi:.2f}]" if iv.n > 1 else "")
                       for t, iv in zip(rs["zipf_theta"], rs["ratio"]))
    return _verdict(states, f"{workload}, anti-caching / disk-oriented throughput: {detail}; "
                            f"paper {PAPER_RATIOS['high']:g}x at high skew, {PAPER_RATIOS['low']:g}x at low")


def claim_skew(df: pd.DataFrame, workload: str) -> str:
    """C1 (b): the advantage larger at the highest skew than at the lowest."""
    why = _missing(df, (*ANTI, DISK_ORIENTED))
    if why:
        return why
    wide = _wide(df, (*ANTI, DISK_ORIENTED), workload)
    thetas = sorted(set(wide.index.get_level_values("zipf_theta"))) if not wide.empty else []
    if len(thetas) < 2:
        return f"not testable with these results: {workload} needs two skews with every approach"
    r = wide[list(ANTI)].mean(axis=1) / wide[DISK_ORIENTED]
    hi = r.xs(thetas[-1], level="zipf_theta")
    lo = r.xs(thetas[0], level="zipf_theta")
    both = pd.concat([hi.rename("hi"), lo.rename("lo")], axis=1).dropna()
    iv = t_interval(both["hi"] - both["lo"])
    span = f" [{iv.lo:+.2f}, {iv.hi:+.2f}]" if iv.n > 1 else ""
    return _verdict([_state(iv)], f"{workload}: ratio at θ {thetas[-1]:g} {both['hi'].mean():.2f}x, at θ "
                                  f"{thetas[0]:g} {both['lo'].mean():.2f}x, difference {iv.mean:+.2f}{span}, "
                                  f"{iv.n} run{'s' if iv.n > 1 else ''}")


def claim_latency(df: pd.DataFrame) -> str:
    """C2 for anti-caching: 8x's throughput within BARELY % of 2x's in every slice."""
    why = _missing(df, ANTI)
    if why:
        return why
    states, parts = [], []
    for wl in sorted(df["workload"].unique()):
        wide = _wide(df, ANTI, wl)
        for theta, g in (wide.groupby(level="zipf_theta") if not wide.empty else []):
            iv = t_interval(100 * (g[ANTI[1]] / g[ANTI[0]] - 1))
            # holds when the whole interval lies within ±BARELY
            lo, hi = (iv.lo, iv.hi) if iv.n > 1 else (iv.mean, iv.mean)
            states.append(HOLDS if -BARELY < lo and hi < BARELY else
                          FAILS if hi < -BARELY or lo > BARELY else "not decided")
            parts.append(f"{wl} θ {theta:g}: {iv.mean:+.1f} %" + (f" [{iv.lo:+.1f}, {iv.hi:+.1f}]" if iv.n > 1 else ""))
    if not states:
        return "not testable with these results: no slice with both latencies in one repetition"
    return _verdict(states, f"lru-nvm 8x against 2x, within ±{BARELY:g} % counts as no major change: "
                            + "; ".join(parts) + "; the disk-oriented side: not testable (its device has no"
                            " latency added)")


def check_claims(df: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: source, text, verdict."""
    src = "Arulraj et al. (NVM+DRAM)"
    rows = []
    for wl in ("readheavy", "readonly"):
        rows.append((src, f"{wl}: anti-caching's throughput above the disk-oriented design's at every skew",
                     claim_ahead(df, wl)))
        rows.append((src, f"{wl}: the advantage larger at high skew (13x) than at low skew (1.3x)",
                     claim_skew(df, wl)))
    rows.append((src, "NVM latency (2x against 8x DRAM) barely changes anti-caching's throughput",
                 claim_latency(df)))
    return pd.DataFrame(rows, columns=["source", "claim", "verdict"])

