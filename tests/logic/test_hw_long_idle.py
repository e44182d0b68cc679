# A table left alone for a week: its stored ticks are then more than 2**29 ms
# old, and a ticks_diff against them is negative (the ticks wrap at 2**30 ms
# on the ESP32, 12.4 days). Each case was found in review and seen failing
# before its fix: the coil's rest read as not over (betting opened with no
# shake, the train fired by itself days later), a key's chatter window never
# started again (a false fault voided the round), the wall clock went back 12
# days in the journal.
import machine
from hwkit import drain, poll
from machine import Pin, Timer

from hw import WallClock
from hw.solenoid import Solenoid
from hw.switches import FAULT, Switches

COIL = 25
KEY = 32
HALF = 1 << 29


def _idle(ms):
    while ms > 0:
        step = HALF - 1 if ms > HALF - 1 else ms
        machine.sim_advance(step)
        ms -= step


def test_a_coil_rested_a_week_fires_at_once():
    machine.sim_reset()
    sol = Solenoid(Pin(COIL, Pin.OUT), Timer(0), max_on_ms=200, rest_ms=150,
                   ticks_ms=machine.sim_ticks_ms)
    assert sol.pulse(60)
    machine.sim_advance(60)
    assert sol.update() == -1
    _idle(HALF + 1000)  # 6.2 days without a shake
    assert sol.ready()
    assert sol.start(3, 60, 250)
    assert machine.sim_output(COIL) == 1  # the first pulse now, not in 6 days
    for _ in range(20):
        w = sol.update()
        if w < 0:
            break
        machine.sim_advance(w)
    assert sol.pulses == 4 and sol.forced_offs == 0 and not sol.busy()


def test_a_key_pressed_after_a_week_is_no_chatter():
    machine.sim_reset()
    sw = Switches([Pin(KEY, Pin.IN, Pin.PULL_UP)], 20, 10, 1000, invert=(True,),
                  ticks_ms=machine.sim_ticks_ms)
    poll(sw, 100)
    _idle(HALF + 1000)
    for _ in range(6):  # six clean presses, minutes apart
        machine.sim_set(KEY, 0)
        poll(sw, 100)
        machine.sim_set(KEY, None)
        poll(sw, 100)
        machine.sim_advance(300000)
    evs = drain(sw)
    assert evs and not [e for e in evs if e[0] == FAULT], evs


def test_the_wall_clock_after_a_quiet_week_reads_the_rtc_again():
    machine.sim_reset()
    rtc = machine.RTC()
    rtc.datetime((2026, 11, 30, 0, 12, 0, 0, 0))
    w = WallClock(rtc)
    t0 = machine.sim_ticks_ms()
    w.refresh(t0)
    s0 = w.seconds(t0)
    _idle(7 * 86400 * 1000)  # a week with no event
    assert abs(w.seconds(machine.sim_ticks_ms()) - s0 - 7 * 86400) <= 1
    # The simulated RTC counts on across the wrap, as a board's does.
    assert rtc.datetime()[:3] == (2026, 12, 7)
