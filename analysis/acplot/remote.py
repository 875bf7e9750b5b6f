"""RAM-DUR's claims about its tier below local memory (Sciascia & Pedone; the seed papers' 003)
checked against a run of experiments/remote.toml:

  R1  "network access is much faster than a local disk access": lru-remote (the records in two other
      servers' memory, loopback TCP) against lru (the same policy and book-keeping, the records in
      blocks on the disk): the mean read latency and the throughput, per slice, as margins over the
      repetitions (a read that hits RAM costs the same in both: the difference is the fetches').
  R2  the data fits the servers' aggregate memory, not any one server's: every lru-remote cell held
      more data than its cgroup limit, and lost, refused and missed nothing."""
from __future__ import annotations

import pandas as pd

from acplot.evidence import t_interval
from acplot.seeds import missing, state, verdict, wide

REMOTE, DISK = "lru-remote", "lru"


def claim_faster(df: pd.DataFrame) -> str:
    why = missing(df, (REMOTE, DISK), "remote")
    if why:
        return why
    states, parts = [], []
    for wl in sorted(df["workload"].unique()):
        for col, better_low, what in (("lat_read_mean_us", True, "mean read latency"),
                                      ("throughput_ops_s", False, "throughput")):
            w = wide(df, (REMOTE, DISK), wl, col)
            for theta, g in (w.groupby(level="zipf_theta") if not w.empty else []):
                ratio = g[DISK] / g[REMOTE] if better_low else g[REMOTE] / g[DISK]
                iv = t_interval(ratio)
                states.append(state(t_interval(ratio - 1)))
                span = f" [{iv.lo:.2f}, {iv.hi:.2f}]" if iv.n > 1 else ""
                parts.append(f"{wl} θ {theta:g} {what}: {iv.mean:.2f}x{span}")
    if not states:
        return "not testable with these results: no slice with both approaches in one repetition"
    return verdict(states, "lru-remote's advantage over lru on the disk (disk / remote latency, remote / disk "
                           "throughput): " + "; ".join(parts))


def claim_aggregate(df: pd.DataFrame) -> str:
    why = missing(df, (REMOTE,), "remote")
    if why:
        return why
    r = df[df["approach"] == REMOTE]
    over = (r["data_bytes"] > r["cgroup_limit_bytes"]).all()
    lost = int(r["ac_lost_items"].fillna(0).sum() + r["ac_refused_items"].fillna(0).sum() + r["misses"].fillna(0).sum())
    unread = int(r["ac_remote_unreadable"].fillna(0).sum()) if "ac_remote_unreadable" in r.columns else 0
    ok = over and lost == 0 and unread == 0
    detail = (f"{len(r)} cells; data {r['data_bytes'].min() / 2**20:.0f} MiB against cgroup limits of at most "
              f"{r['cgroup_limit_bytes'].max() / 2**20:.0f} MiB; lost + refused + missed {lost}, unreadable {unread}")
    return f"{'reproduced' if ok else 'contradicted'} ({detail})"


def check_claims(df: pd.DataFrame) -> pd.DataFrame:
    src = "Sciascia & Pedone (RAM-DUR)"
    rows = [(src, "network access (another server's memory) is much faster than a local disk access",
             claim_faster(df)),
            (src, "the data fits the servers' aggregate memory, not one server's: nothing lost",
             claim_aggregate(df))]
    return pd.DataFrame(rows, columns=["source", "claim", "verdict"])
