"""The virtual board: the real MicroPython unix port behind a pseudo-terminal.

mpremote (unmodified) talks to it exactly as to an ESP32 on a USB serial port:

    host tool --- outer pty (slave = the "serial port") --- relay --- inner pty --- interpreter

In parts:

* host_tools/vboard_repl.py, ``ReplFraming``: what makes the unix port's
  console a board's (raw REPL, raw-paste, soft reset, Ctrl-C, ``\\n`` ->
  ``\\r\\n``, input held while it boots). Pure: bytes in, bytes and actions out.
* host_tools/vboard_shell.py: the serial port (``SerialPort``), the
  interpreter's process and pty (``Interpreter``), and the relay thread
  (``Relay``) that does the framing's I/O.
* sim/vboard_boot.py: the board-side boot script, run by the interpreter at
  every start, and sim/_sim_vfs.py, the root it mounts (loaded compiled, or
  frozen in): mounts the board folder as ``/`` (file sizes in listings, as a
  board's; ``rename`` of absolute paths fixed), serves sim/ compiled by
  mpy-cross read-only at ``/.frozen`` and the simulator's own state (the RTC)
  at ``/.vboard``, neither listed in ``/``; sets ``sys.path`` to
  ``['', '.frozen', '/lib']`` (plus ``'/.frozen'`` when sim/ is served) and
  ``sys.argv`` to ``[]``; runs ``boot.py`` and, unless this is a raw-REPL soft
  reset, ``main.py``; then the REPL starts. A Ctrl-C from the host interrupts
  boot.py/main.py and never ends the interpreter, whenever it comes (the
  framing and the boot script agree on when it may become a SIGINT).
* this module, ``VirtualBoard``: the board's life (power on, power cut,
  stop), its files, and the simulated table (host_tools/simtable.py).

Resets, as on an ESP32:

* Soft reset: the unix port exits on Ctrl-D (or ``sys.exit()``); the board
  prints ``MPY: soft reboot`` and starts again (raw REPL without main.py if it was in the raw
  REPL, friendly REPL after main.py otherwise). ``reset_cause()``: SOFT_RESET.
* Hard reset: ``machine.reset()`` of sim/machine.py ends the interpreter with
  exit status ``RESET_EXIT`` (given to it as ``SICBO_VBOARD_RESET_EXIT``); the
  relay restarts it as at power-on (boot.py, then main.py). A crash of the
  interpreter (killed by a signal) is treated the same way, as a board's
  panic reboot (SOFT_RESET, as the ESP32 reports a panic); an interpreter
  that cannot run at all turns the board off (reported). As on a board, bytes
  sent while it resets are lost: after ``mpremote reset``, wait for the
  reboot (``hard_resets`` counts them).
* Watchdog: the simulated ``machine.WDT`` tells the table when it is armed
  and fed (wire frame ``W``); the table runs it on wall time and, when it
  runs out, the relay kills the interpreter and starts it as at power-on,
  with ``reset_cause()`` WDT_RESET (``watchdog_resets`` counts them). A board
  stuck at its REPL with the watchdog armed resets, as an ESP32 does.
* Power cut (``power_cut()``, or ``power_cut`` on the table's control
  socket): the interpreter is killed, the RTC is lost and the serial port
  disappears (as a USB board's does: an open connection breaks, the link is
  removed) until ``power_on()``, which brings a new pty behind the same link;
  ``reset_cause()`` is then PWRON_RESET.

The host process also owns the simulated table (``TableServer``): it listens
on ``wire.sock`` and ``control.sock`` in the run folder and survives the
interpreter's restarts, as a table survives a board reset. The interpreter
finds it through ``SICBO_SIM_WIRE``.

Run folder layout (``--folder``): ``fs/`` the board's filesystem, ``tty`` a
stable link to the serial port, ``wire.sock``/``control.sock``, ``frozen/``
(sim/ as .mpy, unless the interpreter has it frozen in), ``state/`` (the
simulated RTC: survives resets, deleted at power-on and on a power cut; and
``partition.bin``, a link to the image the board runs, which sim/esp32.py's
running partition serves: the interpreter's binary, so on the VM with the
firmware frozen in the frozen firmware, unless ``partition=`` names another
file).

The heap is the board's (host_tools/heaps.py ``board_heap``): 111936 bytes on
a 32-bit interpreter, the measured 64-bit equivalent (240k) on the pip
64-bit port. ``SICBO_MICROPYTHON`` names the interpreter. When it has sim/
frozen in (``_sim_wire`` imports from ``.frozen`` alone), sim/ is not served.

Differences from an ESP32 that remain: ``sys.path`` ends with ``/.frozen``
when sim/ is served (the frozen-module entry ``.frozen`` cannot name a
folder); ``os.stat('/.frozen')`` answers; no ROM boot messages; the
interpreter runs at the host's speed; a soft reset disarms the watchdog.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable

from host_tools import REPO
from host_tools.vboard_repl import POWER_ON, RESET_EXIT, SOFT_FRIENDLY, SOFT_RAW
from host_tools.vboard_shell import Interpreter, Relay, SerialPort

SIM_DIR = os.path.join(REPO, "sim")
BOOT_SCRIPT = os.path.join(SIM_DIR, "vboard_boot.py")
DEFAULT_BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
RTC_FILE = "rtc"  # in <folder>/state: the simulated RTC's offset from the host clock
NET_FILE = "network"  # in <folder>/state: the network's state, for sim/network.py
PARTITION_FILE = "partition.bin"  # in <folder>/state: a link to the image the board runs
STATE_MOUNT = "/.vboard"  # where the interpreter sees <folder>/state
NOT_FROZEN = ("vboard_boot.py",)  # sim/ files that are host tooling, not the board's modules
STOP_WAIT = 20  # s the relay may take to carry out "stop" before the interpreter is killed

__all__ = ["VirtualBoard", "RESET_EXIT", "POWER_ON", "SOFT_FRIENDLY", "SOFT_RAW",
           "run_foreground", "micropython_command", "default_heap", "has_frozen_sim"]


def micropython_command() -> list[str]:
    """The unix port's command: $SICBO_MICROPYTHON, or the venv's console script."""
    env = os.environ.get("SICBO_MICROPYTHON")
    if env:
        # a relative path names a file from here, not from the run folder
        return [os.path.abspath(env) if os.sep in env else env]
    exe = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(exe):
        return [exe]
    found = shutil.which("micropython")
    if found:
        return [found]
    raise RuntimeError("the MicroPython unix port (micropython) is not installed")


def default_heap(command: list[str] | None = None) -> str:
    """The board's heap on this interpreter (host_tools/heaps.py)."""
    from host_tools.heaps import HEAP_64_EQUIVALENT, board_heap

    try:
        return board_heap((command or micropython_command())[0])
    except (OSError, subprocess.SubprocessError):
        return HEAP_64_EQUIVALENT  # it cannot run: start() says so


@functools.lru_cache(maxsize=None)
def _frozen_probe(command: tuple[str, ...]) -> bool:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MICROPYPATH", "SICBO_SIM_WIRE", "SICBO_SIM_RTC")}
    with tempfile.TemporaryDirectory(prefix="sicbo-probe-") as empty:
        try:
            r = subprocess.run(list(command) + [
                "-c", "import sys; sys.path[:] = ['.frozen']; import _sim_wire, _sim_vfs; "
                      "print('frozen', 'machine' in sys.modules)"],
                capture_output=True, text=True, timeout=30, cwd=empty, env=env)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return r.returncode == 0 and r.stdout.strip() == "frozen True"


def has_frozen_sim(command: list[str]) -> bool:
    """True when this interpreter has the simulated machine frozen in: its
    `_sim_wire` (and the `machine` it imports) and the virtual board's
    `_sim_vfs` load from `.frozen` alone, with no file on sys.path, from an
    empty folder. (A build older than _sim_vfs gets sim/ served.)"""
    exe = command[0]
    if os.sep in exe:
        exe = os.path.abspath(exe)
    return _frozen_probe((exe,) + tuple(command[1:]))


def _load_board(board: Any) -> dict[str, Any]:
    if isinstance(board, dict):
        return board
    from host_tools import jsonfile

    # Bounded, UTF-8, JSON with no key twice: one line, never a traceback.
    return jsonfile.load(board or DEFAULT_BOARD, jsonfile.BOARD_MAX, "board file")[1]


def _lamp_names(table: str | None) -> list[str | None] | None:
    """The table's lamp_order (channel names) for the simulated table, or None."""
    if not table:
        return None
    from host_tools.rules import load_table

    return list(load_table(table)[0].lamp_order)


class VirtualBoard:
    """A virtual ESP32: the unix port behind a pty, plus the simulated table.

        with VirtualBoard(folder) as vb:
            subprocess.run(["mpremote", "connect", vb.port, "exec", "print(1)"])

    Attributes after start(): ``port`` (the stable link, or the pty path),
    ``pty`` (/dev/pts/N), ``fs`` (the board's filesystem folder), ``control``
    and ``wire`` (the table's sockets, None without a table), ``heap``,
    ``frozen_in`` (the interpreter has sim/ frozen in), and the counters
    ``boots`` (interpreter starts so far), ``pid`` (the interpreter's, None
    when off), ``bytes_in``/``bytes_out`` (serial traffic from/to the host),
    ``hard_resets``/``soft_resets``/``crashes``/``watchdog_resets``, ``error``.
    """

    def __init__(self, folder: str, board: Any = None, link: str | None = None,
                 heap: str | None = None, frozen: str | None = SIM_DIR, table: bool = True,
                 log: Callable[[str], None] | None = None, command: list[str] | None = None,
                 table_file: str | None = None, frozen_source: bool = False,
                 broker: tuple[str, int] | None = None, partition: str | None = None):
        self.folder = os.path.abspath(folder)
        self.fs = os.path.join(self.folder, "fs")
        self.state_dir = os.path.join(self.folder, "state")
        self.link = os.path.abspath(link) if link else os.path.join(self.folder, "tty")
        self.board = _load_board(board)
        self.command = list(command or micropython_command())
        if os.sep in self.command[0]:  # it runs from the run folder
            self.command[0] = os.path.abspath(self.command[0])
        self.heap = heap or default_heap(self.command)
        self.frozen_src = frozen if frozen and os.path.isdir(frozen) else ""
        self.frozen = self.frozen_src
        self.frozen_source = frozen_source
        self.partition = os.path.abspath(partition) if partition else None
        self.frozen_in = False
        self.want_table = table
        self.table_file = table_file
        self.log = log  # callable(str) for events, or None
        self.control: str | None = None
        self.wire: str | None = None
        self.table: Any = None
        self._port = SerialPort(self.link, self._event)
        self._relay: Relay | None = None
        self._counts: dict[str, int] = {}
        self.broker = broker  # (host, port): the board's network leads there
        self.network: Any = None  # its relay (host_tools/simnet.py)

    # -- public API ---------------------------------------------------------
    @property
    def rtc_file(self) -> str:
        """Where the simulated RTC survives resets (not power cuts): a file of
        the simulator's own (the interpreter sees it as /.vboard/rtc, not in
        the board's filesystem), deleted at power-on and on a power cut."""
        return os.path.join(self.state_dir, RTC_FILE)

    @property
    def port(self) -> str | None:
        return self._port.port

    @property
    def pty(self) -> str | None:
        return self._port.pty

    def _count(self, name: str) -> int:
        r = self._relay
        return getattr(r, name) if r is not None else self._counts.get(name, 0)

    # The relay's counters, kept after stop().
    boots = property(lambda self: self._count("boots"))
    crashes = property(lambda self: self._count("crashes"))
    hard_resets = property(lambda self: self._count("hard_resets"))
    soft_resets = property(lambda self: self._count("soft_resets"))
    watchdog_resets = property(lambda self: self._count("watchdog_resets"))
    bytes_in = property(lambda self: self._count("bytes_in"))
    bytes_out = property(lambda self: self._count("bytes_out"))

    @property
    def error(self) -> str | None:
        return self._relay.error if self._relay is not None else None

    @property
    def console_state(self) -> str:
        """Where the board's console is (ReplFraming): off, start, boot,
        prompt, hide (waiting for the REPL), run (the REPL or code runs)."""
        return self._relay.framing.state if self._relay is not None else "off"

    @property
    def pid(self) -> int | None:
        return self._relay.pid if self._relay is not None else None

    def start(self, timeout: float = 10) -> VirtualBoard:
        os.makedirs(self.fs, exist_ok=True)
        os.makedirs(self.state_dir, exist_ok=True)
        self._rtc_lost()  # power-on: an ESP32 without a battery has no time yet
        self._link_partition()
        self._freeze()
        self._start_table()
        self._start_network()
        self._port.open()
        interp = Interpreter(self.command, self._args, self._env, self.folder)
        self._relay = Relay(self._port, interp, self._event, self._on_start, self._rtc_lost)
        self._relay.start()
        self._relay.command("power_on")
        if timeout:
            self.wait_ready(timeout)
        if self.error:
            err = self.error
            self.stop()
            raise RuntimeError(err)
        return self

    def wait_ready(self, timeout: float = 10) -> bool:
        """Wait until the interpreter has finished booting (boot.py, main.py
        if it returns) and its REPL is up. Returns False on timeout."""
        r = self._relay
        if r is None:
            return False
        end = time.monotonic() + timeout
        while not r.ready.wait(min(0.05, max(0.0, end - time.monotonic()))):
            if r.error or time.monotonic() >= end:
                return False
        return True

    def power_cut(self) -> None:
        """Kill the interpreter abruptly, as a power cut: nothing is flushed,
        the RTC is lost, the serial port disappears until power_on()."""
        if self._relay is not None:
            self._relay.command("power_cut")

    def power_on(self, timeout: float = 10,
                 before_boot: Callable[[], None] | None = None) -> None:
        """Start the interpreter again as at power-on (boot.py, main.py);
        nothing if it runs. before_boot() runs once the serial port is back
        and before the interpreter starts (a terminal opened then reads the
        whole boot: output with nobody attached is lost)."""
        if self._relay is None:
            return
        self._relay.ready.clear()
        if before_boot is not None:
            self._relay.command("port_on")
            before_boot()
        self._relay.command("power_on")
        if timeout:
            self.wait_ready(timeout)

    def restart(self, timeout: float = 10) -> None:
        """A power cycle: power_cut() then power_on()."""
        self.power_cut()
        self.power_on(timeout)

    @property
    def powered(self) -> bool:
        return self._port.master is not None

    def stop(self) -> None:
        if self._relay is None:
            return
        if not self._relay.command("stop", timeout=STOP_WAIT):
            # The relay's thread is held up (a loaded host, a blocked write):
            # the interpreter must not outlive the board that ran it.
            self._event("the relay did not stop within %d s: interpreter killed" % STOP_WAIT)
            self._relay.kill()
        self._relay.join(10)
        self._counts = {n: getattr(self._relay, n) for n in (
            "boots", "crashes", "hard_resets", "soft_resets", "watchdog_resets", "bytes_in",
            "bytes_out")}
        self._relay = None
        self._port.close()
        if self.network is not None:
            self.network.stop()
            self.network = None
        if self.table is not None:
            try:
                self.table.stop()
            finally:
                self.table = None

    def __enter__(self) -> VirtualBoard:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals ----------------------------------------------------------
    def _event(self, text: str) -> None:
        if self.log:
            self.log(text)

    def _rtc_lost(self) -> None:
        try:
            os.remove(self.rtc_file)
        except OSError:
            pass

    def image(self) -> str | None:
        """The image the board runs, which its running partition serves
        (sim/esp32.py): the partition= file, else the interpreter's binary."""
        if self.partition:
            return self.partition
        found = self.command[0] if os.sep in self.command[0] else shutil.which(self.command[0])
        if found is None:
            return None
        exe: str = found
        try:
            with open(exe, "rb") as f:
                script = f.read(2) == b"#!"
        except OSError:
            return exe
        if script:
            # The pip port's launcher: its VM is the extension module it runs.
            import importlib.util

            spec = importlib.util.find_spec("micropython_run")
            if spec is not None and spec.origin:
                return spec.origin
        return exe

    def _link_partition(self) -> None:
        link = os.path.join(self.state_dir, PARTITION_FILE)
        if os.path.lexists(link):
            os.remove(link)
        target = self.image()
        if target:
            os.symlink(os.path.abspath(target), link)

    def _on_start(self, why: str) -> None:
        """Before each start of the interpreter: the reset cause it will read.
        A hard reset and a watchdog reset were told to the table by the board
        (wire frame R) or by the table's own watchdog."""
        if self.table is None:
            return
        cause = {"power-on": "power-on", "soft": "soft", "crash": "soft"}.get(why)
        if cause:
            self.table.set_next_reset_cause(cause)

    def _on_watchdog(self) -> None:
        """The table's watchdog ran out (its thread: do not wait)."""
        if self._relay is not None:
            self._relay.command("watchdog", wait=False)

    def _args(self, kind: str) -> list[str]:
        return ["-X", "heapsize=%s" % self.heap, "-i", BOOT_SCRIPT, kind, self.fs,
                self.frozen, self.state_dir]

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("MICROPYPATH", None)
        # Without HOME the unix port neither loads ~/.micropython.history into
        # the heap at each start nor writes to it: a board's REPL history is
        # in RAM and gone at a reset. The file is the host's, shared by every
        # virtual board and every run: its lines (up to 4 KB seen) took heap
        # that a board has, by whatever ran before.
        env.pop("HOME", None)
        env["SICBO_VBOARD_RESET_EXIT"] = str(RESET_EXIT)
        if self.wire:
            env["SICBO_SIM_WIRE"] = self.wire
        else:
            env.pop("SICBO_SIM_WIRE", None)
        env["SICBO_SIM_RTC"] = STATE_MOUNT + "/" + RTC_FILE
        if self.network is not None:
            env["SICBO_SIM_NET"] = STATE_MOUNT + "/" + NET_FILE
        else:
            env.pop("SICBO_SIM_NET", None)
        env["SICBO_SIM_PARTITION"] = STATE_MOUNT + "/" + PARTITION_FILE
        return env

    def _start_network(self) -> None:
        """The board's network: a relay to the broker (host_tools/simnet.py)
        that sim/network.py routes the board's connections to; the table's
        control socket drops and restores it (network_down, network_up)."""
        if self.broker is None or self.network is not None:
            return
        from host_tools.simnet import NetRelay

        self.network = NetRelay(self.broker[0], self.broker[1],
                                os.path.join(self.state_dir, NET_FILE)).start()
        if self.table is not None:
            self.table.network = self.network

    def _freeze(self) -> None:
        """sim/ as the board's frozen modules: precompiled bytecode (.mpy) in
        <folder>/frozen, as frozen code is compiled before it reaches a board
        (compiling sim/machine.py inside an ESP32-sized VM would cost heap a
        board never spends). Only what changed is compiled; sources if that
        fails or if frozen_source is set. Nothing when the interpreter has
        sim/ frozen in already."""
        if not self.frozen_src:
            return
        if has_frozen_sim(self.command):
            self.frozen_in = True
            self.frozen = ""
            self._event("sim/ is frozen into %s: not served" % self.command[0])
            return
        if self.frozen_source:
            return
        from host_tools.deploy import mpy_cross_exe

        out = os.path.join(self.folder, "frozen")
        os.makedirs(out, exist_ok=True)
        want = set()
        try:
            for name in sorted(os.listdir(self.frozen_src)):
                if not name.endswith(".py") or name in NOT_FROZEN:
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

    def _start_table(self) -> None:
        if not self.want_table:
            return
        from host_tools.simtable import TableServer

        self.table = TableServer(self.folder, self.board,
                                 lamp_names=_lamp_names(self.table_file))
        self.table.power = self
        self.table.on_watchdog = self._on_watchdog
        self.table.start()
        self.wire = self.table.wire_path
        self.control = self.table.control_path


def run_foreground(folder, board=None, link=None, heap=None, out=sys.stdout,
                   table_file=None, frozen_source=False, broker=None):
    """`sicbo vboard`: start, print where to connect, run until Ctrl-C/SIGTERM."""
    stop = threading.Event()

    def log(text):
        print("vboard: %s" % text, file=sys.stderr, flush=True)

    def on_signal(signum, frame):
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    vb = VirtualBoard(folder, board=board, link=link, heap=heap, log=log, table_file=table_file,
                      frozen_source=frozen_source, broker=broker)
    try:
        vb.start()
        print("virtual board on %s" % vb.pty, file=out)
        print("  port link:   %s" % vb.port, file=out)
        print("  filesystem:  %s" % vb.fs, file=out)
        print("  heap:        %s%s" % (vb.heap, " (sim/ frozen in)" if vb.frozen_in else ""),
              file=out)
        if vb.control:
            print("  table:       %s (control), %s (wire)" % (vb.control, vb.wire), file=out)
        if vb.network is not None:
            print("  network:     %s -> broker %s:%d" % (vb.network.address, *vb.broker),
                  file=out)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_foreground(sys.argv[1] if len(sys.argv) > 1 else "build/vboard"))
