"""The training run of the profile-guided build (tools/pgo-build): runs the simulator, through
whichever `haslab` is first on the path, over a spread of what it is used for, so that the
profile weighs every part of the core rather than one benchmark.

- every example scenario under examples/ that runs without live mode (players, traces,
  Mahimahi and Sabre inputs, the TcpHas paper's home network with its cross-traffic);
- every registered congestion control on a 4-pair dumbbell (20 s; four flows with SACK one
  way, four without the other way), and the Reno-style sender options of the ns-3 transports;
- 200 flows at 1 Gbps for 2 s (many connections, a long queue).

`haslab bench`'s own cases are not in it (its 8-flow case is the one `haslab bench --vs-ns3`
measures). Usage: python tools/pgo_train.py REPO
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import haslab
from haslab import _core
from haslab.bench import Case


def run_text(text: str, fmt: str, base_dir: Path | None = None) -> int:
    sim = _core.Simulation(text, fmt, None, False, str(base_dir) if base_dir else None)
    sim.run_until(sim.duration_ns)
    return json.loads(sim.finish()["summary"])["events"]


def dumbbell(flows: int, rate: str, rate_bps: float, rtt_s: float, duration: str) -> dict:
    return Case("train", "", flows, rate, rate_bps, rtt_s, duration, "100Mbps").scenario()


def main(repo: Path) -> None:
    print(f"training with {haslab.__file__}", flush=True)
    t0 = time.perf_counter()
    events = 0
    for path in sorted((repo / "examples").glob("*.toml")):
        if path.name.startswith("live-"):
            continue
        events += run_text(path.read_text(), "toml", path.parent)
    algorithms = [a["name"] for a in haslab.catalog()["algorithms"]]
    for cc in algorithms:
        spec = dumbbell(4, "8Mbps", 8e6, 0.060, "20s")
        with_sack = dict(spec["flow"][0], name="s{i}", cc=cc, tcp={"sack": True})
        without = dict(spec["flow"][0], name="n{i}", cc=cc, tcp={"sack": False}, src="right{i}", dst="left{i}")
        spec["flow"] = [with_sack, without]
        events += run_text(json.dumps(spec), "json")
    for transport in ("ns3-newreno", "ns3.17-westwood"):
        spec = dumbbell(4, "8Mbps", 8e6, 0.100, "20s")
        spec["flow"][0].update(cc="westwood+" if "westwood" in transport else "newreno",
                               transport=transport)
        events += run_text(json.dumps(spec), "json")
    events += run_text(json.dumps(dumbbell(200, "1Gbps", 1e9, 0.020, "2s")), "json")
    print(f"training: {events:,} events in {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
