"""Our HAS players over real HTTP: the simulator's player cycle (decision logic, playback model,
request scheduler and connection policy: ``haslab._core.LivePlayers``, i.e. ``has/driver.rs``
around ``has/players/``, the same code the simulator's sessions run) driven by a real HTTP/1.1
client (h11 + asyncio) in the client namespaces.

One process drives every player of a run (asyncio; each player's sockets are created inside its
client's namespace with ``setns``, see ``nsenter.py``). Per player:

1. at the player's start, open the connections the policy opens first (``parallel``/``rotate``:
   all N), then ask the driver what to do (``next``): request segment k at level ℓ on slot s
   (opening a connection first when told; the handshake counts in the download time, as in the
   simulator), wait until t (buffer cap / refill scheduler), nothing until a download ends, or
   stop. Every request runs as its own task, so ``parallel`` downloads over N connections at
   once (one request in flight on each, HTTP/1.1 without pipelining);
2. GET ``/{vid}/{ℓ}/{k}.m4s``; the response's first byte is reported (``first_byte``); a player
   that abandons requests (BOLA-E, the dash.js players) is shown the progress every
   ``PROGRESS_EVERY_NS`` (``progress``), and when it abandons, the connection is closed, as a
   browser aborts its XMLHttpRequest and closes the half-read HTTP/1.1 connection, and the
   driver is asked again at once (the segment is requested again first);
3. when the last byte is in, tell the driver (``completed``), which feeds the playback model,
   asks the player when to request again and says which connections to close;
4. sample the state at every whole second of the run's clock; at the stop time leave.

At the end ``LivePlayers.finish`` computes the simulator's QoE metrics and its ``players``,
``segments`` and ``abandons`` tables from these logs, which this script writes as JSON with the
connections' local ports (the origin's TCP_INFO samples are matched to them by port).

    python player.py SPEC_JSON_FILE
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import h11

U64_MAX = (1 << 64) - 1
S = 1_000_000_000


class Conn:
    def __init__(self, reader, writer, flow: int, port: int):
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.flow = flow
        self.port = port
        self.requests = 0


class Runner:
    def __init__(self, spec: dict):
        from haslab._core import LivePlayers

        self.spec = spec
        self.t0 = spec["t0_ns"]
        self.end = spec["end_ns"]
        self.lp = LivePlayers(spec["scenario"], spec.get("fmt", "toml"), spec.get("base_dir"))
        self.next_flow = spec.get("flow_base", 0)
        self.connections: list[dict] = []
        self.errors: list[str] = []
        self.bytes_mismatch = 0
        self.abandoned = 0

    def now(self) -> int:
        return time.monotonic_ns() - self.t0

    async def sleep_until(self, t: int) -> None:
        left = t - self.now()
        if left > 0:
            await asyncio.sleep(left / 1e9)

    async def open(self, p: dict, i: int) -> Conn:
        from .nsenter import tcp_socket

        sock = tcp_socket(p.get("netns"))
        loop = asyncio.get_running_loop()
        await loop.sock_connect(sock, (p["server"], p["port"]))
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        c = Conn(reader, writer, self.next_flow, sock.getsockname()[1])
        self.next_flow += 1
        self.lp.connection_opened(i)
        self.connections.append({"flow": c.flow, "player": i, "local_port": c.port, "opened_ns": self.now()})
        return c

    def close(self, c: Optional[Conn]) -> None:
        if c is None:
            return
        for rec in self.connections:
            if rec["flow"] == c.flow and "closed_ns" not in rec:
                rec["closed_ns"] = self.now()
        try:
            c.writer.close()
        except Exception:
            pass

    async def get(self, c: Conn, target: str, close: bool, on_first_byte=None, on_progress=None) -> Optional[int]:
        """Sends a GET and reads the whole response; returns the body length, or None when
        ``on_progress(body_bytes)`` (called every PROGRESS_EVERY_NS while the response is in
        flight) returned True: the request is abandoned (the caller closes the connection)."""
        from haslab._core import HTTP_REQUEST_BYTES, PROGRESS_EVERY_NS

        from .wire import padded_head

        headers = [("Host", self.spec.get("host", "origin")), ("User-Agent", "haslab-player")]
        if close:
            headers.append(("Connection", "close"))
        # the simulator's request size on the wire (wire.py), in one write
        head = padded_head(c.h11.send(h11.Request(method="GET", target=target, headers=headers)),
                           HTTP_REQUEST_BYTES)
        c.writer.write(head + c.h11.send(h11.EndOfMessage()))
        await c.writer.drain()
        c.requests += 1
        body = 0
        status = None
        first = True
        tick = self.now() + PROGRESS_EVERY_NS
        while True:
            ev = c.h11.next_event()
            if ev is h11.NEED_DATA:
                if on_progress is None:
                    data = await c.reader.read(1 << 18)
                else:
                    # wake at every progress tick, data or not (a stalled download is shown too)
                    try:
                        data = await asyncio.wait_for(c.reader.read(1 << 18), max(tick - self.now(), 0) / 1e9)
                    except asyncio.TimeoutError:
                        data = None
                    if self.now() >= tick:
                        tick = self.now() + PROGRESS_EVERY_NS
                        if on_progress(body):
                            return None
                    if data is None:
                        continue
                if first and data:
                    first = False
                    if on_first_byte is not None:
                        on_first_byte()
                c.h11.receive_data(data)
                if not data and c.h11.their_state is not h11.DONE:
                    raise ConnectionError("the server closed the connection mid-response")
                continue
            if isinstance(ev, h11.Response):
                status = ev.status_code
            elif isinstance(ev, h11.Data):
                body += len(ev.data)
            elif isinstance(ev, h11.EndOfMessage):
                break
            elif isinstance(ev, h11.ConnectionClosed):
                raise ConnectionError("closed")
        if status != 200:
            raise ConnectionError(f"{target}: HTTP {status}")
        if c.h11.our_state is h11.DONE and c.h11.their_state is h11.DONE:
            c.h11.start_next_cycle()
        return body

    async def fetch(self, i: int, p: dict, conns: list, slot: int, seg: int, level: int):
        """One request of player i on its connection slot: (body bytes, flow), or None when the
        player abandoned it (its connection is then closed)."""
        lp = self.lp
        pol = p.get("connection", {"kind": "persistent"})
        kind = pol["kind"]
        close_after = kind == "per-request"
        target = f"/{p['vid']}/{level}/{seg}.m4s"
        abandons = lp.abandons(i)
        for attempt in range(2):
            c = conns[slot]
            if c is None:
                c = conns[slot] = await self.open(p, i)
            if kind == "renew" and c.requests + 1 >= pol.get("n", 1):
                close_after = True
            flow = c.flow

            def first_byte():
                lp.first_byte(i, slot, seg, level, self.now())

            def progress(body: int) -> bool:
                return lp.progress(i, slot, seg, level, body, self.now(), flow)

            try:
                got = await self.get(c, target, close_after, first_byte, progress if abandons else None)
            except (ConnectionError, OSError, h11.ProtocolError) as e:
                self.close(c)
                conns[slot] = None
                if attempt == 1:
                    raise
                self.errors.append(f"player {i} segment {seg}: {e}; retried on a new connection")
                continue
            if got is None:
                self.close(c)
                conns[slot] = None
                self.abandoned += 1
                return None
            return got, flow
        raise AssertionError("unreachable")

    async def player(self, i: int, p: dict) -> None:
        lp = self.lp
        await self.sleep_until(p["start_ns"])
        conns: list[Optional[Conn]] = [None] * lp.slots(i)
        for s in lp.open_at_start(i):
            conns[s] = await self.open(p, i)
        sizes = p["sizes_bytes"]
        fetches: dict[asyncio.Task, tuple[int, int, int]] = {}
        not_before = 0
        done = False
        try:
            while True:
                now = self.now()
                if now >= not_before and not done:
                    while True:
                        step = lp.next(i, now)
                        if step[0] != "request":
                            break
                        _, seg, level, slot, new = step
                        if new:
                            self.close(conns[slot])
                            conns[slot] = await self.open(p, i)
                        task = asyncio.create_task(self.fetch(i, p, conns, slot, seg, level))
                        fetches[task] = (slot, seg, level)
                        now = self.now()
                    if step[0] == "wait":
                        not_before = step[1]
                    elif step[0] == "idle":
                        # a completion wakes the player; with nothing in flight, look again soon
                        not_before = U64_MAX if fetches else now + S // 10
                    else:
                        done = True
                if done and not fetches:
                    break
                timeout = None if not_before >= U64_MAX else max(not_before - self.now(), 0) / 1e9
                if not fetches:
                    await asyncio.sleep(timeout if timeout is not None else 0.1)
                    continue
                finished, _ = await asyncio.wait(fetches, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    slot, seg, level = fetches.pop(task)
                    res = task.result()
                    if res is None:  # abandoned: the driver requests the segment again first
                        not_before = 0
                        done = False
                        continue
                    got, flow = res
                    if got != sizes[level][seg]:
                        self.bytes_mismatch += 1
                    comp = lp.completed(i, slot, seg, level, self.now(), flow)
                    if comp is None:
                        continue
                    close, close_all, wake = comp
                    if close:
                        self.close(conns[slot])
                        conns[slot] = None
                    if close_all:
                        for s in range(len(conns)):
                            self.close(conns[s])
                            conns[s] = None
                    not_before = wake
        finally:
            for task in fetches:
                task.cancel()
            for c in conns:
                self.close(c)

    async def sampler(self, i: int, p: dict) -> None:
        t = -(-p["start_ns"] // S) * S
        stop = p.get("stop_ns") or self.end
        while t < min(stop, self.end):
            await self.sleep_until(t)
            self.lp.sample(i, t)
            t += S

    async def run_one(self, i: int, p: dict) -> None:
        stop = p.get("stop_ns")
        limit = min(stop, self.end) if stop is not None else self.end
        sampler = asyncio.create_task(self.sampler(i, p))
        task = asyncio.create_task(self.player(i, p))
        try:
            await asyncio.wait_for(asyncio.shield(task), max((limit - self.now()) / 1e9, 0))
        except asyncio.TimeoutError:
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        except Exception as e:  # a player that failed does not stop the others
            self.errors.append(f"player {i}: {type(e).__name__}: {e}")
        if stop is not None and stop <= self.end:
            await self.sleep_until(stop)
            self.lp.stop(i, stop)
        await sampler

    async def run(self) -> dict:
        players = self.spec["players"]
        await asyncio.gather(*(self.run_one(i, p) for i, p in enumerate(players)))
        await self.sleep_until(self.end)
        paths = [tuple(p["path"]) if p.get("path") else None for p in players]
        res = self.lp.finish(self.end, paths)
        tables = {name: {k: v.tolist() for k, v in cols.items()} for name, cols in res["tables"].items()}
        return {
            "players": json.loads(res["players"]),
            "has": json.loads(res["has"]),
            "tables": tables,
            "connections": self.connections,
            "errors": self.errors,
            "bytes_mismatch": self.bytes_mismatch,
            "abandoned": self.abandoned,
        }


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    runner = Runner(spec)
    print("ready", flush=True)

    async def go():
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(runner.run())
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        return await task

    out = asyncio.run(go())
    tmp = spec["out"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, spec["out"])


if __name__ == "__main__":
    from haslab.live.player import main as _main

    _main()
