"""Deploy to the virtual board: time and serial bytes of a full deploy, of a
no-change redeploy and of a one-file redeploy; .py versus .mpy bytes on the
board; the time of one mpremote round trip.

    .venv/bin/python bench/bench_deploy.py
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from host_tools import DEVICE, REPO  # noqa: E402
from host_tools import deploy as dp  # noqa: E402
from host_tools.vboard import VirtualBoard  # noqa: E402

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")


def wait_reset(vb, before):
    end = time.monotonic() + 10
    while vb.hard_resets == before and time.monotonic() < end:
        time.sleep(0.01)


def measured_deploy(vb, device, label):
    before = (vb.bytes_in, vb.bytes_out, vb.hard_resets)
    t0 = time.monotonic()
    r = dp.deploy(vb.port, BOARD, TABLE, device_dir=device, settle=0)
    dt = time.monotonic() - t0
    wait_reset(vb, before[2])
    print("%-26s %6.2f s  %8d bytes to the board  %8d back  %2d files copied  %d mpremote runs"
          % (label, dt, vb.bytes_in - before[0], vb.bytes_out - before[1], len(r.copied),
             r.mpremote_runs))
    return r


def round_trip(vb, n=10):
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run([MPREMOTE, "connect", vb.port, "exec", "pass"], check=True,
                       capture_output=True)
        times.append(time.monotonic() - t0)
    times.sort()
    chain = ["exec", "pass"]
    for _ in range(49):
        chain += ["+", "exec", "pass"]
    t0 = time.monotonic()
    subprocess.run([MPREMOTE, "connect", vb.port] + chain, check=True, capture_output=True)
    per_exec = (time.monotonic() - t0 - times[len(times) // 2]) / 49
    return times[len(times) // 2], per_exec


def main():
    with tempfile.TemporaryDirectory(prefix="bench-deploy-") as tmp:
        device = os.path.join(tmp, "device")
        shutil.copytree(DEVICE, device, ignore=shutil.ignore_patterns("__pycache__"))
        with VirtualBoard(os.path.join(tmp, "vb")) as vb:
            print("virtual board: %s, heap %s" % (vb.pty, vb.heap))
            r = measured_deploy(vb, device, "full deploy (empty board)")
            measured_deploy(vb, device, "redeploy, no change")
            with open(os.path.join(device, "sicbo", "dates.py"), "a") as f:
                f.write("\n_BENCH = 1\n")
            measured_deploy(vb, device, "redeploy, one file changed")
            py = mpy = 0
            for rel, local, compiled in dp.plan_sources(device):
                if compiled:
                    py += os.path.getsize(local)
                    mpy += os.path.getsize(os.path.join(vb.fs, rel))
            print("compiled modules: %d bytes as .py, %d bytes as .mpy on the board (%.0f%%)"
                  % (py, mpy, 100.0 * mpy / py))
            total = sum(os.path.getsize(os.path.join(vb.fs, p)) for p in r.manifest["files"])
            print("on the board: %d files, %d bytes (with main.py, board.json, table.json)"
                  % (len(r.manifest["files"]), total))
            rt, per_exec = round_trip(vb)
            print("one mpremote round trip (connect, soft reset, exec): %.3f s (median of 10)"
                  % rt)
            print("one more exec in the same connection: %.1f ms" % (per_exec * 1000))


if __name__ == "__main__":
    main()
