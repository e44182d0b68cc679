# Debounced inputs: the cover and clasp sensors, the shake sensor or key, the
# supervisor key switch and the dealer's keys.
#
# update(now) reads every pin (Pin.value), so it is called from a task every
# few ms. A level is accepted once the raw input has not changed for
# `debounce_ms`; each accepted change becomes an EDGE event in a preallocated
# ring that the app drains with pop(). Levels are logical: 1 = cover on,
# clasp fastened, key pressed (inputs wired active low are inverted here).
#
# Chatter: an input with more than `chatter_limit` raw transitions within a
# window of `chatter_window_ms` raises one FAULT event and then stays silent
# (its debounced level frozen) instead of flooding the ring; once its raw
# level has been still for `settle_ms` it raises RECOVER with its level, and
# normal edges resume. Polling alone sees at most one transition per poll;
# with `use_irq` a pin IRQ counts every raw edge between polls (the handler
# only bumps a byte counter: no allocation).
#
# Events: pop(out) fills a caller's 4-item list with
# [kind, signal index, level, ticks] and returns True, or returns False when
# the ring is empty. `ticks` is when the new level began (the last raw
# transition seen), for FAULT when the limit was crossed. A full ring drops
# the new event and counts it in `overflows`; level(i) always has the truth.
#
# A shift-register chain (hw.keychain.KeyChain) as `chain`: its inputs are
# pin-like views (chain.bit(n)) among `pins`; update() samples the chain once,
# then reads them as pins. A broken chain (chain.sample() False: a sentinel
# bit wrong) is a fault of its inputs, not key presses: one FAULT (on the
# first chain input not already faulted), their levels frozen; they recover as
# after chatter, once the chain has read good and still for `settle_ms`.

import time
from array import array

from machine import Pin
from micropython import const

from hw import default_ticks

EDGE = const(0)
FAULT = const(1)
RECOVER = const(2)


class Switches:
    """Switches(pins, debounce_ms=20, chatter_limit=10, chatter_window_ms=1000,
    settle_ms=0, invert=None, ring_size=32, ticks_ms=None, use_irq=False,
    chain=None).

    `pins`: Pin objects already set up as inputs (with their pulls), in signal
    index order. `invert`: per-pin truthy values for active-low inputs.
    `settle_ms` 0 means `chatter_window_ms`. `chain`: the KeyChain whose
    bit views are among `pins` (no IRQ for those)."""

    def __init__(self, pins, debounce_ms=20, chatter_limit=10, chatter_window_ms=1000,
                 settle_ms=0, invert=None, ring_size=32, ticks_ms=None, use_irq=False,
                 chain=None):
        n = len(pins)
        if not 0 < n <= 64:
            raise ValueError("1..64 inputs")
        if debounce_ms < 0 or chatter_limit < 1 or chatter_window_ms <= 0 or ring_size < 1:
            raise ValueError("bad switch timing")
        self._pins = tuple(pins)
        self.debounce_ms = debounce_ms
        self.chatter_limit = chatter_limit if chatter_limit < 255 else 254
        self.chatter_window_ms = chatter_window_ms
        self.settle_ms = settle_ms if settle_ms > 0 else chatter_window_ms
        self._ticks = ticks_ms if ticks_ms is not None else default_ticks
        inv = bytearray(n)
        if invert is not None:
            for i in range(n):
                inv[i] = 1 if invert[i] else 0
        self._inv = inv
        self._stable = bytearray(n)
        self._raw = bytearray(n)
        self._fault = bytearray(n)
        self._count = bytearray(n)  # raw transitions in the current window
        self._hits = bytearray(n)  # raw edges counted by the IRQ handler
        self._changed = array("i", [0] * n)  # ticks of the last raw transition
        self._window = array("i", [0] * n)  # ticks the current window began
        # The ring: kind, signal and level of event j at _ev[3*j:3*j+3], its
        # ticks at _ev_ticks[j]. (Few attributes: past 23, the instance's
        # table grows again while the boot's heap is at its fullest.)
        self._ev = bytearray(3 * ring_size)
        self._ev_ticks = array("i", [0] * ring_size)
        self._head = 0
        self._len = 0
        self.overflows = 0
        self.faults = 0
        self._chain = chain
        on = bytearray(n)  # 1 for an input read through the chain
        if chain is not None:
            for i in range(n):
                on[i] = 1 if chain.owns(pins[i]) else 0
        self._on_chain = on
        now = self._ticks()
        good = chain.sample() if chain is not None else True
        for i in range(n):
            v = self._pins[i].value() ^ inv[i] if good or not on[i] else 0
            self._stable[i] = v
            self._raw[i] = v
            self._changed[i] = now
            self._window[i] = now
        if not good:
            self._broken(now)
        if use_irq:
            trig = Pin.IRQ_RISING | Pin.IRQ_FALLING
            for i in range(n):
                if not on[i]:
                    self._pins[i].irq(handler=self._counter(i), trigger=trig)

    def _counter(self, i):
        hits = self._hits

        def handler(_pin):
            h = hits[i]
            if h < 255:
                hits[i] = h + 1

        return handler

    def _push(self, kind, sig, level, ticks):
        size = len(self._ev_ticks)
        if self._len >= size:
            self.overflows += 1
            return
        j = self._head + self._len
        if j >= size:
            j -= size
        ev = self._ev
        k = 3 * j
        ev[k] = kind
        ev[k + 1] = sig
        ev[k + 2] = level
        self._ev_ticks[j] = ticks
        self._len += 1

    def _broken(self, now):
        # The chain read wrong: its inputs fault (one event), and their quiet
        # time restarts, so that they recover only after a good, still chain.
        on = self._on_chain
        new = True
        for i in range(len(on)):
            if on[i]:
                self._changed[i] = now
                if not self._fault[i]:
                    self._fault[i] = 1
                    if new:
                        new = False
                        self.faults += 1
                        self._push(FAULT, i, self._stable[i], now)

    def update(self, now=None):
        """Reads every input once. Returns the number of events waiting."""
        if now is None:
            now = self._ticks()
        pins = self._pins
        raw_lv = self._raw
        hits = self._hits
        on = self._on_chain
        good = True
        if self._chain is not None and not self._chain.sample():
            good = False
            self._broken(now)
        for i in range(len(pins)):
            if not good and on[i]:
                continue
            raw = pins[i].value() ^ self._inv[i]
            h = hits[i]
            if h:
                hits[i] = 0
            if raw != raw_lv[i] or h:
                # Raw transitions since the last poll: the IRQ's count, or one
                # seen by the poll itself.
                moves = h if h else 1
                raw_lv[i] = raw
                self._changed[i] = now
                w = time.ticks_diff(now, self._window[i])
                if w < 0 or w >= self.chatter_window_ms:  # below 0: a window 2**29 ms old
                    self._window[i] = now
                    self._count[i] = 0
                c = self._count[i] + moves
                if c > 255:
                    c = 255
                self._count[i] = c
                if c > self.chatter_limit and not self._fault[i]:
                    self._fault[i] = 1
                    self.faults += 1
                    self._push(FAULT, i, self._stable[i], now)
            elif self._fault[i]:
                if time.ticks_diff(now, self._changed[i]) >= self.settle_ms:
                    self._fault[i] = 0
                    self._count[i] = 0
                    self._window[i] = now
                    self._stable[i] = raw
                    self._push(RECOVER, i, raw, now)
            elif raw != self._stable[i]:
                if time.ticks_diff(now, self._changed[i]) >= self.debounce_ms:
                    self._stable[i] = raw
                    self._push(EDGE, i, raw, self._changed[i])
        return self._len

    def pop(self, out):
        """Moves the oldest event into out[0..3] (kind, signal, level,
        ticks); False when there is none."""
        if self._len == 0:
            return False
        j = self._head
        ev = self._ev
        k = 3 * j
        out[0] = ev[k]
        out[1] = ev[k + 1]
        out[2] = ev[k + 2]
        out[3] = self._ev_ticks[j]
        j += 1
        self._head = 0 if j >= len(self._ev_ticks) else j
        self._len -= 1
        return True

    def pending(self):
        return self._len

    def level(self, i):
        """The debounced level of input i (frozen while it is faulted)."""
        return self._stable[i]

    def faulted(self, i):
        return self._fault[i] == 1

    def raw(self, i):
        """Input i's pin as read now (or at the key chain's last sample),
        before inversion and debounce: diag."""
        return self._pins[i].value()

    def count(self):
        return len(self._pins)
