"""What `haslab run` (and `validate`) do before the simulator starts: apply ``--set`` overrides to
the scenario, and make the output directory ready (refuse a used one, or with ``--force`` remove
only what an earlier run wrote). Errors are ``ValueError`` with a one-line message."""

from __future__ import annotations

from pathlib import Path


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
    from .sweep import SweepError, set_path

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
