"""Mutation testing of the firmware: do the tests notice a broken safeguard?

    python -m host_tools.mutate [--seed 1] [--sample 200] [--jobs 1]
                                [--timeout 60] [--min-score 90] [--file GLOB]

Samples single-point mutations of device/**/*.py (a comparison flipped, an
integer constant off by one, `and`/`or` swapped, a statement replaced by
`pass`, two arguments of a call swapped, `True`/`False` flipped, `+`/`-`
swapped), found with `ast`, drawn with `--seed`. Each mutant is written into
a COPY of device/ (one per job, under /tmp; the checkout is never edited),
and only the tests that can see the mutated module run against it: the
tests/logic files and the fast tests/host files that import it, directly or
through their helpers (appkit, roundkit, ...), found by a static import graph.
They run under pytest with `-x -q` and SICBO_DEVICE_DIR naming the copy
(host_tools/__init__.py puts that folder on sys.path instead of device/). A
mutant is killed when the tests fail, or when they run past their time limit:
TIME_FACTOR times what the same test files took on the unmutated copy (the
baseline run measures each), plus TIME_SLACK_S, and never under --timeout;
the test files run fastest first. The report says how many were killed by
their time limit.

Prints the score per file and overall, then the survivors (file:line and the
mutation). The mutants named in EQUIVALENT below (they cannot change what the
firmware does) are listed apart and not counted. Exit status 0 whatever the
score (it prints figures), 1 below --min-score, 2 when the driver itself
breaks (e.g. the unmutated tests fail).
"""

import argparse
import ast
import fnmatch
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE = os.path.join(REPO, "device")
LOGIC = os.path.join(REPO, "tests", "logic")
HOST = os.path.join(REPO, "tests", "host")

# Not mutated: main.py (three lines that call faults.start(), run only by a real
# boot: tests/board) and remote/ (the deploy agent, run only by the deploy tests
# on the virtual board). Neither is seen by the fast tests.
SKIP = ("main.py", "remote/*")

# The tests/host files fast enough to run per mutant (in-process CPython, no
# virtual board, no mpremote). The others (vboard, deploy, system, power cut,
# flash, simtable, simkeys) take seconds to minutes each and reach the firmware
# through a MicroPython process that loads device/ itself.
FAST_HOST = ("test_cli_journal.py", "test_cli_rules.py", "test_console.py",
             "test_controller_inputs.py", "test_fuzz.py",
             "test_round_stateful.py", "test_rules_properties.py", "test_svg.py")

# Equivalent mutants: the program does the same whatever the mutation. Each is
# (file, text of the original line or part of it, the mutation as printed,
# why). Matched on the text, not the line number, so that edits elsewhere in
# the file leave them named.
_SORTED = "swapping two equal dice while sorting them changes nothing"
_NO_ARG = "the round machine ignores the argument of this event"
_SET_FIRST = "an initial value that is always set again before it is read"
EQUIVALENT = (
    # Sorting networks of three dice (settle.outcome_index, roundmachine.same):
    # `>` made `>=` swaps equal values.
    ("sicbo/settle.py", "if d1 > d2:", "`>` -> `>=` in `d1 > d2`", _SORTED),
    ("sicbo/settle.py", "if d2 > d3:", "`>` -> `>=` in `d2 > d3`", _SORTED),
    ("sicbo/roundmachine.py", "if x0 > x1:", "`>` -> `>=` in `x0 > x1`", _SORTED),
    ("sicbo/roundmachine.py", "if x1 > x2:", "`>` -> `>=` in `x1 > x2`", _SORTED),
    ("sicbo/roundmachine.py", "if y0 > y1:", "`>` -> `>=` in `y0 > y1`", _SORTED),
    ("sicbo/roundmachine.py", "if y1 > y2:", "`>` -> `>=` in `y1 > y2`", _SORTED),
    # outcome_index sorts its dice first: their order never matters.
    ("sicbo/settle.py", "outcome_index(d1, d2, d3)",
     "arguments 1 and 2 swapped in `outcome_index(d1, d2, d3)`", "outcome_index sorts the dice"),
    # journal.walk: a memoryview of a memoryview, or the bytes themselves,
    # give the same values (only what the slices allocate differs).
    ("sicbo/journal.py", "type(data) is memoryview",
     "`is` -> `is not` in `type(data) is memoryview`",
     "a view of the bytes or the bytes: the same values"),
    # JournalStore.pieces: a first seq of 0 is a segment with no record;
    # reading it again finds 0 again.
    ("journal_store.py", "seg[1] < 0", "`<` -> `<=` in `seg[1] < 0`",
     "re-reading an empty segment's first seq finds 0 again"),
    # Controller.poll: the machine reads an event's argument only for EV_FACE
    # (the face) and EV_FAULT (the sensor); these calls pass neither.
    ("controller.py", "self.handle(INPUTS[k + 1], 0, now)", "0 -> -1", _NO_ARG),
    ("controller.py", "self.handle(INPUTS[k] if ev[2] else INPUTS[k + 1], 0, now)", "0 -> 1",
     _NO_ARG),
    ("controller.py", "self.handle(E.EV_TIMER, 0, now)", "0 -> 1", _NO_ARG),
    # hw.TimedOutput: start() sets both before anything reads them.
    ("hw/__init__.py", "self._since = 0", "deleted: `self._since = 0`", _SET_FIRST),
    ("hw/__init__.py", "self._since = 0", "0 -> 1", _SET_FIRST),
    ("hw/__init__.py", "self._for = 0", "deleted: `self._for = 0`", _SET_FIRST),
    ("hw/__init__.py", "self._for = 0", "0 -> -1", _SET_FIRST),
    # Controller: only a LinkedController reads _plan, and link.table.attach
    # sets it before the link task's first pass; a plain Controller's 16 or
    # 17 attributes fit the same 17-slot table.
    ("controller.py", "self._plan = None", "deleted: `self._plan = None`",
     "only a LinkedController reads _plan, after attach() has set it"),
    # hw.WallClock: seconds() reads _base_ticks only once refresh() has set
    # _base, and refresh() sets _base_ticks with it.
    ("hw/__init__.py", "self._base_ticks = 0", "0 -> 1", _SET_FIRST),
    # hw.Solenoid: a train ended by the hard-off timer, or by stop(), is idle;
    # _left is read only in the ON state, which only start() enters, and
    # start() sets _left first.
    ("hw/solenoid.py", "self._ever_off = True\nself._left = 0", "deleted: `self._left = 0`",
     "an idle coil's train count is set again by start() before it is read"),
    # Meters.record: the byte after C_FLAGS is padding, zero from the
    # buffer's making and written by nothing; the mutant clears C_WALL's
    # first byte instead, which the next line writes.
    ("sicbo/meters.py", "buf[c + R.C_FLAGS + 1] = 0", "1 -> 2",
     "the padding byte stays zero and C_WALL is written on the next line"),
    # ... and replaces 0 by the default before the range check.
    ("hw/__init__.py", "if not 0 < ms <= self.max_on_ms:",
     "`<` -> `<=` in `0 < ms <= self.max_on_ms`", "ms 0 has become the default by then"),
    # Controller: sensor ids (sicbo.events S_*) are 1..8, below either bound.
    ("controller.py", "_MAX_SENSORS = const(16)", "16 -> 17", "sensor ids are 1..8"),
    # journal_store._number: any negative number means "not a segment".
    ("journal_store.py", "return -1", "1 -> 2", "any negative number means: not a segment"),
    # JournalStore.pieces: n always names a segment of segs, so the loop
    # always sets seg.
    ("journal_store.py", "seg = None", "deleted: `seg = None`", "the loop always sets it"),
    # JournalStore.after_oldest: an empty segment (first seq 0) read again
    # gives 0 again; reading on past its first window finds the same first
    # record; the generator is closed when dropped.
    ("journal_store.py", "if s[1] < 0:", "`<` -> `<=` in `s[1] < 0`",
     "re-reading an empty segment's first seq finds 0 again"),
    ("journal_store.py", "for _piece in g:\nbreak", "deleted: `break`",
     "the first seq is taken from the first window only"),
    ("journal_store.py", "g.close()", "deleted: `g.close()`",
     "the generator is closed when dropped"),
    ("journal_store.py", "while newest > 0 and segs[newest][1] == 0:",
     "`>` -> `>=` in `newest > 0`", "newest -1 or 0: either ends the deletion loop"),
    # Meters.count: a J_METERS record counts no meter (METER_OF) anyway;
    # settle sorts the dice.
    ("sicbo/meters.py", "self.checkpoints += 1\nreturn", "deleted: `return`",
     "J_METERS counts no meter: the next test returns"),
    ("sicbo/meters.py", "table.settle(dice[0], dice[1], dice[2])",
     "arguments 1 and 2 swapped in `table.settle(dice[0], dice[1], dice[2])`",
     "settle sorts the dice"),
    # _open_sides: the right clasp's bit is 2 when it is open; when it is
    # fastened the refusal is for the left one, whose bit 1 is set already.
    ("sicbo/roundmachine.py", "| (0 if levels[S.CLASP_RIGHT] else 2)", "0 -> 1",
     "1 | 1 == 1: only reached with the left clasp open"),
    ("sicbo/roundmachine.py", "min(k, KEEP_DAMAGE)",
     "arguments 1 and 2 swapped in `min(k, KEEP_DAMAGE)`", "min is symmetric"),
    ("sicbo/roundmachine.py", "min(k, 255)", "arguments 1 and 2 swapped in `min(k, 255)`",
     "min is symmetric"),
    # DiceReader._line: the shortest line with four numbers is 16 bytes; the
    # number parser refuses a 15-byte one anyway.
    ("sicbo/dicereader.py", "n < 16", "16 -> 15",
     "a 15-byte line cannot hold four numbers: refused by the number parser"),
    # link.client: after a fault the owner closes the client (close() resets
    # the parser, the PUBACKs owed and the ping time), so what the read loop
    # or the pass does past the fault is never seen.
    ("link/client.py", "                if self.state == FAILED:\n                    return",
     "deleted: `return`", "the client is closed after a fault: its parser is reset"),
    ("link/client.py", "self._fail(L_DEAD)\n                return FAILED",
     "deleted: `return FAILED`",
     "the pass returns self.state, FAILED, and sends nothing once failed"),
    # diag._manifest: a function that ends without a return returns None too.
    ("diag.py", "    except (OSError, ValueError):\n        return None", "deleted: `return None`",
     "the function returns None when it falls off its end"),
    # link.outbox.read_cursor: a saved cursor of 0 and "none" are the same.
    ("link/outbox.py", "return v if v > 0 else 0", "`>` -> `>=` in `v > 0`",
     "v == 0 returns 0 either way"),
    # hw.switches: the event kinds are compared by name only (controller.poll);
    # any value apart from EDGE's and FAULT's will do.
    ("hw/switches.py", "RECOVER = const(2)", "2 -> 3", "the kinds are compared by name"),
    # link.client: the PUBACKs owed are written before they are read.
    ("link/client.py", "self._acks = [0] * _ACKS", "0 -> 1", _SET_FIRST),
    # Client._flush runs only with a packet pending, which only an open
    # socket holds (close() drops both): the guard keeps the types exact.
    ("link/client.py", "if s is None:  # never with a packet pending", "deleted: `if s is None:`",
     "_flush runs only while a socket holds a pending packet"),
    # The client's open sets last_rx before any state that reads it.
    ("link/client.py", "self.last_rx = 0", "deleted: `self.last_rx = 0`", _SET_FIRST),
    # _pbuf is read only while bytes are pending; every buffer sent is the
    # client's or the outbox's own, so the reference kept frees nothing.
    ("link/client.py", "self._pbuf = None", "deleted: `self._pbuf = None`",
     "_pbuf is read only while a packet is pending, and holds only preallocated buffers"),
    # The outbox's idle wait: the controller's link task runs every POLL_MS
    # (5 ms) whatever it returns, and nothing promises the figure.
    ("link/outbox.py", "tick_ms=20", "20 -> 21",
     "the link task runs every POLL_MS whatever the idle wait"),
    # areas._count counts one number among the three dice: their order
    # never matters.
    ("sicbo/areas.py", "_count(b, d1, d2, d3)",
     "arguments 3 and 4 swapped in `_count(b, d1, d2, d3)`",
     "_count counts among the dice in any order"),
    # records.P_CHAIN is 0: adding or taking it away is the same offset.
    ("sicbo/chain.py", "R.HEADER + R.P_CHAIN", "`+` -> `-` in `o + R.HEADER + R.P_CHAIN`",
     "P_CHAIN is 0"),
    # SettlementTable.winning_areas sorts the dice (outcome_index).
    ("sicbo/logtext.py", "table.winning_areas(rec.p(0), rec.p(1), rec.p(2))",
     "arguments 2 and 3 swapped in `table.winning_areas(rec.p(0), rec.p(1), rec.p(2))`",
     "winning_areas sorts the dice"),
    # RoundMachine.presses: resume() (always before the first event) and
    # each shake's start set it before it is read.
    ("sicbo/roundmachine.py", "self.presses = 0  # handle presses", "0 -> -1", _SET_FIRST),
    # link.mqtt.Parser: next() sets qos before it returns a PUBLISH, the
    # only packet whose qos is read.
    ("link/mqtt.py", "self.qos = 0", "0 -> 1", _SET_FIRST),
    # link.wifi.Station: _t is read only once _asked, set with it.
    ("link/wifi.py", "self._t = 0  # the last connect()", "0 -> -1", _SET_FIRST),
    # hw.solenoid.Solenoid: start() sets _first before update() reads it (the
    # constructor's line, after `self._gap = 0`; _fire's is not equivalent).
    ("hw/solenoid.py", "self._gap = 0\nself._first = False", "deleted: `self._first = False`",
     _SET_FIRST),
    # The switches' constructor sets every _changed slot from the pins.
    ("hw/switches.py", 'self._changed = array("i", [0] * n)', "0 -> -1", _SET_FIRST),
    # diag's settle waits past three debounce times (the board file's is at
    # least 1 ms): a millisecond more or less still polls past one of them.
    ("diag.py", "sw.debounce_ms * 3) + 1", ("1 -> 0", "1 -> 2"),
     "a settle of exactly three debounce times (each at least 1 ms) is past one of them"),
    # link.outbox.Link: what a connection needs is set when it comes up
    # (_came_up), before the pass reads it; top only ever grows.
    ("link/outbox.py", "self._next = cur", "deleted: `self._next = cur`", _SET_FIRST),
    ("link/outbox.py", "self._sub_due = True", "deleted: `self._sub_due = True`", _SET_FIRST),
    ("link/outbox.py", "if last > self.top:", "`>` -> `>=` in `last > self.top`",
     "top set to the value it has"),
    # memory.forget: module names never begin with a dot.
    ("memory.py", "if dot > 0:", "`>` -> `>=` in `dot > 0`", "no module name begins with a dot"),
    ("memory.py", "if dot > 0:", "0 -> -1", "no module name begins with a dot"),
    # startup.stage_hardware: each adapter drives its output off when it is
    # made (hw.TimedOutput, hw.solenoid.Solenoid); all_off() is the backstop.
    ("startup.py", "hw.all_off()", "deleted: `hw.all_off()`",
     "every adapter drives its output off when made"),
    # JournalStore: the firmware numbers segments from 1 (_open_new).
    ("journal_store.py", "if n >= 0:", "0 -> 1", "segments are numbered from 1"),
    # StoredChain.catch_up starts at the newest segment that begins at or
    # before the chain's number; from the first instead it reads segments
    # whose records follow() passes over (all below that number).
    ("chainfile.py", "for i in range(len(segs)):", "deleted: `for i in range(len(segs)):`",
     "follow() passes over records below the chain's number"),
    # Controller.read_reader: the UART and the dice reader are made together
    # (the board file's reader section), and a UART made with no timeout
    # returns nothing at once when nothing waits: any() only saves a call.
    ("controller.py", "if uart is None or rd is None or not uart.any():",
     "`or` -> `and` in `uart is None or rd is None or (not uart.any())`",
     "the UART and the dice reader exist together; readinto of nothing returns nothing"),
    # Solenoid: _fire() sets _forced and _held before the coil can be on,
    # and update() reads them only while it is on.
    ("hw/solenoid.py", "self._forced = False  # set by the timer callback",
     "deleted: `self._forced = False`", _SET_FIRST),
    ("hw/solenoid.py", "self._forced = False  # set by the timer callback\nself._held = False",
     "deleted: `self._held = False`", _SET_FIRST),
    ("hw/solenoid.py", "self._forced = False  # set by the timer callback\nself._held = False",
     "`False` -> `True`", _SET_FIRST),
    # JournalStore.chain_next: at equality the assignment writes the value
    # rs.seq already has.
    ("journal_store.py", "if ch.seq > rs.seq + 1:", "`>` -> `>=` in `ch.seq > rs.seq + 1`",
     "at equality rs.seq is set to the value it has"),
    # ... and when a segment starts at the chain's number, starting at the one
    # before it only reads records that follow() passes over.
    ("chainfile.py", "if 0 < segs[i][1] <= self.seq:",
     "`<=` -> `<` in `0 < segs[i][1] <= self.seq`",
     "follow() passes over records below the chain's number"),
    # link.mqtt.Parser: next() sets body for every packet it returns, before
    # drop() or the client reads it (drop() follows only a packet returned).
    ("link/mqtt.py", "self.body = 0", "0 -> 1", _SET_FIRST),
    # Switches: without a key chain no input is read through one (on[i] is 0),
    # so whether the chain's sample was good is never asked.
    ("hw/switches.py", "good = chain.sample() if chain is not None else True", "`True` -> `False`",
     "without a chain no input is on it: the sample's verdict is not read"),
    # Switches.update: a chatter count of 255 capped at 255 is the same count.
    ("hw/switches.py", "if c > 255:", "`>` -> `>=` in `c > 255`", "255 set to 255"),
    # JournalStore._write: both callers (append, _open_new) open the segment
    # just before; the guard keeps the types exact for mypy.
    ("journal_store.py", 'raise OSError("journal segment not open")',
     "deleted: `raise OSError('journal segment not open')`",
     "both callers open the segment just before"),
    # diag.dump_journal: the segments' bytes go out in pieces of hex that the
    # host joins again; the size of a piece changes no byte pulled.
    ("diag.py", "buf = bytearray(192)", ("192 -> 191", "192 -> 193"),
     "the host joins the pieces: any piece size pulls the same bytes"),
    # ... and caught up, the chain's next number is past every record rs has
    # read (catch_up follows them all), so ch.seq <= rs.seq never holds: the
    # mutant's extra case, ch.seq == rs.seq + 1, sets the value rs.seq has.
    ("journal_store.py", "if ch.seq > rs.seq + 1:", "`+` -> `-` in `rs.seq + 1`",
     "after catch_up ch.seq > rs.seq; at ch.seq == rs.seq + 1 rs.seq keeps its value"),
    # DiceReader: the last valid reading's round is written by the line that
    # makes it valid, before feed_byte() returns True, its only reader's cue.
    ("sicbo/dicereader.py", "self.round = 0", "0 -> 1", _SET_FIRST),
    # Outbox: _last_seq_of is called with n > 0 only (a window entry's or a
    # read's length), so its loop always sets seq.
    ("link/outbox.py", "seq = 0", "0 -> 1", _SET_FIRST),
    # Outbox.journaled compares said with self.said only when said >= 0.
    ("link/outbox.py", "self.said = -1", "1 -> 2", "any negative value means: nothing said yet"),
    # Source.read: nxt is only tested for < 0 before it is used.
    ("link/source.py", "nxt = -1", "1 -> 2", "any negative value means: no next segment"),
    # Source.read: at out == got, valid_at finds no record (too short): the
    # loop ends with nothing changed.
    ("link/source.py", "while out < got:", "`<` -> `<=` in `out < got`",
     "no record starts at the end of what was read"),
    # MQTTClient: the offset of a partial write is set with its length, and
    # read only while that length is not 0.
    ("link/client.py", "self._poff = 0", "0 -> -1", _SET_FIRST),
    # MQTTClient._pull: after _fail the state is FAILED, which the next
    # lines return on (_take matches no packet kind for a negative k).
    ("link/client.py", "self._fail(L_PROTOCOL, -k)\nreturn", "deleted: `return`",
     "the failed state returns at the next line"),
    # diag._guard: a function that ends returns None without the statement.
    ("diag.py", "_let_go(before)\nreturn None", "deleted: `return None`",
     "a function that ends returns None"),
    # KeyChain: a sentinel bit's count is only tested for zero.
    ("hw/keychain.py", "count += 1", "`+=` -> `-=` in `count += 1`",
     "the count is only tested for zero"),
    # WallClock.refresh without an RTC: the base is None from __init__ and
    # nothing else sets it while there is no RTC (the RTC is never replaced).
    ("hw/__init__.py", "if self._rtc is None:\nself._base = None", "deleted: `self._base = None`",
     "without an RTC the base is never set"),
    # OutboxStore: read_after's first call starts afresh (_start) whatever
    # the place it finds, or finds the place _start would set.
    ("link/source.py", "self._at = [-1, -1, 0]", "1 -> 0", "the first read starts afresh"),
    # DealerEntry: add_face starts again at the fourth face, so a fourth
    # byte of the faces is never written or read.
    ("sicbo/roundmachine.py", "self.faces = bytearray(3)", "3 -> 4",
     "only three faces are ever kept"),
    # RoundMachine.resume: with at most KEEP_DAMAGE (3) records reported, a
    # range ending at 5k in steps of 6 gives the same starts as one at 6k.
    ("sicbo/roundmachine.py", "for i in range(0, 6 * min(k, KEEP_DAMAGE), 6):", "6 -> 5",
     "the same starts for at most five records"),
    # open_table's files stage: board and cfg hold what the tuple holds; the
    # del only lets the 2-item tuple go before the stage's end.
    ("startup.py", "del got", "deleted: `del got`", "only a 2-item tuple is kept longer"),
    # RoundMachine: the table's settle() sorts the dice (outcome_index).
    ("sicbo/roundmachine.py", "self.table.settle(self.dice[0], self.dice[1], self.dice[2])",
     "arguments 2 and 3 swapped in `self.table.settle(self.dice[0], self.dice[1], self.dice[2])`",
     "outcome_index sorts the dice"),
    # The dice reader's poll period: the UART keeps what arrives between two
    # passes (a reader line is under 40 bytes, its RX buffer 256), so a pass
    # each 19 ms reads the same bytes, in the same order, into the same rounds.
    ("sicbo/events.py", "READER_MS = const(20)", "20 -> 19",
     "the UART buffers the reader's bytes between passes"),
    # The backoff's cap: at d equal to the cap both branches give the cap.
    ("link/wifi.py", "self._delay = d if d < self.backoff_max_ms else self.backoff_max_ms",
     "`<` -> `<=` in `d < self.backoff_max_ms`", "both branches give the cap at the cap"),
    ("link/outbox.py",
     "self._delay = d * 2 if d * 2 < self.backoff_max_ms else self.backoff_max_ms",
     "`<` -> `<=` in `d * 2 < self.backoff_max_ms`", "both branches give the cap at the cap"),
    # RoundState's J_HOLD replay: the dealer's dice open the payload (offset 0).
    ("sicbo/roundstate.py", "_copy(b, p + R.P_DEALER_DICE, self.hold, 0, 3)",
     "`+` -> `-` in `p + R.P_DEALER_DICE`", "P_DEALER_DICE is 0"),
    # DealerEntry's record buffer: a call writes at most 6 records (resume:
    # boot, three damaged, alarm, void), so 7 slots are as good as 8.
    ("sicbo/roundmachine.py", "_MAX_RECORDS = const(8)", "8 -> 7",
     "a call writes at most 6 records"),
    # Controller._journaled: the link only compares what it is told, to send
    # its status again on a change; any shift of 3 or more keeps the round and
    # its state (0..6) apart.
    ("controller.py", "link.journaled(m.round << 3 | m.state)", "3 -> 4",
     "the link only compares the value; round and state stay apart"),
    # Solenoid: _on_ms is read only once start() has set it (the state leaves
    # idle there, on the next line); the 0 only declares the attribute.
    ("hw/solenoid.py", "self._on_ms = 0", "deleted: `self._on_ms = 0`",
     "read only after start() sets it"),
    # Link: the head is due again when the link comes up (_came_up) and on
    # each record (journaled), before _pump, the only reader, runs.
    ("link/outbox.py", 'self._head_of = getattr(source, "head", None)'
     "\nself._head_due = self._head_of is not None",
     "`is not` -> `is` in `self._head_of is not None`", "set again before it is read"),
    # Wifi: _retry is read only once _asked, and up() sets it on that path.
    ("link/wifi.py", "self._retry = 0", "0 -> 1", "read only after up() sets it"),
    # Chain._head_into: the head's sequence number opens the chain tail (0).
    ("sicbo/chain.py", "struct.pack_into(\"<I\", p, c + R.H_SEQ, self.head)",
     "`+` -> `-` in `c + R.H_SEQ`", "H_SEQ is 0"),
    # diag.bell: the sleep only sets how often the loop polls the bell; the
    # bell's own deadline (update) stops it, so the same edges, record and text.
    ("diag.py", "time.sleep_ms(10)", "deleted: `time.sleep_ms(10)`",
     "the bell's deadline ends the ring, not the poll period"),
    # config odds: catalogue index 0 is SMALL, never a settable total, so the
    # next check refuses it with the same field and message.
    ("sicbo/config.py", "if i < 0 or code not in settable:", "`<` -> `<=` in `i < 0`",
     "index 0 (SMALL) is refused by `code not in settable` alike"),
    # link.table._saved_cursor: a saved 0 is returned as 0 by either branch.
    ("link/table.py", "return v if 0 < v <= last else 0",
     "`<` -> `<=` in `0 < v <= last`", "v == 0 gives 0 on both branches"),
    # startup.stage_link: the name only keeps link.plan's code on the heap
    # over link.table's import, two lines on (memory, not meaning).
    ("startup.py", "del made", "deleted: `del made`",
     "memory only: the module is freed at the function's return instead"),
    ("link/wifi.py", "self._retry = 0", "deleted: `self._retry = 0`", _SET_FIRST),
    # JournalStore._write: every caller (append, _open_new, access) opens the
    # segment first; the guard names the fault should that ever change.
    ("journal_store.py", "if f is None:", "deleted: `if f is None:`",
     "no caller writes before a segment is open"),
    # mqtt.next_pid: from 0 (no id yet) both give 1, the wrap's value.
    ("link/mqtt.py", "return pid + 1 if 0 < pid < 65535 else 1",
     "`<` -> `<=` in `0 < pid < 65535`", "next_pid(0) is 1 on either branch"),
    # Link: _came_up sets _head_due before _pump, the only reader, runs.
    ("link/outbox.py",
     "self._head_of = getattr(source, \"head\", None)\nself._head_due = self._head_of is not None",
     "deleted: `self._head_due = self._head_of is not None`", _SET_FIRST),
    # records.P_OLD_DICE is 0: adding or taking it away is the same offset.
    ("sicbo/roundstate.py", "_same(b, p + R.P_OLD_DICE, self.dice)",
     "`+` -> `-` in `p + R.P_OLD_DICE`", "P_OLD_DICE is 0"),
    # RoundState._apply's answer for a meters checkpoint: read only by
    # RoundMachine._rec, which writes the round's short records, never J_METERS
    # (the replay, take(), does not read the answer).
    ("sicbo/roundstate.py", "self.config_wall = u32(b, c + R.C_WALL)\nreturn False",
     "`False` -> `True`", "no caller reads the answer for a J_METERS"),
    # diag: the files' objects dropped, then collected so that the sections
    # after find the heap in one piece. MicroPython's allocator collects by
    # itself before it fails, so only the heap figure printed next differs.
    ("diag.py", "_board = cfg = None\ngc.collect()", "deleted: `gc.collect()`",
     "memory only: the allocator collects before it fails an allocation"),
    # diag.status: the journal's RoundState is not read after its section;
    # the name only frees it before the sensors' and firmware's sections.
    ("diag.py", "_guard(\"journal\", _status_journal, c, rs)\nrs = None", "deleted: `rs = None`",
     "memory only: rs is not read again"),
)


# ----------------------------------------------------------------- mutations

class Mutant:
    __slots__ = ("file", "index", "line", "kind", "desc", "id")

    def __init__(self, file, index, line, kind, desc):
        self.file = file      # relative to device/, with /
        self.index = index    # the index-th mutation point of the file
        self.line = line
        self.kind = kind
        self.desc = desc
        self.id = "%s#%d" % (file, index)


_CMP_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
             ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
             ast.In: ast.NotIn, ast.NotIn: ast.In}
_CMP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
             ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
             ast.NotIn: "not in"}
_DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise,
              ast.Assert, ast.Delete, ast.If, ast.For, ast.While, ast.Break, ast.Continue)


def _short(node, limit=60):
    text = ast.unparse(node).split("\n")[0]
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_docstring(stmt, body):
    return (stmt is body[0] and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str))


def _is_str(node):
    return (isinstance(node, ast.JoinedStr)
            or isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


class _Points(ast.NodeTransformer):
    """Walks a module in a fixed order numbering its mutation points; with
    `apply` set to a number, performs that one mutation (on the parsed tree,
    which is then unparsed: the original is never touched)."""

    def __init__(self, apply=None, salt=0):
        self.apply = apply
        self.salt = salt
        self.points = []    # (line, kind, desc)
        self.done = False
        self._in_def = 0

    def _point(self, node, kind, desc):
        k = len(self.points)
        self.points.append((node.lineno, kind, desc))
        return k == self.apply

    def _delta(self, node):
        # Off by one up or down, fixed per point (not per run) by its place.
        return 1 if (node.lineno * 31 + node.col_offset + self.salt) % 2 else -1

    # function bodies: statements deleted
    def visit_FunctionDef(self, node):
        self._in_def += 1
        self.generic_visit(node)
        self._in_def -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _stmts(self, body):
        out = []
        for stmt in body:
            if (self._in_def and isinstance(stmt, _DELETABLE) and not _is_docstring(stmt, body)
                    and self._point(stmt, "delete", "deleted: `%s`" % _short(stmt))):
                self.done = True
                out.append(ast.copy_location(ast.Pass(), stmt))
                continue
            new = self.visit(stmt)
            out.append(new)
        return out

    def generic_visit(self, node):
        for field, old in ast.iter_fields(node):
            if isinstance(old, list) and old and isinstance(old[0], ast.stmt):
                setattr(node, field, self._stmts(old))
            elif isinstance(old, list):
                new = []
                for v in old:
                    if isinstance(v, ast.AST):
                        v = self.visit(v)
                    new.append(v)
                setattr(node, field, new)
            elif isinstance(old, ast.AST):
                setattr(node, field, self.visit(old))
        return node

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # a docstring or comment string
        return self.generic_visit(node)

    def visit_Compare(self, node):
        for i, op in enumerate(node.ops):
            flip = _CMP_FLIP[type(op)]
            if self._point(node, "compare", "`%s` -> `%s` in `%s`" % (
                    _CMP_TEXT[type(op)], _CMP_TEXT[flip], _short(node))):
                node.ops[i] = flip()
                self.done = True
        return self.generic_visit(node)

    def visit_BoolOp(self, node):
        a, b = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        if self._point(node, "boolop", "`%s` -> `%s` in `%s`" % (a, b, _short(node))):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            self.done = True
        return self.generic_visit(node)

    def visit_BinOp(self, node):
        if isinstance(node.op, (ast.Add, ast.Sub)) and not (
                _is_str(node.left) or _is_str(node.right)):
            a, b = ("+", "-") if isinstance(node.op, ast.Add) else ("-", "+")
            if self._point(node, "arith", "`%s` -> `%s` in `%s`" % (a, b, _short(node))):
                node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
                self.done = True
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.op, (ast.Add, ast.Sub)) and not _is_str(node.value):
            a, b = ("+=", "-=") if isinstance(node.op, ast.Add) else ("-=", "+=")
            if self._point(node, "arith", "`%s` -> `%s` in `%s`" % (a, b, _short(node))):
                node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
                self.done = True
        return self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, bool):
            if self._point(node, "bool", "`%s` -> `%s`" % (v, not v)):
                self.done = True
                return ast.copy_location(ast.Constant(not v), node)
        elif isinstance(v, int):
            d = self._delta(node)
            if self._point(node, "const", "%d -> %d" % (v, v + d)):
                self.done = True
                return ast.copy_location(ast.Constant(v + d), node)
        return node

    def visit_Call(self, node):
        args = node.args
        if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args):
            # Which pair: fixed per point by its place.
            i = (node.lineno + node.col_offset + self.salt) % (len(args) - 1)
            if ast.dump(args[i]) != ast.dump(args[i + 1]) and self._point(
                    node, "args", "arguments %d and %d swapped in `%s`" % (
                        i + 1, i + 2, _short(node))):
                args[i], args[i + 1] = args[i + 1], args[i]
                self.done = True
        return self.generic_visit(node)


def points(source):
    walker = _Points()
    walker.visit(ast.parse(source))
    return walker.points


def mutate(source, index):
    """The source with its index-th mutation point mutated."""
    walker = _Points(apply=index)
    tree = walker.visit(ast.parse(source))
    if not walker.done:
        raise RuntimeError("mutation point %d not found" % index)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def device_files(device=DEVICE):
    out = []
    for top, dirs, files in os.walk(device):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(top, f), device).replace(os.sep, "/")
                if not any(fnmatch.fnmatch(rel, p) for p in SKIP):
                    out.append(rel)
    return out


def all_mutants(device=DEVICE, pattern=None):
    out = []
    for rel in device_files(device):
        if pattern and not fnmatch.fnmatch(rel, pattern):
            continue
        with open(os.path.join(device, rel), encoding="utf-8") as f:
            src = f.read()
        for i, (line, kind, desc) in enumerate(points(src)):
            out.append(Mutant(rel, i, line, kind, desc))
    return out


def equivalent_reason(m, lines):
    """Why m is equivalent (EQUIVALENT), or None. A snippet "A\nB" asks for
    A on the line before and B on the mutant's line."""
    text = lines[m.line - 1] if 0 < m.line <= len(lines) else ""
    before = lines[m.line - 2] if 1 < m.line <= len(lines) + 1 else ""
    for file, snippet, desc, why in EQUIVALENT:
        # desc: one mutation, or a tuple of those equivalent for the same
        # reason (a constant's delta goes up or down by the point's place).
        if file != m.file or m.desc not in (desc if isinstance(desc, tuple) else (desc,)):
            continue
        prev, _, here = snippet.rpartition("\n")
        if here in text and (not prev or prev in before):
            return why
    return None


# ------------------------------------------------------- which tests see what

def _module_of(path):
    """Module name of a .py under device/, tests/logic, tests/host, sim/ or host_tools/."""
    for root in (DEVICE, LOGIC, HOST, os.path.join(REPO, "sim"), REPO):
        if path.startswith(root + os.sep):
            rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
            return rel[:-9] if rel.endswith(".__init__") else rel
    return None


def _imports(path):
    """Every module a file may import (anywhere in it, at any depth)."""
    mod = _module_of(path) or ""
    is_pkg = path.endswith("__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                for k in range(1, len(parts) + 1):
                    out.add(".".join(parts[:k]))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                pkg = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join([p for p in pkg + ([base] if base else []) if p])
            parts = base.split(".")
            for k in range(1, len(parts) + 1):
                out.add(".".join(parts[:k]))
            for a in node.names:
                out.add(base + "." + a.name)
        elif isinstance(node, ast.Call) and _loader_name(node.func) in _LOADERS:
            # A module named by a string to a loader: start-up loads the
            # running table's modules so (faults.load, startup._need), and
            # the graph must see them as imports.
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    parts = arg.value.split(".")
                    for k in range(1, len(parts) + 1):
                        out.add(".".join(parts[:k]))
    return out


_LOADERS = ("__import__", "load", "_need")


def _loader_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _graph():
    """{module: (path, imported modules)} of device/, sim/, tests/ helpers, host_tools/."""
    graph = {}
    roots = [DEVICE, os.path.join(REPO, "sim"), LOGIC, HOST, os.path.join(REPO, "host_tools")]
    for root in roots:
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    p = os.path.join(top, f)
                    name = _module_of(p)
                    if name and name not in graph:
                        graph[name] = (p, _imports(p))
    return graph


def test_files():
    out = [os.path.join(LOGIC, f) for f in sorted(os.listdir(LOGIC))
           if f.startswith("test_") and f.endswith(".py")]
    out += [os.path.join(HOST, f) for f in FAST_HOST if os.path.exists(os.path.join(HOST, f))]
    return out


def seen_by():
    """{device file (relative): [test files that import it, directly or not]}."""
    graph = _graph()
    device_mods = {}
    for name, (path, _imp) in graph.items():
        if path.startswith(DEVICE + os.sep):
            device_mods[name] = os.path.relpath(path, DEVICE).replace(os.sep, "/")
    out = {}
    for t in test_files():
        seen = set()
        todo = list(_imports(t))
        while todo:
            m = todo.pop()
            if m in seen or m not in graph:
                continue
            seen.add(m)
            todo.extend(graph[m][1])
        for m in seen:
            if m in device_mods:
                out.setdefault(device_mods[m], []).append(t)
    return out


# ------------------------------------------------------------------- running

MEMORY_LIMIT = 2 << 30  # bytes of address space per mutant's pytest


def _limit_memory():
    # A mutant that loops appending would take the machine's memory, which
    # the other sessions share: a MemoryError kills it instead.
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


_RUNNING: set = set()  # the mutants' pytest processes, ended if the driver is stopped
_STOP = threading.Event()


def _pytest(tests, device_dir, timeout, durations=None):
    """(killed?, how): run the tests against device_dir. durations: a dict
    filled with each test file's seconds (setup, call and teardown)."""
    env = dict(os.environ)
    env["SICBO_DEVICE_DIR"] = device_dir
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant's .pyc would outlive it
    env["SICBO_MUTANT"] = "1"
    # From the project's folder (tests open board_config/... by relative path);
    # nothing is written there: no cache, no bytecode, no hypothesis database.
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           "-p", "host_tools.mutate", "--hypothesis-seed=0"] + tests
    if durations is not None:
        cmd[4:4] = ["--durations=0", "--durations-min=0"]
    p = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True,
                         preexec_fn=_limit_memory)
    _RUNNING.add(p)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return True, "timeout"
    finally:
        _RUNNING.discard(p)
    if durations is not None:
        _durations(out.decode("utf-8", "replace"), durations)
    if p.returncode == 0:
        return False, "survived"
    if p.returncode in (1,):
        return True, "failed"
    # 2: interrupted / collection error (an import broken by the mutant); others
    return True, "error %d" % p.returncode if p.returncode != 5 else "no tests"


def pytest_configure(config):
    """Loaded by the mutants' pytest (-p host_tools.mutate): hypothesis keeps no
    database of a mutant's failing examples in the checkout."""
    if os.environ.get("SICBO_MUTANT"):
        from hypothesis import settings
        settings.register_profile("sicbo-mutant", database=None)
        settings.load_profile("sicbo-mutant")


# pytest's --durations line: "1.20s call     tests/logic/test_app.py::test_x".
_DURATION = re.compile(r"^\s*([0-9.]+)s (?:setup|call|teardown)\s+([^:\s]+)::")


def _durations(out, into):
    """Add pytest's --durations lines per test file (seconds) into `into`."""
    for line in out.splitlines():
        m = _DURATION.match(line)
        if m:
            path = os.path.join(REPO, m.group(2))
            into[path] = into.get(path, 0.0) + float(m.group(1))


def untimed(tests, seconds):
    """Why the baseline cannot set time limits (None: it can): every test
    file must have been timed, or its mutants would fall back to --timeout,
    and a run cut short would count as a kill."""
    missing = [os.path.relpath(t, REPO) for t in tests if t not in seconds]
    if missing:
        return "the baseline timed %d of %d test files (not: %s)" % (
            len(tests) - len(missing), len(tests), ", ".join(missing[:3]))
    return None


def _order(tests, rel, seconds=None):
    """Tests that name the module's file first (most likely to kill fast),
    then the fastest first (seconds: each file's on the unmutated copy)."""
    stem = os.path.basename(rel)[:-3]
    seconds = seconds or {}

    def key(t):
        b = os.path.basename(t)
        return (0 if stem in b else 1, seconds.get(t, 0.0), 1 if t.startswith(HOST) else 0, b)
    return sorted(tests, key=key)


# A mutant's time limit: its tests' time on the unmutated copy, times this,
# plus TIME_SLACK_S (two mutants share the machine; it may be busy). Only a
# mutant that runs well past what its tests need is a hang, and killed.
TIME_FACTOR = 3.0
TIME_SLACK_S = 30.0


def time_limit(tests, seconds, floor):
    return max(floor, TIME_FACTOR * sum(seconds.get(t, 0.0) for t in tests) + TIME_SLACK_S)


# What only MicroPython does, and the logic tests that check it there: a
# mutant of these (a file, and a text on the mutated line or None for any
# line) that CPython's tests let survive runs these files on the unix port
# too, from the mutated sources. memory.forget drops modules on MicroPython
# only (CPython keeps its modules): diag's commands and access's stops and
# recovery mode leave the REPL's heap as they found it, and a boot forgets
# every module only start-up needs.
ON_MICROPYTHON = (
    ("memory.py", None, ("test_memory.py",)),
    ("diag.py", "memory.forget(", ("test_access_diag.py",)),
    ("access.py", "_forget()", ("test_access.py",)),
    ("startup.py", "memory.forget(", ("test_startup_stages.py", "test_startup_link.py")),
    ("faults.py", "memory.forget(", ("test_startup_stages.py",)),
    ("resumption.py", "MODULES = ", ("test_startup_stages.py",)),
)
MICROPYTHON_HEAP = "4m"  # function, not memory: sources compiled in the VM


def micropython_tests(m, lines):
    """The logic test files to run on the unix port for mutant m, if any."""
    text = lines[m.line - 1] if 0 < m.line <= len(lines) else ""
    for file, snippet, names in ON_MICROPYTHON:
        if file == m.file and (snippet is None or snippet in text):
            return names
    return ()


def _micropython(root, names):
    """(killed?, how): the logic test files `names` on the unix port, with
    root's device/ (the mutant) and the checkout's sim/ and tests/."""
    from host_tools import mprun

    for name in names:
        try:
            _passed, failed, _out = mprun.run_file(os.path.join(root, "tests", "logic"), name,
                                                   MICROPYTHON_HEAP)
        except subprocess.TimeoutExpired:
            return True, "timeout"
        if failed:
            return True, "failed on MicroPython"
    return False, "survived"


class _Worker:
    def __init__(self, base):
        self.root = tempfile.mkdtemp(prefix="sicbo-mutate-", dir="/tmp")
        self.device = os.path.join(self.root, "device")
        shutil.copytree(base, self.device, ignore=shutil.ignore_patterns("__pycache__"))
        # mp_runner finds device/, sim/ and the tests beside the folder it is given.
        os.symlink(os.path.join(REPO, "sim"), os.path.join(self.root, "sim"))
        os.symlink(os.path.join(REPO, "tests"), os.path.join(self.root, "tests"))

    def run(self, m, source, tests, timeout):
        path = os.path.join(self.device, m.file)
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutate(source, m.index))
        try:
            killed, how = _pytest(tests, self.device, timeout)
            names = () if killed else micropython_tests(m, source.split("\n"))
            return _micropython(self.root, names) if names else (killed, how)
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.mutate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=200, help="mutants drawn (0: all)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once (at most 2)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="the least time limit per mutant, seconds (see TIME_FACTOR)")
    ap.add_argument("--min-score", type=float, default=None,
                    help="exit 1 when the overall score is below this percentage")
    ap.add_argument("--file", default=None, help="mutate only files matching this glob "
                    "(relative to device/, e.g. 'hw/*.py')")
    ap.add_argument("--id", action="append", default=[],
                    help="run only this mutant (FILE#N, as listed; repeatable)")
    ap.add_argument("--list", action="store_true", help="list the drawn mutants, run nothing")
    ap.add_argument("--show", default=None, metavar="FILE#N",
                    help="print the mutated line(s) of one mutant as a diff")
    args = ap.parse_args(argv)
    jobs = max(1, min(2, args.jobs))
    # SIGTERM stops like Ctrl-C: the mutants' processes ended, the copies removed.
    signal.signal(signal.SIGTERM, _interrupt)

    # A snapshot of device/ now: the checkout may change while the mutants run.
    snap = tempfile.mkdtemp(prefix="sicbo-mutate-base-", dir="/tmp")
    base = os.path.join(snap, "device")
    shutil.copytree(DEVICE, base, ignore=shutil.ignore_patterns("__pycache__"))
    workers = []
    try:
        return _main(args, base, jobs, workers)
    finally:
        for w in workers:
            w.close()
        shutil.rmtree(snap, ignore_errors=True)


def _interrupt(_signum, _frame):
    raise KeyboardInterrupt


def _show(base, ident):
    import difflib
    file, _, n = ident.partition("#")
    with open(os.path.join(base, file), encoding="utf-8") as f:
        src = f.read()
    a = ast.unparse(ast.parse(src)).splitlines()
    b = mutate(src, int(n)).splitlines()
    sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
        a, b, file + " (unparsed)", file + " " + ident, n=2, lineterm=""))
    return 0


def _main(args, base, jobs, workers):
    if args.show:
        return _show(base, args.show)
    everything = all_mutants(base, args.file)
    if args.id:
        chosen = [m for m in everything if m.id in args.id]
    elif args.sample and args.sample < len(everything):
        chosen = random.Random(args.seed).sample(everything, args.sample)
    else:
        chosen = list(everything)
    chosen.sort(key=lambda m: (m.file, m.index))
    sources, lines = {}, {}
    for m in chosen:
        if m.file not in sources:
            with open(os.path.join(base, m.file), encoding="utf-8") as f:
                sources[m.file] = f.read()
            lines[m.file] = sources[m.file].splitlines()
    print("%d mutation points in device/, %d drawn (seed %d)" % (
        len(everything), len(chosen), args.seed))
    if args.list:
        for m in chosen:
            print("  %s  %s:%d  %s" % (m.id, m.file, m.line, m.desc))
        return 0

    seen = seen_by()
    # The unmutated copy must pass every test that will be run.
    all_tests = sorted({t for m in chosen for t in seen.get(m.file, [])})
    t0 = time.time()
    for _ in range(jobs):
        workers.append(_Worker(base))
    seconds = {}  # test file -> seconds on the unmutated copy
    if all_tests:
        killed, how = _pytest(all_tests, workers[0].device, 3600, seconds)
        if killed:
            print("the unmutated firmware fails its tests (%s): no score" % how, file=sys.stderr)
            return 2
        why = untimed(all_tests, seconds)
        if why:
            print("%s: no time limits, no score" % why, file=sys.stderr)
            return 2
    print("baseline: %d test files pass on the unmutated copy in %.0f s" % (
        len(all_tests), time.time() - t0))

    results = {}   # id -> (status, how)
    todo = []
    for m in chosen:
        why = equivalent_reason(m, lines[m.file])
        if why:
            results[m.id] = ("equivalent", why)
        elif not seen.get(m.file):
            results[m.id] = ("survived", "no fast test imports it")
        else:
            todo.append(m)
    lock = threading.Lock()
    done = [0]
    total = len(todo)

    def run(worker):
        while not _STOP.is_set():
            with lock:
                if not todo:
                    return
                m = todo.pop(0)
            start = time.time()
            tests = _order(seen[m.file], m.file, seconds)
            killed, how = worker.run(m, sources[m.file], tests,
                                     time_limit(tests, seconds, args.timeout))
            with lock:
                results[m.id] = ("killed" if killed else "survived", how)
                done[0] += 1
                print("[%3d/%d] %-8s %5.1fs  %s:%d  %s" % (
                    done[0], total, how.upper() if killed else "SURVIVED",
                    time.time() - start, m.file, m.line, m.desc), flush=True)

    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        _STOP.set()
        for p in list(_RUNNING):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        for t in threads:
            t.join(5)
        print("stopped", file=sys.stderr)
        return 130

    return _report(chosen, results, args, time.time() - t0)


def _report(chosen, results, args, elapsed):
    per = {}
    for m in chosen:
        status = results[m.id][0]
        k, s, e = per.get(m.file, (0, 0, 0))
        per[m.file] = (k + (status == "killed"), s + (status == "survived"),
                       e + (status == "equivalent"))
    print()
    print("%-28s %7s %7s %7s %7s" % ("file", "mutants", "killed", "equiv", "score"))
    tk = ts = te = 0
    for f in sorted(per):
        k, s, e = per[f]
        tk, ts, te = tk + k, ts + s, te + e
        score = 100.0 * k / (k + s) if k + s else 100.0
        print("%-28s %7d %7d %7d %6.1f%%" % (f, k + s + e, k, e, score))
    overall = 100.0 * tk / (tk + ts) if tk + ts else 100.0
    print("%-28s %7d %7d %7d %6.1f%%" % ("overall", tk + ts + te, tk, te, overall))
    surv = [m for m in chosen if results[m.id][0] == "survived"]
    if surv:
        print("\nsurvivors:")
        for m in surv:
            extra = results[m.id][1]
            print("  %s:%d  %s%s  [%s]" % (m.file, m.line, m.desc,
                                          "" if extra == "survived" else "  (%s)" % extra, m.id))
    equiv = [m for m in chosen if results[m.id][0] == "equivalent"]
    if equiv:
        print("\nequivalent (not counted):")
        for m in equiv:
            print("  %s:%d  %s: %s" % (m.file, m.line, m.desc, results[m.id][1]))
    hangs = len([m for m in chosen if results[m.id] == ("killed", "timeout")])
    print("\nmutation score %.1f%% (%d killed of %d, %d of them past their time limit; "
          "%d equivalent; seed %d, %.0f s)" % (overall, tk, tk + ts, hangs, te, args.seed,
                                               elapsed))
    if args.min_score is not None and overall < args.min_score:
        print("below --min-score %g" % args.min_score)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
