#!/usr/bin/env bash
# make -C ycsb-driver bench: generator draws/s, ycsb-trace requests/s for 10^7
# requests (median of 3), lz4 compression ratio of each valuekind; then (when
# the Makefile passes ZIPF_RATE, YCSB_JAR, JAVA_CLASSES, YCSB_MC, STOCK)
# ScrambledZipfian and truezipf keys/s against YCSB 0.17's Java
# ScrambledZipfian, and ycsb-mc against memcaslap on the same stock memcached.
set -euo pipefail
BENCH_GEN=$1
TRACE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ycsb-bench.XXXXXX")
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

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

median() {  # median of the arguments, and the sorted list
  python3 -c 'import statistics, sys; v = sorted(float(x) for x in sys.argv[1:]); print(statistics.median(v), " ".join(f"{x:.0f}" for x in v))' "$@"
}

if [ -n "${ZIPF_RATE:-}" ]; then
  N=10000000 ITEMS=1000000
  echo "== Zipf keys/s, theta 0.99, $ITEMS items, N = $N per run, all on CPU 1"
  echo "   (Java: YCSB 0.17 ScrambledZipfianGenerator.nextValue() after 3 untimed warm-up runs of N;"
  echo "    C: ScrambledZipfian, truezipf one key per call (the workload's), truezipf in blocks of 4096)"
  c=$(taskset -c 1 "$ZIPF_RATE" "$N" "$ITEMS" scrambled | awk '{print $2}')
  t=$(taskset -c 1 "$ZIPF_RATE" "$N" "$ITEMS" truezipf | awk '{print $2}')
  tf=$(taskset -c 1 "$ZIPF_RATE" "$N" "$ITEMS" truezipf-fill | awk '{print $2}')
  j=$(taskset -c 1 java -cp "$YCSB_JAR:$JAVA_CLASSES" ZipfBench "$N" "$ITEMS" | awk '{print $2}')
  read -r cm clist <<<"$(median $c)"
  read -r tm tlist <<<"$(median $t)"
  read -r fm flist <<<"$(median $tf)"
  read -r jm jlist <<<"$(median $j)"
  python3 -c "
cm, tm, fm, jm = $cm, $tm, $fm, $jm
print(f'YCSB (Java) ScrambledZipfian: {jm/1e6:6.1f} M keys/s (median of 3: $jlist)')
print(f'ours (C) ScrambledZipfian:    {cm/1e6:6.1f} M keys/s (median of 3: $clist)  {cm/jm:5.2f}x Java')
print(f'ours (C) truezipf, next():    {tm/1e6:6.1f} M keys/s (median of 3: $tlist)  {tm/jm:5.2f}x Java')
print(f'ours (C) truezipf, fill():    {fm/1e6:6.1f} M keys/s (median of 3: $flist)  {fm/jm:5.2f}x Java')"
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start_stock() {  # memcached-stock on CPU 0, one worker thread; sets PORT, SERVER_PID
  PORT=$(free_port)
  taskset -c 0 "$STOCK" -u root -t 1 -m 1024 -p "$PORT" -U 0 -l 127.0.0.1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), timeout=0.2).close()" \
      2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "memcached-stock did not start on port $PORT" >&2
  return 1
}

stop_stock() {
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

if [ -n "${YCSB_MC:-}" ] && command -v memcaslap >/dev/null; then
  # same shape for both clients: 32 connections from one thread, one request
  # outstanding per connection, 95 % get / 5 % set, 1000-byte values,
  # 23-byte keys (ycsb: "user" + up to 19 digits), 32 x 3k = 98304 keys
  # (memcaslap: -w 3k per concurrency; its gets go to keys it has set)
  OPS=300000 KEYS=98304
  WL="$HERE/../experiments/workloads/workloadb"
  MC_ARGS=(-P "$WL" -p recordcount=$KEYS -p fieldcount=1 -p fieldlength=1000
           -p requestdistribution=uniform -p readproportion=0.95 -p updateproportion=0.05)
  printf 'key\n23 23 1\nvalue\n1000 1000 1\ncmd\n0 0.05\n1 0.95\n' >"$WORK/memaslap.cfg"
  echo "== network, memcached-stock -t 1 on CPU 0; client on CPU 1; $OPS ops, 3 alternating runs"
  echo "   ycsb-mc --threads 1 --conns 32 --depth 1 (after an untimed load of $KEYS keys)"
  echo "   memcaslap -c 32 -T 1 -w 3k -x $OPS -F cfg (key 23 B, value 1000 B, set 0.05, get 0.95)"
  ms=() ym=()
  for i in 1 2 3; do
    start_stock
    out=$(taskset -c 1 memcaslap -s "127.0.0.1:$PORT" -F "$WORK/memaslap.cfg" -c 32 -T 1 \
            -x $OPS -w 3k 2>&1)
    stop_stock
    ms+=("$(sed -n 's/.*TPS: \([0-9]*\).*/\1/p' <<<"$out" | tail -1)")
    start_stock
    taskset -c 1 "$YCSB_MC" --server "127.0.0.1:$PORT" "${MC_ARGS[@]}" --phase load \
      --conns 32 --depth 1 >/dev/null
    r=$(taskset -c 1 "$YCSB_MC" --server "127.0.0.1:$PORT" "${MC_ARGS[@]}" -p operationcount=$OPS \
          --phase run --threads 1 --conns 32 --depth 1 |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["run"]; assert r["reads"]["miss"] == 0 and r["errors"]["total"] == 0, r; print(r["throughput_ops_per_s"])')
    stop_stock
    ym+=("$r")
  done
  read -r mm mlist <<<"$(median "${ms[@]}")"
  read -r yy ylist <<<"$(median "${ym[@]}")"
  python3 -c "
mm, yy = $mm, $yy
print(f'memcaslap: {mm/1e3:6.1f} k ops/s (median of 3: $mlist)')
print(f'ycsb-mc:   {yy/1e3:6.1f} k ops/s (median of 3: $ylist)')
print(f'ratio ycsb-mc/memcaslap: {yy/mm:.2f}')"
fi
