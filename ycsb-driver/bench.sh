#!/usr/bin/env bash
# make -C ycsb-driver bench: generator draws/s, ycsb-trace requests/s for 10^7
# requests (median of 3), lz4 compression ratio of each valuekind.
set -euo pipefail
BENCH_GEN=$1
TRACE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ycsb-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "== generators (one core)"
taskset -c 0 "$BENCH_GEN" "$WORK"

echo "== ycsb-trace, workloada, recordcount=10^6, 10^7 requests"
rates=()
for i in 1 2 3; do
  r=$(taskset -c 0 "$TRACE" -P "$HERE/../experiments/workloads/workloada" \
        -p recordcount=1000000 -p operationcount=10000000 -o "$WORK/t.actrace" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_per_s"])')
  rates+=("$r")
done
python3 - "${rates[@]}" <<'PY'
import statistics, sys
v = sorted(float(x) for x in sys.argv[1:])
print(f"ycsb-trace: {statistics.median(v)/1e6:.2f} M requests/s (median of 3: "
      + ", ".join(f"{x/1e6:.2f}" for x in v) + ")")
PY
rm -f "$WORK/t.actrace"

echo "== lz4 (1.9.4 CLI, default level) on 100 values of 1000 bytes per valuekind"
if command -v lz4 >/dev/null; then
  for kind in ycsb text zeros; do
    (cd "$WORK" && lz4 -q -m $kind.* && true)
    orig=$(cat "$WORK"/$kind.[0-9][0-9][0-9] | wc -c)
    per=$(cat "$WORK"/$kind.*.lz4 | wc -c)
    whole=$(cat "$WORK"/$kind.[0-9][0-9][0-9] | lz4 -q -c | wc -c)
    python3 -c "print(f'$kind: per-value ratio {$orig/$per:.2f} (frames of one value each), \
whole 100 KB ratio {$orig/$whole:.2f}')"
  done
else
  echo "lz4 CLI not installed (make deps installs it): skipped"
fi
