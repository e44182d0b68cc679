# The journal's record format, its scanner and the replay that rebuilds the
# round machine's state at boot. Pure: bytes in, objects out, no file I/O (that
# is device/journal_store.py). See docs/journal.md.
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

MAGIC = const(0xA5)
HEADER = const(24)
CRC_LEN = const(4)
PAYLOAD = const(8)
REC_LEN = const(36)  # HEADER + PAYLOAD + CRC_LEN
MIN_LEN = const(28)
MAX_LEN = const(1024)
FLAG_WALL = const(1)
_HDR_FMT = "<BBHIIHHII"


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
    crc = data[end] | (data[end + 1] << 8) | (data[end + 2] << 16) | (data[end + 3] << 24)
    if binascii.crc32(memoryview(data)[off:end]) != crc:
        return 0
    return length


class Scanner:
    """Finds the valid records in a segment's bytes. A bad stretch followed by a
    valid record is corruption (counted, skipped); a bad stretch at the end is a
    torn last record (counted, discarded): nothing after it was ever acted on."""

    def __init__(self):
        self.records = 0
        self.corrupt_bytes = 0  # skipped in the middle of a segment
        self.torn_bytes = 0  # discarded at the end of a segment
        self.torn_segments = 0

    def scan(self, data):
        """Yield Record objects for every valid record of data."""
        n = len(data)
        off = 0
        bad = -1
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
            self.records += 1
            yield Record(data, off)
            off += length
        if bad >= 0:
            self.torn_bytes += n - bad
            self.torn_segments += 1


def records(data):
    """All valid records of one segment's bytes, as a list (host tools, tests)."""
    return list(Scanner().scan(data))


def __getattr__(name):
    # Replay is needed at boot only: it lives with the resumption in
    # sicbo/resume.py, which the controller drops once it runs.
    if name == "Replay":
        from sicbo.resume import Replay

        return Replay
    raise AttributeError(name)
