# The running table's tasks (controller._every): each pass of a task is told
# to the watchdog (hw.watchdog.Watchdog.alive) with the time of that pass, so
# that a task that stops passing, and only such a task, stops the feeding
# and resets the board. Stepped by hand: asyncio.sleep_ms a pause that hands
# control back to the test, the clock the test's.
import asyncio

import controller


class _Sleep:
    def __init__(self, ms):
        self.ms = ms

    def __await__(self):
        yield self.ms

    __iter__ = __await__


class _Watchdog:
    def __init__(self):
        self.told = []

    def alive(self, task, now):
        self.told.append((task, now))


class _Hw:
    def __init__(self):
        self.watchdog = _Watchdog()


class _Ctl:
    def __init__(self):
        self.hw = _Hw()


class _Time:
    """The controller's `time`: ticks_ms() reads `now`, moved by each pass."""

    def __init__(self):
        self.now = 1000

    def ticks_ms(self):
        return self.now


def test_each_pass_of_a_task_is_told_to_the_watchdog_with_its_time():
    ctl = _Ctl()
    clock = _Time()
    passes = []

    def step(c, now):
        passes.append(now)
        clock.now += 7
        return None

    saved = (controller.time, asyncio.sleep_ms)
    controller.time, asyncio.sleep_ms = clock, _Sleep
    try:
        co = controller._every(ctl, step, 3, 20)
        waits = [co.send(None) for _ in range(4)]
        co.close()
    finally:
        controller.time, asyncio.sleep_ms = saved
    assert passes == [1000, 1007, 1014, 1021], passes
    assert ctl.hw.watchdog.told == [(3, 1000), (3, 1007), (3, 1014), (3, 1021)], \
        ctl.hw.watchdog.told
    assert waits == [20, 20, 20, 20], waits
