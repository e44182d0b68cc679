"""Simulated tables for the floor: each plays real rounds on the firmware's
own round machine (sicbo.round.RoundMachine, its records sealed by
sicbo.journal) and publishes its journal as docs/floor.md says, through paho
with its own identity: the records after its cursor, in order, QoS 1; a
retained status, `{"online": false}` as its last will; the floor's
acknowledgement moves the cursor (never backwards, never past what was
sent); after a reconnection, or when the acknowledgement stalls with records
outstanding, it sends again from the cursor (go-back-N).

    sim = SimTables("127.0.0.1", port, "site1", ["T001", "T002"],
                    auth=lambda tid: Auth(username=tid, password="pw-" + tid))
    sim.start()                  # connects every table (one thread for all)
    sim.play(5)                  # each table plays 5 rounds (journals them)
    sim.wait(lambda: sim.all_acked(), 60)
    sim.stop()

Faults for the tests (each on one table, under sim.lock): `lost` (sequence
numbers the table never sends: lost on the way), `declare_lost(seqs)` (the
table's status then says so: `missing`), `drop_before(seq)` (rotation
deleted the records before seq: `oldest`), `send_raw(payload)` (any bytes on
its journal topic).

`python -m host_tools.floor.simtables --broker HOST:PORT --site S --tables N`
runs N tables playing rounds until interrupted."""

import json
import random
import selectors
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from host_tools.floor import site as S

WALL_EPOCH = 946684800  # 2000-01-01 00:00 UTC in Unix seconds: the journal's wall clock
KEEPALIVE_S = 10


def _firmware():
    import host_tools  # noqa: F401  (makes the firmware's sicbo importable)
    from sicbo import events as E
    from sicbo import journal, meters, texts
    from sicbo.roundmachine import RoundMachine

    return E, journal, meters, texts, RoundMachine


class TableJournal:
    """One table's journal, written by the firmware's round machine as the
    shell drives it: every event's records (sealed) appended before anything
    else. `records[i]` is the record of sequence number i + 1 (bytes);
    `appends` the records of each journal write, as the board writes them."""

    def __init__(self, seed, cfg=None, table=None, wall=True, checkpoint_every=25,
                 tamper_every=0, void_every=13):
        E, journal, meters, texts, RoundMachine = _firmware()
        if cfg is None:
            from host_tools.rules import load_table

            cfg, table = load_table(None)
        self._E, self._journal, self._meters, self._texts = E, journal, meters, texts
        self.cfg, self.table = cfg, table
        self.m = m = RoundMachine(cfg, table)
        m.meters = meters.Meters(table.channels, table)
        self.rng = random.Random(seed)
        self.wall = wall
        self.checkpoint_every = checkpoint_every
        self.tamper_every = tamper_every
        self.void_every = void_every
        self.now = 1000 + self.rng.randrange(1 << 20)
        self.records = []
        self.appends = 0
        self.rounds = 0
        self.config_id = bytes(self.rng.randrange(256) for _ in range(6))
        # Cover on, clasps fastened (sicbo.signals order: cover, clasps, shake,
        # supervisor), power-on.
        self._drain(m.resume(self.now, self._wall(), b"\x01\x01\x01\x00\x00", 1))
        self._drain(m.set_config(self.now, self._wall(), self.config_id))

    @property
    def seq(self):
        return len(self.records)

    def state_name(self):
        return self._texts.STATE_NAMES[self.m.state]

    def _wall(self):
        return int(time.time()) - WALL_EPOCH if self.wall else None

    def _drain(self, n):
        m = self.m
        if m.rec_len:
            data = bytes(m.records())
            for r in self._journal.records(data):
                self.records.append(data[r.offset:r.offset + r.length])
            self.appends += 1
        m.commands()

    def _ev(self, code, arg=0, dt=10):
        self.now += dt
        self._drain(self.m.handle(code, arg, self.now, self._wall()))

    def inject(self, raw):
        """A record the machine did not write (damage, a forgery) put in the
        journal; the machine takes it as its boot's replay would
        (RoundState.take), so that its next records follow on from it."""
        self.records.append(bytes(raw))
        self.appends += 1
        return self.m.take(bytes(raw), 0)

    def play_round(self, tamper=None):
        """One round, as a dealer plays it: the dome put on, the shake,
        betting, the bell, the dome lifted, the dice keyed and confirmed, the
        payout; now and then a void or a tamper (cover lifted while betting
        is open: alarm and void, acknowledged by the supervisor key).
        tamper True: this round is tampered with, False: it is not (None:
        every tamper_every rounds)."""
        E = self._E
        self.rounds += 1
        k = self.rounds
        for c in (E.EV_COVER_ON, E.EV_CLASP_L_ON, E.EV_CLASP_R_ON):
            self._ev(c)
        self._ev(E.EV_SHAKE)
        if self.cfg.shaker == "manual":
            self._ev(E.EV_SHAKE)
            self._ev(E.EV_SHAKE)
        else:
            self._ev(E.EV_TIMER, 0, 60000)
        if tamper is None:
            tamper = bool(self.tamper_every) and k % self.tamper_every == 0
        if tamper:
            self._ev(E.EV_COVER_OFF)
            self._ev(E.EV_SUPERVISOR_ON)
            self._ev(E.EV_SUPERVISOR_OFF)
            self._ev(E.EV_CLASP_L_OFF)
            self._ev(E.EV_CLASP_R_OFF)
        else:
            self._ev(E.EV_BELL, 0, 20000)
            for c in (E.EV_CLASP_L_OFF, E.EV_CLASP_R_OFF, E.EV_COVER_OFF):
                self._ev(c)
            if self.void_every and k % self.void_every == 0:
                self._ev(E.EV_VOID)
                self._ev(E.EV_FACE, 1 + self.rng.randrange(3))
                self._ev(E.EV_CONFIRM)
            else:
                for _ in range(3):
                    self._ev(E.EV_FACE, 1 + self.rng.randrange(6))
                self._ev(E.EV_CONFIRM)
                self._ev(E.EV_PAYOUT, 0, 5000)
        if self.m.state != E.ST_IDLE:
            raise RuntimeError("simulated round %d ended in state %s" % (k, self.state_name()))
        if self.checkpoint_every and k % self.checkpoint_every == 0:
            # As rotation opens a segment: the meters checkpoint.
            rec = self._meters.checkpoint(self.m, self.now, self._wall())
            self.records.append(bytes(rec))
            self.appends += 1


class Auth:
    """How a client proves who it is: a username and password (the plain
    listener) or a client certificate (PEM; the TLS listener takes its CN as
    the username)."""

    def __init__(self, username=None, password=None, cafile=None, certfile=None, keyfile=None):
        self.username = username
        self.password = password
        self.cafile = cafile
        self.certfile = certfile
        self.keyfile = keyfile

    def apply(self, client):
        if self.cafile:
            client.tls_set(ca_certs=self.cafile, certfile=self.certfile, keyfile=self.keyfile)
        if self.username is not None:
            client.username_pw_set(self.username, self.password)


class SimTable:
    """One table's link: its journal, its cursor and its MQTT client."""

    def __init__(self, owner, table_id, journal, batch, window, resend_s):
        self.owner = owner
        self.id = S.check_table_id("table", table_id)
        self.journal = journal
        self.batch = batch  # records per publish, at most
        self.window = window  # records sent and not yet acknowledged, at most
        self.resend_s = resend_s
        self.cursor = 0  # acknowledged by the floor (a board persists it)
        self.next = 1  # next sequence number to send
        self.sent = 0  # highest sequence number sent
        self.oldest = 1
        self.missing = []  # [first, last] ranges the status declares lost
        self.lost = set()  # never sent (faults)
        self.acks = 0  # acknowledgements received
        self.last_ack = None
        self.publishes = 0
        self.first_publish = None  # time.time() of the first journal publish
        self.connected = False
        self.configured = False  # connect() called once; then reconnect()
        self.connects = 0
        self.progress_at = 0.0
        self.retry_at = 0.0
        self.backoff = 0.1
        self.status_due = True
        self.sent_at = {}  # seq -> time.time() of its first publish (owner.track)
        site = owner.site
        self.t_journal = S.journal_topic(site, table_id)
        self.t_status = S.status_topic(site, table_id)
        self.t_ack = S.ack_topic(site, table_id)
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=table_id, clean_session=False,
                        protocol=mqtt.MQTTv311)
        c.max_inflight_messages_set(max(20, window))
        c.will_set(self.t_status, json.dumps({"online": False}), qos=1, retain=True)
        owner.auth(table_id).apply(c)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        c.on_socket_open = owner._sock_open
        c.on_socket_close = owner._sock_close
        c.user_data_set(self)
        self.client = c

    # ---- callbacks (the driver thread, under the owner's lock) ------------------

    def _on_connect(self, client, userdata, flags, rc, props=None):
        if rc.is_failure:
            self.owner.log("%s: connection refused: %s" % (self.id, rc))
            return
        self.connected = True
        self.connects += 1
        from host_tools.floor.service import _no_delay

        _no_delay(client)
        self.backoff = 0.1
        client.subscribe(self.t_ack, qos=1)
        self.status_due = True
        # After a reconnection: again from the cursor.
        self.next = max(self.cursor + 1, self.oldest)
        self.progress_at = time.monotonic()

    def _on_disconnect(self, client, userdata, flags, rc, props=None):
        self.connected = False
        self.retry_at = time.monotonic() + self.backoff
        self.backoff = min(self.backoff * 2, 2.0)

    def _on_message(self, client, userdata, msg):
        if msg.topic != self.t_ack:
            return
        try:
            n = int(msg.payload.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return  # not an acknowledgement: nothing else may move the cursor
        self.acks += 1
        self.last_ack = n
        n = min(n, self.sent)
        if n > self.cursor:
            if self.owner.track:
                t1 = time.time()
                lat = self.owner.latencies
                for q in range(self.cursor + 1, n + 1):
                    t0 = self.sent_at.pop(q, None)
                    if t0 is not None:
                        lat.append(t1 - t0)
            self.cursor = n
            self.progress_at = time.monotonic()
            if self.next <= n:
                self.next = n + 1
            self.owner._acked(self)

    # ---- the link's work ----------------------------------------------------------

    def status(self):
        j = self.journal
        return {"online": True, "code": self.owner.code, "config": j.config_id.hex(),
                "round": j.m.round, "state": j.state_name(), "boot": j.m.boot,
                "seq": j.seq, "oldest": self.oldest, "acked": self.cursor,
                "missing": [list(r) for r in self.missing]}

    def pump(self, now):
        if not self.connected:
            return
        c = self.client
        if self.status_due:
            self.status_due = False
            c.publish(self.t_status, json.dumps(self.status()), qos=1, retain=True)
        recs = self.journal.records
        if self.sent > self.cursor and now - self.progress_at > self.resend_s:
            self.next = max(self.cursor + 1, self.oldest)  # go back to the cursor
            self.progress_at = now
        if self.next < self.oldest:
            self.next = self.oldest
        while self.next <= len(recs) and self.next - self.cursor - 1 < self.window:
            s = self.next
            if s in self.lost:
                self.next += 1
                continue
            k = 0
            limit = min(self.batch, self.window - (s - self.cursor - 1), len(recs) - s + 1)
            while k < limit and s + k not in self.lost:
                k += 1
            payload = b"".join(recs[s - 1:s - 1 + k])
            c.publish(self.t_journal, payload, qos=1)
            if self.first_publish is None:
                self.first_publish = time.time()
            self.publishes += 1
            if self.owner.track:
                t0 = time.time()
                log = self.owner.sent_log
                for q in range(s, s + k):
                    self.sent_at.setdefault(q, t0)
                    log.setdefault((self.id, q), t0)
            if s + k - 1 > self.sent:
                self.sent = s + k - 1
                if self.sent <= self.cursor + k:
                    self.progress_at = now
            self.next = s + k

    def declare_lost(self, seqs):
        """The table's journal does not hold these records (status `missing`)."""
        for s in sorted(seqs):
            self.lost.add(s)
            self.missing.append([s, s])
        self.status_due = True

    def drop_before(self, seq):
        """Rotation deleted every record before seq (status `oldest`)."""
        self.oldest = max(self.oldest, seq)
        self.status_due = True

    def send_raw(self, payload):
        """Any bytes on the table's journal topic (a fault)."""
        self.client.publish(self.t_journal, payload, qos=1)

    def all_acked(self):
        return self.cursor >= self.journal.seq


class SimTables:
    """Many simulated tables driven by one thread (see the module doc)."""

    def __init__(self, host, port, site, table_ids, auth=None, seed=1, batch=32, window=256,
                 resend_s=2.0, backlog=0, journal_kw=None, code=None, log=None, track=False):
        self.host = host
        self.port = port
        self.site = S.check_id("site", site)
        self.auth = auth or (lambda tid: Auth())
        self.code = code or "0" * 16  # as a table reports its code sha256: its first 16 hex digits
        self.lock = threading.RLock()
        self.log = log or (lambda line: None)
        self.sel = selectors.DefaultSelector()
        self._stop = threading.Event()
        self._thread = None
        self.on_acked = None  # called with the table whose cursor moved
        # track: the time from a record's first publish to the acknowledgement
        # that covers it (the floor publishes it after its commit), per record.
        self.track = track
        self.latencies = []
        self.sent_log = {}  # (table, seq) -> time.time() of its first publish (track)
        kw = journal_kw or {}
        self.tables = []
        self.by_id = {}
        for i, tid in enumerate(table_ids):
            j = TableJournal(seed * 100003 + i, **kw)
            for _ in range(backlog):
                j.play_round()
            t = SimTable(self, tid, j, batch, window, resend_s)
            self.tables.append(t)
            self.by_id[tid] = t

    def __getitem__(self, tid):
        return self.by_id[tid]

    # ---- sockets ---------------------------------------------------------------------

    def _sock_open(self, client, userdata, sock):
        try:
            self.sel.register(sock, selectors.EVENT_READ, userdata)
        except (KeyError, ValueError):
            pass

    def _sock_close(self, client, userdata, sock):
        try:
            self.sel.unregister(sock)
        except (KeyError, ValueError):
            pass

    def _acked(self, t):
        if self.on_acked is not None:
            self.on_acked(t)

    # ---- life --------------------------------------------------------------------------

    def start(self):
        with self.lock:
            for t in self.tables:
                self._connect(t)
        self._thread = threading.Thread(target=self._run, name="simtables", daemon=True)
        self._thread.start()
        return self

    def _connect(self, t):
        try:
            if not t.configured:
                t.configured = True
                t.client.connect(self.host, self.port, KEEPALIVE_S)
            else:
                t.client.reconnect()
        except OSError as e:
            self.log("%s: cannot connect: %s" % (t.id, e))
            t.retry_at = time.monotonic() + t.backoff
            t.backoff = min(t.backoff * 2, 2.0)
            return False
        return True

    def _run(self):
        misc_at = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            with self.lock:
                for t in self.tables:
                    if t.client.socket() is None:
                        if now >= t.retry_at:
                            self._connect(t)
                        continue
                    t.pump(now)
                    if t.client.want_write():
                        t.client.loop_write()
                if now >= misc_at:
                    misc_at = now + 0.5
                    for t in self.tables:
                        t.client.loop_misc()
            try:
                events = self.sel.select(0.005)
            except OSError:
                events = []
            with self.lock:
                for key, _mask in events:
                    t = key.data
                    if t.client.socket() is not None:
                        t.client.loop_read()

    def stop(self, clean=True):
        """Disconnect every table (clean: no last will) and stop the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        with self.lock:
            for t in self.tables:
                if t.client.socket() is not None:
                    if clean:
                        t.client.publish(t.t_status, json.dumps({"online": False}), qos=1,
                                         retain=True)
                        t.client.loop_write()
                        t.client.disconnect()
                        t.client.loop_write()
                    else:
                        t.client.socket().close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- the tables' play ------------------------------------------------------------

    def play(self, rounds, tables=None):
        """Each table (or those named) plays this many rounds."""
        with self.lock:
            for t in self.tables if tables is None else [self.by_id[x] for x in tables]:
                for _ in range(rounds):
                    t.journal.play_round()
                t.status_due = True

    def all_acked(self):
        with self.lock:
            return all(t.all_acked() for t in self.tables)

    def connected(self):
        with self.lock:
            return all(t.connected for t in self.tables)

    def total_records(self):
        with self.lock:
            return sum(t.journal.seq for t in self.tables)

    @staticmethod
    def wait(cond, timeout, step=0.02):
        """Poll cond() until it is true (True) or the deadline passes (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cond():
                return True
            time.sleep(step)
        return bool(cond())


def password_auth(passwords):
    """auth for SimTables: each table by its id and its password."""
    return lambda tid: Auth(username=tid, password=passwords[tid])


def cert_auth(folder):
    """auth for SimTables: each table by its client certificate (PEM) in a
    site folder of host_tools/certs.py (make_client(folder, TABLE))."""
    from host_tools import certs

    def auth(tid):
        f = certs.ClientFiles(folder, tid)
        return Auth(cafile=f.ca_pem, certfile=f.cert_pem, keyfile=f.key_pem)

    return auth


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(prog="python -m host_tools.floor.simtables",
                                description="simulated tables publishing their journals")
    p.add_argument("--broker", required=True, metavar="HOST:PORT")
    p.add_argument("--site", required=True)
    p.add_argument("--tables", type=int, default=10)
    p.add_argument("--prefix", default="T")
    p.add_argument("--password", default=None,
                   help="every table's password on the plain listener (username: its id)")
    p.add_argument("--rounds-per-s", type=float, default=1.0, help="per table")
    p.add_argument("--backlog", type=int, default=0, help="rounds journaled before connecting")
    args = p.parse_args(argv)
    host, _, port = args.broker.rpartition(":")
    ids = ["%s%03d" % (args.prefix, i + 1) for i in range(args.tables)]
    auth = (lambda tid: Auth(username=tid, password=args.password)) if args.password else None
    sim = SimTables(host, int(port), args.site, ids, auth=auth, backlog=args.backlog,
                    log=lambda line: print(line, flush=True))
    sim.start()
    try:
        while True:
            time.sleep(1.0 / args.rounds_per_s)
            sim.play(1)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
