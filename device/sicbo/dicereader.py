# The optional dice reader's line protocol (docs/dice-reader-protocol.md):
#
#   DICE <round> <d1> <d2> <d3> *<crc>\n
#
# ASCII, single spaces, <round> decimal 1..999999999, dice 1..6, <crc> two hex
# digits: CRC-8 (polynomial 0x07, initial 0x00, no reflection, no final XOR)
# of every byte before the '*'. A '\r' before the '\n' is allowed. Lines are at
# most MAX_LINE bytes. Anything else is counted and ignored, never settled.
#
# Bytes are parsed into a preallocated line buffer; feed_byte() allocates
# nothing.

from micropython import const

MAX_LINE = const(40)
_NL = const(10)
_CR = const(13)
_SP = const(32)
_STAR = const(42)
_PREFIX = const(b"DICE ")


def crc8(data, n=-1):
    """CRC-8/SMBUS (poly 0x07, init 0) of data[0:n] (all of it when n < 0)."""
    if n < 0:
        n = len(data)
    crc = 0
    for i in range(n):
        crc ^= data[i]
        for _ in range(8):
            if crc & 0x80:
                crc = ((crc << 1) ^ 0x07) & 0xFF
            else:
                crc = (crc << 1) & 0xFF
    return crc


def _hex(c):
    if 48 <= c <= 57:
        return c - 48
    if 65 <= c <= 70:
        return c - 55
    if 97 <= c <= 102:
        return c - 87
    return -1


def line(rid, d1, d2, d3):
    """The line a reader sends (bytes, allocates: reader simulators, tests)."""
    body = ("DICE %d %d %d %d " % (rid, d1, d2, d3)).encode()
    return body + ("*%02X\n" % crc8(body)).encode()


class DiceReader:
    """Counts: ok (valid readings), garbage (not the protocol's shape),
    bad_crc, bad_dice (a checksummed line with a die outside 1..6), overlong."""

    def __init__(self):
        self.buf = bytearray(MAX_LINE)
        self.n = 0
        self.overlong_line = False
        self.ok = 0
        self.garbage = 0
        self.bad_crc = 0
        self.bad_dice = 0
        self.overlong = 0
        # The last valid reading.
        self.round = 0
        self.d1 = 0
        self.d2 = 0
        self.d3 = 0

    def rejected(self):
        return self.garbage + self.bad_crc + self.bad_dice + self.overlong

    def feed_byte(self, b):
        """Take one byte; True when it completed a valid reading (then in
        self.round, self.d1..d3)."""
        if b == _NL:
            n = self.n
            self.n = 0
            if self.overlong_line:
                self.overlong_line = False
                self.overlong += 1
                return False
            if n and self.buf[n - 1] == _CR:
                n -= 1
            if n == 0:
                return False  # an empty line is a keep-alive
            return self._line(n)
        # Past MAX_LINE the rest of the line is dropped: n stays there until
        # the newline.
        if self.n >= MAX_LINE:
            self.overlong_line = True
            return False
        self.buf[self.n] = b
        self.n += 1
        return False

    def feed(self, data, on_dice):
        """Feed bytes; call on_dice(round, d1, d2, d3) for each valid reading.
        Returns the number of valid readings."""
        k = 0
        for b in data:
            if self.feed_byte(b):
                k += 1
                on_dice(self.round, self.d1, self.d2, self.d3)
        return k

    def _line(self, n):
        buf = self.buf
        # Shape: prefix, 4 numbers separated by single spaces, " *", 2 hex digits.
        if n < 16 or buf[n - 3] != _STAR or buf[n - 4] != _SP:
            self.garbage += 1
            return False
        for i in range(5):
            if buf[i] != _PREFIX[i]:
                self.garbage += 1
                return False
        hi = _hex(buf[n - 2])
        lo = _hex(buf[n - 1])
        if hi < 0 or lo < 0:
            self.garbage += 1
            return False
        # Numbers between index 5 and n - 4 (exclusive): "R D D D".
        i = 5
        end = n - 4
        rid = 0
        digits = 0
        while i < end and 48 <= buf[i] <= 57:
            rid = rid * 10 + buf[i] - 48
            digits += 1
            i += 1
        if digits == 0 or digits > 9 or buf[i] != _SP or (digits > 1 and buf[5] == 48):
            self.garbage += 1
            return False
        # Three dice, one digit each.
        if end - i != 6:
            self.garbage += 1
            return False
        for _ in range(3):
            if buf[i] != _SP or not 48 <= buf[i + 1] <= 57:
                self.garbage += 1
                return False
            i += 2
        if crc8(buf, n - 3) != (hi << 4) | lo:
            self.bad_crc += 1
            return False
        d1 = buf[end - 5] - 48
        d2 = buf[end - 3] - 48
        d3 = buf[end - 1] - 48
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6 and 1 <= d3 <= 6) or rid == 0:
            self.bad_dice += 1
            return False
        self.round = rid
        self.d1 = d1
        self.d2 = d2
        self.d3 = d3
        self.ok += 1
        return True
