"""`haslab bench --scale` and `--vs-ns3`: the measurements are those of the scenario they name
(flow count, rate, a busy bottleneck), and the ns-3 comparison runs the same number of events on
the haslab side as a plain `haslab run` of that scenario."""

from __future__ import annotations

import json
import os

import pytest

from conftest import cli


def test_scale_reports_the_case_it_ran():
    p = cli("bench", "--scale", "50", "--scale-duration", "0.2s", "--json")
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout.strip().splitlines()[-1])
    assert m["flows"] == 50
    assert m["case"] == "scale50"
    # about one event per packet per hop (links in the scheduled form: net/link.rs), fewer than the
    # link transmissions when many packets are still propagating at the end of a short run
    assert m["link_transmissions"] > 0 and m["events"] > m["link_transmissions"] // 2
    # 50 flows on 10 Gbps for 0.2 s: slow start fills a good part of the bottleneck
    assert 0.05 < m["bottleneck_utilization"] <= 1.0
    assert m["peak_rss_mib"] >= m["built_rss_mib"] >= m["base_rss_mib"] > 0


def test_scale_and_reps_reject_nonsense():
    p = cli("bench", "--scale", "0")
    assert p.returncode == 1 and "--scale 0" in p.stderr
    p = cli("bench", "--vs-ns3", "--reps", "0")
    assert p.returncode == 1 and "--reps 0" in p.stderr


def test_vs_ns3_runs_the_crosscheck_scenario_on_both_sides(tmp_path):
    from haslab import crosscheck as cc

    binary, why = cc.ns3_status()
    if binary is None:
        if os.environ.get("HASLAB_REQUIRE_NS3") == "1":
            pytest.fail(f"ns-3 is required (HASLAB_REQUIRE_NS3=1) but not available: {why}")
        pytest.skip(f"ns-3: {why}")
    p = cli("bench", "--vs-ns3", "--reps", "1", "--json")
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout.strip().splitlines()[-1])
    # (wall-clock times are reported, not compared: CI runs on a busy machine)
    assert m["ratio_ns3_to_haslab_core"] == pytest.approx(m["ns3_seconds"] / m["haslab_core_seconds"])
    # the core run is the crosscheck's bulk8 NewReno cell: the same events as haslab run of it
    label, haslab_cc, transport, ns3_cc, tcp, *params = cc.CCS[0]
    cell = cc.Cell("b", 1, (cc.FlowDef("bulk"),) * 8, False, ns3_cc, haslab_cc, transport, tcp, *params)
    scenario = tmp_path / "bulk8.json"
    scenario.write_text(json.dumps(cc.haslab_scenario(cell)))
    r = cli("run", scenario, "-o", tmp_path / "out", "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["events"] == m["events"]
