"""`sicbo test --on cpython|micropython|DEV`: run the portable logic tests
(tests/logic) where they run, and report "N passed, N failed" as the last line.

* ``cpython``: pytest over tests/logic;
* ``micropython``: the local unix port (host_tools/mprun.py: one interpreter
  per test file, at the heaps of host_tools/heaps.py: the board's on a 32-bit
  build, its 64-bit stand-ins on the pip port; ``--heap`` overrides them);
* anything else is a serial port (a board or a virtual board's tty link):
  device/ (the tests import the app's modules too), sim/ and tests/logic,
  compiled by mpy-cross for the board's .mpy version (as mprun does for the
  unix port: the firmware as deployed, the tests with their asserts), and
  tests/mp_runner.py and the shipped board_config/ files (some tests read
  them) are written under ``/t`` through mpremote with deploy's writer (only
  files whose sha256 differs on the board), then each test file runs in
  ``/t`` after a soft reset (a fresh heap) and the counts come back.
  ``--clean`` removes ``/t`` afterwards.

The exit status is 0 only if something passed and nothing failed.
"""

import os
import re
import subprocess
import sys
import tempfile

from host_tools import REPO
from host_tools.cli import UsageError

NAME = "test"
HELP = "run the logic tests under CPython, the local unix port, or on a board (--on DEV)"

LOGIC = os.path.join(REPO, "tests", "logic")
BOARD_ROOT = "/t"
PROBE_PATHS = 64  # board paths per probe (copy_tests)
_COUNTS = re.compile(r"^(\d+) passed, (\d+) failed\s*$", re.M)


def add_arguments(parser):
    parser.add_argument("--on", required=True, metavar="cpython|micropython|DEV",
                        help="where to run: CPython (pytest), the local MicroPython unix port, "
                             "or a board's serial port (real or virtual)")
    parser.add_argument("files", nargs="*", metavar="test_x.py",
                        help="only these files of tests/logic (default: all)")
    parser.add_argument("--heap", default=None,
                        help="unix port heap for every file (default: host_tools/heaps.py's)")
    parser.add_argument("--clean", action="store_true",
                        help="on a board: remove the copied tests (/t) afterwards")
    parser.add_argument("--controller", action="store_true",
                        help="on a board: run the controller's tests even where its heap is "
                             "known to be too small for them (they are skipped, and said)")


def _names(files):
    names = sorted(n for n in os.listdir(LOGIC) if n.startswith("test_") and n.endswith(".py"))
    if not files:
        return names
    out = []
    for f in files:
        base = os.path.basename(f)
        if base not in names:
            raise UsageError("no test file %s in tests/logic" % f)
        out.append(base)
    return out


def _finish(passed, failed):
    print("%d passed, %d failed" % (passed, failed))
    sys.stdout.flush()
    return 0 if passed and not failed else 1


def run_cpython(files):
    names = _names(files)
    cmd = [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider"] + \
        [os.path.join("tests", "logic", n) for n in names]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    out = r.stdout + r.stderr
    sys.stdout.write(out)
    tail = out.strip().splitlines()[-1] if out.strip() else ""
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", tail)) else 0
    failed = sum(int(x) for x in re.findall(r"(\d+) (?:failed|error)", tail))
    if r.returncode and not failed:
        failed = 1
    return _finish(passed, failed)


def run_micropython(files, heap):
    names = _names(files)
    if os.path.exists(os.path.join(REPO, "host_tools", "mprun.py")):
        cmd = ([sys.executable, "-m", "host_tools.mprun"] + (["--heap", heap] if heap else [])
               + ["tests/logic"] + names)
    else:  # pragma: no cover - the one-process runner
        from host_tools import heaps
        from host_tools.vboard import micropython_command

        cmd = micropython_command() + ["-X", "heapsize=" + (heap or heaps.HEAP_64_TESTS),
                                       "tests/mp_runner.py",
                                       "tests/logic"] + names
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    out = r.stdout + r.stderr
    found = _COUNTS.findall(out)
    sys.stdout.write(_COUNTS.sub("", out).rstrip() + "\n")
    if not found:
        return _finish(0, 1)
    passed, failed = (int(x) for x in found[-1])
    if r.returncode and not failed:
        failed = 1
    return _finish(passed, failed)


def _sources():
    """[(board path under /t, local file, compile?)]: device/, sim/ and
    tests/logic compiled to .mpy (as mprun does: the firmware as deployed,
    the tests with their asserts), tests/mp_runner.py and board_config/'s
    board and table files as they are."""
    out = []
    for tree in ("device", "sim", "tests/logic"):
        full = os.path.join(REPO, tree)
        if not os.path.isdir(full):
            continue
        for top, dirs, names in os.walk(full):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for n in sorted(names):
                if n.endswith(".py"):
                    rel = os.path.relpath(os.path.join(top, n), REPO).replace(os.sep, "/")
                    out.append((BOARD_ROOT[1:] + "/" + rel[:-3] + ".mpy",
                                os.path.join(top, n), True))
    out.append((BOARD_ROOT[1:] + "/tests/mp_runner.py",
                os.path.join(REPO, "tests", "mp_runner.py"), False))
    # The shipped board and table files some tests read (from the tests'
    # working folder, /t on a board, the repository's root elsewhere).
    for tree in ("board_config/boards", "board_config/tables"):
        for n in sorted(os.listdir(os.path.join(REPO, tree))):
            if n.endswith(".json"):
                out.append((BOARD_ROOT[1:] + "/" + tree + "/" + n,
                            os.path.join(REPO, tree, n), False))
    return out


def copy_tests(mp):
    """Compiles for the board's .mpy version and writes what differs (by
    sha256 on the board) under /t; stale .py beside a .mpy are removed.
    Returns (files written, files in all)."""
    from host_tools import deploy as dp

    sources = _sources()
    paths = [rel for rel, _, _ in sources]
    # The board compiles each probe's source, the paths' list in it: a few
    # dozen at a time, so that the tests' number never outgrows its heap (at
    # about 230 paths one probe's source no longer compiled on the virtual
    # board's heap).
    on_board = {}
    for i in range(0, len(paths), PROBE_PATHS):
        info = dp.probe(mp, paths[i:i + PROBE_PATHS])
        on_board.update(info["hashes"])
    args = dp.compiler_args(info.get("mpy"), dp.mpy_cross_default_version())
    arch = dp.mpy_version_of(info["mpy"])[2]
    with tempfile.TemporaryDirectory(prefix="sicbo-test-") as tmp:
        # The firmware as it is deployed (-O3); the tests keep their asserts
        # and line numbers, as mprun compiles them.
        staged = dp.compile_tree(sources, tmp, args, arch,
                                 keep_asserts=(BOARD_ROOT[1:] + "/tests/",))
        changed = [rel for rel in staged if on_board.get(rel) != dp.sha256_file(staged[rel])]
        # only under /t: the probe also hashes the deployed firmware's files
        stale = sorted(p for p in on_board
                       if p.startswith(BOARD_ROOT[1:] + "/") and p not in staged)
        # (the folders of these two names are made too: /t, and /tmp for the tests)
        chain = ["exec", dp.prep_code(changed + [BOARD_ROOT[1:] + "/x", "tmp/x"], stale,
                                      aside=False)]
        chain += dp.write_chain(staged, changed)
        mp.run(*chain)
    return len(changed), len(staged)


_RUN_ONE = r'''
import os, sys
os.chdir('%(root)s')
sys.argv[:] = ['mp_runner', '%(root)s/tests/logic', '%(name)s']
sys.path.insert(0, '%(root)s/tests')
import mp_runner
'''

_CLEAN = r'''
import os
def _rm(p):
    for e in os.ilistdir(p):
        q = p + '/' + e[0]
        if e[1] == 0x4000:
            _rm(q)
        else:
            os.remove(q)
    os.rmdir(p)
_rm('%s')
''' % BOARD_ROOT


BATCH = 16  # test files per mpremote run on a board

_HEAP = "import gc, sys; gc.collect(); print('HEAP', gc.mem_free() + gc.mem_alloc(), sys.maxsize)"


def board_heap(mp):
    """(heap bytes, 64-bit?) of the board, as its interpreter counts them."""
    out = mp.run("exec", _HEAP)
    m = re.search(r"HEAP (\d+) (\d+)", out)
    if not m:
        raise UsageError("the board did not say its heap: %s" % out.strip()[-200:])
    return int(m.group(1)), int(m.group(2)) > 2 ** 31


def controller_room(heap, wide):
    """None when the controller's tests fit a board with this heap, else why not."""
    from host_tools import heaps

    # heap: what the board reports, the GC's tables taken off its heap size
    if wide and heap >= heaps.CONTROLLER_BOARD_USABLE_64:
        return None
    if wide:
        return ("this board's heap of %d bytes is under the %d they need on a 64-bit board "
                "(a virtual board: sicbo vboard --heap %dk)"
                % (heap, heaps.CONTROLLER_BOARD_USABLE_64, heaps.CONTROLLER_BOARD_HEAP_64 // 1024))
    return ("on a 32-bit board (heap %d bytes) they are not known to fit beside the firmware "
            "as .mpy (they do not at the ESP32's %d); make test-board runs them on the frozen "
            "image at that heap" % (heap, heaps.BOARD_HEAP))


def run_board(port, files, clean=False, mpremote=None, controller=False):
    from host_tools.deploy import MpRemote
    from host_tools.mprun import heap_for

    names = _names(files)
    mp = mpremote or MpRemote(port, timeout=900)
    mp.check_port()
    written, total = copy_tests(mp)
    print("tests on %s:%s (%d of %d files written)" % (port, BOARD_ROOT, written, total))
    # The controller's tests load the test rig and the simulated table
    # beside the whole firmware: where the board's heap is known to be too
    # small they would fail for memory, not for the firmware. Skipped, and
    # said, unless asked for.
    skipped = []
    if not controller:
        ctl = [n for n in names if heap_for(LOGIC, n, "", "controller") == "controller"]
        why = controller_room(*board_heap(mp)) if ctl else None
        if why is not None:
            skipped = ctl
            names = [n for n in names if n not in ctl]
    passed = failed = 0
    # A few files per mpremote run, each run within the port's timeout: the
    # whole suite in one run outlasted it on a virtual board (918 tests).
    out = ""
    for at in range(0, len(names), BATCH):
        chain = []
        for i, name in enumerate(names[at:at + BATCH]):
            if i or at:
                chain += (["+"] if i else []) + ["soft-reset", "+"]
            chain += ["exec", _RUN_ONE % {"root": BOARD_ROOT, "name": name}]
        out += mp.run(*chain)
    # one "N passed, N failed" per file, in order
    found = _COUNTS.findall(out)
    sys.stdout.write(re.sub(r"\n{3,}", "\n\n", _COUNTS.sub("", out)).strip() + "\n")
    for i, (p, f) in enumerate(found):
        passed += int(p)
        failed += int(f)
        if len(found) == len(names):
            print("  %-32s %4s passed %3s failed" % (names[i], p, f))
    if len(found) < len(names):
        missing = len(names) - len(found)
        print("%d test file(s) gave no count (the board stopped?)" % missing)
        failed += missing
    if skipped:
        print("%d controller test file(s) not run: %s; --controller runs them anyway"
              % (len(skipped), why))
    if clean:
        mp.run("exec", _CLEAN)
    return _finish(passed, failed)


def run(args):
    where = args.on
    if where == "cpython":
        return run_cpython(args.files)
    if where == "micropython":
        return run_micropython(args.files, args.heap)
    return run_board(where, args.files, clean=args.clean, controller=args.controller)
