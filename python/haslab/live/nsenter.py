"""Sockets in another network namespace from one process: ``setns(2)`` around the socket's
creation (a socket stays in the namespace it was created in), then back. Lets one asyncio
process serve every server namespace (the origin) or drive every client namespace (the
players) instead of one process per host."""

from __future__ import annotations

import ctypes
import os
import socket
from contextlib import contextmanager
from typing import Iterator, Optional

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns: {os.strerror(e)}")


@contextmanager
def in_netns(name: Optional[str]) -> Iterator[None]:
    """Runs the body inside the named namespace (``/run/netns/NAME``); None: stay here."""
    if name is None:
        yield
        return
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/run/netns/{name}", os.O_RDONLY)
        try:
            _setns(target)
        finally:
            os.close(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(own)


def tcp_socket(netns: Optional[str]) -> socket.socket:
    """A non-blocking TCP socket created in ``netns``."""
    with in_netns(netns):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    return s
