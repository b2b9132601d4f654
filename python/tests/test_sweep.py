"""Sweeps: grid expansion and run hashes, the Parquet store, resuming after a kill, failed runs,
Dask, the CLI, and the aggregation helpers."""

from __future__ import annotations

import copy
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import haslab
from haslab.aggregate import aggregate, mean_ci, unfairness
from haslab.store import Store
from haslab.sweep import Sweep, SweepError, run_hash, set_path

from conftest import cli

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

TINY_TOML = """\
seed = 1
duration = "{duration}"

[dumbbell]
pairs = 4
bottleneck_rate = "{rate}"
bottleneck_delay = "10ms"
bottleneck_queue = "50pkts"
access_rate = "1Gbps"
access_delay = "1ms"

[defaults]
cc = "newreno"

[[flow]]
name = "f{{i}}"
count = 2
src = "left{{i}}"
dst = "right{{i}}"
app = "bulk"

[trace]
cwnd = true
queues = ["r1->r2"]
"""


def tiny(duration: str = "1s", rate: str = "10Mbps") -> dict:
    """A dumbbell with up to 4 host pairs and one [[flow]] template (2 bulk flows by default)."""
    return tomllib.loads(TINY_TOML.format(duration=duration, rate=rate))


# ---------------------------------------------------------------------------------------------
# grid expansion and hashing


def test_grid_is_the_cartesian_product_with_seeds_varying_fastest():
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2, 4], "dumbbell.bottleneck_delay": ["5ms", "20ms"]}, seeds=[3, 7])
    runs = s.runs()
    assert len(runs) == len(s) == 3 * 2 * 2
    assert s.params == ["flow.0.count", "dumbbell.bottleneck_delay"]
    combos = [(r.params["flow.0.count"], r.params["dumbbell.bottleneck_delay"], r.seed) for r in runs]
    assert len(set(combos)) == 12
    assert [c[2] for c in combos[:4]] == [3, 7, 3, 7]  # seeds innermost
    for r in runs:
        # each run's scenario carries its own parameter values and seed, the rest is the base
        assert r.scenario["flow"][0]["count"] == r.params["flow.0.count"]
        assert r.scenario["dumbbell"]["bottleneck_delay"] == r.params["dumbbell.bottleneck_delay"]
        assert r.scenario["seed"] == r.seed
        assert r.scenario["dumbbell"]["bottleneck_rate"] == "10Mbps"
        assert r.run_hash == run_hash(r.scenario)
    assert len({r.run_hash for r in runs}) == 12


def test_unquoted_dotted_keys_in_toml_mean_the_same_paths(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY_TOML.format(duration="1s", rate="10Mbps"))
    quoted = Sweep.from_toml(
        _write(tmp_path / "a.toml", '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\n"dumbbell.pairs" = [2, 3]\n')
    )
    nested = Sweep.from_toml(
        _write(tmp_path / "b.toml", '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\ndumbbell.pairs = [2, 3]\n')
    )
    assert quoted.params == nested.params == ["dumbbell.pairs"]
    assert [r.run_hash for r in quoted.runs()] == [r.run_hash for r in nested.runs()]
    # the same scenario inline in the sweep file ([sweep.scenario]) is the same runs
    nested_tables = []
    for line in TINY_TOML.format(duration="1s", rate="10Mbps").splitlines():
        if line.startswith("[["):
            line = "[[sweep.scenario." + line[2:]
        elif line.startswith("["):
            line = "[sweep.scenario." + line[1:]
        nested_tables.append(line)
    text = "[sweep]\n[sweep.scenario]\n" + "\n".join(nested_tables) + '\n[sweep.grid]\n"dumbbell.pairs" = [2, 3]\n'
    inline = Sweep.from_toml(_write(tmp_path / "c.toml", text))
    assert [r.run_hash for r in inline.runs()] == [r.run_hash for r in quoted.runs()]


def test_same_scenario_and_seed_give_the_same_hash():
    a = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, seeds=[1, 2]).runs()
    # another Sweep object, the base's keys in another order, the same scenario given as TOML text
    shuffled = dict(reversed(list(tiny().items())))
    b = Sweep(shuffled, grid={"flow.0.count": [1, 2]}, seeds=[1, 2]).runs()
    c = Sweep(TINY_TOML.format(duration="1s", rate="10Mbps"), grid={"flow.0.count": [1, 2]}, seeds=[1, 2]).runs()
    assert [r.run_hash for r in a] == [r.run_hash for r in b] == [r.run_hash for r in c]
    # the hash is the scenario's alone: a one-point sweep of the edited base gives the same hash
    edited = tiny()
    edited["flow"][0]["count"] = 2
    edited["seed"] = 2
    (one,) = Sweep(edited, seeds=[2]).runs()
    assert one.run_hash == a[3].run_hash


@pytest.mark.parametrize(
    "path, value",
    [
        ("seed", 2),
        ("duration", "1001ms"),
        ("dumbbell.bottleneck_rate", "10.5Mbps"),
        ("flow.0.name", "g{i}"),
        ("flow.0.tcp.sack", True),  # a new table
        ("trace.cwnd", False),
        ("dumbbell.pairs", 4.0),  # 4 and 4.0 are different JSON values
    ],
)
def test_any_change_gives_a_different_hash(path, value):
    base = tiny()
    changed = copy.deepcopy(base)
    set_path(changed, path, value)
    assert run_hash(changed) != run_hash(base)


def test_set_path_indexes_lists_creates_tables_merges_and_deletes():
    d = tiny()
    set_path(d, "flow.0.tcp.sack", True)
    assert d["flow"][0]["tcp"] == {"sack": True}
    set_path(d, "flow.-1.tcp", {"tlp": True})  # a table merges into the table there
    assert d["flow"][0]["tcp"] == {"sack": True, "tlp": True}
    set_path(d, "defaults.cc", {"name": "newreno"})  # ... and replaces a non-table
    assert d["defaults"]["cc"] == {"name": "newreno"}
    set_path(d, "flow.0.tcp.sack", None)
    assert d["flow"][0]["tcp"] == {"tlp": True}
    with pytest.raises(SweepError, match=r"flow.1.count: index 1 out of range \(flow has 1 entries\)"):
        set_path(d, "flow.1.count", 3)
    with pytest.raises(SweepError, match=r"flow.x.count: flow.x indexes a list, so 'x' must be an integer"):
        set_path(d, "flow.x.count", 3)
    with pytest.raises(SweepError, match=r"duration is a str"):
        set_path(d, "duration.ms", 3)
    with pytest.raises(SweepError, match="dotted path"):
        set_path(d, "dumbbell..pairs", 3)


def test_variants_set_and_derive():
    def derive(scenario, params):
        # a queue of one BDP at 10 Mbps for the point's delay (RTT = 2 × (delay + 2 × 1 ms))
        delay_ms = int(scenario["dumbbell"]["bottleneck_delay"].removesuffix("ms"))
        rtt_s = 2 * (delay_ms + 2) / 1e3
        scenario["dumbbell"]["bottleneck_queue"] = f"{int(10e6 * rtt_s / 8)}B"

    s = Sweep(
        tiny(),
        grid={"dumbbell.bottleneck_delay": ["10ms", "40ms"]},
        variants={"method": {"plain": {}, "sack": {"defaults.tcp.sack": True, "flow.0.count": 3}}},
        set={"duration": "2s"},
        derive=derive,
        seeds=2,
    )
    assert s.params == ["method", "dumbbell.bottleneck_delay"]
    runs = s.runs()
    assert len(runs) == 2 * 2 * 2
    assert {r.seed for r in runs} == {1, 2}
    for r in runs:
        assert r.scenario["duration"] == "2s"
        sack = r.params["method"] == "sack"
        assert r.scenario["defaults"].get("tcp", {}).get("sack", False) is sack
        assert r.scenario["flow"][0]["count"] == (3 if sack else 2)
    queues = {r.params["dumbbell.bottleneck_delay"]: r.scenario["dumbbell"]["bottleneck_queue"] for r in runs}
    assert queues == {"10ms": "30000B", "40ms": "105000B"}


def test_sweep_definition_errors_name_the_key(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY_TOML.format(duration="1s", rate="10Mbps"))
    cases = {
        '[sweep]\nscenario = "tiny.toml"\nseed = [1]\n': r"sweep.seed: unknown key",
        '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\n"dumbbell.pairs" = 3\n': r"sweep.grid.dumbbell.pairs: expected a list",
        '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\n"dumbbell.pairs" = []\n': r"sweep.grid.dumbbell.pairs: the list of values is empty",
        '[sweep]\nscenario = "nope.toml"\n': r"sweep.scenario: scenario file not found",
        '[sweep]\nscenario = "tiny.toml"\nseeds = [1, 1]\n': r"sweep.seeds: duplicate",
        '[sweep]\nscenario = "tiny.toml"\nseeds = 0\n': r"sweep.seeds: a count of seeds must be at least 1",
        '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\n"flow.3.count" = [1]\n': r"sweep.grid: flow.3.count: index 3 out of range \(flow has 1 entries\)",
        '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\n"seed" = [1, 2]\n': r"may not be called 'seed'",
        '[sweep]\nscenario = "tiny.toml"\n[sweep.grid]\n"trace.cwnd" = [true, true]\n': r"two runs have the same scenario",
        'scenario = "tiny.toml"\n': r"no \[sweep\] table",
    }
    for i, (text, message) in enumerate(cases.items()):
        path = _write(tmp_path / f"bad{i}.toml", text)
        with pytest.raises(SweepError, match=message):
            Sweep.from_toml(path).runs()


# ---------------------------------------------------------------------------------------------
# running and storing


def test_small_sweep_stores_one_row_per_run_with_its_parameters(tmp_path):
    s = Sweep(tiny(), grid={"flow.0.count": [1, 3], "dumbbell.bottleneck_rate": ["5Mbps", "20Mbps"]}, seeds=[1, 2])
    out = tmp_path / "out"
    outcome = s.run(out, jobs=2, progress=False)
    assert (outcome.total, outcome.ran, outcome.ok, outcome.failed, outcome.skipped) == (8, 8, 8, 0, 0)
    store = Store(out)
    df = store.summary()
    assert len(df) == 8 and df["run_hash"].is_unique
    assert df.attrs["params"] == ["flow.0.count", "dumbbell.bottleneck_rate"]
    assert set(df["status"]) == {"ok"}
    assert set(zip(df["flow.0.count"], df["dumbbell.bottleneck_rate"], df["seed"])) == {
        (c, r, seed) for c in (1, 3) for r in ("5Mbps", "20Mbps") for seed in (1, 2)
    }
    flows = store.flows()
    links = store.links()
    for row in df.to_dict("records"):
        h = row["run_hash"]
        # the stored scenario is the one the row's parameters describe, and its hash is the key
        scenario = json.loads((store.run_dir(h) / "scenario.json").read_text())
        assert run_hash(scenario) == h
        assert scenario["flow"][0]["count"] == row["flow.0.count"]
        assert scenario["dumbbell"]["bottleneck_rate"] == row["dumbbell.bottleneck_rate"]
        assert scenario["seed"] == row["seed"]
        # the simulator ran that scenario: as many flows as the parameter says, at that rate
        f = flows[flows["run_hash"] == h]
        assert len(f) == row["flow.0.count"]
        assert (f["flow.0.count"] == row["flow.0.count"]).all()
        assert row["duration_ns"] == 1_000_000_000
        bottleneck = links[(links["run_hash"] == h) & (links["name"] == "r1->r2")]
        rate_bps = {"5Mbps": 5e6, "20Mbps": 20e6}[row["dumbbell.bottleneck_rate"]]
        assert bottleneck["rate_bps"].tolist() == [rate_bps]
        assert f["bytes_received"].sum() * 8 <= rate_bps * 1.0  # nobody beats the bottleneck
        assert row["wall_s"] > 0
        # per-run traces, labelled with the run's flows
        cwnd = store.trace(h, "cwnd")
        assert set(cwnd["flow_name"].astype(str)) == set(f["name"])
        assert (store.run_dir(h) / "summary.json").is_file()
    # a second run of the same sweep runs nothing
    again = s.run(out, jobs=2, progress=False)
    assert (again.ran, again.skipped) == (0, 8)
    # no temporary files, no parts left after compaction
    assert not list(out.rglob(".tmp-*"))
    assert not list((out / "parts").iterdir())


def test_failed_run_is_recorded_and_the_others_complete(tmp_path):
    s = Sweep(tiny(), grid={"defaults.cc": ["newreno", "no-such-cc"], "flow.0.count": [1, 2]}, seeds=[1, 2])
    out = tmp_path / "out"
    outcome = s.run(out, jobs=1, progress=False)
    assert (outcome.ok, outcome.failed) == (4, 4)
    df = Store(out).summary()
    assert len(df) == 8
    bad = df[df["defaults.cc"] == "no-such-cc"]
    good = df[df["defaults.cc"] == "newreno"]
    assert set(bad["status"]) == {"failed"} and set(good["status"]) == {"ok"}
    for err in bad["error"]:
        assert err.startswith("invalid scenario: defaults.cc") and "no-such-cc" in err
        assert "column" not in err  # no position in the generated JSON text
    assert good["error"].isna().all()
    assert (good["events"] > 0).all()
    # failed runs are stored: skipped on a re-run, re-run with retry_failed (and fail again)
    again = s.run(out, jobs=1, progress=False)
    assert (again.ran, again.skipped) == (0, 8)
    before = dict(zip(df["run_hash"], df["finished_at"]))
    retry = s.run(out, jobs=1, progress=False, retry_failed=True)
    assert (retry.ran, retry.failed, retry.skipped) == (4, 4, 4)
    after = Store(out).summary()
    assert len(after) == 8
    changed = {h for h, t in zip(after["run_hash"], after["finished_at"]) if before[h] != t}
    assert changed == set(bad["run_hash"])


def test_traces_off_keeps_the_summary_and_no_trace_files(tmp_path):
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, traces=False)
    s.run(tmp_path / "out", jobs=1, progress=False)
    store = Store(tmp_path / "out")
    for r in s.runs():
        files = sorted(p.name for p in store.run_dir(r.run_hash).iterdir())
        assert files == ["scenario.json", "summary.json"]  # no traces, no marker
        summary = json.loads((store.run_dir(r.run_hash) / "summary.json").read_text())
        assert len(summary["flows"]) == r.params["flow.0.count"]
    assert len(store.flows()) == 1 + 2


def test_runs_stored_without_traces_run_again_when_a_sweep_wants_them(tmp_path):
    # the run hash covers the scenario and seed, not what is recorded
    out = tmp_path / "out"
    first = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, traces=False).run(out, jobs=1, progress=False)
    assert first.skipped == 0
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, traces=True)
    again = s.run(out, jobs=1, progress=False)
    assert again.skipped == 0, "stored without traces: run again"
    store = Store(out)
    for r in s.runs():
        assert len(store.trace(r.run_hash, "goodput")) > 0
    assert len(store.summary()) == 2, "one row per run, the new one replacing the old"
    third = s.run(out, jobs=1, progress=False)
    assert third.skipped == 2, "now stored with traces: nothing to do"
    # a sweep that wants less reuses what is stored
    fourth = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, traces=False).run(out, jobs=1, progress=False)
    assert fourth.skipped == 2


def test_a_run_reused_by_another_sweep_carries_that_sweeps_parameters(tmp_path):
    # the same scenario reached by another sweep (an axis over a value the base already has) is
    # not run again, and its rows are labelled with the axes of the sweep that asks for it
    out = tmp_path / "out"
    Sweep(tiny(), grid={"flow.0.count": [1, 2]}, seeds=[1]).run(out, jobs=1, progress=False)
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2], "dumbbell.bottleneck_rate": ["10Mbps"]}, seeds=[1])
    again = s.run(out, jobs=1, progress=False)
    assert again.skipped == 2
    store = Store(out)
    df = store.summary()
    assert df.attrs["params"] == ["flow.0.count", "dumbbell.bottleneck_rate"]
    assert sorted(zip(df["flow.0.count"], df["dumbbell.bottleneck_rate"])) == [(1, "10Mbps"), (2, "10Mbps")]
    flows = store.flows()
    assert set(flows["dumbbell.bottleneck_rate"]) == {"10Mbps"} and len(flows) == 3


def test_runs_stored_by_another_simulator_run_again(tmp_path, monkeypatch):
    # every row records the simulator that computed it (version + source fingerprint); a sweep
    # reuses only what this simulator stored
    import haslab.sweep as sw

    out = tmp_path / "out"
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, traces=False)
    first = s.run(out, jobs=1, progress=False)
    assert (first.ran, first.stale) == (2, 0)
    ours = sw.model_version()
    assert ours.startswith(haslab.__version__ + "+") and len(ours) > len(haslab.__version__) + 8
    assert set(Store(out).versions().values()) == {ours}
    assert s.run(out, jobs=1, progress=False).skipped == 2
    monkeypatch.setattr(sw, "model_version", lambda: "0.0.0+another")
    again = s.run(out, jobs=1, progress=False)
    assert (again.skipped, again.ran, again.stale) == (0, 2, 2)
    assert set(Store(out).versions().values()) == {"0.0.0+another"}
    assert len(Store(out).summary()) == 2, "the new rows replace the old"
    assert s.run(out, jobs=1, progress=False).skipped == 2


def test_progress_bar_shows_runs_done_over_total(tmp_path, capfd):
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, seeds=[1, 2], name="bar-test")
    s.run(tmp_path / "out", jobs=1, progress="always")
    err = capfd.readouterr().err
    assert "bar-test" in err and "4/4" in err and "ETA" in err


def test_store_recovers_from_a_writer_killed_mid_write(tmp_path):
    """What a writer killed between two renames leaves behind is cleaned up, and a run whose
    summary part (the mark) was not written counts as not stored."""
    s = Sweep(tiny(), grid={"flow.0.count": [1, 2]}, seeds=[1])
    out = tmp_path / "out"
    s.run(out, jobs=1, progress=False)
    store = Store(out)
    first, second = s.runs()
    # simulate a kill: a temporary file, a half-built run directory, a table part without its mark
    (out / "parts" / ".tmp-abc-x.parquet").write_bytes(b"partial")
    (out / "runs" / f".tmp-{second.run_hash}-1234").mkdir()
    (out / "parts" / f"{'0' * 64}.flows.parquet").write_bytes(b"orphan")
    assert store.statuses() == {first.run_hash: "ok", second.run_hash: "ok"}
    with store.lock():
        store.recover()
    assert not list(out.rglob(".tmp-*"))
    assert not (out / "parts" / f"{'0' * 64}.flows.parquet").exists()
    assert len(store.summary()) == 2


def test_parts_win_over_compacted_rows_and_compaction_is_idempotent(tmp_path):
    s = Sweep(tiny(), grid={"defaults.cc": ["newreno", "bad"]}, seeds=[1])
    out = tmp_path / "out"
    s.run(out, jobs=1, progress=False)  # compacted: one ok, one failed
    store = Store(out)
    good, bad = s.runs()
    # a newer result for the failed run, as a part not compacted yet (e.g. killed before compaction)
    fixed = copy.deepcopy(bad.scenario)
    fixed["defaults"]["cc"] = "newreno"
    from haslab.sweep import execute

    payload = execute(type(bad)(bad.run_hash, bad.params, bad.seed, fixed))
    with store.lock():
        store.write(bad, payload)
        assert store.statuses() == {good.run_hash: "ok", bad.run_hash: "ok"}
        assert len(store.flows()) == 2 * 2
        store.compact()
        store.compact()
    assert store.statuses() == {good.run_hash: "ok", bad.run_hash: "ok"}
    assert len(store.summary()) == 2 and len(store.flows()) == 4


def test_a_script_without_main_guard_gets_a_clear_error_and_stores_no_failures(tmp_path):
    script = _write(
        tmp_path / "unguarded.py",
        "import haslab\n"
        f"s = haslab.Sweep({tiny()!r}, grid={{'flow.0.count': [1, 2]}})\n"
        f"s.run({str(tmp_path / 'out')!r}, jobs=2, progress=False)\n",
    )
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    assert 'if __name__ == "__main__":' in p.stderr
    assert Store(tmp_path / "out").statuses() == {}


def test_a_second_writer_is_refused(tmp_path):
    from haslab.store import StoreError

    store = Store(tmp_path / "out")
    with store.lock():
        with pytest.raises(StoreError, match="in use by another running sweep"):
            Sweep(tiny(), seeds=[1]).run(tmp_path / "out", jobs=1, progress=False)


# ---------------------------------------------------------------------------------------------
# the CLI, and killing it


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _sweep_file(tmp_path: Path, grid: str, seeds: str = "[1, 2]", duration="1s", rate="10Mbps") -> Path:
    _write(tmp_path / "tiny.toml", TINY_TOML.format(duration=duration, rate=rate))
    return _write(tmp_path / "sweep.toml", f'[sweep]\nscenario = "tiny.toml"\nseeds = {seeds}\n[sweep.grid]\n{grid}')


_RAN = re.compile(r"ran (\d+) \(ok (\d+), failed (\d+)\), skipped (\d+)")


def test_cli_help_lists_sweep_commands():
    p = cli("--help")
    assert p.returncode == 0 and "sweep" in p.stdout
    for sub in ("run", "status"):
        p = cli("sweep", sub, "--help")
        assert p.returncode == 0, p.stderr
        assert "Usage" in p.stdout


def test_cli_sweep_run_and_status_with_a_failing_run(tmp_path):
    f = _sweep_file(tmp_path, '"flow.0.count" = [1, 2]\n"defaults.cc" = ["newreno", "bogus"]\n')
    out = tmp_path / "out"
    p = cli("sweep", "run", f, "--out", out, "--jobs", "1")
    assert p.returncode == 2, p.stderr  # the sweep completed, some runs failed
    m = _RAN.search(p.stdout)
    assert m and tuple(map(int, m.groups())) == (8, 4, 4, 0), p.stdout
    assert "bogus" in p.stdout and "Traceback" not in p.stderr
    p = cli("sweep", "status", out)
    assert p.returncode == 0, p.stderr
    assert "8 runs: 4 ok, 4 failed, 0 pending" in p.stdout
    assert "defaults.cc" in p.stdout and "bogus" in p.stdout
    p = cli("sweep", "status", out, "--json")
    status = json.loads(p.stdout)
    assert (status["total"], status["ok"], status["failed"], status["pending"]) == (8, 4, 4, 0)
    assert len(status["failures"]) == 4
    assert all(x["defaults.cc"] == "bogus" and "unknown" in x["error"] for x in status["failures"])
    # quiet prints nothing; nothing left to run
    p = cli("sweep", "run", f, "--out", out, "--quiet")
    assert p.returncode == 2 and p.stdout == "" and p.stderr == ""


def test_cli_errors_are_one_line(tmp_path):
    f = _write(tmp_path / "bad.toml", '[sweep]\nscenario = "missing.toml"\n')
    p = cli("sweep", "run", f, "--out", tmp_path / "o")
    assert p.returncode == 1 and "sweep.scenario: scenario file not found" in p.stderr
    assert "Traceback" not in p.stderr
    p = cli("sweep", "status", tmp_path)
    assert p.returncode == 1 and "not a sweep output directory" in p.stderr
    f = _sweep_file(tmp_path, '"flow.0.count" = [1]\n')
    p = cli("sweep", "run", f, "--jobs", "2", "--dask", "tcp://127.0.0.1:1")
    assert p.returncode == 1 and "exclude each other" in p.stderr


def _stored(out: Path) -> dict[str, tuple]:
    """{run hash: (inode, mtime_ns) of its scenario.json} for the runs whose mark is written."""
    store = Store(out)
    return {
        h: (os.stat(store.run_dir(h) / "scenario.json").st_ino, os.stat(store.run_dir(h) / "scenario.json").st_mtime_ns)
        for h in store.statuses()
    }


def test_killed_sweep_resumes_without_recomputing_stored_runs(tmp_path):
    # 4 short runs (1 simulated second), then 4 long ones (600 s at 100 Mbps, about 1.5 s each
    # here): the kill after three stored runs lands while long runs are in flight, however fast
    # the machine
    f = _sweep_file(
        tmp_path, '"duration" = ["1s", "600s"]\n"flow.0.count" = [1, 4]\n"trace.cwnd" = [false]\n', rate="100Mbps"
    )
    total = 8
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "haslab", "sweep", "run", str(f), "--out", str(out), "--jobs", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            marks = [p for p in (out / "parts").glob("*.parquet") if p.name.count(".") == 1]
            if len(marks) >= 3:  # 3 runs stored (the summary part is written last)
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, at once
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    stored = _stored(out)
    assert 3 <= len(stored) < total
    df = Store(out).summary()
    assert len(df) == len(stored) and set(df["status"]) == {"ok"}

    p = cli("sweep", "run", f, "--out", out, "--jobs", "2")
    assert p.returncode == 0, p.stderr
    m = _RAN.search(p.stdout)
    assert m, p.stdout
    ran, ok, failed, skipped = map(int, m.groups())
    assert skipped == len(stored) and ran == total - len(stored) and ok == ran and failed == 0
    after = _stored(out)
    # the runs stored before the kill were not run again: same files (inode and mtime)
    assert {h: after[h] for h in stored} == stored
    df = Store(out).summary()
    assert len(df) == total and df["run_hash"].is_unique and set(df["status"]) == {"ok"}
    assert set(df["run_hash"]) == {r["run_hash"] for r in Store(out).plan()["runs"]}
    assert not list(out.rglob(".tmp-*"))


def _session_pids(sid: int) -> list[int]:
    """The live (not zombie) processes of session ``sid``: a sweep started with
    start_new_session, its workers, their resource tracker; orphans keep their session."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        state, _ppid, _pgrp, session = stat[stat.rindex(")") + 2 :].split()[:4]
        if int(session) == sid and state not in ("Z", "X"):
            pids.append(int(d.name))
    return pids


def _stop_sweep_and_resume(tmp_path: Path, how: str, executor: list[str]) -> None:
    """Starts `haslab sweep run EXECUTOR` in a session of its own, stops it with ``how`` once
    two runs are stored (a signal to the sweep process alone, or SIGINT to its process group as
    Ctrl-C does), and checks that every process of the session ends, that an interrupted sweep
    says in one line what is stored, and that the resume runs exactly the runs not stored."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to find the sweep's processes")
    # 3 short runs (1 simulated second) come first, then 3 long ones (600 s at 100 Mbps, about
    # 1.5 s each here): the stop after two stored runs lands while long runs are in flight, however
    # fast the machine (with short runs only, the whole sweep took 0.6 s and could end before the
    # signal arrived)
    f = _sweep_file(
        tmp_path,
        '"duration" = ["1s", "600s"]\n"flow.0.count" = [1, 3, 4]\n"trace.cwnd" = [false]\n',
        seeds="[1]",
        rate="100Mbps",
    )
    total = 6
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "haslab", "sweep", "run", str(f), "--out", str(out), *executor, "--quiet"]
    # as a foreground command of a terminal: SIGINT at its default disposition (a background job
    # of a non-interactive shell, e.g. `make test &`, inherits SIGINT ignored, and a sweep keeps
    # ignoring a signal its parent ignores, as shells expect)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    sid = proc.pid
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            marks = [p for p in (out / "parts").glob("*.parquet") if p.name.count(".") == 1]
            if len(marks) >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep ended before it could be stopped: {proc.communicate()}"
        workers = [p for p in _session_pids(sid) if p != proc.pid]
        assert len(workers) >= 2, "the sweep has no worker processes to leave behind"
        sig = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM}.get(how, signal.SIGINT)
        if how == "SIGINT-group":
            os.killpg(sid, signal.SIGINT)
        else:
            os.kill(proc.pid, sig)
        _, stderr = proc.communicate(timeout=120)
        # every process of the sweep ends: workers, the resource tracker, a LocalCluster's workers
        deadline = time.monotonic() + 60
        while _session_pids(sid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _session_pids(sid)
        assert not left, f"processes of the stopped sweep are still running: {left}"
    finally:
        if proc.poll() is None:
            os.killpg(sid, signal.SIGKILL)
            proc.wait(timeout=60)
        for pid in _session_pids(sid):  # never leave a stray process behind, even on failure
            os.kill(pid, signal.SIGKILL)

    stored = _stored(out)
    assert 2 <= len(stored) < total
    if how == "SIGKILL":
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 128 + sig, stderr
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in stderr, stderr
        m = re.search(rf"interrupted by {signal.Signals(sig).name}: (\d+) of (\d+) runs stored", lines[0])
        assert m and (int(m.group(1)), int(m.group(2))) == (len(stored), total), stderr
    assert not list(out.rglob(".tmp-*")) or how == "SIGKILL"  # a clean stop leaves no scratch files

    p = cli("sweep", "run", f, "--out", out, *executor)
    assert p.returncode == 0, (p.stdout, p.stderr)
    m = _RAN.search(p.stdout)
    assert m, p.stdout
    ran, ok, failed, skipped = map(int, m.groups())
    assert skipped == len(stored) and ran == total - len(stored) and ok == ran and failed == 0
    after = _stored(out)
    assert {h: after[h] for h in stored} == stored  # not computed again: same files (inode and mtime)
    df = Store(out).summary()
    assert len(df) == total and df["run_hash"].is_unique and set(df["status"]) == {"ok"}
    assert not list(out.rglob(".tmp-*"))


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT", "SIGINT-group"])
def test_stopped_sweep_leaves_no_process_and_resumes(tmp_path, how):
    _stop_sweep_and_resume(tmp_path, how, ["--jobs", "2"])


# ---------------------------------------------------------------------------------------------
# Dask


def _need_dask():
    try:
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("HASLAB_REQUIRE_DASK") == "1":
            raise
        pytest.skip("dask.distributed is not installed (pip install 'haslab[dask]')")


def test_dask_local_cluster_runs_the_sweep(tmp_path):
    _need_dask()
    from distributed import LocalCluster

    s = Sweep(tiny(), grid={"flow.0.count": [1, 2], "defaults.cc": ["newreno", "bogus"]}, seeds=[1, 2])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        # by address (the CLI's way): the sweep connects its own client and closes it
        outcome = s.run(tmp_path / "out", dask=cluster.scheduler_address, progress=False)
        assert (outcome.ran, outcome.ok, outcome.failed) == (8, 4, 4)
        df = Store(tmp_path / "out").summary()
        assert len(df) == 8
        assert set(df.loc[df["defaults.cc"] == "newreno", "status"]) == {"ok"}
        assert set(df.loc[df["defaults.cc"] == "bogus", "status"]) == {"failed"}
        # a Client passed in is used and left open; results equal the local ones (same hash, same counters)
        from distributed import Client

        with Client(cluster) as client:
            more = Sweep(tiny(), grid={"flow.0.count": [1, 2, 3]}, seeds=[1, 2])
            outcome = more.run(tmp_path / "out", dask=client, progress=False)
            assert (outcome.ran, outcome.skipped) == (2, 4)
            assert client.status == "running"
    local = Sweep(tiny(), grid={"flow.0.count": [1, 2, 3]}, seeds=[1, 2]).run(tmp_path / "local", jobs=1, progress=False)
    assert local.ok == 6
    cols = ["run_hash", "events", "link_transmissions"]
    a = Store(tmp_path / "out").summary()
    a = a[a["status"] == "ok"][cols].sort_values("run_hash").reset_index(drop=True)
    b = Store(tmp_path / "local").summary()[cols].sort_values("run_hash").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT", "SIGINT-group"])
def test_stopped_sweep_on_its_own_local_dask_cluster_leaves_no_worker(tmp_path, how):
    _need_dask()
    _stop_sweep_and_resume(tmp_path, how, ["--dask", "local:2"])


# ---------------------------------------------------------------------------------------------
# aggregation


def test_mean_ci_matches_the_student_t_table():
    s = mean_ci([1, 2, 3, 4, 5])
    assert s["n"] == 5 and s["mean"] == 3
    assert s["std"] == pytest.approx(math.sqrt(2.5))
    # t(0.975, 4 dof) = 2.776 (any t table); half = 2.776 × 1.5811 / √5 = 1.963
    assert s["half"] == pytest.approx(1.963, abs=1e-3)
    assert (s["low"], s["high"]) == pytest.approx((1.037, 4.963), abs=1e-3)
    # two values 10 and 12: t(0.975, 1) = 12.706, s = √2, half = 12.706 × √2 / √2 = 12.706
    assert mean_ci([10, 12])["half"] == pytest.approx(12.706, abs=1e-3)
    # 90 %: t(0.95, 4) = 2.132
    assert mean_ci([1, 2, 3, 4, 5], 0.90)["half"] == pytest.approx(2.132 * math.sqrt(2.5) / math.sqrt(5), abs=1e-3)
    one = mean_ci([7.0, float("nan")])
    assert one["n"] == 1 and one["mean"] == 7 and math.isnan(one["half"])


def test_aggregate_groups_by_the_sweep_parameters_and_skips_failed_runs():
    df = pd.DataFrame(
        {
            "run_hash": list("abcdefg"),
            "cc": ["x"] * 5 + ["y"] * 2,
            "seed": [1, 2, 3, 4, 5, 1, 2],
            "status": ["ok"] * 5 + ["ok", "failed"],
            "goodput": [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, np.nan],
        }
    )
    df.attrs["params"] = ["cc"]
    agg = aggregate(df, "goodput")
    assert list(agg["cc"]) == ["x", "y"]
    x, y = agg.to_dict("records")
    assert x["goodput_n"] == 5 and x["goodput_mean"] == 3 and x["goodput_ci_half"] == pytest.approx(1.963, abs=1e-3)
    assert y["goodput_n"] == 1 and y["goodput_mean"] == 10 and math.isnan(y["goodput_std"])
    no_params = df.copy()
    no_params.attrs = {}
    with pytest.raises(ValueError, match="pass by="):
        aggregate(no_params, "goodput")
    assert list(aggregate(no_params, "goodput", by="cc")["goodput_n"]) == [5, 1]


def test_unfairness_error_bars_average_the_spread_across_players():
    # two runs of 3 players at one point: run a = [1, 2, 3], run b = [3, 4, 5]
    df = pd.DataFrame(
        {
            "run_hash": ["a"] * 3 + ["b"] * 3 + ["c"] * 2,
            "n": [3] * 6 + [2] * 2,
            "instability": [1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 7.0, 7.0],
        }
    )
    df.attrs["params"] = ["n"]
    mm = unfairness(df, "instability").set_index("n")
    # mean over players and runs = 3; bar from the mean lowest (1+3)/2 = 2 to the mean highest (3+5)/2 = 4
    assert mm.loc[3, "instability_mean"] == 3
    assert (mm.loc[3, "instability_low"], mm.loc[3, "instability_high"]) == (2, 4)
    assert mm.loc[3, "instability_spread"] == 2 and mm.loc[3, "runs"] == 2 and mm.loc[3, "players"] == 3
    # equal players: no bar
    assert mm.loc[2, "instability_low"] == mm.loc[2, "instability_high"] == 7
    sd = unfairness(df, "instability", spread="std").set_index("n")
    # std of [1, 2, 3] and of [3, 4, 5] is 1 in both runs
    assert (sd.loc[3, "instability_low"], sd.loc[3, "instability_high"]) == (2, 4)
    assert sd.loc[2, "instability_spread"] == 0


def test_aggregation_on_a_stored_sweep(tmp_path):
    s = Sweep(tiny(), grid={"flow.0.count": [2, 4]}, seeds=[1, 2, 3], set={"dumbbell.bottleneck_loss": "1%"})
    s.run(tmp_path / "out", jobs=2, progress=False)
    store = Store(tmp_path / "out")
    agg = aggregate(store.summary(), ["events"])
    assert list(agg["flow.0.count"]) == [2, 4] and (agg["events_n"] == 3).all()
    flows = store.flows()
    u = unfairness(flows, "goodput_bps")
    assert list(u["flow.0.count"]) == [2, 4]
    assert (u["players"] == [2, 4]).all() and (u["runs"] == 3).all()
    assert (u["goodput_bps_low"] <= u["goodput_bps_mean"]).all() and (u["goodput_bps_mean"] <= u["goodput_bps_high"]).all()
    # the mean over players and runs is the plain mean of the flow rows
    for count, g in flows.groupby("flow.0.count"):
        assert u.set_index("flow.0.count").loc[count, "goodput_bps_mean"] == pytest.approx(g["goodput_bps"].mean())


def test_example_sweep_file_expands():
    root = Path(__file__).resolve().parents[2]
    s = Sweep.from_toml(root / "examples" / "sweeps" / "dumbbell.toml")
    assert len(s) == 3 * 2 * 2 * 3
    for r in s.runs()[:4]:
        haslab.validate(r.scenario)


MAHIMAHI_SCENARIO = """\
duration = "2s"
[[node]]
name = "s"
[[node]]
name = "c"
[[link]]
a = "s"
b = "c"
rate = "1Gbps"
delay = "5ms"
[[capacity]]
link = "s->c"
mahimahi = "traces/12mbps.trace"
[[flow]]
src = "s"
dst = "c"
app = "bulk"
"""


def _trace_dir(root: Path) -> None:
    (root / "traces").mkdir(parents=True)
    (root / "traces" / "12mbps.trace").write_text("1\n")


def test_relative_files_resolve_against_the_sweep_file_folder(tmp_path, monkeypatch):
    """An inline scenario's relative trace is found next to the sweep file, and a scenario
    file's next to that file, whatever the working directory (as `haslab run` does)."""
    inline = tmp_path / "inline"
    _trace_dir(inline)
    scenario = tomllib.loads(MAHIMAHI_SCENARIO)
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in scenario.items() if not isinstance(v, list))
    (inline / "sweep.toml").write_text(
        "[sweep]\nseeds = [1, 2]\n[sweep.scenario]\n" + body + "\n"
        + "".join(
            f"[[sweep.scenario.{key}]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in item.items())
            for key, items in scenario.items() if isinstance(items, list) for item in items
        )
    )
    nested = tmp_path / "nested"
    _trace_dir(nested / "scenarios")
    (nested / "scenarios" / "cell.toml").write_text(MAHIMAHI_SCENARIO)
    (nested / "sweep.toml").write_text('[sweep]\nscenario = "scenarios/cell.toml"\nseeds = [1, 2]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # neither traces/ folder is here
    for d in (inline, nested):
        s = Sweep.from_toml(d / "sweep.toml")
        p = cli("sweep", "validate", d / "sweep.toml", cwd=elsewhere)
        assert p.returncode == 0, p.stdout + p.stderr
        outcome = s.run(tmp_path / f"out-{d.name}", jobs=1, progress=False)
        assert (outcome.ok, outcome.failed) == (2, 0), outcome.failures
        links = Store(tmp_path / f"out-{d.name}").links()
        # the trace (one opportunity per ms: 12 Mbit/s) serves the direction
        assert set(links[links["name"] == "s->c"]["rate_bps"]) == {12_000_000}


def test_a_grid_too_large_is_refused_before_its_runs_are_built():
    grid = {"dumbbell.bottleneck_rate": [f"{i}Mbps" for i in range(1, 1001)], "duration": [f"{i}s" for i in range(1, 1001)]}
    with pytest.raises(SweepError) as e:
        Sweep(tiny(), grid=grid, seeds=2)
    msg = str(e.value)
    assert msg.startswith("sweep.grid: 1000 (dumbbell.bottleneck_rate) × 1000 (duration) × 2 seeds = 2,000,000 runs")
    assert "at most 1,000,000 runs" in msg
    # at the limit it is accepted (without building the runs)
    assert Sweep(tiny(), grid={"duration": [f"{i}s" for i in range(1, 1001)]}, seeds=1000)._runs is None
