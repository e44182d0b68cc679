"""The site's read-only account (`compliance`, docs/floor.md "Broker
configuration"): over the broker's TLS listener with its own certificate, as
compliance's or an auditor's own subscriber connects, it sees every table's
journal and the floor's acknowledgements; nothing it publishes reaches a
table or the floor's store as a table's. A real mosquitto under the site's
ACL (certs.acl) and the real floor service."""

import threading

import paho.mqtt.client as mqtt
from floorsys import SITE, Site
from paho.mqtt.enums import CallbackAPIVersion

from floorkit import DEADLINE_S, q, wait_for
from host_tools.floor.simtables import TableJournal
from host_tools.floor.site import READER_ID


class Client:
    """A paho client over TLS with one identity of the site's certificates;
    every message its subscription delivers is kept, in order."""

    def __init__(self, site, cn, client_id, subscribe=None):
        ident = site.ids[cn]
        self.lock = threading.Lock()
        self.messages = []
        self.subscribed = threading.Event()
        self.c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv311)
        self.c.tls_set(ca_certs=ident.ca_pem, certfile=ident.cert_pem, keyfile=ident.key_pem)
        self.topic = subscribe
        self.c.on_connect = self._on_connect
        self.c.on_subscribe = lambda c, u, mid, rcs, p=None: self.subscribed.set()
        self.c.on_message = self._on_message
        self.c.connect("127.0.0.1", site.broker.tls_port, keepalive=30)
        self.c.loop_start()
        if subscribe is None:
            self.subscribed.set()
        wait_for(self.subscribed.is_set, "%s connected and subscribed" % cn)

    def _on_connect(self, c, u, flags, rc, p=None):
        if self.topic is not None:
            c.subscribe(self.topic, qos=1)

    def _on_message(self, c, u, msg):
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload)))

    def seen(self, topic):
        with self.lock:
            return [p for t, p in self.messages if t == topic]

    def publish(self, topic, payload, retain=False):
        # QoS 1, until the broker's PUBACK: it has taken (or, under its ACL,
        # silently dropped) the message before anything published after.
        info = self.c.publish(topic, payload, qos=1, retain=retain)
        info.wait_for_publish(DEADLINE_S)
        assert info.is_published(), "no PUBACK for %s within %.0f s" % (topic, DEADLINE_S)

    def stop(self):
        self.c.loop_stop()
        self.c.disconnect()


def _topic(tid, kind):
    return "sicbo/%s/%s/%s" % (SITE, tid, kind)


def test_the_read_only_account_sees_every_table_and_can_change_nothing(tmp_path):
    site = Site(tmp_path, ["T01"])
    clients = []
    try:
        site.start_floor()
        reader = Client(site, READER_ID, "compliance-feed", subscribe="sicbo/%s/#" % SITE)
        clients.append(reader)
        table = Client(site, "T01", "T01")
        clients.append(table)
        real = TableJournal(3)
        real.play_round()
        other = TableJournal(4)  # a game that never was T01's
        other.play_round()
        other.play_round()

        # It reads a table's journal and the floor's acknowledgement of it.
        table.publish(_topic("T01", "journal"), real.records[0])
        wait_for(lambda: b"1" in reader.seen(_topic("T01", "ack")),
                 "the floor's acknowledgement of T01's record 1, as the reader sees it")
        assert reader.seen(_topic("T01", "journal")) == [real.records[0]]

        # It writes as the table and as the floor: the broker takes each
        # publish (PUBACK) and drops it.
        reader.publish(_topic("T01", "journal"), other.records[1])
        reader.publish(_topic("T01", "status"), b'{"online": false}', retain=True)
        reader.publish(_topic("T01", "ack"), b"999", retain=True)
        # Under its own name, which the ACL's table patterns allow: the
        # floor refuses it and keeps it, no table of that name appears.
        reader.publish(_topic(READER_ID, "journal"), other.records[0])

        # The table's next record: once its acknowledgement reaches the
        # reader, whatever the broker took before it has been delivered.
        table.publish(_topic("T01", "journal"), real.records[1])
        wait_for(lambda: b"2" in reader.seen(_topic("T01", "ack")),
                 "the floor's acknowledgement of T01's record 2, as the reader sees it")
        wait_for(lambda: q(site.db, "SELECT COUNT(*) FROM rejects")[0][0] >= 1,
                 "the floor's refusal of the read-only account's own journal topic")

        assert reader.seen(_topic("T01", "journal")) == real.records[:2]
        assert reader.seen(_topic("T01", "status")) == []
        assert reader.seen(_topic("T01", "ack")) == [b"1", b"2"]
        assert [bytes(r) for (r,) in q(site.db, "SELECT raw FROM records WHERE "
                                       "table_id='T01' ORDER BY seq")] == real.records[:2]
        assert q(site.db, "SELECT table_id FROM tables") == [("T01",)]
        assert q(site.db, "SELECT topic, reason FROM rejects") == [
            (_topic(READER_ID, "journal"), "the site's read-only account's name, never a "
                                           "table's")]
        # What a table reconnecting is told: the floor's word, retained.
        late = Client(site, READER_ID, "compliance-late", subscribe=_topic("T01", "ack"))
        clients.append(late)
        wait_for(lambda: late.seen(_topic("T01", "ack")), "the retained acknowledgement")
        assert late.seen(_topic("T01", "ack")) == [b"2"]
    finally:
        for c in clients:
            c.stop()
        site.stop()
