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
# The key file (the board's state, device/chainfile.py writes it after the
# records it signed are flushed) and the provisioning file (`sicbo deploy
# --provision`; the same layout, first = 0) are FILE_LEN bytes, little endian:
#     0 magic b"SKC1" | 4 u32 provisioning id | 8 u32 first: the sequence number
#     of the chain's J_PROVISION, 0 before it is written | 12 u32 seq: the next
#     sequence number, the one `key` signs | 16 u32 head: the last record in the
#     chain hash (0: none) | 20 key (32 bytes) | 52 chain hash (16 bytes) | 68
#     u32 the provisioning this one replaced (0: none) | 72 u32 CRC-32 of
#     bytes 0..71
#
# Pure: bytes in, bytes out, no I/O; catching up with records the key file
# missed is sicbo/chainfollow.py's (loaded only then). The host's verifier
# (host_tools/chaincheck.py) runs these same functions. Nothing is allocated
# per record but the sha256 objects and their digests.

import hashlib
import struct
from binascii import crc32, hexlify

from micropython import const

from sicbo import records as R
from sicbo.journal import seal as seal_crcs
from sicbo.journal import u32

KEY_LEN = const(32)
FILE_LEN = const(76)
_BLOCK = const(64)  # SHA-256's block: HMAC's pad
_K_IDENT = const(4)
_K_FIRST = const(8)
_K_SEQ = const(12)
_K_HEAD = const(16)
_K_KEY = const(20)
_K_LINK = const(52)
_K_PREVIOUS = const(68)
_K_CRC = const(72)
MAGIC = b"SKC1"
_LABEL = const(b"sicbo-key")


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
    """One table's chain, as its key file says (see the module doc)."""

    def __init__(self, data):
        self.ident = u32(data, _K_IDENT)
        self.first = u32(data, _K_FIRST)
        self.seq = u32(data, _K_SEQ)
        self.head = u32(data, _K_HEAD)
        self.key = bytearray(data[_K_KEY:_K_KEY + KEY_LEN])
        self.link = bytearray(data[_K_LINK:_K_LINK + R.CHAIN_LEN])
        self.previous = u32(data, _K_PREVIOUS)  # the chain its J_PROVISION names as replaced
        self._pad = bytearray(_BLOCK)  # HMAC's, the key xored in per record
        self._num = bytearray(4)
        self.mac = bytearray(R.MAC_LEN)  # the last MAC computed
        self.file = bytearray(FILE_LEN)  # pack()'s
        self.ready = False  # caught up with the journal (device/chainfile.py)
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

    def hmac(self, a, b=b""):
        """HMAC-SHA256 of a then b under the current key, its first MAC_LEN
        bytes into self.mac. The pad is the key xored into one preallocated
        block, for the inner hash then the outer (the 32-byte key is
        zero-padded: the block's other bytes are the pad's constant)."""
        k = self.key
        p = self._pad
        for i in range(KEY_LEN):
            p[i] = k[i] ^ 0x36
        for i in range(KEY_LEN, _BLOCK):
            p[i] = 0x36
        h = hashlib.sha256(p)
        h.update(a)
        h.update(b)
        inner = h.digest()
        for i in range(_BLOCK):
            p[i] ^= 0x36 ^ 0x5C
        h = hashlib.sha256(p)
        h.update(inner)
        d = h.digest()
        m = self.mac
        for i in range(R.MAC_LEN):
            m[i] = d[i]
        return m

    def fold(self, a, b=b"", c=b""):
        """The chain hash after a record: its bytes before the CRC (a, b, c in
        order: header, payload, MAC)."""
        h = hashlib.sha256(self.link)
        h.update(a)
        h.update(b)
        h.update(c)
        d = h.digest()
        link = self.link
        for i in range(R.CHAIN_LEN):
            link[i] = d[i]

    def start(self, seq):
        """The chain's first record: the chain hash starts from zeros."""
        link = self.link
        for i in range(R.CHAIN_LEN):
            link[i] = 0
        self.first = seq
        self.head = 0

    def ours(self, b, o):
        """True for this chain's own J_PROVISION at b[o]."""
        return b[o + R.OFF_TYPE] == R.J_PROVISION and u32(b, o + R.HEADER + R.P_CHAIN) == (
            self.ident)

    # ---- writing ------------------------------------------------------------------------

    def signs(self, b, o):
        """True when the record at b[o] (as its writer made it: no MAC yet) is
        one to sign: its number's key is here (not moved past), the chain has
        started (or this is its own J_PROVISION), and it is not sealed yet."""
        return not b[o + R.OFF_FLAGS] & R.FLAG_MAC and u32(b, o + R.OFF_SEQ) >= self.seq and (
            self.first or self.ours(b, o))

    def sign(self, hdr, body):
        """Sign a record given as its header (hdr: FLAG_MAC set, its length
        counting the MAC) and its payload (body, writable for a meters
        checkpoint, which names the head before it): its MAC into self.mac,
        the chain hash and the key moved on."""
        seq = u32(hdr, R.OFF_SEQ)
        self.to(seq)
        t = hdr[R.OFF_TYPE]
        if t == R.J_PROVISION and not self.first and u32(body, R.P_CHAIN) == self.ident:
            self.start(seq)
        elif t == R.J_METERS:
            self._head_into(body)
        m = self.hmac(hdr, body)
        self.fold(hdr, body, m)
        self.head = seq
        self.evolve()
        return m

    def _head_into(self, p):
        # A meters checkpoint names the head before it (its chain tail, when
        # its writer left room for one: sicbo/records.py H_*).
        n = p[R.P_CHANNELS] | (p[R.P_CHANNELS + 1] << 8)
        c = R.P_WINS + 4 * n + R.METERS_CONFIG
        if c + R.METERS_CHAIN > len(p):
            return
        struct.pack_into("<I", p, c + R.H_SEQ, self.head)
        for i in range(R.CHAIN_LEN):
            p[c + R.H_HASH + i] = self.link[i]

    def seal(self, data, n):
        """The records data[0:n] (back to back, as the journal's writers make
        them) as the journal keeps them, in a new buffer: each one signs()
        takes with its MAC, the others as they are; CRCs filled in. (The
        board's store writes them piece by piece instead: chainfile.py.)"""
        out = bytearray()
        off = 0
        while off < n:
            length = data[off + R.OFF_LENGTH] | (data[off + R.OFF_LENGTH + 1] << 8)
            rec = bytearray(data[off:off + length])
            if self.signs(rec, 0):
                hdr = bytearray(rec[0:R.HEADER])
                body = bytearray(rec[R.HEADER:length - R.CRC_LEN])
                whole = length + R.MAC_LEN
                hdr[R.OFF_LENGTH] = whole & 0xFF
                hdr[R.OFF_LENGTH + 1] = whole >> 8
                hdr[R.OFF_FLAGS] |= R.FLAG_MAC
                m = self.sign(hdr, body)
                rec = hdr + body + m + bytes(R.CRC_LEN)
            elif not rec[R.OFF_FLAGS] & R.FLAG_MAC:
                self.unsigned += 1
            out += rec
            off += length
        seal_crcs(out, len(out))
        return out

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

    # ---- the key file ---------------------------------------------------------------

    def pack(self):
        """The key file's bytes as of now, in the chain's own buffer."""
        _pack(self.file, self.ident, self.first, self.seq, self.head, self.key, self.link,
              self.previous)
        return self.file

    def head_text(self):
        """"SEQ:HASH" of the head, None before the chain's first record."""
        return head_text(self.head, self.link) if self.first else None

