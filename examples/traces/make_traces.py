"""Writes the deterministic Mahimahi traces next to this file (run: python3 make_traces.py).

Mahimahi format: one line per 1500-byte delivery opportunity, its time in milliseconds; the
trace repeats with the last time as its period. A rate R (bit/s) held over a span becomes
R / 12 000 opportunities per millisecond, accumulated so that fractions carry over.

- stepdown.trace: 8 Mbit/s for 40 s, then 0.28 Mbit/s until 120 s. The drop is deep enough that
  a top-level segment of the `tcphas` ladder (4256 kbit/s x 2 s = 8.5 Mbit) takes 30 s at the
  new rate, longer than a full 28-30 s buffer, while the lowest level (248 kbit/s) stays
  sustainable: the case request abandonment is meant for (Spiteri et al., MMSys 2018).
- variable.trace: a new rate every 4 s for 180 s, log-uniform between 0.5 and 6 Mbit/s, drawn
  from a fixed linear congruential generator (seed 1; constants of Numerical Recipes), so the
  file is the same on every machine and Python version.
"""

import math
from pathlib import Path

HERE = Path(__file__).resolve().parent


def opportunities(spans):
    """spans: [(duration_ms, rate_bps)] -> list of opportunity times (ms)."""
    out, t, credit = [], 0, 0.0
    for dur, rate in spans:
        per_ms = rate / 12_000_000.0
        for _ in range(dur):
            t += 1
            credit += per_ms
            while credit >= 1.0:
                out.append(t)
                credit -= 1.0
    if not out or out[-1] != t:
        out.append(t)  # the period is the last time: end exactly at the span's end
    return out


def lcg(seed):
    x = seed
    while True:
        x = (1664525 * x + 1013904223) % 2**32
        yield x / 2**32


def write(name, times):
    (HERE / name).write_text("".join(f"{t}\n" for t in times))


if __name__ == "__main__":
    write("stepdown.trace", opportunities([(40_000, 8e6), (80_000, 0.28e6)]))
    u = lcg(1)
    spans = []
    for _ in range(45):
        rate = math.exp(math.log(0.5e6) + next(u) * (math.log(6e6) - math.log(0.5e6)))
        spans.append((4_000, round(rate, -3)))
    write("variable.trace", opportunities(spans))
    (HERE / "variable.rates.txt").write_text(
        "# span_ms rate_bps of variable.trace, in order\n" + "".join(f"{d} {int(r)}\n" for d, r in spans)
    )
