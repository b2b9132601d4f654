"""The results of a sweep: a directory of Parquet files keyed by run hash.

Layout of an output directory::

    OUT/
      sweep.json                 the last sweep run here: its definition and its runs (hash, parameters, seed)
      summary.parquet            one row per run (compacted)
      flows.parquet              one row per flow per run (compacted); likewise links.parquet and any
                                 other list of records in a run's summary
      parts/HASH.parquet         a run's summary row, until the next compaction
      parts/HASH.flows.parquet   its flows (likewise .links), until the next compaction
      runs/HASH/                 per-run files: scenario.json (the full scenario), summary.json, the
                                 traces (cwnd.parquet, goodput.parquet, queue.parquet), pcap files

Writes are atomic: every file is written under a temporary name and renamed, a run's directory is
renamed into place whole, and a run's summary part is written last, so it is the mark that the run
is stored. A process killed at any moment leaves only temporary files (removed by the next
:meth:`Store.recover`) and runs without a summary part (not stored: they run again).

Compaction merges the parts into the top-level tables (written atomically) and only then deletes
the parts; a part always wins over a compacted row of the same run (it is newer), so a compaction
that is interrupted is simply done again. Reading never needs the lock; writing takes ``OUT/.lock``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from .runs import RunSpec

PLAN = "sweep.json"
SUMMARY = "summary"

#: Empty files in a run's directory: the run was stored with its traces / its pcap files.
TRACES_MARK = "traces.stored"
PCAP_MARK = "pcap.stored"


class StoreError(RuntimeError):
    """The output directory cannot be used (locked by another sweep, unreadable)."""


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _atomic_write_table(path: Path, table: "pa.Table") -> None:
    import pyarrow.parquet as pq

    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    try:
        pq.write_table(table, str(tmp), compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _scalar(v: Any) -> Any:
    """A value as it goes into a column: scalars as they are, anything else as JSON text."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def flatten_summary(summary: dict) -> tuple[dict, dict[str, list[dict]]]:
    """Splits a run's summary into (scalar columns, tables).

    Scalars stay; nested tables become dotted columns (``a.b``); lists of records (``flows``,
    ``links``, …) become tables with an ``index`` column; other lists become JSON text."""
    cols: dict = {}
    tables: dict[str, list[dict]] = {}

    def walk(d: dict, prefix: str) -> None:
        for k, v in d.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(v, key + ".")
            elif isinstance(v, list) and not prefix and all(isinstance(x, dict) for x in v):
                tables[key] = [{"index": i, **{c: _scalar(x) for c, x in rec.items()}} for i, rec in enumerate(v)]
            else:
                cols[key] = _scalar(v)

    walk(summary, "")
    return cols, tables


class Store:
    """The results of the sweeps run into one output directory."""

    def __init__(self, out: str | os.PathLike):
        self.root = Path(out)
        self.parts = self.root / "parts"
        self.runs_dir = self.root / "runs"

    # -- writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Holds ``OUT/.lock`` (an advisory lock: one writer per directory). Creates the directory."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.parts.mkdir(exist_ok=True)
        self.runs_dir.mkdir(exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # not POSIX: no lock
                pass
            except OSError:
                raise StoreError(f"{self.root} is in use by another running sweep") from None
            yield
        finally:
            os.close(fd)

    def recover(self) -> None:
        """Removes what a killed writer left (temporary files, half-written run directories,
        table parts of runs whose summary part was never written) and compacts."""
        for d in (self.root, self.parts, self.runs_dir):
            if not d.is_dir():
                continue
            for p in d.iterdir():
                if p.name.startswith(".tmp-") or p.name.startswith(".old-"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
        if self.parts.is_dir():
            marks = {p.name[: -len(".parquet")] for p in self.parts.glob("*.parquet") if p.name.count(".") == 1}
            for p in self.parts.glob("*.*.parquet"):
                if p.name.split(".", 1)[0] not in marks:
                    p.unlink(missing_ok=True)
        self.compact()

    def write_plan(self, definition: dict, runs: list["RunSpec"]) -> None:
        """Writes sweep.json: the sweep's definition and its runs (hash, parameters, seed)."""
        plan = {
            "definition": definition,
            "params": definition.get("params", []),
            "runs": [{"run_hash": r.run_hash, "params": r.params, "seed": r.seed} for r in runs],
        }
        text = json.dumps(plan, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write_bytes(self.root / PLAN, text.encode("utf-8"))

    def write(self, spec: "RunSpec", payload: dict, version: str = "") -> None:
        """Stores one run: its directory, its table parts, then its summary part (the mark)."""
        import pyarrow as pa

        h = spec.run_hash
        # 1. the run's directory, renamed into place whole
        tmp = self.runs_dir / f".tmp-{h}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        try:
            (tmp / "scenario.json").write_text(json.dumps(spec.scenario, indent=2) + "\n", encoding="utf-8")
            for rel, data in payload.get("files", {}).items():
                p = tmp / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
            final = self.runs_dir / h
            if final.exists():
                old = self.runs_dir / f".old-{h}-{uuid.uuid4().hex[:8]}"
                os.replace(final, old)
                shutil.rmtree(old, ignore_errors=True)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

        # 2. the row and the tables
        row: dict = {"run_hash": h}
        row.update(spec.params)
        row["seed"] = spec.seed
        row["status"] = payload["status"]
        row["error"] = payload.get("error")
        wall = payload.get("wall_s")
        row["wall_s"] = None if wall is None or (isinstance(wall, float) and math.isnan(wall)) else float(wall)
        row["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
        row["haslab_version"] = version
        tables: dict[str, list[dict]] = {}
        if payload["status"] == "ok":
            cols, tables = flatten_summary(payload["summary"])
            for k, v in cols.items():
                if k == "seed" and v == spec.seed:
                    continue
                row[k if k not in row else f"sim.{k}"] = v
        for name, records in tables.items():
            rows = [{"run_hash": h, **rec} for rec in records]
            table = pa.Table.from_pylist(rows) if rows else pa.table({"run_hash": pa.array([], pa.string())})
            _atomic_write_table(self.parts / f"{h}.{name}.parquet", table)
        # 3. the mark
        _atomic_write_table(self.parts / f"{h}.parquet", pa.Table.from_pylist([row]))

    def compact(self) -> None:
        """Merges the parts into the top-level tables, then deletes them. Needs the lock."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self.parts.is_dir():
            return
        marks = sorted(p for p in self.parts.glob("*.parquet") if p.name.count(".") == 1)
        if not marks:
            return
        hashes = [p.name[: -len(".parquet")] for p in marks]
        names = {p.name.split(".")[1] for p in self.parts.glob("*.*.parquet")}
        names |= {p.name[: -len(".parquet")] for p in self.root.glob("*.parquet")} - {SUMMARY}
        for name in [SUMMARY, *sorted(names)]:
            files = marks if name == SUMMARY else [self.parts / f"{h}.{name}.parquet" for h in hashes]
            new = [_read(p) for p in files if p.exists()]
            old = _read(self.root / f"{name}.parquet") if (self.root / f"{name}.parquet").exists() else None
            if old is not None:
                keep = pc.invert(pc.is_in(old["run_hash"], value_set=pa.array(hashes, pa.string())))
                old = old.filter(keep)
            merged = _concat([t for t in [old, *new] if t is not None])
            if merged is not None:
                _atomic_write_table(self.root / f"{name}.parquet", merged)
        for p in self.parts.glob("*.*.parquet"):
            if p.name.split(".", 1)[0] in hashes:
                p.unlink(missing_ok=True)
        for p in marks:
            p.unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------------

    def plan(self) -> dict | None:
        """sweep.json (the last sweep run here), or None."""
        path = self.root / PLAN
        if not path.is_file():
            return None
        return json.loads(path.read_text(encoding="utf-8"))

    @property
    def params(self) -> list[str]:
        """The parameter columns of the last sweep run here."""
        plan = self.plan()
        return list(plan["params"]) if plan else []

    def _read_table(self, name: str) -> "pa.Table | None":
        """The compacted table plus the parts not compacted yet (parts win).

        A concurrent compaction may delete a part between listing and reading: then read again."""
        import pyarrow as pa
        import pyarrow.compute as pc

        for _ in range(20):
            try:
                marks = sorted(p for p in self.parts.glob("*.parquet") if p.name.count(".") == 1)
                hashes = [p.name[: -len(".parquet")] for p in marks]
                if name == SUMMARY:
                    files = marks
                else:
                    files = [self.parts / f"{h}.{name}.parquet" for h in hashes]
                    files = [p for p in files if p.exists()]
                new = [_read(p) for p in files]
                path = self.root / f"{name}.parquet"
                old = _read(path) if path.exists() else None
            except FileNotFoundError:
                continue
            if old is not None and hashes:
                old = old.filter(pc.invert(pc.is_in(old["run_hash"], value_set=pa.array(hashes, pa.string()))))
            return _concat([t for t in [old, *new] if t is not None])
        raise StoreError(f"{self.root}: could not read a consistent {name} table")

    def statuses(self) -> dict[str, str]:
        """``{run hash: "ok" | "failed"}`` for every stored run."""
        t = self._read_table(SUMMARY)
        if t is None:
            return {}
        return dict(zip(t["run_hash"].to_pylist(), t["status"].to_pylist()))

    def versions(self) -> dict[str, str]:
        """``{run hash: haslab_version}`` for every stored run (the simulator that computed it)."""
        t = self._read_table(SUMMARY)
        if t is None or "haslab_version" not in t.column_names:
            return {}
        return dict(zip(t["run_hash"].to_pylist(), t["haslab_version"].to_pylist()))

    def summary(self) -> "pd.DataFrame":
        """One row per stored run: ``run_hash``, the parameters, ``seed``, ``status``, ``error``,
        ``wall_s``, ``finished_at``, ``haslab_version`` and the run's scalar summary counters.

        Rows follow the order of the last sweep's runs (other stored runs after them).
        ``df.attrs["params"]`` lists the parameter columns."""
        import pandas as pd

        t = self._read_table(SUMMARY)
        df = pd.DataFrame() if t is None else t.to_pandas()
        plan = self.plan()
        if plan and len(df):
            # a run is stored once per scenario: one that an earlier sweep of this store computed
            # under other axes (a value the base already had, say) takes the last sweep's labels
            labels = {r["run_hash"]: r["params"] for r in plan["runs"]}
            for p in plan["params"]:
                mine = df["run_hash"].map(lambda h, p=p: labels[h].get(p) if h in labels else None)
                df[p] = mine.where(df["run_hash"].isin(labels), df[p] if p in df.columns else None)
            order = {r["run_hash"]: i for i, r in enumerate(plan["runs"])}
            df["_order"] = df["run_hash"].map(order).fillna(len(order)).astype("int64")
            df = df.sort_values(["_order", "finished_at"], kind="stable").drop(columns="_order").reset_index(drop=True)
        df.attrs["params"] = [p for p in self.params if p in df.columns]
        return df

    def table(self, name: str, *, ok_only: bool = True) -> "pd.DataFrame":
        """A per-run table (``flows``, ``links``, …) of every stored run, with the run's
        parameters and seed joined in (a parameter named like a column of the table gets the
        suffix ``_param``). ``df.attrs["params"]`` lists the parameter columns."""
        import pandas as pd

        t = self._read_table(name)
        df = pd.DataFrame(columns=["run_hash"]) if t is None else t.to_pandas()
        summary = self.summary()
        params = summary.attrs.get("params", [])
        if ok_only and len(summary):
            summary = summary[summary["status"] == "ok"]
        keys = summary[["run_hash", *params, "seed"]] if len(summary.columns) else pd.DataFrame(columns=["run_hash"])
        merged = keys.merge(df, on="run_hash", how="inner", suffixes=("_param", ""))
        renamed = [f"{p}_param" if f"{p}_param" in merged.columns else p for p in params]
        merged.attrs["params"] = renamed
        return merged

    def flows(self) -> "pd.DataFrame":
        """One row per flow per run (see :meth:`table`)."""
        return self.table("flows")

    def links(self) -> "pd.DataFrame":
        """One row per link direction per run (see :meth:`table`)."""
        return self.table("links")

    def run_dir(self, run_hash: str) -> Path:
        """The directory of a run's files (scenario.json, summary.json, traces)."""
        return self.runs_dir / run_hash

    def has_files(self, spec: "RunSpec") -> bool:
        """A stored run has what ``spec`` asks for: its traces (Parquet) and pcap files. A run stored
        by a sweep without traces (the hash covers the scenario and seed, not what is recorded) is
        run again when a sweep wants them."""
        d = self.run_dir(spec.run_hash)
        if spec.traces and not ((d / TRACES_MARK).exists() or any(d.glob("*.parquet"))):
            return False
        if spec.pcap and not ((d / PCAP_MARK).exists() or any(d.rglob("*.pcap"))):
            return False
        return True

    def trace(self, run_hash: str, name: str) -> "pd.DataFrame":
        """A trace (``cwnd``, ``goodput``, ``queue``) of one run."""
        import pandas as pd

        path = self.run_dir(run_hash) / f"{name}.parquet"
        if not path.is_file():
            raise KeyError(f"run {run_hash[:12]} has no {name!r} trace ({path} not found)")
        return pd.read_parquet(path)

    def status_counts(self) -> dict:
        """Counts against the last sweep's plan: ``total``, ``ok``, ``failed``, ``pending``, and
        ``other`` (runs stored here that the last sweep does not have)."""
        status = self.statuses()
        plan = self.plan()
        hashes = [r["run_hash"] for r in plan["runs"]] if plan else list(status)
        ok = sum(1 for h in hashes if status.get(h) == "ok")
        failed = sum(1 for h in hashes if status.get(h) == "failed")
        return {
            "total": len(hashes),
            "ok": ok,
            "failed": failed,
            "pending": len(hashes) - ok - failed,
            "other": len(set(status) - set(hashes)),
        }


def _read(path: Path) -> "pa.Table":
    import pyarrow.parquet as pq

    return pq.read_table(str(path))


def _concat(tables: list) -> "pa.Table | None":
    """Concatenates tables whose columns may differ (missing columns become nulls, ints meeting
    floats become floats); a column whose types cannot be unified (text in one run, numbers in
    another) becomes text."""
    import pyarrow as pa

    tables = [t for t in tables if t is not None and (t.num_rows or t.num_columns > 1)]
    if not tables:
        return None
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        pass
    types: dict[str, list] = {}
    for t in tables:
        for f in t.schema:
            types.setdefault(f.name, []).append(f.type)
    to_text = set()
    for name, ts in types.items():
        try:
            pa.unify_schemas([pa.schema([(name, ty)]) for ty in ts], promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            to_text.add(name)
    fixed = []
    for t in tables:
        for name in to_text & set(t.column_names):
            i = t.column_names.index(name)
            col = t[name]
            text = pa.array([None if v is None else str(v) for v in col.to_pylist()], pa.string())
            t = t.set_column(i, name, text)
        fixed.append(t)
    return pa.concat_tables(fixed, promote_options="permissive")
