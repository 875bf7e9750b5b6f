# The settings the fetch-path benchmarks share (io_bench.sh, park_bench.sh source this): where
# things are, the data set (RECORDS records of 10 x 100 B, OPS measured reads, REPS runs each), the
# memory (-m MEM = a quarter of the items, 1184-byte chunks; the group gets ROOM MiB more, so the
# spill file's pages mostly come from the device), the directory of the spill files (DIR).
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BIN=$TOP/build/bin/memcached-ac
ACG=$TOP/cgroups/acg
WL=$TOP/experiments/workloads/readonly
RECORDS=${RECORDS:-200000}
OPS=${OPS:-200000}
ROOM=${ROOM:-40}
REPS=${REPS:-3}
DIR=${DIR:-/var/tmp}
MEM=$(( (RECORDS * 1184 / 4 + 1048575) / 1048576 ))
[ -x "$BIN" ] || { echo "$(basename "$0"): $BIN is missing: run make -C memcached all" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$(basename "$0"): needs root (memory groups)" >&2; exit 1; }
