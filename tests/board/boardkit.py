"""What the board tests share: a virtual board on the 32-bit VM, deployed with
the `sicbo deploy` CLI as the README says, its serial console read line by
line, a dealer playing through the simulated table's control socket, and the
board's journal read on the host with the firmware's own sicbo.journal."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

from host_tools import REPO
from host_tools.serialwatch import SerialWatch
from host_tools.simclient import TableClient
from host_tools.vboard import VirtualBoard
from sicbo import events as E
from sicbo import journal
from sicbo import records as R

# The virtual board's wiring with the shortest timings a board file allows
# (rounds well under a second), and the full 2004 table.
BOARD = os.path.join(REPO, "bench", "virtual-fast.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
SICBO = os.path.join(os.path.dirname(sys.executable), "sicbo")
# What the app prints once the table runs (device/startup.py), and what a
# boot that does not get there prints.
RUNNING = re.compile(r"^sicbo: (.*), round (\d+), state (\S+)\s*$")
FAILING = ("sicbo: FAULT", "sicbo: OUT OF SERVICE", "Traceback (most recent call last)",
           "table not started", "app not started", "MemoryError")
KEYS = ("shake", "key_bell", "key_void", "key_payout", "key_confirm", "key_face_1",
        "key_face_2", "key_face_3", "key_face_4", "key_face_5", "key_face_6")
# Waits end as soon as what they wait for comes; these are for a board that
# never gets there, long enough for a busy machine.
BOOT_TIMEOUT_S = 120
LAMP_TIMEOUT_S = 60
# A press for the board's attention (host_tools/simclient.py): held until
# the board has read it for PRESS_MS, then released as long.
PRESS_MS = 40

# Figures the tests measured, printed at the end of the run (conftest.py).
FIGURES: list[str] = []


def figure(text: str) -> None:
    FIGURES.append(text)


class Console(SerialWatch):
    """The board's serial console (host_tools.serialwatch), with what the
    tests ask of it: the lines that say the board failed, and a message."""

    def failing(self, mark: int = 0) -> list[str]:
        return [ln for ln in self.since(mark) if any(f in ln for f in FAILING)]

    def tail(self, mark: int = 0, n: int = 12) -> str:
        return " | ".join([ln for ln in self.since(mark) if ln.strip()
                           and "board warning" not in ln][-n:])

    def explain(self, mark: int = 0) -> str:
        """What went wrong, for a message: the failing lines (each once),
        then the last lines."""
        bad: list[str] = []
        lines = self.since(mark)
        for i, ln in enumerate(lines):
            if not any(f in ln for f in FAILING) or ln in bad:
                continue
            bad.append(ln)
            if "Traceback" in ln:
                # the traceback's frames and its error: what a reader needs
                for nxt in lines[i + 1:i + 12]:
                    bad.append(nxt.strip())
                    if not nxt.startswith(" "):
                        break
        return "console: %s; last lines: %s" % (" | ".join(bad[:16]) or "no fault line",
                                                self.tail(mark, 6))


def segments(folder: str) -> list[str]:
    if not os.path.isdir(folder):
        return []
    return sorted(n for n in os.listdir(folder) if re.match(r"^j\d{8}\.log$", n))


def read_records(folder: str) -> list[journal.Record]:
    out = []
    for name in segments(folder):
        with open(os.path.join(folder, name), "rb") as f:
            out.extend(journal.records(f.read()))
    return out


class Board:
    """A virtual board running `exe` at `heap`, the simulated table attached."""

    def __init__(self, folder: str, exe: str, heap: int, board: str = BOARD,
                 broker: tuple[str, int] | None = None):
        # The virtual board's interpreter, named as integrators name it
        # (SICBO_MICROPYTHON), for this board's life. broker: where its
        # simulated network leads (the floor link's broker).
        self._env = os.environ.get("SICBO_MICROPYTHON")
        os.environ["SICBO_MICROPYTHON"] = exe
        self.exe = exe
        self.board = board
        self.vb = VirtualBoard(folder, board=board, heap=str(heap), table_file=TABLE,
                               broker=broker)
        try:
            self.vb.start()
        except BaseException:
            self._restore()
            raise
        assert self.vb.heap == str(heap)
        self.client = TableClient(self.vb.control)
        self.console: Console | None = None
        self.round = 0
        self.round_mark = 0  # the console's line count when this round began

    @property
    def journal_dir(self) -> str:
        return os.path.join(self.vb.fs, "journal")

    def _restore(self) -> None:
        if self._env is None:
            os.environ.pop("SICBO_MICROPYTHON", None)
        else:
            os.environ["SICBO_MICROPYTHON"] = self._env

    def close(self) -> None:
        try:
            if self.console is not None:
                self.console.close()
            self.client.close()
            self.vb.stop()
        finally:
            self._restore()

    # ---- deploy and power -------------------------------------------------------

    def deploy(self, reset: bool = True) -> str:
        """`sicbo deploy` (the CLI) as the README gives it; returns its output."""
        cmd = [SICBO, "deploy", "--port", self.vb.port, "--board", self.board, "--table", TABLE]
        if not reset:
            cmd.append("--no-reset")
        resets = self.vb.hard_resets
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        out = r.stdout + r.stderr
        assert r.returncode == 0, "sicbo deploy failed: %s" % out
        if reset and "no reset" not in out:
            # bytes sent to a board as it resets are lost: until it has
            deadline = time.monotonic() + BOOT_TIMEOUT_S
            while self.vb.hard_resets == resets and time.monotonic() < deadline:
                time.sleep(0.01)
            assert self.vb.hard_resets > resets, "the deploy's reset never came: %s" % out
        return out

    def open_console(self) -> Console:
        self.console = Console(self.vb.port)
        self.console.reattach()
        return self.console

    def wait_running(self, mark: int, what: str) -> tuple[str, int, str]:
        """Until the app's line `sicbo: <table>, round N, state S`; fails on a
        fault, a refusal, a traceback, or nothing within BOOT_TIMEOUT_S."""
        c = self.console
        assert c is not None
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        bad_at = None
        while True:
            lines = c.since(mark)
            for ln in lines:
                m = RUNNING.match(ln)
                if m:
                    return m.group(1), int(m.group(2)), m.group(3)
            now = time.monotonic()
            if bad_at is None and c.failing(mark):
                bad_at = now  # what follows (a traceback's end) is part of it
            if (bad_at is not None and now - bad_at > 1.0) or now > deadline:
                raise AssertionError("%s: the board did not reach the running table (heap %s, "
                                     "%s): %s" % (what, self.vb.heap, self.exe,
                                                  c.explain(mark)))
            time.sleep(0.02)

    def reset_on_console(self) -> tuple[str, int, str]:
        """Ctrl-C the app and machine.reset() typed on the console (the clock
        survives a reset): the boot that follows is read whole."""
        c = self.console or self.open_console()
        mark = c.mark()
        c.write(b"\r\x03\x03\rimport machine; machine.reset()\r")
        return self.wait_running(mark, "reset after the deploy")

    def power_cycle(self, what: str) -> tuple[str, int, str]:
        """Power cut, then power on: a fresh heap, the RTC lost; wait for the
        running table."""
        self.vb.power_cut()
        for k in KEYS:  # no key held at power-on (confirm would be the recovery mode)
            self.client.release(k)
        c = self.console or self.open_console()
        mark = c.mark()
        self.vb.power_on(timeout=0, before_boot=c.reattach)  # the console reads the whole boot
        return self.wait_running(mark, what)

    def install_journal(self, folder: str) -> None:
        """A journal written by the same firmware elsewhere, into the board's
        /journal (with the board off or about to be cut), with the
        configuration cache that firmware made of the same files, as a board
        that has run has it (its first boot on new files, which makes the
        cache, is test (a)'s first boot after the deploy)."""
        dest = self.journal_dir
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        for name in segments(folder):
            shutil.copy(os.path.join(folder, name), os.path.join(dest, name))
        import tablefiles  # the firmware's: where the cache lives beside the board file

        cache = tablefiles.CACHE_NAME
        if os.path.exists(os.path.join(folder, cache)):
            shutil.copy(os.path.join(folder, cache), os.path.join(self.vb.fs, cache))

    # ---- the dealer ---------------------------------------------------------------

    def lit(self) -> set[str]:
        return {n for n in self.client.lamps()["lit"] if isinstance(n, str)}

    def wait_lit(self, name: str, on: bool = True, timeout: float = LAMP_TIMEOUT_S) -> None:
        """Until the lamp is lit (or off); fails at once on a fault printed
        since this round began (a traceback before it, say from a Ctrl-C that
        stopped the app for a reset, is not this round's)."""
        mark = self.round_mark
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (name in self.lit()) == on:
                return
            if self.console is not None and self.console.failing(mark):
                break
            time.sleep(0.01)
        raise AssertionError("round %d: lamp %s never %s (lit %s); %s; %s"
                             % (self.round + 1, name, "on" if on else "off", sorted(self.lit()),
                                self.console.explain(mark) if self.console
                                else "console not read", self.story()))

    def story(self) -> str:
        """What the board and the table did lately, for a failure's message."""
        vb = self.vb
        evs = [e for e in self.client.events()["events"] if e["kind"] not in ("pwm", "lamps")]
        st = self.client.state()
        return ("board: %d starts, resets %d hard, %d watchdog, %d soft, %d crashes, console "
                "%s; table: held %s, connected %s; last events %s; console since the round: %s"
                % (vb.boots, vb.hard_resets, vb.watchdog_resets, vb.soft_resets, vb.crashes,
                   vb.console_state, st["held"], st["connected"], evs[-12:],
                   " | ".join(self.console.since(self.round_mark)[-30:]) if self.console
                   else "-"))

    def press(self, key: str) -> None:
        """Until the board has seen the press and the release: the next
        press, of any key, comes after it."""
        try:
            self.client.press(key, ms=PRESS_MS, wait=True)
        except TimeoutError as e:
            raise AssertionError("round %d: the board never took %s (%s); %s"
                                 % (self.round + 1, key, e, self.story())) from e

    def play(self, dice: tuple[int, int, int] | None) -> None:
        """One round from idle: paid with `dice`, or voided (stacked) if None.
        Each step waits for the lamp the firmware lights after journaling,
        or for the board to have taken the cover and clasps (a key pressed
        as the cover goes on can be taken before it)."""
        c = self.client
        self.round_mark = self.console.mark() if self.console is not None else 0
        c.set_all({"cover": 1, "clasp_left": 1, "clasp_right": 1}, wait_ms=PRESS_MS)
        self.press("shake")
        self.wait_lit("PLACE_BETS")
        rung = c.outputs()["bell"]["on_count"]
        self.press("key_bell")
        self.wait_lit("PLACE_BETS", on=False)
        # the dealer lifts the cover once the bell has rung out
        c.wait_for(lambda t: (b := t.outputs()["bell"])["on_count"] > rung and not b["level"],
                   timeout=LAMP_TIMEOUT_S)
        c.set_all({"clasp_left": 0, "clasp_right": 0, "cover": 0}, wait_ms=PRESS_MS)
        if dice is None:
            for k in ("key_void", "key_face_1", "key_confirm"):
                self.press(k)
            self.wait_lit("VOID")
        else:
            for d in dice:
                self.press("key_face_%d" % d)
            self.press("key_confirm")
            self.wait_lit("PAYING")
            self.press("key_payout")
            self.wait_lit("PAYING", on=False)
        self.round += 1


def is_idle(state: str) -> bool:
    """The running line's state: its number (sicbo.events ST_*) or name."""
    return state in (str(E.ST_IDLE), "idle")


def settled(records: list[journal.Record]) -> dict[int, list[str]]:
    """round -> how the journal ended it (paid, void), each record once."""
    out: dict[int, list[str]] = {}
    for r in records:
        if r.type == R.J_PAYOUT:
            out.setdefault(r.round, []).append("paid")
        elif r.type == R.J_VOID:
            out.setdefault(r.round, []).append("void")
    return out


def play_and_check(b: Board, first_round: int, n: int, mark: int) -> None:
    """n rounds from idle after a boot in round first_round: each settled on
    the table and once in the journal, nothing failing on the console."""
    b.round = first_round
    plan = [(1 + i % 6, 1 + (i * 5) % 6, 1 + (i * 3 + 2) % 6) for i in range(n)]
    if n >= 3:
        plan[1] = None  # one dealer void among them
    for dice in plan:
        b.play(dice)
    time.sleep(0.2)
    assert b.console is not None
    assert not b.console.failing(mark), b.console.explain(mark)
    ends = settled(read_records(b.journal_dir))
    for i, dice in enumerate(plan):
        rid = first_round + 1 + i
        assert ends.get(rid) == ["paid" if dice else "void"], (rid, ends.get(rid))
    faults = [r for r in read_records(b.journal_dir) if r.type == R.J_FAULT]
    assert not faults, faults
