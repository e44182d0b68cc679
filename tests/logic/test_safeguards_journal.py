# The journal's retention (journal_store.JournalStore prune/rotate): which
# segment may go, to the record, with and without an unfinished round, the
# byte budget and the file cap at their edges, the newest segment kept, and
# files that are not segments left alone.
import os

from folderkit import rmdir, tmpdir

from journal_store import JournalStore
from sicbo import journal
from sicbo import records as R

REC = R.REC_LEN  # 36


def _rec(seq, rtype=R.J_BOOT):
    return journal.encode(rtype, seq, 0, 1, 0, None, bytes(8))


def _recs(first, n):
    return b"".join([_rec(s) for s in range(first, first + n)])


def _store(d, segments, segment_bytes=1, max_segments=2):
    """A store whose segments hold the given (first seq, count) runs of
    records, written as the shell writes them; returns it open (a new, empty
    segment is not opened)."""
    st = JournalStore(d, segment_bytes=1 << 20, max_segments=max_segments)
    for first, n in segments:
        st._open_new()
        if n:
            st.append(_recs(first, n))
        else:
            # No record: a boot's segment whose first record a power cut
            # tore (an empty one is taken again by the next _open_new).
            st.f.write(_rec(first or 1)[:5])
            st.f.flush()
    st.segment_bytes = segment_bytes
    return st


def _firsts(st):
    return [s[1] for s in st.segs]


def test_the_unfinished_round_keeps_its_segment_to_the_record():
    for keep, left in ((0, [7]), (3, [1, 4, 7]), (4, [4, 7]), (5, [4, 7]), (6, [4, 7]),
                       (7, [7]), (8, [7]), (9, [7])):
        d = tmpdir("keep")
        st = _store(d, ((1, 3), (4, 3), (7, 3)))
        st.prune(keep)
        assert _firsts(st) == left, (keep, _firsts(st))
        assert st.deleted == 3 - len(left)
        names = sorted(os.listdir(d))
        assert names == ["j%08d.log" % s[0] for s in st.segs], names
        st.close()
        rmdir(d)


def test_a_store_opened_without_boot_reads_the_next_segments_first_record():
    for keep, left in ((3, 3), (4, 2), (5, 2), (7, 1)):
        d = tmpdir("lazy")
        _store(d, ((1, 3), (4, 3), (7, 3))).close()
        st = JournalStore(d, segment_bytes=1, max_segments=2)
        assert _firsts(st) == [-1, -1, -1]
        st.prune(keep)
        assert len(st.segs) == left, (keep, st.segs)
        assert st.segs[-1][0] == 3
        st.close()
        rmdir(d)


def test_the_byte_budget_at_its_edge():
    d = tmpdir("budget")
    st = _store(d, ((1, 1), (2, 1)), segment_bytes=REC, max_segments=2)
    st.prune()
    assert st.total_bytes() == 2 * REC and len(st.segs) == 2  # at the budget: kept
    st.close()
    rmdir(d)
    d = tmpdir("budget2")
    st = _store(d, ((1, 1), (2, 1), (3, 1)), segment_bytes=REC, max_segments=2)
    st.prune()
    assert _firsts(st) == [2, 3] and st.deleted == 1 and st.total_bytes() == 2 * REC
    st.close()
    rmdir(d)


def test_the_newest_segment_with_records_is_never_deleted():
    d = tmpdir("newest")
    st = _store(d, ((1, 3), (4, 3)))
    st._open_new()  # a boot's new segment, empty yet
    st._open_new()  # and another boot that wrote nothing: the same one again
    st.prune()
    assert _firsts(st) == [4, 0] and st.segments()[-1] == 3
    st.close()
    rmdir(d)


def test_the_file_cap_at_its_edge():
    d = tmpdir("files")
    st = _store(d, [(k, 1) for k in range(1, 9)], segment_bytes=1 << 20, max_segments=2)
    assert st.max_files == 8
    st.prune()
    assert len(st.segs) == 8 and st.deleted == 0  # at the cap: kept
    st._open_new()
    st.append(_rec(9))
    st.prune()
    assert len(st.segs) == 8 and _firsts(st)[0] == 2 and st.deleted == 1
    st.close()
    rmdir(d)
    assert JournalStore(tmpdir("min"), max_segments=1).max_segments == 2


def test_rotation_heads_the_new_segment_with_the_checkpoint_and_prunes():
    d = tmpdir("rotate")
    seq = [0]

    def checkpoint():
        seq[0] += 1
        return _rec(seq[0], R.J_METERS)

    st = JournalStore(d, segment_bytes=3 * REC, max_segments=2, checkpoint=checkpoint)
    st.boot(lambda piece: None)
    for _ in range(30):
        seq[0] += 1
        st.append(_rec(seq[0]))
        assert st.total_bytes() <= 2 * 3 * REC + 3 * REC
    st.close()
    # Each segment opened by rotation starts with the checkpoint's record.
    for s in st.segs[1:]:
        with open(st.path(s[0]), "rb") as f:
            head = f.read(REC)
        assert head[1] == R.J_METERS and head[4] == s[1]
    assert st.deleted > 0
    rmdir(d)


def test_files_that_are_not_segments_are_left_alone():
    d = tmpdir("foreign")
    others = ("j+0000001.log", "j-0000001.log", "j0000001.log", "j000000001.log",
              "j0000000a.log", "k00000001.log", "j00000001.txt", "J00000001.log",
              "j00000001.log.bak", "j 0000001.log")
    for name in others:
        with open(d + "/" + name, "wb") as f:
            f.write(_recs(1, 3))
    st = JournalStore(d, segment_bytes=1, max_segments=2)
    assert st.segments() == []
    st.boot(lambda piece: None)
    assert st.segments() == [1]
    st.append(_recs(1, 2))
    st.prune()
    st.close()
    names = os.listdir(d)
    for name in others:
        assert name in names, name
    assert "j00000001.log" in names
    for name in names:
        os.remove(d + "/" + name)
    os.rmdir(d)


def test_segment_numbers_go_on_after_deletions():
    d = tmpdir("numbers")
    st = _store(d, ((1, 1), (2, 1), (3, 1)))
    st.prune()
    st._open_new()
    assert st.segments()[-1] == 4
    st.close()
    st.append(_rec(4))
    st.close()
    st = JournalStore(d)
    st.boot(lambda piece: None)
    assert st.segments()[-1] == 5
    st.close()
    files = len(os.listdir(d))
    # A boot that wrote nothing leaves segment 5 empty: the next boot takes
    # it again, not a file more per boot (a full filesystem's boot loop).
    st = JournalStore(d)
    st.boot(lambda piece: None)
    assert st.segments()[-1] == 5 and len(os.listdir(d)) == files
    st.close()
    rmdir(d)


def test_read_back_through_the_window_is_byte_exact():
    # A segment far larger than the read window, with a long record and
    # damage in it, comes back whole, piece after piece, each ending on a
    # record boundary.
    d = tmpdir("window")
    data = bytearray()
    for s in range(1, 120):
        if s == 40:
            data.extend(journal.encode(R.J_METERS, s, 0, 1, 0, None, bytes(range(200)) * 4))
        elif s == 80:
            data.extend(b"\xa5" * 1500)  # garbage longer than a record
            data.extend(_rec(s))
        else:
            data.extend(_rec(s))
    st = JournalStore(d)
    st.append(data)
    st.close()
    st = JournalStore(d)
    # Each piece compared where it lies, not joined into a second copy of
    # the 6.6 KB: on a board (sicbo test --on) the firmware's modules share
    # the heap with them.
    at = n = 0
    for piece in st.read_all():
        assert data[at:at + len(piece)] == piece, (at, len(piece))
        at += len(piece)
        n += 1
    assert at == len(data) and n > 2
    seqs = [r.seq for r in journal.records(data)]
    assert seqs == list(range(1, 120))
    assert st.segs[0][1] == 1
    st.close()
    rmdir(d)


def test_an_empty_next_segment_keeps_the_unfinished_round():
    # The round started in the first segment; the next one has no record yet
    # (a boot's segment): nothing says the first is all before the round.
    d = tmpdir("emptynext")
    st = _store(d, ((1, 3), (0, 0), (4, 3)))  # the middle one empty
    st.prune(2)
    assert _firsts(st) == [1, 0, 4] and st.deleted == 0
    st.prune(0)
    assert _firsts(st) == [4]
    st.close()
    rmdir(d)


def test_one_empty_segment_at_the_end_and_the_bytes_of_each_deleted():
    d = tmpdir("oneempty")
    st = _store(d, ((1, 3), (4, 3)))
    st._open_new()  # a boot's segment, empty
    st.prune()
    assert _firsts(st) == [4, 0] and st.deleted == 1
    st.close()
    rmdir(d)
    # Segments of different sizes: the bytes counted off are the deleted one's.
    d = tmpdir("sizes")
    st = _store(d, ((1, 3), (4, 1), (5, 1)), segment_bytes=40, max_segments=2)
    st.prune()
    assert _firsts(st) == [4, 5] and st.total_bytes() == 2 * REC
    st.close()
    rmdir(d)


def test_the_tables_journal_keeps_sixteen_kib_in_four_segments():
    # The journal of a table without a floor link (startup opens it with the
    # defaults): 4 segments of 4 KiB (docs/journal.md). Appended round by
    # round far past that, it holds the newest records, never more than the
    # budget plus the segment being written.
    d = tmpdir("default_budget")
    st = JournalStore(d)
    st.boot(lambda piece: None)
    assert (st.segment_bytes, st.max_segments) == (4096, 4)
    for first in range(1, 2000, 10):
        st.append(_recs(first, 10))
        assert st.total_bytes() <= 4 * 4096 + 4096 + 10 * REC
    assert len(st.segments()) <= 5
    assert st.total_bytes() > 3 * 4096  # the history kept is the budget's, not less
    firsts = _firsts(st)
    assert firsts[0] > 1 and st.last == 2000
    st.close()
    rmdir(d)
