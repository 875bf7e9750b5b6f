#!/usr/bin/env bash
# memcaslap soak of memcached-ac, policy lru, at 4x overcommit (`make soak`; not CI; root).
#
# memcaslap (libmemcached-tools, "memaslap") runs SOAK_MEMCASLAP_SECONDS (default 600) of
# get/set with data verification (--verify) against memcached-ac -m M (SOAK_MEMCASLAP_MEM_MIB,
# default 32), ac_policy=lru, inside a memory cgroup (cgroups/acg, limit M +
# SOAK_MEMCASLAP_ALLOWANCE_MIB, default 64, no swap). Then:
#   - memcaslap's counters: get_misses, verify_misses, verify_failed all 0, exit status 0;
#   - `stats anticache`: lost_items 0, every refused_* 0, io_errors 0, checksum_errors 0;
#   - the key space written reached 4x -m (keys held x 1088 bytes >= 4 x M MiB);
#   - the server exits 0 on SIGTERM and the group saw no OOM kill.
# Last line: `memcaslap lru 4x: <s>s <ops> ops, <n> verify failures, spilled N fetched N
# lost N refused N -> PASS|FAIL`; exit status 1 on FAIL, 2 if it could not run.
#
# How memcaslap's key space works, and the choices it forces:
#   - Each of its connections has a window of -w objects (keys of 64 bytes, values of 1024
#     here). A set takes the window's next object; once the window is full, a set "kicks out"
#     an old object and writes a NEW key. A get reads a random object already set in its
#     window and, for the --verify fraction, compares the value byte by byte.
#   - So every set writes a new key, and an anti-caching server keeps all of them: the data
#     grows by one object per set for the whole run. Unthrottled at memcaslap's default 10 %
#     sets (about 4000 sets/s here), 600 s would write 2.4 M keys, far past 4x and the evicted
#     table. memcaslap's -P (expected ops/s) throttles nothing in 1.1.4 (measured: -P 5k ran
#     at 68k-108k ops/s against stock memcached), so the number of sets is bounded instead:
#       1. fill: -x N1 operations at 10 % sets, N1 = 1.1 x window / 0.1, exactly: its window
#          (16 connections x w objects, w a multiple of 1024, together >= 4x -m) fills, and
#          it reads and verifies everything written so far while the data grows to ~4.7x
#          (about 40-80 s here, whatever SOAK_MEMCASLAP_SECONDS);
#       2. main: -t (the remaining seconds, at least 10) at a set share that writes one more
#          window if it runs at twice the fill's ops/s (it does run faster: its own keys are
#          recent, so more of its gets hit RAM; measured 2.2x in a 10 s main), at most the
#          fill's 10 % (0.5 % sets for 600 s): the server is at 4.7x or more throughout, and
#          it verifies its own keys, old and new, spilled or not.
#     Both runs' counters are checked and summed. The evicted table grows with the spilled
#     items (about 21 bytes each, charged against -m as it grows): no cap is set.
#   - --overwrite (rewrite existing keys instead) is not used: memcaslap 1.1.4 verifies an
#     overwritten object against the wrong offset of its value table; with --overwrite=0.5 it
#     reports thousands of verify_failed against stock memcached 1.6.18 as well (the
#     received value is the expected one shifted by one character).
#   - Why a cgroup for lru, which needs none to work (-m bounds its items and book-keeping):
#     over a long run it checks that the process does not grow past -m + allowance (RSS,
#     connection buffers, the spill files' page cache, which the group charges and
#     reclaims); an OOM kill there is a FAIL.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${MEMCACHED_AC_BIN:-$ROOT/build/bin/memcached-ac}
ACG=$ROOT/cgroups/acg
SECS=${SOAK_MEMCASLAP_SECONDS:-600}
MEM=${SOAK_MEMCASLAP_MEM_MIB:-32}
ALLOW=${SOAK_MEMCASLAP_ALLOWANCE_MIB:-64}
VERIFY=${SOAK_MEMCASLAP_VERIFY:-1.0}
CONNS=16 THREADS=2 KEY=64 VALUE=1024 OVERCOMMIT=4

die() { echo "memcaslap.sh: $*" >&2; exit 2; }
[[ $(id -u) == 0 ]] || die "needs root (memory cgroup)"
[[ -x $BIN ]] || die "$BIN is missing: run \`make all\` first"
command -v memcaslap >/dev/null || die "memcaslap is missing (apt-get install libmemcached-tools)"
[[ $SECS =~ ^[0-9]+$ && $SECS -ge 10 ]] || die "SOAK_MEMCASLAP_SECONDS must be a whole number >= 10, got '$SECS'"
[[ $MEM =~ ^[0-9]+$ && $MEM -ge 8 ]] || die "SOAK_MEMCASLAP_MEM_MIB must be a whole number >= 8, got '$MEM'"

# the window: 16 connections x w objects (w a multiple of 1024) >= 4 x -m of objects
OBJ=$((KEY + VALUE))
WANT=$(( (OVERCOMMIT * MEM * 1048576 + OBJ - 1) / OBJ ))
WIN_K=$(( (WANT + CONNS * 1024 - 1) / (CONNS * 1024) ))
WINDOW=$((CONNS * WIN_K * 1024))

TMP=$(mktemp -d /var/tmp/memcaslap-soak.XXXXXX) || die "mktemp failed"
ACG_PID=""
stop_server() {        # SIGTERM to acg, which forwards it to memcached-ac and removes the group
    [[ -n $ACG_PID ]] || return 0
    if kill -0 "$ACG_PID" 2>/dev/null; then
        kill -TERM "$ACG_PID" 2>/dev/null
        for _ in $(seq 300); do kill -0 "$ACG_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$ACG_PID" 2>/dev/null; then
            echo "memcaslap.sh: memcached-ac ignored SIGTERM for 30 s; acg kills it" >&2
            kill -TERM "$ACG_PID" 2>/dev/null        # a second SIGTERM: acg SIGKILLs the command
        fi
    fi
    wait "$ACG_PID" 2>/dev/null
    SERVER_RC=$?
    ACG_PID=""
}
SLAP_PID=""
cleanup() {
    if [[ -n $SLAP_PID ]] && kill -0 "$SLAP_PID" 2>/dev/null; then   # timeout(1) passes it on to memcaslap
        kill -TERM "$SLAP_PID" 2>/dev/null
        wait "$SLAP_PID" 2>/dev/null
    fi
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LIMIT=$((MEM + ALLOW))
echo "memcaslap.sh: memcached-ac -m $MEM ac_policy=lru in a cgroup of ${LIMIT}M (no swap); memcaslap" \
     "$SECS s, $CONNS connections x ${WIN_K}k objects of $OBJ bytes ($WINDOW keys," \
     "$(python3 -c "print(f'{$WINDOW * $OBJ / ($MEM * 1048576):.2f}')")x -m), verify $VERIFY"
"$ACG" run --name memcaslap-lru --memory "${LIMIT}M" --no-swap --json-out "$TMP/acg.json" -- \
    "$BIN" -U 0 -l 127.0.0.1 -p "$PORT" -m "$MEM" -u root -t 2 \
    -o "ac_policy=lru,ac_spill_dir=$TMP/spill" >"$TMP/server.log" 2>&1 &
ACG_PID=$!

# a `stats <sub>` reply as "name value" lines
mc_stats() {
    local fd line
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || return 1
    printf 'stats %s\r\n' "$1" >&"$fd"
    while IFS= read -r -t 30 line <&"$fd"; do
        line=${line%$'\r'}
        [[ $line == END ]] && break
        [[ $line == STAT\ * ]] && echo "${line#STAT }"
    done
    exec {fd}>&-
}

up=0
for _ in $(seq 150); do
    kill -0 "$ACG_PID" 2>/dev/null || break
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then up=1; break; fi
    sleep 0.1
done
if [[ $up != 1 ]]; then
    cat "$TMP/server.log" >&2
    die "memcached-ac did not start"
fi

# memcaslap -F: keys of 64 bytes, values of 1024, the set share $1
slap_cfg() {
    printf 'key\n%d %d 1\nvalue\n%d %d 1\ncmd\n0 %s\n1 %s\n' "$KEY" "$KEY" "$VALUE" "$VALUE" "$1" \
        "$(python3 -c "print(f'{1 - $1:.6f}')")" >"$TMP/memcaslap.cfg"
}
# one memcaslap run ($1: name, then its -t/-x option); its counters are added to the totals
# (a run that does not end within 3 x SECS + 600 s is stopped and counted as a failure)
RUN_S=0 OPS=0 GET_MISSES=0 VERIFY_MISSES=0 VERIFY_FAILED=0 SLAP_FAIL=()
slap() {
    local name=$1; shift
    # in the background, so that a signal to this script is handled at once (cleanup)
    timeout --kill-after=30 "$((3 * SECS + 600))" memcaslap -s "127.0.0.1:$PORT" -T "$THREADS" -c "$CONNS" \
        -w "${WIN_K}k" -F "$TMP/memcaslap.cfg" --verify="$VERIFY" "$@" >"$TMP/$name.out" 2>&1 &
    SLAP_PID=$!
    wait "$SLAP_PID"
    local rc=$? out=$TMP/$name.out
    SLAP_PID=""
    [[ $rc == 0 ]] ||
        SLAP_FAIL+=("memcaslap ($name) exited $rc$([[ $rc == 124 ]] && echo ': did not finish in time')")
    local c line
    line=$(grep -E "^Run time: [0-9.]+s Ops: [0-9]+ " "$out" | tail -1)
    if [[ -z $line ]]; then SLAP_FAIL+=("memcaslap ($name): no result"); tail -20 "$out" >&2; return; fi
    for c in get_misses verify_misses verify_failed; do
        grep -qE "^$c: [0-9]+$" "$out" || { SLAP_FAIL+=("memcaslap ($name): no $c"); return; }
    done
    LAST_S=$(sed -E 's/^Run time: ([0-9.]+)s.*/\1/' <<<"$line")
    LAST_TPS=$(sed -E 's/.* TPS: ([0-9]+) .*/\1/' <<<"$line")
    RUN_S=$(python3 -c "print(round($RUN_S + $LAST_S, 1))")
    OPS=$((OPS + $(sed -E 's/.* Ops: ([0-9]+) .*/\1/' <<<"$line")))
    GET_MISSES=$((GET_MISSES + $(grep -E "^get_misses: " "$out" | tail -1 | awk '{print $2}')))
    VERIFY_MISSES=$((VERIFY_MISSES + $(grep -E "^verify_misses: " "$out" | tail -1 | awk '{print $2}')))
    VERIFY_FAILED=$((VERIFY_FAILED + $(grep -E "^verify_failed: " "$out" | tail -1 | awk '{print $2}')))
    echo "memcaslap ($name): $(grep -E "^(cmd_get|cmd_set|get_misses|verify_misses|verify_failed):" "$out" |
        tail -5 | tr '\n' ' ')| $line"
}

slap_cfg 0.1
slap fill -x "$(( (11 * WINDOW + 9) / 10 * 10 ))"
if [[ ${#SLAP_FAIL[@]} == 0 ]]; then
    LEFT=$(python3 -c "print(max(10, round($SECS - $RUN_S)))")
    SET_PROP=$(python3 -c "print(f'{min(0.1, $WINDOW / (2 * $LAST_TPS * $LEFT)):.6f}')")
    echo "memcaslap (main): ${LEFT} s at set share $SET_PROP (the fill ran at $LAST_TPS ops/s)"
    slap_cfg "$SET_PROP"
    slap main -t "${LEFT}s"
fi

declare -A AC
while read -r k v; do AC[$k]=$v; done < <(mc_stats anticache)
stop_server
OOM=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("oom_kills", "?"))' \
    "$TMP/acg.json" 2>/dev/null || echo "?")
MEMUSE=$(python3 - "$TMP/acg.json" <<'EOF' 2>/dev/null || echo "cgroup: no report"
import json, sys
j = json.load(open(sys.argv[1]))
print(f"cgroup peak {j['peak_bytes'] >> 20} MiB (anon max {j['anon_bytes_max'] >> 20} MiB)")
EOF
)

fail=("${SLAP_FAIL[@]}")
VF=$(( ${VERIFY_FAILED:-0} + ${VERIFY_MISSES:-0} ))
[[ $VF == 0 ]] || fail+=("verify_failed ${VERIFY_FAILED} verify_misses ${VERIFY_MISSES}")
[[ ${GET_MISSES:-0} == 0 ]] || fail+=("get_misses $GET_MISSES")
if [[ -z ${AC[lost_items]:-} ]]; then
    fail+=("no stats anticache")
else
    for k in lost_items io_errors checksum_errors "${!AC[@]}"; do
        [[ $k == lost_items || $k == io_errors || $k == checksum_errors || $k == refused_* ]] || continue
        [[ ${AC[$k]} == 0 ]] || fail+=("$k ${AC[$k]}")
    done
    KEYS=$(( ${AC[resident_items]} + ${AC[stub_items]} ))
    X=$(python3 -c "print(f'{$KEYS * $OBJ / ($MEM * 1048576):.2f}')")
    python3 -c "import sys; sys.exit(0 if $KEYS * $OBJ >= $OVERCOMMIT * $MEM * 1048576 else 1)" ||
        fail+=("only ${X}x -m written ($KEYS keys)")
    echo "server: $KEYS keys held (${X}x -m), resident ${AC[resident_items]}, disk hits ${AC[disk_hits]}," \
         "mem hits ${AC[mem_hits]}, refused_items ${AC[refused_items]}; $MEMUSE of ${LIMIT} MiB, oom kills $OOM"
fi
[[ $SERVER_RC == 0 ]] || fail+=("memcached-ac (through acg) exited $SERVER_RC after SIGTERM")
[[ $OOM == 0 ]] || fail+=("oom_kills $OOM")
[[ ! -e $TMP/spill ]] || fail+=("spill directory left behind: $(ls "$TMP/spill" | head -5 | tr '\n' ' ')")
for f in "${fail[@]}"; do echo "FAIL: $f"; done
RESULT=PASS; [[ ${#fail[@]} == 0 ]] || RESULT=FAIL
echo "memcaslap lru ${OVERCOMMIT}x: ${RUN_S:-?}s ${OPS:-?} ops, $VF verify failures, spilled ${AC[spilled_items]:-?}" \
     "fetched ${AC[fetched_items]:-?} lost ${AC[lost_items]:-?} refused ${AC[refused_items]:-?} -> $RESULT"
[[ $RESULT == PASS ]]
