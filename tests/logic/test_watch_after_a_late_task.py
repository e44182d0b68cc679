# mprun-heap: controller
# A task late once is contained (outputs off, the round voided, J_FAULT), and
# then the watchdog is never fed again, even when the task reports once more:
# the board resets, as a late task must. Found in review: the table went on
# playing, fed, with its fault lamps overwritten, and a later real stall was
# named by no J_FAULT. Seen failing before the fix.
import controller
import machine
from appkit import SOLENOID, Table

from sicbo import events as E
from sicbo import records as R


def test_a_task_late_once_is_contained_and_the_board_is_reset_all_the_same():
    t = Table()
    wd = t.hw.watchdog
    now = t.now()
    for name, _p, _s in controller.TASKS:
        wd.register(name, E.TASK_DEADLINE_MS, now)
    t.close_dome()
    t.set("shake", 1)
    t.run(30)  # the shake: the first pulse is on
    for i in range(len(controller.TASKS)):
        wd.alive(i, t.now())
    assert t.state() == E.ST_SHAKING and machine.sim_output(SOLENOID) == 1
    # The loop held past the tasks' deadline by one blocking pass.
    machine.sim_advance(E.TASK_DEADLINE_MS + 100)
    late = t.now()
    assert t.ctl.watch(late) is False
    assert machine.sim_output(SOLENOID) == 0  # contained: the coil off
    assert [r for r in t.journal() if r.type == R.J_FAULT]
    # The tasks report again: still never fed.
    for i in range(len(controller.TASKS)):
        wd.alive(i, late + 5)
    assert t.ctl.watch(late + 10) is False
    resets = len(machine.sim_resets())
    for _ in range(40):
        machine.sim_advance(500)
        for i in range(len(controller.TASKS)):
            wd.alive(i, t.now())
        assert t.ctl.watch(t.now()) is False
        if len(machine.sim_resets()) > resets:
            break
    assert len(machine.sim_resets()) > resets  # the WDT reset the board
