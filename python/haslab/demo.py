"""``haslab demo``: the question haslab exists for, in two runs.

Eight video players (RBB, the TcpHas paper's client) share the 8 Mbps bottleneck of the TcpHas
paper's home network (``tcphas-home``: 100 ms RTT, one-BDP drop-tail queue, 40 Mbps of PPBP
cross-traffic on the ISP side) for 180 s. The servers run Westwood+ in one run and TcpHas in
the other. The table compares what players and the network see; the figure shows every
player's quality level over time under each, and the bottleneck queue.
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
    """One row of the demo table from a run (players' averages; the bottleneck's queue)."""
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


def figure(results: dict[str, "Result"], path: str | os.PathLike) -> None:
    """Quality level of every player over time under each cc, and the bottleneck queue."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 9), layout="constrained")
    axes = fig.subplots(len(results) + 1, 1, sharex=True)
    for ax, (cc, r) in zip(axes, results.items()):
        pl = r.players
        names = list(dict.fromkeys(pl["player_name"]))
        ladder = sorted(set(r.segments["bitrate_bps"])) if len(r.segments) else []
        opt = int(pl["optimal_level"].iloc[0]) if len(pl) else None
        if opt is not None:
            ax.axhspan(opt - 0.3, opt + 0.3, color="grey", alpha=0.15, lw=0, label="optimal level")
        for i, name in enumerate(names):
            df = pl[pl["player_name"] == name]
            # each player a little apart, so that players on the same level stay visible
            y = df["level"] + (i - (len(names) - 1) / 2) * 0.05
            ax.plot(df["time_s"], y, drawstyle="steps-post", lw=0.9, label=str(name))
        ax.set_yticks(range(len(ladder)), [f"{b / 1e3:.0f}" for b in ladder])
        ax.set_ylabel("requested bitrate (kbps)")
        ax.set_title(f"Servers run {cc}: the quality level of each of the 8 players (lines offset to stay apart)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize="x-small", ncols=5)
    qa = axes[-1]
    for cc, r in results.items():
        q = r.traces.get("queue")
        if q is not None and len(q):
            q = q[q["link_name"] == BOTTLENECK]
            qa.plot(q["time_ns"] / 1e9, q["bytes"] / 1e3, drawstyle="steps-post", lw=0.8, label=cc)
    qa.set_title(f"Bottleneck queue ({BOTTLENECK}, one bandwidth-delay product)")
    qa.set_ylabel("queue (KB)")
    qa.set_xlabel("time (s)")
    qa.grid(alpha=0.3)
    qa.legend(loc="upper right", fontsize="small")
    from .plots import save_figure

    save_figure(fig, path, dpi=110)


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
