"""The live testbed: a dumbbell of network namespaces on the real kernel (docs/live.md).

::

    haslab-left{i} ──veth── haslab-r1 ══ haslab-bn (veth) ══ haslab-r2 ──veth── haslab-right{i}
       198.18.i.1      198.18.i.254   198.18.255.1   198.18.255.2    198.19.i.254     198.19.i.1

- The bottleneck is the veth pair r1–r2: on each router's egress into it, an HTB class at the
  scenario's rate (``tc class change`` changes it while running) with a drop-tail ``bfifo`` or
  ``pfifo`` child sized like the scenario's queue; a size table (``stab overhead -14``) makes
  HTB and bfifo count IP bytes, as the simulator's links do.
- Delay and loss: ``haslab-delaybox`` on NFQUEUE in the router that *receives* from the
  bottleneck (r2 for left → right, r1 for right → left), so each direction is shaped first and
  delayed after, like a link's serialisation then propagation. Its delay is the whole one-way
  delay of the path (bottleneck plus both access links).
- Hosts: TSO/GSO/GRO off, per-namespace TCP sysctls and route attributes from the scenario.
- Addresses come from 198.18.0.0/15 (the benchmarking range) and exist only inside these
  namespaces; routers forward only between them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Optional

from . import netns
from .config import Direction, LiveConfig
from .netns import LiveError, ns_name, run, sh, state_dir

#: interface name of every host's single interface
HOST_IF = "haslab0"
#: the bottleneck veth's name in both routers
BN_IF = "haslab-bn"
#: NFQUEUE numbers of the two directions
QUEUE_FWD, QUEUE_REV = 1, 2


def host_addr(node: str) -> str:
    """The address of a host (left{i}: 198.18.i.1, right{i}: 198.19.i.1)."""
    side, i = ("left", node[4:]) if node.startswith("left") else ("right", node[5:])
    return f"198.{18 if side == 'left' else 19}.{int(i)}.1"


def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def delaybox_path() -> str:
    """The haslab-delaybox binary: $HASLAB_DELAYBOX, the workspace's release build, or PATH."""
    env = os.environ.get("HASLAB_DELAYBOX")
    if env:
        return env
    for cand in (repo_root() / "target" / "release" / "haslab-delaybox",):
        if cand.is_file():
            return str(cand)
    import shutil

    found = shutil.which("haslab-delaybox")
    if found:
        return found
    raise LiveError(
        "haslab-delaybox not found: build it with `cargo build --release -p haslab-delaybox` "
        "(make install does), or set HASLAB_DELAYBOX"
    )


def _tc_rate(bps: int) -> str:
    return f"{int(bps)}bit"


def _qdisc_child(d: Direction) -> list[str]:
    if d.queue_bytes is not None:
        return ["bfifo", "limit", str(d.queue_bytes)]
    return ["pfifo", "limit", str(d.queue_packets)]


class Testbed:
    """Builds and removes the namespaces of one live configuration.

    Use as a context manager: ``up()`` on entry (after removing leftovers of an earlier run),
    ``down()`` on exit, also on SIGINT/SIGTERM.
    """

    def __init__(self, cfg: LiveConfig, *, delay_box: bool = True):
        self.cfg = cfg
        self.delay_box = delay_box
        self.procs: dict[str, subprocess.Popen] = {}
        self.delaybox_stats: dict[str, dict] = {}
        self._old_sigterm = None
        #: leave the testbed up when the context exits (``haslab live down`` removes it)
        self.keep = False

    # ---------------------------------------------------------------------------- names

    @property
    def hosts(self) -> list[str]:
        n = self.cfg.pairs
        return [f"left{i}" for i in range(n)] + [f"right{i}" for i in range(n)]

    def ns(self, node: str) -> str:
        return ns_name(node)

    # ---------------------------------------------------------------------------- up / down

    def up(self, wait_s: Optional[float] = None) -> "Testbed":
        """Builds the testbed under the machine-wide lock (:func:`netns.exclusive`: refuses, after
        waiting up to ``wait_s``, while another run or another prefix's testbed is up)."""
        with netns.exclusive(wait_s):
            netns.cleanup()
            state_dir().mkdir(parents=True, exist_ok=True)
            self._write_state()
            try:
                self._build()
                if self.delay_box:
                    self._start_delayboxes()
                self._write_state()
            except BaseException:
                self.down()
                raise
        return self

    def down(self) -> list[str]:
        self._stop_delayboxes()
        return netns.cleanup()

    def __enter__(self) -> "Testbed":
        def on_term(signum, frame):
            raise KeyboardInterrupt(f"signal {signum}")

        self._old_sigterm = signal.signal(signal.SIGTERM, on_term)
        return self.up()

    def __exit__(self, *exc) -> None:
        try:
            if not self.keep:
                self.down()
        finally:
            if self._old_sigterm is not None:
                signal.signal(signal.SIGTERM, self._old_sigterm)

    def _write_state(self) -> None:
        st = {
            "prefix": netns.prefix(),
            "pairs": self.cfg.pairs,
            "pids": [p.pid for p in self.procs.values()],
            "forward": vars(self.cfg.forward),
            "reverse": vars(self.cfg.reverse),
            "created_by": os.getpid(),
        }
        path = state_dir() / "state.json"
        path.write_text(json.dumps(st, indent=1) + "\n")

    def _build(self) -> None:
        n = self.cfg.pairs
        r1, r2 = self.ns("r1"), self.ns("r2")
        for node in ["r1", "r2", *self.hosts]:
            run(["ip", "netns", "add", self.ns(node)])
            run(["ip", "-n", self.ns(node), "link", "set", "lo", "up"])
        # bottleneck veth r1 <-> r2 (created directly inside the namespaces)
        run(["ip", "link", "add", BN_IF, "netns", r1, "type", "veth", "peer", "name", BN_IF, "netns", r2])
        routers = {"r1": [f"ip addr add 198.18.255.1/30 dev {BN_IF}", f"ip link set {BN_IF} up",
                          f"ip route add 198.19.0.0/16 via 198.18.255.2 dev {BN_IF}"],
                   "r2": [f"ip addr add 198.18.255.2/30 dev {BN_IF}", f"ip link set {BN_IF} up",
                          f"ip route add 198.18.0.0/16 via 198.18.255.1 dev {BN_IF}"]}
        for i in range(n):
            for side, router, net in (("left", "r1", 18), ("right", "r2", 19)):
                host = f"{side}{i}"
                rif = f"{prefix_if()}-{side}{i}"
                run(["ip", "link", "add", HOST_IF, "netns", self.ns(host), "type", "veth",
                     "peer", "name", rif, "netns", self.ns(router)])
                routers[router] += [f"ip addr add 198.{net}.{i}.254/24 dev {rif}", f"ip link set {rif} up",
                                    f"ethtool -K {rif} tso off gso off gro off >/dev/null 2>&1 || true"]
                settings = self.cfg.hosts[host]
                attrs = " ".join(f"{k} {v}" for k, v in sorted(settings.route.items()))
                script = [
                    f"ip addr add 198.{net}.{i}.1/24 dev {HOST_IF}",
                    f"ip link set {HOST_IF} up",
                    f"ip route add default via 198.{net}.{i}.254 dev {HOST_IF} {attrs}",
                    f"ethtool -K {HOST_IF} tso off gso off gro off >/dev/null",
                ]
                for key, v in sorted(settings.sysctls.items()):
                    script.append(f"echo '{v}' > /proc/sys/{key.replace('.', '/')}")
                sh("\n".join(script), self.ns(host))
        for router, cmds in routers.items():
            cmds = ["echo 1 > /proc/sys/net/ipv4/ip_forward"] + cmds
            sh("\n".join(cmds), self.ns(router))
        # bottleneck: HTB + drop-tail on each router's egress into the bottleneck veth
        for router, d in (("r1", self.cfg.forward), ("r2", self.cfg.reverse)):
            ns = self.ns(router)
            run(["tc", "-n", ns, "qdisc", "add", "dev", BN_IF, "root", "handle", "1:", "stab", "overhead", "-14",
                 "htb", "default", "10"])
            run(["tc", "-n", ns, "class", "add", "dev", BN_IF, "parent", "1:", "classid", "1:10", "htb",
                 "rate", _tc_rate(d.rate_bps), "ceil", _tc_rate(d.rate_bps), "quantum", "3000"])
            run(["tc", "-n", ns, "qdisc", "add", "dev", BN_IF, "parent", "1:10", "handle", "10:", *_qdisc_child(d)])
        # delay box rules: packets received from the bottleneck go to the queue of their direction
        if self.delay_box:
            for router, q, d in (("r2", QUEUE_FWD, self.cfg.forward), ("r1", QUEUE_REV, self.cfg.reverse)):
                if d.delay_ns > 0 or d.loss > 0:
                    run(["iptables", "-w", "-t", "mangle", "-A", "FORWARD", "-i", BN_IF,
                         "-j", "NFQUEUE", "--queue-num", str(q)], ns=self.ns(router))

    def _start_delayboxes(self) -> None:
        exe = delaybox_path()
        for name, router, q, d in (("fwd", "r2", QUEUE_FWD, self.cfg.forward),
                                   ("rev", "r1", QUEUE_REV, self.cfg.reverse)):
            if d.delay_ns == 0 and d.loss == 0:
                continue
            log = state_dir() / f"delaybox-{name}.log"
            stats = state_dir() / f"delaybox-{name}.json"
            with open(log, "w") as err:
                p = subprocess.Popen(
                    ["ip", "netns", "exec", self.ns(router), exe, "--queue", str(q),
                     "--delay-us", str(d.delay_ns // 1000), "--loss", repr(d.loss),
                     "--seed", str(self.cfg.seed), "--stats", str(stats),
                     "--schedule", str(state_dir() / f"delaybox-{name}.schedule")],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                )
            self.procs[f"delaybox-{name}"] = p
            deadline = time.monotonic() + 5
            while "haslab-delaybox: queue" not in log.read_text():
                if p.poll() is not None or time.monotonic() > deadline:
                    raise LiveError(f"haslab-delaybox ({name}) did not start: {log.read_text().strip()}")
                time.sleep(0.02)

    def _stop_delayboxes(self) -> None:
        for name, p in list(self.procs.items()):
            if not name.startswith("delaybox-"):
                continue
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            stats = state_dir() / f"{name}.json"
            if stats.exists():
                try:
                    self.delaybox_stats[name.removeprefix("delaybox-")] = json.loads(stats.read_text())
                except json.JSONDecodeError:
                    pass
            del self.procs[name]

    # ---------------------------------------------------------------------------- while running

    def set_rate(self, rate_bps: int, direction: str = "forward") -> None:
        """Changes the bottleneck rate of one direction (``tc class change``; the queue is kept)."""
        router = "r1" if direction == "forward" else "r2"
        run(["tc", "-n", self.ns(router), "class", "change", "dev", BN_IF, "parent", "1:", "classid", "1:10",
             "htb", "rate", _tc_rate(rate_bps), "ceil", _tc_rate(rate_bps), "quantum", "3000"])

    def set_loss_schedule(self, direction: str, t0_ns: int, events: list[tuple[int, int, float]]) -> None:
        """Timed loss changes of one direction: (start_ns, stop_ns, probability) on the run's clock
        (CLOCK_MONOTONIC − t0). The delay box reads them on SIGUSR1 and applies them per packet."""
        name = "fwd" if direction == "forward" else "rev"
        p = self.procs.get(f"delaybox-{name}")
        if p is None or p.poll() is not None:
            raise LiveError(f"timed loss on the {direction} direction needs its delay box (a delay or a loss)")
        lines = []
        for start, stop, prob in sorted(events):
            lines.append(f"{t0_ns + start} {prob!r}")
            if stop is not None:
                lines.append(f"{t0_ns + stop} -")
        (state_dir() / f"delaybox-{name}.schedule").write_text("\n".join(lines) + "\n")
        p.send_signal(signal.SIGUSR1)

    def queue_stats(self, direction: str = "forward") -> dict:
        """The drop-tail queue's counters: packets/bytes sent, drops, backlog now."""
        return queue_stats("r1" if direction == "forward" else "r2")

    def exec_argv(self, node: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.ns(node), *argv]

    def measure_rtt(self, client: str = "right0", server: str = "left0", count: int = 20,
                    interval_s: float = 0.05, port: int = 4999) -> list[int]:
        """Round-trip times (ns) of UDP probes from ``client`` to an echo in ``server``."""
        import sys

        script = str(Path(__file__).with_name("probe.py"))
        addr = host_addr(server)
        echo = subprocess.Popen(
            self.exec_argv(server, [sys.executable, script, "echo", addr, str(port), str(count * interval_s + 10)]),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        try:
            if echo.stdout.readline().strip() != "ready":
                raise LiveError("the UDP echo did not start")
            p = run(self.exec_argv(client, [sys.executable, script, "ping", addr, str(port), str(count),
                                            str(interval_s)]), timeout=count * (interval_s + 2) + 10)
            return json.loads(p.stdout)
        finally:
            echo.terminate()
            echo.wait(timeout=5)


def prefix_if() -> str:
    """Router-side interface names: ``haslab-left3``, ``haslab-right3`` (at most 15 characters)."""
    return "haslab"


def queue_stats(router: str) -> dict:
    p = run(["tc", "-n", ns_name(router), "-s", "-j", "qdisc", "show", "dev", BN_IF])
    for q in json.loads(p.stdout):
        if q.get("kind") in ("bfifo", "pfifo"):
            return {
                "kind": q["kind"],
                "tx_packets": q.get("packets", 0),
                "tx_bytes": q.get("bytes", 0),
                "dropped_packets": q.get("drops", 0),
                "backlog_bytes": q.get("backlog", 0),
                "backlog_packets": q.get("qlen", 0),
            }
    raise LiveError(f"no drop-tail qdisc on {ns_name(router)}/{BN_IF}")


def status() -> dict:
    """What exists now: our namespaces, processes, the bottleneck queues, registered BPF CCs."""
    out: dict = {"namespaces": netns.our_namespaces(), "struct_ops": [i["name"] for i in netns.our_struct_ops()],
                 "struct_ops_freeing": netns.freeing_struct_ops()}
    st = state_dir() / "state.json"
    if st.exists():
        try:
            out["state"] = json.loads(st.read_text())
        except json.JSONDecodeError:
            out["state"] = "unreadable"
    queues = {}
    for router, name in (("r1", "r1->r2"), ("r2", "r2->r1")):
        if ns_name(router) in out["namespaces"]:
            try:
                queues[name] = queue_stats(router)
            except (LiveError, ValueError):
                queues[name] = None
    out["queues"] = queues
    out["processes"] = {n: netns.ns_pids(n) for n in out["namespaces"]}
    return out
