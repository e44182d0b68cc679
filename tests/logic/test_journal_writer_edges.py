# mprun-heap: controller
# Edges of the journal's writers and readers: the MAC chain of a store opened
# without a boot (as diag and access open it) catches up with the journal
# once, at its first append, and later appends do not read the journal
# again; a J_FAULT written without saying whether it is late is a fault of
# this boot (late 0); and a segment read through a window smaller than the
# largest record moves on past a window that holds no record boundary,
# giving it whole (damage for the scanners) instead of reading it again.
from appkit import Table
from chainkit import check_journal, started_key_file
from folderkit import rmdir, tmpdir

from journal_store import JournalStore
from sicbo import events as E
from sicbo import journal, logtext
from sicbo import records as R
from sicbo.roundstate import RoundState


class _Counting(JournalStore):
    """A store that notes each segment it reads."""

    def __init__(self, folder):
        JournalStore.__init__(self, folder)
        self.reads = []

    def pieces(self, n, buf):
        self.reads.append(n)
        return JournalStore.pieces(self, n, buf)


def test_a_store_opened_without_a_boot_catches_its_chain_up_once():
    d = tmpdir("chain_catchup_once")
    started_key_file(d)
    st = JournalStore(d)
    rs = RoundState()
    st.boot(rs.feed)
    st.chain_next(rs)
    for _ in range(3):
        st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    st.close()
    # As access.journal opens it: the records read, no boot, no chain_next.
    st = _Counting(d)
    rs = RoundState()
    for data in st.read_all():
        rs.feed(data)
    del st.reads[:]
    st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    # caught up: every segment read once (the one just opened for it too)
    assert st.reads == st.segments() == [1, 2], st.reads
    del st.reads[:]
    for _ in range(3):
        st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    assert st.reads == [], st.reads  # the chain knows its own records: no read again
    assert st.chain.bad == 0 and st.chain.seq == rs.seq + 1
    st.close()
    seqs = check_journal(d)
    assert seqs == list(range(1, 8)), seqs
    rmdir(d)


def test_a_fault_journaled_without_late_is_one_of_this_boot():
    t = Table()
    seq = t.m.seq
    t.ctl.journal_fault(E.F_TASK, E.K_OS, 9)
    rec = t.journal()[-1]
    assert rec.type == R.J_FAULT and rec.seq == seq + 1, rec
    assert (rec.p(R.P_STAGE), rec.p(R.P_KIND), rec.p(R.P_FAULT_DETAIL)) == (E.F_TASK, E.K_OS, 9)
    assert rec.p(R.P_LATE) == 0, rec.p(R.P_LATE)
    line = logtext.journal_line(rec)
    assert "journaled late" not in line and "earlier boot" not in line, line
    t.close()


def _rec(seq):
    return journal.encode(R.J_BOOT, seq, 0, 1, 0, None, bytes(8))


def test_a_small_window_gives_a_window_without_a_record_whole_and_reads_on():
    d = tmpdir("small_window")
    window = 64  # below R.MAX_LEN: a window may hold no record boundary
    junk = b"\xff" * window  # damage filling the first window
    recs = b"".join([_rec(seq) for seq in range(1, 6)])
    st = JournalStore(d)
    with open(st.path(1), "wb") as f:
        f.write(junk + recs)
    st = JournalStore(d)
    assert st.segments() == [1]
    got = []
    g = st.pieces(1, bytearray(window))
    for piece in g:
        got.append(bytes(piece))
        if len(got) > 40:  # the segment is 4 windows: far past it, the reader is stuck
            break
    g.close()
    assert len(got) <= 40, [len(p) for p in got[:8]]
    assert got[0] == junk, got[0]  # given whole, for the scanners to count
    assert b"".join(got) == junk + recs  # every byte once, in order
    seqs = []
    for piece in got[1:]:
        seqs.extend([r.seq for r in journal.records(piece)])
    assert seqs == [1, 2, 3, 4, 5], seqs
    assert st.last == 5
    rmdir(d)
