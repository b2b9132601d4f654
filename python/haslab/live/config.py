"""From a validated scenario plan (``haslab.validate``) to the live testbed's configuration.

Live mode supports the dumbbell (``[dumbbell]`` and nothing else: nodes ``left{i}``,
``right{i}``, ``r1``, ``r2``; links ``bottleneck``, ``left{i}``, ``right{i}``) with bulk and
chunk flows between its hosts. Everything else is rejected with a message that names what is not
supported; each TCP option is either reproduced on the real kernel (sysctl, route attribute,
socket option), accepted with a documented difference (``notes``), or rejected.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Optional

#: Most sender/receiver pairs the testbed builds (2 vCPUs: beyond this the hosts, not the
#: bottleneck, limit the run).
MAX_PAIRS = 16

#: Scenario congestion controls → the Linux algorithm used in live mode (kernel built-ins, or
#: our BPF struct_ops from bpf/<name>.bpf.c, one file per algorithm).
KERNEL_CC = {
    "newreno": "reno",
    "cubic": "cubic",
    "bbr": "bbr",
    "westwood+": "haslab_westwood",
    "tibet": "haslab_tibet",
    "tcphas": "haslab_tcphas",
}
#: The algorithms that come from our BPF object.
BPF_CCS = ("haslab_tcphas", "haslab_westwood", "haslab_tibet", "haslab_newcwv")

#: Parameters of the simulator's algorithms that our kernel versions implement with their
#: defaults only (any other value is rejected).
CC_DEFAULTS = {
    "newreno": {"grow_when_app_limited": False, "ssthresh": "cwnd"},
    "cubic": None,  # the kernel's own CUBIC: its parameters are module parameters, not per flow
    "bbr": None,
    # hz is not fixed: it must be the kernel's CONFIG_HZ (checked in _kernel_cc)
    "westwood+": {"estimator": "linux", "min_window": "50000000ns", "clock": "jiffies"},
    "tibet": {"alpha": 0.8, "gamma": None, "samples": "every-ack"},
    "tcphas": {"alpha": 0.8, "gamma": 0.99, "psi": 0.99, "shaping_factor": 1.2, "samples": "every-ack"},
}

MS = 1_000_000


class LiveUnsupported(ValueError):
    """The scenario uses something the live testbed cannot reproduce."""


@dataclass
class Direction:
    """One direction of the bottleneck, with the access links' delay and loss folded in."""

    rate_bps: int
    #: one-way delay host to host (bottleneck + both access links)
    delay_ns: int
    #: loss of the whole path in this direction: 1 − Π(1 − loss of each link)
    loss: float
    queue_packets: Optional[int] = None
    queue_bytes: Optional[int] = None


@dataclass
class HostSettings:
    """Per-namespace sysctls and route attributes of one host."""

    sysctls: dict[str, str] = field(default_factory=dict)
    #: route attributes of the host's default route (initcwnd, rto_min)
    route: dict[str, str] = field(default_factory=dict)


@dataclass
class LiveFlow:
    name: str
    index: int
    src: str
    dst: str
    kernel_cc: str
    app: dict
    mss: int
    #: bytes/s for SO_MAX_PACING_RATE, or None
    max_pacing_rate_Bps: Optional[int] = None
    #: turn on Linux's internal pacing (SO_MAX_PACING_RATE set to a huge value)
    linux_pacing: bool = False


@dataclass
class LivePlayer:
    """One HAS player: the origin listens for it on its server host (a port of its own, so that
    each player's connections get its congestion control), the player runs on its client host."""

    name: str
    index: int
    client: str
    server: str
    kernel_cc: str
    #: {"kind": "persistent" | "per-request" | "parallel" | "rotate" | "renew", "n": N}
    connection: dict
    start_ns: int
    stop_ns: Optional[int]
    port: int
    max_pacing_rate_Bps: Optional[int] = None
    linux_pacing: bool = False
    #: link direction the video crosses ("r1->r2" from a left server) and its rate (QoE metrics)
    path: tuple[str, int] = ("r1->r2", 0)


@dataclass
class LiveConfig:
    pairs: int
    seed: int
    duration_ns: int
    forward: Direction  # left → right (r1 → r2)
    reverse: Direction  # right → left (r2 → r1)
    flows: list[LiveFlow]
    hosts: dict[str, HostSettings]
    #: differences from the simulator that the run accepts (written to summary.json)
    notes: list[str]
    plan: dict
    players: list[LivePlayer] = field(default_factory=list)
    #: timed loss changes: (direction "forward"/"reverse", start_ns, stop_ns, probability)
    loss_events: list[tuple[str, int, Optional[int], float]] = field(default_factory=list)
    #: dash.js in Chromium ({"abr", "host", ...}), set by run_live(dashjs=...)
    dashjs: Optional[dict] = None

    @property
    def bpf_ccs(self) -> list[str]:
        ccs = {f.kernel_cc for f in self.flows} | {p.kernel_cc for p in self.players}
        return sorted(c for c in ccs if c in BPF_CCS)


def _dir(plan: dict, name: str) -> dict:
    for l in plan["links"]:
        if l["name"] == name:
            return l
    raise LiveUnsupported(f"live mode needs a dumbbell; the scenario has no link direction {name}")


def _queue(d: dict) -> tuple[Optional[int], Optional[int]]:
    q = d["queue"]
    if q.get("kind") != "droptail":
        raise LiveUnsupported(f"{d['name']}: only drop-tail queues exist in live mode")
    return q.get("limit_packets"), q.get("limit_bytes")


def _path(plan: dict, hops: list[str]) -> Direction:
    """The bottleneck direction hops[1] with the access hops' delay and loss added."""
    ds = [_dir(plan, h) for h in hops]
    keep = 1.0
    for d in ds:
        keep *= 1.0 - d["loss"]
    qp, qb = _queue(ds[1])
    return Direction(
        rate_bps=ds[1]["rate_bps"],
        delay_ns=sum(d["delay_ns"] for d in ds),
        loss=1.0 - keep,
        queue_packets=qp,
        queue_bytes=qb,
    )


def _pairs(plan: dict) -> int:
    nodes = plan["nodes"]
    lefts = [n for n in nodes if re.fullmatch(r"left\d+", n)]
    n = len(lefts)
    want = {f"left{i}" for i in range(n)} | {f"right{i}" for i in range(n)} | {"r1", "r2"}
    if n == 0 or set(nodes) != want:
        extra = sorted(set(nodes) - want) if n else []
        raise LiveUnsupported(
            "live mode supports the [dumbbell] topology only (nodes left{i}, right{i}, r1, r2)"
            + (f"; the scenario also has nodes {', '.join(extra)}" if extra else "")
        )
    links = {l["link"] for l in plan["links"]}
    want_links = {"bottleneck"} | {f"left{i}" for i in range(n)} | {f"right{i}" for i in range(n)}
    if links != want_links:
        raise LiveUnsupported(
            "live mode supports the [dumbbell] topology only; extra links: "
            + ", ".join(sorted(links - want_links))
        )
    if n > MAX_PAIRS:
        raise LiveUnsupported(f"dumbbell.pairs = {n}: live mode builds at most {MAX_PAIRS} pairs on this machine")
    return n


def _check_uniform(plan: dict, n: int, fwd: Direction, rev: Direction) -> None:
    for i in range(n):
        f = _path(plan, [f"left{i}->r1", "r1->r2", f"r2->right{i}"])
        r = _path(plan, [f"right{i}->r2", "r2->r1", f"r1->left{i}"])
        if (f.delay_ns, f.loss, r.delay_ns, r.loss) != (fwd.delay_ns, fwd.loss, rev.delay_ns, rev.loss):
            raise LiveUnsupported("live mode needs the same access delay and loss on every pair")


#: the first Linux version whose SACK loss detection is RACK only (net.ipv4.tcp_recovery's RACK
#: bit no longer turns it off: Documentation/networking/ip-sysctl.rst, tcp_recovery)
RACK_ALWAYS_ON = (6, 17)


def kernel_version(release: Optional[str] = None) -> tuple[int, int]:
    """(major, minor) of this machine's kernel (``platform.release()``), or of ``release``."""
    import platform

    m = re.match(r"(\d+)\.(\d+)", release if release is not None else platform.release())
    if not m:
        raise LiveUnsupported(f"cannot read the kernel version from {release or platform.release()!r}")
    return int(m.group(1)), int(m.group(2))


@functools.lru_cache(maxsize=1)
def _running_kernel_config() -> Optional[str]:
    """The running kernel's config, where libbpf reads a BPF object's ``__kconfig`` values
    (/boot/config-RELEASE, then /proc/config.gz), read once; None if unreadable."""
    import gzip
    import platform
    from pathlib import Path

    for path in (Path(f"/boot/config-{platform.release()}"), Path("/proc/config.gz")):
        try:
            raw = path.read_bytes()
            return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode(errors="replace")
        except OSError:
            continue
    return None


def kernel_hz(config_text: Optional[str] = None) -> Optional[int]:
    """CONFIG_HZ of the running kernel, or of ``config_text``; None if unreadable."""
    if config_text is None:
        config_text = _running_kernel_config()
        if config_text is None:
            return None
    m = re.search(r"^CONFIG_HZ=(\d+)$", config_text, re.M)
    return int(m.group(1)) if m else None


def _host_settings(flow: dict, tcp: dict, notes: set[str]) -> tuple[dict, dict, dict]:
    """(sender sysctls, receiver sysctls, sender route attributes) for one flow's TCP options;
    raises LiveUnsupported for an option the kernel cannot reproduce."""
    name = flow["name"]

    def reject(key: str, why: str):
        raise LiveUnsupported(f"flow {name}: tcp.{key} = {tcp[key]!r}: {why}")

    snd: dict[str, str] = {}
    rcv: dict[str, str] = {}
    route: dict[str, str] = {}
    ts = "1" if tcp["timestamps"] else "0"
    snd["net.ipv4.tcp_timestamps"] = rcv["net.ipv4.tcp_timestamps"] = ts
    sack = "1" if tcp["sack"] else "0"
    snd["net.ipv4.tcp_sack"] = rcv["net.ipv4.tcp_sack"] = sack
    if tcp["tlp"] and not tcp["sack"]:
        reject("tlp", "TLP needs SACK")
    # RACK loss detection (tcp_recovery bit 0) and the tail-loss probe (tcp_early_retrans 3),
    # both on by default in Linux with SACK. Since Linux 6.17 ("tcp: remove obsolete and unused
    # RFC3517/RFC6675 loss recovery code") RACK is the only SACK loss detection: the
    # tcp_recovery bit has no effect, so a SACK flow without RACK cannot be reproduced there
    rack = tcp["tlp"] if tcp.get("rack") is None else bool(tcp["rack"])
    kernel = kernel_version() if tcp["sack"] and not rack else None
    if kernel is not None and kernel >= RACK_ALWAYS_ON:
        raise LiveUnsupported(
            f"flow {name}: tcp.rack = false (the default without tlp): Linux {kernel[0]}.{kernel[1]} "
            "detects SACK losses with RACK only (since 6.17 net.ipv4.tcp_recovery cannot turn it off); "
            "set tcp.rack = true (RACK without the tail-loss probe), tcp.tlp = true (RACK-TLP) or tcp.sack = false"
        )
    snd["net.ipv4.tcp_early_retrans"] = "3" if tcp["tlp"] else "0"
    snd["net.ipv4.tcp_recovery"] = "1" if rack else "0"
    # F-RTO (RFC 5682): any non-zero tcp_frto runs the SACK-enhanced form (tcp_enter_loss);
    # 2 is the kernel's default
    snd["net.ipv4.tcp_frto"] = "2" if tcp["frto"] else "0"
    if tcp["delayed_ack"] == "off":
        reject("delayed_ack", "Linux always delays ACKs by its own rules (delayed_ack = \"linux\")")
    if tcp["delayed_ack"] == "on":
        notes.add("delayed ACKs: the kernel's receiver acknowledges by Linux's rules, quick ACKs "
                  "included (the simulator's delayed_ack = \"linux\"); \"on\" is RFC 5681's "
                  "every second segment")
    if tcp["delayed_ack"] == "linux-3":
        notes.add("delayed ACKs: the kernel's receiver acknowledges by its own release's rules; "
                  "delayed_ack = \"linux-3\" is Linux 3.19's (every segment sent uses a quick-ACK "
                  "credit; a delayed-ACK timeout of up to 500 ms)")
    if _ms(tcp["delayed_ack_timeout"]) != 40:
        reject("delayed_ack_timeout", "Linux's delayed-ACK timer is fixed (TCP_ATO_MIN = 40 ms)")
    if tcp["rto_formula"] != "linux":
        reject("rto_formula", "the kernel computes the RTO its own way (use \"linux\")")
    if _ms(tcp["initial_rto"]) != 1000:
        reject("initial_rto", "the kernel's initial RTO is 1 s (TCP_TIMEOUT_INIT)")
    # the kernel runs its TCP timers on its own timer wheel (the simulator's timer_clock =
    # "linux" with the kernel's CONFIG_HZ); "exact" is the simulator's idealisation of it
    clock = tcp.get("timer_clock", "exact")
    if clock != "exact":
        khz = kernel_hz()
        if clock == "linux-3.19" or tcp.get("hz", 250) != khz:
            notes.add(f"timers: timer_clock = {clock!r} with hz = {tcp.get('hz', 250)} is not reproduced: "
                      f"the kernel runs its TCP timers on its own timer wheel (timer_clock = \"linux\", "
                      f"CONFIG_HZ = {khz or 'unknown'})")
    max_rto_ms = _ms(tcp["max_rto"])
    snd["net.ipv4.tcp_rto_max_ms"] = str(max_rto_ms)
    min_rto_ms = _ms(tcp["min_rto"])
    if min_rto_ms != 200:
        route["rto_min"] = f"{min_rto_ms}ms"
    route["initcwnd"] = str(tcp["initial_cwnd"])
    idle = tcp["idle_restart"]
    if idle == "linux":
        snd["net.ipv4.tcp_slow_start_after_idle"] = "1"
    elif idle in ("off", "newcwv"):
        snd["net.ipv4.tcp_slow_start_after_idle"] = "0"
    else:
        reject("idle_restart", "Linux restarts after idle its own way: use \"linux\", \"off\" or \"newcwv\"")
    if tcp["pacing"] == "cwnd-per-rtt":
        reject("pacing", "Linux paces at 200 %/120 % of cwnd/SRTT (\"linux\") or not at all (\"off\")")
    for key in ("novel_pacing", "rtl"):
        if tcp[key]:
            reject(key, "not implemented in live mode")
    if tcp.get("cwnd_clamp_rate") is not None:
        reject("cwnd_clamp_rate", "not implemented in live mode")
    # the kernel's own rules (the alternatives, ns-3's or an older Linux's, have no sysctl)
    for key, linux in (
        ("cwnd_growth", "per-packet"),
        ("growth_count", "delivered"),
        ("cwnd_limited", "linux"),
        ("partial_ack_rto", "slow-but-steady"),
        ("rto_ssthresh", "once-per-episode"),
        ("rto_undo", True),
        ("rto_restart_on_retransmit", True),
        ("rto_restart_on_sack_advance", True),
        ("rtt_sampling", "send-time"),
        ("limited_transmit", True),
        ("recover_guard", True),
        ("recover_covers", "more"),
        ("nextseg_rule3", False),
        ("partial_ack_retransmit", "window"),
        ("window_accounting", "packets"),
        ("full_ack_exit", "ssthresh"),
        ("recovery_end", "recover"),
        ("recovery_entry_cwnd", "rfc"),
        ("prr_variant", "linux"),
        ("undo_cwnd", "linux"),
        ("prior_ssthresh", "linux"),
        ("tlp_variant", "linux"),
    ):
        if tcp.get(key, linux) != linux:
            why = ("no kernel saves the ssthresh before the reduction" if key == "prior_ssthresh"
                   else "the other values model ns-3" if tcp[key] not in ("linux-3", "linux-3.19")
                   else f"{tcp[key]!r} is Linux 3.x's, which this kernel does not run")
            reject(key, f"the kernel has one rule: {linux!r} ({why})")
    if tcp["recovery"] == "classic":
        notes.add("fast recovery: the kernel always uses PRR (RFC 6937); the simulator's default is classic")
    if tcp.get("ca_sample", "new-ack") == "ns3":
        reject("ca_sample", "\"ns3\" models ns-3's PktsAcked calls; the kernel's are \"linux\"")
    if tcp.get("ca_sample", "new-ack") == "linux-3.19":
        reject("ca_sample", "\"linux-3.19\" is Linux 3.x's, which this kernel does not run; "
               "its samples are \"linux\"")
    if tcp.get("ca_sample", "new-ack") != "linux" and flow.get("cc") not in ("newreno", "bbr"):
        notes.add("congestion-control samples: the kernel calls pkts_acked on every ACK that finds data "
                  "outstanding, with the newest (S)ACKed segment's RTT (tcp.ca_sample = \"linux\"); the "
                  "simulator's default, \"new-ack\", on ACKs of new data with the oldest one's")
    if tcp.get("tx_start", "new-data") != "linux" and flow.get("cc") in ("cubic", "yeah", "bbr"):
        notes.add("CA_EVENT_TX_START: the kernel raises it before any data segment sent with nothing in "
                  "flight, retransmissions included (tcp.tx_start = \"linux\"); the simulator's default, "
                  "\"new-data\", only before new data sent with nothing outstanding")
    if tcp.get("isn") is not None:
        notes.add("tcp.isn is ignored: the kernel chooses initial sequence numbers")
    # the receive window: autotuning up to tcp_rmem[2]
    if tcp.get("rcvbuf", "fixed") == "linux":
        # the simulator models this autotuning: the same tcp_rmem on the kernel's receiver
        # (the kernel measures scaling_ratio itself, from its own packets)
        rcv["net.ipv4.tcp_rmem"] = " ".join(str(_bytes(v)) for v in tcp["tcp_rmem"])
    else:
        rwnd = _bytes(tcp["rwnd"])
        rcv["net.ipv4.tcp_rmem"] = f"4096 131072 {max(rwnd, 131072)}"
    return snd, rcv, route


_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": MS, "s": 1_000_000_000}


def _ms(d: Any) -> int:
    """Milliseconds of a serialised Duration ("200ms", "1s", "120s", "1500us")."""
    if isinstance(d, (int, float)):
        return int(d) // MS
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ns|us|µs|ms|s)\s*", str(d))
    if not m:
        raise LiveUnsupported(f"cannot read the duration {d!r}")
    return int(float(m.group(1)) * _UNITS_NS[m.group(2)]) // MS


def _bytes(s: Any) -> int:
    if isinstance(s, int):
        return s
    m = re.fullmatch(r"\s*([0-9]+)\s*B?\s*", str(s))
    if not m:
        raise LiveUnsupported(f"cannot read the size {s!r}")
    return int(m.group(1))


def _rate_Bps(r: Any) -> int:
    m = re.fullmatch(r"\s*([0-9]+)\s*bps\s*", str(r))
    if not m:
        raise LiveUnsupported(f"cannot read the rate {r!r}")
    return int(m.group(1)) // 8


def reject_players(scenario: Any) -> None:
    """Kept for callers of the first live version: players are supported now."""
    return None


#: base TCP port of the origin's listeners (one per player)
ORIGIN_PORT = 8000


def _kernel_cc(what: str, cc: str, cc_config: Optional[dict], tcp: dict, notes: set[str]) -> str:
    """The kernel algorithm for a scenario cc (flow or player ``what``); raises LiveUnsupported."""
    kcc = KERNEL_CC.get(cc)
    if kcc is None:
        raise LiveUnsupported(f"{what}: cc {cc!r} has no live counterpart (supported: {', '.join(KERNEL_CC)})")
    cfg = dict(cc_config or {})
    cfg.pop("algorithm", None)
    want = CC_DEFAULTS.get(cc)
    # haslab_westwood counts in the kernel's jiffies (bpf/westwood.bpf.c), so the scenario's hz
    # must be the kernel's CONFIG_HZ (a described plan always carries it, with the simulator's
    # default)
    ww_hz = cfg.pop("hz", None) if cc == "westwood+" else None
    if want is None and cc in ("cubic", "bbr"):
        notes.add(f"{cc}: the kernel's own algorithm with its own constants, not the simulator's")
        if cc == "cubic" and cfg.get("hz") is not None and cfg["hz"] != (hz := kernel_hz()):
            notes.add(f"cubic: hz = {cfg['hz']} is not reproduced: the kernel's CUBIC counts in its own "
                      f"jiffies (CONFIG_HZ = {hz or 'unknown'})")
        if cc == "cubic" and cfg.get("idle_shift") is False:
            notes.add("cubic: idle_shift = false (Linux before 4.2) is not reproduced: the kernel's CUBIC "
                      "moves its epoch forward after an idle period")
        if cc == "cubic" and cfg.get("hystart_variant", "linux") != "linux":
            notes.add(f"cubic: hystart_variant = {cfg['hystart_variant']!r} is not reproduced: the kernel's "
                      "CUBIC runs its own HyStart")
    elif cfg and cfg != want:
        diff = {k2: v for k2, v in cfg.items() if want.get(k2, object()) != v}
        if diff:
            raise LiveUnsupported(
                f"{what}: cc {cc!r} parameters {diff} differ from the defaults; "
                "the kernel version implements the defaults only"
            )
    if cc == "westwood+":
        hz = kernel_hz()
        if hz is None:
            raise LiveUnsupported(
                f"{what}: cc 'westwood+' counts in the kernel's jiffies, and this kernel's CONFIG_HZ "
                "cannot be read (/boot/config-<release> or /proc/config.gz)"
            )
        if ww_hz is not None and hz != ww_hz:
            raise LiveUnsupported(
                f"{what}: cc 'westwood+' with hz = {ww_hz}, but this kernel's CONFIG_HZ is {hz}: "
                f"haslab_westwood counts in the kernel's jiffies (set hz = {hz})"
            )
    if tcp["idle_restart"] == "newcwv":
        if cc != "newreno":
            raise LiveUnsupported(
                f"{what}: tcp.idle_restart = \"newcwv\" exists in live mode only with cc = \"newreno\" "
                "(the BPF algorithm haslab_newcwv is Reno + RFC 7661)"
            )
        kcc = "haslab_newcwv"
    return kcc


def _apply_host(hosts: dict, what: str, host: str, settings: dict, route: dict) -> None:
    h = hosts[host]
    for key, v in list(settings.items()) + [(f"route:{a}", b) for a, b in route.items()]:
        store = h.route if key.startswith("route:") else h.sysctls
        kk = key.removeprefix("route:")
        if kk in store and store[kk] != v:
            raise LiveUnsupported(
                f"{what}: host {host} is shared with another flow or player that needs {kk} = {store[kk]}, "
                f"this one needs {v} (the kernel setting is per host)"
            )
        store[kk] = v


def _unsupported_parts(plan: dict) -> None:
    if plan.get("traffic"):
        kinds = sorted({t.get("kind", "?") for t in plan["traffic"]})
        raise LiveUnsupported(
            f"traffic ({', '.join(kinds)}): cross-traffic generators are not supported in live mode "
            "(use bulk or chunk [[flow]]s)"
        )
    for l in plan.get("links", []):
        if l.get("capacity"):
            raise LiveUnsupported(
                f"link {l['name']}: a capacity schedule is not supported in live mode "
                "(use `haslab live run --rate-step`)"
            )


def _rev(name: str) -> str:
    a, _, b = name.partition("->")
    return f"{b}->{a}"


def reduce_to_dumbbell(plan: dict) -> tuple[dict, list[str]]:
    """A preset's network as the live dumbbell, when every flow and player crosses one and the
    same bottleneck direction with the same path delay and loss: pair i = the i-th (server,
    client) pair, the bottleneck's rate and queue in each direction, the paths' whole delay and
    loss; cross-traffic that never crosses the bottleneck is left out (noted). Raises
    LiveUnsupported otherwise."""
    dirs = {l["name"]: l for l in plan["links"]}
    slots = {s["name"]: s for s in (plan.get("preset") or {}).get("player_slots", [])}
    ends: list[tuple[str, str, dict]] = []  # (server, client, path)
    for f in plan["flows"]:
        ends.append((f["src"], f["dst"], f["path"]))
    for p in plan.get("players") or []:
        path = p.get("path") or (slots.get(p["name"]) or {}).get("path")
        if path is None:
            raise LiveUnsupported(f"player {p['name']}: no path known")
        ends.append((p["server"], p["client"], path))
    if not ends:
        raise LiveUnsupported("no flow or player to place")
    bn = {e[2]["bottleneck"] for e in ends}
    if len(bn) != 1:
        raise LiveUnsupported(f"the flows and players cross different bottlenecks ({', '.join(sorted(bn))})")
    bn_name = bn.pop()

    def path_of(hops: list[str]) -> tuple[int, float]:
        keep = 1.0
        for h in hops:
            keep *= 1.0 - dirs[h]["loss"]
        return sum(dirs[h]["delay_ns"] for h in hops), 1.0 - keep

    fwd = {path_of(e[2]["hops"]) for e in ends}
    rev = set()
    for e in ends:
        back = [_rev(h) for h in reversed(e[2]["hops"])]
        if any(h not in dirs for h in back):
            raise LiveUnsupported(f"{e[0]} -> {e[1]}: the way back is not the reverse path")
        rev.add(path_of(back))
    if len(fwd) != 1 or len(rev) != 1:
        raise LiveUnsupported("the paths differ in delay or loss (live mode gives every pair the same)")
    (fd, fl), (rd, rl) = fwd.pop(), rev.pop()
    pairs: list[tuple[str, str]] = []
    for s_, c, _ in ends:
        if (s_, c) not in pairs:
            pairs.append((s_, c))
    rename = {}
    for i, (s_, c) in enumerate(pairs):
        for old, new in ((s_, f"left{i}"), (c, f"right{i}")):
            if rename.get(old, new) != new:
                raise LiveUnsupported(f"node {old} is in more than one sender/receiver pair")
            rename[old] = new
    notes = [f"preset {plan['preset']['name']!r} reduced to a dumbbell: its bottleneck {bn_name} "
             f"({dirs[bn_name]['rate_bps'] / 1e6:g} Mbit/s) and the paths' delay and loss; nodes "
             + ", ".join(f"{a} = {b}" for a, b in rename.items())]
    kept_traffic = []
    for t in plan.get("traffic") or []:
        hops = (t.get("path") or {}).get("hops") or []
        if bn_name in hops or _rev(bn_name) in hops:
            kept_traffic.append(t)
        else:
            notes.append(f"traffic {t['name']} ({t['kind']}) left out: it does not cross the bottleneck {bn_name}")
    def link(name, kind, rate, delay, loss, queue):
        return {"name": name, "link": kind, "rate_bps": rate, "delay_ns": delay, "loss": loss, "queue": queue,
                "capacity": None}
    big = {"kind": "droptail", "limit_packets": 1000}
    links = [link("r1->r2", "bottleneck", dirs[bn_name]["rate_bps"], fd, fl, dirs[bn_name]["queue"]),
             link("r2->r1", "bottleneck", dirs[_rev(bn_name)]["rate_bps"], rd, rl, dirs[_rev(bn_name)]["queue"])]
    for i in range(len(pairs)):
        for a, b in ((f"left{i}", "r1"), (f"right{i}", "r2")):
            kind = a.rstrip("0123456789") + str(i)
            links += [link(f"{a}->{b}", kind, 10**11, 0, 0.0, big), link(f"{b}->{a}", kind, 10**11, 0, 0.0, big)]
    new = dict(plan)
    new["nodes"] = [f"left{i}" for i in range(len(pairs))] + [f"right{i}" for i in range(len(pairs))] + ["r1", "r2"]
    new["links"] = links
    new["flows"] = [dict(f, src=rename[f["src"]], dst=rename[f["dst"]]) for f in plan["flows"]]
    new["players"] = [dict(p, server=rename[p["server"]], client=rename[p["client"]])
                      for p in plan.get("players") or []]
    new["traffic"] = kept_traffic
    qmap = {bn_name: "r1->r2", _rev(bn_name): "r2->r1"}
    new["trace"] = dict(plan["trace"], queues=[qmap[q] for q in plan["trace"].get("queues", []) if q in qmap])
    events = []
    for e in plan.get("loss_events") or []:
        if e["at"] not in qmap:
            raise LiveUnsupported(f"loss event at {e['at']}: not on the bottleneck")
        events.append(dict(e, at=qmap[e["at"]]))
    new["loss_events"] = events
    new["reduced_from"] = {"preset": plan["preset"]["name"], "bottleneck": bn_name, "nodes": rename}
    return new, notes


def from_plan(plan: dict) -> LiveConfig:
    """The live configuration of a validated plan; raises :class:`LiveUnsupported`."""
    preset = plan.get("preset")
    reduced_notes: list[str] = []
    try:
        n = _pairs(plan)
    except LiveUnsupported as e:
        if not preset:
            raise
        try:
            plan, reduced_notes = reduce_to_dumbbell(plan)
        except LiveUnsupported as why:
            raise LiveUnsupported(
                f"preset {preset.get('name')!r}: its topology is not a dumbbell and cannot be reduced to one: {why}. "
                "Write the bottleneck as [dumbbell] (examples/live-has.toml does it for tcphas-home)"
            ) from None
        n = _pairs(plan)
    _unsupported_parts(plan)
    fwd = _path(plan, ["left0->r1", "r1->r2", "r2->right0"])
    rev = _path(plan, ["right0->r2", "r2->r1", "r1->left0"])
    _check_uniform(plan, n, fwd, rev)
    notes: set[str] = set(reduced_notes) | {
        "access links are not shaped (veth line rate); their delay and loss are added to the bottleneck's",
        "bottleneck rates count IP bytes (a tc size table removes the 14-byte Ethernet header)",
    }
    hosts: dict[str, HostSettings] = {}
    for i in range(n):
        for side in ("left", "right"):
            hosts[f"{side}{i}"] = HostSettings(sysctls={"net.ipv4.tcp_no_metrics_save": "1"})
    flows: list[LiveFlow] = []
    for k, f in enumerate(plan["flows"]):
        if f["src"] not in hosts or f["dst"] not in hosts:
            raise LiveUnsupported(f"flow {f['name']}: live flows run between hosts (left{{i}}, right{{i}}), not routers")
        if f["app"]["kind"] not in ("bulk", "chunks"):
            raise LiveUnsupported(f"flow {f['name']}: app {f['app']['kind']!r} is not supported in live mode")
        cc = f["cc"]
        tcp = f.get("tcp")
        if tcp is None:
            raise LiveUnsupported("this haslab build does not describe flow TCP options; rebuild it (make install)")
        kcc = _kernel_cc(f"flow {f['name']}", cc, f.get("cc_config"), tcp, notes)
        snd, rcv, route = _host_settings(f, tcp, notes)
        _apply_host(hosts, f"flow {f['name']}", f["src"], snd, route)
        _apply_host(hosts, f"flow {f['name']}", f["dst"], rcv, {})
        pace = tcp.get("max_pacing_rate")
        flows.append(
            LiveFlow(
                name=f["name"],
                index=k,
                src=f["src"],
                dst=f["dst"],
                kernel_cc=kcc,
                app=f["app"],
                mss=f["mss"],
                max_pacing_rate_Bps=None if pace is None else _rate_Bps(pace),
                linux_pacing=tcp["pacing"] == "linux",
            )
        )
    players: list[LivePlayer] = []
    for k, p in enumerate(plan.get("players") or []):
        what = f"player {p['name']}"
        for role in ("client", "server"):
            if p[role] not in hosts:
                raise LiveUnsupported(f"{what}: {role} = {p[role]!r}: live players run between hosts (left{{i}}, right{{i}})")
        tcp = p.get("tcp")
        if tcp is None:
            raise LiveUnsupported("this haslab build does not describe player TCP options; rebuild it (make install)")
        kcc = _kernel_cc(what, p["cc"], p.get("cc_config"), tcp, notes)
        snd, rcv, route = _host_settings(p, tcp, notes)
        _apply_host(hosts, what, p["server"], snd, route)
        _apply_host(hosts, what, p["client"], rcv, {})
        c = p["connection"]
        conn = {"kind": c["kind"], "n": int(c.get("connections") or c.get("renew_every") or 1)}
        pace = tcp.get("max_pacing_rate")
        forward = p["server"].startswith("left")
        players.append(
            LivePlayer(
                name=p["name"],
                index=k,
                client=p["client"],
                server=p["server"],
                kernel_cc=kcc,
                connection=conn,
                start_ns=p["start_ns"],
                stop_ns=p.get("stop_ns"),
                port=ORIGIN_PORT + k,
                max_pacing_rate_Bps=None if pace is None else _rate_Bps(pace),
                linux_pacing=tcp["pacing"] == "linux",
                path=("r1->r2", fwd.rate_bps) if forward else ("r2->r1", rev.rate_bps),
            )
        )
    loss_events = []
    for e in plan.get("loss_events") or []:
        at = e["at"]
        if at not in ("r1->r2", "r2->r1"):
            raise LiveUnsupported(f"loss event at {at}: live mode changes loss on the bottleneck (r1->r2, r2->r1) only")
        d = fwd if at == "r1->r2" else rev
        if d.delay_ns == 0 and d.loss == 0:
            raise LiveUnsupported(f"loss event at {at}: needs a delay on that path (the delay box applies it)")
        loss_events.append(("forward" if at == "r1->r2" else "reverse", e["start_ns"], e.get("stop_ns"), e["loss"]))
    return LiveConfig(
        players=players,
        loss_events=loss_events,
        pairs=n,
        seed=plan["seed"],
        duration_ns=plan["duration_ns"],
        forward=fwd,
        reverse=rev,
        flows=flows,
        hosts=hosts,
        notes=sorted(notes),
        plan=plan,
    )
