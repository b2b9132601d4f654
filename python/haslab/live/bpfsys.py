"""The few ``bpf(2)`` calls live mode needs from Python, with the standard library only (this file
is also imported by the bulk worker, which runs as a plain script inside the namespaces).

- find a map by name (``BPF_MAP_GET_NEXT_ID`` → ``BPF_MAP_GET_FD_BY_ID`` →
  ``BPF_OBJ_GET_INFO_BY_FD``);
- write and read a socket-storage map keyed by a socket's descriptor
  (``BPF_MAP_UPDATE_ELEM`` / ``BPF_MAP_LOOKUP_ELEM``).

The layouts of the values are ``struct haslab_ladder`` and ``struct haslab_ca_stats`` in
bpf/haslab_cc.h; both maps (``haslab_ladder``, ``haslab_stats``) are defined in bpf/tcphas.bpf.c.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

_SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(platform.machine(), 321)
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

BPF_MAP_LOOKUP_ELEM = 1
BPF_MAP_UPDATE_ELEM = 2
BPF_MAP_GET_NEXT_ID = 12
BPF_MAP_GET_FD_BY_ID = 14
BPF_OBJ_GET_INFO_BY_FD = 15

#: struct haslab_ladder { __u32 n; __u32 pad; __u64 rates_bps[LADDER_MAX]; }
LADDER_MAX = 16
LADDER_FMT = f"<II{LADDER_MAX}Q"
#: struct haslab_ca_stats (the algorithm's view, read back for tests and results)
STATS_FMT = "<IIQQQQ"  # qlevel, flags, bwe_bps, shaping_bps, rtt_hat_us, updates
STATS_FIELDS = ("qlevel", "flags", "bwe_bps", "shaping_bps", "rtt_hat_us", "updates")


def _bpf(cmd: int, attr: bytes) -> tuple[int, bytes]:
    buf = ctypes.create_string_buffer(attr, 128)
    r = _libc.syscall(_SYS_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"bpf(cmd {cmd}): {os.strerror(e)}")
    return r, buf.raw


def map_fd_by_name(name: str) -> int:
    """A new descriptor of the BPF map called ``name`` (the first found)."""
    start = 0
    while True:
        try:
            _, raw = _bpf(BPF_MAP_GET_NEXT_ID, struct.pack("<III", start, 0, 0))
        except OSError:
            raise FileNotFoundError(f"no BPF map named {name!r} (are the haslab algorithms loaded?)") from None
        start = struct.unpack_from("<I", raw, 4)[0]
        try:
            fd, _ = _bpf(BPF_MAP_GET_FD_BY_ID, struct.pack("<III", start, 0, 0))
        except OSError:
            continue
        info = ctypes.create_string_buffer(88)
        try:
            _bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("<IIQ", fd, 88, ctypes.addressof(info)))
        except OSError:
            os.close(fd)
            continue
        got = info.raw[24:40].split(b"\0")[0].decode(errors="replace")
        if got == name:
            return fd
        os.close(fd)


def sk_storage_update(map_fd: int, sock_fd: int, value: bytes) -> None:
    key = ctypes.c_int(sock_fd)
    val = ctypes.create_string_buffer(value, len(value))
    _bpf(BPF_MAP_UPDATE_ELEM, struct.pack("<I4xQQQ", map_fd, ctypes.addressof(key), ctypes.addressof(val), 0))


def sk_storage_lookup(map_fd: int, sock_fd: int, size: int) -> bytes | None:
    key = ctypes.c_int(sock_fd)
    val = ctypes.create_string_buffer(size)
    try:
        _bpf(BPF_MAP_LOOKUP_ELEM, struct.pack("<I4xQQQ", map_fd, ctypes.addressof(key), ctypes.addressof(val), 0))
    except OSError:
        return None
    return val.raw


def ladder_value(rates_bps: list[int]) -> bytes:
    rates = sorted({int(r) for r in rates_bps if r > 0})[:LADDER_MAX]
    return struct.pack(LADDER_FMT, len(rates), 0, *(rates + [0] * (LADDER_MAX - len(rates))))


def set_ladder(sock_fd: int, rates_bps: list[int], map_name: str = "haslab_ladder") -> None:
    """Gives the encoding ladder to the algorithm of the (accepted) socket ``sock_fd``."""
    fd = map_fd_by_name(map_name)
    try:
        sk_storage_update(fd, sock_fd, ladder_value(rates_bps))
    finally:
        os.close(fd)


def read_stats(sock_fd: int, map_name: str = "haslab_stats") -> dict | None:
    """The BPF algorithm's own view of the socket (level, estimate, shaping rate), if it wrote one."""
    try:
        fd = map_fd_by_name(map_name)
    except FileNotFoundError:
        return None
    try:
        raw = sk_storage_lookup(fd, sock_fd, struct.calcsize(STATS_FMT))
    finally:
        os.close(fd)
    if raw is None:
        return None
    return dict(zip(STATS_FIELDS, struct.unpack(STATS_FMT, raw)))
