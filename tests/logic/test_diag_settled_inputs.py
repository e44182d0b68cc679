# mprun-heap: controller
# The moving-part tests of diag (solenoid, bell, lamp walk) judge the cover
# and the clasps by their debounced levels after the switches have settled,
# never by the instant the command first reads the pins: a cover that is
# coming off as the technician types reads "on" at that instant, and the coil
# must not fire under a lifted cover. The settling itself is bounded: three
# debounce times and a millisecond, no poll after.
import machine
from appkit import BELL, SOLENOID, Table, board_dict
from diagkit import _close, _diag_records, _out, _pulses, _table

import diag


class _CoverLifted:
    """diag's clock, stepped by its own sleeps (nothing depends on the
    host's timing), that lifts the cover the first time the command reads
    the clock: after the command made its switch bank with the pins reading
    the cover on, before it polls them (diag reads no clock before that)."""

    def __init__(self, clock, t):
        self.ticks_diff = clock.ticks_diff
        self.ticks_add = clock.ticks_add
        self._now = clock.ticks_ms()
        self._t = t
        self.lifted = False

    def ticks_ms(self):
        if not self.lifted:
            self.lifted = True
            _close(self._t, 0, 1, 1)
        return self._now

    def sleep_ms(self, ms):
        if ms > 0:
            self._now = self.ticks_add(self._now, ms)


def test_a_cover_coming_off_as_a_test_starts_is_refused():
    t = _table()
    clock = diag.time
    try:
        for test in (diag.solenoid, diag.bell, diag.lamps):
            _close(t)  # cover on, both clasps fastened: as the command begins
            machine.sim_clear_edges()
            diag.time = lifting = _CoverLifted(clock, t)
            del _out[:]
            ran = test()
            diag.time = clock
            assert lifting.lifted, test
            assert ran is False, (test, _out)
            assert "refused" in _out[-1] and "cover on" in _out[-1], _out
            assert _pulses(SOLENOID) == 0 and _pulses(BELL) == 0, test
    finally:
        diag.time = clock
    assert _diag_records(t) == []


class _Stepped:
    """diag's clock, stepped by its own sleeps only."""

    def __init__(self, clock):
        self.ticks_diff = clock.ticks_diff
        self.ticks_add = clock.ticks_add
        self.now = clock.ticks_ms()

    def ticks_ms(self):
        return self.now

    def sleep_ms(self, ms):
        if ms > 0:
            self.now = self.ticks_add(self.now, ms)


def test_the_switches_settle_for_three_debounce_times_and_no_longer():
    # A 21 ms debounce: the settle is 3 * 21 + 1 = 64 ms, a whole number of
    # diag's 2 ms polls, so the last poll falls just before the bound and
    # none is made once it is reached.
    t = Table(board=board_dict(bell_ms=50, debounce_ms=21))
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    clock = diag.time
    diag.time = stepped = _Stepped(clock)
    start = stepped.now
    try:
        del _out[:]
        diag.sensors()
    finally:
        diag.time = clock
    assert len(_out) > 5 and not [x for x in _out if "failed" in x], _out
    assert [x.split()[:4] for x in _out if x.startswith("cover ")] == [
        ["cover", "GPIO34", "0", "0"]], _out
    assert stepped.ticks_diff(stepped.now, start) == 3 * 21 + 1
