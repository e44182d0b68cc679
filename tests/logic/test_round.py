# The round's transitions (rules.md Arts. 2-4), one named test each. The
# interlocks are in test_round_interlocks.py, void/correction/reader in
# test_round_entry.py, the zero-allocation check in test_round_alloc.py.
import time

from roundkit import Rig, make_cfg
from sicbo import events as E
from sicbo import records as R


def test_idle_waits_for_cover_and_both_clasps():
    r = Rig()
    r.ev(E.EV_COVER_ON)
    assert r.shown() == [E.M_WAIT_COVER]
    r.ev(E.EV_CLASP_L_ON)
    assert r.shown() == [E.M_WAIT_COVER]
    r.ev(E.EV_CLASP_R_ON)
    assert r.shown() == [E.M_READY]
    assert r.m.state == E.ST_IDLE and r.journal == b""


def test_shake_solenoid_pulses_configured_train():
    r = Rig(pulses=4, pulse_on_ms=100, pulse_off_ms=200)
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.types() == [R.J_ROUND]
    assert r.recs[0].round == 1 and r.recs[0].p(0) == 0
    assert r.has(E.C_SOLENOID) == (E.C_SOLENOID, 4, 100, 200)
    assert r.m.timer_on and r.m.deadline == r.now + 1200  # the shake's end
    assert r.m.state == E.ST_SHAKING
    assert not r.lamp("PLACE_BETS")


def test_shake_default_is_three_pulses():
    r = Rig()
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.has(E.C_SOLENOID)[1] == 3


def test_timer_ends_shake_and_opens_betting():
    r = Rig()
    r.arm()
    r.ev(E.EV_SHAKE)
    r.ev(E.EV_TIMER, 0, 100)  # too early: ignored
    assert r.m.state == E.ST_SHAKING and r.last == []
    r.ev(E.EV_TIMER, 0, 2000)
    assert r.m.state == E.ST_OPEN and not r.m.timer_on
    assert r.types() == [R.J_OPEN] and r.recs[0].payload == bytes(8)
    assert r.lamp("PLACE_BETS") and r.has(E.C_LAMPS)
    assert r.shown() == [E.M_PLACE_BETS]


def test_timer_deadline_survives_ticks_wrap():
    period = time.ticks_add(0, -1) + 1  # 2**30 on the ESP32 and the CPython shim
    r = Rig()
    r.arm()
    r.now = period - 50  # ticks about to wrap
    r.ev(E.EV_SHAKE, 0, 0)
    r.now = time.ticks_add(r.now, 500)
    r.ev(E.EV_TIMER, 0, 0)
    assert r.m.state == E.ST_SHAKING and r.now < 1000
    r.now = time.ticks_add(r.now, 800)
    r.ev(E.EV_TIMER, 0, 0)
    assert r.m.state == E.ST_OPEN


def test_electric_shaker_runs_configured_time():
    r = Rig(make_cfg(shaker="electric"), shaker_ms=2500)
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.has(E.C_SHAKER) == (E.C_SHAKER, 2500, 0, 0)
    assert r.has(E.C_SOLENOID) is None
    r.ev(E.EV_TIMER, 0, 2500)
    assert r.m.state == E.ST_OPEN


def test_manual_shaker_counts_three_handle_presses():
    r = Rig(make_cfg(shaker="manual"))
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.m.state == E.ST_SHAKING and r.types() == [R.J_ROUND]
    assert r.has(E.C_SOLENOID) is None and not r.m.timer_on
    r.ev(E.EV_SHAKE)
    assert r.m.state == E.ST_SHAKING and r.recs == []
    r.ev(E.EV_SHAKE)
    assert r.m.state == E.ST_OPEN and r.types() == [R.J_OPEN]
    assert r.lamp("PLACE_BETS")


def test_bell_rings_and_closes_betting():
    r = Rig(bell_ms=1500)
    r.to_open()
    r.ev(E.EV_BELL)
    assert r.types() == [R.J_BELL]
    assert r.has(E.C_BELL) == (E.C_BELL, 1500, 0, 0) and r.shown() == [E.M_BETS_CLOSED]
    assert r.m.state == E.ST_CLOSED
    assert not r.lamp("PLACE_BETS")


def test_bell_key_outside_betting_does_nothing():
    r = Rig()
    r.arm()
    r.ev(E.EV_BELL)
    assert r.recs == [] and r.has(E.C_BELL) is None
    assert r.shown() == [E.R_KEY_NOT_NOW]


def test_cover_opened_after_bell_starts_result_entry():
    r = Rig()
    r.to_open()
    r.ev(E.EV_BELL)
    r.ev(E.EV_CLASP_L_OFF)
    r.ev(E.EV_CLASP_R_OFF)
    assert r.m.state == E.ST_CLOSED and r.recs == []
    r.ev(E.EV_COVER_OFF)
    assert r.m.state == E.ST_RESULT and r.types() == [R.J_COVER_OFF]
    assert r.shown() == [E.M_ENTER_DICE]


def test_three_faces_and_confirm_settle_and_light_winning_areas():
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, 1)
    r.ev(E.EV_FACE, 2)
    r.ev(E.EV_FACE, 6)
    assert r.m.entry.count == 3 and r.recs == []
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_RESULT]
    assert r.recs[0].dice() == (1, 2, 6)
    assert r.m.state == E.ST_PAYING
    assert r.lamp("PAYING") and r.lamp("ODD") and r.lamp("TOTAL_9")
    assert r.lamp("SMALL") and r.lamp("SINGLE_6") and not r.lamp("BIG")
    assert not r.lamp("TOTAL_10") and not r.lamp("PLACE_BETS")


def test_lamp_frame_is_the_settlement_row_plus_status():
    r = Rig()
    r.to_result()
    r.enter(3, 3, 3)
    row = r.m.table.settle(3, 3, 3)
    paying = r.m.table.status_channel["PAYING"]
    for i in range(len(row)):
        want = row[i]
        if len(row) - 1 - (paying >> 3) == i:
            want |= 1 << (paying & 7)
        assert r.m.frame[i] == want
    assert not r.lamp("SMALL") and not r.lamp("BIG")  # Art. 7
    assert r.lamp("ANY_TRIPLE")


def test_fourth_face_key_starts_entry_again():
    r = Rig()
    r.to_result()
    for f in (1, 1, 1, 4, 5):
        r.ev(E.EV_FACE, f)
    r.ev(E.EV_FACE, 6)
    r.ev(E.EV_CONFIRM)
    assert r.recs[0].dice() == (4, 5, 6)


def test_confirm_with_fewer_than_three_faces_is_refused():
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, 2)
    r.ev(E.EV_CONFIRM)
    assert r.m.state == E.ST_RESULT and r.shown() == [E.R_INCOMPLETE]


def test_confirm_outside_result_entry_is_not_now_or_waits_for_the_supervisor():
    r = Rig()
    r.to_open()
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_KEY_NOT_NOW] and r.m.ignored == 1
    r.ev(E.EV_BELL)
    r.ev(E.EV_COVER_OFF)
    r.reader(1, 1, 1)
    r.enter(2, 2, 2)  # disagrees: hold
    assert r.m.state == E.ST_HOLD
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_NEED_SUPERVISOR] and r.m.ignored == 2


def test_payout_key_ends_round_and_clears_lamps():
    r = Rig()
    r.to_result()
    r.enter(2, 2, 5)
    r.ev(E.EV_PAYOUT)
    assert r.types() == [R.J_PAYOUT]
    assert r.m.state == E.ST_IDLE
    assert bytes(r.m.frame) == bytes(len(r.m.frame))
    assert r.shown() == [E.M_ROUND_DONE]


def test_payout_key_outside_paying_does_nothing():
    r = Rig()
    r.to_result()
    r.ev(E.EV_PAYOUT)
    assert r.recs == [] and r.m.state == E.ST_RESULT
    assert r.shown() == [E.R_KEY_NOT_NOW] and r.m.ignored == 1
    r.ev(E.EV_SHAKE)  # in result entry: the payout is still to come
    assert r.types() == [R.J_REFUSED] and r.recs[0].p(0) == E.R_PAYOUT_PENDING


def test_next_round_gets_the_next_round_id():
    r = Rig()
    r.round(1, 2, 3)
    r.round(4, 5, 6)
    rounds = [x.round for x in __import__("sicbo.journal").journal.records(r.journal)
              if x.type == R.J_ROUND]
    assert rounds == [1, 2]


def test_records_carry_seq_boot_ticks_and_wall_only_when_set():
    r = Rig(wall=820000000)
    r.arm()
    r.ev(E.EV_SHAKE)
    rec = r.recs[0]
    assert rec.seq == 1 and rec.wall == 820000000 and rec.ticks == r.now
    r.wall = None
    r.ev(E.EV_TIMER, 0, 5000)
    assert r.recs[0].seq == 2 and r.recs[0].wall is None and r.recs[0].ticks == r.now


def test_shake_key_while_shaking_or_betting_is_not_now():
    for cfg in (make_cfg(), make_cfg(shaker="electric")):
        r = Rig(cfg)
        r.arm()
        r.ev(E.EV_SHAKE)
        r.ev(E.EV_SHAKE)
        assert r.recs == [] and r.shown() == [E.R_KEY_NOT_NOW] and r.m.ignored == 1
        r.ev(E.EV_TIMER, 0, 60000)
        for st in (E.ST_OPEN, E.ST_CLOSED):
            r.ev(E.EV_SHAKE)
            assert r.recs == [] and r.shown() == [E.R_KEY_NOT_NOW] and r.m.state == st
            r.ev(E.EV_BELL)


def test_each_status_lamp_works_on_channel_zero():
    from roundkit import Cfg

    for name in ("PLACE_BETS", "ALARM", "VOID", "PAYING"):
        cfg = Cfg("solenoid", "bets_stay", "void")
        rest = [x for x in cfg.lamp_order if x != name]
        cfg.lamp_order = tuple([name] + rest)
        r = Rig(cfg)
        r.to_open()
        if name == "PAYING":
            r.ev(E.EV_BELL)
            r.ev(E.EV_COVER_OFF)
            r.enter(1, 2, 3)
        elif name != "PLACE_BETS":
            r.ev(E.EV_COVER_OFF)  # tamper: alarm and void
        assert r.m.table.status_channel[name] == 0 and r.lamp(name), name
        assert r.m.frame[-1] & 1, name


def test_a_table_without_status_lamps_lights_none_of_them():
    from roundkit import AREAS, Cfg

    cfg = Cfg("solenoid", "bets_stay", "void")
    cfg.lamp_order = tuple(AREAS)  # areas only: SMALL on channel 0
    r = Rig(cfg)
    r.to_open()
    r.ev(E.EV_COVER_OFF)  # tamper: alarm and void
    assert r.m.alarm and r.m.void_lit and bytes(r.m.frame) == bytes(len(r.m.frame))
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_COVER_ON)
    r.ev(E.EV_SHAKE)
    r.ev(E.EV_TIMER, 0, 60000)
    assert r.m.state == E.ST_OPEN and bytes(r.m.frame) == bytes(len(r.m.frame))
