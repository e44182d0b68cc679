"""Build the ESP32-faithful test VM: a static 32-bit MicroPython unix port.

    python -m host_tools.vm32 [--frozen] [--src PATH] [--print-path]

A 32-bit build allocates like the ESP32 (16-byte GC blocks, 4-byte pointers),
so its heap figures and MemoryErrors are the board's; the 64-bit pip port's
are not (../shared/docs/esp32-memory.md). What a stock ESP32 image has in
flash is frozen here too, so that it costs no heap: asyncio, and sim/, the
simulated `machine` (a board's is C), and bench/heap_worker.py with
bench/tablerig.py, the rig that plays rounds in bench/board_heap.py (a
board's table is wires, not heap: with the rig in the heap the bench would
count about 5 KiB and 70 interned names that no board has). `--frozen` also
freezes the firmware itself, through board_config/manifest.py, the
production image's manifest.

MICROPYTHON_SRC (or --src) names a MicroPython source tree or tarball
(v1.28.0 checked: ../shared/vendor/micropython-1.28.0.tar.gz). Needs a C
compiler with 32-bit support (Debian: gcc-multilib). The build is cached under
build/vm32/ by the hash of its inputs (the source, the manifests, every frozen
file, the flags): a second call with nothing changed only prints the path.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile

from host_tools import REPO
from host_tools.constfold import fold_file
from host_tools.mpycheck import OPT_LEVEL
from host_tools.vboard import NOT_FROZEN

BUILD_ROOT = os.path.join(REPO, "build", "vm32")
PRODUCTION_MANIFEST = os.path.join(REPO, "board_config", "manifest.py")
# The unix port's options for a small, static, 32-bit interpreter. Its own
# `machine` module is an extensible built-in: the frozen sim/ machine.py,
# found on sys.path ('.frozen'), takes its place.
MAKE_FLAGS = ("MICROPY_FORCE_32BIT=1", "MICROPY_PY_FFI=0", "MICROPY_PY_BTREE=0",
              "MICROPY_PY_SSL=0", "LDFLAGS_EXTRA=-static", "BUILD=build32")
_BUILDER_VERSION = "4"  # bump when this file changes what it builds
# The bench's rig, frozen with its constants folded as the firmware's are.
RIG = tuple(os.path.join(REPO, "bench", name) for name in ("heap_worker.py", "tablerig.py"))
RIG_DIR = os.path.join(BUILD_ROOT, "rig")


class BuildError(Exception):
    pass


def source_path(arg=None):
    src = arg or os.environ.get("MICROPYTHON_SRC")
    if not src:
        raise BuildError("no MicroPython source: set MICROPYTHON_SRC to a source tree "
                         "or tarball (e.g. ../shared/vendor/micropython-1.28.0.tar.gz)")
    src = os.path.abspath(src)
    if not os.path.exists(src):
        raise BuildError("MICROPYTHON_SRC %s does not exist" % src)
    return src


def _hash_file(h, path):
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)


def _tree_files(top, skip=("build", "build32", "build-standard", ".git")):
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x not in skip and not x.startswith("build"))
        for f in sorted(files):
            yield os.path.join(d, f)


# sim/ as a board's firmware would carry its C modules; vboard_boot.py is the
# virtual board's start-up script, run by the host, never imported.
SIM_NOT_FROZEN = NOT_FROZEN
# What the production manifest runs to freeze the firmware.
_BUILD_TOOLS = ("constfold.py", "deploy.py", "mpycheck.py")


def _frozen_files(frozen):
    """Every file whose content goes into the image."""
    if frozen:
        yield PRODUCTION_MANIFEST
        for name in _BUILD_TOOLS:
            yield os.path.join(REPO, "host_tools", name)
    else:
        # The rig, as folded: its constants come from these.
        yield os.path.join(REPO, "host_tools", "constfold.py")
        for name in ("events.py", "signals.py"):
            yield os.path.join(REPO, "device", "sicbo", name)
    yield from RIG
    for tree in ("sim",) + (("device",) if frozen else ()):
        for path in _tree_files(os.path.join(REPO, tree)):
            if path.endswith(".py"):
                yield path


def inputs_key(src, frozen):
    h = hashlib.sha256()
    h.update(("%s|%s|%s" % (_BUILDER_VERSION, frozen, MAKE_FLAGS)).encode())
    if os.path.isdir(src):
        for path in _tree_files(src):
            h.update(os.path.relpath(path, src).encode())
            _hash_file(h, path)
    else:
        _hash_file(h, src)
    h.update(_manifest_text(frozen).encode())
    for path in _frozen_files(frozen):
        h.update(os.path.relpath(path, REPO).encode())
        _hash_file(h, path)
    return h.hexdigest()[:20]


def _manifest_text(frozen):
    sim = os.path.join(REPO, "sim")
    lines = ['include("$(MPY_DIR)/extmod/asyncio")']
    for name in sorted(os.listdir(sim)):
        if name.endswith(".py") and name not in SIM_NOT_FROZEN:
            lines.append("module(%r, base_path=%r)" % (name, sim))
    for path in RIG:
        lines.append("module(%r, base_path=%r, opt=%d)" % (os.path.basename(path), RIG_DIR,
                                                           OPT_LEVEL))
    if frozen:
        lines.append("include(%r)" % PRODUCTION_MANIFEST)
    return "\n".join(lines) + "\n"


def _unpack(src, dest):
    """A private copy of the source tree (the build writes into it)."""
    if os.path.isdir(src):
        shutil.copytree(src, dest, symlinks=True,
                        ignore=shutil.ignore_patterns("build", "build32", "build-*"))
        return dest
    with tarfile.open(src) as tf:
        tops = {m.name.split("/", 1)[0] for m in tf.getmembers()}
        tf.extractall(dest, filter="data")
    if len(tops) == 1:
        return os.path.join(dest, tops.pop())
    return dest


def variant_dir(frozen):
    return os.path.join(BUILD_ROOT, "frozen" if frozen else "sim")


def binary_path(frozen=False):
    return os.path.join(variant_dir(frozen), "micropython")


def build(src=None, frozen=False, log=print, jobs=2):
    """Build (or find cached) the VM; returns the binary's path. One build at
    a time (a lock file): two callers wait for each other, then share it."""
    import fcntl

    os.makedirs(BUILD_ROOT, exist_ok=True)
    with open(os.path.join(BUILD_ROOT, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(src, frozen, log, jobs)


def _build(src, frozen, log, jobs):
    src = source_path(src)
    key = inputs_key(src, frozen)
    out_dir = variant_dir(frozen)
    exe = binary_path(frozen)
    stamp = os.path.join(out_dir, "inputs.sha256")
    if os.path.exists(exe) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == key:
                return exe
    work = os.path.join(BUILD_ROOT, "work-" + key)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tree = _unpack(src, os.path.join(work, "src"))
    for path in RIG:
        fold_file(path, os.path.join(RIG_DIR, os.path.basename(path)))
    manifest = os.path.join(work, "manifest.py")
    with open(manifest, "w") as f:
        f.write(_manifest_text(frozen))
    lib = os.path.join(work, "mpy-lib")  # the unix build only checks its README
    os.makedirs(lib)
    with open(os.path.join(lib, "README.md"), "w") as f:
        f.write("No micropython-lib: the test VM freezes only asyncio and the project.\n")
    env = dict(os.environ)
    log("vm32: building the 32-bit unix port%s from %s (about 30 s)"
        % (" with the firmware frozen" if frozen else "", src))
    cmds = [["make", "-C", os.path.join(tree, "mpy-cross"), "-j%d" % jobs],
            ["make", "-C", os.path.join(tree, "ports", "unix"), "-j%d" % jobs, *MAKE_FLAGS,
             "FROZEN_MANIFEST=" + manifest,
             "MPY_LIB_DIR=" + lib]]
    for cmd in cmds:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode:
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-25:])
            hint = ""
            if "gnu/stubs-32.h" in tail or "-m32" in tail or "cannot find -lc" in tail:
                hint = "\n(a 32-bit C library is missing: apt-get install gcc-multilib)"
            raise BuildError("vm32: %s failed:\n%s%s" % (" ".join(cmd[:3]), tail, hint))
    os.makedirs(out_dir, exist_ok=True)
    built = os.path.join(tree, "ports", "unix", "build32", "micropython")
    shutil.copy2(built, exe + ".new")
    os.replace(exe + ".new", exe)
    with open(stamp, "w") as f:
        f.write(key + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return exe


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.vm32", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", help="MicroPython source tree or tarball (default $MICROPYTHON_SRC)")
    ap.add_argument("--frozen", action="store_true",
                    help="freeze the firmware too (board_config/manifest.py)")
    ap.add_argument("--print-path", action="store_true",
                    help="print only the binary's path (build first if needed)")
    args = ap.parse_args(argv)
    try:
        exe = build(args.src, args.frozen,
                    log=(lambda s: print(s, file=sys.stderr)) if args.print_path else print)
    except BuildError as e:
        print(str(e), file=sys.stderr)
        return 2
    print(exe if args.print_path else "vm32: %s" % exe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
