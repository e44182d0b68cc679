"""Several tables on one floor at once (tests/host/floorsys.py): three
virtual tables over TLS, each with its own certificate, playing while the
broker is killed and restarted and each table's network is dropped in turn;
a subscriber of the test's own (on the broker's password listener, as the
site's read-only account) sees every message the broker delivers, and no table ever
published under another's id: every record on a table's journal topic is
that table's own journal record."""

import json
import threading

import paho.mqtt.client as mqtt
from floorsys import (
    DEADLINE_S,
    READER_PASSWORD,
    SITE,
    Site,
    Table,
    assert_one_down_per_outage,
    assert_store_matches,
    wait_delivered,
)
from linkrig import split_records
from paho.mqtt.enums import CallbackAPIVersion

from floorkit import wait_for
from host_tools.floor.site import READER_ID
from sicbo import records as R

IDS = ("T01", "T02", "T03")


class Watcher:
    """Every message on sicbo/SITE/# the broker delivers (persistent session)."""

    def __init__(self, port):
        self.lock = threading.Lock()
        self.messages = []
        self.c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="test-watcher",
                             clean_session=False)
        self.c.username_pw_set(READER_ID, READER_PASSWORD)
        self.c.on_connect = lambda c, u, f, rc, p=None: c.subscribe("sicbo/%s/#" % SITE, qos=1)
        self.c.on_message = self._on_message
        self.c.reconnect_delay_set(0.05, 1)
        self.c.connect("127.0.0.1", port, keepalive=10)
        self.c.loop_start()

    def _on_message(self, c, u, msg):
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload)))

    def stop(self):
        self.c.loop_stop()
        self.c.disconnect()


def _up_again(table, since):
    """Whether the table journaled its link down and then up after seq `since`."""
    links = table.links(since)
    downs = [x[0] for x in links if x[1] == R.LINK_DOWN]
    return bool(downs) and any(x[1] == R.LINK_UP and x[0] > downs[0] for x in links)


def test_three_tables_through_a_broker_crash_and_their_networks_dropped(tmp_path):
    site = Site(tmp_path, IDS)
    watcher = None
    tables = []
    try:
        site.start_floor()
        watcher = Watcher(site.broker.port)
        for i, tid in enumerate(IDS):
            t = Table(site, tid, tmp_path / tid, seed=10 + i)
            tables.append(t)
            t.start()
        since = {}
        for t in tables:
            t.play(1)
            wait_delivered(site, t)
            since[t.tid] = t.last_seq()
        outages = {t.tid: [] for t in tables}
        players = [t.player() for t in tables]
        for p in players:
            p.__enter__()
        try:
            for p in players:
                p.wait_rounds(2)
            first = {t.tid: t.last_seq() for t in tables}
            site.broker.kill()
            for p in players:
                p.wait_rounds(2, "rounds while the broker is down")
            site.broker.restart()
            for t in tables:
                # The restarted broker may first hand on what it kept from
                # before its crash: stored again is not enough, the table must
                # have seen its link come back (journaled an `up` after a
                # `down`) for the outage to be over.
                wait_for(lambda t=t: _up_again(t, first[t.tid]),
                         "%s: its link up again after the broker's restart" % t.tid,
                         timeout=DEADLINE_S)
                wait_for(lambda t=t: site.acked(t.tid) > first[t.tid],
                         "%s: stored again after the broker's restart" % t.tid,
                         timeout=DEADLINE_S)
                outages[t.tid].append((first[t.tid], t.last_seq()))
            for t, p in zip(tables, players, strict=True):
                # one table's network at a time; the others play on meanwhile
                # the outage begins as the network is pulled: the table may
                # journal its link down at once, before anything else is read
                begin = t.last_seq()
                t.vb.table.handle({"op": "network_down", "mode": "reset"})
                p.wait_rounds(3, "%s: rounds with its network down" % t.tid)
                end = t.last_seq()
                t.vb.table.handle({"op": "network_up"})
                wait_for(lambda t=t, end=end: site.acked(t.tid) >= end,
                         "%s: its backlog stored" % t.tid, timeout=DEADLINE_S)
                outages[t.tid].append((begin, end))
            for p in players:
                p.wait_rounds(1)
        finally:
            for p in players:
                p.__exit__(None, None, None)
        for t in tables:
            wait_delivered(site, t)
            assert_store_matches(site, t)
            assert_one_down_per_outage(t, outages[t.tid], since[t.tid])
        # The watcher saw each table's records only on its own topics.
        wait_for(lambda: _watched(watcher, tables), "the watcher to see every record",
                 timeout=DEADLINE_S)
        own = {t.tid: t.seen for t in tables}
        with watcher.lock:
            messages = list(watcher.messages)
        for topic, payload in messages:
            parts = topic.split("/")
            assert len(parts) == 4 and parts[2] in own, topic
            tid, kind = parts[2], parts[3]
            if kind == "journal":
                for seq, raw in split_records(payload):
                    assert own[tid].get(seq) == raw, (
                        "a record under %s's id that is not %s's record %d" % (tid, tid, seq))
            elif kind == "status":
                st = json.loads(payload)
                assert st["online"] in (True, False), st
            else:
                assert kind == "ack", topic
    finally:
        if watcher is not None:
            watcher.stop()
        for t in tables:
            t.stop()
        site.stop()


def _watched(watcher, tables):
    with watcher.lock:
        got = {}
        for topic, payload in watcher.messages:
            parts = topic.split("/")
            if len(parts) == 4 and parts[3] == "journal":
                got.setdefault(parts[2], set()).update(s for s, _r in split_records(payload))
    # everything but what the broker may have lost in its crash (sent again
    # only to the floor, whose session asked for it: the watcher's is a
    # session too, so it gets what the tables sent again)
    return all(set(t.seen) <= got.get(t.tid, set()) for t in tables)
