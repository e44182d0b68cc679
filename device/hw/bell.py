# The bell the dealer rings to close betting (Art. 3(1)): a timed ring whose
# end is the one-shot timer armed when it starts, so a stalled task cannot
# leave it ringing.

from hw import TimedOutput


class Bell(TimedOutput):
    """Bell(pin, timer, ring_ms, max_ms=None, ticks_ms=None, hard=False).

    ring(now) rings for `ring_ms` (or `ms` if given, at most `max_ms`, which
    defaults to `ring_ms`); returns False if it is already ringing."""

    def __init__(self, pin, timer, ring_ms, max_ms=None, ticks_ms=None, hard=False):
        TimedOutput.__init__(self, pin, timer, ring_ms,
                             max_ms if max_ms is not None else ring_ms, ticks_ms, hard)

    def ring(self, now=None, ms=0):
        return self.start(ms, now)

    def ringing(self):
        return self.is_on()
