# Edges of the hardware adapters (hw/__init__.py): the wall clock counts the
# RTC as set from its first valid year on (the year before: never set, no
# time guessed), and an output built for a hard-IRQ off arms its one-shot
# timer as one (the ESP32 port's default callbacks are scheduled, soft:
# a busy heap could hold the coil's or the bell's off back).
import machine
from machine import Pin

import hw
from hw.bell import Bell
from hw.solenoid import Solenoid
from sicbo import dates

BELL = 27
COIL = 25


class _Rtc:
    def __init__(self, dt):
        self.dt = dt

    def datetime(self):
        return self.dt


def _seconds(dt, now=1000):
    w = hw.WallClock(_Rtc(dt))
    w.refresh(now)
    return w.seconds(now)


def test_the_rtc_counts_as_set_from_the_first_valid_year_on():
    # The first second of 2025 is a time; the last of 2024 is an RTC never set.
    first = (dates.days_from_civil(2025, 1, 1) - dates.DAY_2000) * 86400
    assert _seconds((2025, 1, 1, 2, 0, 0, 0, 0)) == first
    assert _seconds((2025, 6, 30, 0, 8, 15, 0, 0)) is not None
    assert _seconds((2024, 12, 31, 1, 23, 59, 59, 0)) is None
    assert _seconds((2000, 1, 1, 5, 0, 0, 0, 0)) is None  # the ESP32's after a power cut


def test_a_clock_set_to_the_first_valid_year_is_taken_at_its_next_read():
    rtc = _Rtc((2024, 12, 31, 1, 23, 0, 0, 0))
    w = hw.WallClock(rtc)
    w.refresh(0)
    assert w.seconds(0) is None
    rtc.dt = (2025, 1, 1, 2, 0, 0, 0, 0)
    w.refresh(5000)
    assert w.seconds(7000) == (dates.days_from_civil(2025, 1, 1) - dates.DAY_2000) * 86400 + 2


class _Recording:
    """A timer that records how it is armed (its callback never runs)."""

    ONE_SHOT = 0

    def __init__(self):
        self.calls = []

    def init(self, mode=1, period=-1, callback=None, hard=None):
        self.calls.append((mode, period, hard))

    def deinit(self):
        pass


def test_an_output_built_for_a_hard_off_arms_a_hard_irq_timer():
    machine.sim_reset()
    for hard, want in ((True, True), (False, None)):  # soft: the port's default
        t = _Recording()
        b = Bell(Pin(BELL, Pin.OUT), t, 300, ticks_ms=machine.sim_ticks_ms, hard=hard)
        assert b.ring()
        b.stop()
        assert t.calls == [(machine.Timer.ONE_SHOT, 300, want)], (hard, t.calls)
        t = _Recording()
        sol = Solenoid(Pin(COIL, Pin.OUT), t, max_on_ms=200, ticks_ms=machine.sim_ticks_ms,
                       hard=hard)
        sol.start(1, 60, 0)
        sol.stop()
        assert t.calls == [(machine.Timer.ONE_SHOT, 200, want)], (hard, t.calls)


def test_arm_one_shot_asks_the_port_for_a_hard_callback_only_when_told():
    t = _Recording()
    hw.arm_one_shot(t, 150, t.deinit, True)
    hw.arm_one_shot(t, 150, t.deinit, False)
    assert t.calls == [(machine.Timer.ONE_SHOT, 150, True), (machine.Timer.ONE_SHOT, 150, None)]
