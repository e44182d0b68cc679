# The round's interlocks: each refused or raised as an alarm, journaled, with
# a reason code (and its text in sicbo.texts) shown to the dealer.
from roundkit import Rig, make_cfg
from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S
from sicbo import texts


def _refused(r, code):
    assert r.types() == [R.J_REFUSED], r.recs
    assert r.recs[0].p(0) == code
    assert code in r.shown()
    assert texts.text(code).startswith("refused")


def test_no_shaking_with_cover_off():
    r = Rig()
    r.ev(E.EV_CLASP_L_ON)
    r.ev(E.EV_CLASP_R_ON)
    r.ev(E.EV_SHAKE)
    _refused(r, E.R_COVER_NOT_ON)
    assert r.m.state == E.ST_IDLE and r.has(E.C_SOLENOID) is None


def test_no_shaking_with_a_clasp_open():
    r = Rig()
    r.ev(E.EV_COVER_ON)
    r.ev(E.EV_CLASP_R_ON)
    r.ev(E.EV_SHAKE)
    _refused(r, E.R_CLASP_OPEN)
    assert r.recs[0].p(1) == 1  # the left one
    assert r.has(E.C_SOLENOID) is None and r.m.round == 0
    r.ev(E.EV_CLASP_L_ON)
    r.ev(E.EV_CLASP_R_OFF)
    assert (r.m.levels[S.CLASP_LEFT], r.m.levels[S.CLASP_RIGHT]) == (1, 0)
    r.ev(E.EV_SHAKE)
    _refused(r, E.R_CLASP_OPEN)
    assert r.recs[0].p(1) == 2  # the right one
    r.ev(E.EV_CLASP_L_OFF)
    assert (r.m.levels[S.CLASP_LEFT], r.m.levels[S.CLASP_RIGHT]) == (0, 0)
    r.ev(E.EV_SHAKE)
    assert r.recs[0].p(1) == 3 and r.m.round == 0


def test_no_manual_shake_counted_with_cover_off():
    r = Rig(make_cfg(shaker="manual"))
    r.ev(E.EV_SHAKE)
    _refused(r, E.R_COVER_NOT_ON)
    assert r.m.state == E.ST_IDLE


def _tamper(r, ev, code, shaking):
    r.arm()
    r.ev(E.EV_SHAKE)
    if not shaking:
        r.ev(E.EV_TIMER, 0, 5000)
    r.ev(ev)
    assert r.types() == [R.J_ALARM, R.J_VOID]
    assert r.recs[0].p(0) == code and r.recs[1].p(0) == E.V_TAMPER
    assert r.m.state == E.ST_IDLE
    assert r.lamp("ALARM") and r.lamp("VOID") and not r.lamp("PLACE_BETS")
    assert code in r.shown()


def test_cover_opened_while_shaking_is_tamper_and_voids():
    r = Rig()
    _tamper(r, E.EV_COVER_OFF, E.R_TAMPER_COVER, True)
    assert r.has(E.C_SOLENOID_STOP) and not r.m.timer_on


def test_cover_opened_before_bell_is_tamper_and_voids():
    _tamper(Rig(), E.EV_COVER_OFF, E.R_TAMPER_COVER, False)


def test_left_clasp_opened_before_bell_is_tamper_and_voids():
    r = Rig()
    _tamper(r, E.EV_CLASP_L_OFF, E.R_TAMPER_CLASP, False)
    assert r.recs[0].p(1) == 1


def test_right_clasp_opened_while_shaking_is_tamper_and_voids():
    r = Rig(make_cfg(shaker="electric"))
    _tamper(r, E.EV_CLASP_R_OFF, E.R_TAMPER_CLASP, True)
    assert r.recs[0].p(1) == 2 and r.has(E.C_SHAKER_STOP)


def test_clasps_opened_after_bell_are_no_tamper():
    r = Rig()
    r.to_open()
    r.ev(E.EV_BELL)
    r.ev(E.EV_CLASP_L_OFF)
    assert r.recs == [] and r.m.state == E.ST_CLOSED


def test_next_round_after_tamper_gets_new_id_and_clears_lamps():
    r = Rig()
    _tamper(r, E.EV_COVER_OFF, E.R_TAMPER_COVER, False)
    r.ev(E.EV_COVER_ON)
    r.ev(E.EV_SHAKE)
    assert r.m.round == 2 and not r.lamp("ALARM") and not r.lamp("VOID")


def test_dice_refused_before_result_entry():
    for step in ("idle", "shaking", "open", "closed"):
        r = Rig()
        if step != "idle":
            r.arm()
            r.ev(E.EV_SHAKE)
        if step in ("open", "closed"):
            r.ev(E.EV_TIMER, 0, 5000)
        if step == "closed":
            r.ev(E.EV_BELL)
        r.ev(E.EV_FACE, 3)
        _refused(r, E.R_DICE_NOT_NOW)
        assert r.m.entry.count == 0


def test_dice_outside_one_to_six_refused():
    r = Rig()
    r.to_result()
    for bad in (0, 7, -1, 200):
        r.ev(E.EV_FACE, bad)
        _refused(r, E.R_DICE_RANGE)
    assert r.m.entry.count == 0 and r.m.state == E.ST_RESULT


def test_covering_dome_before_payout_is_a_violation():
    r = Rig()
    r.to_result()
    r.enter(1, 1, 2)
    r.ev(E.EV_COVER_ON)
    assert r.types() == [R.J_VIOLATION]
    assert r.recs[0].p(0) == E.R_COVER_BEFORE_PAYOUT
    assert texts.text(E.R_COVER_BEFORE_PAYOUT).startswith("violation")
    assert r.lamp("ALARM") and r.lamp("PAYING") and r.m.state == E.ST_PAYING


def test_covering_dome_before_result_is_a_violation_too():
    r = Rig()
    r.to_result()
    r.ev(E.EV_COVER_ON)
    assert r.types() == [R.J_VIOLATION] and r.m.state == E.ST_RESULT


def test_next_round_cannot_start_until_payout_confirmed():
    r = Rig()
    r.to_result()
    r.enter(1, 1, 2)
    r.ev(E.EV_COVER_ON)
    r.ev(E.EV_CLASP_L_ON)
    r.ev(E.EV_CLASP_R_ON)
    r.ev(E.EV_SHAKE)
    _refused(r, E.R_PAYOUT_PENDING)
    assert r.m.round == 1 and r.has(E.C_SOLENOID) is None
    r.ev(E.EV_PAYOUT)
    r.ev(E.EV_SHAKE)
    assert r.m.round == 2 and r.has(E.C_SOLENOID)


def test_second_result_without_supervisor_refused():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.ev(E.EV_FACE, 4)
    _refused(r, E.R_SECOND_RESULT)
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and list(r.m.dice) == [1, 2, 3]


def test_sensor_fault_alarms_and_blocks_shaking_until_acknowledged():
    r = Rig()
    r.arm()
    r.ev(E.EV_FAULT, E.S_COVER)
    assert r.types() == [R.J_ALARM] and r.recs[0].p(0) == E.R_SENSOR_FAULT
    assert (E.C_SHOW, E.R_SENSOR_FAULT, E.S_COVER, 0) in r.last
    assert r.m.faults == 1 << E.S_COVER
    assert r.recs[0].p(1) == E.S_COVER and r.lamp("ALARM")
    r.ev(E.EV_SHAKE)
    _refused(r, E.R_FAULT_ACTIVE)
    r.ev(E.EV_SUPERVISOR_ON)
    assert r.types() == [R.J_SUPERVISOR, R.J_ALARM_CLEAR] and not r.lamp("ALARM")
    assert r.recs[0].p(0) == 1 and r.m.faults == 0
    r.ev(E.EV_SUPERVISOR_OFF)
    assert r.types() == [R.J_SUPERVISOR] and r.recs[0].p(0) == 0
    assert r.shown() == [E.M_SUPERVISOR_OFF]
    r.ev(E.EV_SHAKE)
    assert r.m.state == E.ST_SHAKING


def test_sensor_fault_between_shake_and_bell_voids_the_round():
    r = Rig()
    r.to_open()
    r.ev(E.EV_FAULT, E.S_CLASP_L)
    assert r.types() == [R.J_ALARM, R.J_VOID]
    assert r.recs[1].p(0) == E.V_FAULT and r.m.state == E.ST_IDLE


def test_every_reason_code_has_a_text():
    for name in dir(E):
        if name[:2] in ("M_", "R_"):
            assert texts.text(getattr(E, name)) != "?", name


def test_supervisor_key_acknowledges_an_alarm_without_a_fault():
    r = Rig()
    r.to_open()
    r.ev(E.EV_COVER_OFF)  # tamper: an alarm, no sensor fault
    assert r.m.alarm and r.m.faults == 0 and r.lamp("ALARM")
    r.ev(E.EV_SUPERVISOR_ON)
    assert r.types() == [R.J_SUPERVISOR, R.J_ALARM_CLEAR] and not r.lamp("ALARM")
    assert r.shown() == [E.M_ALARM_CLEARED]
    r.ev(E.EV_SUPERVISOR_OFF)
    r.ev(E.EV_SUPERVISOR_ON)
    assert r.types() == [R.J_SUPERVISOR] and r.shown() == [E.M_SUPERVISOR_ON]


def test_a_face_that_is_not_a_number_is_refused_as_255():
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, "x")
    _refused(r, E.R_DICE_RANGE)
    assert r.recs[0].p(1) == 255 and r.m.entry.count == 0
    r.ev(E.EV_FACE, 200)
    assert r.recs[0].p(1) == 200
