"""Live mode on the real kernel (docs/live.md).

The tests that build the testbed need root, iproute2, iptables, the delay box, and for the BPF
algorithms clang, bpftool and kernel BTF; they skip when something is missing, unless
HASLAB_REQUIRE_LIVE=1 (CI), where a missing piece is a failure. The scenario checks at the top
need nothing.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time

import pytest

import haslab
from haslab.live import LiveUnsupported, from_plan

from conftest import cli

REQUIRE = os.environ.get("HASLAB_REQUIRE_LIVE") == "1"

MBPS = 1_000_000
#: payload per 1500-byte IP packet with timestamps: the most goodput a rate allows
PAYLOAD_SHARE = 1448 / 1500


def dumbbell(pairs=1, duration="10s", cc="newreno", extra_flow="", tcp='{ sack = true }', rate="8Mbps",
             delay="40ms", queue="67pkts", flows=None) -> str:
    flow = flows if flows is not None else f"""
[[flow]]
name = "f{{i}}"
count = {pairs}
src = "left{{i}}"
dst = "right{{i}}"
app = "bulk"
{extra_flow}
"""
    return f"""
seed = 3
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "{delay}"
bottleneck_queue = "{queue}"
access_delay = "5ms"
[defaults]
cc = "{cc}"
tcp = {tcp}
{flow}
[trace]
queues = ["r1->r2"]
"""


def jain(xs) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


# ---------------------------------------------------------------------------------------------
# scenario → live configuration (no root needed)


def test_dumbbell_is_translated_with_the_whole_path_delay():
    cfg = from_plan(haslab.validate(dumbbell(pairs=2)))
    assert cfg.pairs == 2
    # one way: 40 ms bottleneck + 2 × 5 ms access
    assert cfg.forward.delay_ns == 50_000_000 and cfg.reverse.delay_ns == 50_000_000
    assert cfg.forward.rate_bps == 8 * MBPS and cfg.forward.queue_packets == 67
    assert [f.kernel_cc for f in cfg.flows] == ["reno", "reno"]
    assert cfg.hosts["left0"].sysctls["net.ipv4.tcp_sack"] == "1"
    assert cfg.hosts["left0"].route["initcwnd"] == "10"


def test_loss_of_the_path_combines_the_links():
    text = dumbbell().replace('access_delay = "5ms"', 'access_delay = "5ms"\nbottleneck_loss = "1%"\naccess_loss = "1%"')
    cfg = from_plan(haslab.validate(text))
    assert cfg.forward.loss == pytest.approx(1 - 0.99**3)


@pytest.mark.parametrize(
    "text, words",
    [
        (dumbbell(cc="yeah"), "no live counterpart"),
        (dumbbell(cc="trickle"), "no live counterpart"),
        (dumbbell(tcp='{ delayed_ack = "off" }'), "tcp.delayed_ack"),
        (dumbbell(tcp='{ pacing = "cwnd-per-rtt" }'), "tcp.pacing"),
        (dumbbell(tcp='{ idle_restart = "newcwv" }', cc="cubic"), "newcwv"),
        (dumbbell(tcp='{ rto_formula = "rfc6298" }'), "rto_formula"),
        (dumbbell().replace('cc = "newreno"', 'cc = { algorithm = "tcphas", psi = 0.5 }'), "defaults"),
        (
            """
duration = "5s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate = "8Mbps"
[[flow]]
src = "a"
dst = "b"
app = "bulk"
""",
            "dumbbell",
        ),
    ],
)
def test_unsupported_scenarios_are_rejected_with_the_reason(text, words):
    with pytest.raises(LiveUnsupported, match=words):
        from_plan(haslab.validate(text))


def test_newcwv_maps_to_the_bpf_algorithm_without_restart_after_idle():
    cfg = from_plan(haslab.validate(dumbbell(tcp='{ idle_restart = "newcwv" }')))
    assert cfg.flows[0].kernel_cc == "haslab_newcwv"
    assert cfg.hosts["left0"].sysctls["net.ipv4.tcp_slow_start_after_idle"] == "0"
    assert cfg.bpf_ccs == ["haslab_newcwv"]


def players_scenario(pairs=2, duration="30s", cc="newreno", rate="8Mbps", queue="100KB", abr="rbb",
                     extra="") -> str:
    return f"""
seed = 5
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "40ms"
bottleneck_queue = "{queue}"
access_delay = "5ms"
[defaults]
cc = "{cc}"
tcp = {{ sack = true }}
[[player]]
name = "p{{i}}"
count = {pairs}
client = "right{{i}}"
server = "left{{i}}"
abr = "{abr}"
video = "tcphas"
{extra}
[trace]
queues = ["r1->r2"]
"""


def test_players_are_translated_with_their_congestion_control():
    cfg = from_plan(haslab.validate(players_scenario(cc="tcphas")))
    assert [p.name for p in cfg.players] == ["p0", "p1"]
    assert {p.kernel_cc for p in cfg.players} == {"haslab_tcphas"}
    assert len({p.port for p in cfg.players}) == 2, "one listener per player"
    assert cfg.players[0].path == ("r1->r2", 8 * MBPS)
    assert cfg.bpf_ccs == ["haslab_tcphas"]
    assert cfg.hosts["left0"].sysctls["net.ipv4.tcp_sack"] == "1"
    per = from_plan(haslab.validate(players_scenario(extra='connection = "per-request"')))
    assert per.players[0].connection["kind"] == "per-request"


def test_the_tcphas_home_preset_is_reduced_to_its_bottleneck():
    """The preset's players (a player template in its slots) all cross DSLAM->HG: live mode runs
    them on a dumbbell with that bottleneck and the paths' delay; the PPBP cross-traffic, which
    never crosses it, is left out with a note."""
    plan = haslab.validate('duration = "10s"\n[preset]\nname = "tcphas-home"\nclients = 8\n'
                           'player = { abr = "rbb", video = "tcphas" }\n[trace]\nqueues = ["DSLAM->HG"]\n')
    cfg = from_plan(plan)
    assert cfg.pairs == 8
    assert (cfg.forward.rate_bps, cfg.forward.delay_ns, cfg.forward.queue_bytes) == (8 * MBPS, 50_000_000, 100_000)
    assert cfg.reverse.delay_ns == 50_000_000
    assert [(p.server, p.client) for p in cfg.players[:2]] == [("left0", "right0"), ("left1", "right1")]
    assert cfg.plan["trace"]["queues"] == ["r1->r2"]
    assert any("ppbp" in n and "left out" in n for n in cfg.notes)
    # a preset whose players cross different bottlenecks cannot be reduced
    bad = dict(plan)
    bad["players"] = [dict(p) for p in plan["players"]]
    bad["preset"] = dict(plan["preset"], player_slots=[dict(s_, path=dict(s_["path"])) for s_ in plan["preset"]["player_slots"]])
    bad["preset"]["player_slots"][0]["path"]["bottleneck"] = "IR->BNG"
    with pytest.raises(LiveUnsupported, match="different bottlenecks"):
        from_plan(bad)


def test_unsupported_player_scenarios_name_the_field(tmp_path):
    from pathlib import Path

    two = players_scenario().replace('queues = ["r1->r2"]', 'queues = ["r1->r2"]\n[[traffic]]\nname = "x"\n'
                                     'kind = "cbr"\nsrc = "left0"\ndst = "right0"\nrate = "1Mbps"')
    with pytest.raises(LiveUnsupported, match="traffic"):
        from_plan(haslab.validate(two))
    with pytest.raises(LiveUnsupported, match="player p0: cc 'yeah'"):
        from_plan(haslab.validate(players_scenario(cc="yeah")))
    scen = tmp_path / "p.toml"
    scen.write_text(players_scenario(cc="yeah"))
    r = cli("live", "run", scen, "-o", tmp_path / "o")
    assert r.returncode == 1
    assert "player p0: cc 'yeah'" in r.stderr
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------------
# on the real kernel


def _need(bpf: bool = False):
    from haslab.live.run import missing_requirements

    missing = missing_requirements(bpf=bpf)
    if missing:
        if REQUIRE:
            pytest.fail("HASLAB_REQUIRE_LIVE=1 but live mode lacks: " + "; ".join(missing))
        pytest.skip("live mode needs: " + "; ".join(missing))


@pytest.fixture
def live():
    _need()
    from haslab.live import netns

    yield
    netns.cleanup()


@pytest.fixture
def live_bpf():
    _need(bpf=True)
    from haslab.live import netns

    yield
    netns.cleanup()


def test_testbed_rate_rtt_and_clean_teardown(live, tmp_path):
    """One testbed: the RTT of UDP probes and the goodput of one flow are within 5 % of the scenario's
    (100 ms; 8 Mbit/s of IP packets), a rate change shows in the goodput, and down leaves nothing."""
    from haslab.live import netns
    from haslab.live.run import run_live
    from haslab.live.testbed import Testbed

    cfg = from_plan(haslab.validate(dumbbell(duration="14s")))
    with Testbed(cfg) as tb:
        rtts = tb.measure_rtt(count=30, interval_s=0.03)
        assert len(rtts) == 30
        assert statistics.median(rtts) == pytest.approx(100e6, rel=0.05)
        assert netns.our_namespaces(), "the namespaces exist while the testbed is up"
    assert netns.leftovers() == []
    assert tb.delaybox_stats["fwd"]["lateness_ns"]["samples"] > 0

    # 8 Mbit/s for 7 s, then 4 Mbit/s
    r = run_live(dumbbell(duration="14s"), out_dir=tmp_path, rate_steps=[(7_000_000_000, 4 * MBPS)])
    g = r.goodput
    first = g[(g.time_ns > 2_000_000_000) & (g.time_ns <= 7_000_000_000)].goodput_bps.mean()
    second = g[g.time_ns > 9_000_000_000].goodput_bps.mean()
    assert first == pytest.approx(8 * MBPS * PAYLOAD_SHARE, rel=0.05)
    assert second == pytest.approx(4 * MBPS * PAYLOAD_SHARE, rel=0.05)
    assert (tmp_path / "summary.json").exists() and (tmp_path / "cwnd.parquet").exists()
    link = r.link("r1->r2")
    assert link["delay_box"]["lateness_ns"]["p50"] < 5_000_000
    assert r.summary["live"]["rate_changes"][0]["rate_bps"] == 4 * MBPS
    assert netns.leftovers() == []


def test_four_reno_flows_share_the_bottleneck_fairly(live):
    from haslab.live import netns
    from haslab.live.run import run_live

    r = run_live(dumbbell(pairs=4, duration="25s"))
    flows = r.summary["flows"]
    assert [f["kernel_cc"] for f in flows] == ["reno"] * 4
    goodputs = [f["goodput_bps"] for f in flows]
    total = sum(goodputs)
    assert total == pytest.approx(8 * MBPS * PAYLOAD_SHARE, rel=0.08), goodputs
    assert jain(goodputs) >= 0.9, goodputs
    # drop-tail: the queue overflowed at times, and tc counted it
    assert r.link("r1->r2")["dropped_packets"] > 0
    assert sum(f["retransmitted_segments"] for f in flows) > 0
    assert netns.leftovers() == []


def test_tcphas_with_a_ladder_shapes_to_its_level(live_bpf):
    """The TcpHas paper's ladder (Table I) on an 8 Mbit/s bottleneck: the estimate stays above the
    top level (4256 kbps), so TcpHas shapes to 1.2 × 4256 kbps = 5.1 Mbit/s, well under the
    bottleneck, and the queue stays empty; without the ladder the same algorithm fills the link."""
    from haslab.live import netns
    from haslab.live.run import run_live

    ladder = [248_000, 456_000, 928_000, 1_632_000, 4_256_000]
    r = run_live(dumbbell(duration="12s", cc="tcphas"), ladder_bps=ladder)
    f = r.summary["flows"][0]
    assert f["kernel_cc"] == "haslab_tcphas"
    st = f["bpf_stats"]
    assert st["qlevel"] == 4 and st["shaping_bps"] == 4_256_000 * 6 // 5
    g = r.goodput
    steady = g[g.time_ns > 3_000_000_000].goodput_bps.mean()
    assert steady == pytest.approx(1.2 * 4_256_000, rel=0.08)
    assert r.link("r1->r2")["dropped_packets"] == 0
    assert netns.our_struct_ops() == [], "unregistered after the run"

    plain = run_live(dumbbell(duration="8s", cc="tcphas"))
    g = plain.goodput
    assert g[g.time_ns > 3_000_000_000].goodput_bps.mean() > 7 * MBPS * PAYLOAD_SHARE
    assert netns.leftovers() == []


def test_bpf_algorithms_run_a_flow_each(live_bpf):
    """Westwood+, TIBET and newCWV (BPF) carry a flow each through the bottleneck at close to its rate."""
    from haslab.live.run import run_live

    flows = """
[[flow]]
name = "ww"
src = "left0"
dst = "right0"
app = "bulk"
cc = "westwood+"
[[flow]]
name = "tibet"
src = "left1"
dst = "right1"
app = "bulk"
cc = "tibet"
[[flow]]
name = "cwv"
src = "left2"
dst = "right2"
app = "bulk"
tcp = { idle_restart = "newcwv", sack = true }
"""
    r = run_live(dumbbell(pairs=3, duration="12s", flows=flows))
    got = {f["name"]: f for f in r.summary["flows"]}
    assert [got[n]["kernel_cc"] for n in ("ww", "tibet", "cwv")] == ["haslab_westwood", "haslab_tibet", "haslab_newcwv"]
    total = sum(f["goodput_bps"] for f in got.values())
    assert total == pytest.approx(8 * MBPS * PAYLOAD_SHARE, rel=0.1)
    assert all(f["goodput_bps"] > 0.5 * MBPS for f in got.values()), {n: f["goodput_bps"] for n, f in got.items()}


def test_kill_9_in_a_run_then_up_repairs(live, tmp_path):
    from haslab.live import netns

    scen = tmp_path / "s.toml"
    scen.write_text(dumbbell(pairs=2, duration="30s"))
    p = subprocess.Popen([sys.executable, "-m", "haslab", "live", "run", str(scen), "-o", str(tmp_path / "o"), "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(netns.ns_pids(n) for n in netns.our_namespaces() if "left" in n):
        time.sleep(0.2)
    assert p.poll() is None, p.stderr.read() if p.stderr else ""
    time.sleep(2)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert netns.our_namespaces(), "the killed run left its namespaces behind"
    left_pids = [pid for n in netns.our_namespaces() for pid in netns.ns_pids(n)]
    assert left_pids, "and its processes"

    up = cli("live", "up", scen)
    assert up.returncode == 0, up.stderr
    for pid in left_pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"
    from haslab.live.testbed import Testbed

    tb = Testbed(from_plan(haslab.validate(scen)))
    rtts = tb.measure_rtt(count=10, interval_s=0.02)
    assert statistics.median(rtts) == pytest.approx(100e6, rel=0.05)
    st = cli("live", "status")
    assert netns.ns_name("r1") in st.stdout
    down = cli("live", "down")
    assert down.returncode == 0, down.stderr
    assert netns.leftovers() == []


def test_sigterm_cleans_up(live, tmp_path):
    from haslab.live import netns

    scen = tmp_path / "s.toml"
    scen.write_text(dumbbell(duration="30s"))
    p = subprocess.Popen([sys.executable, "-m", "haslab", "live", "run", str(scen), "-o", str(tmp_path / "o"), "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(netns.ns_pids(n) for n in netns.our_namespaces() if "left" in n):
        time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 1
    assert "interrupted" in p.stderr.read()
    assert netns.leftovers() == []


# ---------------------------------------------------------------------------------------------
# HAS players, the origin, dash.js (issue 8, second half)

TWO_POLICIES = """
seed = 5
duration = "DUR"
[dumbbell]
pairs = 2
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "100KB"
access_delay = "5ms"
[defaults]
cc = "newreno"
tcp = { sack = true }
[[player]]
name = "keep"
client = "right0"
server = "left0"
abr = "rbb"
video = "tcphas"
[[player]]
name = "fresh"
client = "right1"
server = "left1"
abr = "panda"
video = "tcphas"
connection = "per-request"
start = "1s"
[trace]
queues = ["r1->r2"]
"""


def test_players_stream_over_real_http_with_the_simulators_tables(live, tmp_path):
    """Two of our players (RBB on one persistent connection, PANDA with a connection per request)
    stream from the origin through the bottleneck: every segment arrives with the video model's
    size, the origin logs each request, the tables have the simulator's columns, the router's
    pcap and the per-connection cwnd samples are written."""
    import json
    from pathlib import Path

    from haslab.live.run import run_live

    scen = tmp_path / "p.toml"
    scen.write_text(TWO_POLICIES.replace("DUR", "30s"))
    out = tmp_path / "o"
    res = run_live(scen, out_dir=out)
    s = res.summary
    players = {p["name"]: p for p in s["players"]}
    assert set(players) == {"keep", "fresh"}
    live = s["live"]["players"]
    assert live["bytes_mismatch"] == 0, live
    for p in players.values():
        # 30 s at 4 Mbit/s of fair share: well over 10 segments of 2 s each
        assert p["segments"] >= 10, p
        assert p["media_bytes"] > 0
    assert players["keep"]["connections"] == 1
    # one connection per request (a request still in flight at the end has one too)
    assert players["fresh"]["segments"] <= players["fresh"]["connections"] <= players["fresh"]["segments"] + 1
    sim = haslab.run(TWO_POLICIES.replace("DUR", "4s"))
    assert list(res.segments.columns) == list(sim.segments.columns)
    assert list(res.players.columns) == list(sim.players.columns)
    assert len(res.segments) == sum(p["segments"] for p in players.values())
    # sizes: the simulator's video model
    sizes = {(int(r.level), int(r.index)): int(r.bytes) for r in sim.segments.itertuples()}
    for r in res.segments.itertuples():
        if (int(r.level), int(r.index)) in sizes:
            assert int(r.bytes) == sizes[(int(r.level), int(r.index))]
    reqs = [json.loads(l) for l in (out / "requests.jsonl").read_text().splitlines()]
    seg_reqs = [r for r in reqs if r.get("segment") is not None and r["status"] == 200 and "error" not in r]
    assert len(seg_reqs) >= len(res.segments)
    assert all(r["request_ns"] <= r["done_ns"] for r in seg_reqs)
    # connections as flows, with kernel cwnd samples from the origin's sockets
    conns = [f for f in s["flows"] if f.get("player")]
    assert len(conns) == players["keep"]["connections"] + players["fresh"]["connections"]
    assert all(f["kernel_cc"] == "reno" for f in conns)
    assert res.cwnd["flow"].nunique() >= 2
    # the router's pcap: headers only, every data packet of the run
    pcap = out / "router.pcap"
    raw = pcap.read_bytes()
    assert raw[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4")
    snap = int.from_bytes(raw[16:20], "little")
    assert snap == 96
    assert s["live"]["pcap"]["captured"] > sum(p["media_bytes"] for p in players.values()) / 1500 * 0.9
    print("\nlive players:", {n: (p["segments"], round(p["avg_level"], 2), p["switches"], p["stalls"])
                              for n, p in players.items()}, "load", s["live"]["load"])


def _live_check_seconds() -> int:
    return int(os.environ.get("HASLAB_LIVE_CHECK_S", "180"))


def tcphas_home_dumbbell(cc: str, duration_s: int) -> str:
    """The tcphas-home preset's setting on a dumbbell: 8 RBB players (video "tcphas"), 8 Mbit/s,
    100 ms RTT, a one-BDP drop-tail queue (100 kB), the players' congestion control `cc`."""
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


def _ranking_numbers(res) -> dict:
    import numpy as np

    ps = res.summary["players"]
    link = next(l for l in res.summary["links"] if l["name"] == "r1->r2")
    q = res.queue
    q = q[q["link_name"] == "r1->r2"] if "link_name" in q.columns else q
    return {
        "switches": float(np.mean([p["switches"] for p in ps])),
        "avg_level": float(np.mean([p["avg_level"] for p in ps])),
        "stalls": int(sum(p["stalls"] for p in ps)),
        "queue_bytes": float(q["bytes"].mean()),
        "drops": link["dropped_packets"],
    }


def test_tcphas_players_live_rank_as_in_the_simulator(live_bpf, tmp_path):
    """8 RBB players on the tcphas-home bottleneck (8 Mbit/s, 100 ms, one-BDP queue, video
    "tcphas") with CUBIC, Westwood+ and TcpHas (both BPF) on the servers, live and simulated:

    - TcpHas players switch less than Westwood+ players (the TcpHas paper's Fig. 3a comparison),
      live and in the simulator;
    - live agrees with the simulator per algorithm: mean switches within max(50 %, 4), mean queue
      within 25 %.

    Against CUBIC neither the simulator nor the kernel shows fewer switches or a lower queue for
    TcpHas in this setting (docs/live.md has the numbers): the test prints that comparison and
    does not assert it. Duration: $HASLAB_LIVE_CHECK_S (default 180 s, the paper's K; the
    Westwood+ margin needs it)."""
    from haslab.live.run import run_live

    dur = _live_check_seconds()
    nums = {}
    for cc in ("cubic", "westwood+", "tcphas"):
        text = tcphas_home_dumbbell(cc, dur)
        scen = tmp_path / f"{cc}.toml"
        scen.write_text(text)
        before = os.getloadavg()
        live = run_live(scen, out_dir=tmp_path / f"live-{cc}")
        sim = haslab.run(text)
        nums[cc] = {"live": _ranking_numbers(live), "sim": _ranking_numbers(sim),
                    "load": [round(x, 1) for x in before + os.getloadavg()]}
    print(f"\n8 RBB players, {dur} s (mean per player; queue = mean backlog of r1->r2 in bytes):")
    for cc, n in nums.items():
        for mode in ("live", "sim"):
            v = n[mode]
            print(f"  {cc:9s} {mode:4s} switches {v['switches']:6.2f}  level {v['avg_level']:.2f}  "
                  f"stalls {v['stalls']:3d}  queue {v['queue_bytes']:8.0f}  drops {v['drops']}")
        print(f"  {'':9s} load before/after {n['load']}")
    for mode in ("live", "sim"):
        t, w = nums["tcphas"][mode], nums["westwood+"][mode]
        assert t["switches"] < w["switches"], (mode, t, w)
    for cc, n in nums.items():
        lv, sm = n["live"], n["sim"]
        assert abs(lv["switches"] - sm["switches"]) <= max(0.5 * sm["switches"], 4), (cc, lv, sm)
        assert abs(lv["queue_bytes"] - sm["queue_bytes"]) <= 0.25 * sm["queue_bytes"], (cc, lv, sm)


def test_kill_9_in_a_player_run_then_up_repairs(live, tmp_path):
    from haslab.live import netns

    scen = tmp_path / "p.toml"
    scen.write_text(TWO_POLICIES.replace("DUR", "60s"))
    p = subprocess.Popen([sys.executable, "-m", "haslab", "live", "run", str(scen), "-o", str(tmp_path / "o"), "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    state = netns.state_dir() / "has" / "players.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not state.exists():
        time.sleep(0.2)
    time.sleep(8)  # the players are streaming
    assert p.poll() is None, p.stderr.read() if p.stderr else ""
    import json

    named = json.loads((netns.state_dir() / "state.json").read_text())["pids"]
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    alive = [pid for pid in named if netns._alive(pid)]
    assert alive, "the origin and the players outlive a kill -9 of the runner"
    up = cli("live", "up", scen)
    assert up.returncode == 0, up.stderr
    assert not [pid for pid in alive if netns._alive(pid)], "up stopped the leftover processes"
    from haslab.live.testbed import Testbed

    tb = Testbed(from_plan(haslab.validate(scen)))
    rtts = tb.measure_rtt(count=10, interval_s=0.02)
    assert statistics.median(rtts) == pytest.approx(100e6, rel=0.05)
    down = cli("live", "down")
    assert down.returncode == 0, down.stderr
    assert netns.leftovers() == []


def test_dashjs_plays_and_a_loss_burst_shows_in_its_log(live, tmp_path):
    """dash.js (BOLA) in headless Chromium plays 2 minutes of video through a 5 Mbit/s bottleneck;
    its per-segment metrics land in the segments table; a 50 % loss burst of 1 s at 60 s shows as
    retransmissions in the router's pcap around that second and as a drop of the download
    throughput of the segments fetched then."""
    from haslab.live import dashjs

    missing = dashjs.missing()
    if missing:
        if REQUIRE:
            pytest.fail("HASLAB_REQUIRE_LIVE=1 but dash.js needs: " + "; ".join(missing))
        pytest.skip("dash.js needs: " + "; ".join(missing))
    from haslab.live.run import run_live

    scen = tmp_path / "d.toml"
    scen.write_text("""
seed = 2
duration = "120s"
[dumbbell]
pairs = 1
bottleneck_rate = "5Mbps"
bottleneck_delay = "30ms"
bottleneck_queue = "62500B"
access_delay = "5ms"
[[loss_event]]
link = "r1->r2"
loss = "50%"
start = "60s"
stop = "61s"
[trace]
queues = ["r1->r2"]
""")
    out = tmp_path / "o"
    res = run_live(scen, out_dir=out, dashjs="bola")
    dj = next(p for p in res.summary["players"] if p["name"] == "dashjs")
    seg = res.segments
    print("\ndash.js:", {k: dj[k] for k in ("segments", "avg_level", "switches", "stalls", "version", "errors")},
          "load", res.summary["live"]["load"])
    assert not dj["errors"], dj["errors"]
    # 2 minutes of 2 s segments: it fetched most of them (with the buffer ahead of the play head)
    assert dj["segments"] >= 45
    assert len(seg) == dj["segments"]
    assert dj["played_ns"] >= 90e9, "it played in real time"
    # the loss burst: random losses counted by the delay box in that second ...
    fwd = next(l for l in res.summary["links"] if l["name"] == "r1->r2")
    assert fwd["lost_packets"] >= 1
    # ... retransmissions in the router's pcap around it, and (almost) none elsewhere ...
    burst = _retransmissions_per_second(out / "router.pcap", res.summary["live"]["t0_wall_ns"])
    around = sum(burst.get(t, 0) for t in range(59, 64))
    elsewhere = [burst.get(t, 0) for t in range(20, 55)]
    print("retransmissions/s 55..66:", [burst.get(t, 0) for t in range(55, 67)], "max in 20..55:", max(elsewhere))
    assert around >= 3 and around > max(elsewhere), (around, max(elsewhere))
    # ... and in dash.js's own log: a segment fetched after the burst at a lower level, or with
    # a download throughput well below the steady one before it
    before = seg[(seg.request_ns > 20e9) & (seg.done_ns < 59e9)]
    after = seg[(seg.done_ns > 60e9) & (seg.request_ns < 72e9)]
    lvl0, thr0 = before.level.median(), before.throughput_bps.median()
    print(f"before the burst: level {lvl0}, throughput {thr0 / 1e6:.2f} Mbit/s; after:",
          list(zip(after.level, (after.throughput_bps / 1e6).round(2))))
    assert (after.level < lvl0).any() or (after.throughput_bps < 0.8 * thr0).any()


def _retransmissions_per_second(pcap, t0_wall_ns: int) -> dict:
    """Data packets whose sequence number was seen before (the same flow), per second of the
    run's clock (the capture's timestamps less the wall-clock time of the run's time 0), from a
    headers-only pcap (Ethernet, IPv4, TCP)."""
    import struct

    raw = open(pcap, "rb").read()
    off = 24
    seen: dict = {}
    out: dict = {}
    t0 = t0_wall_ns / 1e9
    while off + 16 <= len(raw):
        ts, tus, incl, _orig = struct.unpack_from("<IIII", raw, off)
        pkt = raw[off + 16: off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 14 + 20 + 20 or pkt[12:14] != b"\x08\x00":
            continue
        ip = pkt[14:]
        ihl = (ip[0] & 15) * 4
        total = struct.unpack_from(">H", ip, 2)[0]
        tcp = ip[ihl:]
        doff = (tcp[12] >> 4) * 4
        payload = total - ihl - doff
        if payload <= 0:
            continue
        key = (ip[12:16], ip[16:20], tcp[0:4])
        seq = struct.unpack_from(">I", tcp, 4)[0]
        s = seen.setdefault(key, set())
        if seq in s:
            sec = int(ts + tus / 1e6 - t0)
            out[sec] = out.get(sec, 0) + 1
        s.add(seq)
    return out
