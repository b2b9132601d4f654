"""HAS players from Python: Result.players (per second), Result.segments (per segment), the
per-player summary, Parquet round trips, the CLI table and the level-and-buffer figure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import haslab
from conftest import cli

REPO = Path(__file__).resolve().parents[2]


def has_dict(duration: str = "30s", players: int = 2, abr: str = "panda") -> dict:
    return {
        "seed": 3,
        "duration": duration,
        "dumbbell": {
            "pairs": players,
            "bottleneck_rate": "4Mbps",
            "bottleneck_delay": "20ms",
            "bottleneck_queue": "40pkts",
            "access_rate": "100Mbps",
        },
        "player": [
            {
                "name": "p{i}",
                "count": players,
                "client": "right{i}",
                "server": "left{i}",
                "abr": abr,
                "video": {"preset": "tcphas", "duration": "60s"},
            }
        ],
    }


@pytest.fixture(scope="module")
def has_run():
    return haslab.run(has_dict())


def test_players_is_one_row_per_player_and_second(has_run):
    df = has_run.players
    assert set(df["player_name"].astype(str)) == {"p0", "p1"}
    for _, d in df.groupby("player_name", observed=True):
        t = d["time_ns"].to_numpy()
        assert (np.diff(t) == 1_000_000_000).all(), "one sample per whole second"
        assert t[0] == 0
    assert {"level", "bitrate_bps", "buffer_s", "phase", "optimal_level"} <= set(df.columns)
    assert df["level"].between(0, 4).all()
    # the bitrate column is the ladder value of the level
    ladder = np.array([248_000, 456_000, 928_000, 1_632_000, 4_256_000])
    assert (ladder[df["level"].to_numpy()] == df["bitrate_bps"].to_numpy()).all()


def test_segments_log_each_download_with_its_timing(has_run):
    seg = has_run.segments
    summary = has_run.player_summary.set_index("name")
    for name, d in seg.groupby("player_name", observed=True):
        assert len(d) == summary.loc[name, "segments"]
        assert (d["index"].to_numpy() == np.arange(len(d))).all(), "segments in order"
        assert (d["done_ns"] > d["request_ns"]).all()
        # throughput = bytes × 8 / download time
        thr = d["bytes"] * 8e9 / d["download_ns"]
        assert np.allclose(thr, d["throughput_bps"])
        # a request is issued after the previous segment arrived (one at a time)
        assert (d["request_ns"].to_numpy()[1:] >= d["done_ns"].to_numpy()[:-1]).all()
        assert d["flow_name"].astype(str).str.startswith(f"{name}.c").all()
        # first byte between request and last byte; ttfb = request → first byte
        assert ((d["request_ns"] <= d["first_byte_ns"]) & (d["first_byte_ns"] <= d["done_ns"])).all()
        assert (d["ttfb_ns"] == d["first_byte_ns"] - d["request_ns"]).all()
    # media conservation, from the summary
    for _, p in has_run.player_summary.iterrows():
        assert p["downloaded_ns"] == p["played_ns"] + p["buffered_ns"] + p["discarded_ns"]


def test_results_save_and_read_back(has_run, tmp_path):
    written = {p.name for p in has_run.save(tmp_path)}
    assert {"players.parquet", "segments.parquet", "summary.json"} <= written
    back = pd.read_parquet(tmp_path / "segments.parquet")
    assert len(back) == len(has_run.segments)
    assert list(back["player_name"].astype(str)) == list(has_run.segments["player_name"].astype(str))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [p["name"] for p in summary["players"]] == ["p0", "p1"]
    assert 0 < summary["has"]["jain_bitrate"] <= 1


def test_a_run_without_players_has_empty_player_tables(short_demo):
    assert short_demo.players.empty
    assert short_demo.segments.empty
    assert short_demo.player_summary.empty


def test_validate_describes_players():
    plan = haslab.validate(has_dict())
    assert [p["name"] for p in plan["players"]] == ["p0", "p1"]
    assert plan["players"][0]["bitrates_bps"][-1] == 4_256_000
    with pytest.raises(haslab.ScenarioError, match=r"player\[0\]\.abr"):
        d = has_dict()
        d["player"][0]["abr"] = "nope"
        haslab.validate(d)


def _toml(d: dict) -> str:
    # a tiny TOML writer for these dicts (strings, numbers, tables and arrays of tables)
    def val(v):
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        return str(v)

    lines = [f"{k} = {val(v)}" for k, v in d.items() if not isinstance(v, (dict, list))]
    for k, v in d.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{a} = {val(b)}" for a, b in v.items()]
        elif isinstance(v, list):
            for item in v:
                lines.append(f"[[{k}]]")
                lines += [f"{a} = {val(b)}" for a, b in item.items()]
    return "\n".join(lines) + "\n"


def test_mpd_paths_resolve_from_the_scenario_folder(tmp_path):
    (tmp_path / "v.mpd").write_text((REPO / "examples/bbb_2s.mpd").read_text())
    d = has_dict("10s", players=1)
    d["player"][0]["video"] = {"mpd": "v.mpd"}
    path = tmp_path / "s.toml"
    path.write_text(_toml(d))
    r = haslab.run(path)
    assert r.player("p0")["video"].endswith("v.mpd")
    assert len(r.segments) > 0
    with pytest.raises(haslab.ScenarioError, match=r"player\[0\]\.video\.mpd: cannot read MPD file"):
        haslab.validate(_toml(d))  # a string: relative to the working directory, where it is not


def test_cli_run_prints_a_table_per_player_and_writes_the_figure(tmp_path):
    path = tmp_path / "has.toml"
    path.write_text(_toml(has_dict("20s", players=3, abr="bba")))
    out = tmp_path / "out"
    p = cli("run", path, "--out", out)
    assert p.returncode == 0, p.stderr
    assert "Players" in p.stdout
    summary = json.loads((out / "summary.json").read_text())
    for pl in summary["players"]:
        assert pl["name"] in p.stdout
        # the table shows each player's average bitrate in kbps
        assert f"{pl['avg_bitrate_bps'] / 1e3:.0f}" in p.stdout
    assert "Jain" in p.stdout
    png = out / "players.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ("players.parquet", "segments.parquet"):
        assert (out / name).is_file()


def test_cli_validate_mentions_players(tmp_path):
    path = tmp_path / "has.toml"
    path.write_text(_toml(has_dict("20s", players=2)))
    p = cli("validate", path)
    assert p.returncode == 0, p.stderr
    assert "2 players (panda)" in p.stdout


def test_level_and_buffer_figure_per_player(has_run, tmp_path):
    from haslab.plots import level_and_buffer

    png = tmp_path / "lb.png"
    level_and_buffer(has_run, png, players=["p1"])
    assert png.stat().st_size > 5_000
    with pytest.raises(KeyError, match="no player 'zz'"):
        level_and_buffer(has_run, tmp_path / "x.png", players=["zz"])


def test_the_example_scenario_runs(tmp_path):
    r = haslab.run(REPO / "examples/has.toml")
    assert len(r.player_summary) == 9
    dash = r.player("dash")
    assert dash["connections"] == 4
    assert dash["stop_ns"] == 80_000_000_000
    assert dash["buffered_ns"] == 0


def test_the_comparison_players_are_listed_and_run():
    """`haslab abr --json` lists every player with its defaults; each new one runs from Python,
    and an abandoning player's abandonments are a table whose rows lower the level."""
    res = cli("abr", "--json")
    assert res.returncode == 0, res.stderr
    names = [p["name"] for p in json.loads(res.stdout)]
    new = ["bola-e", "dashjs-throughput", "dashjs-bola", "dashjs-dynamic", "robustmpc", "fastmpc"]
    assert set(new) <= set(names)
    bolae = next(p for p in json.loads(res.stdout) if p["name"] == "bola-e")
    assert bolae["parameters"]["variant"] == "u"
    abandons = []
    for abr in new:
        r = haslab.run(has_dict(duration="40s", players=2, abr=abr))
        assert len(r.segments) > 5, abr
        assert set(r.player_summary["algorithm"]) == {abr}
        abandons.append(r.abandons)
    a = pd.concat(abandons)
    # the dashjs-bola player abandons a download here (dash.js's AbandonRequestsRule; the other
    # players need not)
    assert len(a) >= 1
    assert (a["to_level"] < a["level"]).all() and (a["bytes_loaded"] < a["bytes_total"]).all()
    assert (a["abandon_ns"] > a["request_ns"]).all()
