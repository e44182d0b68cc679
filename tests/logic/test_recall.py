# Game recall (last 10 rounds) and meters, rebuilt from the journal, also
# across rotation with meters checkpoints.
from journal_store import JournalStore
from roundkit import Rig, booted, make_cfg, rmdir, tmpdir
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters, checkpoint
from sicbo.recall import Recall
from sicbo.roundstate import RoundState


def _session():
    r = Rig(wall=820000000)
    r.round(1, 2, 3)  # round 1
    r.void_round(2)  # round 2: leaning
    r.to_result()  # round 3: corrected
    r.enter(1, 1, 2)
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(1, 1, 3)
    r.ev(E.EV_SUPERVISOR_OFF)
    r.ev(E.EV_COVER_ON)  # violation
    r.ev(E.EV_PAYOUT)
    r.ev(E.EV_COVER_OFF)
    r.to_open()  # round 4: tamper
    r.ev(E.EV_COVER_OFF)
    return r


def test_recall_rounds_with_dice_voids_corrections_and_times():
    r = _session()
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    last = rc.last()
    assert [x.round for x in last] == [4, 3, 2, 1]
    r4, r3, r2, r1 = last
    assert r1.status == "paid" and r1.dice == (1, 2, 3)
    assert ("SMALL", 1) in r1.winning_areas(r.m.table)
    assert ("SINGLE_2", 1) in r1.winning_areas(r.m.table)
    assert r2.status == "void" and r2.void_reason == E.V_LEANING and r2.dice is None
    assert r2.first_dice is None and r2.void_policy == 0 and r1.void_policy == 0
    assert r2.result_time is None and r4.bell is None and r4.corrections == []
    assert r1.void_reason == 0 and r1.hold is None and r1.reader is None
    assert r1.bell is not None and r1.started[1] < r1.bell[1] < r1.result_time[1]
    assert r2.winning_areas(r.m.table) == []
    assert r3.first_dice == (1, 1, 2) and r3.dice == (1, 1, 3)
    assert len(r3.corrections) == 1 and r3.corrections[0][:2] == ((1, 1, 2), (1, 1, 3))
    assert r3.violations == 1 and r3.status == "paid"
    assert r4.status == "void" and r4.void_reason == E.V_TAMPER
    assert r4.alarms == [E.R_TAMPER_COVER]
    boot, ticks, wall = r1.started
    assert boot == 0 and wall == 820000000 and ticks > 0
    assert r1.ended[1] > ticks and r1.result_time is not None


def test_meters_count_rounds_voids_alarms_violations_and_wins():
    r = _session()
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    d = rc.meters.as_dict(r.m.table)
    assert d["rounds"] == 4 and d["paid"] == 2 and d["voids"] == 2
    assert d["alarms"] == 1 and d["violations"] == 1 and d["corrections"] == 1
    assert d["refusals"] == 0 and d["holds"] == 0
    assert d["void_reasons"][E.V_LEANING] == 1 and d["void_reasons"][E.V_TAMPER] == 1
    wins = d["wins"]
    assert wins["SMALL"] == 2 and wins["SINGLE_1"] == 2 and wins["SINGLE_3"] == 2
    assert wins["DOUBLE_1"] == 1 and wins["SINGLE_2"] == 1  # corrected result counts
    assert wins["BIG"] == 0 and "PAYING" not in wins


def test_recall_keeps_only_the_last_ten_rounds():
    r = Rig()
    for k in range(13):
        r.round(1 + k % 6, 3, 5)
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    assert [x.round for x in rc.last()] == list(range(13, 3, -1))
    assert rc.meters.get("rounds") == 13 and rc.meters.get("paid") == 13


def test_recall_keeps_exactly_its_rounds_never_one_more():
    # diag.recall(n) lists Recall.last(n): asked for more rounds than recall
    # keeps, it lists the kept ones and no more; the round that fell out is
    # no longer current (a record of it is told to no round). Exactly `keep`
    # rounds all stay.
    for keep in (1, 4, None):
        n = 10 if keep is None else keep
        r = Rig()
        for k in range(n):
            r.round(1 + k % 6, 2, 4)
        rc = Recall(r.m.table) if keep is None else Recall(r.m.table, keep)
        rc.feed(bytes(r.journal))
        assert [x.round for x in rc.last(n + 2)] == list(range(n, 0, -1)), keep
        r.round(5, 5, 6)
        r.round(6, 5, 6)
        rc = Recall(r.m.table) if keep is None else Recall(r.m.table, keep)
        rc.feed(bytes(r.journal))
        assert [x.round for x in rc.last(n + 2)] == list(range(n + 2, 2, -1)), keep
        assert len(rc.rounds) == n, keep
        assert rc.current(2) is None and rc.current(3) is not None, keep
        assert rc.meters.get("rounds") == n + 2  # the meters count every round


def test_recall_and_replay_ignore_duplicates_and_torn_tail():
    r = _session()
    data = bytes(r.journal)
    rc = Recall(r.m.table)
    rc.feed(data)
    rc.feed(data[:-5])
    assert rc.meters.get("rounds") == 4 and rc.meters.get("paid") == 2
    assert rc.damaged == 0 and rc.order.duplicates == len(journal.records(data[:-5]))


def test_meters_survive_rotation_through_checkpoints():
    d = tmpdir("recall")
    r = Rig()
    r.keep = False
    r.m.meters = live = Meters(r.m.table.channels, r.m.table)  # as on the board: the machine counts
    st = JournalStore(d, segment_bytes=300, max_segments=2,
                      checkpoint=lambda: checkpoint(r.m, r.now))
    r.sink = lambda data: st.append(data, r.m.open_seq)
    for k in range(12):
        r.round(6, 5, 1 + k % 6)
    st.close()
    assert st.deleted > 0 and live.checkpoints > 0  # the machine took them too
    assert live.get("paid") == 12 and live.get("rounds") == 12
    rc2 = Recall(r.m.table)
    rp = RoundState()

    def feed(data):
        rp.feed(data)
        rc2.feed(data)

    JournalStore(d, segment_bytes=300, max_segments=2).boot(feed)
    assert rc2.meters.checkpoints >= 1
    assert rc2.meters.get("paid") == 12 and rc2.meters.counts == live.counts
    assert rc2.meters.wins == live.wins
    assert rp.seq == r.m.seq and rp.state == E.ST_IDLE and rp.round == 12
    assert rp.damaged == 0 and rc2.damaged == 0
    rmdir(d)


def test_recall_of_a_held_round_and_the_holds_meter():
    r = Rig(make_cfg(void_policy="players_choose"))
    r.to_result()
    r.reader(1, 2, 5)
    r.enter(1, 2, 3)  # hold
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_VOID)
    r.ev(E.EV_FACE, 3)
    r.ev(E.EV_CONFIRM)
    r.ev(E.EV_PAYOUT)  # refused: nothing to pay
    r.ev(E.EV_SHAKE)  # refused: cover off
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    info = rc.last()[0]
    assert info.hold == ((1, 2, 3), (1, 2, 5)) and info.reader == (1, 2, 5)
    assert rc.meters.get("refusals") == 1
    assert info.status == "void" and info.void_policy == 1 and info.void_reason == E.V_OTHER
    assert rc.meters.get("holds") == 1 and rc.meters.get("voids") == 1
    assert rc.damaged == 0 and rc.damage == []


def test_recall_ignores_the_checkpoint_of_another_table():
    m = Meters(5)  # a table of 5 lamp channels (the round trip: test_safeguards_meters)
    m.counts[0] = 1000
    r = Rig()
    r.round(1, 2, 3)
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    rc.feed(journal.encode(R.J_METERS, r.m.seq + 1, 1, 0, 0, None, m.payload()))
    assert rc.meters.checkpoints == 0 and rc.meters.get("rounds") == 1  # another table's


def test_recall_counts_as_the_board_on_a_journal_that_starts_mid_round():
    # Rotation can leave a journal whose oldest segment starts with a
    # checkpoint written mid-round (the round's J_ROUND deleted): the board's
    # meters and recall's count the rest of that round the same way.
    r = Rig()
    r.m.meters = Meters(r.m.table.channels, r.m.table)
    r.round(1, 2, 3)
    r.to_result()
    start = len(r.journal)
    rec = bytes(checkpoint(r.m, r.now, None))
    r.journal.extend(rec)
    r.enter(4, 5, 6)
    r.ev(E.EV_PAYOUT)
    r.round(2, 2, 2)
    data = bytes(r.journal[start:])
    board = RoundState()
    board.meters = Meters(r.m.table.channels, r.m.table)
    board.feed(data)
    rc = Recall(r.m.table)
    rc.feed(data)
    assert board.meters.get("paid") == 3 and sum(board.meters.wins) > 0  # 1 before, 2 after
    assert rc.meters.as_dict(r.m.table) == board.meters.as_dict(r.m.table)
    assert rc.meters.as_dict(r.m.table) == r.m.meters.as_dict(r.m.table)


def test_recall_names_the_reset_that_cut_a_round_and_only_an_unfinished_one():
    # Round 1 paid, then a boot between rounds (power-on): no round was cut.
    r = Rig(wall=820000000)
    r.round(1, 2, 3)
    b = booted(r, cover=1, cause=1)
    # Round 2 cut before the bell by the watchdog (cause 3): voided as a
    # "power cut", the boot's cause kept for it.
    b.shake()
    b2 = booted(b, cover=1, cause=3)
    # Round 3 cut after the bell by a hard reset (cause 2), resumed and paid.
    b2.to_result()
    b3 = booted(b2, cover=0, cause=2)
    b3.enter(4, 5, 6)
    b3.ev(E.EV_PAYOUT)
    rc = Recall(b3.m.table)
    rc.feed(bytes(b3.journal))
    r3, r2, r1 = rc.last(3)
    assert r1.round == 1 and r1.status == "paid" and 1 not in rc.restarts
    assert r2.status == "void" and r2.void_reason == E.V_POWER and rc.restarts[2] == 3
    assert r3.status == "paid" and rc.restarts[3] == 2
    # A round no longer kept takes its entry with it.
    small = Recall(b3.m.table, 1)
    small.feed(bytes(b3.journal))
    assert [x.round for x in small.last()] == [3] and small.restarts == {3: 2}
