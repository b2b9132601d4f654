"""`haslab --help` texts say what their source says (TOML tables such as [[player]] and
[sweep] included), and `--version` prints the package's version."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

import haslab
from haslab.cli import app
from conftest import cli


def _commands(group, path: tuple[str, ...] = ()):
    """Every command of the CLI as (argv path, click command), groups included (typer may
    bundle its own click: groups are recognised by their commands)."""
    yield path, group
    if isinstance(getattr(group, "commands", None), dict):
        for name, sub in group.commands.items():
            yield from _commands(sub, (*path, name))


ROOT = typer.main.get_command(app)
COMMANDS = list(_commands(ROOT))
BRACKETED = re.compile(r"\[\[?[A-Za-z_][\w.\-]*\]\]?")


def _texts(cmd) -> list[str]:
    texts = [cmd.help or ""]
    texts += [getattr(p, "help", None) or "" for p in cmd.params]
    return texts


def test_some_help_text_names_toml_tables():
    """The check below has something to bite on: the sources name [[player]] and [sweep]."""
    tokens = {t for _, c in COMMANDS for text in _texts(c) for t in BRACKETED.findall(text)}
    assert {"[[player]]", "[sweep]"} <= tokens


@pytest.mark.parametrize("path", [p for p, c in COMMANDS], ids=lambda p: " ".join(p) or "haslab")
def test_help_keeps_every_bracketed_toml_name(path):
    cmd = dict(COMMANDS)[path]
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    for text in _texts(cmd):
        for token in BRACKETED.findall(text):
            assert token in shown, f"`haslab {' '.join(path)} --help` lost {token}"


def test_version_option():
    for args in (("--version",), ("-V",)):
        p = cli(*args)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == f"haslab {haslab.__version__}"
