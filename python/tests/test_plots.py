"""Figures: reachable as haslab.plots after `import haslab`, written as PNG, SVG or PDF by
every figure function, with the same bytes for the same result, and never half-written."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import haslab
from conftest import demo_dict

PLAYERS = {
    "seed": 3,
    "duration": "20s",
    "dumbbell": {
        "pairs": 2,
        "bottleneck_rate": "4Mbps",
        "bottleneck_delay": "20ms",
        "bottleneck_queue": "40pkts",
        "access_rate": "100Mbps",
    },
    "player": [
        {
            "name": "p{i}",
            "count": 2,
            "client": "right{i}",
            "server": "left{i}",
            "abr": "panda",
            "video": {"preset": "tcphas", "duration": "60s"},
        }
    ],
    "trace": {"queues": ["r1->r2"]},
}


@pytest.fixture(scope="module")
def has_result():
    return haslab.run(PLAYERS)


@pytest.fixture(scope="module")
def bulk_result():
    return haslab.run(demo_dict("5s"))


def _figures(bulk, has):
    """Every figure function of haslab, as (name, draw(path))."""
    from haslab import demo

    return [
        ("cwnd_and_queue", lambda p: haslab.plots.cwnd_and_queue(bulk, p)),
        ("level_and_buffer", lambda p: haslab.plots.level_and_buffer(has, p)),
        ("demo.figure", lambda p: demo.figure({"a": has, "b": has}, p)),
    ]


def test_plots_is_reachable_after_import_haslab_and_loads_lazily():
    code = (
        "import sys, haslab\n"
        "assert 'matplotlib' not in sys.modules and 'haslab.plots' not in sys.modules\n"
        "f = haslab.plots.cwnd_and_queue\n"
        "assert 'haslab.plots' in sys.modules and callable(f)\n"
        "assert callable(haslab.store.Store) and 'plots' in dir(haslab)\n"
        "try:\n"
        "    haslab.no_such_thing\n"
        "except AttributeError as e:\n"
        "    assert 'no_such_thing' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_every_figure_function_writes_png_svg_and_pdf_with_stable_bytes(tmp_path, bulk_result, has_result, fmt):
    for name, draw in _figures(bulk_result, has_result):
        a, b = tmp_path / f"{name}-a.{fmt}", tmp_path / f"{name}-b.{fmt}"
        draw(a)
        draw(b)
        data = a.read_bytes()
        if fmt == "svg":
            root = ET.fromstring(data)  # well-formed XML
            assert root.tag.endswith("svg"), name
            assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 20, name  # curves, not a blank page
        else:
            assert data.startswith(MAGIC[fmt]), name
        assert len(data) > 10_000, name
        # no date or version stamp: the same figure gives the same bytes
        assert data == b.read_bytes(), f"{name}.{fmt} differs between two writes"
        assert b"Matplotlib v" not in data and b"CreationDate" not in data, name
    assert not list(tmp_path.glob(".tmp-*"))


def test_a_figure_that_cannot_be_written_leaves_no_file(tmp_path, bulk_result):
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
        haslab.plots.cwnd_and_queue(bulk_result, tmp_path / "fig.bmpx")
    assert list(tmp_path.iterdir()) == []


def test_integer_trace_columns_are_signed(has_result):
    """Differences of counters go negative (a buffer that drains during a download, a
    down-switch) instead of wrapping around 2^64."""
    for name, df in has_result.traces.items():
        for col, dtype in df.dtypes.items():
            assert dtype.kind != "u", f"{name}.{col} is {dtype}"
    seg = has_result.segments
    change = seg["buffer_after_ns"] - seg["buffer_before_ns"]
    longest = int(seg["buffer_after_ns"].max())
    assert (change.abs() <= longest).all()  # no wrap-around: bounded by the buffer itself
    assert (seg["level"].diff().dropna().abs() < 20).all()
    # a player whose buffer drains while a segment downloads exists in this run: the check bites
    assert (change < 0).any() or (seg["level"].diff() < 0).any()


def test_every_panel_has_axis_labels_with_units_and_a_legend(tmp_path, bulk_result, has_result):
    """Fit for a paper: every panel names its y axis (with a unit in parentheses, or a
    dimensionless quantity: a quality level's index, a fraction), the bottom panels name the x
    axis, and every panel with more than one kind of mark has a legend that names them all."""
    dimensionless = {"level", "fraction of time"}
    for name, draw in _figures(bulk_result, has_result):
        fig = draw(tmp_path / f"{name}.png")
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert axes, name
        legends = [ax.get_legend() for ax in axes if ax.get_legend()] + list(fig.legends)
        shown = {t.get_text() for lg in legends for t in lg.get_texts()}
        for ax in axes:
            ylabel = ax.get_ylabel()
            assert ylabel, f"{name}: a panel without a y label"
            assert re.search(r"\(.+\)", ylabel) or ylabel in dimensionless, f"{name}: {ylabel!r} has no unit"
            labels = {m.get_label() for m in ax.get_lines() + ax.collections + ax.containers}
            labels = {l for l in labels if l and not l.startswith("_")}
            assert labels <= shown, f"{name}: {ax.get_ylabel()!r}: marks missing from the legends: {labels - shown}"
        assert any(ax.get_xlabel() for ax in axes), f"{name}: no x label"
    # players.png: the level axis reads in kbps, the ladder's bitrates
    fig = haslab.plots.level_and_buffer(has_result, tmp_path / "p.png")
    ladder = has_result.plan["players"][0]["bitrates_bps"]
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert ticks and all(t in {f"{b / 1e3:.0f}" for b in ladder} for t in ticks)
    assert fig.axes[0].get_ylabel() == "bitrate (kbps)"
