# The round machine's interlocks, as a power cut leaves them and as the dealer
# meets them: the sensor levels resume() is given are the ones it acts on,
# refusals and tamper records name the side that is open, a held round keeps
# the reader's dice across a power cut, and every status lamp lights on any
# channel, the first one included.
from roundkit import AREAS, Rig, booted, levels, make_cfg, replay_of, sensed
from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S
from sicbo.settle import channel_on


def test_resume_takes_every_level_it_is_given():
    r = Rig()
    r.round(1, 2, 3)
    b = booted(r)
    assert sensed(b.m) == (1, 1, 1, 0)
    b.ev(E.EV_SHAKE)  # no event needed: the dome is ready as it is
    assert b.types() == [R.J_ROUND] and b.m.state == E.ST_SHAKING
    b = booted(r, supervisor=1)
    assert b.m.levels[S.SUPERVISOR] == 1
    for cover, left, right, msg, detail in ((0, 1, 1, E.R_COVER_NOT_ON, 0),
                                            (1, 0, 1, E.R_CLASP_OPEN, 1),
                                            (1, 1, 0, E.R_CLASP_OPEN, 2),
                                            (1, 0, 0, E.R_CLASP_OPEN, 3)):
        b = booted(r, cover, left, right)
        assert sensed(b.m)[:3] == (cover, left, right)
        b.ev(E.EV_SHAKE)
        assert b.types() == [R.J_REFUSED], (cover, left, right)
        assert b.recs[0].p(0) == msg and b.recs[0].p(1) == detail, (cover, left, right)
        assert b.m.state == E.ST_IDLE


def test_refusal_names_the_open_clasp():
    for left, right, detail in ((0, 1, 1), (1, 0, 2), (0, 0, 3)):
        r = Rig()
        r.ev(E.EV_COVER_ON)
        if left:
            r.ev(E.EV_CLASP_L_ON)
        if right:
            r.ev(E.EV_CLASP_R_ON)
        r.ev(E.EV_SHAKE)
        assert r.types() == [R.J_REFUSED]
        assert r.recs[0].p(0) == E.R_CLASP_OPEN and r.recs[0].p(1) == detail, detail
        assert (E.C_SHOW, E.R_CLASP_OPEN, detail, 0) in r.last


def test_tamper_names_the_clasp_that_opened():
    for ev, side in ((E.EV_CLASP_L_OFF, 1), (E.EV_CLASP_R_OFF, 2)):
        for open_ in (False, True):
            r = Rig()
            r.arm()
            r.ev(E.EV_SHAKE)
            if open_:
                r.ev(E.EV_TIMER, 0, 60000)
                assert r.m.state == E.ST_OPEN
            r.ev(ev)
            assert r.types() == [R.J_ALARM, R.J_VOID], (ev, open_)
            assert r.recs[0].p(0) == E.R_TAMPER_CLASP and r.recs[0].p(1) == side
            assert r.recs[1].p(0) == E.V_TAMPER
            assert (E.C_SHOW, E.R_TAMPER_CLASP, side, 0) in r.last
            if not open_:
                assert r.has(E.C_SOLENOID_STOP)
            assert not r.m.timer_on


def test_resume_of_an_open_round_with_one_clasp_open_is_tamper():
    cfg = make_cfg(resume_policy="keep_open")
    for left, right, detail in ((1, 0, 2), (0, 1, 1)):
        r = Rig(cfg)
        r.to_open()
        b = booted(r, 1, left, right)
        assert b.types() == [R.J_BOOT, R.J_ALARM, R.J_VOID], (left, right)
        assert b.recs[1].p(0) == E.R_TAMPER_CLASP and b.recs[1].p(1) == detail
        assert b.m.state == E.ST_IDLE
    r = Rig(cfg)
    r.to_open()
    b = booted(r, 0, 1, 1)
    assert b.types() == [R.J_BOOT, R.J_ALARM, R.J_VOID]
    assert b.recs[1].p(0) == E.R_TAMPER_COVER and b.recs[1].p(1) == 0


def _held():
    r = Rig(make_cfg(void_policy="players_choose"))
    r.to_result()
    r.reader(1, 2, 5)
    r.enter(1, 2, 3)
    assert r.m.state == E.ST_HOLD
    return r


def test_a_power_cut_in_hold_keeps_both_results():
    r = _held()
    assert bytes(r.m.reader) == b"\x01\x02\x05" and bytes(r.m.hold) == b"\x01\x02\x03"
    for m in (replay_of(bytes(r.journal), r.cfg, r.m.table), booted(r).m):
        assert m.state == E.ST_HOLD and m.has_reader and not m.has_result
        assert bytes(m.reader) == b"\x01\x02\x05"
        assert bytes(m.hold) == b"\x01\x02\x03"
    # The reader has spoken for this round: a second reading is not taken.
    b = booted(r)
    b.ev(E.EV_SUPERVISOR_ON)
    b.enter(1, 2, 5)
    assert b.types() == [R.J_RESULT] and b.m.state == E.ST_PAYING
    assert bytes(b.m.dice) == b"\x01\x02\x05"


def test_a_hold_after_the_result_survives_a_power_cut():
    r = Rig()
    r.to_result()
    r.enter(2, 2, 6)
    r.reader(2, 3, 6)
    assert r.types() == [R.J_READER, R.J_HOLD] and r.m.state == E.ST_HOLD
    b = booted(r)
    m = b.m
    assert m.state == E.ST_HOLD and m.has_result and m.has_reader
    assert bytes(m.dice) == b"\x02\x02\x06" and bytes(m.reader) == b"\x02\x03\x06"
    assert bytes(m.hold) == b"\x02\x02\x06"
    assert b.lamp("TOTAL_10")  # the lamps of the result stand while held
    b.ev(E.EV_PAYOUT)
    assert b.types() == [] and b.m.state == E.ST_HOLD


def _cfg_with_first(name):
    cfg = make_cfg()
    status = ["PLACE_BETS", "ALARM", "VOID", "PAYING"]
    status.remove(name)
    cfg.lamp_order = tuple([name] + status + AREAS)
    return cfg


def test_every_status_lamp_lights_on_channel_0():
    r = Rig(_cfg_with_first("VOID"))
    assert r.m.table.status_channel["VOID"] == 0
    r.void_round(1)
    assert channel_on(r.m.frame, 0)
    r = Rig(_cfg_with_first("ALARM"))
    r.to_open()
    r.ev(E.EV_COVER_OFF)
    assert channel_on(r.m.frame, 0)
    r = Rig(_cfg_with_first("PAYING"))
    r.to_result()
    r.enter(1, 2, 3)
    assert channel_on(r.m.frame, 0)
    r = Rig(_cfg_with_first("PLACE_BETS"))
    r.to_open()
    assert channel_on(r.m.frame, 0)
    r.ev(E.EV_BELL)
    assert not channel_on(r.m.frame, 0)


def test_a_new_machine_has_no_commands_and_no_records():
    from sicbo.roundmachine import RoundMachine

    m = RoundMachine(make_cfg())
    assert m.ncmd == 0 and m.commands() == [] and m.rec_len == 0
    assert sensed(m) == (0, 0, 0, 0)


def test_resume_defaults_to_every_sensor_open():
    from sicbo.roundmachine import RoundMachine

    m = RoundMachine(make_cfg())
    m.levels[:] = b"\x01\x01\x01\x01\x01"
    m.resume(5)
    assert sensed(m) == (0, 0, 0, 0)
    from sicbo import journal

    rec = journal.records(bytes(m.records()))[0]
    assert rec.type == R.J_BOOT and rec.p(0) == 0 and rec.wall is None


def test_resume_drops_the_timer_the_presses_and_the_entry():
    r = Rig(make_cfg(shaker="manual"))
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.m.presses == 1
    r.m.resume(r.now + 10, None, levels(1, 1, 1, 0))
    assert r.m.presses == 0
    r = Rig()
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.m.timer_on
    r.m.resume(r.now + 10, None, levels(1, 1, 1, 0))
    assert not r.m.timer_on
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, 2)
    r.ev(E.EV_VOID)
    assert r.m.entry.count == 1 and r.m.entry.voiding
    r.m.resume(r.now + 10, None, levels(0, 0, 0, 0))
    assert r.m.entry.count == 0 and not r.m.entry.voiding


def test_the_damage_record_names_the_damaged_record():
    from roundkit import forge
    from sicbo import journal

    seq = 0x04030201
    data = forge(R.J_BOOT, seq, 0) + forge(R.J_RESULT, seq + 1, 5, bytes((1, 2, 3, 0, 0, 0, 0, 0)))
    m = replay_of(data)
    assert m.damaged == 1
    m.resume(10, None, levels(1, 1, 1, 0))
    recs = journal.records(bytes(m.records()))
    dmg = [x for x in recs if x.type == R.J_DAMAGE]
    assert len(dmg) == 1
    assert [dmg[0].p(i) for i in range(6)] == [E.BAD_ROUND, R.J_RESULT, 2, 2, 3, 4]


def test_damage_in_a_shake_voids_as_damage():
    from roundkit import forge

    r = Rig()
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.m.state == E.ST_SHAKING
    data = bytes(r.journal) + forge(R.J_RESULT, r.m.seq + 1, 9, bytes((1, 2, 3, 0, 0, 0, 0, 0)))
    m = replay_of(data)
    assert m.damaged == 1 and m.state == E.ST_SHAKING
    m.resume(r.now + 10, None, levels(1, 1, 1, 0))
    from sicbo import journal

    recs = journal.records(bytes(m.records()))
    voids = [x for x in recs if x.type == R.J_VOID]
    assert len(voids) == 1 and voids[0].p(0) == E.V_DAMAGE, [x.type for x in recs]
