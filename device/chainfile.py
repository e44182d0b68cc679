# The journal's MAC chain (sicbo/chain.py) on the board's filesystem: its key
# file beside the journal, the records sealed as journal_store.py writes
# them, and the chain caught up with records its key file missed. Loaded only
# on a provisioned board (a key file, or a provisioning taken at boot:
# resumption.stage_chain), so a board without a chain holds none of this code.
#
# The order that keeps a power cut harmless at any moment: the records are
# written and flushed, then the key file (for the next sequence number) is
# written to a temporary file and renamed over the old one. A cut before the
# rename leaves the key file behind the journal, never ahead: the next boot
# moves it on past what the journal holds (catch_up). A record torn by the
# cut was never acted on; its number is signed again, for the record that
# takes its place.

import os
import struct
import time
from binascii import crc32

from micropython import const

from sicbo import records as R
from sicbo.chain import Chain, parse

_KEY_TMP = const("chain.tmp")  # written, then renamed over the key file


def load(path):
    """The StoredChain of the key file at path, or None when the file is not
    one (damaged: the records then go without MACs)."""
    with open(path, "rb") as f:
        data = f.read()
    return StoredChain(data, path) if parse(data) else None


class StoredChain(Chain):
    """A Chain with its key file (path)."""

    def __init__(self, data, path):
        Chain.__init__(self, data)
        self._path = path
        self._tmp = path[:path.rfind("/") + 1] + _KEY_TMP
        self._hdr = bytearray(R.HEADER)  # write()'s: a record's header as sealed
        self._tail = bytearray(R.MAC_LEN + R.CRC_LEN)  # and its MAC and CRC

    def save(self):
        """The key file as of now: written, then renamed over the old one."""
        with open(self._tmp, "wb") as f:
            f.write(self.pack())
        os.rename(self._tmp, self._path)

    def write(self, f, data):
        """Write the records data (back to back, as the journal's writers make
        them) to the file f, each one signs() takes with its MAC, the others
        as they are: its header, its payload and its MAC and CRC, piece by
        piece (no copy of the records is made). Returns the bytes written."""
        n = len(data)
        src = data if type(data) is memoryview else memoryview(data)
        off = 0
        out = 0
        while off < n:
            length = data[off + R.OFF_LENGTH] | (data[off + R.OFF_LENGTH + 1] << 8)
            if not self.signs(data, off):
                if not data[off + R.OFF_FLAGS] & R.FLAG_MAC:
                    self.unsigned += 1
                f.write(src[off:off + length])
                out += length
                off += length
                continue
            hdr = self._hdr
            for i in range(R.HEADER):
                hdr[i] = data[off + i]
            whole = length + R.MAC_LEN
            hdr[R.OFF_LENGTH] = whole & 0xFF
            hdr[R.OFF_LENGTH + 1] = whole >> 8
            hdr[R.OFF_FLAGS] |= R.FLAG_MAC
            body = src[off + R.HEADER:off + length - R.CRC_LEN]
            if hdr[R.OFF_TYPE] == R.J_METERS and type(data) is bytes:
                body = memoryview(bytearray(body))  # the head goes into its payload
            m = self.sign(hdr, body)
            t = self._tail
            for i in range(R.MAC_LEN):
                t[i] = m[i]
            struct.pack_into("<I", t, R.MAC_LEN, crc32(m, crc32(body, crc32(hdr))))
            f.write(hdr)
            f.write(body)
            f.write(t)
            out += whole
            off += length
        return out

    def catch_up(self, store, buf=None, whole=False):
        """Follow the journal's records that the key file does not know, from
        the newest segment that starts at or before the chain's next number.
        whole: store has read every segment (its boot): store.last,
        the highest number held, then says whether there is anything to
        follow."""
        self.ready = True
        if whole and store.last < self.seq:
            return  # the key file knows every record: the usual boot
        segs = store.segs
        start = 0
        for i in range(len(segs)):
            if 0 < segs[i][1] <= self.seq:
                start = i
        if buf is None:
            buf = store.read_buffer()
        from sicbo.chainfollow import follow_all

        for i in range(start, len(segs)):
            for piece in store.pieces(segs[i][0], buf):
                follow_all(self, piece)
        import memory

        memory.forget(("sicbo.chainfollow",))


def take(ctl):
    """At boot, after the replay (resumption.stage_chain): a provisioning that
    `sicbo deploy --provision` left beside the journal taken (its key file
    written, the provisioning file deleted: the first key does not stay on
    the board), the round machine's numbers moved past the chain's, then the
    chain's first record, J_PROVISION, written under its first key, if it is
    not in the journal yet (a power cut can come between any two of these)."""
    from journal_store import KEY_NAME, PROVISION_NAME

    store = ctl.store
    m = ctl.m
    path = store.folder + "/" + PROVISION_NAME
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        data = None
    if data is not None:
        old = store.open_chain()
        if not parse(data):
            (ctl.log or print)("sicbo: provisioning file damaged: not taken (provision again)")
        elif old is None or old.ident != struct.unpack_from("<I", data, 4)[0]:
            new = StoredChain(data, store.folder + "/" + KEY_NAME)
            new.previous = old.ident if old is not None else 0
            # Sealing with the new chain from now on, its key file written
            # first: then the provisioning file goes.
            store.chain = new
            new.ready = True  # nothing of it in the journal yet
            new.save()
            del new
        del data
        os.remove(path)
    ch = store.open_chain()
    if ch is None:
        return
    store.chain_next(m)
    if not ch.first:
        now = time.ticks_ms()
        b = bytearray(R.PAYLOAD)
        struct.pack_into("<II", b, R.P_CHAIN, ch.ident, ch.previous)
        store.append(m.encode_next(R.J_PROVISION, b, now, ctl.wall.seconds(now)), m.open_seq)
        (ctl.log or print)("sicbo: provisioning %d taken: the journal's MAC chain starts at "
                           "seq %d" % (ch.ident, ch.first))
