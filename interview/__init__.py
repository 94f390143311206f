"""The checker of a reader's own attention (check.py) and the modules it runs it with.

Imports the library and lowprecision/; serve.py, the child that loads the reader's file,
imports nothing of the project.  The table of which folder imports which is in
scripts/README.md.
"""
