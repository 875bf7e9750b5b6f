"""The NVM paper's anti-caching claims (Arulraj, DeBrabant, Pavlo, Stonebraker, Zdonik, Dulloor; the
seed papers' 004, "NVM+DRAM architecture") checked against a run of experiments/nvm.toml:

  C1  "For the read-heavy workload, the anti-caching system has a 13X throughput advantage over the
      disk-oriented system when skew is high, but only a 1.3X throughput advantage when skew is low,
      with similar trends for the other workload mixes."
      Judged in two parts, per workload: (a) anti-caching ahead of the disk-oriented design in every
      skew; (b) its advantage larger at the highest skew than at the lowest (the ratio at θ max minus
      the ratio at θ min). The ratios are quoted beside the paper's 13x and 1.3x.
  C2  "both systems do not exhibit a major change in performance with different NVM latencies": each
      system at 8x against 2x; "barely" taken as within 10 % (BARELY) in every slice.

Both are judged under each of two ways of paying NVM's latency (MODELS), the two bounds of an
emulator that stalls on cache-line misses while the prefetcher streams the rest of a run:
  access  a run of contiguous lines pays one latency (tier nvm's default, ac_nvm_charge=access).
          The disk-oriented side's device gets no limit: a 4 KiB page read would pay one line
          latency more (0.15-1.1 µs at 2x-8x here), below the page fault's own cost, so both of its
          latencies are `ospaging-nvmfile` as it runs.
  line    every line pays (ac_nvm_charge=line); the disk-oriented side's RAM device is limited to
          64 bytes per line latency (`{device_latency=2x|8x}`, harness acbench/nvm.py).
The ratio of C1 is the mean over the two latencies of anti-caching over the disk-oriented design
at the same latency.

A margin is computed per repetition (the `repetition` column: the same request seed for every
approach) and given with its 95 % Student t interval (acplot.evidence)."""
from __future__ import annotations

import pandas as pd

from acplot.evidence import HOLDS, FAILS, Interval, t_interval
from acplot.seeds import missing as _missing, state as _state, verdict as _verdict, wide as _wide

LATENCIES = ("2x", "8x")
# model -> system -> the approach at each of LATENCIES
MODELS = {
    "access": {"anti-caching": ("lru-nvm", "lru-nvm{ac_nvm_latency=8x}"),
               "disk-oriented": ("ospaging-nvmfile", "ospaging-nvmfile")},
    "line": {"anti-caching": ("lru-nvm{ac_nvm_charge=line}", "lru-nvm{ac_nvm_latency=8x,ac_nvm_charge=line}"),
             "disk-oriented": ("ospaging-nvmfile{device_latency=2x}", "ospaging-nvmfile{device_latency=8x}")},
}
ABOUT = {"access": "a run of lines pays one latency; the disk-oriented device unlimited",
         "line": "every line pays; the disk-oriented device at 64 B per line latency"}
BLOCKS_ON_RAM = "lru"
BARELY = 10.0            # % : "no major change"
PAPER_RATIOS = {"high": 13.0, "low": 1.3}


def approaches(model: str) -> tuple[str, ...]:
    """The model's approaches, each once."""
    m = MODELS[model]
    return tuple(dict.fromkeys((*m["anti-caching"], *m["disk-oriented"])))


def _ratio(df: pd.DataFrame, model: str, workload: str) -> pd.Series:
    """Per (θ, repetition): anti-caching over the disk-oriented design at the same latency, the mean
    over the latencies (empty when a repetition lacks one of the model's approaches)."""
    wide = _wide(df, approaches(model), workload)
    if wide.empty:
        return pd.Series(dtype=float)
    m = MODELS[model]
    per_latency = [wide[a] / wide[d] for a, d in zip(m["anti-caching"], m["disk-oriented"])]
    return sum(per_latency) / len(per_latency)


def ratios(df: pd.DataFrame, workload: str, model: str = "access") -> pd.DataFrame:
    """Per θ: anti-caching's throughput over the disk-oriented design's, per repetition, as an interval."""
    r = _ratio(df, model, workload)
    if r.empty:
        return pd.DataFrame(columns=["zipf_theta", "ratio"])
    out = [{"zipf_theta": theta, "ratio": t_interval(g)} for theta, g in r.groupby(level="zipf_theta")]
    return pd.DataFrame(out).sort_values("zipf_theta", ascending=False, ignore_index=True)


def claim_ahead(df: pd.DataFrame, workload: str, model: str = "access") -> str:
    """C1 (a): anti-caching's throughput above the disk-oriented design's at every skew."""
    why = _missing(df, approaches(model))
    if why:
        return why
    rs = ratios(df, workload, model)
    if rs.empty:
        return f"not testable with these results: no {workload} θ with every approach in one repetition"
    states = [_state(Interval(iv.mean - 1, iv.lo - 1, iv.hi - 1, iv.n)) for iv in rs["ratio"]]
    detail = "; ".join(f"θ {t:g}: {iv.mean:.2f}x" + (f" [{iv.lo:.2f}, {iv.hi:.2f}]" if iv.n > 1 else "")
                       for t, iv in zip(rs["zipf_theta"], rs["ratio"]))
    return _verdict(states, f"{workload}, anti-caching / disk-oriented throughput: {detail}; "
                            f"paper {PAPER_RATIOS['high']:g}x at high skew, {PAPER_RATIOS['low']:g}x at low")


def claim_skew(df: pd.DataFrame, workload: str, model: str = "access") -> str:
    """C1 (b): the advantage larger at the highest skew than at the lowest."""
    why = _missing(df, approaches(model))
    if why:
        return why
    r = _ratio(df, model, workload)
    thetas = sorted(set(r.index.get_level_values("zipf_theta"))) if not r.empty else []
    if len(thetas) < 2:
        return f"not testable with these results: {workload} needs two skews with every approach"
    hi = r.xs(thetas[-1], level="zipf_theta")
    lo = r.xs(thetas[0], level="zipf_theta")
    both = pd.concat([hi.rename("hi"), lo.rename("lo")], axis=1).dropna()
    iv = t_interval(both["hi"] - both["lo"])
    span = f" [{iv.lo:+.2f}, {iv.hi:+.2f}]" if iv.n > 1 else ""
    return _verdict([_state(iv)], f"{workload}: ratio at θ {thetas[-1]:g} {both['hi'].mean():.2f}x, at θ "
                                  f"{thetas[0]:g} {both['lo'].mean():.2f}x, difference {iv.mean:+.2f}{span}, "
                                  f"{iv.n} run{'s' if iv.n > 1 else ''}")


def claim_latency(df: pd.DataFrame, system: str, model: str = "access") -> str:
    """C2 for one system: 8x's throughput within BARELY % of 2x's in every slice."""
    pair = MODELS[model][system]
    if pair[0] == pair[1]:
        return (f"not testable under this model: the disk-oriented device has no latency added ({ABOUT[model]}); "
                "see the line model")
    why = _missing(df, pair)
    if why:
        return why
    states, parts = [], []
    for wl in sorted(df["workload"].unique()):
        wide = _wide(df, pair, wl)
        for theta, g in (wide.groupby(level="zipf_theta") if not wide.empty else []):
            iv = t_interval(100 * (g[pair[1]] / g[pair[0]] - 1))
            # holds when the whole interval lies within ±BARELY
            lo, hi = (iv.lo, iv.hi) if iv.n > 1 else (iv.mean, iv.mean)
            states.append(HOLDS if -BARELY < lo and hi < BARELY else
                          FAILS if hi < -BARELY or lo > BARELY else "not decided")
            parts.append(f"{wl} θ {theta:g}: {iv.mean:+.1f} %" + (f" [{iv.lo:+.1f}, {iv.hi:+.1f}]" if iv.n > 1 else ""))
    if not states:
        return "not testable with these results: no slice with both latencies in one repetition"
    return _verdict(states, f"{pair[1]} against {pair[0]}, within ±{BARELY:g} % counts as no major change: "
                    + "; ".join(parts))


def check_claims(df: pd.DataFrame) -> pd.DataFrame:
    """One row per claim and model: source, text, verdict."""
    src = "Arulraj et al. (NVM+DRAM)"
    rows = []
    for model in MODELS:
        how = f" [{model} model: {ABOUT[model]}]"
        for wl in ("readheavy", "readonly"):
            rows.append((src, f"{wl}: anti-caching's throughput above the disk-oriented design's at every skew{how}",
                         claim_ahead(df, wl, model)))
            rows.append((src, f"{wl}: the advantage larger at high skew (13x) than at low skew (1.3x){how}",
                         claim_skew(df, wl, model)))
        for system in ("anti-caching", "disk-oriented"):
            rows.append((src, f"NVM latency (2x against 8x DRAM) barely changes the {system} system's throughput{how}",
                         claim_latency(df, system, model)))
    return pd.DataFrame(rows, columns=["source", "claim", "verdict"])
