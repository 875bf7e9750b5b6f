#!/usr/bin/env bash
# One libFuzzer run of a fuzz target (per policy for the protocol target) and
# a one-line summary each. Called by fuzz/Makefile (FZ, HERE in the
# environment); exits non-zero on any finding.
# Usage: run.sh TARGET POLICIES|- MODE COUNT MAXLEN [libFuzzer flags...]
#   MODE regress: every input in fuzz/regress/TARGET once (COUNT unused)
#   MODE time:    fuzz for COUNT seconds;  MODE runs: fuzz COUNT inputs
set -uo pipefail
target=$1 policies=$2 mode=$3 count=$4 maxlen=$5
shift 5
bin="$FZ/bin/fuzz_$target"
logs="$FZ/logs"; work="$FZ/work/$target"; art="$FZ/artifacts/$target"
mkdir -p "$logs" "$work" "$art"

# the protocol target: the server's memory at exit is not a leak report's business
[ "$target" = protocol ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
rc=0
for policy in $policies; do
    name=$target; [ "$policy" != "-" ] && name="$target/$policy"
    log="$logs/${name//[\/+]/-}-$mode.log"
    args=(-max_len="$maxlen" -artifact_prefix="$art/" -print_final_stats=1 "$@")
    case $mode in
    regress)
        mapfile -t inputs < <(find "$HERE/regress/$target" -type f ! -name 'README*' ! -name '.*' 2>/dev/null | sort)
        if [ "${#inputs[@]}" -eq 0 ]; then
            printf 'fuzz %-17s regress: no kept inputs\n' "$name"; continue
        fi
        args+=("${inputs[@]}") ;;
    # time (smoke): new inputs go to a throw-away directory, so the run starts
    # from the committed corpus only and lasts what it should (libFuzzer first
    # runs every input of its corpus directories, whatever -max_total_time says);
    # runs (long): they are kept in build/fuzz/work/TARGET for the next long run
    time) args+=(-max_total_time="$count" "$FZ/tmp/${name//[\/+]/-}.$$.corpus" "$HERE/corpus/$target") ;;
    runs) args+=(-runs="$count" "$work" "$HERE/corpus/$target") ;;
    *) echo "run.sh: unknown mode $mode" >&2; exit 2 ;;
    esac
    # the protocol target's socket and spill directory, one per run.sh process
    # (a second make of the same configuration once removed a running one's
    # socket: the directory names the PID); a dead run's are removed here
    base="$FZ/tmp/${name//[\/+]/-}"
    for d in "$base".*; do
        pid=${d#"$base".}; pid=${pid%.corpus}
        [ -e "$d" ] && [[ $pid =~ ^[0-9]+$ ]] && [ ! -d "/proc/$pid" ] && rm -rf "$d"
    done
    tmp="$base.$$"
    rm -rf "$tmp" "$tmp.corpus" && mkdir -p "$tmp" "$tmp.corpus"
    SECONDS=0
    # POLICY[+flush][+lz4|+zstd]: the protocol target's policy; +flush: flush_all
    # allowed; +lz4, +zstd: spilled values compressed (ac_compress)
    pol=${policy%%+*}; flush=0; opts=""
    case "+${policy#"$pol"}+" in *+flush+*) flush=1 ;; esac
    case "+${policy#"$pol"}+" in *+lz4+*) opts=ac_compress=lz4 ;; *+zstd+*) opts=ac_compress=zstd ;; esac
    TMPDIR=$tmp AC_FUZZ_POLICY=${pol/-/lru} AC_FUZZ_FLUSH=$flush AC_FUZZ_OPTS=$opts "$bin" "${args[@]}" >"$log" 2>&1
    st=$?
    rm -rf "$tmp" "$tmp.corpus"
    secs=$SECONDS
    if [ "$mode" = regress ]; then
        runs=${#inputs[@]}; eps=-
    else
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    fi
    extra=$(sed -n 's/^fuzz_protocol: end: //p' "$log" | tail -1)
    if [ $st -eq 0 ]; then res=ok; else res="FAILED (exit $st)"; rc=1; fi
    printf 'fuzz %-17s %-7s runs=%s exec/s=%s time=%ss %s%s\n' "$name" "$mode" "${runs:-?}" "${eps:-?}" \
        "$secs" "${extra:+$extra }" "$res"
    if [ $st -ne 0 ]; then
        echo "---- last lines of $log ----"
        grep -v '^#[0-9]' "$log" | tail -60
        ls -t "$art" 2>/dev/null | head -3 | sed "s|^|artifact: $art/|"
    fi
done
exit $rc
