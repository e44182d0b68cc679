# The journal on the board's filesystem: the thin I/O shell around the pure
# record format of sicbo/journal.py (docs/journal.md).
#
# Segments are files <folder>/j<8-digit number>.log, appended to in order.
# append() writes then flushes before returning: the caller acts on an event
# only after its records are on flash. Rotation starts a new segment once the
# current one holds segment_bytes, and deletes the oldest segments while the
# journal holds more than segment_bytes * max_segments bytes, but never one
# holding records of the unfinished round (the caller passes keep_seq, the
# sequence number of that round's first record), and never the newest segment
# that has records. Every boot starts a new segment, so a record torn by a
# power cut stays at the end of its segment; only rotation deletes, so boots
# and resets never push history out.
#
# With a floor link (docs/floor.md) the journal is also the outbox: the link
# reads the records after its cursor (link/source.py's OutboxStore, loaded
# only for a table with a link: read_after), and rotation keeps every
# record the floor has not acknowledged (`acked`), up to `backlog_bytes` of
# journal; past it the table's policy decides: keep playing (the oldest
# unacknowledged records go, `lost` says up to which; the floor sees the
# gap) or keep them and take no new round (`full`).
#
# With a key file in the folder (KEY_NAME: the table was provisioned, see
# sicbo/chain.py and docs/tamper-evidence.md) every record is sealed with its
# MAC as it is written, and the key file is written again after each append's
# flush: a power cut between the two leaves the key file behind the journal,
# never ahead, and the chain catches up from the journal's records before it
# seals again (chainfile.StoredChain.catch_up).
#
# Only open/read/readinto/write/flush and os.listdir/stat/remove/mkdir/rename:
# the same code runs on the unix port and on the ESP32's littlefs.

import os

from micropython import const

from sicbo import records as R
from sicbo.journal import u32, valid_at

_WINDOW = const(2048)  # the read window: two records of the largest (R.MAX_LEN)
_PREFIX = const("j")
_SUFFIX = const(".log")
KEY_NAME = "chain.key"  # the chain's key file (chainfile.py), in the journal's folder
PROVISION_NAME = "chain.new"  # a provisioning that the next boot takes (startup.py)


def _number(name):
    if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
        return -1
    digits = name[len(_PREFIX):-len(_SUFFIX)]
    if len(digits) != 8:
        return -1
    for ch in digits:
        if ch < "0" or ch > "9":
            return -1
    return int(digits)


def _boundary(buf, have, eof, store):
    """(end, first_seq): where the bytes buf[:have] stop being whole records
    (the rest may be a record cut by the end of the window), and the sequence
    number of the first valid record (0 if none). At eof everything counts.
    The store learns the highest sequence number it holds."""
    off = 0
    first = 0
    while off < have:
        n = valid_at(buf, off, have)
        if n:
            seq = u32(buf, off + R.OFF_SEQ)
            if not first:
                first = seq
            if seq > store.last:
                store.last = seq
            off += n
        elif not eof and have - off < R.MAX_LEN:
            break  # possibly a record that continues past the window
        else:
            off += 1  # damage: the scanners count it
    return off, first


class JournalStore:
    def __init__(self, folder, segment_bytes=4096, max_segments=4, checkpoint=None,
                 backlog_bytes=0, keep_when_full=False):
        # checkpoint: None, or a callable returning the sealed record(s) that
        # start each segment opened by rotation (meters.checkpoint).
        # backlog_bytes: 0 without a floor link; else the journal kept for
        # records the floor has not acknowledged; keep_when_full: past it,
        # keep them (and take no new round) rather than let the oldest go.
        self.folder = folder
        self.checkpoint = checkpoint
        self.segment_bytes = segment_bytes
        self.max_segments = max(2, max_segments)
        # Boots open segments that rarely fill: beyond this many files the
        # next rotation deletes the oldest too (littlefs spends a block on
        # each file), however few bytes they hold.
        self.max_files = 4 * self.max_segments + backlog_bytes // segment_bytes
        self.backlog_bytes = backlog_bytes
        self.keep_when_full = keep_when_full
        self.acked = 0  # the floor stored every record up to this one (the link's cursor)
        self.full = False  # the backlog is at its budget (unacknowledged records kept)
        self.lost = 0  # unacknowledged records deleted up to this sequence number
        self.last = 0  # the highest sequence number held
        try:
            os.mkdir(folder)
        except OSError:
            pass  # already there
        self.segs = []  # [[number, first seq (0: no record yet)], ...] oldest first
        for name in os.listdir(folder):
            n = _number(name)
            if n >= 0:
                self.segs.append([n, -1])  # first seq read lazily
        self.segs.sort()
        self.f = None
        self.size = 0
        self.appends = 0
        self.bytes_written = 0
        self.deleted = 0
        # The MAC chain, taken from its key file when first needed (open_chain):
        # at boot after the replay and its read buffer (resumption.stage_chain),
        # so that it is not in the heap the replay needs at its fullest.
        self.chain = None  # chainfile.StoredChain: the table is provisioned
        self.chain_damaged = False  # a key file that is not one: records without MACs
        self._keys_read = False
        self._read_whole = False
        self.key_saves = 0

    def path(self, n):
        return "%s/%s%08d%s" % (self.folder, _PREFIX, n, _SUFFIX)

    def read_buffer(self):
        """The one buffer the journal is read through, a window of two of the
        largest records (pieces() slides it along a segment). Allocate it
        early, before the heap is fragmented."""
        return bytearray(_WINDOW)

    def pieces(self, n, buf):
        """Yield memoryviews of segment n's bytes read into buf, each ending
        on a record boundary (a larger file comes in several windows), so
        that nothing grows while a boot reads its journal."""
        mv = memoryview(buf)
        size = len(buf)
        have = 0
        seg = None
        for s in self.segs:
            if s[0] == n:
                seg = s
        try:
            f = open(self.path(n), "rb")
        except OSError:
            return  # gone: only rotation deletes, and it lists what it keeps
        with f:
            while True:
                got = f.readinto(mv[have:])  # have < size here: each yield keeps less
                eof = not got and have < size
                have += got or 0
                if not eof and have < size:
                    continue
                end, first = _boundary(buf, have, eof, self)
                if seg is not None and seg[1] < 0:
                    seg[1] = first
                if end == 0 and not eof:
                    end = have  # no record fits: damage, let the scanners count it
                yield mv[:end]
                if eof:
                    return
                rest = have - end
                if rest:
                    mv[0:rest] = buf[end:have]  # at most MAX_LEN bytes
                have = rest

    def read_all(self, buf=None):
        """Yield the bytes of every segment, oldest first, as memoryviews of
        one buffer (valid until the next step): diag, recall, tests."""
        if buf is None:
            buf = self.read_buffer()
        for s in self.segs:
            for piece in self.pieces(s[0], buf):
                yield piece

    def segments(self):
        """Segment numbers, oldest first."""
        return [s[0] for s in self.segs]

    def files(self):
        """How many segment files the journal has."""
        return len(self.segs)

    def boot(self, feed, buf=None):
        """Give every segment's bytes, oldest first, to feed(memoryview) (the
        round machine, its meters with it), then open a new segment for this boot's
        records. buf: the read buffer (read_buffer()), allocated early."""
        for piece in self.read_all(buf):
            feed(piece)
        self._read_whole = True  # self.last is the highest number held (the chain's catch_up)
        # No pruning here: only rotation deletes, right after it has written a
        # checkpoint (the meters of what goes) at the head of the new segment.
        # A boot, or diag opening the journal to add a record, deletes nothing.
        self._open_new()

    def _open_new(self, first=b""):
        if self.f is not None:
            self.f.close()
            self.f = None
        segs = self.segs
        n = segs[-1][0] + 1 if segs else 1
        if not first and segs and not segs[-1][1]:
            # The newest segment left empty by a boot that could write
            # nothing (a full filesystem) is taken again: a boot loop must
            # not add a file per boot until the filesystem has no inode left.
            try:
                if not os.stat(self.path(n - 1))[6]:
                    n -= 1
                    segs.pop()
            except OSError:
                pass
        self.f = open(self.path(n), "wb")
        segs.append([n, 0])
        self.size = 0
        if first:
            self._write(first)

    def _write(self, data):
        f = self.f
        if f is None:
            raise OSError("journal segment not open")
        ch = self.open_chain()
        if ch is None:
            f.write(data)
            written = len(data)
        else:
            if not ch.ready:
                ch.catch_up(self, None, self._read_whole)
            written = ch.write(f, data)  # each record with its MAC
        f.flush()
        if ch is not None:
            ch.save()  # after the flush: never ahead of the journal
            self.key_saves += 1
        seg = self.segs[-1]
        if seg[1] <= 0 and len(data) >= 8:
            seg[1] = u32(data, R.OFF_SEQ)
        o = 0
        n = len(data)
        while o + R.OFF_SEQ + 4 <= n:  # the last record's number
            self.last = u32(data, o + R.OFF_SEQ)
            o += data[o + R.OFF_LENGTH] | (data[o + R.OFF_LENGTH + 1] << 8)
        self.size += written
        self.bytes_written += written

    def append(self, data, keep_seq=0):
        """Write sealed records (bytes or memoryview) and flush. keep_seq: the
        sequence number of the unfinished round's first record (0: none)."""
        if self.f is None:
            self._open_new()
        self._write(data)
        self.appends += 1
        if self.size >= self.segment_bytes:
            self.rotate(keep_seq)

    def rotate(self, keep_seq=0, first=b""):
        """Start a new segment (its first bytes: `first`, or what the checkpoint
        callable returns) and delete what may be deleted."""
        if not first and self.checkpoint is not None:
            first = self.checkpoint()
        self._open_new(first)
        self.prune(keep_seq)

    def prune(self, keep_seq=0):
        """Delete the oldest segments while the journal holds more than its
        budget of segment_bytes * max_segments, or more than max_files files.
        In bytes first: every boot starts a segment, and a few resets must not
        push history out; the file cap bounds a boot loop."""
        segs = self.segs
        # The newest segment that has records is never deleted.
        newest = len(segs) - 1
        while newest > 0 and segs[newest][1] == 0:
            newest -= 1
        total = self.total_bytes()
        budget = self.segment_bytes * self.max_segments
        self.full = False
        while (total > budget or len(segs) > self.max_files) and newest > 0:
            # All of segs[0]'s records come before `after`: deletable unless
            # the unfinished round started inside segs[0].
            after = self.after_oldest()
            if keep_seq and (after <= 0 or after > keep_seq):
                break
            if self.backlog_bytes and (after <= 0 or after - 1 > self.acked):
                # segs[0] holds records the floor has not acknowledged: kept
                # for it while the journal is within the backlog's budget.
                if total <= self.backlog_bytes:
                    break
                self.full = True
                if self.keep_when_full:
                    break
                self.lost = after - 1 if after > 0 else self.last
            try:
                total -= os.stat(self.path(segs[0][0]))[6]
                os.remove(self.path(segs[0][0]))
            except OSError:
                pass
            segs.pop(0)
            self.deleted += 1
            newest -= 1

    def after_oldest(self):
        """The first sequence number after the oldest segment's records: the
        first record of the next segment that has any (a boot reset before
        it wrote a record leaves an empty one between), 0 if none has."""
        segs = self.segs
        for i in range(1, len(segs)):
            s = segs[i]
            if s[1] < 0:
                # Not read at boot (a store opened without boot()): its first
                # record, through a small window, never a whole-file read.
                g = self.pieces(s[0], bytearray(R.MAX_LEN))
                for _piece in g:
                    break
                g.close()
            if s[1] > 0:
                return s[1]
        return 0

    def total_bytes(self):
        total = 0
        for s in self.segs:
            try:
                total += os.stat(self.path(s[0]))[6]
            except OSError:
                pass
        return total

    def close(self):
        if self.f is not None:
            self.f.close()
            self.f = None

    # ---- the chain (chainfile.py) ----------------------------------------------------

    def open_chain(self):
        """The chain (chainfile.StoredChain), its key file read the first time,
        or None: the table is not provisioned (no chain code is loaded), or
        its key file is damaged (chain_damaged)."""
        if not self._keys_read:
            self._keys_read = True
            try:
                os.stat(self.folder + "/" + KEY_NAME)
            except OSError:
                return None
            from chainfile import load

            self.chain = load(self.folder + "/" + KEY_NAME)
            self.chain_damaged = self.chain is None
        return self.chain

    def chain_next(self, rs, buf=None):
        """Before a writer (the round machine, diag: a RoundState that read the
        journal) makes records: the chain caught up with the journal, and rs's
        sequence numbers moved past the chain's, should the key file be ahead
        of the journal (records lost after they were flushed): a key is never
        asked to sign a number it has moved past. buf: a read buffer for
        catching up (read_buffer()), else one is made only if it must."""
        ch = self.open_chain()
        if ch is None:
            return
        if not ch.ready:
            ch.catch_up(self, buf, self._read_whole)
        if ch.seq > rs.seq + 1:
            rs.seq = ch.seq - 1

    def head(self):
        """The chain's head, "SEQ:HASH" (sicbo.chain.head_text), or None
        without a chain or before its first record: what the floor link
        publishes (retained) on the table's head topic."""
        ch = self.open_chain()
        return ch.head_text() if ch is not None else None
