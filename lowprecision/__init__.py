"""float16, bfloat16 and float32 emulated with struct (emulation.py): the one copy that the
checker (interview/), the pages' programs (scripts/) and the tests share.

Imports the library (softmax.py, attention.py) and nothing else of the project; the table
of which folder imports which is in scripts/README.md.
"""
