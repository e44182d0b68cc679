# The dice reader's line protocol: valid lines, garbage, overlong lines and bad
# checksums counted and never settled; zero allocation per byte.
import micropython

from sicbo.dicereader import MAX_LINE, DiceReader, crc8, line


def _collect(data, rd=None):
    rd = rd if rd is not None else DiceReader()
    got = []
    rd.feed(data, lambda rid, a, b, c: got.append((rid, a, b, c)))
    return rd, got


def test_crc8_check_value():
    assert crc8(b"123456789") == 0xF4  # CRC-8/SMBUS check value


def test_valid_line_is_read():
    rd, got = _collect(line(12, 3, 4, 5))
    assert got == [(12, 3, 4, 5)] and rd.ok == 1 and rd.rejected() == 0


def test_line_format_is_as_documented():
    assert line(7, 1, 2, 3) == b"DICE 7 1 2 3 *%02X\n" % crc8(b"DICE 7 1 2 3 ")


def test_crlf_and_lowercase_hex_accepted():
    text = line(5, 6, 6, 1)
    lower = text[:-3] + text[-3:-1].lower() + b"\r\n"
    rd, got = _collect(lower)
    assert got == [(5, 6, 6, 1)]


def test_several_lines_in_one_chunk_and_split_across_chunks():
    data = line(1, 1, 1, 1) + line(2, 2, 2, 2) + line(3, 3, 3, 3)
    rd, got = _collect(data[:10])
    rd, got2 = _collect(data[10:], rd)
    assert got == [] and got2 == [(1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)]


def test_bad_checksum_counted_never_settled():
    text = bytearray(line(9, 1, 2, 3))
    text[7] = ord("4")  # a die changed in transit
    rd, got = _collect(bytes(text))
    assert got == [] and rd.bad_crc == 1


def test_garbage_counted_and_ignored():
    bad = [b"hello\n", b"DICE\n", b"DICE 1 2 3 *00\n", b"DICE 01 1 2 3 *00\n",
           b"DICE 1  2 3 4 *00\n", b"DICE x 1 2 3 *00\n", b"DICE 1 2 3 4 *G0\n",
           b"DICE 1 2 3 44 *00\n", b"dice 1 2 3 4 *00\n", b"\x00\xff\x10\n",
           b"DICE 1 2 3 4 *0z\n", b"DICE 1 2 3 4 *g0\n"]  # not hex digits, in lower case
    rd = DiceReader()
    for b in bad:
        rd, got = _collect(b, rd)
        assert got == [], b
    assert rd.garbage == len(bad) and rd.ok == 0


def test_dice_out_of_range_with_good_checksum_rejected():
    for d in (0, 7, 9):
        rd, got = _collect(line(4, 1, d, 3))
        assert got == [] and rd.bad_dice == 1


def test_round_zero_rejected():
    rd, got = _collect(line(0, 1, 2, 3))
    assert got == [] and rd.bad_dice == 1


def test_overlong_line_counted_then_next_line_read():
    data = b"X" * (MAX_LINE + 30) + b"\n" + line(8, 4, 4, 4)
    rd, got = _collect(data)
    assert rd.overlong == 1 and got == [(8, 4, 4, 4)]


def test_empty_lines_are_keep_alives():
    rd, got = _collect(b"\n\r\n\n")
    assert rd.rejected() == 0 and got == []


def test_garbage_then_good_line_recovers():
    rd, got = _collect(b"\x01\x02noise" + b"\n" + line(3, 2, 5, 6))
    assert got == [(3, 2, 5, 6)] and rd.garbage == 1


def test_feed_byte_allocates_nothing():
    rd = DiceReader()
    data = line(123456, 6, 5, 4) + b"junk line\n"
    ok = 0
    micropython.heap_lock()
    try:
        for b in data:
            if rd.feed_byte(b):
                ok += 1
    finally:
        micropython.heap_unlock()
    assert ok == 1 and rd.round == 123456 and rd.garbage == 1


def test_random_bytes_never_settle():
    seed = 12345
    rd = DiceReader()
    buf = bytearray(400)
    for _ in range(20):
        for i in range(len(buf)):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            buf[i] = (seed >> 16) & 0xFF
        rd, got = _collect(bytes(buf), rd)
        assert got == []
