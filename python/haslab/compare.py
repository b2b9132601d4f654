"""``haslab compare SIM_DIR LIVE_DIR``: two result directories of the same scenario (one from
``haslab run``, one from ``haslab live run``) side by side: goodput, level, switches, stalls and
drops, with the differences.

Both directories hold a ``summary.json`` in the same format. Players are matched by name (or
by explicit ``SIM=LIVE`` pairs, e.g. a simulator port of a dash.js rule against the real dash.js
of a live run), flows by name (a player's connections are summed per player), bottleneck link directions by
name. Each row: the metric, the simulator's value, the live value, live − sim and the relative
difference (of the simulator's value).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


@dataclass
class Row:
    group: str
    metric: str
    sim: Optional[float]
    live: Optional[float]

    @property
    def diff(self) -> Optional[float]:
        if self.sim is None or self.live is None:
            return None
        return self.live - self.sim

    @property
    def rel(self) -> Optional[float]:
        d = self.diff
        if d is None or not self.sim:
            return None
        return d / abs(self.sim)


def load_summary(d: os.PathLike) -> dict:
    p = Path(d)
    if p.is_dir():
        p = p / "summary.json"
    if not p.is_file():
        raise FileNotFoundError(f"{d}: no summary.json (expected a result directory of haslab run or live run)")
    return json.loads(p.read_text(encoding="utf-8"))


def _mean(xs: list) -> Optional[float]:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else None


def _num(v) -> Optional[float]:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


PLAYER_METRICS = [
    ("goodput_bps", "goodput (bit/s)"),
    ("avg_bitrate_bps", "average bitrate (bit/s)"),
    ("avg_level", "average level"),
    ("switches", "switches"),
    ("stalls", "stalls"),
    ("stall_ns", "stall time (ns)"),
    ("startup_delay_ns", "startup delay (ns)"),
    ("instability_pct", "instability (%)"),
]


def parse_pairs(items: list[str]) -> dict[str, str]:
    """``["SIM=LIVE", ...]`` → {SIM: LIVE}; a ValueError names a malformed or repeated item."""
    pairs: dict[str, str] = {}
    for it in items:
        a, eq, b = it.partition("=")
        if not eq or not a.strip() or not b.strip():
            raise ValueError(f"--pair {it!r}: expected SIM=LIVE, two player names")
        if a.strip() in pairs:
            raise ValueError(f"--pair {it!r}: simulator player {a.strip()!r} is paired twice")
        pairs[a.strip()] = b.strip()
    return pairs


def compare(sim: dict, live: dict, pairs: Optional[dict[str, str]] = None) -> list[Row]:
    """The rows of the comparison (see the module documentation). ``pairs``: simulator player
    name → live player name, for players that do not share a name; a row per pair is named
    ``SIM=LIVE``."""
    rows: list[Row] = []
    sp = {p["name"]: p for p in sim.get("players", [])}
    lp = {p["name"]: p for p in live.get("players", [])}
    pairs = dict(pairs or {})
    for a, b in pairs.items():
        if a not in sp:
            raise ValueError(f"--pair {a}={b}: the simulator's result has no player {a!r} "
                             f"(players: {', '.join(sp) or 'none'})")
        if b not in lp:
            raise ValueError(f"--pair {a}={b}: the live result has no player {b!r} "
                             f"(players: {', '.join(lp) or 'none'})")
    paired_live = set(pairs.values())
    for n in sp:
        if n not in pairs and n in lp and n not in paired_live:
            pairs[n] = n
    lp = {(a if a == b else f"{a}={b}"): lp[b] for a, b in pairs.items()}
    sp = {(a if a == b else f"{a}={b}"): sp[a] for a, b in pairs.items()}
    names = list(sp)
    if names:
        for key, label in PLAYER_METRICS:
            rows.append(Row("players (mean)", label, _mean([_num(sp[n].get(key)) for n in names]),
                            _mean([_num(lp[n].get(key)) for n in names])))
        for n in names:
            for key, label in PLAYER_METRICS[:5]:
                rows.append(Row(f"player {n}", label, _num(sp[n].get(key)), _num(lp[n].get(key))))
    sh, lh = sim.get("has") or {}, live.get("has") or {}
    for key in ("jain_bitrate", "festive_unfairness", "utilization"):
        if key in sh or key in lh:
            rows.append(Row("players (all)", key, _num(sh.get(key)), _num(lh.get(key))))
    # flows that are not player connections
    conn = re.compile(r"\.c\d+$")
    sf = {f["name"]: f for f in sim.get("flows", []) if not f.get("player") and not conn.search(f["name"])}
    lf = {f["name"]: f for f in live.get("flows", []) if not f.get("player") and not conn.search(f["name"])}
    for n in [n for n in sf if n in lf]:
        rows.append(Row(f"flow {n}", "goodput (bit/s)", _num(sf[n].get("goodput_bps")), _num(lf[n].get("goodput_bps"))))
        rows.append(Row(f"flow {n}", "retransmitted segments", _num(sf[n].get("retransmitted_segments")),
                        _num(lf[n].get("retransmitted_segments"))))
    sl = {l["name"]: l for l in sim.get("links", [])}
    ll = {l["name"]: l for l in live.get("links", [])}
    red = (live.get("live") or {}).get("reduced_from")
    if red:  # a preset run live on the dumbbell: r1->r2 is the preset's bottleneck direction
        bn = red["bottleneck"]
        a, _, b = bn.partition("->")
        names = {"r1->r2": bn, "r2->r1": f"{b}->{a}"}
        ll = {names.get(n, n): l for n, l in ll.items()}
    for n in [n for n in ll if n in sl]:
        rows.append(Row(f"link {n}", "drops", _num(sl[n].get("dropped_packets")), _num(ll[n].get("dropped_packets"))))
        rows.append(Row(f"link {n}", "utilization", _num(sl[n].get("utilization")), _num(ll[n].get("utilization"))))
    return rows


def compare_dirs(sim_dir: os.PathLike, live_dir: os.PathLike, pairs: Optional[dict[str, str]] = None) -> list[Row]:
    return compare(load_summary(sim_dir), load_summary(live_dir), pairs)
