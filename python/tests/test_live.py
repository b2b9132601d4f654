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


def test_players_are_not_yet_supported(tmp_path):
    plan = haslab.validate(dumbbell())
    plan["players"] = [{"name": "p0"}]
    with pytest.raises(LiveUnsupported, match="not yet supported in live mode"):
        from_plan(plan)
    scen = tmp_path / "p.toml"
    scen.write_text(dumbbell() + '\n[[player]]\nname = "p0"\n')
    r = cli("live", "run", scen, "-o", tmp_path / "o")
    assert r.returncode == 1
    assert "not yet supported in live mode" in r.stderr
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
    assert "haslab-r1" in st.stdout
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
