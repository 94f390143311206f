"""The one bounded comparison of the tests; every test file imports it by name.

Two ways to compare, and only two:
    assert got == want                        exact (ints, Fractions, floats the
                                              code must hit)
    assert_close(got, want, abs=..., rel=...)  bounded: |got - want| <= abs +
                                              rel |want|, entry by entry, for
                                              numbers or nested lists; a failure
                                              names the worst entry and its ratio
                                              to the bound.
"""

import math  # isfinite, fabs
from numbers import Real  # a number, as opposed to a nested list

__all__ = ["assert_close"]


def _pairs(got, want, where=""):
    """Yield (where, got, want) for every number of two nested lists of one shape."""
    if isinstance(want, Real) or want is None:
        yield where, got, want
        return
    assert len(got) == len(want), f"length {len(got)} != {len(want)} at {where or 'top'}"
    for i, (g, w) in enumerate(zip(got, want)):
        yield from _pairs(g, w, f"{where}[{i}]")


def assert_close(got, want, *, abs=0.0, rel=0.0):  # noqa: A002 - math.isclose's names
    """Assert |got - want| <= abs + rel |want| for every entry (numbers or nested lists).

    Infinities must match exactly.  On failure the message shows the worst entry, both
    values, the difference, the bound and their ratio (above 1 fails).
    """
    worst = (0.0, None)
    for where, g, w in _pairs(got, want):
        if not (math.isfinite(g) and math.isfinite(w)):
            assert g == w, f"at {where or 'top'}: {g!r} != {w!r}"
            continue
        bound, diff = abs + rel * math.fabs(w), math.fabs(g - w)
        if bound == 0.0:
            ratio = math.inf if diff > 0.0 else 0.0
        else:
            ratio = diff / bound
        if ratio > worst[0]:
            worst = (ratio, (where, g, w, diff, bound))
    ratio, detail = worst
    if ratio > 1.0:
        where, g, w, diff, bound = detail
        raise AssertionError(f"at {where or 'top'}: got {g!r}, want {w!r}, |diff| {diff:.3g} "
                             f"> bound {bound:.3g} (ratio {ratio:.3g})")
