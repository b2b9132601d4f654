"""Cross-traffic, dynamics and presets from Python and the command line: `haslab describe`,
Result.traffic and the `traffic` trace, trace files resolved next to the scenario file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import haslab
from conftest import cli

REPO = Path(__file__).resolve().parents[2]

TCPHAS = 'duration = "5s"\n[preset]\nname = "tcphas-home"\nclients = 8\n'


def test_describe_prints_the_tcphas_network_with_rtt_and_bdp(tmp_path):
    f = tmp_path / "home.toml"
    f.write_text(TCPHAS)
    p = cli("describe", f)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    # header: preset and parameters; all 22 nodes
    assert "preset tcphas-home" in out and "clients=8" in out
    assert "nodes (22)" in out
    # the bottleneck: 8 Mbps, 1-BDP queue of 100 kB; the 100 Mbps / 1000-packet core
    assert "DSLAM->HG" in out and "8 Mbps" in out and "100 kB" in out
    assert "IR->BNG" in out and "1000 pkts" in out
    # each player slot: RTT 100 ms, BDP 100 kB = 66.7 packets, queue/BDP 1
    # (a narrow terminal splits the table into parts that repeat the row names)
    assert sorted(set(re.findall(r"slot player\d+", out))) == [f"slot player{i}" for i in range(8)]
    assert "S7 → C7" in out
    assert "66.7" in out
    # the PPBP generator at 40 Mbps
    assert "ppbp" in out and "40 Mbps" in out


def test_describe_json_has_the_numbers(tmp_path):
    f = tmp_path / "home.toml"
    f.write_text(TCPHAS)
    p = cli("describe", f, "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    slot = d["preset"]["player_slots"][0]
    assert slot["path"]["rtt_ns"] == 100_000_000
    assert slot["path"]["bdp_bytes"] == 100_000
    assert slot["path"]["bottleneck"] == "DSLAM->HG"
    bn = next(l for l in d["links"] if l["name"] == "DSLAM->HG")
    assert bn["rate_bps"] == 8_000_000 and bn["queue"]["limit_bytes"] == 100_000
    assert d == haslab.describe(f)


def test_describe_bad_preset_names_the_field(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('duration = "5s"\n[preset]\nname = "household"\nenvironment = 7\n')
    p = cli("describe", f)
    assert p.returncode == 1
    assert "preset.environment" in p.stderr
    assert "Traceback" not in p.stderr


def test_traffic_results_and_trace():
    r = haslab.run(
        {
            "duration": "6s",
            "node": [{"name": "a"}, {"name": "b"}],
            "link": [{"a": "a", "b": "b", "rate": "100Mbps", "delay": "5ms"}],
            "traffic": [
                {"name": "cbr", "kind": "cbr", "src": "a", "dst": "b", "rate": "1Mbps", "packet": "500B"},
                {"name": "exp", "kind": "onoff", "src": "b", "dst": "a", "rate": "4Mbps", "stop": "5s"},
            ],
        }
    )
    assert list(r.traffic["name"]) == ["cbr", "exp"]
    cbr = r.traffic.set_index("name").loc["cbr"]
    assert cbr["sent_bytes"] == 750_000  # 1 Mbps × 6 s
    assert cbr["received_bytes"] <= cbr["sent_bytes"]
    t = r.traffic_trace
    assert set(t["source_name"].astype(str)) == {"cbr", "exp"}
    per = t.groupby(t["source_name"].astype(str))["bytes"].sum()
    assert per["cbr"] == cbr["received_bytes"]


def test_mahimahi_trace_is_found_next_to_the_scenario_file(tmp_path):
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.trace").write_text("1\n")
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "3s"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n'
        '[[link]]\na = "a"\nb = "b"\nrate = "1Gbps"\n'
        '[[capacity]]\nlink = "a->b"\nmahimahi = "traces/t.trace"\n'
        '[[traffic]]\nkind = "cbr"\nsrc = "a"\ndst = "b"\nrate = "6Mbps"\n'
    )
    d = haslab.validate(f)
    link = next(l for l in d["links"] if l["name"] == "a->b")
    assert link["capacity"]["kind"] == "mahimahi"
    assert link["effective_rate_bps"] == 12_000_000
    r = haslab.run(f)
    assert r.traffic.loc[0, "received_bytes"] > 0
    # from another directory the same text (not the file) cannot find the trace
    with pytest.raises(haslab.ScenarioError, match=r"capacity\[0\]\.mahimahi: cannot read"):
        haslab.validate(f.read_text())


def test_example_scenarios_describe():
    for ex in sorted((REPO / "examples").glob("*.toml")):
        p = cli("describe", ex)
        assert p.returncode == 0, f"{ex.name}: {p.stderr}"
