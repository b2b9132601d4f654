"""Every registered congestion control and player algorithm reaches the user: it is listed by
`haslab cc list` / `haslab abr` (text and --json), in `haslab.catalog()`, and accepted by the
scenario schema `haslab schema` prints, both as a bare name and as an `algorithm` table.

The names come from the registries themselves (`haslab._core.CC_NAMES` and `ABR_NAMES`, the
`NAMES` of `CcConfig` and `AbrConfig`), not from a copy kept here.
"""

from __future__ import annotations

import json

import pytest

import haslab
from haslab import _core

from conftest import cli

FAMILIES = {
    # family: (registry names, `haslab` command listing it, catalog key, first column's header, schema defs)
    "cc": (_core.CC_NAMES, ("cc", "list"), "algorithms", "algorithm", ("CcSpec", "CcConfig")),
    "abr": (_core.ABR_NAMES, ("abr",), "players", "abr", ("AbrSpec", "AbrConfig")),
}


def first_column(text: str, header: str) -> list[str]:
    """The first cells of the rich table whose first column is ``header``: one per row, the
    continuation lines of a row (empty, or ``alias NAME``) left out."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┃") and line.split("┃")[1].strip() == header)
    cells = []
    for line in lines[start + 1 :]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            cell = line.split("│")[1].strip()
            if cell and not cell.startswith("alias "):
                cells.append(cell)
    return cells


def test_the_registries_are_exposed_and_not_empty():
    assert len(_core.CC_NAMES) >= 2 and len(_core.ABR_NAMES) >= 2
    assert "newreno" in _core.CC_NAMES and "rbb" in _core.ABR_NAMES
    for names in (_core.CC_NAMES, _core.ABR_NAMES):
        assert len(set(names)) == len(names), "names are unique"


def test_the_table_reader_reads_rows_not_continuations():
    text = "\n".join(
        [
            "┃ algorithm ┃ source ┃",
            "│ newreno   │ RFC    │",
            "│ alias reno│        │",
            "│           │ more   │",
            "│ cubic     │ Linux  │",
            "└───────────┴────────┘",
            "│ other     │ table  │",
        ]
    )
    assert first_column(text, "algorithm") == ["newreno", "cubic"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_registered_algorithm_is_listed_by_the_cli(family):
    names, command, _, header, _ = FAMILIES[family]
    p = cli(*command)
    assert p.returncode == 0, p.stderr
    assert first_column(p.stdout, header) == list(names)
    p = cli(*command, "--json")
    assert p.returncode == 0, p.stderr
    listed = json.loads(p.stdout)
    if family == "cc":
        listed = listed["algorithms"]
    assert [a["name"] for a in listed] == list(names)
    for a in listed:
        assert a["source"], a["name"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_registered_algorithm_is_in_the_catalog(family):
    names, _, key, _, _ = FAMILIES[family]
    assert [a["name"] for a in haslab.catalog()[key]] == list(names)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_registered_algorithm_is_in_the_schema(family):
    names, _, _, _, (spec, config) = FAMILIES[family]
    p = cli("schema")
    assert p.returncode == 0, p.stderr
    defs = json.loads(p.stdout)["$defs"]
    # the bare-name form: one constant per algorithm, each described
    (bare,) = [alt for alt in defs[spec]["anyOf"] if alt.get("type") == "string"]
    assert [c["const"] for c in bare["oneOf"]] == list(names)
    assert all(c.get("description") for c in bare["oneOf"])
    # the table form: one table per algorithm, tagged with its name
    tables = defs[config]["oneOf"]
    assert [t["properties"]["algorithm"]["const"] for t in tables] == list(names)
    assert all(t["required"][0] == "algorithm" for t in tables)
