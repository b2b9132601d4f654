"""Figures of a run, drawn with matplotlib's Agg backend (no display needed)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

if TYPE_CHECKING:
    from .api import Result


def cwnd_and_queue(result: "Result", path: str | os.PathLike, queue: str | None = None) -> None:
    """Saves a two-panel figure: cwnd of each flow over time (top) and the occupancy of one
    traced queue (bottom; the first traced queue unless ``queue`` names a link direction such
    as ``"r1->r2"``)."""
    fig = Figure(figsize=(10, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)

    cwnd = result.traces.get("cwnd")
    if cwnd is not None and len(cwnd):
        for name, df in cwnd.groupby("flow_name", observed=True, sort=False):
            top.plot(df["time_ns"] / 1e9, df["cwnd_pkts"], drawstyle="steps-post", lw=1, label=str(name))
        top.legend(loc="upper right", fontsize="small", ncols=min(4, cwnd["flow_name"].nunique()))
    else:
        top.text(0.5, 0.5, "no cwnd trace", ha="center", va="center", transform=top.transAxes)
    top.set_ylabel("cwnd (packets)")
    top.set_title("Congestion window of each flow")
    top.grid(alpha=0.3)

    q = result.traces.get("queue")
    if q is not None and len(q):
        names = list(dict.fromkeys(q["link_name"].astype(str)))
        which = queue if queue is not None else names[0]
        df = q[q["link_name"] == which]
        limit = _queue_limit(result, which)
        if limit is not None and "limit_bytes" in limit:
            # a byte-limited queue: plot bytes, so that the limit line is exact
            y, unit, cap = df["bytes"] / 1e3, "KB", limit["limit_bytes"] / 1e3
            cap_label = f"limit ({cap:g} KB)"
        else:
            y, unit = df["packets"], "packets"
            cap = None if limit is None else limit.get("limit_packets")
            cap_label = f"limit ({cap} packets)"
        bottom.plot(df["time_ns"] / 1e9, y, drawstyle="steps-post", lw=1, color="tab:red", label="occupancy")
        bottom.set_title(f"Queue occupancy at {which}")
        bottom.set_ylabel(f"queue ({unit})")
        if cap is not None:
            bottom.axhline(cap, ls="--", lw=0.8, color="grey", label=cap_label)
        bottom.legend(loc="lower right", fontsize="small", framealpha=0.9)
    else:
        bottom.text(0.5, 0.5, "no queue trace", ha="center", va="center", transform=bottom.transAxes)
        bottom.set_title("Queue occupancy")
        bottom.set_ylabel("queue (packets)")
    bottom.set_xlabel("time (s)")
    bottom.grid(alpha=0.3)
    bottom.set_xlim(0, result.summary.get("duration_ns", 0) / 1e9 or None)

    fig.savefig(os.fspath(path), dpi=110, metadata={"Software": None})


def _queue_limit(result: "Result", link_dir: str) -> dict | None:
    """The queue description of a link direction from the plan: {"limit_packets": n} or
    {"limit_bytes": n}."""
    for l in result.plan.get("links", []):
        if l["name"] == link_dir:
            return l["queue"]
    return None
