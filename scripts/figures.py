"""A small SVG plot writer: lines with markers, linear or log axes, error bars, a legend.

    python3 scripts/figures.py demo.svg     # draw a small example figure into demo.svg

Standard library only, so the project draws its own figures.  Series differ by marker
and dash pattern as well as colour, so they stay apart in grey-scale.  Every plotted
point carries its exact value in `data-x` and `data-y` attributes (repr of the float),
so a test can parse the SVG with xml.etree and compare the points with the code.

Public names:

    Series(label, xs, ys, errors=None, style=0)   one line; errors: +- e, or (low, high) bars
    Axis(label, log=False, ticks=None)            ticks: positions to label (else chosen)
    plot(title, x, y, series, width=700, height=420) -> str   the SVG text
    write_atomic(path, text)                      write via a temporary file, then rename
    cannot_write(path)                            why path cannot be written, or None

>>> svg = plot("t", Axis("x"), Axis("y"), [Series("a", [0.0, 1.0], [1.0, 2.0])])
>>> svg.count('data-x="'), svg.startswith("<svg")
(2, True)
"""

import argparse  # the command line
import math  # log10, floor, isfinite
import os  # replace, for an atomic write
import sys  # exit
import tempfile  # the temporary file beside the target
from typing import List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["Series", "Axis", "plot", "write_atomic", "cannot_write"]

# grey-scale-safe styles: (colour, dash pattern, marker); colours from the Okabe-Ito set
STYLES = (("#000000", "", "circle"), ("#0072B2", "7 4", "square"),
          ("#D55E00", "2 3", "triangle"), ("#009E73", "9 3 2 3", "diamond"),
          ("#CC79A7", "", "cross"), ("#555555", "4 2", "plus"))
FONT = 'font-family="Helvetica, Arial, sans-serif"'
MARGIN = (70, 20, 50, 60)  # left, right (beside the legend), top, bottom, in px


class Series(NamedTuple):
    """One line: its legend label, points (xs[i], ys[i]), optional error bars, a style.

    errors[i] is e (a bar from y - e to y + e) or a pair (low, high): a bar between them.
    """
    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    errors: Optional[Sequence[object]] = None
    style: object = 0  # an index into STYLES, or a (colour, dash, marker) triple


def _bar(y: float, e) -> Tuple[float, float]:
    """The ends (low, high) of the error bar of a point at y."""
    return tuple(e) if isinstance(e, (tuple, list)) else (y - e, y + e)


class Axis(NamedTuple):
    """An axis: its label, whether it is logarithmic, and the tick positions to label."""
    label: str
    log: bool = False
    ticks: Optional[Sequence[float]] = None


def _nice_ticks(low: float, high: float) -> List[float]:
    # steps of 1, 2 or 5 times a power of ten, about five ticks across the range
    raw = (high - low) / 6 or 1.0
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 5, 10) if s * power >= raw)
    first = math.ceil(low / step - 1e-9)
    return [k * step for k in range(first, int(math.floor(high / step + 1e-9)) + 1)]


def _decade_ticks(low: float, high: float) -> List[float]:
    return [10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _range(values: List[float], axis: Axis) -> Tuple[float, float]:
    if axis.ticks:
        values = values + list(axis.ticks)
    low, high = min(values), max(values)
    if axis.log:  # pad a tenth of a decade either side, then widen to the ticks used
        return low / 10 ** 0.1, high * 10 ** 0.1
    pad = (high - low) * 0.05 or 1.0
    return low - pad, high + pad


def _mapper(low: float, high: float, start: float, end: float, log: bool):
    f = math.log10 if log else float
    a, b = f(low), f(high)
    return lambda v: start + (f(v) - a) / (b - a) * (end - start)


def _label(v: float) -> str:
    return f"{v:g}" if 1e-3 <= abs(v) < 1e5 or v == 0 else f"{v:.0e}".replace("e-0", "e-")


def _marker(kind: str, x: float, y: float, colour: str, attrs: str) -> str:
    r = 4.5
    if kind == "circle":
        return f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{r}" fill="{colour}" {attrs}/>'
    if kind == "square":
        return (f'<rect x="{x - r:.2f}" y="{y - r:.2f}" width="{2 * r}" height="{2 * r}" '
                f'fill="white" stroke="{colour}" stroke-width="2" {attrs}/>')
    shapes = {"triangle": [(0, -r - 1), (r + 1, r), (-r - 1, r)],
              "diamond": [(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
              "cross": [(-r, -r), (r, r), (0, 0), (r, -r), (-r, r), (0, 0)],
              "plus": [(-r, 0), (r, 0), (0, 0), (0, -r), (0, r), (0, 0)]}[kind]
    points = " ".join(f"{x + dx:.2f},{y + dy:.2f}" for dx, dy in shapes)
    fill = "none" if kind in ("cross", "plus") else colour
    return (f'<polygon points="{points}" fill="{fill}" stroke="{colour}" stroke-width="2" '
            f'{attrs}/>')


def _axes(x: Axis, y: Axis, box, X, Y, x_range, y_range) -> List[str]:
    left, top, right, bottom = box
    out = [f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
           'fill="none" stroke="#333"/>']
    for axis, (low, high) in ((x, x_range), (y, y_range)):
        ticks = axis.ticks or (_decade_ticks if axis.log else _nice_ticks)(low, high)
        for t in ticks:
            if not low <= t <= high:
                continue
            if axis is x:
                px = X(t)
                out += [f'<line x1="{px:.2f}" y1="{top}" x2="{px:.2f}" y2="{bottom}" '
                        'stroke="#ddd"/>',
                        f'<text x="{px:.2f}" y="{bottom + 18}" text-anchor="middle" '
                        f'font-size="13" {FONT}>{_label(t)}</text>']
            else:
                py = Y(t)
                out += [f'<line x1="{left}" y1="{py:.2f}" x2="{right}" y2="{py:.2f}" '
                        'stroke="#ddd"/>',
                        f'<text x="{left - 6}" y="{py + 4:.2f}" text-anchor="end" '
                        f'font-size="13" {FONT}>{_label(t)}</text>']
    out += [f'<text x="{(left + right) / 2:.1f}" y="{bottom + 40}" text-anchor="middle" '
            f'font-size="14" {FONT}>{_escape(x.label)}</text>',
            f'<text transform="translate({left - 52},{(top + bottom) / 2:.1f}) rotate(-90)" '
            f'text-anchor="middle" font-size="14" {FONT}>{_escape(y.label)}</text>']
    return out


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _style(s: Series) -> Tuple[str, str, str]:
    return STYLES[s.style % len(STYLES)] if isinstance(s.style, int) else tuple(s.style)


def _series(s: Series, X, Y) -> List[str]:
    colour, dash, marker = _style(s)
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    path = " ".join(f"{X(a):.2f},{Y(b):.2f}" for a, b in zip(s.xs, s.ys))
    out = [f'<g class="series" data-label="{_escape(s.label)}">',
           f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"'
           f'{dash_attr}/>']
    for i, (a, b) in enumerate(zip(s.xs, s.ys)):
        attrs = f'class="point" data-x="{a!r}" data-y="{b!r}"'
        if s.errors is not None:
            low, high = _bar(b, s.errors[i])
            attrs += f' data-low="{low!r}" data-high="{high!r}"'
            out.append(f'<path d="M{X(a) - 4:.2f},{Y(high):.2f}h8M{X(a):.2f},{Y(high):.2f}'
                       f'V{Y(low):.2f}M{X(a) - 4:.2f},{Y(low):.2f}h8" stroke="{colour}" '
                       'fill="none" stroke-width="1.5"/>')
        out.append(_marker(marker, X(a), Y(b), colour, attrs))
    return out + ["</g>"]


def _legend(series: Sequence[Series], x0: float, y0: float) -> List[str]:
    out = []
    for row, s in enumerate(series):
        colour, dash, marker = _style(s)
        y = y0 + 22 * row
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out += [f'<line x1="{x0}" y1="{y}" x2="{x0 + 34}" y2="{y}" stroke="{colour}" '
                f'stroke-width="2"{dash_attr}/>',
                _marker(marker, x0 + 17, y, colour, 'class="legend-marker"'),
                f'<text x="{x0 + 42}" y="{y + 4}" font-size="13" {FONT}>'
                f'{_escape(s.label)}</text>']
    return out


def _check(series: Sequence[Series], x: Axis, y: Axis) -> None:
    if not series:
        raise ValueError("plot: needs at least one series")
    for s in series:
        if len(s.xs) != len(s.ys) or not s.xs:
            raise ValueError(f"plot: series {s.label!r} has {len(s.xs)} xs and {len(s.ys)} ys")
        for axis, values in ((x, s.xs), (y, s.ys)):
            if not all(math.isfinite(v) and (v > 0 or not axis.log) for v in values):
                raise ValueError(f"plot: series {s.label!r} has a value that is not finite"
                                 f"{' and positive on the log axis' if axis.log else ''}")


def plot(title: str, x: Axis, y: Axis, series: Sequence[Series], *, width: int = 700,
         height: int = 420, legend_width: int = 220) -> str:
    """Return an SVG line plot of the series, with axes, ticks, a legend and a title."""
    _check(series, x, y)
    left, right, top, bottom = MARGIN[0], width - legend_width - MARGIN[1], MARGIN[2], \
        height - MARGIN[3]
    ys = [v for s in series for i, b in enumerate(s.ys)
          for v in ((b,) if s.errors is None else _bar(b, s.errors[i]))]
    x_range, y_range = _range([a for s in series for a in s.xs], x), _range(ys, y)
    X = _mapper(*x_range, left, right, x.log)
    Y = _mapper(*y_range, bottom, top, y.log)
    body = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2:.1f}" y="28" text-anchor="middle" font-size="16" '
            f'font-weight="bold" {FONT}>{_escape(title)}</text>']
    body += _axes(x, y, (left, top, right, bottom), X, Y, x_range, y_range)
    for s in series:
        body += _series(s, X, Y)
    body += _legend(series, right + 16, top + 10)
    return "\n".join(body + ["</svg>", ""])


def _mode_for(path: str) -> int:
    if os.path.exists(path):
        return os.stat(path).st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: str, text: str) -> None:
    """Write text to path through a temporary file in the same directory, then rename.

    A reader never sees a half-written file, and a failed write leaves the old one.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, _mode_for(path))  # mkstemp makes the file private; keep the usual mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def cannot_write(path: str) -> Optional[str]:
    """Return why write_atomic(path, ...) would fail, or None: a program checks each file
    it will write before its work starts.

    >>> cannot_write(os.curdir)
    'it is a folder'
    """
    if not path:
        return "the path is empty"
    folder = os.path.dirname(path) or os.curdir
    if os.path.isdir(path):
        return "it is a folder"
    if os.path.exists(path) and not os.path.isfile(path):  # a device: never replace it
        return "it is not a regular file"
    if not os.path.exists(folder):
        return f"there is no folder {folder}"
    if not os.path.isdir(folder):
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK):  # the new file goes there, then replaces the old
        return f"the folder {folder} is not writable"
    return None


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Draw an example figure, exp(x) against x on a log axis, into the file named."""
    parser = _Parser(prog="python3 scripts/figures.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", help="the SVG file to write (without it, this help)")
    args = parser.parse_args(argv)
    if args.out is None:
        parser.print_help()
        return 0
    why = cannot_write(args.out)
    if why:
        parser.error(f"cannot write {args.out}: {why}")
    xs = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    try:
        svg = plot("exp(x)", Axis("x"), Axis("exp(x) (log scale)", log=True),
                   [Series("exp(x)", xs, [math.exp(x) for x in xs], style=0)])
        write_atomic(args.out, svg)
    except OSError as error:  # checked above: a disk full, or a folder gone since
        print(f"python3 scripts/figures.py: cannot write {args.out}: "
              f"{error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # write_atomic leaves the old file, or none
        print("python3 scripts/figures.py: interrupted", file=sys.stderr)
        return 130
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
