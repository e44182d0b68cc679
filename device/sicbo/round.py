# The regulated round (rules.md Arts. 2-4 and 7) as a pure state machine.
#
# Events in: RoundMachine.handle(ev, arg, now, wall) for sensor edges, dealer
# keys, the supervisor key, timer expiry and sensor faults (codes in events.py);
# RoundMachine.reader_dice(rid, d1, d2, d3, now, wall) for the dice reader.
# Both return the number of commands produced; nothing is allocated.
#
# Out, per call, in this order of execution by the shell:
#   1. journal records: RoundMachine.rec_len > 0 -> write RoundMachine.records()
#      (sealed, back to back) to the journal and flush, BEFORE anything else;
#   2. commands: for i in range(n): RoundMachine.cmd(i) -> (code, a, b, c), or
#      read RoundMachine.cmds[4*i .. 4*i+3] directly (no allocation).
# C_LAMPS means "shift out RoundMachine.frame" (a preallocated bytearray laid
# out as SettlementTable rows: winning areas plus the status lamps).
#
# Time: `now` is time.ticks_ms() of the event, read by the shell; only
# ticks_add/ticks_diff are used on it. `wall` is seconds since 2000-01-01 UTC
# when the RTC has been set, else None (never guessed).
#
# State: every change of the round's state is a journal record applied by
# RoundState._apply (roundstate.py): an event writes its records (_rec), each
# applied as it is written, then adds its commands.
#
# At boot: m.feed(segment) for every journal segment in order (the same
# records through the same code), then
# m.resume(now, wall, cover, clasp_l, clasp_r, supervisor, cause) and
# m.set_config(now, wall, config_id); each returns its commands like handle().

import time

from sicbo import events as E
from sicbo.roundbase import ELECTRIC, MANUAL, SOLENOID
from sicbo.roundentry import RoundEntry
from sicbo.roundstate import KEEP_DAMAGE


class RoundMachine(RoundEntry):
    """One table's round. cfg is a TableConfig; the timing arguments are the
    board's shaker and bell settings (see RoundBase.__init__)."""

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
                self._rec(E.J_BELL)
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
                if st == E.ST_SHAKING and self.shaker != MANUAL:
                    self._open()
        elif ev == E.EV_COVER_ON:
            self.cover = 1
            if st == E.ST_RESULT or st == E.ST_PAYING or st == E.ST_HOLD:
                self._rec(E.J_VIOLATION, E.R_COVER_BEFORE_PAYOUT)
                self._lamps()
                self._show(E.R_COVER_BEFORE_PAYOUT)
            elif st == E.ST_IDLE:
                self._ready()
        elif ev == E.EV_COVER_OFF:
            self.cover = 0
            if st == E.ST_SHAKING or st == E.ST_OPEN:
                self._tamper(E.R_TAMPER_COVER, 0)
            elif st == E.ST_CLOSED:
                self._rec(E.J_COVER_OFF)
                self._show(E.M_ENTER_DICE)
        elif ev == E.EV_CLASP_L_OFF or ev == E.EV_CLASP_R_OFF:
            side = 1 if ev == E.EV_CLASP_L_OFF else 2
            if side == 1:
                self.clasp_l = 0
            else:
                self.clasp_r = 0
            if st == E.ST_SHAKING or st == E.ST_OPEN:
                self._tamper(E.R_TAMPER_CLASP, side)
        elif ev == E.EV_CLASP_L_ON or ev == E.EV_CLASP_R_ON:
            if ev == E.EV_CLASP_L_ON:
                self.clasp_l = 1
            else:
                self.clasp_r = 1
            if st == E.ST_IDLE:
                self._ready()
        elif ev == E.EV_VOID:
            self._void_key()
        elif ev == E.EV_PAYOUT:
            if st == E.ST_PAYING:
                self._rec(E.J_PAYOUT)
                self._lamps()
                self._show(E.M_ROUND_DONE)
            elif st == E.ST_HOLD:
                self._not_now(E.R_NEED_SUPERVISOR)
            else:
                self._not_now()
        elif ev == E.EV_SUPERVISOR_ON:
            self.supervisor = 1
            self._rec(E.J_SUPERVISOR, 1)
            if self.alarm or self.faults:
                self._rec(E.J_ALARM_CLEAR)
                self._lamps()
                self._show(E.M_ALARM_CLEARED)
            else:
                self._show(E.M_SUPERVISOR_ON)
        elif ev == E.EV_SUPERVISOR_OFF:
            self.supervisor = 0
            self._rec(E.J_SUPERVISOR, 0)
            if st == E.ST_PAYING or st == E.ST_HOLD:
                self._entry_reset()
            self._show(E.M_SUPERVISOR_OFF)
        elif ev == E.EV_FAULT:
            self._rec(E.J_ALARM, E.R_SENSOR_FAULT, arg & 0xFF)
            if st == E.ST_SHAKING or st == E.ST_OPEN:
                self._stop_shaker()
                self._void(E.V_FAULT)
            else:
                self._lamps()
            self._show(E.R_SENSOR_FAULT, arg)
        else:
            self._not_now()
        return self.ncmd

    def _shake(self):
        st = self.state
        if st == E.ST_IDLE:
            if self.faults:
                self._refuse(E.R_FAULT_ACTIVE, self.faults)
            elif not self.cover:
                self._refuse(E.R_COVER_NOT_ON)
            elif not (self.clasp_l and self.clasp_r):
                self._refuse(E.R_CLASP_OPEN, (0 if self.clasp_l else 1)
                             | (0 if self.clasp_r else 2))
            else:
                self._start()
        elif st == E.ST_SHAKING and self.shaker == MANUAL:
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
        self._rec(E.J_ROUND, self.shaker)
        now = self._now
        if self.shaker == SOLENOID:
            self._cmd(E.C_SOLENOID, self.pulses, self.pulse_on_ms, self.pulse_off_ms)
            ms = self.pulses * (self.pulse_on_ms + self.pulse_off_ms)
            self._timer(now, ms)
        elif self.shaker == ELECTRIC:
            self._cmd(E.C_SHAKER, self.shaker_ms)
            self._timer(now, self.shaker_ms)
        else:
            self.presses = 1
        self._lamps()
        if self.shaker == MANUAL and self.presses >= self.presses_needed:
            self._open()
        else:
            self._show(E.M_SHAKING, self.presses if self.shaker == MANUAL else 0)

    def resume(self, now, wall=None, cover=0, clasp_l=0, clasp_r=0, supervisor=0, cause=0):
        """After feed() of every journal segment: journal J_BOOT (p0 cause, the
        board's reset cause), report the damage the replay found, apply the
        table's resume policy and check the sensors as they are now
        (docs/journal.md, Recovery rules). Returns the number of commands."""
        self._begin(now, wall)
        if self.seq < self.bad_seq <= self.seq + 0xFFFF:
            # The journal ends in a damaged record numbered after the last
            # good one: this boot's records come after it (none reuses its
            # number); a forged number far ahead is not followed.
            self.seq = self.bad_seq
        self.cover = cover
        self.clasp_l = clasp_l
        self.clasp_r = clasp_r
        self.supervisor = supervisor
        self.timer_on = False
        self.presses = 0
        self._entry_reset()
        self._rec(E.J_BOOT, cause)
        before = self.state
        k = self.pending
        if k:
            d = self.damage
            for i in range(0, 6 * min(k, KEEP_DAMAGE), 6):
                self._rec(E.J_DAMAGE, d[i], d[i + 1], d[i + 2], d[i + 3], d[i + 4], d[i + 5])
            self._rec(E.J_ALARM, E.R_DAMAGE, min(k, 255))
            self._show(E.R_DAMAGE, k)
            if E.ST_SHAKING <= before <= E.ST_RESULT:
                # The journal of this round cannot be trusted: void before a
                # result (J_DAMAGE held a round being paid).
                self._void(E.V_DAMAGE)
                return self.ncmd
        if before == E.ST_SHAKING or before == E.ST_OPEN and self.resume_void:
            # A shake cut short: the dice may not have been shaken as Art. 2
            # requires, so betting never opens on it.
            self._rec(E.J_ALARM, E.R_POWER_CUT)
            self._void(E.V_POWER)
        elif before == E.ST_OPEN and not cover:
            self._tamper(E.R_TAMPER_COVER, 0)
        elif before == E.ST_OPEN and not (clasp_l and clasp_r):
            self._tamper(E.R_TAMPER_CLASP, (0 if clasp_l else 1) | (0 if clasp_r else 2))
        elif before == E.ST_CLOSED and not cover:
            self._rec(E.J_COVER_OFF)
            self._lamps()
            self._show(E.M_ENTER_DICE)
        else:
            if before != E.ST_IDLE:
                self._rec(E.J_RESUME, self.state, before)
            self._lamps()
            self._show(E.M_RESUMED, self.state)
        return self.ncmd

    def set_config(self, now, wall, config_id):
        """Journal J_CONFIG (config_id: 6 bytes identifying the board and table
        files) when it differs from the last one journaled. Returns the number
        of commands (none; records only when the configuration changed)."""
        self._begin(now, wall)
        c = config_id
        if len(c) >= 6 and bytes(c[:6]) != bytes(self.config_id):
            self._rec(E.J_CONFIG, c[0], c[1], c[2], c[3], c[4], c[5])
        return self.ncmd
