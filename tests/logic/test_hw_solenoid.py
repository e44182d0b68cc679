# The shaker coil and the electric shaker motor (hw.solenoid) through the
# simulated machine: pulse trains, the hard-off timer, the rest time, the
# pull-in and PWM hold, and the motor's timed run.
import time

import machine
from machine import PWM, Pin, Timer

from hw.solenoid import ShakerMotor, Solenoid

COIL = 25
MOTOR = 26
HOLD = 19660  # 30 %


def coil(max_on_ms=200, rest_ms=100, **kw):
    machine.sim_reset()
    return Solenoid(Pin(COIL, Pin.OUT), Timer(0), max_on_ms=max_on_ms, rest_ms=rest_ms,
                    ticks_ms=machine.sim_ticks_ms, **kw)


def run(sol, limit=100):
    """What the app's task does: update, sleep for what it says, again."""
    for _ in range(limit):
        w = sol.update()
        if w < 0:
            return
        machine.sim_advance(w)
    raise AssertionError("train did not end")


def rises(pin):
    return [t for t, _p, v in machine.sim_edges(pin) if v]


def test_off_at_init():
    machine.sim_reset()
    p = Pin(COIL, Pin.OUT, value=1)
    Solenoid(p, Timer(0), ticks_ms=machine.sim_ticks_ms)
    assert machine.sim_output(COIL) == 0


def test_train_of_three_pulses():
    sol = coil(rest_ms=150)
    assert sol.start(3, 60, 250)
    assert machine.sim_output(COIL) == 1  # the first pulse fires at once
    run(sol)
    assert machine.sim_on_time(COIL) == [60, 60, 60]
    assert rises(COIL) == [0, 310, 620]
    assert sol.pulses == 3 and sol.forced_offs == 0 and not sol.busy()
    assert machine.sim_output(COIL) == 0


def test_coil_forced_off_by_timer_when_caller_never_switches_it_off():
    sol = coil(max_on_ms=200)
    assert sol.start(3, 60, 100)
    # The task dies here: nobody calls update() again.
    machine.sim_advance(199)
    assert machine.sim_output(COIL) == 1
    machine.sim_advance(1)
    assert machine.sim_output(COIL) == 0
    assert sol.forced_offs == 1 and not sol.is_on()
    machine.sim_advance(5000)
    assert machine.sim_on_time(COIL) == [200]
    # When the task comes back, the train is dropped, not resumed.
    assert sol.update() == -1 and not sol.busy() and sol.pulses == 0
    assert machine.sim_on_time(COIL) == [200]


def test_late_update_cannot_stretch_a_pulse():
    sol = coil(max_on_ms=200)
    sol.start(1, 150, 0)
    machine.sim_advance(450)  # the task was starved for 450 ms
    assert sol.update() == -1
    assert machine.sim_on_time(COIL) == [200]
    assert sol.forced_offs == 1


def test_normal_pulse_disarms_the_timer():
    sol = coil(max_on_ms=200)
    sol.start(1, 60, 0)
    run(sol)
    machine.sim_advance(1000)
    assert sol.forced_offs == 0 and machine.sim_on_time(COIL) == [60]


def test_rest_time_delays_a_pulse_that_comes_too_soon():
    sol = coil(rest_ms=100)
    sol.pulse(50)
    run(sol)  # off at 50
    machine.sim_advance(10)
    assert not sol.ready()
    assert sol.pulse(50)  # asked at 60: accepted, but waits
    assert machine.sim_output(COIL) == 0
    run(sol)
    assert rises(COIL) == [0, 150]  # 50 + rest 100
    machine.sim_advance(99)
    assert not sol.ready()
    machine.sim_advance(1)
    assert sol.ready()


def test_off_time_shorter_than_rest_is_stretched():
    sol = coil(rest_ms=100)
    sol.start(3, 40, 10)
    run(sol)
    assert rises(COIL) == [0, 140, 280]
    assert machine.sim_on_time(COIL) == [40, 40, 40]


def test_rest_counts_from_a_forced_off():
    sol = coil(max_on_ms=200, rest_ms=100)
    sol.pulse(60)
    machine.sim_advance(250)  # forced off at 200
    sol.update()
    sol.pulse(60)  # at 250: rest runs to 300
    run(sol)
    assert rises(COIL) == [0, 300]


def test_start_while_busy_refused_and_bad_arguments_raise():
    sol = coil(max_on_ms=200)
    assert sol.start(2, 60, 100)
    assert not sol.start(1, 60, 0)
    for args in ((1, 201, 0), (0, 60, 0), (256, 60, 0), (1, 0, 0), (1, 60, -1)):
        try:
            sol.start(*args)
        except ValueError:
            pass
        else:
            raise AssertionError("accepted %r" % (args,))


def test_stop_switches_off_at_once():
    sol = coil()
    sol.start(3, 60, 100)
    machine.sim_advance(20)
    sol.stop()
    assert machine.sim_output(COIL) == 0 and not sol.busy() and not sol.is_on()
    machine.sim_advance(1000)
    assert sol.forced_offs == 0 and machine.sim_on_time(COIL) == [20]


def pwm_coil(**kw):
    machine.sim_reset()
    pwm = PWM(Pin(COIL), freq=20000, duty_u16=0)
    return Solenoid(None, Timer(0), max_on_ms=200, rest_ms=100, pwm=pwm, hold_duty_u16=HOLD,
                    pull_in_ms=25, ticks_ms=machine.sim_ticks_ms, **kw)


def test_pull_in_then_pwm_hold():
    sol = pwm_coil()
    sol.start(2, 80, 150)
    assert machine.sim_pwm(COIL) == (20000, 65535)
    assert sol.update() == 25
    machine.sim_advance(25)
    assert sol.update() == 55
    assert machine.sim_pwm(COIL) == (20000, HOLD)
    machine.sim_advance(55)
    sol.update()
    assert machine.sim_pwm(COIL) == (20000, 0)
    run(sol)
    assert machine.sim_on_time(COIL) == [80, 80]


def test_pwm_coil_forced_off_in_hold():
    sol = pwm_coil()
    sol.start(1, 150, 0)
    machine.sim_advance(30)
    sol.update()
    assert machine.sim_pwm(COIL) == (20000, HOLD)
    machine.sim_advance(500)  # the task stalls in the hold phase
    assert machine.sim_pwm(COIL) == (20000, 0)
    assert sol.forced_offs == 1


def test_hold_needs_pwm_and_pull_in():
    machine.sim_reset()
    for kw in ({"hold_duty_u16": HOLD, "pull_in_ms": 20},
               {"hold_duty_u16": HOLD, "pwm": PWM(Pin(COIL), freq=20000, duty_u16=0)}):
        try:
            Solenoid(Pin(27, Pin.OUT), Timer(0), **kw)
        except ValueError:
            pass
        else:
            raise AssertionError("accepted %r" % (kw,))


def _solenoid_before_the_ticks_wrap():
    """A coil of max_on 200 ms, rest 100 ms, 100 ms before the ticks wrap;
    None on a port whose ticks do not wrap at 2**30 as the ESP32's do (the
    64-bit unix port's period is 2**62: CPython's shim and the 32-bit VMs,
    where these tests run, wrap at 2**30)."""
    if time.ticks_add(0x3FFFFFFF, 1) != 0:
        return None
    machine.sim_reset(ticks=(1 << 30) - 100)
    return Solenoid(Pin(COIL, Pin.OUT), Timer(0), max_on_ms=200, rest_ms=100,
                    ticks_ms=machine.sim_ticks_ms)


def test_train_across_the_ticks_wrap():
    sol = _solenoid_before_the_ticks_wrap()
    if sol is None:
        return
    sol.start(3, 60, 100)
    run(sol)
    assert machine.sim_on_time(COIL) == [60, 60, 60]
    assert sol.forced_offs == 0


def test_motor_runs_for_its_time_and_its_timer_stops_it():
    machine.sim_reset()
    m = ShakerMotor(Pin(MOTOR, Pin.OUT), Timer(1), 3000, ticks_ms=machine.sim_ticks_ms)
    assert m.run() and m.running() and machine.sim_output(MOTOR) == 1
    assert not m.run()  # already running
    machine.sim_advance(2999)
    assert machine.sim_output(MOTOR) == 1
    machine.sim_advance(1)  # nobody calls update(): the timer stops it
    assert machine.sim_output(MOTOR) == 0 and not m.running()
    assert machine.sim_on_time(MOTOR) == [3000]
    try:
        m.run(ms=3001)
    except ValueError:
        pass
    else:
        raise AssertionError("ran past its maximum")


class InstantTimer:
    """A timer whose callback runs as it is armed: a switch-on delayed past
    the whole hard-off period (say by a long garbage collection)."""

    def init(self, mode=1, period=-1, callback=None):
        callback(self)

    def deinit(self):
        pass


def test_hard_off_that_runs_before_the_switch_on_still_wins():
    machine.sim_reset()
    sol = Solenoid(Pin(COIL, Pin.OUT), InstantTimer(), ticks_ms=machine.sim_ticks_ms)
    sol.start(1, 60, 0)
    assert machine.sim_output(COIL) == 0 and not sol.is_on()
    assert sol.forced_offs == 1
    machine.sim_reset()
    m = ShakerMotor(Pin(MOTOR, Pin.OUT), InstantTimer(), 3000, ticks_ms=machine.sim_ticks_ms)
    m.run()
    assert machine.sim_output(MOTOR) == 0 and not m.running()


def test_the_board_file_s_coil_limits_reach_the_coil_with_and_without_pwm_hold():
    # hw.build.solenoid: max_on_ms (the hard limit) and rest_ms from the board
    # file, in their places, for a plain coil and a PWM-held one.
    from hw import build
    from sicbo.board import parse_board

    for timings in ({"max_on_ms": 180, "rest_ms": 120},
                    {"max_on_ms": 180, "rest_ms": 120, "hold_percent": 30, "pull_in_ms": 20}):
        machine.sim_reset()
        # test_board_edges' board file: appkit's (its files' template made
        # at its import) and the parser no longer fit the board's heap here.
        from test_board_edges import _board

        d = _board(None)
        d["timings"] = timings
        b = parse_board(d)
        d = None
        sol = build.solenoid(b, ticks_ms=machine.sim_ticks_ms)
        assert (sol.max_on_ms, sol.rest_ms) == (180, 120), (timings, sol.max_on_ms, sol.rest_ms)


def test_the_coil_s_limits_are_checked_where_it_is_made():
    machine.sim_reset()
    pin = Pin(COIL, Pin.OUT)
    pwm = PWM(Pin(MOTOR), freq=20000, duty_u16=0)
    for kw in ({"max_on_ms": 0}, {"max_on_ms": -5}, {"rest_ms": -1},
               {"pwm": pwm, "hold_duty_u16": 65535, "pull_in_ms": 20},
               {"pwm": pwm, "hold_duty_u16": -1, "pull_in_ms": 20},
               {"pwm": pwm, "hold_duty_u16": HOLD, "pull_in_ms": 0}):
        try:
            Solenoid(pin, Timer(0), **kw)
        except ValueError:
            pass
        else:
            raise AssertionError("accepted %r" % (kw,))
    try:
        Solenoid(None, Timer(0))
    except ValueError:
        pass
    else:
        raise AssertionError("a coil with neither pin nor pwm")
    sol = Solenoid(pin, Timer(0), max_on_ms=1, rest_ms=0, ticks_ms=machine.sim_ticks_ms)
    assert sol.pulse(1) and machine.sim_output(COIL) == 1  # the smallest limits work
    run(sol)
    assert machine.sim_on_time(COIL) == [1]


def test_rest_counts_from_a_forced_off_across_the_ticks_wrap():
    # The forced off's time is the switch-on's ticks plus max_on_ms: with the
    # switch-on past half the ticks period, only ticks_add(t, max_on_ms) is
    # a valid interval (MicroPython refuses a delta beyond half the period).
    sol = _solenoid_before_the_ticks_wrap()
    if sol is None:
        return
    start = machine.sim_ticks_ms()
    sol.pulse(60)
    machine.sim_advance(250)  # forced off at 200, past the wrap
    assert sol.update() == -1 and sol.forced_offs == 1
    assert not sol.ready()  # the rest runs to 300
    machine.sim_advance(49)
    assert not sol.ready()
    machine.sim_advance(1)
    assert sol.ready()
    sol.pulse(60)
    run(sol)
    first, second = rises(COIL)
    assert first == start and machine.sim_ticks_diff(second, first) == 300


def test_a_pulse_cut_by_stop_starts_the_rest_time_from_the_stop():
    # The coil was on when stopped: its rest runs from the stop, so a pulse
    # asked for within rest_ms of it waits, as after a pulse that ended.
    sol = coil(rest_ms=100)
    machine.sim_advance(500)  # long after the coil was made
    assert sol.pulse(60)
    machine.sim_advance(20)
    sol.stop()
    machine.sim_advance(99)
    assert not sol.ready()
    assert sol.pulse(60) and machine.sim_output(COIL) == 0  # queued, not fired
    run(sol)
    assert rises(COIL) == [500, 620], rises(COIL)


class _LateHold:
    """The coil's PWM, on which the hold's write comes late: the task is
    held up just before it (an IRQ, the scheduler) past max_on_ms, so the
    hard-off timer fires first."""

    def __init__(self, pwm, late_ms):
        self.pwm = pwm
        self.late_ms = late_ms

    def duty_u16(self, duty):
        if duty == HOLD and self.late_ms:
            ms, self.late_ms = self.late_ms, 0
            machine.sim_advance(ms)
        self.pwm.duty_u16(duty)


def test_a_hard_off_that_comes_before_the_hold_is_written_keeps_the_coil_off():
    machine.sim_reset()
    pwm = _LateHold(PWM(Pin(COIL), freq=20000, duty_u16=0), 200)
    sol = Solenoid(None, Timer(0), max_on_ms=200, rest_ms=100, pwm=pwm, hold_duty_u16=HOLD,
                   pull_in_ms=25, ticks_ms=machine.sim_ticks_ms)
    sol.start(1, 150, 0)
    machine.sim_advance(30)
    sol.update()  # the pull-in is over: the hold is written, after the hard off
    assert sol.forced_offs == 1 and machine.sim_pwm(COIL) == (20000, 0)
    machine.sim_advance(1000)
    sol.update()
    assert machine.sim_pwm(COIL) == (20000, 0) and not sol.is_on() and not sol.busy()


def test_the_coil_says_off_and_not_ready_between_pulses_and_ready_after_its_rest():
    sol = coil(rest_ms=100)
    assert sol.start(2, 50, 150)
    assert sol.is_on() and not sol.ready()
    machine.sim_advance(50)
    assert sol.update() == 150  # the first pulse ended: the gap to the second
    assert not sol.is_on() and machine.sim_output(COIL) == 0
    assert not sol.ready()  # a train is running: nothing else may fire
    machine.sim_advance(150)
    sol.update()
    assert sol.is_on() and not sol.ready()
    machine.sim_advance(50)
    assert sol.update() == -1  # the train is over
    assert not sol.is_on() and machine.sim_output(COIL) == 0
    assert not sol.ready()  # resting
    machine.sim_advance(99)
    assert not sol.ready()
    machine.sim_advance(1)
    assert sol.ready()
