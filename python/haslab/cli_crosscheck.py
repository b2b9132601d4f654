"""``haslab crosscheck``: haslab's TCP measured against a reference simulator (ns-3 3.37)."""

from __future__ import annotations

import os
import time
from typing import Optional

import typer

from .console import deferred, stderr_console, stdout_console

(escape,) = deferred("rich.markup", "escape")

out = stdout_console(160)
err = stderr_console()

app = typer.Typer(
    help="Compare haslab's TCP with a reference: ns-3 3.37 (`crosscheck ns3`, docs/fidelity.md) or the Linux kernel in live mode (`crosscheck linux`).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, soft_wrap=True)
    return typer.Exit(code=1)


@app.command("ns3")
def ns3(
    quick: bool = typer.Option(False, "--quick", help="A few cells of the matrix (about a minute)."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (default: one per core).", min=0),
    only: Optional[str] = typer.Option(
        None, "--cells", help="Only the cells whose name matches this pattern (fnmatch, e.g. 'bulk4-newreno-*')."
    ),
    report: bool = typer.Option(False, "--report", help="Write the report to PATH (default docs/fidelity.md)."),
    report_path: Optional[str] = typer.Argument(
        None, metavar="[PATH]", help="With --report: where the report goes.", show_default=False
    ),
    json_path: Optional[str] = typer.Option(
        None, "--json", help="Also write every cell's raw results (both sides' metrics and per-flow numbers) to this JSON file."
    ),
    from_json: Optional[str] = typer.Option(
        None, "--from-json", help="Do not run: judge the raw results of an earlier --json run again (after revising the known differences)."
    ),
    resimulate: bool = typer.Option(
        False, "--resimulate", help="With --from-json: run haslab's side again (after a change to haslab) and keep the ns-3 side of the file."
    ),
    seeds: int = typer.Option(
        10, "--seeds", min=1, max=100,
        help="Seeds per group (1..N; the report's matrix has 10). Above 3, also prints each group's mean ± sd on "
        "both sides: the two distributions, where one seed compares two samples; from 5, a seed outside "
        "tolerance in a group whose means agree is explained by the seed spread. Not with --quick.",
    ),
) -> None:
    """haslab against ns-3 3.37 over the crosscheck matrix (docs/fidelity.md).

    Runs each cell of the matrix (dumbbell, 1/2/4/8 bulk flows × NewReno, ns3-newreno, CUBIC,
    Westwood+, YeAH, Illinois × SACK on/off × 10 seeds, and a chunked on/off flow alone and against
    a bulk flow) in haslab and in ns-3, and prints haslab / ns-3 per metric, marked against the
    tolerances. Exit code 1 when a cell is outside tolerance without an explanation (a known
    difference, python/haslab/crosscheck_known.toml, or the seed spread of a group whose means
    agree), 2 when ns-3 is not installed."""
    import fnmatch

    from . import crosscheck as xc
    from . import crosscheck_report as xr

    if report_path is not None and not report:
        raise _fail(f"unexpected argument {report_path!r} (a report path goes after --report)")
    try:
        known = xc.load_known()
    except xc.CrosscheckError as e:
        raise _fail(str(e)) from None
    if quick and seeds != len(xc.SEEDS):
        raise _fail("--seeds: not with --quick (its cells are fixed); select cells with --cells")
    cells = xc.matrix(quick=quick, seeds=range(1, seeds + 1))
    if only:
        cells = [c for c in cells if fnmatch.fnmatchcase(c.name, only)]
        if not cells:
            raise _fail(f"--cells {only!r} matches no cell (names look like bulk4-cubic-sack-s1)")
    if resimulate and not from_json:
        raise _fail("--resimulate: only with --from-json FILE (the ns-3 side comes from the file)")
    if from_json:
        def run(progress):
            results = xc.read_raw(from_json, known, cells, resimulate=xc.run_haslab if resimulate else None)
            for r in results:
                progress(r)
            return results
    else:
        binary, why = xc.ns3_status()
        if binary is None:
            err.print(f"[yellow]crosscheck skipped:[/] {why}")
            raise typer.Exit(code=2)
        err.print(f"{len(cells)} cells, ns-3 program {binary}")

        def run(progress):
            return xc.run_cells(cells, jobs=jobs, known=known, on_result=progress)

    _run_and_report(
        cells,
        run,
        reference="ns-3",
        show=("error",),
        write=(lambda results, path: xr.write_report(results, known, path, quick=quick))
        if report
        else None,
        path=report_path or xc.DEFAULT_REPORT,
        json_path=json_path,
        spread=seeds > 3,
    )


@app.command("linux")
def linux(
    quick: bool = typer.Option(False, "--quick", help="Two cells (about three minutes)."),
    only: Optional[str] = typer.Option(
        None, "--cells", help="Only the cells whose name matches this pattern (e.g. 'linux-bulk2-*')."
    ),
    report: bool = typer.Option(False, "--report", help="Write the report to PATH (default docs/fidelity-linux.md)."),
    report_path: Optional[str] = typer.Argument(
        None, metavar="[PATH]", help="With --report: where the report goes.", show_default=False
    ),
    json_path: Optional[str] = typer.Option(
        None, "--json", help="Also write every cell's raw results (both sides' metrics and per-flow numbers) to this JSON file."
    ),
    from_json: Optional[str] = typer.Option(
        None, "--from-json", help="Do not run: judge the raw results of an earlier --json run again (after revising the known differences)."
    ),
    resimulate: bool = typer.Option(
        False, "--resimulate", help="With --from-json: run the simulator side again (after a change to haslab) and keep the kernel side of the file."
    ),
    seeds: int = typer.Option(
        1, "--seeds", min=1, max=100,
        help="Seeds per group (1..N; a seed draws the flows' start times; each is a live run of about 70 s). "
        "Above 3, also prints each group's mean ± sd on both sides; from 5, a seed outside tolerance in a "
        "group whose means agree is explained by the seed spread. Not with --quick.",
    ),
) -> None:
    """haslab against this machine's Linux TCP in live mode (root).

    Runs bulk-flow cells (1/2/4 flows × NewReno, CUBIC × SACK on/off) in haslab and on this
    machine's kernel TCP in live mode (root; one cell at a time, 60 s each), and compare them as
    `crosscheck ns3` does. Exit code 2 (skipped) without root or live-mode tools."""
    import fnmatch

    from . import crosscheck as xc
    from . import crosscheck_linux as xl

    if report_path is not None and not report:
        raise _fail(f"unexpected argument {report_path!r} (a report path goes after --report)")
    try:
        known = xc.load_known(xl.KNOWN_FILE)
    except xc.CrosscheckError as e:
        raise _fail(str(e)) from None
    if quick and seeds != 1:
        raise _fail("--seeds: not with --quick (its cells are fixed); select cells with --cells")
    cells = xl.matrix(quick=quick, seeds=range(1, seeds + 1))
    if only:
        cells = [c for c in cells if fnmatch.fnmatchcase(c.name, only)]
        if not cells:
            raise _fail(f"--cells {only!r} matches no cell (names look like linux-bulk2-cubic-sack-s1)")
    if resimulate and not from_json:
        raise _fail("--resimulate: only with --from-json FILE (the kernel side comes from the file)")
    # the kernel that gave the reference side: this machine's, or the one the file names
    kernel = (xc.raw_kernel(from_json) if from_json else None) or (None if from_json else os.uname().release)
    if from_json:
        def run(progress):
            results = xc.read_raw(from_json, known, cells, resimulate=xl.run_sim if resimulate else None)
            for r in results:
                progress(r)
            return results
    else:
        why = xl.live_status()
        if why:
            err.print(f"[yellow]crosscheck skipped:[/] {why}")
            raise typer.Exit(code=2)
        err.print(f"{len(cells)} cells in live mode, about {len(cells) * 70 // 60 + 1} min")

        def run(progress):
            return xl.run_cells(cells, known=known, on_result=progress)

    _run_and_report(
        cells,
        run,
        reference="Linux",
        show=("error", "skipped"),
        write=(lambda results, path: xl.write_report(
            results, known, path, quick=quick, kernel=kernel, from_json=from_json, resimulated=resimulate))
        if report
        else None,
        path=report_path or xl.DEFAULT_REPORT,
        json_path=json_path,
        spread=seeds > 3,
        kernel=kernel,
    )


def _run_and_report(cells, run, reference: str, show: tuple, write, path, json_path=None, spread=False,
                    kernel=None) -> None:
    """Runs the cells with a progress line each, prints the tables and the counts, writes the
    report when asked; exit code 1 when a cell is outside tolerance without an explanation or
    failed."""
    from . import crosscheck as xc
    from . import crosscheck_report as xr

    t0 = time.monotonic()
    n = [0]

    def progress(r) -> None:
        n[0] += 1
        err.print(f"[{n[0]}/{len(cells)}] {r.cell.name}: {r.verdict}", highlight=False)

    try:
        results = run(progress)
    except xc.CrosscheckError as e:
        raise _fail(str(e)) from None
    except KeyboardInterrupt:
        raise _fail("interrupted") from None
    if reference == "ns-3":
        xr.print_results(results, out)
    else:
        xr.print_results(results, out, reference=reference)
    if spread:
        xr.print_spread(results, out, reference=reference)
    counts = xr.summary_counts(results)
    out.print(
        f"{counts['cells']} cells in {time.monotonic() - t0:.0f} s: {counts['within']} within tolerance, "
        f"{counts['explained']} explained, {counts['unexplained']} unexplained, "
        f"{counts['excluded']} excluded, {counts['skipped']} skipped, {counts['error']} failed"
    )
    for r in results:
        if r.status in show:
            err.print(f"{r.cell.name}: {r.status}: {escape(r.reason)}")
    if write is not None:
        write(results, path)
        out.print(f"report → {path}")
    if json_path is not None:
        xc.write_raw(results, json_path, reference=reference, kernel=kernel)
        out.print(f"raw results → {json_path}")
    if counts["unexplained"] or counts["error"]:
        raise typer.Exit(code=1)
