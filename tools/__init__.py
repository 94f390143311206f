"""The mutation tester (mutate.py, mutants.py; README.md here).

Imports nothing of the project: it copies the repository and runs pytest on it.  The table of
which folder imports which is in scripts/README.md.
"""
