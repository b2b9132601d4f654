"""``haslab live check --ranking``: comparisons of live and simulated runs whose numbers depend on
the machine (its load, its timer), so they are measured and reported (docs/live.md), not
asserted by the test suite.

The ranking check: the tcphas-home setting on a dumbbell (8 RBB players, video "tcphas",
8 Mbit/s, 100 ms RTT, one-BDP drop-tail queue) with CUBIC, Westwood+ and TcpHas (both BPF) on
the servers, each run live and in the simulator. Reported per algorithm and mode: mean
switches, average level, stalls, mean backlog of r1->r2, drops; and whether these hold:

- TcpHas players switch less than Westwood+ players (the TcpHas paper's Fig. 3a comparison),
  live and simulated;
- live agrees with the simulator per algorithm: mean switches within max(50 %, 4), mean queue
  within 25 % (the agreement seen on this machine at load 0.3-8, docs/live.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

#: the algorithms of the ranking check, in the order they run
RANKING_CCS = ("cubic", "westwood+", "tcphas")


def tcphas_home_dumbbell(cc: str, duration_s: int) -> str:
    """The tcphas-home preset's setting on a dumbbell: 8 RBB players (video "tcphas"), 8 Mbit/s,
    100 ms RTT, a one-BDP drop-tail queue (100 kB), the players' congestion control ``cc``."""
    return f"""
seed = 1
duration = "{duration_s}s"
[dumbbell]
pairs = 8
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "100000B"
access_rate = "100Mbps"
access_delay = "5ms"
[defaults]
cc = "{cc}"
tcp = {{ sack = true }}
[[player]]
name = "p{{i}}"
count = 8
client = "right{{i}}"
server = "left{{i}}"
abr = "rbb"
video = "tcphas"
[trace]
queues = ["r1->r2"]
queue_interval = "100ms"
"""


def ranking_numbers(res) -> dict:
    """Mean switches, average level per player, stalls, mean r1->r2 backlog and drops of a result."""
    ps = res.summary["players"]
    link = next(l for l in res.summary["links"] if l["name"] == "r1->r2")
    q = res.queue
    q = q[q["link_name"] == "r1->r2"] if "link_name" in q.columns else q
    n = max(len(ps), 1)
    return {
        "players": len(ps),
        "segments": int(sum(p["segments"] for p in ps)),
        "switches": sum(p["switches"] for p in ps) / n,
        "avg_level": sum(p["avg_level"] for p in ps) / n,
        "stalls": int(sum(p["stalls"] for p in ps)),
        "queue_bytes": float(q["bytes"].mean()) if len(q) else 0.0,
        "drops": int(link["dropped_packets"]),
    }


def ranking_verdicts(nums: dict) -> list[dict]:
    """The comparisons of the ranking check on numbers from :func:`ranking`."""
    out = []
    for mode in ("live", "sim"):
        t, w = nums["tcphas"][mode], nums["westwood+"][mode]
        out.append({"claim": f"{mode}: TcpHas players switch less than Westwood+ players",
                    "holds": t["switches"] < w["switches"],
                    "numbers": f"{t['switches']:.2f} vs {w['switches']:.2f}"})
    for cc, n in nums.items():
        lv, sm = n["live"], n["sim"]
        out.append({"claim": f"{cc}: live switches within max(50 %, 4) of the simulator's",
                    "holds": abs(lv["switches"] - sm["switches"]) <= max(0.5 * sm["switches"], 4),
                    "numbers": f"{lv['switches']:.2f} vs {sm['switches']:.2f}"})
        out.append({"claim": f"{cc}: live mean queue within 25 % of the simulator's",
                    "holds": abs(lv["queue_bytes"] - sm["queue_bytes"]) <= 0.25 * sm["queue_bytes"],
                    "numbers": f"{lv['queue_bytes']:.0f} vs {sm['queue_bytes']:.0f} B"})
    return out


def ranking(duration_s: int = 180, out_dir: Optional[os.PathLike] = None,
            say: Callable[[str], None] = lambda m: None, wait_s: Optional[float] = None) -> dict:
    """Runs the ranking check; returns {cc: {"live": numbers, "sim": numbers, "load": [...]}} and
    the verdicts under "verdicts"."""
    import haslab

    from .run import run_live

    nums: dict = {}
    for cc in RANKING_CCS:
        text = tcphas_home_dumbbell(cc, duration_s)
        before = os.getloadavg()
        say(f"{cc}: live, {duration_s} s")
        live = run_live(text, out_dir=Path(out_dir) / f"live-{cc}" if out_dir else None, wait_s=wait_s)
        say(f"{cc}: simulated")
        sim = haslab.run(text)
        nums[cc] = {"live": ranking_numbers(live), "sim": ranking_numbers(sim),
                    "load": [round(x, 1) for x in before + os.getloadavg()]}
    return {"duration_s": duration_s, "runs": nums, "verdicts": ranking_verdicts(nums)}
