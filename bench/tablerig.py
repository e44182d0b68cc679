# The simulated table's hands for the MicroPython benches: inputs set on the
# simulated machine's pins, the clock stepped, one pass of the controller's
# tasks per step, as the running board makes them. Shared by bench/
# heap_worker.py (board_heap's power-ons) and bench/soak_rounds.py (the soak).
#
# A level change is seen by one poll and accepted by a poll `debounce` ms
# later (settle); the shaker's pulses and the round's timer are stepped by
# what the solenoid and the controller's deadline say (wait). Inputs are
# sicbo.signals indices; `gpio` and `inv` give each one's pin and inversion.
import machine

from sicbo import signals as S

_MAX_STEP = 2000  # ms: the longest clock step (timers still fire at their tick)


class Rng:
    """xorshift32: the same sequence on every port."""

    def __init__(self, seed):
        self.s = (seed * 2654435761 + 1) & 0xFFFFFFFF or 1

    def below(self, n):
        x = self.s
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.s = x
        return x % n


class TableRig:
    """ctl: the running Controller (set once the table has started)."""

    def __init__(self, gpio, inv, debounce, bell_ms):
        self.gpio = gpio
        self.inv = inv
        self.debounce = debounce
        self.bell_ms = bell_ms
        self.ctl = None
        self.steps = 0

    def set(self, sig, level):
        machine.sim_set(self.gpio[sig], level ^ self.inv[sig])

    def step(self, ms):
        """Advance the clock by ms, then one pass of the app's tasks; returns
        the ms until the actuators want the next pass."""
        self.steps += 1
        machine.sim_advance(ms)
        now = machine.sim_ticks_ms()
        ctl = self.ctl
        ctl.poll(now)
        w = ctl.actuators(now)
        ctl.read_reader(now)
        wd = ctl.hw.watchdog
        if wd is not None:
            wd.feed(now)
        return w

    def settle(self):
        """Inputs changed: one poll sees them, one debounce later accepts."""
        self.step(1)
        self.step(self.debounce)

    def press(self, sig):
        self.set(sig, 1)
        self.settle()
        self.set(sig, 0)
        self.settle()

    def dome(self, level):
        """The dome's three sensors at once: on the table (1) or lifted (0)."""
        self.set(S.COVER, level)
        self.set(S.CLASP_LEFT, level)
        self.set(S.CLASP_RIGHT, level)
        self.settle()

    def wait(self):
        """One clock step as long as the shaker and the round's timer allow."""
        ctl = self.ctl
        now = machine.sim_ticks_ms()
        w = _MAX_STEP
        sol = ctl.hw.solenoid
        if sol is not None and sol.busy():
            w = sol.update(now)
        if ctl.m.timer_on:
            d = machine.sim_ticks_diff(ctl.m.deadline, now)
            if d < w:
                w = d
        return self.step(w if w > 1 else 1)
