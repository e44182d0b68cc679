# The debounced inputs' own limits (hw.switches): a chatter count that
# saturates instead of overflowing, and the smallest settings accepted.
import machine
from machine import Pin

from hw.switches import FAULT, Switches

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
