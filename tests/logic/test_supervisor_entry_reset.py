# The supervisor's key entry ends with the supervisor's key: a correction or
# a decision begun under the key in hold (or paying) is forgotten when the key
# turns off, so keys pressed after it is turned on again start a new entry.
# The dealer's own result entry is not the supervisor's: it waits through the
# key turning off.
from roundkit import Rig
from sicbo import events as E
from sicbo import records as R


def _held_before_the_result():
    # The reader disagrees with the dealer: held, no result yet.
    r = Rig()
    r.to_result()
    r.reader(1, 2, 5)
    r.enter(1, 2, 3)
    assert r.m.state == E.ST_HOLD and not r.m.has_result
    return r


def _held_after_the_result():
    # The reader disagrees with the result being paid: held, the result kept.
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.reader(6, 6, 6)
    assert r.m.state == E.ST_HOLD and r.m.has_result
    return r


def _key_off_mid_entry(r):
    # Under the key, two faces keyed; then the key off and on again.
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_FACE, 6)
    r.ev(E.EV_FACE, 6)
    assert r.m.entry.count == 2
    r.ev(E.EV_SUPERVISOR_OFF)
    assert r.types() == [R.J_SUPERVISOR] and r.shown() == [E.M_SUPERVISOR_OFF]
    assert r.m.entry.count == 0
    r.ev(E.EV_SUPERVISOR_ON)


def test_a_decision_begun_in_hold_is_forgotten_when_the_key_turns_off():
    r = _held_before_the_result()
    _key_off_mid_entry(r)
    r.ev(E.EV_FACE, 4)  # the first face of a new entry, not the third of the old
    assert r.shown() == [E.M_DICE_SO_FAR] and r.m.entry.count == 1
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_INCOMPLETE]
    assert r.m.state == E.ST_HOLD and not r.m.has_result
    # Two more faces complete the new entry: it decides the round.
    r.ev(E.EV_FACE, 5)
    r.ev(E.EV_FACE, 1)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_RESULT] and r.recs[0].dice() == (4, 5, 1)
    assert r.recs[0].p(3) == R.SOURCE_SUPERVISOR
    assert r.m.state == E.ST_PAYING and list(r.m.dice) == [4, 5, 1]


def test_a_correction_begun_in_hold_is_forgotten_when_the_key_turns_off():
    r = _held_after_the_result()
    _key_off_mid_entry(r)
    r.ev(E.EV_FACE, 6)
    assert r.m.entry.count == 1
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_INCOMPLETE]
    assert r.m.state == E.ST_HOLD and list(r.m.dice) == [1, 2, 3]


def test_a_void_begun_in_hold_is_forgotten_when_the_key_turns_off():
    r = _held_before_the_result()
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_VOID)
    r.ev(E.EV_FACE, 2)  # the reason: leaning
    assert r.m.entry.voiding
    r.ev(E.EV_SUPERVISOR_OFF)
    assert not r.m.entry.voiding
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_CONFIRM)  # no void pending: an incomplete dice entry
    assert r.recs == [] and r.shown() == [E.R_INCOMPLETE]
    assert r.m.state == E.ST_HOLD


def test_a_correction_begun_while_paying_is_forgotten_when_the_key_turns_off():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    assert r.m.state == E.ST_PAYING
    _key_off_mid_entry(r)
    r.ev(E.EV_FACE, 4)
    assert r.m.entry.count == 1
    r.ev(E.EV_CONFIRM)
    assert r.recs == [] and r.shown() == [E.R_INCOMPLETE]
    assert list(r.m.dice) == [1, 2, 3] and r.m.state == E.ST_PAYING


def test_the_dealers_result_entry_waits_through_the_key_turning_off():
    r = Rig()
    r.to_result()
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_FACE, 4)
    r.ev(E.EV_FACE, 5)
    r.ev(E.EV_SUPERVISOR_OFF)
    assert r.types() == [R.J_SUPERVISOR] and r.m.entry.count == 2
    r.ev(E.EV_FACE, 6)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_RESULT] and r.recs[0].dice() == (4, 5, 6)
    assert r.recs[0].p(3) == R.SOURCE_DEALER and r.m.state == E.ST_PAYING


def test_the_dealers_void_entry_waits_through_the_key_turning_off():
    r = Rig()
    r.to_result()
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_VOID)
    r.ev(E.EV_FACE, 3)  # the reason: other
    r.ev(E.EV_SUPERVISOR_OFF)
    assert r.m.entry.voiding
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_VOID] and r.recs[0].p(0) == E.V_OTHER
    assert r.m.state == E.ST_IDLE
