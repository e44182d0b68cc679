"""`sicbo demo` (`make run`): the firmware on a virtual board, playing rounds.

Starts a virtual board (the MicroPython unix port behind a pty, with the
simulated table) on a run folder that keeps the board's files and journal
from one run to the next, deploys the firmware to it exactly as to a real
board (`sicbo deploy`), resets it with its clock set, and reads what the
board itself says it is doing (its start-up line, host_tools/boardstate.py;
then every journal record and dealer message it prints, and its lamps on the
simulated table's control socket). A scripted dealer then does what a dealer
would with the table as the board found it (a round cut by the last Ctrl-C:
finish the payout, lift the cover and enter the dice, void a round cut in
result entry, clear an alarm or resolve a hold with the supervisor key) and
plays on. Round numbers are the board's. Where the board cannot play (out of
service, its files refused, recovery mode) it says why in one line and what
to type, exit status 2. Ctrl-C stops everything.

With --floor (make run), a broker and the floor service run beside the
table (host_tools/demofloor.py) and each round the floor stored is shown;
--broker HOST:PORT puts the table on a floor that runs elsewhere (a floor of
several virtual tables, README "The floor").

Every wait is for something the board or the table does (a journal record, a
dealer message, a lamp, the bell's output), with a generous deadline; only
the dealer's pace between steps is a fixed pause, for people to follow.
"""

import os
import random
import shutil
import signal
import sys
import threading
import time

from host_tools import REPO
from host_tools.cli import UsageError
from host_tools.console import render
from sicbo import records as R

NAME = "demo"
HELP = "start a virtual board, deploy the firmware to it and play rounds (make run)"

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
RUN = os.path.join(REPO, "run", "demo")
# How a 2004 layout card groups the areas, row by row.
LAYOUT = (
    ("", ["SMALL", "ODD", "ANY_TRIPLE", "EVEN", "BIG"]),
    ("triple", ["TRIPLE_%d" % n for n in range(1, 7)]),
    ("double", ["DOUBLE_%d" % n for n in range(1, 7)]),
    ("total", ["TOTAL_%d" % t for t in range(4, 18)]),
    ("single", ["SINGLE_%d" % n for n in range(1, 7)]),
    ("pair", None),  # every PAIR_ area
    ("combo", None),  # every COMBO_ area
    ("four", None),  # every FOUR_ area
    ("lamps", ["PLACE_BETS", "PAYING", "VOID", "ALARM"]),
)
STATUS_LAMPS = ("PLACE_BETS", "PAYING", "VOID", "ALARM")
# What the dealer gets wrong now and then (--incidents): stacked dice (a void),
# the cover lifted before the bell (an alarm and a void), a dice reader that
# reads other dice than the dealer entered (a hold for the supervisor).
INCIDENTS = ("stacked", "early cover", "reader")
# The simulated table's cover and clasps as a run leaves them, in the run
# folder: the next run's table starts so, as a real table stays as it is
# while its board restarts (keys and the supervisor's key are let go).
TABLE_STATE = "table-inputs.json"
KEPT_INPUTS = ("cover", "clasp_left", "clasp_right")
WAIT_S = 60.0  # for the board's answer to a dealer's action (a busy machine)
PRESS_MS = 150  # of the board's attention: above its debounce (20 ms on the virtual board)
# REPL noise on the console around the reset the demo types (not the board's news).
_REPL_NOISE = (">>>", "MicroPython ", 'Type "help()"', "raw REPL", "MPY: soft reboot")


def add_arguments(p):
    p.add_argument("--rounds", type=int, default=0,
                   help="stop after this many whole rounds (default: until Ctrl-C)")
    p.add_argument("--folder", default=RUN, help="the virtual board's run folder")
    p.add_argument("--board", default=BOARD, help="board file (default: virtual.json)")
    p.add_argument("--table", default=TABLE, help="table file (default: macau-2004.json)")
    p.add_argument("--fresh", action="store_true",
                   help="start from an empty board filesystem (forget the journal)")
    p.add_argument("--seed", type=int, help="dice of the scripted dealer (default: random)")
    p.add_argument("--pace", type=float, default=1.0,
                   help="seconds the dealer waits at each step (default 1.0)")
    p.add_argument("--incidents", type=float, default=0.1, metavar="P",
                   help="chance per round of an incident: stacked dice, the cover lifted "
                        "before the bell, a dice reader that disagrees (default 0.1)")
    p.add_argument("--heap", default=None,
                   help="interpreter heap (default: the board's, host_tools/heaps.py)")
    f = p.add_argument_group("the floor (docs/floor.md)")
    f.add_argument("--floor", action="store_true",
                   help="start a broker (mosquitto, TLS) and the floor service beside the "
                        "table, deploy it with its secrets and show each round the floor "
                        "stores (make run); without mosquitto, say so and play without")
    f.add_argument("--broker", metavar="HOST:PORT",
                   help="the site's broker: the virtual board's network leads there (a "
                        "floor of several tables: the first demo's --floor prints it)")
    f.add_argument("--site-folder", metavar="DIR",
                   help="with --broker: the site's certificates (sicbo floor certs); the "
                        "table's are made there if missing")
    f.add_argument("--table-id", default="T01", metavar="ID",
                   help="the table's id on the floor (default T01)")
    f.add_argument("--floor-db", metavar="FILE",
                   help="with --broker: the floor's store, whose stored rounds are shown")


class Stuck(UsageError):
    """The board did not answer a dealer's action in time."""


class BoardConsole:
    """The board's serial console, held by the demo (host_tools/portlock.py):
    every line shown as it comes, and what they say kept for the dealer:

    * `rs`: the round as the journal records printed say it, through the
      firmware's own transition function (sicbo.roundstate.RoundState); its
      state and round are set from each running line (`sicbo: ..., round N,
      state S`), which tells them at every boot;
    * `states`: every start-up line (boardstate.BoardState), in order;
    * `messages`: every dealer message (code, detail), in order;
    * `records`: every journal record printed.
    """

    def __init__(self, port, out, table):
        from sicbo.roundstate import RoundState

        self.port = port
        self.out = out
        self.table = table
        self.cond = threading.Condition()
        self.rs = RoundState()
        self.states = []
        self.messages = []
        self.records = []
        self._con = None
        self._thread = None
        self._stop = threading.Event()
        self._last_d = None
        self._reader = None  # boardstate.LineReader
        self.opens = 0  # how many times the port was (re)opened

    # ---- the port --------------------------------------------------------------

    def open(self, timeout=10.0):
        from host_tools.boardstate import Console, LineReader

        self._stop.clear()
        self._reader = LineReader()
        self._con = Console(self.port, "sicbo demo").open(timeout)
        with self.cond:
            self.opens += 1
        self._thread = threading.Thread(target=self._run, name="demo-console", daemon=True)
        self._thread.start()

    def close(self):
        """Stop reading and let go of the port (deploy needs it alone)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        if self._con is not None:
            self._con.close()
            self._con = None

    def type(self, data):
        """Type at the board's REPL: its answer is read after the echo."""
        with self.cond:
            self._reader.expect(data.decode("utf-8", "replace").strip().splitlines()[-1])
        self._con.write(data)

    def _run(self):
        import serial  # pyserial

        while not self._stop.is_set():
            con = self._con
            try:
                line = con.readline(0.2)
            except (OSError, serial.SerialException):
                # The port went away (a power cut on the control socket):
                # take it again when it comes back.
                con.close()
                while not self._stop.is_set():
                    try:
                        con.open(0.5)
                        with self.cond:
                            self.opens += 1
                            self.cond.notify_all()
                        break
                    except (OSError, serial.SerialException, UsageError):
                        # soon: nobody holding the port drops what the new
                        # boot prints (its start-up line says its state)
                        time.sleep(0.02)
                continue
            if line is not None:
                self._take(line)

    def _take(self, line):
        from sicbo import journal

        with self.cond:
            s = self._reader.feed(line)
            if s is not None:
                self.states.append(s)
                if s.running and s.state is not None:
                    self._sync(s)
                self.cond.notify_all()
        text = line.strip()
        if not text or text.startswith(_REPL_NOISE):
            return
        shown = render(line, self.table)
        with self.cond:
            if line.startswith("D "):
                parts = line.split()
                if len(parts) == 3 and all(x.isascii() and x.isdigit() for x in parts[1:]):
                    self.messages.append((int(parts[1]), int(parts[2])))
                if shown == self._last_d:
                    shown = None  # the same text again: the dealer's display shows it
                else:
                    self._last_d = shown
            else:
                self._last_d = None
            if line.startswith("J ") and not shown.endswith("(not a valid record)") \
                    and shown != line:
                import binascii

                data = binascii.unhexlify(line[2:].strip())
                self.records.append(journal.Record(data, 0))
                # gap: the console does not print every record (the meters'
                # checkpoints are written apart), so the sequence may skip.
                self.rs.take(data, 0, True)
            self.cond.notify_all()
        if shown is not None:
            self.out("  board | " + shown)

    def _sync(self, s):
        # A boot's running line says the round and its state: from here the
        # records that follow are applied to that.
        from sicbo.roundstate import RoundState

        rs = RoundState()
        rs.state = s.state
        rs.round = s.round
        self.rs = rs

    # ---- what the board said ------------------------------------------------------

    def mark(self):
        with self.cond:
            return len(self.records), len(self.messages), len(self.states)

    def wait(self, predicate, timeout=WAIT_S):
        """Until predicate() (called with the lock held) is true: True, or
        False after timeout s."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.2))
            return True

    def settled_since(self, mark):
        """The first settled start-up state after mark, or None."""
        with self.cond:
            for s in self.states[mark[2]:]:
                if s.settled:
                    return s
        return None

    def message_since(self, mark, code, detail=None):
        with self.cond:
            return any(c == code and (detail is None or d == detail)
                       for c, d in self.messages[mark[1]:])

    def record_since(self, mark, rtype):
        with self.cond:
            for r in self.records[mark[0]:]:
                if r.type == rtype:
                    return r
        return None

    def restarted_since(self, mark):
        with self.cond:
            return len(self.states) > mark[2]

    def last_state(self, mark=(0, 0, 0)):
        """The last start-up line after mark, or None."""
        with self.cond:
            return self.states[-1] if len(self.states) > mark[2] else None


def layout_lines(lit, codes, colour):
    """The layout card as text, lit areas marked."""
    def mark(code):
        short = code.replace("TRIPLE_", "T").replace("DOUBLE_", "D").replace(
            "TOTAL_", "").replace("SINGLE_", "S").replace("PAIR_", "P").replace(
            "COMBO_", "C").replace("FOUR_", "F").replace("ANY_TRIPLE", "ANY3")
        if code in lit:
            return ("\x1b[1;30;43m %s \x1b[0m" % short) if colour else "[%s]" % short
        return " %s " % short

    out = []
    for label, row in LAYOUT:
        if row is None:
            prefix = label.upper() + "_"
            row = [c for c in codes if c.startswith(prefix)]
        row = [c for c in row if c in codes or c in lit or label == "lamps"]
        if not row:
            continue
        cells = [mark(c) for c in row]
        line = "  %-7s" % label
        for cell in cells:
            if len(_strip(line + cell)) > 78:
                out.append(line)
                line = "  %-7s" % ""
            line += cell
        out.append(line)
    return out


def _strip(text):
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


class Restarted(Exception):
    """The board restarted while the dealer waited (a contained fault)."""


class Dealer:
    """Plays through the simulated table's control channel, from whatever
    state the board is in: each pass looks at the round's state (as the
    board's journal records say it) and the lamps, and does the next thing a
    dealer would."""

    # How long the board must read a key pressed (and then released); a
    # board file with a shorter debounce allows less.
    press_ms = PRESS_MS

    def __init__(self, client, board, names, pace, rng, out, incidents, codes, colour):
        self.c = client
        self.b = board
        self.names = names  # lamp channel -> area / status lamp name
        self.pace = pace
        self.rng = rng
        self.out = out
        self.incidents = incidents
        self.codes = codes
        self.colour = colour
        self.started = set()  # round ids started by this run
        self.lifted = set()  # rounds of an earlier run whose cover this run lifted
        self.plan = {}  # round id -> the incident planned for it, or None
        self.dice = {}  # round id -> the dice the dealer entered
        self.shown = set()  # round ids whose layout was shown
        self.read = set()  # round ids whose reader line was sent
        self.played = 0  # whole rounds of this run finished (paid or void)
        self.finished = []  # rounds of an earlier run finished by this one

    # ---- the table -------------------------------------------------------------------

    def lit(self):
        # The table names the channels (it was given the table file); a spare
        # channel stays a number.
        return {ch for ch in self.c.lamps().get("lit", []) if isinstance(ch, str)}

    def inputs(self):
        return self.c.state()["inputs"]

    def press(self, key):
        # For the board's attention (simclient): held until the board has
        # read it pressed, then released until it has read that; returns once
        # it has seen the release, so the same key twice is two presses.
        try:
            self.c.press(key, ms=self.press_ms, wait=True)
        except TimeoutError:
            raise Stuck("the board never took the %s key within %d s" % (key, WAIT_S)) \
                from None

    def set_all(self, levels):
        # Until the board has taken them: a key pressed as the cover goes on
        # (or off) can be taken before it.
        try:
            self.c.set_all(levels, wait_ms=100)
        except TimeoutError:
            raise Stuck("the board never took %s within %d s"
                        % (", ".join(sorted(levels)), WAIT_S)) from None

    def step(self, text):
        self.out("dealer: " + text)
        time.sleep(self.pace)

    def act(self, key, predicate, what, mark):
        """Press a key, then wait until the board does what it is for. The
        press is one the board has seen (press() returns after the board read
        the release), so it is never pressed again: a second face key would
        be a second die."""
        self.press(key)
        self.until(predicate, what, mark)

    def until(self, predicate, what, mark, timeout=WAIT_S):
        """Until the board does it: Stuck (one line) if it does not in time,
        Restarted if the board printed a start-up line since `mark`."""
        b = self.b
        if not b.wait(lambda: predicate() or b.restarted_since(mark), timeout):
            raise Stuck("the board did not %s within %d s (its console is above)"
                        % (what, timeout))
        if b.restarted_since(mark):
            raise Restarted()

    def state(self):
        with self.b.cond:
            return self.b.rs.state, self.b.rs.round

    def state_is(self, *states):
        return lambda: self.b.rs.state in states

    def record(self, mark, rtype):
        return lambda: self.b.record_since(mark, rtype) is not None

    # ---- the round ---------------------------------------------------------------------

    def play(self, rounds, cannot_play):
        """Plays until `rounds` whole rounds of this run are finished (0: for
        ever). A board that restarts (a contained fault) is followed into its
        new state, or UsageError(cannot_play(state)) if it does not run."""
        from host_tools.boardstate import BOOT_TIMEOUT_S

        while True:
            mark = self.b.mark()
            try:
                if self.next_step(rounds, mark):
                    return
            except Restarted:
                self.b.wait(lambda m=mark: self.b.settled_since(m) is not None, BOOT_TIMEOUT_S)
                s = self.b.settled_since(mark)
                if s is None or not s.running:
                    raise UsageError(cannot_play(s or self.b.last_state())) from None
                self.out("dealer: the board restarted; it says: " + s.describe())

    def next_step(self, rounds, mark):
        """One thing a dealer does; True when the run is over."""
        from sicbo import events as E

        st, rid = self.state()
        if st != E.ST_HOLD and (self.b.rs.alarm or "ALARM" in self.lit()):
            self.clear_alarm(mark)
        elif st == E.ST_IDLE:
            if rounds and self.played >= rounds:
                return True
            self.start_round(rid + 1, mark)
        elif st == E.ST_SHAKING:
            self.until(self.state_is(E.ST_OPEN, E.ST_IDLE), "open betting after the shake",
                       mark)
        elif st == E.ST_OPEN:
            self.betting(rid, mark)
        elif st == E.ST_CLOSED:
            self.lift_cover(rid, mark)
        elif st == E.ST_RESULT:
            self.result(rid, mark)
        elif st == E.ST_PAYING:
            self.paying(rid, mark)
        elif st == E.ST_HOLD:
            self.hold(rid, mark)
        else:
            raise UsageError("the board is in a round state the demo does not know (%s)" % st)
        return False

    def _ended(self, rid, how):
        if rid in self.started:
            self.played += 1
        else:
            self.finished.append(rid)
        self.out("round %d %s" % (rid, how))

    def start_round(self, rid, mark):
        from sicbo import events as E

        self.out("")
        self.out("=== round %d ===" % rid)
        self.step("cover on the dome, both clasps fastened")
        before = self.inputs()
        self.set_all({"cover": 1, "clasp_left": 1, "clasp_right": 1})
        if not (before["cover"] and before["clasp_left"] and before["clasp_right"]):
            self.until(lambda: self.b.message_since(mark, E.M_READY),
                       "say ready after the cover and the clasps", mark)
        self.step("shake")
        m = self.b.mark()
        self.press("shake")  # the board has taken the cover and clasps (set_all)
        self.until(self.record(m, R.J_ROUND), "start a round at the shake", m)
        board_rid = self.b.record_since(m, R.J_ROUND).round
        if board_rid != rid:
            self.out("(the board numbers this round %d)" % board_rid)
        self.started.add(board_rid)
        self.plan[board_rid] = (self.rng.choice(INCIDENTS)
                                if self.rng.random() < self.incidents else None)

    def betting(self, rid, mark):
        from sicbo import events as E

        if rid not in self.started:
            self.step("round %d was cut with betting open: cover on, clasps fastened, "
                      "then the bell" % rid)
            self.set_all({"cover": 1, "clasp_left": 1, "clasp_right": 1})
        self.step("place your bets ... (lamp lit)")
        if self.plan.get(rid) == "early cover":
            self.plan[rid] = None
            self.step("the cover is lifted before the bell")
            self.set_all({"clasp_left": 0, "clasp_right": 0, "cover": 0})
            self.until(self.record(mark, R.J_VOID), "void the round of a cover lifted before "
                       "the bell", mark)
            self._ended(rid, "void: the cover came off before the bell")
            return
        self.step("bell: no more bets")
        self.act("key_bell", self.state_is(E.ST_CLOSED, E.ST_IDLE), "close betting at the bell",
                 mark)

    def lift_cover(self, rid, mark):
        from sicbo import events as E

        # The bell rings for the board's bell time; the dealer lifts the cover
        # once it has stopped.
        try:
            self.c.wait_for(lambda t: not t.outputs()["bell"]["level"], timeout=WAIT_S)
        except TimeoutError:
            raise Stuck("the bell did not stop ringing within %d s" % WAIT_S) from None
        if rid not in self.started:
            self.lifted.add(rid)
            self.step("round %d was cut after the bell: lift the cover, enter the dice" % rid)
        else:
            self.step("the bell has rung: lift the cover")
        self.set_all({"clasp_left": 0, "clasp_right": 0, "cover": 0})
        self.until(self.state_is(E.ST_RESULT, E.ST_IDLE), "open result entry with the cover "
                   "off", mark)

    def _void(self, rid, reason_key, why, mark):
        from sicbo import events as E

        # Void toggles the void entry: pressed again only if the board said
        # nothing at all of the first press.
        self.act("key_void", lambda: self.b.message_since(mark, E.M_VOID_REASON)
                 or self.b.message_since(mark, E.M_VOID_CANCELLED), "ask for a void reason",
                 mark)
        if self.b.message_since(mark, E.M_VOID_CANCELLED):
            raise Stuck("the board took the void key twice (void cancelled)")
        reason = int(reason_key[-1])
        self.act(reason_key, lambda: self.b.message_since(mark, E.M_VOID_REASON, reason),
                 "take the void reason", mark)
        self.act("key_confirm", self.record(mark, R.J_VOID), "void the round", mark)
        self._ended(rid, "void: " + why)

    def _faces(self, dice, mark):
        from sicbo import events as E

        m = self.b.mark()
        for k, d in enumerate(dice):
            self.act("key_face_%d" % d, lambda k=k: self.b.message_since(m, E.M_DICE_SO_FAR,
                                                                          k + 1),
                     "take face %d of 3" % (k + 1), mark)

    def result(self, rid, mark):
        from sicbo import events as E

        if rid not in self.started and rid not in self.lifted:
            self.step("round %d was cut in result entry: void it (reason: other)" % rid)
            self._void(rid, "key_face_3", "cut in result entry", mark)
            return
        if self.plan.get(rid) == "stacked":
            self.plan[rid] = None
            self.step("dice are stacked: void round")
            self._void(rid, "key_face_1", "stacked dice", mark)
            return
        dice = [self.rng.randint(1, 6) for _ in range(3)]
        self.dice[rid] = dice
        self.step("the dice show %d-%d-%d" % tuple(dice))
        self._faces(dice, mark)
        self.act("key_confirm", self.state_is(E.ST_PAYING, E.ST_HOLD, E.ST_IDLE),
                 "settle the round", mark)

    def show_layout(self, rid):
        if rid in self.shown:
            return
        self.shown.add(rid)
        # The lamp frame reaches the table on its own wire, the journal line
        # on the console: the paying lamp says the frame of the result is in.
        try:
            self.c.wait_for(lambda t: "PAYING" in self.lit(), timeout=WAIT_S)
        except TimeoutError:
            raise Stuck("the paying lamp did not light within %d s" % WAIT_S) from None
        lit = self.lit()
        self.out("")
        self.out("layout (lit: %d areas)" % len([x for x in lit if x in self.codes
                                                  and x not in STATUS_LAMPS]))
        for line in layout_lines(lit, self.codes, self.colour):
            self.out(line)

    def paying(self, rid, mark):
        from sicbo import dicereader
        from sicbo import events as E

        resumed = rid not in self.started and rid not in self.lifted and rid not in self.dice
        if resumed and rid not in self.shown:
            self.step("round %d was cut while paying: its winning areas are lit" % rid)
        self.show_layout(rid)
        if self.plan.get(rid) == "reader" and rid not in self.read and rid in self.dice:
            self.read.add(rid)
            d = self.dice[rid]
            other = (d[0], d[1], 1 + d[2] % 6)
            self.step("the dice reader reads %d-%d-%d" % other)
            self.c.reader_line(dicereader.line(rid, *other).decode().rstrip("\n"))
            self.until(self.state_is(E.ST_HOLD), "hold the round the reader disagrees with",
                       mark)
            return
        self.step("pay the winners, then payout complete")
        self.act("key_payout", self.record(mark, R.J_PAYOUT),
                 "close the round at payout complete", mark)
        self._ended(rid, "paid")

    def hold(self, rid, mark):
        from sicbo import events as E

        self.step("round %d is held: dealer and reader disagree; the supervisor turns the "
                  "key" % rid)
        self.c.supervisor(True)
        self.until(self.record(mark, R.J_SUPERVISOR), "take the supervisor key", mark)
        dice = self.dice.get(rid)
        if dice is None:
            dice = [self.rng.randint(1, 6) for _ in range(3)]
            self.step("the supervisor reads the dice on the table: %d-%d-%d" % tuple(dice))
        else:
            self.step("the supervisor reads the dice: %d-%d-%d, as the dealer entered them"
                      % tuple(dice))
        self._faces(dice, mark)
        self.act("key_confirm", self.state_is(E.ST_PAYING, E.ST_IDLE), "settle the held round",
                 mark)
        self.dice[rid] = dice
        self.read.add(rid)
        m = self.b.mark()
        self.c.supervisor(False)
        self.until(self.record(m, R.J_SUPERVISOR), "take the supervisor key off", mark)

    def clear_alarm(self, mark):

        self.step("the alarm lamp is lit: the supervisor turns the key to acknowledge it")
        self.c.supervisor(True)
        self.until(self.record(mark, R.J_ALARM_CLEAR), "clear the alarm", mark)
        m = self.b.mark()
        self.c.supervisor(False)
        self.until(self.record(m, R.J_SUPERVISOR), "take the supervisor key off", mark)


def _patient_client(path, timeout):
    """A TableClient that, when a request times out (the table's thread in
    this process starved on a busy machine), connects again and asks once
    more: every request the demo makes may be made twice."""
    from host_tools.simclient import TableClient, TableError

    class Patient(TableClient):
        def request(self, op, **fields):
            try:
                return super().request(op, **fields)
            except TableError as e:
                if "timed out" not in str(e):
                    raise
                self._sock.close()
                self.__init__(self.path, timeout)  # a new connection: no late reply on it
                try:
                    return super().request(op, **fields)
                except TableError as e2:
                    raise TableError("%s (request %r, twice %d s)" % (e2, op, timeout)) \
                        from None

    return Patient(path, timeout)


def _virtual_board(folder, inputs, **kw):
    """A VirtualBoard whose simulated table has `inputs` set before the board
    is powered on (its boot reads them)."""
    from host_tools.vboard import VirtualBoard

    class KeptTable(VirtualBoard):
        def _start_table(self):
            super()._start_table()
            for name, level in inputs.items():
                if self.table is not None:
                    self.table.handle({"op": "set", "signal": name, "level": level})

    return KeptTable(folder, **kw)


def _load_inputs(folder):
    import json

    try:
        with open(os.path.join(folder, TABLE_STATE), encoding="utf-8") as f:
            got = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(got, dict):
        return {}
    return {k: v for k, v in got.items() if k in KEPT_INPUTS and v in (0, 1)}


def _save_inputs(folder, vb):
    import json

    if vb.table is None:
        return
    try:
        inputs = vb.table.handle({"op": "state"})["inputs"]
        with open(os.path.join(folder, TABLE_STATE), "w", encoding="utf-8") as f:
            json.dump({k: inputs[k] for k in KEPT_INPUTS if k in inputs}, f)
    except (OSError, KeyError, TypeError):
        pass  # the next run starts with the cover off and the clasps open


def _cannot_play(state, folder):
    """The one line saying why the demo cannot play, and what to type."""
    from host_tools import boardstate as bs

    fresh = "sicbo demo --fresh starts the virtual board on an empty filesystem " \
            "(its journal is lost)"
    look = ("to look first: sicbo vboard --folder %s, then in another terminal sicbo diag "
            "--port %s status" % (folder, os.path.join(folder, "tty")))
    if state is None:
        return ("the board printed no start-up line within %d s after its reset; %s; %s"
                % (bs.BOOT_TIMEOUT_S, look, fresh))
    why = state.describe().rstrip(".")
    if state.kind == bs.REFUSED:
        return "%s; fix the --board or --table file, or: %s" % (why, fresh)
    if state.kind == bs.APPROVAL:
        return "%s; give a --table whose approval is in force" % why
    if state.kind == bs.RECOVERY:
        return "%s; no key is held now: run the demo again" % why
    if not state.settled:
        return "%s, and no start-up line followed within %d s; %s; %s" % (
            why, bs.BOOT_TIMEOUT_S, look, fresh)
    return "the board cannot play: %s; %s; %s" % (why, look, fresh)


def run(args):
    from host_tools.portlock import PortLock
    from host_tools.rules import load_table

    cfg, table = load_table(args.table)
    printing = threading.Lock()

    def out(text):
        # One write per line: the console's thread prints too.
        with printing:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    # One board per run folder: two would write one journal at once.
    with PortLock(args.folder, "sicbo demo", rule="one virtual board per run folder"):
        return _run(args, cfg, table, out)


def _live_board(folder):
    """True when a virtual board (sicbo vboard) answers on the folder's
    control socket."""
    import socket

    path = os.path.join(folder, "control.sock")
    if not os.path.exists(path):
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(2)
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def _floor_args(args):
    """Refuses floor options that do not go together (one line)."""
    if args.floor and args.broker:
        raise UsageError("--floor starts a broker of its own: give --floor or --broker, "
                         "not both")
    if args.broker and not args.site_folder:
        raise UsageError("--broker needs --site-folder DIR (the site's certificates, made "
                         "by sicbo floor certs): the table's secrets come from it")
    for name in ("site_folder", "floor_db"):
        if getattr(args, name) and not args.broker:
            raise UsageError("--%s goes with --broker" % name.replace("_", "-"))
    from host_tools.floor import site as fsite

    try:
        fsite.check_table_id("--table-id", args.table_id)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _start_floor(args, out):
    """(board file, secrets folder, the board's network (host, port), the
    store, the LocalFloor or None) of a table on a floor, or None when
    there is none (said in one line when --floor finds no mosquitto)."""
    from host_tools import demofloor as df
    from host_tools.commands.floor import host_port

    if not (args.floor or args.broker):
        return None
    try:
        if args.floor:
            why = df.why_no_floor()
            if why:
                out("floor: not shown: %s; the table plays without it" % why)
                return None
            folder = os.path.join(args.folder, "floor")
            site = df.DemoSite(os.path.join(folder, "site"))
            local = df.LocalFloor(folder, site).start()
            host, port = df.NOMINAL_BROKER, 8883
            net = ("127.0.0.1", local.port)
            db = local.db
            out("floor: broker 127.0.0.1:%d (TLS, the tables' certificates, the site's ACL), "
                "the floor service storing into %s (its log: %s)"
                % (local.port, db, local.log_path))
            # The command as it runs from this checkout (the README's
            # .venv/bin/sicbo), pasted as printed.
            exe = os.path.join(os.path.dirname(sys.executable), "sicbo")
            out("floor: another table on this floor: %s demo --folder run/T02 --table-id "
                "T02 --broker 127.0.0.1:%d --site-folder %s --floor-db %s"
                % (os.path.relpath(exe) if os.path.exists(exe) else "sicbo", local.port,
                   site.folder, db))
        else:
            host, port = host_port(args.broker)
            site = df.DemoSite(args.site_folder, make=False)
            local = None
            net = (host, port)
            db = args.floor_db
        try:
            secrets = site.secrets(args.table_id, os.path.join(args.folder, "secrets"))
            board = df.floor_board(args.board, df.floor_section(
                site.site, args.table_id, host, port, True, site.broker_name),
                os.path.join(args.folder, "board-floor.json"))
        except BaseException:
            if local is not None:
                local.stop()
            raise
    except (df.DemoFloorError, OSError, ValueError) as e:
        raise UsageError("the floor: %s" % e) from None
    return board, secrets, net, db, local


def _run(args, cfg, table, out):
    from host_tools import boardstate
    from host_tools.deploy import deploy
    from host_tools.simclient import TableError

    names = list(cfg.lamp_order)
    codes = [n for n in names if n]
    colour = sys.stdout.isatty()
    if _live_board(args.folder):
        raise UsageError("a virtual board already runs on %s (its control socket answers): "
                         "stop it first (one virtual board per run folder)" % args.folder)
    _floor_args(args)
    if args.fresh and os.path.isdir(args.folder):
        shutil.rmtree(args.folder)
    os.makedirs(args.folder, exist_ok=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    floor = _start_floor(args, out)
    board_file, secrets, net, db, local = floor or (args.board, None, None, None, None)
    watcher = None
    try:
        vb = _virtual_board(args.folder, _load_inputs(args.folder), board=board_file,
                            heap=args.heap, table_file=args.table, broker=net)
    except BaseException:
        if local is not None:
            local.stop()
        raise
    board = None
    dealer = None
    try:
        try:
            vb.start(timeout=0)
        except (OSError, RuntimeError, ValueError) as e:
            raise UsageError("cannot start the virtual board: %s" % e) from None
        out("virtual board: %s (mpremote connect %s), table control %s"
            % (vb.pty, vb.port, vb.control))
        board = BoardConsole(vb.port, out, table)
        # A generous timeout: on a busy machine the table's thread (in this
        # process) can be slow to answer.
        with _patient_client(vb.control, WAIT_S) as client:
            # Its power-on: the firmware a last run left boots (heard), or
            # the REPL comes up on an empty board.
            board.open()
            mark = board.mark()
            deadline = time.monotonic() + boardstate.BOOT_TIMEOUT_S
            while time.monotonic() < deadline and board.settled_since(mark) is None \
                    and not vb.wait_ready(0.05):
                pass
            board.close()
            report = deploy(vb.port, board_file, args.table, reset=False,
                            log=lambda t: out("deploy: " + t), secrets=secrets)
            out("deploy: " + report.summary())
            # The reset, with the clock set, typed on the console it holds:
            # the boot is heard from its first line.
            board.open()
            mark = board.mark()
            frames = client.lamps()["frames"]
            board.type(boardstate.INTERRUPT + boardstate.reset_code(boardstate.clock_tuple()))
            board.wait(lambda: board.settled_since(mark) is not None, boardstate.BOOT_TIMEOUT_S)
            first = board.settled_since(mark)
            if first is None or not first.running:
                raise UsageError(_cannot_play(first or board.last_state(mark), args.folder))
            out("board: " + first.describe())
            if db:
                from host_tools.demofloor import StoreWatcher

                watcher = StoreWatcher(db, args.table_id, out,
                                       exited=local.exited if local is not None else None).start()
            # Its lamps as it resumed (an alarm from before the stop shows
            # there): the lamp adapter's all-off frame, then the table's.
            try:
                client.wait_for(lambda t: t.lamps()["frames"] >= frames + 2, timeout=WAIT_S)
            except TimeoutError:
                raise Stuck("the board's lamps did not come on within %d s" % WAIT_S) from None
            rng = random.Random(args.seed)
            dealer = Dealer(client, board, names, args.pace, rng, out, args.incidents, codes,
                            colour)
            dealer.play(args.rounds, lambda s: _cannot_play(s, args.folder))
        out("")
        extra = ""
        if dealer.finished:
            extra = " (and %s %s, cut by an earlier stop, finished)" % (
                "round" if len(dealer.finished) == 1 else "rounds",
                ", ".join(str(r) for r in dealer.finished))
        out("%s played%s; the journal is in %s" % (plural(dealer.played, "round"), extra,
                                                   os.path.join(vb.fs, "journal")))
        if watcher is not None:
            # the last round's records reach the floor a moment after the table
            # says paid: shown once stored (a short wait, for people)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not _all_shown(watcher, dealer):
                time.sleep(0.1)
            out("the floor's store: %s (sicbo floor records --db %s --table %s)"
                % (db, db, args.table_id))
        return 0
    except TableError as e:
        raise UsageError("the simulated table did not answer: %s" % e) from None
    except KeyboardInterrupt:
        out("\nstopped")
        return 130
    finally:
        if watcher is not None:
            watcher.stop()
        if board is not None:
            board.close()
        _save_inputs(args.folder, vb)
        vb.stop()
        if local is not None:
            local.stop()
        signal.signal(signal.SIGTERM, old)


def _all_shown(watcher, dealer):
    try:
        watcher.poll()
    except Exception:  # noqa: BLE001 - the store being written: read again
        return False
    return all(r in watcher.shown for r in dealer.started)
