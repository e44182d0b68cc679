"""The smallest heap the table runs in, bisected.

    .venv/bin/python bench/board_heap.py [--micropython EXE ...] [--all]
        [--rounds 1000] [--cut-every 10] [--seed 5] [--step 1] [--quick] [-v]

For each interpreter (default: the ESP32-faithful VM build/vm32/sim/micropython;
`--all`: that one, the VM with the firmware frozen in, build/vm32/frozen/
micropython, and the 64-bit pip port .venv/bin/micropython):

1. a journal filled to its cap: rounds played, once per run, at a generous
   heap, until the store has rotated and deleted a segment (4 segments of
   4 KiB, rotation's budget), with board.json (board_config/boards/virtual.json)
   and table.json (macau-2004.json, the full 2004 layout) beside it;
2. a campaign at heap N: a copy of that folder, then one interpreter process
   after another, each one power-on of the board: a fresh heap of N bytes,
   the table started through startup.open_table exactly as main.py starts it
   (bench/heap_worker.py: frozen into the test VMs, as the simulated machine
   is, since a board's table costs no heap; else compiled to .mpy), rounds
   played through the pins of the simulated machine from the state it
   resumed in, and a power cut at a
   random clock step (the process exits mid-round), until --rounds rounds
   have been started; the last process stops between rounds and reports its
   meters. It succeeds when every process booted, none raised
   MemoryError or any other error, and every round is accounted for: each
   round id started has one payout or one void in the journal (read on the
   host after every process, with the firmware's own sicbo.journal), none
   twice, every round the dealer saw settled is settled so in the journal, no
   sequence number holds two records, the meters of the last process and
   the game recall read from the journal (sicbo.recall, as diag.recall
   reads it) agree with the rounds played;
3. the smallest N, in 1 KiB steps, at which the campaign succeeds (bisected
   from the heap in use after boot up; the same seed at every N).

With the floor link (--link, and in --all beside the figures without it):
the board file gets a `floor` section (site, table, broker 127.0.0.1, the
port of a real mosquitto, plain TCP: the 32-bit VM has no ssl, and on the
ESP32 mbedtls allocates from the IDF heap, not MicroPython's) and the
table's password in secrets/password beside it, as sicbo deploy installs
them; the broker (host_tools/broker.py: the site's ACL on its password
listener, docs/floor.md) and the floor service (`python -m host_tools floor`,
which stores every record in SQLite and acknowledges what it stored) are
started afresh, on the same port, for the full journal and for every
campaign (a campaign's records are its own: another floor would flag them as
conflicts). The campaign's folder starts without the saved cursor, so the
first power-on publishes the whole full journal while it plays. Every
power-on waits for the link to be connected and subscribed before it plays;
the last waits for the floor to acknowledge every record. A campaign
succeeds only when every power-on connected, the link never went down but
for its MemoryError (a heap too small), and the floor acknowledged, and
stored, every record of the journal: a figure for a link that never
connected is refused (the bench stops). Printed: the records acknowledged,
and the link's own heap (the heap in use after boot, and once connected,
above the figure without the link).

The .mpy firmware is linked into each power-on's folder, the worker's
working directory, and found through sys.path's '' as a board finds it at
its root: each module's path, interned as it loads, is as short as on the
board. On the frozen image the folder holds no firmware: `import startup`
finds the frozen one (the worker reports whether `frozen_id` imports and
whether its firmware came from .mpy files, and the bench refuses a frozen
interpreter that does not run its frozen firmware, or a .mpy run that
does not run the .mpy files). On a
32-bit interpreter without sim/ frozen in, and on the 64-bit port,
build/mpy/sim serves the simulated machine.

On a 32-bit interpreter each smallest heap is also said as a board's:
less the bytes that the simulated machine and this worker hold from before
the firmware starts to the end (the heap in use before the firmware, less
the interpreter's own at the worker's start; the least of the campaign's
power-ons). A board's machine is C and its table is wires: the firmware of a
VM run at N KiB had no more than N KiB less those bytes, so a board with
that many runs it. The goals are checked on that figure, and the VM's own
figure is printed beside it.

Prints figures, not pass/fail: exit status 0 unless the bench itself breaks
(an interpreter that cannot run, a full journal that cannot be made, a
campaign that fails at every heap tried).
"""

import argparse
import atexit
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from host_tools import REPO, heaps  # noqa: E402  (puts device/ on sys.path)
from host_tools.constfold import fold_file  # noqa: E402
from host_tools.mprun import BUILD, compile_trees  # noqa: E402
from host_tools.mpycheck import OPT, mpy_cross  # noqa: E402
from sicbo import events as E  # noqa: E402
from sicbo import journal  # noqa: E402
from sicbo import records as R  # noqa: E402

BOARD_FILE = os.path.join(REPO, "board_config", "boards", "virtual.json")
BOARD = {"file": BOARD_FILE}  # the board file of this run (--board)
CHAIN = {"on": False}  # --chain: every new folder provisioned (a MAC chain over its journal)
TABLE_FILE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
VM32 = os.path.join(REPO, "build", "vm32", "sim", "micropython")
VM32_FROZEN = os.path.join(REPO, "build", "vm32", "frozen", "micropython")
PORT64 = os.path.join(REPO, ".venv", "bin", "micropython")
WORKER = os.path.join(REPO, "bench", "heap_worker.py")
RIG = (WORKER, os.path.join(REPO, "bench", "tablerig.py"))  # the worker and its table
# The .mpy tree the processes import from: a private copy of build/mpy made
# by compile_all(), so that a compilation running meanwhile (another make
# target, an edit of device/) cannot hand a campaign a half-written or a
# different firmware.
SNAPSHOT = {"root": None}
FILL_HEAP = "512k"  # generous: the full journal is made once, not measured
MAX_HEAP_KIB = 1024  # the bisection gives up above this
PROCESS_TIMEOUT_S = 300  # a hang guard: a loaded host runs a power-on slower
STEPS_PER_ROUND = 42  # clock steps of a plain round (the worker's), for the cut's position
CUT_EXIT = 3
RESTART_EXIT = 4  # heap_worker: the files were checked and cached, the board resets
PRINT = print
NO_LINK_EXIT = 5  # heap_worker: the link did not connect within its wait
L_MEMORY = 11  # link.client.L_MEMORY: a MemoryError in the link task
LINK = {"floor": None}  # the LinkFloor of this mode, None without the link


class BenchError(Exception):
    """The bench itself cannot go on (not a figure)."""


# ---- interpreters ---------------------------------------------------------------


def _probe(exe, code):
    with tempfile.TemporaryDirectory(prefix="sicbo-heap-probe-") as empty:
        env = {k: v for k, v in os.environ.items()
               if k not in ("MICROPYPATH", "SICBO_SIM_WIRE", "SICBO_SIM_RTC")}
        env["MICROPYPATH"] = ".frozen"
        try:
            r = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=30,
                               cwd=empty, env=env)
        except OSError as e:
            raise BenchError("%s cannot run: %s" % (exe, e)) from e
    return r.returncode == 0, r.stdout.strip()


class Interp:
    """An interpreter and how the firmware reaches it."""

    def __init__(self, exe):
        self.exe = os.path.abspath(exe)
        if not os.access(self.exe, os.X_OK):
            raise BenchError("no interpreter %s" % exe)
        ok, out = _probe(self.exe, "import sys\nprint(sys.maxsize)")
        if not ok:
            raise BenchError("%s does not run: %s" % (exe, out))
        self.bits = 32 if out == str(2 ** 31 - 1) else 64
        ok, out = _probe(self.exe, "import frozen_id\nprint(frozen_id.CODE_SHA256)")
        self.frozen = out if ok else None
        ok, _out = _probe(self.exe, "import _sim_wire\nimport sys\n"
                                    "print('machine' in sys.modules)")
        self.sim_frozen = ok
        ok, out = _probe(self.exe, "help('modules')")
        self.rig_frozen = ok and "heap_worker" in out.split()

    @property
    def kind(self):
        if self.frozen:
            from host_tools.deploy import code_hash

            stale = "" if code_hash() == self.frozen else (
                ", NOT this tree's device/: make vm32-frozen")
            return "firmware frozen in (code %s%s)" % (self.frozen[:12], stale)
        return "firmware as .mpy (build/mpy/device, as sicbo deploy installs it)"

    def describe(self):
        return "%s (%d-bit, %s, sim/ %s, the rig %s)" % (
            os.path.relpath(self.exe, REPO) if self.exe.startswith(REPO) else self.exe,
            self.bits, self.kind, "frozen in" if self.sim_frozen else "as .mpy",
            "frozen in" if self.rig_frozen else "as .mpy (its code in the heap)")

    def path(self):
        """MICROPYPATH: '.frozen' first, after the unix port's own '' (the
        worker's folder), as on a board. The firmware's .mpy files are not
        on it: install_firmware puts them in the folder, at the board's root."""
        root = SNAPSHOT["root"] or compile_all()
        p = [".frozen", os.path.join(root, "bench")]
        if not self.sim_frozen:
            p.append(os.path.join(root, "sim"))
        return ":".join(p)

    def install_firmware(self, folder):
        """The .mpy firmware in the power-on's folder, as sicbo deploy installs
        it at the board's root (symbolic links to this run's compiled copy):
        the board imports it through sys.path's '' and interns each module's
        path as it finds it, "sicbo/journal.mpy", not this bench's long
        temporary folder (about 36 bytes more a module, 1.2 KiB a boot)."""
        if self.frozen:
            return
        device = os.path.join(SNAPSHOT["root"] or compile_all(), "device")
        for name in os.listdir(device):
            if name == "main.mpy":  # a board's main.py starts faults; the worker does
                continue
            dest = os.path.join(folder, name)
            if not os.path.lexists(dest):
                os.symlink(os.path.join(device, name), dest)

    def board_heap(self):
        """The heap that stands for the board's on this interpreter, in bytes."""
        if self.bits == 32:
            return heaps.BOARD_HEAP
        return _kib_text(heaps.HEAP_64_EQUIVALENT) * 1024


def fresh_vms(exes):
    """The test VMs of build/vm32 brought up to date (host_tools.vm32, cached:
    at once when nothing changed) when MICROPYTHON_SRC names the source: they
    carry the rig (bench/heap_worker.py) frozen in, and a rig older than this
    tree's would play by other rules."""
    if not os.environ.get("MICROPYTHON_SRC"):
        return
    from host_tools import vm32

    for exe in exes:
        for frozen, built in ((False, VM32), (True, VM32_FROZEN)):
            if os.path.abspath(exe) == built:
                try:
                    vm32.build(frozen=frozen, log=lambda text: PRINT(text, flush=True))
                except vm32.BuildError as e:
                    raise BenchError(str(e)) from e


def _kib_text(text):
    return int(text[:-1]) if text.endswith("k") else int(text) // 1024


def compile_all():
    """build/mpy (device, sim, tests/logic: host_tools.mprun) and the worker,
    then a private copy of device/, sim/ and the worker for this run (once
    per process; removed at exit). Returns its folder."""
    if SNAPSHOT["root"]:
        return SNAPSHOT["root"]
    compile_trees()
    root = tempfile.mkdtemp(prefix="sicbo-heap-mpy-")
    atexit.register(shutil.rmtree, root, True)
    for tree in ("device", "sim"):
        shutil.copytree(os.path.join(BUILD, tree), os.path.join(root, tree))
    os.makedirs(os.path.join(root, "bench"))
    # Compiled as the firmware is (constants folded, -O3): the worker's own
    # use of sicbo.events must not load a module the firmware no longer does.
    for path in RIG:
        name = os.path.basename(path)[:-3]
        folded = fold_file(path, os.path.join(root, "folded", name + ".py"))
        subprocess.run([mpy_cross(), *OPT, "-s", name, "-o",
                        os.path.join(root, "bench", name + ".mpy"), folded], check=True)
    SNAPSHOT["root"] = root
    return root


# ---- one power-on ------------------------------------------------------------------


class Run:
    """What one process printed and how it ended."""

    def __init__(self, rc, out, err):
        self.rc = rc
        self.out = out
        self.err = err
        self.lines = out.splitlines()
        # (round, state, in use, total, before the firmware, frozen, on path,
        # the interpreter's own at the worker's start)
        self.boot = None
        self.starts = []
        self.ends = {}  # round -> ("paid", "ddd") | ("void", reason)
        self.meters = []
        self.cut = None
        self.exit = None
        self.restart = False
        self.loop = False  # restarted again at the power-on after a restart
        self.link = None  # (up, cursor, last sent, journal's last, publishes, failures)
        self.link_up_heap = None  # heap in use once the link connected
        self.link_downs = []  # (code, detail)
        self.no_link = None  # (state, fault, detail): it did not connect
        self.names = {}  # "boot"/"exit" -> (qstr pools, interned names)
        names_at = None
        for ln in self.lines:
            if names_at is not None and ln.startswith("qstr pool:"):
                m = re.match(r"qstr pool: n_pool=(\d+), n_qstr=(\d+)", ln)
                if m:
                    self.names[names_at] = (int(m.group(1)), int(m.group(2)))
            if not ln.startswith("@"):
                continue
            f = ln.split()
            names_at = f[1] if f[0] == "@names" and len(f) > 1 else None
            if f[0] == "@boot":
                self.boot = tuple(int(x) for x in f[1:9])
            elif f[0] == "@start":
                self.starts.append(int(f[1]))
            elif f[0] == "@end":
                self.ends[int(f[1])] = (f[2], f[3])
            elif f[0] == "@meters":
                self.meters.append(tuple(int(x) for x in f[1:4]))
            elif f[0] == "@cut":
                self.cut = (int(f[1]), int(f[2]))
            elif f[0] == "@exit":
                self.exit = tuple(int(x) for x in f[1:4])
            elif f[0] == "@restart":
                self.restart = True
            elif f[0] == "@link":
                self.link = tuple(int(x) for x in f[1:7])
            elif f[0] == "@linkup":
                self.link_up_heap = int(f[1])
            elif f[0] == "@linkdown":
                self.link_downs.append((int(f[1]), int(f[2])))
            elif f[0] == "@nolink":
                self.no_link = tuple(int(x) for x in f[1:4])

    def failure(self):
        """Why this power-on failed, or None."""
        text = self.out + self.err
        if "MemoryError" in text:
            return _tail(text, "MemoryError")
        if self.loop:
            return "restarts at every power-on (the files checked and cached again)"
        for code, _detail in self.link_downs:
            if code == L_MEMORY:
                return "MemoryError in the floor link (contained: down %d)" % code
        if self.link_downs:
            return "the floor link went down: code %d detail %d" % self.link_downs[0]
        if self.no_link is not None:
            return ("the floor link did not connect (state %d, fault %d, detail %d): %s"
                    % (self.no_link + (_tail(text),)))
        if self.restart and self.rc == RESTART_EXIT and "Traceback" not in text:
            return None
        if self.boot is None:
            return "no boot (exit %d): %s" % (self.rc, _tail(text))
        if len(self.boot) != 8:
            return ("its @boot line has %d figures, not this bench's 8: a worker of another "
                    "revision (make vm32 / make vm32-frozen)" % len(self.boot))
        if "Traceback" in text:
            return "error after boot (exit %d): %s" % (self.rc, _tail(text))
        if self.rc == CUT_EXIT and self.cut is not None:
            return None
        if self.rc == 0 and self.exit is not None:
            return None
        return "exit status %d: %s" % (self.rc, _tail(text))


def _tail(text, word=None):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("@")]
    if word:
        for i, ln in enumerate(lines):
            if word in ln:
                where = [x for x in lines[max(0, i - 3):i] if x.startswith("File")]
                return ln + (" (" + "; ".join(where) + ")" if where else "")
    return " | ".join(lines[-4:])


def power_on(interp, folder, heap, mode, rounds, cut_step, seed, boot_no):
    """One power-on; and, when the board restarts by itself (the files
    checked and cached at their first boot), the power-on after it, which
    must run the table: a board that restarts again is in a restart loop."""
    r = _power_on(interp, folder, heap, mode, rounds, cut_step, seed, boot_no)
    if r.restart and r.failure() is None:
        r = _power_on(interp, folder, heap, mode, rounds, cut_step, seed, boot_no)
        if r.restart:
            r.loop = True
    return r


def _power_on(interp, folder, heap, mode, rounds, cut_step, seed, boot_no):
    env = {k: v for k, v in os.environ.items()
           if k not in ("SICBO_SIM_WIRE", "SICBO_SIM_RTC", "SICBO_MPY_ROOT")}
    env["MICROPYPATH"] = interp.path()
    interp.install_firmware(folder)
    cmd = [interp.exe, "-X", "heapsize=%s" % heap, "-m", "heap_worker", folder, mode,
           str(rounds), str(cut_step), str(seed), str(boot_no)]
    # With the link: its waits (connected, then everything acknowledged) too.
    timeout = PROCESS_TIMEOUT_S + (120 if LINK["floor"] is not None else 0)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, env=env,
                           timeout=timeout)
        return Run(r.returncode, r.stdout, r.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return Run(-1, out, "timed out after %d s" % timeout)


def new_folder(prefix, base=None, board=None, table=TABLE_FILE):
    board = board or BOARD["file"]
    folder = tempfile.mkdtemp(prefix="sicbo-heap-%s-" % prefix)
    if base:
        for name in os.listdir(base):
            src = os.path.join(base, name)
            if os.path.islink(src):
                continue  # the firmware (install_firmware): linked again at power-on
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(folder, name))
            elif not name.startswith("acked"):
                # Without the saved cursor: a new floor is given the whole journal.
                shutil.copy2(src, os.path.join(folder, name))
    else:
        fl = LINK["floor"]
        if fl is not None:
            fl.board_file(board, os.path.join(folder, "board.json"))
            os.makedirs(os.path.join(folder, "secrets"))
            with open(os.path.join(folder, "secrets", "password"), "w") as f:
                f.write(fl.table_password + "\n")
        else:
            shutil.copy(board, os.path.join(folder, "board.json"))
        shutil.copy(table, os.path.join(folder, "table.json"))
        write_pins(board, folder)
        if CHAIN["on"]:
            # As `sicbo deploy --provision` leaves it: the first boot takes it.
            from sicbo import chain

            with open(os.path.join(folder, "chain.new"), "wb") as f:
                f.write(chain.key_file(1, 0, 1, 0, bytes(range(32)), bytes(16)))
    return folder


def write_pins(board, folder):
    """`pins` for the worker: the GPIO, then the inversion, of each input in
    sicbo.signals order (the names defined once, in the firmware)."""
    import json

    from sicbo.signals import INPUT_SIGNALS

    with open(board, encoding="utf-8") as f:
        bd = json.load(f)
    ins = bd["inputs"]
    keys = bd.get("keys") or {"bits": {}}
    where = []
    inv = []
    for n in INPUT_SIGNALS:
        if n in ins:
            where.append("g%d" % ins[n]["pin"])
            inv.append("1" if ins[n]["invert"] else "0")
        else:  # a key on the 74HC165 chain
            where.append("c%d" % keys["bits"][n])
            inv.append("1" if keys.get("invert", True) else "0")
    with open(os.path.join(folder, "pins"), "w") as f:
        f.write(" ".join(where) + "\n")
        f.write(" ".join(inv) + "\n")


def segments(folder):
    return sorted(n for n in os.listdir(folder) if re.match(r"^j\d{8}\.log$", n))


def journal_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, n)) for n in segments(folder))


def fill_journal(interp, extra_rounds=8, board=None, table=TABLE_FILE):
    """A folder whose journal is at its cap (it has rotated and deleted), with
    the board and table files beside it as board.json and table.json."""
    folder = new_folder("full", board=board, table=table)
    if LINK["floor"] is not None:
        LINK["floor"].fresh()
    r = power_on(interp, folder, FILL_HEAP, "fill", extra_rounds, 0, 1, 0)
    why = r.failure()
    if why or r.exit is None or r.exit[2] < 1:
        shutil.rmtree(folder, ignore_errors=True)
        raise BenchError("could not fill a journal with %s at %s: %s"
                         % (interp.exe, FILL_HEAP, why or "no segment deleted"))
    return folder, r


def chain_failure(folder):
    """With --chain: why the journal's MAC chain does not verify (None: it
    does, every record of it sealed), from its J_PROVISION or, rotated away,
    from its first checkpoint (host_tools/chaincheck.py)."""
    if not CHAIN["on"]:
        return None
    from host_tools import keystore
    from host_tools.commands import journal as jcmd

    ks = keystore.KeyStore("(the bench's key)")
    ks.chains.append(keystore.Provisioning(1, "T01", 1, bytes(range(32)), None))
    rep = jcmd.verification(jcmd.segments([folder]), ks)
    if rep.verified and rep.authenticated == rep.records:
        return None
    return "the MAC chain: %s" % "; ".join(f["text"] for f in rep.findings[:3])


def host_recall(folder):
    """The game recall as diag.recall gives it (sicbo.recall over the
    journal; the running table keeps only its meters), read on the host:
    [(round, status, dice "ddd" or "-")], newest first."""
    import json

    from sicbo import config, settle
    from sicbo.recall import Recall

    with open(os.path.join(folder, "table.json"), encoding="utf-8") as f:
        rc = Recall(settle.SettlementTable(config.parse_table(json.load(f))))
    for name in segments(folder):
        with open(os.path.join(folder, name), "rb") as f:
            rc.feed(f.read())
    return [(i.round, i.status, "%d%d%d" % tuple(i.dice) if i.dice else "-")
            for i in rc.last()]


# ---- the floor (link mode) -----------------------------------------------------------


class LinkFloor:
    """The site the table's link reports to: a real mosquitto (the site's
    ACL on its password listener) and the floor service, started afresh by
    fresh() (a new broker persistence and a new store) on one loopback port
    for the whole run, since the port is in the board file and the board
    file's configuration id must not change between power-ons."""

    SITE = "bench"
    TABLE = "T01"
    FLOOR_PASSWORD = "floor-bench-pw"

    def __init__(self):
        from host_tools.broker import free_port, require_mosquitto

        why = require_mosquitto()
        if why:
            raise BenchError("--link: " + why)
        self.folder = tempfile.mkdtemp(prefix="sicbo-heap-floor-")
        atexit.register(shutil.rmtree, self.folder, True)
        self.port = free_port()
        self.table_password = "pw-" + self.TABLE
        self.n = 0
        self.broker = None
        self.proc = None
        self.db = None
        atexit.register(self.stop)

    def board_file(self, base, path):
        """The board file `base` with a floor section pointing at this broker."""
        import json

        with open(base, encoding="utf-8") as f:
            bd = json.load(f)
        bd["floor"] = {"site": self.SITE, "table": self.TABLE, "broker": "127.0.0.1",
                       "port": self.port, "tls": False, "keepalive_s": 30}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(bd, f, indent=1)

    def fresh(self):
        from host_tools.broker import Broker
        from host_tools.floor import site

        self.stop()
        self.n += 1
        here = os.path.join(self.folder, str(self.n))
        b = Broker(os.path.join(here, "mq"), acl=site.acl_text(self.SITE), plain_acl=True,
                   passwords={site.FLOOR_USER: self.FLOOR_PASSWORD,
                              self.TABLE: self.table_password})
        b.port = self.port
        b.started = 1  # keeps its port (Broker picks new ports before its first start)
        try:
            b.start()
        except RuntimeError as e:
            raise BenchError("the broker for the link: %s" % e) from e
        self.broker = b
        pw = os.path.join(here, "floor.pw")
        with open(pw, "w") as f:
            f.write(self.FLOOR_PASSWORD + "\n")
        self.db = os.path.join(here, "floor.db")
        self.log_path = os.path.join(here, "floor.log")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "host_tools", "floor", "--broker",
                 "127.0.0.1:%d" % self.port, "--db", self.db, "--site", self.SITE,
                 "--username", site.FLOOR_USER, "--password-file", pw],
                cwd=REPO, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while "subscribed" not in self._log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise BenchError("the floor service did not start: %s" % self._log()[-500:])
            time.sleep(0.05)

    def _log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stored(self):
        """(records the floor stored for the table, the highest sequence
        number among them)."""
        import sqlite3

        conn = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True, timeout=30)
        try:
            n, top = conn.execute("SELECT COUNT(*), MAX(seq) FROM records WHERE table_id = ?",
                                  (self.TABLE,)).fetchone()
        finally:
            conn.close()
        return n, top or 0

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(60)
        self.proc = None
        if self.broker is not None:
            self.broker.stop()
            self.broker = None


# ---- a campaign ----------------------------------------------------------------------


class Campaign:
    """Power-ons at one heap on a copy of the full journal, until `rounds`
    rounds have been started."""

    def __init__(self, interp, full, heap, rounds, cut_every, seed, log=None):
        self.interp = interp
        self.full = full
        self.heap = heap
        self.rounds = rounds
        self.cut_every = max(1, cut_every)
        self.rng = random.Random(seed)
        self.seed = seed
        self.log = log or (lambda text: None)
        self.records = {}  # seq -> (type, round, payload): every record ever read
        self.conflicts = 0
        self.seen_ends = {}  # round -> ("paid", dice) | ("void", reason): as the dealer saw
        self.seen_starts = set()  # rounds the dealer started
        self.first_round = None  # the round id of the full journal
        self.first_meters = None
        self.runs = 0
        self.cuts = 0
        self.cut_states = {}
        self.failure = None
        self.last = None
        self.boot_heaps = []  # heap in use after each boot
        # The simulated machine's and the rig's objects at each boot: the heap
        # in use before the firmware, less the interpreter's own.
        self.sim_heaps = []
        self.seconds = 0.0
        self.recall = []  # the game recall read from the journal at the end
        self.link_up_heaps = []  # heap in use once the link connected, each power-on
        self.acked = 0  # the link's cursor at the end: acknowledged by the floor
        self.acked_moves = 0  # power-ons during which the cursor moved
        self.published = 0  # journal publishes, all power-ons
        self.stored = (0, 0)  # (records the floor stored, the highest)

    def read_journal(self, folder):
        for name in segments(folder):
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            for rec in journal.records(data):
                key = (rec.type, rec.round, bytes(rec.payload))
                old = self.records.get(rec.seq)
                if old is None:
                    self.records[rec.seq] = key
                elif old != key:
                    self.conflicts += 1

    def started(self):
        """Round ids started during the campaign (J_ROUND in the journal)."""
        return sorted({rid for (t, rid, _p) in self.records.values()
                       if t == R.J_ROUND and rid > self.first_round})

    def run(self):
        t0 = time.monotonic()
        folder = new_folder("campaign", self.full)
        if LINK["floor"] is not None:
            LINK["floor"].fresh()
        try:
            self.read_journal(folder)
            self.first_round = max([rid for (t, rid, _p) in self.records.values()
                                    if t == R.J_ROUND] or [0])
            while self.failure is None:
                done = len(self.started())
                left = self.rounds - done
                if left <= 0:
                    rounds, cut = 0, 0  # the last power-on: finish, report, stop
                else:
                    rounds = min(left, 2 * self.cut_every)
                    cut = self.rng.randint(1, max(1, rounds * STEPS_PER_ROUND))
                    if rounds == left:
                        cut = self.rng.choice((cut, 0))  # the end may come before a cut
                self.runs += 1
                r = power_on(self.interp, folder, self.heap, "play", rounds, cut,
                             self.seed * 100003 + self.runs, self.runs)
                self.last = r
                why = r.failure()
                if why is None:
                    check_frozen(self.interp, r)
                if why is not None:
                    self.failure = "power-on %d: %s" % (self.runs, why)
                    break
                if self.first_meters is None:
                    self.first_meters = r.meters[0]
                    if r.boot[0] != self.first_round:
                        raise BenchError("the full journal's round is %d, the board booted "
                                         "in round %d" % (self.first_round, r.boot[0]))
                self.boot_heaps.append(r.boot[2])
                self.sim_heaps.append(r.boot[4] - r.boot[7])
                if LINK["floor"] is not None:
                    self.failure = self.link_run(r)
                    if self.failure is not None:
                        break
                self.seen_ends.update(r.ends)
                self.read_journal(folder)
                # Every round the dealer started is a new round of the journal,
                # started once; a power-on that played without a cut started
                # some (else the campaign could go round without an end).
                started = self.started()
                for rid in r.starts:
                    if rid <= self.first_round or rid not in started or rid in self.seen_starts:
                        self.failure = ("power-on %d: round %d, started at the table, is %s"
                                        % (self.runs, rid, "started twice" if rid in
                                           self.seen_starts else "not a new round of the journal"))
                    self.seen_starts.add(rid)
                if self.failure is None and r.cut is None and rounds and len(started) == done:
                    self.failure = "power-on %d: played, no cut, no new round journaled" % self.runs
                if self.failure is None and self.runs > 4 * self.rounds + 50:
                    self.failure = "no end after %d power-ons" % self.runs
                if self.failure is not None:
                    break
                if r.cut is not None:
                    self.cuts += 1
                    self.cut_states[r.cut[1]] = self.cut_states.get(r.cut[1], 0) + 1
                    self.log("  power-on %d: cut at step %d in state %d; %d rounds so far"
                             % (self.runs, r.cut[0], r.cut[1], len(self.started())))
                elif rounds == 0:
                    self.recall = host_recall(folder)
                    self.failure = self.check(r) or chain_failure(folder)
                    if self.failure is None and LINK["floor"] is not None:
                        self.failure = self.link_check(r)
                    break
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            self.seconds = time.monotonic() - t0
        return self.failure is None

    def link_run(self, r):
        """One power-on's link: connected, its cursor (None: fine)."""
        if r.link_up_heap is None or r.link is None:
            return "power-on %d: the floor link did not report (connected, cursor)" % self.runs
        self.link_up_heaps.append(r.link_up_heap)
        _up, cursor, _sent, _last, published, _failures = r.link
        if cursor > self.acked:
            self.acked_moves += 1
            self.acked = cursor
        self.published += published
        return None

    def link_check(self, r):
        """At the end: the floor acknowledged, and stored, every record the
        journal holds (None: it did)."""
        last = max(self.records) if self.records else 0
        self.stored = LINK["floor"].stored()
        if self.acked < last:
            return ("the floor link: acknowledged up to %d of the journal's %d (%d publishes)"
                    % (self.acked, last, self.published))
        if self.stored[1] < last:
            return "the floor stored up to %d of the journal's %d" % (self.stored[1], last)
        return None

    def outcomes(self):
        """round -> [outcomes in the journal]: ("paid", dice) / ("void", reason)."""
        out = {}
        result = {}
        for _seq, (t, rid, p) in sorted(self.records.items()):
            if rid <= self.first_round:
                continue
            if t == R.J_RESULT:
                result[rid] = "%d%d%d" % (p[0], p[1], p[2])
            elif t == R.J_PAYOUT:
                out.setdefault(rid, []).append(("paid", result.get(rid, "?")))
            elif t == R.J_VOID:
                out.setdefault(rid, []).append(("void", str(p[0])))
        return out

    def check(self, last):
        """The accounting at the end (None: every round accounted for)."""
        started = self.started()
        why = []
        if self.conflicts:
            why.append("%d sequence numbers read with two records" % self.conflicts)
        if started != list(range(self.first_round + 1, self.first_round + 1 + len(started))):
            why.append("round ids not consecutive")
        per = {}
        for (t, rid, _p) in self.records.values():
            if t in (R.J_ROUND, R.J_RESULT, R.J_PAYOUT, R.J_VOID) and rid > self.first_round:
                c = per.setdefault(rid, {})
                c[t] = c.get(t, 0) + 1
        doubled = [rid for rid, c in sorted(per.items())
                   if max(c.values()) > 1 or (c.get(R.J_PAYOUT) and c.get(R.J_VOID))]
        if doubled:
            why.append("doubled rounds %s" % doubled[:10])
        ends = self.outcomes()
        unsettled = [rid for rid in started if rid not in ends]
        if unsettled:
            why.append("rounds never settled %s" % unsettled[:10])
        lost = [rid for rid, how in sorted(self.seen_ends.items())
                if rid > self.first_round and how not in ends.get(rid, ())]
        if lost:
            why.append("rounds settled before a cut, not so in the journal %s" % lost[:10])
        paid = sum(1 for rid in started if ends.get(rid, [("", "")])[0][0] == "paid")
        voids = sum(1 for rid in started if ends.get(rid, [("", "")])[0][0] == "void")
        want = (self.first_meters[0] + len(started), self.first_meters[1] + paid,
                self.first_meters[2] + voids)
        if not last.meters or last.meters[-1] != want:
            why.append("meters (rounds, paid, voids) %r, played %r"
                       % (last.meters[-1] if last.meters else None, want))
        want_recall = []
        for rid in reversed(started[-10:]):
            how, what = ends.get(rid, [("?", "?")])[0]
            want_recall.append((rid, how, what if how == "paid" else "-"))
        got_recall = [e for e in self.recall if e[0] > self.first_round]
        if got_recall != want_recall:
            why.append("recall %r, journal %r" % (got_recall[:3], want_recall[:3]))
        self.paid = paid
        self.voids = voids
        self.power_voids = sum(1 for rid in started for how, what in ends.get(rid, ())
                               if how == "void" and what == str(E.V_POWER))
        return "; ".join(why) or None


# ---- bisection -----------------------------------------------------------------------


def campaign(interp, full, heap_bytes, rounds, cut_every, seed, log=None):
    c = Campaign(interp, full, str(heap_bytes), rounds, cut_every, seed, log)
    c.run()
    return c


def not_memory(failure, kib):
    """A failure that is not the heap running out (a lost or doubled round,
    wrong meters, an error, a timeout) is the firmware's or the bench's at
    any heap: never a figure. Raises BenchError for it."""
    if failure is not None and "MemoryError" not in failure:
        raise BenchError("at %d KiB, a failure that is not the heap's: %s" % (kib, failure))


def smallest_heap(interp, full, in_use, rounds, cut_every, seed, log=None, step=1):
    """(smallest heap in KiB, its campaign, {KiB: campaign} of every probe),
    to `step` KiB."""
    tried = {}

    def ok(kib):
        if kib not in tried:
            c = campaign(interp, full, kib * 1024, rounds, cut_every, seed, log)
            tried[kib] = c
            PRINT("  %4d KiB: %s (%d power-ons, %d cuts, %.1f s)"
                  % (kib, "ok" if c.failure is None else "FAILS: " + c.failure[:150],
                     c.runs, c.cuts, c.seconds), flush=True)
            not_memory(c.failure, kib)
        return tried[kib].failure is None

    step = max(1, step)
    lo = max(1, in_use // 1024)  # the live data alone needs more than this
    hi = lo + max(16, 2 * step)
    while not ok(hi):
        lo = hi
        hi = lo + 2 * (hi - (in_use // 1024))
        if hi > MAX_HEAP_KIB:
            return None, None, tried
    while hi - lo > step:
        mid = lo + (hi - lo) // (2 * step) * step or lo + step
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi, tried[hi], tried


def heap_after_boot(interp, full, seed=5):
    """(in use, in use before the firmware loaded, in use once the link
    connected or None, the interned names, the interpreter's own heap in use
    as the worker started) after a boot on a copy of the full journal, at a
    generous heap, in bytes."""
    folder = new_folder("boot", full)
    if LINK["floor"] is not None:
        LINK["floor"].fresh()
    try:
        r = power_on(interp, folder, FILL_HEAP, "play", 0, 0, seed, 1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    why = r.failure()
    if why:
        raise BenchError("%s does not boot on the full journal at %s: %s"
                         % (interp.exe, FILL_HEAP, why))
    check_frozen(interp, r)
    if LINK["floor"] is not None and r.link_up_heap is None:
        raise BenchError("%s: the floor link did not connect at %s" % (interp.exe, FILL_HEAP))
    return r.boot[2], r.boot[4], r.link_up_heap, r.names, r.boot[7]


def names_text(names):
    """The interned names (qstrs) of a power-on, after boot and at its end,
    and where MicroPython adds its next pool of them: pools double, from 20
    entries after the image's own (mpy-tool's frozen pool allocates 10), so
    the k-th is added past 20 * (2**k - 1) names, in one block (the 6th,
    past 620 names: 640 entries, 4.4 KiB on a 32-bit board)."""
    parts = []
    for when in ("boot", "exit"):
        if when in names:
            pools, n = names[when]
            # Said with its margin: a few new identifiers past the boundary
            # cost the whole next pool at once (84 -> 100 KiB, provisioned).
            past = 20 * (2 ** pools - 1)
            parts.append("%s %d in %d pools (the next pool past %d: %d to spare)"
                         % ("after boot" if when == "boot" else "at the end", n, pools,
                            past, past - n))
    return "; ".join(parts) or "not reported"


def check_frozen(interp, r):
    """A frozen image runs its frozen firmware (frozen_id imports, no module
    of it loaded from a .mpy file, which would shadow it); any other
    interpreter runs the .mpy files."""
    if interp.frozen and (r.boot[5] != 1 or r.boot[6] != 0):
        raise BenchError("%s: the worker %s" % (interp.exe, "does not see frozen_id"
                                                if r.boot[5] != 1 else
                                                "runs the firmware from .mpy files"))
    if not interp.frozen and (r.boot[5] != 0 or r.boot[6] != 1):
        raise BenchError("%s: the worker does not run the .mpy firmware" % interp.exe)


def first_boot_kib(interp, step=1):
    """The smallest heap (KiB) for the first power-on on new files (as after
    a deploy): an empty journal, the files parsed, checked and cached, the
    reset, then the table started from the cache. (KiB, failure just below)."""
    def ok(kib):
        folder = new_folder("first")
        try:
            r = power_on(interp, folder, kib * 1024, "play", 0, 0, 5, 0)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        why = r.failure()
        not_memory(why, kib)
        return why

    lo, hi = 8, 256
    top = ok(hi)
    if top is not None:
        return None, top
    why = None
    while hi - lo > step:
        mid = lo + (hi - lo) // (2 * step) * step or lo + step
        w = ok(mid)
        if w is None:
            hi = mid
        else:
            lo, why = mid, w
    return hi, why


def measure(interp, full, rounds, cut_every, seed, log=None, step=1, base=None):
    """Every figure for one interpreter (a dict). base: the same
    interpreter's figures without the link, in link mode."""
    linked = LINK["floor"] is not None
    in_use, before, up_heap, names, own = heap_after_boot(interp, full, seed)
    PRINT("%s%s" % (interp.describe(), ", WITH THE FLOOR LINK connected and publishing"
                    if linked else ""))
    PRINT("  heap in use after boot on the full journal: %d bytes (%.1f KiB), of which %.1f "
          "KiB before the firmware: %d bytes the interpreter's own, %d bytes the simulated "
          "machine and this bench's worker (%s)"
          % (in_use, in_use / 1024, before / 1024, own, before - own,
             "their objects; their code is frozen in" if interp.rig_frozen
             else "their code and objects"), flush=True)
    PRINT("  names interned at run time (qstrs; a frozen image's are in flash): %s"
          % names_text(names), flush=True)
    if linked:
        PRINT("  heap in use once the link connected and subscribed: %d bytes (%.1f KiB)"
              % (up_heap, up_heap / 1024), flush=True)
        if base is not None:
            PRINT("  the link's own heap: after boot (its code%s, buffers and objects, not yet "
                  "connected) %d bytes (%.1f KiB); connected %d bytes (%.1f KiB) more than "
                  "the table without the link"
                  % (" in flash" if interp.frozen else "", in_use - base["in_use"],
                     (in_use - base["in_use"]) / 1024, up_heap - base["in_use"],
                     (up_heap - base["in_use"]) / 1024), flush=True)
        first = first_why = None  # the files' first boot does not start the link
    else:
        first, first_why = first_boot_kib(interp, step)
        PRINT("  smallest heap for the first power-on on new files (an empty journal; the "
              "files parsed, checked and cached, a reset, the table started): %s%s"
              % ("%d KiB" % first if first else "none up to 256 KiB",
                 "; below: %s" % first_why if first_why else ""), flush=True)
    kib, best, tried = smallest_heap(interp, full, in_use, rounds, cut_every, seed, log, step)
    fig = {"exe": interp.exe, "bits": interp.bits, "frozen": interp.frozen, "link": linked,
           "in_use": in_use, "before_firmware": before, "smallest_kib": kib,
           "link_up": up_heap, "names": names,
           "first_boot_kib": first,
           "rounds": rounds, "tried": {k: c.failure for k, c in tried.items()}}
    if kib is None:
        PRINT("  smallest heap: none up to %d KiB" % MAX_HEAP_KIB)
        return fig
    below = tried.get(max([k for k in tried if k < kib] or [0]))
    fig.update(cuts=best.cuts, runs=best.runs, paid=getattr(best, "paid", 0),
               voids=getattr(best, "voids", 0), power_voids=getattr(best, "power_voids", 0),
               below=below.failure if below is not None else None,
               max_boot_heap=max(best.boot_heaps) if best.boot_heaps else 0)
    board = interp.board_heap()
    PRINT("  smallest heap that boots on a full journal and plays %d rounds with power cuts: "
          "%d KiB (%d bytes, to %d KiB): %d power-ons, %d cuts (in states %s), paid %d, void %d "
          "(%d by the resumption), %.1f s"
          % (rounds, kib, kib * 1024, step, best.runs, best.cuts,
             ",".join("%s:%d" % (k, v) for k, v in sorted(best.cut_states.items())),
             fig["paid"], fig["voids"], fig["power_voids"], best.seconds))
    if linked:
        fig.update(acked=best.acked, stored=best.stored, published=best.published)
        PRINT("    the link: %d journal publishes, the cursor moved in %d of %d power-ons, "
              "acknowledged up to %d; the floor stored %d records (up to %d)"
              % (best.published, best.acked_moves, best.runs, best.acked, best.stored[0],
                 best.stored[1]))
    if below is not None:
        PRINT("    at %d KiB: %s" % (int(below.heap) // 1024, below.failure))
    PRINT("  the board's heap on this interpreter: %d bytes (%.1f KiB): %s"
          % (board, board / 1024, "fits, %.1f KiB to spare" % (board / 1024 - kib)
             if kib * 1024 <= board else "does NOT fit, %.1f KiB short" % (kib - board / 1024)),
          flush=True)
    if interp.bits == 32:
        # The goals under the board's heap: the .mpy firmware at 90 KiB
        # (room for a TLS link), the frozen image in the heap before it grows;
        # with the link: 96 and 52 KiB.
        if linked:
            goal = heaps.LINK_GOAL_FROZEN if interp.frozen else heaps.LINK_GOAL
        else:
            goal = heaps.BOARD_HEAP_INITIAL if interp.frozen else heaps.BOOT_GOAL
        # What a board needs: the simulated machine and the worker make
        # their objects before the firmware starts and keep them to the end
        # (a board's machine is C, its table wires), so in the VM's heap of
        # kib KiB the firmware had at most kib KiB less those bytes, some of
        # them in holes between the simulator's objects: a board with that
        # many bytes, all its own, runs it at least as well. The least of
        # the campaign's power-ons is subtracted. The interpreter's own start
        # stays counted (a board's start mounts its filesystem too).
        on_board, sim = board_bytes(kib, best)
        fig.update(sim_heap=sim, board_bytes=on_board)
        PRINT("  on a board: %d bytes (%.1f KiB): the smallest heap less the %d bytes (%.1f KiB) "
              "that the simulated machine and this bench's worker held from before the firmware "
              "to the end (the least of the %d power-ons; %s)"
              % (on_board, on_board / 1024, sim, sim / 1024, len(best.sim_heaps),
                 "their code frozen in" if interp.rig_frozen else "their code loaded too"),
              flush=True)
        PRINT("  goal: at most %d KiB of a board's heap: %s; on this VM's heap, the simulator's "
              "objects counted: %s"
              % (goal // 1024, _verdict(on_board, goal), _verdict(kib * 1024, goal)), flush=True)
    return fig


def board_bytes(kib, campaign):
    """(a board's heap, the simulator's bytes) for a campaign that succeeded
    at `kib` KiB of the VM's heap: the least of its power-ons' simulator
    bytes subtracted (measure()'s comment says why that is a board's)."""
    sim = min(campaign.sim_heaps)
    return kib * 1024 - sim, sim


def _verdict(need, goal):
    return ("met, %.1f KiB to spare" % ((goal - need) / 1024) if need <= goal
            else "NOT met, %.1f KiB over" % ((need - goal) / 1024))


def _fig_text(f):
    if f is None:
        return "not measured"
    if not f["smallest_kib"]:
        return "none up to %d KiB" % MAX_HEAP_KIB
    if "board_bytes" in f:
        return "%d KiB (a board's %.1f)" % (f["smallest_kib"], f["board_bytes"] / 1024)
    return "%d KiB" % f["smallest_kib"]


def measure_mode(interps, missing, rounds, args, step, earlier):
    """The figures of every interpreter, with or without the link (LINK)."""
    # One full journal for every interpreter: the same firmware writes it.
    full, fill = fill_journal(interps[0])
    figs = []
    try:
        PRINT("board_heap: full journal%s: %d segments, %d bytes (cap %d), round %d, %s "
              "at %s; %s, %s; %d rounds per campaign, a power cut every %d rounds on "
              "average (seed %d)"
              % (" (the floor link in the board file)" if LINK["floor"] else "",
                 len(segments(full)), journal_bytes(full), 4 * 4096, fill.meters[-1][0],
                 os.path.basename(interps[0].exe), FILL_HEAP, os.path.basename(BOARD["file"]),
                 os.path.basename(TABLE_FILE), rounds, args.cut_every, args.seed), flush=True)
        if CHAIN["on"]:
            PRINT("board_heap: provisioned: a MAC chain over the journal (%s)"
                  % ("every record sealed" if "chain.key" in os.listdir(full) else
                     "NOT TAKEN: no key file"), flush=True)
        for exe in missing:
            PRINT("%s: not built, skipped (make vm32 / make vm32-frozen with "
                  "MICROPYTHON_SRC)" % os.path.relpath(exe, REPO))
        for it in interps:
            base = [f for f in earlier if f["exe"] == it.exe and not f["link"]]
            figs.append(measure(it, full, rounds, args.cut_every, args.seed,
                                PRINT if args.verbose else None, step,
                                base[0] if base else None))
    finally:
        shutil.rmtree(full, ignore_errors=True)
    return figs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--micropython", action="append", default=[],
                    help="an interpreter (repeatable; default %s)" % os.path.relpath(VM32, REPO))
    ap.add_argument("--all", action="store_true",
                    help="the 32-bit VM, its frozen build and the 64-bit port (those that exist)")
    ap.add_argument("--rounds", type=int, default=1000,
                    help="rounds per campaign (default 1000)")
    ap.add_argument("--cut-every", type=int, default=10,
                    help="mean rounds between power cuts (default 10)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--step", type=int, default=1,
                    help="the bisection's resolution in KiB (default 1)")
    ap.add_argument("--quick", action="store_true",
                    help="200 rounds per campaign, 2 KiB steps")
    ap.add_argument("--board", default=BOARD_FILE,
                    help="the board file (default board_config/boards/virtual.json; "
                         "virtual-chain.json: the keys on a 74HC165 chain)")
    ap.add_argument("--chain", action="store_true",
                    help="the board provisioned: every record sealed with its MAC, the key "
                         "file written after each append (docs/tamper-evidence.md)")
    ap.add_argument("--link", action="store_true",
                    help="with the floor link connected and publishing (a real mosquitto "
                         "and the floor service) only; --all measures without it, then with it")
    ap.add_argument("--no-link", action="store_true",
                    help="with --all: without the floor link only")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    BOARD["file"] = os.path.abspath(args.board)
    CHAIN["on"] = args.chain
    rounds = 200 if args.quick and args.rounds == 1000 else args.rounds
    step = 2 if args.quick and args.step == 1 else args.step
    exes = list(args.micropython)
    missing = []
    if args.all:
        for exe in (VM32, VM32_FROZEN, PORT64):
            if os.path.exists(exe):
                exes.append(exe)
            else:
                missing.append(exe)
    if not exes:
        if not os.path.exists(VM32):
            PRINT("board_heap: no %s: build it (make vm32 MICROPYTHON_SRC=../shared/vendor/"
                  "micropython-1.28.0.tar.gz), or give --micropython" % os.path.relpath(VM32, REPO))
            return 2
        exes = [VM32]
    t0 = time.monotonic()
    try:
        fresh_vms(exes)
        compile_all()
        interps = [Interp(exe) for exe in exes]
        modes = [False, True] if args.all else [False]
        if args.link:
            modes = [True]
        elif args.no_link:
            modes = [False]
        figs = []
        for linked in modes:
            LINK["floor"] = LinkFloor() if linked else None
            figs += measure_mode(interps, missing, rounds, args, step, figs)
    except BenchError as e:
        PRINT("board_heap: %s" % e)
        return 2
    finally:
        if LINK["floor"] is not None:
            LINK["floor"].stop()
    done = [f for f in figs if f["smallest_kib"]]
    PRINT("board_heap: smallest heaps, without the floor link / with it connected and "
          "publishing (on a 32-bit VM, and less the simulator's objects: a board's):")
    for exe in exes:
        row = {f["link"]: f for f in figs if f["exe"] == os.path.abspath(exe)}
        PRINT("  %s: %s / %s" % (os.path.relpath(exe, REPO) if exe.startswith(REPO) else exe,
                                 _fig_text(row.get(False)), _fig_text(row.get(True))))
    m32 = [f for f in done if f["bits"] == 32 and not f["frozen"] and not f["link"]]
    m64 = [f for f in done if f["bits"] == 64 and not f["frozen"] and not f["link"]]
    if m32 and m64:
        PRINT("64-bit / 32-bit (.mpy): heap in use after boot %.2f, smallest heap %.2f"
              % (m64[0]["in_use"] / m32[0]["in_use"],
                 m64[0]["smallest_kib"] / m32[0]["smallest_kib"]))
    PRINT("board_heap: %.0f s" % (time.monotonic() - t0))
    return 0 if len(done) == len(figs) else 2


if __name__ == "__main__":
    sys.exit(main())
