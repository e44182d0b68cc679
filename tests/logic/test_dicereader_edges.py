# The dice reader's line protocol (sicbo.dicereader): a die that is not a
# digit is not the protocol's shape (garbage), even under a good checksum,
# and is never read as dice. A line longer than MAX_LINE bytes before its
# '\n' is ignored whole (docs/dice-reader-protocol.md): a valid reading at its
# end is not taken.
from sicbo.dicereader import MAX_LINE, DiceReader, crc8, line


def _signed(body):
    """body with the checksum a reader would send for it."""
    return body + b"*%02X\n" % crc8(body)


def _read(data):
    rd = DiceReader()
    got = []
    rd.feed(data, lambda *a: got.append(a))
    return rd, got


def test_a_die_just_outside_the_digits_is_garbage_even_with_a_good_checksum():
    # "/" and ":" are the characters either side of "0".."9".
    for die in (b"/", b":"):
        rd, got = _read(_signed(b"DICE 5 1 " + die + b" 3 "))
        assert got == [], die
        assert (rd.garbage, rd.bad_dice, rd.bad_crc, rd.ok) == (1, 0, 0, 0), die


def test_the_same_line_with_a_digit_die_is_read():
    rd, got = _read(_signed(b"DICE 5 1 2 3 "))
    assert got == [(5, 1, 2, 3)] and rd.rejected() == 0


def test_a_line_of_max_line_bytes_is_a_line_one_more_is_overlong():
    rd, got = _read(b"X" * MAX_LINE + b"\n")
    assert (rd.garbage, rd.overlong) == (1, 0) and got == []
    rd, got = _read(b"X" * (MAX_LINE + 1) + b"\n")
    assert (rd.garbage, rd.overlong) == (0, 1) and got == []


def test_a_reading_at_the_end_of_an_overlong_line_is_not_taken():
    # The whole line is ignored, its tail included, and counted once; the
    # reader reads the next line.
    rd, got = _read(b"X" * MAX_LINE + line(8, 4, 4, 4) + line(9, 1, 2, 3))
    assert got == [(9, 1, 2, 3)]
    assert (rd.overlong, rd.garbage, rd.bad_crc, rd.bad_dice, rd.ok) == (1, 0, 0, 0, 1)
    assert (rd.round, rd.d1, rd.d2, rd.d3) == (9, 1, 2, 3)


def test_a_crc_of_no_bytes_is_0_and_a_length_takes_only_those_bytes():
    assert crc8(b"123456789", 0) == 0
    assert crc8(b"123456789", 9) == crc8(b"123456789") == 0xF4
    assert crc8(b"123456789XYZ", 9) == 0xF4
