"""``haslab live run``: a scenario's bulk and chunk flows over the live testbed, with results in the
format of ``haslab run`` (summary.json with flows and links; cwnd, goodput and queue tables).

Measurement:
- goodput per flow from its receiver (bytes read by the application, per ``trace.goodput_window``;
  ``goodput_bps`` over the time from the connection's establishment to the end, as the simulator);
- cwnd, ssthresh and SRTT per flow from ``getsockopt(TCP_INFO)`` in the sender, every
  ``trace.cwnd_interval`` (at least 10 ms; 20 ms when the scenario says 0) — the same kernel
  struct ``ss -ti`` prints, read without a process per sample;
- the bottleneck queues' counters from ``tc -s qdisc`` (drops, packets and bytes sent), and their
  backlog sampled every ``trace.queue_interval`` (at least 50 ms) when the scenario traces them;
- the delay boxes' timing error (median, p99 lateness of their verdicts).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from . import netns
from .bpf import BpfCCs
from .config import LiveConfig, LiveUnsupported, from_plan
from .netns import LiveError, state_dir
from .testbed import Testbed, delaybox_path, host_addr, queue_stats

BASE_PORT = 5001
MIN_CWND_INTERVAL_NS = 10_000_000
DEFAULT_CWND_INTERVAL_NS = 20_000_000
MIN_QUEUE_INTERVAL_NS = 50_000_000


def missing_requirements(bpf: bool = False) -> list[str]:
    """What this machine lacks for live mode (empty: everything is there)."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (network namespaces, tc, iptables, BPF)")
    for tool in ("ip", "tc", "iptables", "ethtool"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            missing.append(tool)
    try:
        delaybox_path()
    except LiveError as e:
        missing.append(str(e))
    if bpf:
        if netns.bpftool() is None:
            missing.append("bpftool")
        if shutil.which("clang") is None:
            missing.append("clang")
        if not os.path.exists("/sys/kernel/btf/vmlinux"):
            missing.append("kernel BTF (/sys/kernel/btf/vmlinux)")
        if not os.path.exists("/usr/include/bpf/bpf_helpers.h"):
            missing.append("libbpf-dev (bpf/bpf_helpers.h)")
    return missing


def _spec_app(app: dict) -> dict:
    return {k: app.get(k) for k in ("start_ns", "stop_ns", "bytes", "chunk_bytes", "interval_ns")}


def run_live(
    scenario,
    *,
    out_dir: Optional[os.PathLike] = None,
    ladder_bps: Optional[list[int]] = None,
    keep: bool = False,
    rate_steps: Optional[list[tuple[int, int]]] = None,
    log=None,
):
    """Runs a scenario on the live testbed and returns a :class:`haslab.Result`.

    ``ladder_bps``: an encoding ladder (bit/s) given to every flow whose algorithm is
    ``haslab_tcphas`` through the BPF socket-storage map, as a HAS server would. ``keep`` leaves
    the testbed up afterwards (``haslab live down`` removes it). ``rate_steps``: (time_ns, bit/s)
    pairs: the left→right bottleneck rate changes to each at its time (``tc class change``).
    """
    from ..api import Result, validate
    from .config import reject_players

    reject_players(scenario)
    plan = validate(scenario)
    cfg = from_plan(plan)
    missing = missing_requirements(bpf=bool(cfg.bpf_ccs))
    if missing:
        raise LiveError("live mode needs: " + "; ".join(missing))
    say = log or (lambda msg: None)
    work = Path(out_dir) if out_dir is not None else None
    # the testbed first: bringing it up removes leftovers, BPF algorithms included
    tb = Testbed(cfg)
    with tb:
        with BpfCCs(cfg.bpf_ccs) as ccs:
            say(f"testbed up: {cfg.pairs} pairs, {cfg.forward.rate_bps / 1e6:g} Mbit/s, "
                f"RTT {(cfg.forward.delay_ns + cfg.reverse.delay_ns) / 1e6:g} ms"
                + (f"; BPF algorithms {', '.join(cfg.bpf_ccs)} registered" if cfg.bpf_ccs else ""))
            raw = _run_flows(tb, cfg, ladder_bps, say, sorted(rate_steps or []))
            tb.keep = ccs.keep = keep
    summary, tables = _results(cfg, raw, tb.delaybox_stats)
    result = Result(summary, tables, plan)
    if work is not None:
        result.save(work)
    return result


def _run_flows(tb: Testbed, cfg: LiveConfig, ladder_bps, say, rate_steps) -> dict:
    trace = cfg.plan["trace"]
    cwnd_every = trace["cwnd_interval_ns"] or DEFAULT_CWND_INTERVAL_NS
    cwnd_every = max(cwnd_every, MIN_CWND_INTERVAL_NS)
    window = trace["goodput_window_ns"]
    script = str(Path(__file__).with_name("bulk.py"))
    work = state_dir() / "flows"
    work.mkdir(parents=True, exist_ok=True)
    duration = cfg.duration_ns
    t0 = time.monotonic_ns() + 1_000_000_000 + 150_000_000 * len(cfg.flows)
    senders, receivers = {}, {}
    for f in cfg.flows:
        spec = {
            "t0_ns": t0,
            "end_ns": duration,
            "addr": host_addr(f.src),
            "port": BASE_PORT + f.index,
            "cc": f.kernel_cc,
            "mss": f.mss,
            "app": _spec_app(f.app),
            "sample_interval_ns": cwnd_every,
            "max_pacing_rate_Bps": f.max_pacing_rate_Bps,
            "linux_pacing": f.linux_pacing,
            "ladder_bps": ladder_bps if (ladder_bps and f.kernel_cc == "haslab_tcphas") else None,
            "out": str(work / f"send-{f.index}.json"),
        }
        senders[f.name] = subprocess.Popen(
            tb.exec_argv(f.src, [sys.executable, script, "send", json.dumps(spec)]),
            stdout=subprocess.PIPE, stderr=open(work / f"send-{f.index}.log", "w"), text=True,
            start_new_session=True,
        )
    for f in cfg.flows:
        p = senders[f.name]
        line = p.stdout.readline().strip()
        if line != "ready":
            raise LiveError(f"flow {f.name}: the sender did not start: {(work / f'send-{f.index}.log').read_text()[-2000:]}")
    for f in cfg.flows:
        spec = {
            "t0_ns": t0,
            "end_ns": duration,
            "server": host_addr(f.src),
            "port": BASE_PORT + f.index,
            "app": _spec_app(f.app),
            "window_ns": window,
            "out": str(work / f"recv-{f.index}.json"),
        }
        receivers[f.name] = subprocess.Popen(
            tb.exec_argv(f.dst, [sys.executable, script, "recv", json.dumps(spec)]),
            stdout=subprocess.DEVNULL, stderr=open(work / f"recv-{f.index}.log", "w"), text=True,
            start_new_session=True,
        )
    tb.procs.update({f"send-{k}": v for k, v in senders.items()})
    tb.procs.update({f"recv-{k}": v for k, v in receivers.items()})
    tb._write_state()
    if time.monotonic_ns() > t0:
        say("warning: the flows' processes started after the scenario's time 0")
    # sample the traced bottleneck queues while the flows run
    traced = [q for q in trace["queues"] if q in ("r1->r2", "r2->r1")]
    q_every = max(trace["queue_interval_ns"], MIN_QUEUE_INTERVAL_NS)
    qsamples: list[tuple[int, str, int, int]] = []
    end = t0 + duration
    next_q = t0
    last_say = 0
    applied: list[tuple[int, int]] = []
    while time.monotonic_ns() < end + 200_000_000:
        now = time.monotonic_ns()
        while rate_steps and now >= t0 + rate_steps[0][0]:
            at, bps = rate_steps.pop(0)
            tb.set_rate(bps)
            applied.append((now - t0, bps))
        if traced and t0 <= now <= end and now >= next_q:
            for name in traced:
                st = queue_stats("r1" if name == "r1->r2" else "r2")
                qsamples.append((now - t0, name, st["backlog_packets"], st["backlog_bytes"]))
            next_q += q_every
        if now - last_say > 5_000_000_000 and now > t0:
            say(f"running: {(now - t0) / 1e9:.0f}/{duration / 1e9:g} s")
            last_say = now
        if all(p.poll() is not None for p in list(senders.values()) + list(receivers.values())):
            break
        time.sleep(0.01)
    out: dict = {"flows": {}, "queue_samples": qsamples, "rate_changes": applied}
    for f in cfg.flows:
        for role, procs in (("send", senders), ("recv", receivers)):
            p = procs[f.name]
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        res = {}
        for role in ("send", "recv"):
            path = work / f"{role}-{f.index}.json"
            if not path.exists():
                logtext = (work / f"{role}-{f.index}.log").read_text()[-2000:]
                raise LiveError(f"flow {f.name}: the {role} side wrote no result: {logtext}")
            res[role] = json.loads(path.read_text())
        out["flows"][f.name] = res
    for router, name in (("r1", "r1->r2"), ("r2", "r2->r1")):
        out.setdefault("queues", {})[name] = queue_stats(router)
    return out


def _results(cfg: LiveConfig, raw: dict, delay_stats: dict) -> tuple[dict, dict]:
    import numpy as np

    duration = cfg.duration_ns
    flows = []
    cwnd_rows = []
    gp_rows = []
    for f in cfg.flows:
        snd = raw["flows"][f.name]["send"]
        rcv = raw["flows"][f.name]["recv"]
        info = snd.get("final", {})
        est = rcv.get("established_ns")
        done = rcv.get("eof_ns")
        got = rcv.get("bytes_received", 0)
        span = ((done or duration) - est) if est is not None else 0
        srtts = [s[3] for s in snd.get("samples", []) if s[3] > 0]
        flows.append({
            "name": f.name,
            "src": f.src,
            "dst": f.dst,
            "cc": next(p["cc"] for p in cfg.plan["flows"] if p["name"] == f.name),
            "kernel_cc": snd.get("cc_accepted", f.kernel_cc),
            "bytes_written": snd.get("bytes_written", 0),
            "bytes_sent": info.get("bytes_sent"),
            "bytes_acked": info.get("bytes_acked"),
            "bytes_received": got,
            "messages_received": 0,
            "segments_sent": info.get("data_segs_out"),
            "retransmitted_segments": info.get("total_retrans"),
            "rto_count": info.get("total_rto"),
            "fast_recovery_count": None,
            "tlp_probes": None,
            "tlp_recoveries": None,
            "spurious_rtos": None,
            "dsacks_received": info.get("dsack_dups"),
            "established_ns": est,
            "completed_ns": done,
            "goodput_bps": got * 8e9 / span if span > 0 else 0.0,
            "final_cwnd_pkts": info.get("snd_cwnd"),
            "final_ssthresh_pkts": info.get("snd_ssthresh"),
            "min_rtt_ns": info["min_rtt_us"] * 1000 if info.get("min_rtt_us") else None,
            "mean_srtt_ns": float(np.mean(srtts)) if srtts else None,
            "bpf_stats": snd.get("bpf_stats"),
            "error": snd.get("error") or rcv.get("error"),
        })
        for t, cwnd, ssth, srtt, _state, _pace in snd.get("samples", []):
            cwnd_rows.append((t, f.index, cwnd, ssth, srtt))
        for b, nbytes in rcv.get("bins", {}).items():
            end_t = (int(b) + 1) * cfg.plan["trace"]["goodput_window_ns"]
            gp_rows.append((end_t, f.index, nbytes))
    links = []
    bottleneck = {l["name"]: l for l in cfg.plan["links"] if l["link"] == "bottleneck"}
    qs_by_link: dict[str, list[int]] = {}
    for _t, name, pk, _b in raw["queue_samples"]:
        qs_by_link.setdefault(name, []).append(pk)
    for name, d in (("r1->r2", cfg.forward), ("r2->r1", cfg.reverse)):
        q = raw["queues"][name]
        box = delay_stats.get("fwd" if name == "r1->r2" else "rev", {})
        links.append({
            "name": name,
            "link": "bottleneck",
            "rate_bps": d.rate_bps,
            "delay_ns": bottleneck[name]["delay_ns"],
            "path_delay_ns": d.delay_ns,
            "tx_packets": q["tx_packets"],
            "tx_bytes": q["tx_bytes"],
            "utilization": q["tx_bytes"] * 8e9 / (d.rate_bps * duration) if duration else 0.0,
            "enqueued_packets": q["tx_packets"] + q["dropped_packets"],
            "dropped_packets": q["dropped_packets"],
            "dropped_bytes": None,
            "lost_packets": box.get("dropped_loss", 0),
            "max_queue_packets": max(qs_by_link.get(name, [0])),
            "max_queue_bytes": None,
            "sojourn_mean_ns": None,
            "sojourn_p50_ns": None,
            "sojourn_p95_ns": None,
            "sojourn_p99_ns": None,
            "sojourn_max_ns": None,
            "delay_box": box or None,
        })
    link_names = [l["name"] for l in links]
    summary = {
        "seed": cfg.seed,
        "duration_ns": duration,
        "mode": "live",
        "events": None,
        "link_transmissions": sum(l["tx_packets"] for l in links),
        "flows": flows,
        "links": links,
        "live": {
            "kernel": platform.release(),
            "pairs": cfg.pairs,
            "notes": cfg.notes,
            "delay_box": {k: v.get("lateness_ns") for k, v in delay_stats.items()},
            "rate_changes": [{"time_ns": t, "rate_bps": b} for t, b in raw.get("rate_changes", [])],
        },
    }
    win = cfg.plan["trace"]["goodput_window_ns"]
    tables = {}
    if cwnd_rows:
        a = np.array(sorted(cwnd_rows), dtype=np.int64)
        tables["cwnd"] = {
            "time_ns": a[:, 0].astype(np.uint64),
            "flow": a[:, 1].astype(np.uint32),
            "cwnd_pkts": a[:, 2].astype(np.uint32),
            "ssthresh_pkts": np.minimum(a[:, 3], 2**32 - 1).astype(np.uint32),
            "srtt_ns": a[:, 4].astype(np.uint64),
        }
    if gp_rows:
        a = np.array(sorted(gp_rows), dtype=np.int64)
        tables["goodput"] = {
            "time_ns": a[:, 0].astype(np.uint64),
            "flow": a[:, 1].astype(np.uint32),
            "bytes": a[:, 2].astype(np.uint64),
            "goodput_bps": a[:, 2].astype(np.float64) * 8e9 / win,
        }
    if raw["queue_samples"]:
        rows = sorted(raw["queue_samples"])
        tables["queue"] = {
            "time_ns": np.array([r[0] for r in rows], dtype=np.uint64),
            "link": np.array([link_names.index(r[1]) for r in rows], dtype=np.uint32),
            "packets": np.array([r[2] for r in rows], dtype=np.uint32),
            "bytes": np.array([r[3] for r in rows], dtype=np.uint64),
        }
    return summary, tables


__all__ = ["LiveUnsupported", "missing_requirements", "run_live"]
