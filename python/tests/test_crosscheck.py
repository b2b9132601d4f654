"""`haslab crosscheck ns3`: the comparison logic on made-up numbers, the two sides describing the
same scenario, and a quick subset of the matrix against ns-3 3.37.

The ns-3 part is skipped when ns-3 (libns3-dev) is not installed, unless HASLAB_REQUIRE_NS3=1
(CI), where that is a failure. It fails on a cell outside tolerance that
python/haslab/crosscheck_known.toml does not explain.
"""

from __future__ import annotations

import os

import pytest

import haslab
from haslab import crosscheck as xc
from haslab import crosscheck_report as xr

# ---------------------------------------------------------------------------------------------
# comparison logic on made-up numbers


def test_relative_tolerance_marks_the_boundary():
    t = xc.tolerance_for("goodput_mbps")
    assert t.within(7.21, 7.0)  # +3.0 %
    assert t.within(6.79, 7.0)  # −3.0 %
    assert not t.within(7.22, 7.0)
    assert not t.within(6.78, 7.0)
    assert xc.tolerance_for("goodput_last_half_mbps[chunks]") is t
    q = xc.tolerance_for("queue_delay_ms")
    assert q.within(57.5, 50.0) and not q.within(57.6, 50.0)


def test_jain_tolerance_is_absolute():
    t = xc.tolerance_for("jain_last_half")
    assert t.within(0.95, 1.0) and t.within(0.55, 0.5)
    assert not t.within(0.94, 1.0) and not t.within(0.56, 0.5)


def test_counts_get_35_percent_or_two_events():
    t = xc.tolerance_for("drops")
    assert t.within(1350, 1000) and t.within(650, 1000)
    assert not t.within(1351, 1000) and not t.within(649, 1000)
    # few events: ±2 events
    assert t.within(2, 0) and t.within(5, 3) and not t.within(3, 0) and not t.within(6, 3)
    assert not xc.tolerance_for("rtos").within(31, 12)


def test_jain_index():
    assert xc.jain([1, 1, 1, 1]) == pytest.approx(1.0)
    assert xc.jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert xc.jain([3, 1]) == pytest.approx(16 / 20)
    assert xc.jain([]) == 1.0 and xc.jain([0, 0]) == 1.0


def _cell(name="bulk2-cubic-sack-s1"):
    return next(c for c in xc.matrix() if c.name == name)


def _side(**m):
    base = {
        "goodput_mbps": 7.0,
        "goodput_last_half_mbps": 7.0,
        "jain_last_half": 0.99,
        "drops": 100.0,
        "queue_delay_ms": 50.0,
        "retransmits": 100.0,
        "rtos": 2.0,
    }
    base.update(m)
    return {"metrics": base, "flows": []}


def test_compare_marks_each_metric_and_finds_the_explanation():
    cell = _cell()
    known = [
        xc.Known(["bulk*-yeah-*"], ["*"], "design difference", "not this cell"),
        xc.Known(["bulk2-cubic-sack-*"], ["drops", "retransmits"], "ns-3 defect", "made up"),
    ]
    r = xc.compare(cell, _side(drops=200.0, retransmits=200.0, queue_delay_ms=60.0), _side(), known)
    assert r.status == "compared"
    by = {x.metric: x for x in r.rows}
    assert by["goodput_mbps"].within and by["rtos"].within
    assert not by["drops"].within and by["drops"].known == 1
    assert not by["retransmits"].within and by["retransmits"].known == 1
    # queue delay +20 % is outside and no entry covers it
    assert not by["queue_delay_ms"].within and by["queue_delay_ms"].known is None
    assert [x.metric for x in r.unexplained] == ["queue_delay_ms"]
    assert r.verdict == "unexplained"


def test_an_explanation_can_hold_for_one_direction_only():
    cell = _cell()
    known = [xc.Known(["*"], ["rtos"], "design difference", "impatient", when="haslab lower")]
    r = xc.compare(cell, _side(rtos=2.0), _side(rtos=20.0), known)
    assert r.verdict == "explained" and r.rows[-1].known == 0
    r = xc.compare(cell, _side(rtos=20.0), _side(rtos=2.0), known)
    assert r.verdict == "unexplained"


def test_compare_excludes_skips_and_reports_errors():
    cell = _cell()
    excl = [xc.Known(["bulk2-cubic-*"], ["*"], "ns-3 defect", "loop", exclude=True)]
    r = xc.compare(cell, _side(drops=1e6), _side(), excl)
    assert r.status == "excluded" and not r.unexplained and all(x.excluded for x in r.rows)
    # an exclusion of some metrics: those are not compared, the others are
    part = [xc.Known(["bulk2-cubic-*"], ["drops"], "ns-3 defect", "hystart", exclude=True)]
    r = xc.compare(cell, _side(drops=1e6, rtos=50.0), _side(), part)
    assert r.status == "compared" and [x.metric for x in r.unexplained] == ["rtos"]
    assert next(x for x in r.rows if x.metric == "drops").excluded
    r = xc.compare(cell, {"skipped": "transport not available: x"}, _side(), [])
    assert r.status == "skipped" and "transport not available" in r.reason
    r = xc.compare(cell, _side(), {"error": "RuntimeError: boom"}, [])
    assert r.status == "error" and "boom" in r.reason and not r.unexplained


def test_raw_results_keep_both_sides_of_every_cell(tmp_path):
    # `--json`: what the report is computed from, cell by cell, readable again
    import json

    cell = _cell()
    results = [xc.compare(cell, _side(rtos=30.0), _side(), []), xc.compare(_cell("bulk2-newreno-sack-s1"), {"skipped": "why"}, _side(), [])]
    path = tmp_path / "sub" / "raw.json"
    xc.write_raw(results, path)
    doc = json.loads(path.read_text())
    assert doc["reference"] == "ns-3" and len(doc["cells"]) == 2
    c0, c1 = doc["cells"]
    assert c0["name"] == cell.name and c0["seed"] == cell.seed and c0["starts_ns"] == cell.starts_ns()
    assert c0["haslab"]["metrics"]["rtos"] == 30.0 and c0["reference"]["metrics"] == _side()["metrics"]
    assert c0["verdict"] == results[0].verdict and c1["verdict"] == "skipped" and c1["haslab"] == {"skipped": "why"}
    # `--from-json`: the same cells judged again, here against a known difference that now
    # explains the RTOs
    again = xc.read_raw(path, [], [cell])
    assert [x.metric for x in again[0].unexplained] == [x.metric for x in results[0].unexplained] == ["rtos"]
    k = [xc.Known([cell.group + "-*"], ["rtos"], "design difference", "why")]
    assert xc.read_raw(path, k, [cell])[0].verdict == "explained"
    with pytest.raises(xc.CrosscheckError, match="none of the selected cells"):
        xc.read_raw(path, [], [_cell("bulk1-cubic-sack-s1")])


def test_a_transport_missing_from_the_build_skips_the_cell():
    cell = _cell("bulk1-ns3-newreno-sack-s1")
    assert cell.haslab_transport == "ns3-newreno" and cell.ns3_cc == "TcpNewReno"
    assert xc.haslab_available(cell, {"transports": [{"name": "cubic-tlp"}]}) == (
        "transport not available: ns3-newreno"
    )
    assert xc.haslab_available(cell, {"transports": [{"name": "ns3-newreno"}]}) is None
    assert xc.haslab_available(_cell(), {"transports": []}) is None
    per_ack = _cell("bulk1-westwood+-per-ack-sack-s1")
    assert xc.haslab_available(per_ack, {"tcp_options": [{"name": "sack"}]}) == (
        "[flow.tcp] option not available: cwnd_growth"
    )
    assert xc.haslab_scenario(per_ack)["flow"][0]["tcp"]["cwnd_growth"] == "per-ack"


def test_the_ns3_westwood_cells_run_ns3s_class_on_the_haslab_side():
    """`westwood+-ns3` is ns-3's TcpWestwood (WestwoodPlus) like with like: ns-3's estimator fed by
    ns-3's PktsAcked calls, per-ACK growth, on top of the common ns-3 settings; the scenario is valid."""
    import haslab

    cell = _cell("bulk2-westwood+-ns3-sack-s1")
    assert cell.ns3_cc == "TcpWestwoodPlus"
    flow = xc.haslab_scenario(cell)["flow"][0]
    assert flow["cc"] == {"algorithm": "westwood+", "estimator": "ns3"}
    assert flow["tcp"]["ca_sample"] == "ns3" and flow["tcp"]["cwnd_growth"] == "per-ack"
    assert flow["tcp"]["growth_count"] == "cumulative"
    haslab.validate(xc.haslab_scenario(cell))


def test_known_file_loads_and_bad_entries_name_the_field(tmp_path):
    known = xc.load_known()
    for k in known:
        assert k.kind in xc.KINDS and k.explanation
        assert any(k.matches(c.name) for c in xc.matrix()), f"{k.cells} matches no cell"
    bad = tmp_path / "k.toml"
    bad.write_text('[[difference]]\ncells = "*"\nkind = "bug"\nexplanation = "x"\n')
    with pytest.raises(xc.CrosscheckError, match=r"difference\[0\]\.kind"):
        xc.load_known(bad)
    bad.write_text('[[difference]]\ncells = "*"\nkind = "ns-3 defect"\n')
    with pytest.raises(xc.CrosscheckError, match=r"difference\[0\]\.explanation: required"):
        xc.load_known(bad)
    bad.write_text('[[difference]]\ncells = "*"\nkind = "ns-3 defect"\nexplanation = "x"\nwhen = "up"\n')
    with pytest.raises(xc.CrosscheckError, match=r"difference\[0\]\.when"):
        xc.load_known(bad)


# ---------------------------------------------------------------------------------------------
# the matrix and the two descriptions of a cell


def test_matrix_holds_the_required_cells():
    cells = xc.matrix()
    names = {c.name for c in cells}
    assert len(names) == len(cells)
    for n in (1, 2, 4, 8):
        for cc in ("newreno", "ns3-newreno", "cubic", "westwood+", "yeah", "illinois"):
            for sack in ("sack", "nosack"):
                for seed in (1, 2, 3):
                    assert f"bulk{n}-{cc}-{sack}-s{seed}" in names
    assert {"chunk-newreno-sack-s1", "chunk+bulk-newreno-nosack-s3"} <= names
    assert set(xc.QUICK) <= names and len(xc.matrix(quick=True)) == len(xc.QUICK)
    pairs = {(c.haslab_cc, c.haslab_transport, c.ns3_cc) for c in cells}
    assert ("newreno", None, "TcpLinuxReno") in pairs and (None, "ns3-newreno", "TcpNewReno") in pairs


def test_both_sides_get_the_same_scenario():
    for cell in [_cell("chunk+bulk-newreno-nosack-s2"), _cell("bulk8-cubic-sack-s3")]:
        scen = xc.haslab_scenario(cell)
        args = dict(a[2:].split("=", 1) for a in xc.ns3_args(cell))
        plan = haslab.validate(scen)  # a valid haslab scenario
        assert plan["seed"] == cell.seed
        d = scen["dumbbell"]
        assert int(args["pairs"]) == d["pairs"] == len(cell.flows)
        assert f"{args['bottleneckRateBps']}bps" == d["bottleneck_rate"]
        assert f"{args['bottleneckQueuePkts']}pkts" == d["bottleneck_queue"]
        assert f"{args['accessDelayNs']}ns" == d["access_delay"]
        ns3_flows = [f.split(":") for f in args["flows"].split(";")]
        assert len(ns3_flows) == len(scen["flow"])
        for f, spec in zip(scen["flow"], ns3_flows):
            assert spec[0] == f["app"] and f"{spec[2]}ns" == f["start"]
            if f["app"] == "chunks":
                assert f"{spec[3]}B" == f["chunk"] and f"{spec[4]}ns" == f["interval"]
            tcp = f["tcp"]
            assert int(args["segmentSize"]) == tcp["mss"]
            assert f"{args['minRtoNs']}ns" == tcp["min_rto"]
            assert f"{args['delAckTimeoutNs']}ns" == tcp["delayed_ack_timeout"]
            assert int(args["initialCwnd"]) == tcp["initial_cwnd"]
            assert (args["sack"] == "1") == tcp["sack"] == cell.sack
            assert (args["recovery"] == "TcpPrrRecovery") == (tcp["recovery"] == "prr")
            assert f"{args['rcvBufBytes']}B" == tcp["rwnd"]
    # seeds move the start times, the same on both sides
    assert _cell("bulk4-cubic-sack-s1").starts_ns() != _cell("bulk4-cubic-sack-s2").starts_ns()


# ---------------------------------------------------------------------------------------------
# the quick subset against ns-3


@pytest.fixture(scope="module")
def ns3_binary():
    binary, why = xc.ns3_status()
    if binary is None:
        if os.environ.get("HASLAB_REQUIRE_NS3") == "1":
            pytest.fail(f"ns-3 is required (HASLAB_REQUIRE_NS3=1) but not available: {why}")
        pytest.skip(f"ns-3 not available: {why}")
    return binary


def test_quick_cells_agree_with_ns3_or_are_explained(ns3_binary):
    results = xc.run_cells(xc.matrix(quick=True), jobs=2)
    assert [r.cell.name for r in results] == xc.QUICK
    problems = []
    statuses = {r.cell.name: r.status for r in results}
    assert statuses["bulk1-illinois-sack-s1"] == "excluded"  # the ns-3 Illinois defect
    for r in results:
        if r.status == "error":
            problems.append(f"{r.cell.name}: {r.reason}")
        for x in r.unexplained:
            problems.append(f"{r.cell.name}: {x.metric} haslab {x.haslab:.4g} vs ns-3 {x.ns3:.4g}")
    assert not problems, "outside tolerance without a known difference:\n" + "\n".join(problems)
    # the cells ran: bulk flows fill the link on both sides
    for r in results:
        if r.rows:
            for side in (r.ns3, r.haslab):
                assert 5.0 < side["metrics"]["goodput_mbps"] <= 8.0, (r.cell.name, side["metrics"])


# ---------------------------------------------------------------------------------------------
# `haslab crosscheck linux`: the cells are scenarios live mode accepts


def test_linux_cells_are_scenarios_live_mode_reproduces():
    from haslab import crosscheck_linux as xl
    from haslab.live.config import from_plan

    cells = xl.matrix()
    assert {c.name for c in xl.matrix(quick=True)} <= {c.name for c in cells}
    for c in cells:
        s = xl.scenario(c)
        cfg = from_plan(haslab.validate(s))  # raises LiveUnsupported for anything the kernel cannot do
        assert [f.kernel_cc for f in cfg.flows] == [c.ns3_cc] * len(c.flows)
        tcp = s["flow"][0]["tcp"]
        assert tcp["sack"] == tcp["tlp"] == c.sack and tcp["rto_formula"] == "linux"
    assert xc.load_known(xl.KNOWN_FILE) is not None


def test_time_mean_queue_delay_weights_by_time():
    import pandas as pd

    from haslab import crosscheck_linux as xl

    class R:
        traces = {"queue": pd.DataFrame({"time_ns": [0, 10, 30], "bytes": [0, 1000, 0]})}

    # 1000 B for 20 of 40 ns at 8 kbit/s (1 ms per byte): mean 500 B = 0.5 s
    assert xl._time_mean_queue_delay_ns(R(), 8000, 40) == pytest.approx(0.5e9)


def test_cli_rejects_bad_arguments_with_a_message():
    from conftest import cli

    p = cli("crosscheck", "ns3", "--cells", "no-such-cell")
    assert p.returncode == 1 and "matches no cell" in p.stderr
    p = cli("crosscheck", "ns3", "out.md")
    assert p.returncode == 1 and "--report" in p.stderr
    p = cli("crosscheck", "linux", "--cells", "bulk*")
    assert p.returncode == 1 and "linux-bulk2-cubic-sack-s1" in p.stderr


def test_crosscheck_linux_judges_an_earlier_json_again(tmp_path):
    # `haslab crosscheck linux --from-json`: no live run; the cells found in the file are judged
    # against the current known differences, and the exit code says whether any is unexplained
    import subprocess
    import sys

    from haslab import crosscheck_linux as xl

    cell = next(c for c in xl.matrix() if c.name == "linux-bulk1-newreno-sack-s1")
    within = xc.compare(cell, _side(), _side(), [])
    outside = xc.compare(cell, _side(rtos=30.0), _side(), [])
    for results, code in (([within], 0), ([outside], 1)):
        path = tmp_path / f"raw{code}.json"
        xc.write_raw(results, path, reference="Linux", kernel="9.9.9-elsewhere")
        p = subprocess.run(
            [sys.executable, "-m", "haslab.cli", "crosscheck", "linux", "--from-json", str(path),
             "--cells", cell.name, "--report", str(tmp_path / f"r{code}.md")],
            capture_output=True, text=True,
        )
        assert p.returncode == code, p.stderr
        report = (tmp_path / f"r{code}.md").read_text()
        assert cell.name in report
        assert ("unexplained" in report.split("## Every cell")[1]) == (code == 1)
        # the report names the kernel that gave the file's reference side, not this machine's
        assert "9.9.9-elsewhere" in report and "--from-json" in report
        assert os.uname().release not in report


def test_the_linux_report_says_how_the_testbed_kept_time(tmp_path):
    from haslab import crosscheck_linux as xl

    cell = next(c for c in xl.matrix() if c.name == "linux-bulk1-newreno-sack-s1")
    live = {"delay_box": {"fwd": {"p50": 40_000, "p99": 300_000}, "rev": {"p50": 60_000, "p99": 2_500_000}},
            "cpu": {"busy": 0.6, "softirq": 0.1, "steal": 0.031}, "load": [0.5, 0.4, 0.3]}
    bed = xl.testbed_of(live)
    # the worse of the two directions
    assert bed["delay_box_p50_ms"] == 0.06 and bed["delay_box_p99_ms"] == 2.5 and bed["load1"] == 0.5
    kernel = dict(_side(), testbed=bed)
    r = xc.compare(cell, _side(), kernel, [])
    text = "\n".join(xl.testbed_text([r]))
    assert "at most 2.50 ms" in text and "3.1 %" in text and "over the 1 kernel run (" in text
    # kept in the --json file, so that a report judged again from it says the same
    xc.write_raw([r], tmp_path / "raw.json", reference="Linux")
    again = xc.read_raw(tmp_path / "raw.json", [], [cell])
    assert xl.testbed_text(again) == xl.testbed_text([r])
    # a file from before the testbed was recorded says so
    assert "does not record" in xl.testbed_text([xc.compare(cell, _side(), _side(), [])])[0]


def test_more_seeds_compare_the_two_distributions():
    # `--seeds N`: N cells per group, and each group's mean ± sd on both sides
    cells = xc.matrix(seeds=range(1, 6))
    groups = {}
    for c in cells:
        groups.setdefault(c.group, []).append(c.seed)
    assert all(sorted(s) == [1, 2, 3, 4, 5] for s in groups.values())
    assert len(cells) == len(xc.matrix(seeds=[1])) * 5
    group = [c for c in cells if c.group == "bulk2-newreno-sack"]
    rtos = [2.0, 4.0, 6.0, 8.0, 10.0]
    results = [xc.compare(c, _side(rtos=r), _side(rtos=3.0), []) for c, r in zip(group, rtos)]
    n, hm, hs, nm, ns = xr.seed_spread(results)["bulk2-newreno-sack"]["rtos"]
    assert (n, hm, nm, ns) == (5, 6.0, 3.0, 0.0)
    assert hs == pytest.approx(3.1623, abs=1e-4)  # sample sd of 2, 4, 6, 8, 10


def test_seed_spread_explains_a_seed_only_when_the_group_means_agree():
    group = [c for c in xc.matrix(seeds=range(1, 6)) if c.group == "bulk2-newreno-sack"]
    known = [xc.Known(["bulk2-newreno-sack-s5"], ["rtos"], "design difference", "made up")]

    def judge(ours, theirs, cells=group):
        return xc.mark_seed_spread(
            [xc.compare(c, _side(rtos=h), _side(rtos=n), known) for c, h, n in zip(cells, ours, theirs)])

    # means 6.8 and 6 agree: seeds 1 (2 vs 6) and 4, 5 (10 vs 6) are outside ±35 % (at least ±2 RTOs);
    # seed 5 is explained by its known difference first, the others by the spread
    r = judge([2.0, 6.0, 6.0, 10.0, 10.0], [6.0] * 5)
    assert [x.verdict for x in r] == ["explained", "within", "within", "explained", "explained"]
    rows = [next(x for x in c.rows if x.metric == "rtos") for c in r]
    assert [x.spread for x in rows] == [True, False, False, True, False] and rows[4].known == 0
    assert not any(c.unexplained for c in r)
    # means 8.8 and 6: outside; the seeds outside stay unexplained
    r = judge([10.0, 10.0, 10.0, 10.0, 4.0], [6.0] * 5)
    assert [x.verdict for x in r] == ["unexplained"] * 4 + ["within"]
    # fewer than SPREAD_MIN_SEEDS compared seeds: each seed on its own
    r = judge([2.0, 6.0, 10.0, 6.0], [6.0] * 4, cells=group[:4])
    assert xc.SPREAD_MIN_SEEDS == 5 and [x.verdict for x in r] == ["unexplained", "within", "unexplained", "within"]


def test_seeds_are_not_for_the_quick_subset():
    from typer.testing import CliRunner

    from haslab.cli import app

    r = CliRunner().invoke(app, ["crosscheck", "ns3", "--quick", "--seeds", "5"])
    assert r.exit_code != 0 and "--seeds" in r.output


def test_resimulate_replaces_only_our_side(tmp_path):
    # `--from-json FILE --resimulate`: haslab's side is run again, the reference side is the file's
    cell = _cell()
    path = tmp_path / "raw.json"
    xc.write_raw([xc.compare(cell, _side(rtos=30.0), _side(), [])], path)
    assert xc.read_raw(path, [], [cell])[0].verdict == "unexplained"
    again = xc.read_raw(path, [], [cell], resimulate=lambda c: _side(rtos=2.0))
    assert again[0].verdict == "within"
    worse = xc.read_raw(path, [], [cell], resimulate=lambda c: _side(drops=900.0))
    assert [x.metric for x in worse[0].unexplained] == ["drops"]
