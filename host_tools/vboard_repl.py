"""The virtual board's REPL framing: what makes the unix port's console look
like a board's serial console. Pure: bytes and facts in, bytes and actions
out; no pty, no process, no clock (host_tools/vboard_shell.py does the I/O).

    f = ReplFraming()
    f.started(POWER_ON)                 # an interpreter was started
    f.child_output(b"...")              # what it printed
    f.host_input(b"\\r\\x01")            # what the host sent
    f.repl_reading()                    # its REPL switched its terminal to raw
    f.child_exited(0)                   # it ended by itself, with this status
    f.take_host(), f.take_child()       # bytes for the host / for the interpreter
    f.take_actions()                    # what the shell must do (below)

What it handles, as a board's console behaves:

* The boot script (sim/vboard_boot.py) prints markers ``ESC _vboard:WHAT ESC
  \\``, which never reach the host: ``boot`` once it runs (boot.py/main.py
  next), ``int`` once it took a KeyboardInterrupt, ``ready`` after
  boot.py/main.py, ``again`` (below), ``exit:N`` for a ``sys.exit(N)`` in
  them.
* Host input is held while the interpreter boots (the unix port flushes
  unread input when its REPL switches the terminal to raw mode; a board's
  UART keeps it). It is delivered once the first prompt was seen and the
  terminal is raw. A hard reset loses it (a soft reset keeps it), as a
  board's reset loses what its UART had not handed to the REPL.
* Ctrl-C while it boots interrupts boot.py/main.py, as on a board, and never
  ends the interpreter (a soft reset no board makes): the unix port has a
  SIGINT handler only while code runs, and raises the KeyboardInterrupt at
  once, wherever the code is. So a Ctrl-C before ``boot`` waits for it; one
  at a time is passed on, the next after ``int`` (Ctrl-Cs meanwhile are
  merged into it, as a board merges them), or after the board printed
  without taking it (it was lost: merged into it, no later Ctrl-C would
  reach the board); after ``ready`` a Ctrl-C is a
  byte for the REPL, and the script is answered with ACK (0x06), after any
  Ctrl-C passed on: it ends once it has read it, so that no SIGINT lands
  after it. A SIGINT that lands as the ACK is read can lose it: the script
  then says ``again`` and waits for ACK_AGAIN (0x07).
* Soft reset: the unix port exits on Ctrl-D; a board prints
  ``MPY: soft reboot`` and starts again: in the raw REPL without main.py if
  it was in the raw REPL (the banner is hidden; the raw header comes after
  the interpreter is put back into the raw REPL with ``\\x01``), else in the
  friendly REPL after main.py.
* Raw-paste: code sent with ``\\x05A\\x01`` runs with the terminal still raw
  (the unix port does not restore ISIG for it), so a Ctrl-C from the host
  becomes an ``interrupt`` action (the shell sends SIGINT).
* Every lone ``\\n`` the board prints becomes ``\\r\\n`` until a 0x18 byte
  starts mpremote's binary ``mount`` protocol (then until the next start).

Actions (tuples, in order): ``("ready",)`` the REPL reads the host's input;
``("interrupt",)`` send SIGINT to the interpreter; ``("kill", code)`` the
interpreter asked to end with ``code`` (kill it, then call ``child_exited``);
``("restart", kind, why)`` start the interpreter again as ``kind``, why being
``"hard"`` (machine.reset()), ``"crash"`` (killed by a signal) or ``"soft"``.
"""

from __future__ import annotations

import signal

RAW_HEADER = b"raw REPL; CTRL-B to exit\r\n"
PROMPT = b">>> "
SOFT_REBOOT = b"MPY: soft reboot\r\n"
MARK = b"\x1b_vboard:"
MARK_END = b"\x1b\\"
# The answers to the boot script's `ready` and `again` markers.
ACK, ACK_AGAIN = b"\x06", b"\x07"
# Exit status by which the interpreter asks for a hard reset (machine.reset()).
RESET_EXIT = 233

# Start kinds of the interpreter.
POWER_ON = "hard"        # power-on or hard reset: boot.py, main.py, friendly REPL
SOFT_FRIENDLY = "soft"   # soft reset from the friendly REPL: boot.py, main.py
SOFT_RAW = "raw"         # soft reset from the raw REPL: boot.py only, back in the raw REPL

Action = tuple


class NewlineFilter:
    """Turns a lone \\n into \\r\\n, across chunk boundaries, until the board
    sends a 0x18 byte: that starts mpremote's `mount` protocol, binary in both
    directions, and the output stays untouched until the interpreter restarts
    (a board does not convert sys.stdout.buffer writes; the unix port cannot
    tell them apart from print)."""

    def __init__(self) -> None:
        self.last = b""
        self.binary = False

    def __call__(self, data: bytes) -> bytes:
        if not data or self.binary:
            return data
        cut = data.find(b"\x18")
        if cut >= 0:
            head = self(data[:cut])  # text up to the 0x18 is still converted
            self.binary = True
            return head + data[cut:]
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


def partial_suffix(data: bytes, marker: bytes) -> int:
    """Length of the longest suffix of data that is a proper prefix of marker."""
    n = min(len(marker) - 1, len(data))
    while n > 0:
        if data.endswith(marker[:n]):
            return n
        n -= 1
    return 0


class ReplFraming:
    """The console of one board across the interpreter's restarts."""

    # START: started, its boot script does not run yet. BOOT: boot.py/main.py.
    # PROMPT/HIDE: waiting for the REPL (HIDE: its banner is hidden). RUN.
    OFF, START, BOOT, PROMPT, HIDE, RUN = "off", "start", "boot", "prompt", "hide", "run"

    def __init__(self) -> None:
        self.state = self.OFF
        self.kind: str | None = None
        self.raw_mode = False         # the REPL is in raw mode (from what it printed)
        self._host = bytearray()      # for the host
        self._child = bytearray()     # for the interpreter
        self._actions: list[Action] = []
        self._pending = bytearray()   # host input held while the board boots
        self._carry = b""             # a possible partial marker/header
        self._carry_prompt = b""      # a possible partial prompt
        self._prompt_seen = False
        self._sent_raw = False
        self._pasting = False         # the host is sending code in raw-paste mode
        self._pasted_running = False  # that code runs (Ctrl-C becomes SIGINT)
        self._ctrl_c_held = False     # a Ctrl-C waits for the boot script to run
        self._interrupting = False    # a Ctrl-C was passed on, not yet taken
        self._printed_since = False   # the board printed since it was passed on
        self._tail = b""              # recent output, for the REPL mode
        self._nl = NewlineFilter()

    # ---- outputs ------------------------------------------------------------
    def take_host(self) -> bytes:
        out = bytes(self._host)
        self._host.clear()
        return out

    def take_child(self) -> bytes:
        out = bytes(self._child)
        self._child.clear()
        return out

    def take_actions(self) -> list[Action]:
        out = self._actions
        self._actions = []
        return out

    @property
    def waiting_for_repl(self) -> bool:
        """True while the prompt was seen and the shell should tell, soon,
        when the REPL's terminal turns raw (repl_reading)."""
        return self.state in (self.PROMPT, self.HIDE) and self._prompt_seen

    @property
    def running(self) -> bool:
        return self.state == self.RUN

    @property
    def pasted_running(self) -> bool:
        """Code sent in raw-paste mode runs (an ``interrupt`` is for it)."""
        return self.state == self.RUN and self._pasted_running

    # ---- inputs -------------------------------------------------------------
    def started(self, kind: str) -> None:
        """A new interpreter was started as `kind`."""
        self.kind = kind
        self.state = self.START
        if kind == POWER_ON:
            # A hard reset (or a panic, the watchdog) loses what the board's
            # UART had received and its REPL not read yet: a Ctrl-C or a line
            # typed while main.py ran, as the board reset under it.
            self._pending.clear()
        self._ctrl_c_held = self._interrupting = self._prompt_seen = False
        self._printed_since = False
        self._carry_prompt = b""
        self.raw_mode = kind == SOFT_RAW
        self._nl.binary = False
        self._pasting = self._pasted_running = False
        self._carry = b""
        self._child.clear()

    def off(self) -> None:
        """Power cut or stop: no interpreter; host input and output are lost."""
        self.state = self.OFF
        self.raw_mode = False
        self._ctrl_c_held = self._interrupting = self._prompt_seen = False
        self._pending.clear()
        self._host.clear()
        self._child.clear()
        self._carry = b""

    def child_output(self, data: bytes) -> None:
        data = self._carry + data
        self._carry = b""
        # Markers come from the boot script, which runs until the REPL's
        # first prompt; none after it.
        while data and self.state != self.OFF and not self._prompt_seen:
            i = data.find(MARK)
            j = data.find(MARK_END, i) if i >= 0 else -1
            if j < 0:
                keep = len(data) - i if i >= 0 else partial_suffix(data, MARK)
                self._carry = data[len(data) - keep:]
                data = data[:len(data) - keep]
                break
            self._text(data[:i])
            what = data[i + len(MARK):j]
            data = data[j + len(MARK_END):]
            self._marker(what)
        if data:
            self._text(data)

    def _marker(self, what: bytes) -> None:
        booting = self.state in (self.START, self.BOOT)
        if what == b"boot" and self.state == self.START:
            self.state = self.BOOT
            if self._ctrl_c_held:
                self._ctrl_c_held = False
                self._pass_ctrl_c()
        elif what == b"int" and booting:
            self._interrupting = False
        elif what == b"ready" and booting:
            self._booted()
        elif what == b"again" and not booting:
            # a Ctrl-C passed on before `ready` interrupted the wait for the
            # ACK (a KeyboardInterrupt is raised at once, even just after the
            # read took the ACK): the second answer, which it waits for
            self._child += ACK_AGAIN
        elif what.startswith(b"exit:"):
            # sys.exit() in boot.py/main.py: the unix port would go on to
            # the REPL (-i), a board resets.
            self.state = self.OFF
            self._actions.append(("kill", int(what[5:] or b"0")))
        # anything else: a marker repeated by a KeyboardInterrupt that came
        # as it was written; what it said is known already

    def _text(self, data: bytes) -> None:
        """What the interpreter printed, markers taken out."""
        while data:
            if self.state in (self.START, self.BOOT):
                self._printed_since = self._interrupting
                self._emit(data)
                return
            if self.state in (self.PROMPT, self.HIDE) and not self._prompt_seen:
                # Wait for the REPL's first prompt; then (repl_reading) for its
                # switch to a raw terminal, which flushes pending input.
                window = self._carry_prompt + data
                if self.state == self.PROMPT:
                    self._emit(data)
                if PROMPT in window:
                    self._prompt_seen = True
                    self._carry_prompt = b""
                else:
                    self._carry_prompt = window[-(len(PROMPT) - 1):]
                return
            if self.state == self.HIDE:
                # soft reset from the raw REPL: the banner is not shown, and
                # the raw REPL's header comes once \x01 reaches the REPL
                i = data.find(RAW_HEADER)
                if i < 0:
                    keep = partial_suffix(data, RAW_HEADER)
                    self._carry = data[len(data) - keep:]
                    return
                data = data[i + len(RAW_HEADER):]
                self._emit(RAW_HEADER)
                self._go_run()
            elif self.state == self.OFF:
                return  # an interpreter on its way out
            else:
                if self._pasted_running and b"\x04>" in self._tail[-1:] + data:
                    self._pasted_running = False  # stdout \x04 stderr \x04, then the prompt
                self._emit(data)
                return

    def repl_reading(self) -> None:
        """The interpreter's REPL has put its terminal in raw mode: it reads."""
        if not self._prompt_seen:
            return
        if self.state == self.PROMPT:
            self._go_run()
        elif self.state == self.HIDE and not self._sent_raw:
            self._sent_raw = True
            self._child += b"\x01"

    def host_input(self, data: bytes) -> None:
        if self.state == self.OFF:
            return
        if self.state == self.RUN:
            self._track_paste(data)
            if self._pasted_running and b"\x03" in data:
                # Code sent in raw-paste mode runs with the terminal still raw:
                # Ctrl-C becomes the SIGINT the terminal would have sent.
                self._actions.append(("interrupt",))
                data = data.replace(b"\x03", b"")
            self._child += data
        elif self.state in (self.START, self.BOOT) and b"\x03" in data:
            # Ctrl-C interrupts boot.py/main.py; the rest waits for the REPL
            if self.state == self.START:
                self._ctrl_c_held = True
            else:
                self._pass_ctrl_c()
            self._pending += data.replace(b"\x03", b"")
        else:
            self._pending += data

    def child_exited(self, code: int) -> None:
        """The interpreter ended by itself with `code` (returncode; negative:
        killed by that signal). A board restarts."""
        self.state = self.OFF
        if code == RESET_EXIT:
            self._actions.append(("restart", POWER_ON, "hard"))
        elif code < 0 and code != -signal.SIGINT:
            self._actions.append(("restart", POWER_ON, "crash"))
        else:
            # Ctrl-D or sys.exit(): a board soft-resets. (Also a SIGINT
            # that came as the interpreter left the code it interrupts,
            # which the shell's Ctrl-C delivery makes as rare as it can.)
            raw = self.raw_mode
            self._emit(SOFT_REBOOT)
            self._actions.append(("restart", SOFT_RAW if raw else SOFT_FRIENDLY, "soft"))

    # ---- internals ----------------------------------------------------------
    def _emit(self, data: bytes) -> None:
        if not data:
            return
        data = self._nl(data)
        self._host += data
        window = self._tail + data
        r = window.rfind(RAW_HEADER)
        f = window.rfind(b"\n>>> ")
        if r >= 0 or f >= 0:
            self.raw_mode = r > f
        self._tail = window[-40:]

    def _pass_ctrl_c(self) -> None:
        # One at a time; but one the board printed past without taking it
        # (no "int") is gone: a board raises KeyboardInterrupt for every
        # Ctrl-C, and merged into a lost one every later Ctrl-C was lost
        # too (CI: a board that could no longer be stopped).
        if not self._interrupting or self._printed_since:
            self._interrupting = True
            self._printed_since = False
            self._child += b"\x03"

    def _booted(self) -> None:
        # From now on a Ctrl-C is a byte for the REPL. The boot script ends
        # once it reads the ACK: any Ctrl-C passed on before, on the same
        # stream, has interrupted it by then.
        self._child += ACK
        self._ctrl_c_held = self._interrupting = False
        self._carry_prompt = b""
        self._prompt_seen = False
        if self.kind == SOFT_RAW:
            self.state = self.HIDE
            self._sent_raw = False
        else:
            self.state = self.PROMPT

    def _go_run(self) -> None:
        self.state = self.RUN
        self._child += self._pending
        self._pending.clear()
        self._actions.append(("ready",))

    def _track_paste(self, data: bytes) -> None:
        """Follows mpremote's raw-paste exchange: \\x05A\\x01 opens it, the
        host's \\x04 ends the code, which then runs until the board's \\x04>."""
        i = data.find(b"\x05A\x01")
        if i >= 0:
            self._pasting = True
            self._pasted_running = False
            data = data[i + 3:]
        if self._pasting and b"\x04" in data:
            self._pasting = False
            self._pasted_running = True
