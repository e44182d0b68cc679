# The regulated round (rules.md Arts. 2-4 and 7) as a pure state machine.
#
# Events in: RoundMachine.handle(ev, arg, now, wall) for sensor edges, dealer
# keys, the supervisor key, timer expiry and sensor faults (codes in events.py);
# RoundMachine.reader_dice(rid, d1, d2, d3, now, wall) for the dice reader.
# Both return the number of commands produced; nothing is allocated.
#
# Out, per call, in this order of execution by the controller:
#   1. journal records: RoundMachine.rec_len > 0 -> write RoundMachine.records()
#      (sealed, back to back) to the journal and flush, BEFORE anything else;
#   2. commands: for i in range(n): RoundMachine.cmd(i) -> (code, a, b, c), or
#      read RoundMachine.cmds[4*i .. 4*i+3] directly (no allocation).
# C_LAMPS means "show RoundMachine.frame" (a preallocated bytearray laid out
# as SettlementTable rows: winning areas plus the status lamps).
#
# Time: `now` is time.ticks_ms() of the event, read by the controller; only
# ticks_add/ticks_diff are used on it. `wall` is seconds since 2000-01-01 UTC
# when the RTC has been set, else None (never guessed). The machine's one
# timer (the shake's end) is `timer_on` and `deadline`: the controller calls
# handle(EV_TIMER) once it is due.
#
# State: every change of the round's state is a journal record applied by
# RoundState._apply (roundstate.py): an event writes its records (_rec), each
# applied as it is written, then adds its commands. The dealer's key entry is
# a DealerEntry (below), started again by every change of state.
#
# At boot: m.feed(segment) for every journal segment in order (the same
# records through the same code), then m.resume(now, wall, levels, cause)
# and m.set_config(now, wall, config_id); each returns its commands like
# handle().

import array
import time

from micropython import const

from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S
from sicbo.journal import seal
from sicbo.roundstate import KEEP_DAMAGE, RoundState
from sicbo.settle import SettlementTable, set_channel

_MAX_CMDS = const(16)  # at most 7 commands per event
_MAX_RECORDS = const(8)  # at most 6 records per call (resume)


class DealerEntry:
    """The dealer's key entry (rules.md Art. 3): three face keys then
    confirm for the result (a fourth face key starts the entry again), or
    the void key, a reason key (1 stacked, 2 leaning, 3 other) and confirm.
    What the keys mean in each state of the round is the machine's part;
    this holds only what has been keyed so far. It is not journaled: a
    record is written once the entry is confirmed, and every change of the
    round's state starts the entry again."""

    def __init__(self):
        self.faces = bytearray(3)  # the faces keyed, in order
        self.count = 0  # how many of them
        self.voiding = False  # the void key was pressed: face keys 1..3 give the reason
        self.reason = 0  # the void reason keyed (sicbo.events V_*), 0 none yet

    def reset(self):
        # (the reason is reset when a void entry starts)
        self.count = 0
        self.voiding = False

    def add_face(self, face):
        """Key one face (1..6); returns how many are keyed now."""
        if self.count >= 3:
            self.count = 0  # a fourth face key starts the entry again
        self.faces[self.count] = face
        self.count += 1
        return self.count

    def start_void(self):
        """The void key: the faces keyed so far wait; a reason is keyed next."""
        self.voiding = True
        self.reason = 0


class RoundMachine(RoundState):
    """One table's round. cfg is a TableConfig; the timing arguments are the
    board's shaker and bell settings."""

    def __init__(self, cfg, table=None, pulses=3, pulse_on_ms=150, pulse_off_ms=250,
                 shaker_ms=3000, bell_ms=2000, presses=3):
        RoundState.__init__(self)
        self.cfg = cfg
        self.table = table if table is not None else SettlementTable(cfg)
        self.shaker = ("solenoid", "electric", "manual").index(cfg.shaker)  # R.SHAKER_*
        self.players_choose = (R.POLICY_PLAYERS_CHOOSE if cfg.void_policy == "players_choose"
                               else R.POLICY_BETS_STAY)
        self.resume_void = cfg.resume_policy == "void"
        self.pulses = pulses
        self.pulse_on_ms = pulse_on_ms
        self.pulse_off_ms = pulse_off_ms
        self.shaker_ms = shaker_ms
        self.bell_ms = bell_ms
        self.presses_needed = presses
        # The status lamps (sicbo.signals STATUS_LAMPS, spelt here: that
        # module's constants are folded, its strings would load it).
        sc = self.table.status_channel
        self.ch_place = sc.get("PLACE_BETS", -1)
        self.ch_alarm = sc.get("ALARM", -1)
        self.ch_void = sc.get("VOID", -1)
        self.ch_paying = sc.get("PAYING", -1)
        self.frame = bytearray(self.table.row_bytes)
        self.cmds = array.array("i", bytes(4 * 4 * _MAX_CMDS))
        self.ncmd = 0
        self.rec_buf = bytearray(R.REC_LEN * _MAX_RECORDS)
        self.rec_len = 0
        self._rec_mv = memoryview(self.rec_buf)
        self.entry = DealerEntry()
        self.presses = 0  # handle presses of this shake (manual shaker)
        # The level signals (sicbo.signals, below S.LEVELS) as the machine
        # knows them: from their events, and from resume() at boot.
        self.levels = bytearray(S.LEVELS)
        self.timer_on = False  # the shake's end (solenoid train, electric run)
        self.deadline = 0
        # The floor's backlog as the journal store last said (E.BACKLOG_*):
        # at BACKLOG_STOP no new round starts (the table file's policy).
        self.backlog = E.BACKLOG_ROOM
        # Per call.
        self._now = 0
        self._wall = None
        # Counters of what was refused without a journal record.
        self.ignored = 0
        self.reader_ignored = 0

    # ---- outputs -------------------------------------------------------------

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
        self.put_next_header(buf, off, rtype, R.REC_LEN, self._now, self._wall)
        p = off + R.HEADER
        buf[p] = p0
        buf[p + 1] = p1
        buf[p + 2] = p2
        buf[p + 3] = p3
        buf[p + 4] = p4
        buf[p + 5] = p5
        buf[p + 6] = 0
        buf[p + 7] = 0
        self.rec_len = off + R.REC_LEN
        if self._apply(buf, off):
            self.entry.reset()  # a new state: the dealer keys anew

    def records(self):
        """The records of the last call, sealed (CRC filled in), as a
        memoryview to write to the journal before executing any command."""
        seal(self.rec_buf, self.rec_len)
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
        self._rec(R.J_REFUSED, msg, detail & 0xFF)
        self._show(msg, detail)

    def _not_now(self, msg=E.R_KEY_NOT_NOW):
        # A key that means nothing in this state: shown, counted, not journaled.
        self.ignored += 1
        self._show(msg)

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

    # ---- events ----------------------------------------------------------------

    def handle(self, ev, arg, now, wall=None):
        """Process one event; return the number of commands (see module doc)."""
        self._begin(now, wall)
        st = self.state
        if ev == E.EV_FACE:
            self._face(arg)
        elif ev == E.EV_CONFIRM:
            self._confirm()
        elif ev == E.EV_BELL:
            if st == E.ST_OPEN:
                self._rec(R.J_BELL)
                self._cmd(E.C_BELL, self.bell_ms)
                self._lamps()
                self._show(E.M_BETS_CLOSED)
            else:
                self._not_now()
        elif ev == E.EV_SHAKE:
            self._shake()
        elif ev == E.EV_TIMER:
            if self.timer_on and time.ticks_diff(now, self.deadline) >= 0:
                self.timer_on = False
                if st == E.ST_SHAKING and self.shaker != R.SHAKER_MANUAL:
                    self._open()
        elif ev == E.EV_COVER_ON:
            self.levels[S.COVER] = 1
            if st == E.ST_RESULT or st == E.ST_PAYING or st == E.ST_HOLD:
                # Art. 4: the dome is not covered again before the payout.
                self._rec(R.J_VIOLATION, E.R_COVER_BEFORE_PAYOUT)
                self._lamps()
                self._show(E.R_COVER_BEFORE_PAYOUT)
            elif st == E.ST_IDLE:
                self._ready()
        elif ev == E.EV_COVER_OFF:
            self.levels[S.COVER] = 0
            if st == E.ST_SHAKING or st == E.ST_OPEN:
                self._tamper(E.R_TAMPER_COVER, 0)
            elif st == E.ST_CLOSED:
                self._rec(R.J_COVER_OFF)
                self._show(E.M_ENTER_DICE)
        elif ev == E.EV_CLASP_L_OFF or ev == E.EV_CLASP_R_OFF:
            left = ev == E.EV_CLASP_L_OFF
            self.levels[S.CLASP_LEFT if left else S.CLASP_RIGHT] = 0
            if st == E.ST_SHAKING or st == E.ST_OPEN:
                self._tamper(E.R_TAMPER_CLASP, 1 if left else 2)
        elif ev == E.EV_CLASP_L_ON or ev == E.EV_CLASP_R_ON:
            self.levels[S.CLASP_LEFT if ev == E.EV_CLASP_L_ON else S.CLASP_RIGHT] = 1
            if st == E.ST_IDLE:
                self._ready()
        elif ev == E.EV_VOID:
            self._void_key()
        elif ev == E.EV_PAYOUT:
            if st == E.ST_PAYING:
                self._rec(R.J_PAYOUT)
                self._lamps()
                self._show(E.M_ROUND_DONE)
            elif st == E.ST_HOLD:
                self._not_now(E.R_NEED_SUPERVISOR)
            else:
                self._not_now()
        elif ev == E.EV_SUPERVISOR_ON:
            self.levels[S.SUPERVISOR] = 1
            self._rec(R.J_SUPERVISOR, 1)
            if self.alarm or self.faults:
                self._rec(R.J_ALARM_CLEAR)
                self._lamps()
                self._show(E.M_ALARM_CLEARED)
            else:
                self._show(E.M_SUPERVISOR_ON)
        elif ev == E.EV_SUPERVISOR_OFF:
            self.levels[S.SUPERVISOR] = 0
            self._rec(R.J_SUPERVISOR, 0)
            if st == E.ST_PAYING or st == E.ST_HOLD:
                self.entry.reset()  # a supervisor's correction stops with the key
            self._show(E.M_SUPERVISOR_OFF)
        elif ev == E.EV_BACKLOG:
            if arg != E.BACKLOG_ROOM and self.backlog == E.BACKLOG_ROOM:
                # At its flash budget: raised once, until there is room again.
                self._rec(R.J_ALARM, E.R_BACKLOG_FULL, arg)
                self._lamps()
                self._show(E.R_BACKLOG_FULL, arg)
            self.backlog = arg
        elif ev == E.EV_FAULT:
            self._rec(R.J_ALARM, E.R_SENSOR_FAULT, arg & 0xFF)
            if st == E.ST_SHAKING or st == E.ST_OPEN:
                self._stop_shaker()
                self._void(E.V_FAULT)
            else:
                self._lamps()
            self._show(E.R_SENSOR_FAULT, arg)
        else:
            self._not_now()
        return self.ncmd

    def _ready(self):
        lv = self.levels
        self._show(E.M_READY if lv[S.COVER] and lv[S.CLASP_LEFT] and lv[S.CLASP_RIGHT]
                   else E.M_WAIT_COVER)

    def _shake(self):
        st = self.state
        if st == E.ST_IDLE:
            lv = self.levels
            if self.faults:
                self._refuse(E.R_FAULT_ACTIVE, self.faults)
            elif self.backlog == E.BACKLOG_STOP:
                self._refuse(E.R_BACKLOG_FULL, E.BACKLOG_STOP)
            elif not lv[S.COVER]:
                self._refuse(E.R_COVER_NOT_ON)
            elif not (lv[S.CLASP_LEFT] and lv[S.CLASP_RIGHT]):
                self._refuse(E.R_CLASP_OPEN, _open_sides(lv))
            else:
                self._start()
        elif st == E.ST_SHAKING and self.shaker == R.SHAKER_MANUAL:
            self.presses += 1
            if self.presses >= self.presses_needed:
                self._open()
            else:
                self._show(E.M_SHAKING, self.presses)
        elif st == E.ST_RESULT or st == E.ST_PAYING or st == E.ST_HOLD:
            self._refuse(E.R_PAYOUT_PENDING)
        else:
            self._not_now()

    def _start(self):
        # Art. 2: the shake; betting opens once it has run its course.
        self._rec(R.J_ROUND, self.shaker)
        if self.shaker == R.SHAKER_SOLENOID:
            self._cmd(E.C_SOLENOID, self.pulses, self.pulse_on_ms, self.pulse_off_ms)
            self._timer(self._now, self.pulses * (self.pulse_on_ms + self.pulse_off_ms))
        elif self.shaker == R.SHAKER_ELECTRIC:
            self._cmd(E.C_SHAKER, self.shaker_ms)
            self._timer(self._now, self.shaker_ms)
        else:
            self.presses = 1
        self._lamps()
        if self.shaker == R.SHAKER_MANUAL and self.presses >= self.presses_needed:
            self._open()
        else:
            self._show(E.M_SHAKING, self.presses if self.shaker == R.SHAKER_MANUAL else 0)

    def _timer(self, now, ms):
        self.timer_on = True
        self.deadline = time.ticks_add(now, ms)

    def _open(self):
        self._rec(R.J_OPEN)
        self._lamps()
        self._show(E.M_PLACE_BETS)

    def _stop_shaker(self):
        if self.state == E.ST_SHAKING:
            if self.shaker == R.SHAKER_SOLENOID:
                self._cmd(E.C_SOLENOID_STOP)
            elif self.shaker == R.SHAKER_ELECTRIC:
                self._cmd(E.C_SHAKER_STOP)
        self.timer_on = False

    def _tamper(self, msg, detail):
        # The dome opened between the shake and the bell: the round is void.
        self._rec(R.J_ALARM, msg, detail)
        self._stop_shaker()
        self._void(E.V_TAMPER)
        self._show(msg, detail)

    def _void(self, reason):
        self._rec(R.J_VOID, reason, self.players_choose)
        self._lamps()
        self._show(E.M_VOID_PLAYERS_CHOOSE if self.players_choose else E.M_VOID_BETS_STAY,
                   reason)

    # ---- the dealer's key entry -----------------------------------------------

    def _void_key(self):
        st = self.state
        entry = self.entry
        if st == E.ST_RESULT or (st == E.ST_HOLD and not self.has_result
                                 and self.levels[S.SUPERVISOR]):
            if entry.voiding:
                entry.reset()
                self._show(E.M_VOID_CANCELLED)
            else:
                entry.start_void()
                self._show(E.M_VOID_REASON)
        elif st == E.ST_HOLD:
            self._not_now(E.R_NEED_SUPERVISOR)
        else:
            self._refuse(E.R_VOID_NOT_NOW)

    def _face(self, face):
        st = self.state
        entry = self.entry
        if type(face) is not int or not 1 <= face <= 6:
            self._refuse(E.R_DICE_RANGE, face if type(face) is int else 255)
            return
        if entry.voiding:
            if face <= 3:  # the reason keys: V_STACKED, V_LEANING, V_OTHER
                entry.reason = face
                self._show(E.M_VOID_REASON, face)
            else:
                self._not_now(E.R_VOID_REASON)
            return
        if self._may_enter(st):
            self._show(E.M_DICE_SO_FAR, entry.add_face(face))
        elif st == E.ST_PAYING:
            self._refuse(E.R_SECOND_RESULT)
        elif st == E.ST_HOLD:
            self._not_now(E.R_NEED_SUPERVISOR)
        else:
            self._refuse(E.R_DICE_NOT_NOW)

    def _may_enter(self, st):
        # The dealer's result, or the supervisor's correction or decision.
        return st == E.ST_RESULT or ((st == E.ST_PAYING or st == E.ST_HOLD)
                                     and self.levels[S.SUPERVISOR])

    def _confirm(self):
        st = self.state
        entry = self.entry
        if entry.voiding:
            if entry.reason:
                self._void(entry.reason)
            else:
                self._not_now(E.R_VOID_REASON)
            return
        if not self._may_enter(st):
            self._not_now(E.R_NEED_SUPERVISOR if st == E.ST_HOLD else E.R_KEY_NOT_NOW)
            return
        if entry.count < 3:
            self._not_now(E.R_INCOMPLETE)
            return
        e = entry.faces
        if st == E.ST_RESULT and self.has_reader and not same(e, self.reader):
            r = self.reader
            self._rec(R.J_HOLD, e[0], e[1], e[2], r[0], r[1], r[2])
            msg = E.M_HOLD
        elif st == E.ST_RESULT or not self.has_result:
            # The dealer's result, or the supervisor's decision of a hold
            # raised before any result.
            self._rec(R.J_RESULT, e[0], e[1], e[2],
                      R.SOURCE_DEALER if st == E.ST_RESULT else R.SOURCE_SUPERVISOR)
            msg = E.M_PAYING
        else:
            # A correction under the supervisor key (or the decision of a hold
            # raised after the result): journaled with both results.
            if st == E.ST_PAYING and same(e, self.dice):
                entry.reset()
                self._not_now(E.R_SAME_RESULT)
                return
            d = self.dice
            self._rec(R.J_CORRECTION, d[0], d[1], d[2], e[0], e[1], e[2])
            msg = E.M_CORRECTED
        self._lamps()
        self._show(msg)

    # ---- the dice reader ---------------------------------------------------------

    def reader_dice(self, rid, d1, d2, d3, now, wall=None):
        """Dice reported by the optional reader for round rid (already parsed
        and checksummed by dicereader.py). Returns the number of commands."""
        self._begin(now, wall)
        st = self.state
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6 and 1 <= d3 <= 6):
            self.reader_ignored += 1
            self._refuse(E.R_DICE_RANGE, d1 if not 1 <= d1 <= 6 else (
                d2 if not 1 <= d2 <= 6 else d3))
            return self.ncmd
        if rid != self.round or not (st == E.ST_CLOSED or st == E.ST_RESULT
                                     or st == E.ST_PAYING):
            self.reader_ignored += 1
            self._show(E.R_READER_ROUND if rid != self.round else E.R_DICE_NOT_NOW)
            return self.ncmd
        if self.has_reader:
            self.reader_ignored += 1  # the first reading of a round counts
            return self.ncmd
        self._rec(R.J_READER, d1, d2, d3)
        if st == E.ST_PAYING and not same(self.dice, self.reader):
            self._rec(R.J_HOLD, self.dice[0], self.dice[1], self.dice[2], d1, d2, d3)
            self._lamps()
            self._show(E.M_HOLD)
        else:
            self._show(E.M_READER_OK)
        return self.ncmd

    # ---- boot ----------------------------------------------------------------------

    def resume(self, now, wall=None, levels=b"", cause=0):
        """After feed() of every journal segment: journal J_BOOT (cause: the
        board's reset cause), report the damage the replay found, apply the
        table's resume policy and check the level signals as they read now
        (`levels`: one byte per signal below S.LEVELS, in sicbo.signals order;
        missing ones read 0) (docs/journal.md, Reading and recovery rules).
        Returns the number of commands."""
        self._begin(now, wall)
        last = self.last_rec  # the journal's last record, before this boot's
        if self.seq < self.bad_seq <= self.seq + 0xFFFF:
            # The journal ends in a damaged record numbered after the last
            # good one: this boot's records come after it (none reuses its
            # number); a forged number far ahead is not followed.
            self.seq = self.bad_seq
        lv = self.levels
        for i in range(S.LEVELS):
            lv[i] = levels[i] if i < len(levels) else 0
        self.timer_on = False
        self.presses = 0
        self.entry.reset()
        self._rec(R.J_BOOT, cause)
        before = self.state
        k = self.pending
        if k:
            d = self.damage
            for i in range(0, 6 * min(k, KEEP_DAMAGE), 6):
                self._rec(R.J_DAMAGE, d[i], d[i + 1], d[i + 2], d[i + 3], d[i + 4], d[i + 5])
            self._rec(R.J_ALARM, E.R_DAMAGE, min(k, 255))
            self._show(E.R_DAMAGE, k)
            if E.ST_SHAKING <= before <= E.ST_RESULT:
                # The journal of this round cannot be trusted: void before a
                # result (J_DAMAGE held a round being paid).
                self._void(E.V_DAMAGE)
                return self.ncmd
        # An event's records are one append; a cut may keep only its first
        # ones, and the round's state is then the one before the event. What
        # the last record began is done now, as the event would have done
        # it: the hold of a reader that disagreed while paying; the void of
        # a round whose alarm (a tamper, a sensor fault, the power cut, the
        # journal's damage) was journaled, its J_VOID not. Inline: a method
        # and its arguments' names would take the provisioned table's
        # interned names past 620, where MicroPython adds a 4.4 KiB pool.
        t = last & 0xFF
        code = last >> 8
        if t == R.J_READER and before == E.ST_PAYING and not same(self.dice, self.reader):
            d = self.dice
            r = self.reader
            self._rec(R.J_HOLD, d[0], d[1], d[2], r[0], r[1], r[2])
            self._lamps()
            self._show(E.M_HOLD)
            return self.ncmd
        reason = 0
        if E.ST_SHAKING <= before <= E.ST_RESULT:
            if t == R.J_DAMAGE:
                self._rec(R.J_ALARM, E.R_DAMAGE, 0)  # cut off with the void: how many unknown
                reason = E.V_DAMAGE
            elif t != R.J_ALARM:
                pass
            elif code == E.R_DAMAGE:
                reason = E.V_DAMAGE
            elif before > E.ST_OPEN:
                pass
            elif code == E.R_TAMPER_COVER or code == E.R_TAMPER_CLASP:
                reason = E.V_TAMPER
            elif code == E.R_SENSOR_FAULT:
                reason = E.V_FAULT
            elif code == E.R_POWER_CUT:
                reason = E.V_POWER
        if reason:
            self._void(reason)
            return self.ncmd
        if before == E.ST_SHAKING or before == E.ST_OPEN and self.resume_void:
            # A shake cut short: the dice may not have been shaken as Art. 2
            # requires, so betting never opens on it.
            self._rec(R.J_ALARM, E.R_POWER_CUT)
            self._void(E.V_POWER)
        elif before == E.ST_OPEN and not lv[S.COVER]:
            self._tamper(E.R_TAMPER_COVER, 0)
        elif before == E.ST_OPEN and not (lv[S.CLASP_LEFT] and lv[S.CLASP_RIGHT]):
            self._tamper(E.R_TAMPER_CLASP, _open_sides(lv))
        elif before == E.ST_CLOSED and not lv[S.COVER]:
            self._rec(R.J_COVER_OFF)
            self._lamps()
            self._show(E.M_ENTER_DICE)
        else:
            if before != E.ST_IDLE:
                self._rec(R.J_RESUME, self.state, before)
            self._lamps()
            self._show(E.M_RESUMED, self.state)
        return self.ncmd

    def set_config(self, now, wall, config_id):
        """Journal J_CONFIG (config_id: the 6 bytes identifying the board and
        table files) when it differs from the last one journaled. Returns the
        number of commands (none; records only when the configuration changed)."""
        self._begin(now, wall)
        c = config_id
        if len(c) >= R.CONFIG_ID_LEN and bytes(c[:R.CONFIG_ID_LEN]) != bytes(self.config_id):
            self._rec(R.J_CONFIG, c[0], c[1], c[2], c[3], c[4], c[5])
        return self.ncmd


def _open_sides(levels):
    """Which clasps are open: 1 left, 2 right, 3 both (R_CLASP_OPEN's detail)."""
    return (0 if levels[S.CLASP_LEFT] else 1) | (0 if levels[S.CLASP_RIGHT] else 2)


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
