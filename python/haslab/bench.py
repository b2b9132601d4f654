"""The two benchmark cases of ``haslab bench``.

Each case runs in a fresh Python process (``python -m haslab.bench CASE``) so that its peak
resident memory is its own; the child prints one JSON line with its measurements.
Traces are off (no cwnd samples, no queue samples, no pcap) so that the numbers measure the
simulator, not the recorders.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    flows: int
    rate: str
    rate_bps: float
    rtt_s: float
    duration: str
    access_rate: str

    def scenario(self) -> dict:
        """A dumbbell with one flow per host pair, RTT split as 2 × (access + bottleneck +
        access) with 1/10 of the one-way delay on each access link, and a one-BDP drop-tail
        bottleneck queue."""
        one_way_ms = self.rtt_s * 1e3 / 2
        access_ms = one_way_ms / 10
        bottleneck_ms = one_way_ms - 2 * access_ms
        bdp_bytes = int(self.rate_bps * self.rtt_s / 8)
        return {
            "seed": 1,
            "duration": self.duration,
            "dumbbell": {
                "pairs": self.flows,
                "bottleneck_rate": self.rate,
                "bottleneck_delay": f"{bottleneck_ms:g}ms",
                "bottleneck_queue": f"{bdp_bytes}B",
                "access_rate": self.access_rate,
                "access_delay": f"{access_ms:g}ms",
            },
            "flow": [
                {
                    "name": "f{i}",
                    "count": self.flows,
                    "src": "left{i}",
                    "dst": "right{i}",
                    "app": "bulk",
                    "cc": "newreno",
                }
            ],
            "trace": {"cwnd": False, "queues": [], "pcap": []},
        }


CASES = {
    "a": Case("a", "8 flows, 8 Mbps, 100 ms RTT, 60 s", 8, "8Mbps", 8e6, 0.100, "60s", "100Mbps"),
    "b": Case("b", "1000 flows, 10 Gbps, 20 ms RTT, 10 s", 1000, "10Gbps", 10e9, 0.020, "10s", "1Gbps"),
}


def _rss_mib() -> float:
    """Current resident set size of this process, MiB (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0


def measure(key: str) -> dict:
    """Runs one case in this process and returns its measurements.

    The simulator is driven through the binding directly (no pandas import), so that the
    process's peak memory is mostly the simulator's; ``base_rss_mib`` is what the process
    held before the scenario was built.
    """
    import resource

    import numpy  # noqa: F401  (finish() hands tables over as NumPy arrays: import it before timing)

    from . import _core

    case = CASES[key]
    text = json.dumps(case.scenario())
    base = _rss_mib()
    t0 = time.perf_counter()
    sim = _core.Simulation(text, "json")
    sim.run_until(sim.duration_ns)
    s = json.loads(sim.finish()["summary"])
    wall = time.perf_counter() - t0
    maxrss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "case": key,
        "title": case.title,
        "sim_seconds": s["duration_ns"] / 1e9,
        "wall_seconds": wall,
        "events": s["events"],
        "events_per_second": s["events"] / wall,
        "link_transmissions": s["link_transmissions"],
        "link_transmissions_per_second": s["link_transmissions"] / wall,
        "peak_rss_mib": maxrss_kib / 1024,
        "base_rss_mib": base,
        "goodput_mbps_total": sum(f["goodput_bps"] for f in s["flows"]) / 1e6,
        "bottleneck_utilization": next(l["utilization"] for l in s["links"] if l["name"] == "r1->r2"),
    }


def run_case_in_subprocess(key: str) -> dict:
    """Runs a case in a fresh interpreter and returns its measurements."""
    proc = subprocess.run(
        [sys.executable, "-m", "haslab.bench", key],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark case {key} failed (exit {proc.returncode}):\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
