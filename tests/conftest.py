# CPython side of the tests. The logic tests in tests/logic are plain functions
# with plain asserts, so that tests/mp_runner.py runs the same files on the
# MicroPython unix port; nothing here may be a fixture that they depend on.
import os
import signal
import sys

import host_tools  # noqa: F401  (installs the micropython shim, puts device/ on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
for p in (os.path.join(HERE, "logic"), os.path.join(os.path.dirname(HERE), "sim")):
    if p not in sys.path:
        sys.path.insert(0, p)

# The tests' Ctrl-C (SIGINT to a demo, a console, the floor service) must
# reach a program as from a terminal. Started in the background by a
# non-interactive shell (`.ci/run &`), pytest and every program it starts
# inherit SIGINT ignored, and Python then installs no KeyboardInterrupt: the
# program plays on. A Python handler here is reset to the default in every
# program started, which then takes Ctrl-C as it would at a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
