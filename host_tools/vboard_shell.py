"""The virtual board's shell: the serial port (an outer pty), the interpreter
(the unix port in an inner pty) and the relay thread between them. The REPL
framing itself (what bytes go where, when the board is ready, how it
restarts) is host_tools/vboard_repl.py; this module does the I/O it asks for.

    host tool --- outer pty (slave = the "serial port") --- Relay --- inner pty --- interpreter

* The inner pty is raw except ISIG (for Ctrl-C alone: no quit or suspend
  character): a Ctrl-C typed while code runs interrupts it (the interpreter's
  own REPL turns ISIG off while it waits for input, so an idle Ctrl-C stays a
  byte, as on a board). That switch also tells the relay that the REPL reads
  (ReplFraming.repl_reading).
* Bytes go to the interpreter only while it can take them: its REPL reads
  (ISIG off), or code runs with its SIGINT handler installed (/proc: the unix
  port has one only while code runs). In between (compiling what it was
  sent, switching between its REPLs, leaving code) a Ctrl-C would end the
  unix port, which a board never does, and other bytes would be flushed by
  the REPL's next switch to raw mode; they wait.
* Output never holds the board up when nobody listens, as a UART's: while
  nobody has the serial port open (the relay does not hold its slave end, so
  the master tells), what the board prints is dropped at once; a connection
  gets it flow-controlled (up to HOST_BACKLOG bytes waiting); a port held open
  but not read for HOST_STALL s drops it too, until the host sends something
  or the port is opened again.
* Power back after a cut while somebody held the serial port: the port
  comes back at once and the interpreter starts when that holder has opened
  it again (a terminal or the demo takes the port again as soon as it is
  there), at the latest BOOT_GRACE s later: an ESP32 takes about that long
  from power to MicroPython's first line (ROM and second-stage bootloaders),
  and without it the whole boot was printed before anybody could listen.
* An interpreter that cannot run at all (it dies without a byte of output,
  MUTE_DEATHS times in a row) turns the board off (Relay.error) rather than
  busy-loop.
"""

from __future__ import annotations

import errno
import fcntl
import os
import queue
import select
import signal
import subprocess
import termios
import threading
import time
import tty
from typing import Callable

from host_tools.vboard_repl import POWER_ON, ReplFraming

HOST_BACKLOG = 1 << 16
HOST_STALL = 1.0
# While nobody holds the serial port open, output is dropped at once (no flow
# control, no stall); the relay looks for the port's opening this often.
DETACHED_POLL = 0.02
MUTE_DEATHS = 8
BOOT_GRACE = 0.5


def set_raw(fd: int, isig: bool) -> None:
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    if isig:
        # A Ctrl-C is a SIGINT, and what follows it stays (NOFLSH), as a
        # board's UART keeps it. Ctrl-C only: 0x1c and 0x1a (mount data, say)
        # stay bytes, not SIGQUIT / SIGTSTP.
        attrs[3] |= termios.ISIG | termios.NOFLSH
        attrs[6][termios.VQUIT] = attrs[6][termios.VSUSP] = b"\0"
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def sigint_caught(pid: int) -> bool | None:
    """Whether process `pid` has a SIGINT handler installed (Linux /proc);
    None when that cannot be told."""
    try:
        with open("/proc/%d/status" % pid, "rb") as f:
            for line in f:
                if line.startswith(b"SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _take_controlling_tty() -> None:  # runs in the child between fork and exec
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class SerialPort:
    """The board's serial port: a pty whose slave is the port, and a stable
    link to it. It appears at power-on and disappears with a power cut (as a
    USB board's port does: an open connection breaks)."""

    def __init__(self, link: str, log: Callable[[str], None]):
        self.link = link
        self.log = log
        self.master: int | None = None
        self.pty: str | None = None
        self.port: str | None = None
        self._poller: select.poll | None = None

    def open(self) -> None:
        """Its slave end is set up, then closed: the relay must not hold it
        open, or it could not tell that nobody does (attached)."""
        master, slave = os.openpty()
        try:
            set_raw(slave, isig=False)
            self.pty = os.ttyname(slave)
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self.master = master
        self._poller = select.poll()
        self._poller.register(master, select.POLLIN)
        try:
            if os.path.islink(self.link) or os.path.exists(self.link):
                os.remove(self.link)
            os.symlink(self.pty, self.link)
            self.port = self.link
        except OSError as e:
            self.log("cannot make the link %s: %s" % (self.link, e))
            self.port = self.pty

    def close(self) -> None:
        if self.master is not None:
            try:
                os.close(self.master)
            except OSError:
                pass
        self.master = None
        self._poller = None
        try:
            if os.path.islink(self.link) and os.readlink(self.link) == self.pty:
                os.remove(self.link)
        except OSError:
            pass

    def hung_up(self) -> tuple[bool, bool]:
        """(nobody holds the port open, input waits): POLLHUP once its last
        holder closed it."""
        if self._poller is None:
            return True, False
        ev = 0
        for _fd, e in self._poller.poll(0):
            ev |= e
        return bool(ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL)), \
            bool(ev & select.POLLIN)

    def flush_input(self) -> None:
        """Drop what waits unread in the serial port (the slave's input)."""
        if self.pty is None:
            return
        try:
            fd = os.open(self.pty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return
        try:
            termios.tcflush(fd, termios.TCIFLUSH)
        except termios.error:
            pass
        finally:
            os.close(fd)


class Interpreter:
    """How to start the unix port: `args(kind)` gives its command line."""

    def __init__(self, command: list[str], args: Callable[[str], list[str]],
                 env: Callable[[], dict[str, str]], cwd: str):
        self.command = command
        self.args = args
        self.env = env
        self.cwd = cwd

    def spawn(self, kind: str) -> tuple[subprocess.Popen[bytes], int]:
        master, slave = os.openpty()
        set_raw(slave, isig=True)
        try:
            child = subprocess.Popen(self.command + self.args(kind), stdin=slave, stdout=slave,
                                     stderr=slave, cwd=self.cwd, env=self.env(), close_fds=True,
                                     start_new_session=True,
                                     preexec_fn=_take_controlling_tty)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        return child, master


class Relay:
    """The relay loop (one thread): owns the serial port's master, the
    interpreter and its pty, and the ReplFraming between them.

    Commands (any thread): command("power_cut" | "port_on" | "power_on" |
    "watchdog" | "stop", wait). Hooks: log(text); on_start(why) before each start of the
    interpreter, why being "power-on", "hard", "crash", "soft" or "watchdog"
    (the virtual board tells the table the reset cause). Counters: boots,
    crashes, hard_resets, soft_resets, watchdog_resets, bytes_in, bytes_out;
    error (why the board turned itself off); ready (an Event: the REPL reads).
    """

    def __init__(self, port: SerialPort, interpreter: Interpreter,
                 log: Callable[[str], None], on_start: Callable[[str], None],
                 on_power_cut: Callable[[], None]):
        self.port = port
        self.interpreter = interpreter
        self.log = log
        self.on_start = on_start
        self.on_power_cut = on_power_cut
        self.framing = ReplFraming()
        self.ready = threading.Event()
        self.stopped = threading.Event()
        self.error: str | None = None
        self.boots = self.crashes = self.hard_resets = self.soft_resets = 0
        self.watchdog_resets = 0
        self.bytes_in = 0    # bytes the host sent to the board (its serial RX)
        self.bytes_out = 0   # bytes the board sent to the host
        self.child: subprocess.Popen[bytes] | None = None
        self.inner: int | None = None
        self.to_child = bytearray()
        self.to_host = bytearray()
        self._cmds: queue.Queue[tuple[str, threading.Event]] = queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._mute_deaths = 0            # starts in a row that ended without a byte
        self._said_nothing = False
        self._host_progress = 0.0        # when the host last took output
        self._unheard = False            # nobody reads: output dropped
        self._attached = False           # somebody holds the serial port open
        self._interrupt_due = False      # a SIGINT waits for the handler to be installed
        self._held_at_cut = False        # somebody held the port when the power went
        self._boot_due: float | None = None  # power is back: start by then (BOOT_GRACE)

    # ---- from other threads ---------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="vboard-relay", daemon=True)
        self._thread.start()

    def command(self, name: str, wait: bool = True, timeout: float | None = None) -> bool:
        """Queue a command for the relay's thread and, with wait, wait until it
        was carried out (or the thread ended, or timeout s passed): whether it
        was carried out."""
        done = threading.Event()
        self._cmds.put((name, done))
        try:
            os.write(self._wake_w, b"!")
        except (OSError, TypeError):
            return False
        t = self._thread
        if wait and t is not None and t is not threading.current_thread():
            deadline = None if timeout is None else time.monotonic() + timeout
            while t.is_alive() and not done.wait(0.05):
                if deadline is not None and time.monotonic() >= deadline:
                    break
        return done.is_set()

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    @property
    def pid(self) -> int | None:
        c = self.child
        return c.pid if c is not None and c.poll() is None else None

    # ---- the interpreter ----------------------------------------------------
    def spawn(self, kind: str, why: str) -> None:
        self.ready.clear()
        # Counted in a row, not per second: a loaded host slows the deaths
        # down, and every interpreter that runs prints the boot markers.
        self._mute_deaths = self._mute_deaths + 1 if self._said_nothing else 0
        if self._mute_deaths > MUTE_DEATHS:
            self._off("the interpreter keeps dying at start: virtual board off")
            return
        self.on_start(why)
        try:
            self.child, self.inner = self.interpreter.spawn(kind)
        except OSError as e:
            self._off("cannot start the interpreter: %s" % e)
            return
        self.boots += 1
        self._said_nothing = True
        self.to_child = bytearray()
        self._interrupt_due = False
        self.framing.started(kind)

    def _off(self, why: str) -> None:
        self.error = why
        self.log(why)
        self.framing.off()

    def kill(self) -> None:
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

    def close_inner(self) -> None:
        if self.inner is not None:
            try:
                os.close(self.inner)
            except OSError:
                pass
        self.inner = None
        self.child = None
        self.to_child = bytearray()

    def interrupt(self) -> None:
        """SIGINT for code sent in raw-paste mode, once the interpreter has
        its handler (it compiles that code first); dropped if the code ends
        before."""
        self._interrupt_due = True
        self._deliver_interrupt()

    def _deliver_interrupt(self) -> None:
        c = self.child
        if c is None or not self.framing.pasted_running:
            self._interrupt_due = False
            return
        if sigint_caught(c.pid) is False:
            return
        self._interrupt_due = False
        try:
            os.killpg(c.pid, signal.SIGINT)
        except (ProcessLookupError, PermissionError):
            pass

    def takes_input(self) -> bool:
        """The interpreter can take bytes now (module docstring): its REPL
        reads, or code runs with its SIGINT handler installed."""
        c = self.child
        if c is None or self.repl_reading():
            return c is not None
        return sigint_caught(c.pid) is not False

    def repl_reading(self) -> bool:
        """True once the interpreter's REPL has put its terminal in raw mode."""
        if self.inner is None:
            return False
        try:
            return not termios.tcgetattr(self.inner)[3] & termios.ISIG
        except termios.error:
            return False

    # ---- framing <-> I/O ------------------------------------------------------
    def _pump_framing(self) -> None:
        """Carry out what the framing asked for."""
        f = self.framing
        while True:
            out = f.take_host()
            if out:
                self.bytes_out += len(out)
                if not self.to_host:
                    self._host_progress = time.monotonic()
                self.to_host += out
            self.to_child += f.take_child()
            actions = f.take_actions()
            if not actions:
                return
            for a in actions:
                if a[0] == "ready":
                    self.ready.set()
                elif a[0] == "interrupt":
                    self.interrupt()
                elif a[0] == "kill":
                    self.kill()
                    f.child_exited(a[1])
                elif a[0] == "restart":
                    _, kind, why = a
                    if why == "hard":
                        self.hard_resets += 1
                        self.log("hard reset (machine.reset)")
                    elif why == "crash":
                        self.crashes += 1
                        self.log("interpreter killed by a signal: rebooting")
                    else:
                        self.soft_resets += 1
                    self.spawn(kind, why)

    def from_child(self, data: bytes) -> None:
        self._said_nothing = False
        self.framing.child_output(data)
        self._pump_framing()

    def from_host(self, data: bytes) -> None:
        self.bytes_in += len(data)
        self._unheard = False  # somebody is there again
        self._host_progress = time.monotonic()
        self.framing.host_input(data)
        self._pump_framing()

    def child_gone(self) -> None:
        # Read what is left, then restart the way a board would.
        child = self.child
        while self.inner is not None:
            try:
                data = os.read(self.inner, 65536)
            except OSError:
                break
            if not data:
                break
            self.from_child(data)
            if self.child is not child:
                return
        if self.child is None or self.child is not child:
            return
        code = child.wait()
        self.close_inner()
        self.framing.child_exited(code)
        self._pump_framing()

    def port_attached(self) -> bool:
        """True while somebody holds the serial port (the outer pty's slave)
        open. Input the host sent just before closing is still taken."""
        om = self.port.master
        if om is None:
            self._attached = False
            return False
        hup, pending = self.port.hung_up()
        attached = not hup
        if not attached and pending:
            while True:
                try:
                    data = os.read(om, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.from_host(data)
        if attached and not self._attached:
            # A new connection: it gets what the board prints from now on.
            self._unheard = False
            self._host_progress = time.monotonic()
        self._attached = attached
        return attached

    # ---- loop -------------------------------------------------------------------
    def run(self) -> None:
        try:
            while True:
                if self.handle_commands():
                    break
                self.step()
        except Exception as e:  # a bug in the relay: say so, leave nothing running
            self.error = "relay failed: %r" % (e,)
            self.log(self.error)
            raise
        finally:
            self.kill()
            self.stopped.set()

    def step(self) -> None:
        om = self.port.master
        attached = self.port_attached()
        if self._boot_due is not None and (attached or time.monotonic() >= self._boot_due):
            self._boot_due = None
            self._held_at_cut = False
            self.spawn(POWER_ON, "power-on")
        if not attached:
            # Nobody has the serial port open: what the board prints is lost
            # at once, as a UART's. The relay cannot wait on the port's
            # opening: it looks again at least every DETACHED_POLL s.
            self.to_host = bytearray()
        rl = [self._wake_r] + ([om] if attached and om is not None else [])
        wl = []
        # Bytes or a SIGINT that wait for the interpreter to take them: look
        # again soon (as for the REPL's switch to raw, a state the
        # interpreter shows only through its terminal and /proc).
        holding = self._interrupt_due
        if self.inner is not None:
            if len(self.to_host) < HOST_BACKLOG:
                rl.append(self.inner)  # else the interpreter waits (flow control)
            if self.to_child:
                if self.takes_input():
                    wl.append(self.inner)
                else:
                    holding = True
        if self.to_host and attached and om is not None:
            wl.append(om)
        waiting = self.framing.waiting_for_repl or holding or self._boot_due is not None
        timeout = 0.1 if attached or om is None else DETACHED_POLL
        try:
            r, w, _ = select.select(rl, wl, [], 0.005 if waiting else timeout)
        except InterruptedError:
            return
        if self.framing.waiting_for_repl and self.repl_reading():
            self.framing.repl_reading()
            self._pump_framing()
        if self._interrupt_due:
            self._deliver_interrupt()
        if self._wake_r in r:
            os.read(self._wake_r, 512)
        if om is not None and om in r:
            try:
                data = os.read(om, 65536)
            except OSError:
                data = b""
            if data:
                self.from_host(data)
        if self.inner is not None and self.inner in r:
            got: bytes | None
            try:
                got = os.read(self.inner, 65536)
            except OSError as e:
                if e.errno not in (errno.EIO, errno.EAGAIN):
                    raise
                got = b"" if e.errno == errno.EIO else None
            if got:
                self.from_child(got)
            elif got is not None:
                self.child_gone()
        if self.inner is not None and self.inner in w and self.to_child:
            try:
                n = os.write(self.inner, self.to_child)
                del self.to_child[:n]
            except BlockingIOError:
                pass
            except OSError:
                self.to_child = bytearray()
        om = self.port.master
        if om is not None and om in w and self.to_host:
            try:
                n = os.write(om, self.to_host)
                del self.to_host[:n]
                if n:
                    self._host_progress = time.monotonic()
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:  # closed in the meantime: lost
                self.to_host = bytearray()
        if self._unheard:
            self.to_host = bytearray()
        elif self.to_host and attached \
                and time.monotonic() - self._host_progress > HOST_STALL:
            # The port is open but nobody reads it (a tool stopped without
            # closing it): what a UART sends then is lost, until the host
            # speaks or the port is opened again. Without this the app would
            # be held up, and the reader would first wade through everything
            # printed meanwhile.
            self._unheard = True
            self.to_host = bytearray()
            self.port.flush_input()
        if self.child is not None and self.child.poll() is not None:
            self.child_gone()

    def handle_commands(self) -> bool:
        stop = False
        while True:
            try:
                name, done = self._cmds.get_nowait()
            except queue.Empty:
                return stop
            if name == "power_cut":
                # a cut while the board waited for its holder keeps that holder
                self._held_at_cut = self.port_attached() or (
                    self._boot_due is not None and self._held_at_cut)
                self._boot_due = None
                self.kill()
                self.framing.off()
                self.port.close()
                self.to_host = bytearray()
                self.ready.clear()
                self.on_power_cut()
            elif name == "port_on":  # the serial port back, the board not started yet
                if self.child is None and self.port.master is None:
                    self.port.open()
            elif name == "power_on":
                if self.child is None and self._boot_due is None:
                    if self.port.master is None:
                        self.port.open()
                    self.error = None
                    self._mute_deaths = 0
                    if self._held_at_cut and not self.port_attached():
                        self._boot_due = time.monotonic() + BOOT_GRACE
                    else:
                        self.spawn(POWER_ON, "power-on")
                elif self.framing.running:
                    self.ready.set()
            elif name == "watchdog":
                # The table saw the watchdog run out: the chip resets. Output
                # in flight is lost, as at any reset.
                if self.child is not None:
                    self.kill()
                    self.framing.off()
                    self.to_host = bytearray()
                    self.watchdog_resets += 1
                    self.log("watchdog reset")
                    self.spawn(POWER_ON, "watchdog")
            elif name == "stop":
                self._boot_due = None
                self.kill()
                self.framing.off()
                stop = True
            done.set()
