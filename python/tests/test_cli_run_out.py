"""`haslab run` and its output directory: a used directory is refused (results of two runs side
by side mislead) unless --force, which removes only what the earlier run wrote; the printed
queuing-delay percentile has the precision of the histogram it comes from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import haslab
from haslab.tables import histogram_ms
from conftest import cli, demo_toml

HAS_TOML = """\
seed = 3
duration = "10s"
[dumbbell]
pairs = 1
bottleneck_rate = "4Mbps"
bottleneck_delay = "20ms"
bottleneck_queue = "40pkts"
access_rate = "100Mbps"
[[player]]
name = "p"
client = "right0"
server = "left0"
abr = "panda"
video = { preset = "tcphas", duration = "60s" }
"""


def test_a_used_out_dir_is_refused_and_force_removes_only_the_previous_run(tmp_path):
    has = tmp_path / "has.toml"
    has.write_text(HAS_TOML)
    bulk = tmp_path / "bulk.toml"
    bulk.write_text(demo_toml("2s"))
    out = tmp_path / "out"
    p = cli("run", has, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert {"players.parquet", "segments.parquet", "players.png", "summary.json"} <= {x.name for x in out.iterdir()}
    (out / "notes.txt").write_text("mine")

    # a second run into the same directory is refused before it runs, naming the way out
    before = {x.name: x.stat().st_mtime_ns for x in out.iterdir()}
    p = cli("run", bulk, "--out", out, "--quiet")
    assert p.returncode == 1
    assert "not empty" in p.stderr and "--force" in p.stderr and "Traceback" not in p.stderr
    assert {x.name: x.stat().st_mtime_ns for x in out.iterdir()} == before

    # --force: the previous run's files go (players.* included), the user's file stays
    p = cli("run", bulk, "--out", out, "--force")
    assert p.returncode == 0, p.stderr
    assert re.search(r"removed \d+ file\(s\) of the previous run", p.stderr), p.stderr
    names = {x.name for x in out.iterdir()}
    assert "notes.txt" in names
    assert not names & {"players.parquet", "segments.parquet", "players.png"}, names
    summary = json.loads((out / "summary.json").read_text())
    assert "players" not in summary or not summary["players"]
    # what the run lists as written is exactly what is there besides the user's file
    manifest = (out / ".haslab-run").read_text().split()
    assert set(manifest) == names - {"notes.txt", ".haslab-run"}


def test_an_empty_or_missing_out_dir_is_fine(tmp_path):
    bulk = tmp_path / "bulk.toml"
    bulk.write_text(demo_toml("1s"))
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "missing" / "deep"):
        p = cli("run", bulk, "--out", out, "--quiet")
        assert p.returncode == 0, p.stderr
        assert (out / "summary.json").is_file()


def test_queue_delay_percentiles_print_the_precision_of_their_histogram():
    # 16 log-spaced buckets per octave: an upper bucket edge is exact to 1/16; two significant
    # digits say that much and no more
    for ns in [1_024, 5_000, 123_456, 1_234_567, 19_999_999, 987_654_321, 12_345_678_901]:
        text = histogram_ms(ns)
        significant = text.replace(".", "").strip("0")
        assert 1 <= len(significant) <= 2, (ns, text)
        assert abs(float(text) - ns / 1e6) <= 0.05 * ns / 1e6, (ns, text)
    assert histogram_ms(0) == "0" and histogram_ms(700) == "<0.001" and histogram_ms(None) == "-"


def test_the_link_table_prints_p99_to_two_significant_digits(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(demo_toml("5s"))
    p = cli("run", scenario, "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    link = next(l for l in summary["links"] if l["name"] == "r1->r2")
    row = next(line for line in p.stdout.splitlines() if line.lstrip("│ ").startswith("r1->r2"))
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[-1] == histogram_ms(link["sojourn_p99_ns"]), row
    assert link["sojourn_p99_ns"] > 1_000_000  # the demo's queue builds up: a number, not "<0.001"


def test_two_runs_of_a_scenario_write_the_same_bytes_in_every_file(tmp_path):
    """Same scenario + seed => identical bytes, for every file `haslab run` writes: summary.json,
    every Parquet trace (players, segments, cwnd, goodput, queue), players.png and the pcaps."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    args = ["--set", "duration=8s", "--set", 'trace.pcap=["r1->r2"]', "--quiet"]
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        p = subprocess.run(
            [sys.executable, "-m", "haslab", "run", str(repo / "examples" / "has.toml"), "--out", str(out), *args],
            capture_output=True, text=True, timeout=600,
        )
        assert p.returncode == 0, p.stderr
        outs.append({f.name: f.read_bytes() for f in sorted(out.iterdir()) if f.is_file()})
    a, b = outs
    assert set(a) == set(b)
    for kind in ("summary.json", "players.parquet", "segments.parquet", "players.png"):
        assert kind in a, sorted(a)
    assert any(n.endswith(".pcap") for n in a), sorted(a)
    different = [n for n in a if a[n] != b[n]]
    assert not different, f"files that differ between two runs: {different}"


def test_duplicate_representation_ids_are_a_warning_on_stderr_and_in_the_summary(tmp_path):
    (tmp_path / "dup.mpd").write_text(
        '<?xml version="1.0"?><MPD type="static" mediaPresentationDuration="PT4S"><Period>'
        '<AdaptationSet mimeType="video/mp4"><SegmentTemplate media="$Number$.m4s" duration="2"/>'
        '<Representation id="a" bandwidth="100000"/><Representation id="a" bandwidth="200000"/>'
        "</AdaptationSet></Period></MPD>"
    )
    (tmp_path / "s.toml").write_text(
        'duration = "4s"\n[dumbbell]\npairs = 1\nbottleneck_rate = "5Mbps"\n'
        '[[player]]\nclient = "right0"\nserver = "left0"\nabr = "bba"\nvideo = { mpd = "dup.mpd" }\n'
    )
    p = cli("run", tmp_path / "s.toml", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert "warning: player[0].video.mpd: dup.mpd: Representations #0 and #1 have the same @id" in p.stderr
    assert "ISO/IEC 23009-1" in p.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert len(summary["warnings"]) == 1 and "same @id" in summary["warnings"][0]
    assert haslab.run(tmp_path / "s.toml").warnings == summary["warnings"]
    # `validate` says it too, before anything runs
    p = cli("validate", tmp_path / "s.toml")
    assert p.returncode == 0 and "warning: player[0].video.mpd: dup.mpd:" in p.stderr, p.stderr
