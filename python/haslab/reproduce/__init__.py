"""``haslab reproduce``: re-run the papers' experiments, draw their figures, check their claims.

>>> from haslab.reproduce import get, run_experiment
>>> outcome = run_experiment(get("tcphas-fig2"), "out/reproduce", quick=True)   # doctest: +SKIP
>>> [(c.text, c.ours, c.holds) for c in outcome.claims]                          # doctest: +SKIP

See :mod:`haslab.reproduce.base` (Experiment, Claim, run_experiment), :mod:`.registry` and
docs/reproduce.md.
"""

from .base import Claim, Context, Experiment, Outcome, ReproduceError, Results, run_experiment
from .registry import PLANNED, experiments, get, missing, names
from .report import write_report

__all__ = [
    "Claim",
    "Context",
    "Experiment",
    "Outcome",
    "PLANNED",
    "ReproduceError",
    "Results",
    "experiments",
    "get",
    "missing",
    "names",
    "run_experiment",
    "write_report",
]
