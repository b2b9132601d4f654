"""The tables of the ``haslab`` command line: rich tables (and one-line descriptions) of a run's
summary, a scenario's plan, ``haslab live`` results, benches, comparisons, the catalogs, sweeps and
reproductions. They build renderables and print nothing; the commands print them."""

from __future__ import annotations

import textwrap
from typing import Iterable, Mapping, Sequence

from rich.table import Table

# ---------------------------------------------------------------------------------------------
# a run's summary


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:.1f}"


def flow_table(result) -> Table:
    t = Table(title="Flows", title_justify="left")
    for col, just in [
        ("flow", "left"),
        ("cc", "left"),
        ("goodput\nMbps", "right"),
        ("retrans-\nmits", "right"),
        ("RTOs", "right"),
        ("fast\nrecov.", "right"),
        ("min\nRTT ms", "right"),
        ("mean\nRTT ms", "right"),
    ]:
        t.add_column(col, justify=just, no_wrap=just == "left")
    for f in result.summary["flows"]:
        t.add_row(
            f["name"],
            f["cc"],
            f"{f['goodput_bps'] / 1e6:.3f}",
            str(f["retransmitted_segments"]),
            str(f["rto_count"]),
            str(f["fast_recovery_count"]),
            _ms(f.get("min_rtt_ns")),
            _ms(f.get("mean_srtt_ns")),
        )
    return t


def flow_delay_table(result) -> Table | None:
    """One row per flow: its data packets' loss, one-way delay and jitter (the statistics of
    ns-3's FlowMonitor; see docs/metrics.md). None when the summary has none (live runs)."""
    flows = [f for f in result.summary["flows"] if "data_packets_sent" in f]
    if not flows:
        return None
    t = Table(title="Flows: data packets (one-way)", title_justify="left")
    for col, just in [
        ("flow", "left"),
        ("sent", "right"),
        ("lost", "right"),
        ("loss", "right"),
        ("mean delay\nms", "right"),
        ("max delay\nms", "right"),
        ("mean jitter\nms", "right"),
    ]:
        t.add_column(col, justify=just, no_wrap=just == "left")
    for f in flows:
        t.add_row(
            f["name"],
            str(f["data_packets_sent"]),
            str(f["data_packets_lost"]),
            f"{100 * f['data_loss_fraction']:.2f}%",
            _opt(f.get("mean_one_way_delay_ns"), ".1f", 1e-6),
            _opt(f.get("max_one_way_delay_ns"), ".1f", 1e-6),
            _opt(f.get("mean_jitter_ns"), ".2f", 1e-6),
        )
    return t


def shown_links(result) -> list[dict]:
    """The link directions the summary shows: the traced ones (queue samples or pcap); if none
    is traced, the directions of a link called "bottleneck"; else the two busiest."""
    links = result.summary["links"]
    trace = result.plan.get("trace", {})
    traced = list(dict.fromkeys(list(trace.get("queues", [])) + [p["at"] for p in trace.get("pcaps", [])]))
    if traced:
        return [l for l in links if l["name"] in traced]
    bottleneck = {l["name"] for l in result.plan.get("links", []) if l["link"] == "bottleneck"}
    named = [l for l in links if l["name"] in bottleneck]
    if named:
        return named
    return sorted(links, key=lambda l: -l["utilization"])[:2]


def histogram_ms(ns) -> str:
    """A queuing-delay percentile in ms, to the precision it has.

    The simulator keeps queuing delays in a histogram of 16 log-spaced buckets per octave and
    reports a percentile as the upper edge of its bucket (capped at the largest delay seen),
    so it is exact to about 6 %: two significant digits. Below 1 µs (the first bucket) it
    prints "<0.001"."""
    if ns is None:
        return "-"
    if ns < 1024:
        return "0" if ns == 0 else "<0.001"
    return f"{float(f'{ns / 1e6:.2g}'):g}"


def link_table(result) -> Table:
    t = Table(
        title="Links",
        title_justify="left",
        caption="p99: to 2 significant digits (a histogram of 16 buckets per octave)",
        caption_justify="left",
    )
    for col, just in [
        ("link\ndirection", "left"),
        ("rate\nMbps", "right"),
        ("utili-\nzation", "right"),
        ("tx\npackets", "right"),
        ("drops", "right"),
        ("mean queuing\ndelay ms", "right"),
        ("p99 queuing\ndelay ms", "right"),
    ]:
        t.add_column(col, justify=just, no_wrap=just == "left")
    for l in shown_links(result):
        t.add_row(
            l["name"],
            f"{l['rate_bps'] / 1e6:g}",
            f"{100 * l['utilization']:.1f}%",
            str(l["tx_packets"]),
            str(l["dropped_packets"]),
            f"{l['sojourn_mean_ns'] / 1e6:.2f}",
            histogram_ms(l["sojourn_p99_ns"]),
        )
    return t


def _opt(v, fmt: str, scale: float = 1.0) -> str:
    return "-" if v is None else format(v * scale, fmt)


def player_table(result) -> Table:
    """One row per HAS player: bitrate, stability, stalls, startup, QoE (see docs/has.md)."""
    has = result.summary.get("has") or {}
    caption = []
    for key, label, fmt in [
        ("jain_bitrate", "Jain (bitrate)", ".3f"),
        ("festive_unfairness", "unfairness", ".3f"),
        ("utilization", "utilization", ".1%"),
    ]:
        if has.get(key) is not None:
            caption.append(f"{label} {format(has[key], fmt)}")
    t = Table(
        title="Players",
        title_justify="left",
        caption=", ".join(caption) or None,
        caption_justify="left",
    )
    for col, just in [
        ("player", "left"),
        ("abr", "left"),
        ("avg bitrate\nkbps", "right"),
        ("avg\nlevel", "right"),
        ("switches", "right"),
        ("instab-\nility", "right"),
        ("infid-\nelity", "right"),
        ("stalls", "right"),
        ("rebuf-\nfering", "right"),
        ("startup\ns", "right"),
        ("avg buffer\ns", "right"),
        ("QoE", "right"),
    ]:
        t.add_column(col, justify=just, no_wrap=just == "left")
    for p in result.summary.get("players", []):
        t.add_row(
            p["name"],
            p["algorithm"],
            f"{p['avg_bitrate_bps'] / 1e3:.0f}",
            f"{p['avg_level']:.2f}",
            str(p["switches"]),
            _opt(p.get("instability_pct"), ".1f") + ("%" if p.get("instability_pct") is not None else ""),
            _opt(p.get("infidelity_pct"), ".0f") + ("%" if p.get("infidelity_pct") is not None else ""),
            str(p["stalls"]),
            f"{100 * p['rebuffering_ratio']:.1f}%",
            _opt(p.get("startup_delay_ns"), ".2f", 1e-9),
            f"{p['avg_buffer_ns'] / 1e9:.1f}",
            _opt(p.get("qoe_score"), ".2f"),
        )
    return t


def describe_line(plan: dict) -> str:
    """A plan in one line: duration, seed, nodes, links, flows, players, traffic, traces."""
    ccs = sorted({f["cc"] for f in plan["flows"]})
    n_links = len(plan["links"]) // 2
    trace = plan["trace"]
    traced = []
    if trace["cwnd"]:
        traced.append("cwnd")
    if trace["queues"]:
        traced.append("queues " + ", ".join(trace["queues"]))
    if trace["pcaps"]:
        traced.append("pcap " + ", ".join(p["at"] for p in trace["pcaps"]))
    players = plan.get("players", [])
    abrs = sorted({p["abr"] for p in players})
    extra = f", {len(players)} players ({', '.join(abrs)})" if players else ""
    if plan.get("traffic"):
        extra += f", {len(plan['traffic'])} traffic generators"
    if plan.get("preset"):
        extra += f", preset {plan['preset']['name']} ({len(plan['preset']['player_slots'])} player slots)"
    return (
        f"{plan['duration_ns'] / 1e9:g} s, seed {plan['seed']}: {len(plan['nodes'])} nodes, "
        f"{n_links} links, {len(plan['flows'])} flows ({', '.join(ccs) or 'none'}){extra}; "
        f"traces: {'; '.join(traced) or 'none'}"
    )


# ---------------------------------------------------------------------------------------------
# describe


def _rate(bps) -> str:
    bps = float(bps)
    for unit, k in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= k:
            return f"{bps / k:.4g} {unit}"
    return f"{bps:.4g} bps"


def _kb(b) -> str:
    return f"{b / 1000:.4g} kB"


def _queue(q: dict) -> str:
    if "limit_packets" in q:
        return f"{q['limit_packets']} pkts"
    return _kb(q["limit_bytes"])


def _span(start_ns, stop_ns) -> str:
    start = f"{start_ns / 1e9:g} s"
    return f"{start} – {stop_ns / 1e9:g} s" if stop_ns is not None else f"{start} – end"


def _capacity(c) -> str:
    if not c:
        return ""
    if c["kind"] == "steps":
        shown = ", ".join(f"{s['at_ns'] / 1e9:g}s: {_rate(s['rate_bps'])}" for s in c["steps"][:8])
        more = len(c["steps"]) - 8
        return shown + (f" and {more} more steps (describe --json lists them)" if more > 0 else "")
    once = ", once" if c["once"] else ""
    return f"mahimahi {c['file']} ({c['lines']} lines / {c['period_ms']} ms{once})"


def _params(p: dict) -> str:
    out = []
    for k, v in p.items():
        if k.endswith("_bps"):
            v = _rate(v)
            k = k[: -len("_bps")]
        elif k.endswith("_ns"):
            v = f"{v / 1e6:g} ms"
            k = k[: -len("_ns")]
        elif k.endswith("_bytes"):
            v = _kb(v)
            k = k[: -len("_bytes")]
        elif isinstance(v, float):
            v = f"{v:.4g}"
        out.append(f"{k}={v}")
    return ", ".join(out)


def describe_tables(plan: dict) -> list:
    """Renderables describing a plan: header lines and tables (links, paths, traffic, loss)."""
    parts: list = []
    head = f"{plan['duration_ns'] / 1e9:g} s, seed {plan['seed']}"
    preset = plan.get("preset")
    if preset:
        params = ", ".join(f"{k}={v}" for k, v in preset["params"].items())
        head += f"; preset {preset['name']} ({params})"
    parts.append(head)
    nodes = plan["nodes"]
    parts.append(f"nodes ({len(nodes)}): " + ", ".join(nodes))

    t = Table(title="Links (one row per direction)", title_justify="left")
    for col, just in [
        ("direction", "left"),
        ("link", "left"),
        ("rate", "right"),
        ("delay\nms", "right"),
        ("loss", "right"),
        ("queue", "right"),
        ("queue at\nrate, ms", "right"),
        ("capacity over time", "left"),
    ]:
        t.add_column(col, justify=just, no_wrap=just == "left" and col != "capacity over time")
    for l in plan["links"]:
        t.add_row(
            l["name"],
            l["link"],
            _rate(l["effective_rate_bps"]),
            f"{l['delay_ns'] / 1e6:g}",
            f"{100 * l['loss']:g}%",
            _queue(l["queue"]),
            f"{l['queue_delay_ns'] / 1e6:.4g}",
            _capacity(l.get("capacity")),
        )
    parts.append(t)

    rows = []
    for f in plan["flows"]:
        how = f["cc"] + (f", transport {f['transport']}" if f.get("transport") else "")
        rows.append((f"flow {f['name']} ({how})", f["src"], f["dst"], f["path"]))
    for g in plan.get("traffic", []):
        rows.append((f"traffic {g['name']}", g["src"], g["dst"], g["path"]))
    if preset:
        for sl in preset["player_slots"]:
            what = f"slot {sl['name']} ({_span(sl['start_ns'], sl['stop_ns'])})"
            rows.append((what, sl["server"], sl["client"], sl["path"]))
    if rows:
        t = Table(title="Paths (data direction; RTT = round-trip propagation delay)", title_justify="left")
        for col, just, wrap in [
            ("what", "left", True),
            ("from → to", "left", True),
            ("RTT\nms", "right", False),
            ("bottleneck", "left", False),
            ("rate", "right", False),
            ("BDP", "right", False),
            ("BDP\npkts", "right", False),
            ("queue", "right", False),
            ("queue\n/ BDP", "right", False),
        ]:
            t.add_column(col, justify=just, no_wrap=not wrap)
        for what, a, b, path in rows:
            if not path:
                t.add_row(what, f"{a} → {b}", "-", "no route", "", "", "", "", "")
                continue
            q = path["queue_over_bdp"]
            t.add_row(
                what,
                f"{a} → {b}",
                f"{path['rtt_ns'] / 1e6:g}",
                path["bottleneck"],
                _rate(path["bottleneck_rate_bps"]),
                _kb(path["bdp_bytes"]),
                f"{path['bdp_bytes'] / 1500:.3g}",
                _queue(path["bottleneck_queue"]),
                "-" if q is None else f"{q:.3g}",
            )
        parts.append(t)

    if plan.get("traffic"):
        t = Table(title="Traffic generators", title_justify="left")
        for col in ["name", "kind", "from → to", "mean rate", "when", "parameters"]:
            t.add_column(col, justify="right" if col == "mean rate" else "left")
        for g in plan["traffic"]:
            t.add_row(
                g["name"],
                g["kind"],
                f"{g['src']} → {g['dst']}",
                _rate(g["mean_rate_bps"]),
                _span(g["start_ns"], g["stop_ns"]),
                _params(g["params"]) + ("" if g["kind"] == "web" else f", packet={g['packet_bytes']} B"),
            )
        parts.append(t)
    if plan.get("loss_events"):
        t = Table(title="Loss events", title_justify="left")
        for col in ["link direction", "loss", "from", "to"]:
            t.add_column(col)
        for e in plan["loss_events"]:
            t.add_row(e["at"], f"{100 * e['loss']:g}%", f"{e['start_ns'] / 1e9:g} s", f"{e['stop_ns'] / 1e9:g} s")
        parts.append(t)
    if plan.get("players"):
        parts.append(
            "players: "
            + ", ".join(
                f"{p['name']} ({p['abr']}, {p['cc']}" + (f", transport {p['transport']}" if p.get("transport") else "") + ")"
                for p in plan["players"]
            )
        )
    if preset and preset["player_slots"]:
        parts.append(
            f"{len(preset['player_slots'])} player slot(s): client/server pairs where the paper runs "
            "its video players; nothing runs in them until the scenario places players there."
        )
    return parts


# ---------------------------------------------------------------------------------------------
# demo


def demo_table(table, duration: int) -> Table:
    """The demo's comparison (a DataFrame, one row per server cc, the CSV's columns)."""
    t = Table(
        title=f"8 RBB players, 8 Mbps bottleneck, 100 ms RTT, {duration} s (tcphas-home)",
        title_justify="left",
        caption=f"Measured over the whole run, [0, {duration}) s, the players' start-up "
        "included (the TcpHas paper's K); `haslab reproduce tcphas-fig2` also measures "
        "from 60 s and over [300, 560) s of 600 s runs (docs/reproductions.md).",
        caption_justify="left",
    )
    for col in table.columns:
        # the CSV's column names, on lines of at most 13 characters
        header = "\n".join(textwrap.wrap(col, 13))
        t.add_column(header, justify="left" if col == "server cc" else "right")

    def cell(v) -> str:
        if isinstance(v, str):
            return v
        if float(v).is_integer() and abs(v) < 100:
            return f"{v:.0f}"
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}"

    for row in table.itertuples(index=False):
        t.add_row(*[cell(v) for v in row])
    return t


# ---------------------------------------------------------------------------------------------
# bench


def bench_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[tuple[Sequence[str], Mapping]],
    *,
    left: Sequence[str] = (),
    caption: str | None = None,
) -> Table:
    """A table of ``haslab bench`` measurements, one row per case: the columns that say what
    ran and how long (``columns``; those named in ``left`` left-justified, the others right),
    then events/s, link tx/s and peak RSS (MiB) of the case's measurements.

    ``rows``: (the cells of ``columns``, the case's measurements as ``bench`` reports them)."""
    t = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for col in [*columns, "events/s", "link tx/s", "peak RSS (MiB)"]:
        t.add_column(col, justify="left" if col in left else "right", no_wrap=True)
    for cells, m in rows:
        t.add_row(
            *cells,
            f"{m['events_per_second'] / 1e6:.2f} M",
            f"{m['link_transmissions_per_second'] / 1e6:.2f} M",
            f"{m['peak_rss_mib']:.0f}",
        )
    return t


def bench_vs_ns3_table(m: Mapping, reps: int) -> Table:
    """haslab against ns-3: median wall times of each and the ratios."""
    t = Table(title=f"haslab vs ns-3 3.37: {m['scenario']} (median of {reps})", title_justify="left")
    for col in ["what", "wall (s)", "ns-3 / this"]:
        t.add_column(col, justify="left" if col == "what" else "right", no_wrap=True)
    t.add_row("ns-3, whole process", f"{m['ns3_seconds']:.3f}", "1")
    t.add_row("haslab run, whole process", f"{m['haslab_run_seconds']:.3f}", f"{m['ratio_ns3_to_haslab_run']:.1f}×")
    t.add_row("haslab core (build + run)", f"{m['haslab_core_seconds']:.4f}", f"{m['ratio_ns3_to_haslab_core']:.0f}×")
    return t


# ---------------------------------------------------------------------------------------------
# compare


def _num(v) -> str:
    """A compared value: large ones in engineering units (8.01M), small ones with 3 digits."""
    if v is None:
        return "–"
    a = abs(v)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.3g}"


def compare_table(rows, title: str, players: bool) -> Table:
    """Simulator and live results side by side (rows of :func:`haslab.compare.compare_dirs`);
    the rows of single players only with ``players``."""
    t = Table(title=title, show_lines=False)
    for col in ("", "metric", "sim", "live", "live − sim", "rel."):
        t.add_column(col, justify="left" if col in ("", "metric") else "right")
    last = None
    for r in rows:
        if r.group.startswith("player ") and not players:
            continue
        fmt = _num
        t.add_row(r.group if r.group != last else "", r.metric, fmt(r.sim), fmt(r.live),
                  fmt(r.diff), "" if r.rel is None else f"{r.rel * 100:+.1f} %")
        last = r.group
    return t


# ---------------------------------------------------------------------------------------------
# catalogs


def _human(value) -> str:
    """A default as a scenario would spell it: 40000000ns → "40ms", true → true."""
    import re

    if value is None:
        return "absent"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        m = re.fullmatch(r"(\d+)ns", value)
        if m:
            ns = int(m.group(1))
            for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
                if ns >= scale and ns % scale == 0:
                    return f'"{ns // scale}{unit}"'
            return f'"{ns}ns"'
        m = re.fullmatch(r"(\d+)B", value)
        if m:
            b = int(m.group(1))
            for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
                if b >= scale and b % scale == 0:
                    return f'"{b // scale}{unit}"'
            return f'"{b}B"'
        return f'"{value}"'
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def cc_tables(cat: Mapping) -> list[Table]:
    """The catalog's congestion-control algorithms, sender options and named transports."""
    from rich.markup import escape as esc

    algs = Table(
        title=esc('Congestion control (cc = "NAME", or [flow.cc] with algorithm = "NAME" and parameters)'),
        title_justify="left",
        show_lines=True,
    )
    algs.add_column("algorithm", no_wrap=True)
    algs.add_column("source")
    algs.add_column("parameters (defaults)")
    for a in cat["algorithms"]:
        name = a["name"] + "".join(f"\nalias {x}" for x in a["aliases"])
        params = "\n".join(f"{p['name']} = {_human(p['default'])}" for p in a["parameters"]) or "-"
        algs.add_row(esc(name), esc(a["source"]), esc(params))
    opts = Table(title=esc("Sender options ([flow.tcp] or [defaults.tcp])"), title_justify="left", show_lines=True)
    opts.add_column("option", no_wrap=True)
    opts.add_column("default", no_wrap=True)
    opts.add_column("accepts")
    opts.add_column("description")
    for o in cat["tcp_options"]:
        opts.add_row(esc(o["name"]), esc(_human(o["default"])), esc(o["accepts"]), esc(o["description"]))
    trans = Table(
        title=esc('Named transports (transport = "NAME" on a [[flow]] or [[player]]; its own cc and tcp keys win)'),
        title_justify="left",
        show_lines=True,
    )
    trans.add_column("transport", no_wrap=True)
    trans.add_column("cc", no_wrap=True)
    trans.add_column("tcp options")
    trans.add_column("source and description")
    for t in cat.get("transports", []):
        tcp = "\n".join(f"{k} = {_human(v)}" for k, v in t["tcp"].items()) or "-"
        trans.add_row(esc(t["name"]), esc(t["cc"]), esc(tcp), esc(f"{t['description']}\n({t['source']})"))
    return [algs, opts, trans]


def abr_table(players: list) -> Table:
    """The catalog's player algorithms with their sources and default parameters."""
    from rich.markup import escape as esc

    t = Table(title=esc('Player algorithms (abr = "NAME", or { algorithm = "NAME", ... })'), title_justify="left", show_lines=True)
    t.add_column("abr", no_wrap=True)
    t.add_column("source")
    t.add_column("parameters (defaults)")
    for p in players:
        params = "\n".join(
            f"{k} = {_human(v) if v is not None else '(derived)'}" for k, v in p["parameters"].items()
        ) or "-"
        name = p["name"] + "".join(f"\nalias {x}" for x in p.get("aliases", []))
        t.add_row(esc(name), esc(p["source"]), esc(params))
    return t


# ---------------------------------------------------------------------------------------------
# haslab live


def live_flow_table(summary: Mapping) -> Table:
    """One row per flow of a live run: its kernel cc, goodput, retransmits, RTOs and RTTs."""
    t = Table(title="Flows (live)", title_justify="left")
    for col in ["flow", "cc (kernel)", "goodput\nMbps", "retrans-\nmits", "RTOs", "min RTT\nms", "mean SRTT\nms"]:
        t.add_column(col, justify="left" if col.startswith(("flow", "cc")) else "right", no_wrap=True)
    for f in summary["flows"]:
        t.add_row(f["name"], f"{f['cc']} ({f['kernel_cc']})", f"{f['goodput_bps'] / 1e6:.3f}",
                  str(f["retransmitted_segments"]), str(f["rto_count"]), _ms(f.get("min_rtt_ns")), _ms(f.get("mean_srtt_ns")))
    return t


def live_link_table(summary: Mapping) -> Table:
    """One row per bottleneck direction of a live run, with its delay box's lateness."""
    t = Table(title="Bottleneck (live)", title_justify="left")
    for col in ["direction", "rate\nMbps", "utili-\nzation", "tx\npackets", "drops", "random\nlosses",
                "delay box lateness\np50 / p99 ms"]:
        t.add_column(col, justify="left" if col == "direction" else "right", no_wrap=True)
    for l in summary["links"]:
        lat = (l.get("delay_box") or {}).get("lateness_ns")
        lt = f"{lat['p50'] / 1e6:.3f} / {lat['p99'] / 1e6:.3f}" if lat and lat.get("samples") else "-"
        t.add_row(l["name"], f"{l['rate_bps'] / 1e6:g}", f"{100 * l['utilization']:.1f}%", str(l["tx_packets"]),
                  str(l["dropped_packets"]), str(l["lost_packets"]), lt)
    return t


def live_ranking_table(rep: Mapping, seconds: int) -> Table:
    """``haslab live check --ranking``: per servers' cc, the live and the simulated runs' means
    (± their standard deviation when there are several)."""
    runs, sims = rep.get("live_runs", 1), rep.get("sim_runs", 1)

    def count(n: int, what: str) -> str:
        return f"{what}: mean ± sd of {n} runs" if n > 1 else f"{what}: 1 run"

    t = Table(title=f"8 RBB players, {seconds} s (mean per player; queue = mean backlog of r1->r2; "
                    f"{count(runs, 'live')}; {count(sims, 'sim')})",
              title_justify="left")
    for col in ["servers' cc", "mode", "switches", "avg level", "stalls", "queue B", "drops", "load before/after"]:
        t.add_column(col, justify="left" if col in ("servers' cc", "mode") else "right", no_wrap=True)
    cells = (("switches", "{:.2f}"), ("avg_level", "{:.2f}"), ("stalls", "{:.1f}"), ("queue_bytes", "{:.0f}"),
             ("drops", "{:.0f}"))
    for cc, n in rep["runs"].items():
        for mode in ("live", "sim"):
            several = (runs if mode == "live" else sims) > 1
            v, sd = n[mode], n.get(f"{mode}_sd") if several else None
            row = [fmt.format(v[key]) + (" ± " + fmt.format(sd[key]) if sd else "") for key, fmt in cells]
            t.add_row(cc, mode, *row, " ".join(map(str, n["load"])) if mode == "live" else "")
    return t


# ---------------------------------------------------------------------------------------------
# sweeps and reproductions


def first_line(text: str | None) -> str:
    """The first line of an error, whole (the table wraps it; a cut message would hide the
    list of accepted values that ends most errors)."""
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def failures_table(rows: list[dict], params: list[str], limit: int) -> Table:
    """A sweep's failed runs (hash, parameters, seed, error), the first ``limit`` of them."""
    t = Table(title=f"Failed runs ({len(rows)})", title_justify="left")
    t.add_column("run", no_wrap=True)
    for p in params:
        t.add_column(p)
    t.add_column("seed", justify="right")
    t.add_column("error")
    for r in rows[:limit]:
        t.add_row(r["run_hash"][:12], *[str(r.get(p)) for p in params], str(r["seed"]), first_line(r.get("error")))
    if len(rows) > limit:
        t.caption = f"… and {len(rows) - limit} more (haslab sweep status DIR --all)"
    return t


def experiments_table(experiments: Mapping, missing: Iterable[str]) -> Table:
    """The experiments ``haslab reproduce`` knows, and those of the papers not yet reproduced."""
    t = Table(title="Experiments (haslab reproduce NAME [--quick])", title_justify="left")
    for c in ("name", "paper", "figure", "title", "quick form", "full form"):
        t.add_column(c)
    for name, e in experiments.items():
        t.add_row(name, e.paper, e.label, e.title, e.forms[0], e.forms[1])
    for name in missing:
        t.add_row(name, name.split("-")[0], "", "[dim]not yet reproduced[/]", "", "")
    return t


def claims_table(outcome) -> Table:
    """An experiment's claims: the paper's number, ours, the verdict and why."""
    from .reproduce.base import fmt

    t = Table(title=f"{outcome.experiment.name}: claims", title_justify="left", show_lines=False)
    t.add_column("paper's claim", ratio=3)
    t.add_column("paper")
    t.add_column("ours")
    t.add_column("verdict")
    t.add_column("reason", ratio=2)
    for c in outcome.claims:
        t.add_row(c.text, c.paper, c.ours_text or fmt(c.ours), "[green]yes[/]" if c.holds else f"[red]{c.verdict}[/]" + (f": {c.reading}" if c.reading else ""), c.reason)
    return t
