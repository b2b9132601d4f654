"""``haslab live check --ranking``: comparisons of live and simulated runs whose numbers depend on
the machine (its load, its timer), so they are measured and reported (docs/live.md), not
asserted by the test suite.

The ranking check: the tcphas-home setting on a dumbbell (8 RBB players, video "tcphas",
8 Mbit/s, 100 ms RTT, one-BDP drop-tail queue) with CUBIC, Westwood+ and TcpHas (both BPF) on
the servers, each run live ``runs`` times and once in the simulator (which is deterministic: the
same scenario gives the same numbers). Reported per algorithm and mode: mean switches, average
level, stalls, mean backlog of r1->r2, drops (live: the mean over the runs, and their standard
deviation); and whether these hold:

- TcpHas players switch less than Westwood+ players (the TcpHas paper's Fig. 3a comparison),
  live (mean over the runs) and simulated;
- live agrees with the simulator per algorithm, on mean switches, average level and mean
  queue. The tolerance is the runs' own spread, measured each time, not a bound chosen once:
  two live runs of one scenario on this machine can differ by a factor of two in switch counts
  (docs/live.md). With one live run there is no spread, and the agreement is not judged.

The simulated side is an ensemble too. The simulator is deterministic, so one simulated run is
one sample of what the model gives, not its prediction: shifting the players' start times by a
few milliseconds (as happens in every live run) moves its switch count a lot (CUBIC: 10.6 to
18.3 over 12 draws, docs/live.md). So it
runs ``sim_runs`` times, run k with each player's start drawn uniformly in
[0, ``sim_start_spread``] by ``random.Random(k)`` (:func:`sim_starts`); the default spread, 5 ms,
is what live runs show: their players' first requests spread over 2.9-7.2 ms in 15 measured
runs (``segments.parquet``), and 8 uniform draws in [0, 5 ms] spread over 3.9 ms on average. With
several simulated runs the agreement is Welch's: the 95 % confidence interval of the difference
of the two means (Student's t with Welch's degrees of freedom) contains 0. With one simulated run
(``sim_runs`` 1, the players starting together), the simulated value must lie in the 95 %
prediction interval of one more live run (mean ± t(0.975, n-1) · sd · sqrt(1 + 1/n)).
"""

from __future__ import annotations

import json
import os
import random
import statistics
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..store import _atomic_write_bytes

#: the algorithms of the ranking check, in the order they run
RANKING_CCS = ("cubic", "westwood+", "tcphas")
#: simulated runs per algorithm (the ensemble of the module's documentation)
SIM_RUNS = 12
#: the players' start times of simulated run k are uniform in [0, this] (see the module's
#: documentation for the measurement it comes from)
SIM_START_SPREAD_NS = 5_000_000
#: players of the ranking check's scenario
RANKING_PLAYERS = 8


def sim_starts(k: int, spread_ns: int, players: int = RANKING_PLAYERS) -> list[int]:
    """The players' start times (ns) of simulated run ``k``: uniform in [0, ``spread_ns``], drawn
    by ``random.Random(k)``; all 0 when the spread is 0."""
    if spread_ns < 0:
        raise ValueError(f"sim_start_spread: {spread_ns} ns is not accepted; give 0 or more")
    rng = random.Random(k)
    return [rng.randint(0, spread_ns) if spread_ns else 0 for _ in range(players)]


#: fast-recovery rules the ranking check's simulated side accepts (``tcp.recovery``)
SIM_RECOVERIES = ("prr", "classic")


def tcphas_home_dumbbell(cc: str, duration_s: int, starts_ns: Optional[Sequence[int]] = None,
                         recovery: str = "prr") -> str:
    """The tcphas-home preset's setting on a dumbbell: 8 RBB players (video "tcphas"), 8 Mbit/s,
    100 ms RTT, a one-BDP drop-tail queue (100 kB), the players' congestion control ``cc``;
    player i starts at ``starts_ns[i]`` (default: all at 0). TCP with SACK and RACK loss
    detection but no tail-loss probe: the closest to the TcpHas paper's stack (ns-3, neither)
    that Linux 6.17 and later can run, since RACK is their only SACK loss detection. Fast
    recovery ``recovery``: "prr" (default) is the kernel's only rule (RFC 6937,
    ``tcp_cwnd_reduction`` in net/ipv4/tcp_input.c), so the simulated runs use the TCP the live
    runs get; "classic" (RFC 6582 inflation, the simulator's default) is the other reading,
    reported beside it in docs/live.md. The congestion control gets its samples as the kernel
    gives them (``ca_sample = "linux"``: ``pkts_acked`` on every ACK that finds data
    outstanding, ``tcp_clean_rtx_queue``)."""
    if recovery not in SIM_RECOVERIES:
        raise ValueError(f"recovery: {recovery!r} is not accepted; give one of {', '.join(SIM_RECOVERIES)}")
    players = "".join(f"""
[[player]]
name = "p{i}"
client = "right{i}"
server = "left{i}"
abr = "rbb"
video = "tcphas"
start = "{t}ns"
""" for i, t in enumerate(starts_ns or [0] * RANKING_PLAYERS))
    return f"""
seed = 1
duration = "{duration_s}s"
[dumbbell]
pairs = {RANKING_PLAYERS}
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "100000B"
access_rate = "100Mbps"
access_delay = "5ms"
[defaults]
cc = "{cc}"
tcp = {{ sack = true, rack = true, recovery = "{recovery}", ca_sample = "linux" }}
{players}
[trace]
queues = ["r1->r2"]
queue_interval = "100ms"
"""


def ranking_numbers(res) -> dict:
    """Mean switches, average level per player, stalls, mean r1->r2 backlog and drops of a result."""
    ps = res.summary["players"]
    link = next(l for l in res.summary["links"] if l["name"] == "r1->r2")
    q = res.queue
    q = q[q["link_name"] == "r1->r2"] if "link_name" in q.columns else q
    n = max(len(ps), 1)
    return {
        "players": len(ps),
        "segments": int(sum(p["segments"] for p in ps)),
        "switches": sum(p["switches"] for p in ps) / n,
        "avg_level": sum(p["avg_level"] for p in ps) / n,
        "stalls": int(sum(p["stalls"] for p in ps)),
        "queue_bytes": float(q["bytes"].mean()) if len(q) else 0.0,
        "drops": int(link["dropped_packets"]),
    }


#: the numbers on which live and simulated runs are compared, with how they are printed
AGREEMENT = (("switches", "switches", "{:.2f}"), ("avg_level", "average level", "{:.2f}"),
             ("queue_bytes", "mean queue", "{:.0f} B"))


def summarize_runs(runs: list[dict]) -> tuple[dict, dict]:
    """The mean and the sample standard deviation (0 for one run) of each number over runs."""
    mean = {k: statistics.fmean(r[k] for r in runs) for k in runs[0]}
    sd = {k: statistics.stdev(r[k] for r in runs) if len(runs) > 1 else 0.0 for k in runs[0]}
    return mean, sd


def prediction_interval(values: list[float]) -> tuple[float, float]:
    """The 95 % prediction interval of one more observation after ``values`` (two or more),
    assuming they are normal: mean ± t(0.975, n-1) · sd · sqrt(1 + 1/n), i.e. the half-width of
    the mean's confidence interval (:func:`haslab.aggregate.mean_ci`) times sqrt(n + 1)."""
    from ..aggregate import mean_ci

    ci = mean_ci(values)
    half = ci["half"] * (ci["n"] + 1) ** 0.5
    return ci["mean"] - half, ci["mean"] + half


def welch_interval(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """The difference of the means of ``a`` and ``b`` (two or more values each) and the half-width
    of its 95 % confidence interval, Welch's (``scipy.stats.ttest_ind`` with unequal variances).
    The half-width is 0 when neither sample varies."""
    from scipy import stats

    diff = statistics.fmean(a) - statistics.fmean(b)
    if statistics.stdev(a) == 0 and statistics.stdev(b) == 0:
        return diff, 0.0
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    return diff, float(ci.high - ci.low) / 2


def ranking_verdicts(nums: dict) -> list[dict]:
    """The comparisons of the ranking check on numbers from :func:`ranking`: per algorithm,
    "live" (the mean over the live runs), "live_runs" (each run's numbers), "sim" (the mean over
    the simulated runs) and "sim_runs" (each simulated run's numbers; absent: one run, "sim").
    A comparison that cannot be judged (one live run) has ``holds`` None; TcpHas against Westwood+
    needs both."""
    out = []
    for mode in ("live", "sim") if "tcphas" in nums and "westwood+" in nums else ():
        t, w = nums["tcphas"][mode], nums["westwood+"][mode]
        what = "mean over the live runs" if mode == "live" else "mean over the simulated runs"
        out.append({"claim": f"{mode}: TcpHas players switch less than Westwood+ players ({what})",
                    "holds": t["switches"] < w["switches"],
                    "numbers": f"{t['switches']:.2f} vs {w['switches']:.2f}"})
    for cc, n in nums.items():
        runs, sims = n["live_runs"], n.get("sim_runs") or [n["sim"]]
        one_sim = len(sims) == 1
        for key, name, fmt in AGREEMENT:
            values, simulated = [r[key] for r in runs], [r[key] for r in sims]
            live_text = f"live {len(values)} run{'s' if len(values) != 1 else ''} " + ", ".join(
                fmt.format(v) for v in values)
            if one_sim:
                claim = f"{cc}: simulated {name} within the 95 % prediction interval of a live run"
                sim_text = f"sim {fmt.format(simulated[0])}"
            else:
                claim = (f"{cc}: simulated and live {name} agree (the 95 % interval of the difference "
                         "of their means contains 0)")
                sim_text = (f"sim {fmt.format(statistics.fmean(simulated))} ± "
                            f"{fmt.format(statistics.stdev(simulated))} over {len(simulated)} runs")
            if len(values) < 2:
                out.append({"claim": claim, "holds": None,
                            "numbers": f"{sim_text}; {live_text}: no spread to judge by (--runs 2 or more)"})
            elif one_sim:
                lo, hi = prediction_interval(values)
                out.append({"claim": claim, "holds": lo <= simulated[0] <= hi,
                            "numbers": f"{sim_text}; {live_text}; interval {fmt.format(lo)} to {fmt.format(hi)}"})
            else:
                diff, half = welch_interval(simulated, values)
                out.append({"claim": claim, "holds": abs(diff) <= half,
                            "numbers": f"{sim_text}; {live_text}; difference {fmt.format(diff)} ± {fmt.format(half)}"})
    return out


def ranking_ccs(ccs: Sequence[str], field: str = "ccs") -> tuple[str, ...]:
    """The ranking check's algorithms named in ``ccs``, in the order the check runs them; raises
    ValueError naming ``field`` and the accepted names for an unknown name or none."""
    unknown = [c for c in ccs if c not in RANKING_CCS]
    if unknown or not ccs:
        raise ValueError(f"{field}: {', '.join(map(repr, unknown)) or 'none'} is not accepted; give one or more "
                         f"of {', '.join(RANKING_CCS)}")
    return tuple(c for c in RANKING_CCS if c in ccs)


def ranking(duration_s: int = 180, out_dir: Optional[os.PathLike] = None,
            say: Callable[[str], None] = lambda m: None, wait_s: Optional[float] = None,
            runs: int = 3, sim_runs: int = SIM_RUNS, sim_start_spread_ns: int = SIM_START_SPREAD_NS,
            sim_recovery: str = "prr", ccs: Sequence[str] = RANKING_CCS) -> dict:
    """Runs the ranking check: per algorithm, ``runs`` live runs (one after the other) and
    ``sim_runs`` simulated runs, run k with the players' starts of :func:`sim_starts` (k = 1..;
    one run with a spread of 0 is the scenario as the live runs get it) and fast recovery
    ``sim_recovery`` (the live runs always run the kernel's PRR), for the servers' algorithms
    ``ccs`` (some of :data:`RANKING_CCS`, in their order). Returns {"duration_s",
    "live_runs": runs, "sim_runs", "sim_start_spread_ns", "sim_recovery", "runs": {cc: {"live": mean numbers,
    "live_sd": their standard deviations, "live_runs": each run's numbers, "sim", "sim_sd",
    "sim_runs" (the same for the simulated runs), "load": [1/5/15-min load before the first
    live run, after the last]}}, "verdicts": [...]}. The live results go to OUT/live-CC (one
    run) or OUT/live-CC-K (K = 1..runs), and this report, as far as it has got, to
    OUT/ranking.json after each algorithm."""
    import haslab

    from .run import run_live

    if runs < 1:
        raise ValueError(f"runs: {runs} is not accepted; give 1 or more live runs per algorithm")
    if sim_runs < 1:
        raise ValueError(f"sim_runs: {sim_runs} is not accepted; give 1 or more simulated runs per algorithm")
    if sim_start_spread_ns < 0:
        raise ValueError(f"sim_start_spread: {sim_start_spread_ns} ns is not accepted; give 0 or more")
    if sim_recovery not in SIM_RECOVERIES:
        raise ValueError(f"sim_recovery: {sim_recovery!r} is not accepted; give one of {', '.join(SIM_RECOVERIES)}")
    order = ranking_ccs(ccs)
    nums: dict = {}
    rep: dict = {}
    for cc in order:
        text = tcphas_home_dumbbell(cc, duration_s)
        before = os.getloadavg()
        live_runs = []
        for k in range(1, runs + 1):
            say(f"{cc}: live run {k} of {runs}, {duration_s} s")
            name = f"live-{cc}" if runs == 1 else f"live-{cc}-{k}"
            live = run_live(text, out_dir=Path(out_dir) / name if out_dir else None, wait_s=wait_s)
            live_runs.append(ranking_numbers(live))
        after = os.getloadavg()
        say(f"{cc}: {sim_runs} simulated run{'s' if sim_runs != 1 else ''}")
        sims = [ranking_numbers(haslab.run(tcphas_home_dumbbell(cc, duration_s, sim_starts(k, sim_start_spread_ns),
                                                                  sim_recovery)))
                for k in range(1, sim_runs + 1)]
        mean, sd = summarize_runs(live_runs)
        sim_mean, sim_sd = summarize_runs(sims)
        nums[cc] = {"live": mean, "live_sd": sd, "live_runs": live_runs, "sim": sim_mean, "sim_sd": sim_sd,
                    "sim_runs": sims, "load": [round(x, 1) for x in before + after]}
        rep = {"duration_s": duration_s, "live_runs": runs, "sim_runs": sim_runs,
               "sim_start_spread_ns": sim_start_spread_ns, "sim_recovery": sim_recovery, "runs": nums,
               "verdicts": ranking_verdicts(nums)}
        if out_dir:
            # the numbers so far, after each algorithm: an interrupted check keeps what it measured
            _atomic_write_bytes(Path(out_dir) / "ranking.json", json.dumps(rep, indent=1).encode())
    return rep
