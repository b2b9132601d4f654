"""The reproduction framework: an :class:`Experiment` re-runs one figure or table of a paper.

An experiment is

* a name (``tcphas-fig3``), the paper (``tcphas``), the figure/table label (``Fig. 3``) and a title;
* ``build(quick) -> {key: haslab.Sweep}``: the sweep(s) it runs (variants = methods, grid =
  parameters, seeds). ``quick`` is the short form (fewer seeds / points, shorter runs: about a
  minute on two cores); the full form uses the paper's settings;
* ``analyze(ctx) -> {suffix: DataFrame}``: tables computed from the stored results
  (``ctx.results[key]``), written as ``NAME.csv`` (suffix ``""``) or ``NAME-SUFFIX.csv``;
* ``plot(ctx, tables, path)``: draws the figure (matplotlib, labelled like the paper's) to
  ``NAME.png``;
* ``claims(ctx, tables) -> [Claim]``: the paper's claims (a sentence with the paper's number),
  our number, whether the claim holds, and the reason when it does not.

:func:`run_experiment` runs the sweeps through :class:`haslab.Sweep` (parallel on local cores, or
on Dask; resumable: every run is stored under ``OUT/NAME/runs/KEY`` keyed by the hash of its
scenario, so re-running skips what is stored) and writes ``OUT/NAME/{NAME.csv, NAME.png,
NAME.md}``. A module of this package registers experiments by defining a module-level list
``EXPERIMENTS`` (see :mod:`haslab.reproduce.registry`).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    import pandas as pd

    from ..store import Store
    from ..sweep import Sweep

#: Environment variable: override the duration of every run (e.g. "5s") — for smoke tests only.
ENV_DURATION = "HASLAB_REPRODUCE_DURATION"
#: Environment variable: keep only the first N seeds of every sweep — for smoke tests only.
ENV_SEEDS = "HASLAB_REPRODUCE_SEEDS"


#: The verdicts a claim can get, with the words the report uses.
VERDICTS = {
    "holds": "holds",
    "reading": "holds under a named reading",
    "inconsistent": "does not hold — the paper's data is internally inconsistent",
    "model": "does not hold — a model difference, measured and explained",
    "unexplained": "unexplained",
}


@dataclass
class Claim:
    """One claim of a paper, checked against our runs.

    Attributes:
        text: the paper's claim as a sentence with its number, e.g. "TcpHas instability < 4 %
            for 1–9 players".
        source: where the paper says it ("Fig. 3a", "Table II", "§IV-D").
        paper: the paper's number(s) as text ("< 4 %", "42 (next: 62)").
        ours: our number (a float; the quantity the claim is about, in the unit of ``paper``).
        holds: whether the claim holds for our runs.
        ours_text: our number(s) in words when one float does not say it all (optional).
        reason: why it does not hold (required when ``holds`` is False; optional otherwise).
        verdict: one of :data:`VERDICTS`. ``holds`` when ``holds`` is True. Otherwise the
            experiment names the kind: ``inconsistent`` (the reason cites where the paper
            contradicts itself), ``model`` (the reason names a measured model difference);
            ``reading`` is set here when the claim fails under the default reading but holds
            under another one in ``readings``; what is left is ``unexplained``.
        readings: whether the claim holds under each non-default reading the experiment also
            ran (reading name -> holds), e.g. ``{"loss on the ACKs": True}``.
        reading: for ``verdict == "reading"``, the reading under which it holds.
    """

    text: str
    source: str
    paper: str
    ours: float
    holds: bool
    ours_text: str = ""
    reason: str = ""
    verdict: str = ""
    readings: dict = field(default_factory=dict)
    reading: str = ""

    def __post_init__(self) -> None:
        self.ours = float(self.ours)
        self.holds = bool(self.holds)
        self.readings = {str(k): bool(v) for k, v in self.readings.items()}
        if self.holds:
            self.verdict = "holds"
        elif self.verdict != "inconsistent" and any(self.readings.values()):
            self.verdict = "reading"
            self.reading = self.reading or next(k for k, v in self.readings.items() if v)
        elif not self.verdict or self.verdict in ("holds", "reading"):
            self.verdict = "unexplained"
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.text!r}: verdict {self.verdict!r}; accepted: {', '.join(VERDICTS)}")

    @property
    def verdict_text(self) -> str:
        """The verdict as the claims table prints it."""
        if self.verdict == "holds":
            return "yes"
        if self.verdict == "reading":
            return f"**under a reading**: {self.reading}"
        return {"inconsistent": "**no** — paper inconsistent", "model": "**no** — model difference",
                "unexplained": "**no** — unexplained"}[self.verdict]

    def as_row(self) -> dict:
        return dataclasses.asdict(self)


def with_readings(default: list[Claim], others: Mapping[str, list[Claim]]) -> list[Claim]:
    """The default reading's claims, each told whether it holds under the other readings.

    ``others`` maps a reading's name to the same claims (same order and texts) evaluated on that
    reading's runs. Each default claim gets ``readings[name]`` and a sentence with that reading's
    number; one that fails by default but holds under another reading becomes ``reading``."""
    out = []
    for i, c in enumerate(default):
        readings, extra = {}, []
        for name, claims in others.items():
            if i >= len(claims) or claims[i].text != c.text:
                raise ReproduceError(f"reading {name!r}: claim {i} is not {c.text!r}")
            o = claims[i]
            readings[name] = o.holds
            extra.append(f"{name}: {o.ours_text or fmt(o.ours)} ({'holds' if o.holds else 'does not hold'})")
        ours_text = (c.ours_text or fmt(c.ours)) + "".join(f". Under {e}" for e in extra)
        out.append(dataclasses.replace(c, ours_text=ours_text, readings={**c.readings, **readings},
                                       verdict="" if c.verdict == "reading" else c.verdict, reading=""))
    return out


@dataclass
class Results:
    """The stored results of one sweep of an experiment, restricted to that sweep's runs (a store
    may also hold runs of the other form, quick or full)."""

    store: "Store"
    sweep: "Sweep"

    @property
    def hashes(self) -> list[str]:
        return [r.run_hash for r in self.sweep.runs()]

    @property
    def params(self) -> list[str]:
        return list(self.sweep.params)

    def _only(self, df: "pd.DataFrame") -> "pd.DataFrame":
        attrs = dict(df.attrs)
        if "run_hash" in df.columns:
            df = df[df["run_hash"].isin(set(self.hashes))].reset_index(drop=True)
        df.attrs.update(attrs)
        return df

    def summary(self) -> "pd.DataFrame":
        """One row per run of this sweep (ok and failed)."""
        return self._only(self.store.summary())

    def table(self, name: str) -> "pd.DataFrame":
        """A per-run table (``players``, ``flows``, ``links``) of the ok runs, parameters joined."""
        return self._only(self.store.table(name))

    def trace(self, run_hash: str, name: str) -> "pd.DataFrame":
        """A trace (``players``, ``segments``, ``queue``, …) of one run (needs ``traces=True``)."""
        return self.store.trace(run_hash, name)


@dataclass
class Context:
    """What the analysis, plot and claims functions get."""

    name: str
    quick: bool
    out: Path  #: the experiment's directory OUT/NAME
    results: dict[str, Results]  #: by sweep key
    #: markdown paragraphs computed from the data (a diagnosis the claims' reasons refer to),
    #: appended by analyze/claims and printed after the experiment's notes
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> Results:
        return self.results[key]

    @property
    def main(self) -> Results:
        """The results of the only (or first) sweep."""
        return next(iter(self.results.values()))


@dataclass
class Experiment:
    """One figure or table of a paper (see the module's doc)."""

    name: str
    paper: str
    label: str
    title: str
    build: Callable[[bool], Mapping[str, "Sweep"]]
    analyze: Callable[[Context], Mapping[str, "pd.DataFrame"]]
    plot: Callable[[Context, Mapping[str, "pd.DataFrame"], Path], None]
    claims: Callable[[Context, Mapping[str, "pd.DataFrame"]], list[Claim]]
    #: markdown placed under the claims table: settings, what differs from the paper
    notes: str = ""
    #: ``quick``/``full`` forms in a few words, for ``haslab reproduce list``
    forms: tuple[str, str] = ("", "")


@dataclass
class Outcome:
    """What :func:`run_experiment` produced."""

    experiment: Experiment
    quick: bool
    out: Path
    csv: list[Path]
    png: Path
    md: Path
    claims: list[Claim]
    runs: int
    ran: int
    failed: int
    wall_s: float
    notes: list[str] = field(default_factory=list)  #: the data-driven notes (Context.notes)
    run_s: float = 0.0  #: the runs' own wall times, summed (the form's cost on one core)


class ReproduceError(ValueError):
    """An unknown experiment name or an experiment that could not produce its outputs."""


# ---------------------------------------------------------------------------------------------
# running


def _shrink(sweep: "Sweep", duration: str | None, seeds: int | None) -> "Sweep":
    """The sweep with every run's duration overridden and only the first ``seeds`` seeds."""
    from ..sweep import Sweep

    if not duration and not seeds:
        return sweep
    new = copy.copy(sweep)
    if duration:
        new.set = {**sweep.set, "duration": duration}
    if seeds:
        new.seeds = list(sweep.seeds[: max(int(seeds), 1)])
    new._runs = None
    assert isinstance(new, Sweep)
    return new


def sweeps_for(exp: Experiment, quick: bool) -> dict[str, "Sweep"]:
    """The experiment's sweeps, with the smoke-test overrides of the environment applied."""
    sweeps = dict(exp.build(quick))
    if not sweeps:
        raise ReproduceError(f"{exp.name}: build() returned no sweep")
    duration = os.environ.get(ENV_DURATION) or None
    seeds = int(os.environ[ENV_SEEDS]) if os.environ.get(ENV_SEEDS) else None
    for key, sw in sweeps.items():
        sw.name = f"{exp.name}" if len(sweeps) == 1 else f"{exp.name}/{key}"
        sweeps[key] = _shrink(sw, duration, seeds)
    return sweeps


def run_experiment(
    exp: Experiment,
    out: str | os.PathLike = "out/reproduce",
    *,
    quick: bool = False,
    jobs: int | None = None,
    dask: Any = None,
    progress: bool | str = True,
    log: Callable[[str], None] | None = None,
) -> Outcome:
    """Runs (or resumes) an experiment's sweeps, then writes its CSV, PNG and markdown.

    The runs go to ``OUT/NAME/runs/KEY`` (one store per sweep key); runs already stored are not
    run again, so a killed reproduction resumes, and the analysis can be redone for free."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..store import Store

    t0 = time.perf_counter()
    root = Path(out) / exp.name
    root.mkdir(parents=True, exist_ok=True)
    sweeps = sweeps_for(exp, quick)
    results: dict[str, Results] = {}
    total = ran = failed = 0
    run_s = 0.0
    for key, sw in sweeps.items():
        dest = root / "runs" / key
        if log:
            log(f"{sw.name}: {len(sw.runs())} runs → {dest}/")
        outcome = sw.run(dest, jobs=jobs, dask=dask, progress=progress)
        results[key] = Results(Store(dest), sw)
        total += outcome.total
        ran += outcome.ran
        summary = results[key].summary()
        failed += int((summary["status"] != "ok").sum())
        run_s += float(summary["wall_s"].fillna(0).sum())
    ctx = Context(exp.name, quick, root, results)
    tables = dict(exp.analyze(ctx))
    csvs = []
    for suffix, df in tables.items():
        path = root / (f"{exp.name}.csv" if not suffix else f"{exp.name}-{suffix}.csv")
        df.to_csv(path, index=False)
        csvs.append(path)
    png = root / f"{exp.name}.png"
    plt.close("all")
    exp.plot(ctx, tables, png)
    plt.close("all")
    claims = list(exp.claims(ctx, tables))
    for c in claims:
        if not c.holds and not c.reason.strip():
            raise ReproduceError(f"{exp.name}: claim {c.text!r} does not hold and gives no reason")
    wall = time.perf_counter() - t0
    md = root / f"{exp.name}.md"
    result = Outcome(exp, quick, root, csvs, png, md, claims, total, ran, failed, wall, list(ctx.notes), run_s)
    md.write_text(markdown_section(result), encoding="utf-8")
    (root / f"{exp.name}.claims.json").write_text(
        json.dumps(
            {
                "name": exp.name,
                "quick": quick,
                "runs": total,
                "ran": ran,
                "failed": failed,
                "wall_s": wall,
                "run_s": run_s,
                "claims": [c.as_row() for c in claims],
            },
            indent=1,
            allow_nan=True,
        )
        + "\n",
        encoding="utf-8",
    )
    return result


# ---------------------------------------------------------------------------------------------
# markdown


def fmt(x: float, digits: int = 3) -> str:
    """A number for a table: NaN as "n/a", integers without decimals, else ``digits``
    significant digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if float(x).is_integer() and abs(x) < 1e9:
        return str(int(x))
    return f"{x:.{digits}g}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_table(claims: list[Claim]) -> str:
    lines = [
        "| paper's claim | source | paper | ours | verdict | reason |",
        "|---|---|---|---|---|---|",
    ]
    for c in claims:
        ours = c.ours_text or fmt(c.ours)
        lines.append(
            f"| {_cell(c.text)} | {_cell(c.source)} | {_cell(c.paper)} | {_cell(ours)} | "
            f"{c.verdict_text} | {_cell(c.reason)} |"
        )
    return "\n".join(lines)


def markdown_section(o: Outcome, figure: str | None = None) -> str:
    """The experiment's markdown section: heading, the claims table, the figure, the notes.

    ``figure`` is the figure's path as the markdown should link it (default: the PNG's name,
    next to the markdown file)."""
    e = o.experiment
    held = sum(c.holds for c in o.claims)
    form = "quick" if o.quick else "full"
    counts = verdict_counts([c.verdict for c in o.claims])
    fig = figure or o.png.name
    parts = [
        f"## `{e.name}` — {e.label}: {e.title}",
        "",
        f"Paper: {PAPERS.get(e.paper, e.paper)}. Form: **{form}** ({o.runs} runs"
        + (f", {o.failed} failed" if o.failed else "")
        + f", {o.run_s:.0f} s of run time on one core). Claims holding: **{held}/{len(o.claims)}**"
        + (f" ({counts})" if counts else "")
        + ".",
        "",
        claims_table(o.claims) if o.claims else "_No claim evaluated._",
        "",
        f"![{e.label}]({fig})",
        "",
        f"Data: {', '.join(f'`{p.name}`' for p in o.csv)}.",
    ]
    if e.notes.strip():
        parts += ["", e.notes.strip()]
    for n in o.notes:
        parts += ["", n.strip()]
    return "\n".join(parts) + "\n"


def verdict_counts(verdicts: list[str]) -> str:
    """"2 hold, 1 under a reading, …": the non-zero counts of each verdict, in VERDICTS' order."""
    short = {"holds": "hold", "reading": "hold under a named reading", "inconsistent": "paper inconsistent",
             "model": "model difference", "unexplained": "unexplained"}
    return ", ".join(f"{verdicts.count(k)} {short[k]}" for k in VERDICTS if verdicts.count(k))


#: Short citations of the four papers, by the ``paper`` key of an experiment.
PAPERS = {
    "tcphas": "Ben Ameur, Mory, Cousin, Dedu, *TcpHas: TCP for HTTP adaptive streaming*, ICC 2017",
    "enhancing": "Liu, Men, Zhang, *Enhancing TCP to improve throughput of HTTP adaptive streaming*",
    "qoe": "Khan, Goodridge, *QoE evaluation of legacy TCP variants over DASH*",
    "newcwv": "Nazir et al., *Performance evaluation of congestion window validation for DASH transport*",
}
