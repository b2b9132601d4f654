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
- the delay boxes' timing error (median, p99 lateness of their verdicts);
- how the machine's CPUs spent the run (``/proc/stat``: busy, softirq, and the time the hypervisor
  gave to other guests, "steal"): a testbed that did not get the CPU emulates its link badly.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from . import netns
from .bpf import BpfCCs
from .config import LiveConfig, LiveUnsupported, from_plan
from .netns import LiveError, state_dir
from .testbed import BN_IF, Testbed, delaybox_path, host_addr, queue_stats

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


#: /proc/stat's "cpu" columns, in order (proc(5)); guest time is already inside user and nice.
_CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_times(text: Optional[str] = None) -> Optional[dict]:
    """The machine's CPU time by kind (clock ticks summed over every CPU) from /proc/stat's first
    line; None where there is no /proc/stat."""
    if text is None:
        try:
            text = Path("/proc/stat").read_text()
        except OSError:
            return None
    first = text.split("\n", 1)[0].split()
    if not first or first[0] != "cpu":
        return None
    values = [int(v) for v in first[1:1 + len(_CPU_FIELDS)]]
    return dict(zip(_CPU_FIELDS, values + [0] * (len(_CPU_FIELDS) - len(values))))


def cpu_shares(before: Optional[dict], after: Optional[dict]) -> Optional[dict]:
    """The shares of the CPU time between two :func:`cpu_times` readings: ``busy`` (everything but
    idle and iowait, steal included), ``softirq`` (where the kernel forwards and shapes the
    testbed's packets) and ``steal`` (time the hypervisor ran something else while this machine
    had work). None without both readings or without elapsed time."""
    if not before or not after:
        return None
    d = {k: after[k] - before[k] for k in _CPU_FIELDS}
    total = sum(d.values())
    if total <= 0:
        return None
    return {
        "busy": (total - d["idle"] - d["iowait"]) / total,
        "softirq": d["softirq"] / total,
        "steal": d["steal"] / total,
    }


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
    dashjs: Optional[str] = None,
    dashjs_host: int = 0,
    dashjs_for: Optional[str] = None,
    wait_s: Optional[float] = None,
):
    """Runs a scenario on the live testbed and returns a :class:`haslab.Result`.

    ``ladder_bps``: an encoding ladder (bit/s) given to every flow whose algorithm is
    ``haslab_tcphas`` through the BPF socket-storage map, as a HAS server would. ``keep`` leaves
    the testbed up afterwards (``haslab live down`` removes it). ``rate_steps``: (time_ns, bit/s)
    pairs: the left→right bottleneck rate changes to each at its time (``tc class change``).
    ``wait_s``: how long to wait while another live run uses the machine (default
    $HASLAB_LIVE_WAIT_S or 0) before refusing with :class:`~haslab.live.netns.LiveBusy`.
    ``dashjs``: also play the video with real dash.js (ABR rule ``throughput``, ``bola`` or
    ``dynamic``) on ``right{dashjs_host}``. ``dashjs_for``: the name of one of the scenario's
    players whose ``abr`` is a dash.js port (``dashjs-throughput``, ``-bola``, ``-dynamic``):
    real dash.js plays in its place (its hosts, ladder, segment duration, start and congestion
    control, the same ABR rule, under the player's name), so that ``haslab compare`` pairs the
    simulator's port with the real player (see :func:`dashjs_in_place_of`).
    """
    from ..api import Result, validate
    from .config import reject_players

    base_override = None
    if dashjs_for is not None:
        if dashjs is not None:
            raise LiveUnsupported("--dashjs and --dashjs-for exclude each other "
                                  "(--dashjs-for takes the ABR rule from the player it replaces)")
        scenario, base_override, in_place = dashjs_in_place_of(scenario, dashjs_for)
        dashjs, dashjs_host = in_place["abr"], in_place["host"]
    reject_players(scenario)
    plan = validate(scenario, base_dir=base_override)
    scenario_text, scenario_fmt, base_dir = _scenario_source(scenario, base_override)
    cfg = from_plan(plan)
    missing = missing_requirements(bpf=bool(cfg.bpf_ccs))
    if dashjs is not None:
        from . import dashjs as dj

        if dashjs not in dj.ABR:
            raise LiveUnsupported(f"--dashjs {dashjs!r}: the dash.js ABR rules are {', '.join(dj.ABR)}")
        if not 0 <= dashjs_host < cfg.pairs:
            raise LiveUnsupported(f"dash.js host right{dashjs_host}: the dumbbell has {cfg.pairs} pairs")
        missing += dj.missing()
        cfg.dashjs = {"abr": dashjs, "host": dashjs_host}
        if dashjs_for is not None:
            cfg.dashjs.update(in_place)
    if missing:
        raise LiveError("live mode needs: " + "; ".join(missing))
    say = log or (lambda msg: None)
    work = Path(out_dir) if out_dir is not None else None
    # under the machine-wide lock (one testbed at a time: BPF names are global); the testbed
    # first: bringing it up removes leftovers, BPF algorithms included
    tb = Testbed(cfg)
    with netns.exclusive(wait_s), tb, BpfCCs(cfg.bpf_ccs) as ccs:
        say(f"testbed up: {cfg.pairs} pairs, {cfg.forward.rate_bps / 1e6:g} Mbit/s, "
            f"RTT {(cfg.forward.delay_ns + cfg.reverse.delay_ns) / 1e6:g} ms"
            + (f"; BPF algorithms {', '.join(cfg.bpf_ccs)} registered" if cfg.bpf_ccs else ""))
        if getattr(cfg, "dashjs", None):
            _prepare_dashjs(cfg, plan, say)
        raw = _run_flows(tb, cfg, ladder_bps, say, sorted(rate_steps or []), out_dir=work,
                         source=(scenario_text, scenario_fmt, base_dir))
        tb.keep = ccs.keep = keep
    summary, tables = _results(cfg, raw, tb.delaybox_stats)
    result = Result(summary, tables, plan)
    if work is not None:
        result.save(work)
    return result


#: the simulator's ports of dash.js's ABR rules, by the name of the rule in ``--dashjs``
DASHJS_PORTS = {"dashjs-throughput": "throughput", "dashjs-bola": "bola", "dashjs-dynamic": "dynamic"}


def dashjs_in_place_of(scenario, name: str) -> tuple[dict, Optional[str], dict]:
    """(the scenario without player ``name``, its base directory, what dash.js takes from the
    player): real dash.js replaces one of the scenario's players whose ``abr`` is a simulator
    port of a dash.js rule, so that the two can be compared on the same scenario.

    dash.js takes the player's client and server (``right{N}``/``left{N}``, one dumbbell pair),
    its video's ladder and segment duration (the media is encoded at those rates), its start
    time (Chromium is launched then; it needs about 2 s to start) and its congestion control (the
    origin's listener), the same ABR rule and the player's name (its summary row, its
    connections ``NAME.c{k}``). It runs with dash.js 4.7.4's own settings, so a player whose
    ``abr`` table sets parameters is refused: the comparison would no longer be of the same
    rule. What else differs (the browser's timers, the real media's sizes, the buffer targets
    of dash.js's defaults against the scenario's ``buffer``) is in docs/live.md."""
    import tomllib

    from ..api import ScenarioError, validate

    text, fmt, base_dir = _scenario_source(scenario)
    try:
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise ScenarioError(f"the scenario cannot be read: {e}") from None
    plan = validate(data, base_dir=base_dir)
    players = {p["name"]: p for p in plan.get("players", [])}
    if name not in players:
        raise LiveUnsupported(f"--dashjs-for {name!r}: the scenario has no such player "
                              f"(players: {', '.join(players) or 'none'})")
    p = players[name]
    rule = DASHJS_PORTS.get(p["abr"])
    if rule is None:
        raise LiveUnsupported(f"--dashjs-for {name!r}: its abr is {p['abr']!r}; real dash.js can stand in "
                              f"only for a port of one of its rules ({', '.join(DASHJS_PORTS)})")
    tables = data.get("player") or []
    mine = [t for t in tables if t.get("name") == name and "count" not in t]
    if len(mine) != 1:
        raise LiveUnsupported(f"--dashjs-for {name!r}: the player must have a [[player]] table of its own "
                              "(not one with count)")
    entry = mine[0]
    abr = entry.get("abr")
    if isinstance(abr, dict) and set(abr) - {"algorithm"}:
        extra = sorted(set(abr) - {"algorithm"})
        raise LiveUnsupported(f"--dashjs-for {name!r}: player.abr sets {', '.join(extra)}; real dash.js runs "
                              "with its own defaults (dash.js 4.7.4), so the port must too")
    m_c, m_s = re.fullmatch(r"right(\d+)", p["client"]), re.fullmatch(r"left(\d+)", p["server"])
    if not (m_c and m_s and m_c.group(1) == m_s.group(1)):
        raise LiveUnsupported(f"--dashjs-for {name!r}: dash.js runs on a dumbbell pair (client rightN, "
                              f"server leftN); the player has client {p['client']!r}, server {p['server']!r}")
    kernel_cc = next(q.kernel_cc for q in from_plan(plan).players if q.name == name)
    rest = [t for t in tables if t is not entry]
    if rest:
        data["player"] = rest
    else:
        data.pop("player", None)
    return data, base_dir, {
        "abr": rule, "host": int(m_c.group(1)), "name": name, "start_ns": int(p["start_ns"]),
        "ladder": list(p["bitrates_bps"]), "segment_ns": int(p["segment_ns"]), "kernel_cc": kernel_cc,
        "video_ns": int(p["segments"]) * int(p["segment_ns"]),
    }


def _scenario_source(scenario, base_dir: Optional[str] = None) -> tuple[str, str, Optional[str]]:
    """(text, format, base directory) of a scenario given as a path, TOML text or a dict, for the
    player process (it builds the same plan with ``haslab._core.LivePlayers``)."""
    if isinstance(scenario, dict):
        return json.dumps(scenario), "json", base_dir or os.getcwd()
    if isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and "\n" not in scenario
                                             and os.path.isfile(scenario)):
        path = Path(scenario)
        fmt = "json" if path.suffix.lower() == ".json" else "toml"
        from ..api import read_scenario_file

        return read_scenario_file(path), fmt, str(path.resolve().parent)
    return str(scenario), "toml", os.getcwd()


def _run_flows(tb: Testbed, cfg: LiveConfig, ladder_bps, say, rate_steps, out_dir=None, source=None) -> dict:
    trace = cfg.plan["trace"]
    cwnd_every = trace["cwnd_interval_ns"] or DEFAULT_CWND_INTERVAL_NS
    cwnd_every = max(cwnd_every, MIN_CWND_INTERVAL_NS)
    window = trace["goodput_window_ns"]
    script = str(Path(__file__).with_name("bulk.py"))
    work = state_dir() / "flows"
    work.mkdir(parents=True, exist_ok=True)
    duration = cfg.duration_ns
    t0 = time.monotonic_ns() + 1_000_000_000 + 150_000_000 * len(cfg.flows) + (3_000_000_000 if cfg.players else 0)
    pcap = _start_pcap(tb, out_dir, cfg)
    has_procs = _start_has(tb, cfg, t0, cwnd_every, work_dir=out_dir, state=state_dir() / "has", source=source)
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
    tb.procs.update({k: v for k, v in has_procs.items() if isinstance(v, subprocess.Popen)})
    tb._write_state()
    for direction in ("forward", "reverse"):
        events = [(a, b, p) for d, a, b, p in cfg.loss_events if d == direction]
        if events:
            tb.set_loss_schedule(direction, t0, events)
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
    cpu_at_t0 = cpu_at_end = None
    while time.monotonic_ns() < end + 200_000_000:
        now = time.monotonic_ns()
        if cpu_at_t0 is None and now >= t0:
            cpu_at_t0 = cpu_times()
        if cpu_at_end is None and now >= end:
            cpu_at_end = cpu_times()
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
        if not has_procs.get("chromium") and all(
                p.poll() is not None for p in list(senders.values()) + list(receivers.values())
                + ([has_procs["players"]] if "players" in has_procs else [])):
            break
        time.sleep(0.01)
    if cpu_at_end is None:
        cpu_at_end = cpu_times()
    out: dict = {"flows": {}, "queue_samples": qsamples, "rate_changes": applied,
                 "t0_wall_ns": t0 - time.monotonic_ns() + time.time_ns(),
                 "cpu": cpu_shares(cpu_at_t0, cpu_at_end)}
    if has_procs:
        out["has"] = _collect_has(tb, has_procs, state_dir() / "has")
    if pcap is not None:
        out["pcap"] = _stop_pcap(tb, pcap)
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


ORIGIN_SCRIPT = Path(__file__).with_name("origin.py")
PLAYER_SCRIPT = Path(__file__).with_name("player.py")
PCAP_SNAPLEN = 96


def _start_pcap(tb: Testbed, work, cfg: LiveConfig):
    """tcpdump on the router's bottleneck interface (r1: the video's direction after the
    bottleneck queue, and the ACKs coming back), headers only, into the run's directory."""
    tool = shutil.which("tcpdump") or ("/usr/bin/tcpdump" if os.path.exists("/usr/bin/tcpdump") else None)
    if tool is None or work is None:
        return None
    Path(work).mkdir(parents=True, exist_ok=True)
    path = Path(work).resolve() / "router.pcap"
    log = state_dir() / "tcpdump.log"
    p = subprocess.Popen(
        tb.exec_argv("r1", [tool, "-i", BN_IF, "-s", str(PCAP_SNAPLEN), "-n", "-B", "8192", "-Z", "root",
                            "-w", str(path), "tcp"]),
        stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True,
    )
    tb.procs["tcpdump"] = p
    deadline = time.monotonic() + 5
    while "listening on" not in log.read_text():
        if p.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    return {"proc": p, "path": str(path), "log": log}


def _terminate(p: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM a child we started, SIGKILL it after ``grace_s`` seconds, and reap it."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def _stop_pcap(tb: Testbed, pcap: dict) -> dict:
    _terminate(pcap["proc"], grace_s=5)
    tb.procs.pop("tcpdump", None)
    text = pcap["log"].read_text()
    out = {"file": Path(pcap["path"]).name, "interface": f"r1/{BN_IF}", "snaplen": PCAP_SNAPLEN}
    for line in text.splitlines():
        if "packets captured" in line:
            out["captured"] = int(line.split()[0])
        if "dropped by kernel" in line:
            out["dropped_by_kernel"] = int(line.split()[0])
    return out


def _start_has(tb: Testbed, cfg: LiveConfig, t0: int, sample_every: int, *, work_dir, state: Path, source) -> dict:
    """Starts the origin (every player's listener in its server's namespace) and the player
    process (every player in its client's namespace); returns their Popen objects."""
    dj = getattr(cfg, "dashjs", None)
    if not cfg.players and not dj:
        return {}
    from haslab._core import LivePlayers

    from .netns import ns_name

    text, fmt, base_dir = source
    state.mkdir(parents=True, exist_ok=True)
    lp = LivePlayers(text, fmt, base_dir)
    videos = {f"v{p.index}": lp.video(p.index) for p in cfg.players}
    duration = cfg.duration_ns
    listeners = [
        {"addr": host_addr(p.server), "port": p.port, "netns": ns_name(p.server), "cc": p.kernel_cc,
         "ladder_bps": videos[f"v{p.index}"]["bitrates_bps"] if p.kernel_cc == "haslab_tcphas" else None,
         "max_pacing_rate_Bps": p.max_pacing_rate_Bps, "linux_pacing": p.linux_pacing, "name": p.name}
        for p in cfg.players
    ]
    run_dir = Path(work_dir) if work_dir else state
    if dj:
        from . import dashjs as djm

        dj_port = 8000 + len(cfg.players)
        host = dj["host"]
        listeners.append({"addr": host_addr(f"left{host}"), "port": dj_port, "netns": ns_name(f"left{host}"),
                          "cc": dj["kernel_cc"], "name": "dashjs"})
        static = djm.site(state, dj["media"])
    ospec = {"videos": videos, "listeners": listeners,
             "static_dir": str(static) if dj else None, "metrics": str(run_dir / "dashjs.jsonl") if dj else None, "t0_ns": t0, "end_ns": duration + 2_000_000_000,
             "log": str((Path(work_dir) if work_dir else state) / "requests.jsonl"),
             "sample_interval_ns": sample_every, "out": str(state / "origin.json"),
             "limits": {"idle_timeout_s": 3600.0, "send_timeout_s": 120.0}}
    if work_dir:
        Path(work_dir).mkdir(parents=True, exist_ok=True)
        Path(ospec["log"]).unlink(missing_ok=True)
        if dj:
            Path(ospec["metrics"]).unlink(missing_ok=True)
    (state / "origin-spec.json").write_text(json.dumps(ospec))
    origin = subprocess.Popen([sys.executable, str(ORIGIN_SCRIPT), str(state / "origin-spec.json")],
                              stdout=subprocess.PIPE, stderr=open(state / "origin.log", "w"), text=True,
                              start_new_session=True)
    tb.procs["origin"] = origin
    tb._write_state()
    if origin.stdout.readline().strip() != "ready":
        origin.wait(timeout=5)
        raise LiveError(f"the origin did not start: {(state / 'origin.log').read_text()[-2000:]}")
    pspec = {
        "scenario": text, "fmt": fmt, "base_dir": base_dir, "t0_ns": t0, "end_ns": duration,
        "flow_base": len(cfg.flows), "out": str(state / "players.json"),
        "players": [
            {"netns": ns_name(p.client), "server": host_addr(p.server), "port": p.port, "vid": f"v{p.index}",
             "connection": p.connection, "start_ns": p.start_ns, "stop_ns": p.stop_ns, "path": list(p.path),
             "sizes_bytes": videos[f"v{p.index}"]["sizes_bytes"]}
            for p in cfg.players
        ],
    }
    procs = {"origin": origin}
    if dj:
        from . import dashjs as djm

        url = (f"http://{host_addr(f'left{host}')}:{dj_port}/static/player.html?"
               f"mpd=/static/media/manifest.mpd&abr={djm.ABR[dj['abr']]}")
        profile = state / "chromium-profile"
        profile.mkdir(exist_ok=True)
        # Chromium starts at the scenario's time 0, or at the start of the player it replaces
        # (its start-up takes about 2 s)
        delay = max((t0 + dj.get("start_ns", 0) - time.monotonic_ns()) / 1e9, 0)
        chrome = subprocess.Popen(
            tb.exec_argv(f"right{host}", ["sh", "-c", f"sleep {delay:.3f}; exec \"$@\"", "haslab/live/chromium",
                                          *djm.chromium_argv(url, profile)]),
            stdout=subprocess.DEVNULL, stderr=open(state / "chromium.log", "w"), start_new_session=True)
        tb.procs["chromium"] = chrome
        procs["chromium"] = chrome
        procs["dashjs_metrics"] = ospec["metrics"]
        tb._write_state()
    if not cfg.players:
        return procs
    (state / "players-spec.json").write_text(json.dumps(pspec))
    players = subprocess.Popen([sys.executable, str(PLAYER_SCRIPT), str(state / "players-spec.json")],
                               stdout=subprocess.PIPE, stderr=open(state / "players.log", "w"), text=True,
                               start_new_session=True)
    tb.procs["players"] = players
    tb._write_state()
    if players.stdout.readline().strip() != "ready":
        players.wait(timeout=5)
        raise LiveError(f"the players did not start: {(state / 'players.log').read_text()[-2000:]}")
    procs["players"] = players
    return procs


def _prepare_dashjs(cfg: LiveConfig, plan: dict, say) -> None:
    """The dash.js video (ffmpeg, cached) and the congestion control of its connection: in place
    of a player (``--dashjs-for``), that player's video (ladder, segment duration, length) and cc;
    otherwise the first player's ladder (or the TcpHas paper's), the scenario's length and the
    scenario's default cc (the first flow's or player's, else cubic, Linux's default)."""
    from . import dashjs as djm

    if "ladder" in cfg.dashjs:  # in place of a player (--dashjs-for): its video and its cc
        ladder = cfg.dashjs["ladder"]
        seg_s = max(int(cfg.dashjs["segment_ns"] // 1_000_000_000), 1)
        # the player's whole video: the MPD's duration is the port's (dash.js's buffer targets
        # depend on it, and a shorter video would end the stream early)
        duration_s = max(int(cfg.dashjs["video_ns"] // 1_000_000_000), seg_s)
    else:
        ladder = plan["players"][0]["bitrates_bps"] if plan.get("players") else [248_000, 456_000, 928_000,
                                                                                  1_632_000, 4_256_000]
        seg_s = max(int(plan["players"][0]["segment_ns"] // 1_000_000_000), 1) if plan.get("players") else 2
        ccs = [f.kernel_cc for f in cfg.flows] + [p.kernel_cc for p in cfg.players]
        cfg.dashjs["kernel_cc"] = ccs[0] if ccs else "cubic"
        duration_s = max(int(cfg.duration_ns // 1_000_000_000), seg_s)
    cfg.dashjs["media"] = djm.make_media(ladder, duration_s, seg_s, log=say)
    cfg.dashjs["ladder"] = ladder


def _collect_has(tb: Testbed, procs: dict, state: Path) -> dict:
    from .netns import stop_pids

    pl = procs.get("players")
    if pl is not None:
        try:
            pl.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pl.kill()
            pl.wait()
    ch = procs.get("chromium")
    if ch is not None:
        stop_pids([ch.pid], grace=5)
        ch.wait()
        tb.procs.pop("chromium", None)
        from .dashjs import remove_singleton_dir

        remove_singleton_dir(state / "chromium-profile")
    _terminate(procs["origin"], grace_s=15)
    tb.procs.pop("players", None)
    tb.procs.pop("origin", None)
    out = {}
    for name in ("players", "origin"):
        if name not in procs:
            continue
        path = state / f"{name}.json"
        if not path.exists():
            raise LiveError(f"the {name} process wrote no result: {(state / (name + '.log')).read_text()[-3000:]}")
        out[name] = json.loads(path.read_text())
    if procs.get("dashjs_metrics"):
        path = Path(procs["dashjs_metrics"])
        out["dashjs_lines"] = [json.loads(l) for l in path.read_text().splitlines() if l.strip()] if path.exists() else []
        out["chromium_log"] = (state / "chromium.log").read_text()[-3000:]
    return out


#: dtypes of the player tables (as the simulator's metrics/qoe.rs writes them)
_PLAYER_DTYPES = {
    "time_ns": "uint64", "player": "uint32", "level": "uint32", "bitrate_bps": "uint64",
    "played_bitrate_bps": "float64", "buffer_ns": "uint64", "phase": "uint32", "estimate_bps": "float64",
    "optimal_level": "uint32", "fair_share_bps": "float64", "index": "uint32", "bytes": "uint64",
    "media_ns": "uint64", "request_ns": "uint64", "done_ns": "uint64", "download_ns": "uint64",
    "throughput_bps": "float64", "buffer_before_ns": "uint64", "buffer_after_ns": "uint64", "flow": "uint32",
    "first_byte_ns": "uint64", "ttfb_ns": "uint64", "to_level": "uint32", "abandon_ns": "uint64",
    "bytes_loaded": "uint64", "bytes_total": "uint64",
}


def _has_results(cfg: LiveConfig, has: dict) -> tuple[list[dict], list[tuple], dict, dict]:
    """(flows of the players' connections, their cwnd rows, summary additions, tables)."""
    import numpy as np

    pl = has.get("players") or {"connections": [], "tables": {}, "players": [], "has": None}
    org = has["origin"]
    by_port = {}
    for c in org["connections"]:
        if c.get("peer"):
            by_port[c["peer"][1]] = c
    flows, rows = [], []
    names = {p.index: p for p in cfg.players}
    counts: dict[int, int] = {}
    for c in pl["connections"]:
        p = names[c["player"]]
        k = counts.get(p.index, 0)
        counts[p.index] = k + 1
        o = by_port.get(c["local_port"], {})
        info = o.get("final", {})
        est, done = c.get("opened_ns"), c.get("closed_ns")
        span = ((done if done is not None else cfg.duration_ns) - est) if est is not None else 0
        acked = info.get("bytes_acked") or 0
        srtts = [s[3] for s in o.get("samples", []) if s[3] > 0]
        flows.append({
            "name": f"{p.name}.c{k}", "src": p.server, "dst": p.client,
            "cc": next(q["cc"] for q in cfg.plan["players"] if q["name"] == p.name),
            "kernel_cc": o.get("cc", p.kernel_cc), "player": p.name,
            "bytes_written": None, "bytes_sent": info.get("bytes_sent"), "bytes_acked": info.get("bytes_acked"),
            "bytes_received": acked, "messages_received": o.get("requests", 0),
            "segments_sent": info.get("data_segs_out"), "retransmitted_segments": info.get("total_retrans"),
            "rto_count": info.get("total_rto"), "fast_recovery_count": None, "tlp_probes": None,
            "tlp_recoveries": None, "dsacks_received": info.get("dsack_dups"),
            "established_ns": est, "completed_ns": done,
            "goodput_bps": acked * 8e9 / span if span > 0 else 0.0,
            "final_cwnd_pkts": info.get("snd_cwnd"), "final_ssthresh_pkts": info.get("snd_ssthresh"),
            "min_rtt_ns": info["min_rtt_us"] * 1000 if info.get("min_rtt_us") else None,
            "mean_srtt_ns": float(np.mean(srtts)) if srtts else None,
            "bpf_stats": o.get("bpf_stats"), "error": o.get("error"),
        })
        for t, cwnd, ssth, srtt, _st, _pace in o.get("samples", []):
            if t >= 0:
                rows.append((t, c["flow"], cwnd, ssth, srtt))
    # dash.js's connections (Chromium opens its own) are flows too
    dj_flow0 = len(cfg.flows) + len(flows)
    dj_name = (cfg.dashjs or {}).get("name", "dashjs")
    for k, o in enumerate(c for c in org["connections"] if c.get("listener") == "dashjs"):
        info = o.get("final", {})
        est, done = o.get("opened_ns"), o.get("closed_ns")
        span = ((done if done is not None else cfg.duration_ns) - est) if est is not None else 0
        acked = info.get("bytes_acked") or 0
        srtts = [s[3] for s in o.get("samples", []) if s[3] > 0]
        flows.append({
            "name": f"{dj_name}.c{k}", "src": f"left{cfg.dashjs['host']}", "dst": f"right{cfg.dashjs['host']}",
            "cc": o.get("cc"), "kernel_cc": o.get("cc"), "player": dj_name,
            "bytes_sent": info.get("bytes_sent"), "bytes_acked": info.get("bytes_acked"), "bytes_received": acked,
            "messages_received": o.get("requests", 0), "segments_sent": info.get("data_segs_out"),
            "retransmitted_segments": info.get("total_retrans"), "rto_count": info.get("total_rto"),
            "established_ns": est, "completed_ns": done, "goodput_bps": acked * 8e9 / span if span > 0 else 0.0,
            "final_cwnd_pkts": info.get("snd_cwnd"), "final_ssthresh_pkts": info.get("snd_ssthresh"),
            "min_rtt_ns": info["min_rtt_us"] * 1000 if info.get("min_rtt_us") else None,
            "mean_srtt_ns": float(np.mean(srtts)) if srtts else None, "error": o.get("error"),
        })
        for t, cwnd, ssth, srtt, _st, _pace in o.get("samples", []):
            if t >= 0:
                rows.append((t, dj_flow0 + k, cwnd, ssth, srtt))
    tables = {}
    for name, cols in pl["tables"].items():
        tables[name] = {k: np.asarray(v, dtype=_PLAYER_DTYPES.get(k, None)) for k, v in cols.items()}
    dj_summary = None
    if cfg.dashjs and "dashjs_lines" in has:
        from .dashjs import segments_from_log

        cols, dj_summary = segments_from_log(has["dashjs_lines"], cfg.dashjs["ladder"], len(cfg.players))
        cols["flow"] = [dj_flow0] * len(cols["flow"])
        # the simulator's player goodput: media bytes over the session (start to the run's end)
        session_ns = cfg.duration_ns - cfg.dashjs.get("start_ns", 0)
        dj_summary["goodput_bps"] = dj_summary["media_bytes"] * 8e9 / session_ns if session_ns > 0 else 0.0
        dj_summary.update({"name": dj_name, "algorithm": f"dashjs-{cfg.dashjs['abr']}", "real_dashjs": True,
                           "client": f"right{cfg.dashjs['host']}", "server": f"left{cfg.dashjs['host']}",
                           "log": "dashjs.jsonl"})
        seg = tables.get("segments")
        if seg is not None and set(seg) - set(cols):
            raise LiveError(f"dash.js's segment rows lack the columns {sorted(set(seg) - set(cols))} of our players'")
        for k, v in cols.items():
            arr = np.asarray(v, dtype=_PLAYER_DTYPES.get(k, None))
            if seg is None:
                continue
            seg[k] = np.concatenate([seg[k], arr]) if k in seg else arr
        if seg is None:
            tables["segments"] = {k: np.asarray(v, dtype=_PLAYER_DTYPES.get(k, None)) for k, v in cols.items()}
    extra = {"players": pl["players"] + ([dj_summary] if dj_summary else []), "has": pl["has"],
             "live_players": {"errors": pl.get("errors", []), "bytes_mismatch": pl.get("bytes_mismatch", 0),
                              "abandoned": pl.get("abandoned", 0),
                              "requests_logged": "requests.jsonl"}}
    return flows, rows, extra, tables


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
        # a flow that stopped: when all it wrote was acknowledged (the simulator's completed_ns)
        done = rcv.get("eof_ns") or snd.get("completed_ns")
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
            # the kernel's own account of what limited the sender (tcp_info chrono stats)
            "sndbuf_limited_ns": info["sndbuf_limited_us"] * 1000 if "sndbuf_limited_us" in info else None,
            "rwnd_limited_ns": info["rwnd_limited_us"] * 1000 if "rwnd_limited_us" in info else None,
            # the time the socket had data to send (tcpi_busy_time: the three chronos together);
            # the rest of the flow's time it waited for the application
            "busy_ns": info["busy_time_us"] * 1000 if "busy_time_us" in info else None,
            "bpf_stats": snd.get("bpf_stats"),
            "error": snd.get("error") or rcv.get("error"),
        })
        for t, cwnd, ssth, srtt, _state, _pace in snd.get("samples", []):
            cwnd_rows.append((t, f.index, cwnd, ssth, srtt))
        for b, nbytes in rcv.get("bins", {}).items():
            end_t = (int(b) + 1) * cfg.plan["trace"]["goodput_window_ns"]
            gp_rows.append((end_t, f.index, nbytes))
    has_extra, has_tables = {}, {}
    if raw.get("has"):
        pflows, prow, has_extra, has_tables = _has_results(cfg, raw["has"])
        flows += pflows
        cwnd_rows += prow
    links = []
    bottleneck = {l["name"]: l for l in cfg.plan["links"] if l["link"] == "bottleneck"}
    qs_by_link: dict[str, list[int]] = {}
    qb_by_link: dict[str, list[int]] = {}
    for _t, name, pk, b in raw["queue_samples"]:
        qs_by_link.setdefault(name, []).append(pk)
        qb_by_link.setdefault(name, []).append(b)
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
            "max_queue_bytes": max(qb_by_link.get(name, [0])),
            "mean_queue_bytes": float(np.mean(qb_by_link[name])) if qb_by_link.get(name) else None,
            "mean_queue_delay_ns": (float(np.mean(qb_by_link[name])) * 8e9 / d.rate_bps
                                    if qb_by_link.get(name) else None),
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
            "loss_events": [{"direction": d, "start_ns": a, "stop_ns": b, "loss": p} for d, a, b, p in cfg.loss_events],
            "pcap": raw.get("pcap"),
            "t0_wall_ns": raw.get("t0_wall_ns"),
            "reduced_from": cfg.plan.get("reduced_from"),
            "load": os.getloadavg(),
            "cpu": raw.get("cpu"),
        },
    }
    summary.update({k: v for k, v in has_extra.items() if k != "live_players"})
    if "live_players" in has_extra:
        summary["live"]["players"] = has_extra["live_players"]
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
    tables.update(has_tables)
    return summary, tables


__all__ = ["LiveUnsupported", "missing_requirements", "run_live"]
