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
import tempfile
import time
from pathlib import Path

import pytest

import haslab
from haslab.live import LiveUnsupported, from_plan

from conftest import cli

REQUIRE = os.environ.get("HASLAB_REQUIRE_LIVE") == "1"

MBPS = 1_000_000
#: payload per 1500-byte IP packet with timestamps: the most goodput a rate allows
PAYLOAD_SHARE = 1448 / 1500


def dumbbell(pairs=1, duration="10s", cc="newreno", extra_flow="", tcp='{ sack = true, rack = true }', rate="8Mbps",
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


def test_rack_and_the_loss_probe_map_to_the_kernels_settings(monkeypatch):
    """RACK (tcp_recovery bit 0) and the tail-loss probe (tcp_early_retrans 3) follow tcp.rack
    and tcp.tlp; since Linux 6.17 RACK is the only SACK loss detection, so a SACK flow without
    RACK is refused there, naming tcp.rack, and accepted on an older kernel."""
    from haslab.live import config as live_config

    assert live_config.kernel_version("6.18.44-fc-v657") == (6, 18)
    assert live_config.kernel_version("5.15.0-91-generic") == (5, 15)

    def sysctls(tcp, kernel):
        monkeypatch.setattr(live_config, "kernel_version", lambda release=None: kernel)
        s = from_plan(haslab.validate(dumbbell(tcp=tcp))).hosts["left0"].sysctls
        return s["net.ipv4.tcp_recovery"], s["net.ipv4.tcp_early_retrans"]

    for kernel in ((6, 16), (6, 18)):
        assert sysctls("{ sack = true, rack = true }", kernel) == ("1", "0")
        assert sysctls("{ sack = true, tlp = true }", kernel) == ("1", "3")
        assert sysctls("{ sack = false }", kernel) == ("0", "0")
    assert sysctls("{ sack = true }", (6, 16)) == ("0", "0")
    with pytest.raises(LiveUnsupported, match=r"tcp\.rack.*6\.17"):
        sysctls("{ sack = true }", (6, 18))
    with pytest.raises(LiveUnsupported, match=r"tcp\.rack"):
        sysctls("{ sack = true, rack = false }", (6, 17))


def test_frto_maps_to_the_kernels_setting():
    """tcp.frto (F-RTO, RFC 5682) sets the sender's net.ipv4.tcp_frto: 2, the kernel's default
    (any non-zero value runs the SACK-enhanced form), when on, as it is by default; 0 when off."""
    def frto(tcp):
        return from_plan(haslab.validate(dumbbell(tcp=tcp))).hosts["left0"].sysctls["net.ipv4.tcp_frto"]

    assert frto("{ sack = false }") == "2"
    assert frto("{ sack = false, frto = false }") == "0"
    assert frto("{ sack = true, tlp = true, frto = true }") == "2"


def test_cpu_shares_come_from_two_proc_stat_readings():
    from haslab.live.run import cpu_shares, cpu_times

    # proc(5): user nice system idle iowait irq softirq steal guest guest_nice
    before = cpu_times("cpu  100 0 50 800 10 0 20 20 0 0\ncpu0 1 2 3\n")
    after = cpu_times("cpu  160 0 70 1000 10 0 40 120 0 0\ncpu0 1 2 3\n")
    # 400 ticks in all: 200 idle, 100 steal, 20 softirq
    assert cpu_shares(before, after) == {"busy": 0.5, "softirq": 0.05, "steal": 0.25}
    assert cpu_times("intr 1 2\n") is None
    assert cpu_shares(before, None) is None and cpu_shares(before, before) is None
    # an old kernel's shorter line (no steal column) counts the missing columns as 0
    assert cpu_times("cpu  1 2 3 4 5 6 7\n")["steal"] == 0


def test_the_kernels_receiver_is_linux_rules_and_on_is_noted():
    """The kernel's receiver acknowledges by Linux's quick-ACK and delayed-ACK rules: the
    simulator's `delayed_ack = "linux"` maps without a note, RFC 5681's `on` with one."""
    linux = from_plan(haslab.validate(dumbbell(tcp='{ delayed_ack = "linux" }'))).notes
    assert not [n for n in linux if "delayed ACKs" in n]
    on = from_plan(haslab.validate(dumbbell(tcp='{ delayed_ack = "on" }'))).notes
    assert [n for n in on if "delayed ACKs" in n and "quick ACKs" in n]
    old = from_plan(haslab.validate(dumbbell(tcp='{ delayed_ack = "linux-3" }'))).notes
    assert [n for n in old if "delayed ACKs" in n and "3.19" in n]


def test_cubic_keeping_its_epoch_through_idle_is_noted_as_not_reproduced():
    """The kernel's CUBIC shifts its epoch after idle (Linux 4.2+): `idle_shift = false` is
    noted, the default is not."""
    cubic = dumbbell().replace('cc = "newreno"', 'cc = "cubic"')
    assert not [n for n in from_plan(haslab.validate(cubic)).notes if "idle_shift" in n]
    old = dumbbell().replace('cc = "newreno"', 'cc = { algorithm = "cubic", idle_shift = false }')
    assert [n for n in from_plan(haslab.validate(old)).notes if "idle_shift = false" in n]


def test_cubic_with_the_3_19_hystart_is_noted_as_not_reproduced():
    """The kernel's CUBIC runs its own HyStart: `hystart_variant = "linux-3.19"` is noted, the
    default is not."""
    cubic = dumbbell().replace('cc = "newreno"', 'cc = "cubic"')
    assert not [n for n in from_plan(haslab.validate(cubic)).notes if "hystart_variant" in n]
    old = dumbbell().replace('cc = "newreno"', 'cc = { algorithm = "cubic", hystart_variant = "linux-3.19" }')
    assert [n for n in from_plan(haslab.validate(old)).notes if "hystart_variant = 'linux-3.19'" in n]


def test_a_timer_clock_other_than_the_kernels_wheel_is_noted(monkeypatch):
    """The kernel runs its TCP timers on its own wheel in its own jiffies: `timer_clock =
    "linux"` at the kernel's CONFIG_HZ and the default `"exact"` are not noted, 3.19's wheel or
    another hz is."""
    from haslab.live import config as live_config

    monkeypatch.setattr(live_config, "kernel_hz", lambda config_text=None: 250)

    def notes(extra: str) -> list[str]:
        text = dumbbell(tcp="{ sack = true, rack = true%s }" % extra)
        return [n for n in from_plan(haslab.validate(text)).notes if n.startswith("timers:")]

    assert notes("") == []
    assert notes(', timer_clock = "linux"') == []
    assert notes(', timer_clock = "linux", hz = 250') == []
    assert [n for n in notes(', timer_clock = "linux-3.19"') if "'linux-3.19'" in n and "CONFIG_HZ = 250" in n]
    assert [n for n in notes(', timer_clock = "linux", hz = 1000') if "hz = 1000" in n]
    with pytest.raises(LiveUnsupported, match=r"tlp_variant.*3\.x"):
        from_plan(haslab.validate(dumbbell(tcp='{ sack = true, tlp = true, tlp_variant = "linux-3.19" }')))


def test_westwood_and_cubic_jiffies_must_be_the_kernels(monkeypatch):
    """haslab_westwood counts in the kernel's jiffies: a scenario's hz other than the kernel's
    CONFIG_HZ, or clock = "ns", is refused naming the field, and the kernel's HZ is accepted; the
    kernel's own CUBIC runs at its own HZ, so another hz is noted."""
    from haslab.live import config as live_config

    assert live_config.kernel_hz("CONFIG_HZ_250=y\nCONFIG_HZ=250\n") == 250
    assert live_config.kernel_hz("# CONFIG_HZ is not set\n") is None
    monkeypatch.setattr(live_config, "kernel_hz", lambda config_text=None: 250)
    ww = dumbbell().replace('cc = "newreno"', 'cc = "westwood+"')
    assert from_plan(haslab.validate(ww)).flows[0].kernel_cc == "haslab_westwood"
    for opt, words in (('hz = 1000', r"hz.*1000"), ('clock = "ns"', r"clock.*ns")):
        text = dumbbell().replace('cc = "newreno"', f'cc = {{ algorithm = "westwood+", {opt} }}')
        with pytest.raises(LiveUnsupported, match=words):
            from_plan(haslab.validate(text))
    monkeypatch.setattr(live_config, "kernel_hz", lambda config_text=None: 1000)
    with pytest.raises(LiveUnsupported, match=r"CONFIG_HZ is 1000.*set hz = 1000"):
        from_plan(haslab.validate(ww))
    ww1000 = dumbbell().replace('cc = "newreno"', 'cc = { algorithm = "westwood+", hz = 1000 }')
    assert from_plan(haslab.validate(ww1000)).flows[0].kernel_cc == "haslab_westwood"
    cubic = dumbbell().replace('cc = "newreno"', 'cc = { algorithm = "cubic", hz = 250 }')
    assert [n for n in from_plan(haslab.validate(cubic)).notes if "hz = 250" in n and "CONFIG_HZ = 1000" in n]


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
        (dumbbell(tcp='{ recovery_end = "new-ack" }'), "tcp.recovery_end"),
        (dumbbell(tcp='{ recovery_entry_cwnd = "min" }'), "tcp.recovery_entry_cwnd"),
        (dumbbell(tcp='{ ca_sample = "ns3" }'), "tcp.ca_sample"),
        (dumbbell(tcp='{ cwnd_growth = "linux-3" }'), "cwnd_growth.*Linux 3.x"),
        (dumbbell(tcp='{ cwnd_growth = "linux-3.19" }'), "cwnd_growth.*Linux 3.x"),
        (dumbbell(tcp='{ growth_count = "linux-3.19" }'), "growth_count.*Linux 3.x"),
        (dumbbell(tcp='{ ca_sample = "linux-3.19" }'), "ca_sample.*Linux 3.x"),
        (dumbbell(tcp='{ cwnd_growth = "per-ack" }'), "cwnd_growth.*ns-3"),
        (dumbbell(tcp='{ undo_cwnd = "linux-3.19" }'), "undo_cwnd.*Linux 3.x"),
        (dumbbell(tcp='{ prior_ssthresh = "ssthresh" }'), "prior_ssthresh.*no kernel saves"),
        (dumbbell(tcp='{ cwnd_limited = "linux-3.19" }'), "cwnd_limited.*Linux 3.x"),
        (dumbbell(tcp='{ recover_covers = "reach" }'), "tcp.recover_covers"),
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
tcp = {{ sack = true, rack = true }}
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


#: Live mode runs one testbed at a time on a machine (BPF names are global); a test waits this
#: long for another live run (another checkout's tests, a helper's `haslab live run`) to end
#: rather than fail on a busy machine.
WAIT_FOR_MACHINE_S = "3600"


@pytest.fixture
def live(monkeypatch):
    _need()
    from haslab.live import netns

    monkeypatch.setenv("HASLAB_LIVE_WAIT_S", WAIT_FOR_MACHINE_S)
    yield
    netns.cleanup()


@pytest.fixture
def live_bpf(monkeypatch):
    _need(bpf=True)
    from haslab.live import netns

    monkeypatch.setenv("HASLAB_LIVE_WAIT_S", WAIT_FOR_MACHINE_S)
    yield
    netns.cleanup()


#: Tolerances of the live tests, from their spread on this 2-vCPU VM with two CPU burners
#: (`yes > /dev/null` × 2) alongside and other jobs' builds, load 7-17, 3 runs each (docs/live.md,
#: "Noise under load"). The RTT of a UDP probe can only grow with load (the delay box releases a
#: packet at its due time or later): the median was 103.3-105.0 ms (p90 up to 120 ms, max 152 ms),
#: 107 ms in a CI run at load 4-8, never below 100.5 ms. The bound [100 ms, 115 ms) is twice the
#: worst excess seen and still catches a path delay counted wrong (80 ms without the access links,
#: 120 ms with them twice, 200 ms with the round trip per direction).
RTT_MEDIAN_MAX_NS = 115_000_000
#: Goodput of one flow at 8 and 4 Mbit/s, the best second of each phase: the shaper's rate shows
#: in any second the flow keeps the link full, while the phase's mean also carries how the kernel's
#: Reno recovered from its slow-start overshoot, which varies between runs and machines. Means of
#: 3-7 s, against the rate's payload share: within 0.3 % with two CPU burners at load 7-17
#: (kernel 6.18.44-fc-v669); 1.2 % and 6.0 % under on another machine (6.18.44-fc-v657, load below
#: 1), and 16.7 % under in a CI run on that kind (load 1.0-1.8: 148 retransmissions, no
#: RTO, the seconds at 4.63, 5.57, 6.75, 7.53, 7.66 Mbit/s as cwnd grew back; best 1 % under); in
#: the 6.0 % case every second of 3-7 s was at 6.97-7.48 Mbit/s (best 3 % under); the 4 Mbit/s
#: phase stayed within 1 %. A second can also read more than the rate, what the receiving
#: application had left in its socket buffer: 8.32 Mbit/s (7.8 % over) at the end of slow start in
#: that run. So the best second must lie within ten percent under and fifteen over: that
#: still catches a rate in bytes per second or a shaper that ignores the change to 4 Mbit/s, not an
#: error of a few percent.
RATE_UNDER, RATE_OVER = 0.10, 0.15


def test_testbed_rate_rtt_and_clean_teardown(live, tmp_path):
    """One testbed: the RTT of UDP probes is the scenario's 100 ms or more and its median within
    RTT_MEDIAN_MAX_NS, the best second of one flow's goodput within RATE_UNDER/RATE_OVER of the
    rate (8 Mbit/s of IP packets), a rate change shows in the goodput, and down leaves nothing."""
    from haslab.live import netns
    from haslab.live.run import run_live
    from haslab.live.testbed import Testbed

    cfg = from_plan(haslab.validate(dumbbell(duration="14s")))
    with Testbed(cfg) as tb:
        rtts = tb.measure_rtt(count=30, interval_s=0.03)
        assert len(rtts) == 30
        assert min(rtts) >= 100_000_000, rtts
        assert statistics.median(rtts) < RTT_MEDIAN_MAX_NS, rtts
        assert netns.our_namespaces(), "the namespaces exist while the testbed is up"
    assert netns.leftovers() == []
    assert tb.delaybox_stats["fwd"]["lateness_ns"]["samples"] > 0

    # 8 Mbit/s for 7 s, then 4 Mbit/s
    r = run_live(dumbbell(duration="14s"), out_dir=tmp_path, rate_steps=[(7_000_000_000, 4 * MBPS)])
    g = r.goodput
    first = g[(g.time_ns > 2_000_000_000) & (g.time_ns <= 7_000_000_000)].goodput_bps.max()
    second = g[g.time_ns > 9_000_000_000].goodput_bps.max()
    for best, rate in ((first, 8 * MBPS), (second, 4 * MBPS)):
        low, high = (1 - RATE_UNDER) * rate * PAYLOAD_SHARE, (1 + RATE_OVER) * rate * PAYLOAD_SHARE
        assert low <= best <= high, (best, g)
    assert (tmp_path / "summary.json").exists() and (tmp_path / "cwnd.parquet").exists()
    link = r.link("r1->r2")
    assert link["delay_box"]["lateness_ns"]["p50"] < 5_000_000
    assert r.summary["live"]["rate_changes"][0]["rate_bps"] == 4 * MBPS
    # how the CPUs spent the run: shares of the time from time 0 to the end
    cpu = r.summary["live"]["cpu"]
    assert 0.0 < cpu["busy"] <= 1.0 and 0.0 <= cpu["steal"] <= cpu["busy"] and 0.0 <= cpu["softirq"] <= cpu["busy"]
    assert netns.leftovers() == []


def test_four_reno_flows_share_the_bottleneck_fairly(live):
    from haslab.live import netns
    from haslab.live.run import run_live

    r = run_live(dumbbell(pairs=4, duration="25s"))
    flows = r.summary["flows"]
    assert [f["kernel_cc"] for f in flows] == ["reno"] * 4
    goodputs = [f["goodput_bps"] for f in flows]
    total = sum(goodputs)
    # under two CPU burners (load 7-17): total 0.6-1.1 % under the payload rate, Jain 0.98-0.998
    assert total == pytest.approx(8 * MBPS * PAYLOAD_SHARE, rel=0.08), goodputs
    assert jain(goodputs) >= 0.9, goodputs
    # bulk senders always have data queued (tcpi_busy_time over the flow's life): never waiting
    # for the application, as the simulator's bulk sender (measured: 99.80-99.91 % of the time
    # from establishment to the end, idle and under two CPU burners)
    for f in flows:
        life_ns = r.summary["duration_ns"] - f["established_ns"]
        assert 0.95 * life_ns <= f["busy_ns"] <= 1.05 * life_ns, (f["name"], f["busy_ns"], life_ns)
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
    # under two CPU burners (load 7-17): 1.2-1.7 % under 1.2 × 4256 kbps, no drop
    assert steady == pytest.approx(1.2 * 4_256_000, rel=0.08)
    assert r.link("r1->r2")["dropped_packets"] == 0
    assert netns.our_struct_ops() == [], "unregistered after the run"

    # Without a ladder TcpHas is Reno and fills the link: 0.90-0.998 of the payload rate under two
    # CPU burners (0.90 at load 17, a loss episode in the 5 s measured). The bound, 0.8, lies
    # between that and the shaped flow above (5.1 Mbit/s, 0.66 of the payload rate).
    plain = run_live(dumbbell(duration="8s", cc="tcphas"))
    g = plain.goodput
    assert g[g.time_ns > 3_000_000_000].goodput_bps.mean() > 0.8 * 8 * MBPS * PAYLOAD_SHARE
    assert netns.leftovers() == []


def test_tcphas_restarts_from_one_segment_after_an_rto_and_logs_its_level_per_request(live_bpf, tmp_path):
    """A TcpHas player alone on the bottleneck, which drops everything for 1.5 s (a loss event of
    100 %) in the middle of the run. The kernel raises CA_EVENT_TX_START for the RTO's
    retransmission too (nothing in flight); TcpHas's OFF-period rule (Algorithm 5, cwnd =
    ssthresh) must not run there, since segments are outstanding: the window collapses at the RTO
    (cwnd 1, Algorithm 4) and stays small through the outage's backed-off RTOs. With the rule run
    at the RTO, cwnd stayed at ssthresh (16) through the outage in a traced run. The origin logs
    the algorithm's level and estimate with every segment request."""
    import json

    from haslab.live.run import run_live

    scen = tmp_path / "rto.toml"
    scen.write_text(players_scenario(pairs=1, duration="24s", cc="tcphas", extra="""
[[loss_event]]
link = "r1->r2"
loss = "100%"
start = "12s"
stop = "13.5s"
""").replace('queues = ["r1->r2"]', 'cwnd_interval = "10ms"'))
    out = tmp_path / "o"
    res = run_live(scen, out_dir=out)
    f = [f for f in res.summary["flows"] if f.get("player")][0]
    assert f["kernel_cc"] == "haslab_tcphas" and f["rto_count"] >= 1
    c = res.cwnd
    outage = c[(c.time_ns > 12_400_000_000) & (c.time_ns < 13_500_000_000)]
    assert len(outage) > 20, "cwnd sampled through the outage"
    # RTO at 12 s + about 300 ms, then backed off past the outage's end: the window stays collapsed
    assert outage.cwnd_pkts.min() <= 2, outage.cwnd_pkts.describe()
    assert (outage.cwnd_pkts <= 2).mean() > 0.5
    ladder = [248_000, 456_000, 928_000, 1_632_000, 4_256_000]
    reqs = [json.loads(l) for l in (out / "requests.jsonl").read_text().splitlines()]
    seg = [r for r in reqs if r.get("segment") is not None and r["status"] == 200]
    # (the first request may come before any ACK has made the algorithm publish anything)
    assert len(seg) > 5 and all("bpf_stats" in r for r in seg[1:])
    for r in seg[1:]:
        st = r["bpf_stats"]
        assert 0 <= st["qlevel"] <= 4 and st["shaping_bps"] == ladder[st["qlevel"]] * 6 // 5
    assert seg[-1]["bpf_stats"]["bwe_bps"] > 0
    # Nagle is off at the origin, as at the papers' Apache: a segment's body arrives in about its
    # transmission time at the bottleneck (IP bytes at 8 Mbit/s) after its first byte; with Nagle
    # its last partial segment waited for the ACK of the headers' small segment, 36-38 ms more
    # here (download 202 ms against a first byte at 102 ms, in a traced run)
    s_ = res.segments
    early = s_[(s_["index"] >= 1) & (s_["request_ns"] < 10_000_000_000)]
    body_ms = (early["download_ns"] - early["ttfb_ns"]) / 1e6
    extra_ms = body_ms - early["bytes"] * 8 / PAYLOAD_SHARE / (8 * MBPS) * 1e3
    assert len(early) >= 5 and extra_ms.median() < 20, extra_ms.describe()


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
tcp = { idle_restart = "newcwv", sack = true, rack = true }
"""
    r = run_live(dumbbell(pairs=3, duration="12s", flows=flows))
    got = {f["name"]: f for f in r.summary["flows"]}
    assert [got[n]["kernel_cc"] for n in ("ww", "tibet", "cwv")] == ["haslab_westwood", "haslab_tibet", "haslab_newcwv"]
    total = sum(f["goodput_bps"] for f in got.values())
    # under two CPU burners (load 7-17): total 1.5-1.8 % under the payload rate, the smallest
    # flow 0.98-1.98 Mbit/s
    assert total == pytest.approx(8 * MBPS * PAYLOAD_SHARE, rel=0.1)
    assert all(f["goodput_bps"] > 0.5 * MBPS for f in got.values()), {n: f["goodput_bps"] for n, f in got.items()}


def wait_until_running(p, ready) -> None:
    """Waits until `ready()` (a run started as subprocess `p` is streaming) while `p` runs. A run
    first waits for the machine (another live run, another prefix's testbed) up to
    WAIT_FOR_MACHINE_S, so this waits as long, plus the time to build the testbed."""
    deadline = time.monotonic() + float(WAIT_FOR_MACHINE_S) + 300
    while not ready():
        assert p.poll() is None, p.stderr.read() if p.stderr else ""
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.2)


def _left_busy() -> bool:
    from haslab.live import netns

    return any(netns.ns_pids(n) for n in netns.our_namespaces() if "left" in n)


def assert_repaired_path(tb) -> None:
    """The path of a testbed rebuilt by `up` works and has its delay box: every probe comes back,
    and none sooner than the scenario's 100 ms RTT (the box releases a packet no earlier than its
    due time, so load can only lengthen an RTT). How close to 100 ms is not asserted here: a
    loaded machine adds its scheduling delay (see test_testbed_rate_rtt_and_clean_teardown)."""
    rtts = tb.measure_rtt(count=10, interval_s=0.02)
    assert len(rtts) == 10, rtts
    assert min(rtts) >= 100_000_000, rtts


def test_kill_9_in_a_run_then_up_repairs(live, tmp_path):
    from haslab.live import netns

    scen = tmp_path / "s.toml"
    scen.write_text(dumbbell(pairs=2, duration="30s"))
    p = subprocess.Popen([sys.executable, "-m", "haslab", "live", "run", str(scen), "-o", str(tmp_path / "o"), "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_until_running(p, _left_busy)
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
    assert_repaired_path(tb)
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
    wait_until_running(p, _left_busy)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 1
    assert "interrupted" in p.stderr.read()
    assert netns.leftovers() == []


def test_a_second_testbed_is_refused_naming_the_first(live, tmp_path):
    """BPF congestion-control names are global to the kernel whatever the prefix, so live mode
    runs one testbed at a time: while a run is going, a second run (another prefix), an `up` and
    a `down` of the same prefix are refused with a message naming the running one, and nothing
    of the first is touched; a testbed left up with another prefix also refuses a run, naming
    that prefix and how to remove it."""
    from haslab.live import netns

    scen = tmp_path / "s.toml"
    scen.write_text(dumbbell(duration="40s"))
    # the first run and the testbed of the other prefix wait for the machine as the tests do
    # (another checkout may be using live mode); the attempts that must be refused do not wait
    env0 = dict(os.environ, HASLAB_LIVE_WAIT_S="0")
    other = dict(env0, HASLAB_LIVE_PREFIX="haslabz")
    other_wait = dict(other, HASLAB_LIVE_WAIT_S=WAIT_FOR_MACHINE_S)

    def run_cli(*args, env):
        return subprocess.run([sys.executable, "-m", "haslab", "live", *map(str, args)], capture_output=True,
                              text=True, env=env, timeout=float(WAIT_FOR_MACHINE_S) + 600)

    p = subprocess.Popen([sys.executable, "-m", "haslab", "live", "run", str(scen), "-o", str(tmp_path / "o"), "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_running(p, _left_busy)
        first = sorted(netns.our_namespaces())
        assert first
        for args, env in ((("run", scen, "-o", tmp_path / "o2", "-q"), other), (("up", scen), other),
                          (("up", scen), env0), (("down",), env0)):
            r = run_cli(*args, env=env)
            assert r.returncode == 1, (args, r.stdout, r.stderr)
            msg = " ".join(r.stderr.split())
            assert "another live run is using this machine" in msg and f"pid {p.pid}" in msg, (args, msg)
            assert f"prefix {netns.prefix()!r}" in msg and "global to the kernel" in msg, msg
        r = run_cli("status", env=other)
        assert "no testbed" in r.stdout
        assert sorted(netns.our_namespaces()) == first, "the first testbed is untouched"
        assert p.poll() is None, "and still running"
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    assert netns.leftovers() == []

    up = run_cli("up", scen, env=other_wait)
    assert up.returncode == 0, up.stderr
    try:
        r = run_cli("run", scen, "-o", tmp_path / "o3", "-q", env=env0)
        assert r.returncode == 1
        msg = " ".join(r.stderr.split())
        assert "another live testbed is up:" in msg and "prefix 'haslabz' (haslabz-left0" in msg, msg
        assert "HASLAB_LIVE_PREFIX=haslabz haslab live down" in msg, msg
        assert netns.our_namespaces() == []
    finally:
        down = run_cli("down", env=other)
    assert down.returncode == 0, down.stderr
    assert run_cli("status", env=other).stdout.startswith("no testbed")


# ---------------------------------------------------------------------------------------------
# HAS players, the origin, dash.js

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
tcp = { sack = true, rack = true }
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


PARALLEL_ABANDON = """
seed = 22
duration = "30s"
[dumbbell]
pairs = 3
bottleneck_rate = "3Mbps"
bottleneck_delay = "30ms"
bottleneck_queue = "40pkts"
[[player]]
name = "p0"
client = "right0"
server = "left0"
abr = "bola-e"
video = "tcphas"
start = "0ms"
buffer = "20s"
connection = "parallel"
connections = 3
[[player]]
name = "p1"
client = "right1"
server = "left1"
abr = "bola-e"
video = "tcphas"
start = "700ms"
buffer = "20s"
connection = "parallel"
connections = 3
[[player]]
name = "p2"
client = "right2"
server = "left2"
abr = "bola-e"
video = "tcphas"
start = "1400ms"
buffer = "20s"
connection = "parallel"
connections = 3
"""


def test_live_players_download_in_parallel_and_abandon_like_the_simulator(live, tmp_path):
    """The live client runs the simulator's player cycle: `parallel` really has several requests
    in flight at once, on different connections, and BOLA-E abandons requests (the simulator
    abandons 8 in this scenario; a run of 3 players at 3 Mbit/s on 3 connections each leaves a
    slow download behind every few seconds), each segment given up being requested again at a
    lower level on a new connection."""
    from haslab.live.run import run_live

    sim = haslab.run(PARALLEL_ABANDON)
    assert len(sim.abandons) >= 5  # the scenario is one where abandoning is common
    scen = tmp_path / "p.toml"
    scen.write_text(PARALLEL_ABANDON)
    res = run_live(scen, out_dir=tmp_path / "o")
    live = res.summary["live"]["players"]
    assert live["bytes_mismatch"] == 0 and not live["errors"], live
    seg = res.segments.sort_values("request_ns")
    for p, g in seg.groupby("player"):
        req, done, flow = g.request_ns.to_numpy(), g.done_ns.to_numpy(), g.flow.to_numpy()
        overlapping = [k for k in range(1, len(g)) if req[k] < done[:k].max() and flow[k] != flow[k - 1]]
        assert overlapping, f"player {p}: no two downloads overlapped"
    ab = res.abandons
    print("\nlive abandons:", len(ab), "simulated:", len(sim.abandons), "load", res.summary["live"]["load"])
    assert live["abandoned"] == len(ab) >= 1, live
    assert (ab.bytes_loaded < ab.bytes_total).all() and (ab.to_level < ab.level).all()
    for r in ab.itertuples():
        again = seg[(seg.player == r.player) & (seg["index"] == r.index) & (seg.request_ns >= r.abandon_ns)]
        later = ab[(ab.player == r.player) & (ab["index"] == r.index) & (ab.request_ns >= r.abandon_ns)]
        # requested again at a lower level, on another connection (unless the run ended first)
        if len(again):
            assert (again.level < r.level).all() and (again.flow != r.flow).all(), (r, again)
        else:
            assert len(later) or r.abandon_ns > res.summary["duration_ns"] - 10 * 10**9, r


def test_ranking_scenario_runs_the_kernels_tcp_in_the_simulator():
    """The ranking check's simulated side runs the TCP its live side gets: live mode maps its
    scenario with no note of a TCP difference (PRR, as the kernel's only fast recovery; SACK with
    RACK), while the "classic" reading keeps the note that says the kernel cannot run it."""
    from haslab.live.checks import RANKING_CCS, tcphas_home_dumbbell

    for cc in RANKING_CCS:
        notes = from_plan(haslab.validate(tcphas_home_dumbbell(cc, 10))).notes
        assert not [n for n in notes if "recovery" in n or "RACK" in n or "pkts_acked" in n], (cc, notes)
        assert {p["tcp"]["recovery"] for p in haslab.validate(tcphas_home_dumbbell(cc, 10))["players"]} == {"prr"}
    classic = from_plan(haslab.validate(tcphas_home_dumbbell("cubic", 10, recovery="classic"))).notes
    assert any("always uses PRR" in n for n in classic)
    with pytest.raises(ValueError, match="recovery"):
        tcphas_home_dumbbell("cubic", 10, recovery="rfc6675")


def test_ranking_judges_live_against_simulated_by_the_live_runs_own_spread():
    """The ranking check's live-simulated agreement: the simulated number must lie in the 95 %
    prediction interval of one more live run (mean ± t(0.975, n-1) · sd · sqrt(1 + 1/n)); with
    one live run there is no spread, and the comparison is not judged."""
    from haslab.live.checks import RANKING_CCS, prediction_interval, ranking_verdicts, summarize_runs

    # three runs 10, 12, 14: mean 12, sd 2, t(0.975, 2) = 4.303, half-width 4.303 · 2 · sqrt(4/3) = 9.94
    lo, hi = prediction_interval([10.0, 12.0, 14.0])
    assert lo == pytest.approx(12 - 9.937, abs=1e-3) and hi == pytest.approx(12 + 9.937, abs=1e-3)

    def numbers(switches, level=1.5, queue=60_000.0):
        return {"switches": switches, "avg_level": level, "queue_bytes": queue}

    def report(live_runs, sim):
        mean, _ = summarize_runs(live_runs)
        return {cc: {"live": mean, "live_runs": live_runs, "sim": sim} for cc in RANKING_CCS}

    runs = [numbers(10, 1.50, 50_000), numbers(12, 1.52, 60_000), numbers(14, 1.54, 70_000)]
    inside = {v["claim"]: v["holds"] for v in ranking_verdicts(report(runs, numbers(21.9, 1.56, 62_000)))}
    outside = {v["claim"]: v["holds"] for v in ranking_verdicts(report(runs, numbers(22.0, 1.70, 110_000)))}
    agreement = [c for c in inside if "prediction interval" in c]
    assert len(agreement) == 3 * len(RANKING_CCS)
    assert all(inside[c] is True for c in agreement)
    assert all(outside[c] is False for c in agreement)
    single = ranking_verdicts(report(runs[:1], numbers(12)))
    assert all(v["holds"] is None for v in single if "prediction interval" in v["claim"])
    assert all(isinstance(v["holds"], bool) for v in single if "prediction interval" not in v["claim"])


def test_ranking_judges_a_simulated_ensemble_by_welchs_interval():
    """With several simulated runs (the players' starts spread as in live runs), live and
    simulated agree when the 95 % confidence interval of the difference of their means (Welch's)
    contains 0: means 12 and 20 with these spreads differ (difference 8 ± 4.6), means 12 and 13
    do not; one live run is not judged."""
    from scipy import stats

    from haslab.live.checks import RANKING_CCS, ranking_verdicts, sim_starts, summarize_runs, welch_interval

    # Welch's interval as the t-test with unequal variances gives it
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0]
    diff, half = welch_interval(a, b)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert diff == pytest.approx(-1.5) and (diff - half, diff + half) == pytest.approx((ci.low, ci.high))
    assert welch_interval([2.0, 2.0], [2.0, 2.0]) == (0.0, 0.0)

    def numbers(switches, level=1.5, queue=60_000.0):
        return {"switches": switches, "avg_level": level, "queue_bytes": queue}

    def report(live_runs, sim_runs):
        (mean, _), (sim, _) = summarize_runs(live_runs), summarize_runs(sim_runs)
        return {cc: {"live": mean, "live_runs": live_runs, "sim": sim, "sim_runs": sim_runs} for cc in RANKING_CCS}

    live = [numbers(s, 1.5 + s / 100, 1000.0 * s) for s in (10, 12, 14)]
    close = [numbers(s, 1.5 + s / 100, 1000.0 * s) for s in (11, 12, 13, 14, 15)]  # mean 13
    far = [numbers(s, 1.5 + s / 100, 1000.0 * s) for s in (19, 19.5, 20, 20.5, 21)]  # mean 20
    agree = {v["claim"]: v["holds"] for v in ranking_verdicts(report(live, close))}
    differ = {v["claim"]: v["holds"] for v in ranking_verdicts(report(live, far))}
    agreement = [c for c in agree if "difference of their means" in c]
    assert len(agreement) == 3 * len(RANKING_CCS)
    assert all(agree[c] is True for c in agreement) and all(differ[c] is False for c in agreement)
    one_live = ranking_verdicts(report(live[:1], far))
    assert all(v["holds"] is None for v in one_live if "difference of their means" in v["claim"])

    # the ensemble's start times: within the spread, one draw per run number, all 0 without a spread
    starts = [sim_starts(k, 5_000_000) for k in range(1, 13)]
    assert all(len(s) == 8 and all(0 <= t <= 5_000_000 for t in s) for s in starts)
    assert starts == [sim_starts(k, 5_000_000) for k in range(1, 13)] and len({tuple(s) for s in starts}) == 12
    assert sim_starts(3, 0) == [0] * 8
    with pytest.raises(ValueError, match="sim_start_spread"):
        sim_starts(1, -1)


def test_ranking_runs_a_subset_of_the_algorithms_and_refuses_others():
    """`--cc` narrows the ranking check to some of its algorithms (each full check takes about an
    hour live): the agreement is judged for those, TcpHas against Westwood+ only when both ran;
    an algorithm the check does not have, or none, is refused before any run, naming `ccs`."""
    from haslab.live.checks import ranking, ranking_verdicts, summarize_runs

    runs = [{"switches": s, "avg_level": 1.5, "queue_bytes": 5e4} for s in (2.0, 2.5, 3.0)]
    mean, _ = summarize_runs(runs)
    only = ranking_verdicts({"tcphas": {"live": mean, "live_runs": runs, "sim": mean, "sim_runs": runs}})
    assert len(only) == 3 and all(v["claim"].startswith("tcphas: ") for v in only)
    assert all(v["holds"] is True for v in only)
    for bad in (("reno",), ()):
        with pytest.raises(ValueError, match="ccs: .*cubic, westwood\\+, tcphas"):
            ranking(10, ccs=bad)
    r = cli("live", "check", "--ranking", "--cc", "vegas")
    assert r.returncode != 0 and "vegas" in (r.stdout + r.stderr)


def test_an_interrupted_ranking_check_keeps_the_algorithms_it_finished(tmp_path, monkeypatch):
    """With an output directory, the ranking check writes its report so far to ranking.json after
    each algorithm, so a check stopped in the middle (each algorithm takes about 20 minutes live)
    keeps what it measured. The live runs are replaced here by a stand-in that fails on the
    second algorithm."""
    import json

    import pandas as pd

    import haslab.live.run as live_run
    from haslab.live.checks import ranking

    class Fake:
        def __init__(self, k):  # run k: k + 1 switches, k + 5 drops
            self.summary = {"players": [{"segments": 4, "switches": k + 1, "avg_level": 1.5 + k / 10, "stalls": 0}],
                            "links": [{"name": "r1->r2", "dropped_packets": k + 5}]}
            self.queue = pd.DataFrame({"link_name": ["r1->r2"] * 2, "bytes": [1000 * k, 3000 * k]})

    calls = []

    def fake_run_live(text, out_dir=None, wait_s=None):
        calls.append(out_dir)
        if 'cc = "tcphas"' in text:
            raise KeyboardInterrupt
        return Fake(len(calls))

    monkeypatch.setattr(live_run, "run_live", fake_run_live)
    with pytest.raises(KeyboardInterrupt):
        ranking(5, out_dir=tmp_path, runs=2, sim_runs=2, ccs=("cubic", "tcphas"))
    rep = json.loads((tmp_path / "ranking.json").read_text())
    assert list(rep["runs"]) == ["cubic"]
    cubic = rep["runs"]["cubic"]
    assert [r["switches"] for r in cubic["live_runs"]] == [2, 3] and cubic["live"]["drops"] == 6.5
    assert cubic["live"]["queue_bytes"] == pytest.approx(3000)
    assert len(cubic["sim_runs"]) == 2 and rep["verdicts"]
    assert calls[:2] == [tmp_path / "live-cubic-1", tmp_path / "live-cubic-2"]
    assert not list(tmp_path.glob(".tmp-*"))  # the atomic write left no temporary file


def test_live_check_ranking_reports_every_algorithm_live_and_simulated(live_bpf, tmp_path):
    """`haslab live check --ranking` (the TcpHas/Westwood+/CUBIC comparison of 8 RBB players,
    live and simulated; its numbers are in docs/live.md) runs, here short, with two live runs
    and three simulated ones per algorithm: each algorithm's players stream live over its kernel
    or BPF congestion control, and the simulated numbers are the simulator's own (each run
    deterministic, its players' starts drawn by `sim_starts`). Whether live and
    simulated runs agree depends on the machine's load and on two runs' spread, so the command
    reports it and the test does not assert it."""
    import json

    from haslab.live.checks import RANKING_CCS, ranking_numbers, sim_starts, tcphas_home_dumbbell

    secs, runs, sims = 20, 2, 3
    r = cli("live", "check", "--ranking", "--seconds", secs, "--runs", runs, "--sim-runs", sims,
            "--sim-start-spread-ms", 4, "--json", "-o", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert list(rep["runs"]) == list(RANKING_CCS) and rep["live_runs"] == runs and rep["sim_runs"] == sims
    kernel = {"cubic": "cubic", "westwood+": "haslab_westwood", "tcphas": "haslab_tcphas"}
    for cc, n in rep["runs"].items():
        # the simulated ensemble: run k with the players' starts of sim_starts(k, 4 ms)
        for k, sim in enumerate(n["sim_runs"], 1):
            again = haslab.run(tcphas_home_dumbbell(cc, secs, sim_starts(k, 4_000_000)))
            assert sim == pytest.approx(ranking_numbers(again)), (cc, k)
        assert n["sim"]["switches"] == pytest.approx(sum(x["switches"] for x in n["sim_runs"]) / sims), cc
        assert len(n["live_runs"]) == runs, cc
        for k, live in enumerate(n["live_runs"], 1):
            assert live["players"] == 8 and live["segments"] >= 8, (cc, k, live)
            summary = json.loads((tmp_path / "o" / f"live-{cc}-{k}" / "summary.json").read_text())
            conns = [f for f in summary["flows"] if f.get("player")]
            assert conns and {f["kernel_cc"] for f in conns} == {kernel[cc]}, (cc, k)
        assert n["live"]["switches"] == pytest.approx(sum(x["switches"] for x in n["live_runs"]) / runs), cc
    claims = [v["claim"] for v in rep["verdicts"]]
    assert len(claims) == 2 + 3 * len(RANKING_CCS) and all(isinstance(v["holds"], bool) for v in rep["verdicts"])


def test_kill_9_in_a_player_run_then_up_repairs(live, tmp_path):
    from haslab.live import netns

    scen = tmp_path / "p.toml"
    scen.write_text(TWO_POLICIES.replace("DUR", "60s"))
    p = subprocess.Popen([sys.executable, "-m", "haslab", "live", "run", str(scen), "-o", str(tmp_path / "o"), "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    state = netns.state_dir() / "has" / "players.log"
    wait_until_running(p, state.exists)
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
    assert_repaired_path(tb)
    down = cli("live", "down")
    assert down.returncode == 0, down.stderr
    assert netns.leftovers() == []


def test_dashjs_plays_and_a_loss_burst_shows_in_its_log(live, tmp_path):
    """dash.js (BOLA) in headless Chromium plays 2 minutes of video through a 5 Mbit/s bottleneck;
    its per-segment metrics land in the segments table; a 50 % loss burst of 3 s at 60 s shows as
    retransmissions in the router's pcap around those seconds and as a drop of the level or the
    download throughput of the segments fetched then. The burst lasts 3 s so that it covers a
    download whatever the player's phase: at level 3 it fetches a 2 s segment in about 1.6 s
    every 2 s, and a 1 s burst could fall mostly into the idle gap (one such run here: 6
    retransmissions, the next segment at 0.83 of the steady throughput)."""
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
stop = "63s"
[trace]
queues = ["r1->r2"]
""")
    out = tmp_path / "o"
    singleton_dirs = set(Path(tempfile.gettempdir()).glob("org.chromium.Chromium.*"))
    res = run_live(scen, out_dir=out, dashjs="bola")
    # Chromium's singleton-socket folder does not outlive the run
    assert set(Path(tempfile.gettempdir()).glob("org.chromium.Chromium.*")) <= singleton_dirs
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
    around = sum(burst.get(t, 0) for t in range(59, 66))
    elsewhere = [burst.get(t, 0) for t in range(20, 55)]
    print("retransmissions/s 55..68:", [burst.get(t, 0) for t in range(55, 69)], "max in 20..55:", max(elsewhere))
    assert around >= 3 and around > max(elsewhere), (around, max(elsewhere))
    # ... and in dash.js's own log: a segment fetched after the burst at a lower level, or with
    # a download throughput well below the steady one before it
    before = seg[(seg.request_ns > 20e9) & (seg.done_ns < 59e9)]
    after = seg[(seg.done_ns > 60e9) & (seg.request_ns < 74e9)]
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


def test_real_dashjs_plays_in_place_of_its_port_for_compare(live, tmp_path):
    """`--dashjs-for NAME`: real dash.js takes the place of a simulator port of its rule (its
    hosts, start, congestion control and name), so `haslab compare` pairs the two rows."""
    from haslab.compare import compare
    from haslab.live import dashjs

    missing = dashjs.missing()
    if missing:
        if REQUIRE:
            pytest.fail("HASLAB_REQUIRE_LIVE=1 but dash.js needs: " + "; ".join(missing))
        pytest.skip("dash.js needs: " + "; ".join(missing))
    from haslab.live.run import run_live

    text = """
seed = 2
duration = "40s"
[dumbbell]
pairs = 2
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "100000B"
access_delay = "5ms"
[defaults]
tcp = { sack = true, rack = true }
[[player]]
name = "ours"
client = "right0"
server = "left0"
abr = "rbb"
video = "tcphas"
cc = "newreno"
[[player]]
name = "dj"
client = "right1"
server = "left1"
abr = "dashjs-throughput"
video = "tcphas"
start = "3s"
cc = "cubic"
"""
    scen = tmp_path / "d.toml"
    scen.write_text(text)
    res = run_live(scen, out_dir=tmp_path / "o", dashjs_for="dj")
    players = {p["name"]: p for p in res.summary["players"]}
    assert set(players) == {"ours", "dj"}
    dj = players["dj"]
    print("\ndash.js in place of its port:", {k: dj.get(k) for k in ("segments", "avg_level", "switches", "stalls")})
    assert dj["real_dashjs"] and dj["algorithm"] == "dashjs-throughput" and not dj["errors"], dj
    assert dj["segments"] >= 8
    conns = [f for f in res.summary["flows"] if f.get("player") == "dj"]
    assert conns and all(f["name"].startswith("dj.c") and f["src"] == "left1" and f["kernel_cc"] == "cubic"
                         for f in conns), conns
    seg = res.segments
    mine = seg[seg.player == seg.player.max()]  # dash.js's rows come after our players'
    assert len(mine) == dj["segments"] and mine.request_ns.min() >= 3e9, "it starts at the port's start"
    sim = haslab.run(text)
    rows = {(r.group, r.metric): r for r in compare(sim.summary, res.summary)}
    r = rows[("player dj", "average level")]
    assert r.sim is not None and r.live is not None
