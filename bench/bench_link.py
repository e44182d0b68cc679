"""The floor link's figures (printed, not asserted):

    .venv/bin/python bench/bench_link.py [PUBLISHES]

- the size of the link's .mpy files (as sicbo deploy compiles them);
- on each MicroPython port at the board's heap (host_tools/heaps.py; the
  32-bit VM when built): the heap the link's code takes once imported, a
  connected link with its buffers, bytes allocated per publish (journal read
  to the floor's ack, gc off), one publish's pass (read, encode, write) and
  its round trip to PUBACK on loopback, writes per packet
  (bench/link_worker.py);
- write system calls per publish, counted by strace on the 64-bit port.

Against a real mosquitto on loopback (host_tools/broker.py) and the tests'
floor stand-in (tests/host/linkrig.py), which acknowledges every batch.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests", "host"))

from host_tools import heaps  # noqa: E402
from host_tools.broker import Broker, require_mosquitto  # noqa: E402
from host_tools.mprun import BUILD, compile_trees  # noqa: E402

WORKER = os.path.join(REPO, "bench", "link_worker.py")
PORTS = (("64-bit pip port", os.path.join(REPO, ".venv", "bin", "micropython"), False),
         ("32-bit VM (.mpy)", os.path.join(REPO, "build", "vm32", "sim", "micropython"), False),
         ("32-bit VM (frozen)", os.path.join(REPO, "build", "vm32", "frozen", "micropython"),
          True))


def mpy_sizes():
    folder = os.path.join(BUILD, "device", "link")
    return {n: os.path.getsize(os.path.join(folder, n)) for n in sorted(os.listdir(folder))
            if n.endswith(".mpy")}


def run_worker(exe, port, publishes, prefix=(), frozen=False):
    env = dict(os.environ, SICBO_LINK_FROZEN="1" if frozen else "0")
    cmd = list(prefix) + [exe, "-X", "heapsize=%s" % heaps.board_heap(exe), WORKER,
                          "127.0.0.1", str(port), str(publishes)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode or not lines:
        raise RuntimeError("%s: %s %s" % (" ".join(cmd), r.stdout[-800:], r.stderr[-800:]))
    return json.loads(lines[-1]), r.stderr


def main():
    publishes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    why = require_mosquitto()
    if why:
        print("bench_link: SKIPPED: %s" % why)
        return 0
    from linkrig import Floor

    compile_trees()
    sizes = mpy_sizes()
    print("link .mpy (build/mpy/device/link): %s; total %d bytes" % (
        ", ".join("%s %d" % kv for kv in sizes.items()), sum(sizes.values())))
    folder = tempfile.mkdtemp(prefix="sicbo-bench-link-")
    b = Broker(os.path.join(folder, "mq")).start()
    floor = Floor(b.port, client_id="floor-bench")
    try:
        for name, exe, frozen in PORTS:
            if not os.path.exists(exe):
                print("%s: not built (make vm32 vm32-frozen MICROPYTHON_SRC=...)" % name)
                continue
            f, _ = run_worker(exe, b.port, publishes, frozen=frozen)
            print("%s at heap %s: import %d B, a connected link %d B, %d B allocated per "
                  "publish (%d publishes of 14 records), a publish's pass %s us, to its "
                  "PUBACK %s us, %d writes for %d packets, %d failures"
                  % (name, heaps.board_heap(exe), f["import_bytes"], f["link_connected_bytes"],
                     f["alloc_per_publish"], f["publishes"], f["pass_us_median"],
                     f["rtt_us_median"], f["writes"], f["packets"], f["failures"]))
        strace = shutil.which("strace")
        if strace:
            out = os.path.join(folder, "strace.txt")
            f, _ = run_worker(PORTS[0][1], b.port, publishes,
                              prefix=(strace, "-f", "-c", "-o", out, "-e",
                                      "trace=write,writev,sendto,sendmsg"))
            with open(out) as fh:
                text = fh.read()
            calls = sum(int(m.group(1)) for m in re.finditer(
                r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(?:write|writev|sendto|sendmsg)$",
                text, re.M))
            print("64-bit port under strace: %d write system calls for %d packets sent "
                  "(%d publishes; stdout's write included)" % (calls, f["packets"],
                                                              2 * publishes + 20))
    finally:
        floor.stop()
        b.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
