# Replaying the journal rebuilds the machine's own state after every event of
# a long pseudo-random event sequence (events in every wrong state included),
# and the machine's invariants hold throughout. The replay is a second machine
# fed the records as they are written: the same transitions, and every live
# record passes the checks a replay applies (none is counted as damage).
from roundkit import Rig, make_cfg, snapshot
from sicbo import events as E
from sicbo.round import RoundMachine

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
        if not m.cover:
            return E.EV_COVER_ON
        if not m.clasp_l:
            return E.EV_CLASP_L_ON
        if not m.clasp_r:
            return E.EV_CLASP_R_ON
        return E.EV_SHAKE
    if st == E.ST_SHAKING:
        return E.EV_SHAKE if m.shaker == 2 else E.EV_TIMER
    if st == E.ST_OPEN:
        return E.EV_BELL
    if st == E.ST_CLOSED:
        return E.EV_COVER_OFF
    if st == E.ST_HOLD and not m.supervisor:
        return E.EV_SUPERVISOR_ON
    if st == E.ST_PAYING:
        return E.EV_PAYOUT
    return E.EV_CONFIRM if m.entry_n == 3 else E.EV_FACE


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
        solenoid_before = r.m.cover and r.m.clasp_l and r.m.clasp_r
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
            if rec.type == E.J_RESULT:
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
