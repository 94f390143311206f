"""Speed, memory and accuracy figures, printed by bench.py and accuracy.py (README.md here).

Imports the library, oracles/ and experiments/; the table of which folder imports which is in
scripts/README.md.
"""
