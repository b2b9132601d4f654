"""Figures of a run, drawn with matplotlib's Agg backend (no display needed).

Every figure function writes the format its path's suffix names: ``.png``, ``.svg`` or ``.pdf``
(see :func:`save_figure`)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

if TYPE_CHECKING:
    from .api import Result


def cwnd_and_queue(result: "Result", path: str | os.PathLike, queue: str | None = None) -> Figure:
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

    save_figure(fig, path, dpi=110)
    return fig


#: What each writer may stamp into a file that changes from one run to the next (a date, the
#: matplotlib version): left out, so that the same result gives the same bytes. Keys differ per
#: format (the SVG writer rejects PNG's "Software", for instance).
_NO_STAMPS = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
}


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 100) -> Path:
    """Writes ``fig`` to ``path`` in the format its suffix names (png, svg or pdf).

    The file is written under a temporary name and renamed, so a failure leaves no partial file.
    The same figure gives the same bytes (no date or version stamp; SVG element ids are derived
    from a fixed salt instead of random)."""
    import matplotlib as mpl

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in _NO_STAMPS:
        raise ValueError(f"{path}: a figure is written as .png, .svg or .pdf, not {path.suffix or 'no suffix'!r}")
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    try:
        with mpl.rc_context({"svg.hashsalt": "haslab"}):
            fig.savefig(os.fspath(tmp), format=fmt, dpi=dpi, metadata=_NO_STAMPS[fmt])
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _queue_limit(result: "Result", link_dir: str) -> dict | None:
    """The queue description of a link direction from the plan: {"limit_packets": n} or
    {"limit_bytes": n}."""
    for l in result.plan.get("links", []):
        if l["name"] == link_dir:
            return l["queue"]
    return None


def level_and_buffer(
    result: "Result", path: str | os.PathLike, players: list[str] | None = None, max_players: int = 12
) -> Figure:
    """Saves a figure with one panel per HAS player: the bitrate of its latest request over time
    (steps, left axis: the levels evenly spaced and labelled in kbps, with the optimal level for
    its fair share dotted) and its buffer in
    seconds (right axis); stalls are shaded. ``players`` picks players by name (default: the
    first ``max_players``)."""
    df = result.players
    names = [p["name"] for p in result.summary.get("players", [])]
    if players is not None:
        unknown = [p for p in players if p not in names]
        if unknown:
            raise KeyError(f"no player {unknown[0]!r} (players: {', '.join(names)})")
        names = list(players)
    names = names[:max_players]
    n = max(len(names), 1)
    fig = Figure(figsize=(10, 1.9 * n + 0.8), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    end = result.summary.get("duration_ns", 0) / 1e9 or None
    if not names:
        axes[0].text(0.5, 0.5, "no players", ha="center", va="center", transform=axes[0].transAxes)
    summaries = {p["name"]: p for p in result.summary.get("players", [])}
    plan_players = {p["name"]: p for p in result.plan.get("players", [])}
    for ax, name in zip(axes, names):
        d = df[df["player_name"] == name]
        t = d["time_ns"] / 1e9
        ax.step(t, d["level"], where="post", color="tab:blue", lw=1.2, label="requested bitrate")
        if "optimal_level" in d:
            ax.step(t, d["optimal_level"], where="post", color="tab:green", lw=0.8, ls=":", label="optimal (fair share)")
        ladder = list(plan_players.get(name, {}).get("bitrates_bps", []))
        levels = len(ladder) or int(d["level"].max() + 1 if len(d) else 1)
        ax.set_ylim(-0.3, levels - 0.7)
        ticks = range(0, levels, max(1, (levels + 7) // 8))
        if ladder:
            # levels evenly spaced, labelled with their bitrates
            ax.set_yticks(ticks, [f"{ladder[i] / 1e3:.0f}" for i in ticks])
            ax.set_ylabel("bitrate (kbps)")
        else:
            ax.set_yticks(ticks)
            ax.set_ylabel("level")
        stalled = d["phase"] == 2
        if stalled.any():
            ax.fill_between(t, -0.3, levels - 0.7, where=stalled, step="post", color="tab:red", alpha=0.15)
        ax2 = ax.twinx()
        ax2.plot(t, d["buffer_ns"] / 1e9, color="tab:orange", lw=1, label="buffer (s, right axis)")
        ax2.set_ylabel("buffer (s)")
        ax2.set_ylim(bottom=0)
        p = summaries.get(name, {})
        inst = p.get("instability_pct")
        ax.set_title(
            f"{name} ({p.get('algorithm', '?')}): avg {p.get('avg_bitrate_bps', 0) / 1e3:.0f} kbps, "
            f"{p.get('switches', 0)} switches, instability {'-' if inst is None else f'{inst:.1f}%'}, "
            f"{p.get('stalls', 0)} stalls",
            fontsize="medium",
            loc="left",
        )
        ax.grid(alpha=0.3)
        if ax is axes[0]:
            from matplotlib.patches import Patch

            h1, l1 = ax.get_legend_handles_labels()
            h2, l2 = ax2.get_legend_handles_labels()
            stall = Patch(color="tab:red", alpha=0.15, label="stalled")
            ax.legend(
                h1 + h2 + [stall], l1 + l2 + ["stalled"], loc="lower right", fontsize="small", ncols=4, framealpha=0.9
            )
    axes[-1].set_xlabel("time (s)")
    axes[-1].set_xlim(0, end)
    save_figure(fig, path, dpi=100)
    return fig
