# The journal as the floor link's outbox (docs/floor.md): the JournalStore
# of a table with a floor link, which the link reads the records after its
# cursor from (link/outbox.py's source). A table without a link uses the
# plain JournalStore and never loads this code.

from journal_store import JournalStore
from sicbo import records as R
from sicbo.journal import u32, valid_at


class OutboxStore(JournalStore):
    def __init__(self, folder, **kw):
        JournalStore.__init__(self, folder, **kw)
        # read_after's place: after sequence number [0], segment [1] at offset [2]
        self._at = [-1, -1, 0]
        self._rf = None  # and that segment open

    def last_seq(self):
        return self.last

    def oldest(self):
        """The first sequence number the journal holds (0: none yet)."""
        for s in self.segs:
            if s[1] > 0:
                return s[1]
        return 0

    def judge_full(self):
        """`full`, as rotation's prune last said it, judged again without
        deleting anything: at start-up, once the floor's saved cursor is
        known (link.table.attach), so that a table reset on a full backlog
        follows its policy before its next rotation. Full: past the budget
        with records the floor has not acknowledged in the oldest segment
        (the stop policy keeps them), or, keeping on playing, records after
        the cursor already deleted (`lost` says up to which)."""
        segs = self.segs
        full = False
        if self.backlog_bytes:
            first = self.oldest()
            if not self.keep_when_full and first - 1 > self.acked:
                full = True
                self.lost = first - 1
            elif len(segs) > 1:
                after = self.after_oldest()
                if after <= 0 or after - 1 > self.acked:
                    full = self.total_bytes() > self.backlog_bytes
        self.full = full
        return full

    # ---- the outbox -----------------------------------------------------------

    def read_after(self, seq, buf, limit):
        """Whole records with sequence numbers above seq, in journal order and
        increasing, copied into buf[0:n]: as many as fit in `limit` bytes,
        but always the first one (len(buf) is at least the largest record).
        Returns n (0: none). Damage and records rotated away are skipped;
        the place it stopped is kept, so that the next call for what follows
        reads on from there (the floor link's, device/link/outbox.py)."""
        at = self._at
        if seq != at[0] or not self._holds(at[1]):
            self._start(seq)
        size = len(buf)
        while True:
            if self._rf is None and at[1] >= 0:
                try:
                    self._rf = open(self.path(at[1]), "rb")
                except OSError:
                    pass  # rotated away: the next segment
            got = 0
            if self._rf is not None:
                self._rf.seek(at[2])
                got = self._rf.readinto(buf) or 0
            if not got:
                nxt = -1
                for s in self.segs:
                    if s[0] > at[1]:
                        nxt = s[0]
                        break
                self._close_reader()  # reopened next time: what is appended since
                if nxt < 0:
                    return 0
                at[1] = nxt
                at[2] = 0
                continue
            # Skip what is not a record after seq: older records, damage.
            o = 0
            while o < got:
                k = valid_at(buf, o, got)
                if k:
                    if u32(buf, o + R.OFF_SEQ) > seq:
                        break
                    o += k
                elif o and got == size and buf[o] == R.MAGIC and (
                        got - o < R.OFF_LENGTH + 2
                        or o + (buf[o + R.OFF_LENGTH] | (buf[o + R.OFF_LENGTH + 1] << 8)) > got):
                    # A record's start whose length runs past the buffer's
                    # end: read again from it. Anything else is damage,
                    # stepped over here (not a whole buffer read per byte).
                    break
                else:
                    o += 1
            if o:
                at[2] += o
                continue  # read again, that record first in buf
            out = 0
            last = seq
            while out < got:
                k = valid_at(buf, out, got)
                if not k or (out and out + k > limit):
                    break
                s = u32(buf, out + R.OFF_SEQ)
                if s <= last:
                    break
                last = s
                out += k
            at[2] += out
            at[0] = last
            return out

    def _holds(self, n):
        for s in self.segs:
            if s[0] == n:
                return True
        return False

    def _start(self, seq):
        # The newest segment whose first record is at or below seq + 1: the
        # records after seq start there or later (else the oldest segment).
        self._close_reader()
        n = self.segs[0][0] if self.segs else -1
        for s in self.segs:
            if 0 < s[1] <= seq + 1:
                n = s[0]
        self._at[0] = seq
        self._at[1] = n
        self._at[2] = 0

    def _close_reader(self):
        if self._rf is not None:
            self._rf.close()
            self._rf = None

    def close(self):
        self._close_reader()
        JournalStore.close(self)
