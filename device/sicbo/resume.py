# Boot: the round machine takes over the state that journal.Replay rebuilt and
# applies the table's resume policy (see docs/journal.md, Recovery rules).

from sicbo import events as E


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
