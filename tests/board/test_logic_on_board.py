"""`sicbo test --on PORT` on a 32-bit board at the ESP32's heap, as a
technician runs it: the firmware deployed as .mpy (`sicbo deploy`), then the
portable logic tests copied beside it (/t) and run there, one file per soft
reset. Every file that is not a controller test must run and pass: the
controller's are not run on a 32-bit board with the firmware as .mpy, and
the run says so (they run on the frozen image, make test-board). The count
of every file is checked against the files in tests/logic, so a file that
gave no count, or a run that stopped, fails here too."""

import os
import re
import subprocess
import time

from boardkit import SICBO, Board, figure

from host_tools import REPO, heaps
from host_tools.mprun import heap_for

LOGIC = os.path.join(REPO, "tests", "logic")
_ROW = re.compile(r"^  (test_\w+\.py)\s+(\d+) passed\s+(\d+) failed\s*$", re.M)
_LAST = re.compile(r"^(\d+) passed, (\d+) failed\s*$", re.M)
_SKIPPED = re.compile(r"^(\d+) controller test file\(s\) not run: on a 32-bit board", re.M)


def _files():
    names = sorted(n for n in os.listdir(LOGIC) if n.startswith("test_") and n.endswith(".py"))
    ctl = [n for n in names if heap_for(LOGIC, n, "", "controller") == "controller"]
    return [n for n in names if n not in ctl], ctl


def test_the_logic_tests_pass_on_a_32bit_board_beside_the_mpy_firmware(vm32, tmp_path):
    run, ctl = _files()
    assert run and ctl
    b = Board(str(tmp_path / "vb"), vm32, heaps.BOARD_HEAP)
    try:
        b.deploy()
        t0 = time.monotonic()
        r = subprocess.run([SICBO, "test", "--on", b.vb.port], capture_output=True, text=True,
                           timeout=1800)
        seconds = time.monotonic() - t0
    finally:
        b.close()
    out = r.stdout + r.stderr
    rows = {name: (int(p), int(f)) for name, p, f in _ROW.findall(r.stdout)}
    failed = sorted(name for name in rows if rows[name][1])
    assert not failed, "failed on the board: %s\n%s" % (failed, out[-6000:])
    assert sorted(rows) == run, "files without a count: %s\n%s" % (
        sorted(set(run) - set(rows)), out[-3000:])
    last = _LAST.findall(r.stdout)
    passed = sum(p for p, _ in rows.values())
    assert last and last[-1] == (str(passed), "0") and passed > 0, out[-3000:]
    skipped = _SKIPPED.findall(r.stdout)
    assert skipped == [str(len(ctl))], out[-3000:]
    assert r.returncode == 0, out[-3000:]
    figure("(sicbo test --on) 32-bit board at %d bytes, firmware as .mpy: %d tests of %d "
           "files passed, %d controller files not run, in %.0f s"
           % (heaps.BOARD_HEAP, passed, len(run), len(ctl), seconds))
