"""dash.js's metrics log (POSTed by web/player.html) → the simulator's per-segment rows and player
summary (`haslab.live.dashjs.segments_from_log`), on a log written by hand."""

from __future__ import annotations

import pytest

from haslab.live.dashjs import segments_from_log

LADDER = [248_000, 456_000, 928_000]


def _line(t_s: float, event: dict) -> dict:
    # each line: its receipt on the run's clock (t_ns) and on the epoch (wall_ns); the browser's
    # own times are epoch ms: here the run's clock starts at epoch 1000 s
    return {"t_ns": int(t_s * 1e9), "wall_ns": int((1000 + t_s) * 1e9), "event": event}


def test_rows_stalls_and_instability_from_a_hand_written_log():
    ep = lambda s: (1000 + s) * 1e3  # noqa: E731 - run seconds → browser epoch ms
    lines = [
        _line(0.0, {"type": "start", "version": "4.7.4"}),
        _line(1.0, {"type": "segment", "index": 0, "quality": 0, "bytes": 62_000, "duration_s": 2.0,
                    "start_ms": ep(0.5), "end_ms": ep(1.0), "buffer_s": 2.0, "throughput_kbps": 900}),
        _line(1.2, {"type": "playing", "wall_ms": ep(1.2)}),
        _line(3.0, {"type": "segment", "index": 1, "quality": 2, "bytes": 232_000, "duration_s": 2.0,
                    "start_ms": ep(1.0), "first_byte_ms": ep(1.1), "end_ms": ep(3.0), "buffer_s": 1.0,
                    "throughput_kbps": 1000}),
        _line(4.0, {"type": "waiting", "wall_ms": ep(4.0)}),
        _line(5.5, {"type": "playing", "wall_ms": ep(5.5)}),
    ] + [_line(1.0 + k, {"type": "sample", "current_s": k, "buffer_s": 1.0, "quality": q})
         for k, q in enumerate([0, 0, 2, 2, 1])]
    cols, summary = segments_from_log(lines, LADDER, player=3)
    assert cols["player"] == [3, 3] and cols["index"] == [0, 1] and cols["level"] == [0, 2]
    assert cols["request_ns"] == [500_000_000, 1_000_000_000] and cols["download_ns"] == [500_000_000, 2_000_000_000]
    # first byte: dash.js's firstByteDate; without one, the last byte's time
    assert cols["first_byte_ns"] == [1_000_000_000, 1_100_000_000] and cols["ttfb_ns"] == [500_000_000, 100_000_000]
    assert cols["throughput_bps"][1] == pytest.approx(232_000 * 8 / 2.0)
    assert cols["bitrate_bps"] == [248_000, 928_000]
    assert summary["segments"] == 2 and summary["switches"] == 1
    # one stall: `waiting` after playback started, until the next `playing`
    assert summary["stalls"] == 1 and summary["stall_ns"] == 1_500_000_000
    assert summary["startup_delay_ns"] == 700_000_000  # first request → first `playing`
    # per-second levels 0 0 2 2 1: two changes in four pairs
    assert summary["instability_pct"] == pytest.approx(50.0)
    assert summary["version"] == "4.7.4"
