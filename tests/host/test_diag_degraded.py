"""`sicbo diag` on a board in trouble says what it can and leaves the board
as it found it, running again if it can:

- a board that keeps resetting (a fault on every boot that never reaches out
  of service: its filesystem full, the failed-boot count never written) is
  read for a bounded number of boots, then said in one line
  (host_tools/boardstate.read_states; deploy and the demo read through it);
- --svg that cannot draw (no round yet, no /table.json on the board, a
  garbled one) is one line after the status and the pulled journal, exit 0,
  and the board is reset all the same (mpremote stopped its app);
- a port path that is no serial port is said to be what it is.

Every wait is for a line of the board's or a process's end, never a sleep."""

import os
import shutil
import subprocess
import sys

import pytest

from host_tools import REPO, boardstate
from host_tools.deploy import deploy
from host_tools.mprun import CONTROLLER_HEAP
from host_tools.vboard import VirtualBoard
from sicbo import events as E
from sicbo import journal

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
HEAP = os.environ.get("SICBO_VBOARD_HEAP", CONTROLLER_HEAP)
SICBO = [sys.executable, "-m", "host_tools"]
WHO = "test_diag_degraded"
# Bound on one `sicbo diag` run: without the bound in read_states a board in
# a reset loop held it for ever.
DIAG_S = 120


# ---- read_states on a board that resets for ever: no board needed -----------------


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now


class _Looping:
    """A console on a board that prints a start-up fault every `every` s for
    ever (and noise between), on a clock of its own."""

    def __init__(self, clock, lines, every):
        self.clock = clock
        self.lines = lines
        self.every = every
        self.read = 0
        self.next_at = clock.now + every

    def readline(self, timeout):
        if self.read > 1000:
            raise AssertionError("read on and on: %d lines" % self.read)
        if self.next_at > self.clock.now + timeout:
            self.clock.now += timeout
            return None
        self.clock.now = self.next_at
        self.next_at += self.every
        line = self.lines[self.read % len(self.lines)]
        self.read += 1
        return line


FULL = "sicbo: FAULT in stage 4: OSError 28"


@pytest.mark.parametrize("lines, every", [
    ([FULL], 0.01),  # the reviewer's: 13,550 times in 11 minutes
    (["rst:0xc (SW_CPU_RESET)", "sicbo: board warning: GPIO0", FULL], 0.2),
    ([FULL], 29.0),  # each boot just inside the per-boot deadline
])
def test_a_board_that_resets_for_ever_is_read_a_bounded_while(monkeypatch, lines, every):
    clock = _Clock()
    monkeypatch.setattr(boardstate, "time", clock)
    con = _Looping(clock, lines, every)
    start = clock.now
    states = boardstate.read_states(con, 30.0)
    assert [s.kind for s in states] == [boardstate.FAULT] * (E.MAX_FAILED_BOOTS + 1)
    assert con.read == len(lines) * (E.MAX_FAILED_BOOTS + 1)  # read no further
    assert clock.now - start <= 30.0 * boardstate.MAX_RESETS
    said = boardstate.summary(states, 30.0, port="/dev/ttyUSB0")
    assert said == ["the board keeps resetting: FAULT in stage 4: OSError 28 (%d times): see "
                    "sicbo diag --port /dev/ttyUSB0 status" % (E.MAX_FAILED_BOOTS + 1)]
    assert boardstate.summary(states)[0].endswith(": see sicbo diag status")


def test_configurations_kept_for_ever_are_read_a_bounded_while(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(boardstate, "time", clock)
    kept = "sicbo: configuration checked and kept in /config.cache: restarting"
    con = _Looping(clock, [kept], 0.5)
    states = boardstate.read_states(con, 30.0)
    assert len(states) == boardstate.MAX_RESETS, [s.line for s in states]
    assert boardstate.summary(states)[0].startswith(
        "the board keeps resetting: configuration checked and kept in /config.cache: "
        "restarting (%d times)" % boardstate.MAX_RESETS)


def test_failed_boots_up_to_out_of_service_are_still_read_to_the_end():
    out = ("sicbo: OUT OF SERVICE after 3 failed boots (last: stage 3: x). Outputs are off.")
    lines = ["sicbo: configuration checked and kept in /config.cache: restarting"] + \
        ["sicbo: FAULT in stage 3: ValueError x"] * E.MAX_FAILED_BOOTS + [out, "J a5"]

    class Console:
        def readline(self, timeout):
            return lines.pop(0) if lines else None

    states = boardstate.read_states(Console(), 5)
    assert states[-1].kind == boardstate.OUT_OF_SERVICE and len(states) == 5
    assert boardstate.summary(states)[-1] == states[-1].describe()  # one line per boot


# ---- the reset after diagnostics that failed -------------------------------------


class _Answers:
    """mpremote against a board that answers its chain with `out`."""

    def __init__(self, out):
        self.out = out

    def check_port(self):
        pass

    def run(self, *chain):
        return self.out


def test_the_board_is_reset_also_when_what_diag_was_asked_failed(monkeypatch, tmp_path,
                                                                   capsys):
    import argparse

    from host_tools.cli import UsageError
    from host_tools.commands import diag as cmd

    resets = []

    def reset_and_read(port, who, clock=None, lock=None, **kw):
        resets.append(port)
        return [boardstate.parse("sicbo: T, round 3, state 0")]

    monkeypatch.setattr(boardstate, "reset_and_read", reset_and_read)
    port = str(tmp_path / "tty")
    args = argparse.Namespace(port=port, what="status", n=None, no_rtc=True,
                              no_restart=False, svg=None, table=None,
                              pull_journal=str(tmp_path / "j.bin"))
    with pytest.raises(UsageError, match="did not list its journal"):
        cmd.run(args, mpremote=_Answers("running   yes\n"))  # no journal listed
    assert resets == [port]
    assert capsys.readouterr().out.splitlines()[-1] == \
        "board reset: the table runs: T, round 3, idle"
    args.no_restart = True
    with pytest.raises(UsageError):
        cmd.run(args, mpremote=_Answers("running   yes\n"))
    assert resets == [port]  # --no-restart: left at the REPL


# ---- the port ---------------------------------------------------------------------


def test_a_port_path_that_is_no_serial_port_is_said_so(tmp_path):
    from host_tools.portlock import PortLock

    plain = tmp_path / "notaport"
    plain.write_text("")
    for port, what in ((str(plain), "a regular file"), (str(tmp_path), "a folder"),
                       ("/dev/null", "a device that is not a terminal")):
        # said before the port's lock is taken: another program holding a
        # lock of that name (CI: another test's fake board on /dev/null)
        # made it "in use"
        with PortLock(port, "another test"):
            r = subprocess.run(SICBO + ["diag", "--port", port, "status"], cwd=REPO,
                               capture_output=True, text=True, timeout=DIAG_S)
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stderr.strip() == "sicbo diag: %s is not a serial port (%s)" % (port, what), \
            r.stderr
        assert "in use" not in r.stderr


# ---- on a virtual board --------------------------------------------------------------


@pytest.fixture(scope="module")
def vb(tmp_path_factory):
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-diag-degraded")), board=BOARD,
                      heap=HEAP) as board:
        deploy(board.port, BOARD, TABLE)
        yield board


def diag(vb, *args):
    r = subprocess.run(SICBO + ["diag", "--port", vb.port, *args], cwd=REPO,
                       capture_output=True, text=True, timeout=DIAG_S)
    assert "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    return r


def board_lines(out):
    return [ln for ln in out.splitlines() if ln.startswith(("board reset: ", "  do: "))]


def running(vb):
    states = boardstate.reset_and_read(vb.port, WHO, boardstate.clock_tuple())
    assert states and states[-1].kind == boardstate.RUNNING, [s.line for s in states]


def test_svg_with_no_round_yet_says_so_and_the_table_resumes(vb, tmp_path):
    out = tmp_path / "round.svg"
    r = diag(vb, "status", "--svg", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("running   yes"), r.stdout
    assert "picture: not drawn: no round in the journal to draw" in lines, r.stdout
    assert lines.index("picture: not drawn: no round in the journal to draw") > \
        max(i for i, ln in enumerate(lines) if ln.startswith("heap "))  # after the status
    assert board_lines(r.stdout)[-1].startswith("board reset: the table runs: "), r.stdout
    assert not out.exists()
    # and the board runs: a diag after it finds the app running (its stop journaled)
    r = diag(vb, "journal", "3", "--no-rtc")
    assert r.returncode == 0 and " repl " in r.stdout, r.stdout


def test_no_table_file_on_the_board_still_gives_status_and_journal(vb, tmp_path):
    table = os.path.join(vb.fs, "table.json")
    saved = str(tmp_path / "table.json")
    shutil.move(table, saved)
    pulled = tmp_path / "journal.bin"
    try:
        r = diag(vb, "status", "--svg", str(tmp_path / "round.svg"), "--pull-journal",
                 str(pulled))
        assert r.returncode == 0, r.stdout + r.stderr
        lines = r.stdout.splitlines()
        # the status, the table file named (device/diag.py reads each alone)
        assert lines[0].startswith("running   no: cannot read /table.json: no such file"), \
            r.stdout
        assert "table     files refused: cannot read /table.json: no such file" in lines, \
            r.stdout
        # the journal
        assert any(ln.startswith("journal: ") and ln.endswith(str(pulled)) for ln in lines)
        assert journal.records(pulled.read_bytes()), r.stdout
        # the picture: the file named as missing, not the port
        assert "picture: not drawn: the board has no /table.json: give the table file with " \
               "--table FILE" in lines, r.stdout
        assert "nothing at the port" not in r.stdout + r.stderr
        assert board_lines(r.stdout)[0].startswith("board reset: the table did not start"), \
            r.stdout

        # a garbled one: the board's file named, not the host's copy of it
        with open(table, "w") as f:
            f.write('{"name": "x",\n')
        r = diag(vb, "help", "--svg", str(tmp_path / "round.svg"))
        assert r.returncode == 0, r.stdout + r.stderr
        said = [ln for ln in r.stdout.splitlines() if ln.startswith("picture: ")]
        assert len(said) == 1 and said[0].startswith(
            "picture: not drawn: the board's /table.json refused: "), r.stdout
        assert "sicbo-diag-" not in r.stdout + r.stderr
    finally:
        shutil.move(saved, table)
    running(vb)


# The boot of a board that faults every time and never reaches out of
# service, as firmware before the fault path refused to reset uncounted did on
# a full filesystem (13,550 resets in 11 minutes): its start-up takes a
# moment (Ctrl-C stops it there), then the fault and a reset.
LOOPING_MAIN = """import time
import machine
time.sleep_ms(150)
print("sicbo: FAULT in stage 4: OSError 28")
machine.reset()
"""


def test_a_board_that_keeps_resetting_is_said_so_and_diag_ends(vb):
    main = os.path.join(vb.fs, "main.py")
    good = open(main, "rb").read()
    try:
        with open(main, "w") as f:
            f.write(LOOPING_MAIN)
        r = diag(vb, "status")  # it returns: else the timeout fails the test
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.startswith("running   "), r.stdout
        said = board_lines(r.stdout)
        assert said == ["board reset: the board keeps resetting: FAULT in stage 4: OSError 28 "
                        "(%d times): see sicbo diag --port %s status"
                        % (E.MAX_FAILED_BOOTS + 1, vb.port)], r.stdout
        # Resetting still: diag status answers all the same.
        r = diag(vb, "status", "--no-restart")
        assert r.returncode == 0 and r.stdout.startswith("running   "), r.stdout + r.stderr
        assert not board_lines(r.stdout), r.stdout
        r = diag(vb, "help")  # and into the loop again
        assert r.returncode == 0 and "board reset: the board keeps resetting" in r.stdout, \
            r.stdout
    finally:
        with open(main, "wb") as f:
            f.write(good)
    running(vb)  # mended: a reset runs the table again


def test_a_deploy_cut_short_is_named_and_the_table_does_not_start(vb):
    # sicbo deploy's mark of a copy under way (manifest.prev, no
    # manifest.json), as a power cut leaves it: the boot refuses the files
    # (a fault: they may be two releases mixed) and diag status names it.
    manifest = os.path.join(vb.fs, "manifest.json")
    prev = os.path.join(vb.fs, "manifest.prev")
    shutil.move(manifest, prev)
    try:
        r = diag(vb, "status")
        assert r.returncode == 0, r.stdout + r.stderr
        assert any(ln.startswith("firmware  DEPLOY CUT SHORT: /manifest.prev, no "
                                 "/manifest.json") for ln in r.stdout.splitlines()), r.stdout
        assert "a deploy was cut before its end" in r.stdout, r.stdout
    finally:
        shutil.move(prev, manifest)
        # The failed boots it made, journaled and cleared as a technician
        # does once the deploy is complete (the count may be out of service).
        from host_tools.deploy import MpRemote

        MpRemote(vb.port).run("exec", "import diag; diag.clear_fault()")
    running(vb)


def test_a_full_filesystem_on_the_board_is_said_so():
    # mpremote's last line was all a technician saw: "OSError: 28".
    from host_tools.deploy import MpRemote

    e = MpRemote("/dev/ttyUSB0").error("", "Traceback (most recent call last):\n"
                                           "  File \"<stdin>\", line 3, in sd_w\n"
                                           "OSError: 28\n")
    assert "the board's filesystem at /dev/ttyUSB0 is full (OSError: 28)" in str(e), e


@pytest.mark.parametrize("option", ["--pull-journal", "--svg"])
def test_where_the_journal_or_picture_goes_is_checked_before_the_board(tmp_path, option):
    # A folder that is not there gave a traceback after the board's app was
    # stopped, and left it stopped.
    r = subprocess.run(SICBO + ["diag", "--port", str(tmp_path / "no-port"), option,
                                str(tmp_path / "none" / "out")],
                       cwd=REPO, capture_output=True, text=True, timeout=DIAG_S)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "no folder %s" % (tmp_path / "none") in r.stderr
