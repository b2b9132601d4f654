"""The `haslab` command line, run as a subprocess (`python -m haslab`)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import haslab

from conftest import cli, demo_dict, demo_toml

REPO = Path(__file__).resolve().parents[2]


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "haslab"
    assert exe.exists() or shutil.which("haslab"), "the `haslab` console script is not installed"


def test_help_lists_every_command():
    p = cli("--help")
    assert p.returncode == 0
    for cmd in ("run", "validate", "describe", "schema", "demo", "bench", "cc"):
        assert cmd in p.stdout
    for cmd in ("run", "validate", "describe", "schema", "demo", "bench", "cc"):
        p = cli(cmd, "--help")
        assert p.returncode == 0, p.stderr
        assert "Usage" in p.stdout


def test_run_writes_results_and_prints_tables(tmp_path):
    scenario = tmp_path / "demo.toml"
    scenario.write_text(demo_toml("5s"))
    out = tmp_path / "out"
    p = cli("run", scenario, "--out", out)
    assert p.returncode == 0, p.stderr
    for name in ("summary.json", "cwnd.parquet", "goodput.parquet", "queue.parquet"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duration_ns"] == 5_000_000_000
    for f in summary["flows"]:
        assert f["name"] in p.stdout
    assert "r1->r2" in p.stdout
    assert "Traceback" not in p.stderr
    cwnd = pd.read_parquet(out / "cwnd.parquet")
    assert set(cwnd["flow_name"].astype(str)) == {f["name"] for f in summary["flows"]}


def test_run_quiet_prints_nothing(tmp_path):
    scenario = tmp_path / "demo.toml"
    scenario.write_text(demo_toml("1s"))
    p = cli("run", scenario, "--out", tmp_path / "o", "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert (tmp_path / "o" / "summary.json").is_file()


def _bad_scenario(tmp_path) -> Path:
    bad = tmp_path / "bad.toml"
    bad.write_text(demo_toml("10s").replace('bottleneck_rate = "8Mbps"', 'bottleneck_rate = "eight"'))
    assert "eight" in bad.read_text()
    return bad


def test_validate_bad_file_exits_1_with_the_field_path_and_no_traceback(tmp_path):
    p = cli("validate", _bad_scenario(tmp_path))
    assert p.returncode == 1
    assert "bottleneck_rate" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert "ok" not in p.stdout


def test_error_paths_with_brackets_are_printed_verbatim(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'duration = "1s"\n[dumbbell]\npairs = 1\nbottleneck_rate = "1Mbps"\n'
        '[[flow]]\nsrc = "left0"\ndst = "right0"\napp = "bulk"\n'
        '[[flow]]\nsrc = "left0"\ndst = "right0"\napp = "bulk"\ntcp = { min_rto = "fast" }\n'
    )
    p = cli("validate", bad)
    assert p.returncode == 1
    assert "flow[1].tcp.min_rto" in p.stderr
    assert str(bad) in p.stderr


def test_run_bad_file_exits_1_without_traceback(tmp_path):
    p = cli("run", _bad_scenario(tmp_path), "--out", tmp_path / "o")
    assert p.returncode == 1
    assert "bottleneck_rate" in p.stderr
    assert "Traceback" not in p.stderr


def test_validate_missing_file(tmp_path):
    p = cli("validate", tmp_path / "nope.toml")
    assert p.returncode == 1
    assert "nope.toml" in p.stderr
    assert "Traceback" not in p.stderr


def test_validate_good_file_says_ok(tmp_path):
    scenario = tmp_path / "demo.toml"
    scenario.write_text(demo_toml("10s"))
    p = cli("validate", scenario)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok")
    assert "4 flows" in p.stdout


def test_schema_prints_json():
    p = cli("schema")
    assert p.returncode == 0
    assert isinstance(json.loads(p.stdout), dict)


def test_examples_validate():
    examples = sorted((REPO / "examples").glob("*.toml"))
    for ex in examples:
        p = cli("validate", ex)
        assert p.returncode == 0, f"{ex.name}: {p.stderr}"


def test_packaged_demo_is_the_dumbbell_example():
    import haslab

    example = REPO / "examples" / "dumbbell.toml"
    assert example.is_file(), "examples/dumbbell.toml is missing"
    assert haslab.demo_scenario() == example.read_text(), (
        "python/haslab/scenarios/demo.toml must be a copy of examples/dumbbell.toml"
    )


def test_demo_compares_westwood_and_tcphas_and_writes_the_figure(tmp_path):
    out = tmp_path / "d"
    p = cli("demo", "--out", out, "--duration", "40")
    assert p.returncode == 0, p.stderr
    png = out / "demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 20_000  # three panels with curves, not an empty canvas
    assert "westwood+" in p.stdout and "tcphas" in p.stdout and "demo.png" in p.stdout
    table = pd.read_csv(out / "demo.csv").set_index("server cc")
    assert list(table.index) == ["westwood+", "tcphas"]
    for cc, sub in (("westwood+", "westwoodplus"), ("tcphas", "tcphas")):
        row = table.loc[cc]
        summary = json.loads((out / sub / "summary.json").read_text())
        assert summary["duration_ns"] == 40_000_000_000
        assert {f["cc"] for f in summary["flows"]} == {cc}
        assert len(summary["players"]) == 8
        # the table's network columns are the bottleneck's own counters
        link = next(l for l in summary["links"] if l["name"] == "DSLAM->HG")
        assert row["drops / s"] == pytest.approx(link["dropped_packets"] / 40)
        assert row["utilization (%)"] == pytest.approx(link["utilization"] * 100)
        assert 0 <= row["time at optimal level (%)"] <= 100
        assert row["switches / player"] == pytest.approx(
            sum(pl["switches"] for pl in summary["players"]) / 8
        )


def test_bench_case_a_reports_measurements():
    p = cli("bench", "--case", "a", "--json")
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout.strip().splitlines()[-1])
    assert m["case"] == "a"
    assert m["events"] > 0 and m["events_per_second"] > 0
    assert m["link_transmissions"] > 0
    assert 10 < m["peak_rss_mib"] < 4096
    assert m["sim_seconds"] == 60


def test_bench_unknown_case():
    p = cli("bench", "--case", "z")
    assert p.returncode == 1
    assert "unknown case" in p.stderr


def _cc_names_from_schema() -> list[str]:
    """The algorithm names the scenario schema accepts (built from CcConfig::NAMES)."""
    schema = json.loads(haslab.schema())
    spec = schema["$defs"]["CcSpec"]
    names = [[c["const"] for c in alt["oneOf"]] for alt in spec["anyOf"] if alt.get("type") == "string"]
    assert len(names) == 1
    return names[0]


def test_cc_list_prints_every_algorithm_and_sender_option():
    names = _cc_names_from_schema()
    assert {"newreno", "cubic", "westwood+", "tibet", "yeah", "illinois", "bbr"} <= set(names)
    p = cli("cc", "list")
    assert p.returncode == 0, p.stderr
    for name in names:
        assert name in p.stdout, name
    # sources and defaults are shown
    assert "tcp_cubic.c" in p.stdout and "beta = 0.7001953125" in p.stdout
    assert 'min_rtt_window = "10s"' in p.stdout
    # every [flow.tcp] option, with its default
    cat = haslab.catalog()
    opts = {o["name"]: o for o in cat["tcp_options"]}
    assert {"mss", "sack", "pacing", "recovery", "idle_restart"} <= set(opts)
    for name in opts:
        assert name in p.stdout, name
    assert opts["mss"]["default"] == 1448


def test_cc_list_json_matches_the_catalog_and_every_name_runs(tmp_path):
    p = cli("cc", "list", "--json")
    assert p.returncode == 0, p.stderr
    cat = json.loads(p.stdout)
    assert [a["name"] for a in cat["algorithms"]] == _cc_names_from_schema()
    # each listed algorithm, with its listed defaults spelled out as parameters, is a valid
    # scenario choice
    for a in cat["algorithms"]:
        d = demo_dict("1s")
        d["defaults"] = {"cc": {"algorithm": a["name"], **{k: v for k, v in a["defaults"].items() if v is not None}}}
        plan = haslab.validate(d)
        assert {f["cc"] for f in plan["flows"]} == {a["name"]}, a["name"]


def _same_value(plan_value, catalog_value) -> bool:
    """A plan writes durations in ns ("200000000ns") and sizes in bytes ("131072B"); the catalog
    as a scenario would ("200ms", 131072)."""
    import re

    def ns(v):
        m = re.fullmatch(r"(\d+)(ns|us|ms|s|B)", str(v))
        return int(m[1]) * {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "B": 1}[m[2]] if m else v

    return ns(plan_value) == ns(catalog_value)


def test_named_transports_are_listed_and_expand_to_their_cc_and_options():
    p = cli("cc", "list")
    assert p.returncode == 0, p.stderr
    cat = haslab.catalog()
    names = [t["name"] for t in cat["transports"]]
    assert {"newcwv-paced", "newreno-rfc5681", "newreno-linux", "cubic-enhanced", "cubic-tlp"} <= set(names)
    for t in cat["transports"]:
        assert t["name"] in p.stdout, t["name"]
        d = demo_dict("1s")
        for f in d["flow"]:
            f.pop("cc", None)
            f.pop("tcp", None)
            f["transport"] = t["name"]
        plan = haslab.validate(d)
        for f in plan["flows"]:
            assert f["cc"] == t["cc"] and f["transport"] == t["name"]
            for k, v in t["tcp"].items():
                assert _same_value(f["tcp"][k], v), (t["name"], k, f["tcp"][k], v)
    # the flow's own keys win over the transport's
    d = demo_dict("1s")
    d["flow"][0]["transport"] = "newcwv-paced"
    d["flow"][0]["tcp"] = {"pacing": "off"}
    d["flow"][0]["cc"] = "cubic"
    f = haslab.validate(d)["flows"][0]
    assert (f["cc"], f["tcp"]["pacing"], f["tcp"]["idle_restart"]) == ("cubic", "off", "newcwv")
    # an unknown name lists the accepted ones
    d["flow"][0]["transport"] = "newcwv-pace"
    with pytest.raises(haslab.ScenarioError, match='transport.*"newcwv-paced"'):
        haslab.validate(d)
