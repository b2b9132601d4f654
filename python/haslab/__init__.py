"""haslab: a deterministic packet-level simulator of HTTP adaptive streaming over TCP.

>>> import haslab
>>> result = haslab.run("examples/dumbbell.toml")          # doctest: +SKIP
>>> result.flows[["name", "goodput_bps"]]                   # doctest: +SKIP
>>> result.cwnd.groupby("flow_name").cwnd_pkts.mean()       # doctest: +SKIP

See :func:`run`, :func:`validate`, :func:`describe`, :func:`schema`, :func:`catalog` and
:class:`Result`; sweeps (a scenario × a grid of parameters × seeds, run in parallel and stored by
run hash): :class:`Sweep`, :mod:`haslab.store`, :mod:`haslab.aggregate`.
"""

from ._core import __version__
from .api import Result, ScenarioError, catalog, describe, run, schema, validate

__all__ = [
    "Result",
    "ScenarioError",
    "Sweep",
    "SweepError",
    "catalog",
    "describe",
    "run",
    "schema",
    "validate",
    "demo_scenario",
    "__version__",
]


#: Submodules reachable as attributes of the package (``haslab.plots.cwnd_and_queue(...)``)
#: without importing them first. They load on first use, so ``import haslab`` stays light
#: (no matplotlib until a figure is drawn).
_LAZY_SUBMODULES = ("aggregate", "compare", "plots", "store")
#: Names of the package that load their module on first use: ``haslab.Sweep`` imports pydantic,
#: which ``haslab run`` does not need.
_LAZY_NAMES = {"Sweep": "sweep", "SweepError": "sweep"}


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY_NAMES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | set(_LAZY_NAMES))


def demo_scenario() -> str:
    """The TOML text of the packaged demo scenario (4 NewReno flows on a dumbbell)."""
    from importlib.resources import files

    return files(__package__).joinpath("scenarios/demo.toml").read_text(encoding="utf-8")
