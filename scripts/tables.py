"""Markdown for the generated parts of the pages: tables, and numbers with their errors.

The pages keep their sentences; the programs that fill their markers hand back numbers
and tables only, formatted here, one way each.

Public names:

    table(header, rows)       a Markdown table: the header, the rule, one line per row
    estimate(value, se)       "value ± se": se to two significant digits, value to the same place
    interval(m)               "median [low, high]" of a stats.Median, two significant digits each

    python3 scripts/tables.py      # this help

>>> print(table(["d_k", "Var(q·k)"], [[16, estimate(15.114, 0.7801)]]))
| d_k | Var(q·k) |
|---|---|
| 16 | 15.11 ± 0.78 |
"""

import math  # floor, log10
from typing import Sequence, Tuple

__all__ = ["table", "estimate", "interval"]


def table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    """Return a Markdown table of str(cell) for each cell; a "|" inside a cell is escaped.

    Every row must have as many cells as the header.

    >>> print(table(["a", "b"], [[1, "x|y"]]))
    | a | b |
    |---|---|
    | 1 | x\\|y |
    """
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"table: row {i} has {len(row)} cells, the header {len(header)}")
    lines = [_line(header), "|" + "---|" * len(header)] + [_line(row) for row in rows]
    return "\n".join(lines)


def _line(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"


def format_estimate(value: float, se: float) -> Tuple[str, str]:
    """(value, se) as text: se to two significant digits, value to the same decimal place.

    The rule of `python3 stats.py`; it moves into stats.py as stats.format_estimate.
    """
    places = max(0, 1 - math.floor(math.log10(se)))
    return f"{value:.{places}f}", f"{se:.{places}f}"


def estimate(value: float, se: float) -> str:
    """Return "value ± se" by the report's rule (format_estimate).

    >>> estimate(1026.2, 45.9), estimate(0.84693, 0.00412)
    ('1026 ± 46', '0.8469 ± 0.0041')
    """
    return "{} ± {}".format(*format_estimate(value, se))


def interval(m) -> str:
    """Return "median [low, high]" of a stats.Median (or anything with those three fields),
    each to two significant digits.

    >>> from types import SimpleNamespace
    >>> interval(SimpleNamespace(median=0.000791, low=0.000362, high=0.00152))
    '0.00079 [0.00036, 0.0015]'
    """
    return f"{m.median:.2g} [{m.low:.2g}, {m.high:.2g}]"


if __name__ == "__main__":  # a helper of the build: say what it offers
    print(__doc__)
