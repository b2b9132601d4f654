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
  queue: the simulated value lies in the 95 % prediction interval of one more live run, from
  the live runs themselves (mean ± t(0.975, n-1) · sd · sqrt(1 + 1/n), Student's t). The
  tolerance is the live runs' own spread, measured each time, not a bound chosen once: two live
  runs of one scenario on this machine can differ by a factor of two in switch counts
  (docs/live.md). With one run there is no spread, and the agreement is not judged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

#: the algorithms of the ranking check, in the order they run
RANKING_CCS = ("cubic", "westwood+", "tcphas")


def tcphas_home_dumbbell(cc: str, duration_s: int) -> str:
    """The tcphas-home preset's setting on a dumbbell: 8 RBB players (video "tcphas"), 8 Mbit/s,
    100 ms RTT, a one-BDP drop-tail queue (100 kB), the players' congestion control ``cc``."""
    return f"""
seed = 1
duration = "{duration_s}s"
[dumbbell]
pairs = 8
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "100000B"
access_rate = "100Mbps"
access_delay = "5ms"
[defaults]
cc = "{cc}"
tcp = {{ sack = true }}
[[player]]
name = "p{{i}}"
count = 8
client = "right{{i}}"
server = "left{{i}}"
abr = "rbb"
video = "tcphas"
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
    import statistics

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


def ranking_verdicts(nums: dict) -> list[dict]:
    """The comparisons of the ranking check on numbers from :func:`ranking`: per algorithm,
    "live" (the mean over the live runs), "live_runs" (each run's numbers) and "sim". A
    comparison that cannot be judged (one live run) has ``holds`` None."""
    out = []
    for mode in ("live", "sim"):
        t, w = nums["tcphas"][mode], nums["westwood+"][mode]
        what = "mean over the live runs" if mode == "live" else "simulated"
        out.append({"claim": f"{mode}: TcpHas players switch less than Westwood+ players ({what})",
                    "holds": t["switches"] < w["switches"],
                    "numbers": f"{t['switches']:.2f} vs {w['switches']:.2f}"})
    for cc, n in nums.items():
        runs, sm = n["live_runs"], n["sim"]
        for key, name, fmt in AGREEMENT:
            values = [r[key] for r in runs]
            claim = f"{cc}: simulated {name} within the 95 % prediction interval of a live run"
            if len(values) < 2:
                out.append({"claim": claim, "holds": None,
                            "numbers": f"sim {fmt.format(sm[key])}, one live run {fmt.format(values[0])}: "
                                       "no spread to judge by (--runs 2 or more)"})
                continue
            lo, hi = prediction_interval(values)
            out.append({"claim": claim, "holds": lo <= sm[key] <= hi,
                        "numbers": f"sim {fmt.format(sm[key])}; live {len(values)} runs "
                                   f"{', '.join(fmt.format(v) for v in values)}, interval "
                                   f"{fmt.format(lo)} to {fmt.format(hi)}"})
    return out


def ranking(duration_s: int = 180, out_dir: Optional[os.PathLike] = None,
            say: Callable[[str], None] = lambda m: None, wait_s: Optional[float] = None,
            runs: int = 3) -> dict:
    """Runs the ranking check: per algorithm, ``runs`` live runs (one after the other) and one
    simulated run. Returns {"duration_s", "live_runs": runs, "runs": {cc: {"live": mean numbers,
    "live_sd": their standard deviations, "live_runs": each run's numbers, "sim": numbers,
    "load": [1/5/15-min load before the first live run, after the last]}}, "verdicts": [...]}.
    The live results go to OUT/live-CC (one run) or OUT/live-CC-K (K = 1..runs)."""
    import haslab

    from .run import run_live

    if runs < 1:
        raise ValueError(f"runs: {runs} is not accepted; give 1 or more live runs per algorithm")
    nums: dict = {}
    for cc in RANKING_CCS:
        text = tcphas_home_dumbbell(cc, duration_s)
        before = os.getloadavg()
        live_runs = []
        for k in range(1, runs + 1):
            say(f"{cc}: live run {k} of {runs}, {duration_s} s")
            name = f"live-{cc}" if runs == 1 else f"live-{cc}-{k}"
            live = run_live(text, out_dir=Path(out_dir) / name if out_dir else None, wait_s=wait_s)
            live_runs.append(ranking_numbers(live))
        say(f"{cc}: simulated")
        sim = haslab.run(text)
        mean, sd = summarize_runs(live_runs)
        nums[cc] = {"live": mean, "live_sd": sd, "live_runs": live_runs, "sim": ranking_numbers(sim),
                    "load": [round(x, 1) for x in before + os.getloadavg()]}
    return {"duration_s": duration_s, "live_runs": runs, "runs": nums, "verdicts": ranking_verdicts(nums)}
