# A replay that trusts no record: CRC-valid records that their type,
# the sequence, the round or the round's state does not allow are counted as
# damage and never applied; resume journals them (J_DAMAGE, an alarm) and
# voids or holds the unfinished round; recall and the log lines skip them and
# never raise. Each forged record below is caught by one check: removing that
# check makes its test fail.
from roundkit import Rig, forge, levels, make_cfg, replay_of, snapshot
from sicbo import events as E
from sicbo import journal, logtext
from sicbo import records as R
from sicbo.recall import Recall
from sicbo.roundmachine import RoundMachine

_NO_HEAD = (1, 2)  # snapshot indices of round and seq


def _rig(state):
    """A rig whose round is in `state`, its journal so far in r.journal."""
    r = Rig()
    r.round(1, 2, 3)
    if state == E.ST_IDLE:
        return r
    r.to_open()
    if state == E.ST_OPEN:
        return r
    r.ev(E.EV_BELL)
    if state == E.ST_CLOSED:
        return r
    r.ev(E.EV_COVER_OFF)
    if state == E.ST_RESULT:
        return r
    r.enter(4, 5, 6)
    if state == E.ST_PAYING:
        return r
    r.reader(1, 1, 1)  # disagrees with 4-5-6: hold
    assert r.m.state == E.ST_HOLD
    return r


def _verdict(r, rtype, payload=bytes(8), dseq=1, drid=0):
    """Replay r's journal, then take one forged record: (replay, code)."""
    rp = replay_of(bytes(r.journal), r.cfg, r.m.table)
    assert snapshot(rp) == snapshot(r.m) and rp.damaged == 0
    before = snapshot(rp)
    code = rp.take(forge(rtype, rp.seq + dseq, rp.round + drid, payload), 0)
    after = snapshot(rp)
    if code:
        for i in range(len(before)):
            if i not in _NO_HEAD:
                assert after[i] == before[i], (rtype, i, before[i], after[i])  # not applied
    if code > 0:
        assert rp.damaged == 1 and rp.pending == 1
        assert rp.damage[0] == code and rp.damage[1] == rtype
    return rp, code


def _p(*values):
    return bytes(values) + bytes(8 - len(values))


def test_unknown_record_types_are_damage():
    r = _rig(E.ST_OPEN)
    for t in (0, R.J_LAST + 1, 99, 255):
        assert _verdict(r, t)[1] == E.BAD_TYPE, t


def test_a_record_of_the_wrong_length_is_damage():
    r = _rig(E.ST_OPEN)
    assert _verdict(r, R.J_BELL, bytes(12))[1] == E.BAD_LENGTH  # would close betting
    r = _rig(E.ST_RESULT)
    assert _verdict(r, R.J_RESULT, b"")[1] == E.BAD_LENGTH  # 28 bytes, no dice
    assert _verdict(r, R.J_RESULT, _p(1, 2, 3) + bytes(4))[1] == E.BAD_LENGTH
    assert _verdict(r, R.J_METERS, bytes(8))[1] == E.BAD_LENGTH


def test_dice_out_of_range_are_damage():
    r = _rig(E.ST_RESULT)
    assert _verdict(r, R.J_RESULT, _p(0, 7, 6))[1] == E.BAD_DICE
    assert _verdict(r, R.J_RESULT, _p(1, 2, 7))[1] == E.BAD_DICE
    assert _verdict(r, R.J_READER, _p(1, 0, 2))[1] == E.BAD_DICE
    r = _rig(E.ST_PAYING)
    assert _verdict(r, R.J_CORRECTION, _p(4, 5, 6, 1, 9, 1))[1] == E.BAD_DICE
    assert _verdict(r, R.J_CORRECTION, _p(4, 5, 6, 0, 1, 1))[1] == E.BAD_DICE
    assert _verdict(r, R.J_HOLD, _p(4, 5, 6, 1, 1, 8))[1] == E.BAD_DICE


def test_codes_reasons_and_policies_out_of_range_are_damage():
    cases = (
        (E.ST_IDLE, R.J_ROUND, _p(3)),  # shaker
        (E.ST_OPEN, R.J_VOID, _p(0, 0)),  # void reason
        (E.ST_OPEN, R.J_VOID, _p(E.V_LAST + 1, 0)),
        (E.ST_OPEN, R.J_VOID, _p(E.V_STACKED, 2)),  # void policy
        (E.ST_RESULT, R.J_RESULT, _p(1, 2, 3, 2)),  # result source
        (E.ST_OPEN, R.J_ALARM, _p(E.M_READER_OK)),  # not an alarm's code
        (E.ST_OPEN, R.J_ALARM, _p(E.R_LAST + 1)),
        (E.ST_RESULT, R.J_VIOLATION, _p(200)),
        (E.ST_OPEN, R.J_REFUSED, _p(E.R_COVER_NOT_ON - 1)),
        (E.ST_OPEN, R.J_SUPERVISOR, _p(2)),
        (E.ST_OPEN, R.J_RESUME, _p(E.ST_HOLD + 1, 0)),
        (E.ST_OPEN, R.J_RESUME, _p(0, E.ST_HOLD + 1)),
        (E.ST_OPEN, R.J_DAMAGE, _p(0)),
        (E.ST_OPEN, R.J_DAMAGE, _p(E.BAD_LAST + 1)),
    )
    for state, t, payload in cases:
        assert _verdict(_rig(state), t, payload, drid=1 if t == R.J_ROUND else 0)[1] \
            == E.BAD_VALUE, (state, t, payload)


def test_the_records_a_live_machine_writes_pass_every_check():
    # The other side of each check above: the same types with good values.
    r = _rig(E.ST_RESULT)
    assert _verdict(r, R.J_RESULT, _p(1, 2, 3, 0))[1] == 0
    assert _verdict(r, R.J_VOID, _p(E.V_OTHER, 1))[1] == 0
    assert _verdict(_rig(E.ST_OPEN), R.J_ALARM, _p(E.R_DAMAGE, 3))[1] == 0
    assert _verdict(_rig(E.ST_IDLE), R.J_ROUND, _p(2), drid=1)[1] == 0
    for code in (1, E.BAD_LAST):
        assert _verdict(_rig(E.ST_OPEN), R.J_DAMAGE, _p(code, R.J_RESULT))[1] == 0


def test_a_sequence_number_that_skips_ahead_is_damage_and_the_journal_goes_on():
    r = _rig(E.ST_OPEN)
    base = bytes(r.journal)
    rp, code = _verdict(r, R.J_SUPERVISOR, _p(1), dseq=5)
    assert code == E.BAD_SEQ and rp.seq == r.m.seq  # not taken as the new last
    r.ev(E.EV_BELL)
    rest = bytes(r.journal)[len(base):]
    rp = replay_of(base + forge(R.J_SUPERVISOR, r.m.seq + 5, r.m.round, _p(1)) + rest,
                   r.cfg, r.m.table)
    assert rp.damaged == 1 and snapshot(rp) == snapshot(r.m)


def test_duplicates_are_ignored_not_damage():
    r = _rig(E.ST_OPEN)
    rp, code = _verdict(r, R.J_BELL, dseq=0)
    assert code == -1 and rp.duplicates == 1 and rp.damaged == 0


def test_round_ids_out_of_order_are_damage():
    assert _verdict(_rig(E.ST_IDLE), R.J_ROUND, _p(0), drid=2)[1] == E.BAD_ROUND
    assert _verdict(_rig(E.ST_IDLE), R.J_ROUND, _p(0), drid=0)[1] == E.BAD_ROUND
    assert _verdict(_rig(E.ST_OPEN), R.J_BELL, drid=-1)[1] == E.BAD_ROUND
    r = _rig(E.ST_OPEN)
    rp, code = _verdict(r, R.J_BELL, drid=1)
    assert code == E.BAD_ROUND and (rp.round, rp.seq) == (r.m.round, r.m.seq)  # not followed


def test_records_the_round_state_does_not_allow_are_damage():
    cases = (
        (E.ST_IDLE, R.J_RESULT, _p(1, 2, 3)),
        (E.ST_IDLE, R.J_OPEN, _p()),
        (E.ST_SHAKING, R.J_BELL, _p()),
        (E.ST_OPEN, R.J_COVER_OFF, _p()),
        (E.ST_OPEN, R.J_PAYOUT, _p()),
        (E.ST_OPEN, R.J_VIOLATION, _p(E.R_COVER_BEFORE_PAYOUT)),
        (E.ST_OPEN, R.J_READER, _p(1, 2, 3)),
        (E.ST_CLOSED, R.J_RESULT, _p(1, 2, 3)),
        (E.ST_IDLE, R.J_VOID, _p(E.V_STACKED)),
        (E.ST_RESULT, R.J_CORRECTION, _p(4, 5, 6, 1, 1, 1)),  # no result yet
        (E.ST_PAYING, R.J_CORRECTION, _p(6, 5, 4, 1, 1, 1)),  # not the current result
        (E.ST_PAYING, R.J_HOLD, _p(1, 1, 1, 2, 2, 2)),  # no reader dice
        (E.ST_PAYING, R.J_RESULT, _p(1, 2, 3)),  # a second result
        (E.ST_HOLD, R.J_RESULT, _p(1, 2, 3)),  # a hold after the result: a correction
        (E.ST_HOLD, R.J_VOID, _p(E.V_OTHER)),  # ... cannot be voided
        (E.ST_HOLD, R.J_READER, _p(1, 1, 1)),
        (E.ST_HOLD, R.J_PAYOUT, _p()),
    )
    for state, t, payload in cases:
        assert _verdict(_rig(state), t, payload)[1] == E.BAD_STATE, (state, t)
    r = _rig(E.ST_PAYING)
    r.reader(4, 5, 6)  # agrees: the reader's dice are known
    assert r.m.state == E.ST_PAYING
    assert _verdict(r, R.J_HOLD, _p(4, 5, 6, 1, 1, 1))[1] == E.BAD_STATE  # not its reader
    assert _verdict(r, R.J_HOLD, _p(1, 2, 3, 4, 5, 6))[1] == E.BAD_STATE  # not its result
    assert _verdict(r, R.J_READER, _p(4, 5, 6))[1] == E.BAD_STATE  # the reader once


def _shaking():
    r = Rig()
    r.arm()
    r.ev(E.EV_SHAKE)
    assert r.m.state == E.ST_SHAKING
    return r


def test_state_checks_cover_shaking_too():
    assert _verdict(_shaking(), R.J_BELL)[1] == E.BAD_STATE
    assert _verdict(_shaking(), R.J_OPEN)[1] == 0


def test_a_gap_after_corruption_is_not_damage_a_record_missing_between_pieces_is():
    r = _rig(E.ST_OPEN)
    base = bytes(r.journal)
    r.ev(E.EV_BELL)
    r.ev(E.EV_COVER_OFF)
    rest = bytes(r.journal)[len(base):]
    # The J_BELL lost in the middle (corrupt bytes): the next record follows a gap.
    bad = bytearray(rest[:R.REC_LEN])
    bad[9] ^= 0xFF
    rp = replay_of(base + bytes(bad) + rest[R.REC_LEN:], r.cfg, r.m.table)
    assert rp.scanner.corrupt_bytes == R.REC_LEN
    assert rp.damaged == 1  # the cover lifted in OPEN: its state does not allow it
    assert rp.seq == r.m.seq  # but the sequence goes on
    # Pieces (read windows, segments) fed in order are one journal: a record
    # missing where the next piece starts (a lost segment) is sequence damage,
    # wherever the reading cut the journal; the boot's records come after it.
    m = RoundMachine(r.cfg, table=r.m.table)
    m.feed(base)
    m.feed(rest[R.REC_LEN:])
    assert m.damaged == 1 and m.damage[0] == E.BAD_SEQ and m.seq == r.m.seq - 2
    n = m.resume(r.now + 1000, None, levels(1, 1, 1, 0))
    new = journal.records(bytes(m.records()))
    assert n and new[0].type == R.J_BOOT and new[0].seq == r.m.seq + 1


def test_a_journal_trimmed_by_rotation_starts_mid_round_without_damage():
    r = _rig(E.ST_PAYING)
    r.ev(E.EV_PAYOUT)
    r.round(2, 2, 2)
    recs = journal.records(bytes(r.journal))
    # From the bell of round 2 on: its J_ROUND was in a deleted segment.
    start = [x for x in recs if x.round == 2 and x.type == R.J_BELL][0].offset
    rp = replay_of(bytes(r.journal)[start:], r.cfg, r.m.table)
    assert rp.damaged == 0 and rp.state == E.ST_IDLE and rp.round == 3
    assert rp.seq == r.m.seq


def _boot(data, cover=1, cfg=None):
    r = Rig(cfg)
    m = r.m
    m.feed(data)
    r.now += 1000
    r._drain(m.resume(r.now, None, levels(cover, 1, 1, 0), 3))
    r.journal = data if isinstance(data, bytearray) else bytearray(data)
    r.journal.extend(r.raw)
    return r


def test_resume_journals_damage_and_voids_a_round_before_its_result():
    r = _rig(E.ST_RESULT)
    data = bytes(r.journal) + forge(R.J_RESULT, r.m.seq + 1, r.m.round, _p(0, 7, 6))
    b = _boot(data, cover=0)
    types = b.types()
    assert types == [R.J_BOOT, R.J_DAMAGE, R.J_ALARM, R.J_VOID], types
    boot, dmg, alarm, void = b.recs
    assert boot.p(0) == 3  # the reset cause
    assert dmg.p(0) == E.BAD_DICE and dmg.p(1) == R.J_RESULT
    assert dmg.p(2) | dmg.p(3) << 8 == r.m.seq + 1  # the damaged record's seq
    assert alarm.p(0) == E.R_DAMAGE and alarm.p(1) == 1
    assert void.p(0) == E.V_DAMAGE and void.round == r.m.round
    m = b.m
    assert m.state == E.ST_IDLE and m.alarm and m.void_lit and m.pending == 0
    assert b.lamp("ALARM") and b.lamp("VOID") and not b.lamp("SMALL")
    # Reported once: the next boot finds the same damage already journaled.
    b2 = _boot(bytes(b.journal))
    assert b2.types() == [R.J_BOOT] and b2.m.damaged == 1 and b2.m.state == E.ST_IDLE
    # The table goes on once the supervisor has seen the alarm.
    b2.ev(E.EV_SUPERVISOR_ON)
    b2.ev(E.EV_SUPERVISOR_OFF)
    b2.round(3, 3, 4)
    assert b2.m.round == r.m.round + 1


def test_resume_holds_a_round_being_paid_for_the_supervisor():
    r = _rig(E.ST_PAYING)
    data = bytes(r.journal) + forge(R.J_CORRECTION, r.m.seq + 1, r.m.round,
                                    _p(4, 5, 6, 1, 9, 1))
    b = _boot(data, cover=0)
    assert b.types() == [R.J_BOOT, R.J_DAMAGE, R.J_ALARM, R.J_RESUME]
    m = b.m
    assert m.state == E.ST_HOLD and m.has_result and bytes(m.dice) == bytes((4, 5, 6))
    assert b.recs[3].p(0) == E.ST_HOLD and b.recs[3].p(1) == E.ST_PAYING
    assert b.lamp("ALARM") and b.lamp("BIG")  # the journaled result, not settled again
    b.ev(E.EV_PAYOUT)
    assert b.m.state == E.ST_HOLD  # payout waits for the supervisor
    # A later boot replays the J_DAMAGE: still held.
    b2 = _boot(bytes(b.journal), cover=0)
    assert b2.m.state == E.ST_HOLD and b2.types() == [R.J_BOOT, R.J_RESUME]
    # The supervisor confirms the result again (or corrects it), then payout.
    b2.ev(E.EV_SUPERVISOR_ON)
    b2.enter(4, 5, 6)
    assert b2.m.state == E.ST_PAYING
    b2.ev(E.EV_SUPERVISOR_OFF)
    b2.ev(E.EV_PAYOUT)
    assert b2.m.state == E.ST_IDLE


def test_resume_reports_at_most_three_records_and_counts_them_all():
    r = _rig(E.ST_OPEN)
    data = bytes(r.journal)
    for k in range(5):
        data += forge(R.J_SUPERVISOR, r.m.seq + 1 + k, r.m.round, _p(7))
    b = _boot(data, cfg=make_cfg(resume_policy="keep_open"))
    assert b.types().count(R.J_DAMAGE) == 3
    for k in range(3):
        d = b.recs[1 + k]
        assert (d.p(0), d.p(1), d.p(2)) == (E.BAD_VALUE, R.J_SUPERVISOR, (r.m.seq + 1 + k) & 0xFF)
    assert b.recs[4].type == R.J_ALARM and b.recs[4].p(1) == 5
    assert b.m.state == E.ST_IDLE and b.recs[-1].p(0) == E.V_DAMAGE


def test_recall_and_log_lines_skip_damaged_records_without_raising():
    r = _rig(E.ST_RESULT)
    seq = r.m.seq
    data = bytes(r.journal)
    forged = (forge(R.J_RESULT, seq + 1, r.m.round, _p(0, 7, 6))
              + forge(R.J_RESULT, seq + 2, r.m.round, b"")
              + forge(R.J_CORRECTION, seq + 3, r.m.round, _p(1, 2, 3, 0, 0, 9))
              + forge(R.J_PAYOUT, seq + 4, r.m.round))
    rc = Recall(r.m.table)
    rc.feed(data + forged)
    assert rc.damaged == 4
    assert [(s, t, c) for s, t, c in rc.damage] == [
        (seq + 1, R.J_RESULT, E.BAD_DICE), (seq + 2, R.J_RESULT, E.BAD_LENGTH),
        (seq + 3, R.J_CORRECTION, E.BAD_DICE), (seq + 4, R.J_PAYOUT, E.BAD_STATE)]
    info = rc.last()[0]
    assert info.round == r.m.round and info.damaged == 4
    assert info.dice is None and info.status == "open" and info.winning_areas(r.m.table) == []
    assert rc.meters.get("paid") == 1 and rc.meters.get("corrections") == 0
    for rec in journal.records(forged):
        line = logtext.journal_line(rec, r.m.table)
        assert ("round %5d" % r.m.round) in line
        assert journal.check(rec) != 0 or rec.type == R.J_PAYOUT
    b = _boot(data + forged, cover=0)
    line = logtext.journal_line(b.recs[1], r.m.table)
    assert "dice not 1..6" in line and ("seq %d" % (seq + 1)) in line


def test_a_forged_journal_of_every_kind_never_raises():
    # Every type with every payload byte at 0, 7 and 255, in every state.
    import gc

    for state in (E.ST_IDLE, E.ST_OPEN, E.ST_RESULT, E.ST_PAYING, E.ST_HOLD):
        gc.collect()
        r = _rig(state)
        data = bytearray(r.journal)
        n = len(data)
        seq = r.m.seq
        for t in range(0, R.J_LAST + 3):
            for v in (0, 7, 255):
                seq += 1
                data.extend(forge(t, seq, r.m.round + (1 if t == R.J_ROUND else 0),
                                  bytes([v] * 8)))
        r = Rig(r.cfg, machine=RoundMachine(r.cfg, table=r.m.table))
        r.keep = False
        gc.collect()
        r.m.feed(data)
        assert r.m.damaged > 0
        r._drain(r.m.resume(r.now, None, levels(0, 1, 1, 0)))
        rc = Recall(r.m.table)
        rc.feed(data)
        rc.feed(r.raw)
        for info in rc.last():
            info.winning_areas(r.m.table)
        rc = None
        journal.Scanner().walk(memoryview(data)[n:], lambda d, o, _g, tb=r.m.table:
                               logtext.journal_line(journal.Record(d, o), tb))


def test_a_damaged_round_start_still_takes_its_round_id():
    # A J_ROUND whose shaker is not one: not applied, but its id is used, so
    # its records are damage (not in that state) and the next round follows.
    r = _rig(E.ST_IDLE)
    base = bytes(r.journal)
    rid = r.m.round + 1
    r.round(2, 3, 4)
    rest = bytearray(bytes(r.journal)[len(base):])
    rest[24] = 7  # the shaker byte of the J_ROUND
    journal.seal(rest, R.REC_LEN)
    r.round(5, 5, 6)
    more = bytes(r.journal)[len(base) + len(rest):]
    rp = replay_of(base + bytes(rest) + more, r.cfg, r.m.table)
    assert rp.damage[0] == E.BAD_VALUE and rp.damaged == 6  # J_ROUND, then its 5 records
    assert rp.round == rid + 1 and rp.state == E.ST_IDLE and rp.seq == r.m.seq


def test_damage_in_a_finished_round_leaves_the_table_idle_with_the_alarm():
    r = _rig(E.ST_IDLE)
    data = bytes(r.journal) + forge(R.J_REFUSED, r.m.seq + 1, r.m.round, _p(7))
    b = _boot(data)
    assert b.types() == [R.J_BOOT, R.J_DAMAGE, R.J_ALARM]
    assert b.m.state == E.ST_IDLE and b.m.alarm and not b.m.void_lit
    assert E.R_DAMAGE in b.shown() and b.lamp("ALARM")


def _replaced(r, pick, rid=None, dseq=0):
    """r's journal with the first record `pick(rec)` chooses forged in its
    place (CRC valid): its round id rid, its sequence number moved by dseq."""
    data = bytearray(r.journal)
    for rec in journal.records(bytes(data)):
        if pick(rec):
            bad = forge(rec.type, rec.seq + dseq, rec.round if rid is None else rid,
                        rec.payload)
            data[rec.offset:rec.offset + rec.length] = bad
            return bytes(data)
    raise AssertionError("no such record")


def test_a_record_forged_in_place_costs_its_round_and_the_journal_goes_on():
    # A round's start with a wrong round id (CRC valid), or a record of it
    # with a wrong sequence number, in place of the real one: that round is
    # damage; the replay finds its way again with the next round, and the
    # machine resumes after the journal's last sequence number and round
    # (none used twice).
    r = Rig()
    for d in ((1, 2, 3), (2, 2, 3), (3, 2, 3)):
        r.round(*d)
    last = journal.records(bytes(r.journal))[-1]
    for data in (_replaced(r, lambda rec: rec.type == R.J_ROUND and rec.round == 2, rid=7),
                 _replaced(r, lambda rec: rec.type == R.J_BELL and rec.round == 2, dseq=9)):
        b = _boot(data)
        m = b.m
        assert m.damaged >= 1 and m.round == last.round == 3 and m.state == E.ST_IDLE
        # What the boot wrote (J_BOOT, J_DAMAGE, ...) comes after the journal's last.
        new = journal.records(b.raw)
        assert new and min(rec.seq for rec in new) == last.seq + 1 and m.seq > last.seq
        again = replay_of(bytes(b.journal), r.cfg, r.m.table)
        assert again.seq == m.seq and again.round == 3
