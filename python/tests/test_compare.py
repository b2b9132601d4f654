"""`haslab compare SIM_DIR LIVE_DIR` on two small result directories."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import haslab
from haslab.cli import app
from haslab.compare import compare_dirs

SCENARIO = """
seed = 3
duration = "20s"
[dumbbell]
pairs = 2
bottleneck_rate = "4Mbps"
bottleneck_delay = "20ms"
bottleneck_queue = "30pkts"
[[player]]
name = "p{i}"
count = 2
client = "right{i}"
server = "left{i}"
abr = "rbb"
video = "tcphas"
cc = "CC"
[trace]
queues = ["r1->r2"]
"""


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("cmp")
    out = {}
    for cc in ("newreno", "tcphas"):
        res = haslab.run(SCENARIO.replace("CC", cc))
        d = base / cc
        res.save(d)
        out[cc] = d
    return out


def test_rows_are_the_differences_of_the_two_summaries(dirs):
    a = json.loads((dirs["newreno"] / "summary.json").read_text())
    b = json.loads((dirs["tcphas"] / "summary.json").read_text())
    rows = compare_dirs(dirs["newreno"], dirs["tcphas"])
    by = {(r.group, r.metric): r for r in rows}
    for p in ("p0", "p1"):
        sa = next(x for x in a["players"] if x["name"] == p)
        sb = next(x for x in b["players"] if x["name"] == p)
        r = by[(f"player {p}", "switches")]
        assert (r.sim, r.live) == (sa["switches"], sb["switches"])
        assert r.diff == sb["switches"] - sa["switches"]
        g = by[(f"player {p}", "goodput (bit/s)")]
        assert g.diff == pytest.approx(sb["goodput_bps"] - sa["goodput_bps"])
    mean = by[("players (mean)", "average level")]
    assert mean.sim == pytest.approx(sum(x["avg_level"] for x in a["players"]) / 2)
    drops = by[("link r1->r2", "drops")]
    la = next(l for l in a["links"] if l["name"] == "r1->r2")
    assert drops.sim == la["dropped_packets"]
    assert not any(r.group.startswith("flow p") for r in rows), "player connections are not listed as flows"


def test_the_cli_prints_the_table_and_rejects_a_missing_dir(dirs, tmp_path):
    r = CliRunner().invoke(app, ["compare", str(dirs["newreno"]), str(dirs["tcphas"]), "--players"])
    assert r.exit_code == 0, r.output
    for word in ("switches", "stalls", "drops", "goodput", "live − sim"):
        assert word in r.output
    bad = CliRunner().invoke(app, ["compare", str(dirs["newreno"]), str(tmp_path / "nothing")])
    assert bad.exit_code == 1
    assert "summary.json" in bad.output


def test_pairs_compare_players_of_different_names(dirs):
    a = json.loads((dirs["newreno"] / "summary.json").read_text())
    b = json.loads((dirs["tcphas"] / "summary.json").read_text())
    rows = compare_dirs(dirs["newreno"], dirs["tcphas"], {"p0": "p1"})
    by = {(r.group, r.metric): r for r in rows}
    sa = next(x for x in a["players"] if x["name"] == "p0")
    sb = next(x for x in b["players"] if x["name"] == "p1")
    r = by[("player p0=p1", "goodput (bit/s)")]
    assert (r.sim, r.live) == (pytest.approx(sa["goodput_bps"]), pytest.approx(sb["goodput_bps"]))
    # p1 of the live side is taken by the pair: the sim's p1 has no partner left
    assert ("player p1", "goodput (bit/s)") not in by
    with pytest.raises(ValueError, match="no player 'x'"):
        compare_dirs(dirs["newreno"], dirs["tcphas"], {"p0": "x"})
    r = CliRunner().invoke(app, ["compare", str(dirs["newreno"]), str(dirs["tcphas"]), "--pair", "p0"])
    assert r.exit_code == 1 and "SIM=LIVE" in r.output


DASHJS_SCENARIO = """
seed = 3
duration = "20s"
[dumbbell]
pairs = 2
bottleneck_rate = "4Mbps"
bottleneck_delay = "20ms"
bottleneck_queue = "30pkts"
[[player]]
name = "ours"
client = "right0"
server = "left0"
abr = "rbb"
video = "tcphas"
[[player]]
name = "port"
client = "right1"
server = "left1"
abr = ABR
video = "tcphas"
start = "3s"
cc = "cubic"
"""


def test_real_dashjs_takes_the_place_of_its_port():
    from haslab.live import LiveUnsupported
    from haslab.live.run import dashjs_in_place_of

    data, _, dj = dashjs_in_place_of(DASHJS_SCENARIO.replace("ABR", '"dashjs-bola"'), "port")
    assert [p["name"] for p in data["player"]] == ["ours"]  # the port is gone, the rest stays
    haslab.validate(data)
    assert (dj["abr"], dj["host"], dj["name"], dj["start_ns"], dj["kernel_cc"]) == ("bola", 1, "port", 3 * 10**9,
                                                                                     "cubic")
    assert dj["ladder"] == haslab.validate(DASHJS_SCENARIO.replace("ABR", '"rbb"'))["players"][1]["bitrates_bps"]
    with pytest.raises(LiveUnsupported, match="port of one of its rules"):
        dashjs_in_place_of(DASHJS_SCENARIO.replace("ABR", '"bola"'), "port")
    with pytest.raises(LiveUnsupported, match="no such player"):
        dashjs_in_place_of(DASHJS_SCENARIO.replace("ABR", '"dashjs-bola"'), "nobody")
    with pytest.raises(LiveUnsupported, match="abandon_requests_rule"):
        dashjs_in_place_of(DASHJS_SCENARIO.replace(
            "ABR", '{ algorithm = "dashjs-throughput", abandon_requests_rule = false }'), "port")
