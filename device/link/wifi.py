# The table's Wi-Fi: network.WLAN in station mode, connected again with a
# capped backoff. The link (outbox.py) asks up(now) before each connection
# to the broker and connected() while it runs; neither waits. Runs on the
# ESP32 and on the virtual board (sim/network.py).
#
# The ESP32 port associates again by itself after a drop once connect() was
# called; up() starts a new connect() only when the station is not
# connecting (an error status, or idle), or has been connecting for longer
# than connect_ms, and then no sooner than the backoff allows.

import time

from micropython import const

_STAT_CONNECTING = const(1001)


class Station:
    def __init__(self, ssid, key, connect_ms=15000, backoff_ms=2000, backoff_max_ms=60000,
                 wlan=None):
        if wlan is None:
            import network

            wlan = network.WLAN(network.STA_IF)
        self.wlan = wlan
        self.ssid = ssid
        self.key = key
        self.connect_ms = connect_ms
        self.backoff_ms = backoff_ms
        self.backoff_max_ms = backoff_max_ms
        self._delay = backoff_ms
        self._t = 0  # the last connect()
        self._retry = 0
        self._asked = False
        self.attempts = 0

    def connected(self):
        return self.wlan.isconnected()

    def status(self):
        try:
            return self.wlan.status()
        except OSError:
            return 0

    def up(self, now):
        """True when the station has its address; else starts (again) what
        it takes, at most once per backoff, and returns False."""
        w = self.wlan
        try:
            if w.isconnected():
                self._delay = self.backoff_ms
                return True
            if self._asked and time.ticks_diff(now, self._retry) < 0:
                return False
            if (self._asked and w.status() == _STAT_CONNECTING
                    and time.ticks_diff(now, self._t) < self.connect_ms):
                return False
            if not w.active():
                w.active(True)
            if self._asked:
                w.disconnect()
            w.connect(self.ssid, self.key)
        except OSError:
            pass  # ("Wifi Internal Error" and the like): tried again after the backoff
        self._asked = True
        self.attempts += 1
        self._t = now
        self._retry = time.ticks_add(now, self._delay)
        d = self._delay * 2
        self._delay = d if d < self.backoff_max_ms else self.backoff_max_ms
        return False
