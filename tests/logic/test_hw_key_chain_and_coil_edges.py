# Edges of the hardware adapters on the simulated machine: the dealer's key
# chain's /PL line is made an output already high, so building the inputs
# from a board file gives the 74HC165s no load pulse of its own (a /PL
# pulled high on the board stays high until the first sample); and a coil
# with a PWM hold pulls in at full power for pull_in_ms, not longer, even
# when its task is woken early in the pull-in and then sleeps as told.
import machine
from hwkit import BITS, HIGH, LOAD, LOW, MISO, MOSI, NBITS, SCK, SENSORS
from machine import PWM, Pin, Timer

from hw import inputs
from hw.solenoid import Solenoid
from sicbo import board

COIL = 25
HOLD = 19660  # 30 %


def _board():
    ins = {}
    for name in SENSORS:
        ins[name] = {"pin": SENSORS[name], "pull": "none"}
    ins["supervisor"] = {"pin": 32, "pull": "up", "invert": True}
    return board.parse_board({
        "name": "keys chain", "inputs": ins, "outputs": {"bell": 27},
        "lamps": {"bus": "hc595", "spi": 2, "sck": SCK, "mosi": MOSI, "miso": MISO,
                  "latch": 19},
        "keys": {"bus": "hc165", "load": LOAD, "chips": 2, "invert": True, "bits": BITS,
                 "high": list(HIGH), "low": list(LOW)},
        "timings": {"debounce_ms": 20, "chatter_limit": 6, "chatter_window_ms": 500}})


def _wired():
    """A fresh sim with the chain attached (keys up, sentinels at their
    levels) and /PL pulled high on the board until the GPIO drives it."""
    machine.sim_reset()
    machine.sim_attach_165(LOAD, SCK, MISO, NBITS)
    for b in range(NBITS):
        machine.sim_set_165(LOAD, b, 0 if b in LOW else 1)
    machine.sim_set(LOAD, 1)
    machine.sim_clear_edges()


def _load_levels():
    return [v for _t, _p, v in machine.sim_edges(LOAD)]


def test_the_key_chain_s_load_line_is_made_high_with_no_pulse():
    b = _board()
    _wired()
    chain = inputs.chain_for(b)
    assert machine.sim_mode(LOAD) == Pin.OUT and machine.sim_output(LOAD) == 1
    assert _load_levels() == [], _load_levels()  # never driven low while being set up
    assert chain.sample() and chain.good
    assert _load_levels() == [0, 1], _load_levels()  # the sample's own load pulse only


def test_the_inputs_built_from_a_board_load_the_chain_once_for_their_first_sample():
    b = _board()
    _wired()
    sw = inputs.make_switches(b, machine.sim_ticks_ms)
    assert sw.count() > len(BITS) and sw.faults == 0
    # Switches samples the chain once when it is made: one /PL pulse, no other.
    assert _load_levels() == [0, 1], _load_levels()
    assert machine.sim_output(LOAD) == 1


def _pwm_coil(pull_in_ms=25):
    machine.sim_reset()
    pwm = PWM(Pin(COIL), freq=20000, duty_u16=0)
    return Solenoid(None, Timer(0), max_on_ms=200, rest_ms=100, pwm=pwm, hold_duty_u16=HOLD,
                    pull_in_ms=pull_in_ms, ticks_ms=machine.sim_ticks_ms)


def test_an_early_update_in_the_pull_in_asks_only_for_the_pull_in_left():
    sol = _pwm_coil(25)
    start = machine.sim_ticks_ms()
    assert sol.start(1, 80, 0)
    assert machine.sim_pwm(COIL) == (20000, 65535)
    machine.sim_advance(10)  # the task woken early (another event), mid pull-in
    assert sol.update() == 15  # the pull-in's 25 ms less the 10 gone
    assert machine.sim_pwm(COIL) == (20000, 65535)
    machine.sim_advance(7)
    assert sol.update() == 8
    machine.sim_advance(8)
    assert sol.update() == 55  # the hold: the pulse's 80 ms less the 25 gone
    assert machine.sim_pwm(COIL) == (20000, HOLD)
    assert machine.sim_ticks_diff(machine.sim_ticks_ms(), start) == 25


def test_a_task_that_sleeps_as_told_holds_full_power_for_the_pull_in_exactly():
    # The task's loop, woken early every time in the pull-in: full duty ends
    # at pull_in_ms after the switch-on, never later.
    for early in (1, 3, 9, 24):
        sol = _pwm_coil(25)
        start = machine.sim_ticks_ms()
        sol.start(1, 80, 0)
        full = 0
        machine.sim_advance(early)
        for _ in range(20):
            if machine.sim_pwm(COIL) != (20000, 65535):
                break
            full = machine.sim_ticks_diff(machine.sim_ticks_ms(), start)
            w = sol.update()
            assert 0 < w, w
            if machine.sim_pwm(COIL) != (20000, 65535):
                break
            machine.sim_advance(w)
        assert machine.sim_pwm(COIL) == (20000, HOLD), early
        assert full == 25, (early, full)
        while sol.busy():
            w = sol.update()
            if w > 0:
                machine.sim_advance(w)
        assert machine.sim_on_time(COIL) == [80], machine.sim_on_time(COIL)
