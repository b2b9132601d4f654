"""Both forms of a fixed-rate link (departures computed at enqueue, or an end-of-serialisation
event per packet; crates/haslab-core/src/net/link.rs) give the same run through the whole
`haslab run` path: every output file is byte-identical but for the event count in summary.json.
HASLAB_EVENT_FORM_LINKS=1 puts every link in the event form (a diagnostic switch)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(example: str, out: Path, event_form: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HASLAB_EVENT_FORM_LINKS"}
    if event_form:
        env["HASLAB_EVENT_FORM_LINKS"] = "1"
    p = subprocess.run([sys.executable, "-m", "haslab", "run", str(REPO / "examples" / example), "-o", str(out),
                        "-q", "--set", "duration=30s"], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("example", ["dumbbell.toml", "has.toml", "tcphas-home.toml"])
def test_both_link_forms_write_the_same_files(tmp_path, example):
    _run(example, tmp_path / "scheduled", False)
    _run(example, tmp_path / "event", True)
    names = sorted(p.name for p in (tmp_path / "scheduled").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "event").iterdir())
    assert "summary.json" in names and len(names) > 2
    for name in names:
        a, b = (tmp_path / d / name for d in ("scheduled", "event"))
        if name == "summary.json":
            sa, sb = json.loads(a.read_text()), json.loads(b.read_text())
            # the event form spends an end-of-serialisation event per packet per hop
            assert sb.pop("events") > sa.pop("events")
            assert sa == sb
        else:
            assert a.read_bytes() == b.read_bytes(), name
