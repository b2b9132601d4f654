"""Bulk and chunk traffic of live mode: one sender or receiver per process, run inside a host
namespace as a plain script (standard library only, so it starts fast and imports nothing of
the simulator)::

    python bulk.py send SPEC_JSON     # listens, accepts one connection, writes, samples TCP_INFO
    python bulk.py recv SPEC_JSON     # connects at its start time, reads, counts bytes per window

All times in SPEC are ns relative to ``t0_ns`` (CLOCK_MONOTONIC, which every namespace shares).
Each process writes its results as JSON to ``SPEC["out"]`` and exits.

The sender sets the congestion control on the *listening* socket (accepted sockets inherit it;
the namespace default is never changed) and, for a ladder, fills the BPF socket-storage map for
the accepted socket before the first byte is written.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import sys
import time

TCP_CONGESTION = 13
TCP_INFO = 11
TCP_MAXSEG = 2
TCP_NOTSENT_LOWAT = 25
SO_MAX_PACING_RATE = 47
#: with a stop time: at most this much written but not yet sent sits in the socket (see send)
STOP_LOWAT_BYTES = 16 * 1024

#: struct tcp_info (include/uapi/linux/tcp.h), the fields used, by offset
_INFO = {
    "ca_state": (1, "B"),
    "retransmits": (2, "B"),
    "backoff": (4, "B"),
    "rto_us": (8, "I"),
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "bytes_acked": (120, "Q"),
    "segs_out": (136, "I"),
    "notsent_bytes": (144, "I"),
    "min_rtt_us": (148, "I"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    # time (µs) the sender was busy, limited by the receive window, limited by its send buffer
    # (include/uapi/linux/tcp.h: tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited)
    "busy_time_us": (168, "Q"),
    "rwnd_limited_us": (176, "Q"),
    "sndbuf_limited_us": (184, "Q"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    "dsack_dups": (216, "I"),
    "total_rto": (240, "H"),
    "total_rto_recoveries": (242, "H"),
}
_INFO_LEN = 248


def tcp_info(sock: socket.socket) -> dict:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _INFO_LEN)
    out = {}
    for k, (off, fmt) in _INFO.items():
        if off + struct.calcsize(fmt) <= len(raw):
            out[k] = struct.unpack_from("<" + fmt, raw, off)[0]
    return out


def now_rel(t0: int) -> int:
    return time.monotonic_ns() - t0


def sleep_until(t0: int, rel_ns: int) -> None:
    while True:
        left = rel_ns - now_rel(t0)
        if left <= 0:
            return
        time.sleep(min(left / 1e9, 0.5))


def send(spec: dict) -> dict:
    t0 = spec["t0_ns"]
    end = spec["end_ns"]
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, spec["cc"].encode())
    if spec.get("mss") and spec["mss"] != 1448:
        lst.setsockopt(socket.IPPROTO_TCP, TCP_MAXSEG, int(spec["mss"]))
    lst.bind((spec["addr"], spec["port"]))
    lst.listen(4)
    print("ready", flush=True)
    lst.settimeout(max((end - now_rel(t0)) / 1e9, 0.1))
    result: dict = {"cc": spec["cc"], "samples": []}
    try:
        conn, _ = lst.accept()
    except socket.timeout:
        result["error"] = "no connection"
        return result
    result["established_ns"] = now_rel(t0)
    lst.close()
    got = conn.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
    result["cc_accepted"] = got
    if spec.get("max_pacing_rate_Bps"):
        conn.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", int(spec["max_pacing_rate_Bps"])))
    elif spec.get("linux_pacing"):
        # any value but ~0 turns on the kernel's internal pacing (sk_pacing_status = NEEDED)
        conn.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", 1 << 40))
    if spec.get("ladder_bps"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bpfsys

        bpfsys.set_ladder(conn.fileno(), spec["ladder_bps"])
        result["ladder_bps"] = spec["ladder_bps"]
    conn.setblocking(False)
    app = spec["app"]
    stop = app.get("stop_ns") if app.get("stop_ns") is not None else end
    stop = min(stop, end)
    total = app.get("bytes")
    chunk = app.get("chunk_bytes")
    interval = app.get("interval_ns")
    start = app.get("start_ns", 0)
    block = memoryview(bytearray(64 * 1024))
    if stop < end:
        # The simulator's sender withdraws what it has not transmitted at its stop time; a
        # socket cannot, so keep little unsent data in it (TCP_NOTSENT_LOWAT: writable only
        # below 16 KiB unsent, and 16 KiB writes): at the stop at most ~32 KiB is still to go.
        # completed_ns is then, as in the simulator, when everything written is acknowledged.
        conn.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, STOP_LOWAT_BYTES)
        block = block[:STOP_LOWAT_BYTES]
    written = 0  # bytes the application has handed to the socket
    allowed = 0  # bytes the application wants written so far
    next_chunk = start
    sample_every = spec.get("sample_interval_ns", 20_000_000)
    next_sample = 0
    while True:
        t = now_rel(t0)
        if t >= end:
            break
        if t >= next_sample:
            info = tcp_info(conn)
            result["samples"].append(
                [t, info["snd_cwnd"], info["snd_ssthresh"], info["rtt_us"] * 1000, info["ca_state"], info["pacing_rate"]]
            )
            next_sample = t + sample_every
        if chunk is not None:
            while next_chunk <= t and next_chunk < stop:
                allowed += chunk
                next_chunk += interval
        else:
            allowed = total if total is not None else (1 << 62)
            if t >= stop:
                allowed = written
        want = allowed - written
        deadline = min(next_sample, end, next_chunk if chunk is not None else end, stop if t < stop else end)
        timeout = max((deadline - now_rel(t0)) / 1e9, 0)
        if want <= 0:
            if t >= stop and "completed_ns" not in result:
                info = tcp_info(conn)
                if info.get("notsent_bytes", 1) == 0 and info.get("unacked", 1) == 0:
                    result["completed_ns"] = t
                    continue
                time.sleep(min(timeout, 0.002))  # to the ms: the completion is a measurement
                continue
            time.sleep(min(timeout, 0.05))
            continue
        _, w, _ = select.select([], [conn], [], timeout)
        if not w:
            continue
        try:
            n = conn.send(block[: min(want, len(block))])
        except BlockingIOError:
            continue
        except (BrokenPipeError, ConnectionResetError) as e:
            result["error"] = str(e)
            break
        written += n
    info = tcp_info(conn)
    result["final"] = info
    result["bytes_written"] = written
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import bpfsys

        stats = bpfsys.read_stats(conn.fileno()) if spec["cc"].startswith("haslab_") else None
    except OSError:
        stats = None
    if stats:
        result["bpf_stats"] = stats
    try:
        conn.close()
    except OSError:
        pass
    return result


def recv(spec: dict) -> dict:
    t0 = spec["t0_ns"]
    end = spec["end_ns"]
    window = spec["window_ns"]
    start = spec["app"].get("start_ns", 0)
    sleep_until(t0, start)
    result: dict = {"bins": {}}
    s = None
    while now_rel(t0) < end:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t_conn = now_rel(t0)
        try:
            s.settimeout(5)
            s.connect((spec["server"], spec["port"]))
            break
        except (ConnectionRefusedError, socket.timeout, OSError):
            s.close()
            s = None
            time.sleep(0.02)
    if s is None:
        result["error"] = "could not connect"
        return result
    result["connect_ns"] = t_conn
    result["established_ns"] = now_rel(t0)
    s.setblocking(False)
    total = 0
    bins: dict[int, int] = {}
    last_byte = None
    buf = bytearray(256 * 1024)
    while True:
        t = now_rel(t0)
        if t >= end:
            break
        r, _, _ = select.select([s], [], [], max((end - t) / 1e9, 0))
        if not r:
            continue
        try:
            n = s.recv_into(buf)
        except BlockingIOError:
            continue
        except ConnectionResetError:
            break
        if n == 0:
            result["eof_ns"] = now_rel(t0)
            break
        t = now_rel(t0)
        if t >= end:
            break  # after the scenario's end: not counted (the simulator stops at its duration)
        total += n
        b = t // window
        bins[b] = bins.get(b, 0) + n
        last_byte = t
    s.close()
    result["bytes_received"] = total
    result["last_byte_ns"] = last_byte
    result["bins"] = {str(k): v for k, v in sorted(bins.items())}
    return result


def main() -> None:
    role, spec_text = sys.argv[1], sys.argv[2]
    spec = json.loads(spec_text)
    out = send(spec) if role == "send" else recv(spec)
    tmp = spec["out"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, spec["out"])


if __name__ == "__main__":
    main()
