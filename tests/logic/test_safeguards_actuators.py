# The actuators' limits (hw.solenoid, hw.TimedOutput): each check that stops
# a coil or a motor from running too long, too often or with nonsense timings
# has a test that fails when the check is gone or off by one.
import machine
from machine import PWM, Pin, Timer

from hw import TimedOutput
from hw.bell import Bell
from hw.solenoid import ShakerMotor, Solenoid

COIL = 25
MOTOR = 26
BELL = 27


def _refused(make):
    try:
        make()
    except ValueError:
        return True
    return False


def _coil(**kw):
    machine.sim_reset()
    return Solenoid(Pin(COIL, Pin.OUT), Timer(0), ticks_ms=machine.sim_ticks_ms, **kw)


def test_coil_timings_refused_one_at_a_time():
    # Either bad value alone is refused (not only both together).
    assert _refused(lambda: _coil(max_on_ms=0, rest_ms=100))
    assert _refused(lambda: _coil(max_on_ms=-5, rest_ms=100))
    assert _refused(lambda: _coil(max_on_ms=200, rest_ms=-1))
    assert _refused(lambda: _coil(max_on_ms=0, rest_ms=-1))
    # The smallest good values are accepted.
    sol = _coil(max_on_ms=1, rest_ms=0)
    assert sol.max_on_ms == 1 and sol.rest_ms == 0


def test_coil_hold_duty_bounds():
    machine.sim_reset()

    def make(duty, pull_in=20):
        pwm = PWM(Pin(COIL), freq=20000, duty_u16=0)
        return Solenoid(None, Timer(0), pwm=pwm, hold_duty_u16=duty, pull_in_ms=pull_in,
                        ticks_ms=machine.sim_ticks_ms)

    assert not _refused(lambda: make(0))
    assert not _refused(lambda: make(65534))
    assert _refused(lambda: make(65535))
    assert _refused(lambda: make(-1))
    assert _refused(lambda: make(100, pull_in=0))
    assert not _refused(lambda: make(100, pull_in=1))
    assert _refused(lambda: Solenoid(None, Timer(0), ticks_ms=machine.sim_ticks_ms))


def test_coil_pulse_limits_at_their_edges():
    sol = _coil(max_on_ms=200, rest_ms=100)
    assert sol.start(1, 200, 0)  # exactly max_on_ms: accepted
    sol.stop()
    machine.sim_advance(1000)
    assert _refused(lambda: sol.start(1, 201, 0))
    assert _refused(lambda: sol.start(0, 60, 0))
    assert _refused(lambda: sol.start(1, 60, -1))
    assert sol.start(255, 1, 0)  # the largest train: accepted
    sol.stop()
    assert _refused(lambda: sol.start(256, 60, 0))


def test_coil_hard_off_is_max_on_ms_not_the_pulse():
    # A 60 ms pulse whose task stalls is cut at max_on_ms (the timer), and the
    # next pulse waits rest_ms after that forced off.
    sol = _coil(max_on_ms=150, rest_ms=100)
    sol.start(2, 60, 0)
    machine.sim_advance(149)
    assert machine.sim_output(COIL) == 1
    machine.sim_advance(1)
    assert machine.sim_output(COIL) == 0 and sol.forced_offs == 1
    assert sol.update() == -1 and not sol.busy()
    assert sol.ready(machine.sim_ticks_ms() + 99) is False
    assert sol.ready(machine.sim_ticks_ms() + 100) is True


def test_coil_rest_counted_from_the_last_off():
    sol = _coil(max_on_ms=200, rest_ms=100)
    assert sol.ready()
    sol.pulse(50)
    while sol.update() >= 0:
        machine.sim_advance(sol.update())
    off = machine.sim_ticks_ms()
    assert not sol.ready(off + 99) and sol.ready(off + 100)
    assert sol.pulses == 1 and sol.forced_offs == 0


def test_motor_run_time_and_hard_limit_are_not_swapped():
    machine.sim_reset()
    m = ShakerMotor(Pin(MOTOR, Pin.OUT), Timer(1), 3000, 5000, ticks_ms=machine.sim_ticks_ms)
    assert m.default_ms == 3000 and m.max_on_ms == 5000
    assert m.run()
    machine.sim_advance(3000)
    assert machine.sim_output(MOTOR) == 0  # the run time, not the limit
    assert machine.sim_on_time(MOTOR) == [3000]
    assert m.run(ms=5000)  # up to the limit on request
    machine.sim_advance(5000)
    assert machine.sim_on_time(MOTOR) == [3000, 5000]
    assert _refused(lambda: m.run(ms=5001))
    # Without a limit the run time is the limit.
    m2 = ShakerMotor(Pin(MOTOR, Pin.OUT), Timer(1), 3000, ticks_ms=machine.sim_ticks_ms)
    assert m2.max_on_ms == 3000 and _refused(lambda: m2.run(ms=3001))


def test_bell_ring_time_and_limit_are_not_swapped():
    machine.sim_reset()
    b = Bell(Pin(BELL, Pin.OUT), Timer(2), 1500, 4000, ticks_ms=machine.sim_ticks_ms)
    assert b.default_ms == 1500 and b.max_on_ms == 4000
    b2 = Bell(Pin(BELL, Pin.OUT), Timer(2), 1500, ticks_ms=machine.sim_ticks_ms)
    assert b2.max_on_ms == 1500


def test_timed_output_bounds():
    machine.sim_reset()
    p = Pin(BELL, Pin.OUT)
    assert _refused(lambda: TimedOutput(p, Timer(2), 0, 100))
    assert _refused(lambda: TimedOutput(p, Timer(2), 101, 100))
    o = TimedOutput(p, Timer(2), 100, 100, ticks_ms=machine.sim_ticks_ms)
    assert _refused(lambda: o.start(101))
    assert _refused(lambda: o.start(-1))
    assert o.start(100) and not o.start(50)  # a start while on is refused
    assert o.starts == 1
    o.stop()
    assert o.start(1) and o.is_on()  # the shortest on time
    o.stop()
    assert o.start(0) and o.update(machine.sim_ticks_ms() + 99) == 1  # 0: the default


class _LateTimer:
    """A timer whose callback never comes (a scheduled callback held up)."""

    def init(self, mode=1, period=-1, callback=None, hard=False):
        self.period = period

    def deinit(self):
        pass


def test_a_stopped_output_stays_off_for_the_backstop():
    machine.sim_reset()
    o = TimedOutput(Pin(BELL, Pin.OUT), _LateTimer(), 300, 300, ticks_ms=machine.sim_ticks_ms)
    assert o.start(now=1000)
    o.stop()
    assert o.update(1100) == -1 and not o.is_on() and machine.sim_output(BELL) == 0


def test_coil_defaults_and_state():
    machine.sim_reset()
    sol = Solenoid(Pin(COIL, Pin.OUT), Timer(0), ticks_ms=machine.sim_ticks_ms)
    assert sol.max_on_ms == 200 and sol.rest_ms == 100  # as documented
    assert sol.is_on() is False and sol.busy() is False
    sol.pulse(50)
    assert sol.is_on() is True and sol.busy() is True


def test_timed_output_backstop_ends_on_time():
    machine.sim_reset()
    t = _LateTimer()
    o = TimedOutput(Pin(BELL, Pin.OUT), t, 300, 300, ticks_ms=machine.sim_ticks_ms)
    assert o.start(now=1000)
    assert t.period == 300
    assert o.update(1299) == 1 and o.is_on()
    assert o.update(1300) == -1 and not o.is_on()
    assert machine.sim_output(BELL) == 0
    assert o.update(1400) == -1


class _Recording:
    """A timer that records what is asked of it (its callback never runs)."""

    def __init__(self):
        self.calls = []

    def init(self, mode=1, period=-1, callback=None, hard=False):
        self.calls.append(("init", period))

    def deinit(self):
        self.calls.append(("deinit",))


def test_stopping_disarms_the_hard_off_timer():
    machine.sim_reset()
    t = _Recording()
    o = TimedOutput(Pin(BELL, Pin.OUT), t, 300, 300, ticks_ms=machine.sim_ticks_ms)
    o.start()
    o.stop()
    assert t.calls == [("init", 300), ("deinit",)]
    assert machine.sim_output(BELL) == 0 and not o.is_on()
    t = _Recording()
    sol = Solenoid(Pin(COIL, Pin.OUT), t, max_on_ms=200, ticks_ms=machine.sim_ticks_ms)
    sol.start(1, 60, 0)
    sol.stop()
    assert t.calls == [("init", 200), ("deinit",)]
    # A pulse that ends on time disarms its timer too.
    del t.calls[:]
    machine.sim_advance(500)
    sol.pulse(60)
    machine.sim_advance(60)
    assert sol.update() == -1
    assert t.calls == [("init", 200), ("deinit",)]


def test_an_idle_coil_asks_for_no_call():
    sol = _coil(max_on_ms=200, rest_ms=100)
    assert sol.update() == -1 and sol.update(machine.sim_ticks_ms() + 5000) == -1
    sol.pulse(50)
    assert sol.update() == 50
    machine.sim_advance(50)
    assert sol.update() == -1 and not sol.busy() and sol.pulses == 1
