"""``haslab sweep``: run a sweep file (resumable, parallel, local or on Dask) and summarise its results."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from .console import deferred, stderr_console, stdout_console

(escape,) = deferred("rich.markup", "escape")
failures_table, first_line = deferred("haslab.tables", "failures_table", "first_line")

app = typer.Typer(
    name="sweep",
    help="Run sweeps (a scenario × a grid of parameters × seeds) and summarise their results.",
    no_args_is_help=True,
    # help texts are plain text: rich markup would eat [[player]], [sweep], [flow.tcp]
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
)

out = stdout_console(120)
err = stderr_console()

#: exit code of `sweep run` when the sweep completed but some of its runs are stored as failed
EXIT_FAILED_RUNS = 2


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, soft_wrap=True)
    return typer.Exit(code=1)


@app.command("run")
def run_cmd(
    file: Path = typer.Argument(..., help="Sweep file (TOML with a [sweep] table).", show_default=False),
    out_dir: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Output directory (default: the file's sweep.out, else out/FILE-STEM)."
    ),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", help="Local worker processes (default: all cores; 1 = in this process)."
    ),
    dask: Optional[str] = typer.Option(
        None,
        "--dask",
        help="Run on a Dask cluster: the scheduler's address (tcp://host:8786), or local / local:N to start a "
        "LocalCluster of N worker processes for this sweep (default N: all cores).",
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Also re-run the runs stored as failed."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors (no progress bar)."),
) -> None:
    """Run every run of a sweep that is not stored in the output directory yet.

    Results go to OUT (summary.parquet: one row per run; flows.parquet, links.parquet; runs/HASH/ per-run traces). A run is keyed by the hash of its full scenario and seed: running the same sweep again skips what is stored, so a killed sweep resumes where it stopped. A failed run is stored with its error and the others go on; the exit code is 2 when some runs of the sweep are stored as failed.
    """
    from .store import StoreError
    from .sweep import Sweep, SweepError, SweepInterrupted, default_jobs, run_sweep

    if jobs is not None and dask is not None:
        raise _fail("--jobs and --dask exclude each other (the cluster decides how many runs run at once)")
    if jobs is not None and jobs < 1:
        raise _fail(f"--jobs must be at least 1, got {jobs}")
    try:
        sweep = Sweep.from_toml(file)
        dest = out_dir or sweep.default_out or Path("out") / file.stem
        runs = sweep.runs()
        if not quiet:
            if dask:
                where = "a local Dask cluster" if dask.startswith("local") else f"Dask cluster {dask}"
            else:
                where = f"{min(jobs or default_jobs(), len(runs))} local process(es)"
            err.print(
                f"sweep {sweep.name}: {len(sweep.points())} point(s) × {len(sweep.seeds)} seed(s) = "
                f"{len(runs)} runs, on {where} → {dest}/",
                soft_wrap=True,
            )
        outcome = run_sweep(sweep, dest, jobs=jobs, dask=dask, retry_failed=retry_failed, progress=not quiet)
        counts = outcome.store.status_counts()
    except (SweepError, StoreError, OSError, ValueError) as e:
        raise _fail(str(e)) from None
    except SweepInterrupted as e:
        # one line, even with --quiet: the sweep did not complete
        err.print(escape(e.message()), soft_wrap=True)
        # Everything is stored and the workers are stopped; exit now. A normal interpreter exit
        # joins the process pool's queue threads (concurrent.futures' and multiprocessing's exit
        # handlers), which can wait for ever once the workers were killed mid-run: seen once
        # in about 45 group-SIGINT stops (the sweep printed this line, then hung).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + e.signum)
    except KeyboardInterrupt:
        raise _fail("interrupted (the runs finished so far are stored; run again to resume)") from None
    if quiet and outcome.failed and not outcome.ok:
        # every run of this call failed: almost always one cause (a bad value for every run); say it
        spec, error = outcome.failures[0]
        err.print(
            escape(f"all {outcome.failed} runs failed (see haslab sweep status {dest}); the first: {first_line(error)}"),
            soft_wrap=True,
        )
    if not quiet:
        out.print(
            f"ran {outcome.ran} (ok {outcome.ok}, failed {outcome.failed}), skipped {outcome.skipped} stored; "
            f"sweep: {counts['ok']}/{counts['total']} ok, {counts['failed']} failed → {dest}/",
            soft_wrap=True,
        )
        if outcome.stale:
            out.print(f"{outcome.stale} of the runs had been stored by another simulator (another source "
                      "fingerprint, haslab_version) and were run again", soft_wrap=True)
        if outcome.failures:
            order = {r.run_hash: i for i, r in enumerate(runs)}
            failures = sorted(outcome.failures, key=lambda f: order[f[0].run_hash])
            rows = [{"run_hash": s.run_hash, **s.params, "seed": s.seed, "error": e} for s, e in failures]
            out.print(failures_table(rows, sweep.params, limit=10))
    if counts["failed"]:
        raise typer.Exit(code=EXIT_FAILED_RUNS)


@app.command("validate")
def validate_cmd(
    file: Path = typer.Argument(..., help="Sweep file (TOML with a [sweep] table).", show_default=False),
) -> None:
    """Check a sweep file without running anything.

    Checks the [sweep] table, that every key it sets (set, variants, grid) is a scenario key, and every run's scenario as `haslab validate` does. Prints the number of runs, or the invalid runs with their errors and exits with code 1.
    """
    from .api import ScenarioError, validate
    from .sweep import Sweep, SweepError

    try:
        sweep = Sweep.from_toml(file)
        sweep.check()
        runs = sweep.runs()
    except (SweepError, OSError, ValueError) as e:
        raise _fail(str(e)) from None
    failures = []
    for r in runs:
        try:
            validate(r.scenario, base_dir=r.base_dir)
        except ScenarioError as e:
            failures.append({"run_hash": r.run_hash, **r.params, "seed": r.seed, "error": str(e)})
    head = f"sweep {sweep.name}: {len(sweep.points())} point(s) × {len(sweep.seeds)} seed(s) = {len(runs)} runs"
    if failures:
        out.print(f"{head}; {len(failures)} invalid:", soft_wrap=True)
        out.print(failures_table(failures, sweep.params, limit=20))
        raise typer.Exit(code=1)
    out.print(f"ok: {head}, every scenario valid", soft_wrap=True)


@app.command("status")
def status_cmd(
    directory: Path = typer.Argument(..., help="A sweep's output directory.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the counts and failures as JSON."),
    show_all: bool = typer.Option(False, "--all", help="List every failure (default: the first 20)."),
) -> None:
    """Summarise a sweep's output directory: runs ok / failed / pending of the last sweep run there, and the failures with their errors."""
    from .store import Store

    store = Store(directory)
    if not (directory / "sweep.json").is_file():
        raise _fail(f"{directory}: not a sweep output directory (no sweep.json)")
    try:
        counts = store.status_counts()
        df = store.summary()
    except (OSError, ValueError, RuntimeError) as e:
        raise _fail(str(e)) from None
    params = df.attrs.get("params", [])
    plan = store.plan() or {}
    in_plan = {r["run_hash"] for r in plan.get("runs", [])}
    failed = df[(df["status"] == "failed") & df["run_hash"].isin(in_plan)] if len(df) else df
    failures = [
        {"run_hash": r["run_hash"], **{p: r[p] for p in params}, "seed": int(r["seed"]), "error": r["error"]}
        for r in failed.to_dict("records")
    ]
    if as_json:
        sys.stdout.write(json.dumps({**counts, "params": params, "failures": failures}, default=str) + "\n")
        return
    name = plan.get("definition", {}).get("name", directory.name)
    out.print(
        f"sweep {name}: {counts['total']} runs: {counts['ok']} ok, {counts['failed']} failed, "
        f"{counts['pending']} pending" + (f" (+{counts['other']} runs of other sweeps)" if counts["other"] else "")
    )
    if len(df) and "wall_s" in df.columns:
        done = df[df["run_hash"].isin(in_plan)]
        if len(done) and done["wall_s"].notna().any():
            out.print(f"run time: {done['wall_s'].sum():.1f} s summed over {len(done)} stored runs")
    if failures:
        out.print(failures_table(failures, params, limit=len(failures) if show_all else 20))
