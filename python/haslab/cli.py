"""The ``haslab`` command line: run, validate, describe, schema, demo, bench, cc list, sweep, live, reproduce,
crosscheck."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from .console import stderr_console, stdout_console

app = typer.Typer(
    name="haslab",
    help=(
        "haslab: a deterministic packet-level simulator of HTTP adaptive streaming over TCP.\n\n"
        "Scenarios are TOML files (see `haslab schema` and examples/). Same scenario and seed, "
        "same results, byte for byte."
    ),
    no_args_is_help=True,
    # help texts are plain text: rich markup would eat [[player]], [sweep], [flow.tcp]
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Tables are wider than 80 columns: when stdout is not a terminal (a pipe, a log), use 120.
out = stdout_console(120)
err = stderr_console()


def _print_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"haslab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", "-V", help="Print haslab's version and exit.", is_eager=True, callback=_print_version
    ),
) -> None:
    pass


class UserError(Exception):
    """An error caused by the user's input: printed as one line, exit code 1, no traceback."""


def _fail(message: str) -> "typer.Exit":
    from rich.markup import escape

    # messages hold field paths such as flow[2].tcp.min_rto: escape them from rich markup
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def _guarded(fn, scenario: Optional[Path] = None):
    """Runs fn(), turning user errors (bad scenario, missing file, unwritable output) into a
    one-line message and exit code 1. Scenario errors are prefixed with the file's name."""
    from .api import ScenarioError

    try:
        return fn()
    except ScenarioError as e:
        # (a message about the file itself already starts with its name)
        named = scenario is None or str(e).startswith(f"{scenario}:")
        raise _fail(str(e) if named else f"{scenario}: {e}") from None
    except (UserError, OSError) as e:  # missing file, unwritable output directory, full disk
        raise _fail(str(e)) from None
    except ValueError as e:  # e.g. pcap directory problems reported by World::new
        raise _fail(str(e)) from None
    except KeyboardInterrupt:
        raise _fail("interrupted") from None


# ---------------------------------------------------------------------------------------------
# summary tables


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


def print_summary(result) -> None:
    s = result.summary
    for w in s.get("warnings", []):
        err.print(f"warning: {w}", soft_wrap=True, markup=False)
    out.print(
        f"simulated {s['duration_ns'] / 1e9:g} s (seed {s['seed']}): {s['events']:,} events, "
        f"{s['link_transmissions']:,} link transmissions"
    )
    if s.get("players"):
        out.print(player_table(result))
    out.print(flow_table(result))
    delay = flow_delay_table(result)
    if delay is not None:
        out.print(delay)
    out.print(link_table(result))


def _describe(plan: dict) -> str:
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
# commands


SET_HELP = (
    "Override a scenario key: KEY=VALUE, repeatable; KEY is a dotted path (flow[0].tcp.sack or flow.0.tcp.sack), "
    "VALUE a TOML value (true, 4, [1, 2]) or else text (30s, cubic). Checked like the file; recorded in summary.json."
)


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="Scenario file (.toml, or .json).", show_default=False),
    out_dir: Path = typer.Option(
        Path("out"), "--out", "-o", help="Directory for summary.json, the Parquet traces and pcap files."
    ),
    pcap: bool = typer.Option(True, "--pcap/--no-pcap", help="Write the pcap captures the scenario asks for."),
    force: bool = typer.Option(
        False, "--force", "-f", help="Use a non-empty --out: remove the files of the haslab run there first."
    ),
    overrides: Optional[list[str]] = typer.Option(None, "--set", "-s", help=SET_HELP, show_default=False),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors (no table, no progress bar)."),
) -> None:
    """Run a scenario and write its results.

    Writes OUT/summary.json (all counters), one Parquet file per trace (cwnd.parquet, goodput.parquet, queue.parquet; with [[player]]s also players.parquet, segments.parquet and players.png, the level and buffer of each player over time) and the pcap files that the scenario's trace.pcap list asks for, then prints a table per player, per flow and per traced link direction.

    OUT must be empty or missing; with --force, the files an earlier haslab run wrote there are removed first (other files stay).
    """
    # the run without pandas: tables from the summary, Parquet with pyarrow alone (pandas and
    # matplotlib only for a run with players, for players.png)
    from .api import run_raw as run_scenario
    from .cli_run import RUN_MANIFEST, clear_out_dir, scenario_with_overrides

    def go():
        what, base_dir, changed = scenario_with_overrides(scenario, overrides or [])
        removed = clear_out_dir(Path(out_dir), force)
        if removed and not quiet:
            err.print(f"--force: removed {len(removed)} file(s) of the previous run in {out_dir}/", soft_wrap=True)
        result = run_scenario(what, out_dir=out_dir, progress=not quiet, pcap=pcap, base_dir=base_dir)
        if changed:
            result.summary["overrides"] = changed  # what --set changed in the file, by dotted path
        written = result.save(out_dir)
        if result.summary.get("players"):
            from .plots import level_and_buffer

            png = Path(out_dir) / "players.png"
            level_and_buffer(result.result(), png)
            written.append(png)
        pcap_files = [p["file"] for p in result.plan["trace"]["pcaps"]] if pcap else []
        names = [p.name for p in written] + pcap_files
        (Path(out_dir) / RUN_MANIFEST).write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
        if not quiet:
            print_summary(result)
            out.print(f"wrote {', '.join(names)} in {out_dir}/")

    _guarded(go, _label(scenario, overrides))


def _label(scenario: Path, overrides: Optional[list[str]]) -> str:
    """How an error names the scenario: the file, and the --set items applied to it."""
    return f"{scenario} (with --set {', '.join(overrides)})" if overrides else str(scenario)


@app.command()
def validate(
    scenario: Path = typer.Argument(..., help="Scenario file (.toml, or .json).", show_default=False),
    overrides: Optional[list[str]] = typer.Option(None, "--set", "-s", help=SET_HELP, show_default=False),
) -> None:
    """Check a scenario without running it.

    Prints "ok" and a one-line description (and, on stderr, what reading the inputs forgave, e.g. duplicate Representation ids in an MPD); or prints the error, the offending field's path first, and exits with code 1.
    """
    from .api import validate as validate_scenario
    from .cli_run import scenario_with_overrides

    def go():
        what, base_dir, _ = scenario_with_overrides(scenario, overrides or [])
        return validate_scenario(what, base_dir=base_dir)

    plan = _guarded(go, _label(scenario, overrides))
    for w in plan.get("warnings", []):
        err.print(f"warning: {w}", soft_wrap=True, markup=False)
    out.print(f"ok: {_describe(plan)}")


@app.command()
def describe(
    scenario: Path = typer.Argument(..., help="Scenario file (.toml, or .json).", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the description as JSON."),
) -> None:
    """Describe a scenario's network without running it.

    Prints the nodes; every link direction's rate, delay, loss, queue (and the queue's delay at the link's rate), capacity schedule or Mahimahi trace; the path of every flow, traffic generator and player slot with its round-trip propagation delay, bottleneck, bandwidth-delay product and bottleneck queue relative to it; the traffic generators; the loss events.
    """
    from .api import describe as describe_scenario

    plan = _guarded(lambda: describe_scenario(scenario), scenario)
    if as_json:
        sys.stdout.write(json.dumps(plan, indent=2) + "\n")
        return
    for part in describe_tables(plan):
        out.print(part)


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    from .api import schema as get_schema

    sys.stdout.write(get_schema().rstrip("\n") + "\n")


@app.command()
def demo(
    out_dir: Path = typer.Option(Path("demo-out"), "--out", "-o", help="Where demo.png, demo.csv and the runs go."),
    duration: int = typer.Option(180, "--duration", min=10, help="Simulated seconds per run (the paper's K = 180)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the path of the figure."),
) -> None:
    """Eight video players share an 8 Mbps home bottleneck: Westwood+ vs TcpHas at the servers.

    The TcpHas paper's network (preset tcphas-home: 100 ms RTT, one-BDP drop-tail queue, PPBP cross-traffic), 8 RBB players, 180 s, once with Westwood+ and once with TcpHas on the servers. Prints a table (bitrate, time at the optimal level, switches, instability, stalls, queue delay, drops, utilization) and writes OUT/demo.png (the two side by side: requested bitrate over time, per-player averages, time at each level, the bottleneck queue's distribution), OUT/demo.csv and each run's results under OUT/westwoodplus and OUT/tcphas.
    """
    from .demo import run_demo

    def go():
        table = run_demo(out_dir, duration_s=duration, progress=not quiet)
        png = out_dir / "demo.png"
        if not quiet:
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
            out.print(t)
        out.print(f"wrote {png}")

    _guarded(go)


@app.command()
def bench(
    case: str = typer.Option("all", "--case", "-c", help="Which case: a, b or all."),
    as_json: bool = typer.Option(False, "--json", help="Print the measurements as JSON lines instead of a table."),
    vs_ns3: bool = typer.Option(
        False, "--vs-ns3", help="Instead: haslab against ns-3 3.37 on the crosscheck dumbbell (8 NewReno flows, 60 s)."
    ),
    reps: int = typer.Option(5, "--reps", help="With --vs-ns3: repetitions (interleaved; medians are reported)."),
    scale: Optional[list[int]] = typer.Option(
        None, "--scale", help="Instead: the scale case with this many flows (repeatable), e.g. --scale 10000."
    ),
    scale_duration: str = typer.Option("0.5s", "--scale-duration", help="Simulated time of the scale cases."),
) -> None:
    """Measure simulator speed and memory on two cases, each in a fresh process.

    Case a: 8 NewReno flows, 8 Mbps, 100 ms RTT, 1-BDP queue, 60 s. Case b: 1000 NewReno flows, 10 Gbps, 20 ms RTT, 1-BDP queue, 10 s.

    Traces are off. Reports wall time, events/s, link transmissions/s and the peak resident memory (MiB) of the process that ran the case.

    --vs-ns3 runs ns-3 (validation/ns3/dumbbell.cc) and haslab on the same scenario, interleaved, and reports the median wall time of ns-3's whole process, of `haslab run`'s whole process and of haslab's core alone, with the ratios.

    --scale N runs N NewReno flows on a dumbbell of N/1000 × 10 Gbps (at least 10 Gbps; 20 ms RTT, 1-BDP queue) and reports set-up time, events/s, link transmissions/s and peak memory.
    """
    if vs_ns3:
        _bench_vs_ns3(reps, as_json)
        return
    if scale:
        _bench_scale(scale, scale_duration, as_json)
        return
    from .bench import CASES, run_case_in_subprocess

    keys = list(CASES) if case == "all" else [case]
    for k in keys:
        if k not in CASES:
            raise _fail(f"unknown case {k!r}: expected one of {', '.join(CASES)} or all")
    t = Table(
        title="haslab bench (NewReno, dumbbell, 1-BDP drop-tail queue, traces off)",
        title_justify="left",
        caption="peak RSS: the whole process that ran the case (Python included)",
        caption_justify="left",
    )
    for col in ["case", "scenario", "wall (s)", "events", "events/s", "link tx/s", "peak RSS (MiB)"]:
        t.add_column(col, justify="left" if col in ("case", "scenario") else "right", no_wrap=True)
    for k in keys:
        if not as_json:
            err.print(f"running case {k}: {CASES[k].title} …")
        try:
            m = run_case_in_subprocess(k)
        except RuntimeError as e:
            raise _fail(str(e)) from None
        if as_json:
            out.print(json.dumps(m), soft_wrap=True)
        t.add_row(
            k,
            m["title"],
            f"{m['wall_seconds']:.2f}",
            f"{m['events']:,}",
            f"{m['events_per_second'] / 1e6:.2f} M",
            f"{m['link_transmissions_per_second'] / 1e6:.2f} M",
            f"{m['peak_rss_mib']:.0f}",
        )
    if not as_json:
        out.print(t)


def _bench_vs_ns3(reps: int, as_json: bool) -> None:
    from .bench import vs_ns3

    if reps < 1:
        raise _fail(f"--reps {reps}: must be at least 1")
    if not as_json:
        err.print(f"haslab vs ns-3: {reps} interleaved repetitions of the 8-flow, 60 s dumbbell …")
    try:
        m = vs_ns3(reps)
    except RuntimeError as e:
        raise _fail(str(e)) from None
    if as_json:
        out.print(json.dumps(m), soft_wrap=True)
        return
    t = Table(title=f"haslab vs ns-3 3.37: {m['scenario']} (median of {reps})", title_justify="left")
    for col in ["what", "wall (s)", "ns-3 / this"]:
        t.add_column(col, justify="left" if col == "what" else "right", no_wrap=True)
    t.add_row("ns-3, whole process", f"{m['ns3_seconds']:.3f}", "1")
    t.add_row("haslab run, whole process", f"{m['haslab_run_seconds']:.3f}", f"{m['ratio_ns3_to_haslab_run']:.1f}×")
    t.add_row("haslab core (build + run)", f"{m['haslab_core_seconds']:.4f}", f"{m['ratio_ns3_to_haslab_core']:.0f}×")
    out.print(t)


def _bench_scale(flows: list[int], duration: str, as_json: bool) -> None:
    from .bench import run_scale_in_subprocess

    t = Table(title=f"haslab bench --scale (NewReno dumbbell, 20 ms RTT, {duration})", title_justify="left")
    for col in ["flows", "rate", "set-up (s)", "run (s)", "events/s", "link tx/s", "peak RSS (MiB)"]:
        t.add_column(col, justify="right", no_wrap=True)
    for n in flows:
        if n < 1:
            raise _fail(f"--scale {n}: must be at least 1")
        rate_bps = max(n // 1000, 10) * 1e9
        if not as_json:
            err.print(f"running {n:,} flows at {rate_bps / 1e9:g} Gbps …")
        try:
            m = run_scale_in_subprocess(n, rate_bps, duration)
        except RuntimeError as e:
            raise _fail(str(e)) from None
        if as_json:
            out.print(json.dumps(m), soft_wrap=True)
            continue
        t.add_row(
            f"{n:,}",
            f"{rate_bps / 1e9:g} Gbps",
            f"{m['setup_seconds']:.2f}",
            f"{m['run_seconds']:.2f}",
            f"{m['events_per_second'] / 1e6:.2f} M",
            f"{m['link_transmissions_per_second'] / 1e6:.2f} M",
            f"{m['peak_rss_mib']:.0f}",
        )
    if not as_json:
        out.print(t)


cc_app = typer.Typer(
    name="cc",
    help="Congestion-control algorithms and sender options.",
    no_args_is_help=True,
    # help texts are plain text: rich markup would eat [[player]], [sweep], [flow.tcp]
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(cc_app, name="cc")


def _num(v) -> str:
    """A compared value: large ones in engineering units (8.01M), small ones with 3 digits."""
    if v is None:
        return "–"
    a = abs(v)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.3g}"


@app.command()
def compare(
    sim_dir: Path = typer.Argument(..., help="result directory of `haslab run` (summary.json)"),
    live_dir: Path = typer.Argument(..., help="result directory of `haslab live run` of the same scenario"),
    players: bool = typer.Option(False, "--players", help="also one block of rows per player"),
    pair: Optional[list[str]] = typer.Option(
        None, "--pair", help="SIM=LIVE: compare simulator player SIM with live player LIVE (repeatable; "
        "players of the same name are paired anyway)", show_default=False,
    ),
) -> None:
    """Simulator and live results of one scenario side by side: goodput, level, switches,
    stalls, drops, with the differences (live − sim).

    Players are paired by name, or by --pair. A simulator port of dash.js is compared with real dash.js by running the scenario live with `haslab live run SCEN --dashjs-for NAME`: dash.js then plays in place of player NAME, under its name."""
    from .compare import compare_dirs, parse_pairs

    try:
        rows = compare_dirs(sim_dir, live_dir, parse_pairs(pair or []))
    except (OSError, ValueError) as e:
        raise _fail(str(e)) from None
    if not rows:
        raise _fail("nothing to compare: no player, flow or link appears in both results")
    t = Table(title=f"{sim_dir} (sim) vs {live_dir} (live)", show_lines=False)
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
    out.print(t)


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


@cc_app.command("list")
def cc_list(
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List every congestion-control algorithm (scenario name, source, default parameters) and every [flow.tcp] sender option (default, accepted values).

    Select an algorithm per flow with `cc = "cubic"`, or with a table `[flow.cc]` holding `algorithm = "cubic"` and any parameters below; set sender options in `[flow.tcp]` (or `[defaults.tcp]`); or pick a named transport of the papers with `transport = "newcwv-paced"` (its cc and options, overridden by the flow's own).
    """
    from rich.markup import escape as esc

    from .api import catalog

    cat = catalog()
    if as_json:
        sys.stdout.write(json.dumps(cat, indent=2) + "\n")
        return
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
    out.print(algs)
    opts = Table(title=esc("Sender options ([flow.tcp] or [defaults.tcp])"), title_justify="left", show_lines=True)
    opts.add_column("option", no_wrap=True)
    opts.add_column("default", no_wrap=True)
    opts.add_column("accepts")
    opts.add_column("description")
    for o in cat["tcp_options"]:
        opts.add_row(esc(o["name"]), esc(_human(o["default"])), esc(o["accepts"]), esc(o["description"]))
    out.print(opts)
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
    out.print(trans)


@app.command("abr")
def abr_list(
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List every player algorithm: its scenario name (abr = "NAME" in a [[player]], or a table with algorithm = "NAME" and parameters), the source it follows and its default parameters (docs/has.md describes each)."""
    from rich.markup import escape as esc

    from .api import catalog

    players = catalog().get("players", [])
    if as_json:
        sys.stdout.write(json.dumps(players, indent=2) + "\n")
        return
    t = Table(title=esc('Player algorithms (abr = "NAME", or { algorithm = "NAME", ... })'), title_justify="left", show_lines=True)
    t.add_column("abr", no_wrap=True)
    t.add_column("source")
    t.add_column("parameters (defaults)")
    for p in players:
        params = "\n".join(
            f"{k} = {_human(v) if v is not None else '(derived)'}" for k, v in p["parameters"].items()
        ) or "-"
        t.add_row(esc(p["name"]), esc(p["source"]), esc(params))
    out.print(t)


app.add_typer(__import__("haslab.cli_sweep", fromlist=["app"]).app, name="sweep")
app.add_typer(__import__("haslab.cli_live", fromlist=["app"]).app, name="live")
app.command("reproduce")(__import__("haslab.cli_reproduce", fromlist=["reproduce"]).reproduce)
app.add_typer(__import__("haslab.cli_crosscheck", fromlist=["app"]).app, name="crosscheck")


def main() -> None:
    app(prog_name="haslab")


if __name__ == "__main__":
    main()
