# Part of the simulated `machine` (sim/machine.py): the RTC, loaded on first
# use of machine.RTC. Counts on the sim clock from 2000-01-01 00:00:00.
import os
import time

import machine as _m
from machine import _int_arg, _tdiff

# The virtual board keeps the RTC across resets, as an ESP32's RTC survives a
# software reset (it is lost with the power: the relay then deletes the file).
# SICBO_SIM_RTC names a file (on the board's filesystem: /.rtc on the virtual
# board) holding the RTC's offset from the host clock.
_KEEP = os.getenv("SICBO_SIM_RTC") if hasattr(os, "getenv") else None
_UNIX_2000 = 946684800  # 2000-01-01 in the host's seconds since 1970

_rtc_base = 0     # seconds since 2000-01-01 at _rtc_ticks
_rtc_ticks = 0
_rtc_ms = 0


def _mark():
    # Where the RTC counts from: the manual clock's unwrapped total (ticks
    # wrap at 2**30 ms, 12.4 days, and their differences past 2**29; a real
    # RTC counts on), or the host's ticks on the real clock.
    return _m.sim_ticks_ms() if _m._real else _m._elapsed


def _since(mark):
    return _tdiff(_m.sim_ticks_ms(), mark) if _m._real else _m._elapsed - mark


def _reset():
    global _rtc_base, _rtc_ticks, _rtc_ms
    _rtc_base = 0
    _rtc_ticks = _mark()
    _rtc_ms = 0


def _days(y, m, d):
    # Days since 2000-01-01 (proleptic Gregorian).
    if m <= 2:
        y -= 1
        m += 12
    return 365 * y + y // 4 - y // 100 + y // 400 + (153 * (m - 3) + 2) // 5 + d - 730426


def _civil(n):
    n += 730425  # days since 0000-03-01
    era = n // 146097
    doe = n - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


class RTC:
    def __init__(self, id=0):
        pass

    def datetime(self, dt=None):
        global _rtc_base, _rtc_ticks, _rtc_ms
        if dt is None:
            el = _since(_rtc_ticks) + _rtc_ms
            s = _rtc_base + el // 1000
            days = s // 86400
            r = s - days * 86400
            y, m, d = _civil(days)
            return (y, m, d, (days + 5) % 7, r // 3600, (r // 60) % 60, r % 60,
                    (el % 1000) * 1000)
        if not isinstance(dt, (tuple, list)) or len(dt) < 7:
            raise TypeError("RTC.datetime takes (year, month, day, weekday, hours, "
                            "minutes, seconds[, subseconds])")
        y, m, d = dt[0], dt[1], dt[2]
        _int_arg(y, "RTC year", 2000, 2099)
        _int_arg(m, "RTC month", 1, 12)
        _int_arg(d, "RTC day", 1, 31)
        _int_arg(dt[4], "RTC hours", 0, 23)
        _int_arg(dt[5], "RTC minutes", 0, 59)
        _int_arg(dt[6], "RTC seconds", 0, 59)
        if _civil(_days(y, m, d)) != (y, m, d):
            raise ValueError("RTC: %d-%02d-%02d is not a date" % (y, m, d))
        _rtc_base = _days(y, m, d) * 86400 + dt[4] * 3600 + dt[5] * 60 + dt[6]
        _rtc_ticks = _mark()
        _rtc_ms = 0
        if _KEEP and _m._real:
            try:
                with open(_KEEP, "w") as f:
                    f.write(str(_rtc_base - (int(time.time()) - _UNIX_2000)))
            except OSError:
                pass

    def init(self, dt):
        self.datetime(dt)


_reset()


def _restore():
    global _rtc_base, _rtc_ticks
    if not (_KEEP and _m._real):
        return
    try:
        with open(_KEEP) as f:
            offset = int(f.read())
    except (OSError, ValueError):
        return
    _rtc_base = int(time.time()) - _UNIX_2000 + offset
    _rtc_ticks = _mark()


_restore()
