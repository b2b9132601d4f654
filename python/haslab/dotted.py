"""Dotted paths into a scenario (``flow.0.tcp.sack``): :func:`set_path`, which sweeps (their
``set``, grid and variants, :mod:`haslab.sweep`) and ``haslab run --set`` use. Light to import:
``haslab run --set`` loads it without the sweep's scheduler and store."""

from __future__ import annotations

from typing import Any, Mapping

from .runs import SweepError


def _split(path: str) -> list[str]:
    parts = path.split(".")
    if not path or any(p == "" for p in parts):
        raise SweepError(f"{path!r}: a key is a dotted path such as dumbbell.pairs or flow.0.tcp.sack")
    return parts


def _index(container: list, part: str, path: str, where: str) -> int:
    """The list index that ``part`` (at ``where`` in ``path``) means."""
    try:
        i = int(part)
    except ValueError:
        raise SweepError(f"{path}: {where} indexes a list, so {part!r} must be an integer") from None
    if not -len(container) <= i < len(container):
        parent = where.rsplit(".", 1)[0]
        raise SweepError(f"{path}: index {i} out of range ({parent} has {len(container)} entries)")
    return i


def _merge(target: dict, value: Mapping) -> None:
    for k, v in value.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, Mapping) and isinstance(target.get(k), dict):
            _merge(target[k], v)
        else:
            target[k] = _plain(v)


def _plain(v: Any) -> Any:
    """Tuples become lists, mappings dicts, so that the scenario is plain JSON data."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def set_path(scenario: dict, path: str, value: Any) -> None:
    """Sets ``scenario[path]`` where path is dotted (``flow.0.tcp.sack``), in place.

    Missing tables on the way are created; list indices must exist. A table value is merged
    into a table already at the path; ``None`` removes the key."""
    parts = _split(path)
    node: Any = scenario
    for depth, part in enumerate(parts[:-1]):
        where = ".".join(parts[: depth + 1])
        if isinstance(node, list):
            node = node[_index(node, part, path, where)]
        elif isinstance(node, dict):
            if part not in node:
                if value is None:
                    return
                node[part] = {}
            node = node[part]
        else:
            raise SweepError(f"{path}: {'.'.join(parts[:depth])} is a {type(node).__name__}, not a table or list")
        if not isinstance(node, (dict, list)):
            raise SweepError(f"{path}: {where} is a {type(node).__name__} ({node!r}), not a table or list")
    last = parts[-1]
    key = _index(node, last, path, path) if isinstance(node, list) else last
    current = node[key] if isinstance(node, list) else node.get(key)
    if value is None:
        if isinstance(node, list):
            del node[key]
        else:
            node.pop(key, None)
    elif isinstance(value, Mapping) and isinstance(current, dict):
        _merge(current, value)
    else:
        node[key] = _plain(value)
