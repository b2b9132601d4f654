"""`haslab run` without NumPy, pyarrow and pandas: the Parquet traces the simulator writes hold
what the DataFrame path (`Result.save`) writes (same columns, types, name columns as
dictionaries of every name, rows), and a run without players imports none of NumPy, pyarrow,
pandas or matplotlib (nor rich when it prints nothing)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq
import pytest

from haslab.api import run_raw
from conftest import demo_toml
from test_cli_run_out import HAS_TOML


def _same_content(a, b):
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for n in names:
        if n.endswith(".parquet"):
            ta, tb = pq.read_table(a / n), pq.read_table(b / n)
            assert ta.schema.equals(tb.schema), n
            # (pyarrow's Table.equals holds NaN unequal to itself: compare the DataFrames)
            da, db = pd.read_parquet(a / n), pd.read_parquet(b / n)
            pd.testing.assert_frame_equal(da, db, check_exact=True)
            for col in da.columns:
                if col.endswith("_name"):
                    assert isinstance(db[col].dtype, pd.CategoricalDtype), (n, col)
        else:
            assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_traces_written_by_the_simulator_hold_what_result_save_writes(tmp_path):
    # the demo traces cwnd, goodput and the bottleneck queue (link_name: 1 of the link directions
    # used, every one a category); the player scenario adds players (time_s, buffer_s) and
    # segments (flow_name, player_name)
    for i, text in enumerate([demo_toml("3s"), HAS_TOML]):
        raw = run_raw(text, traces_to=tmp_path / f"raw{i}", tables=True)
        assert raw.written and raw.tables, "a run has traces"
        assert [p.name for p in raw.save(tmp_path / f"raw{i}")][0] == "summary.json"
        raw.result().save(tmp_path / f"df{i}")
        _same_content(tmp_path / f"raw{i}", tmp_path / f"df{i}")
        # and without traces_to, RawResult.save writes them from the arrays
        run_raw(text).save(tmp_path / f"arrays{i}")
        _same_content(tmp_path / f"arrays{i}", tmp_path / f"df{i}")
    queue = pd.read_parquet(tmp_path / "raw0" / "queue.parquet")
    assert len(queue.link_name.cat.categories) > queue.link_name.nunique()


def test_run_raw_tables(tmp_path):
    text = demo_toml("1s")
    raw = run_raw(text, traces_to=tmp_path / "a", tables=False)
    assert raw.tables is None and raw.written
    with pytest.raises(ValueError, match="did not keep its traces"):
        raw.result()
    assert run_raw(text, traces_to=tmp_path / "b", tables="players").tables is None
    assert run_raw(HAS_TOML, traces_to=tmp_path / "c", tables="players").tables
    with pytest.raises(ValueError, match="tables: expected"):
        run_raw(text, tables="yes")


def test_haslab_run_without_players_imports_neither_numpy_pyarrow_pandas_nor_matplotlib(tmp_path):
    # (nor rich, with -q: nothing is printed)
    scenario = tmp_path / "bulk.toml"
    scenario.write_text(demo_toml("2s"))
    code = (
        "import sys\n"
        "from haslab.cli import app\n"
        f"try: app(['run', {str(scenario)!r}, '-o', {str(tmp_path / 'out')!r}, '-q'])\n"
        "except SystemExit as e: assert not e.code, e.code\n"
        "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'matplotlib', 'rich') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
    for name in ("cwnd", "goodput", "queue"):
        assert (tmp_path / "out" / f"{name}.parquet").exists()


def test_raw_result_save_from_arrays_does_not_import_pandas(tmp_path):
    # run_raw(...).save(out) without traces_to writes the traces from the NumPy arrays with
    # pyarrow alone
    code = (
        "import sys\n"
        "from haslab.api import run_raw\n"
        f"run_raw(open({str(tmp_path / 'bulk.toml')!r}).read()).save({str(tmp_path / 'out')!r})\n"
        "print('pandas' in sys.modules)\n"
    )
    (tmp_path / "bulk.toml").write_text(demo_toml("2s"))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
    assert (tmp_path / "out" / "cwnd.parquet").exists()
