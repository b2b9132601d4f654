"""A sweep's runs as the store knows them: :class:`RunSpec` (one run), :func:`run_hash` (the key
of its results in the store, :mod:`haslab.store`) and :func:`canonical_json` (the text hashed).

:class:`SweepError`, the error of an invalid sweep, is defined here so that this module, the
sweep (:mod:`haslab.sweep`, which re-exports all of these) and its scheduler
(:mod:`haslab.scheduler`) share it without importing one another in a loop.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping


class SweepError(ValueError):
    """An invalid sweep definition; the message starts with the offending key."""


def canonical_json(obj: Any) -> str:
    """The canonical JSON text of a scenario: keys sorted, no whitespace, UTF-8, no NaN.

    Two scenarios that are equal as JSON values give the same text (key order does not matter;
    ``1`` and ``1.0`` are different values, as they are for the simulator's parser)."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise SweepError(f"scenario is not plain JSON data (dicts, lists, strings, numbers, booleans): {e}") from None


def run_hash(scenario: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a run's full scenario, its ``seed`` included."""
    return hashlib.sha256(canonical_json(scenario).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: what a worker needs, and the labels its results are stored under."""

    run_hash: str
    params: dict  # column name -> value (scalar), in the sweep's axis order
    seed: int
    scenario: dict  # the full scenario, seed included
    traces: bool = True
    pcap: bool = False
    #: Absolute folder the scenario's relative file names (MPDs, traces, Sabre files) resolve
    #: against; None: the worker's current directory. Not part of the run's hash.
    base_dir: str | None = None
