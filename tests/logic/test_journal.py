# The journal's record format, the scanner (torn and corrupted records) and
# the store's rotation on a real folder.
import os

from journal_store import JournalStore
from roundkit import Rig, replay_of, rmdir, tmpdir
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.roundstate import RoundState


def _boot(st):
    """What a boot reads from a store: every segment through one RoundState."""
    rs = RoundState()
    st.boot(rs.feed)
    return rs


def test_record_layout():
    data = journal.encode(R.J_RESULT, 7, 3, 2, 12345, 820000000, bytes([1, 2, 3, 0, 0, 0, 0, 0]))
    assert len(data) == R.REC_LEN == 36
    assert data[0] == 0xA5 and data[1] == R.J_RESULT and data[2] == 36 and data[3] == 0
    assert data[4:8] == b"\x07\x00\x00\x00" and data[8:12] == b"\x03\x00\x00\x00"
    assert data[12:14] == b"\x02\x00" and data[14:16] == b"\x01\x00"
    rec = journal.records(data)[0]
    assert (rec.type, rec.seq, rec.round, rec.boot, rec.ticks, rec.wall) == (
        R.J_RESULT, 7, 3, 2, 12345, 820000000)
    assert rec.dice() == (1, 2, 3)


def test_wall_clock_absent_is_flagged_not_guessed():
    rec = journal.records(journal.encode(R.J_BOOT, 1, 0, 1, 5, None))[0]
    assert rec.wall is None
    assert journal.records(journal.encode(R.J_BOOT, 1, 0, 1, 5, 0))[0].wall == 0


def test_crc_covers_every_byte():
    data = journal.encode(R.J_BELL, 1, 1, 1, 1, None, bytes(8))
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x01
        assert journal.records(bytes(bad)) == [], i


def _rounds(n):
    r = Rig()
    for k in range(n):
        r.round(1 + k % 6, 2, 3)
    return r


def test_torn_last_record_is_discarded_at_every_cut():
    data = bytes(_rounds(2).journal)
    whole = journal.records(data)
    last = whole[-1].offset
    for cut in range(last, len(data)):
        sc = journal.Scanner()
        got = list(sc.scan(data[:cut]))
        assert len(got) == len(whole) - 1
        assert sc.torn_bytes == cut - last and sc.corrupt_bytes == 0
        if cut > last:
            assert sc.torn_segments == 1


def test_corruption_in_the_middle_skips_only_that_record():
    data = bytearray(_rounds(3).journal)
    whole = journal.records(bytes(data))
    victim = whole[5]
    data[victim.offset + 10] ^= 0xFF
    sc = journal.Scanner()
    got = list(sc.scan(bytes(data)))
    assert [x.seq for x in got] == [x.seq for x in whole if x.seq != victim.seq]
    assert sc.corrupt_bytes == R.REC_LEN and sc.torn_bytes == 0


def test_garbage_between_records_is_skipped():
    data = bytes(_rounds(1).journal)
    mixed = data[:72] + b"\xa5\x00garbage\xa5" + data[72:]
    sc = journal.Scanner()
    assert len(list(sc.scan(mixed))) == len(journal.records(data))
    assert sc.corrupt_bytes == 10


def test_replay_ignores_duplicated_records():
    data = bytes(_rounds(2).journal)
    rp = replay_of(data + data)
    assert rp.duplicates == len(journal.records(data)) and rp.round == 2
    assert rp.state == E.ST_IDLE


def test_store_append_flush_and_read_back():
    d = tmpdir("store")
    st = JournalStore(d, segment_bytes=4096)
    r = _rounds(2)
    st.append(bytes(r.journal))
    st.close()
    st2 = JournalStore(d)
    assert b"".join([bytes(p) for p in st2.read_all()]) == bytes(r.journal)
    rmdir(d)


def test_store_boot_starts_a_new_segment_after_a_torn_tail():
    d = tmpdir("boot")
    st = JournalStore(d)
    r = _rounds(1)
    st.append(bytes(r.journal) + b"\xa5\x06\x24\x00\x09")  # a torn record
    st.close()
    st2 = JournalStore(d)
    rp = _boot(st2)
    assert rp.scanner.torn_bytes == 5 and rp.round == 1
    assert len(st2.segments()) == 2
    st2.append(journal.encode(R.J_BOOT, rp.seq + 1, 1, 1, 0, None, bytes(8)))
    st2.close()
    rp2 = _boot(JournalStore(d))
    assert rp2.seq == rp.seq + 1 and rp2.scanner.records == rp.scanner.records + 1
    rmdir(d)


def _drive(st, r, code, arg=0, dt=10):
    r.ev(code, arg, dt)
    # Rig already took the records; write them to the store as the shell would.
    if r.raw:
        st.append(r.raw, r.m.open_seq)


def test_rotation_bounds_size_and_keeps_the_unfinished_round():
    d = tmpdir("rot")
    st = JournalStore(d, segment_bytes=200, max_segments=3)
    r = Rig()
    r.keep = False
    for k in range(20):
        for code in (E.EV_COVER_ON, E.EV_CLASP_L_ON, E.EV_CLASP_R_ON, E.EV_SHAKE):
            _drive(st, r, code)
        _drive(st, r, E.EV_TIMER, 0, 5000)
        if k == 19:
            # The last round stays open across many more rotations.
            for _ in range(30):
                _drive(st, r, E.EV_SUPERVISOR_ON)
                _drive(st, r, E.EV_SUPERVISOR_OFF)
            break
        for code in (E.EV_BELL, E.EV_COVER_OFF):
            _drive(st, r, code)
        for f in (1, 2, 3):
            _drive(st, r, E.EV_FACE, f)
        _drive(st, r, E.EV_CONFIRM)
        _drive(st, r, E.EV_PAYOUT)
        assert len(st.segments()) <= 3
    assert len(st.segments()) > 3  # held back by the open round
    assert st.deleted > 0
    st.close()
    rp = _boot(JournalStore(d, segment_bytes=200, max_segments=3))
    assert rp.round == 20 and rp.state == E.ST_OPEN and rp.open_seq > 0
    names = os.listdir(d)
    assert len(names) == len(st.segments()) + 1
    rmdir(d)


def test_store_power_cut_inside_the_last_records_on_disk():
    d = tmpdir("cut")
    r = _rounds(2)
    data = bytes(r.journal)
    recs = journal.records(data)
    start = recs[-3].offset
    for cut in range(start, len(data) + 1, 5):
        for name in os.listdir(d):
            os.remove(d + "/" + name)
        st = JournalStore(d)
        st.append(data[:cut])
        st.close()
        st = JournalStore(d)
        rp = _boot(st)
        whole = [x for x in recs if x.offset + x.length <= cut]
        assert rp.seq == whole[-1].seq and rp.scanner.records == len(whole)
        # The next boot's records land in a new segment and replay after the tear.
        st.append(journal.encode(R.J_BOOT, rp.seq + 1, rp.round, rp.boot + 1, 0, None,
                                 bytes(8)))
        st.close()
        rp2 = _boot(JournalStore(d))
        assert rp2.seq == rp.seq + 1 and rp2.boot == rp.boot + 1
    rmdir(d)


def test_many_boots_keep_the_history():
    # Every boot (and every diag that adds a record) opens a segment; the
    # bound is in bytes, so a table reset often keeps its rounds.
    d = tmpdir("boots")
    r = _rounds(2)
    data = bytes(r.journal)
    st = JournalStore(d, segment_bytes=4096, max_segments=4)
    st.append(data)
    st.close()
    seq = journal.records(data)[-1].seq
    for _ in range(12):
        st = JournalStore(d, segment_bytes=4096, max_segments=4)
        rp = _boot(st)
        seq += 1
        st.append(journal.encode(R.J_BOOT, seq, rp.round, rp.boot + 1, 0, None, bytes(8)))
        st.close()
    rp = _boot(JournalStore(d))
    assert rp.round == 2 and rp.seq == seq
    assert len(os.listdir(d)) >= 13  # nothing deleted
    rmdir(d)


def test_an_empty_segment_is_not_torn():
    sc = journal.Scanner()
    assert sc.scan(b"") == [] and sc.torn_segments == 0 and sc.torn_bytes == 0


def test_a_record_longer_than_255_bytes_is_sealed_and_found():
    payload = bytes(range(256)) + bytes(100)
    data = journal.encode(R.J_METERS, 9, 1, 1, 0, None, payload)
    assert len(data) == 28 + 356 and data[2] | (data[3] << 8) == len(data)
    recs = journal.records(bytes(20) + data + data[:-1])
    assert len(recs) == 1 and recs[0].length == len(data) and recs[0].payload == payload
    assert journal.check(recs[0]) == 0


def test_the_longest_record_is_1024_bytes():
    ok = journal.encode(R.J_METERS, 1, 0, 1, 0, None, bytes(1024 - 28))
    too = journal.encode(R.J_METERS, 2, 0, 1, 0, None, bytes(1025 - 28))
    assert len(journal.records(ok)) == 1 and journal.records(too) == []


def test_bytes_with_no_record_at_all_are_torn():
    sc = journal.Scanner()
    assert sc.scan(b"\xa5" + bytes(40)) == [] and sc.torn_bytes == 41
    assert sc.torn_segments == 1 and sc.corrupt_bytes == 0


def test_a_record_missing_where_a_read_window_starts_is_damage_as_anywhere():
    # The boot reads a segment in 2 KiB windows; the windows are one stream:
    # a sequence number skipped at a window's first record is damage exactly
    # as it is in the middle of one, and the replay goes on after it. (The
    # rig's records are all REC_LEN long: the first window ends after
    # 2048 // REC_LEN of them.)
    r = Rig()
    while len(r.journal) < 2 * 2048:
        r.round(1 + r.m.round % 6, 2, 3)
    n = len(r.journal) // R.REC_LEN
    mv = memoryview(r.journal)
    for k in (30, 2048 // R.REC_LEN, n // 2 + 7):
        d = tmpdir("window")
        off = k * R.REC_LEN
        with open(d + "/j00000001.log", "wb") as f:  # record k left out
            f.write(mv[:off])
            f.write(mv[off + R.REC_LEN:])
        rs = RoundState()
        st = JournalStore(d)
        st.boot(rs.feed)
        st.close()
        assert rs.damaged >= 1 and rs.damage[0] == E.BAD_SEQ, k
        assert rs.seq == r.m.seq and rs.state == r.m.state, k
        rmdir(d)
