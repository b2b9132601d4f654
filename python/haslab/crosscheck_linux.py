"""haslab's TCP measured against the machine's own Linux TCP (``haslab crosscheck linux``).

The same dumbbell cells as the ns-3 crosscheck (python/haslab/crosscheck.py), bulk flows with
NewReno and CUBIC, run once in the simulator and once in live mode (python/haslab/live: network
namespaces, an HTB + drop-tail bottleneck, the NFQUEUE delay box; docs/live.md) on the kernel's
``reno`` and ``cubic``. The scenario is Linux's own configuration, which live mode reproduces
on the kernel: MSS 1448, IW 10, timestamps, delayed ACKs (40 ms), min RTO 200 ms with Linux's
RTO formula, PRR, with SACK also RACK-TLP (on by default in Linux), and the congestion
control's samples as ``tcp_clean_rtx_queue`` gives them (``ca_sample = "linux"``). Live runs
take real time and use the one testbed, so they run one after the other; each cell has one seed
(a real kernel is not deterministic: the seed is not what varies).

Queue delay is compared as a time average here (the live router samples its queue occupancy;
the simulator's queue trace is averaged over time the same way), not per packet.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Callable, Optional

from . import crosscheck as xc
from . import crosscheck_report as xr

KNOWN_FILE = Path(__file__).with_name("crosscheck_known_linux.toml")
DEFAULT_REPORT = "docs/fidelity-linux.md"
#: testbed object prefix (docs/live.md): not the default, so another live run is not disturbed
PREFIX = "haslabxc"

#: (label, haslab cc, kernel algorithm)
CCS = [("newreno", "newreno", "reno"), ("cubic", "cubic", "cubic")]
FLOW_COUNTS = [1, 2, 4]
QUICK = ["linux-bulk2-newreno-sack-s1", "linux-bulk2-cubic-sack-s1"]


def matrix(quick: bool = False, seeds=(1,)) -> list[xc.Cell]:
    """The cells, one per group and seed. A seed draws the flows' start times (as in the ns-3
    cross-check); the kernel run of a seed is one sample of a system that does not repeat
    itself, so a group judged on several seeds compares two distributions."""
    cells = []
    for label, cc, kernel in CCS:
        for n in FLOW_COUNTS:
            for sack in (True, False):
                group = f"linux-bulk{n}-{label}-{'sack' if sack else 'nosack'}"
                for seed in seeds:
                    cells.append(xc.Cell(group, seed, (xc.BULK,) * n, sack, kernel, cc))
    if quick:
        by = {c.name: c for c in cells}
        return [by[n] for n in QUICK]
    return cells


#: Linux's default net.ipv4.tcp_rmem (6.16+); the machine's own values are read when present
DEFAULT_TCP_RMEM = [4096, 131072, 33554432]
#: The receiver's skb->len / skb->truesize ratio (in 1/256) that this testbed's kernel measures
#: (tcp_measure_rcv_mss): the tcp_rcvbuf_grow tracepoint reports scaling_ratio=162 for every
#: flow of the live dumbbell (veth pairs, 1500-byte MTU). A property of the receiving path's
#: memory, not of TCP.
LIVE_SCALING_RATIO = 162
#: The testbed kernel's CONFIG_HZ (/proc/config.gz of the 6.18.44-fc kernels): its TCP timers
#: run on the timer wheel in jiffies of 4 ms, which the simulated side runs too
#: (`timer_clock = "linux"`, tcp/timer_clock.rs).
LIVE_HZ = 250


def tcp_rmem() -> list[int]:
    """This machine's net.ipv4.tcp_rmem (live mode's namespaces start from it), else Linux's
    default."""
    try:
        vals = [int(v) for v in Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()]
        return vals if len(vals) == 3 else DEFAULT_TCP_RMEM
    except (OSError, ValueError):
        return DEFAULT_TCP_RMEM


def scenario(cell: xc.Cell) -> dict:
    """The cell as a haslab scenario with Linux's own TCP settings (both sides run it),
    receive-buffer autotuning included."""
    s = xc.haslab_scenario(cell)
    for f in s["flow"]:
        f["tcp"] = {
            "mss": 1448,
            "initial_cwnd": 10,
            "timestamps": True,
            "delayed_ack": "linux",
            "delayed_ack_timeout": "40ms",
            "min_rto": "200ms",
            "rto_formula": "linux",
            "recovery": "prr",
            "ca_sample": "linux",
            "sack": cell.sack,
            "tlp": cell.sack,
            "pacing": "off",
            "rcvbuf": "linux",
            "timer_clock": "linux",
            "hz": LIVE_HZ,
            "tcp_rmem": tcp_rmem(),
            "scaling_ratio": LIVE_SCALING_RATIO,
        }
    s["trace"] = {"cwnd": False, "goodput_window": "1s", "queues": ["r1->r2"], "queue_interval": "1ms"}
    return s


def _time_mean_queue_delay_ns(res, rate_bps: int, duration_ns: int) -> float:
    """Time-weighted mean of the r1→r2 queue occupancy (bytes) over the run, as delay."""
    q = res.traces.get("queue")
    if q is None or not len(q):
        return 0.0
    q = q.sort_values("time_ns")
    t = q["time_ns"].to_numpy(dtype="float64")
    b = q["bytes"].to_numpy(dtype="float64")
    ends = list(t[1:]) + [float(duration_ns)]
    area = sum(bb * (e - s) for s, e, bb in zip(t, ends, b) if e > s)
    return area / duration_ns * 8e9 / rate_bps


def testbed_of(live: dict) -> dict:
    """How well a live run's testbed kept time, from its summary's ``live`` part: the delay
    boxes' lateness (the larger of the two directions' median and 99th percentile, ms), how the
    CPUs spent the run (busy, softirq and steal shares, docs/live.md) and the 1-minute load at
    its end."""
    boxes = [b for b in (live.get("delay_box") or {}).values() if b]

    def worst(q: str) -> Optional[float]:
        vals = [b[q] for b in boxes if b.get(q) is not None]
        return max(vals) / 1e6 if vals else None

    load = live.get("load")
    return {"delay_box_p50_ms": worst("p50"), "delay_box_p99_ms": worst("p99"), "cpu": live.get("cpu"),
            "load1": load[0] if load else None}


def testbed_text(results: list[xc.CellResult]) -> list[str]:
    """The report's paragraph on the testbed's timing over the kernel runs of `results`."""
    beds = [r.ns3["testbed"] for r in results if r.ns3 and r.ns3.get("testbed")]
    if not beds:
        return ["The kernel side's file does not record how the testbed kept time (the delay boxes'",
                "lateness, the CPUs' steal share).", ""]

    def span(vals: list, fmt: str) -> str:
        vals = [v for v in vals if v is not None]
        if not vals:
            return "not recorded"
        return f"median {fmt.format(statistics.median(vals))}, at most {fmt.format(max(vals))}"

    cpus = [b["cpu"] for b in beds if b.get("cpu")]
    return [
        f"Testbed timing over the {len(beds)} kernel run{'' if len(beds) == 1 else 's'} (docs/live.md): the"
        " delay boxes' lateness",
        f"p50 {span([b.get('delay_box_p50_ms') for b in beds], '{:.2f} ms')}, p99",
        f"{span([b.get('delay_box_p99_ms') for b in beds], '{:.2f} ms')}; CPU steal",
        f"{span([c['steal'] * 100 for c in cpus], '{:.1f} %')}, busy",
        f"{span([c['busy'] * 100 for c in cpus], '{:.0f} %')}; load at the end of a run",
        f"{span([b.get('load1') for b in beds], '{:.2f}')}. A run starved of CPU (steal, load) shapes",
        "and delays its packets late, which shows as lost capacity and extra drops, not as TCP.",
        "",
    ]


def _measure(cell: xc.Cell, res, link_key: str) -> dict:
    duration = res.summary["duration_ns"]
    flows = xc.flows_of_result(res)
    link = next(l for l in res.summary["links"] if l["name"] == "r1->r2")
    if link_key == "live":
        delay = link.get("mean_queue_delay_ns") or 0.0
    else:
        delay = _time_mean_queue_delay_ns(res, link["rate_bps"], duration)
    out = {"metrics": xc.metrics_from_flows(cell, flows, link["dropped_packets"], delay), "flows": flows}
    if link_key == "live":
        out["testbed"] = testbed_of(res.summary.get("live") or {})
    return out


def run_sim(cell: xc.Cell) -> dict:
    from .api import run

    try:
        return _measure(cell, run(scenario(cell), pcap=False), "sim")
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def run_kernel(cell: xc.Cell, log: Optional[Callable[[str], None]] = None) -> dict:
    from .live.config import LiveUnsupported
    from .live.run import run_live

    try:
        res = run_live(scenario(cell), log=log)
    except LiveUnsupported as e:
        return {"skipped": f"live mode cannot reproduce it: {e}"}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    return _measure(cell, res, "live")


def live_status() -> Optional[str]:
    """None when live mode can run here, else why not."""
    if os.geteuid() != 0:
        return "live mode needs root (network namespaces, tc, iptables)"
    try:
        from .live.run import missing_requirements
    except Exception as e:  # pragma: no cover - an incomplete install
        return f"live mode unavailable: {e}"
    missing = missing_requirements()
    return "live mode needs: " + "; ".join(missing) if missing else None


def run_cells(cells: list[xc.Cell], known=None, on_result=None, log=None) -> list[xc.CellResult]:
    """Runs each cell in the simulator and on the kernel (one live run at a time)."""
    why = live_status()
    if why:
        raise xc.CrosscheckError(why)
    os.environ.setdefault("HASLAB_LIVE_PREFIX", PREFIX)
    known = xc.load_known(KNOWN_FILE) if known is None else known
    out = []
    for c in cells:
        sim = run_sim(c)
        kern = run_kernel(c, log=log)
        r = xc.compare(c, sim, kern, known)
        out.append(r)
        if on_result:
            on_result(r)
    return xc.mark_seed_spread(out)


def write_report(results: list[xc.CellResult], known, path, quick: bool = False, kernel: Optional[str] = None,
                 from_json: Optional[str] = None, resimulated: bool = False) -> None:
    """The report; `kernel`: the release of the kernel that gave the reference side (default this
    machine's); `from_json`/`resimulated`: the results were judged again from that `--json` file,
    with haslab's side simulated again (the reference side is the file's)."""
    seeds = sorted({r.cell.seed for r in results})
    cmd = "haslab crosscheck linux --report" + (" --quick" if quick else "")
    if len(seeds) > 1:
        cmd += f" --seeds {len(seeds)}"
    if from_json:
        cmd += f" --from-json {from_json}" + (" --resimulate" if resimulated else "")
    release = kernel or ("a kernel the file does not name" if from_json else os.uname().release)
    provenance = []
    if from_json:
        provenance = [
            "",
            f"The kernel side comes from the file of an earlier live run on {release}"
            + (", haslab's side was simulated again with the current code." if resimulated else "."),
        ]
    per_group: dict[str, int] = {}
    for r in results:
        per_group[r.cell.group] = per_group.get(r.cell.group, 0) + 1
    counts = sorted(set(per_group.values()))
    if counts == [1]:
        seeds_text = "one seed"
    elif len(counts) == 1:
        seeds_text = f"{counts[0]} seeds per group (a seed draws the flows' start times)"
    else:
        many = [g for g, n in per_group.items() if n > 1]
        seeds_text = (f"{max(counts)} seeds (a seed draws the flows' start times) in "
                      + ", ".join(f"`{g}`" for g in many) + "; one seed in the other groups")
    intro = [
        "# Fidelity: haslab's TCP against the Linux kernel (live mode)",
        "",
        f"Generated by `{cmd}` (root; live mode, docs/live.md). Do not edit by hand: change the",
        "code (`python/haslab/crosscheck_linux.py`) or the known differences",
        "(`python/haslab/crosscheck_known_linux.toml`), then regenerate.",
        *provenance,
        "",
        "## What is compared",
        "",
        "Each cell is one scenario run in the simulator and in live mode on a Linux kernel",
        f"({release}): the dumbbell of docs/fidelity.md (8 Mbps, 100 ms base RTT, 67-packet",
        "drop-tail queue, 60 s), 1, 2 or 4 bulk flows with NewReno (kernel `reno`) or CUBIC (kernel",
        f"`cubic`), SACK on or off, {seeds_text}. Both sides run Linux's own settings: MSS 1448, IW 10,",
        "timestamps, Linux's receiver ACK rules (quick-ACK credit, the two-segment rule, the",
        "adaptive delayed-ACK timer from 40 ms: `delayed_ack = \"linux\"`, docs/tcp.md),",
        "min RTO 200 ms with Linux's RTO formula, PRR,",
        "RACK-TLP with SACK (Linux's default), the congestion control's samples as the kernel gives",
        "them (`ca_sample = \"linux\"`: `pkts_acked` on every ACK with data outstanding, docs/tcp.md),",
        "and the receiver's buffer autotuning",
        f"(`rcvbuf = \"linux\"`, docs/tcp.md; `tcp_rmem` = {' '.join(map(str, tcp_rmem()))} on both",
        f"sides, `scaling_ratio` = {LIVE_SCALING_RATIO}, the value the kernel measures on this testbed).",
        "Queue delay is the time average of the bottleneck",
        "queue's occupancy on both sides (live mode samples it); the other metrics are those of",
        "docs/fidelity.md (live mode: the kernel's tcp_info `total_retrans` and `total_rto`, the",
        "receiver's byte counts, the router's qdisc drop counter).",
        "",
        "Tolerances (relative to the kernel): "
        + "; ".join(f"{k} {t.describe()}" for k, t in xc.TOLERANCES.items()) + ".",
        "",
        *testbed_text(results),
    ]
    xr.write_report(results, known, path, quick=quick, intro=intro,
                    known_file="python/haslab/crosscheck_known_linux.toml")
