"""The DASH origin of live mode: a real HTTP/1.1 server (``h11`` for the protocol, asyncio for
the sockets; no HTTP parsing of our own).

It serves, for every video ``vid`` it holds:

- ``/{vid}/manifest.mpd`` — a static MPD (one Period, a SegmentTemplate per level:
  ``$RepresentationID$/$Number$.m4s``, ``startNumber`` 0);
- ``/{vid}/{level}/{index}.m4s`` — the segment's bytes: synthetic, exactly
  ``sizes_bytes[level][index]`` long, the sizes of the simulator's video model
  (``haslab._core.LivePlayers.video``);
- ``/static/...`` — files under a directory (real fMP4 for dash.js, its page and script);
- ``POST /log`` — a JSON body appended to the metrics log (dash.js reports its events here).

Connections are persistent (HTTP/1.1 keep-alive) unless the client sends ``Connection: close``.
Every request is logged (JSON lines) with its timing on the run's clock. Hardening:

- paths are decoded and resolved; anything outside the static directory (``..``, encoded dots,
  NUL bytes, absolute-form targets) is 404/400, never read;
- malformed requests get 400 (h11's own status hint: 431 for oversized headers), unsupported
  methods 405, bodies over :data:`MAX_BODY_BYTES` 413, unknown paths 404;
- a request's head must arrive within ``header_timeout_s`` of its first byte (slowloris → 408
  and close); an idle keep-alive connection is closed after ``idle_timeout_s``; a client that
  stops reading is dropped when a chunk of the body cannot be written for ``send_timeout_s``;
- at most ``max_connections`` connections at once (503 beyond).

Per listener: the congestion control is set on the **listening** socket with
``setsockopt(TCP_CONGESTION)`` (accepted sockets inherit it); for ``haslab_tcphas`` the video's
ladder is written into the BPF socket-storage map for each accepted socket (``bpfsys``);
``SO_MAX_PACING_RATE`` where asked. ``TCP_INFO`` of every connection is sampled (cwnd, ssthresh,
SRTT — the kernel struct that ``ss -ti`` prints) every ``sample_interval_ns``.

Run as a script inside live mode (``python origin.py SPEC_JSON``), or use :class:`Origin` from
Python (the tests do, on localhost).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import struct
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import h11

TCP_CONGESTION = 13
SO_MAX_PACING_RATE = 47

MAX_HEADER_BYTES = 16 * 1024
MAX_BODY_BYTES = 256 * 1024
CHUNK_BYTES = 64 * 1024
_FILL = bytes(range(256)) * (CHUNK_BYTES // 256)

CONTENT_TYPES = {
    ".mpd": "application/dash+xml",
    ".m4s": "video/iso.segment",
    ".mp4": "video/mp4",
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
}


@dataclass
class Listener:
    addr: str
    port: int
    #: network namespace to create the listening socket in (None: this one)
    netns: Optional[str] = None
    cc: Optional[str] = None
    ladder_bps: Optional[list[int]] = None
    max_pacing_rate_Bps: Optional[int] = None
    linux_pacing: bool = False
    name: str = ""


@dataclass
class Limits:
    header_timeout_s: float = 10.0
    idle_timeout_s: float = 60.0
    send_timeout_s: float = 30.0
    max_connections: int = 256
    max_header_bytes: int = MAX_HEADER_BYTES
    max_body_bytes: int = MAX_BODY_BYTES


def mpd_text(video: dict, vid: str) -> str:
    """A static MPD for a video dict (bitrates_bps, durations_ns, sizes_bytes)."""
    durs = video["durations_ns"]
    total_s = sum(durs) / 1e9
    seg_s = durs[0] / 1e9
    reps = "\n".join(
        f'      <Representation id="{l}" bandwidth="{b}" codecs="avc1.42c01e" width="640" height="360">\n'
        f'        <SegmentTemplate media="$RepresentationID$/$Number$.m4s" startNumber="0" '
        f'duration="{int(round(seg_s * 1000))}" timescale="1000"/>\n'
        f"      </Representation>"
        for l, b in enumerate(video["bitrates_bps"])
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
        'profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" '
        f'mediaPresentationDuration="PT{total_s:.3f}S" minBufferTime="PT{seg_s:.3f}S">\n'
        f'  <Period id="0" start="PT0S">\n'
        f'    <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true">\n'
        f"{reps}\n"
        "    </AdaptationSet>\n  </Period>\n</MPD>\n"
    )


class _Reject(Exception):
    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status


class Origin:
    """The server (see the module documentation). ``t0_ns``: CLOCK_MONOTONIC of the run's time
    0 (times in the logs are relative to it)."""

    def __init__(
        self,
        videos: dict[str, dict],
        listeners: list[Listener],
        *,
        static_dir: Optional[os.PathLike] = None,
        log_path: Optional[os.PathLike] = None,
        metrics_path: Optional[os.PathLike] = None,
        limits: Limits = Limits(),
        t0_ns: Optional[int] = None,
        sample_interval_ns: int = 0,
    ):
        self.videos = videos
        self.mpds = {vid: mpd_text(v, vid).encode() for vid, v in videos.items()}
        self.listeners = listeners
        self.static_dir = Path(static_dir).resolve() if static_dir else None
        self.limits = limits
        self.t0_ns = time.monotonic_ns() if t0_ns is None else t0_ns
        self.sample_interval_ns = sample_interval_ns
        self._log = open(log_path, "a", buffering=1) if log_path else None
        self._metrics = open(metrics_path, "a", buffering=1) if metrics_path else None
        self.requests: list[dict] = []  # also kept in memory (tests, summary)
        self.connections: dict[int, dict] = {}
        self._open = 0
        self._next_conn = 0
        self._servers: list[asyncio.base_events.Server] = []
        self.bound: list[tuple[str, int]] = []

    def now(self) -> int:
        return time.monotonic_ns() - self.t0_ns

    # ------------------------------------------------------------------------ sockets

    def _listen_socket(self, l: Listener) -> socket.socket:
        from .nsenter import in_netns

        with in_netns(l.netns):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if l.cc:
            # on the listening socket: accepted sockets inherit it (never a namespace default)
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, l.cc.encode())
        s.bind((l.addr, l.port))
        s.listen(128)
        s.setblocking(False)
        return s

    async def start(self) -> None:
        for l in self.listeners:
            sock = self._listen_socket(l)
            srv = await asyncio.start_server(
                lambda r, w, l=l: self._connection(r, w, l), sock=sock, limit=CHUNK_BYTES
            )
            self._servers.append(srv)
            self.bound.append(sock.getsockname())
        if self.sample_interval_ns > 0:
            asyncio.get_running_loop().create_task(self._sampler())

    async def close(self) -> None:
        for s in self._servers:
            s.close()
        for c in list(self.connections.values()):
            w = c.get("writer")
            if w is not None:
                w.transport.abort()
        for s in self._servers:
            try:
                await asyncio.wait_for(s.wait_closed(), 2)
            except (asyncio.TimeoutError, Exception):
                pass

    async def _sampler(self) -> None:
        from .bulk import tcp_info

        every = self.sample_interval_ns / 1e9
        while True:
            await asyncio.sleep(every)
            t = self.now()
            for c in list(self.connections.values()):
                sock = c.get("sock")
                if sock is None or c.get("closed"):
                    continue
                try:
                    info = tcp_info(sock)
                except OSError:
                    continue
                c["samples"].append(
                    [t, info["snd_cwnd"], info["snd_ssthresh"], info["rtt_us"] * 1000, info["ca_state"],
                     info["pacing_rate"]]
                )

    # ------------------------------------------------------------------------ one connection

    def _setup_accepted(self, sock: socket.socket, l: Listener, rec: dict) -> None:
        if sock is None:
            return
        # Nagle off, as the papers' Apache httpd has it on every connection (server/core.c,
        # core_pre_connection: APR_TCP_NODELAY): with Nagle, the response's last partial segment
        # waits for the ACK of the small segment of its headers (Linux tcp_nagle_check with
        # Minshall's test), about one RTT, so a segment shorter than an RTT at the bottleneck
        # took up to an RTT longer than the simulator's server sends it
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            rec["cc"] = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
        except OSError:
            pass
        if l.max_pacing_rate_Bps:
            sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", int(l.max_pacing_rate_Bps)))
        elif l.linux_pacing:
            sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", 1 << 40))
        if l.ladder_bps and l.cc == "haslab_tcphas":
            from . import bpfsys

            bpfsys.set_ladder(sock.fileno(), l.ladder_bps)
            rec["ladder_bps"] = l.ladder_bps

    def _final(self, rec: dict) -> None:
        sock = rec.get("sock")
        if sock is None or rec.get("final"):
            return
        from .bulk import tcp_info

        try:
            rec["final"] = tcp_info(sock)
        except OSError:
            pass
        stats = self._bpf_stats(rec)
        if stats:
            rec["bpf_stats"] = stats

    @staticmethod
    def _bpf_stats(rec: dict | None) -> dict | None:
        """What a BPF algorithm publishes of a connection now (TcpHas: level, estimate, shaping
        rate, RTT̂), or None for a kernel algorithm or a socket already gone."""
        sock = rec.get("sock") if rec else None
        if sock is None or not str(rec.get("cc", "")).startswith("haslab_"):
            return None
        try:
            from . import bpfsys

            return bpfsys.read_stats(sock.fileno())
        except OSError:
            return None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, l: Listener):
        cid = self._next_conn
        self._next_conn += 1
        sock = writer.get_extra_info("socket")
        peer = writer.get_extra_info("peername")
        rec = {"conn": cid, "listener": l.name, "peer": list(peer) if peer else None, "opened_ns": self.now(),
               "samples": [], "requests": 0, "sock": sock, "writer": writer}
        self.connections[cid] = rec
        self._open += 1
        raw = getattr(sock, "_sock", sock)  # asyncio's TransportSocket wraps the real one
        try:
            real = socket.socket(fileno=os.dup(raw.fileno())) if raw is not None else None
        except OSError:
            real = None
        rec["sock"] = real
        try:
            self._setup_accepted(real, l, rec)
            conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)
            if self._open > self.limits.max_connections:
                await self._simple(conn, writer, 503, b"too many connections\n", cid, None, close=True)
                return
            while True:
                ok = await self._one_request(conn, reader, writer, cid)
                if not ok or conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    break
                try:
                    conn.start_next_cycle()
                except h11.LocalProtocolError:
                    break
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            rec["error"] = "connection lost"
        finally:
            rec["closed_ns"] = self.now()
            self._final(rec)
            rec["closed"] = True
            self._open -= 1
            try:
                writer.close()
            except Exception:
                pass
            if real is not None:
                real.close()
            rec.pop("writer", None)
            rec["sock"] = None

    async def _next_event(self, conn: h11.Connection, reader: asyncio.StreamReader, deadline: float):
        while True:
            ev = conn.next_event()
            if ev is not h11.NEED_DATA:
                return ev
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError
            data = await asyncio.wait_for(reader.read(CHUNK_BYTES), left)
            conn.receive_data(data)
            if not data:
                return conn.next_event()

    async def _one_request(self, conn: h11.Connection, reader, writer, cid: int) -> bool:
        lim = self.limits
        # idle keep-alive wait: until the first byte of the next request
        t_first = None
        try:
            if not conn.trailing_data[0]:
                data = await asyncio.wait_for(reader.read(CHUNK_BYTES), lim.idle_timeout_s)
                if not data:
                    return False
                conn.receive_data(data)
            t_first = self.now()
            deadline = time.monotonic() + lim.header_timeout_s
            ev = await self._next_event(conn, reader, deadline)
        except asyncio.TimeoutError:
            if t_first is None:
                return False  # idle connection: just close
            await self._simple(conn, writer, 408, b"request timeout\n", cid, None, close=True, t_first=t_first)
            return False
        except h11.RemoteProtocolError as e:
            await self._simple(conn, writer, e.error_status_hint or 400, f"bad request: {e}\n".encode(), cid,
                               None, close=True, t_first=t_first)
            return False
        if isinstance(ev, h11.ConnectionClosed) or ev is h11.PAUSED:
            return False
        if not isinstance(ev, h11.Request):
            await self._simple(conn, writer, 400, b"bad request\n", cid, None, close=True, t_first=t_first)
            return False
        self.connections[cid]["requests"] += 1
        method = ev.method.decode("ascii", "replace")
        target = ev.target.decode("ascii", "replace")
        # h11 bounds a head that arrives in pieces; one that arrives whole is measured here
        head = len(ev.target) + sum(len(k) + len(v) + 4 for k, v in ev.headers)
        if head > lim.max_header_bytes:
            await self._simple(conn, writer, 431, b"request head too large\n", cid, (method, target[:200]),
                               close=True, t_first=t_first)
            return False
        body = b""
        try:
            length = None
            for k, v in ev.headers:
                if k == b"content-length":
                    length = int(v)
            if length is not None and length > lim.max_body_bytes:
                raise _Reject(413, "body too large")
            while True:
                e2 = await self._next_event(conn, reader, time.monotonic() + lim.header_timeout_s)
                if isinstance(e2, h11.Data):
                    body += e2.data
                    if len(body) > lim.max_body_bytes:
                        raise _Reject(413, "body too large")
                elif isinstance(e2, h11.EndOfMessage):
                    break
                else:
                    raise _Reject(400, "bad request")
            await self._dispatch(conn, writer, cid, method, target, body, t_first)
            return True
        except _Reject as r:
            await self._simple(conn, writer, r.status, (str(r) + "\n").encode(), cid, (method, target),
                               close=True, t_first=t_first)
            return False
        except asyncio.TimeoutError:
            await self._simple(conn, writer, 408, b"request timeout\n", cid, (method, target), close=True,
                               t_first=t_first)
            return False
        except h11.RemoteProtocolError as e:
            await self._simple(conn, writer, e.error_status_hint or 400, b"bad request\n", cid, (method, target),
                               close=True, t_first=t_first)
            return False

    def _route(self, method: str, target: str) -> tuple[str, object]:
        """(kind, what) for a request target; raises _Reject."""
        if not target.startswith("/"):
            raise _Reject(400, "only origin-form targets (/path) are accepted")
        path = urllib.parse.urlsplit(target).path
        path = urllib.parse.unquote(path)
        if "\x00" in path or "\\" in path:
            raise _Reject(400, "bad path")
        parts = [p for p in path.split("/") if p]
        if any(p in (".", "..") for p in parts):
            raise _Reject(404, "not found")
        if path == "/log":
            if method != "POST":
                raise _Reject(405, "POST only")
            return "log", None
        if method not in ("GET", "HEAD"):
            raise _Reject(405, "method not allowed")
        if parts and parts[0] == "static" and self.static_dir is not None:
            f = (self.static_dir / "/".join(parts[1:])).resolve()
            if not f.is_relative_to(self.static_dir) or not f.is_file():
                raise _Reject(404, "not found")
            return "file", f
        if len(parts) == 2 and parts[0] in self.videos and parts[1] == "manifest.mpd":
            return "mpd", parts[0]
        if len(parts) == 3 and parts[0] in self.videos and parts[2].endswith(".m4s"):
            v = self.videos[parts[0]]
            try:
                level = int(parts[1])
                index = int(parts[2][:-4])
                if level < 0 or index < 0:
                    raise ValueError
                size = v["sizes_bytes"][level][index]
            except (ValueError, IndexError):
                raise _Reject(404, "no such segment") from None
            return "segment", (parts[0], level, index, size)
        raise _Reject(404, "not found")

    async def _dispatch(self, conn, writer, cid, method, target, body, t_first) -> None:
        try:
            kind, what = self._route(method, target)
        except _Reject as r:
            await self._simple(conn, writer, r.status, (str(r) + "\n").encode(), cid, (method, target),
                               close=False, t_first=t_first)
            return
        if kind == "log":
            try:
                item = json.loads(body or b"null")
            except ValueError:
                await self._simple(conn, writer, 400, b"not JSON\n", cid, (method, target), close=False,
                                   t_first=t_first)
                return
            if self._metrics is not None:
                self._metrics.write(json.dumps({"t_ns": self.now(), "wall_ns": time.time_ns(), "conn": cid,
                                                "event": item}) + "\n")
            await self._simple(conn, writer, 204, b"", cid, (method, target), close=False, t_first=t_first)
            return
        if kind == "mpd":
            data = self.mpds[what]
            await self._send(conn, writer, cid, method, target, 200, CONTENT_TYPES[".mpd"], len(data),
                             [data], t_first, extra={"video": what})
            return
        if kind == "segment":
            vid, level, index, size = what
            chunks = (memoryview(_FILL)[: min(CHUNK_BYTES, size - off)] for off in range(0, size, CHUNK_BYTES))
            await self._send(conn, writer, cid, method, target, 200, CONTENT_TYPES[".m4s"], size, chunks,
                             t_first, extra={"video": vid, "level": level, "segment": index})
            return
        f: Path = what
        size = f.stat().st_size
        ctype = CONTENT_TYPES.get(f.suffix, "application/octet-stream")

        def file_chunks():
            with open(f, "rb") as fh:
                while True:
                    b = fh.read(CHUNK_BYTES)
                    if not b:
                        return
                    yield b

        await self._send(conn, writer, cid, method, target, 200, ctype, size, file_chunks(), t_first)

    async def _send(self, conn, writer, cid, method, target, status, ctype, length, chunks, t_first,
                    extra=None) -> None:
        headers = [("Content-Type", ctype), ("Content-Length", str(length)), ("Server", "haslab-origin"),
                   ("Cache-Control", "no-store"), ("Access-Control-Allow-Origin", "*")]
        from haslab._core import HTTP_RESPONSE_HEADER_BYTES
        from haslab.live.wire import padded_head

        # the head padded to the simulator's response header and written with the body's first
        # bytes, as one byte stream (wire.py), as Apache httpd 2.4 sends them (core_filters.c,
        # send_brigade_nonblocking: one writev without sendfile, TCP_CORK around the headers with)
        head = padded_head(conn.send(h11.Response(status_code=status, headers=headers)),
                           HTTP_RESPONSE_HEADER_BYTES)
        t_head = self.now()
        sent = 0
        entry = {"conn": cid, "method": method, "target": target, "status": status, "bytes": length,
                 "request_ns": t_first, "response_ns": t_head, **(extra or {})}
        # the algorithm's state as the response starts (TcpHas: the level and estimate the OFF
        # period's rule, Algorithm 5, acts on at its first segment)
        stats = self._bpf_stats(self.connections.get(cid))
        if stats:
            entry["bpf_stats"] = stats
        try:
            if method != "HEAD":
                for c in chunks:
                    for piece in conn.send_with_data_passthrough(h11.Data(data=c)):
                        if head:
                            writer.writelines([head, piece])  # one write: the transport joins them
                            head = b""
                        else:
                            writer.write(piece)
                    sent += len(c)
                    await asyncio.wait_for(writer.drain(), self.limits.send_timeout_s)
            if head:
                writer.write(head)  # no body (HEAD, or an empty file)
            writer.write(conn.send(h11.EndOfMessage()))
            await asyncio.wait_for(writer.drain(), self.limits.send_timeout_s)
        except asyncio.TimeoutError:
            entry.update(done_ns=self.now(), sent=sent, error="client too slow: send timeout")
            self._record(entry)
            writer.transport.abort()
            raise ConnectionError("send timeout")
        except (ConnectionError, OSError) as e:
            entry.update(done_ns=self.now(), sent=sent, error=str(e) or "connection lost")
            self._record(entry)
            raise
        entry.update(done_ns=self.now(), sent=sent)
        self._record(entry)

    async def _simple(self, conn, writer, status, body, cid, req, *, close, t_first=None) -> None:
        entry = {"conn": cid, "method": req[0] if req else None, "target": req[1] if req else None,
                 "status": status, "bytes": len(body), "request_ns": t_first, "response_ns": self.now()}
        headers = [("Content-Type", "text/plain"), ("Server", "haslab-origin")]
        if status != 204:
            headers.append(("Content-Length", str(len(body))))
        if close:
            headers.append(("Connection", "close"))
        reason = {400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed", 408: b"Request Timeout",
                  413: b"Payload Too Large", 431: b"Request Header Fields Too Large",
                  503: b"Service Unavailable"}.get(status, b"Error")
        try:
            try:
                data = conn.send(h11.Response(status_code=status, headers=headers))
                if body and status != 204:
                    data += conn.send(h11.Data(data=body))
                data += conn.send(h11.EndOfMessage())
            except h11.LocalProtocolError:
                # h11 cannot answer in this state (the request line was garbage): a plain answer
                data = (b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                        % (status, reason, len(body), body))
            writer.write(data)
            await asyncio.wait_for(writer.drain(), self.limits.send_timeout_s)
        except (ConnectionError, OSError, asyncio.TimeoutError):
            pass
        entry["done_ns"] = self.now()
        self._record(entry)

    def _record(self, entry: dict) -> None:
        self.requests.append(entry)
        if self._log is not None:
            self._log.write(json.dumps(entry) + "\n")

    def connection_report(self) -> list[dict]:
        out = []
        for c in self.connections.values():
            out.append({k: v for k, v in c.items() if k not in ("sock", "writer")})
        return out


async def _serve(spec: dict) -> None:
    listeners = [Listener(**l) for l in spec["listeners"]]
    lim = Limits(**spec.get("limits", {}))
    origin = Origin(
        spec["videos"], listeners, static_dir=spec.get("static_dir"), log_path=spec.get("log"),
        metrics_path=spec.get("metrics"), limits=lim, t0_ns=spec.get("t0_ns"),
        sample_interval_ns=spec.get("sample_interval_ns", 0),
    )
    await origin.start()
    print("ready", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    end = spec.get("end_ns")
    if end is not None:
        loop.call_later(max((end - origin.now()) / 1e9, 0), stop.set)
    await stop.wait()
    for c in origin.connections.values():
        origin._final(c)
    report = {"connections": origin.connection_report()}
    await origin.close()
    if spec.get("out"):
        tmp = spec["out"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f)
        os.replace(tmp, spec["out"])


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text()) if os.path.isfile(sys.argv[1]) else json.loads(sys.argv[1])
    asyncio.run(_serve(spec))


if __name__ == "__main__":
    # run as a script (its path names it as ours for clean-up): use the package's module
    from haslab.live.origin import main as _main

    _main()
