# The watchdog (hw.watchdog) over the simulated machine.WDT: fed only while
# every registered task reports alive within its deadline; one stalled task
# stops the feeding and the board resets.
import machine
from machine import WDT

from hw.watchdog import Watchdog

WDT_RESET = 3  # machine.WDT_RESET


def setup(timeout=1000):
    machine.sim_reset()
    wd = Watchdog(WDT(timeout=timeout), max_tasks=4, ticks_ms=machine.sim_ticks_ms)
    a = wd.register("round", 300)
    b = wd.register("lamps", 500)
    return wd, a, b


def test_fed_while_every_task_is_alive():
    wd, a, b = setup()
    for _ in range(100):  # 10 s, both tasks report every 100 ms
        wd.alive(a)
        wd.alive(b)
        assert wd.feed()
        machine.sim_advance(100)
    assert machine.sim_resets() == []
    assert wd.feeds == 100 and wd.withheld == 0
    assert wd.stalled() == -1


def test_stalled_task_means_no_feeding_and_a_reset():
    wd, a, b = setup(timeout=1000)
    for _ in range(5):
        wd.alive(a)
        wd.alive(b)
        wd.feed()
        machine.sim_advance(100)
    # t = 500; "lamps" last reported at 400 and now hangs
    fed = []
    reset_at = None
    for _ in range(40):
        wd.alive(a)
        fed.append(wd.feed())
        machine.sim_advance(50)
        if machine.sim_resets():
            reset_at = machine.sim_ticks_ms()
            break
    assert fed[:9] == [True] * 9  # 500..900: lamps within its 500 ms
    assert fed[9:] == [False] * (len(fed) - 9)  # from 950 on: 950 - 400 > 500
    assert wd.stalled() == b and wd.name(b) == "lamps"
    assert machine.sim_resets() == [WDT_RESET]
    assert reset_at == 900 + 1000  # the WDT's timeout after the last feed


def test_a_task_that_never_reports_stalls_after_its_deadline():
    wd, a, b = setup()
    machine.sim_advance(300)
    wd.alive(b)
    assert wd.feed()  # "round" registered at 0, 300 ms: still on time
    machine.sim_advance(1)
    wd.alive(b)
    assert not wd.feed() and wd.stalled() == a


def test_recovered_task_feeds_again():
    wd, a, b = setup(timeout=5000)
    machine.sim_advance(400)
    wd.alive(b)
    assert not wd.feed()
    wd.alive(a)
    assert wd.feed()
    assert wd.withheld == 1 and wd.feeds == 1


def test_registration_limits():
    machine.sim_reset()
    wd = Watchdog(WDT(timeout=2000), max_tasks=2, ticks_ms=machine.sim_ticks_ms)
    wd.register("a", 100)
    wd.register("b", 100)
    assert wd.tasks() == 2
    try:
        wd.register("c", 100)
    except ValueError:
        pass
    else:
        raise AssertionError("third task accepted")
    machine.sim_reset()
    wd = Watchdog(WDT(timeout=2000), ticks_ms=machine.sim_ticks_ms)
    try:
        wd.register("zero", 0)
    except ValueError:
        pass
    else:
        raise AssertionError("deadline 0 accepted")
