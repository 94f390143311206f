"""Independent references for checking the library: 50-digit decimal, exact Fraction and
order-statistic oracles (exact.py), and the derived error bounds of softmax and log-softmax
(bounds.py).  The tests and benchmarks/accuracy.py both use them.

exact.py imports nothing of the project; bounds.py imports softmax.py, whose error it
measures.  The table of which folder imports which is in scripts/README.md.
"""
