"""The checker of a reader's own attention (check.py) and the modules it runs it with: the
named cases of each mode (mode_*.py), the judge of an answer (judge.py), how the function is
called (calling.py) in a child process (runner.py, serve.py), and the seeded random battery
with its shrinking (battery.py).

Imports the library and lowprecision/; serve.py, the child that loads the reader's file,
imports nothing of the project.  The table of which folder imports which is in
scripts/README.md.
"""
