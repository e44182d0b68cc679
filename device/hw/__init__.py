# Thin hardware adapters. Every adapter takes its pins, buses and timers as
# constructor arguments (built by the app from the board file), plus a
# `ticks_ms` callable, so that tests pass the simulated `machine` objects and
# drive the clock. Outputs are active high: an output that is off is low, the
# level a reset or a crash leaves the driver transistors in.
#
# Hardware is the bundle of one board's adapters (built by hw/build.py from
# a checked board file): everything the controller touches goes through it,
# so tests can swap any part. WallClock is the wall clock from the board's
# RTC: seconds since 2000-01-01 UTC, or None while the RTC has not been set
# (a power cut loses the ESP32's; the host sets it on deploy and diag). A
# time is never guessed: a record made without one says so.
#
# TimedOutput is the shared part of the bell and the electric shaker motor: an
# output that is on for a bounded time. The one-shot timer armed when it goes
# on is what switches it off, so a task that dies or stalls cannot leave the
# output on; update() is only a backstop for a late (scheduled) callback.

import time

from machine import Timer
from micropython import const

from sicbo import journal

_RTC_VALID_YEAR = const(2025)  # an RTC before this year was never set
_REREAD_MS = const(60000)


def default_ticks():
    """The default clock of the adapters: time.ticks_ms (a plain int on every
    port; wrapped so the type checker sees an int, not the stubs' _TicksMs)."""
    return time.ticks_ms()


def arm_one_shot(timer, period_ms, callback, hard):
    """Arms `timer` once for `period_ms`. `hard` asks the port for a hard-IRQ
    callback (the ESP32 port's default callbacks are scheduled, soft)."""
    if hard:
        timer.init(mode=Timer.ONE_SHOT, period=period_ms, callback=callback, hard=True)
    else:
        timer.init(mode=Timer.ONE_SHOT, period=period_ms, callback=callback)


class TimedOutput:
    """An output that is on for at most `max_on_ms` per start.

    start(ms, now) switches it on and arms the one-shot `timer` for `ms`; the
    timer's callback switches it off, with no help from the caller. `ms`
    defaults to `default_ms`; more than `max_on_ms` is refused. A start while
    on is refused (returns False)."""

    def __init__(self, pin, timer, default_ms, max_on_ms, ticks_ms=None, hard=False):
        if not 0 < default_ms <= max_on_ms:
            raise ValueError("default_ms must be 1..max_on_ms")
        self._pin = pin
        self._timer = timer
        self.default_ms = default_ms
        self.max_on_ms = max_on_ms
        self._ticks = ticks_ms if ticks_ms is not None else default_ticks
        self._hard = hard
        self._on = False
        self._since = 0
        self._for = 0
        self.starts = 0
        self._cb = self._expired  # one bound method, made here, not in the IRQ
        pin.value(0)

    def _expired(self, _t):
        # Timer callback: no allocation.
        self._pin.value(0)
        self._on = False

    def start(self, ms=0, now=None):
        if ms == 0:
            ms = self.default_ms
        if not 0 < ms <= self.max_on_ms:
            raise ValueError("on time must be 1..max_on_ms")
        if self._on:
            return False
        if now is None:
            now = self._ticks()
        self._since = now
        self._for = ms
        self._on = True
        self.starts += 1
        # Timer first, output second: the output is never on without its
        # timer. Should the callback run in between (a start delayed past
        # the whole period), it has cleared _on and the output goes off again.
        arm_one_shot(self._timer, ms, self._cb, self._hard)
        self._pin.value(1)
        if not self._on:
            self._pin.value(0)
        return True

    def update(self, now=None):
        """Backstop: off once the time is up, even if the timer is late.
        Returns the ms left on, or -1 when off."""
        if not self._on:
            return -1
        if now is None:
            now = self._ticks()
        left = self._for - time.ticks_diff(now, self._since)
        if left <= 0:
            self.stop()
            return -1
        return left

    def stop(self):
        self._pin.value(0)
        self._on = False
        self._timer.deinit()

    def is_on(self):
        return self._on


class Hardware:
    """The adapters of one board (hw/build.py makes them)."""

    def __init__(self):
        self.switches = None
        self.solenoid = None
        self.motor = None
        self.bell = None
        self.lamps = None
        self.uart = None
        self.watchdog = None

    def all_off(self):
        """Every actuator off: at start, on exit, before a reset."""
        for a in (self.solenoid, self.motor, self.bell):
            if a is not None:
                a.stop()


class WallClock:
    """WallClock(rtc): read from the RTC once a minute; between reads, ticks
    count the seconds, so an event costs no RTC call and no allocation."""

    def __init__(self, rtc=None):
        self._rtc = rtc
        self._base = None
        self._base_ticks = 0

    def refresh(self, now):
        if self._rtc is None:
            self._base = None
            return
        y, mo, d, _wd, h, mi, s, _sub = self._rtc.datetime()
        if y < _RTC_VALID_YEAR:
            self._base = None
            return
        days = journal.days_from_civil(y, mo, d) - journal.DAY_2000
        self._base = days * 86400 + h * 3600 + mi * 60 + s
        self._base_ticks = now

    def seconds(self, now):
        if self._base is None:
            return None
        d = time.ticks_diff(now, self._base_ticks)
        if d < 0 or d >= _REREAD_MS:  # below 0: read 2**29 ms or more ago (a quiet week)
            self.refresh(now)
            if self._base is None:
                return None
        return self._base + time.ticks_diff(now, self._base_ticks) // 1000
