"""The consoles the CLI prints to.

Tables fit the terminal: stdout's width is the terminal's, else ``$COLUMNS``, else a default
(output piped to a file keeps wide tables whole). A column that does not fit is folded onto
more lines, never cut with an ellipsis ("4…" would hide digits).

The consoles, the tables and rich itself load on first use (:class:`LazyConsole`,
:func:`deferred`): a command that prints nothing, such as ``haslab run -q``, never imports rich."""

from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


#: When deciding whether a table fits, a column of text that may wrap (left-justified, not
#: ``no_wrap``) counts at most this wide: rich wraps it to fit.
PROSE_WIDTH = 30


def _prose(c) -> bool:
    return c.justify == "left" and not c.no_wrap


def _copy(table: "Table", columns: list, title, caption, measuring: bool = False) -> "Table":
    from rich.table import Table

    t = Table(
        title=title,
        title_justify=table.title_justify,
        caption=caption,
        caption_justify=table.caption_justify,
        show_lines=table.show_lines,
        show_header=table.show_header,
    )
    for c in columns:
        cap = PROSE_WIDTH if measuring and _prose(c) else c.max_width
        t.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap, overflow="fold", max_width=cap)
    for row in zip(*(list(c.cells) for c in columns)):
        t.add_row(*row)
    return t


def fit(console: "Console", table: "Table", keep: int = 1) -> list["Table"]:
    """``table`` as one table, or, if it is wider than the console, as several tables with
    consecutive columns that each fit, every part repeating the first ``keep`` columns (the
    row's name). Cells that still do not fit fold onto more lines."""
    cols = list(table.columns)
    for c in cols:
        c.overflow = "fold"

    def width(columns) -> int:
        wide = console.options.update_width(1_000_000)
        return console.measure(_copy(table, columns, None, None, measuring=True), options=wide).maximum

    if width(cols) <= console.width or len(cols) <= keep + 1:
        return [table]
    key, rest = cols[:keep], cols[keep:]
    groups: list[list] = [[]]
    for c in rest:
        if groups[-1] and width(key + groups[-1] + [c]) > console.width:
            groups.append([])
        groups[-1].append(c)
    parts = []
    for i, g in enumerate(groups):
        title = table.title if i == 0 else (f"{table.title} (continued)" if table.title else None)
        caption = table.caption if i == len(groups) - 1 else None
        parts.append(_copy(table, key + g, title, caption))
    return parts


@lru_cache(maxsize=None)
def _folding_console_class() -> type:
    from rich.console import Console
    from rich.table import Table

    class FoldingConsole(Console):
        """A rich Console that prints a table too wide for it as several narrower tables (see
        :func:`fit`) and folds cells rather than cutting them."""

        def print(self, *objects, **kwargs) -> None:  # noqa: A003 (rich's name)
            expanded = []
            for o in objects:
                expanded.extend(fit(self, o) if isinstance(o, Table) else [o])
            for o in expanded:
                super().print(o, **kwargs)

    return FoldingConsole


class LazyConsole:
    """A console made on first use (importing rich then): every attribute is the console's."""

    def __init__(self, make: Callable[[], "Console"]):
        self._make = make
        self._console: "Console | None" = None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if self._console is None:
            self._console = self._make()
        return getattr(self._console, name)


def stdout_console(piped_width: int = 120) -> LazyConsole:
    """stdout: the terminal's width; when piped, ``$COLUMNS`` if set, else ``piped_width``."""

    def make() -> "Console":
        width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else piped_width
        return _folding_console_class()(highlight=False, width=width)

    return LazyConsole(make)


def stderr_console() -> LazyConsole:
    return LazyConsole(lambda: _folding_console_class()(stderr=True, highlight=False))


def deferred(module: str, *names: str) -> tuple[Callable, ...]:
    """Functions of ``module`` (e.g. ``haslab.tables``) that import it on their first call."""

    def one(name: str) -> Callable:
        def call(*args, **kwargs):
            return getattr(importlib.import_module(module), name)(*args, **kwargs)

        call.__name__ = call.__qualname__ = name
        return call

    return tuple(one(n) for n in names)
