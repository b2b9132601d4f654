"""Small helpers around iproute2 / iptables / sysctl for the live testbed, and the inventory and
removal of everything the testbed creates.

Every object carries the prefix (``haslab``, or ``$HASLAB_LIVE_PREFIX``, which must start with
``haslab``): network namespaces ``haslab-<node>``, interfaces ``haslab*`` (inside them only), the
state directory ``/run/haslab-live``, BPF struct_ops ``haslab_*``. Nothing without the prefix
is ever touched; processes are ended by PID, and only those that run inside our namespaces or
that our state file names.

One testbed at a time: the BPF congestion-control names (``haslab_tcphas``, …) and the maps
live mode finds by name are global to the kernel, whatever the prefix, so two testbeds would
unregister or read each other's. :func:`exclusive` holds a machine-wide lock
(``/run/haslab-live.lock``, ``flock``: the kernel releases it when its process dies, ``kill -9``
included) while a testbed is built and run, and refuses (or waits ``wait_s``) when another
process holds it or another prefix's testbed is up, naming that one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator, Optional, Sequence

#: the machine-wide lock of live mode (one testbed at a time, whatever the prefix)
LOCK_PATH = Path("/run/haslab-live.lock")
#: namespace names: PREFIX-NODE with the testbed's nodes
_NS_RE = re.compile(r"^(haslab[A-Za-z0-9_-]*)-(r1|r2|left\d+|right\d+)$")


def prefix() -> str:
    p = os.environ.get("HASLAB_LIVE_PREFIX", "haslab")
    if not p.startswith("haslab") or not p.replace("-", "").replace("_", "").isalnum() or len(p) > 12:
        raise ValueError(f"HASLAB_LIVE_PREFIX={p!r}: must start with 'haslab', be alphanumeric and at most 12 long")
    return p


def ns_name(node: str) -> str:
    return f"{prefix()}-{node}"


def state_dir() -> Path:
    return Path("/run") / f"{prefix()}-live"


class LiveError(RuntimeError):
    """A command of the testbed failed, or the machine lacks something live mode needs."""


class LiveBusy(LiveError):
    """Another live testbed uses this machine (another run, or another prefix's testbed is up)."""


#: depth of :func:`exclusive` in this process (it is re-entrant within a process)
_held = 0


def _lock_holder(text: str) -> str:
    try:
        h = json.loads(text)
        pid = int(h["pid"])
    except (ValueError, KeyError, TypeError):
        return "another process (it is starting)"
    cmd = " ".join(h.get("argv") or [])[:200]
    since = time.strftime("%H:%M:%S", time.localtime(h.get("since", 0)))
    return f"pid {pid} (prefix {h.get('prefix')!r}, `{cmd}`, since {since})"


def other_testbeds() -> dict[str, list[str]]:
    """Namespaces of live testbeds with a prefix other than ours: {prefix: [namespaces]}."""
    p = run(["ip", "netns", "list"], check=False)
    found: dict[str, list[str]] = {}
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        m = _NS_RE.match(line.split()[0])
        if m and m.group(1) != prefix():
            found.setdefault(m.group(1), []).append(m.group(0))
    return found


def _busy_message(holder: Optional[str], others: dict[str, list[str]]) -> str:
    why = ("the BPF congestion-control names (haslab_tcphas, …) are global to the kernel whatever "
           "the prefix, so live mode runs one testbed at a time")
    if holder is not None:
        return (f"another live run is using this machine: {holder}; {why}. Wait for it to end "
                f"(or give --wait SECONDS / $HASLAB_LIVE_WAIT_S), or stop it by its PID")
    items = sorted(others.items())
    up = "; ".join(f"prefix {pre!r} ({', '.join(sorted(names)[:4])}{', …' if len(names) > 4 else ''})"
                   for pre, names in items)
    how = ", ".join(f"`HASLAB_LIVE_PREFIX={pre} haslab live down`" for pre, _ in items)
    return f"another live testbed is up: {up}; {why}. Remove it with {how}"


def default_wait_s() -> float:
    """$HASLAB_LIVE_WAIT_S: how long a run waits for a busy machine before refusing (default 0)."""
    v = os.environ.get("HASLAB_LIVE_WAIT_S", "0")
    try:
        w = float(v)
    except ValueError:
        raise ValueError(f"HASLAB_LIVE_WAIT_S={v!r}: expected a number of seconds") from None
    if not w >= 0:
        raise ValueError(f"HASLAB_LIVE_WAIT_S={v!r}: must be zero or more seconds")
    return w


@contextlib.contextmanager
def exclusive(wait_s: Optional[float] = None, *, check_others: bool = True) -> Iterator[None]:
    """Holds the machine-wide live lock for the block (re-entrant within this process).

    Refuses with :class:`LiveBusy` (after waiting up to ``wait_s``, default
    $HASLAB_LIVE_WAIT_S or 0) when another process holds it, or, with ``check_others``, when a
    testbed with another prefix is up."""
    global _held
    if _held:
        _held += 1
        try:
            yield
        finally:
            _held -= 1
        return
    wait = default_wait_s() if wait_s is None else float(wait_s)
    deadline = time.monotonic() + wait
    LOCK_PATH.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            holder, others = None, {}
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
            else:
                others = other_testbeds() if check_others else {}
                if not others:
                    break
                fcntl.flock(fd, fcntl.LOCK_UN)
            if time.monotonic() >= deadline:
                raise LiveBusy(_busy_message(holder, others))
            time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))
        os.ftruncate(fd, 0)
        me = {"pid": os.getpid(), "prefix": prefix(), "argv": _argv(), "since": time.time()}
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        _held = 1
        try:
            yield
        finally:
            _held = 0
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _argv() -> list[str]:
    try:
        return [a.decode("utf-8", "replace") for a in Path("/proc/self/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return []


def run(args: Sequence[str], *, ns: Optional[str] = None, check: bool = True, input: Optional[str] = None,
        timeout: float = 30) -> subprocess.CompletedProcess:
    """Runs a command (inside namespace ``ns`` if given) and returns the completed process."""
    argv = list(args)
    if ns is not None:
        argv = ["ip", "netns", "exec", ns, *argv]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, input=input, timeout=timeout)
    except FileNotFoundError as e:
        raise LiveError(f"{argv[0]} not found: live mode needs iproute2, iptables, ethtool (make install)") from e
    if check and p.returncode != 0:
        raise LiveError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return p


def sh(script: str, ns: str) -> None:
    """Runs a shell script inside a namespace (one process for many small settings)."""
    run(["sh", "-ec", script], ns=ns)


def our_namespaces() -> list[str]:
    """Our prefix's namespaces (PREFIX-NODE exactly: prefix ``haslab`` does not claim the
    namespaces of prefix ``haslab-x``)."""
    p = run(["ip", "netns", "list"], check=False)
    names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    out = []
    for n in names:
        m = _NS_RE.match(n)
        if m and m.group(1) == prefix():
            out.append(n)
    return sorted(out)


def ns_pids(ns: str) -> list[int]:
    p = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def _is_ours(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False
    return b"haslab-delaybox" in cmd or b"haslab/live/" in cmd


def stop_pids(pids: Sequence[int], grace: float = 3.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds, each process by its PID."""
    pids = [p for p in pids if p != os.getpid()]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def bpftool() -> Optional[str]:
    return shutil.which("bpftool") or (
        "/usr/sbin/bpftool" if os.path.exists("/usr/sbin/bpftool") else None
    )


def our_struct_ops() -> list[dict]:
    """The registered BPF struct_ops maps whose name starts with ``haslab_``."""
    tool = bpftool()
    if tool is None:
        return []
    p = run([tool, "-j", "struct_ops", "show"], check=False)
    try:
        items = json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        # bpftool prints one JSON object per map in some versions
        items = [json.loads(l) for l in p.stdout.splitlines() if l.strip().startswith("{")]
    ours = [i for i in items if str(i.get("name", "")).startswith("haslab_")]
    # An unregistered struct_ops whose last socket has not gone yet stays listed (state TOBEFREE,
    # `unregister` answers "Operation now in progress") until the kernel drops its last
    # reference: it is no longer a congestion control anyone can select, so it is not ours to
    # remove (it is listed as `freeing` by `status`).
    try:
        avail = set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    except OSError:
        return ours
    return [i for i in ours if i["name"] in avail]


def freeing_struct_ops() -> list[str]:
    """Our struct_ops that are unregistered but not yet freed by the kernel."""
    tool = bpftool()
    if tool is None:
        return []
    p = run([tool, "-j", "struct_ops", "show"], check=False)
    try:
        items = json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        items = [json.loads(l) for l in p.stdout.splitlines() if l.strip().startswith("{")]
    registered = {i["name"] for i in our_struct_ops()}
    return sorted(f"{i['name']} (id {i['id']})" for i in items
                  if str(i.get("name", "")).startswith("haslab_") and i["name"] not in registered)


def unregister_struct_ops() -> list[str]:
    tool = bpftool()
    gone = []
    for item in our_struct_ops():
        p = run([tool, "struct_ops", "unregister", "id", str(item["id"])], check=False)
        if p.returncode == 0:
            gone.append(f"struct_ops {item['name']}")
    return gone


def leftovers() -> list[str]:
    """Everything with our prefix that exists now (empty after a clean `down`)."""
    found = [f"netns {n}" for n in our_namespaces()]
    p = run(["ip", "-o", "link", "show"], check=False)
    for line in p.stdout.splitlines():
        parts = line.split(": ")
        if len(parts) > 1 and parts[1].split("@")[0].startswith(prefix()):
            found.append(f"link {parts[1].split('@')[0]} (root namespace)")
    found += [f"struct_ops {i['name']}" for i in our_struct_ops()]
    if state_dir().exists():
        found.append(f"state {state_dir()}")
    return found


def cleanup() -> list[str]:
    """Removes everything with our prefix: the processes our state file names and those inside our
    namespaces (by PID), the namespaces (and with them their interfaces, qdiscs and iptables rules),
    our BPF struct_ops, the state directory. Returns what was removed.

    Under the machine-wide lock: while another process runs a testbed with our prefix it refuses
    (:class:`LiveBusy`, naming that run); while one runs with another prefix it removes our
    namespaces and state but leaves the BPF algorithms, which are that run's."""
    try:
        with exclusive(0, check_others=False):
            return _cleanup(bpf=True)
    except LiveBusy:
        try:
            h = json.loads(LOCK_PATH.read_text())
        except (OSError, ValueError):
            h = {}
        if not h or h.get("prefix") == prefix():
            raise
        return _cleanup(bpf=False)


def _cleanup(bpf: bool) -> list[str]:
    removed: list[str] = []
    state = state_dir() / "state.json"
    pids: list[int] = []
    if state.exists():
        try:
            named = [int(p) for p in json.loads(state.read_text()).get("pids", [])]
        except (ValueError, OSError):
            named = []
        # only if the PID still runs one of ours (a PID can be reused after the process ended)
        pids += [p for p in named if _is_ours(p)]
    namespaces = our_namespaces()
    for n in namespaces:
        pids += ns_pids(n)
    pids = sorted(set(p for p in pids if _alive(p)))
    if pids:
        stop_pids(pids)
        removed.append(f"{len(pids)} process(es)")
    for n in namespaces:
        run(["ip", "netns", "del", n], check=False)
        removed.append(f"netns {n}")
    if bpf:
        removed += unregister_struct_ops()
    if state_dir().exists():
        shutil.rmtree(state_dir(), ignore_errors=True)
        removed.append(f"state {state_dir()}")
    return removed
