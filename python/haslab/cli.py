"""The ``haslab`` command line: run, validate, describe, schema, demo, bench, cc list, sweep, live, reproduce,
crosscheck."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

# the consoles, the error report and a run's summary are shared with the lean `haslab run`
# (haslab.cli_main), which does not import typer; UserError is also found here
from .cli_common import UserError, err, guarded, out, print_error, print_summary  # noqa: F401
from .cli_common import label as _label
from .console import deferred

# the tables (and rich) load when a command prints one
(
    abr_table,
    bench_table,
    bench_vs_ns3_table,
    cc_tables,
    compare_table,
    demo_table,
    describe_line,
    describe_tables,
) = deferred(
    "haslab.tables",
    "abr_table",
    "bench_table",
    "bench_vs_ns3_table",
    "cc_tables",
    "compare_table",
    "demo_table",
    "describe_line",
    "describe_tables",
)

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


def _fail(message: str) -> "typer.Exit":
    """Prints ``error: MESSAGE``; returns the exception that ends the command with exit code 1."""
    print_error(message)
    return typer.Exit(code=1)


def _guarded(fn, scenario: Optional[Path] = None):
    """Runs fn(), turning user errors (bad scenario, missing file, unwritable output) into a
    one-line message and exit code 1. Scenario errors are prefixed with the file's name."""
    return guarded(fn, scenario, _fail)


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
    # `haslab` and `python -m haslab` run a valid `run` command line without typer
    # (haslab.cli_main); this command is for its help, its usage errors and callers of `app`.
    # Both run cli_run.execute_run, and cli_run.RUN_OPTIONS names the options declared here.
    from . import cli_run

    params = dict(scenario=scenario, out_dir=out_dir, pcap=pcap, force=force, overrides=overrides or [], quiet=quiet)
    _guarded(lambda: cli_run.execute_run(**params), _label(scenario, overrides))


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
    out.print(f"ok: {describe_line(plan)}")


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
            out.print(demo_table(table, duration))
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
    rows = []
    for k in keys:
        if not as_json:
            err.print(f"running case {k}: {CASES[k].title} …")
        try:
            m = run_case_in_subprocess(k)
        except RuntimeError as e:
            raise _fail(str(e)) from None
        if as_json:
            out.print(json.dumps(m), soft_wrap=True)
        rows.append(([k, m["title"], f"{m['wall_seconds']:.2f}", f"{m['events']:,}"], m))
    if not as_json:
        out.print(
            bench_table(
                "haslab bench (NewReno, dumbbell, 1-BDP drop-tail queue, traces off)",
                ["case", "scenario", "wall (s)", "events"],
                rows,
                left=("case", "scenario"),
                caption="peak RSS: the whole process that ran the case (Python included)",
            )
        )


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
    out.print(bench_vs_ns3_table(m, reps))


def _bench_scale(flows: list[int], duration: str, as_json: bool) -> None:
    from .bench import run_scale_in_subprocess

    rows = []
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
        cells = [f"{n:,}", f"{rate_bps / 1e9:g} Gbps", f"{m['setup_seconds']:.2f}", f"{m['run_seconds']:.2f}"]
        rows.append((cells, m))
    if not as_json:
        out.print(
            bench_table(
                f"haslab bench --scale (NewReno dumbbell, 20 ms RTT, {duration})",
                ["flows", "rate", "set-up (s)", "run (s)"],
                rows,
            )
        )


cc_app = typer.Typer(
    name="cc",
    help="Congestion-control algorithms and sender options.",
    no_args_is_help=True,
    # help texts are plain text: rich markup would eat [[player]], [sweep], [flow.tcp]
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(cc_app, name="cc")


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
    out.print(compare_table(rows, f"{sim_dir} (sim) vs {live_dir} (live)", players))


@cc_app.command("list")
def cc_list(
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List every congestion-control algorithm (scenario name, source, default parameters) and every [flow.tcp] sender option (default, accepted values).

    Select an algorithm per flow with `cc = "cubic"`, or with a table `[flow.cc]` holding `algorithm = "cubic"` and any parameters below; set sender options in `[flow.tcp]` (or `[defaults.tcp]`); or pick a named transport of the papers with `transport = "newcwv-paced"` (its cc and options, overridden by the flow's own).
    """
    from .api import catalog

    cat = catalog()
    if as_json:
        sys.stdout.write(json.dumps(cat, indent=2) + "\n")
        return
    for t in cc_tables(cat):
        out.print(t)


@app.command("abr")
def abr_list(
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List every player algorithm: its scenario name (abr = "NAME" in a [[player]], or a table with algorithm = "NAME" and parameters), the source it follows and its default parameters (docs/has.md describes each)."""
    from .api import catalog

    players = catalog().get("players", [])
    if as_json:
        sys.stdout.write(json.dumps(players, indent=2) + "\n")
        return
    out.print(abr_table(players))


app.add_typer(__import__("haslab.cli_sweep", fromlist=["app"]).app, name="sweep")
app.add_typer(__import__("haslab.cli_live", fromlist=["app"]).app, name="live")
app.command("reproduce")(__import__("haslab.cli_reproduce", fromlist=["reproduce"]).reproduce)
app.add_typer(__import__("haslab.cli_crosscheck", fromlist=["app"]).app, name="crosscheck")


def main() -> None:
    """The typer app for every command (``haslab`` itself starts at :func:`haslab.cli_main.main`)."""
    app(prog_name="haslab")


if __name__ == "__main__":
    main()
