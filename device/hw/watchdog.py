# The hardware watchdog, fed only while the firmware is healthy as a whole.
#
# Each task registers with a deadline and calls alive(task, now) in its loop.
# feed(now), called often (e.g. from the main loop or the slowest task), feeds
# machine.WDT only if every registered task has reported within its deadline.
# One stalled task means no feeding, so the board resets after the WDT's
# timeout (machine.WDT cannot be stopped once made). stalled(now) names the
# first late task, for the journal before the reset. With no task registered
# feed() feeds: register every task before the first feed.

import time
from array import array

from micropython import const

from hw import default_ticks

_NONE = const(-1)


class Watchdog:
    """Watchdog(wdt, max_tasks=8, ticks_ms=None). `wdt` is a machine.WDT
    (or anything with feed())."""

    def __init__(self, wdt, max_tasks=8, ticks_ms=None):
        if max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        self._wdt = wdt
        self._ticks = ticks_ms if ticks_ms is not None else default_ticks
        self._n = 0
        self._last = array("i", [0] * max_tasks)
        self._deadline = array("i", [0] * max_tasks)
        self._names = [""] * max_tasks
        self.feeds = 0
        self.withheld = 0

    def register(self, name, deadline_ms, now=None):
        """Adds a task; returns its id. Its clock starts now."""
        if self._n >= len(self._names):
            raise ValueError("too many watched tasks")
        if deadline_ms <= 0:
            raise ValueError("deadline_ms must be > 0")
        if now is None:
            now = self._ticks()
        i = self._n
        self._names[i] = name
        self._deadline[i] = deadline_ms
        self._last[i] = now
        self._n += 1
        return i

    def alive(self, task, now=None):
        if now is None:
            now = self._ticks()
        self._last[task] = now

    def stalled(self, now=None):
        """The id of the first task past its deadline, or -1."""
        if now is None:
            now = self._ticks()
        for i in range(self._n):
            if time.ticks_diff(now, self._last[i]) > self._deadline[i]:
                return i
        return _NONE

    def feed(self, now=None):
        """Feeds the WDT if every task is on time. Returns True if it fed."""
        if self.stalled(now) != _NONE:
            self.withheld += 1
            return False
        self._wdt.feed()
        self.feeds += 1
        return True

    def name(self, task):
        return self._names[task]

    def tasks(self):
        return self._n


def arm(timeout_ms, ticks_ms=None):
    """The hardware watchdog armed now (machine.WDT cannot be stopped once
    made) and its task register. Last in start-up: a board refused earlier
    never has one."""
    from machine import WDT

    return Watchdog(WDT(timeout=timeout_ms), ticks_ms=ticks_ms)
