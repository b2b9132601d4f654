#!/bin/bash
# Runs a fixed set of scenarios into OUT, for comparing two builds result for result:
#   validation/identity/run.sh /tmp/before     # on the old build
#   validation/identity/run.sh /tmp/after      # on the new build
#   .venv/bin/python validation/identity/compare.py /tmp/before /tmp/after
# The set: every examples/*.toml that runs without a live network, both `haslab bench` cases
# (b shortened to 2 s) with cwnd traces, a CUBIC + SACK dumbbell, and the enhancing-fig10 quick
# sweep (18 runs with CBR cross-traffic); and, in OUT/describe, the described plan (`sim.plan`, the
# same as `haslab describe --json`) of every examples/*.toml, both bench cases and a dumbbell whose
# flows mix congestion controls, named transports and [flow.tcp] options.
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
mkdir -p "$O/describe"
for f in "$E"/*.toml; do $H describe --json "$f" > "$O/describe/$(basename "$f" .toml).json"; done
"$REPO/.venv/bin/python" - "$O" <<'PY'
import json, sys
import haslab
from haslab import _core
from haslab.bench import CASES
o = sys.argv[1]
for k, c in CASES.items():
    json.dump(haslab.describe(c.scenario()), open(f"{o}/describe/bench_{k}.json", "w"), indent=1)
mixed = CASES["a"].scenario()
mixed["defaults"] = {"tcp": {"sack": True}}
mixed["flow"] = [
    {"name": "r{i}", "count": 4, "src": "left{i}", "dst": "right{i}", "app": "bulk"},
    {"name": "c{i}", "count": 3, "src": "left{i}", "dst": "right{i}", "app": "bulk",
     "cc": {"algorithm": "cubic", "beta": 0.8}, "tcp": {"min_rto": "300ms"}},
    {"name": "t{i}", "count": 3, "src": "left{i}", "dst": "right{i}", "app": "bulk",
     "transport": "cubic-standard"},
    {"name": "b0", "src": "left5", "dst": "right5", "app": "bulk", "cc": "bbr", "tcp": {"sack": False}},
    {"name": "w0", "src": "left6", "dst": "right6", "app": "bulk", "cc": "westwood+"},
]
json.dump(haslab.describe(mixed), open(f"{o}/describe/mixed.json", "w"), indent=1)
# the plan a Simulation holds (what Result.plan is), for the mixed dumbbell
sim = _core.Simulation(json.dumps(mixed), "json")
json.dump(sim.plan, open(f"{o}/describe/mixed_sim_plan.json", "w"), indent=1)
PY
$H reproduce enhancing-fig10 --quick -j 2 -o "$O/repro" -q >/dev/null
