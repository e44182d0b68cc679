# The journal as the floor's outbox (journal_store.JournalStore with a
# backlog budget): rotation never deletes a record the floor has not
# acknowledged while the journal is within the budget; past it the store says
# it is full and follows the table file's policy (keep playing: the oldest
# unacknowledged records go and `lost` says up to which; stop taking new
# rounds: they stay). And the round machine's side of it: the alarm raised
# once per time at the budget, and no new round under the stop policy.
from link.source import OutboxStore as JournalStore  # the store of a table with a floor link

from roundkit import Rig, rmdir, tmpdir
from sicbo import events as E
from sicbo import journal
from sicbo import records as R

REC = R.REC_LEN  # 36
SEG = 4 * REC  # four records a segment
BUDGET = 10 * SEG  # the backlog: 40 records' worth


def _rec(seq):
    return journal.encode(R.J_BOOT, seq, 0, 1, 0, None, bytes(8))


def _store(name, keep_when_full=False):
    d = tmpdir(name)
    return d, JournalStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET,
                           keep_when_full=keep_when_full)


def _append(st, first, last):
    for seq in range(first, last + 1):
        st.append(_rec(seq))


def _held(st):
    """The sequence numbers the journal holds, in order, as the link reads
    them (read_after from 0)."""
    buf = bytearray(R.MAX_LEN)
    out = []
    seq = 0
    while True:
        n = st.read_after(seq, buf, len(buf))
        if not n:
            return out
        for r in journal.records(bytes(buf[:n])):
            out.append(r.seq)
            seq = r.seq


def test_nothing_unacknowledged_goes_within_the_budget():
    d, st = _store("backlog_room")
    # twice the journal's own budget (8 records) and up to the backlog's
    for seq in range(1, 41):
        _append(st, seq, seq)
        assert st.oldest() == 1, (seq, st.segs)
        assert not st.full and st.lost == 0 and st.deleted == 0
        assert st.total_bytes() <= BUDGET
    assert _held(st) == list(range(1, 41))
    # what the floor acknowledged may go, down to the journal's own budget;
    # the first record after the cursor stays
    st.acked = 22
    st.rotate()
    assert st.oldest() == 21 and not st.full and st.lost == 0
    assert _held(st) == list(range(21, 41))
    st.acked = 40
    _append(st, 41, 44)
    assert st.total_bytes() <= 2 * SEG and st.oldest() > 30 and not st.full
    st.close()
    rmdir(d)


def test_without_a_floor_link_rotation_keeps_only_the_journals_budget():
    # the same records, no backlog: the oldest go at 8 records' worth
    d = tmpdir("backlog_none")
    st = JournalStore(d, segment_bytes=SEG, max_segments=2)
    _append(st, 1, 40)
    assert st.total_bytes() <= 2 * SEG and st.oldest() > 30 and not st.full
    st.close()
    rmdir(d)


def test_past_the_budget_keep_playing_loses_the_oldest_and_says_up_to_which():
    d, st = _store("backlog_keep")
    _append(st, 1, 40)
    assert not st.full
    # the segment being written may take the journal over the budget; the
    # rotation after it takes it back: the oldest segment goes
    _append(st, 41, 43)
    assert not st.full and st.oldest() == 1 and st.total_bytes() <= BUDGET + SEG
    _append(st, 44, 44)
    assert st.full and st.lost == 4 and st.oldest() == 5 and st.total_bytes() <= BUDGET
    _append(st, 45, 60)
    assert st.full and st.total_bytes() <= BUDGET
    # every record above `lost` is held, none below
    assert st.oldest() == st.lost + 1
    assert _held(st) == list(range(st.lost + 1, 61))
    # the floor catches up: room again
    st.acked = 60
    st.rotate()
    assert not st.full and st.total_bytes() <= 2 * SEG
    st.close()
    rmdir(d)


def test_past_the_budget_stop_new_rounds_keeps_every_record():
    d, st = _store("backlog_stop", keep_when_full=True)
    _append(st, 1, 44)  # over the budget at the rotation after 44
    assert st.full and st.lost == 0 and st.oldest() == 1
    _append(st, 45, 50)  # the round that was open when it filled still journals
    assert st.full and st.lost == 0 and st.total_bytes() > BUDGET
    assert _held(st) == list(range(1, 51))
    # an acknowledgement that leaves it over the budget: still full, nothing
    # unacknowledged lost
    st.acked = 8
    st.rotate()
    assert st.full and st.lost == 0 and st.oldest() == 9
    assert _held(st) == list(range(9, 51))
    # one that brings it within the budget: room
    st.acked = 30
    st.rotate()
    assert not st.full and st.lost == 0 and st.oldest() == 29
    assert _held(st) == list(range(29, 51))
    st.close()
    rmdir(d)


def _reopened(d, keep_when_full, acked):
    """The store as start-up opens it again after a reset: the journal read,
    a new segment for the boot, then the floor's saved cursor
    (link.table.attach) and the judgement of the backlog."""
    st = JournalStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET,
                      keep_when_full=keep_when_full)
    st.boot(lambda piece: None)
    st.acked = acked
    st.judge_full()
    return st


def test_a_reboot_on_a_full_backlog_is_full_before_its_next_rotation():
    for keep in (True, False):
        d, st = _store("backlog_reboot", keep_when_full=keep)
        _append(st, 1, 44)
        assert st.full, keep
        held = _held(st)
        st.close()
        # Nothing acknowledged: full at once, and nothing deleted by the boot;
        # keeping on playing, what rotation deleted is said lost again.
        st = _reopened(d, keep, 0)
        assert st.full and st.deleted == 0 and _held(st) == held, keep
        assert st.lost == (0 if keep else held[0] - 1), (keep, st.lost, held[0])
        st.close()
        # What the floor has acknowledged leaves it within the budget once
        # rotation deletes it: not full (rotation then makes the room).
        st = _reopened(d, keep, held[-1])
        assert not st.full, keep
        st.rotate()
        assert not st.full and st.total_bytes() <= BUDGET, keep
        st.close()
        rmdir(d)
    # Within the budget: not full, though nothing is acknowledged.
    d, st = _store("backlog_reboot_room")
    _append(st, 1, 30)
    st.close()
    st = _reopened(d, False, 0)
    assert not st.full and _held(st) == list(range(1, 31))
    st.close()
    rmdir(d)


def _alarm(r, arg):
    assert r.types() == [R.J_ALARM], r.recs
    assert r.recs[0].p(R.P_CODE) == E.R_BACKLOG_FULL and r.recs[0].p(R.P_DETAIL) == arg
    assert E.R_BACKLOG_FULL in r.shown() and r.m.alarm and r.lamp("ALARM")


def test_the_machine_at_the_budget_keep_playing():
    r = Rig()
    r.ev(E.EV_BACKLOG, E.BACKLOG_FULL)
    _alarm(r, E.BACKLOG_FULL)
    r.ev(E.EV_BACKLOG, E.BACKLOG_FULL)  # said again by the store: once per time
    assert r.recs == [] and r.shown() == []
    r.round(1, 2, 3)  # the table plays on
    r.ev(E.EV_BACKLOG, E.BACKLOG_ROOM)
    assert r.recs == []
    r.ev(E.EV_BACKLOG, E.BACKLOG_FULL)  # full again: a new alarm
    _alarm(r, E.BACKLOG_FULL)


def test_the_machine_at_the_budget_stop_new_rounds():
    r = Rig()
    r.to_open()  # a round open when the budget is reached finishes
    r.ev(E.EV_BACKLOG, E.BACKLOG_STOP)
    _alarm(r, E.BACKLOG_STOP)
    r.ev(E.EV_BELL)
    r.ev(E.EV_CLASP_L_OFF)
    r.ev(E.EV_CLASP_R_OFF)
    r.ev(E.EV_COVER_OFF)
    r.enter(4, 5, 6)
    r.ev(E.EV_PAYOUT)
    assert r.m.state == E.ST_IDLE
    r.arm()
    r.ev(E.EV_SHAKE)  # no new one
    assert r.types() == [R.J_REFUSED] and r.recs[0].p(0) == E.R_BACKLOG_FULL
    assert r.recs[0].p(1) == E.BACKLOG_STOP and r.m.state == E.ST_IDLE
    assert E.R_BACKLOG_FULL in r.shown()
    r.ev(E.EV_BACKLOG, E.BACKLOG_ROOM)  # the floor acknowledged: room again
    r.shake()
    assert r.m.state == E.ST_OPEN


def test_a_reboot_with_a_backlog_of_exactly_the_budget_is_not_full():
    # The budget is what the backlog may hold: rotation keeps a journal of
    # exactly BUDGET bytes of unacknowledged records without saying full, and
    # the judgement at start-up agrees with it (a table under the stop policy
    # that was playing before the reset plays on after it).
    for keep in (True, False):
        d, st = _store("backlog_at_budget", keep_when_full=keep)
        _append(st, 1, 40)  # ten full segments: BUDGET bytes, nothing acknowledged
        assert not st.full and st.lost == 0 and st.total_bytes() == BUDGET, keep
        st.close()
        st = _reopened(d, keep, 0)
        assert st.total_bytes() == BUDGET and len(st.segs) > 1, keep
        assert not st.full and st.lost == 0 and _held(st) == list(range(1, 41)), keep
        # a segment more takes it past the budget: the rotation after it says so
        _append(st, 41, 44)
        assert st.full, keep
        st.close()
        rmdir(d)
