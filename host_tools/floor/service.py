"""The floor service: every table's journal and status from the site's
broker into the store, each record once, acknowledged once committed
(docs/floor.md).

One thread runs paho's network loop (client.loop) and the store: each
message is taken into the open batch as it is read; a batch is committed
when no message is waiting, at `batch` records, or `commit_ms` after it
opened, in one SQLite transaction, and only after COMMIT are its messages
acknowledged to the broker (manual PUBACK: a message not yet committed is
delivered again after a crash, the persistent session keeps it) and each
table's acknowledgement published (retained, QoS 1). One thread because a
queue between paho's thread and the store's cost each message two handoffs
of the interpreter lock and a wake-up of paho's thread per PUBACK.

The session is MQTT 5 with clean start off and a session that never
expires (MQTT 3.1.1's clean session false, `--protocol 311`), because MQTT 5
lets the floor say how many messages may be in flight to it (Receive
Maximum): under 3.1.1 mosquitto sends at most 20 (max_inflight_messages),
and since the floor holds each PUBACK until its commit, that would bound
the ingest rate by the commit's latency."""

import os
import signal
import socket
import sys
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from host_tools.floor import ingest, liveness, store
from host_tools.floor import site as S

SESSION_NEVER_EXPIRES = 0xFFFFFFFF
RECEIVE_MAXIMUM = 2000  # messages in flight to the floor (MQTT 5)


class Options:
    def __init__(self, host, port, site, db, client_id=None, username=None, password=None,
                 cafile=None, certfile=None, keyfile=None, table=None, commit_ms=5.0,
                 batch=2000, keepalive=10, protocol=5, log=None, http=None, cfg=None,
                 keys=None, http_names=()):
        self.host = host
        self.port = port
        self.site = S.check_id("site", site)
        self.db = db
        self.client_id = client_id or "sicbo-floor-" + site
        self.username = username
        self.password = password
        self.cafile = cafile
        self.certfile = certfile
        self.keyfile = keyfile
        self.table = table  # SettlementTable (wins of the meters)
        self.keys = keys  # keystore.KeyStore: every record verified (None: not)
        self.commit_ms = commit_ms
        self.batch = batch
        self.keepalive = keepalive
        self.protocol = protocol
        self.http = http  # (host, port) of the floor view, or None
        self.http_names = tuple(http_names)  # names it answers to (beside its own)
        self.cfg = cfg  # the TableConfig of `table` (the view draws its layout)
        self.log = log or (lambda line: print("floor: " + line, file=sys.stderr, flush=True))


class Service:
    def __init__(self, opts):
        self.o = opts
        self.log = opts.log
        self.conn = store.open_rw(opts.db)
        self.floor = ingest.Floor(opts.site, opts.table, lookup=self._lookup, log=self.log,
                                  keys=opts.keys)
        self.gen = 0  # connections made: a PUBACK belongs to the connection that got the message
        self.connected = False
        self.republish = False
        self.stopping = False
        self.commits = 0
        self.out = None  # the open batch
        self.deadline = 0.0  # when it must be committed
        self.taken = 0  # messages taken (in on_message)
        self.retry_at = 0.0
        self.backoff = 0.1
        self.on_commit = None  # called with each batch once committed (the floor view)
        self.on_state = None  # called when the service's state changes (the floor view)
        self.beat = liveness.Beat(opts.db, log=self.log)  # FILE.service: live or not
        self.client = self._client()

    def _lookup(self, tid, seq):
        row = self.conn.execute("SELECT raw FROM records WHERE table_id=? AND seq=?",
                                (tid, seq)).fetchone()
        return bytes(row[0]) if row is not None else None

    # ---- MQTT -------------------------------------------------------------------------

    def _client(self):
        o = self.o
        if o.protocol == 5:
            c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=o.client_id,
                            protocol=mqtt.MQTTv5, manual_ack=True)
        else:
            c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=o.client_id,
                            clean_session=False, protocol=mqtt.MQTTv311, manual_ack=True)
        if o.cafile:
            c.tls_set(ca_certs=o.cafile, certfile=o.certfile, keyfile=o.keyfile)
        if o.username is not None:
            c.username_pw_set(o.username, o.password)
        c.max_inflight_messages_set(1000)  # its own acknowledgements
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_subscribe = self._on_subscribe
        c.on_message = self._on_message
        return c

    def _connect_args(self):
        if self.o.protocol != 5:
            return {}
        p = Properties(PacketTypes.CONNECT)
        p.SessionExpiryInterval = SESSION_NEVER_EXPIRES
        p.ReceiveMaximum = RECEIVE_MAXIMUM
        return {"clean_start": False, "properties": p}

    def _connect(self):
        """One attempt (the first connect(), then reconnect()); on failure the
        next is after a backoff of 0.1 s doubling to 2 s."""
        try:
            if self.gen == 0 and self.retry_at == 0.0:
                self.retry_at = -1.0  # connect() called: its settings are kept
                self.client.connect(self.o.host, self.o.port, self.o.keepalive,
                                    **self._connect_args())
            else:
                self.client.reconnect()
            return True
        except (OSError, ValueError) as e:
            if self.backoff == 0.1 or self.backoff >= 2:
                self.log("cannot reach the broker at %s:%d (%s); retrying"
                         % (self.o.host, self.o.port, e))
            self.retry_at = time.monotonic() + self.backoff
            self.backoff = min(self.backoff * 2, 2.0)
            self._state("no-broker")
            return False

    def _on_connect(self, client, userdata, flags, rc, props=None):
        if rc.is_failure:
            self.log("the broker refused the connection: %s" % rc)
            self._state("no-broker")
            return
        self.gen += 1
        self.backoff = 0.1
        self.connected = True
        self._state("connected")
        _no_delay(client)
        self.log("connected to %s:%d (session present: %s)"
                 % (self.o.host, self.o.port, bool(flags.session_present)))
        site = self.o.site
        client.subscribe([(S.journal_topic(site, "+"), 1), (S.status_topic(site, "+"), 1),
                          (S.head_topic(site, "+"), 1)])
        self.republish = True

    def _on_subscribe(self, client, userdata, mid, rcs, props=None):
        bad = [str(r) for r in rcs if r.is_failure]
        if bad:
            self.log("subscription refused: %s" % ", ".join(bad))
        else:
            self.log("subscribed to sicbo/%s/+/journal and sicbo/%s/+/status"
                     % (self.o.site, self.o.site))

    def _on_disconnect(self, client, userdata, flags, rc, props=None):
        self.connected = False
        self.retry_at = time.monotonic() + self.backoff
        if not self.stopping:
            self.log("disconnected from the broker (%s); reconnecting" % rc)
            self._state("no-broker")

    def _on_message(self, client, userdata, msg):
        out = self.out
        if out is None:
            out = self.out = ingest.Batch()
            self.deadline = time.monotonic() + self.o.commit_ms / 1000.0
        self.floor.message(msg.topic, msg.payload, time.time(), out)
        out.mids.append((self.gen, msg.mid, msg.qos))
        self.taken += 1

    # ---- the loop ---------------------------------------------------------------------

    def start(self):
        t0 = time.monotonic()
        out, differ = self.floor.reload(self.conn, time.time())
        n = sum(f.records for f in self.floor.feeds.values())
        self.log("store %s: %d tables, %d records, reloaded in %.2f s"
                 % (self.o.db, len(self.floor.feeds), n, time.monotonic() - t0))
        if differ:
            self.log("warning: %d stored verdicts differ from the replay's now" % differ)
        if not out.empty():
            store.write(self.conn, out, self.floor.feeds)
        self._state("connecting")

    def _state(self, state):
        if state != self.beat.state:
            self.beat.set(state)
            if self.on_state is not None:
                self.on_state()

    def run(self):
        """Until stop(): read, take, commit, acknowledge."""
        c = self.client
        while not self.stopping:
            self.beat.tick()
            if c.socket() is None:
                if self.out is not None:
                    self._commit()  # stored; the broker delivers its messages again
                if time.monotonic() >= self.retry_at and self._connect():
                    continue
                time.sleep(0.05)
                continue
            taken = self.taken
            wait = 0.0 if self.out is not None else 0.2
            rc = c.loop(timeout=wait)
            if self.republish and self.connected:
                self.republish = False
                # What the tables are told is stored is what is committed: the
                # messages this loop() took since the connection go in first.
                if self.out is not None:
                    self._commit()
                self._publish_acks(self.floor.feeds.values(), force=True)
            out = self.out
            if out is not None and (self.taken == taken or out.n >= self.o.batch
                                    or time.monotonic() >= self.deadline):
                self._commit()
            if rc != mqtt.MQTT_ERR_SUCCESS and c.socket() is not None and not self.connected:
                c.disconnect()

    def _commit(self):
        out = self.out
        self.out = None
        try:
            self.floor.finish(out)
            store.write(self.conn, out, self.floor.feeds)
        except Exception as e:  # noqa: BLE001 (any failure of the store: nothing is acknowledged)
            self.log("cannot write the store (%s): stopping, nothing of this batch "
                     "acknowledged" % e)
            os._exit(1)
        self.commits += 1
        if self.on_commit is not None:
            self.on_commit(out)
        if self.connected:
            for g, mid, qos in out.mids:
                if g == self.gen and qos:
                    self.client.ack(mid, qos)
        for tid, first, last in out.new_gaps:
            self.log("%s: records %d..%d missing; acknowledged up to %d, waiting for them"
                     % (tid, first, last, first - 1))
        if self.connected:
            # Every table that sent journal records is told where the floor
            # stands, duplicates included: a table that sends again what is
            # stored (its saved cursor behind) is set forward at once.
            self._publish_acks([self.floor.feeds[t] for t in out.touched], force=True)

    def _publish_acks(self, feeds, force=False):
        for f in feeds:
            if f.contig > f.acked or (force and f.contig):
                f.acked = f.contig
                self.client.publish(S.ack_topic(self.o.site, f.id), str(f.contig).encode(),
                                    qos=1, retain=True)

    def stop(self):
        self.stopping = True
        if self.out is not None:
            self._commit()
        if self.client.socket() is not None:
            self.client.disconnect()
            self.client.loop(timeout=0.1)
        self.conn.close()
        self._state("stopped")


def _no_delay(client):
    """TCP_NODELAY on the client's socket: paho does not set it, and Nagle's
    algorithm holds a small write (a PUBACK, an acknowledgement) until the
    peer's delayed ACK, 40 ms on Linux."""
    sock = client.socket()
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def serve(opts):
    svc = Service(opts)
    view = None
    if opts.http:
        from host_tools.floor import web

        view = web.FloorView(opts.db, opts.cfg, opts.table, log=opts.log,
                             names=opts.http_names)
        svc.on_commit = lambda out: view.notify(out.touched, alarms=bool(out.alarms))
        svc.on_state = lambda: view.notify([])  # each page says it at once

    def _term(signum, frame):
        svc.stopping = True

    signal.signal(signal.SIGTERM, _term)
    try:
        if view is not None:
            view.start(*opts.http)
        svc.start()
        svc.run()
    except KeyboardInterrupt:
        pass
    finally:
        svc.stop()
        if view is not None:
            view.stop()
    return 0
