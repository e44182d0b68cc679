"""Deploy to the virtual board through the `sicbo deploy` CLI, as a technician
runs it (a new CPython and mpremote per run): time and serial bytes of a full
deploy, of a redeploy with no change (goal: at most 0.6 s: no copy, no reset,
no wait), of a one-file redeploy and of a configuration change; the same on a
stand-in frozen firmware image; .py versus .mpy bytes on the board; the time
of one mpremote round trip. Figures, not pass/fail.

    .venv/bin/python bench/bench_deploy.py [--runs N]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from host_tools import DEVICE, REPO  # noqa: E402
from host_tools import deploy as dp  # noqa: E402
from host_tools.vboard import SIM_DIR, VirtualBoard  # noqa: E402

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")
SICBO = [sys.executable, "-m", "host_tools"]


def cli_deploy(vb, device, table=TABLE):
    """One `sicbo deploy` run: (seconds, bytes to the board, bytes back, last line)."""
    before = (vb.bytes_in, vb.bytes_out)
    t0 = time.monotonic()
    r = subprocess.run(SICBO + ["deploy", "--port", vb.port, "--board", BOARD, "--table", table,
                                "--device", device, "-q"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    dt = time.monotonic() - t0
    if r.returncode:
        raise SystemExit("sicbo deploy failed: %s" % (r.stderr.strip() or r.stdout.strip()))
    return dt, vb.bytes_in - before[0], vb.bytes_out - before[1], r.stdout.strip()


def show(label, runs):
    times = [r[0] for r in runs]
    last = runs[-1]
    spread = " (%d runs: %.2f..%.2f)" % (len(times), min(times), max(times)) \
        if len(times) > 1 else ""
    print("%-34s %5.2f s%s  %7d bytes to the board  %6d back" % (
        label, statistics.median(times), spread, last[1], last[2]))
    print("    " + last[3])


def frozen_image(folder, code):
    """The virtual board's stand-in for a frozen firmware: sim/ plus frozen_id."""
    os.makedirs(folder)
    for name in os.listdir(SIM_DIR):
        if name.endswith(".py"):
            shutil.copy(os.path.join(SIM_DIR, name), os.path.join(folder, name))
    with open(os.path.join(folder, "frozen_id.py"), "w") as f:
        f.write('CODE_SHA256 = "%s"\n' % code)
    return folder


def round_trip(vb, n=10):
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run([MPREMOTE, "connect", vb.port, "exec", "pass"], check=True,
                       capture_output=True)
        times.append(time.monotonic() - t0)
    chain = ["exec", "pass"]
    for _ in range(49):
        chain += ["+", "exec", "pass"]
    t0 = time.monotonic()
    subprocess.run([MPREMOTE, "connect", vb.port] + chain, check=True, capture_output=True)
    per_exec = (time.monotonic() - t0 - statistics.median(times)) / 49
    return statistics.median(times), per_exec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each no-change redeploy")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-deploy-") as tmp:
        device = os.path.join(tmp, "device")
        shutil.copytree(DEVICE, device, ignore=shutil.ignore_patterns("__pycache__"))
        folder = os.path.join(tmp, "vb")
        with VirtualBoard(folder) as vb:
            print("virtual board: %s, heap %s; `sicbo deploy` (CLI) each time; a reset, or "
                  "the app's start on a board up to date, is followed by reading the board's "
                  "start-up line" % (vb.pty, vb.heap))
            show("full deploy (empty board)", [cli_deploy(vb, device)])
            show("redeploy, no change", [cli_deploy(vb, device) for _ in range(args.runs)])
            with open(os.path.join(device, "sicbo", "dates.py"), "a") as f:
                f.write("\n_BENCH = 1\n")
            show("redeploy, one module changed", [cli_deploy(vb, device)])
            table = os.path.join(tmp, "table.json")
            with open(TABLE) as f, open(table, "w") as g:
                g.write(f.read().replace("{", "{ ", 1))
            show("redeploy, table file changed", [cli_deploy(vb, device, table)])
            py = mpy = 0
            for rel, local, compiled in dp.plan_sources(device):
                if compiled:
                    py += os.path.getsize(local)
                    mpy += os.path.getsize(os.path.join(vb.fs, rel))
            print("compiled modules: %d bytes as .py, %d bytes as .mpy on the board (%.0f%%)"
                  % (py, mpy, 100.0 * mpy / py))
            n = len(dp.plan_sources(device)) + 2
            total = sum(os.path.getsize(os.path.join(vb.fs, rel))
                        for rel in [r for r, _, _ in dp.plan_sources(device)]
                        + [dp.BOARD_FILE, dp.TABLE_FILE])
            print("on the board: %d files, %d bytes (with main.py, board.json, table.json)"
                  % (n, total))
            rt, per_exec = round_trip(vb)
            print("one mpremote round trip (connect, soft reset, exec): %.3f s (median of 10)"
                  % rt)
            print("one more exec in the same connection: %.1f ms" % (per_exec * 1000))
        image = frozen_image(os.path.join(tmp, "image"), dp.code_hash(device))
        vb = VirtualBoard(folder, frozen=image)
        vb.start()
        try:
            if vb.frozen_in:
                print("frozen firmware: not measured (this interpreter has sim/ frozen in)")
            else:
                show("frozen firmware, first deploy", [cli_deploy(vb, device)])
                show("frozen firmware, no change", [cli_deploy(vb, device)
                                                     for _ in range(args.runs)])
        finally:
            vb.stop()


if __name__ == "__main__":
    main()
