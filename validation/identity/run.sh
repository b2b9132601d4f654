#!/bin/bash
# Runs a fixed set of scenarios into OUT, for comparing two builds result for result:
#   validation/identity/run.sh /tmp/before     # on the old build
#   validation/identity/run.sh /tmp/after      # on the new build
#   .venv/bin/python validation/identity/compare.py /tmp/before /tmp/after
# The set: every examples/*.toml that runs without a live network, both `haslab bench` cases
# (b shortened to 2 s) with cwnd traces, a CUBIC + SACK dumbbell, and the enhancing-fig10 quick
# sweep (18 runs with CBR cross-traffic).
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
H=$REPO/.venv/bin/haslab
E=$REPO/examples
O=$1
[ -n "$O" ] || { echo "usage: $0 OUT" >&2; exit 2; }
rm -rf "$O"; mkdir -p "$O"
for s in dumbbell has mahimahi tcphas-home; do $H run "$E/$s.toml" -o "$O/$s" -q; done
"$REPO/.venv/bin/python" - "$O" <<'PY'
import json, sys
from haslab.bench import CASES
for k, c in CASES.items():
    s = c.scenario()
    s["trace"] = {"cwnd": True, "queues": [], "pcap": []}
    if k == "b":
        s["duration"] = "2s"
    json.dump(s, open(f"{sys.argv[1]}/bench_{k}.json", "w"))
PY
for k in a b; do $H run "$O/bench_$k.json" -o "$O/bench_$k" -q; done
$H run "$E/dumbbell.toml" -o "$O/dumbbell_cubic_sack" -q -s flow.0.cc=cubic -s flow.0.tcp.sack=true -s duration=20s
$H reproduce enhancing-fig10 --quick -j 2 -o "$O/repro" -q >/dev/null
