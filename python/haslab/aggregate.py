"""Aggregating a sweep's results over seeds, and the papers' "unfairness" error bars.

* :func:`mean_ci` / :func:`aggregate`: mean, sample standard deviation and a Student-t
  confidence interval (95 % by default) over the runs of each grid point (the seeds).
* :func:`unfairness`: for a per-player (per-flow) metric, the mean over players and runs, with
  error bars that show the spread *between the players of one run*, averaged over runs. This is
  how the TcpHas paper (Ben Ameur et al., Fig. 3: "we present the performance unfairness
  measurements among HAS clients with vertical error bars") draws its figures. The paper does not
  give the formula; the default (``spread="minmax"``) draws the bar from the run-averaged lowest
  player to the run-averaged highest player; ``spread="std"`` draws mean ± the run-averaged
  standard deviation across players.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import pandas as pd


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> dict:
    """Mean, sample standard deviation (n − 1) and the Student-t confidence interval of the mean.

    ``half = t_{(1+c)/2, n−1} · s / √n``. NaN values are ignored. With one value, ``std``,
    ``half`` and the interval are NaN (a single run says nothing about the spread).
    Returns ``{"n", "mean", "std", "half", "low", "high"}``."""
    import numpy as np
    from scipy import stats

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(values, dtype="float64")
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": math.nan, "std": math.nan, "half": math.nan, "low": math.nan, "high": math.nan}
    mean = float(x.mean())
    if n == 1:
        return {"n": 1, "mean": mean, "std": math.nan, "half": math.nan, "low": math.nan, "high": math.nan}
    std = float(x.std(ddof=1))
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * std / math.sqrt(n)
    return {"n": n, "mean": mean, "std": std, "half": half, "low": mean - half, "high": mean + half}


def _by(df: "pd.DataFrame", by: Sequence[str] | str | None) -> list[str]:
    if by is None:
        params = df.attrs.get("params")
        if params is None:
            raise ValueError("pass by=[columns]: this DataFrame does not say which columns are parameters")
        return list(params)
    return [by] if isinstance(by, str) else list(by)


def _ok(df: "pd.DataFrame") -> "pd.DataFrame":
    return df[df["status"] == "ok"] if "status" in df.columns else df


def aggregate(
    df: "pd.DataFrame",
    values: Sequence[str] | str,
    by: Sequence[str] | str | None = None,
    confidence: float = 0.95,
) -> "pd.DataFrame":
    """One row per group of ``by`` (default: the sweep's parameters, ``df.attrs["params"]``),
    with, for each column ``v`` of ``values``: ``v_n``, ``v_mean``, ``v_std``, ``v_ci_low``,
    ``v_ci_high`` and ``v_ci_half`` (see :func:`mean_ci`). Rows whose ``status`` is not "ok"
    are left out. Groups are in order of first appearance."""
    import pandas as pd

    values = [values] if isinstance(values, str) else list(values)
    keys = _by(df, by)
    data = _ok(df)
    rows = []
    groups = data.groupby(keys, sort=False, dropna=False) if keys else [((), data)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key))
        for v in values:
            s = mean_ci(pd.to_numeric(g[v], errors="coerce").to_numpy(dtype="float64"), confidence)
            row.update(
                {
                    f"{v}_n": s["n"],
                    f"{v}_mean": s["mean"],
                    f"{v}_std": s["std"],
                    f"{v}_ci_low": s["low"],
                    f"{v}_ci_high": s["high"],
                    f"{v}_ci_half": s["half"],
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def unfairness(
    df: "pd.DataFrame",
    value: str,
    by: Sequence[str] | str | None = None,
    run: str = "run_hash",
    spread: str = "minmax",
) -> "pd.DataFrame":
    """Mean of a per-player metric with the papers' "unfairness" error bars.

    ``df`` has one row per player (flow) per run, e.g. ``store.flows()``. For each run (column
    ``run``), take the players' mean, min, max and standard deviation of ``value``; then, per
    group of ``by`` (default ``df.attrs["params"]``), average those over the runs.

    Returns one row per group with ``runs`` (number of runs), ``players`` (mean players per run),
    ``{value}_mean``, ``{value}_low``, ``{value}_high`` (the error bar's ends) and
    ``{value}_spread`` (the averaged max − min, or the averaged std across players):

    * ``spread="minmax"``: low = mean over runs of the lowest player's value, high = same for
      the highest player.
    * ``spread="std"``: low/high = mean ∓ the mean over runs of the players' standard
      deviation (n − 1; a run with one player has spread 0)."""
    import pandas as pd

    if spread not in ("minmax", "std"):
        raise ValueError(f"spread must be 'minmax' or 'std', got {spread!r}")
    keys = _by(df, by)
    data = _ok(df).copy()
    data[value] = pd.to_numeric(data[value], errors="coerce")
    per_run = (
        data.groupby([*keys, run], sort=False, dropna=False)[value]
        .agg(["mean", "min", "max", "std", "count"])
        .reset_index()
    )
    per_run["std"] = per_run["std"].fillna(0.0)
    rows = []
    groups = per_run.groupby(keys, sort=False, dropna=False) if keys else [((), per_run)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        mean = float(g["mean"].mean())
        if spread == "minmax":
            low, high = float(g["min"].mean()), float(g["max"].mean())
            width = float((g["max"] - g["min"]).mean())
        else:
            width = float(g["std"].mean())
            low, high = mean - width, mean + width
        rows.append(
            {
                **dict(zip(keys, key)),
                "runs": int(len(g)),
                "players": float(g["count"].mean()),
                f"{value}_mean": mean,
                f"{value}_low": low,
                f"{value}_high": high,
                f"{value}_spread": width,
            }
        )
    return pd.DataFrame(rows)
