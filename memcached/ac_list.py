#!/usr/bin/env python3
"""The sets of components the tests, the fuzz build and the upstream suite run,
taken from a memcached-ac binary's -o ac_list (policies/README.md, "-o ac_list").

Usage: ac_list.py BINARY SET, SET one of
  spill-policies    policies that spill and serve the network, over their default tier
  spill-pairs       every pair that spills and serves the network: "policy" for its
                    default tier, "policy+tier" for another
  upstream-policies none and the spill-policies: the policies memcached's own t/ suite runs under
  fuzz-configs      the fuzz protocol target's server configurations (fuzz/Makefile POLICIES):
                    each spill-policy once, the codecs none, lz4, zstd in turn, then the
                    first again with flush_all allowed (lru alru+lz4 logging+zstd lru+flush)
  json              the whole -o ac_list output
Prints the set space-separated on one line."""
from __future__ import annotations

import json
import subprocess
import sys


def ac_list(binary: str) -> dict:
    out = subprocess.run([binary, "-o", "ac_list"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return json.loads(out)


def spill_pairs(listing: dict) -> list[str]:
    network = {p["name"] for p in listing["policies"] if p["network"]}
    pairs = [p for p in listing["pairs"] if p["shape"] == "spill" and p["policy"] in network]
    return ([p["policy"] for p in pairs if p["default"]]
            + [f"{p['policy']}+{p['tier']}" for p in pairs if not p["default"]])


def spill_policies(listing: dict) -> list[str]:
    return [p for p in spill_pairs(listing) if "+" not in p]


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    listing = ac_list(sys.argv[1])
    what = sys.argv[2]
    if what == "json":
        print(json.dumps(listing, indent=1))
    elif what == "spill-policies":
        print(" ".join(spill_policies(listing)))
    elif what == "spill-pairs":
        print(" ".join(spill_pairs(listing)))
    elif what == "fuzz-configs":
        pols = spill_policies(listing)
        codecs = ["", "+lz4", "+zstd"]
        print(" ".join([p + codecs[i % 3] for i, p in enumerate(pols)] + [pols[0] + "+flush"] if pols else []))
    elif what == "upstream-policies":
        print(" ".join(["none"] + spill_policies(listing)))
    else:
        print(f"ac_list.py: unknown set {what!r}\n{__doc__}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
