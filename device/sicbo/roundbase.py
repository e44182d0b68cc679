# The round machine's outputs and shared steps: the preallocated command and
# journal-record buffers, the lamp frame, and the transitions that several
# events share. RoundMachine (round.py) adds the event handlers; the split
# keeps each module small enough to compile from source on a 110 KiB heap.

import array
import time

from micropython import const

from sicbo import events as E
from sicbo import journal
from sicbo.roundstate import RoundState
from sicbo.settle import SettlementTable, set_channel

SOLENOID = const(0)
ELECTRIC = const(1)
MANUAL = const(2)
_MAX_CMDS = const(16)
_MAX_RECORDS = const(8)


class RoundBase(RoundState):
    """Buffers and shared steps of RoundMachine (see round.py); the round's
    state and its transitions are RoundState's."""

    def __init__(self, cfg, table=None, pulses=3, pulse_on_ms=150, pulse_off_ms=250,
                 shaker_ms=3000, bell_ms=2000, presses=3):
        RoundState.__init__(self)
        self.cfg = cfg
        self.table = table if table is not None else SettlementTable(cfg)
        self.shaker = ("solenoid", "electric", "manual").index(cfg.shaker)
        self.players_choose = 1 if cfg.void_policy == "players_choose" else 0
        self.resume_void = cfg.resume_policy == "void"
        self.pulses = pulses
        self.pulse_on_ms = pulse_on_ms
        self.pulse_off_ms = pulse_off_ms
        self.shaker_ms = shaker_ms
        self.bell_ms = bell_ms
        self.presses_needed = presses
        sc = self.table.status_channel
        self.ch_place = sc.get("PLACE_BETS", -1)
        self.ch_alarm = sc.get("ALARM", -1)
        self.ch_void = sc.get("VOID", -1)
        self.ch_paying = sc.get("PAYING", -1)
        self.frame = bytearray(self.table.row_bytes)
        self.cmds = array.array("i", bytes(4 * 4 * _MAX_CMDS))
        self.ncmd = 0
        self.rec_buf = bytearray(journal.REC_LEN * _MAX_RECORDS)
        self.rec_len = 0
        self._rec_mv = memoryview(self.rec_buf)
        self.entry = bytearray(3)
        self.presses = 0
        # Inputs (levels, from edges; set by resume() at boot).
        self.cover = 0
        self.clasp_l = 0
        self.clasp_r = 0
        self.supervisor = 0
        self.timer_on = False
        self.deadline = 0
        # Per call.
        self._now = 0
        self._wall = None
        # Counters of what was refused without a journal record.
        self.ignored = 0
        self.reader_ignored = 0

    # ---- output buffers ---------------------------------------------------

    def _cmd(self, code, a=0, b=0, c=0):
        i = self.ncmd
        if i >= _MAX_CMDS:
            return  # never happens: at most 7 commands per event
        k = i << 2
        cm = self.cmds
        cm[k] = code
        cm[k + 1] = a
        cm[k + 2] = b
        cm[k + 3] = c
        self.ncmd = i + 1

    def cmd(self, i):
        """Command i as a tuple (code, a, b, c) (allocates: tests, host)."""
        k = i << 2
        return (self.cmds[k], self.cmds[k + 1], self.cmds[k + 2], self.cmds[k + 3])

    def commands(self):
        return [self.cmd(i) for i in range(self.ncmd)]

    def _rec(self, rtype, p0=0, p1=0, p2=0, p3=0, p4=0, p5=0):
        # Write a record, then apply it: the one way the round changes state.
        # At most 6 records per call (resume), 8 fit: never dropped.
        off = self.rec_len
        buf = self.rec_buf
        journal.put_header(buf, off, rtype, journal.REC_LEN, self.seq + 1,
                           self.round + 1 if rtype == E.J_ROUND else self.round,
                           self.boot + 1 if rtype == E.J_BOOT else self.boot,
                           self._now, self._wall)
        p = off + journal.HEADER
        buf[p] = p0
        buf[p + 1] = p1
        buf[p + 2] = p2
        buf[p + 3] = p3
        buf[p + 4] = p4
        buf[p + 5] = p5  # p6, p7: always 0
        self.rec_len = off + journal.REC_LEN
        self._apply(buf, off)

    def records(self):
        """The records of the last call, sealed (CRC filled in), as a
        memoryview to write to the journal before executing any command."""
        journal.seal(self.rec_buf, self.rec_len)
        return self._rec_mv[:self.rec_len]

    def _begin(self, now, wall):
        self.ncmd = 0
        self.rec_len = 0
        self._now = now
        self._wall = wall

    def _show(self, msg, detail=0):
        self._cmd(E.C_SHOW, msg, detail)

    def _refuse(self, msg, detail=0):
        # An interlock: journaled and shown.
        self._rec(E.J_REFUSED, msg, detail & 0xFF)
        self._show(msg, detail)

    def _not_now(self, msg=E.R_KEY_NOT_NOW):
        # A key that means nothing in this state: shown, counted, not journaled.
        self.ignored += 1
        self._show(msg)

    # ---- lamps ----------------------------------------------------------

    def _lamps(self):
        f = self.frame
        n = len(f)
        if self.has_result and (self.state == E.ST_PAYING or self.state == E.ST_HOLD):
            row = self.table.settle(self.dice[0], self.dice[1], self.dice[2])
            for i in range(n):
                f[i] = row[i]
        else:
            for i in range(n):
                f[i] = 0
        if self.ch_place >= 0:
            set_channel(f, self.ch_place, self.state == E.ST_OPEN)
        if self.ch_alarm >= 0:
            set_channel(f, self.ch_alarm, self.alarm)
        if self.ch_void >= 0:
            set_channel(f, self.ch_void, self.void_lit)
        if self.ch_paying >= 0:
            set_channel(f, self.ch_paying, self.state == E.ST_PAYING)
        self._cmd(E.C_LAMPS)

    # ---- events -------------------------------------------------------------

    def _ready(self):
        if self.cover and self.clasp_l and self.clasp_r:
            self._show(E.M_READY)
        else:
            self._show(E.M_WAIT_COVER)

    def _timer(self, now, ms):
        self.timer_on = True
        self.deadline = time.ticks_add(now, ms)
        self._cmd(E.C_TIMER, ms)

    def _open(self):
        self._rec(E.J_OPEN)
        self._lamps()
        self._show(E.M_PLACE_BETS)

    def _stop_shaker(self):
        if self.state == E.ST_SHAKING:
            if self.shaker == SOLENOID:
                self._cmd(E.C_SOLENOID_STOP)
            elif self.shaker == ELECTRIC:
                self._cmd(E.C_SHAKER_STOP)
        if self.timer_on:
            self.timer_on = False
            self._cmd(E.C_TIMER_CANCEL)

    def _tamper(self, msg, detail):
        self._rec(E.J_ALARM, msg, detail)
        self._stop_shaker()
        self._void(E.V_TAMPER)
        self._show(msg, detail)

    def _void(self, reason):
        self._rec(E.J_VOID, reason, self.players_choose)
        self._lamps()
        self._show(E.M_VOID_PLAYERS_CHOOSE if self.players_choose else E.M_VOID_BETS_STAY,
                   reason)



def same(a, b):
    """Same three dice in any order (the outcome does not depend on order)."""
    x0, x1, x2 = a[0], a[1], a[2]
    y0, y1, y2 = b[0], b[1], b[2]
    if x0 > x1:
        x0, x1 = x1, x0
    if x1 > x2:
        x1, x2 = x2, x1
    if x0 > x1:
        x0, x1 = x1, x0
    if y0 > y1:
        y0, y1 = y1, y0
    if y1 > y2:
        y1, y2 = y2, y1
    if y0 > y1:
        y0, y1 = y1, y0
    return x0 == y0 and x1 == y1 and x2 == y2
