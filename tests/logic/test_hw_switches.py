# Debounced inputs (hw.switches) through the simulated machine: edges after
# the debounce time, bounces and glitches swallowed, active-low keys, the
# chatter fault and its recovery, IRQ-counted edges, the event ring.
import machine
from hwkit import drain, poll
from machine import Pin

from hw.switches import EDGE, FAULT, RECOVER, Switches

COVER = 34  # input-only, external pull: the sim drives it
KEY = 32  # to ground, internal pull-up: active low
CLASP = 35


def make(debounce_ms=20, chatter_limit=6, chatter_window_ms=500, **kw):
    machine.sim_reset()
    machine.sim_set(COVER, 0)
    machine.sim_set(CLASP, 1)
    pins = [Pin(COVER, Pin.IN), Pin(KEY, Pin.IN, Pin.PULL_UP), Pin(CLASP, Pin.IN)]
    return Switches(pins, debounce_ms, chatter_limit, chatter_window_ms,
                    invert=(False, True, False), ticks_ms=machine.sim_ticks_ms, **kw)


def test_initial_levels_and_no_events():
    sw = make()
    assert (sw.level(0), sw.level(1), sw.level(2)) == (0, 0, 1)
    poll(sw, 100)
    assert drain(sw) == [] and sw.count() == 3


def test_debounced_edge_after_bounces():
    sw = make()
    poll(sw, 50)  # t = 50
    for level in (1, 0, 1, 0, 1):  # the cover lands with bounces, 5 ms apart
        machine.sim_set(COVER, level)
        sw.update()
        machine.sim_advance(5)
    # last raw change at t = 70; accepted once it has been still for 20 ms
    poll(sw, 15)
    assert drain(sw) == [] and sw.level(0) == 0
    poll(sw, 10)
    assert drain(sw) == [(EDGE, 0, 1, 70)]
    assert sw.level(0) == 1
    poll(sw, 200)
    assert drain(sw) == []


def test_glitch_shorter_than_debounce_ignored():
    sw = make()
    machine.sim_set(COVER, 1)
    poll(sw, 15)
    machine.sim_set(COVER, 0)
    poll(sw, 100)
    assert drain(sw) == [] and sw.level(0) == 0


def test_active_low_key_reads_pressed_as_one():
    sw = make()
    poll(sw, 10)
    machine.sim_set(KEY, 0)  # pressed: pulls the pin to ground
    poll(sw, 40)
    machine.sim_set(KEY, None)  # released: the pull-up wins
    poll(sw, 40)
    assert drain(sw) == [(EDGE, 1, 1, 10), (EDGE, 1, 0, 50)]


def test_chatter_raises_one_fault_instead_of_a_flood_then_recovers():
    sw = make(chatter_limit=6, chatter_window_ms=500)
    poll(sw, 10)
    for k in range(40):  # a loose clasp sensor, a change every 10 ms
        machine.sim_set(CLASP, k & 1)
        sw.update()
        machine.sim_advance(10)
    ev = drain(sw)
    assert ev == [(FAULT, 2, 1, 70)]  # the 7th transition: t = 10 + 6 * 10
    assert sw.faulted(2) and sw.faults == 1
    assert sw.level(2) == 1  # frozen at the last good level
    machine.sim_set(CLASP, 0)  # it settles, open
    poll(sw, 495)
    assert drain(sw) == [] and sw.faulted(2)
    poll(sw, 10)
    ev = drain(sw)
    assert len(ev) == 1 and ev[0][:3] == (RECOVER, 2, 0)
    assert not sw.faulted(2) and sw.level(2) == 0
    # normal edges resume
    machine.sim_set(CLASP, 1)
    poll(sw, 40)
    ev = drain(sw)
    assert len(ev) == 1 and ev[0][:3] == (EDGE, 2, 1)


def test_slow_changes_are_not_chatter():
    sw = make(chatter_limit=6, chatter_window_ms=500)
    for k in range(12):  # a change every 300 ms: at most 2 per window
        machine.sim_set(COVER, (k + 1) & 1)
        poll(sw, 300)
    ev = drain(sw)
    assert len(ev) == 12 and all(e[0] == EDGE for e in ev)
    assert sw.faults == 0


def test_irq_counts_edges_that_polling_misses():
    sw = make(chatter_limit=6, chatter_window_ms=500, use_irq=True)
    sw.update()
    for k in range(10):  # 10 edges between two polls, ending where it began
        machine.sim_set(COVER, (k + 1) & 1)
    assert machine.sim_level(COVER) == 0
    sw.update()
    assert drain(sw) == [(FAULT, 0, 0, 0)]


def test_an_irq_counted_edge_is_counted_once_then_debounced():
    # The IRQ's count is taken by one poll: the polls after it see a still
    # input, which settles into one edge, not a chatter fault.
    sw = make(chatter_limit=6, chatter_window_ms=500, use_irq=True)
    sw.update()
    machine.sim_set(COVER, 1)  # the cover put on: one edge, counted by the IRQ
    poll(sw, 200)
    got = drain(sw)
    assert [e[:3] for e in got] == [(EDGE, 0, 1)] and sw.faults == 0, got


def test_without_irq_those_edges_are_invisible():
    sw = make(chatter_limit=6, chatter_window_ms=500)
    sw.update()
    for k in range(10):
        machine.sim_set(COVER, (k + 1) & 1)
    sw.update()
    poll(sw, 100)
    assert drain(sw) == []


def test_full_ring_counts_overflows_and_keeps_levels():
    sw = make(ring_size=2)
    for k in range(3):
        machine.sim_set(COVER, (k + 1) & 1)
        poll(sw, 50)
    assert sw.pending() == 2 and sw.overflows == 1
    assert drain(sw) == [(EDGE, 0, 1, 0), (EDGE, 0, 0, 50)]
    assert sw.level(0) == 1


def test_ring_wraps_in_order():
    sw = make(chatter_limit=50, ring_size=3)
    seen = []
    for k in range(8):
        machine.sim_set(COVER, (k + 1) & 1)
        poll(sw, 30)
        if k % 2:
            seen.extend(drain(sw))
    assert [e[2] for e in seen] == [1, 0, 1, 0, 1, 0, 1, 0]
    assert [e[3] for e in seen] == [30 * k for k in range(8)]
    assert sw.overflows == 0


def test_a_recovered_input_counts_its_chatter_afresh_from_the_recovery():
    # settle_ms shorter than the chatter window: the clasp recovers 100 ms
    # after its chatter, and chatters again 7 times, 20 ms apart, all within
    # one window (1000 ms) of its recovery: a fault again, however the window
    # before the first fault lay (it began at t = 0 and would end mid-burst).
    sw = make(chatter_limit=6, chatter_window_ms=1000, settle_ms=100)
    poll(sw, 10)
    for k in range(7):  # t = 10..70: the 7th change faults it
        machine.sim_set(CLASP, k & 1)
        sw.update()
        machine.sim_advance(10)
    assert drain(sw) == [(FAULT, 2, 1, 70)]
    poll(sw, 120)  # still, open, since t = 70
    assert drain(sw) == [(RECOVER, 2, 0, 170)] and sw.level(2) == 0
    poll(sw, 900 - machine.sim_ticks_ms())
    for k in range(7):  # t = 900..1020, polled every 5 ms
        machine.sim_set(CLASP, (k + 1) & 1)
        poll(sw, 20)
    assert drain(sw) == [(FAULT, 2, 0, 1020)], "chatter after recovery not faulted"
    assert sw.faulted(2) and sw.faults == 2


def test_the_event_ring_holds_32_events_by_default():
    sw = make(chatter_limit=1000)
    sw.update()
    level = 0
    for _ in range(40):  # 40 debounced edges of the cover, none popped
        level = 1 - level
        machine.sim_set(COVER, level)
        poll(sw, 30)
    assert sw.pending() == 32 and sw.overflows == 8, (sw.pending(), sw.overflows)


def test_a_ring_of_one_event_gives_each_event_in_turn():
    sw = make(ring_size=1)
    sw.update()
    got = []
    for level in (1, 0, 1):
        machine.sim_set(COVER, level)
        poll(sw, 30)
        got += [e[:3] for e in drain(sw)]
    assert got == [(EDGE, 0, 1), (EDGE, 0, 0), (EDGE, 0, 1)], got


class _Level:
    """An input that reads a fixed level (the bank takes any object with value())."""

    def __init__(self, v):
        self.v = v

    def value(self):
        return self.v


def test_a_bank_takes_1_to_64_inputs_and_refuses_none_or_more():
    machine.sim_reset()
    for n in (1, 64):
        sw = Switches([_Level(i & 1) for i in range(n)], ticks_ms=machine.sim_ticks_ms)
        assert sw.count() == n and sw.level(n - 1) == (n - 1) & 1
    for n in (0, 65):
        try:
            Switches([_Level(0)] * n, ticks_ms=machine.sim_ticks_ms)
        except ValueError as e:
            assert str(e) == "1..64 inputs", e
        else:
            raise AssertionError("a bank of %d inputs was taken" % n)
