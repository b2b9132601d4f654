"""UDP round-trip probe of the live testbed (standard library only; runs as a script inside the
namespaces, as bulk.py does)::

    python probe.py echo ADDR PORT SECONDS          # echoes datagrams back for SECONDS
    python probe.py ping ADDR PORT COUNT INTERVAL   # prints a JSON list of RTTs in ns

A 64-byte datagram each way: its serialisation at the bottleneck (64 µs at 8 Mbit/s) is part of
the measured RTT, as it would be for ping.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time


def echo(addr: str, port: int, seconds: float) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    print("ready", flush=True)
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        s.settimeout(left)
        try:
            data, peer = s.recvfrom(2048)
        except socket.timeout:
            return
        s.sendto(data, peer)


def ping(addr: str, port: int, count: int, interval: float) -> list[int]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    rtts = []
    for k in range(count):
        t = time.monotonic_ns()
        s.sendto(struct.pack("<QQ", k, t).ljust(64, b"\0"), (addr, port))
        while True:
            try:
                data, _ = s.recvfrom(2048)
            except socket.timeout:
                break
            got_k, got_t = struct.unpack_from("<QQ", data)
            if got_k == k:
                rtts.append(time.monotonic_ns() - got_t)
                break
        time.sleep(interval)
    return rtts


if __name__ == "__main__":
    if sys.argv[1] == "echo":
        echo(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        print(json.dumps(ping(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))))
