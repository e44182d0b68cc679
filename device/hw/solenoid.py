# The shaker's coil (Art. 2: "presses the handle three times in a row") and the
# electric shaker's motor (2004 edition).
#
# Solenoid: pulse trains driven by update(now), which returns how long the
# caller may sleep before the next call, so an asyncio task can be
#     while sol.busy():
#         await asyncio.sleep_ms(sol.update())
# Safety does not depend on that task. Every switch-on arms a one-shot timer
# for `max_on_ms`, whose callback switches the coil off: a task that crashes,
# stalls or is starved mid-pulse leaves the coil on for at most `max_on_ms`.
# Such a forced off aborts the train and is counted in `forced_offs`, which
# the app reports as an alarm. A pulse never starts less than `rest_ms` after
# the previous one ended (it is delayed, not dropped), so the coil and its
# driver cool down whatever off time the caller asks for.
#
# With a PWM output and a hold duty, each pulse pulls in at full duty for
# `pull_in_ms`, then holds at the lower duty until its end, as coil drivers do
# to limit heating. The hard-off timer covers both phases.

import time

from micropython import const

from hw import TimedOutput, arm_one_shot, default_ticks

_IDLE = const(0)
_WAIT = const(1)  # waiting for the rest (or off) time before the next pulse
_ON = const(2)
_FULL = const(65535)
_MAX_PULSES = const(255)


class Solenoid:
    """Solenoid(pin, timer, max_on_ms=200, rest_ms=100, pwm=None,
    hold_duty_u16=0, pull_in_ms=0, ticks_ms=None, hard=False).

    `pin` is the coil's output Pin, or None when `pwm` (a PWM on that pin,
    frequency set by the caller) drives it. `timer` is a machine.Timer used
    only for the hard off."""

    def __init__(self, pin, timer, max_on_ms=200, rest_ms=100, pwm=None,
                 hold_duty_u16=0, pull_in_ms=0, ticks_ms=None, hard=False):
        if max_on_ms <= 0 or rest_ms < 0:
            raise ValueError("max_on_ms must be > 0, rest_ms >= 0")
        if pin is None and pwm is None:
            raise ValueError("a pin or a pwm is needed")
        if not 0 <= hold_duty_u16 < _FULL:
            raise ValueError("hold_duty_u16 must be 0..65534")
        if hold_duty_u16 and (pwm is None or pull_in_ms <= 0):
            raise ValueError("a hold duty needs a pwm and pull_in_ms > 0")
        self._pin = pin
        self._pwm = pwm
        self._timer = timer
        self.max_on_ms = max_on_ms
        self.rest_ms = rest_ms
        self._hold = hold_duty_u16
        self._pull_in = pull_in_ms
        self._ticks = ticks_ms if ticks_ms is not None else default_ticks
        self._hard = hard
        self._cb = self._hard_off  # one bound method, made here, not in the IRQ
        self._state = _IDLE
        self._coil = False  # the output is driven on
        self._forced = False  # set by the timer callback
        self._held = False
        self._left = 0
        self._on_ms = 0
        self._gap = 0
        self._first = False
        self._t = self._ticks()  # ticks of the last switch-on
        self._last_off = self._t
        self._ever_off = False
        self.pulses = 0  # pulses completed since boot
        self.forced_offs = 0  # pulses cut by the hard-off timer
        self._drive(0)

    def _drive(self, duty):
        if self._pwm is not None:
            self._pwm.duty_u16(duty)
        else:
            self._pin.value(1 if duty else 0)

    def _hard_off(self, _t):
        # Timer callback: switch off, count, no allocation.
        self._drive(0)
        if self._coil:
            self._coil = False
            self._forced = True
            self.forced_offs += 1

    def start(self, count, on_ms, off_ms, now=None):
        """Queues `count` pulses of `on_ms`, `off_ms` apart (at least
        `rest_ms`). Returns False, doing nothing, while a train is running."""
        if not 0 < count <= _MAX_PULSES:
            raise ValueError("count must be 1..255")
        if not 0 < on_ms <= self.max_on_ms:
            raise ValueError("on_ms must be 1..max_on_ms")
        if off_ms < 0:
            raise ValueError("off_ms must be >= 0")
        if self._state != _IDLE:
            return False
        self._left = count
        self._on_ms = on_ms
        self._gap = off_ms if off_ms > self.rest_ms else self.rest_ms
        self._first = True
        self._state = _WAIT
        self.update(now)
        return True

    def pulse(self, on_ms, now=None):
        return self.start(1, on_ms, 0, now)

    def ready(self, now=None):
        """True when a pulse started now would fire at once."""
        if self._state != _IDLE:
            return False
        if not self._ever_off:
            return True
        if now is None:
            now = self._ticks()
        # _last_off is never ahead: below 0 it is 2**29 ms or more ago (the
        # ticks wrapped; a table left for a week), long rested.
        d = time.ticks_diff(now, self._last_off)
        return d < 0 or d >= self.rest_ms

    def update(self, now=None):
        """Advances the train. Returns the ms until the next call is due, or
        -1 when idle."""
        if self._state == _IDLE:
            return -1
        if now is None:
            now = self._ticks()
        if self._state == _ON:
            if self._forced:
                # The hard-off timer ended this pulse: the caller was late.
                self._forced = False
                self._last_off = time.ticks_add(self._t, self.max_on_ms)
                self._ever_off = True
                self._left = 0
                self._state = _IDLE
                return -1
            elapsed = time.ticks_diff(now, self._t)
            if elapsed < self._on_ms:
                if self._hold and not self._held:
                    if elapsed >= self._pull_in:
                        self._drive(self._hold)
                        self._held = True
                        if not self._coil:  # the hard off ran meanwhile
                            self._drive(0)
                    else:
                        return self._pull_in - elapsed
                return self._on_ms - elapsed
            self._coil = False
            self._drive(0)
            self._timer.deinit()
            self._last_off = now
            self._ever_off = True
            self.pulses += 1
            if self._left == 0:
                self._state = _IDLE
                return -1
            self._state = _WAIT
            gap = self._gap
        else:
            gap = self.rest_ms if self._first else self._gap
        if self._ever_off:
            d = time.ticks_diff(now, self._last_off)  # below 0: long ago (see ready)
            if 0 <= d < gap:
                return gap - d
        self._fire(now)
        return self._pull_in if self._hold else self._on_ms

    def _fire(self, now):
        self._left -= 1
        self._first = False
        self._t = now
        self._held = False
        self._forced = False
        self._coil = True
        self._state = _ON
        # Timer first, coil second (see hw.TimedOutput.start): if the hard
        # off ran in between, it cleared _coil and the coil goes off again.
        arm_one_shot(self._timer, self.max_on_ms, self._cb, self._hard)
        self._drive(_FULL)
        if not self._coil:
            self._drive(0)

    def stop(self):
        """Coil off at once and the train dropped."""
        self._drive(0)
        self._timer.deinit()
        if self._coil:
            self._coil = False
            self._last_off = self._ticks()
            self._ever_off = True
        self._left = 0
        self._forced = False
        self._state = _IDLE

    def busy(self):
        return self._state != _IDLE

    def is_on(self):
        return self._coil


class ShakerMotor(TimedOutput):
    """ShakerMotor(pin, timer, run_ms, max_ms=None, ticks_ms=None, hard=False):
    the electric shaker. run(now) runs it for `run_ms`; the one-shot timer
    armed at start stops it."""

    def __init__(self, pin, timer, run_ms, max_ms=None, ticks_ms=None, hard=False):
        TimedOutput.__init__(self, pin, timer, run_ms,
                             max_ms if max_ms is not None else run_ms, ticks_ms, hard)

    def run(self, now=None, ms=0):
        return self.start(ms, now)

    def running(self):
        return self.is_on()
