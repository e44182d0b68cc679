# Edges of the journal store (journal_store.JournalStore): a provisioned
# table's boot reads each segment once, the MAC chain's catching up included;
# and, as the floor's outbox, the oldest segment's unacknowledged records are
# kept when the segment after it is a boot's empty one; and a store opened
# without a boot keeps the unfinished round's segment when no later one has
# a record to say where it ends.
from chainkit import check_journal, started_key_file
from link.source import OutboxStore

from journal_store import JournalStore
from roundkit import Rig, rmdir, tmpdir
from sicbo import journal
from sicbo import records as R
from sicbo.roundstate import RoundState

REC = R.REC_LEN  # 36
SEG = 4 * REC  # four records a segment
BUDGET = 10 * SEG  # the backlog: 40 records' worth


def _rec(seq):
    return journal.encode(R.J_BOOT, seq, 0, 1, 0, None, bytes(8))


class _Counting(JournalStore):
    """A store that notes each segment it reads."""

    def __init__(self, folder, **kw):
        JournalStore.__init__(self, folder, **kw)
        self.reads = []

    def pieces(self, n, buf):
        self.reads.append(n)
        return JournalStore.pieces(self, n, buf)


def test_a_provisioned_boot_reads_each_segment_once():
    d = tmpdir("edge_once")
    started_key_file(d)
    st = JournalStore(d)
    st.boot(RoundState().feed)
    r = Rig()
    r.sink = st.append
    r.round(1, 2, 3)
    r.round(4, 5, 6)
    st.close()
    # the next boot: replay, the chain readied (the key file knows every
    # record: nothing to catch up), then its first record
    st = _Counting(d)
    held = st.segments()
    rs = RoundState()
    st.boot(rs.feed)
    st.chain_next(rs)
    st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    st.close()
    assert st.reads == held, (st.reads, held)
    assert st.chain.bad == 0 and st.chain.seq == rs.seq + 1
    seqs = check_journal(d)
    assert seqs[-1] == r.m.seq + 1
    rmdir(d)


def _outbox(d):
    return OutboxStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET)


def _held(st):
    """The sequence numbers the link reads from the journal (read_after 0)."""
    buf = bytearray(R.MAX_LEN)
    out = []
    seq = 0
    while True:
        n = st.read_after(seq, buf, len(buf))
        if not n:
            return out
        for rec in journal.records(bytes(buf[:n])):
            out.append(rec.seq)
            seq = rec.seq


def test_unacknowledged_records_before_an_empty_boot_segment_stay_for_the_floor():
    d = tmpdir("edge_emptyboot")
    st = _outbox(d)
    st.boot(lambda piece: None)
    for seq in range(1, 4):  # three records, the floor down
        st.append(_rec(seq))
    st.close()
    st = _outbox(d)
    st.boot(lambda piece: None)  # reset before this boot wrote anything
    st.close()
    st = _outbox(d)
    st.boot(lambda piece: None)
    for seq in range(4, 14):  # rotations past the journal's own budget
        st.append(_rec(seq))
    assert st.deleted == 0 and not st.full and st.lost == 0
    assert _held(st) == list(range(1, 14))
    st.close()
    rmdir(d)


def test_an_empty_boot_segment_does_not_keep_acknowledged_records():
    # Records the floor has acknowledged are deleted past the budget even
    # when a boot reset before it wrote left an empty segment after them.
    for keep_when_full in (True, False):
        d = tmpdir("edge_emptyacked")
        st = OutboxStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET,
                         keep_when_full=keep_when_full)
        st.boot(lambda piece: None)
        for seq in range(1, 4):
            st.append(_rec(seq))
        st.close()
        st = OutboxStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET,
                         keep_when_full=keep_when_full)
        st.boot(lambda piece: None)  # reset before this boot wrote anything
        st.close()
        st = OutboxStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET,
                         keep_when_full=keep_when_full)
        st.boot(lambda piece: None)
        for seq in range(4, 84):
            st.acked = seq - 1  # the floor keeps up
            st.append(_rec(seq))
        assert not st.full and st.lost == 0, (keep_when_full, st.full, st.lost)
        assert st.total_bytes() <= BUDGET and st.oldest() > 3, (st.total_bytes(), st.oldest())
        assert st.judge_full() is False
        held = _held(st)
        assert held == list(range(held[0], 84)), held
        st.close()
        rmdir(d)


def test_a_store_read_lazily_keeps_the_unfinished_round_when_no_later_segment_has_a_record():
    # Opened without a boot (diag, a tool: each segment's first record read
    # only when asked), over its budget: the segments after the oldest hold
    # no record (boots that reset before they wrote), so nothing says where
    # the oldest one's records end. With a round unfinished since record 2
    # it stays; without one it may go.
    for keep, left in ((2, 2), (0, 1)):
        d = tmpdir("edge_lazyround")
        st = JournalStore(d)
        st.boot(lambda piece: None)
        for seq in range(1, 4):
            st.append(_rec(seq))
        st.close()
        for _boot in range(2):
            st = JournalStore(d)
            st.boot(lambda piece: None)  # reset before this boot wrote anything
            st.close()
        # The second boot took the first's empty segment again: one of them.
        st = JournalStore(d, segment_bytes=REC, max_segments=2)  # a budget of two records
        assert [s[1] for s in st.segs] == [-1, -1]
        st.prune(keep)
        assert len(st.segs) == left and st.deleted == 2 - left, (keep, st.segs)
        if keep:
            seqs = []
            for piece in st.read_all():
                seqs.extend(rec.seq for rec in journal.records(bytes(piece)))
            assert seqs == [1, 2, 3], seqs
        st.close()
        rmdir(d)


def test_the_oldest_record_is_found_past_a_first_segment_with_none():
    # A board reset before its first boot wrote anything leaves an empty
    # first segment: the journal's oldest record is in the next one.
    d = tmpdir("edge_oldest")
    st = _outbox(d)
    st.boot(lambda piece: None)
    assert st.oldest() == 0  # nothing journaled yet
    st.f.write(_rec(1)[:5])  # its first record torn by a power cut: no record
    st.close()
    st = _outbox(d)
    st.boot(lambda piece: None)
    for seq in range(1, 4):
        st.append(_rec(seq))
    assert st.segs[0][1] == 0 and st.oldest() == 1, st.segs
    st.close()
    rmdir(d)
