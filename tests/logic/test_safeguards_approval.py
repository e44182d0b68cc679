# The approval check (sicbo.approval.refusal) to the day and to the second,
# with the clock set and without it, and the calendar it counts with
# (sicbo.dates: the journal's and the log's dates too), and the wall clock.
import hw
from sicbo import approval, dates

EFFECTIVE = "2026-11-05"
# Days in each month of a common year, 1-based: the test's own calendar.
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class _Cfg:
    def __init__(self, effective=EFFECTIVE):
        self.approval = {"reference": "T", "applied": "2026-11-02", "effective": effective}


class _Journal:
    """What approval_refusal reads of a replayed RoundState."""

    def __init__(self, config_id=b"ABCDEF", config_wall=None):
        self.config_id = bytearray(config_id)
        self.config_wall = config_wall


def _wall(y, m, d, secs=0):
    # Seconds since 2000-01-01, as the journal's wall clock counts.
    return (dates.days_from_civil(y, m, d) - dates.days_from_civil(2000, 1, 1)) * 86400 + secs


def test_day_2000_is_2000_01_01():
    assert dates.DAY_2000 == dates.days_from_civil(2000, 1, 1) == 10957
    assert dates.civil_from_days(dates.DAY_2000) == (2000, 1, 1)


def test_clock_set_runs_from_the_first_second_of_the_effective_day():
    cfg = _Cfg()
    m = _Journal()
    assert approval.refusal(cfg, _wall(2026, 11, 5), m, b"ABCDEF") is None
    assert approval.refusal(cfg, _wall(2026, 11, 6, 5), m, b"ABCDEF") is None
    last = _wall(2026, 11, 5) - 1  # 23:59:59 the day before
    why = approval.refusal(cfg, last, m, b"ABCDEF")
    assert why is not None and "effective from 2026-11-05" in why and "T" in why
    assert approval.refusal(cfg, _wall(2026, 11, 4), m, b"ABCDEF") is not None
    assert approval.refusal(cfg, 0, m, b"ABCDEF") is not None


def test_clock_unknown_runs_only_on_a_journal_of_these_files_on_or_after_the_day():
    cfg = _Cfg()
    on_day = _Journal(b"ABCDEF", _wall(2026, 11, 5))
    assert approval.refusal(cfg, None, on_day, b"ABCDEF") is None
    later = _Journal(b"ABCDEF", _wall(2027, 1, 1, 3600))
    assert approval.refusal(cfg, None, later, b"ABCDEF") is None
    # A day (a second) early, other files, or no time known: refused.
    early = _Journal(b"ABCDEF", _wall(2026, 11, 5) - 1)
    why = approval.refusal(cfg, None, early, b"ABCDEF")
    assert why is not None and "RTC not set" in why
    assert approval.refusal(cfg, None, on_day, b"ABCDEG") is not None
    assert approval.refusal(cfg, None, _Journal(b"ABCDEF", None), b"ABCDEF") is not None
    assert approval.refusal(cfg, None, _Journal(b"\0" * 6, None), b"\0" * 6) is not None


def test_civil_from_days_round_trips():
    cases = (((1970, 1, 1), 0), ((1970, 1, 2), 1), ((1969, 12, 31), -1),
             ((2000, 1, 1), 10957), ((2000, 2, 29), 11016), ((2000, 3, 1), 11017),
             ((2026, 11, 5), 20762), ((2100, 2, 28), 47540), ((2100, 3, 1), 47541),
             ((2026, 12, 31), 20818), ((2027, 1, 1), 20819))
    for ymd, day in cases:
        assert dates.days_from_civil(*ymd) == day, ymd
        assert dates.civil_from_days(day) == ymd, day
    # Every day of a few years around the ones the table uses, both ways.
    day = dates.days_from_civil(2023, 12, 25)
    y, m, d = 2023, 12, 25
    for _ in range(1200):
        assert dates.civil_from_days(day) == (y, m, d)
        assert dates.days_from_civil(y, m, d) == day
        day += 1
        d += 1
        last = 29 if m == 2 and y % 4 == 0 else _DAYS_IN_MONTH[m]
        if d > last:
            d = 1
            m += 1
            if m > 12:
                m = 1
                y += 1


def test_parse_edges():
    assert dates.parse("2024-02-29") == dates.days_from_civil(2024, 2, 29)
    assert dates.parse("2026-12-31") == dates.days_from_civil(2026, 12, 31)
    assert dates.parse("1970-01-01") == 0
    for text in ("2023-02-29", "2026-13-01", "2026-04-31", "2026-01-00", "1969-12-31",
                 "2026-1-101", "2026-11-5", "2026-11-05 ", "2026-11-0a"):
        try:
            dates.parse(text)
        except ValueError:
            continue
        raise AssertionError("accepted %r" % (text,))
    assert dates.parse("2000-02-29") - dates.parse("2000-02-28") == 1
    assert dates.parse("2400-03-01") - dates.parse("2400-02-28") == 2


def test_weekday_and_working_days_edges():
    thu = dates.parse("1970-01-01")
    assert dates.weekday(thu) == 3
    fri = dates.parse("2026-11-06")
    assert dates.weekday(fri) == 4 and dates.weekday(fri + 1) == 5
    # [first, end): end itself is not counted; Friday counts, Saturday does not.
    assert dates.working_days(fri, fri + 1) == 1
    assert dates.working_days(fri, fri) == 0
    assert dates.working_days(fri + 1, fri + 3) == 0
    assert dates.working_days(fri, fri + 4) == 2


def test_the_approval_section_refuses_unknown_fields():
    from sicbo import config
    from tables import table_dict

    ok = table_dict()
    assert config.parse_table(ok).approval["reference"] == "DICJ-TEST-1"
    for key in ("effective_from", "Reference", "extra"):
        t = table_dict()
        t["approval"] = dict(t["approval"])
        t["approval"][key] = "2026-11-05"
        try:
            config.parse_table(t)
        except config.ConfigError as e:
            assert e.field == "approval." + key, e.field
        else:
            raise AssertionError("accepted approval.%s" % key)


def test_leap_years_by_the_century_rule():
    for good in ("2000-02-29", "2024-02-29", "2400-02-29"):
        dates.parse(good)
    for bad in ("2100-02-29", "2200-02-29", "2300-02-29", "2026-02-29", "2025-02-29"):
        try:
            dates.parse(bad)
        except ValueError:
            continue
        raise AssertionError("accepted %s" % bad)


class _Rtc:
    def __init__(self, dt):
        self.dt = dt

    def datetime(self):
        return self.dt


def test_the_wall_clock_counts_every_field_of_the_rtc():
    w = hw.WallClock(_Rtc((2026, 11, 30, 0, 12, 34, 56, 0)))
    w.refresh(1000)
    assert w.seconds(1000) == _wall(2026, 11, 30, 12 * 3600 + 34 * 60 + 56)
    assert w.seconds(3500) == _wall(2026, 11, 30, 12 * 3600 + 34 * 60 + 58)
    w = hw.WallClock(None)
    w.refresh(1000)
    assert w.seconds(1000) is None


def test_the_wall_clock_reads_the_rtc_again_once_a_minute():
    # Between reads the ticks count; a minute after the last read the RTC is
    # read again, so that a clock set meanwhile (or drift) is taken.
    rtc = _Rtc((2026, 11, 30, 0, 12, 0, 0, 0))
    w = hw.WallClock(rtc)
    w.refresh(0)
    start = _wall(2026, 11, 30, 12 * 3600)
    rtc.dt = (2026, 11, 30, 0, 12, 1, 30, 0)  # at the minute, 30 s ahead (set meanwhile)
    assert w.seconds(59999) == start + 59  # not yet: the ticks count
    assert w.seconds(60000) == start + 90  # a minute: the RTC read again
    assert w.seconds(61000) == start + 91
    rtc.dt = (2020, 1, 1, 0, 0, 0, 0, 0)  # lost (a year before any valid)
    assert w.seconds(120000) is None
