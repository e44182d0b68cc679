"""Run the portable logic tests on the MicroPython unix port, one interpreter
per test file, each with the board's heap.

    python -m host_tools.mprun [--micropython EXE] [--heap N] [tests/logic] [test_x.py ...]

One process per file keeps one file's garbage and fragmentation from failing
the next. On a 32-bit interpreter (the ESP32-faithful VM, host_tools.vm32)
every file runs at the ESP32's heap, 111,936 bytes. On the 64-bit pip port
(function, not memory) the logic tests run at 240k, the 64-bit stand-in for
the board's heap, and the controller's tests at 320k (host_tools/heaps.py).
The modules are
compiled by mpy-cross first (into build/mpy, only what changed) and imported as
.mpy, as on the board: compiling the sources inside the VM would measure the
compiler's heap, not the firmware's (--source does that instead). Prints each
failure, then the totals as "N passed, N failed" alone on the last line; exit
status 1 on any failure.
"""

import argparse
import concurrent.futures
import fcntl
import os
import re
import subprocess
import sys

from host_tools import REPO, constfold, heaps
from host_tools.constfold import FoldError, fold_file
from host_tools.mpycheck import OPT, mpy_cross, source_name, sources

BUILD = os.path.join(REPO, "build", "mpy")
# On the 64-bit port (function, not memory: the memory gate is the 32-bit VM's)
# the logic tests run at the 64-bit stand-in for the board's heap; a test file
# that loads the whole controller says so in its first lines with
#   # mprun-heap: controller
# and gets room for the test rig and the simulated machine's .mpy beside it.
HEAP_64 = heaps.HEAP_64_EQUIVALENT
CONTROLLER_HEAP = heaps.HEAP_64_TESTS
_DIRECTIVE = "# mprun-heap: controller"
TREES = ("device", "sim", os.path.join("tests", "logic"))

_SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.M)


def micropython():
    """$SICBO_MICROPYTHON, else the venv's unix port (64-bit): the virtual
    board's interpreter (host_tools.vboard.micropython_command)."""
    from host_tools.vboard import micropython_command

    return micropython_command()[0]


def compile_trees(build=BUILD):
    """mpy-cross every .py of TREES into build/, skipping up-to-date ones,
    as deploy compiles them for a board: constants folded (host_tools.constfold),
    then mpy-cross with the board's options. One process at a time (a lock
    beside build/): the tests run in several processes, and one must not
    import a .mpy another is writing."""
    os.makedirs(build, exist_ok=True)
    with open(os.path.join(os.path.dirname(build), ".mpy.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _compile_trees(build)


def _compile_trees(build):
    jobs = []
    folded = os.path.join(REPO, "build", "folded")
    for tree in TREES:
        for src in sources(os.path.join(REPO, tree)):
            rel = os.path.relpath(src, REPO)
            dest = os.path.join(build, rel[:-3] + ".mpy")
            if os.path.exists(dest) and os.path.getmtime(dest) >= max(
                    os.path.getmtime(src), _fold_inputs_mtime()):
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            try:
                tmp = fold_file(src, os.path.join(folded, rel))
            except FoldError as e:
                raise SystemExit("constants not folded: %s" % e) from None
            # The firmware's options for the firmware (and the sim, which
            # stands for a board's C); the tests keep their asserts.
            opt = OPT if tree in ("device", "sim") else []
            jobs.append([mpy_cross(), *opt, "-s", source_name(src), "-o", dest, tmp])
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for cmd, r in zip(jobs, pool.map(
                lambda c: subprocess.run(c, capture_output=True, text=True), jobs), strict=True):
            if r.returncode:
                raise SystemExit("mpy-cross rejects %s:\n%s" % (cmd[-1], r.stderr.strip()))
    # A module removed from the sources must not linger as .mpy.
    for tree in TREES:
        for top, _dirs, files in os.walk(os.path.join(build, tree)):
            for f in files:
                rel = os.path.relpath(os.path.join(top, f), build)
                if f.endswith(".mpy") and not os.path.exists(os.path.join(REPO, rel[:-4] + ".py")):
                    os.remove(os.path.join(top, f))
    return build


def _fold_inputs_mtime():
    """A change of the folded modules' constants recompiles everything."""
    return max([os.path.getmtime(os.path.join(REPO, "device", *m.split(".")) + ".py")
                for m in constfold.MODULES] + [os.path.getmtime(constfold.__file__)])


def heap_for(folder, name, default, controller=CONTROLLER_HEAP):
    """The heap a test file asks for (see CONTROLLER_HEAP), else default."""
    with open(os.path.join(REPO, folder, name), encoding="utf-8") as f:
        head = [f.readline() for _ in range(5)]
    return controller if any(line.startswith(_DIRECTIVE) for line in head) else default


def run_file(folder, name, heap, mpy_root=None, exe=None):
    env = dict(os.environ)
    env.pop("SICBO_MPY_ROOT", None)
    if mpy_root:
        env["SICBO_MPY_ROOT"] = mpy_root
    r = subprocess.run([exe or micropython(), "-X", "heapsize=" + heap,
                        os.path.join("tests", "mp_runner.py"), folder, name],
                       cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    out = r.stdout + r.stderr
    m = _SUMMARY.findall(out)
    if not m:
        # The interpreter died before the summary: count the file as failed.
        return 0, 1, out
    passed, failed = (int(x) for x in m[-1])
    if r.returncode and not failed:
        failed = 1
    return passed, failed, out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.mprun", description=__doc__)
    ap.add_argument("--micropython", default=None,
                    help="the interpreter (default $SICBO_MICROPYTHON, else the venv's)")
    ap.add_argument("--heap", default=None,
                    help="heap size for every file (default: the board's, see above)")
    ap.add_argument("--skip-controller", action="store_true",
                    help="leave out the files marked '%s' (said in the output)" % _DIRECTIVE)
    ap.add_argument("--source", action="store_true",
                    help="import the .py sources (compiled inside the VM) instead of .mpy")
    ap.add_argument("folder", nargs="?", default="tests/logic")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    if args.folder.endswith(".py"):  # a test file named by its path
        args.files.insert(0, os.path.basename(args.folder))
        args.folder = os.path.dirname(args.folder) or "."
    folder = os.path.join(REPO, args.folder)
    for name in [""] + args.files:
        if not os.path.exists(os.path.join(folder, name)):
            ap.error("no test %s %s" % ("file" if name else "folder", os.path.join(folder, name)))
    names = args.files or sorted(n for n in os.listdir(os.path.join(REPO, args.folder))
                                 if n.startswith("test_") and n.endswith(".py"))
    exe = args.micropython or micropython()
    if args.heap:
        default = controller = args.heap
    elif heaps.is_32bit(exe):
        default = controller = str(heaps.BOARD_HEAP)
    else:
        default, controller = HEAP_64, CONTROLLER_HEAP
    mpy_root = None if args.source else compile_trees()
    total_pass = total_fail = 0
    skipped = []
    if args.skip_controller:
        skipped = [n for n in names if heap_for(args.folder, n, "", "controller") == "controller"]
        names = [n for n in names if n not in skipped]
    for name in skipped:
        print("%-28s skipped: a controller test (--skip-controller)" % name)
    for name in names:
        heap = heap_for(args.folder, name, default, controller)
        passed, failed, out = run_file(args.folder, name, heap, mpy_root, exe)
        total_pass += passed
        total_fail += failed
        status = "ok" if not failed else "FAILED"
        print("%-28s heap %-5s %4d passed %3d failed  %s" % (name, heap, passed, failed, status))
        if failed:
            print("\n".join("    " + line for line in out.rstrip().splitlines()))
    print("MicroPython %s (%s-bit), heap %s (controller tests %s), %d files%s, %s" % (
        exe, 32 if heaps.is_32bit(exe) else 64, default, controller, len(names),
        " (%d controller files skipped)" % len(skipped) if skipped else "",
        "from source" if args.source else ".mpy from mpy-cross"))
    print("%d passed, %d failed" % (total_pass, total_fail))
    return 1 if total_fail or not total_pass else 0


if __name__ == "__main__":
    sys.exit(main())
