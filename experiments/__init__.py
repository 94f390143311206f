"""The training studies: their code, and the records they commit (docs/experiments.md).

Imports the library only; scripts/build.py draws the figures from the records.  The table of
which folder imports which is in scripts/README.md.
"""
