"""`haslab run` without pandas: the summary and Parquet traces written from the simulator's arrays
with pyarrow alone are the bytes the DataFrame path (`Result.save`) writes, and a run without
players never imports pandas or matplotlib."""

from __future__ import annotations

import subprocess
import sys

from haslab.api import run_raw
from conftest import demo_toml
from test_cli_run_out import HAS_TOML


def _same_files(a, b):
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_raw_save_writes_the_bytes_of_result_save(tmp_path):
    # the demo traces cwnd, goodput and the bottleneck queue; the player scenario adds players
    # and segments (name columns: flow_name, link_name, player_name)
    for i, text in enumerate([demo_toml("3s"), HAS_TOML]):
        raw = run_raw(text)
        assert raw.tables, "a run has traces"
        raw.save(tmp_path / f"raw{i}")
        raw.result().save(tmp_path / f"df{i}")
        _same_files(tmp_path / f"raw{i}", tmp_path / f"df{i}")


def test_haslab_run_without_players_imports_neither_pandas_nor_matplotlib(tmp_path):
    scenario = tmp_path / "bulk.toml"
    scenario.write_text(demo_toml("2s"))
    code = (
        "import sys\n"
        "from haslab.cli import app\n"
        f"try: app(['run', {str(scenario)!r}, '-o', {str(tmp_path / 'out')!r}, '-q'])\n"
        "except SystemExit as e: assert not e.code, e.code\n"
        "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
    assert (tmp_path / "out" / "goodput.parquet").exists()
