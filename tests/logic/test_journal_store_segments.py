# The journal store's count of the current segment's bytes (JournalStore.size,
# what rotation compares with segment_bytes and access.py with the file's
# size): 0 while no segment is open for this run, however much the journal
# already holds; then each segment's bytes as they are on flash, from its
# checkpoint on after a rotation; no record lost across the segments. And
# the bytes a store wrote since it was opened (bytes_written, the journal's
# cost per round in the benches): none for what it found there.
import os

from folderkit import rmdir, tmpdir

from journal_store import JournalStore
from sicbo import journal
from sicbo import records as R
from sicbo.roundstate import RoundState

REC = R.REC_LEN  # 36


def _rec(seq):
    return journal.encode(R.J_BOOT, seq, 0, 1, 0, None, bytes(8))


def _file_size(st, n):
    return os.stat(st.path(n))[6]


def _seqs(st):
    out = []
    for data in st.read_all():
        out.extend([r.seq for r in journal.records(data)])
    return out


def test_a_store_opened_on_a_journal_has_no_bytes_in_a_current_segment():
    d = tmpdir("segs_opened")
    st = JournalStore(d, segment_bytes=4 * REC)
    assert st.size == 0 and st.files() == 0  # a new journal: nothing open, nothing held
    for seq in range(1, 4):
        st.append(_rec(seq))
    assert st.bytes_written == 3 * REC
    st.close()
    # opened again (diag, recall, the next boot before its replay): the
    # journal's bytes are in its segments, none in a segment of this run's
    st = JournalStore(d, segment_bytes=4 * REC)
    assert st.files() == 1 and st.total_bytes() == 3 * REC
    assert st.size == 0
    st.boot(RoundState().feed)  # a boot opens its own segment: empty
    assert st.files() == 2 and st.size == 0 and _file_size(st, st.segments()[-1]) == 0
    st.append(_rec(4))
    assert st.size == REC == _file_size(st, st.segments()[-1]) == st.bytes_written
    st.close()
    assert _seqs(JournalStore(d)) == [1, 2, 3, 4]
    rmdir(d)


def test_each_segment_counts_its_own_bytes_from_its_checkpoint_on():
    d = tmpdir("segs_rotated")
    cp = []

    def checkpoint():
        cp.append(1)
        return _rec(100 + len(cp))  # stands for the meters' record

    st = JournalStore(d, segment_bytes=3 * REC, max_segments=8, checkpoint=checkpoint)
    st.boot(RoundState().feed)
    seq = 0
    for _ in range(2):
        seq += 1
        st.append(_rec(seq))
    assert st.size == 2 * REC and st.files() == 1
    seq += 1
    st.append(_rec(seq))  # the segment is full: rotated, the checkpoint opens the next
    assert st.files() == 2 and len(cp) == 1
    assert st.size == REC == _file_size(st, st.segments()[-1])
    for _ in range(2):
        seq += 1
        st.append(_rec(seq))  # checkpoint + 2 records: full again
    assert st.files() == 3 and st.size == REC
    for n in st.segments()[:-1]:
        assert _file_size(st, n) == 3 * REC, (n, _file_size(st, n))
    st.close()
    assert _seqs(JournalStore(d)) == [1, 2, 3, 101, 4, 5, 102]
    rmdir(d)
