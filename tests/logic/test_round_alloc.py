# Key event -> command allocates nothing: on MicroPython the heap is locked
# around handle() (any allocation raises MemoryError); on CPython heap_lock is
# the shim's no-op and the test checks the behaviour only.
import micropython

from roundkit import Rig
from sicbo import events as E
from sicbo import records as R


def _locked(r, ev, arg=0):
    r.now += 10
    m = r.m
    micropython.heap_lock()
    try:
        n = m.handle(ev, arg, r.now, None)
    finally:
        micropython.heap_unlock()
    r._drain(n)
    return n


def test_dealer_keys_to_commands_allocate_nothing():
    r = Rig()
    r.arm()
    assert _locked(r, E.EV_SHAKE) >= 3  # solenoid, timer, lamps, show
    r.now += 5000
    _locked(r, E.EV_TIMER)
    assert r.m.state == E.ST_OPEN
    _locked(r, E.EV_BELL)
    assert r.has(E.C_BELL)
    _locked(r, E.EV_CLASP_L_OFF)
    _locked(r, E.EV_COVER_OFF)
    for f in (6, 5, 4):
        _locked(r, E.EV_FACE, f)
    _locked(r, E.EV_CONFIRM)
    assert r.m.state == E.ST_PAYING and r.lamp("BIG")
    _locked(r, E.EV_COVER_ON)  # the violation path too
    _locked(r, E.EV_PAYOUT)
    assert r.m.state == E.ST_IDLE


def test_refusals_and_tamper_allocate_nothing():
    r = Rig()
    _locked(r, E.EV_SHAKE)
    assert r.types() == [R.J_REFUSED]
    _locked(r, E.EV_FACE, 9)
    r.arm()
    _locked(r, E.EV_SHAKE)
    _locked(r, E.EV_CLASP_R_OFF)
    assert r.types() == [R.J_ALARM, R.J_VOID]


def test_wall_clock_record_allocates_nothing():
    r = Rig()
    r.arm()
    r.now += 10
    micropython.heap_lock()
    try:
        n = r.m.handle(E.EV_SHAKE, 0, r.now, 830000000)
    finally:
        micropython.heap_unlock()
    r._drain(n)
    assert r.recs[0].wall == 830000000
