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
