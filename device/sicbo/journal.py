# The journal's record format, its scanner and what each record type allows
# (check). Pure: bytes in, objects out, no file I/O (that is
# device/journal_store.py); the replay is the round machine's own
# (sicbo/roundstate.py). See docs/journal.md.
#
# Record (little endian), REC_LEN = 36 bytes for every record the round machine
# writes; the length field allows longer ones (J_METERS):
#    0 u8  magic 0xA5
#    1 u8  type J_*
#    2 u16 length of the whole record, CRC included
#    4 u32 sequence number (1, 2, 3, ... never reused)
#    8 u32 round id
#   12 u16 boot count
#   14 u16 flags: bit 0 = the wall field holds the RTC time
#   16 u32 ticks (ms, time.ticks_ms of the event, wraps at 2**30)
#   20 u32 wall clock, seconds since 2000-01-01 00:00 UTC (0 when not set)
#   24 payload (length - 28 bytes; 8 for the round machine's records)
#  -4  u32 CRC-32 (binascii.crc32) of every byte before it

import binascii
import struct

from micropython import const

from sicbo import events as E

MAGIC = const(0xA5)
HEADER = const(24)
CRC_LEN = const(4)
REC_LEN = const(36)  # HEADER + 8 bytes of payload + CRC_LEN
MIN_LEN = const(28)
MAX_LEN = const(1024)
# J_METERS payload: 8 counters and 8 void reasons (u32), the channel count
# (u16), a u32 per channel, then the configuration in force (so that the
# rotation that deletes its J_CONFIG keeps it): 6 bytes config id, a flags
# byte (bit 0: the time is known), a spare byte, u32 the last wall time known
# under it (meters.Meters.record, RoundState).
METERS_HEAD = const(66)
METERS_CONFIG = const(12)
FLAG_WALL = const(1)
_HDR_FMT = "<BBHIIHHII"
_CRC = bytearray(4)  # valid_at's scratch


def put_header(buf, off, rtype, length, seq, rid, boot, ticks, wall):
    """Write a header at buf[off] (no allocation). wall is None when the RTC
    has not been set: the record then says so and carries 0."""
    if wall is None:
        struct.pack_into(_HDR_FMT, buf, off, MAGIC, rtype, length, seq, rid,
                         boot & 0xFFFF, 0, ticks, 0)
    else:
        struct.pack_into(_HDR_FMT, buf, off, MAGIC, rtype, length, seq, rid,
                         boot & 0xFFFF, FLAG_WALL, ticks, wall)


def seal(buf, n):
    """Fill in the CRC of every record in buf[0:n] (records back to back).
    Kept out of the hot path: on the ESP32 a CRC-32 above 2**30 is a heap int."""
    mv = memoryview(buf)
    off = 0
    while off < n:
        length = buf[off + 2] | (buf[off + 3] << 8)
        end = off + length - CRC_LEN
        struct.pack_into("<I", buf, end, binascii.crc32(mv[off:end]))
        off += length


def encode(rtype, seq, rid, boot, ticks, wall, payload=b""):
    """One sealed record as bytes (allocates; host tools, tests, checkpoints)."""
    length = HEADER + len(payload) + CRC_LEN
    buf = bytearray(length)
    put_header(buf, 0, rtype, length, seq, rid, boot, ticks, wall)
    buf[HEADER:HEADER + len(payload)] = payload
    seal(buf, length)
    return bytes(buf)


class Record:
    """A decoded record."""

    def __init__(self, data, off):
        (_, self.type, self.length, self.seq, self.round, self.boot, flags,
         self.ticks, wall) = struct.unpack_from(_HDR_FMT, data, off)
        self.wall = wall if flags & FLAG_WALL else None
        self.offset = off
        self.payload = bytes(data[off + HEADER:off + self.length - CRC_LEN])

    def p(self, i):
        return self.payload[i] if i < len(self.payload) else 0

    def dice(self, first=0):
        return (self.p(first), self.p(first + 1), self.p(first + 2))

    def __repr__(self):
        return "<J%d seq=%d round=%d boot=%d %r>" % (self.type, self.seq, self.round,
                                                     self.boot, bytes(self.payload))


def valid_at(data, off, n):
    """Length of a valid record at data[off] (n = usable length), else 0."""
    if n - off < MIN_LEN or data[off] != MAGIC:
        return 0
    length = data[off + 2] | (data[off + 3] << 8)
    if length < MIN_LEN or length > MAX_LEN or off + length > n:
        return 0
    end = off + length - CRC_LEN
    mv = data if type(data) is memoryview else memoryview(data)
    # Compared as bytes: on the ESP32 an int above 2**30 is a heap object, and
    # arithmetic on it makes more (the boot reads every record through here).
    c = _CRC
    struct.pack_into("<I", c, 0, binascii.crc32(mv[off:end]))
    if c[0] != data[end] or c[1] != data[end + 1] or c[2] != data[end + 2] or (
            c[3] != data[end + 3]):
        return 0
    return length


def u32(b, o):
    """The little-endian u32 at b[o] (no allocation below 2**30)."""
    return b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)


def _dice(b, p, n):
    for i in range(p, p + n):
        if not 1 <= b[i] <= 6:
            return False
    return True


def check_payload(t, length, b, p):
    """0 if a record of type t and this length, payload at b[p], is one its type
    allows, else the damage code E.BAD_*. What the record may say in the
    journal's context (sequence, round, state) is RoundState.take's part."""
    if not E.J_BOOT <= t <= E.J_LAST:
        return E.BAD_TYPE
    if t == E.J_METERS:
        # 8 + 8 counters (u32) and the channel count (u16); recall checks the rest.
        return 0 if length >= MIN_LEN + METERS_HEAD else E.BAD_LENGTH
    if length != REC_LEN:
        return E.BAD_LENGTH
    v = b[p]
    if t == E.J_RESULT or t == E.J_READER:
        if not _dice(b, p, 3):
            return E.BAD_DICE
        ok = t == E.J_READER or b[p + 3] <= 1
    elif t == E.J_CORRECTION or t == E.J_HOLD:
        return 0 if _dice(b, p, 6) else E.BAD_DICE
    elif t == E.J_ROUND:
        ok = v <= 2
    elif t == E.J_VOID:
        ok = 1 <= v <= E.V_LAST and b[p + 1] <= 1
    elif t == E.J_ALARM or t == E.J_VIOLATION or t == E.J_REFUSED:
        ok = E.R_COVER_NOT_ON <= v <= E.R_LAST
    elif t == E.J_SUPERVISOR:
        ok = v <= 1
    elif t == E.J_RESUME:
        ok = v <= E.ST_HOLD and b[p + 1] <= E.ST_HOLD
    elif t == E.J_DAMAGE:
        ok = 1 <= v <= E.BAD_LAST
    else:
        ok = True
    return 0 if ok else E.BAD_VALUE


def check(rec):
    """check_payload of a decoded Record (host tools, diag)."""
    return check_payload(rec.type, rec.length, rec.payload, 0)


class Scanner:
    """Finds the valid records in a segment's bytes. A bad stretch followed by a
    valid record is corruption (counted, skipped); a bad stretch at the end is a
    torn last record (counted, discarded): nothing after it was ever acted on.
    Valid means a whole record whose CRC checks out; what it says is checked
    by check() and RoundState.take()."""

    def __init__(self):
        self.records = 0
        self.corrupt_bytes = 0  # skipped in the middle of a segment
        self.torn_bytes = 0  # discarded at the end of a segment
        self.torn_segments = 0
        self.gap = True  # the next record may follow missing ones (walk)

    def walk(self, data, fn):
        """fn(data, off, gap) for every valid record of data, in order; gap is
        True for the first record this scanner sees and for the first after
        a corrupt stretch or a torn tail (the records before it may be
        missing). Data fed in order continue each other: a journal read in
        windows, or segment after segment, is one stream, so a record missing
        at a window's or a segment's start is seen. Allocates nothing itself."""
        n = len(data)
        off = 0
        bad = -1
        gap = self.gap
        while off < n:
            length = valid_at(data, off, n)
            if not length:
                if bad < 0:
                    bad = off
                off += 1
                continue
            if bad >= 0:
                self.corrupt_bytes += off - bad
                bad = -1
                gap = True
            self.records += 1
            fn(data, off, gap)
            gap = False
            off += length
        if bad >= 0:
            self.torn_bytes += n - bad
            self.torn_segments += 1
            gap = True
        self.gap = gap

    def scan(self, data):
        """The Record of every valid record of data, as a list (allocates)."""
        out = []
        self.walk(data, lambda d, o, _g: out.append(Record(d, o)))
        return out


def records(data):
    """All valid records of one segment's bytes, as a list (host tools, tests)."""
    return Scanner().scan(data)
