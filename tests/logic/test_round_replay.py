# Replaying the journal rebuilds the machine's own state after every event of
# a long pseudo-random event sequence (events in every wrong state included),
# and the machine's invariants hold throughout. The replay is a second machine
# fed the records as they are written: the same transitions, and every live
# record passes the checks a replay applies (none is counted as damage).
from roundkit import Rig, forge, make_cfg, sensed, snapshot
from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S
from sicbo.roundmachine import RoundMachine
from sicbo.roundstate import RoundState

_EVENTS = (E.EV_COVER_ON, E.EV_COVER_OFF, E.EV_CLASP_L_ON, E.EV_CLASP_L_OFF,
           E.EV_CLASP_R_ON, E.EV_CLASP_R_OFF, E.EV_SHAKE, E.EV_BELL, E.EV_VOID,
           E.EV_PAYOUT, E.EV_CONFIRM, E.EV_FACE, E.EV_FACE, E.EV_FACE, E.EV_FACE,
           E.EV_SUPERVISOR_ON, E.EV_SUPERVISOR_OFF, E.EV_TIMER, E.EV_TIMER, E.EV_SHAKE,
           E.EV_CONFIRM, E.EV_FAULT)


def _good(m):
    # The event the procedure expects next (the walk takes it most of the time).
    st = m.state
    if st == E.ST_IDLE:
        if m.faults:
            return E.EV_SUPERVISOR_ON
        if not m.levels[S.COVER]:
            return E.EV_COVER_ON
        if not m.levels[S.CLASP_LEFT]:
            return E.EV_CLASP_L_ON
        if not m.levels[S.CLASP_RIGHT]:
            return E.EV_CLASP_R_ON
        return E.EV_SHAKE
    if st == E.ST_SHAKING:
        return E.EV_SHAKE if m.shaker == 2 else E.EV_TIMER
    if st == E.ST_OPEN:
        return E.EV_BELL
    if st == E.ST_CLOSED:
        return E.EV_COVER_OFF
    if st == E.ST_HOLD and not m.levels[S.SUPERVISOR]:
        return E.EV_SUPERVISOR_ON
    if st == E.ST_PAYING:
        return E.EV_PAYOUT
    return E.EV_CONFIRM if m.entry.count == 3 else E.EV_FACE


def _run(cfg, seed, steps):
    r = Rig(cfg)
    r.keep = False
    rp = RoundMachine(cfg, table=r.m.table)
    results = {}
    seen = set()
    last_round = 0
    for _ in range(steps):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        k = (seed >> 8) % (len(_EVENTS) + 2)
        ev = _EVENTS[k] if k < len(_EVENTS) else 0
        if (seed >> 20) % 10 < 7:
            ev = _good(r.m)
        arg = (seed >> 4) % 7 + (1 if ev == E.EV_FACE else 0)
        if ev == E.EV_FACE and (seed >> 24) % 8:
            arg = 1 + arg % 6
        solenoid_before = all(sensed(r.m)[:3])
        if ev == 0:
            r.reader(1 + arg % 6, 1 + (arg * 5) % 6, 1 + (seed >> 12) % 6)
        else:
            r.ev(ev, arg if ev != E.EV_FAULT else 1 + arg % 7,
                 3000 if ev == E.EV_TIMER else 10)
        for c in r.last:
            if c[0] == E.C_SOLENOID or c[0] == E.C_SHAKER:
                assert solenoid_before  # never fires with the cover off or a clasp open
        if r.raw:
            rp.feed(r.raw)
        for rec in r.recs:
            if rec.type == R.J_RESULT:
                results[rec.round] = results.get(rec.round, 0) + 1
        m = r.m
        seen.add(m.state)
        assert m.round >= last_round
        last_round = m.round
        assert snapshot(rp) == snapshot(m)
        assert rp.damaged == 0 and rp.duplicates == 0
        if m.state == E.ST_OPEN or m.state == E.ST_SHAKING or m.state == E.ST_CLOSED:
            assert not m.has_result  # a result is never shown before the bell
    for rid in results:
        assert results[rid] == 1  # at most one result per round (corrections apart)
    assert len(seen) == 7, seen  # every state, hold included
    return r.m.round


def test_replay_matches_machine_on_random_events_solenoid():
    assert _run(make_cfg(), 1, 1500) > 20


def test_replay_matches_machine_on_random_events_manual_players_choose():
    assert _run(make_cfg(shaker="manual", void_policy="players_choose"), 5, 1500) > 20


def test_replay_matches_machine_on_random_events_electric_keep_open():
    assert _run(make_cfg(shaker="electric", resume_policy="keep_open"), 99, 1500) > 20


# ---- each transition against a hand-written model -----------------------------
# Live play and replay share RoundState._apply, so comparing them cannot see a
# wrong transition; these tests state what each record does.


class _Feed:
    def __init__(self, first_seq=1):
        self.rs = RoundState()
        self.seq = first_seq - 1
        self.rid = 0
        self.boot = 1

    def take(self, t, *p, wall=None):
        self.seq += 1
        if t == R.J_ROUND:
            self.rid += 1
        elif t == R.J_BOOT:
            self.boot += 1
        payload = bytes(p) + bytes(8 - len(p))
        code = self.rs.take(forge(t, self.seq, self.rid, payload, self.boot, wall), 0)
        assert code == 0, (t, p, code)
        return self.rs


def test_each_transition_does_what_its_record_says():
    f = _Feed()
    rs = f.take(R.J_BOOT)
    assert rs.state == E.ST_IDLE and rs.boot == 2 and rs.seq == 1 and rs.synced
    rs = f.take(R.J_CONFIG, 1, 2, 3, 4, 5, 6, wall=700000000)
    assert bytes(rs.config_id) == bytes((1, 2, 3, 4, 5, 6)) and rs.config_wall == 700000000
    rs = f.take(R.J_ALARM, E.R_SENSOR_FAULT, E.S_CLASP_R)
    assert rs.alarm and rs.faults == 1 << E.S_CLASP_R and rs.config_wall == 700000000
    rs = f.take(R.J_ALARM_CLEAR, wall=700000100)
    assert not rs.alarm and rs.faults == 0 and rs.config_wall == 700000100
    rs = f.take(R.J_ROUND, 2)
    assert rs.state == E.ST_SHAKING and rs.round == 1 and rs.open_seq == 5
    assert f.take(R.J_OPEN).state == E.ST_OPEN
    assert f.take(R.J_BELL).state == E.ST_CLOSED
    rs = f.take(R.J_READER, 2, 2, 2)
    assert rs.state == E.ST_CLOSED and rs.has_reader and bytes(rs.reader) == b"\x02\x02\x02"
    rs = f.take(R.J_COVER_OFF)
    assert rs.state == E.ST_RESULT
    rs = f.take(R.J_HOLD, 1, 2, 3, 2, 2, 2)
    assert rs.state == E.ST_HOLD and bytes(rs.hold) == bytes((1, 2, 3)) and not rs.has_result
    rs = f.take(R.J_RESULT, 1, 2, 3, 1)
    assert rs.state == E.ST_PAYING and rs.has_result and bytes(rs.dice) == bytes((1, 2, 3))
    rs = f.take(R.J_VIOLATION, E.R_COVER_BEFORE_PAYOUT)
    assert rs.violation and rs.alarm and rs.state == E.ST_PAYING
    rs = f.take(R.J_CORRECTION, 1, 2, 3, 4, 5, 6)
    assert rs.state == E.ST_PAYING and bytes(rs.dice) == bytes((4, 5, 6))
    rs.pending = 2
    rs = f.take(R.J_DAMAGE, E.BAD_DICE, R.J_RESULT, 9)
    assert rs.state == E.ST_HOLD and rs.pending == 0 and rs.has_result
    rs = f.take(R.J_CORRECTION, 4, 5, 6, 4, 5, 6)
    assert rs.state == E.ST_PAYING
    rs = f.take(R.J_PAYOUT)
    assert (rs.state, rs.open_seq, rs.has_result, rs.has_reader, rs.void_lit) == (
        E.ST_IDLE, 0, False, False, False)
    assert rs.alarm and rs.violation  # until the next round or the supervisor
    rs = f.take(R.J_ROUND, 0)
    assert rs.round == 2 and not rs.alarm and not rs.violation and rs.open_seq == rs.seq
    rs = f.take(R.J_VOID, E.V_TAMPER, 1)
    assert rs.state == E.ST_IDLE and rs.void_lit and rs.open_seq == 0
    rs = f.take(R.J_ALARM, E.R_SENSOR_FAULT, E.S_COVER)
    rs = f.take(R.J_BOOT)
    assert rs.faults == 0 and rs.alarm and rs.void_lit and rs.boot == 3  # faults: detected again
    rs = f.take(R.J_CONFIG, 9, 9, 9, 9, 9, 9)
    assert rs.config_wall is None  # new files: no known time yet
    rs = f.take(R.J_ROUND, 0)
    assert not rs.void_lit and rs.state == E.ST_SHAKING


def test_a_round_started_over_an_unfinished_one_forgets_its_result_and_reader():
    f = _Feed()
    for t in (R.J_ROUND, R.J_OPEN, R.J_BELL):
        f.take(t)
    f.take(R.J_READER, 3, 3, 3)
    f.take(R.J_COVER_OFF)
    f.take(R.J_RESULT, 3, 3, 3)
    rs = f.take(R.J_VIOLATION, E.R_COVER_BEFORE_PAYOUT)
    # Its payout was lost: the next round's start is where the replay goes on.
    rs = f.take(R.J_ROUND, 0)
    assert (rs.state, rs.has_result, rs.has_reader, rs.violation, rs.open_seq) == (
        E.ST_SHAKING, False, False, False, rs.seq)


def test_state_checks_start_with_the_tables_first_record():
    # From seq 1 the round is known to be idle: a result there is damage.
    f = _Feed()
    f.take(R.J_BOOT)
    assert f.rs.take(forge(R.J_RESULT, 2, 0, bytes((1, 2, 3, 0, 0, 0, 0, 0))), 0) \
        == E.BAD_STATE
    # A journal whose first records were deleted by rotation starts anywhere.
    rs = RoundState()
    assert rs.take(forge(R.J_RESULT, 40, 7, bytes((1, 2, 3, 0, 0, 0, 0, 0))), 0) == 0
    assert rs.state == E.ST_PAYING and rs.round == 7 and not rs.synced
    assert rs.take(forge(R.J_PAYOUT, 41, 7), 0) == 0
    assert rs.take(forge(R.J_ROUND, 42, 8), 0) == 0 and rs.synced
    assert rs.take(forge(R.J_PAYOUT, 43, 8), 0) == E.BAD_STATE


def test_a_record_that_only_notes_something_keeps_the_dealers_key_entry():
    # _apply says whether a record set the round's state: only then does the
    # dealer key anew (DealerEntry). The cover put back before the payout
    # (J_VIOLATION) or a sensor fault (J_ALARM) in the middle of an entry
    # leaves the round where it was, and the dice keyed so far stand.
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, 1)
    r.ev(E.EV_FACE, 2)
    r.ev(E.EV_COVER_ON)
    assert r.types() == [R.J_VIOLATION] and r.m.state == E.ST_RESULT
    r.ev(E.EV_FACE, 3)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_RESULT] and bytes(r.m.dice) == bytes((1, 2, 3)), r.shown()
    # The supervisor's correction, a sensor fault half-way through it.
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_FACE, 4)
    r.ev(E.EV_FACE, 5)
    r.ev(E.EV_FAULT, E.S_CLASP_L)
    assert r.types() == [R.J_ALARM] and r.m.state == E.ST_PAYING
    r.ev(E.EV_FACE, 6)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_CORRECTION] and bytes(r.m.dice) == bytes((4, 5, 6)), r.shown()
