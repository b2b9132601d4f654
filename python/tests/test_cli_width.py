"""Every table the command line prints fits 80 columns (COLUMNS=80): a table too wide is split
into parts that repeat the row names, and no cell is cut with an ellipsis."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "examples"


def cli80(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="80")
    return subprocess.run(
        [sys.executable, "-m", "haslab", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=600,
    )


def assert_fits(text: str) -> None:
    assert text.strip(), "nothing printed"
    for line in text.splitlines():
        assert len(line) <= 80, f"{len(line)} columns: {line!r}"
        # rich marks a cut cell with an ellipsis at the end of the cell
        assert not re.search(r"…\s*(│|┃|$)", line), f"cut cell: {line!r}"


@pytest.mark.parametrize(
    "args",
    [
        ["describe", EX / "tcphas-home.toml"],
        ["describe", EX / "has.toml"],
        ["cc", "list"],
        ["reproduce", "list"],
        ["sweep", "validate", EX / "sweeps" / "dumbbell.toml"],
    ],
    ids=lambda a: " ".join(str(x) if not isinstance(x, Path) else x.name for x in a),
)
def test_listing_commands_fit_80_columns(args):
    p = cli80(*args)
    assert p.returncode == 0, p.stderr
    assert_fits(p.stdout)


@pytest.mark.parametrize("example", ["has.toml", "dumbbell.toml", "tcphas-home.toml"])
def test_run_tables_fit_80_columns(tmp_path, example):
    p = cli80("run", EX / example, "--set", "duration=8s", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert_fits(p.stdout)
    assert "Flows" in p.stdout and "Links" in p.stdout


def test_split_tables_keep_every_column_and_the_row_names():
    """A table wider than the console is printed as parts; each part repeats the first
    column and together they hold every column once."""
    from rich.console import Console
    from rich.table import Table

    from haslab.console import fit

    t = Table(title="T")
    names = [f"column number {i}" for i in range(12)]
    for n in names:
        t.add_column(n)
    t.add_row(*[f"value{i}" for i in range(12)])
    console = Console(width=80)
    parts = fit(console, t)
    assert len(parts) > 1
    seen = []
    for part in parts:
        headers = [c.header for c in part.columns]
        assert headers[0] == names[0]
        seen += headers[1:]
        assert console.measure(part).maximum <= 80
    assert seen == names[1:]


def test_sweep_tables_fit_80_columns_and_keep_errors_whole(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        f'[sweep]\nscenario = "{EX / "dumbbell.toml"}"\nseeds = 2\nset = {{ duration = "1s" }}\n'
        '[sweep.grid]\n"flow.0.count" = [1, 2]\n"defaults.cc" = ["cubic", "nosuchcc"]\n'
    )
    p = cli80("sweep", "validate", f)
    assert p.returncode == 1
    assert_fits(p.stdout)
    assert cli80("sweep", "run", f, "--out", tmp_path / "o", "--jobs", "1", "--quiet").returncode != 0  # failed runs
    p = cli80("sweep", "status", tmp_path / "o")
    assert_fits(p.stdout)
    # the error's list of accepted values is printed to its end, wrapped
    assert "trickle" in p.stdout.replace("│", " ")
