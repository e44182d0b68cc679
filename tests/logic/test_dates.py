from sicbo import dates


def test_day_numbers():
    assert dates.parse("1970-01-01") == 0
    assert dates.parse("2000-03-01") - dates.parse("2000-02-28") == 2  # leap year
    assert dates.parse("2100-03-01") - dates.parse("2100-02-28") == 1  # not leap


def test_weekdays():
    assert dates.weekday(dates.parse("2026-11-29")) == 6  # a Sunday
    assert dates.weekday(dates.parse("2003-01-31")) == 4  # Despacho 31/2003, a Friday


def test_working_days_skip_weekends_and_holidays():
    mon = dates.parse("2026-11-02")
    assert dates.working_days(mon, mon + 7) == 5
    assert dates.working_days(mon, mon + 7, {mon + 1}) == 4
    assert dates.working_days(mon + 5, mon + 7) == 0


def test_malformed_dates_refused():
    for text in ("2026-02-30", "26-11-02", "2026/11/02", "2026-00-10", "abcd-ef-gh", 20261102):
        try:
            dates.parse(text)
        except ValueError:
            continue
        raise AssertionError("accepted %r" % (text,))
