# Boot: Replay rebuilds from the journal what the round machine must resume
# in, and resume() takes it over and applies the table's resume policy (see
# docs/journal.md, Recovery rules). Needed at boot only: the controller drops
# this module once it runs (app.unload_boot); sicbo.journal.Replay names the
# same class.

from sicbo import events as E
from sicbo.journal import Scanner


def resume(m, rp, now, wall=None, cover=0, clasp_l=0, clasp_r=0, supervisor=0):
    """Take over the state a journal.Replay rebuilt, apply the table's resume
    policy, and check the sensors as they are now. Writes J_BOOT (and what
    the resumption decides) like any event: drain records, then commands."""
    m._begin(now, wall)
    m.seq = rp.seq
    m.round = rp.round
    m.boot = rp.boot + 1
    m.state = rp.state
    m.has_result = rp.has_result
    m.has_reader = rp.has_reader
    for i in range(3):
        m.dice[i] = rp.dice[i]
        m.reader[i] = rp.reader[i]
        m.hold[i] = rp.hold[i]
    m.alarm = rp.alarm
    m.violation = rp.violation
    m.void_lit = rp.void_lit
    m.open_seq = rp.open_seq
    m.cover = cover
    m.clasp_l = clasp_l
    m.clasp_r = clasp_r
    m.supervisor = supervisor
    m.timer_on = False
    m.presses = 0
    m._entry_reset()
    m._rec(E.J_BOOT)
    before = m.state
    if before == E.ST_SHAKING:
        # The shake itself was cut short: the dice may not have been shaken
        # as Art. 2 requires, so betting never opens on it.
        m._rec(E.J_ALARM, E.R_POWER_CUT)
        m.alarm = True
        m._void(E.V_POWER)
    elif before == E.ST_OPEN:
        if m.resume_void:
            m._rec(E.J_ALARM, E.R_POWER_CUT)
            m.alarm = True
            m._void(E.V_POWER)
        elif not cover:
            m._tamper(E.R_TAMPER_COVER, 0)
        elif not (clasp_l and clasp_r):
            m._tamper(E.R_TAMPER_CLASP, (0 if clasp_l else 1) | (0 if clasp_r else 2))
        else:
            m._rec(E.J_RESUME, before, before)
            m._lamps()
            m._show(E.M_RESUMED, before)
    elif before == E.ST_CLOSED and not cover:
        m._rec(E.J_COVER_OFF)
        m.state = E.ST_RESULT
        m._lamps()
        m._show(E.M_ENTER_DICE)
    else:
        if before != E.ST_IDLE:
            m._rec(E.J_RESUME, before, before)
        m._lamps()
        m._show(E.M_RESUMED, before)
    return m.ncmd


class Replay:
    """Walks the records in journal order and derives what the round machine
    must resume in. Feed it segment bytes (feed) or records (apply), then pass
    it to RoundMachine.resume(). Records whose sequence number is not above the
    last one applied are duplicates and ignored, so nothing is applied twice."""

    def __init__(self):
        self.scanner = Scanner()
        self.seq = 0  # last sequence number applied
        self.round = 0  # highest round id seen
        self.boot = 0  # highest boot count seen
        self.state = E.ST_IDLE
        self.dice = bytearray(3)  # effective result of the open round
        self.has_result = False
        self.reader = bytearray(3)
        self.has_reader = False
        self.hold = bytearray(3)  # the dealer's dice of a hold before any result
        self.alarm = False
        self.violation = False
        self.void_lit = False
        self.open_seq = 0  # seq of the J_ROUND of the unfinished round, 0 if none
        self.config_id = bytearray(6)  # of the last J_CONFIG: the files in force
        self.applied = 0
        self.duplicates = 0

    def feed(self, data):
        for rec in self.scanner.scan(data):
            self.apply(rec)

    def apply(self, rec):
        if rec.seq <= self.seq:
            self.duplicates += 1
            return
        self.seq = rec.seq
        self.applied += 1
        if rec.boot > self.boot:
            self.boot = rec.boot
        if rec.round > self.round:
            self.round = rec.round
        t = rec.type
        if t == E.J_ROUND:
            self.round = rec.round
            self.state = E.ST_SHAKING
            self.has_result = False
            self.has_reader = False
            self.violation = False
            self.void_lit = False
            self.alarm = False
            self.open_seq = rec.seq
        elif t == E.J_OPEN:
            self.state = E.ST_OPEN
        elif t == E.J_BELL:
            self.state = E.ST_CLOSED
        elif t == E.J_COVER_OFF:
            self.state = E.ST_RESULT
        elif t == E.J_RESULT or t == E.J_CORRECTION:
            k = 0 if t == E.J_RESULT else 3
            for i in range(3):
                self.dice[i] = rec.p(k + i)
            self.has_result = True
            self.state = E.ST_PAYING
        elif t == E.J_HOLD:
            for i in range(3):
                self.hold[i] = rec.p(i)
                self.reader[i] = rec.p(3 + i)
            self.has_reader = True
            self.state = E.ST_HOLD
        elif t == E.J_READER:
            for i in range(3):
                self.reader[i] = rec.p(i)
            self.has_reader = True
        elif t == E.J_VOID:
            self.state = E.ST_IDLE
            self.has_result = False
            self.void_lit = True
            self.open_seq = 0
        elif t == E.J_PAYOUT:
            self.state = E.ST_IDLE
            self.has_result = False
            self.open_seq = 0
        elif t == E.J_ALARM:
            self.alarm = True
        elif t == E.J_VIOLATION:
            self.alarm = True
            self.violation = True
        elif t == E.J_ALARM_CLEAR:
            self.alarm = False
        elif t == E.J_CONFIG:
            for i in range(6):
                self.config_id[i] = rec.p(i)
