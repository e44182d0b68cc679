"""What someone with a copy of a table's journal does to it, written apart
from the project's encoder and decoder (docs/journal.md's layout only):
plain byte edits, struct, and the CRC-32 recomputed with zlib where an
attacker would. Not a test module itself."""

import struct
import zlib

MAGIC = 0xA5
TYPE_RESULT = 6
TYPE_PROVISION = 24


def split(data):
    """The whole records of a journal file, in order, as bytes: magic, the
    length at bytes 2..3, a CRC-32 of the rest at the end that checks out.
    What is not a record (a record torn by a power cut) is left out."""
    out = []
    off = 0
    while off + 28 <= len(data):
        if data[off] == MAGIC:
            n = struct.unpack_from("<H", data, off + 2)[0]
            if 28 <= n <= 1024 and off + n <= len(data) and zlib.crc32(
                    data[off:off + n - 4]) == struct.unpack_from("<I", data, off + n - 4)[0]:
                out.append(bytes(data[off:off + n]))
                off += n
                continue
        off += 1
    return out


def seq(rec):
    return struct.unpack_from("<I", rec, 4)[0]


def kind(rec):
    return rec[1]


def has_mac(rec):
    return bool(struct.unpack_from("<H", rec, 14)[0] & 2)


def fix_crc(rec):
    b = bytearray(rec)
    struct.pack_into("<I", b, len(b) - 4, zlib.crc32(bytes(b[:-4])))
    return bytes(b)


def poke(rec, offset, value, crc=True):
    """rec with the byte at offset set to value (its CRC mended, or not)."""
    b = bytearray(rec)
    b[offset] = value
    return fix_crc(b) if crc else bytes(b)


def with_seq(rec, n):
    b = bytearray(rec)
    struct.pack_into("<I", b, 4, n)
    return fix_crc(b)


def without_mac(rec):
    """rec as if it had never been sealed: the MAC flag cleared, the MAC cut
    out, the length and the CRC mended."""
    b = bytearray(rec[:-12] + rec[-4:])
    struct.pack_into("<H", b, 2, len(b))
    struct.pack_into("<H", b, 14, struct.unpack_from("<H", b, 14)[0] & ~2)
    return fix_crc(b)


def join(recs):
    return b"".join(recs)


def index_of(recs, n):
    for i, r in enumerate(recs):
        if seq(r) == n:
            return i
    raise ValueError("no record seq %d" % n)
