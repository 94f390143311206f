"""The tests: `python3 -m pytest` from the repository's root (README.md).

Tests may import every folder; nothing imports them.  tests/readers/ holds candidate files
for the checker, loaded by it, never imported.
"""
