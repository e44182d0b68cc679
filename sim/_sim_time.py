# Part of the simulated `machine` (sim/machine.py): Timer, WDT, resets and
# the manual clock's sim_advance, loaded on first use of any of them.
import machine as _m
from machine import (
    _HALF,
    _NPINS,
    HARD_RESET,
    SOFT_RESET,
    WDT_RESET,
    _dispatch,
    _int_arg,
    _irq_fn,
    _irq_pin,
    _irq_trig,
    _mode,
    _oreg,
    _pull,
    _pump,
    _pwm_on,
    _queue,
    _resets,
    _t_cb,
    _t_due,
    _t_mode,
    _t_obj,
    _t_on,
    _t_period,
    _tadd,
    _tdiff,
    _update,
    _wframe,
    sim_ticks_ms,
)

_wdt_on = False
_wdt_timeout = 0
_wdt_fed = 0


def _reset():
    global _wdt_on
    _wdt_on = False


class Timer:
    ONE_SHOT = 0
    PERIODIC = 1

    def __init__(self, id, mode=1, period=-1, callback=None, freq=-1):
        if not isinstance(id, int):
            raise TypeError("Timer id must be an int, got %r" % (id,))
        if id < 0 or id > 3:
            raise ValueError("Timer(%d) doesn't exist: the ESP32 has Timer(0..3)" % id)
        self._id = id
        if period != -1 or freq != -1 or callback is not None:
            self.init(mode=mode, period=period, callback=callback, freq=freq)

    def init(self, mode=1, period=-1, callback=None, freq=-1):
        i = self._id
        if mode not in (0, 1):
            raise ValueError("Timer mode must be Timer.ONE_SHOT or Timer.PERIODIC, got %r"
                             % (mode,))
        if callback is not None and not callable(callback):
            raise TypeError("Timer callback must be callable or None")
        if freq != -1:
            if period != -1:
                raise ValueError("Timer: give period or freq, not both")
            if not isinstance(freq, (int, float)) or freq <= 0 or freq > 1000:
                raise ValueError("Timer freq must be in (0, 1000] Hz in the simulator")
            period = int(1000 / freq)
        if not isinstance(period, int) or isinstance(period, bool):
            raise TypeError("Timer period must be an int (ms), got %r" % (period,))
        if period <= 0:
            raise ValueError("Timer period must be > 0 ms, got %d" % period)
        _t_mode[i] = mode
        _t_period[i] = period
        _t_cb[i] = callback
        _t_obj[i] = self
        _t_due[i] = _tadd(sim_ticks_ms(), period)
        _t_on[i] = 1

    def deinit(self):
        _t_on[self._id] = 0
        _t_obj[self._id] = None

    def __repr__(self):
        return "Timer(%d)" % self._id


class WDT:
    def __init__(self, id=0, timeout=5000):
        global _wdt_on, _wdt_timeout, _wdt_fed
        if id != 0:
            raise ValueError("WDT(%r) doesn't exist: use WDT(0)" % (id,))
        _int_arg(timeout, "WDT timeout (ms)", 1, 0x7FFFFFFF)
        _wdt_timeout = timeout
        _wdt_fed = sim_ticks_ms()
        _wdt_on = True
        _wdt_tell()

    def feed(self):
        global _wdt_fed
        if _wdt_on:
            _wdt_fed = sim_ticks_ms()
            _wdt_tell()
        _pump()


def _wdt_tell():
    # On the virtual board the table also runs the watchdog, on wall time: a
    # board that stops pumping the sim (stuck at the REPL, in a long loop)
    # still resets, as an ESP32's does. It hears of every arm and feed.
    if _m._wire is not None:
        __import__("_sim_wire")._wdt(_wdt_timeout)


def _board_reset(cause):
    # What a reset does to the hardware: timers and WDT stop, every pin is
    # released (outputs fall to their external/pull level), IRQs are cleared.
    global _wdt_on
    _resets.append(cause)
    _m._cause = cause
    _wdt_on = False
    _m._qn = 0
    for i in range(4):
        _t_on[i] = 0
        _t_obj[i] = None
    for p in range(_NPINS):
        _irq_fn[p] = None
        _irq_pin[p] = None
        _irq_trig[p] = 0
        _pwm_on[p] = 0
        _oreg[p] = 0
        if _mode[p]:
            _mode[p] = 0
            _pull[p] = 0
            _update(p)
    if _m._wire is not None:
        _wframe(b"R", bytes((cause,)))


def _exit(what, cause):
    # The reset ends the program. On the virtual board (SICBO_VBOARD_RESET_EXIT
    # set) the interpreter exits with that status for a hard or watchdog reset,
    # so that the relay restarts it as at power-on, and with status 0 for a
    # soft reset (as sys.exit() does); elsewhere SystemExit names the reset.
    code = _m._env("SICBO_VBOARD_RESET_EXIT")
    if code:
        raise SystemExit(0 if cause == SOFT_RESET else int(code))
    raise SystemExit(what)


def _fire_due(now):
    # Fire every timer and WDT expiry due at `now` (ticks), in time order.
    while True:
        best = -1
        bestd = 1
        if _wdt_on:
            d = _tdiff(_tadd(_wdt_fed, _wdt_timeout), now)
            if d <= 0:
                best = 9
                bestd = d
        for i in range(4):
            if _t_on[i]:
                d = _tdiff(_t_due[i], now)
                if d <= 0 and d < bestd:
                    best = i
                    bestd = d
        if best < 0:
            return
        if best == 9:
            _board_reset(WDT_RESET)
            if _m._real:
                _exit("WDT reset", WDT_RESET)
            continue
        if _t_mode[best] == 1:
            _t_due[best] = _tadd(_t_due[best], _t_period[best])
        else:
            _t_on[best] = 0
        _queue(100 + best)
        _dispatch()


def sim_advance(ms):
    # Move the manual clock by ms, firing every timer and WDT expiry at its
    # own tick (a periodic timer fires once per period), then the IRQ queue.
    if _m._real:
        raise ValueError("sim_advance needs the manual clock (sim_reset(real=False))")
    _int_arg(ms, "sim_advance ms", 0, _HALF - 1)
    now = _m._now
    end = _tadd(now, ms)
    while True:
        step = None
        if _wdt_on:
            step = _tdiff(_tadd(_wdt_fed, _wdt_timeout), now)
        for i in range(4):
            if _t_on[i]:
                d = _tdiff(_t_due[i], now)
                if step is None or d < step:
                    step = d
        left = _tdiff(end, now)
        if step is None or step > left:
            break
        if step < 0:
            step = 0
        now = _tadd(now, step)
        _m._now = now
        _fire_due(now)
    _m._now = end
    _m._elapsed += ms
    _dispatch()


def reset():
    _board_reset(HARD_RESET)
    _exit("machine.reset()", HARD_RESET)


def soft_reset():
    _board_reset(SOFT_RESET)
    _exit("machine.soft_reset()", SOFT_RESET)
