"""Building, registering and unregistering the BPF congestion controls of bpf/: one source per
algorithm (``bpf/<name>.bpf.c``: tcphas, tibet, westwood, newcwv, with the shared headers
``bpf/haslab_common.h`` and ``bpf/haslab_cc.h``), each built into its own object
``bpf/build/<name>.bpf.o``.

Loader: ``bpftool struct_ops register``, once per object (libbpf inside bpftool). It loads the
object, passes the verifier and registers its ``tcp_congestion_ops`` map; the registration
outlives bpftool (these are struct_ops maps without links), so :func:`unregister` (``bpftool
struct_ops unregister``) must remove them: at the end of every live run, on ``haslab live down``,
and before ``up`` (leftovers of a killed run). Python then only needs the socket-storage maps
``haslab_ladder`` (written) and ``haslab_stats`` (read back), both in the tcphas object, found by
name (:mod:`.bpfsys`). The algorithms are set per socket (``setsockopt(TCP_CONGESTION)`` on the
listening socket); no namespace default is ever set to them (on the kernel tested, a reference
leak on that path kept a struct_ops map until reboot).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import netns
from .netns import LiveError, run


def bpf_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "bpf"


def sources() -> list[Path]:
    """The algorithms' sources, ``bpf/*.bpf.c`` (one per algorithm)."""
    return sorted(bpf_dir().glob("*.bpf.c"))


def object_paths() -> list[Path]:
    """The objects bpf/Makefile builds: ``bpf/build/<name>.bpf.o`` for each ``bpf/<name>.bpf.c``."""
    return [bpf_dir() / "build" / (s.name[: -len(".c")] + ".o") for s in sources()]


def build() -> list[Path]:
    """Builds the objects if one is missing or older than a source or header (make -C bpf)."""
    objs = object_paths()
    if not objs:
        raise LiveError(f"the BPF sources are not in {bpf_dir()} (live mode runs from a source checkout)")
    srcs = sources() + sorted(bpf_dir().glob("*.h"))
    newest = max(s.stat().st_mtime for s in srcs)
    if all(o.exists() and o.stat().st_mtime >= newest for o in objs):
        return objs
    if shutil.which("clang") is None:
        raise LiveError("clang is needed to build the BPF congestion controls (make install installs it)")
    run(["make", "-s", "-C", str(bpf_dir())], timeout=120)
    return objs


def registered() -> list[str]:
    return sorted(i["name"] for i in netns.our_struct_ops())


def register() -> list[str]:
    """Registers haslab_tcphas, haslab_tibet, haslab_westwood and haslab_newcwv."""
    tool = netns.bpftool()
    if tool is None:
        raise LiveError("bpftool is needed to load the BPF congestion controls (make install installs it)")
    objs = build()
    with netns.exclusive(check_others=False):
        netns.unregister_struct_ops()
        for obj in objs:
            p = run([tool, "struct_ops", "register", str(obj)], check=False, timeout=60)
            if p.returncode != 0:
                netns.unregister_struct_ops()
                log = (p.stderr or p.stdout).strip().splitlines()
                raise LiveError(f"bpftool could not register the BPF congestion control of {obj.name}:\n"
                                + "\n".join(log[-15:]))
        return registered()


def unregister() -> list[str]:
    with netns.exclusive(check_others=False):
        return netns.unregister_struct_ops()


class BpfCCs:
    """Context manager: registers the BPF algorithms if any is needed, unregisters them on exit."""

    def __init__(self, needed: list[str]):
        self.needed = list(needed)
        #: leave them registered on exit (with a testbed left up)
        self.keep = False

    def __enter__(self) -> "BpfCCs":
        if self.needed:
            got = register()
            missing = sorted(set(self.needed) - set(got))
            if missing:
                unregister()
                raise LiveError(f"BPF congestion controls not registered: {', '.join(missing)}")
        return self

    def __exit__(self, *exc) -> None:
        if self.needed and not self.keep:
            unregister()
