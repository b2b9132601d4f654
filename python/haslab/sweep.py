"""Sweeps: one base scenario, a grid of parameters, a list of seeds; every combination is a run.

A sweep is defined in Python::

    sweep = haslab.Sweep(
        "examples/dumbbell.toml",
        grid={"dumbbell.pairs": [1, 2, 4], "defaults.cc": ["newreno", "cubic"]},
        seeds=[1, 2, 3],
    )
    store = sweep.run("out/dumbbell-sweep")      # all local cores; resumes if run again
    df = store.summary()                         # one row per run

or in a TOML file (``haslab sweep run FILE``, see :meth:`Sweep.from_toml` and docs/sweeps.md)::

    [sweep]
    scenario = "dumbbell.toml"        # relative to this file (or an inline [sweep.scenario] table)
    seeds = [1, 2, 3]                 # or a count: seeds = 3 means 1, 2, 3
    [sweep.grid]
    "dumbbell.pairs" = [1, 2, 4]
    "defaults.cc" = ["newreno", "cubic"]

Keys are dotted paths into the scenario (``dumbbell.pairs``); a path component that is an
integer indexes a list (``flow.0.tcp.sack`` is the ``sack`` option of the first ``[[flow]]``).
A value that is a table is merged into the table already there (or replaces a non-table), and
``None`` (Python only) removes the key.

Every run's full scenario, seed included, is hashed (canonical JSON, SHA-256): the hash keys its
results in the store (:mod:`haslab.store`), so a run whose hash is stored is never run again.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

# set_path (dotted paths into a scenario), RunSpec, run_hash, SweepInterrupted, SweepOutcome and
# default_jobs are also found here, where the sweep's API is (haslab.sweep.SweepInterrupted, …)
from .dotted import _plain, _split, set_path
from .runs import RunSpec, SweepError, canonical_json, run_hash
from .scheduler import Scheduler, SweepInterrupted, SweepOutcome, default_jobs  # noqa: F401
from .store import PCAP_MARK, TRACES_MARK

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


#: Columns of the summary table that a parameter (grid key or variant axis) may not be named.
RESERVED_COLUMNS = ("run_hash", "seed", "status", "error", "wall_s", "finished_at", "haslab_version")

_SCALAR = (bool, int, float, str)


# ---------------------------------------------------------------------------------------------
# the simulator's version


def model_version() -> str:
    """What stored runs record as ``haslab_version``: the package version and the fingerprint of
    the simulator's source (``haslab._core.MODEL_ID``), e.g. ``0.1.0+3f2a…``. A sweep re-runs
    stored runs whose version differs: their results came from another simulator."""
    from . import _core

    return f"{_core.__version__}+{_core.MODEL_ID}"


def _scenario_schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        from .api import schema

        _SCHEMA = json.loads(schema())
    return _SCHEMA


_SCHEMA: dict | None = None


def _concrete(nodes: list, defs: Mapping[str, Any]) -> list[dict]:
    """The schemas ``nodes`` stand for: ``$ref`` followed, ``anyOf`` / ``oneOf`` / ``allOf``
    spread out; ``{}`` stands for anything."""
    out: list[dict] = []
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n is True:
            out.append({})
        elif isinstance(n, dict):
            if "$ref" in n:
                stack.append(defs.get(n["$ref"].rsplit("/", 1)[-1], {}))
            elif any(k in n for k in ("anyOf", "oneOf", "allOf")):
                for k in ("anyOf", "oneOf", "allOf"):
                    stack.extend(n.get(k, []))
            else:
                out.append(n)
    return out


def unknown_key(path: str) -> tuple[str, list[str]] | None:
    """Whether a dotted scenario path can exist, by the scenario's JSON Schema (``haslab schema``).

    Returns None if some scenario can have the key, else (the first prefix of ``path`` that no
    scenario has, the keys accepted at that level). List indices are not checked against a
    particular scenario here (that is :func:`set_path`'s job)."""
    schema = _scenario_schema()
    defs = schema.get("$defs", {})
    parts = _split(path)
    nodes: list = [schema]
    for depth, part in enumerate(parts):
        following: list = []
        known: list[str] = []
        for n in _concrete(nodes, defs):
            types = n.get("type")
            types = set(types) if isinstance(types, list) else {types}
            if not n or (types == {None} and "properties" not in n and "items" not in n):
                return None  # unconstrained below here
            if "properties" in n or "object" in types:
                props = n.get("properties", {})
                known.extend(props)
                if part in props:
                    following.append(props[part])
                elif n.get("additionalProperties", True) is not False:
                    extra = n.get("additionalProperties", True)
                    following.append(extra if isinstance(extra, dict) else {})
            if "items" in n or "array" in types:
                if re.fullmatch(r"-?\d+", part):
                    following.append(n.get("items", {}))
                else:
                    known.append("an index (0, 1, …)")
        if not following:
            return ".".join(parts[: depth + 1]), sorted(dict.fromkeys(known))
        nodes = following
    return None


def check_keys(keys: Iterable[str], where: str) -> None:
    """Raises :class:`SweepError` naming the first key no scenario has (a misspelt grid key
    would otherwise make every run fail, or be ignored)."""
    import difflib

    for key in keys:
        bad = unknown_key(key)
        if bad is None:
            continue
        prefix, known = bad
        leaf = prefix.rsplit(".", 1)[-1]
        close = difflib.get_close_matches(leaf, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else (f"; accepted there: {', '.join(known)}" if known else "")
        what = f"{prefix!r} is not a scenario key" if prefix == key else f"{key}: {prefix!r} is not a scenario key"
        raise SweepError(f"{where}.{key}: {what} (see `haslab schema`){hint}")


def apply_overrides(scenario: dict, overrides: Mapping[str, Any]) -> None:
    """Applies ``{dotted path: value}`` (nested tables are paths too) to a scenario, in place."""
    for key, value in overrides.items():
        set_path(scenario, key, value)


def _flatten_overrides(overrides: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The dotted keys an override table sets (``{"a": {"b": 1}}`` sets ``a.b``)."""
    keys = []
    for k, v in overrides.items():
        if isinstance(v, Mapping) and v:
            keys.extend(_flatten_overrides(v, f"{prefix}{k}."))
        else:
            keys.append(f"{prefix}{k}")
    return keys


def _flatten_grid(grid: Mapping[str, Any], prefix: str = "") -> dict[str, list]:
    """``{"dumbbell": {"pairs": [1, 2]}}`` (TOML's unquoted dotted keys) → ``{"dumbbell.pairs": [1, 2]}``."""
    flat: dict[str, list] = {}
    for k, v in grid.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            flat.update(_flatten_grid(v, key + "."))
        elif isinstance(v, (list, tuple)):
            if len(v) == 0:
                raise SweepError(f"sweep.grid.{key}: the list of values is empty")
            flat[key] = list(v)
        else:
            raise SweepError(f"sweep.grid.{key}: expected a list of values, got {v!r}")
    return flat


# ---------------------------------------------------------------------------------------------
# the sweep


@dataclass(frozen=True)
class _Axis:
    name: str  # the column name
    labels: list  # column values, one per point
    overrides: list  # {dotted path: value}, one per point


def _column_values(values: list) -> list:
    """Parameter values as they go into a column: scalars of one kind stay as they are
    (ints with floats become floats); anything else becomes its canonical JSON text."""
    if all(isinstance(v, bool) for v in values):
        return list(values)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return list(values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    if all(isinstance(v, str) for v in values):
        return list(values)
    return [v if isinstance(v, str) else canonical_json(v) for v in values]


def _load_scenario(scenario: Any, base_dir: Path | None) -> tuple[dict, str | None]:
    """Returns (scenario dict, source path or None)."""
    if isinstance(scenario, Mapping):
        return _plain(scenario), None
    from .api import _looks_like_path

    if isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and _looks_like_path(scenario)):
        path = Path(scenario)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            raise SweepError(f"sweep.scenario: scenario file not found: {path}")
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as e:
            raise SweepError(f"sweep.scenario: {path}: {e}") from None
        return data, str(path)
    if isinstance(scenario, str):
        try:
            return tomllib.loads(scenario), None
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"sweep.scenario: invalid TOML: {e}") from None
    raise SweepError(f"sweep.scenario: a scenario is a path, a TOML string or a dict, not {type(scenario).__name__}")


#: Most seeds a sweep takes (each is at least one run; a count of a billion made a list that
#: did not fit the memory).
MAX_SEEDS = 100_000
#: Most runs a sweep expands to (grid points × seeds), checked before the runs are built.
MAX_RUNS = 1_000_000


def _seeds(seeds: Any) -> list[int]:
    if isinstance(seeds, bool):
        raise SweepError(f"sweep.seeds: expected a list of integers or a count, got {seeds!r}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise SweepError(f"sweep.seeds: a count of seeds must be at least 1, got {seeds}")
        if seeds > MAX_SEEDS:
            raise SweepError(f"sweep.seeds: {seeds} seeds is more than the {MAX_SEEDS} a sweep may run")
        return list(range(1, seeds + 1))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise SweepError(f"sweep.seeds: expected a list of integers or a count, got {seeds!r}")
    out = []
    for s in seeds:
        out.append(s)
        if len(out) > MAX_SEEDS:
            raise SweepError(f"sweep.seeds: the list has more than the {MAX_SEEDS} seeds a sweep may run")
    if not out:
        raise SweepError("sweep.seeds: the list is empty")
    for s in out:
        if isinstance(s, bool) or not isinstance(s, int) or s < 0 or s >= 2**64:
            raise SweepError(f"sweep.seeds: {s!r} is not an integer in [0, 2^64)")
    if len(set(out)) != len(out):
        raise SweepError(f"sweep.seeds: duplicate seeds in {out}")
    return out


class Sweep:
    """A base scenario, a grid of parameters, variants and seeds.

    Args:
        scenario: the base scenario: a path to a TOML/JSON file, a TOML string or a dict.
        grid: ``{dotted path: [values]}``; every combination of values is a point. The path
            is also the name of the parameter's column in the results.
        seeds: a list of seeds, or a count ``n`` meaning ``1..n``. Each point runs once per seed
            (the scenario's ``seed`` is set to it).
        variants: named bundles of overrides, for parameters that change several keys at once:
            ``{"method": {"tcphas": {"defaults.cc": "tcphas", ...}, "westwood": {...}}}`` adds an
            axis (column ``method``) whose values are the bundle names. Axes are crossed with
            the grid (variants first, in the order given).
        set: overrides applied to the base scenario before the grid (``{"duration": "30s"}``).
        derive: ``derive(scenario, params)``, called for every run after the overrides and the
            seed are applied, may change the scenario in place (or return a new dict), e.g. to
            size a queue from the RTT of the point. It runs in the calling process only.
        traces: store the run's trace files (cwnd, goodput, queue Parquet) besides its summary.
        pcap: write the pcap captures the scenario asks for into the run's directory.
        name: a label for the sweep (defaults to the scenario file's stem).
        base_dir: the folder a relative ``scenario`` path is found in, and the folder relative
            file names (MPDs, traces, Sabre files) of an inline scenario resolve against. Those
            of a scenario file resolve against that file's folder, as with ``haslab run``.
    """

    def __init__(
        self,
        scenario: Any,
        grid: Mapping[str, Sequence[Any]] | None = None,
        seeds: Any = (1,),
        *,
        variants: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
        set: Mapping[str, Any] | None = None,  # noqa: A002 - the TOML key's name
        derive: Callable[[dict, dict], dict | None] | None = None,
        traces: bool = True,
        pcap: bool = False,
        name: str | None = None,
        base_dir: str | os.PathLike | None = None,
    ):
        self.base, self.scenario_path = _load_scenario(scenario, Path(base_dir) if base_dir else None)
        # Relative file names in the scenario resolve against the folder of the file it comes
        # from: the scenario file's, else (an inline table) the sweep file's (base_dir).
        if self.scenario_path is not None:
            files_dir: Path | None = Path(self.scenario_path).parent
        else:
            files_dir = Path(base_dir) if base_dir else None
        self.files_dir = str(files_dir.resolve()) if files_dir is not None else None
        if not isinstance(self.base, dict):
            raise SweepError("sweep.scenario: the scenario must be a table")
        self.set = dict(set or {})
        self.grid = _flatten_grid(grid or {})
        self.variants = {k: dict(v) for k, v in (variants or {}).items()}
        self.seeds = _seeds(seeds)
        self.derive = derive
        self.traces = bool(traces)
        self.pcap = bool(pcap)
        self.name = name or (Path(self.scenario_path).stem if self.scenario_path else "sweep")
        self._axes = self._build_axes()
        self._check_size()
        self._runs: list[RunSpec] | None = None

    def _check_size(self) -> None:
        """Refuses a sweep of more than :data:`MAX_RUNS` runs before any run is built."""
        total = len(self.seeds)
        for a in self._axes:
            total *= len(a.labels)
        if total > MAX_RUNS:
            factors = " × ".join([f"{len(a.labels)} ({a.name})" for a in self._axes] + [f"{len(self.seeds)} seeds"])
            raise SweepError(
                f"sweep.grid: {factors} = {total:,} runs: a sweep has at most {MAX_RUNS:,} runs "
                "(split it into several sweeps, or use fewer values or seeds)"
            )

    def _build_axes(self) -> list[_Axis]:
        axes = []
        for axis, bundles in self.variants.items():
            if not isinstance(bundles, Mapping) or not bundles:
                raise SweepError(f"sweep.variants.{axis}: expected a table of named variants")
            for label, overrides in bundles.items():
                if not isinstance(overrides, Mapping):
                    raise SweepError(f"sweep.variants.{axis}.{label}: expected a table of overrides")
            axes.append(_Axis(axis, [str(k) for k in bundles], [dict(v) for v in bundles.values()]))
        for key, values in self.grid.items():
            axes.append(_Axis(key, _column_values(values), [{key: v} for v in values]))
        names = [a.name for a in axes]
        for n in names:
            if n in RESERVED_COLUMNS:
                raise SweepError(f"sweep: a parameter may not be called {n!r} (reserved column; use seeds for seeds)")
            if names.count(n) > 1:
                raise SweepError(f"sweep: parameter {n!r} is both a grid key and a variant axis")
        return axes

    @classmethod
    def from_toml(cls, source: str | os.PathLike) -> "Sweep":
        """Reads a sweep from a TOML file (or TOML text) with a ``[sweep]`` table.

        Keys of ``[sweep]``: ``scenario`` (a path relative to the file, or an inline table),
        ``seeds`` (list or count, default ``[1]``), ``grid`` (table of lists), ``variants``
        (table of tables of overrides), ``set`` (table of overrides), ``traces`` (bool,
        default true), ``pcap`` (bool, default false), ``name``, ``out`` (default output
        directory for ``haslab sweep run``, relative to the file).
        """
        base_dir = None
        path = None
        if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and "=" not in source):
            path = Path(source)
            if not path.is_file():
                raise FileNotFoundError(f"sweep file not found: {path}")
            text = path.read_text(encoding="utf-8")
            base_dir = path.parent
        else:
            text = str(source)
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"{path or 'sweep'}: invalid TOML: {e}") from None
        known = {"scenario", "seeds", "grid", "variants", "set", "traces", "pcap", "name", "out"}
        if set(doc) != {"sweep"}:
            extra = sorted(set(doc) - {"sweep"})
            if "sweep" not in doc:
                raise SweepError("sweep: the file has no [sweep] table")
            raise SweepError(f"{extra[0]}: unknown top-level key in a sweep file (everything goes in [sweep])")
        s = doc["sweep"]
        for k in s:
            if k not in known:
                raise SweepError(f"sweep.{k}: unknown key; expected one of {', '.join(sorted(known))}")
        if "scenario" not in s:
            raise SweepError("sweep.scenario: missing (a path to a scenario file, or an inline table)")
        for k in ("traces", "pcap"):
            if k in s and not isinstance(s[k], bool):
                raise SweepError(f"sweep.{k}: expected true or false, got {s[k]!r}")
        for k in ("grid", "variants", "set"):
            if k in s and not isinstance(s[k], Mapping):
                raise SweepError(f"sweep.{k}: expected a table")
        sweep = cls(
            s["scenario"],
            grid=s.get("grid"),
            seeds=s.get("seeds", [1]),
            variants=s.get("variants"),
            set=s.get("set"),
            traces=s.get("traces", True),
            pcap=s.get("pcap", False),
            name=s.get("name") or (path.stem if path else None),
            base_dir=base_dir,
        )
        out = s.get("out")
        sweep.default_out = (base_dir / out if base_dir and out else Path(out)) if out else None
        return sweep

    default_out: Path | None = None

    def check(self) -> None:
        """Checks every key the sweep sets (``set``, variants, grid) against the scenario's
        schema, and expands the runs; raises :class:`SweepError` naming the first bad key."""
        check_keys(self.set, "sweep.set")
        for axis, bundles in self.variants.items():
            for label, overrides in bundles.items():
                check_keys(_flatten_overrides(overrides), f"sweep.variants.{axis}.{label}")
        check_keys(self.grid, "sweep.grid")
        self.runs()

    @property
    def params(self) -> list[str]:
        """The names of the parameter columns, in axis order (variants, then grid keys)."""
        return [a.name for a in self._axes]

    def points(self) -> list[dict]:
        """The grid points: ``{parameter: column value}`` for every combination."""
        return [dict(zip(self.params, combo)) for combo in itertools.product(*(a.labels for a in self._axes))]

    def runs(self) -> list[RunSpec]:
        """Every run: each grid point × each seed (seeds vary fastest)."""
        if self._runs is not None:
            return self._runs
        base = copy.deepcopy(self.base)
        try:
            apply_overrides(base, self.set)
        except SweepError as e:
            raise SweepError(f"sweep.set: {e}") from None
        runs = []
        seen: dict[str, dict] = {}
        index_sets = itertools.product(*(range(len(a.labels)) for a in self._axes))
        for idx in index_sets:
            params = {a.name: a.labels[i] for a, i in zip(self._axes, idx)}
            point = copy.deepcopy(base)
            for a, i in zip(self._axes, idx):
                try:
                    apply_overrides(point, a.overrides[i])
                except SweepError as e:
                    where = f"sweep.variants.{a.name}.{a.labels[i]}" if a.name in self.variants else "sweep.grid"
                    raise SweepError(f"{where}: {e}") from None
            for seed in self.seeds:
                scenario = copy.deepcopy(point)
                scenario["seed"] = seed
                if self.derive is not None:
                    new = self.derive(scenario, {**params, "seed": seed})
                    if new is not None:
                        scenario = _plain(new)
                h = run_hash(scenario)
                if h in seen:
                    raise SweepError(
                        f"sweep: two runs have the same scenario: {seen[h]} and {{**{params}, 'seed': {seed}}}"
                    )
                seen[h] = {**params, "seed": seed}
                runs.append(RunSpec(h, dict(params), seed, scenario, self.traces, self.pcap, self.files_dir))
        self._runs = runs
        return runs

    def __len__(self) -> int:
        return len(self.runs())

    def describe(self) -> dict:
        """The definition as JSON data (written to the output directory as sweep.json)."""
        return {
            "name": self.name,
            "scenario_path": self.scenario_path,
            "base": self.base,
            "set": _plain(self.set),
            "grid": _plain(self.grid),
            "variants": _plain(self.variants),
            "seeds": self.seeds,
            "derive": None if self.derive is None else getattr(self.derive, "__qualname__", repr(self.derive)),
            "traces": self.traces,
            "pcap": self.pcap,
            "params": self.params,
        }

    def run(
        self,
        out: str | os.PathLike,
        *,
        jobs: int | None = None,
        dask: Any = None,
        retry_failed: bool = False,
        progress: bool | str = True,
    ) -> "SweepOutcome":
        """Runs the runs not yet stored in ``out`` and stores their results; see :func:`run_sweep`."""
        return run_sweep(self, out, jobs=jobs, dask=dask, retry_failed=retry_failed, progress=progress)

    def __repr__(self) -> str:
        return f"<haslab.Sweep {self.name!r}: {len(self.points())} points × {len(self.seeds)} seeds>"


# ---------------------------------------------------------------------------------------------
# one run (in a worker)


def execute(spec: RunSpec, scratch: str | None = None) -> dict:
    """Runs one sweep run and returns what the store keeps. Never raises for a failed run.

    Returns ``{"status": "ok", "summary": dict, "files": {relative path: bytes}, "wall_s"}`` or
    ``{"status": "failed", "error": str, "wall_s"}``. ``files`` holds the run's summary.json,
    its trace Parquet files (if ``spec.traces``) and pcap files (if ``spec.pcap``).

    The run writes its files in a temporary directory under ``scratch`` (default: the system's
    temporary directory). Local workers get one inside the output directory, which the next
    sweep there removes (:meth:`haslab.store.Store.recover`): a worker killed mid-run leaves
    nothing outside it."""
    import tempfile

    import pandas  # noqa: F401 - imported before the clock starts: wall_s measures the run only
    import pyarrow.parquet  # noqa: F401

    from .api import ScenarioError, run

    t0 = time.perf_counter()
    try:
        if scratch is not None:
            os.makedirs(scratch, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="haslab-run-", dir=scratch) as tmp:
            result = run(spec.scenario, out_dir=tmp if spec.pcap else None, pcap=spec.pcap, base_dir=spec.base_dir)
            wall = time.perf_counter() - t0
            files: dict[str, bytes] = {}
            if spec.traces:
                result.save(tmp)  # summary.json and one Parquet file per trace
            else:
                (Path(tmp) / "summary.json").write_text(json.dumps(result.summary, indent=2) + "\n", encoding="utf-8")
            for p in sorted(Path(tmp).rglob("*")):
                if p.is_file():
                    files[p.relative_to(tmp).as_posix()] = p.read_bytes()
            # what was recorded, so that a later sweep wanting more runs the run again
            if spec.traces:
                files[TRACES_MARK] = b""
            if spec.pcap:
                files[PCAP_MARK] = b""
        return {"status": "ok", "summary": result.summary, "files": files, "wall_s": wall}
    except ScenarioError as e:
        # the scenario went to the simulator as generated JSON: a position in that text means nothing
        message = re.sub(r" at line \d+ column \d+$", "", str(e))
        return {"status": "failed", "error": f"invalid scenario: {message}", "wall_s": time.perf_counter() - t0}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a Rust panic arrives as a BaseException
        tb = traceback.format_exception_only(type(e), e)
        return {"status": "failed", "error": "".join(tb).strip(), "wall_s": time.perf_counter() - t0}


# ---------------------------------------------------------------------------------------------
# executing a sweep (haslab/scheduler.py)


def run_sweep(
    sweep: Sweep,
    out: str | os.PathLike,
    *,
    jobs: int | None = None,
    dask: Any = None,
    retry_failed: bool = False,
    progress: bool | str = True,
) -> SweepOutcome:
    """Runs every run of ``sweep`` whose hash is not stored in ``out`` and stores its results.

    Args:
        out: the output directory (see :class:`haslab.store.Store`).
        jobs: local worker processes (default: all cores; 1 runs in this process).
        dask: a ``dask.distributed.Client``, or a scheduler address (``"tcp://host:8786"``) to
            connect to, or ``"local"`` / ``"local:N"`` to start a LocalCluster of N worker
            processes for this sweep (stopped at the end). The runs then execute on that
            cluster's workers (which need haslab installed). Results come back to this process,
            which alone writes the store.
        retry_failed: also re-run the runs stored as failed.
        progress: show a progress bar (runs done / total, ETA) on stderr when it is a
            terminal; ``"always"`` shows it anyway, ``False`` never.

    A run that fails (invalid scenario, error in the simulator) is stored with its error and
    the sweep goes on.

    Stopping: SIGINT (Ctrl-C) or SIGTERM, when this runs in the main thread, stops the local
    workers (or the LocalCluster the sweep started; an external cluster only loses this sweep's
    tasks), keeps what finished, and raises :class:`SweepInterrupted` with the counts. A
    process killed outright (SIGKILL) takes its local workers, and those of a LocalCluster it
    started, with it (:func:`haslab.scheduler._die_with_parent`). Either way the runs in flight
    are lost and nothing else is: running the sweep again resumes.

    The loop that submits the runs, stores their results and stops on a signal is
    :class:`haslab.scheduler.Scheduler`.
    """
    from .store import Store

    if jobs is not None and jobs < 1:
        raise SweepError(f"jobs must be at least 1, got {jobs}")
    if jobs is not None and dask is not None:
        raise SweepError("jobs and dask exclude each other (the cluster decides how many runs run at once)")
    sweep.check()  # a key no scenario has fails here, before anything runs
    runs = sweep.runs()
    scheduler = Scheduler(
        Store(out), execute, model_version, jobs=jobs, dask=dask, retry_failed=retry_failed, progress=progress
    )
    return scheduler.run(sweep, runs)
