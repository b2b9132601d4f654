"""TcpHas paper (Ben Ameur, Mory, Cousin), Fig. 3: instability, queuing delay and drop rate
against the number of players, for Westwood+, TIBET, Trickle and TcpHas. The scenario, methods
and settings are shared with Fig. 2 (:mod:`haslab.reproduce.tcphas`).
"""

from __future__ import annotations
import math
from pathlib import Path
from ..sweep import Sweep
from .base import Claim, Context, Experiment, with_readings
from .tcphas import (BOTTLENECK, COLORS, METHODS, READING_NAMES, SETTINGS, _bottleneck_queue, _clip,
                     _steady, _tcphas_reason, method_variants, queue_in_window, scenario,
                     steady_instability)

# ---------------------------------------------------------------------------------------------
# Fig. 3: instability, queuing delay and drop rate vs the number of players


def fig3_form(quick: bool) -> dict:
    """setting -> (player counts, seeds)."""
    if quick:
        return {"K": ([1, 5, 9], 2), "steady": ([1, 5, 9], 1), "estimate": ([1, 5, 9], 1), "ns3": ([1, 5, 9], 2),
                "ns3-westwood": ([1, 5, 9], 2), "westwood-count": ([1, 5, 9], 1), "new-data": ([1, 5, 9], 1)}
    n = list(range(1, 10))
    return {"K": (n, 16), "steady": (n, 4), "estimate": (n, 4), "ns3": (n, 16), "ns3-westwood": (n, 16),
            "westwood-count": (n, 4), "new-data": (n, 4)}


def fig3_build(quick: bool) -> dict:
    out = {}
    for key, (counts, seeds) in fig3_form(quick).items():
        duration, _, _, buffering, stack = SETTINGS[key]
        out[key] = Sweep(
            scenario(8, duration, buffering, stack=stack),
            grid={"preset.clients": counts},
            variants=method_variants(stack, key),
            seeds=seeds,
            traces=True,  # the players' per-second levels, the queue, the per-flow drops
            name=f"tcphas-fig3/{key}",
        )
    return out


def _fig3_window(ctx: Context, key: str):
    """Per-player and per-run rows over the setting's window. In the K settings the instability,
    queuing delay and drops are over the whole run (§IV-D: "during K"); in the steady setting over
    [300, 560) s from the traces (the queuing delay then time-averaged from the queue trace)."""
    import pandas as pd

    duration, start, end, _, _ = SETTINGS[key]
    whole = key != "steady"
    res = ctx[key]
    summary = res.summary()
    players = res.table("players").rename(columns={"preset.clients": "clients"})
    links = res.table("links")
    links = links[links["name"] == BOTTLENECK].rename(columns={"preset.clients": "clients"})
    flows = res.table("flows")
    run_rows, steady = [], []
    for r in summary[summary["status"] == "ok"].itertuples():
        tr = res.trace(r.run_hash, "players")
        start, end = _clip(SETTINGS[key][1], SETTINGS[key][2], r.duration_ns / 1e9)
        lo, hi = (0.0, math.inf) if whole else (start, end)
        per = steady_instability(tr, _steady(r.duration_ns / 1e9) if whole else start, hi)
        win = steady_instability(tr, lo, hi)
        steady += [{"run_hash": r.run_hash, "name": str(n), "steady_instability_pct": v, "window_instability_pct": win.get(n)}
                   for n, v in per.items()]
        link = links[links["run_hash"] == r.run_hash]
        k_s = r.duration_ns / 1e9
        if whole:
            drops = float(link["dropped_packets"].iloc[0]) if len(link) else math.nan
            qd = float(link["sojourn_mean_ns"].iloc[0]) / 1e6 if len(link) else math.nan
            _, empty = queue_in_window(_bottleneck_queue(res, r.run_hash), 0.0, k_s)
            span = k_s
        else:
            g = res.trace(r.run_hash, "goodput")
            f = flows[flows["run_hash"] == r.run_hash].reset_index(drop=True)
            mine = [i for i, src in enumerate(f["src"]) if str(src).startswith("S")]
            t = g["time_ns"] / 1e9
            # the goodput trace's windows end at time_ns: (time - 1 s, time]
            drops = float(g[g["flow"].isin(mine) & (t > start) & (t <= end)]["queue_drops"].sum())
            qd, empty = queue_in_window(_bottleneck_queue(res, r.run_hash), start, end)
            span = end - start
        run_rows.append({"run_hash": r.run_hash, "queue_delay_ms": qd, "queue_empty_pct": 100.0 * empty,
                         "drop_pkt": drops / span * 100.0, "drops_per_s": drops / span})
    players = players.merge(pd.DataFrame(steady), on=["run_hash", "name"], how="left")
    if not whole:
        players["instability_pct"] = players["window_instability_pct"]
    runs = links[["run_hash", "method", "clients", "seed"]].merge(pd.DataFrame(run_rows), on="run_hash")
    return players, runs


def fig3_table(ctx: Context, key: str):
    from ..aggregate import aggregate, unfairness

    players, runs = _fig3_window(ctx, key)
    by = ["method", "clients"]
    import pandas as pd

    players = players.assign(
        level_excess=players["avg_level"] - pd.to_numeric(players["optimal_level"], errors="coerce"),
        bitrate_mbps=players["avg_bitrate_bps"] / 1e6,
    )
    inst = unfairness(players, "instability_pct", by=by)
    inst = inst.merge(unfairness(players, "steady_instability_pct", by=by).drop(columns=["runs", "players"]), on=by)
    diag = aggregate(players, ["level_excess", "infidelity_pct", "bitrate_mbps"], by=by)
    diag = diag[by + ["level_excess_mean", "infidelity_pct_mean", "bitrate_mbps_mean"]]
    q = aggregate(runs, ["queue_delay_ms", "queue_empty_pct", "drop_pkt", "drops_per_s"], by=by)
    table = inst.merge(q, on=by).merge(diag, on=by)
    table["clients"] = table["clients"].astype(int)
    order = {m: i for i, m in enumerate(METHODS)}
    table = table.sort_values(by=["method", "clients"], key=lambda s: s.map(order) if s.name == "method" else s)
    return table.reset_index(drop=True).assign(setting=key)


def fig3_analyze(ctx: Context) -> dict:
    import pandas as pd

    return {"": pd.concat([fig3_table(ctx, k) for k in ctx.results], ignore_index=True)}


def fig3_plot(ctx: Context, tables: dict, path: Path) -> None:
    import matplotlib.pyplot as plt

    t = tables[""]
    t = t[t["setting"] == "K"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    offsets = {m: (i - 1.5) * 0.08 for i, m in enumerate(METHODS)}
    for m in METHODS:
        g = t[t["method"] == m]
        x = g["clients"] + offsets[m]
        y = g["instability_pct_mean"]
        axes[0].errorbar(
            x, y, yerr=[y - g["instability_pct_low"], g["instability_pct_high"] - y],
            label=m, color=COLORS[m], marker="o", ms=3, capsize=2, lw=1,
        )
        for ax, col in ((axes[1], "queue_delay_ms"), (axes[2], "drop_pkt")):
            yy = g[f"{col}_mean"]
            half = g[f"{col}_ci_half"].fillna(0)
            ax.errorbar(x, yy, yerr=half, label=m, color=COLORS[m], marker="o", ms=3, capsize=2, lw=1)
    axes[0].set_title("(a) Instability")
    axes[0].set_ylabel("instability (%)")
    axes[1].set_title("(b) Average queuing delay")
    axes[1].set_ylabel("queuing delay (ms)")
    axes[2].set_title("(c) Packet drop rate")
    axes[2].set_ylabel("DropPkt(K) = drops / K × 100")
    for ax in axes:
        ax.set_xlabel("number of HAS clients")
        ax.set_xticks(sorted(t["clients"].unique()))
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    runs = int(t["runs"].max()) if len(t) else 0
    fig.suptitle(
        f"Fig. 3: QoE and QoS when increasing the number of HAS clients (mean of {runs} run(s); "
        "(a) bars: unfairness among players (min–max); (b, c) bars: 95 % CI over runs)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _spearman(x, y) -> float:
    import pandas as pd

    if len(x) < 3:
        return math.nan
    return float(pd.Series(list(x)).corr(pd.Series(list(y)), method="spearman"))


def _tcphas_diag(t, ns) -> str:
    """A data-backed explanation of TcpHas's queue: at which N it is short, where its players sit."""
    g = t[t["method"] == "TcpHas"].set_index("clients")
    w = t[t["method"] == "Westwood+"].set_index("clients")
    if not len(g) or not len(w):
        return _tcphas_reason()
    short = [n for n in g.index if g.loc[n, "queue_delay_ms_mean"] < 0.5 * w.loc[n, "queue_delay_ms_mean"]]
    full = [n for n in g.index if n not in short]
    text = "Observed: TcpHas's queue is short (< half of Westwood+'s) only at N = " + (
        ", ".join(str(n) for n in short) if short else "none"
    )
    if full:
        text += (
            "; at N = " + ", ".join(str(n) for n in full) + " it is as full as the unshaped methods' ("
            + ", ".join(f"{g.loc[n, 'queue_delay_ms_mean']:.0f}" for n in full) + " ms), the players' mean "
            "level being " + ", ".join(f"{g.loc[n, 'level_excess_mean']:+.2f}" for n in full) + " from the optimal level"
        )
    if "queue_empty_pct_mean" in g.columns:
        text += "; the bottleneck queue is empty " + ", ".join(
            f"{g.loc[n, 'queue_empty_pct_mean']:.0f} %" for n in g.index) + " of the time (N = " + ", ".join(
            str(n) for n in g.index) + "; Westwood+ " + ", ".join(f"{w.loc[n, 'queue_empty_pct_mean']:.0f} %" for n in g.index) + ")"
    return text + (
        ". Two mechanisms (docs/algorithms/tcphas.md): (1) Algorithm 7 sets cwnd = 1.2 × EncodingRate[QLevel] × "
        "RTT̂ on every ACK in congestion avoidance, and Algorithm 4's ssthresh (rate × RTT_min × 1.2) is below "
        "that, so the first ACK after a loss restores the window (unit test "
        "`algorithm_7_restores_cwnd_on_the_first_ack_after_a_fast_retransmit`): a loss does not drain the queue, "
        "which stays standing while the N shaped rates together exceed 8 Mbps in the ON periods (8 × 1.2 × "
        "928 kbps = 8.9 Mbps at the paper's optimal level) — it empties only in the idle moments counted above; "
        "(2) levels lock per player: with Table I's ladder each level is ≥ 1.76 × the one below, above the 1.2 "
        "shaping factor, so a flow shaped at level n cannot produce the ACK rate of level n + 1 and QLevel can "
        "only fall (tcphas-fig2's QLevel note), and the flows that kept a level above the fair share keep it. "
        "We implement the algorithms as written and tune nothing."
    )


def fig3_claims(ctx: Context, tables: dict) -> list[Claim]:
    t = tables[""]
    per = {k: _fig3_claims_for(ctx, t[t["setting"] == k].drop(columns="setting"), k) for k in SETTINGS
           if (t["setting"] == k).any()}
    return with_readings(per["K"], {READING_NAMES[k]: v for k, v in per.items() if k != "K"})


def _fig3_claims_for(ctx: Context, t, key: str) -> list[Claim]:

    def series(m: str, col: str):
        g = t[t["method"] == m].sort_values("clients")
        return [int(n) for n in g["clients"]], g[col].tolist()

    ns, tcphas_inst = series("TcpHas", "instability_pct_mean")
    inst = {m: series(m, "instability_pct_mean")[1] for m in METHODS}
    qd = {m: series(m, "queue_delay_ms_mean")[1] for m in METHODS}
    drop = {m: series(m, "drop_pkt_mean")[1] for m in METHODS}
    spread = {m: series(m, "instability_pct_spread")[1] for m in METHODS}
    nmax = max(ns)
    if key == "K":
        ctx.notes.append("**TcpHas diagnosis** (the reasons above refer to it). " + _tcphas_diag(t, ns))
    why_tcphas = ("See the TcpHas diagnosis below the figure (levels lock per player; Algorithm 7 restores the window "
                  "on the first ACK after a loss, so the queue stays standing).")
    claims = []

    def at(values: dict, i: int) -> str:
        return ", ".join(f"{m} {values[m][i]:.1f}" for m in METHODS)

    worst = max(tcphas_inst)
    steady = series("TcpHas", "steady_instability_pct_mean")[1]
    start = SETTINGS[key][1]
    claims.append(
        Claim(
            "TcpHas yields an instability below 4 % for 1–9 players",
            "Fig. 3a, §IV-D",
            "< 4 % (over the K = 180 s)",
            worst,
            worst < 4,
            ours_text=(f"over [{start:g}, {SETTINGS[key][2]:g}) s, max over N of the mean: {worst:.1f} % (at N = "
                       f"{ns[tcphas_inst.index(worst)]})") if key == "steady" else (
                f"over the whole run, max over N of the mean: {worst:.1f} % (at N = "
                f"{ns[tcphas_inst.index(worst)]}); over the steady state (from {start:g} s): max {max(steady):.1f} % "
                f"(at N = {ns[steady.index(max(steady))]})"),
            reason="" if worst < 4 else (
                "the first minute holds the convergence: TcpHas's B̂we starts at the top bitrate (§IV-B) and "
                "comes down while the players climb from level 0, so the whole-run instability counts those "
                "changes; the paper does not say whether its K seconds include them "
                f"(docs/algorithms/tcphas.md). Over the steady state TcpHas's instability is {max(steady):.1f} % "
                + ("at worst, within the paper's bound" if max(steady) < 4 else "at worst, still above the bound: "
                   "at some N the players' levels do not settle (TcpHas diagnosis below)")
            ),
        )
    )
    not_lowest = [i for i in range(len(ns)) if inst["TcpHas"][i] > min(inst[m][i] for m in METHODS)]
    claims.append(
        Claim(
            "TcpHas has the lowest instability of the four methods",
            "Fig. 3a, §IV-D",
            f"lowest at all {len(ns)} player counts",
            len(ns) - len(not_lowest),
            not not_lowest,
            ours_text=f"lowest at {len(ns) - len(not_lowest)} of {len(ns)} player counts",
            reason="" if not not_lowest else "not lowest at "
            + "; ".join(f"N = {ns[i]} ({at(inst, i)} %)" for i in not_lowest[:3])
            + (" …" if len(not_lowest) > 3 else "") + ". " + why_tcphas,
        )
    )
    sp = max(spread["TcpHas"])
    claims.append(
        Claim(
            "TcpHas's instability unfairness between players is negligible",
            "Fig. 3a, §IV-D",
            "negligible (we read: min–max spread ≤ 4 points)",
            sp,
            sp <= 4,
            ours_text=f"largest run-averaged min–max spread across players: {sp:.1f} points "
            f"(Westwood+ {max(spread['Westwood+']):.1f})",
            reason="" if sp <= 4 else "as unfair as Westwood+: " + why_tcphas,
        )
    )
    rho = {m: _spearman(ns, inst[m]) for m in ("Westwood+", "TIBET")}
    greater = [i for i in range(len(ns)) if not all(inst[m][i] > 2 * inst["TcpHas"][i] for m in ("Westwood+", "TIBET"))]
    rising = all(r > 0.5 for r in rho.values())
    steady_inst = {m: series(m, "steady_instability_pct_mean")[1] for m in METHODS}
    # Why a player count fails the "more than twice TcpHas's" test, from the measured instability:
    # TcpHas itself above the paper's own bound for it (4 %, the first claim), which the TcpHas
    # diagnosis explains; or the players of TcpHas and of the method that is not above twice it do
    # not change level once the start-up is over (steady-state instability 0 %), so the whole-run
    # values compare the start-up climbs from level 0 (one player: nothing competes); or they hold
    # one level after the start-up, fewer than one change per player per 100 s (steady-state instability
    # below 1 %): with the paper's ladder the per-player share 8/N Mbit/s can sit inside one step
    # (N = 3, 4: about 1.9-2.5 Mbit/s, between level 3's 1.632 and level 4's 4.256), where no
    # estimate reaches another level (measured at N = 4, seeds 1-4: 100 % of player-seconds in
    # [60, 180) s at level 3 for Westwood+, TIBET and TcpHas; estimates 1.84-2.07 Mbit/s from
    # the 10th to the 90th percentile), so again the whole-run values compare start-up climbs.
    # Any other failing N is left unexplained.
    # The steady-state conditions are checked on TcpHas and on the method(s) that are not above
    # twice it at that N: a method that passes the test there does not make it fail.
    def compared(i: int) -> tuple[str, ...]:
        return ("TcpHas",) + tuple(m for m in ("Westwood+", "TIBET") if not inst[m][i] > 2 * inst["TcpHas"][i])

    tcphas_unstable = [i for i in greater if inst["TcpHas"][i] >= 4]
    startup_only = [i for i in greater if i not in tcphas_unstable
                    and all(steady_inst[m][i] == 0 for m in compared(i))]
    one_step = [i for i in greater if i not in tcphas_unstable and i not in startup_only
                and all(steady_inst[m][i] < 1 for m in compared(i))]
    other = [i for i in greater if i not in tcphas_unstable and i not in startup_only and i not in one_step]

    def _at_n(idx: list[int], what: str) -> str:
        return f"N = {', '.join(str(ns[i]) for i in idx)} ({what}: " + "; ".join(
            f"N = {ns[i]}: Westwood+ {inst['Westwood+'][i]:.1f}, TIBET {inst['TIBET'][i]:.1f}, TcpHas "
            f"{inst['TcpHas'][i]:.1f} %" for i in idx) + ")"

    causes = []
    if tcphas_unstable:
        causes.append(_at_n(tcphas_unstable, "TcpHas itself is above its 4 % bound there; see the TcpHas "
                            "diagnosis below the figure"))
    if startup_only:
        causes.append(_at_n(startup_only, "no player of TcpHas or of the method not above twice it changes level "
                            "after the start-up — steady-state instability 0 % for " + "; ".join(
                                f"{' and '.join(compared(i))} at N = {ns[i]}" for i in startup_only)
                            + " — so the whole-run values compare the climbs from level 0"))
    if one_step:
        causes.append(_at_n(one_step, "the players of TcpHas and of the method not above twice it hold their level "
                            "after the start-up — steady-state instability below 1 % (" + "; ".join(
                                f"N = {ns[i]}: " + ", ".join(f"{m} {steady_inst[m][i]:.2f}" for m in compared(i))
                                + " %" for i in one_step) + ") — because the per-player share falls inside one "
                            "step of the ladder (between 1.632 and 4.256 Mbit/s at N = 3, 4), so the whole-run "
                            "values compare the start-up climbs"))
    if other:
        causes.append(_at_n(other, "TcpHas is within its 4 % bound and Westwood+ or TIBET is not much above "
                            "it: not traced"))
    claims.append(
        Claim(
            "Instability of Westwood+ and TIBET is much greater (than TcpHas's) and increases with the number of players",
            "Fig. 3a, §IV-D",
            "increasing in N; much greater than TcpHas",
            min(rho.values()),
            rising and not greater,
            ours_text="Spearman ρ(N, instability): "
            + ", ".join(f"{m} {r:.2f}" for m, r in rho.items())
            + f"; > 2× TcpHas at {len(ns) - len(greater)} of {len(ns)} N",
            reason="" if rising and not greater else (
                ("rises with N as claimed, but " if rising else "does not rise with N (ρ ≤ 0.5), and ")
                + ("is not more than twice TcpHas's at " + "; at ".join(causes) if greater else "")
            ),
            verdict="" if rising and not greater else ("model" if rising and not other else "unexplained"),
        )
    )
    instability_vs_n = claims[-1]
    rq = {m: _spearman(ns, qd[m]) for m in METHODS}
    ok = all(r > 0.5 for r in rq.values())
    claims.append(
        Claim(
            "The queuing delay of the four methods increases with the number of players",
            "Fig. 3b, §IV-D",
            "increasing in N",
            min(rq.values()),
            ok,
            ours_text="Spearman ρ(N, delay): " + ", ".join(f"{m} {r:.2f}" for m, r in rq.items()),
            reason="" if ok else "not monotone for "
            + ", ".join(m for m, r in rq.items() if not r > 0.5)
            + ": with few players a shaped method's queue depends on which level the players settle on",
        )
    )
    bad = [i for i in range(len(ns)) if max(qd["TcpHas"][i], qd["Trickle"][i]) >= min(qd["Westwood+"][i], qd["TIBET"][i])]
    claims.append(
        Claim(
            "TcpHas and Trickle show a lower queuing delay than Westwood+ and TIBET",
            "Fig. 3b, §IV-D",
            f"lower at all {len(ns)} player counts",
            len(ns) - len(bad),
            not bad,
            ours_text=f"both lower at {len(ns) - len(bad)} of {len(ns)} player counts",
            reason="" if not bad else "not at "
            + "; ".join(f"N = {ns[i]} ({at(qd, i)} ms)" for i in bad[:3]) + (" …" if len(bad) > 3 else "")
            + ". " + why_tcphas,
        )
    )
    ratio = [qd["TcpHas"][i] / ((qd["Westwood+"][i] + qd["TIBET"][i]) / 2) for i in range(len(ns)) if ns[i] >= 2]
    r = sum(ratio) / len(ratio) if ratio else math.nan
    ok = 0.35 <= r <= 0.65
    claims.append(
        Claim(
            "TcpHas has roughly half of the queuing delay of Westwood+ and TIBET",
            "Fig. 3b, §IV-D",
            "≈ 0.5× (we accept 0.35–0.65)",
            r,
            ok,
            ours_text=f"TcpHas / mean(Westwood+, TIBET), averaged over N ≥ 2: {r:.2f}",
            reason="" if ok else ("TcpHas's queue is emptier than the paper's" if r < 0.35 else why_tcphas),
        )
    )
    claims.append(
        Claim(
            "TcpHas's queuing delay stays below 25 ms even for 9 players",
            "Fig. 3b, §IV-D",
            "≤ 25 ms",
            max(qd["TcpHas"]),
            max(qd["TcpHas"]) <= 25,
            ours_text=f"max over N {max(qd['TcpHas']):.1f} ms; at N = {nmax}: {qd['TcpHas'][-1]:.1f} ms",
            reason="" if max(qd["TcpHas"]) <= 25 else why_tcphas,
        )
    )
    t9 = qd["Trickle"][-1]
    ok = 35 <= t9 <= 65
    claims.append(
        Claim(
            "Trickle's queuing delay rises to about 50 ms (at 9 players)",
            "Fig. 3b, §IV-D",
            "≈ 50 ms (we accept 35–65)",
            t9,
            ok,
            ours_text=f"{t9:.1f} ms at N = {nmax}",
            reason="" if ok else (
                "the one-BDP queue (100 kB at 8 Mbps) holds at most 100 ms; our Trickle keeps it "
                + ("emptier" if t9 < 35 else "fuller") + " than the paper's (docs/algorithms/trickle.md)"
            ),
        )
    )
    below = [i for i in range(len(ns)) if qd["TcpHas"][i] < qd["Trickle"][i]]
    ok = len(below) >= len(ns) - 1
    claims.append(
        Claim(
            "TcpHas reduces the queuing delay more than Trickle",
            "Fig. 3b, §IV-D",
            f"lower at all {len(ns)} player counts",
            len(below),
            ok,
            ours_text=f"TcpHas below Trickle at {len(below)} of {len(ns)} player counts "
            f"(at N = {nmax}: TcpHas {qd['TcpHas'][-1]:.1f} ms, Trickle {t9:.1f} ms)",
            reason="" if ok else why_tcphas,
        )
    )
    low = [i for i in range(len(ns)) if drop["TcpHas"][i] <= min(drop["Westwood+"][i], drop["TIBET"][i])]
    ok = len(low) == len(ns)
    claims.append(
        Claim(
            "TcpHas has a very low packet drop rate at the bottleneck (below Westwood+ and TIBET)",
            "Fig. 3c, §IV-D",
            f"lower at all {len(ns)} player counts",
            len(low),
            ok,
            ours_text=f"at or below both at {len(low)} of {len(ns)} player counts; at N = {nmax}: "
            + at(drop, len(ns) - 1),
            reason="" if ok else why_tcphas,
        )
    )
    tot = {m: sum(drop[m]) for m in METHODS}
    closer = abs(tot["Trickle"] - tot["TcpHas"]) < min(abs(tot["Trickle"] - tot["Westwood+"]), abs(tot["Trickle"] - tot["TIBET"]))
    claims.append(
        Claim(
            "The packet drop rate of Trickle is quite similar to that of TcpHas",
            "Fig. 3c, §IV-D",
            "Trickle ≈ TcpHas (closer to it than to Westwood+ or TIBET)",
            tot["Trickle"] / tot["TcpHas"] if tot["TcpHas"] else math.nan,
            closer,
            ours_text="Trickle / TcpHas; DropPkt summed over N: " + ", ".join(f"{m} {v:.0f}" for m, v in tot.items()),
            reason="" if closer else (
                "our Trickle drops far fewer packets than our TcpHas. " + why_tcphas
                if tot["Trickle"] < tot["TcpHas"] else "our Trickle drops as many packets as the unshaped methods"
            ),
        )
    )
    for c in claims:
        if isinstance(c.ours, float) and math.isnan(c.ours):
            c.ours = -1.0
            c.ours_text += " (not computable: too few player counts)"
        if c is instability_vs_n:  # its verdict is decided per player count above
            continue
        if not c.holds and ("TcpHas diagnosis" in c.reason or "convergence" in c.reason):
            c.verdict = "model"
    return claims


FIG3 = Experiment(
    name="tcphas-fig3",
    paper="tcphas",
    label="Fig. 3",
    title="instability, queuing delay and drop rate vs number of players",
    build=fig3_build,
    analyze=fig3_analyze,
    plot=fig3_plot,
    claims=fig3_claims,
    forms=(
        "N = 1, 5, 9: K = 180 s × 2 seeds, 600 s steady × 1, estimate reading × 1, ns-3.17 sender × 2, "
        "the same with TcpWestwood's recovery × 2, two estimator readings × 1 (120 runs; 108 distinct, Westwood+ "
        "has no TIBET estimator and is TcpWestwood on the ns-3.17 sender in both)",
        "N = 1…9: K = 180 s × 16 seeds, 600 s steady × 4, estimate reading × 4, ns-3.17 sender × 16, "
        "the same with TcpWestwood's recovery × 16, two estimator readings × 4 (2304 runs; 2088 distinct)",
    ),
    notes=(
        "Instability: the TcpHas paper's metric (docs/has.md, reconstructed: share of seconds whose "
        "requested level differs from the previous second's) over the window, mean over players and "
        "runs (the CSV also has it from 60 s, as tests/paper_checks.rs); error bars "
        "in (a) are the paper's \"unfairness\": the run-averaged lowest and highest player "
        "(`haslab.aggregate.unfairness`). Queuing delay: mean sojourn in the DSLAM→HG queue. Drop "
        "rate: §IV-D's DropPkt(K) = dropped packets at the bottleneck during K s / K × 100 (the CSV "
        "also has drops per second). Each claim is checked in seven settings (the CSV's `setting` column): "
        "`K`, the paper's K = 180 s with RBB's buffering state asking for the lowest level (the default "
        "reading, docs/has.md); `steady`, 600 s runs measured over [300, 560) s (instability and drops from the "
        "traces, the queuing delay time-averaged from the bottleneck's queue trace); `estimate`, K = 180 s with "
        "RBB's other buffering reading; `ns3`, K = 180 s on the ns-3.17 sender the paper simulated with "
        "(transport `ns3.17-tcp`, Westwood+ as ns-3.17's TcpWestwood on `ns3.17-westwood`; haslab's default sender "
        "is Linux-like); `ns3-westwood`, the same with TIBET, Trickle and TcpHas on ns-3.17's TcpWestwood fast "
        "recovery too (Algorithm 1's cwnd = min(cwnd, ssthresh) on the third duplicate ACK; the first new ACK "
        "ends it); and two readings of which ACKs TIBET's "
        "estimator samples (TIBET, Trickle, TcpHas; K = 180 s; by default every received ACK, Algorithm 2): "
        "`westwood-count`, counted as ns-3.17's TcpWestwood::CountAck, and `new-data`, only ACKs of new data. "
        "The figure shows `K`. The quick form runs N = 1, 5, 9 only; its "
        "claims are indicative."
    ),
)

EXPERIMENTS = [FIG3]
