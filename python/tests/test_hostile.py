"""Hostile and malformed inputs through the Python API: each is a ScenarioError (or SweepError)
naming the field or the file and what is accepted, never a hang, a MemoryError, an abort of the
interpreter or a bare UnicodeDecodeError. (The Rust corpus, crates/haslab-core/tests/bad_mpds and
bad_scenarios, checks the messages of the parsers themselves.)"""

from __future__ import annotations

import os
import threading

import pytest

import haslab
from haslab.sweep import Sweep, SweepError

DUMBBELL = {"duration": "2s", "dumbbell": {"pairs": 1, "bottleneck_rate": "8Mbps", "bottleneck_delay": "10ms"}}


def with_player(video) -> dict:
    return dict(DUMBBELL, player=[{"client": "right0", "server": "left0", "abr": "rbb", "video": video}])


def finishes(fn, limit_s: float = 120.0):
    """Runs fn in a thread and returns its outcome; a hang (a FIFO read without a writer) fails
    the test instead of blocking it. The limit only ends a hang: correct code returns at once."""
    out: dict = {}

    def go():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            out["error"] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(limit_s)
    assert not t.is_alive(), "hung"
    return out


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_scenario_or_mpd_is_refused_without_reading_it(path):
    with pytest.raises(haslab.ScenarioError, match="not a regular file .*a regular file is needed"):
        haslab.validate(path)
    with pytest.raises(haslab.ScenarioError, match=r"player\[0\]\.video\.mpd: cannot read MPD file .*a regular file is needed"):
        haslab.validate(with_player({"mpd": path}))
    trace = dict(DUMBBELL, capacity=[{"link": "r1->r2", "mahimahi": path}])
    with pytest.raises(haslab.ScenarioError, match=r"capacity\[0\]\.mahimahi: cannot read trace .*a regular file is needed"):
        haslab.validate(trace)


def test_a_fifo_without_a_writer_does_not_hang(tmp_path):
    fifo = tmp_path / "pipe.mpd"
    os.mkfifo(fifo)
    for call in (lambda: haslab.validate(str(fifo)), lambda: haslab.validate(with_player({"mpd": str(fifo)}))):
        out = finishes(call)
        assert isinstance(out.get("error"), haslab.ScenarioError), out
        assert "a regular file is needed" in str(out["error"])


def test_a_directory_or_an_oversized_file_is_refused(tmp_path):
    with pytest.raises(haslab.ScenarioError, match="it is a directory"):
        haslab.validate(tmp_path)
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(haslab.api.MAX_SCENARIO_BYTES + 1)
    with pytest.raises(haslab.ScenarioError, match="larger than 16 MiB"):
        haslab.validate(big)


def test_a_non_utf8_scenario_names_the_file_and_the_line(tmp_path):
    f = tmp_path / "latin1.toml"
    f.write_bytes('duration = "2s"\n# caf\xe9\n'.encode("latin-1"))
    with pytest.raises(haslab.ScenarioError) as e:
        haslab.validate(f)
    assert str(f) in str(e.value) and "not UTF-8 text (byte 21, line 2)" in str(e.value)
    with pytest.raises(haslab.ScenarioError):
        haslab.run(f)


@pytest.mark.parametrize("bad, field", [(float("nan"), "dumbbell.pairs"), (float("inf"), "dumbbell.pairs"),
                                        ({1, 2}, "dumbbell.pairs")])
def test_values_json_cannot_carry_name_their_field(bad, field):
    d = {**DUMBBELL, "dumbbell": {**DUMBBELL["dumbbell"], "pairs": bad}}
    with pytest.raises(haslab.ScenarioError, match=rf"^{field}: .* is not a value a scenario accepts"):
        haslab.validate(d)


def test_a_json_scenario_that_is_a_list_is_refused(tmp_path):
    f = tmp_path / "s.json"
    f.write_text('["2s", 1]')
    with pytest.raises(haslab.ScenarioError, match=r"a JSON scenario is an object .* this document is a list"):
        haslab.validate(f)


def test_a_goodput_window_of_1ns_is_an_error_not_an_abort():
    d = dict(DUMBBELL, flow=[{"src": "left0", "dst": "right0", "app": "bulk"}], trace={"goodput_window": "1ns"})
    with pytest.raises(haslab.ScenarioError, match=r"trace\.goodput_window: 1ns cuts the 2s run .* at least 200ns"):
        haslab.run(d)
    d["trace"]["goodput_window"] = "200ns"
    assert haslab.validate(d)["trace"]["goodput_window_ns"] == 200


def test_a_million_flows_is_an_error_not_an_abort():
    d = dict(DUMBBELL, flow=[{"name": "f{i}", "count": 1_000_000, "src": "left0", "dst": "right0", "app": "bulk"}])
    with pytest.raises(haslab.ScenarioError, match=r"flow\[0\]\.count: too many flows: at most 100000"):
        haslab.validate(d)


def test_a_huge_name_is_not_echoed_whole():
    d = dict(DUMBBELL, node=[{"name": "n" * 10_000_000}])
    with pytest.raises(haslab.ScenarioError) as e:
        haslab.validate(d)
    msg = str(e.value)
    assert len(msg) < 1000 and "more characters]" in msg and msg.startswith("node[0].name")


def test_a_billion_seeds_is_a_sweep_error_not_a_memory_error():
    with pytest.raises(SweepError, match="sweep.seeds: 1000000000 seeds is more than the 100000"):
        Sweep(DUMBBELL, seeds=1_000_000_000)
    with pytest.raises(SweepError, match="more than the 100000"):
        Sweep(DUMBBELL, seeds=iter(range(10**12)))


def test_a_real_mpd_with_empty_audio_attributes_plays(tmp_path):
    mpd = tmp_path / "v.mpd"
    mpd.write_text("""<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S" minBufferTime="">
 <Period>
  <AdaptationSet mimeType="video/mp4" startWithSAP="">
   <SegmentTemplate media="v$Number$.m4s" duration="2"/>
   <Representation id="v0" bandwidth="500000"/><Representation id="v1" bandwidth="1500000"/>
  </AdaptationSet>
  <AdaptationSet mimeType="audio/mp4" startWithSAP="" sampleRate=""><Representation id="a" bandwidth=""/></AdaptationSet>
 </Period>
</MPD>""")
    plan = haslab.validate(with_player({"mpd": str(mpd)}))
    assert plan["players"][0]["bitrates_bps"] == [500_000, 1_500_000]


def test_the_command_line_names_a_bad_file_once(tmp_path):
    from conftest import cli

    f = tmp_path / "latin1.toml"
    f.write_bytes('duration = "2s"\n# caf\xe9\n'.encode("latin-1"))
    for args in (("validate", f), ("run", "/dev/zero", "-o", tmp_path / "o")):
        r = cli(*args)
        assert r.returncode == 1
        msg = " ".join(r.stderr.split())
        assert msg.count(str(args[1])) == 1, msg
        assert "not UTF-8 text" in msg or "a regular file is needed" in msg, msg
