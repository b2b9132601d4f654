"""``haslab demo``: the question haslab exists for, in two runs.

Eight video players (RBB, the TcpHas paper's client) share the 8 Mbps bottleneck of the TcpHas
paper's home network (``tcphas-home``: 100 ms RTT, one-BDP drop-tail queue, 40 Mbps of PPBP
cross-traffic on the ISP side) for 180 s. The servers run Westwood+ in one run and TcpHas in
the other. The table compares what players and the network see; the figure compares the two
at a glance (see :func:`figure`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from .api import Result

from .reproduce.tcphas import BOTTLENECK
from .reproduce.tcphas import scenario as tcphas_home

#: The two server congestion controls compared, in table order.
CCS = ("westwood+", "tcphas")


def scenario(cc: str, duration_s: int = 180, seed: int = 1) -> dict:
    """The demo scenario for one server congestion control: the setting of
    ``haslab reproduce tcphas-fig2`` (8 RBB players on tcphas-home) with the queue traced."""
    s = tcphas_home(8, duration_s)
    s["seed"] = seed
    s["preset"]["player"]["cc"] = cc
    s["trace"]["queues"] = [BOTTLENECK]
    return s


def summarize(cc: str, r: "Result") -> dict:
    """One row of the demo table from a run (players' averages; the bottleneck's queue), each
    number over the whole run, [0, duration): the start-up phase is included, as in the TcpHas
    paper's K = 180 s (`haslab reproduce tcphas-fig2` also measures from 60 s and over a
    steady-state window of 600 s runs)."""
    ps = r.player_summary
    pl = r.players
    at_optimal = float((pl["level"] == pl["optimal_level"]).mean() * 100) if len(pl) else float("nan")
    link = r.links.set_index("name").loc[BOTTLENECK]
    duration_s = r.summary["duration_ns"] / 1e9
    return {
        "server cc": cc,
        "mean bitrate (kbps)": float(ps["avg_bitrate_bps"].mean() / 1e3),
        "time at optimal level (%)": at_optimal,
        "switches / player": float(ps["switches"].mean()),
        "instability (%)": float(ps["instability_pct"].mean()),
        "stalls": int(ps["stalls"].sum()),
        "queue delay (ms)": float(link["sojourn_mean_ns"] / 1e6),
        "drops / s": float(link["dropped_packets"] / duration_s),
        "utilization (%)": float(link["utilization"] * 100),
    }


def _ladder_bps(r: "Result") -> list[int]:
    """The players' bitrate ladder (every player of the demo has the same)."""
    players = r.plan.get("players", [])
    return list(players[0]["bitrates_bps"]) if players else []


def _time_weighted_cdf(times_ns, values, end_ns: int):
    """(sorted values, fraction of time at or below each): each sample holds until the next."""
    import numpy as np

    t = np.asarray(times_ns, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if len(t) == 0:
        return v, v
    hold = np.diff(np.append(t, float(end_ns)))
    order = np.argsort(v, kind="stable")
    w = np.cumsum(hold[order])
    return v[order], w / w[-1]


def figure(results: dict[str, "Result"], path: str | os.PathLike):
    """The two server congestion controls side by side, in four panels: (a) the players'
    requested bitrate over time (median of the 8 players, and the band between the 25th and
    75th percentiles), (b) each player's time-average requested bitrate, (c) the share of player-time
    spent at each quality level, (d) the distribution over time of the bottleneck queue."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    colors = {cc: c for cc, c in zip(results, ("tab:blue", "tab:orange", "tab:green"))}
    first = next(iter(results.values()))
    ladder_kbps = [b / 1e3 for b in _ladder_bps(first)]
    fig = Figure(figsize=(12, 8.5), layout="constrained")
    (a, b), (c, d) = fig.subplots(2, 2)
    duration_s = first.summary["duration_ns"] / 1e9
    fig.suptitle(
        f"8 RBB players share an 8 Mbps bottleneck (tcphas-home, 100 ms RTT), {duration_s:g} s: "
        + " vs ".join(results)
        + " on the servers"
    )

    # (a) requested level over time: median and range over the players
    opt_level = None
    for cc, r in results.items():
        levels = r.players.pivot_table(index="time_s", columns="player_name", values="level", observed=True)
        t = levels.index.to_numpy()
        lo, hi = levels.quantile(0.25, axis=1), levels.quantile(0.75, axis=1)
        a.fill_between(t, lo, hi, step="post", color=colors[cc], alpha=0.25, lw=0)
        a.step(t, levels.median(axis=1), where="post", color=colors[cc], lw=1.6)
        if len(r.players):
            opt_level = int(r.players["optimal_level"].iloc[0])
    if opt_level is not None:
        a.axhline(opt_level, color="black", ls="--", lw=0.9)
    a.set_yticks(range(len(ladder_kbps)), [f"{k:g}" for k in ladder_kbps])
    a.set_ylim(-0.3, len(ladder_kbps) - 0.2)
    a.set_xlim(0, duration_s)
    a.set_xlabel("time (s)")
    a.set_ylabel("requested bitrate (kbps)")
    a.set_title("(a) Requested bitrate of the 8 players over time", loc="left", fontsize="medium")
    handles = [matplotlib.lines.Line2D([], [], color=colors[cc], lw=1.6, label=f"{cc}: median") for cc in results]
    handles += [Patch(color=colors[cc], alpha=0.25, label=f"{cc}: 25–75 %") for cc in results]
    handles.append(matplotlib.lines.Line2D([], [], color="black", ls="--", lw=0.9, label="optimal level (fair share)"))
    a.legend(handles=handles, loc="upper left", fontsize="small", ncols=3, framealpha=0.9)
    a.grid(alpha=0.3)

    # (b) each player's time-average requested bitrate
    width = 0.8 / len(results)
    for i, (cc, r) in enumerate(results.items()):
        ps = r.player_summary
        x = np.arange(len(ps))
        b.bar(x + (i - (len(results) - 1) / 2) * width, ps["avg_bitrate_bps"] / 1e3, width, color=colors[cc], label=cc)
        b.set_xticks(x, [str(n) for n in ps["name"]], rotation=30, ha="right", fontsize="small")
    if opt_level is not None and opt_level < len(ladder_kbps):
        b.axhline(ladder_kbps[opt_level], color="black", ls="--", lw=0.9, label="optimal bitrate (fair share)")
    b.set_ylabel("average requested bitrate (kbps)")
    tallest = [float(r.player_summary["avg_bitrate_bps"].max() / 1e3) for r in results.values()]
    if opt_level is not None and opt_level < len(ladder_kbps):
        tallest.append(ladder_kbps[opt_level])
    b.set_ylim(0, 1.3 * max(tallest))  # room for the legend above the bars
    b.set_title("(b) Average requested bitrate of each player", loc="left", fontsize="medium")
    b.legend(loc="upper center", fontsize="small", ncols=3, framealpha=0.9)
    b.grid(alpha=0.3, axis="y")

    # (c) share of player-time at each level, stacked per cc
    cmap = matplotlib.colormaps["viridis"]
    names = list(results)
    bottoms = np.zeros(len(names))
    for lvl, kbps in enumerate(ladder_kbps):
        share = np.array([float((r.players["level"] == lvl).mean() * 100) if len(r.players) else 0.0 for r in results.values()])
        c.bar(names, share, 0.6, bottom=bottoms, color=cmap(lvl / max(len(ladder_kbps) - 1, 1)), label=f"{kbps:g} kbps")
        bottoms += share
    c.set_ylim(0, 100)
    c.set_ylabel("share of player-time (%)")
    c.set_xlabel("server congestion control")
    c.set_title("(c) Time at each quality level (all players)", loc="left", fontsize="medium")
    c.legend(title="requested bitrate", loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")

    # (d) the bottleneck queue, as the fraction of time it holds at most x KB
    for cc, r in results.items():
        q = r.traces.get("queue")
        if q is None or not len(q):
            continue
        q = q[q["link_name"] == BOTTLENECK]
        v, f = _time_weighted_cdf(q["time_ns"], q["bytes"] / 1e3, r.summary["duration_ns"])
        d.step(v, f, where="post", color=colors[cc], lw=1.4, label=cc)
    d.set_xlabel(f"queue at {BOTTLENECK} (KB; one bandwidth-delay product = 100 KB)")
    d.set_ylabel("fraction of time")
    d.set_ylim(0, 1.01)
    d.set_xlim(left=0)
    d.set_title("(d) Bottleneck queue: distribution over time", loc="left", fontsize="medium")
    d.legend(loc="lower right", fontsize="small")
    d.grid(alpha=0.3)
    from .plots import save_figure

    save_figure(fig, path, dpi=110)
    return fig


def run_demo(out_dir: str | os.PathLike, duration_s: int = 180, progress: bool = False) -> "pd.DataFrame":
    """Runs both scenarios, saves each run under OUT/<cc>/, writes OUT/demo.png and
    OUT/demo.csv, and returns the comparison table (one row per server cc)."""
    import pandas as pd

    from .api import run

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for cc in CCS:
        r = run(scenario(cc, duration_s), progress=progress)
        r.save(out / cc.replace("+", "plus"))
        results[cc] = r
    table = pd.DataFrame([summarize(cc, r) for cc, r in results.items()])
    table.to_csv(out / "demo.csv", index=False)
    figure(results, out / "demo.png")
    return table
