"""Shared helpers for the haslab tests."""

from __future__ import annotations

import copy
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import pytest

import haslab


def demo_dict(duration: str = "10s", seed: int | None = None) -> dict:
    """The packaged demo scenario as a dict, shortened."""
    d = tomllib.loads(haslab.demo_scenario())
    d = copy.deepcopy(d)
    d["duration"] = duration
    if seed is not None:
        d["seed"] = seed
    return d


def demo_toml(duration: str = "10s") -> str:
    """The packaged demo scenario as TOML text, shortened (only the duration line changes)."""
    lines = haslab.demo_scenario().splitlines()
    out = [f'duration = "{duration}"' if l.startswith("duration") else l for l in lines]
    assert out != lines, "the demo scenario has no top-level duration line"
    return "\n".join(out) + "\n"


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    """Runs `python -m haslab ARGS` and returns the completed process (text output)."""
    return subprocess.run(
        [sys.executable, "-m", "haslab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


@pytest.fixture(scope="session")
def short_demo():
    """One 10-second run of the demo scenario, shared by the read-only tests."""
    return haslab.run(demo_dict("10s"))
