# The dealer's (or supervisor's) key entry after a refusal, and the dice
# reader's readings that are not taken: a correction equal to the result is
# refused and its entry starts again, so that the supervisor's next three
# faces are a new correction; a second reading of the same round is ignored
# and counted, never journaled.
from roundkit import Rig
from sicbo import events as E
from sicbo import records as R


def _paying(d1, d2, d3):
    r = Rig()
    r.to_result()
    r.enter(d1, d2, d3)
    assert r.m.state == E.ST_PAYING
    return r


def test_a_correction_equal_to_the_result_starts_the_entry_again():
    r = _paying(1, 2, 3)
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(3, 2, 1)  # the same dice in another order: no correction
    assert r.recs == [] and r.shown() == [E.R_SAME_RESULT]
    assert r.m.entry.count == 0  # the faces keyed are forgotten
    # The supervisor keys the real correction at once: it is taken as keyed.
    r.ev(E.EV_FACE, 1)
    assert r.m.entry.count == 1
    r.ev(E.EV_FACE, 2)
    r.ev(E.EV_FACE, 4)
    r.ev(E.EV_CONFIRM)
    assert r.types() == [R.J_CORRECTION], r.types()
    assert r.recs[0].dice(0) == (1, 2, 3) and r.recs[0].dice(3) == (1, 2, 4)
    assert list(r.m.dice) == [1, 2, 4] and r.m.state == E.ST_PAYING
    assert r.shown() == [E.M_CORRECTED]


def test_confirm_again_after_the_same_result_refusal_asks_for_three_faces():
    r = _paying(5, 5, 6)
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(5, 6, 5)
    assert r.shown() == [E.R_SAME_RESULT]
    r.ev(E.EV_CONFIRM)  # nothing keyed since: an incomplete entry
    assert r.recs == [] and r.shown() == [E.R_INCOMPLETE], r.shown()
    assert list(r.m.dice) == [5, 5, 6]


def test_a_second_reading_of_a_round_is_ignored_and_counted():
    r = Rig()
    r.to_result()
    assert r.m.reader_ignored == 0
    r.reader(4, 5, 6)
    assert r.types() == [R.J_READER] and r.m.reader_ignored == 0
    r.reader(1, 1, 1)  # the first reading of a round counts
    assert r.recs == [] and r.m.reader_ignored == 1
    r.reader(4, 5, 6)
    assert r.recs == [] and r.m.reader_ignored == 2
    assert list(r.m.reader) == [4, 5, 6]
    r.enter(4, 5, 6)  # the dealer agrees with the first reading: paid
    assert r.types() == [R.J_RESULT] and r.m.state == E.ST_PAYING
    r.reader(6, 6, 6)  # and later readings never hold the round
    assert r.recs == [] and r.m.state == E.ST_PAYING and r.m.reader_ignored == 3
