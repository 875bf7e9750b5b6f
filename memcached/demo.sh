#!/usr/bin/env bash
# A small real run: memcached-ac with ac_policy=lru and -m 16 gets 4x that much
# data, reads every key back byte-exact, and prints `stats anticache`.
# Usage: demo.sh MEMCACHED_AC
set -euo pipefail
bin=${1:?usage: demo.sh MEMCACHED_AC}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
work=$(mktemp -d /var/tmp/memcached-ac-demo.XXXXXX)
"$bin" -l 127.0.0.1 -p "$port" -U 0 -m 16 -t 2 -u root -o "ac_policy=lru,ac_spill_dir=$work/spill" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
python3 "$(dirname "$0")/demo.py" 127.0.0.1 "$port"
