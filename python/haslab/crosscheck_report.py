"""The cross-check's output: the terminal tables, the per-group means and seed spreads, and the
report docs/fidelity.md (:func:`write_report`). The cells, their runs and their judgement are in
:mod:`haslab.crosscheck`.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Optional

from .crosscheck import (CellResult, Known, MetricRow, REGENERATE, SPREAD_MIN_SEEDS, TOLERANCES,
                         tolerance_for)

METRIC_LABELS = {
    "goodput_mbps": "goodput Mbps",
    "goodput_last_half_mbps": "goodput 2nd half Mbps",
    "jain_last_half": "Jain 2nd half",
    "drops": "drops",
    "queue_delay_ms": "queue delay ms",
    "retransmits": "retransmits",
    "rtos": "RTOs",
}


def label(metric: str) -> str:
    if metric in METRIC_LABELS:
        return METRIC_LABELS[metric]
    base, _, app = metric.partition("[")
    return f"{METRIC_LABELS.get(base, base)} [{app.rstrip(']')}]"


def fmt(metric: str, v: float) -> str:
    if metric.startswith(("drops", "retransmits", "rtos")):
        return f"{v:.0f}"
    if metric.startswith("jain"):
        return f"{v:.3f}"
    if metric.startswith("queue_delay"):
        return f"{v:.1f}"
    return f"{v:.3f}"


def group_means(results: list[CellResult]) -> dict[str, dict[str, tuple[float, float, bool]]]:
    """Per group, per metric: (haslab mean, ns-3 mean, excluded) over the seeds that ran."""
    acc: dict[str, dict[str, list[MetricRow]]] = {}
    for r in results:
        if not r.rows:
            continue
        g = acc.setdefault(r.cell.group, {})
        for row in r.rows:
            g.setdefault(row.metric, []).append(row)
    out: dict[str, dict[str, tuple[float, float, bool]]] = {}
    for g, ms in acc.items():
        out[g] = {}
        for m, rows in ms.items():
            excluded = all(x.excluded for x in rows) or all(
                rr.status == "excluded" for rr in results if rr.cell.group == g and rr.rows
            )
            out[g][m] = (sum(x.haslab for x in rows) / len(rows), sum(x.ns3 for x in rows) / len(rows), excluded)
    return out


def seed_spread(results: list[CellResult]) -> dict[str, dict[str, tuple[int, float, float, float, float]]]:
    """Per group, per metric: (seeds, haslab mean, haslab sd, reference mean, reference sd) over
    the seeds that ran (sample standard deviation; 0 with one seed). With many seeds
    (`--seeds N`) this compares the two distributions, where one seed compares two samples."""
    acc: dict[str, dict[str, list[MetricRow]]] = {}
    for r in results:
        for row in r.rows:
            acc.setdefault(r.cell.group, {}).setdefault(row.metric, []).append(row)
    out: dict[str, dict[str, tuple[int, float, float, float, float]]] = {}
    for g, ms in acc.items():
        out[g] = {}
        for m, rows in ms.items():
            h = [x.haslab for x in rows]
            n = [x.ns3 for x in rows]
            sd = (lambda v: statistics.stdev(v) if len(v) > 1 else 0.0)
            out[g][m] = (len(rows), statistics.fmean(h), sd(h), statistics.fmean(n), sd(n))
    return out


def print_spread(results: list[CellResult], console, reference: str = "ns-3") -> None:
    """The `seed_spread` of each group as a table: mean ± sd on each side."""
    from rich.table import Table

    for g, ms in seed_spread(results).items():
        seeds = max(v[0] for v in ms.values())
        t = Table(title=f"{g}: mean ± sd over {seeds} seeds (haslab / {reference})", title_justify="left")
        t.add_column("metric")
        t.add_column("haslab", justify="right")
        t.add_column(reference, justify="right")
        for m in [*METRIC_LABELS, *sorted(k for k in ms if k not in METRIC_LABELS)]:
            if m in ms:
                _, hm, hs, nm, ns = ms[m]
                t.add_row(label(m), f"{fmt(m, hm)} ± {fmt(m, hs)}", f"{fmt(m, nm)} ± {fmt(m, ns)}")
        console.print(t)


def summary_counts(results: list[CellResult]) -> dict[str, int]:
    c = {"cells": len(results), "compared": 0, "skipped": 0, "excluded": 0, "error": 0,
         "within": 0, "explained": 0, "unexplained": 0}
    for r in results:
        c[r.status] += 1
        if r.status == "compared":
            c[r.verdict] += 1
    return c


def _cell_text(x: MetricRow, markdown: bool = True) -> str:
    s = f"{fmt(x.metric, x.haslab)} / {fmt(x.metric, x.ns3)}"
    if x.excluded:
        return f"({s})" if markdown else f"[dim]({s})[/]"
    if x.within:
        return s
    if x.known is not None:
        return f"{s} k{x.known + 1}" if markdown else f"[yellow]{s} k{x.known + 1}[/]"
    if x.spread:
        return f"{s} s" if markdown else f"[yellow]{s} s[/]"
    return f"**{s}** !" if markdown else f"[red]{s} ![/]"


def write_report(
    results: list[CellResult],
    known: list[Known],
    path: str | os.PathLike,
    quick: bool = False,
    intro: Optional[list[str]] = None,
    known_file: str = "python/haslab/crosscheck_known.toml",
) -> None:
    """docs/fidelity.md: the settings, the tables, every cell outside tolerance with its
    explanation, and the command that regenerates it. ``intro`` replaces the ns-3 introduction
    (title to tolerances) for another reference."""
    lines: list[str] = []
    w = lines.append
    cmd = REGENERATE + (" --quick" if quick else "")
    counts = summary_counts(results)
    if intro is not None:
        lines += intro
    else:
        _ns3_intro(w, cmd)
    _tables(w, results, known, counts, known_file)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines), encoding="utf-8")


def _ns3_intro(w, cmd: str) -> None:
    w("# Fidelity: haslab's TCP against ns-3 3.37")
    w("")
    w(f"Generated by `{cmd}` (`make install` installs ns-3 3.37 from Debian's `libns3-dev` and")
    w("builds the ns-3 program). Do not edit by hand: change the code, the matrix")
    w("(`python/haslab/crosscheck.py`) or the known differences")
    w("(`python/haslab/crosscheck_known.toml`), then regenerate. `haslab crosscheck ns3 --quick`")
    w("runs a few cells (the same as `python/tests/test_crosscheck.py`); `--cells PATTERN` selects")
    w("cells by name; `--seeds N` runs N seeds per group (10 here) and prints each group's mean ± sd")
    w("on both sides (with one seed a cell compares two samples; chaotic metrics such as the RTO count")
    w("of two flows need the distributions); `--json FILE` also writes every cell's raw numbers (both")
    w("sides' metrics and flows), and `--from-json FILE` judges them again without running; the exit")
    w("code is 1 when a cell is outside tolerance without an explanation.")
    w("`validation/ns3/dumbbell.cc --trace=FILE` writes the ns-3 sender's events (segments sent and")
    w("resent, cwnd, ssthresh, congestion states, RTOs, advancing ACKs, RTT samples, and the flow's")
    w("segments the bottleneck dropped) as CSV; a haslab run's pcap, cwnd and goodput traces (whose")
    w("rows count each flow's drops) show the same from its side.")
    w("")
    w("## What is compared")
    w("")
    w("Each cell is one scenario run twice: as a haslab scenario and by `validation/ns3/dumbbell.cc`")
    w("linked against ns-3 3.37. The dumbbell: 8 Mbps bottleneck, 40 ms one way, 67-packet drop-tail")
    w("queue (one BDP) in each direction; 100 Mbps / 5 ms access links with 1000-packet queues (100 ms")
    w("base RTT); 60 s. Bulk flows, or a chunked on/off flow alone (1 MB every 2 s) or against one")
    w("bulk flow (500 kB every 2 s, below its fair share, so that it idles between chunks; at 1 MB")
    w("it would never idle and the cell would repeat the two-bulk-flow cell). Flow start times are drawn from the seed (uniform in [0, 1 s)) and given to both")
    w("sides: both simulators are deterministic, so the seed only moves the starts (one flow: the")
    w("seeds give the same result). Like with like: haslab's `newreno` (Linux-style, growth per")
    w("acknowledged packet, with `grow_when_app_limited` since ns-3 3.37 has no cwnd-limited test)")
    w("against ns-3's `TcpLinuxReno`; haslab's transport `ns3-newreno` against")
    w("ns-3's `TcpNewReno`; CUBIC, Westwood+ (ns-3: `TcpWestwood` with `ProtocolType=WestwoodPlus`),")
    w("YeAH and Illinois by name, and the last three also with haslab's `cwnd_growth = \"per-ack\"`")
    w("(their ns-3 classes derive from `TcpNewReno` and grow per ACK); Westwood+ also as ns-3's class")
    w("is (`westwood+-ns3`: per-ACK growth, `estimator = \"ns3\"` and `ca_sample = \"ns3\"`, i.e. ns-3's")
    w("estimator fed by ns-3's `PktsAcked` calls with the smoothed RTT). A cell whose haslab side needs a")
    w("transport or option this build lacks is *skipped*.")
    w("")
    w("Settings given explicitly to both sides, because the ns-3 3.37 defaults differ from haslab's")
    w("(ns-3 files under `src/internet/`):")
    w("")
    w("| setting | both sides | ns-3 3.37 default (file) | haslab default |")
    w("|---|---|---|---|")
    for row in SETTINGS_TABLE:
        w("| " + " | ".join(row) + " |")
    w("")
    w("Not the same on both sides: what the congestion control's per-ACK hook is given. ns-3's")
    w("`ProcessAck` calls `PktsAcked` on every ACK that finds data outstanding (a duplicate or partial")
    w("ACK counting one segment) with `m_lastRtt`, the smoothed RTT (tcp-socket-base.cc `EstimateRtt`);")
    w("haslab's side calls `pkts_acked` as Linux does, on ACKs of new data with the raw RTT sample, except")
    w("in the `westwood+-ns3` cells (`ca_sample = \"ns3\"`, docs/tcp.md). CUBIC's delay minimum and")
    w("HyStart, YeAH's and Illinois's RTTs and Linux Westwood+'s RTT_min read it; their groups compare")
    w("haslab's Linux algorithms, fed as Linux feeds them, with ns-3's own classes.")
    w("")
    w("Metrics, computed the same way on both sides: goodput = bytes delivered in order to the")
    w("receiving application × 8 / (end − connection established), summed over the flows, and over")
    w("the last half of the run (30–60 s); Jain's index of the flows' last-half goodputs; packets")
    w("dropped by the bottleneck queue (r1→r2); mean queueing delay (enqueue → start of")
    w("transmission) of the packets it sent; retransmitted segments and RTO expirations, summed over")
    w("the flows. haslab: `FlowSummary` (bytes_received, established_ns, retransmitted_segments,")
    w("rto_count), the `goodput` trace, `LinkDirSummary` (dropped_packets, sojourn_mean_ns). ns-3:")
    w("trace sources (PacketSink `Rx`; the socket's `Tx` — a data segment below the highest sequence")
    w("sent is a retransmission —, `RTO` — a doubling is a timeout — and `CongState`; the bottleneck")
    w("device queue's `Enqueue`/`Dequeue`/`Drop`).")
    w("")
    w("Tolerances (relative to ns-3): " + "; ".join(f"{k} {t.describe()}" for k, t in TOLERANCES.items()) + ".")
    w("")


def _tables(w, results: list[CellResult], known: list[Known], counts: dict, known_file: str) -> None:
    w("## Summary")
    w("")
    w(f"{counts['cells']} cells: {counts['compared']} compared ({counts['within']} entirely within tolerance, "
      f"{counts['explained']} outside or partly excluded with an explanation — a known difference or the "
      f"seed spread —, {counts['unexplained']} outside without one), {counts['excluded']} excluded (known "
      f"reference defects; numbers shown in parentheses), {counts['skipped']} skipped, {counts['error']} failed.")
    compared_rows = [x for r in results if r.status == "compared" for x in r.rows]
    n_known = sum(1 for x in compared_rows if not x.within and x.known is not None and not x.excluded)
    n_spread = sum(1 for x in compared_rows if x.spread)
    w(f"Of the compared cells' metrics outside tolerance, {n_known} are explained by a known difference "
      f"and {n_spread} by the seed spread.")
    w("")
    w("In the tables: haslab / reference; `kN` outside tolerance, explained by known difference N;")
    w("`s` outside tolerance in this seed while the group's means over its seeds agree within the")
    w(f"same tolerance (the seed spread: groups of at least {SPREAD_MIN_SEEDS} seeds; a single seed of")
    w("a multi-flow cell is one sample of a chaotic system, and its group's mean is the estimate")
    w("compared); **bold !** outside tolerance without an explanation; (parentheses) not compared (a")
    w("known defect of the reference).")
    w("")
    means = group_means(results)
    spreads = seed_spread(results)
    groups: list[str] = []
    for r in results:
        if r.cell.group not in groups:
            groups.append(r.cell.group)
    metrics = list(METRIC_LABELS)
    w("## Means over the seeds")
    w("")
    w("| group | " + " | ".join(METRIC_LABELS[m] for m in metrics) + " |")
    w("|---|" + "---|" * len(metrics))
    for g in groups:
        if g not in means:
            why = next(r.reason for r in results if r.cell.group == g)
            w(f"| {g} | " + " | ".join(["—"] * (len(metrics) - 1)) + f" | {why} |")
            continue
        cells = []
        for m in metrics:
            h, n, excluded = means[g][m]
            seeds, _, hs, _, ns = spreads[g][m]
            sd = (lambda v: f" ±{fmt(m, v)}") if seeds > 1 else (lambda v: "")
            s = f"{fmt(m, h)}{sd(hs)} / {fmt(m, n)}{sd(ns)}"
            if excluded:
                s = f"({s})"
            elif not tolerance_for(m).within(h, n):
                s = f"*{s}*"
            cells.append(s)
        w(f"| {g} | " + " | ".join(cells) + " |")
    w("")
    w("Each entry: haslab's mean ±sd / the reference's mean ±sd over the group's seeds (sample")
    w("standard deviation). *Italics*: the means differ by more than the tolerance. Each seed is")
    w("judged on its own below; a seed outside tolerance in a group whose means agree is marked `s`.")
    w("")
    w("## Every cell")
    w("")
    w("| cell | verdict | " + " | ".join(METRIC_LABELS[m] for m in metrics) + " |")
    w("|---|---|" + "---|" * len(metrics))
    for r in results:
        if not r.rows:
            w(f"| {r.cell.name} | {r.status} | " + " | ".join(["—"] * (len(metrics) - 1)) + f" | {r.reason} |")
            continue
        by = {x.metric: x for x in r.rows}
        w(f"| {r.cell.name} | {r.verdict} | " + " | ".join(_cell_text(by[m]) for m in metrics) + " |")
    mixed = [r for r in results if r.rows and any(x.metric not in METRIC_LABELS for x in r.rows)]
    if mixed:
        w("")
        w("Per-application last-half goodput (Mbps) in the cells mixing a chunked and a bulk flow:")
        w("")
        w("| cell | chunks | bulk |")
        w("|---|---|---|")
        for r in mixed:
            by = {x.metric: x for x in r.rows}
            w(f"| {r.cell.name} | " + " | ".join(
                _cell_text(by[f"goodput_last_half_mbps[{app}]"]) for app in ("chunks", "bulk")) + " |")
    w("")
    w("## Known differences")
    w("")
    w(f"From `{known_file}`. An *excluded* entry is a known defect of the reference: its")
    w("metrics (or whole cells) are shown but not compared.")
    w("")
    for i, k in enumerate(known):
        used = sum(1 for r in results if any(x.known == i for x in r.rows))
        scope = "all metrics" if "*" in k.metrics else "metrics `" + "`, `".join(k.metrics) + "`"
        w(f"{i + 1}. **{k.kind}**{' (excluded)' if k.exclude else ''} — cells `{'`, `'.join(k.cells)}`; {scope}"
          + (f", when {k.when}" if k.when else "") + f"; marks {used} cell(s) of this run.")
        w("")
        w(f"   {k.explanation}")
        if k.source:
            w("")
            w(f"   Source: {k.source}")
        w("")
    unexplained = [r for r in results if r.unexplained]
    w("## Outside tolerance without an explanation")
    w("")
    seen: dict[str, list[str]] = {}  # groups of several seeds left unexplained, and their metrics
    for r in unexplained:
        if max(v[0] for v in spreads[r.cell.group].values()) > 1:
            for x in r.unexplained:
                if x.metric not in seen.setdefault(r.cell.group, []):
                    seen[r.cell.group].append(x.metric)
    if not unexplained:
        w("None.")
    elif seen:
        w("The groups' means ± sd over their seeds, for each metric left unexplained, and the difference")
        w("of the means ± its standard error:")
        w("")
        for g, ms in seen.items():
            parts = []
            for m in ms:
                n, hm, hs, nm, ns = spreads[g][m]
                se = ((hs * hs + ns * ns) / n) ** 0.5  # standard error of the difference of the means
                rel = f" ({(hm / nm - 1) * 100:+.1f} %)" if nm else ""
                parts.append(f"{label(m)} {fmt(m, hm)} ± {fmt(m, hs)} vs {fmt(m, nm)} ± {fmt(m, ns)}, "
                             f"difference {fmt(m, hm - nm)} ± {fmt(m, se)}{rel}")
            w(f"- {g} ({n} seeds): " + "; ".join(parts))
        w("")
        w("Each seed:")
        w("")
    for r in unexplained:
        w(f"- {r.cell.name}: " + ", ".join(
            f"{label(x.metric)} {fmt(x.metric, x.haslab)} vs {fmt(x.metric, x.ns3)}" for x in r.unexplained))
    errors = [r for r in results if r.status == "error"]
    if errors:
        w("")
        w("## Failed cells")
        w("")
        for r in errors:
            w(f"- {r.cell.name}: {r.reason}")
    w("")


#: (setting, both sides, ns-3 3.37 default and file, haslab default) for the report.
SETTINGS_TABLE = [
    ("segment size", "1448 B (1500 B packets with timestamps)", "536 B (tcp-socket.cc SegmentSize)", "1448 B"),
    ("initial window", "10 segments", "10 (tcp-socket.cc InitialCwnd)", "10"),
    ("timestamps / window scaling", "on / on", "on / on (tcp-socket-base.cc)", "on / on"),
    ("receive window", "64 MiB", "128 KiB (tcp-socket.cc RcvBufSize)", "64 MiB"),
    ("send buffer (ns-3)", "4 MiB", "128 KiB (tcp-socket.cc SndBufSize)", "unlimited"),
    ("delayed ACK", "every 2nd segment, 40 ms timer", "2, 200 ms (tcp-socket.cc DelAckCount, DelAckTimeout)", "2 segments' bytes, 40 ms"),
    ("min RTO", "200 ms", "1 s (tcp-socket-base.cc MinRto)", "200 ms"),
    ("RTO formula", "max(min RTO, SRTT + max(1 ms, 4·RTTVAR))", "that (tcp-socket-base.cc, ClockGranularity 1 ms)", "Linux: SRTT + rttvar, rttvar the round trip's largest 4·mdev, lowered once per round trip, never below min RTO (tcp_rtt_estimator)"),
    ("RTO timer", "restarted on the first partial ACK only, not by a retransmission nor by an ACK that advances and SACKs new data outside recovery; every RTO recomputes ssthresh from the flight, a repeated one too; no undo", "that (tcp-socket-base.cc NewAck, ProcessAck, SendDataPacket, ReTxTimeout)", "Linux: restarted on every ACK of new data and on resending the head; ssthresh not during fast recovery nor on a repeat without progress; Eifel undo"),
    ("fast recovery", "PRR (RFC 6937)", "TcpPrrRecovery (tcp-l4-protocol.cc RecoveryType)", "classic"),
    ("RFC 6675 NextSeg rule (3)", "on: in recovery, with nothing marked lost and no new data, the first segment not SACKed is resent", "that (tcp-tx-buffer.cc NextSeg)", "off (Linux resends only what it marked lost)"),
    ("partial ACK in recovery", "after PRR, one segment is sent whatever the window (a lost one, else new data, else the head) unless the new head is a full segment already retransmitted", "that (tcp-socket-base.cc ProcessAck, DoRetransmit)", "Linux: only what PRR's window allows"),
    ("window", "cwnd and flight in bytes: a full segment needs one MSS free, the last data of a write goes if it fits; per-ACK growth adds ⌊MSS²/cwnd⌋ bytes", "that (tcp-socket-base.cc AvailableWindow, SendPendingData; tcp-congestion-ops.cc TcpNewReno::CongestionAvoidance)", "Linux: in packets (a short segment takes a packet of window)"),
    ("what an ACK grows cwnd by", "the segments the cumulative ACK newly covers, SACKed before or not (the ACK that ends a Loss episode: those above the recovery point); nothing for an ACK that advances and SACKs new data outside recovery", "that (tcp-socket-base.cc ProcessAck: IncreaseWindow(segsAcked))", "Linux: the packets it newly delivered, each segment once (`growth_count`)"),
    ("restart after idle", "none", "none (tcp-socket-base.cc)", "Linux's"),
    ("RACK / TLP, pacing", "off", "not implemented / off", "off"),
    ("SACK", "per cell", "on (tcp-socket-base.cc Sack)", "off"),
    ("congestion control", "per cell", "TcpCubic (tcp-l4-protocol.cc SocketType)", "newreno"),
    ("queues", "drop-tail per direction in packets, no queue disc", "pfifo_fast 1000 p over a 100 p device queue (ipv4-address-helper.cc, TrafficControlHelper::Default)", "drop-tail"),
]


def print_results(results: list[CellResult], console, reference: str = "ns-3") -> None:
    """One table per cell group: per seed, haslab / ns-3 per metric; yellow kN: outside, known
    difference N; red !: outside without an explanation; dim (…): not compared."""
    from rich.markup import escape
    from rich.table import Table

    groups: dict[str, list[CellResult]] = {}
    for r in results:
        groups.setdefault(r.cell.group, []).append(r)
    for g, rs in groups.items():
        metrics: list[str] = []
        for r in rs:
            for x in r.rows:
                if x.metric not in metrics:
                    metrics.append(x.metric)
        if not metrics:
            console.print(f"{g}: {rs[0].status} ({escape(rs[0].reason)})")
            continue
        t = Table(title=g, title_justify="left")
        t.add_column("seed")
        for m in metrics:
            t.add_column(label(m) + f"\nhaslab / {reference}", justify="right")
        t.add_column("")
        for r in rs:
            if not r.rows:
                t.add_row(str(r.cell.seed), *([""] * len(metrics)), escape(f"{r.status}: {r.reason}"[:80]))
                continue
            by = {x.metric: x for x in r.rows}
            t.add_row(str(r.cell.seed), *(_cell_text(by[m], markdown=False) for m in metrics), r.verdict)
        console.print(t)
