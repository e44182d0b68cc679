"""What the board says it is doing, read from its serial port: the one place
where the host parses the board's start-up lines (deploy, diag, the demo and
`sicbo console` all use it).

The device lines it reads (device/appboot.py, device/shell.py). A boot ends
its start-up with exactly one of these:

    sicbo: <table name>, round N, state S    the table runs (S: sicbo.events
                                             ST_*, a number, or its name)
    sicbo: configuration refused, table not started: FIELD: why
    sicbo: table approval REF is effective from DATE only: table not started
    sicbo: RTC not set and the journal does not show table approval REF in force: ...
    sicbo: recovery mode (confirm key held at power-on): app not started
    sicbo: OUT OF SERVICE after N failed boots (last: ...). Outputs are off.

(and, from MicroPython rather than the firmware: a traceback, the app stopped
by an exception nothing contained; the REPL's banner, nothing runs) or with
one that the board follows with a reset of its own (another boot, another
line, follows):

    sicbo: FAULT in stage N: <exception>
    sicbo: configuration checked and kept in PATH: restarting

Every other line (``sicbo: board warning: ...``, ``sicbo: RTC not set: journal
records carry no wall-clock time``, journal records ``J <hex>``, dealer
messages ``D <code> <detail>``, the REPL) says nothing about the state here.

`Console` holds the port (host_tools/portlock.py: the lock file and an
exclusive open) to type on it and read its lines; `reset_and_read` resets the
board by typing ``machine.reset()`` at its REPL, with the clock set first, and
reads the boot that follows; `read_states` reads lines until the board has
settled (a line of the first group), or a deadline passes: then the host says
that it heard nothing it knows, never a guess. A board that keeps resetting
(a fault on every boot that never reaches out of service: its filesystem
full, the failed-boot count not written) is read no further than
MAX_FAILED_BOOTS + 1 faults, or an overall deadline: `summary` says so in
one line ("the board keeps resetting: FAULT in stage N: ... (K times)").
"""

from __future__ import annotations

import datetime
import re
import time
from typing import Callable

from host_tools.portlock import PortLock
from sicbo import events as E

RUNNING = "running"
REFUSED = "refused"
APPROVAL = "approval"
CLOCK = "clock"
RECOVERY = "recovery"
OUT_OF_SERVICE = "out of service"
FAULT = "fault"
RESTARTING = "restarting"
# Not a line of the firmware: MicroPython's REPL banner after the reset, with
# no start-up line before it: nothing runs (no main.py, or one that ended).
REPL = "repl"
# Not a line of the firmware either: a traceback, the app stopped by an
# exception its containment did not catch (main.py's own import, ...).
CRASHED = "crashed"
# After these the board resets by itself: another boot follows.
TRANSIENT = (FAULT, RESTARTING)

# A board boots in well under a second (the virtual board) to a few seconds
# (an ESP32 replaying a full journal); this is generous for a busy machine.
BOOT_TIMEOUT_S = 30.0
# The firmware's own (sicbo.events): a board out of service says so at its
# boot after this many faults in a row, so one fault more without that line
# is a board that keeps resetting.
MAX_FAILED_BOOTS = E.MAX_FAILED_BOOTS
# The boots of its own (after a FAULT or a configuration kept) read at most:
# every failed boot up to out of service, a configuration kept, one more.
MAX_RESETS = MAX_FAILED_BOOTS + 2

_RUNNING = re.compile(r"^(?P<table>.*), round (?P<round>\d+), state (?P<state>\S+)$")
_COUNT = re.compile(r"after (\d+) failed boot")
# "FAULT in stage 2 loading sicbo.roundmachine (/sicbo/roundmachine.mpy): MemoryError ..."
_STAGE = re.compile(r"^FAULT in stage (\d+)(?: loading [^:]+)?: ?(.*)$")
# "MicroPython v1.28.0 on 2025-04-15; ESP32 module with ESP32": the REPL's banner.
_BANNER = re.compile(r"^MicroPython \S+ on \S+; ")


def state_name(st: int | None) -> str:
    from sicbo import texts

    if st is not None and 0 <= st < len(texts.STATE_NAMES):
        return texts.STATE_NAMES[st]
    return "state %s" % st


def stage_name(stage: int | None) -> str:
    from sicbo import texts

    names = getattr(texts, "FAULT_STAGES", ())
    if stage is not None and 0 < stage < len(names):
        return names[stage]
    return "?"


class BoardState:
    """One start-up line understood: `kind` (RUNNING, REFUSED, ...), `line`
    (as printed), `text` (the line after ``sicbo: ``); for RUNNING `table`,
    `round`, `state` (ST_*, None if not understood); for FAULT `stage`; for
    OUT_OF_SERVICE `failed_boots`."""

    def __init__(self, kind: str, line: str, text: str):
        self.kind = kind
        self.line = line
        self.text = text
        self.table: str | None = None
        self.round: int | None = None
        self.state: int | None = None
        self.stage: int | None = None
        self.failed_boots: int | None = None

    @property
    def settled(self) -> bool:
        """False for a line after which the board resets by itself."""
        return self.kind not in TRANSIENT

    @property
    def running(self) -> bool:
        return self.kind == RUNNING

    def describe(self) -> str:
        """One line for people: what the board does."""
        k = self.kind
        if k == RUNNING:
            return "the table runs: %s, round %d, %s" % (self.table, self.round or 0,
                                                         state_name(self.state))
        if k == FAULT:
            where, _sep, detail = self.text.partition(": ")
            loading = where.partition(" loading ")[2]
            return "FAULT in stage %s (%s)%s: %s; the board resets" % (
                self.stage, stage_name(self.stage), " loading " + loading if loading else "",
                detail or where)
        if k == RESTARTING:
            return "configuration checked and kept (config.cache): the board restarts"
        if k == REFUSED:
            return "the table did not start: " + self.text
        if k in (APPROVAL, CLOCK):
            return "the table did not start: " + self.text
        if k == RECOVERY:
            return "recovery mode (the confirm key was held at power-on): the table did " \
                   "not start"
        if k == REPL:
            return "the board started to its REPL with no start-up line: nothing runs (is " \
                   "the firmware deployed?)"
        if k == CRASHED:
            return "the app stopped on an exception, at the REPL now: " + self.text
        return self.text  # OUT OF SERVICE ..., as the board says it

    def advice(self, port: str = "PORT") -> str:
        """What to type or do next ("" when the table runs)."""
        k = self.kind
        if k == REFUSED:
            return ("fix the board or table file, then sicbo deploy --port %s --board FILE "
                    "--table FILE" % port)
        if k == APPROVAL:
            return "deploy the table file whose approval is in force (sicbo deploy)"
        if k == CLOCK:
            return ("sicbo diag --port %s status sets the board's clock and resets it"
                    % port)
        if k == RECOVERY:
            return "release the confirm key, then reset the board"
        if k in (REPL, CRASHED):
            return "sicbo deploy --port %s --board FILE --table FILE" % port
        if k == OUT_OF_SERVICE:
            return ("sicbo diag --port %s status says what failed; once mended, at the REPL "
                    "(mpremote connect %s): import diag; diag.clear_fault(); machine.reset()"
                    % (port, port))
        return ""


def parse(line: str) -> BoardState | None:
    """The BoardState a console line says, or None for any other line."""
    line = line.strip()
    if not line.startswith("sicbo: "):
        return None
    text = line[len("sicbo: "):].strip()
    if text.startswith("configuration refused"):
        return BoardState(REFUSED, line, text)
    if text.startswith("configuration checked and kept"):
        return BoardState(RESTARTING, line, text)
    if text.startswith("table approval ") and "effective from" in text:
        return BoardState(APPROVAL, line, text)
    if text.startswith("RTC not set and the journal"):
        return BoardState(CLOCK, line, text)
    if text.startswith("recovery mode"):
        return BoardState(RECOVERY, line, text)
    if text.startswith("OUT OF SERVICE"):
        s = BoardState(OUT_OF_SERVICE, line, text)
        m = _COUNT.search(text)
        s.failed_boots = int(m.group(1)) if m else None
        return s
    m = _STAGE.match(text)
    if m:
        s = BoardState(FAULT, line, text)
        s.stage = int(m.group(1))
        return s
    m = _RUNNING.match(text)
    if m:
        s = BoardState(RUNNING, line, text)
        s.table = m.group("table")
        s.round = int(m.group("round"))
        s.state = _state_of(m.group("state"))
        return s
    return None


def _state_of(word: str) -> int | None:
    from sicbo import texts

    if word.isascii() and word.isdigit():
        return int(word)
    low = word.lower()
    for i, name in enumerate(texts.STATE_NAMES):
        if name == low:
            return i
    return None


def running_line_text(line: str) -> str | None:
    """The running line with its state by name, or None if it is not one."""
    s = parse(line)
    if s is None or s.kind != RUNNING or s.state is None:
        return None
    return "sicbo: %s, round %d, state %s" % (s.table, s.round or 0, state_name(s.state))


# ---- the serial port ----------------------------------------------------------------


def clock_tuple(now: datetime.datetime | None = None) -> tuple[int, ...]:
    """This computer's clock in UTC as machine.RTC().datetime() takes it: the
    journal's wall times are UTC (docs/journal.md)."""
    t = now or datetime.datetime.now(datetime.timezone.utc)
    return (t.year, t.month, t.day, t.weekday(), t.hour, t.minute, t.second, t.microsecond)


# Ctrl-C twice stops running code (the app); Ctrl-B leaves a raw REPL.
INTERRUPT = b"\r\x03\x03\x02\r"
PROMPT = b">>> "
# Typed again when the REPL did not answer: soon after a start-up line (the
# board booted past the Ctrl-C: it reset as it came, and a reset loses what
# the UART held), else after a long silence. Not sooner: a second Ctrl-C
# while the app journals its stop would cut that record.
AGAIN_AFTER_BOOT_S = 0.5
AGAIN_AFTER_S = 5.0


class Console:
    """The board's serial port held for reading lines and typing:

        with Console(port, "sicbo deploy") as con:
            con.write(b"...")
            line = con.readline(timeout=1.0)

    It takes the port's lock (PortBusy if another process holds it) unless
    given one already held (`lock`), and opens the port exclusively."""

    def __init__(self, port: str, who: str, lock: PortLock | None = None,
                 baudrate: int = 115200):
        self.port = port
        self.who = who
        self.baudrate = baudrate
        self._lock = lock
        self._own_lock = lock is None
        self._serial = None
        self._buf = b""

    def open(self, timeout: float = 5.0) -> Console:
        import serial  # pyserial, installed with mpremote

        if self._serial is not None:  # open already (`with` on an opened console)
            return self
        if self._lock is None:
            self._lock = PortLock(self.port, self.who)
        self._lock.acquire()
        deadline = time.monotonic() + timeout
        while True:
            try:
                if "://" in self.port:  # rfc2217://, socket://: no device to lock
                    self._serial = serial.serial_for_url(self.port, self.baudrate,
                                                         timeout=0.05)
                else:
                    self._serial = serial.Serial(self.port, self.baudrate, timeout=0.05,
                                                 exclusive=True)
                break
            except (OSError, serial.SerialException) as e:
                if time.monotonic() >= deadline:
                    self.close()
                    raise OSError("cannot open %s: %s" % (self.port, e)) from None
                time.sleep(0.05)
        return self

    def write(self, data: bytes) -> None:
        assert self._serial is not None
        self._serial.write(data)
        self._serial.flush()

    def drop_input(self) -> None:
        """Forget what waits unread (output of before this moment)."""
        if self._serial is not None:
            self._serial.reset_input_buffer()
        self._buf = b""

    def readline(self, timeout: float) -> str | None:
        """The next whole line (without its end), or None when none came within
        timeout. OSError (or serial.SerialException) when the port went away."""
        assert self._serial is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            data = self._serial.read(512)
            if data:
                self._buf += data
            elif time.monotonic() >= deadline:
                return None
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode("utf-8", "replace").rstrip("\r")

    def read_to_prompt(self, timeout: float, on_line: Callable[[str], None]) -> bool:
        """Reads until the REPL's prompt (``>>> ``) comes: True, the bytes up
        to it taken; False when it did not come within timeout. Every whole
        line before it goes to on_line."""
        assert self._serial is not None
        deadline = time.monotonic() + timeout
        while True:
            at = self._buf.find(PROMPT)
            nl = self._buf.find(b"\n")
            if nl >= 0 and (at < 0 or nl < at):
                line, self._buf = self._buf.split(b"\n", 1)
                on_line(line.decode("utf-8", "replace").rstrip("\r"))
                continue
            if at >= 0:
                self._buf = self._buf[at + len(PROMPT):]
                return True
            if time.monotonic() >= deadline:
                return False
            self._buf += self._serial.read(512)

    def close(self) -> None:
        s, self._serial = self._serial, None
        if s is not None:
            try:
                s.close()
            except OSError:
                pass
        if self._own_lock and self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Console:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


class LineReader:
    """The board's console lines, one at a time (feed): the BoardState a line
    says, or None. Besides the firmware's lines (parse): a traceback, read to
    its exception line, is a CRASHED state, and MicroPython's banner a REPL
    state (nothing runs). After expect(typed), lines up to the echo of what
    was typed are passed over (a banner before it is the REPL's answer to
    the Ctrl-B typed with it)."""

    def __init__(self, typed: str | None = None):
        self.typed = typed
        self._traceback = False

    def expect(self, typed: str | None) -> None:
        self.typed = typed
        self._traceback = False

    def feed(self, line: str) -> BoardState | None:
        if self.typed is not None:
            if self.typed in line:
                self.typed = None  # its echo: the board's answer follows
            return None
        s = parse(line)
        if s is not None:
            self._traceback = False
            return s
        if line.startswith("Traceback (most recent call last)"):
            self._traceback = True
            return None
        if self._traceback:
            if line.startswith(" "):
                return None  # a frame
            self._traceback = False
            return BoardState(CRASHED, line, line.strip())  # the exception
        if _BANNER.match(line):
            return BoardState(REPL, line, line)
        return None


def read_states(con: Console, timeout: float = BOOT_TIMEOUT_S,
                on_line: Callable[[str], None] | None = None,
                on_state: Callable[[BoardState], None] | None = None,
                typed: str | None = None) -> list[BoardState]:
    """The start-up lines the board prints from now on, until one that says
    it has settled (running, refused, ...), or until `timeout` s pass
    without one (counted again after each reset of its own: a FAULT, a
    configuration kept). A board that keeps resetting is read no further
    than MAX_FAILED_BOOTS + 1 FAULT lines (out of service comes after
    MAX_FAILED_BOOTS), MAX_RESETS resets of its own, or (timeout times
    MAX_RESETS) s in all: keeps_resetting() then says so. Returns every
    state line read, in order; [] or a last one that is not settled when a
    deadline passed. on_line gets every line, on_state every state as it
    comes. `typed`: what was typed at the REPL; once its echo has passed,
    MicroPython's banner before any start-up line means the board came up
    to its REPL with nothing running (a state of kind REPL)."""
    states: list[BoardState] = []
    reader = LineReader(typed)
    now = time.monotonic()
    deadline = now + timeout
    overall = now + timeout * MAX_RESETS
    faults = resets = 0
    while True:
        now = time.monotonic()
        left = min(deadline, overall) - now
        if left <= 0:
            return states
        line = con.readline(min(left, 0.5))
        if line is None:
            continue
        if on_line is not None:
            on_line(line)
        s = reader.feed(line)
        if s is None:
            continue
        states.append(s)
        if on_state is not None:
            on_state(s)
        if s.settled:
            return states
        resets += 1
        faults += s.kind == FAULT
        if faults > MAX_FAILED_BOOTS or resets >= MAX_RESETS:
            return states  # it resets for ever: no use waiting for more
        deadline = time.monotonic() + timeout  # a boot of its own follows


def keeps_resetting(states: list[BoardState]) -> str | None:
    """One line when the board reset by itself again and again without
    settling (read_states stopped reading it): its last fault and how many
    times it came; None otherwise."""
    if not states or states[-1].settled:
        return None
    resets = [s for s in states if not s.settled]
    if len(resets) < 2:
        return None  # one reset, then silence: summary() says that
    last = resets[-1]
    same = sum(1 for s in resets if s.text == last.text)
    times = "%d times" % same if same == len(resets) else \
        "%d times in %d resets" % (same, len(resets))
    return "the board keeps resetting: %s (%s)" % (last.text, times)


def reset_code(clock: tuple[int, ...] | None) -> bytes:
    """What is typed at the REPL to reset the board, its clock set first."""
    code = "import machine; "
    if clock is not None:
        code += "machine.RTC().datetime(%r); " % (tuple(clock),)
    return (code + "machine.reset()\r").encode()


def type_and_read(port: str, who: str, code: bytes, lock: PortLock | None = None,
                  timeout: float = BOOT_TIMEOUT_S,
                  on_line: Callable[[str], None] | None = None,
                  on_state: Callable[[BoardState], None] | None = None) -> list[BoardState]:
    """Opens the port, stops what runs (Ctrl-C, interrupt()), types `code`
    (one line ending in a return) at the REPL once it answers, and reads
    the start-up that follows (read_states). A board that never lets its
    REPL answer within `timeout` (it keeps resetting) is not typed at: the
    state lines it printed meanwhile are returned. OSError when the port
    cannot be opened or goes away."""
    import serial  # pyserial

    with Console(port, who, lock=lock) as con:
        try:
            before = interrupt(con, timeout, on_line)
            if before is not None:
                return before
            con.write(code)
            typed = code.decode("utf-8", "replace").strip()
            return read_states(con, timeout, on_line, on_state, typed=typed)
        except serial.SerialException as e:
            raise OSError(str(e)) from None


def interrupt(con: Console, timeout: float,
              on_line: Callable[[str], None] | None = None) -> list[BoardState] | None:
    """Stops what runs on the board and waits for its REPL's prompt: None
    once it came. Typed again (AGAIN_AFTER_*) when the board booted past
    it or stayed silent; when no prompt came within `timeout`, the state
    lines the board printed meanwhile (a board in a reset loop: its
    faults; [] if none)."""
    con.drop_input()
    seen: list[BoardState] = []
    reader = LineReader()

    def line(text: str) -> None:
        if on_line is not None:
            on_line(text)
        s = reader.feed(text)
        if s is not None:
            seen.append(s)

    deadline = time.monotonic() + timeout
    while True:
        con.write(INTERRUPT)
        sent = time.monotonic()
        while True:
            booted = len(seen)
            wait = min(deadline, sent + AGAIN_AFTER_S) - time.monotonic()
            if con.read_to_prompt(max(0.0, min(wait, 0.5)), line):
                return None
            now = time.monotonic()
            if now >= deadline:
                return seen
            if now >= sent + AGAIN_AFTER_S:
                break
            if len(seen) > booted:  # a start-up line: the Ctrl-C was lost
                if con.read_to_prompt(AGAIN_AFTER_BOOT_S, line):
                    return None
                break


def reset_and_read(port: str, who: str, clock: tuple[int, ...] | None = None,
                   lock: PortLock | None = None, timeout: float = BOOT_TIMEOUT_S,
                   on_line: Callable[[str], None] | None = None,
                   on_state: Callable[[BoardState], None] | None = None) -> list[BoardState]:
    """Resets the board (its clock set first, unless clock is None) by
    typing at its REPL, and reads the boot that follows: its state lines."""
    return type_and_read(port, who, reset_code(clock), lock, timeout, on_line, on_state)


def summary(states: list[BoardState], timeout: float = BOOT_TIMEOUT_S,
            port: str | None = None) -> list[str]:
    """Lines for people about what the board said after a reset."""
    if not states:
        return ["the board printed no start-up line within %d s (nothing known about its "
                "state; sicbo console shows what it prints)" % timeout]
    looping = keeps_resetting(states)
    if looping is not None:
        # One line, not one per boot: the board is still resetting now.
        return ["%s: see sicbo diag %sstatus" % (looping, "--port %s " % port if port else "")]
    out = [s.describe() for s in states]
    if not states[-1].settled:
        out.append("no start-up line after that within %d s (sicbo console shows what it "
                   "prints)" % timeout)
    return out
