"""What `haslab run` does, without typer: its options and their parser (:func:`parse_run_args`),
applying ``--set`` overrides to the scenario (also for `haslab validate`), making the output
directory ready (refuse a used one, or with ``--force`` remove only what an earlier run wrote) and
the run itself (:func:`execute_run`). Errors are ``ValueError`` with a one-line message.

The typer command ``run`` (:mod:`haslab.cli`, its help and its usage errors) and the lean path of
:mod:`haslab.cli_main` (a valid ``haslab run`` command line, parsed here) both call
:func:`execute_run`; ``python/tests/test_cli_main.py`` checks that the two accept the same
options and parse them alike."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


def parse_overrides(items: list[str]) -> dict:
    """``["duration=30s", "flow[0].tcp.sack=true"]`` → ``{"duration": "30s", "flow.0.tcp.sack": True}``.

    A value is read as a TOML value when it is one (``true``, ``4``, ``0.5``, ``"x"``,
    ``[1, 2]``, ``{a = 1}``), otherwise kept as text (``30s``, ``cubic``, ``8Mbps``)."""
    import datetime
    import re

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    out: dict = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE, e.g. --set duration=30s")
        path = re.sub(r"\[(-?\d+)\]", r".\1", key)
        try:
            value = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        if isinstance(value, (datetime.date, datetime.time)):
            value = text.strip()  # a TOML date is not a scenario value
        out[path] = value
    return out


def scenario_with_overrides(scenario: Path, items: list[str]):
    """(what to run, base_dir, overrides): the file itself without --set; else the file as a
    dict with the overrides applied (relative file names still resolve from its folder)."""
    if not items:
        return scenario, None, {}
    from .api import load
    from .dotted import set_path
    from .runs import SweepError

    overrides = parse_overrides(items)
    data = load(scenario)
    for key, value in overrides.items():
        try:
            set_path(data, key, value)
        except SweepError as e:
            raise ValueError(f"--set {key}: {e}") from None
    return data, scenario.parent, overrides


#: In a `haslab run` output directory: the files that run wrote, one name per line, so that
#: `--force` removes exactly those (and nothing a user put there).
RUN_MANIFEST = ".haslab-run"
#: What a run writes besides pcap files (for directories written before the manifest existed).
RUN_FILES = ("summary.json", "players.png") + tuple(
    f"{t}.parquet" for t in ("cwnd", "goodput", "queue", "players", "segments", "abandons", "traffic")
)


def clear_out_dir(out_dir: Path, force: bool) -> list[str]:
    """Makes ``out_dir`` ready for a run: a missing or empty directory is fine; a non-empty one
    is refused (results of two runs side by side mislead) unless ``force``, which removes the
    files the previous haslab run there wrote and nothing else. Returns the names removed."""
    if not out_dir.exists():
        return []
    if not out_dir.is_dir():
        raise ValueError(f"--out {out_dir}: exists and is not a directory")
    entries = sorted(p.name for p in out_dir.iterdir())
    if not entries:
        return []
    if not force:
        shown = ", ".join(entries[:4]) + (", …" if len(entries) > 4 else "")
        raise ValueError(
            f"--out {out_dir}/ is not empty ({shown}): pass --force to replace the results of the previous "
            "run there (only the files haslab wrote are removed), or choose another directory with --out"
        )
    manifest = out_dir / RUN_MANIFEST
    names = set(RUN_FILES)
    if manifest.is_file():
        names |= {n for n in manifest.read_text(encoding="utf-8").splitlines() if n}
    root = out_dir.resolve()
    removed = []
    for name in sorted(names):
        path = (out_dir / name).resolve()
        if path.parent != root and root not in path.parents:
            continue  # a manifest names files inside the directory only
        if path.is_file():
            path.unlink()
            removed.append(name)
    manifest.unlink(missing_ok=True)
    return removed


# ---------------------------------------------------------------------------------------------
# `haslab run` without typer

#: The options of `haslab run` (the typer command in cli.py declares the same, with their help):
#: option string -> (parameter, what it does): "value" takes a value, "append" takes a value
#: and may repeat, True or False sets a flag.
RUN_OPTIONS: dict[str, tuple[str, object]] = {
    "--out": ("out_dir", "value"),
    "-o": ("out_dir", "value"),
    "--pcap": ("pcap", True),
    "--no-pcap": ("pcap", False),
    "--force": ("force", True),
    "-f": ("force", True),
    "--set": ("overrides", "append"),
    "-s": ("overrides", "append"),
    "--quiet": ("quiet", True),
    "-q": ("quiet", True),
}
#: The parameters' defaults when an option is not given.
RUN_DEFAULTS = {"out_dir": "out", "pcap": True, "force": False, "quiet": False}


def parse_run_args(args: list[str]) -> Optional[dict]:
    """The parameters of :func:`execute_run` for ``haslab run ARGS`` (``args``: what follows
    ``run``), parsed as the typer command parses them (click's rules: options before or after the
    scenario, ``--out=DIR`` and ``--out DIR``, ``-oDIR``, flags grouped as ``-qf``, the last of a
    repeated option wins, ``--set`` collects, ``--`` ends the options).

    ``None`` when the command line is not a plain valid run: help (``-h``, ``--help``), an unknown
    option, a missing value or scenario, an extra argument, a flag given a value, an existing
    path that cannot be read. The caller then hands the command line to the typer command, which
    prints the help or the usage error (with typer's exact words and exit code 2)."""
    params: dict = {**RUN_DEFAULTS, "overrides": []}
    positional: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional += rest
            break
        if not arg.startswith("-") or len(arg) == 1:
            positional.append(arg)
            continue
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            spec = RUN_OPTIONS.get(name)
            if spec is None:
                return None
            param, action = spec
            if action in ("value", "append"):
                if not eq:
                    if not rest:
                        return None
                    value = rest.pop(0)
                _store(params, param, action, value)
            elif eq:
                return None  # a flag given a value
            else:
                params[param] = action
            continue
        # short options, grouped: -qf, -qfo DIR, -oDIR
        for i, ch in enumerate(arg[1:], start=2):
            spec = RUN_OPTIONS.get(f"-{ch}")
            if spec is None:
                return None
            param, action = spec
            if action in ("value", "append"):
                if i < len(arg):
                    value = arg[i:]
                elif rest:
                    value = rest.pop(0)
                else:
                    return None
                _store(params, param, action, value)
                break
            params[param] = action
    if len(positional) != 1:
        return None
    params["scenario"] = positional[0]
    for key in ("scenario", "out_dir"):
        if not _readable_or_missing(params[key]):
            return None
        params[key] = Path(params[key])
    return params


def _store(params: dict, param: str, action, value: str) -> None:
    if action == "append":
        params[param].append(value)
    else:
        params[param] = value


def _readable_or_missing(path: str) -> bool:
    """typer refuses an existing path that cannot be read ("is not readable")."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return True
    return os.access(path, os.R_OK)


def execute_run(scenario: Path, out_dir: Path, pcap: bool, force: bool, overrides: list[str], quiet: bool) -> None:
    """`haslab run`: runs the scenario, writes OUT's files and prints the summary (unless
    ``quiet``). Raises what :func:`haslab.cli_common.guarded` reports as a user error.

    The run imports neither NumPy, pyarrow nor pandas: the tables come from the summary and the
    simulator writes the Parquet traces (NumPy, pandas and matplotlib only for a run with
    players, for players.png); rich only when something is printed."""
    from .api import run_raw
    from .cli_common import err, out, print_summary

    what, base_dir, changed = scenario_with_overrides(scenario, overrides)
    removed = clear_out_dir(Path(out_dir), force)
    if removed and not quiet:
        err.print(f"--force: removed {len(removed)} file(s) of the previous run in {out_dir}/", soft_wrap=True)
    result = run_raw(what, out_dir=out_dir, progress=not quiet, pcap=pcap, base_dir=base_dir,
                     traces_to=out_dir, tables="players")
    if changed:
        result.summary["overrides"] = changed  # what --set changed in the file, by dotted path
    written = result.save(out_dir)
    if result.summary.get("players"):
        from .plots import level_and_buffer

        png = Path(out_dir) / "players.png"
        level_and_buffer(result.result(), png)
        written.append(png)
    pcap_files = [p["file"] for p in result.plan["trace"]["pcaps"]] if pcap else []
    names = [p.name for p in written] + pcap_files
    (Path(out_dir) / RUN_MANIFEST).write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    if not quiet:
        print_summary(result)
        out.print(f"wrote {', '.join(names)} in {out_dir}/")
