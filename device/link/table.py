# The table with a floor link: the controller (controller.py) and what its
# link task does, loaded by start-up only when the board file has a floor
# section, so that a table without a link carries none of this code. The
# link task makes the link on its first pass (link.outbox.made), publishes
# what the controller journals, and moves the journal's acknowledged cursor;
# nothing it receives reaches a round, a lamp or an output, and its faults
# stay in it (docs/floor.md).

import time

from controller import Controller
from micropython import const

from link.mqtt import put, put_decimal, put_hex
from sicbo import events as E
from sicbo import records as R

_LINK_IDLE_MS = const(1000)  # the link task's pass while the link is not made
_LINK_RETRY_MS = const(60000)  # the link could not be made (out of memory): tried again
_L_MEMORY = const(11)  # link.client's L_MEMORY, L_ERROR (docs/floor.md)
_L_ERROR = const(12)
# The status the link publishes names the round's state (sicbo.events ST_*).
_STATES = (b"idle", b"shaking", b"open", b"closed", b"result", b"paying", b"hold")


def attach(ctl, plan):
    """The floor link to make (link.plan.made's list) given to a
    LinkedController, after the journal was replayed, with the floor's saved
    cursor (rotation keeps what the floor has not stored from the boot on):
    the link task's first pass makes it, so that its code and buffers load
    after the boot's peak, into the heap start-up left."""
    store = ctl.store
    store.acked = _saved_cursor(plan[-1], store.last)
    store.judge_full()
    ctl._plan = plan


def _saved_cursor(path, last):
    # link.outbox.write_cursor's file (a decimal and a newline); 0 above the
    # journal's last record (a journal that starts again: all it holds is
    # for the floor).
    try:
        with open(path) as f:
            v = int(f.read(16))
    except (OSError, ValueError):
        return 0
    return v if 0 < v <= last else 0


class LinkedController(Controller):
    """A Controller whose table has a floor link (attach): no attribute of
    its own, the instance is the Controller's size."""

    def _make_link(self, now):
        # The link, its status and its outages; None while it cannot be made
        # (a MemoryError: journaled once, tried again a minute later).
        plan = self._plan
        if plan is None or time.ticks_diff(now, plan[0]) < 0:
            return None
        try:
            from link.outbox import made

            link = made(self.store, plan)
        except Exception as e:  # noqa: BLE001 - the link's fault, never the table's
            plan[0] = time.ticks_add(now, _LINK_RETRY_MS)
            if not plan[1]:
                plan[1] = 1
                self.link_down(_L_MEMORY if isinstance(e, MemoryError) else _L_ERROR, 0)
            return None
        self._plan = None  # its secrets go with it
        self.link = link
        link.status = self.floor_status
        link.on_down = self.link_down
        link.on_up = self.link_up
        self.store.acked = link.cursor
        return link

    def link_down(self, fault, detail):
        # Once per outage (the link tells it so): J_LINK down.
        self._note(R.J_LINK, bytes((R.LINK_DOWN, fault, detail & 0xFF, (detail >> 8) & 0xFF,
                                    0, 0, 0, 0)))

    def link_up(self):
        link = self.link
        a = link.cursor if link is not None else 0
        self._note(R.J_LINK, bytes((R.LINK_UP, 0, 0, 0, a & 0xFF, (a >> 8) & 0xFF,
                                    (a >> 16) & 0xFF, a >> 24)))

    def floor_status(self, buf):
        """The table's status for the floor (docs/floor.md), JSON written
        into buf (the link's payload): its length. Written in place, since
        the heap's peak with the link connected is here: a text formatted
        first needs a free block of its whole length."""
        m = self.m
        link = self.link
        store = self.store
        if link is None:
            return 0
        o = put(buf, 0, b'{"online": true, "code": "')
        o = put(buf, o, link.code)
        o = put(buf, o, b'", "config": "')
        o = put_hex(buf, o, m.config_id)
        o = put(buf, o, b'", "round": ')
        o = put_decimal(buf, o, m.round)
        o = put(buf, o, b', "state": "')
        o = put(buf, o, _STATES[m.state])
        o = put(buf, o, b'", "boot": ')
        o = put_decimal(buf, o, m.boot)
        o = put(buf, o, b', "seq": ')
        o = put_decimal(buf, o, store.last)
        o = put(buf, o, b', "oldest": ')
        o = put_decimal(buf, o, store.oldest())
        o = put(buf, o, b', "acked": ')
        o = put_decimal(buf, o, link.cursor)
        if link.skipped > link.cursor + 1:
            o = put(buf, o, b', "missing": [[')
            o = put_decimal(buf, o, link.cursor + 1)
            o = put(buf, o, b", ")
            o = put_decimal(buf, o, link.skipped - 1)
            o = put(buf, o, b"]]")
        return put(buf, o, b"}")

    def link_pass(self, now):
        """The link task's pass: the link's own (its faults contained), then
        what its cursor means for the journal's backlog."""
        link = self.link
        if link is None:
            if self._plan is None:
                return _LINK_IDLE_MS
            link = self._make_link(now)
            if link is None:
                self._backlog(now)  # the policy holds while the link cannot be made
                return _LINK_IDLE_MS
        wait = link.tick(now)
        store = self.store
        if link.cursor != store.acked:
            store.acked = link.cursor
            if store.full:
                # Acknowledged records may make room: rotation deletes them
                # (a checkpoint heads the new segment) and says again.
                store.rotate(self.m.open_seq)
        self._backlog(now)
        return wait

    def _backlog(self, now):
        store = self.store
        state = E.BACKLOG_ROOM
        if store.full:
            state = E.BACKLOG_STOP if store.keep_when_full else E.BACKLOG_FULL
        if state != self.m.backlog:
            self.handle(E.EV_BACKLOG, state, now)
