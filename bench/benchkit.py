# Shared by the MicroPython benchmarks (`micropython bench/X.py` puts bench/ on
# sys.path): where the project's files and the .mpy tree of host_tools.mprun are.
import os
import sys
import time


def _root():
    p = sys.argv[0]
    i = p.rfind("/")
    d = p[:i] if i >= 0 else "."
    i = d.rfind("/")
    return d[:i] if i >= 0 else "."


ROOT = _root()
MPY = os.getenv("SICBO_MPY_ROOT") or (ROOT + "/build/mpy")
BOARD_FILE = ROOT + "/board_config/boards/virtual.json"
TABLE_FILE = ROOT + "/board_config/tables/macau-2004.json"


def fresh_folder(name):
    """An empty folder under /tmp, unique per run (the unix port has no
    os.getpid): two benchmarks may run at once."""
    path = "/tmp/sicbo-%s-%d-%d" % (name, int(time.time()), time.ticks_us() & 0xFFFFFF)
    try:
        os.mkdir(path)
    except OSError:
        for entry in os.listdir(path):
            os.remove(path + "/" + entry)
    return path
