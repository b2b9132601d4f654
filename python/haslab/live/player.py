"""Our HAS players over real HTTP: the simulator's decision logic, playback model and request
scheduler (``haslab._core.LivePlayers``, i.e. ``has/driver.rs`` around ``has/players/``) driven
by a real HTTP/1.1 client (h11 + asyncio) in the client namespaces.

One process drives every player of a run (asyncio; each player's sockets are created inside its
client's namespace with ``setns``, see ``nsenter.py``). Per player:

1. at the player's start, ask the driver what to do (``next``): request segment k at level ℓ,
   or wait until t (buffer cap / refill scheduler), or stop;
2. GET ``/{vid}/{ℓ}/{k}.m4s`` on a connection chosen by the scenario's connection policy
   (persistent, per-request, parallel N, renew every k), opening one first when needed (the
   handshake counts in the download time, as in the simulator);
3. when the response's last byte is in, tell the driver (``completed``), which feeds the
   playback model and asks the player when to request again; sleep until then;
4. sample the state at every whole second of the run's clock; at the stop time leave.

At the end ``LivePlayers.finish`` computes the simulator's QoE metrics and its ``players`` and
``segments`` tables from these logs, which this script writes as JSON with the connections'
local ports (the origin's TCP_INFO samples are matched to them by port).

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

    async def get(self, c: Conn, target: str, close: bool) -> int:
        """Sends a GET and reads the whole response; returns the body length."""
        headers = [("Host", self.spec.get("host", "origin")), ("User-Agent", "haslab-player")]
        if close:
            headers.append(("Connection", "close"))
        c.writer.write(c.h11.send(h11.Request(method="GET", target=target, headers=headers)))
        c.writer.write(c.h11.send(h11.EndOfMessage()))
        await c.writer.drain()
        c.requests += 1
        body = 0
        status = None
        while True:
            ev = c.h11.next_event()
            if ev is h11.NEED_DATA:
                data = await c.reader.read(1 << 18)
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

    async def player(self, i: int, p: dict) -> None:
        lp = self.lp
        await self.sleep_until(p["start_ns"])
        pol = p.get("connection", {"kind": "persistent"})
        kind = pol["kind"]
        # "parallel" and "rotate" both use their connections in turn here (one request at a
        # time: the live driver keeps one request outstanding)
        multi = kind in ("parallel", "rotate")
        slots: list[Optional[Conn]] = [None] * (pol.get("n", 1) if multi else 1)
        if multi:
            for s in range(len(slots)):
                slots[s] = await self.open(p, i)
        turn = 0
        sizes = p["sizes_bytes"]
        try:
            while True:
                now = self.now()
                step = lp.next(i, now)
                if step[0] == "done":
                    break
                if step[0] == "wait":
                    t = step[1]
                    await self.sleep_until(min(t, now + S // 10) if t >= U64_MAX else t)
                    continue
                _, seg, level = step
                slot = turn % len(slots) if multi else 0
                turn += 1
                close_after = kind == "per-request"
                target = f"/{p['vid']}/{level}/{seg}.m4s"
                for attempt in range(2):
                    c = slots[slot]
                    if c is None or kind == "per-request":
                        c = slots[slot] = await self.open(p, i)
                    if kind == "renew" and c.requests + 1 >= pol.get("n", 1):
                        close_after = True
                    try:
                        got = await self.get(c, target, close_after)
                        break
                    except (ConnectionError, OSError, h11.ProtocolError) as e:
                        self.close(c)
                        slots[slot] = None
                        if attempt == 1:
                            raise
                        self.errors.append(f"player {i} segment {seg}: {e}; retried on a new connection")
                if got != sizes[level][seg]:
                    self.bytes_mismatch += 1
                done = self.now()
                flow = c.flow
                if close_after:
                    self.close(c)
                    slots[slot] = None
                t_next = lp.completed(i, done, flow)
                if t_next >= U64_MAX:
                    if seg + 1 >= len(sizes[0]):
                        break
                    continue
                await self.sleep_until(t_next)
        finally:
            for c in slots:
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
