# Calendar arithmetic for approval dates, without `datetime` (MicroPython has
# none). Dates are "YYYY-MM-DD" strings in files and day numbers inside.

from micropython import const

# The day number of a date, and the journal's day 0: the running table's wall
# clock needs only these (hw), from sicbo.journal, which it keeps loaded.
from sicbo.journal import DAY_2000, days_from_civil  # noqa: F401

_SATURDAY = const(5)  # weekday() numbering: Monday is 0
_DAYS_IN_MONTH = const(b"\x00\x1f\x1c\x1f\x1e\x1f\x1e\x1f\x1f\x1e\x1f\x1e\x1f")


def _leap(y):
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def parse(text):
    """Day number (days since 1970-01-01) of an ISO date, or ValueError."""
    if not isinstance(text, str) or len(text) != 10 or text[4] != "-" or text[7] != "-":
        raise ValueError("expected a date as YYYY-MM-DD, got %r" % (text,))
    digits = text[0:4] + text[5:7] + text[8:10]
    for ch in digits:
        if ch < "0" or ch > "9":
            raise ValueError("expected a date as YYYY-MM-DD, got %r" % (text,))
    y = int(text[0:4])
    m = int(text[5:7])
    d = int(text[8:10])
    if y < 1970 or not 1 <= m <= 12:
        raise ValueError("no such date: %r" % (text,))
    last = 29 if (m == 2 and _leap(y)) else _DAYS_IN_MONTH[m]
    if not 1 <= d <= last:
        raise ValueError("no such date: %r" % (text,))
    return days_from_civil(y, m, d)


def civil_from_days(day):
    """(year, month, day) of a day number; the inverse of days_from_civil."""
    day += 719468
    era = day // 146097
    doe = day - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return (y + (m <= 2), m, d)


def weekday(day):
    """0 for Monday .. 6 for Sunday (1970-01-01 was a Thursday)."""
    return (day + 3) % 7


def working_days(first, end, holidays=()):
    """Working days in [first, end): Saturdays, Sundays and the given
    holiday day numbers are not counted."""
    n = 0
    day = first
    while day < end:
        if weekday(day) < _SATURDAY and day not in holidays:
            n += 1
        day += 1
    return n
