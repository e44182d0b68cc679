# The dice reader's line protocol (sicbo.dicereader): a die that is not a
# digit is not the protocol's shape (garbage), even under a good checksum,
# and is never read as dice.
from sicbo.dicereader import DiceReader, crc8


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
