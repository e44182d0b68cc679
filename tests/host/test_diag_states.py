"""Diagnostics in every state the board can be in, on the virtual board
running the 32-bit VM at the board's heap (host_tools/heaps.BOARD_HEAP),
through the unmodified mpremote and the `sicbo diag` CLI.

One board for the module; each test puts it in one state (by hand, as a
technician would find it: a file edited on the board, a key held, the
clock lost, a damaged code file), checks that `sicbo diag status` exits 0
and says whether the table runs and, if not, why and what to do, and that
diag.status(), journal(5), recall(1), meters() and sensors() at the REPL
all answer without a traceback; then mends the board and resets it to the
running table for the next test. Every wait is for a line of the board's
(host_tools/boardstate.py reads the boot that follows a reset).

And every failed boot reaches the journal: a damaged code file and resets
until the board is out of service, then mended, cleared and reset; the
journal, read on the board and pulled to the host, has a fault record for
each failed boot and one for the clearing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from host_tools import REPO, boardstate, heaps
from host_tools.deploy import deploy
from host_tools.simclient import TableClient
from host_tools.vboard import VirtualBoard
from sicbo import events as E
from sicbo import journal, texts
from sicbo import records as R

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
SICBO = [sys.executable, "-m", "host_tools"]
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")
VM32 = os.environ.get("SICBO_VM32") or os.path.join(REPO, "build", "vm32", "sim",
                                                     "micropython")
WHO = "test_diag_states"
# The REPL's diagnostics, each after a marker line that names it.
COMMANDS = ("status()", "journal(5)", "recall(1)", "meters()", "sensors()")


def _vm32() -> str:
    exe = os.path.abspath(VM32)
    if not os.access(exe, os.X_OK):
        why = ("the 32-bit VM %s is not built (make vm32 MICROPYTHON_SRC=...; or set "
               "SICBO_VM32)" % exe)
        if (os.environ.get("SICBO_REQUIRE_PARTS") == "1" or os.environ.get("CI")
                or os.environ.get("SICBO_REQUIRE_VM32") == "1"):
            pytest.fail(why + " (the real parts are required here)", pytrace=False)
        pytest.skip(why)
    if not heaps.is_32bit(exe):
        pytest.fail("%s is not a 32-bit interpreter" % exe, pytrace=False)
    return exe


class Rig:
    def __init__(self, vb: VirtualBoard):
        self.vb = vb
        self.port = vb.port
        self.fs = vb.fs
        self.client = TableClient(vb.control)

    def path(self, name: str) -> str:
        return os.path.join(self.fs, name.lstrip("/"))

    def reset(self, clock: bool = True) -> boardstate.BoardState:
        """Reset typed at the REPL; the boot read to its settled line."""
        states = boardstate.reset_and_read(self.port, WHO,
                                           boardstate.clock_tuple() if clock else None)
        assert states and states[-1].settled, [s.line for s in states]
        return states[-1]

    def running(self) -> None:
        s = self.reset()
        assert s.kind == boardstate.RUNNING, s.line

    def sicbo(self, *args: str, code: int = 0) -> str:
        r = subprocess.run(SICBO + list(args), cwd=REPO, capture_output=True, text=True,
                           timeout=300)
        out = r.stdout + r.stderr
        assert "Traceback" not in out, out
        assert r.returncode == code, out
        return r.stdout

    def diag(self, *args: str) -> str:
        return self.sicbo("diag", "--port", self.port, *args)

    def repl(self, *prefix: str, low: bool = False) -> dict[str, str]:
        """The REPL diagnostics through mpremote in one connection (after
        `prefix`, exec'd first): {command: what it printed}. None of them
        may print a traceback or fail; with `low`, one may say in one line
        that memory is short."""
        code = "import diag\n" + "".join("print('@@ %s')\ndiag.%s\n" % (c, c) for c in COMMANDS)
        chain = []
        for p in prefix:
            chain += ["exec", p, "+"]
        r = subprocess.run([MPREMOTE, "connect", self.port] + chain + ["exec", code],
                           capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        assert r.returncode == 0 and "Traceback" not in out, out
        got: dict[str, str] = {}
        name = None
        for line in r.stdout.splitlines():
            if line.startswith("@@ "):
                name = line[3:].strip()
                got[name] = ""
            elif name is not None:
                got[name] += line.rstrip() + "\n"
        assert list(got) == list(COMMANDS), out
        for c, text in got.items():
            assert text.strip(), (c, out)
            assert ": failed: " not in text, (c, text)
            if not low:
                assert "not enough memory" not in text and "not available" not in text, \
                    (c, text)
        if not low:
            assert got["sensors()"].startswith("signal "), got["sensors()"]
            assert "journal " in got["journal(5)"], got["journal(5)"]
        return got


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    exe = _vm32()
    folder = str(tmp_path_factory.mktemp("vb-diag-states"))
    with VirtualBoard(folder, board=BOARD, heap=str(heaps.BOARD_HEAP), command=[exe],
                      table_file=TABLE) as vb:
        assert vb.heap == str(heaps.BOARD_HEAP)
        r = Rig(vb)
        try:
            deploy(vb.port, BOARD, TABLE)
            r.running()
            yield r
        finally:
            r.client.close()


def status_lines(out: str) -> dict[str, str]:
    """diag.status()'s lines by their first word (the first of each)."""
    got: dict[str, str] = {}
    for line in out.splitlines():
        word, _sep, rest = line.partition(" ")
        if word and not line.startswith(" "):
            got.setdefault(word, rest.strip())
    return got


def last_board_line(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(("board reset: ", "  do: "))]


# ---- the states -------------------------------------------------------------------


def test_running(rig):
    out = rig.diag("status")
    st = status_lines(out)
    assert st["running"].startswith("yes: the app resumes round 0"), out
    assert last_board_line(out)[-1].startswith("board reset: the table runs: "), out
    got = rig.repl()
    assert status_lines(got["status()"])["running"].startswith("yes"), got
    assert "no rounds in the journal" in got["recall(1)"], got
    rig.running()


def _edit_table(rig, change) -> bytes:
    path = rig.path("table.json")
    with open(path, "rb") as f:
        good = f.read()
    obj = json.loads(good)
    change(obj)
    with open(path, "w") as f:
        json.dump(obj, f)
    return good


def _put_back(rig, name: str, good: bytes) -> None:
    with open(rig.path(name), "wb") as f:
        f.write(good)


def test_configuration_refused(rig):
    good = _edit_table(rig, lambda t: t["odds"].__setitem__("TOTAL_5", 31))
    try:
        s = rig.reset()
        assert s.kind == boardstate.REFUSED and "odds.TOTAL_5" in s.text, s.line
        out = rig.diag("status")
        run = status_lines(out)["running"]
        assert run.startswith("no: configuration refused") and "odds.TOTAL_5" in run, out
        assert "sicbo deploy" in run, out
        board = last_board_line(out)
        assert board[0].startswith("board reset: the table did not start: configuration "
                                   "refused"), out
        assert board[1].startswith("  do: fix the board or table file"), out
        got = rig.repl()
        # read without the configuration: the journal, the board's sensors
        assert "files refused" in got["recall(1)"] or "no rounds" in got["recall(1)"], got
        assert status_lines(got["status()"])["table"].startswith("files refused"), got
    finally:
        _put_back(rig, "table.json", good)
    rig.running()


def test_approval_not_in_force(rig):
    good = _edit_table(rig, lambda t: t["approval"].__setitem__("effective", "2099-01-01"))
    try:
        s = rig.reset()
        assert s.kind == boardstate.APPROVAL, s.line
        out = rig.diag("status")
        run = status_lines(out)["running"]
        assert run.startswith("no: table approval ") and "2099-01-01" in run, out
        board = last_board_line(out)
        assert board[0].startswith("board reset: the table did not start: table approval"), out
        assert board[1].startswith("  do: deploy the table file whose approval is in force")
        rig.repl()
    finally:
        _put_back(rig, "table.json", good)
    rig.running()


def test_clock_not_set_and_approval_not_seen(rig):
    vb = rig.vb
    vb.power_cut()  # the RTC is lost
    shutil.rmtree(rig.path("journal"))  # no journal shows the approval in force
    vb.power_on()
    s = rig.reset(clock=False)
    assert s.kind == boardstate.CLOCK, s.line
    out = rig.diag("--no-rtc", "--no-restart", "status")
    run = status_lines(out)["running"]
    assert run.startswith("no: RTC not set and the journal does not show"), out
    assert status_lines(out)["clock"].startswith("RTC not set"), out
    got = rig.repl()
    assert status_lines(got["status()"])["running"].startswith("no: RTC not set"), got
    # what to do is what the advice says: diag sets the clock and resets
    assert boardstate.BoardState(boardstate.CLOCK, "", "").advice(rig.port).startswith(
        "sicbo diag --port %s status" % rig.port)
    out = rig.diag("status")
    assert last_board_line(out)[-1].startswith("board reset: the table runs: "), out


def test_recovery_mode(rig):
    rig.client.set("key_confirm", 1)
    try:
        s = rig.reset()
        assert s.kind == boardstate.RECOVERY, s.line
        out = rig.diag("status")
        run = status_lines(out)["running"]
        assert run.startswith("no: recovery mode") and "release" in run, out
        board = last_board_line(out)
        assert board[0].startswith("board reset: recovery mode"), out
        assert board[1].startswith("  do: release the confirm key, then reset"), out
        got = rig.repl()
        assert "key_confirm" in got["sensors()"], got
    finally:
        rig.client.release("key_confirm")
    rig.running()


def _damage(rig, name: str) -> bytes:
    with open(rig.path(name), "rb") as f:
        good = f.read()
    with open(rig.path(name), "wb") as f:
        f.write(b"M\x06 not a compiled module " * 8)
    return good


def _clear(rig) -> str:
    r = subprocess.run([MPREMOTE, "connect", rig.port, "exec",
                        "import diag; diag.clear_fault()"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    return r.stdout


# A damaged code file loaded in each start-up stage (device/startup.py,
# device/resumption.py), and
# the fault's stage as the board names it.
STAGE_FILES = [
    ("startup.mpy", "startup", E.F_START),  # start-up's own code, loaded before any stage
    # the files' reader, which diag too loads only when a command needs it
    ("tablefiles.mpy", "tablefiles", E.F_FILES),
    ("sicbo/settle.mpy", "sicbo.settle", E.F_FILES),
    ("sicbo/roundmachine.mpy", "sicbo.roundmachine", E.F_JOURNAL),
    ("hw/solenoid.mpy", "hw.solenoid", E.F_HARDWARE),
    # the resumption's code, loaded once the adapters are made
    ("resumption.mpy", "resumption", E.F_HARDWARE),
]


@pytest.mark.parametrize("name, module, stage", STAGE_FILES,
                         ids=[s[0] for s in STAGE_FILES])
def test_a_fault_contained_in_a_start_up_stage(rig, name, module, stage):
    good = _damage(rig, name)
    try:
        states = boardstate.reset_and_read(rig.port, WHO, boardstate.clock_tuple())
        kinds = [s.kind for s in states]
        assert kinds == [boardstate.FAULT] * E.MAX_FAILED_BOOTS + [boardstate.OUT_OF_SERVICE], \
            [s.line for s in states]
        where = "loading %s (/%s)" % (module, name)
        for s in states[:-1]:
            assert s.stage == stage and where in s.text and "ValueError" in s.text, s.line
        out = rig.diag("status")
        st = status_lines(out)
        assert st["running"].startswith("no: OUT OF SERVICE after 3 failed boots"), out
        assert "diag.clear_fault()" in st["running"], out
        assert st["faults"].startswith("3 failed boots in a row"), out
        named = [ln.strip() for ln in out.splitlines()
                 if where in ln and ln.startswith("          ")]
        assert len(named) == 3, out
        assert all(ln.startswith("%s: stage %d " % (texts.FAULT_STAGES[stage], stage))
                   for ln in named), named
        rig.repl()
    finally:
        _put_back(rig, name, good)
    said = _clear(rig)
    assert said.startswith("3 failed boots cleared (3 journaled now)"), said
    rig.running()


def test_out_of_service_after_three_failed_boots_each_journaled(rig, tmp_path):
    name = "hw/bell.mpy"
    good = _damage(rig, name)
    lines: list[str] = []
    try:
        states = boot_to_the_repl(rig, lines)
        assert [s.kind for s in states] == [boardstate.FAULT] * 3 + [
            boardstate.OUT_OF_SERVICE], lines
        assert states[-1].failed_boots == 3 and "/hw/bell.mpy" in states[-1].text, lines
        # the fault lamps lit (through the lamp driver alone: the hardware
        # stage failed before it made the adapters), else the console says why
        not_lit = [ln for ln in lines if "fault lamps not lit" in ln]
        assert not not_lit, lines
        lamps = rig.client.lamps()
        lit = {n for n in lamps["lit"] if isinstance(n, str)}
        assert {"PLACE_BETS", "PAYING"} <= lit, lamps  # the fault pattern
        out = rig.diag("status")
        assert status_lines(out)["running"].startswith("no: OUT OF SERVICE after 3"), out
        assert sum("loading hw.bell (/hw/bell.mpy): ValueError" in ln
                   for ln in out.splitlines() if ln.startswith("          ")) == 3, out
        board = last_board_line(out)
        assert board[0].startswith("board reset: OUT OF SERVICE after 3 failed boots") and \
            "/hw/bell.mpy" in board[0], out
        assert "diag.clear_fault()" in board[1], out
        rig.repl()
    finally:
        _put_back(rig, name, good)
    out = rig.sicbo("deploy", "--port", rig.port, "--board", BOARD, "--table", TABLE)
    assert "OUT OF SERVICE" in out, out  # deployed and mended, still out of service
    said = _clear(rig)
    assert said.startswith("3 failed boots cleared (3 journaled now)"), said
    rig.running()

    # The journal, on the board and pulled to the host: each failed boot, then
    # the clearing, as named records.
    def cleared_boots(lines: list[str]) -> list[str]:
        """The clearing's line and the three before it (the failed boots)."""
        at = max(i for i, ln in enumerate(lines) if "fault cleared" in ln)
        return lines[at - 3:at + 1]

    out = rig.diag("journal", "8")
    seen = cleared_boots(out.splitlines())
    for ln in seen[:3]:
        assert " fault " in ln and "stage 3 (hardware): ValueError" in ln, out
        assert "in an earlier boot (journaled late)" in ln, out
    assert " diag " in seen[3], out
    pulled = str(tmp_path / "journal.bin")
    rig.diag("--pull-journal", pulled, "help")
    with open(pulled, "rb") as f:
        recs = journal.records(f.read())
    at = max(i for i, r in enumerate(recs) if r.type == R.J_DIAG and r.p(0) == E.D_CLEAR_FAULT)
    assert [r.type for r in recs[at - 3:at]] == [R.J_FAULT] * 3, recs
    assert all((r.p(0), r.p(3)) == (E.F_HARDWARE, 1) for r in recs[at - 3:at]), recs
    text = rig.sicbo("journal", pulled, "--records", "200")
    seen = cleared_boots(text.splitlines())
    assert all("fault" in ln and "hardware" in ln for ln in seen[:3]), text


def boot_to_the_repl(rig, lines: list[str]) -> list[boardstate.BoardState]:
    """Reset typed at the REPL, and every line of the boots that follow read
    until MicroPython's banner after a settled line: start-up has ended
    (out of service: main.py returned, the lamps done)."""
    states: list[boardstate.BoardState] = []
    with boardstate.Console(rig.port, WHO) as con:
        con.drop_input()
        con.write(boardstate.INTERRUPT)
        code = boardstate.reset_code(boardstate.clock_tuple())
        con.write(code)
        reader = boardstate.LineReader(code.decode().strip())
        deadline = time.monotonic() + 4 * boardstate.BOOT_TIMEOUT_S
        while time.monotonic() < deadline:
            line = con.readline(0.5)
            if line is None:
                continue
            lines.append(line)
            s = reader.feed(line)
            if s is None:
                continue
            if s.kind == boardstate.REPL:
                if states and states[-1].settled:
                    return states
                continue
            states.append(s)
    raise AssertionError("no REPL after a settled start-up line: %s" % lines)


def test_memory_low(rig):
    """With diag loaded and all but a few kilobytes of the heap then taken at
    the REPL, each diagnostic answers: its part, or one line saying that
    memory is short; never a traceback. Then, with the heap whole again
    (mpremote's soft reset), every one works."""
    hog = ("import diag, gc\nhog = []\ngc.collect()\n"
           "while gc.mem_free() > 6000:\n    hog.append(bytearray(500))\n")
    got = rig.repl(hog, low=True)
    short = 0
    for c, text in got.items():
        for line in text.splitlines():
            if "memory" in line:
                assert re.match(r"^\w+: not enough memory \(memory allocation failed, "
                                r"allocating \d+ bytes; \d+ bytes free\): reset the "
                                r"board, then run diag first$", line), (c, text)
                short += 1
    assert short, got  # the heap was short for something: else this tested nothing
    rig.repl()
    rig.running()
