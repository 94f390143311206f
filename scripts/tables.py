"""Markdown for the generated parts of the pages: tables, and numbers with their errors.

The pages keep their sentences; the programs that fill their markers (run by
`python3 scripts/build.py`) hand back numbers and tables only.  A number with its
standard error follows the report's one rule, `stats.format_estimate`; a median with its
interval is `stats.format_interval`.

Public names:

    table(header, rows)       a Markdown table: the header, the rule, one line per row
    estimate(value, se)       "value ± se" by stats.format_estimate: se to two significant
                              digits, value to the same decimal place

    python3 scripts/tables.py      # this help

>>> print(table(["d_k", "Var(q·k)"], [[16, estimate(15.114, 0.7801)]]))
| d_k | Var(q·k) |
|---|---|
| 16 | 15.11 ± 0.78 |
"""

import os  # the library's folder, when run as a script
import sys  # path
from typing import Sequence

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import stats

__all__ = ["table", "estimate"]


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


def estimate(value: float, se: float) -> str:
    """Return "value ± se", each as the report prints it (stats.format_estimate).

    >>> estimate(1026.2, 45.9), estimate(0.84693, 0.00412), estimate(2.5, 0.0996)
    ('1026 ± 46', '0.8469 ± 0.0041', '2.50 ± 0.10')
    """
    return " ± ".join(stats.format_estimate(value, se))


if __name__ == "__main__":  # a part of the build, not a program: what it offers
    print(__doc__)
