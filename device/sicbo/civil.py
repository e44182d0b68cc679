# The day number of a calendar date, all the running table needs of calendar
# arithmetic (its wall clock, hw.WallClock): apart from sicbo.dates, whose
# date parsing and working days are the approval's, loaded at boot only.

from micropython import const

DAY_2000 = const(10957)  # days from 1970-01-01 to 2000-01-01 (journal wall clock)


def days_from_civil(y, m, d):
    # Howard Hinnant's days_from_civil, in integers only.
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468
