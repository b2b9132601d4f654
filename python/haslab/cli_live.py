"""``haslab live``: the scenario on the real kernel TCP of this machine, in network namespaces
(docs/live.md). Needs root."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from .console import deferred, stderr_console, stdout_console

live_flow_table, live_link_table, live_ranking_table, player_table = deferred(
    "haslab.tables", "live_flow_table", "live_link_table", "live_ranking_table", "player_table"
)

app = typer.Typer(
    name="live",
    help=(
        "Live mode: run a scenario's dumbbell and bulk/chunk flows on the real kernel TCP, in network "
        "namespaces (haslab-*), with an HTB + drop-tail bottleneck, an NFQUEUE delay box, and kernel or "
        "BPF congestion controls. Needs root. See docs/live.md."
    ),
    no_args_is_help=True,
    # help texts are plain text: rich markup would eat [[player]], [sweep], [flow.tcp]
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
)

out = stdout_console(120)
err = stderr_console()


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def _guarded(fn, scenario: Optional[Path] = None):
    from .api import ScenarioError
    from .live import LiveError, LiveUnsupported

    try:
        return fn()
    except ScenarioError as e:
        # (a message about the file itself already starts with its name)
        named = scenario is None or str(e).startswith(f"{scenario}:")
        raise _fail(str(e) if named else f"{scenario}: {e}") from None
    except LiveUnsupported as e:
        raise _fail(f"{scenario}: not supported in live mode: {e}" if scenario else str(e)) from None
    except (LiveError, OSError, ValueError) as e:
        raise _fail(str(e)) from None
    except KeyboardInterrupt:
        raise _fail("interrupted (the testbed was removed)") from None


def _rate(text: str) -> int:
    """'8Mbps', '500kbps', '8000000' → bit/s."""
    t = text.strip().lower().removesuffix("bps").removesuffix("bit/s")
    mult = {"k": 1e3, "m": 1e6, "g": 1e9}.get(t[-1:], 1)
    num = t[:-1] if t[-1:] in "kmg" else t
    try:
        v = float(num) * mult
    except ValueError:
        raise typer.BadParameter(f"{text!r}: expected a rate such as 8Mbps or 500kbps") from None
    if v <= 0:
        raise typer.BadParameter(f"{text!r}: must be greater than zero")
    return int(v)


def _load(scenario: Path):
    from .api import validate
    from .live import from_plan
    from .live.config import reject_players

    reject_players(scenario)
    return from_plan(validate(scenario))


@app.command()
def up(
    scenario: Path = typer.Argument(..., help="Scenario file: its dumbbell is built.", show_default=False),
    delay_box: bool = typer.Option(True, "--delay-box/--no-delay-box", help="Start the NFQUEUE delay boxes."),
    wait: Optional[float] = typer.Option(
        None, "--wait", min=0,
        help="Seconds to wait while another live run uses this machine before refusing (default $HASLAB_LIVE_WAIT_S or 0).",
    ),
) -> None:
    """Build the testbed of a scenario and leave it up (after removing leftovers of earlier runs)."""
    from .live.testbed import Testbed

    def go():
        cfg = _load(scenario)
        tb = Testbed(cfg, delay_box=delay_box).up(wait_s=wait)
        f, r = cfg.forward, cfg.reverse
        out.print(
            f"up: {cfg.pairs} pairs; left→right {f.rate_bps / 1e6:g} Mbit/s, {f.delay_ns / 1e6:g} ms, loss {f.loss:g}; "
            f"right→left {r.rate_bps / 1e6:g} Mbit/s, {r.delay_ns / 1e6:g} ms; namespaces "
            f"{tb.ns('left0')}, {tb.ns('r1')}, {tb.ns('r2')}, {tb.ns('right0')}, …"
        )

    _guarded(go, scenario)


@app.command()
def down() -> None:
    """Remove everything the testbed created (namespaces, processes, BPF algorithms, state)."""
    from .live import netns

    def go():
        removed = netns.cleanup()
        out.print("removed: " + (", ".join(removed) if removed else "nothing (no haslab objects)"))
        left = netns.leftovers()
        if left:
            raise _fail("still present: " + ", ".join(left))

    _guarded(go)


@app.command()
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the testbed's namespaces, processes, bottleneck queues and registered BPF algorithms."""
    from .live.testbed import status as get_status

    def go():
        st = get_status()
        if as_json:
            out.print(json.dumps(st, indent=1), soft_wrap=True)
            return
        if not st["namespaces"]:
            out.print("no testbed (no haslab namespaces)")
        else:
            out.print(f"namespaces: {', '.join(st['namespaces'])}")
            for name, q in st["queues"].items():
                if q:
                    out.print(
                        f"queue {name}: {q['kind']}, sent {q['tx_packets']} packets, dropped {q['dropped_packets']}, "
                        f"backlog {q['backlog_packets']} packets"
                    )
        out.print(f"BPF algorithms: {', '.join(st['struct_ops']) or 'none'}")

    _guarded(go)


@app.command()
def rate(
    value: str = typer.Argument(..., help="New bottleneck rate, e.g. 4Mbps.", show_default=False),
    reverse: bool = typer.Option(False, "--reverse", help="Change the right→left direction instead."),
) -> None:
    """Change the bottleneck rate of the running testbed (tc class change; the queue is kept)."""
    from .live import netns
    from .live.testbed import BN_IF, _tc_rate

    def go():
        bps = _rate(value)
        router = netns.ns_name("r2" if reverse else "r1")
        if router not in netns.our_namespaces():
            raise _fail("no testbed is up (haslab live up SCENARIO)")
        netns.run(["tc", "-n", router, "class", "change", "dev", BN_IF, "parent", "1:", "classid", "1:10", "htb",
                   "rate", _tc_rate(bps), "ceil", _tc_rate(bps), "quantum", "3000"])
        out.print(f"{'right→left' if reverse else 'left→right'} bottleneck: {bps / 1e6:g} Mbit/s")

    _guarded(go)


def print_live_summary(result) -> None:
    out.print(live_flow_table(result.summary))
    out.print(live_link_table(result.summary))


@app.command("run")
def run_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (.toml or .json).", show_default=False),
    out_dir: Path = typer.Option(Path("out-live"), "--out", "-o", help="Directory for summary.json and the traces."),
    ladder: Optional[str] = typer.Option(
        None, "--ladder",
        help="Encoding ladder given to haslab_tcphas flows, comma-separated rates (e.g. 248k,456k,928k,1632k,4256k).",
    ),
    rate_step: list[str] = typer.Option(
        [], "--rate-step", help="TIME:RATE, e.g. 10s:4Mbps: the left→right bottleneck rate from that time on (repeatable).",
    ),
    keep: bool = typer.Option(False, "--keep", help="Leave the testbed up afterwards (haslab live down removes it)."),
    dashjs: Optional[str] = typer.Option(
        None, "--dashjs", help="Also play the video with dash.js in headless Chromium, ABR rule throughput, bola or dynamic.",
    ),
    dashjs_host: int = typer.Option(0, "--dashjs-host", help="dash.js runs on right{N} and fetches from left{N}."),
    dashjs_for: Optional[str] = typer.Option(
        None, "--dashjs-for", metavar="NAME",
        help="Real dash.js plays in place of player NAME, a simulator port of a dash.js rule (abr dashjs-throughput, "
        "-bola or -dynamic): its hosts, video, start and cc, the same rule, under its name (for haslab compare).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
    wait: Optional[float] = typer.Option(
        None, "--wait", min=0,
        help="Seconds to wait while another live run uses this machine before refusing (default $HASLAB_LIVE_WAIT_S or 0).",
    ),
) -> None:
    """Run a scenario's flows and HAS players on the live testbed.

    Players ([[player]]) run our ABR code (the simulator's) over real HTTP/1.1 against a DASH origin in the server namespaces. Writes OUT/summary.json (flows, players, bottleneck directions, the delay boxes' timing error and the differences from the simulator), cwnd/goodput/queue/players/segments.parquet as `haslab run` does, requests.jsonl (the origin's log) and router.pcap (tcpdump at the bottleneck, headers only).
    """
    from .live.run import run_live

    def go():
        ladder_bps = [_rate(x) for x in ladder.split(",") if x.strip()] if ladder else None
        steps = []
        for st in rate_step:
            when, _, what = st.partition(":")
            try:
                secs = float(when.strip().removesuffix("s"))
            except ValueError:
                raise typer.BadParameter(f"--rate-step {st!r}: expected TIME:RATE such as 10s:4Mbps") from None
            steps.append((int(secs * 1e9), _rate(what)))
        log = None if quiet else (lambda m: err.print(m))
        result = run_live(scenario, out_dir=out_dir, ladder_bps=ladder_bps, keep=keep, rate_steps=steps, log=log,
                          dashjs=dashjs, dashjs_host=dashjs_host, dashjs_for=dashjs_for, wait_s=wait)
        if not quiet:
            print_live_summary(result)
            if result.summary.get("players"):
                out.print(player_table(result))
            out.print(f"wrote summary.json and {', '.join(f'{n}.parquet' for n in sorted(result.traces))} in {out_dir}/")

    _guarded(go, scenario)


@app.command()
def check(
    ranking: bool = typer.Option(
        False, "--ranking",
        help="Also run the TcpHas/Westwood+/CUBIC player comparison live and simulated and report its numbers "
             "(--runs live runs of --seconds per algorithm).",
    ),
    seconds: int = typer.Option(180, "--seconds", min=5, help="Length of each run of --ranking."),
    runs: int = typer.Option(
        3, "--runs", min=1,
        help="Live runs per algorithm for --ranking; their spread is the tolerance of the live-simulated "
             "comparison (1: reported, not judged).",
    ),
    sim_runs: int = typer.Option(
        12, "--sim-runs", min=1,
        help="Simulated runs per algorithm for --ranking, each with the players' starts spread over "
             "--sim-start-spread-ms (1 run with a spread of 0: the scenario exactly as the live runs get it).",
    ),
    sim_start_spread_ms: float = typer.Option(
        5.0, "--sim-start-spread-ms", min=0,
        help="The simulated players' start times are uniform in [0, this] ms (live runs' players start "
             "within 3-7 ms of each other).",
    ),
    sim_recovery: str = typer.Option(
        "prr", "--sim-recovery",
        help="Fast recovery of the simulated runs of --ranking: prr (the kernel's only rule, what the live runs "
             "get) or classic (the simulator's default, RFC 6582 inflation).",
    ),
    ccs: Optional[list[str]] = typer.Option(
        None, "--cc",
        help="Only this servers' algorithm in --ranking (cubic, westwood+ or tcphas; repeat the option for "
             "several; default all three). TcpHas is compared with Westwood+ only when both run.",
    ),
    out_dir: Optional[Path] = typer.Option(
        None, "--out", "-o",
        help="Keep the live results of --ranking here, and its numbers so far in ranking.json after each algorithm.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the --ranking numbers as JSON."),
    wait: Optional[float] = typer.Option(
        None, "--wait", min=0,
        help="Seconds to wait while another live run uses this machine before refusing (default $HASLAB_LIVE_WAIT_S or 0).",
    ),
) -> None:
    """Say whether this machine has what live mode needs (root, iproute2, iptables, the delay box, BPF tools).

    With --ranking, also measure how live runs compare with the simulator (numbers that depend on the machine's load;
    docs/live.md records them): 8 RBB players with CUBIC, Westwood+ and TcpHas servers.
    """
    from .live.checks import RANKING_CCS, ranking_ccs
    from .live.run import missing_requirements

    try:
        # before the requirements, so that a wrong name is told on any machine
        order = ranking_ccs(ccs, "--cc") if ccs else RANKING_CCS
    except ValueError as e:
        raise _fail(str(e))
    missing = missing_requirements(bpf=True)
    if missing:
        raise _fail("missing: " + "; ".join(missing))
    if not ranking:
        out.print("ok: live mode can run here")
        return
    from .live.checks import ranking as run_ranking

    def go():
        log = None if as_json else (lambda m: err.print(m))
        rep = run_ranking(seconds, out_dir=out_dir, say=log or (lambda m: None), wait_s=wait, runs=runs,
                          sim_runs=sim_runs, sim_start_spread_ns=round(sim_start_spread_ms * 1e6),
                          sim_recovery=sim_recovery, ccs=order)
        if as_json:
            out.print(json.dumps(rep, indent=1), soft_wrap=True)
            return
        out.print(live_ranking_table(rep, seconds))
        for v in rep["verdicts"]:
            word = "not judged" if v["holds"] is None else "holds" if v["holds"] else "DOES NOT HOLD"
            out.print(f"{word}: {v['claim']} ({v['numbers']})")

    _guarded(go)
