# The link's source (device/link/outbox.py) over device/journal_store.py's
# JournalStore, read only: its segment list and files. A journal store that
# serves read_after itself (from what it just appended) makes this module
# unnecessary.

from sicbo.journal import u32, valid_at


class JournalSource:
    """The link's source over device/journal_store.py's JournalStore (read
    only: its segment list and files). last_seq: a callable giving the
    journal's last sequence number (the round machine knows it)."""

    def __init__(self, store, last_seq):
        self.store = store
        self._last_seq = last_seq
        # Where the first record after _seq starts: segment _n, offset _off
        # (its file _f, open while there is more to read in it).
        self._n = -1
        self._f = None
        self._off = 0
        self._seq = -1

    def last_seq(self):
        return self._last_seq()

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None

    def _has(self, n):
        for s in self.store.segs:
            if s[0] == n:
                return True
        return False

    def _start(self, seq):
        # The newest segment whose first record is at or below seq + 1: the
        # records after seq start there or later (else the oldest segment).
        self.close()
        segs = self.store.segs
        n = segs[0][0] if segs else -1
        for s in segs:
            if 0 < s[1] <= seq + 1:
                n = s[0]
        self._n = n
        self._off = 0
        self._seq = seq

    def _after(self, n):
        for s in self.store.segs:
            if s[0] > n:
                return s[0]
        return -1

    def read_after(self, seq, buf, limit):
        if seq != self._seq or not self._has(self._n):
            self._start(seq)
        size = len(buf)
        while True:
            if self._f is None and self._n >= 0:
                try:
                    self._f = open(self.store.path(self._n), "rb")
                except OSError:
                    pass  # rotated away: the next segment
            got = 0
            if self._f is not None:
                self._f.seek(self._off)
                got = self._f.readinto(buf) or 0
            if not got:
                nxt = self._after(self._n)
                self.close()  # at the end of the newest: reopened next time, to
                if nxt < 0:  # see what was appended since
                    return 0
                self._n = nxt
                self._off = 0
                continue
            # Skip what is not a record after seq: older records, damage.
            o = 0
            while o < got:
                k = valid_at(buf, o, got)
                if k:
                    if u32(buf, o + 4) > seq:
                        break
                    o += k
                elif o and got == size:
                    break  # perhaps a record cut by the buffer's end: read from it
                else:
                    o += 1
            if o:
                self._off += o
                continue  # read again, that record first in buf
            out = 0
            last = seq
            while out < got:
                k = valid_at(buf, out, got)
                if not k or (out and out + k > limit):
                    break
                s = u32(buf, out + 4)
                if s <= last:
                    break
                last = s
                out += k
            self._off += out
            self._seq = last
            return out
