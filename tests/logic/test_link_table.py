# The table's side of the floor link (device/link/table.py) with the link
# itself stood in for: what link_up journals, and a link that cannot be made
# (out of memory, or any other fault) journaled down once with the link's own
# fault code, then tried again a minute later. Portable.
import time

from link import client as C
from link import table as T

from sicbo import records as R


class _Ctl:
    """What LinkedController's methods use of the controller."""

    def __init__(self, plan=None, cursor=0):
        self.notes = []
        self.downs = []
        self._plan = plan
        self.link = None
        self.store = None
        if cursor:
            self.link = type("L", (), {"cursor": cursor})()

    def _note(self, rtype, payload):
        self.notes.append((rtype, bytes(payload)))

    def link_down(self, fault, detail):
        self.downs.append((fault, detail))


def test_link_up_journals_the_cursor_in_four_bytes():
    c = _Ctl(cursor=0x12345678)
    T.LinkedController.link_up(c)
    assert c.notes == [(R.J_LINK, bytes((R.LINK_UP, 0, 0, 0, 0x78, 0x56, 0x34, 0x12)))]
    c = _Ctl(cursor=0x01FF80FF)
    T.LinkedController.link_up(c)
    assert c.notes[0][1][4:] == b"\xff\x80\xff\x01"


class _Floor:
    """A floor section that fails as it is read."""

    def __init__(self, exc):
        self.exc = exc

    def __getitem__(self, key):
        raise self.exc


def test_a_link_that_cannot_be_made_is_journaled_once_then_tried_a_minute_later():
    for exc, code in ((MemoryError(), C.L_MEMORY), (KeyError("site"), C.L_ERROR)):
        now = time.ticks_ms()
        plan = [now, 0, _Floor(exc), None, b"pw", None, "code", "/tmp/acked"]
        c = _Ctl(plan)
        assert T.LinkedController._make_link(c, now) is None
        assert c.downs == [(code, 0)]
        assert time.ticks_diff(plan[0], now) == 60000
        assert T.LinkedController._make_link(c, time.ticks_add(now, 59999)) is None  # not yet
        assert T.LinkedController._make_link(c, time.ticks_add(now, 60000)) is None  # tried
        assert c.downs == [(code, 0)]  # once per outage
        assert time.ticks_diff(plan[0], now) == 120000
