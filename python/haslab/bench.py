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
from pathlib import Path


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


def scale_case(pairs: int, rate_bps: float, duration: str) -> Case:
    """The scale case: ``pairs`` NewReno bulk flows on a dumbbell of ``rate_bps`` (20 ms RTT,
    one-BDP queue, 1 Gbps access links), traces off."""
    rate = f"{rate_bps / 1e9:g}Gbps"
    title = f"{pairs:,} flows, {rate}, 20 ms RTT, {duration}"
    return Case(f"scale{pairs}", title, pairs, rate, rate_bps, 0.020, duration, "1Gbps")


def measure_scale(pairs: int, rate_bps: float, duration: str) -> dict:
    """Runs the scale case in this process: set-up time (building the simulation from the
    scenario text), run time, events/s and link transmissions/s of the run, peak RSS."""
    import resource

    import numpy  # noqa: F401

    from . import _core

    case = scale_case(pairs, rate_bps, duration)
    text = json.dumps(case.scenario())
    base = _rss_mib()
    t0 = time.perf_counter()
    sim = _core.Simulation(text, "json")
    t1 = time.perf_counter()
    rss_built = _rss_mib()
    sim.run_until(sim.duration_ns)
    s = json.loads(sim.finish()["summary"])
    t2 = time.perf_counter()
    maxrss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "case": case.key,
        "title": case.title,
        "flows": pairs,
        "setup_seconds": t1 - t0,
        "run_seconds": t2 - t1,
        "events": s["events"],
        "events_per_second": s["events"] / (t2 - t1),
        "link_transmissions": s["link_transmissions"],
        "link_transmissions_per_second": s["link_transmissions"] / (t2 - t1),
        "peak_rss_mib": maxrss_kib / 1024,
        "base_rss_mib": base,
        "built_rss_mib": rss_built,
        "bytes_per_flow_built": (rss_built - base) * 2**20 / pairs,
        "bottleneck_utilization": next(l["utilization"] for l in s["links"] if l["name"] == "r1->r2"),
    }


def run_scale_in_subprocess(pairs: int, rate_bps: float, duration: str) -> dict:
    """Runs a scale case in a fresh interpreter (its peak RSS is its own)."""
    proc = subprocess.run(
        [sys.executable, "-m", "haslab.bench", "scale", str(pairs), repr(rate_bps), duration],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"scale case {pairs} failed (exit {proc.returncode}):\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_scenario_core(path: str) -> dict:
    """Builds and runs a scenario file in this process: the core's time (no interpreter start-up,
    no imports but NumPy, no output files): building the simulation from the scenario's text,
    running it and collecting its results in Rust (`finish`); parsing the summary's JSON in
    Python comes after the clock stops."""
    import numpy  # noqa: F401

    from . import _core
    from .api import _source

    text, fmt, base_dir = _source(Path(path), None)
    t0 = time.perf_counter()
    sim = _core.Simulation(text, fmt, None, False, base_dir)
    sim.run_until(sim.duration_ns)
    out = sim.finish()
    core_seconds = time.perf_counter() - t0
    s = json.loads(out["summary"])
    return {"core_seconds": core_seconds, "events": s["events"],
            "link_transmissions": s["link_transmissions"]}


def vs_ns3(reps: int = 5, binary: str | None = None) -> dict:
    """haslab against ns-3 3.37 on the crosscheck's dumbbell (8 NewReno bulk flows, 8 Mbps,
    100 ms RTT, 67-packet drop-tail queue, 60 s, seed 1; ``validation/ns3/dumbbell.cc``, the
    same TCP settings on both sides). Each repetition runs, one after the other so that a change
    of machine load hits them alike: ns-3's whole process, ``haslab run`` as a whole process
    (interpreter start-up, imports, summary.json and Parquet files), and haslab's core in a
    fresh process (building and running the simulation only). Returns the medians and ratios."""
    import statistics
    import tempfile

    from . import crosscheck as cc

    if binary is None:
        path, why = cc.ns3_status()
        if path is None:
            raise RuntimeError(f"ns-3 is not available: {why}")
        binary = str(path)
    label, haslab_cc, transport, ns3_cc, tcp, *params = cc.CCS[0]
    cell = cc.Cell(f"bulk8-{label}-nosack", 1, (cc.FlowDef("bulk"),) * 8, False, ns3_cc, haslab_cc, transport, tcp,
                   *params)
    times: dict[str, list[float]] = {"ns3": [], "haslab_run": [], "haslab_core": []}
    counts: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / "bulk8.json"
        scenario.write_text(json.dumps(cc.haslab_scenario(cell)))
        for i in range(reps):
            t0 = time.perf_counter()
            r = subprocess.run([binary, *cc.ns3_args(cell)], capture_output=True, text=True)
            times["ns3"].append(time.perf_counter() - t0)
            if r.returncode:
                raise RuntimeError(f"ns-3 failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
            out_dir = Path(tmp) / f"out{i}"
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "haslab", "run", str(scenario), "-o", str(out_dir), "-q"],
                               capture_output=True, text=True)
            times["haslab_run"].append(time.perf_counter() - t0)
            if r.returncode:
                raise RuntimeError(f"haslab run failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
            proc = subprocess.run([sys.executable, "-m", "haslab.bench", "core", str(scenario)],
                                  capture_output=True, text=True)
            if proc.returncode:
                raise RuntimeError(f"haslab core run failed: {proc.stderr.strip()[-500:]}")
            m = json.loads(proc.stdout.strip().splitlines()[-1])
            times["haslab_core"].append(m["core_seconds"])
            counts = {"events": m["events"], "link_transmissions": m["link_transmissions"]}
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "scenario": "8 NewReno flows, 8 Mbps, 100 ms RTT, 67-packet drop-tail queue, 60 s",
        "reps": reps,
        "ns3_seconds": med["ns3"],
        "haslab_run_seconds": med["haslab_run"],
        "haslab_core_seconds": med["haslab_core"],
        "ratio_ns3_to_haslab_run": med["ns3"] / med["haslab_run"],
        "ratio_ns3_to_haslab_core": med["ns3"] / med["haslab_core"],
        "all_seconds": times,
        **counts,
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
    if sys.argv[1] == "scale":
        print(json.dumps(measure_scale(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])))
    elif sys.argv[1] == "core":
        print(json.dumps(measure_scenario_core(sys.argv[2])))
    else:
        print(json.dumps(measure(sys.argv[1])))
