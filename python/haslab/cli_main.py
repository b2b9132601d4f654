"""Where the ``haslab`` command starts (the console script, and ``python -m haslab``).

``haslab run SCENARIO [options]`` with a valid command line runs without importing typer (and the
pydantic that typer's parsing imports), which take longer to load than a short simulation takes
to run: :func:`haslab.cli_run.parse_run_args` parses it and :func:`haslab.cli_run.execute_run`
runs it, the same function as the typer command's. Everything else goes to the typer app of
:mod:`haslab.cli` as it is: the other commands, ``haslab run --help``, and a ``run`` command line
that is not a plain valid one (an unknown option, a missing value or argument), whose usage
error typer then prints."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None, prog_name: Optional[str] = None) -> None:
    """Runs ``haslab ARGS`` (``argv``, by default ``sys.argv[1:]``) and exits."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["run"] and not _completion_requested():
        from .cli_run import parse_run_args

        params = parse_run_args(args[1:])
        if params is not None:
            sys.exit(_run(params))
    from .cli import app

    app(args=None if argv is None else args, prog_name=prog_name)


def _run(params: dict) -> int:
    from .cli_common import guarded, label, print_error
    from .cli_run import execute_run

    def fail(message: str) -> SystemExit:
        print_error(message)
        return SystemExit(1)

    try:
        guarded(lambda: execute_run(**params), label(params["scenario"], params["overrides"]), fail)
    except KeyboardInterrupt:  # outside the run (which reports "interrupted"): as typer does
        return 130
    return 0


def _completion_requested() -> bool:
    """typer's shell completion (``_HASLAB_COMPLETE=...``) is the typer app's business."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)
