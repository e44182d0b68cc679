# The bell (hw.bell): a timed ring whose end is the one-shot timer armed when
# it starts, through the simulated machine.
import machine
from machine import Pin, Timer

from hw.bell import Bell

BELL = 27


def bell(ring_ms=1500, max_ms=None, level=0):
    machine.sim_reset()
    return Bell(Pin(BELL, Pin.OUT, value=level), Timer(2), ring_ms, max_ms,
                ticks_ms=machine.sim_ticks_ms)


def test_silent_at_init():
    bell(level=1)
    assert machine.sim_output(BELL) == 0


def test_ring_ends_by_its_timer_without_the_caller():
    b = bell(1500)
    assert b.ring()
    assert b.ringing() and machine.sim_output(BELL) == 1
    machine.sim_advance(1499)
    assert machine.sim_output(BELL) == 1
    machine.sim_advance(1)
    assert machine.sim_output(BELL) == 0 and not b.ringing()
    machine.sim_advance(10000)
    assert machine.sim_on_time(BELL) == [1500]


def test_ring_while_ringing_refused():
    b = bell(1000)
    b.ring()
    machine.sim_advance(500)
    assert not b.ring()
    machine.sim_advance(500)
    assert machine.sim_on_time(BELL) == [1000]
    assert b.ring()  # silent again: rings
    assert b.starts == 2


def test_shorter_ring_and_maximum():
    b = bell(1000, max_ms=2000)
    b.ring(ms=300)
    machine.sim_advance(2000)
    b.ring(ms=2000)
    machine.sim_advance(3000)
    assert machine.sim_on_time(BELL) == [300, 2000]
    try:
        b.ring(ms=2001)
    except ValueError:
        pass
    else:
        raise AssertionError("rang past its maximum")


def test_update_is_a_backstop_for_a_lost_timer():
    machine.sim_reset()
    t = Timer(2)
    b = Bell(Pin(BELL, Pin.OUT), t, 800, ticks_ms=machine.sim_ticks_ms)
    b.ring()
    assert b.update() == 800
    t.deinit()  # the callback never comes (say the timer was taken)
    machine.sim_advance(900)
    assert machine.sim_output(BELL) == 1
    assert b.update() == -1
    assert machine.sim_output(BELL) == 0 and not b.ringing()


def test_stop_silences_at_once():
    b = bell(1500)
    b.ring()
    machine.sim_advance(100)
    b.stop()
    machine.sim_advance(3000)
    assert machine.sim_on_time(BELL) == [100]
