"""Overriding scenario keys from the command line (`haslab run --set`), checking sweep files
before anything runs (`haslab sweep validate`, unknown grid keys), unambiguous loss values and
relocatable results."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import haslab
from haslab.cli_run import parse_overrides
from haslab.store import Store
from conftest import cli, demo_toml

REPO = Path(__file__).resolve().parents[2]


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_parse_overrides_reads_toml_values_and_keeps_words_as_text():
    got = parse_overrides(["duration=30s", "defaults.cc=cubic", "flow[0].tcp.sack=true", "x[1].y=4", "z=[1, 2]", "w=0.5"])
    assert got == {
        "duration": "30s",
        "defaults.cc": "cubic",
        "flow.0.tcp.sack": True,
        "x.1.y": 4,
        "z": [1, 2],
        "w": 0.5,
    }


def test_set_equals_editing_the_file_and_is_recorded(tmp_path):
    base = tmp_path / "s.toml"
    base.write_text(demo_toml("3s"))
    edited = tmp_path / "edited.toml"
    text = demo_toml("2s").replace('cc = "newreno"', 'cc = "cubic"')
    assert text != demo_toml("2s")
    edited.write_text(text.replace('app = "bulk"', 'app = "bulk"\ntcp = { sack = true }', 1))
    p = cli("run", base, "--out", tmp_path / "a", "-q", "--set", "duration=2s", "--set", "defaults.cc=cubic",
            "--set", "flow[0].tcp.sack=true")
    assert p.returncode == 0, p.stderr
    p = cli("run", edited, "--out", tmp_path / "b", "-q")
    assert p.returncode == 0, p.stderr
    a, b = _summary(tmp_path / "a"), _summary(tmp_path / "b")
    assert a.pop("overrides") == {"duration": "2s", "defaults.cc": "cubic", "flow.0.tcp.sack": True}
    assert a == b  # the same run as the edited file: same counters, byte for byte
    assert a["duration_ns"] == 2_000_000_000 and {f["cc"] for f in a["flows"]} == {"cubic"}
    assert "overrides" not in b


@pytest.mark.parametrize(
    "item, needle",
    [
        ("dumbbell.pairz=3", "pairz"),
        ("flow[7].count=1", "--set flow.7.count: flow.7.count: index 7 out of range"),
        ("duration", "expected KEY=VALUE"),
        ("duration=fast", "duration"),
    ],
)
def test_bad_set_items_are_one_line_errors_naming_the_key(tmp_path, item, needle):
    base = tmp_path / "s.toml"
    base.write_text(demo_toml("1s"))
    for cmd in (("validate", base), ("run", base, "--out", tmp_path / "o", "-q")):
        p = cli(*cmd, "--set", item)
        assert p.returncode == 1, p.stdout
        assert needle in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "o" / "summary.json").exists()


# ---------------------------------------------------------------------------------------------
# sweeps


def _sweep(tmp_path: Path, grid: str) -> Path:
    (tmp_path / "tiny.toml").write_text(demo_toml("1s"))
    f = tmp_path / "sweep.toml"
    f.write_text(f'[sweep]\nscenario = "tiny.toml"\nseeds = [1, 2]\n[sweep.grid]\n{grid}')
    return f


def test_a_grid_key_no_scenario_has_fails_before_anything_runs(tmp_path):
    f = _sweep(tmp_path, '"dumbbell.pairz" = [1, 2]\n')
    out = tmp_path / "out"
    p = cli("sweep", "run", f, "--out", out, "--jobs", "1")
    assert p.returncode == 1
    assert "sweep.grid.dumbbell.pairz" in p.stderr and "did you mean 'pairs'" in p.stderr, p.stderr
    assert not out.exists() or not Store(out).statuses()
    p = cli("sweep", "validate", f)
    assert p.returncode == 1 and "sweep.grid.dumbbell.pairz" in p.stderr
    # deeper paths and list items are checked through the schema too
    for key, bad in [("flow.0.tcp.sackk", "flow.0.tcp.sackk"), ("flow.first.count", "flow.first"),
                     ("defaults.cc.beta", None), ("flow.0.count", None), ("preset.loss", None)]:
        got = haslab.sweep.unknown_key(key)
        assert (got and got[0]) == bad, key


def test_sweep_validate_lists_invalid_runs(tmp_path):
    good = _sweep(tmp_path, '"flow.0.count" = [1, 2]\n')
    p = cli("sweep", "validate", good)
    assert p.returncode == 0, p.stderr
    assert "4 runs" in p.stdout and "ok" in p.stdout
    bad = _sweep(tmp_path, '"defaults.cc" = ["newreno", "bogus"]\n')
    p = cli("sweep", "validate", bad)
    assert p.returncode == 1
    assert "2 invalid" in p.stdout and "bogus" in p.stdout


def test_quiet_sweep_whose_runs_all_fail_says_why(tmp_path):
    f = _sweep(tmp_path, '"defaults.cc" = ["bogus"]\n')
    p = cli("sweep", "run", f, "--out", tmp_path / "out", "--jobs", "1", "-q")
    assert p.returncode == 2
    assert p.stdout == ""
    assert re.search(r"all 2 runs failed .*bogus", p.stderr), p.stderr


# ---------------------------------------------------------------------------------------------
# loss values and relocatable results


def test_a_loss_without_its_unit_is_refused_naming_the_field():
    base = {
        "duration": "1s",
        "dumbbell": {"pairs": 1, "bottleneck_rate": "1Mbps", "bottleneck_delay": "1ms",
                     "bottleneck_queue": "10pkts", "access_rate": "10Mbps"},
    }
    with pytest.raises(haslab.ScenarioError, match=r"dumbbell\.bottleneck_loss.*\"0\.5%\"") as e:
        haslab.validate({**base, "dumbbell": {**base["dumbbell"], "bottleneck_loss": "0.5"}})
    assert "bare number" in str(e.value)
    as_text = haslab.validate({**base, "dumbbell": {**base["dumbbell"], "bottleneck_loss": "0.5%"}})
    as_number = haslab.validate({**base, "dumbbell": {**base["dumbbell"], "bottleneck_loss": 0.005}})
    loss = [l["loss"] for l in as_text["links"] if l["name"] == "r1->r2"]
    assert loss == [0.005] == [l["loss"] for l in as_number["links"] if l["name"] == "r1->r2"]


def test_results_are_relocatable(tmp_path):
    """The example with an MPD run from two directories: the same summary.json, no absolute path."""
    summaries = []
    for where in ("a", "b/deeper"):
        d = tmp_path / where
        d.mkdir(parents=True)
        shutil.copy(REPO / "examples" / "has.toml", d)
        shutil.copy(REPO / "examples" / "bbb_2s.mpd", d)
        p = cli("run", d / "has.toml", "--out", d / "out", "-q", "--set", "duration=10s")
        assert p.returncode == 0, p.stderr
        summaries.append((d / "out" / "summary.json").read_text())
    assert summaries[0] == summaries[1]
    assert str(tmp_path) not in summaries[0]
    videos = {p["video"] for p in json.loads(summaries[0])["players"]}
    assert "bbb_2s.mpd" in videos
