"""The registry of experiments: every module of this package (other than the framework's own)
that defines a module-level list ``EXPERIMENTS`` of :class:`~haslab.reproduce.base.Experiment`.

Adding an experiment = adding it to the ``EXPERIMENTS`` list of its paper's module (``tcphas.py``,
``qoe.py``, ``enhancing.py``, ``newcwv.py``); a new module is picked up by itself.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .base import Experiment, ReproduceError

#: The experiments of the four papers, in the report's order. Names not registered yet are
#: listed in the report as "not yet reproduced".
PLANNED = [
    "tcphas-fig2",
    "tcphas-fig3",
    "enhancing-fig5",
    "enhancing-fig6",
    "enhancing-fig7",
    "enhancing-fig8",
    "enhancing-fig10",
    "enhancing-fig11",
    "enhancing-table1",
    "qoe-env1",
    "qoe-env2",
    "qoe-env3",
    "qoe-env4",
    "newcwv-fig3",
    "newcwv-fig4",
    "newcwv-fig5",
    "newcwv-fig7",
    "newcwv-fig8",
    "newcwv-fig9",
]

_FRAMEWORK = {"base", "registry", "report"}
_cache: dict[str, Experiment] | None = None


def experiments() -> dict[str, Experiment]:
    """All registered experiments by name, in :data:`PLANNED` order (others after, sorted)."""
    global _cache
    if _cache is None:
        found: dict[str, Experiment] = {}
        for info in pkgutil.iter_modules(_package_path()):
            if info.name in _FRAMEWORK or info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{__package__}.{info.name}")
            for exp in getattr(module, "EXPERIMENTS", []):
                if exp.name in found:
                    raise ReproduceError(f"experiment {exp.name!r} is registered twice")
                found[exp.name] = exp
        order = {n: i for i, n in enumerate(PLANNED)}
        _cache = dict(sorted(found.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    return dict(_cache)


def _package_path() -> list[str]:
    # this file's folder, not the package's ``__path__``: reading the package from here would
    # make the package (which imports this module) and this module import each other
    return [str(Path(__file__).resolve().parent)]


def names() -> list[str]:
    return list(experiments())


def missing() -> list[str]:
    """Planned experiments that no module registers yet."""
    have = experiments()
    return [n for n in PLANNED if n not in have]


def get(name: str) -> Experiment:
    """The experiment called ``name``; an unknown name raises with the list of names."""
    exps = experiments()
    if name not in exps:
        raise ReproduceError(f"unknown experiment {name!r}; experiments: {', '.join(exps)} (or: list, all)")
    return exps[name]
