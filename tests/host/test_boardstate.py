"""host_tools/boardstate.py: the board's start-up lines, parsed in one place.

The lines are taken from the firmware's own source (every ``sicbo: ...``
text it prints, its format filled in), so that a line the board starts
printing, or prints otherwise, fails here rather than being taken for
nothing (or for something else) by deploy, diag and the demo."""

import ast
import os

import pytest

from host_tools import DEVICE
from host_tools import boardstate as bs
from sicbo import events as E

# Lines the board prints that say nothing of its state (notes beside one).
NOT_STATES = ("board warning: ", "floor link not started: ", "see diag.status()",
              "fault lamps not lit", "outputs not driven", "cannot write ",
              "RTC not set: journal records carry no wall-clock time",
              "stopped into the REPL", "clock set, not journaled",
              "provisioning ")  # the MAC chain's (chainfile.take)


def _text(node):
    """The literal text of a str constant, a '...' % x or a '...' + x."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        left = _text(node.left)
        if left is not None and isinstance(node.op, ast.Add):
            return left + "%s"  # what is added at run time
        return left
    return None


def device_lines():
    """Every start-up line text of the firmware, its format filled in."""
    found = []
    for top, dirs, files in os.walk(DEVICE):
        dirs[:] = [d for d in dirs if d not in ("remote", "__pycache__")]
        for name in sorted(files):
            if not name.endswith(".py") or name == "diag.py":
                continue
            path = os.path.join(top, name)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                texts = []
                if isinstance(node, ast.Call) and node.args:
                    texts.append(_text(node.args[0]))
                if isinstance(node, ast.FunctionDef) and (name, node.name) == ("approval.py",
                                                                   "refusal"):
                    # its refusals are printed as "sicbo: " + the text
                    texts += ["sicbo: " + t for n in ast.walk(node)
                              if isinstance(n, ast.Return) and n.value is not None
                              for t in [_text(n.value)] if t]
                for t in texts:
                    if t and t.startswith("sicbo: ") and t != "sicbo: %s":
                        found.append((name, t.replace("%d", "3").replace("%s", "x")
                                      .replace("%r", "'x'")))
    return found


def test_every_line_the_firmware_prints_is_understood():
    lines = device_lines()
    assert len(lines) >= 10, lines
    kinds = set()
    for where, line in lines:
        s = bs.parse(line)
        if s is None:
            assert line[len("sicbo: "):].startswith(NOT_STATES), (where, line)
        else:
            kinds.add(s.kind)
            assert s.describe() and s.line == line
    # and every state the host knows is one the board prints
    assert kinds == {bs.RUNNING, bs.REFUSED, bs.APPROVAL, bs.CLOCK, bs.RECOVERY,
                     bs.OUT_OF_SERVICE, bs.FAULT, bs.RESTARTING}, kinds


@pytest.mark.parametrize("line, kind, settled, says", [
    ("sicbo: Macau 2004, round 12, state %d" % E.ST_PAYING, bs.RUNNING, True,
     "the table runs: Macau 2004, round 12, paying"),
    ("sicbo: Macau 2004, round 12, state hold", bs.RUNNING, True,
     "the table runs: Macau 2004, round 12, hold"),
    ("sicbo: configuration refused, table not started: odds.TOTAL_5: 31 not in 18..30",
     bs.REFUSED, True,
     "the table did not start: configuration refused, table not started: odds.TOTAL_5: 31 "
     "not in 18..30"),
    ("sicbo: OUT OF SERVICE after 3 failed boots (last: stage 3: MemoryError x). Outputs are "
     "off.", bs.OUT_OF_SERVICE, True,
     "OUT OF SERVICE after 3 failed boots (last: stage 3: MemoryError x). Outputs are off."),
    ("sicbo: FAULT in stage 2: OSError [Errno 28]", bs.FAULT, False,
     "FAULT in stage 2 (journal): OSError [Errno 28]; the board resets"),
    ("sicbo: FAULT in stage 9: KeyError 'x'", bs.FAULT, False,
     "FAULT in stage 9 (?): KeyError 'x'; the board resets"),
    ("sicbo: configuration checked and kept in /config.cache: restarting", bs.RESTARTING,
     False, "configuration checked and kept (config.cache): the board restarts"),
    ("sicbo: recovery mode (confirm key held at power-on): app not started", bs.RECOVERY,
     True, "recovery mode (the confirm key was held at power-on): the table did not start"),
])
def test_lines_say_what_the_board_does(line, kind, settled, says):
    s = bs.parse(line + "\r")
    assert (s.kind, s.settled, s.describe()) == (kind, settled, says)


def test_other_lines_are_not_states():
    for line in ("J a50102", "D 4 0", ">>> import machine", "sicbo: board warning: GPIO0",
                 "Traceback (most recent call last):", "", "sicbo:", "MicroPython v1.28"):
        assert bs.parse(line) is None, line


def test_each_refusal_says_what_to_type():
    s = bs.parse("sicbo: OUT OF SERVICE after 3 failed boots (last: x). Outputs are off.")
    assert s.failed_boots == 3
    assert s.advice("/dev/ttyUSB0").startswith("sicbo diag --port /dev/ttyUSB0 status")
    assert "diag.clear_fault()" in s.advice("/dev/ttyUSB0")
    s = bs.parse("sicbo: RTC not set and the journal does not show table approval X in force: "
                 "set the clock (sicbo deploy or sicbo diag sets it); table not started")
    assert s.kind == bs.CLOCK and "sicbo diag --port P status" in s.advice("P")
    assert bs.parse("sicbo: T, round 1, state 0").advice() == ""


def test_a_board_that_said_nothing_is_said_plainly():
    assert bs.summary([], 30) == [
        "the board printed no start-up line within 30 s (nothing known about its state; "
        "sicbo console shows what it prints)"]
    fault = bs.parse("sicbo: FAULT in stage 3: MemoryError")
    assert bs.summary([fault], 5)[-1] == ("no start-up line after that within 5 s (sicbo "
                                          "console shows what it prints)")


def test_the_clock_is_utc():
    import datetime

    t = datetime.datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=datetime.timezone.utc)
    assert bs.clock_tuple(t) == (2026, 3, 4, 2, 5, 6, 7, 890)
    assert bs.reset_code((2026, 3, 4, 2, 5, 6, 7, 890)) == (
        b"import machine; machine.RTC().datetime((2026, 3, 4, 2, 5, 6, 7, 890)); "
        b"machine.reset()\r")


class FakeConsole:
    def __init__(self, lines):
        self.lines = list(lines)

    def readline(self, timeout):
        return self.lines.pop(0) if self.lines else None


def test_the_boot_after_a_reset_is_read_to_its_settled_line():
    typed = "import machine; machine.reset()"
    con = FakeConsole(["MicroPython v1.28.0 on 2025-04-15; ESP32 module with ESP32",  # Ctrl-B
                       ">>> " + typed, "ets Jun  8 2016 00:22:57", "sicbo: board warning: GPIO0",
                       "sicbo: FAULT in stage 3: MemoryError", "rst:0xc (SW_CPU_RESET)",
                       "sicbo: T, round 2, state %d" % E.ST_PAYING, "J a5"])
    seen = []
    states = bs.read_states(con, 5, on_line=seen.append, typed=typed)
    assert [(s.kind, s.round) for s in states] == [(bs.FAULT, None), (bs.RUNNING, 2)]
    assert seen[-1] == "sicbo: T, round 2, state %d" % E.ST_PAYING  # read no further


def test_a_board_that_comes_up_to_its_repl_runs_nothing():
    typed = "import machine; machine.reset()"
    con = FakeConsole([">>> " + typed, "MicroPython noise",
                       "MicroPython v1.28.0 on 2025-04-15; ESP32 module with ESP32",
                       'Type "help()" for more information.', ">>> "])
    states = bs.read_states(con, 5, typed=typed)
    assert [s.kind for s in states] == [bs.REPL]
    assert "nothing runs" in states[0].describe()


def test_nothing_known_within_the_deadline_is_nothing():
    t0 = __import__("time").monotonic()
    assert bs.read_states(FakeConsole(["noise"]), 0.3) == []
    assert __import__("time").monotonic() - t0 >= 0.3


def test_an_exception_nothing_contained_is_said():
    typed = "sd_start(sd_ok, (2026, 1, 1, 3, 0, 0, 0, 0))"
    con = FakeConsole([">>> " + typed, "Traceback (most recent call last):",
                       '  File "<stdin>", line 1, in <module>', '  File "main.py", line 6',
                       "ImportError: no module named 'shell'", ">>> "])
    states = bs.read_states(con, 5, typed=typed)
    assert [(s.kind, s.text) for s in states] == [(bs.CRASHED, "ImportError: no module named "
                                                                "'shell'")]
    assert states[0].describe() == ("the app stopped on an exception, at the REPL now: "
                                    "ImportError: no module named 'shell'")


class _LoopingSerial:
    """The serial port of a board in a reset loop, in bytes: each boot
    prints a fault and resets; a Ctrl-C that comes while it resets is lost
    (the first `lost` of them), a later one stops main.py into the REPL,
    which then echoes what is typed."""

    FAULT = b"sicbo: FAULT in stage 4: OSError 28\r\n"

    def __init__(self, lost):
        self.lost = lost
        self.out = bytearray(self.FAULT)  # a boot in flight as the host opens it
        self.writes = []
        self.at_repl = False

    def reset_input_buffer(self):
        self.out.clear()

    def write(self, data):
        self.writes.append(bytes(data))
        if self.at_repl:
            if not data.startswith(b"\r\x03"):
                self.out += b">>> " + data.rstrip(b"\r") + b"\r\n"
            return
        if self.lost:
            self.lost -= 1
            self.out += self.FAULT  # the next boot, past the lost Ctrl-C
            return
        self.at_repl = True
        self.out += b"KeyboardInterrupt: \r\nMicroPython v1.28.0 on x; ESP32\r\n>>> "

    def flush(self):
        pass

    def read(self, n):
        if not self.out:
            __import__("time").sleep(0.01)
            return b""
        data, self.out[:n] = bytes(self.out[:n]), b""
        return data


def _console(serial):
    con = bs.Console("/dev/fake", "test")
    con._serial = serial
    return con


def test_the_code_is_typed_once_the_repl_answers_the_ctrl_c_again_if_a_reset_lost_it():
    # The reset typed at a board whose boot reset under the Ctrl-C was lost
    # with it, and its code was left for the next boot's REPL (CI: the
    # board then reset under the next tool's mpremote).
    port = _LoopingSerial(lost=2)
    con = _console(port)
    assert bs.interrupt(con, 10) is None
    assert port.writes == [bs.INTERRUPT] * 3  # typed again after each boot past it
    con.write(b"import machine; machine.reset()\r")
    assert con.readline(1) == ">>> import machine; machine.reset()"


def test_a_board_whose_repl_never_answers_is_not_typed_at_and_its_faults_are_said():
    port = _LoopingSerial(lost=10 ** 6)
    states = bs.interrupt(_console(port), 1.5)
    assert states and {s.kind for s in states} == {bs.FAULT}
    assert set(port.writes) == {bs.INTERRUPT}  # never the code
    assert bs.keeps_resetting(states).startswith("the board keeps resetting: FAULT in stage 4")
