# The journal's MAC chain (docs/tamper-evidence.md).
#
# Each record the chain seals carries a MAC: HMAC-SHA256 under the key of its
# own sequence number, truncated to R.MAC_LEN bytes, over the record's bytes
# before the MAC (its header says FLAG_MAC and its length counts the MAC; the
# CRC covers it). The key then moves on, one way, and the old one is
# overwritten where it was kept:
#     K(s + 1) = SHA-256("sicbo-key" | u32 s | K(s))
# so a board read out later holds no key that signed its past. A hash chain
# links the records that verify, in order:
#     H(s) = SHA-256(H(before) | the record's bytes before the MAC | its MAC)[:R.CHAIN_LEN]
# from zeros at the chain's first record (J_PROVISION). The head (s, H(s))
# goes off the table (meters checkpoints, the floor link) and fixes every
# record up to s, even against someone who reads a later key off the board.
# A MAC does not take the previous record's: a journal whose oldest segments
# rotation deleted, or the floor after a gap, still verifies every record it
# holds; the chain hash is what ties them together.
#
# The key file (the board's state, journal_store.py writes it after the
# records it signed are flushed) and the provisioning file (`sicbo deploy
# --provision`; the same layout, first = 0) are FILE_LEN bytes, little endian:
#     0 magic b"SKC1" | 4 u32 provisioning id | 8 u32 first: the sequence number
#     of the chain's J_PROVISION, 0 before it is written | 12 u32 seq: the next
#     sequence number, the one `key` signs | 16 u32 head: the last record in the
#     chain hash (0: none) | 20 key (32 bytes) | 52 chain hash (16 bytes) | 68
#     u32 the provisioning this one replaced (0: none) | 72 u32 CRC-32 of
#     bytes 0..71
#
# Pure: bytes in, bytes out, no I/O. The host's verifier
# (host_tools/chaincheck.py) runs these same functions. Nothing is allocated
# per record but the sha256 objects, their digests and a memoryview or two.

import hashlib
import struct
from binascii import crc32, hexlify

from micropython import const

from sicbo import records as R
from sicbo.journal import seal as seal_crcs
from sicbo.journal import u32, valid_at

KEY_LEN = const(32)
FILE_LEN = const(76)
_BLOCK = const(64)  # SHA-256's block: HMAC's pads
_K_IDENT = const(4)
_K_FIRST = const(8)
_K_SEQ = const(12)
_K_HEAD = const(16)
_K_KEY = const(20)
_K_LINK = const(52)
_K_PREVIOUS = const(68)
_K_CRC = const(72)
MAGIC = b"SKC1"
_LABEL = b"sicbo-key"
BATCH = const(8)  # records per append that the chain's own buffer holds (the machine's most)


def parse(data):
    """True when data is a key file (or a provisioning file): its length,
    magic and CRC."""
    if data is None or len(data) != FILE_LEN or data[0:4] != MAGIC:
        return False
    c = bytearray(4)
    struct.pack_into("<I", c, 0, crc32(data[0:_K_CRC]))
    return c == data[_K_CRC:FILE_LEN]


def key_file(ident, first, seq, head, key, link, previous=0):
    """A key file's bytes (the host writes a provisioning file with this)."""
    out = bytearray(FILE_LEN)
    _pack(out, ident, first, seq, head, key, link, previous)
    return bytes(out)


def _pack(out, ident, first, seq, head, key, link, previous):
    out[0:4] = MAGIC
    struct.pack_into("<IIII", out, _K_IDENT, ident, first, seq, head)
    for i in range(KEY_LEN):
        out[_K_KEY + i] = key[i]
    for i in range(R.CHAIN_LEN):
        out[_K_LINK + i] = link[i]
    struct.pack_into("<I", out, _K_PREVIOUS, previous)
    struct.pack_into("<I", out, _K_CRC, crc32(memoryview(out)[0:_K_CRC]))


def head_text(seq, link):
    """A head as people and the floor read it: "SEQ:HASH" (hex)."""
    return "%d:%s" % (seq, hexlify(link).decode())


class Chain:
    """One table's chain, as its key file says (see the module doc). room:
    the largest append to seal without allocating (the chain's buffer)."""

    def __init__(self, data, room=0):
        self.ident = u32(data, _K_IDENT)
        self.first = u32(data, _K_FIRST)
        self.seq = u32(data, _K_SEQ)
        self.head = u32(data, _K_HEAD)
        self.key = bytearray(data[_K_KEY:_K_KEY + KEY_LEN])
        self.link = bytearray(data[_K_LINK:_K_LINK + R.CHAIN_LEN])
        self.previous = u32(data, _K_PREVIOUS)  # the chain its J_PROVISION names as replaced
        self._ipad = bytearray(b"\x36" * _BLOCK)  # the key's bytes are xored in per record
        self._opad = bytearray(b"\x5c" * _BLOCK)
        self._num = bytearray(4)
        self.mac = bytearray(R.MAC_LEN)  # the last MAC computed
        self.file = bytearray(FILE_LEN)  # pack()'s
        self.out = bytearray(max(room, BATCH * (R.REC_LEN + R.MAC_LEN)))
        self._out = memoryview(self.out)
        self.ready = False  # caught up with the journal (the store's part)
        self.bad = 0  # records of the journal's tail, numbered for this key, that did not verify
        self.unsigned = 0  # records written without a MAC: their key was gone

    # ---- the key, the MAC, the chain hash -------------------------------------------

    def evolve(self):
        """The next sequence number's key, in place of this one's."""
        struct.pack_into("<I", self._num, 0, self.seq)
        h = hashlib.sha256(_LABEL)
        h.update(self._num)
        h.update(self.key)
        d = h.digest()
        k = self.key
        for i in range(KEY_LEN):
            k[i] = d[i]
        self.seq += 1

    def to(self, seq):
        """The key of sequence number seq (never back)."""
        while self.seq < seq:
            self.evolve()

    def hmac(self, data):
        """HMAC-SHA256 of data under the current key, its first MAC_LEN bytes
        into self.mac. The pads are the key xored into preallocated blocks (a
        32-byte key is zero-padded: the pads' other bytes never change)."""
        k = self.key
        ip = self._ipad
        op = self._opad
        for i in range(KEY_LEN):
            c = k[i]
            ip[i] = c ^ 0x36
            op[i] = c ^ 0x5C
        h = hashlib.sha256(ip)
        h.update(data)
        inner = h.digest()
        h = hashlib.sha256(op)
        h.update(inner)
        d = h.digest()
        m = self.mac
        for i in range(R.MAC_LEN):
            m[i] = d[i]
        return m

    def fold(self, data):
        """The chain hash after a record (its bytes before the CRC, MAC included)."""
        h = hashlib.sha256(self.link)
        h.update(data)
        d = h.digest()
        link = self.link
        for i in range(R.CHAIN_LEN):
            link[i] = d[i]

    def _start(self, seq):
        # The chain's first record: the chain hash starts from zeros.
        link = self.link
        for i in range(R.CHAIN_LEN):
            link[i] = 0
        self.first = seq
        self.head = 0

    def _ours(self, b, o):
        # This chain's own J_PROVISION.
        return b[o + R.OFF_TYPE] == R.J_PROVISION and u32(b, o + R.HEADER + R.P_CHAIN) == (
            self.ident)

    # ---- writing ------------------------------------------------------------------------

    def seal(self, data, n):
        """The records data[0:n] (back to back, as the journal's writers make
        them) as the journal keeps them: each gets its MAC, but one whose key
        is gone (its sequence number below the chain's), one already sealed,
        and any before the chain's own J_PROVISION, which go as they are.
        Returns a memoryview of the chain's buffer (a new one for an append
        larger than `room`), CRCs filled in."""
        need = 0
        off = 0
        while off < n:
            length = data[off + R.OFF_LENGTH] | (data[off + R.OFF_LENGTH + 1] << 8)
            need += length + R.MAC_LEN
            off += length
        out = self.out
        mv = self._out
        if need > len(out):
            out = bytearray(need)
            mv = memoryview(out)
        src = data if type(data) is memoryview else memoryview(data)
        off = 0
        at = 0
        while off < n:
            length = data[off + R.OFF_LENGTH] | (data[off + R.OFF_LENGTH + 1] << 8)
            if data[off + R.OFF_FLAGS] & R.FLAG_MAC:
                mv[at:at + length] = src[off:off + length]
                at += length
            elif u32(data, off + R.OFF_SEQ) < self.seq or not (self.first
                                                            or self._ours(data, off)):
                mv[at:at + length] = src[off:off + length]
                at += length
                self.unsigned += 1
            else:
                body = length - R.CRC_LEN
                mv[at:at + body] = src[off:off + body]
                whole = length + R.MAC_LEN
                out[at + R.OFF_LENGTH] = whole & 0xFF
                out[at + R.OFF_LENGTH + 1] = whole >> 8
                out[at + R.OFF_FLAGS] |= R.FLAG_MAC
                self._sign(out, mv, at, body)
                at += whole
            off += length
        seal_crcs(out, at)
        return mv[:at]

    def _sign(self, out, mv, at, body):
        # The record at out[at], laid out with room for its MAC at body.
        seq = u32(out, at + R.OFF_SEQ)
        self.to(seq)
        if self._ours(out, at) and not self.first:
            self._start(seq)
        elif out[at + R.OFF_TYPE] == R.J_METERS:
            self._head_into(out, at + R.HEADER, at + body)
        m = self.hmac(mv[at:at + body])
        for i in range(R.MAC_LEN):
            out[at + body + i] = m[i]
        self.fold(mv[at:at + body + R.MAC_LEN])
        self.head = seq
        self.evolve()

    def _head_into(self, b, p, end):
        # A meters checkpoint names the head before it (its chain tail, when
        # its writer left room for one: sicbo/records.py H_*).
        n = b[p + R.P_CHANNELS] | (b[p + R.P_CHANNELS + 1] << 8)
        c = p + R.P_WINS + 4 * n + R.METERS_CONFIG
        if c + R.METERS_CHAIN > end:
            return
        struct.pack_into("<I", b, c + R.H_SEQ, self.head)
        for i in range(R.CHAIN_LEN):
            b[c + R.H_HASH + i] = self.link[i]

    # ---- reading back -------------------------------------------------------------

    def check(self, b, o):
        """True when the record at b[o] (CRC-valid, FLAG_MAC) carries the MAC
        of the current key: the caller has moved the key to its sequence
        number (to())."""
        body = (b[o + R.OFF_LENGTH] | (b[o + R.OFF_LENGTH + 1] << 8)) - R.CRC_LEN - R.MAC_LEN
        mv = b if type(b) is memoryview else memoryview(b)
        m = self.hmac(mv[o:o + body])
        for i in range(R.MAC_LEN):
            if m[i] != b[o + body + i]:
                return False
        return True

    def follow(self, b, o):
        """Catch up with a record of the journal (CRC-valid, at b[o]) that
        the key file does not know of yet: a power cut came between its
        flush and the key file's (journal_store.py). Its key is used up; one
        that verifies joins the chain hash; one that does not is counted
        (bad) and left out. Records the chain knows, and those before its
        J_PROVISION, are passed over."""
        seq = u32(b, o + R.OFF_SEQ)
        if seq < self.seq:
            return
        if not b[o + R.OFF_FLAGS] & R.FLAG_MAC:
            if self.first:
                self.to(seq + 1)  # a number used without a MAC: never signed now
            return
        if not self.first:
            if not self._ours(b, o):
                return
            self.to(seq)
            if not self.check(b, o):
                self.bad += 1
                self.evolve()
                return
            self._start(seq)
        else:
            self.to(seq)
            if not self.check(b, o):
                self.bad += 1
                self.evolve()
                return
        body = (b[o + R.OFF_LENGTH] | (b[o + R.OFF_LENGTH + 1] << 8)) - R.CRC_LEN
        mv = b if type(b) is memoryview else memoryview(b)
        self.fold(mv[o:o + body])
        self.head = seq
        self.evolve()

    def follow_all(self, data):
        """follow() every valid record of a piece of the journal, in order."""
        n = len(data)
        off = 0
        while off < n:
            length = valid_at(data, off, n)
            if length:
                self.follow(data, off)
                off += length
            else:
                off += 1

    # ---- the key file ---------------------------------------------------------------

    def pack(self):
        """The key file's bytes as of now, in the chain's own buffer."""
        _pack(self.file, self.ident, self.first, self.seq, self.head, self.key, self.link,
              self.previous)
        return self.file

    def head_text(self):
        """"SEQ:HASH" of the head, None before the chain's first record."""
        return head_text(self.head, self.link) if self.first else None
