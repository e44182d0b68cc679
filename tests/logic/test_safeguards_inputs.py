# The debounced inputs' own limits (hw.switches): a chatter count that
# saturates instead of overflowing, the smallest settings accepted, and the
# chatter limit a bank made without one uses: the board file's default, ten
# changes a second.
import machine
from hwkit import drain
from machine import Pin

from hw.switches import FAULT, Switches
from sicbo import board

COVER = 34


def _make(**kw):
    machine.sim_reset()
    machine.sim_set(COVER, 0)
    return Switches([Pin(COVER, Pin.IN)], ticks_ms=machine.sim_ticks_ms, **kw)


def _refused(kw):
    try:
        _make(**kw)
    except ValueError:
        return True
    return False


def test_smallest_settings_accepted_and_nonsense_refused():
    sw = _make(debounce_ms=0, chatter_limit=1, chatter_window_ms=1, ring_size=1)
    assert sw.level(0) == 0
    for kw in ({"debounce_ms": -1}, {"chatter_limit": 0}, {"chatter_window_ms": 0},
               {"ring_size": 0}):
        assert _refused(kw), kw
    machine.sim_reset()
    assert _refused({}) is False
    try:
        Switches([], ticks_ms=machine.sim_ticks_ms)
    except ValueError:
        pass
    else:
        raise AssertionError("no inputs accepted")


def test_chatter_count_saturates():
    # Far more than 255 changes in one window: counted up to 255, never past
    # the byte it is kept in; the input is faulted once.
    sw = _make(debounce_ms=1, chatter_limit=250, chatter_window_ms=60000)
    level = 0
    for _ in range(300):
        level = 1 - level
        machine.sim_set(COVER, level)
        sw.update()
        machine.sim_advance(2)
    sw.update()
    assert sw.faulted(0) and sw.faults == 1
    ev = [0, 0, 0, 0]
    kinds = []
    while sw.pop(ev):
        kinds.append(ev[0])
    assert kinds.count(FAULT) == 1


def test_without_a_chatter_limit_the_eleventh_change_within_a_second_is_the_fault():
    # The documented default, chatter_limit=10 in a window of 1000 ms, as a
    # board file that names none gets (sicbo.board.TIMINGS): ten changes of
    # a loose sensor stay within it, the eleventh raises the one fault.
    assert board.TIMINGS["chatter_limit"][0] == 10
    assert board.TIMINGS["chatter_window_ms"][0] == 1000
    sw = _make()
    level = 0
    for _ in range(10):  # a change every 10 ms: never still for the 20 ms debounce
        level = 1 - level
        machine.sim_set(COVER, level)
        sw.update()
        machine.sim_advance(10)
    assert not sw.faulted(0) and sw.faults == 0 and drain(sw) == []
    machine.sim_set(COVER, 1 - level)  # the eleventh, at t = 100
    sw.update()
    assert sw.faulted(0) and sw.faults == 1
    assert drain(sw) == [(FAULT, 0, 0, 100)]
    assert sw.level(0) == 0  # frozen at the last good level
