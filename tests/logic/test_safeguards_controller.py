# mprun-heap: controller
# The controller's own safeguards (controller.Controller) through the pins: the coil
# stopped at once by a tamper, betting opened on the tick the shake ends, a
# sensor that settles at a new level re-stated with the time it settled,
# and the fault record naming its time and its clock right.
import machine
from appkit import SOLENOID, Table

from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S

WINDOW = 1000  # appkit's board: chatter_window_ms


def _new(t, before):
    return [r for r in t.journal() if r.seq > before and r.type != R.J_METERS]


def test_a_tamper_mid_pulse_stops_the_coil_at_once():
    t = Table()
    t.close_dome()
    t.set("shake", 1)
    t.run(30)  # debounced: the first pulse (60 ms) is on
    assert t.state() == E.ST_SHAKING and machine.sim_output(SOLENOID) == 1
    t.set("cover", 0)
    t.run(25)  # debounced (20 ms) and acted on within this pass
    assert t.state() == E.ST_IDLE
    assert machine.sim_output(SOLENOID) == 0 and not t.hw.solenoid.busy()
    on = machine.sim_on_time(SOLENOID)
    assert len(on) == 1 and on[0] < 60, on
    t.run(2000)
    assert len(machine.sim_on_time(SOLENOID)) == 1  # no pulse after the tamper
    t.close()


def test_betting_opens_on_the_tick_the_shake_ends():
    t = Table()
    t.close_dome()
    t.press("shake")
    t.run(2000)
    recs = t.journal()
    start = [r for r in recs if r.type == R.J_ROUND][-1].ticks
    opened = [r for r in recs if r.type == R.J_OPEN][-1].ticks
    assert opened - start == 3 * (60 + 250), opened - start  # pulse_count * (on + off)
    t.close()


def test_the_actuators_pass_asks_for_its_next_call():
    t = Table()
    now = t.now()
    assert t.ctl.actuators(now) == 50  # idle: the task's own period
    t.close_dome()
    t.press("shake", 10)
    w = t.ctl.actuators(t.now())
    assert 1 <= w <= 60, w  # the coil's pulse ends sooner than the period
    t.close()


def test_the_actuators_pass_asks_for_the_call_that_ends_the_coil_pulse():
    # Mid-pulse, with less of the pulse left than the task's period: the pass
    # asks to be called when the coil is due off, not a period later.
    t = Table()
    t.close_dome()
    sol = t.ctl.hw.solenoid
    t.set("shake", 1)
    for _ in range(1000):  # until the first pulse fires
        if sol.is_on():
            break
        t.run(1)
    assert sol.is_on()
    machine.sim_advance(30)  # the task was late: 30 ms without a pass
    now = t.now()
    w = t.ctl.actuators(now)
    assert w == sol.update(now) and 0 < w < 50, w
    t.close()


def _chatter_to(t, name, final, n=30):
    lv = 0
    for _ in range(n):
        lv = 1 - lv
        t.set(name, lv)
        machine.sim_advance(2)
        t.ctl.poll(t.now())
    t.set(name, final)
    t.run(WINDOW + 50)


def test_a_cover_that_settles_off_is_restated_with_its_time():
    t = Table()
    t.open_round()
    t.press("key_bell")
    t.run(1600)
    assert t.state() == E.ST_CLOSED
    seq = t.m.seq
    _chatter_to(t, "cover", 0)
    assert not t.hw.switches.faulted(0)
    recs = _new(t, seq)
    types = [r.type for r in recs]
    assert types == [R.J_ALARM, R.J_COVER_OFF], types
    assert t.state() == E.ST_RESULT and t.m.levels[S.COVER] == 0
    cover_off = recs[1]
    assert cover_off.ticks > recs[0].ticks + WINDOW - 100, (cover_off.ticks, recs[0].ticks)
    assert t.now() - cover_off.ticks < 100
    t.close()


def test_a_supervisor_key_that_settles_on_is_restated_once():
    t = Table()
    seq = t.m.seq
    _chatter_to(t, "supervisor", 1)
    recs = _new(t, seq)
    types = [(r.type, r.p(0)) for r in recs]
    assert types == [(R.J_ALARM, E.R_SENSOR_FAULT), (R.J_SUPERVISOR, 1),
                     (R.J_ALARM_CLEAR, 0)], types
    assert t.m.levels[S.SUPERVISOR] == 1 and t.m.levels[S.COVER] == 0 and not t.m.alarm
    assert t.now() - recs[1].ticks < 100
    t.close()


def test_a_fault_record_has_its_time_and_clock_in_their_places():
    t = Table()
    assert t.ctl.events == 0  # nothing handled since the boot
    t.press("key_bell")  # means nothing while idle: one event
    assert t.ctl.events == 1
    seq = t.m.seq
    t.ctl.journal_fault(E.F_TASK, 2, 9)
    rec = t.journal()[-1]
    assert rec.type == R.J_FAULT and rec.seq == seq + 1 and t.m.seq == seq + 1
    assert (rec.p(0), rec.p(1), rec.p(2)) == (E.F_TASK, 2, 9)
    # appkit's RTC: 2026-11-30 12:00 UTC, seconds since 2000-01-01.
    assert abs(rec.wall - 849355200) < 3600, rec.wall
    t.close()


def test_new_files_are_checked_cached_then_the_board_resets():
    import os

    import faults
    import tablefiles
    from appkit import board_dict, fresh_folder, table_dict, write_files

    folder = fresh_folder()
    write_files(folder, board_dict(), table_dict())  # no cache yet
    resets = len(machine.sim_resets())
    log = []
    try:
        faults.start(folder + "/board.json", folder + "/table.json", folder, log=log.append,
                     ticks_ms=machine.sim_ticks_ms, fault_file=folder + "/fault.txt")
    except SystemExit:
        pass  # the sim's machine.reset()
    else:
        raise AssertionError("no reset after caching: %r" % log)
    assert len(machine.sim_resets()) == resets + 1
    assert tablefiles.CACHE_NAME in os.listdir(folder)
    assert faults.Faults(folder + "/fault.txt").failed_boots()[0] == 0  # a restart, not a fault


def _rises(pin):
    return [t for t, _p, v in machine.sim_edges(pin) if v]


def test_the_coil_train_has_the_boards_count_on_and_off_times():
    t = Table()
    t.close_dome()
    machine.sim_clear_edges()
    t.press("shake")
    t.run(2000)
    r = _rises(SOLENOID)
    assert [x - r[0] for x in r] == [0, 310, 620], r  # pulse_on_ms 60 + pulse_off_ms 250
    assert machine.sim_on_time(SOLENOID) == [60, 60, 60]
    t.close()


def test_the_electric_shaker_runs_its_time_and_stops_on_a_tamper():
    from appkit import MOTOR, table_dict

    t = Table(table=table_dict(shaker="electric"))
    t.close_dome()
    machine.sim_clear_edges()
    t.press("shake")
    assert machine.sim_output(MOTOR) == 1 and t.state() == E.ST_SHAKING
    t.run(3100)
    assert machine.sim_on_time(MOTOR) == [3000] and t.state() == E.ST_OPEN
    recs = t.journal()
    start = [r for r in recs if r.type == R.J_ROUND][-1].ticks
    opened = [r for r in recs if r.type == R.J_OPEN][-1].ticks
    assert opened - start == 3000
    t.press("key_bell")
    t.run(1600)
    t.set("cover", 0)
    t.set("clasp_left", 0)
    t.set("clasp_right", 0)
    t.run(60)
    t.enter(1, 2, 3)
    t.press("key_payout")
    t.close_dome()
    t.press("shake")
    assert machine.sim_output(MOTOR) == 1
    t.set("clasp_left", 0)
    t.run(25)
    assert machine.sim_output(MOTOR) == 0 and t.state() == E.ST_IDLE
    assert len(machine.sim_on_time(MOTOR)) == 2 and machine.sim_on_time(MOTOR)[1] < 3000
    t.close()


def test_the_timer_never_fires_early():
    t = Table()
    t.close_dome()
    t.press("shake")
    deadline = t.m.deadline
    assert t.m.timer_on
    t.ctl.poll(deadline - 1)
    assert t.state() == E.ST_SHAKING and t.m.timer_on
    t.ctl.poll(deadline)
    assert t.state() == E.ST_OPEN and not t.m.timer_on
    t.close()


def test_levels_settling_after_chatter_are_restated_only_when_changed():
    # Every level different from the others: cover on, left clasp open,
    # right clasp fastened, supervisor off (idle: re-stating journals nothing
    # but the supervisor, so the events are counted).
    t = Table()
    t.set("cover", 1)
    t.set("clasp_right", 1)
    t.run(60)
    levels = {"cover": 1, "clasp_left": 0, "clasp_right": 1, "supervisor": 0}
    for name in ("cover", "clasp_left", "clasp_right", "supervisor"):
        events = t.ctl.events
        _chatter_to(t, name, levels[name])
        assert t.ctl.events == events + 1, (name, "only the FAULT event")
        lv = t.m.levels
        assert (lv[S.COVER], lv[S.CLASP_LEFT], lv[S.CLASP_RIGHT], lv[S.SUPERVISOR]) == (
            1, 0, 1, 0), name
        t.press("supervisor", 60)  # acknowledge the alarm
        t.run(60)
    for name in ("cover", "clasp_left", "clasp_right", "supervisor"):
        new = 1 - levels[name]
        events = t.ctl.events
        _chatter_to(t, name, new)
        assert t.m.levels[S.INPUT_SIGNALS.index(name)] == new, name
        assert t.ctl.events == events + 2, (name, "the FAULT, then the new level")
        levels[name] = new
        if name != "supervisor":
            t.press("supervisor", 60)
            t.run(60)


def test_keys_settling_after_chatter_are_no_event():
    t = Table()
    t.close_dome()
    for name in ("key_bell", "key_confirm", "shake", "key_face_6"):
        events = t.ctl.events
        _chatter_to(t, name, 0)
        assert t.ctl.events == events + 1, name  # the FAULT only
        t.press("supervisor", 60)
        t.run(60)
    assert t.state() == E.ST_IDLE
    t.close()


def test_the_boot_says_where_it_resumed_and_drops_the_board_file():
    t = Table()
    assert "sicbo: test table, round 0, state 0" in t.log, t.log
    assert not hasattr(t.ctl, "board") and not hasattr(t.ctl, "cfg")  # kept: none of the files
    conf = [r for r in t.journal() if r.type == R.J_CONFIG]
    boot = [r for r in t.journal() if r.type == R.J_BOOT][-1]
    assert conf and conf[-1].ticks == boot.ticks and conf[-1].wall == boot.wall
    assert abs(conf[-1].wall - 849355200) < 3600
    t.close()


def test_an_idle_table_raises_no_alarm():
    t = Table()
    seq = t.m.seq
    t.run(200)
    assert _new(t, seq) == [] and not t.m.alarm and t.ctl.forced_offs == 0
    t.close()
