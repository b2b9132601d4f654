"""The Python API: run a scenario, get a :class:`Result` with pandas DataFrames.

A scenario is given as

* a path (``str`` or :class:`pathlib.Path`) to a ``.toml`` (or ``.json``) file,
* a TOML document as a string, or
* a ``dict`` with the same structure as the TOML file (sent to the simulator as JSON).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Union

from . import _core

# pandas, numpy and pyarrow are imported where they are used, so that `haslab validate`,
# `haslab schema` and the benchmark workers start fast and small.
if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

Scenario = Union[str, os.PathLike, Mapping[str, Any]]

#: Trace tables whose ``flow`` column indexes ``Result.flows``.
FLOW_TABLES = ("cwnd", "goodput")
#: Trace tables whose ``link`` column indexes ``Result.links``.
LINK_TABLES = ("queue",)
#: Trace tables whose ``player`` column indexes ``Result.player_summary``.
PLAYER_TABLES = ("players", "segments", "abandons")
#: Trace tables whose ``source`` column indexes ``Result.traffic``.
TRAFFIC_TABLES = ("traffic",)


class ScenarioError(ValueError):
    """An invalid scenario; the message starts with the offending field's path."""


#: Largest scenario file read (bytes). The largest scenario the simulator accepts is far
#: smaller; the cap makes a path such as /dev/zero an error instead of a full memory.
MAX_SCENARIO_BYTES = 16 << 20


def read_scenario_file(path: Path) -> str:
    """The text of a scenario file: a regular file of at most :data:`MAX_SCENARIO_BYTES`, in
    UTF-8. Anything else raises :class:`ScenarioError` naming the file (a missing file raises
    ``FileNotFoundError``)."""
    import stat

    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"scenario file not found: {path}") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read the scenario file: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise ScenarioError(f"{path}: cannot read the scenario file: it is {kind}; a regular file is needed")
    too_big = f"{path}: the scenario file is larger than {MAX_SCENARIO_BYTES >> 20} MiB, the most that is read"
    if st.st_size > MAX_SCENARIO_BYTES:
        raise ScenarioError(too_big)
    with open(path, "rb") as f:
        raw = f.read(MAX_SCENARIO_BYTES + 1)
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError(too_big)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ScenarioError(f"{path}: the scenario file is not UTF-8 text (byte {e.start}, line {line})") from None


def _looks_like_path(s: str) -> bool:
    """A one-line string is a path if it names something that exists or cannot be TOML (no
    ``=``, no ``[``)."""
    if "\n" in s:
        return False
    return os.path.exists(s) or not ("=" in s or "[" in s)


def _dict_json(scenario: Mapping[str, Any]) -> str:
    """A dict scenario as JSON; a value JSON cannot carry (NaN, infinity, a set, an object) is a
    :class:`ScenarioError` naming its field, as the simulator's own errors do."""

    def bad(path: str, v: Any) -> None:
        raise ScenarioError(f"{path or '(top level)'}: {v!r} is not a value a scenario accepts "
                            f"(numbers must be finite; use strings, numbers, booleans, lists, tables)")

    def walk(v: Any, path: str) -> None:
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            bad(path, v)
        elif isinstance(v, Mapping):
            for k, x in v.items():
                if not isinstance(k, str):
                    bad(path, k)
                walk(x, f"{path}.{k}" if path else k)
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")
        elif not (v is None or isinstance(v, (str, int, float, bool))):
            bad(path, v)

    walk(scenario, "")
    return json.dumps(scenario, allow_nan=False)


def _source(scenario: Scenario, base_dir: str | os.PathLike | None = None) -> tuple[str, str, str | None]:
    """Returns (text, fmt, base_dir) for the simulator; fmt is "toml" or "json"; base_dir is
    the directory relative file names in the scenario (MPD files, Mahimahi traces) are resolved
    against: the file's directory, or for strings and dicts ``base_dir`` (default None: the
    current directory)."""
    given = None if base_dir is None else str(Path(base_dir).resolve())
    if isinstance(scenario, Mapping):
        return _dict_json(scenario), "json", given
    if isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and _looks_like_path(scenario)):
        path = Path(scenario)
        fmt = "json" if path.suffix.lower() == ".json" else "toml"
        return read_scenario_file(path), fmt, str(path.resolve().parent)
    if isinstance(scenario, str):
        return scenario, "toml", given
    raise TypeError(
        f"a scenario is a path, a TOML string or a dict, not {type(scenario).__name__}"
    )


def load(path: str | os.PathLike) -> dict:
    """A scenario file (TOML, or JSON by its suffix) as a dict, to change before running it with
    ``run(d, base_dir=Path(path).parent)`` (relative file names keep resolving as in the file).
    Raises :class:`ScenarioError` for a syntax error."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"scenario file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise ScenarioError(f"syntax error: {e}") from None


def validate(scenario: Scenario, *, base_dir: str | os.PathLike | None = None) -> dict:
    """Checks a scenario without running it.

    Returns a description of the resolved plan (seed, duration_ns, nodes, link directions with
    their queues, flows, traffic generators, loss events, the preset and its player slots, the
    path of each flow/generator/slot with its RTT, bottleneck and BDP, traces, and the input
    ``warnings``, e.g. duplicate Representation ids in an MPD). Raises
    :class:`ScenarioError` (a ``ValueError``) naming the offending field.
    """
    text, fmt, base_dir = _source(scenario, base_dir)
    try:
        return _core.validate(text, fmt, base_dir)
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def describe(scenario: Scenario) -> dict:
    """The description of a scenario's resolved plan (what ``haslab describe`` prints); the
    same dict as :func:`validate`."""
    return validate(scenario)


def schema() -> str:
    """The JSON Schema of scenario files, as a string."""
    return _core.schema()


def catalog() -> dict:
    """The transport options: ``{"algorithms": [...], "tcp_options": [...]}``.

    Each algorithm has ``name``, ``aliases``, ``source``, ``defaults`` (the parameters of its
    default configuration) and ``parameters`` (each with ``name``, ``default``, ``accepts``,
    ``description``); each ``[flow.tcp]`` option has ``name``, ``default``, ``accepts`` and
    ``description``. Read from the simulator's own config types.
    """
    return json.loads(_core.catalog())


def _want_progress(progress: bool | str) -> bool:
    if progress == "always":
        return True
    return bool(progress) and sys.stderr.isatty()


class LineProgress:
    """Progress of a run as plain lines, for a stderr that is not a terminal (a log, a pipe):
    nothing for the first ``first_after_s`` seconds of wall time, then one line every
    ``every_s`` seconds with the simulated time and an estimate of the time left (elapsed
    wall time × remaining / done simulated time)."""

    def __init__(self, total_ns: int, stream, clock=None, first_after_s: float = 5.0, every_s: float = 10.0):
        import time

        self.total_ns = total_ns
        self.stream = stream
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self.next_at = self.start + first_after_s
        self.every_s = every_s

    def update(self, done_ns: int) -> None:
        now = self.clock()
        if now < self.next_at or done_ns <= 0 or done_ns >= self.total_ns:
            return
        self.next_at = now + self.every_s
        elapsed = now - self.start
        left = elapsed * (self.total_ns - done_ns) / done_ns
        print(
            f"simulated {done_ns / 1e9:g}/{self.total_ns / 1e9:g} s ({100 * done_ns / self.total_ns:.0f}%), "
            f"{_clock(elapsed)} elapsed, about {_clock(left)} left",
            file=self.stream,
            flush=True,
        )


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _simulate(sim, progress: bool | str) -> None:
    """Runs ``sim`` to its end in 1 % slices of simulated time (so that Ctrl-C is handled
    promptly), showing progress: a bar with the time left on a terminal, lines on stderr when
    it is not one and the run lasts more than a few seconds. Progress never changes results:
    the slices are the same with and without it."""
    duration = sim.duration_ns
    step = max(duration // 100, 1)
    slices = range(step, duration + step, step)
    if _want_progress(progress):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        with Progress(
            TextColumn("[bold]simulating"),
            BarColumn(),
            TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TimeRemainingColumn(),
            TextColumn("left"),
            console=Console(stderr=True, force_terminal=progress == "always" or None),
            transient=True,
        ) as bar:
            task = bar.add_task("sim", total=duration / 1e9)
            for t in slices:
                t = min(t, duration)
                sim.run_until(t)
                bar.update(task, completed=t / 1e9)
        return
    lines = LineProgress(duration, sys.stderr) if progress else None
    for t in slices:
        t = min(t, duration)
        sim.run_until(t)
        if lines is not None:
            lines.update(t)


def run(
    scenario: Scenario,
    *,
    out_dir: str | os.PathLike | None = None,
    progress: bool | str = False,
    pcap: bool = True,
    base_dir: str | os.PathLike | None = None,
) -> "Result":
    """Runs a scenario to its end and returns a :class:`Result`.

    Args:
        scenario: a path to a TOML/JSON file, a TOML string, or a dict.
        out_dir: where the pcap files the scenario asks for are written (created if needed).
            Nothing else is written: call :meth:`Result.save` for the summary and traces.
        progress: ``True`` shows a progress bar over simulated time, with the time left, on
            stderr when it is a terminal, and when it is not, a line every 10 s once the run has
            lasted 5 s; ``"always"`` shows the bar even when stderr is not a terminal.
        pcap: ``False`` skips the pcap captures the scenario asks for.
        base_dir: for a dict or TOML text, the directory its relative file names (MPD files,
            Mahimahi traces) resolve against (default: the current directory); a file's own
            directory is used for a path.
    """
    return _run(scenario, out_dir=out_dir, progress=progress, pcap=pcap, base_dir=base_dir, raw=False)


def _run(scenario, *, out_dir, progress, pcap, base_dir, raw, traces_to=None, tables=True):
    text, fmt, base_dir = _source(scenario, base_dir)
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    try:
        sim = _core.Simulation(text, fmt, None if out_dir is None else str(out_dir), pcap, base_dir)
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    _simulate(sim, progress)
    plan = sim.plan
    if traces_to is not None:
        Path(traces_to).mkdir(parents=True, exist_ok=True)
    keep = tables is True or (tables == "players" and bool(plan.get("players")))
    done = sim.finish(None if traces_to is None else str(traces_to), keep)
    if raw:
        written = [Path(traces_to) / n for n in done["written"]]
        return RawResult(json.loads(done["summary"]), done["tables"] if keep else None, plan, written)
    return Result(json.loads(done["summary"]), done["tables"], plan)


def run_raw(
    scenario: Scenario,
    *,
    out_dir: str | os.PathLike | None = None,
    progress: bool | str = False,
    pcap: bool = True,
    base_dir: str | os.PathLike | None = None,
    traces_to: str | os.PathLike | None = None,
    tables: bool | str = True,
) -> "RawResult":
    """:func:`run` without pandas: the summary dict, the traces and the plan.

    This is what ``haslab run`` uses: it prints tables from the summary, and the simulator
    writes the Parquet traces itself into ``traces_to`` (the files :meth:`Result.save` writes,
    equal in content), so that a run that has no players imports neither NumPy, pyarrow, pandas
    nor matplotlib. ``tables``: whether the result also keeps the traces as NumPy arrays
    (``True``; needed by :meth:`RawResult.save` without ``traces_to`` and by
    :meth:`RawResult.result`), ``False``, or ``"players"``: only for a run with players.
    :meth:`RawResult.result` gives the DataFrame form."""
    if tables not in (True, False, "players"):
        raise ValueError(f"tables: expected True, False or 'players', got {tables!r}")
    return _run(scenario, out_dir=out_dir, progress=progress, pcap=pcap, base_dir=base_dir, raw=True,
                traces_to=traces_to, tables=tables)


class RawResult:
    """The outcome of a run before pandas: ``summary`` (the dict ``summary.json`` holds),
    ``tables`` (each trace as a mapping of column name to NumPy array, as the simulator hands
    it over; None when they were not kept), ``plan`` and ``written`` (the Parquet traces the
    simulator wrote)."""

    def __init__(self, summary: dict, tables: Mapping[str, Mapping[str, "np.ndarray"]] | None,
                 plan: dict | None = None, written: list[Path] | None = None):
        self.summary = summary
        self.tables = tables
        self.plan = plan or {}
        self.written = list(written or [])

    def result(self) -> "Result":
        """The same run as a :class:`Result` (DataFrames; imports pandas)."""
        if self.tables is None:
            raise ValueError("this run did not keep its traces (run_raw(..., tables=False))")
        return Result(self.summary, self.tables, self.plan)

    def save(self, out_dir: str | os.PathLike) -> list[Path]:
        """Writes ``summary.json`` and the Parquet traces (the files :meth:`Result.save` writes,
        equal in content) and returns their paths. Traces the simulator already wrote into
        ``out_dir`` (``run_raw(..., traces_to=out_dir)``) are not written again."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "summary.json"
        path.write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        if self.written and all(p.parent.resolve() == out.resolve() for p in self.written):
            return [path, *self.written]
        if self.tables is None:
            raise ValueError("this run did not keep its traces (run_raw(..., tables=False))")
        written = [path]
        for name in sorted(self.tables):
            # pyarrow alone, no pandas: the columns as Result.save's files hold them
            path = out / f"{name}.parquet"
            _write_columns(trace_columns(name, self.tables[name], self.summary), path)
            written.append(path)
        return written


def trace_columns(name: str, table: Mapping[str, "np.ndarray"], summary: dict) -> list[tuple[str, Any]]:
    """The columns of trace ``name`` in file order: ``(column, array)`` for a plain column
    (integers signed, see :func:`_signed`), ``(column, (codes, categories))`` for a name column
    (``flow_name``, ``link_name``, ``player_name``, ``source_name``) whose codes index the
    summary's flows, link directions, players or traffic generators."""
    cols: list[tuple[str, Any]] = [(col, _signed(name, col, arr)) for col, arr in table.items()]
    have = {c for c, _ in cols}
    arrays = dict(cols)
    for code_col, named, section in [("flow", "flow_name", "flows"), ("link", "link_name", "links"),
                                     ("player", "player_name", "players")]:
        if code_col in have:
            cols.append((named, (arrays[code_col], [x["name"] for x in summary.get(section, [])])))
    if "time_ns" in have and name == "players":
        cols.append(("time_s", arrays["time_ns"] / 1e9))
        cols.append(("buffer_s", arrays["buffer_ns"] / 1e9))
    if "source" in have:
        cols.append(("source_name", (arrays["source"], [t["name"] for t in summary.get("traffic", [])])))
    return cols


class Result:
    """The outcome of a run.

    Attributes:
        summary: the run's counters as a dict (seed, duration_ns, events, link_transmissions,
            flows, links), exactly what ``summary.json`` holds.
        plan: the description of the resolved scenario (see :func:`validate`).
        flows: one row per flow (TCP connection), from ``summary["flows"]``.
        links: one row per link direction (``"from->to"``), from ``summary["links"]``.
        player_summary: one row per HAS player (QoE metrics), from ``summary["players"]``.
        has: metrics across players (Jain, unfairness, utilization), from ``summary["has"]``.
        warnings: what the inputs had that haslab forgave (e.g. duplicate Representation ids
            in an MPD), each naming the scenario field, from ``summary["warnings"]``.
        traffic: one row per traffic generator, from ``summary["traffic"]``.
        traces: time series by name (``cwnd``, ``goodput``, ``queue``; with players also
            ``players`` and ``segments``; with traffic generators ``traffic``), one row per
            sample.
    """

    def __init__(self, summary: dict, tables: Mapping[str, Mapping[str, "np.ndarray"]], plan: dict | None = None):
        import pandas as pd

        self.summary = summary
        self.plan = plan or {}
        self.warnings: list[str] = list(summary.get("warnings", []))
        self.flows = pd.DataFrame(summary.get("flows", []))
        self.links = pd.DataFrame(summary.get("links", []))
        self.player_summary = pd.DataFrame(summary.get("players", []))
        self.has: dict = summary.get("has") or {}
        self.traffic = pd.DataFrame(summary.get("traffic", []))
        self.traces: dict[str, "pd.DataFrame"] = {}
        for name in sorted(tables):
            self.traces[name] = pd.DataFrame(
                {
                    col: pd.Categorical.from_codes(data[0].astype("int64"), categories=data[1])
                    if isinstance(data, tuple)
                    else data
                    for col, data in trace_columns(name, tables[name], summary)
                }
            )

    def _trace(self, name: str) -> "pd.DataFrame":
        try:
            return self.traces[name]
        except KeyError:
            raise KeyError(f"no {name!r} trace in this run (traces: {sorted(self.traces)})") from None

    @property
    def cwnd(self) -> "pd.DataFrame":
        """cwnd / ssthresh (packets) and smoothed RTT of each flow over time."""
        return self._trace("cwnd")

    @property
    def goodput(self) -> "pd.DataFrame":
        """Bytes delivered to each flow's receiver per window (``time_ns`` = end of window), with
        the sender's bytes put on the wire (``sent_bytes``) and segments retransmitted
        (``retransmits``) in the same window."""
        return self._trace("goodput")

    @property
    def queue(self) -> "pd.DataFrame":
        """Occupancy (packets, bytes) of the traced queues over time."""
        return self._trace("queue")

    @property
    def players(self) -> "pd.DataFrame":
        """HAS players sampled once per second: requested ``level`` and ``bitrate_bps``,
        ``played_bitrate_bps`` (NaN when not playing), ``buffer_ns`` / ``buffer_s``, ``phase``
        (0 startup, 1 playing, 2 stalled, 3 ended, 4 left), the player's ``estimate_bps``, the
        ``optimal_level`` for its ``fair_share_bps``; ``player_name`` names the player. Empty
        when the scenario has no players."""
        return self._player_trace("players")

    @property
    def segments(self) -> "pd.DataFrame":
        """One row per downloaded segment: ``player_name``, ``index``, ``level``,
        ``bitrate_bps``, ``bytes``, ``request_ns`` → ``first_byte_ns`` → ``done_ns``
        (``ttfb_ns`` = request to first byte of the response, ``download_ns`` = request to last
        byte), ``throughput_bps``, the player's ``estimate_bps`` when it chose the level, buffer
        before and after, and the connection (``flow_name``) it came over."""
        return self._player_trace("segments")

    @property
    def abandons(self) -> "pd.DataFrame":
        """One row per request a player abandoned (``bola-e``, the ``dashjs-*`` players):
        ``player_name``, ``index``, ``level`` → ``to_level`` (the level it was requested at
        again), ``request_ns``, ``abandon_ns``, ``bytes_loaded`` of ``bytes_total`` (discarded),
        the connection (``flow_name``, closed by the abandonment). Empty when none was."""
        return self._player_trace("abandons")

    def _player_trace(self, name: str) -> "pd.DataFrame":
        import pandas as pd

        if name in self.traces:
            return self.traces[name]
        return pd.DataFrame()

    def player(self, name: str) -> dict:
        """The QoE summary of one player."""
        for p in self.summary.get("players", []):
            if p["name"] == name:
                return p
        raise KeyError(f"no player {name!r}")

    @property
    def traffic_trace(self) -> "pd.DataFrame":
        """Bytes received by each traffic generator's sink per goodput window."""
        return self._trace("traffic")

    def link(self, name: str) -> dict:
        """The summary of one link direction, e.g. ``result.link("r1->r2")``."""
        for l in self.summary.get("links", []):
            if l["name"] == name:
                return l
        raise KeyError(f"no link direction {name!r}")

    def flow(self, name: str) -> dict:
        """The summary of one flow."""
        for f in self.summary.get("flows", []):
            if f["name"] == name:
                return f
        raise KeyError(f"no flow {name!r}")

    def save(self, out_dir: str | os.PathLike) -> list[Path]:
        """Writes ``summary.json`` and one Parquet file per trace (``cwnd.parquet``, …).

        The bytes are a function of the data only: the same run saved twice gives identical
        files. Returns the paths written.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "summary.json"
        path.write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        return [path, *self.save_traces(out)]

    def save_traces(self, out_dir: str | os.PathLike) -> list[Path]:
        """Writes one Parquet file per trace (``cwnd.parquet``, …) and returns their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, df in self.traces.items():
            path = out / f"{name}.parquet"
            write_parquet(df, path)
            written.append(path)
        return written

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<haslab.Result seed={s.get('seed')} duration={s.get('duration_ns', 0) / 1e9:g}s "
            f"flows={len(self.flows)} traces={sorted(self.traces)}>"
        )


def _signed(table: str, column: str, arr: "np.ndarray") -> "np.ndarray":
    """An unsigned integer column (the simulator counts in u64 / u32) as int64.

    Unsigned columns wrap on subtraction (``buffer_after_ns - buffer_before_ns`` of a buffer that
    drained gives 1.8e19, ``level.diff()`` of a down-switch 4.3e9): every integer column is
    signed, as pandas and Parquet users expect. A value beyond int64 (292 years in ns) is an
    error, never a silent wrap."""
    import numpy as np

    arr = np.asarray(arr)
    if arr.dtype.kind != "u":
        return arr
    if arr.size and arr.max() > np.iinfo(np.int64).max:
        raise OverflowError(f"trace {table}.{column}: value {arr.max()} does not fit a signed 64-bit column")
    return arr.astype(np.int64)


def write_parquet(df: "pd.DataFrame", path: str | os.PathLike) -> None:
    """Writes a DataFrame as Parquet with deterministic bytes.

    The table is built column by column (no pandas index, no pandas metadata blob) and written
    without statistics that could depend on anything but the data; categorical columns become
    dictionary-encoded strings (read back as categoricals by pandas).
    """
    import numpy as np
    import pandas as pd

    cols: list[tuple[str, Any]] = []
    for col in df.columns:
        s = df[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cols.append((str(col), (s.cat.codes.to_numpy(dtype=np.int32), [str(c) for c in s.cat.categories])))
        else:
            cols.append((str(col), s.to_numpy()))
    _write_columns(cols, path)


def _write_columns(cols: list[tuple[str, Any]], path: str | os.PathLike) -> None:
    """Writes columns as :func:`trace_columns` gives them (name columns dictionary-encoded)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays, names = [], []
    for col, data in cols:
        if isinstance(data, tuple):
            codes, categories = data
            arr = pa.DictionaryArray.from_arrays(
                _arrow_array(np.asarray(codes).astype(np.int32)), _arrow_strings([str(c) for c in categories])
            )
        else:
            arr = _arrow_array(data)
        arrays.append(arr)
        names.append(col)
    table = pa.Table.from_arrays(arrays, names=names)
    pq.write_table(table, str(path), compression="zstd", store_schema=True)


def _arrow_array(arr: "np.ndarray") -> "pa.Array":
    """A NumPy column as an Arrow array without nulls. Integer and float columns are wrapped
    over their buffer (``pa.array`` would give the same array, but imports pandas to check
    whether it was handed a Series)."""
    import numpy as np
    import pyarrow as pa

    arr = np.asarray(arr)
    if arr.dtype.kind in "if" and arr.ndim == 1:
        arr = np.ascontiguousarray(arr)
        return pa.Array.from_buffers(pa.from_numpy_dtype(arr.dtype), len(arr), [None, pa.py_buffer(arr)])
    return pa.array(arr)


def _arrow_strings(values: list[str]) -> "pa.Array":
    """Strings as an Arrow ``string`` array (built from its offsets and bytes, see
    :func:`_arrow_array`)."""
    import numpy as np
    import pyarrow as pa

    data = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])
