# CPython side of the tests. The logic tests in tests/logic are plain functions
# with plain asserts, so that tests/mp_runner.py runs the same files on the
# MicroPython unix port; nothing here may be a fixture that they depend on.
import os
import sys

import host_tools  # noqa: F401  (installs the micropython shim, puts device/ on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
for p in (os.path.join(HERE, "logic"), os.path.join(os.path.dirname(HERE), "sim")):
    if p not in sys.path:
        sys.path.insert(0, p)
