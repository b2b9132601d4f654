"""What the command line's commands share and that needs neither typer nor rich to import: the
consoles, how a user's error is reported, and a run's printed summary.

``haslab run`` goes through :mod:`haslab.cli_main` without typer (see there); the other commands
are the typer app of :mod:`haslab.cli`, which uses these same pieces."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from .console import deferred, stderr_console, stdout_console

flow_delay_table, flow_table, link_table, player_table = deferred(
    "haslab.tables", "flow_delay_table", "flow_table", "link_table", "player_table"
)

# Tables are wider than 80 columns: when stdout is not a terminal (a pipe, a log), use 120.
out = stdout_console(120)
err = stderr_console()


class UserError(Exception):
    """An error caused by the user's input: printed as one line, exit code 1, no traceback."""


def print_error(message: str) -> None:
    """``error: MESSAGE`` on stderr (in bold red on a terminal)."""
    from rich.markup import escape

    # messages hold field paths such as flow[2].tcp.min_rto: escape them from rich markup
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, soft_wrap=True)


def guarded(fn: Callable, scenario, fail: Callable[[str], BaseException]):
    """Runs fn(), turning user errors (bad scenario, missing file, unwritable output) into
    ``raise fail(message)``; ``fail`` prints the message and returns the exception that ends the
    command with exit code 1. Scenario errors are prefixed with ``scenario`` (the file's name)."""
    from .api import ScenarioError

    try:
        return fn()
    except ScenarioError as e:
        # (a message about the file itself already starts with its name)
        named = scenario is None or str(e).startswith(f"{scenario}:")
        raise fail(str(e) if named else f"{scenario}: {e}") from None
    except (UserError, OSError) as e:  # missing file, unwritable output directory, full disk
        raise fail(str(e)) from None
    except ValueError as e:  # e.g. pcap directory problems reported by World::new
        raise fail(str(e)) from None
    except KeyboardInterrupt:
        raise fail("interrupted") from None


def label(scenario: Path, overrides: Optional[list[str]]) -> str:
    """How an error names the scenario: the file, and the --set items applied to it."""
    return f"{scenario} (with --set {', '.join(overrides)})" if overrides else str(scenario)


def print_summary(result) -> None:
    """A run's warnings (stderr), then its counters and its player, flow and link tables."""
    s = result.summary
    for w in s.get("warnings", []):
        err.print(f"warning: {w}", soft_wrap=True, markup=False)
    out.print(
        f"simulated {s['duration_ns'] / 1e9:g} s (seed {s['seed']}): {s['events']:,} events, "
        f"{s['link_transmissions']:,} link transmissions"
    )
    if s.get("players"):
        out.print(player_table(result))
    out.print(flow_table(result))
    delay = flow_delay_table(result)
    if delay is not None:
        out.print(delay)
    out.print(link_table(result))
