# Void rounds (Art. 3.3), corrections under the supervisor key, and the
# optional dice reader's cross-check.
from roundkit import Rig, make_cfg
from sicbo import events as E
from sicbo import records as R


def test_void_key_reason_and_confirm_void_the_round():
    r = Rig()
    r.to_result()
    r.ev(E.EV_VOID)
    assert r.shown() == [E.M_VOID_REASON] and r.recs == []
    r.ev(E.EV_FACE, 2)
    assert r.recs == []
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_VOID]
    assert r.recs[0].p(0) == E.V_LEANING and r.recs[0].p(1) == 0
    assert r.m.state == E.ST_IDLE and r.lamp("VOID")
    assert r.shown() == [E.M_VOID_BETS_STAY]


def test_void_shows_players_choose_policy():
    r = Rig(make_cfg(void_policy="players_choose"))
    r.void_round(3)
    assert r.recs[0].p(0) == E.V_OTHER and r.recs[0].p(1) == 1
    assert r.shown() == [E.M_VOID_PLAYERS_CHOOSE]


def test_next_round_starts_at_once_after_void():
    r = Rig()
    r.void_round(1)
    r.ev(E.EV_COVER_ON)
    r.ev(E.EV_CLASP_L_ON)
    r.ev(E.EV_CLASP_R_ON)
    r.ev(E.EV_SHAKE)
    assert r.m.round == 2 and r.m.state == E.ST_SHAKING


def test_void_needs_a_reason_one_to_three():
    r = Rig()
    r.to_result()
    r.ev(E.EV_VOID)
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_VOID_REASON]
    r.ev(E.EV_FACE, 5)
    assert r.recs == [] and r.shown() == [E.R_VOID_REASON]
    r.ev(E.EV_FACE, 1)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_VOID] and r.recs[0].p(0) == E.V_STACKED


def test_void_key_twice_cancels_void():
    r = Rig()
    r.to_result()
    r.ev(E.EV_VOID)
    r.ev(E.EV_VOID)
    assert r.shown() == [E.M_VOID_CANCELLED]
    r.enter(1, 2, 3)
    assert r.types() == [R.J_RESULT]


def test_a_reason_keyed_for_a_cancelled_void_is_not_taken_by_the_next():
    r = Rig()
    r.to_result()
    r.ev(E.EV_VOID)
    r.ev(E.EV_FACE, 2)  # leaning, then the void cancelled
    r.ev(E.EV_VOID)
    r.ev(E.EV_VOID)  # a new void entry: its reason is still to be keyed
    r.shown()
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_VOID_REASON] and r.m.state == E.ST_RESULT
    r.ev(E.EV_FACE, 3)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_VOID] and r.recs[0].p(0) == E.V_OTHER


def test_void_refused_with_cover_on():
    r = Rig()
    r.to_open()
    r.ev(E.EV_BELL)
    r.ev(E.EV_VOID)
    assert r.types() == [R.J_REFUSED] and r.recs[0].p(0) == E.R_VOID_NOT_NOW
    assert r.m.state == E.ST_CLOSED


def test_void_refused_after_result_confirmed():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.ev(E.EV_VOID)
    assert r.types() == [R.J_REFUSED] and r.recs[0].p(0) == E.R_VOID_NOT_NOW
    assert r.m.state == E.ST_PAYING


def test_correction_under_supervisor_key_journals_both_results():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(1, 2, 4)
    assert r.types() == [R.J_CORRECTION]
    assert r.recs[0].dice(0) == (1, 2, 3) and r.recs[0].dice(3) == (1, 2, 4)
    assert list(r.m.dice) == [1, 2, 4] and r.m.state == E.ST_PAYING
    assert r.lamp("SINGLE_4") and not r.lamp("SINGLE_3")
    assert r.shown() == [E.M_CORRECTED]


def test_correction_equal_to_result_refused():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(3, 2, 1)
    assert r.recs == [] and r.shown() == [E.R_SAME_RESULT]


def test_supervisor_key_off_abandons_a_correction():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_FACE, 6)
    r.ev(E.EV_SUPERVISOR_OFF)
    assert r.types() == [R.J_SUPERVISOR] and r.m.entry.count == 0
    r.ev(E.EV_CONFIRM)
    assert r.recs == []


def test_reader_agreeing_with_dealer_settles():
    r = Rig()
    r.to_result()
    r.reader(3, 1, 2)
    assert r.types() == [R.J_READER]
    r.enter(1, 2, 3)
    assert r.types() == [R.J_RESULT] and r.m.state == E.ST_PAYING
    # Any order of the same three dice agrees (each order the sort must fix).
    for reader in ((1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)):
        for dealer in ((2, 3, 1), (3, 2, 1), (1, 3, 2)):
            r = Rig()
            r.to_result()
            r.reader(*reader)
            r.enter(*dealer)
            assert r.types() == [R.J_RESULT], (reader, dealer)


def test_reader_disagreeing_holds_for_supervisor():
    r = Rig()
    r.to_result()
    r.reader(1, 2, 5)
    r.enter(1, 2, 3)
    assert r.types() == [R.J_HOLD]
    assert r.recs[0].dice(0) == (1, 2, 3) and r.recs[0].dice(3) == (1, 2, 5)
    assert r.m.state == E.ST_HOLD and not r.lamp("PAYING")
    r.ev(E.EV_PAYOUT)
    assert r.shown() == [E.R_NEED_SUPERVISOR]
    r.ev(E.EV_FACE, 1)
    assert r.shown() == [E.R_NEED_SUPERVISOR] and r.m.entry.count == 0
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(5, 2, 1)
    assert r.types() == [R.J_RESULT] and r.recs[0].p(3) == 1
    assert r.m.state == E.ST_PAYING and list(r.m.dice) == [5, 2, 1]


def test_supervisor_may_void_a_held_round():
    r = Rig()
    r.to_result()
    r.reader(1, 2, 5)
    r.enter(1, 2, 3)
    r.ev(E.EV_VOID)
    assert r.shown() == [E.R_NEED_SUPERVISOR]
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_VOID)
    r.ev(E.EV_FACE, 3)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_VOID] and r.m.state == E.ST_IDLE


def test_reader_disagreeing_after_result_holds():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.reader(6, 6, 6)
    assert r.types() == [R.J_READER, R.J_HOLD] and r.m.state == E.ST_HOLD
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(6, 6, 6)
    assert r.types() == [R.J_CORRECTION] and r.m.state == E.ST_PAYING


def test_reader_for_another_round_or_state_ignored():
    r = Rig()
    r.to_open()
    r.reader(1, 2, 3)
    assert r.recs == [] and r.m.reader_ignored == 1
    r.ev(E.EV_BELL)
    r.reader(1, 2, 3, rid=7)
    assert r.recs == [] and r.shown() == [E.R_READER_ROUND]


def test_reader_dice_out_of_range_refused():
    r = Rig()
    r.to_result()
    r.reader(1, 9, 3)
    assert r.types() == [R.J_REFUSED] and r.recs[0].p(0) == E.R_DICE_RANGE
    assert not r.m.has_reader


def test_reader_refusal_names_the_die_out_of_range():
    # The die named, journaled and shown, is the first outside 1..6 (a six
    # is in range).
    r = Rig()
    r.to_result()
    cases = (((9, 1, 2), 9), ((1, 0, 2), 0), ((1, 2, 7), 7),
             ((6, 7, 1), 7), ((6, 6, 0), 0), ((6, 1, 9), 9))
    for dice, bad in cases:
        r.reader(*dice)
        assert r.types() == [R.J_REFUSED] and r.recs[0].p(0) == E.R_DICE_RANGE
        assert r.recs[0].p(1) == bad, dice
        assert r.has(E.C_SHOW) == (E.C_SHOW, E.R_DICE_RANGE, bad, 0), dice
    assert not r.m.has_reader and r.m.reader_ignored == len(cases)
    assert r.m.state == E.ST_RESULT


def test_a_cancelled_void_starts_the_dice_entry_again():
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, 4)
    r.ev(E.EV_FACE, 5)
    r.ev(E.EV_VOID)
    r.ev(E.EV_FACE, 2)  # a void reason, not a face
    r.ev(E.EV_VOID)  # cancelled: the entry starts again
    assert r.m.entry.count == 0 and r.shown() == [E.M_VOID_CANCELLED]
    r.enter(4, 5, 6)
    assert r.types() == [R.J_RESULT] and r.recs[0].dice() == (4, 5, 6)


def test_a_key_entry_survives_what_is_noted_but_not_a_new_state():
    # The dealer's key entry (RoundMachine.entry) waits through records that
    # only note something (the reader's dice, an alarm, the supervisor's key),
    # and starts again with every change of the round's state.
    r = Rig()
    r.to_result()
    r.ev(E.EV_FACE, 4)
    r.ev(E.EV_FACE, 5)
    r.reader(4, 5, 6)  # J_READER: noted, the state stays result entry
    assert r.types() == [R.J_READER] and r.m.entry.count == 2
    r.ev(E.EV_SUPERVISOR_ON)  # J_SUPERVISOR, in result entry: noted
    assert r.types() == [R.J_SUPERVISOR] and r.m.entry.count == 2
    r.ev(E.EV_FACE, 6)
    r.ev(E.EV_CONFIRM)  # the dealer's three faces agree with the reader: the result
    assert r.types() == [R.J_RESULT] and r.recs[0].dice() == (4, 5, 6)
    assert r.m.state == E.ST_PAYING and r.m.entry.count == 0  # a new state: a new entry
    r.ev(E.EV_FACE, 1)  # the supervisor starts a correction
    assert r.m.entry.count == 1
    r.ev(E.EV_SUPERVISOR_OFF)  # the key off ends it
    assert r.types() == [R.J_SUPERVISOR] and r.m.entry.count == 0
