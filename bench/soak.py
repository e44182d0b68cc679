"""Host wrapper of the soak: compiles the firmware, the simulated
machine and the test kits to .mpy (build/mpy, as host_tools.mprun does), then
runs bench/soak_rounds.py on the MicroPython unix port at the board's heap.

    python bench/soak.py [rounds] [seed] [cut_every]     (default 100000 5 300)

The interpreter: $SICBO_MICROPYTHON, else the venv's 64-bit port. The heap:
SICBO_SOAK_HEAP, else the board's on that interpreter (host_tools/heaps.py:
111936 bytes on a 32-bit one, the measured 64-bit equivalent 240k on the pip
port). Exit status: the soak's.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from host_tools import REPO, heaps  # noqa: E402
from host_tools.mprun import compile_trees, micropython  # noqa: E402


def main(argv):
    args = argv[1:] or ["100000"]
    exe = micropython()
    heap = os.environ.get("SICBO_SOAK_HEAP") or heaps.board_heap(exe)
    env = dict(os.environ)
    env["SICBO_MPY_ROOT"] = compile_trees()
    env.pop("MICROPYPATH", None)
    cmd = [exe, "-X", "heapsize=" + heap, os.path.join("bench", "soak_rounds.py")]
    print("soak: %s" % " ".join(cmd + args), flush=True)
    return subprocess.run(cmd + args, cwd=REPO, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
