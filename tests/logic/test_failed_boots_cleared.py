# The running table's watchdog loop (controller._main) clears the failed boots
# in a row (faults.Faults.clear) once the table has run for E.STABLE_MS, and
# not before: a board that faulted at its last boots and now runs is back in
# service for good, while one that dies within the minute keeps counting
# towards E.MAX_FAILED_BOOTS (test_faults.py).
#
# The loop is stepped here one pass at a time, with no event loop: its clock
# (the controller's `time`) is a manual one, asyncio.sleep_ms a pause that
# hands control back to the test, and asyncio.create_task a recorder (the
# table's tasks are not what is tested). Every step is bounded: nothing here
# can wait or spin for ever.
import asyncio
import time

import controller
import faults
from folderkit import rmdir, tmpdir

from sicbo import events as E


class _Runaway(Exception):
    pass


class _Clock:
    """The controller's `time` module: ticks_ms() reads `now`, set by the
    test; the board's ticks arithmetic (wrap included) for the rest."""

    def __init__(self, now):
        self.now = now
        self.reads = 0

    def ticks_ms(self):
        self.reads += 1
        if self.reads > 10000:  # a loop that never pauses: fail, never hang
            raise _Runaway("the watchdog loop does not pause")
        return self.now

    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)

    def ticks_add(self, a, b):
        return time.ticks_add(a, b)


class _Pause:
    """What asyncio.sleep_ms gives the loop: one yield, back to the test."""

    def __init__(self, ms):
        self.ms = ms

    def __await__(self):
        yield self.ms

    __iter__ = __await__


class _Hw:
    watchdog = None  # the task ids are then the rows of TASKS


class _Ctl:
    """What the watchdog loop uses of a Controller: its hardware (no
    watchdog), its watchdog pass, and the power-on's fault path."""

    def __init__(self, fault_path):
        self.hw = _Hw()
        self.faults = faults.Faults(fault_path, None)
        self.watched = []

    def watch(self, now):
        self.watched.append(now)
        return False


class _Loop:
    """controller._main(ctl) stepped by hand, one pass of its loop per step."""

    def __init__(self, ctl, clock):
        self.ctl = ctl
        self.clock = clock
        self.tasks = []
        self.pauses = []

    def __enter__(self):
        self._saved = (controller.time, asyncio.sleep_ms, asyncio.create_task)
        controller.time = self.clock
        asyncio.sleep_ms = _Pause
        asyncio.create_task = self.tasks.append
        self.co = controller._main(self.ctl)
        return self

    def step(self):
        passes = len(self.ctl.watched)
        self.pauses.append(self.co.send(None))
        assert len(self.ctl.watched) == passes + 1, "not one pass per step"

    def __exit__(self, *exc):
        controller.time, asyncio.sleep_ms, asyncio.create_task = self._saved
        self.co.close()
        for co in self.tasks:
            co.close()  # never started
        return False


def _failed_boots(folder, journaled=1, n=E.MAX_FAILED_BOOTS - 1):
    path = folder + "/fault.txt"
    entries = [[E.F_HARDWARE, E.K_OS, 0, journaled, "stage %d: OSError 5" % E.F_HARDWARE]
               for _ in range(n)]
    assert faults.write_file(n, entries, path)
    return path


def _run_a_minute(start, name):
    folder = tmpdir(name)
    path = _failed_boots(folder)
    ctl = _Ctl(path)
    clock = _Clock(start)
    counts = []
    with _Loop(ctl, clock) as loop:
        loop.step()  # the first pass, at the start
        assert len(loop.tasks) == len(controller.TASKS)  # the table's tasks started
        while time.ticks_diff(clock.now, start) < E.STABLE_MS - E.WATCHDOG_FEED_MS:
            clock.now = time.ticks_add(clock.now, E.WATCHDOG_FEED_MS)
            loop.step()
            counts.append(faults.read_file(path)[0])
        # Just short of the minute: still the failed boots in a row.
        clock.now = time.ticks_add(start, E.STABLE_MS - 1)
        loop.step()
        assert faults.read_file(path)[0] == E.MAX_FAILED_BOOTS - 1
        assert counts and counts == [E.MAX_FAILED_BOOTS - 1] * len(counts), counts
        # The minute: the table runs, the count is gone.
        clock.now = time.ticks_add(start, E.STABLE_MS)
        loop.step()
        assert faults.read_file(path) == (0, []), faults.read_file(path)
        # The loop goes on feeding, every WATCHDOG_FEED_MS.
        clock.now = time.ticks_add(clock.now, E.WATCHDOG_FEED_MS)
        loop.step()
        assert set(loop.pauses) == {E.WATCHDOG_FEED_MS}, loop.pauses
    rmdir(folder)


def test_the_failed_boots_are_cleared_once_the_table_has_run_a_minute():
    _run_a_minute(123456, "cleared")


def test_the_minute_is_counted_across_the_ticks_wrap():
    # A board up for days boots again just before its ticks wrap: the minute
    # is still a minute, not cleared at once nor never.
    _run_a_minute(time.ticks_add(0, -E.STABLE_MS // 2), "wrap")


def test_failed_boots_not_yet_journaled_are_kept_to_be_journaled_count_cleared():
    # The count is cleared, but a failed boot the journal does not hold yet
    # stays in the file for the next boot (or diag.clear_fault) to journal.
    folder = tmpdir("kept")
    path = _failed_boots(folder, journaled=0, n=2)
    ctl = _Ctl(path)
    clock = _Clock(5000)
    with _Loop(ctl, clock) as loop:
        loop.step()
        clock.now = 5000 + E.STABLE_MS
        loop.step()
    n, entries = faults.read_file(path)
    rmdir(folder)
    assert n == 0 and len(entries) == 2 and entries[-1][3] == 0, (n, entries)
