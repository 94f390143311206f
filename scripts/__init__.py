"""The programs that compute the pages' numbers, tables and figures (build.py), and the ones
a reader runs (README.md here).

Imports the library, lowprecision/ and experiments/ (the study's records, for the pages); the
table of which folder imports which is in README.md here.
"""
