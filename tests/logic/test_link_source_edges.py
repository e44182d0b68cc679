# Edges of the journal as the floor link's outbox (device/link/source.py,
# OutboxStore.read_after): the place kept between two reads, records rotated
# away or a segment file gone meanwhile, and a repeated sequence number.
# What the link sends is the floor's copy of the money record: a record
# skipped, sent twice or out of order is a wrong copy. Portable.
from folderkit import rmdir, tmpdir
from link.source import OutboxStore

from sicbo import journal
from sicbo import records as R

REC = R.REC_LEN  # 36
SEG = 4 * REC  # four records a segment


def _rec(seq, payload=bytes(8)):
    return journal.encode(R.J_BOOT, seq, 0, 1, 0, None, payload)


class _Opening(OutboxStore):
    """A store that counts the segment files it names (each read_after that
    opens one names it first), and stops a read that keeps naming them."""

    def __init__(self, folder, **kw):
        self.named = 0
        OutboxStore.__init__(self, folder, **kw)

    def path(self, n):
        self.named += 1
        assert self.named < 1000, "a read that never ends"
        return OutboxStore.path(self, n)


def _read(st, seq, limit):
    buf = bytearray(R.MAX_LEN)
    n = st.read_after(seq, buf, limit)
    return [(r.seq, bytes(r.payload)) for r in journal.records(bytes(buf[:n]))]


def _seqs(st, seq, limit):
    return [s for s, _p in _read(st, seq, limit)]


def _held(st, limit=R.MAX_LEN, seq=0):
    """Every record the link reads after seq, as it reads: each call after
    the last record the one before it gave."""
    out = []
    while True:
        got = _read(st, seq, limit)
        if not got:
            return out
        out += got
        seq = got[-1][0]


def test_records_rotated_away_between_two_reads_are_not_sent():
    # The floor down, the table playing on past its backlog: segment 1 goes
    # while the link is inside it (after record 3). Its next read starts at
    # the oldest record the journal still holds, the gap that `lost` says,
    # and nothing of the deleted segment; record 3's number is that of a
    # segment still held.
    d = tmpdir("ls_rotated")
    st = OutboxStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=SEG)
    st.boot(lambda piece: None)
    for seq in range(1, 5):
        st.append(_rec(seq))
    assert _seqs(st, 0, 3 * REC) == [1, 2, 3]
    for seq in range(5, 13):
        st.append(_rec(seq))
    assert st.segments() == [2, 3, 4] and st.lost == 4 and st.oldest() == 5
    assert _seqs(st, 3, 3 * REC) == [5, 6, 7]
    assert [s for s, _p in _held(st, 3 * REC, 7)] == list(range(8, 13))
    st.close()
    rmdir(d)


def test_a_segment_read_in_small_batches_is_opened_once():
    # The link reads on from where its last batch stopped: a long segment in
    # one-record batches is not read again from its start for each of them.
    d = tmpdir("ls_batches")
    st = _Opening(d, segment_bytes=40 * REC)
    st.boot(lambda piece: None)
    for seq in range(1, 21):
        st.append(_rec(seq))
    st.named = 0
    assert [s for s, _p in _held(st, REC)] == list(range(1, 21))
    assert st.named == 1, st.named
    st.close()
    rmdir(d)


def test_a_segment_file_gone_from_the_folder_is_skipped_for_the_next():
    # The journal still lists segment 1, its file is gone (a file system that
    # lost it): the link reads on from segment 2, and the read ends.
    import os

    d = tmpdir("ls_gone")
    st = _Opening(d, segment_bytes=SEG, max_segments=8)
    st.boot(lambda piece: None)
    for seq in range(1, 9):
        st.append(_rec(seq))
    assert st.segments() == [1, 2, 3]
    os.remove(OutboxStore.path(st, 1))
    assert [s for s, _p in _held(st)] == [5, 6, 7, 8]
    st.close()
    rmdir(d)


def test_a_repeated_sequence_number_is_sent_once():
    # Record 2 twice (the second one another record with the same number, as
    # after a torn write): the floor gets the first, once, then record 3.
    d = tmpdir("ls_repeated")
    st = OutboxStore(d, segment_bytes=40 * REC)
    st.boot(lambda piece: None)
    st.append(_rec(1))
    st.append(_rec(2, b"first..."))
    st.append(_rec(2, b"again..."))
    st.append(_rec(3))
    assert _held(st) == [(1, bytes(8)), (2, b"first..."), (3, bytes(8))]
    st.close()
    rmdir(d)


def test_a_journal_of_several_segments_read_in_small_batches_opens_each_once():
    # The place kept between two reads is known by its segment's number,
    # whatever the sequence numbers in it: segment 2 starts at record 5,
    # segment 3 at record 9, ... and each is opened once however many
    # batches read it, not again from its start for each record.
    d = tmpdir("ls_batches_segments")
    st = _Opening(d, segment_bytes=SEG, max_segments=8)
    st.boot(lambda piece: None)
    for seq in range(1, 21):
        st.append(_rec(seq))
    held = [s for s in st.segs if s[1] > 0]
    assert [s[0] for s in held] == [1, 2, 3, 4, 5] and [s[1] for s in held] == [1, 5, 9, 13, 17]
    st.named = 0
    assert [s for s, _p in _held(st, REC)] == list(range(1, 21))
    assert st.named <= len(st.segs), (st.named, st.segs)  # the empty one after them too
    st.close()
    rmdir(d)
