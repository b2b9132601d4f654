"""``haslab reproduce``: re-run a paper's experiment, draw its figure, check the paper's claims."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer

from .console import deferred, stderr_console, stdout_console

claims_table, experiments_table = deferred("haslab.tables", "claims_table", "experiments_table")

out = stdout_console(120)
err = stderr_console()

DEFAULT_OUT = Path("out/reproduce")
DEFAULT_REPORT = "docs/reproductions.md"


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def _list() -> None:
    from .reproduce import registry

    out.print(experiments_table(registry.experiments(), registry.missing()))


def reproduce(
    name: str = typer.Argument(
        ...,
        help="An experiment (e.g. tcphas-fig3), `list` (the experiments) or `all` (every experiment).",
        show_default=False,
    ),
    quick: bool = typer.Option(False, "--quick", help="Short form: fewer seeds and points, shorter runs."),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", help="Local worker processes (default: all cores; 1 = in this process)."
    ),
    dask: Optional[str] = typer.Option(
        None, "--dask", help="Run on a Dask cluster: the scheduler's address, e.g. tcp://host:8786."
    ),
    out_dir: Path = typer.Option(DEFAULT_OUT, "--out", "-o", help="Output directory (OUT/NAME/... per experiment)."),
    report: bool = typer.Option(
        False, "--report", help=f"With `all`: write the claims report to PATH (default {DEFAULT_REPORT})."
    ),
    report_path: Optional[str] = typer.Argument(
        None, metavar="[PATH]", help="With `all --report`: where the report goes.", show_default=False
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Re-run a paper's experiment: its sweeps (parallel, resumable: runs stored under OUT/NAME/runs are not run again), its tables (OUT/NAME/NAME.csv), its figure (NAME.png) and its claims (NAME.md: the paper's number, ours, holds or not and why).

    `haslab reproduce list` lists the experiments; `haslab reproduce all [--quick] [--report [PATH]]` runs every one and writes the report (docs/reproductions.md by default).
    """
    from .reproduce import ReproduceError, get, names, run_experiment, write_report
    from .store import StoreError
    from .sweep import SweepError

    if name == "list":
        _list()
        return
    if jobs is not None and dask is not None:
        raise _fail("--jobs and --dask exclude each other (the cluster decides how many runs run at once)")
    if jobs is not None and jobs < 1:
        raise _fail(f"--jobs must be at least 1, got {jobs}")
    if report and name != "all":
        raise _fail("--report goes with `haslab reproduce all`")
    if report_path is not None and not report:
        raise _fail(f"unexpected argument {report_path!r} (a report path goes after `all --report`)")
    report_file = report_path or DEFAULT_REPORT
    try:
        todo = names() if name == "all" else [get(name).name]
    except ReproduceError as e:
        raise _fail(str(e)) from None
    t0 = time.perf_counter()
    failed = []
    for n in todo:
        exp = get(n)
        if not quiet:
            err.print(f"[bold]{n}[/] — {exp.label}: {exp.title} ({'quick' if quick else 'full'} form)")
        try:
            outcome = run_experiment(
                exp,
                out_dir,
                quick=quick,
                jobs=jobs,
                dask=dask,
                progress=not quiet,
                log=None if quiet else (lambda s: err.print(s, soft_wrap=True)),
            )
        except (SweepError, StoreError, ReproduceError, OSError) as e:
            if name != "all":
                raise _fail(str(e)) from None
            err.print(f"[red]{n} failed:[/] {e}")
            failed.append(n)
            continue
        except KeyboardInterrupt:
            raise _fail("interrupted (the runs finished so far are stored; run again to resume)") from None
        except Exception as e:  # noqa: BLE001 - with `all`, one broken analysis must not stop the others
            if name != "all":
                raise
            import traceback

            err.print(f"[red]{n} failed:[/] {type(e).__name__}: {e}")
            err.print(traceback.format_exc(), markup=False, highlight=False)
            failed.append(n)
            continue
        held = sum(c.holds for c in outcome.claims)
        if not quiet:
            out.print(claims_table(outcome))
        out.print(
            f"{n}: {held}/{len(outcome.claims)} claims hold; {outcome.runs} runs ({outcome.ran} run now, "
            f"{outcome.failed} failed) in {outcome.wall_s:.0f} s → {outcome.md}",
            soft_wrap=True,
        )
    if name == "all":
        out.print(
            f"all: {len(todo) - len(failed)}/{len(todo)} experiments in {time.perf_counter() - t0:.0f} s"
            + (f"; failed: {', '.join(failed)}" if failed else "")
        )
        if report:
            counts = write_report(out_dir, report_file)
            out.print(
                f"report: {counts['reproduced']} experiments run, {counts['claims']} claims ("
                + ", ".join(f"{k} {v}" for k, v in counts["verdicts"].items())
                + f") → {report_file}"
            )
    if failed:
        raise typer.Exit(code=2)
