"""The virtual board: the real MicroPython unix port behind a pseudo-terminal.

mpremote (unmodified) talks to it exactly as to an ESP32 on a USB serial port:

    host tool --- outer pty (slave = the "serial port") --- relay --- inner pty --- interpreter

The relay (a thread of this process) copies bytes both ways and makes the unix
port look like a board:

* The inner pty is raw except ISIG: a Ctrl-C typed while code runs interrupts
  it (the interpreter's own REPL turns ISIG off while it waits for input, so an
  idle Ctrl-C stays a byte, as on a board). Output keeps its bytes (no
  ``\\r\\r\\n``), and a lone ``\\n`` becomes ``\\r\\n`` as a board's stdout does.
* Every start of the interpreter runs a small boot script (written to the run
  folder, never into the board's filesystem) that mounts the board folder as
  ``/`` (``vfs.VfsPosix``, with ``rename`` of two absolute paths fixed: the
  unix port's fails with ENOENT), mounts ``sim/`` compiled by mpy-cross
  (``<folder>/frozen/*.mpy``, as frozen code is precompiled) read-only at
  ``/.frozen`` (the simulated ``machine`` and ``neopixel``, standing in for the
  board's frozen and built-in modules), sets ``sys.path`` to ``['', '.frozen', '/lib',
  '/.frozen']`` and ``sys.argv`` to ``[]``, runs ``boot.py`` and, unless this is a
  raw-REPL soft reset, ``main.py``; then the REPL starts.
* Host input is held while the interpreter boots, except Ctrl-C (which
  interrupts boot.py/main.py at once), and delivered once its REPL reads: after
  the first prompt and its switch to a raw terminal (the unix port flushes
  unread input then, TCSAFLUSH; a board's UART would keep it).
* Soft reset: the unix port exits on Ctrl-D (or ``sys.exit()``, or a Ctrl-C
  that lands as it leaves running code); the relay prints ``MPY: soft reboot``
  and starts it again, in the raw REPL without running main.py if it was in
  the raw REPL (what mpremote does first; the banner is not shown), or in the
  friendly REPL after main.py otherwise. A ``sys.exit()`` in boot.py/main.py
  resets too (the boot script reports it; ``-i`` would enter the REPL).
* Hard reset: ``machine.reset()`` of sim/machine.py ends the interpreter with
  exit status ``RESET_EXIT`` (also given to it as ``SICBO_VBOARD_RESET_EXIT``);
  the relay restarts it as at power-on (boot.py, then main.py). A crash of the
  interpreter (killed by a signal) is treated the same way, as a board's panic
  reboot; an interpreter that cannot run at all turns the board off (reported).
  As on a board, bytes sent while it resets are lost: after ``mpremote
  reset``, wait for the reboot (``hard_resets`` counts them).
* Output never holds the board up when nobody listens, as a UART's: while
  nobody has the serial port open (the relay does not hold its slave end, so
  the master tells), what the board prints is dropped at once; a connection
  gets it flow-controlled (up to ``HOST_BACKLOG`` bytes waiting); a port held
  open but not read for ``HOST_STALL`` s drops it too, until the host sends
  something or the port is opened again.
* Power cut (``VirtualBoard.power_cut()``): the interpreter is killed and the
  serial port disappears (as a USB board's does: an open connection breaks,
  the link is removed) until ``power_on()``, which brings a new pty behind
  the same link.

The host process also owns the simulated table (host_tools/simtable.py,
``TableServer``): it listens on ``wire.sock`` and ``control.sock`` in the run
folder and survives the interpreter's restarts, as a table survives a board
reset. The interpreter finds it through ``SICBO_SIM_WIRE``.

Run folder layout (``--folder``): ``fs/`` the board's filesystem, ``tty`` a
stable link to the serial port, ``wire.sock``/``control.sock``, ``_vboot.py``,
``frozen/`` (sim/ as .mpy).

Differences from an ESP32 that remain: ``sys.path`` ends with ``/.frozen``
(the frozen-module entry ``.frozen`` cannot name a folder) and ``/.frozen``
shows in ``os.listdir('/')``; the heap is 110 KiB of the unix port (64-bit
objects: twice the bytes per object of the ESP32); no ROM boot messages;
the interpreter is the host's speed; the heap is 220k of a 64-bit VM for the
ESP32's 110 KiB (``DEFAULT_HEAP``).
"""

import errno
import fcntl
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
import tty

from host_tools import REPO

SIM_DIR = os.path.join(REPO, "sim")
DEFAULT_BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
# The unix port is 64-bit: GC blocks (32 vs 16 bytes) and pointers (8 vs 4)
# are twice the ESP32's, so its ~110 KiB heap is 220k here (measured by the
# controller's bench; host_tools/mprun.py CONTROLLER_HEAP). At 110k the
# virtual board still boots and mpremote's fs helpers and deploy work (107 KiB
# free at the REPL), but the whole app does not fit, as it would not on an
# ESP32 with half its RAM.
RTC_FILE = ".rtc"  # the simulated RTC's offset from the host clock (sim/_sim_rtc.py)
DEFAULT_HEAP = "220k"
# Exit status by which the interpreter asks for a hard reset (machine.reset()).
RESET_EXIT = 233
RAW_HEADER = b"raw REPL; CTRL-B to exit\r\n"
PROMPT = b">>> "
SOFT_REBOOT = b"MPY: soft reboot\r\n"
# Output waiting for the host: beyond HOST_BACKLOG bytes the interpreter waits;
# if the host takes nothing for HOST_STALL s, nobody is listening: output is
# dropped (a UART's) until the host sends something.
HOST_BACKLOG = 1 << 16
HOST_STALL = 1.0
# While nobody holds the serial port open, output is dropped at once (no flow
# control, no stall); the relay looks for the port's opening this often.
DETACHED_POLL = 0.02
_MARK = b"\x1b_vboard:"
_MARK_END = b"\x1b\\"

# Start kinds of the interpreter.
POWER_ON = "hard"        # power-on or hard reset: boot.py, main.py, friendly REPL
SOFT_FRIENDLY = "soft"   # soft reset from the friendly REPL: boot.py, main.py
SOFT_RAW = "raw"         # soft reset from the raw REPL: boot.py only, back in the raw REPL

# The boot script (MicroPython). Names are prefixed so that they do not clash
# with what boot.py/main.py define in the same (__main__) namespace, and are
# deleted before the REPL starts.
_BOOT_SCRIPT = r'''
def _vb_setup():
    import sys, os, vfs
    kind, root, frozen = sys.argv[1], sys.argv[2], sys.argv[3]


    class Root:
        # The board folder as "/": a VfsPosix, except that rename() of two
        # absolute paths fails on the unix port (ENOENT: one shared path
        # buffer), so rename gets paths relative to the current directory.
        # A wrapper, not a subclass: the VFS calls a subclass's native
        # import_stat with the wrong object and imports from /lib fail.
        def __init__(self, path):
            self.fs = vfs.VfsPosix(path)

        def __repr__(self):
            return '<VfsPosix>'

        def mount(self, readonly, mkfs):
            pass

        def umount(self):
            pass

        def open(self, p, mode):
            return self.fs.open(p, mode)

        def ilistdir(self, p):
            return self.fs.ilistdir(p)

        def chdir(self, p):
            return self.fs.chdir(p)

        def getcwd(self):
            return self.fs.getcwd()

        def mkdir(self, p):
            return self.fs.mkdir(p)

        def remove(self, p):
            return self.fs.remove(p)

        def rmdir(self, p):
            return self.fs.rmdir(p)

        def stat(self, p):
            return self.fs.stat(p)

        def statvfs(self, p):
            return self.fs.statvfs(p)

        def rename(self, a, b):
            up = '../' * len([p for p in os.getcwd().split('/') if p])

            def rel(p):
                return up + p[1:] if p.startswith('/') else p
            return self.fs.rename(rel(a), rel(b))

    vfs.umount('/')
    vfs.mount(Root(root), '/')
    if frozen:
        vfs.mount(vfs.VfsPosix(frozen), '/.frozen', readonly=True)
    os.chdir('/')
    sys.path[:] = ['', '.frozen', '/lib', '/.frozen']
    sys.argv[:] = []
    return kind


def _vb_run(name):
    import os, sys
    try:
        os.stat(name)
    except OSError:
        return
    try:
        execfile(name, globals())
    except SystemExit as e:
        code = e.args[0] if e.args else 0
        if not isinstance(code, int):
            code = 1
        sys.stdout.write('\x1b_vboard:exit:%d\x1b\\' % (code & 255))
        import time
        while True:
            time.sleep(1)
    except BaseException as e:
        sys.print_exception(e)


def _vb_main():
    import sys, gc
    kind = _vb_setup()
    _vb_run('boot.py')
    if kind != 'raw':
        _vb_run('main.py')
    gc.collect()
    sys.stdout.write('\x1b_vboard:ready\x1b\\')


_vb_main()
del _vb_setup, _vb_run, _vb_main
'''


def micropython_command():
    """The unix port's command: $SICBO_MICROPYTHON, or the venv's console script."""
    env = os.environ.get("SICBO_MICROPYTHON")
    if env:
        return [env]
    exe = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(exe):
        return [exe]
    found = shutil.which("micropython")
    if found:
        return [found]
    raise RuntimeError("the MicroPython unix port (micropython) is not installed")


def _set_raw(fd, isig):
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    if isig:
        attrs[3] |= termios.ISIG
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def _take_controlling_tty():  # runs in the child between fork and exec
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _load_board(board):
    if isinstance(board, dict):
        return board
    with open(board or DEFAULT_BOARD, encoding="utf-8") as f:
        return json.load(f)


def _lamp_names(table):
    """The table's lamp_order (channel names) for the simulated table, or None."""
    if not table:
        return None
    from sicbo import config

    with open(table, encoding="utf-8") as f:
        return list(config.load_table(f.read()).lamp_order)


class _NewlineFilter:
    """Turns a lone \n into \r\n, across chunk boundaries, until the board
    sends a 0x18 byte: that starts mpremote's `mount` protocol, binary in both
    directions, and the output stays untouched until the interpreter restarts
    (a board does not convert sys.stdout.buffer writes; the unix port cannot
    tell them apart from print)."""

    def __init__(self):
        self.last = b""
        self.binary = False

    def __call__(self, data):
        if not data or self.binary:
            return data
        cut = data.find(b"\x18")
        if cut >= 0:
            self.binary = True
            return self(data[:cut]) + data[cut:] if cut else data
        out = bytearray()
        prev = self.last
        start = 0
        i = data.find(b"\n")
        while i >= 0:
            before = data[i - 1:i] if i > 0 else prev
            out += data[start:i]
            out += b"\n" if before == b"\r" else b"\r\n"
            start = i + 1
            i = data.find(b"\n", start)
        out += data[start:]
        self.last = data[-1:]
        return bytes(out)


class VirtualBoard:
    """A virtual ESP32: the unix port behind a pty, plus the simulated table.

        with VirtualBoard(folder) as vb:
            subprocess.run(["mpremote", "connect", vb.port, "exec", "print(1)"])

    Attributes after start(): ``port`` (the stable link, or the pty path),
    ``pty`` (/dev/pts/N), ``fs`` (the board's filesystem folder), ``control``
    and ``wire`` (the table's sockets, None without a table), ``boots``
    (interpreter starts so far), ``pid`` (the interpreter's, None when off),
    ``bytes_in``/``bytes_out`` (serial traffic from/to the host so far),
    ``hard_resets``/``soft_resets``/``crashes`` (counts so far).
    """

    def __init__(self, folder, board=None, link=None, heap=DEFAULT_HEAP, frozen=SIM_DIR,
                 table=True, log=None, command=None, table_file=None, frozen_source=False):
        self.folder = os.path.abspath(folder)
        self.fs = os.path.join(self.folder, "fs")
        self.link = os.path.abspath(link) if link else os.path.join(self.folder, "tty")
        self.board = _load_board(board)
        self.heap = heap
        self.frozen_src = frozen if frozen and os.path.isdir(frozen) else ""
        self.frozen = self.frozen_src
        self.frozen_source = frozen_source
        self.want_table = table
        self.table_file = table_file
        self.log = log  # callable(str) for events, or None
        self.command = command or micropython_command()
        self.control = self.wire = None
        self.table = None
        self.pty = None
        self.port = None
        self.boots = 0
        self.crashes = 0
        self.error = None  # why the board is off, if it turned itself off
        self.hard_resets = 0  # machine.reset() (or a WDT reset) seen so far
        self.soft_resets = 0
        self.bytes_in = 0   # bytes the host sent to the board (its serial RX)
        self.bytes_out = 0  # bytes the board sent to the host
        self._child = None
        self._thread = None
        self._cmds = queue.Queue()
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._outer_master = None
        self._wake_r = self._wake_w = None

    # -- public API ---------------------------------------------------------
    @property
    def rtc_file(self):
        """Where the simulated RTC survives resets (not power cuts): a file in
        the board's filesystem (the interpreter sees only that), deleted here
        at power-on and on a power cut."""
        return os.path.join(self.fs, RTC_FILE)

    def _rtc_lost(self):
        try:
            os.remove(self.rtc_file)
        except OSError:
            pass

    def start(self, timeout=10):
        self._rtc_lost()  # power-on: an ESP32 without a battery has no time yet
        os.makedirs(self.fs, exist_ok=True)
        self._boot_script = os.path.join(self.folder, "_vboot.py")
        with open(self._boot_script, "w", encoding="utf-8") as f:
            f.write(_BOOT_SCRIPT)
        self._freeze()
        self._start_table()
        self._open_port()
        self._wake_r, self._wake_w = os.pipe()
        self._stopped.clear()
        self._relay = _Relay(self)
        self._thread = threading.Thread(target=self._relay.run, name="vboard-relay", daemon=True)
        self._thread.start()
        self._command("power_on")
        if timeout:
            self.wait_ready(timeout)
        if self.error:
            err = self.error
            self.stop()
            raise RuntimeError(err)
        return self

    def wait_ready(self, timeout=10):
        """Wait until the interpreter has finished booting (boot.py, main.py
        if it returns) and its REPL is up. Returns False on timeout."""
        end = time.monotonic() + timeout
        while not self._ready.wait(min(0.05, max(0.0, end - time.monotonic()))):
            if self.error or time.monotonic() >= end:
                return False
        return True

    def power_cut(self):
        """Kill the interpreter abruptly, as a power cut: nothing is flushed,
        the serial port disappears until power_on()."""
        self._command("power_cut")

    def power_on(self, timeout=10):
        """Start the interpreter again as at power-on (boot.py, main.py)."""
        self._ready.clear()
        self._command("power_on")
        if timeout:
            self.wait_ready(timeout)

    def restart(self, timeout=10):
        """A power cycle: power_cut() then power_on()."""
        self.power_cut()
        self.power_on(timeout)

    @property
    def pid(self):
        c = self._child
        return c.pid if c is not None and c.poll() is None else None

    def stop(self):
        if self._thread is None:
            return
        self._command("stop")
        self._thread.join(10)
        self._thread = None
        self._close_port()
        for fd in (self._wake_r, self._wake_w):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._wake_r = self._wake_w = None
        if self.table is not None:
            try:
                self.table.stop()
            finally:
                self.table = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- internals ----------------------------------------------------------
    def _event(self, text):
        if self.log:
            self.log(text)

    def _command(self, name):
        done = threading.Event()
        self._cmds.put((name, done))
        try:
            os.write(self._wake_w, b"!")
        except (OSError, TypeError):
            return
        t = self._thread
        if t is not None and t is not threading.current_thread():
            while t.is_alive() and not done.wait(0.05):
                pass

    def _freeze(self):
        """sim/ as the board's frozen modules: precompiled bytecode (.mpy) in
        <folder>/frozen, as frozen code is compiled before it reaches a board
        (compiling sim/machine.py inside a 110 KiB VM would cost heap a board
        never spends). Only what changed is compiled; sources if that fails or
        if frozen_source is set."""
        if not self.frozen_src or self.frozen_source:
            return
        from host_tools.deploy import mpy_cross_exe

        out = os.path.join(self.folder, "frozen")
        os.makedirs(out, exist_ok=True)
        want = set()
        try:
            for name in sorted(os.listdir(self.frozen_src)):
                if not name.endswith(".py"):
                    continue
                src = os.path.join(self.frozen_src, name)
                dest = os.path.join(out, name[:-3] + ".mpy")
                want.add(os.path.basename(dest))
                if os.path.exists(dest) and os.path.getmtime(dest) >= os.path.getmtime(src):
                    continue
                r = subprocess.run([mpy_cross_exe(), "-s", name, "-o", dest, src],
                                   capture_output=True, text=True)
                if r.returncode:
                    raise OSError((r.stderr or r.stdout).strip().splitlines()[-1])
            for name in os.listdir(out):
                if name not in want:
                    os.remove(os.path.join(out, name))
        except OSError as e:
            self._event("sim/ served as source (mpy-cross: %s)" % e)
            return
        self.frozen = out

    def _open_port(self):
        """The serial port appears (USB plugged in / board powered). Its slave
        end is set up, then closed: the relay must not hold it open, or it
        could not tell that nobody does (_Relay.port_attached)."""
        self._outer_master, slave = os.openpty()
        try:
            _set_raw(slave, isig=False)
            self.pty = os.ttyname(slave)
        finally:
            os.close(slave)
        os.set_blocking(self._outer_master, False)
        try:
            if os.path.islink(self.link) or os.path.exists(self.link):
                os.remove(self.link)
            os.symlink(self.pty, self.link)
            self.port = self.link
        except OSError as e:
            self._event("cannot make the link %s: %s" % (self.link, e))
            self.port = self.pty

    def _close_port(self):
        """The serial port disappears (power cut): an open connection breaks."""
        if self._outer_master is not None:
            try:
                os.close(self._outer_master)
            except OSError:
                pass
        self._outer_master = None
        try:
            if os.path.islink(self.link) and os.readlink(self.link) == self.pty:
                os.remove(self.link)
        except OSError:
            pass

    def _flush_port_input(self):
        """Drop what waits unread in the serial port (the slave's input)."""
        try:
            fd = os.open(self.pty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except (OSError, TypeError):
            return
        try:
            termios.tcflush(fd, termios.TCIFLUSH)
        except termios.error:
            pass
        finally:
            os.close(fd)

    def _start_table(self):
        if not self.want_table:
            return
        try:
            from host_tools.simtable import TableServer
        except ImportError:
            # TODO(integration): host_tools/simtable.py not written yet.
            self._event("no simulated table (host_tools.simtable not available)")
            return
        self.table = TableServer(self.folder, self.board, lamp_names=_lamp_names(self.table_file))
        self.table.start()
        self.wire = self.table.wire_path
        self.control = self.table.control_path

    def _spawn(self, kind):
        master, slave = os.openpty()
        _set_raw(slave, isig=True)
        env = dict(os.environ)
        env.pop("MICROPYPATH", None)
        env["SICBO_VBOARD_RESET_EXIT"] = str(RESET_EXIT)
        if self.wire:
            env["SICBO_SIM_WIRE"] = self.wire
        else:
            env.pop("SICBO_SIM_WIRE", None)
        env["SICBO_SIM_RTC"] = "/" + RTC_FILE  # a path on the board's filesystem
        args = self.command + ["-X", "heapsize=%s" % self.heap, "-i", self._boot_script,
                               kind, self.fs, self.frozen]
        try:
            child = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave,
                                     cwd=self.folder, env=env, close_fds=True,
                                     start_new_session=True, preexec_fn=_take_controlling_tty)
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self.boots += 1
        return child, master


class _Relay:
    """The relay loop (one thread): owns both pty masters and the interpreter."""

    OFF, BOOT, PROMPT, HIDE, RUN = "off", "boot", "prompt", "hide", "run"

    def __init__(self, vb):
        self.vb = vb
        self.state = self.OFF
        self.kind = None
        self.child = None
        self.inner = None
        self.to_child = bytearray()
        self.to_host = bytearray()
        self.pending = bytearray()   # host input held while the board boots
        self.carry = b""             # a possible partial marker/header
        self.carry_prompt = b""      # a possible partial prompt
        self.sent_raw = False
        self.prompt_seen = False
        self.starts = []             # recent mute deaths of the interpreter
        self.child_said_nothing = False
        self.host_progress = 0.0     # when the host last took output
        self.unheard = False         # nobody reads: output dropped, no flow control
        self.attached = False        # somebody holds the serial port open
        self.poller = None           # poll object on the outer master (poll_fd)
        self.poll_fd = None
        self.pasting = False         # the host is sending code in raw-paste mode
        self.pasted_running = False  # that code runs (Ctrl-C becomes SIGINT)
        self.tail = b""              # recent output, for the REPL mode
        self.raw_mode = False
        self.nl = _NewlineFilter()

    # ---- output to the host ----
    def emit(self, data):
        if not data:
            return
        data = self.nl(data)
        self.vb.bytes_out += len(data)
        if not self.to_host:
            self.host_progress = time.monotonic()
        self.to_host += data
        window = self.tail + data
        r = window.rfind(RAW_HEADER)
        f = window.rfind(b"\n>>> ")
        if r >= 0 or f >= 0:
            self.raw_mode = r > f
        self.tail = window[-40:]

    # ---- the interpreter ----
    def spawn(self, kind):
        self.kind = kind
        self.vb._ready.clear()
        # an interpreter that cannot run at all (it dies without a byte of
        # output, again and again) turns the board off rather than busy-loop
        now = time.monotonic()
        if self.child_said_nothing:
            self.starts = [t for t in self.starts if now - t < 5] + [now]
        else:
            self.starts = []
        if len(self.starts) > 8:
            self.vb.error = "the interpreter keeps dying at start: virtual board off"
            self.vb._event(self.vb.error)
            self.state = self.OFF
            return
        try:
            self.child, self.inner = self.vb._spawn(kind)
        except OSError as e:
            self.vb.error = "cannot start the interpreter: %s" % e
            self.vb._event(self.vb.error)
            self.state = self.OFF
            return
        self.vb._child = self.child
        self.nl.binary = False
        self.pasting = self.pasted_running = False
        self.child_said_nothing = True
        self.state = self.BOOT
        self.raw_mode = kind == SOFT_RAW
        self.carry = b""
        self.to_child = bytearray()

    def kill(self):
        if self.child is None:
            return
        try:
            os.killpg(self.child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.child.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.close_inner()

    def close_inner(self):
        if self.inner is not None:
            try:
                os.close(self.inner)
            except OSError:
                pass
        self.inner = None
        self.child = None
        self.vb._child = None
        self.to_child = bytearray()

    def from_child(self, data):
        self.child_said_nothing = False
        data = self.carry + data
        self.carry = b""
        while data:
            if self.state == self.BOOT:
                i = data.find(_MARK)
                if i < 0:
                    keep = _partial_suffix(data, _MARK)
                    self.emit(data[:len(data) - keep])
                    self.carry = data[len(data) - keep:]
                    return
                j = data.find(_MARK_END, i)
                if j < 0:
                    self.emit(data[:i])
                    self.carry = data[i:]
                    return
                self.emit(data[:i])
                what = data[i + len(_MARK):j]
                data = data[j + len(_MARK_END):]
                if what == b"ready":
                    self.booted()
                elif what.startswith(b"exit:"):
                    # sys.exit() in boot.py/main.py: the unix port would go on
                    # to the REPL (-i), a board resets.
                    code = int(what[5:] or b"0")
                    self.kill()
                    self.after_exit(code)
                    return
            elif self.state in (self.PROMPT, self.HIDE) and not self.prompt_seen:
                # Wait for the REPL's first prompt; then (in the loop) for its
                # switch to a raw terminal, which flushes pending input
                # (TCSAFLUSH): only after it is the input delivered.
                window = self.carry_prompt + data
                if self.state == self.PROMPT:
                    self.emit(data)
                if PROMPT in window:
                    self.prompt_seen = True
                    self.carry_prompt = b""
                else:
                    self.carry_prompt = window[-(len(PROMPT) - 1):]
                return
            elif self.state == self.HIDE:
                # soft reset from the raw REPL: the banner is not shown, and
                # the raw REPL's header comes once \x01 reaches the REPL
                i = data.find(RAW_HEADER)
                if i < 0:
                    keep = _partial_suffix(data, RAW_HEADER)
                    self.carry = data[len(data) - keep:]
                    return
                data = data[i + len(RAW_HEADER):]
                self.emit(RAW_HEADER)
                self.go_run()
            else:
                if self.pasted_running and b"\x04>" in self.tail[-1:] + data:
                    self.pasted_running = False  # stdout \x04 stderr \x04, then the prompt
                self.emit(data)
                return

    def repl_reading(self):
        """True once the interpreter's REPL has put its terminal in raw mode."""
        try:
            return not termios.tcgetattr(self.inner)[3] & termios.ISIG
        except (termios.error, TypeError):
            return False

    def poll_start(self):
        if not self.prompt_seen or self.inner is None or not self.repl_reading():
            return
        if self.state == self.PROMPT:
            self.go_run()
        elif self.state == self.HIDE and not self.sent_raw:
            self.sent_raw = True
            self.to_child += b"\x01"

    def booted(self):
        self.carry_prompt = b""
        self.prompt_seen = False
        if self.kind == SOFT_RAW:
            self.state = self.HIDE
            self.sent_raw = False
        else:
            self.state = self.PROMPT

    def go_run(self):
        self.state = self.RUN
        self.to_child += self.pending
        self.pending = bytearray()
        self.vb._ready.set()

    def after_exit(self, code):
        """The interpreter ended by itself with `code` (returncode)."""
        if code == RESET_EXIT:
            self.vb._event("hard reset (machine.reset)")
            self.vb.hard_resets += 1
            self.spawn(POWER_ON)
        elif code < 0 and code != -signal.SIGINT:
            self.vb.crashes += 1
            self.vb._event("interpreter killed by signal %d: rebooting" % -code)
            self.spawn(POWER_ON)
        else:
            # Ctrl-D, sys.exit(), or a Ctrl-C that arrived as the interpreter
            # was leaving its code (SIGINT then has its default action): a
            # board soft-resets in all these cases
            raw = self.raw_mode
            self.vb.soft_resets += 1
            self.emit(SOFT_REBOOT)
            self.spawn(SOFT_RAW if raw else SOFT_FRIENDLY)

    def child_gone(self):
        # Read what is left, then restart the way a board would.
        if self.inner is not None:
            while True:
                try:
                    data = os.read(self.inner, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.from_child(data)
                if self.child is None:
                    return
        if self.child is None:
            return
        code = self.child.wait()
        self.close_inner()
        self.after_exit(code)

    # ---- host input ----
    def from_host(self, data):
        self.vb.bytes_in += len(data)
        self.unheard = False  # somebody is there again
        self.host_progress = time.monotonic()
        if self.state == self.OFF:
            return
        if self.state == self.RUN:
            self.track_paste(data)
            if self.pasted_running and b"\x03" in data:
                # Code sent in raw-paste mode runs with the terminal still raw
                # (the unix port does not restore ISIG for it): the relay turns
                # Ctrl-C into the SIGINT the terminal would have sent.
                self.interrupt()
                data = data.replace(b"\x03", b"")
            self.to_child += data
        elif self.state == self.BOOT and b"\x03" in data:
            # Ctrl-C interrupts boot.py/main.py at once; the rest waits for the REPL
            self.to_child += b"\x03" * data.count(b"\x03")
            self.pending += data.replace(b"\x03", b"")
        else:
            # held until the REPL reads its input: the unix port flushes pending
            # input when it switches its terminal to raw mode
            self.pending += data

    def track_paste(self, data):
        """Follows mpremote's raw-paste exchange: \\x05A\\x01 opens it, the
        host's \\x04 ends the code, which then runs until the board's \\x04>."""
        i = data.find(b"\x05A\x01")
        if i >= 0:
            self.pasting = True
            self.pasted_running = False
            data = data[i + 3:]
        if self.pasting and b"\x04" in data:
            self.pasting = False
            self.pasted_running = True

    def interrupt(self):
        if self.child is not None:
            try:
                os.killpg(self.child.pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError):
                pass

    def port_attached(self, om):
        """True while somebody holds the serial port (the outer pty's slave)
        open. The relay does not keep it open itself, so that the master
        tells: POLLHUP once its last holder closes it. Input the host sent
        just before closing is still taken."""
        if om is None:
            self.attached = False
            return False
        if self.poll_fd != om:
            self.poller = select.poll()
            self.poller.register(om, select.POLLIN)
            self.poll_fd = om
        ev = 0
        for _fd, e in self.poller.poll(0):
            ev |= e
        attached = not ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL)
        if not attached and ev & select.POLLIN:
            while True:
                try:
                    data = os.read(om, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.from_host(data)
        if attached and not self.attached:
            # A new connection (mpremote, a terminal that only reads): it
            # gets what the board prints from now on, flow-controlled.
            self.unheard = False
            self.host_progress = time.monotonic()
        self.attached = attached
        return attached

    # ---- loop ----
    def run(self):
        vb = self.vb
        try:
            while True:
                if self.handle_commands():
                    break
                om = vb._outer_master
                attached = self.port_attached(om)
                if not attached:
                    # Nobody has the serial port open: what the board prints
                    # is lost at once, as a UART's (a pty would keep it, and
                    # hold the interpreter once full). The relay cannot wait
                    # on the port's opening: it looks again at least every
                    # DETACHED_POLL s.
                    self.to_host = bytearray()
                rl = [vb._wake_r] + ([om] if attached else [])
                wl = []
                if self.inner is not None:
                    if len(self.to_host) < HOST_BACKLOG:
                        rl.append(self.inner)  # else the interpreter waits (flow control)
                    if self.to_child:
                        wl.append(self.inner)
                if self.to_host and attached:
                    wl.append(om)
                waiting = self.state in (self.PROMPT, self.HIDE) and self.prompt_seen
                timeout = 0.1 if attached or om is None else DETACHED_POLL
                try:
                    r, w, _ = select.select(rl, wl, [], 0.005 if waiting else timeout)
                except InterruptedError:
                    continue
                if waiting:
                    self.poll_start()
                if vb._wake_r in r:
                    os.read(vb._wake_r, 512)
                if om is not None and om in r:
                    try:
                        data = os.read(om, 65536)
                    except OSError:
                        data = b""
                    if data:
                        self.from_host(data)
                if self.inner is not None and self.inner in r:
                    try:
                        data = os.read(self.inner, 65536)
                    except OSError as e:
                        if e.errno not in (errno.EIO, errno.EAGAIN):
                            raise
                        data = b"" if e.errno == errno.EIO else None
                    if data:
                        self.from_child(data)
                    elif data is not None:
                        self.child_gone()
                if self.inner is not None and self.inner in w and self.to_child:
                    try:
                        n = os.write(self.inner, self.to_child)
                        del self.to_child[:n]
                    except BlockingIOError:
                        pass
                    except OSError:
                        self.to_child = bytearray()
                if om is not None and om in w and self.to_host:
                    try:
                        n = os.write(om, self.to_host)
                        del self.to_host[:n]
                        if n:
                            self.host_progress = time.monotonic()
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:  # closed in the meantime: lost
                        self.to_host = bytearray()
                if self.unheard:
                    self.to_host = bytearray()
                elif self.to_host and attached \
                        and time.monotonic() - self.host_progress > HOST_STALL:
                    # The port is open but nobody reads it (a tool stopped
                    # without closing it): what a UART sends then is lost,
                    # until the host speaks or the port is opened again.
                    # Without this the app would be held up, and the reader
                    # would first wade through everything printed meanwhile.
                    self.unheard = True
                    self.to_host = bytearray()
                    vb._flush_port_input()
                if self.child is not None and self.child.poll() is not None:
                    self.child_gone()
        except Exception as e:  # a bug in the relay: say so, leave nothing running
            vb.error = "relay failed: %r" % (e,)
            vb._event(vb.error)
            raise
        finally:
            self.kill()
            vb._stopped.set()

    def handle_commands(self):
        stop = False
        while True:
            try:
                name, done = self.vb._cmds.get_nowait()
            except queue.Empty:
                return stop
            if name == "power_cut":
                self.kill()
                self.vb._rtc_lost()
                self.state = self.OFF
                self.vb._close_port()
                self.pending = bytearray()
                self.to_host = bytearray()
                self.raw_mode = False
                self.vb._ready.clear()
            elif name == "power_on":
                if self.child is None:
                    self.raw_mode = False
                    if self.vb._outer_master is None:
                        self.vb._open_port()
                    self.spawn(POWER_ON)
                elif self.state == self.RUN:
                    self.vb._ready.set()
            elif name == "stop":
                self.kill()
                self.state = self.OFF
                stop = True
            done.set()


def _partial_suffix(data, marker):
    """Length of the longest suffix of data that is a proper prefix of marker."""
    n = min(len(marker) - 1, len(data))
    while n > 0:
        if data.endswith(marker[:n]):
            return n
        n -= 1
    return 0


def run_foreground(folder, board=None, link=None, heap=DEFAULT_HEAP, out=sys.stdout,
                   table_file=None, frozen_source=False):
    """`sicbo vboard`: start, print where to connect, run until Ctrl-C/SIGTERM."""
    stop = threading.Event()

    def log(text):
        print("vboard: %s" % text, file=sys.stderr, flush=True)

    def on_signal(signum, frame):
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    vb = VirtualBoard(folder, board=board, link=link, heap=heap, log=log, table_file=table_file,
                      frozen_source=frozen_source)
    try:
        vb.start()
        print("virtual board on %s" % vb.pty, file=out)
        print("  port link:   %s" % vb.port, file=out)
        print("  filesystem:  %s" % vb.fs, file=out)
        if vb.control:
            print("  table:       %s (control), %s (wire)" % (vb.control, vb.wire), file=out)
        else:
            print("  table:       none (host_tools.simtable not available)", file=out)
        print("  connect:     mpremote connect %s" % vb.port, file=out)
        print("Ctrl-C stops it.", file=out, flush=True)
        while not stop.wait(0.5):
            if vb.error and vb.pid is None:
                print("vboard: %s" % vb.error, file=sys.stderr)
                return 1
    finally:
        vb.stop()
        for s, h in old.items():
            signal.signal(s, h)
    return 0


__all__ = ["VirtualBoard", "RESET_EXIT", "run_foreground", "micropython_command"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_foreground(sys.argv[1] if len(sys.argv) > 1 else "build/vboard"))
