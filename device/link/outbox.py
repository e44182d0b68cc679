# The journal as the outbox: the table's link task (docs/floor.md).
#
# Link(source, ...) publishes, over its own MQTT client (client.py), the
# table's status (retained) at every connection, then every journal record
# after the delivery cursor, in order, as the journal holds them: batches of
# whole records up to `batch` bytes, `window` publishes in flight at most. A
# record is delivered when the floor service says it stored it: the `ack`
# topic's value N moves the cursor to min(N, the last sequence number sent)
# when that is ahead, never back; the broker's PUBACK only frees the window.
# The cursor is persisted (a small file, written to a temporary file then
# renamed). After a reconnection the publishes in flight go again first
# (DUP, same packet ids), then everything from the cursor; while connected,
# if the acknowledgement does not move for ack_wait_ms with records
# outstanding, the link goes back to the cursor (go-back-N).
#
# Nothing received reaches anything but the cursor. A link fault of any kind
# (OSError, TLS, a protocol error, a vanished broker, MemoryError in the
# link) stays in the link task: run() never raises (but for cancellation),
# reports down(reason, detail) once per outage and up() when connected
# again, retries with a capped exponential backoff (jitter from the ticks),
# and calls alive() at every pass, whatever the network does, for the
# controller's watchdog. Every pass is short: nothing in it waits.
#
# The source (the journal), as the link uses it:
#   source.read_after(seq, buf, limit) -> n
#       Copy into buf[0:n] whole journal records, in journal order, with
#       sequence numbers above seq and increasing, as many as fit in `limit`
#       bytes, but always the first one (len(buf) is at least the largest
#       record the table writes: Link's `largest`, by default
#       sicbo.records.MAX_LEN); 0 when there is none. Records
#       rotated away are skipped (the floor sees the gap). Called only from
#       the link's task; buf is the link's own.
#   source.last_seq() -> the journal's last sequence number (0: none).
# and the controller calls link.journaled() after each append (the link
# then looks for new records at once; it also looks every second).
# device/journal_store.py (JournalStore.read_after, last) is the table's.

import asyncio
import os
import time

from micropython import const

from link import client as C
from link import mqtt
from sicbo import records as R
from sicbo.journal import u32

_LOOK_MS = const(1000)  # records are looked for at least this often
_WIFI_MS = const(1000)  # the Wi-Fi is checked this often while connected
_MAX_WINDOW = const(8)

# Counters: Link.counts[i] (their names, for the host: tests/logic/linkkit.COUNTERS)
_C_PUBLISHED = const(0)  # journal publishes sent (batches)
_C_RESENT = const(1)  # publishes sent again with DUP after a reconnection
_C_GOBACK = const(2)  # go-backs to the cursor (the ack did not move)
_C_ACKS = const(3)  # acks that moved the cursor
_C_BEYOND = const(4)  # acks beyond the last record sent
_C_GARBAGE = const(5)  # ack payloads that are not a decimal number
_C_FOREIGN = const(6)  # publishes on another topic than the ack topic
_C_STRAY = const(7)  # PUBACKs for no publish in flight
_C_FAILURES = const(8)  # connections lost or refused
_C_PROTOCOL = const(9)  # of which protocol errors
_C_SAVE_ERRORS = const(10)  # cursor file writes that failed
_C_STATUS = const(11)  # status publishes
_NC = const(12)


def _last_seq_of(buf, at, n):
    """The sequence number of the last record in buf[at:at + n] (whole records)."""
    o = at
    end = at + n
    seq = 0
    while o < end:
        seq = u32(buf, o + 4)
        o += buf[o + 2] | (buf[o + 3] << 8)
    return seq


def read_cursor(path):
    """The cursor saved in path (0 if none or unreadable: then everything
    is sent again, and the floor counts the duplicates)."""
    try:
        with open(path, "rb") as f:
            data = f.read(16)
    except OSError:
        return 0
    n = len(data)
    while n and data[n - 1] in (10, 13, 32):
        n -= 1
    v = mqtt.decimal(data, 0, n)
    return v if v > 0 else 0


def write_cursor(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % value)
    try:
        os.rename(tmp, path)
    except OSError:
        # A filesystem whose rename does not replace (FAT): remove, then rename.
        os.remove(path)
        os.rename(tmp, path)


def made(store, plan):
    """The table's link, from startup.stage_link's list: [retry at, told
    (the controller's), the board file's floor section, (ca, cert, key) DER
    or None, password or None, Wi-Fi password or None, the code's identity,
    the cursor's file]. Its buffers take the largest record the journal
    holds (R.MAX_LEN: a sealed meters checkpoint too, config's
    R.MAX_CHANNELS)."""
    fl = plan[2]
    ssl = wifi = None
    if plan[3] is not None:
        ssl = C.tls_context(*plan[3])
    if plan[5] is not None:
        from link.wifi import Station

        wifi = Station(fl["wifi"], plan[5])
    link = Link(store, fl["site"], fl["table"], fl["broker"], fl["port"], plan[7], ssl=ssl,
                server_hostname=fl["server_name"], password=plan[4], wifi=wifi,
                keepalive_s=fl["keepalive_s"])
    link.code = plan[6].encode()  # the status is made of bytes
    return link


class Link(C.Client):
    def __init__(self, source, site, table, host, port, cursor_path, ssl=None,
                 server_hostname=None, password=None, status=None, up=None, down=None,
                 alive=None, wifi=None, keepalive_s=30, window=4, batch=512,
                 ack_wait_ms=30000, save_ms=2000, tick_ms=20, backoff_ms=1000,
                 backoff_max_ms=60000, connect_ms=10000, ticks_ms=None, opener=None,
                 largest=R.MAX_LEN):
        if not 1 <= window <= _MAX_WINDOW:
            raise ValueError("window must be 1..8")
        tid = table.encode()
        base = b"sicbo/" + site.encode() + b"/" + tid + b"/"
        self.t_journal = base + b"journal"
        self.t_status = base + b"status"
        self.t_ack = base + b"ack"
        self.t_head = base + b"head"
        self._at = mqtt.room(self.t_journal)  # where payloads go in the tx buffer
        # A TLS client is known by its certificate; a plain one by its password.
        C.Client.__init__(self, tid, host, port, keepalive_s, ssl, server_hostname,
                          None if ssl is not None else tid, password, self.t_status,
                          b'{"online": false}', connect_ms,
                          self._at + (batch if batch > largest else largest), 160, ticks_ms,
                          opener)
        self._payload = memoryview(self.tx)[self._at:]
        self.source = source
        self.cursor_path = cursor_path
        self.status = status  # status(buf): the status written into buf, its length
        self.on_up = up
        self.on_down = down
        self.alive = alive
        self.wifi = wifi
        self.window = window
        self.batch = batch
        self.ack_wait_ms = ack_wait_ms
        self.save_ms = save_ms
        self.tick_ms = tick_ms
        self.backoff_ms = backoff_ms
        self.backoff_max_ms = backoff_max_ms
        self.counts = [0] * _NC
        # In flight (sent, no PUBACK yet), oldest first, 4 numbers each:
        # packet id, the sequence number the batch follows, its last one,
        # its bytes.
        self._win = [0] * (4 * window)
        self._n = 0
        self._redo = 0  # in-flight publishes still to send again (DUP)
        # The saved cursor, checked against the journal before each connection
        # (step): the table makes its link before it reads its journal.
        cur = read_cursor(cursor_path)
        self.cursor = cur  # delivered: the floor stored every record up to it
        self.top = cur  # the highest sequence number sent
        self._saved = cur
        self._next = cur  # the next batch follows this sequence number
        self.skipped = 0  # the first record the journal holds after the cursor, when not cursor + 1
        self.code = b""  # the running code's identity, for the status (its owner sets it)
        self.said = -1  # the round and state the status said (journaled)
        self._more = True
        self._status_due = True
        self._sub_due = True
        self._status_pid = 0
        # The MAC chain's head (a provisioned table's store), retained on its
        # topic when it moves: the floor holds the highest it saw.
        self._head_of = getattr(source, "head", None)
        self._head_due = self._head_of is not None
        self._head_sent = None
        self._head_pid = 0
        now = self.ticks()
        self._ack_t = now  # the cursor last moved (or records became outstanding)
        self._save_t = now
        self._look_t = now
        self._wifi_t = now
        self._retry_t = now  # DOWN: the next attempt
        self._delay = backoff_ms
        self._up_t = now
        self._told_down = False
        self._nowifi_t = -1  # when the Wi-Fi was found not up (-1: it is)
        self.is_up = False

    # ---- the controller's side ----------------------------------------------

    def journaled(self, said=-1):
        """The controller appended records: look for them at the next pass.
        said: the round and its state (round << 3 | state): the status names
        them, and goes again when they change."""
        self._more = True
        self._head_due = self._head_of is not None
        if said != self.said and said >= 0:
            self.said = said
            self._status_due = True

    def stats(self):
        """(counts, cursor, last sent, in flight, writes, packets, up): the
        counters' names are C_* above (host_tools and the tests name them)."""
        return (self.counts, self.cursor, self.top, self._n, self.writes, self.packets,
                self.is_up)

    # ---- the task -------------------------------------------------------------

    async def run(self):
        sleep_ms = getattr(asyncio, "sleep_ms", None)
        try:
            await self._run(sleep_ms)
        finally:
            self.close()  # cancelled (a clean stop)

    def tick(self, now):
        """One pass with its faults contained (the controller's link task):
        returns the ms until the next."""
        try:
            return self.step(now)
        except Exception as e:  # noqa: BLE001 - the link's fault, never the table's
            try:
                code, detail = C.fault_of(e, self.ssl is not None)
                self._lost(now, code, detail)
            except Exception:  # noqa: BLE001, S110 - out of memory even for that
                pass
            return self.tick_ms

    async def _run(self, sleep_ms):
        while True:
            wait = self.tick(self.ticks())
            if self.alive is not None:
                self.alive()
            if sleep_ms is not None:
                await sleep_ms(wait)
            else:
                await asyncio.sleep(wait / 1000)  # CPython

    def step(self, now):
        """One pass of the link; returns the ms until the next."""
        # The cursor is saved whatever the connection does: the journal's
        # rotation goes by it (the controller's link_pass), and a cursor
        # acknowledged just before an outage is saved during it.
        self._save(now)
        st = self.state
        if st == C.DOWN:
            last = self.source.last_seq()
            if self.cursor > last:
                # A journal behind the saved cursor (lost, started again):
                # send all it holds (the floor flags what conflicts).
                self.cursor = self.top = self._next = 0
            left = time.ticks_diff(self._retry_t, now)
            if left > 0:
                return left if left < 200 else 200
            w = self.wifi
            if w is not None and not w.up(now):
                # Associating takes seconds: an outage only past connect_ms.
                if self._nowifi_t < 0:
                    self._nowifi_t = now
                if time.ticks_diff(now, self._nowifi_t) < self.connect_ms:
                    self._retry_t = time.ticks_add(now, 100)
                else:
                    self._lost(now, C.L_NETWORK, w.status())
                return self.tick_ms
            self._nowifi_t = -1
            self.open(now)
            return self.tick_ms
        st = self.poll(now)
        if st == C.FAILED:
            self._lost(now, self.fault, self.detail)
            return self.tick_ms
        if st == C.UP:
            if not self.is_up:
                self._came_up(now)
            w = self.wifi
            if w is not None and time.ticks_diff(now, self._wifi_t) >= _WIFI_MS:
                self._wifi_t = now
                if not w.connected():
                    self._lost(now, C.L_NETWORK, w.status())
                    return self.tick_ms
            self._pump(now)
            if self.state == C.FAILED:
                self._lost(now, self.fault, self.detail)
        return self.tick_ms  # a cursor moved in this pass is saved by the next

    def _lost(self, now, code, detail):
        was_up = self.is_up
        self.close()
        self.is_up = False
        self.counts[_C_FAILURES] += 1
        if code == C.L_PROTOCOL:
            self.counts[_C_PROTOCOL] += 1
        if was_up and time.ticks_diff(now, self._up_t) >= self.ka_ms:
            self._delay = self.backoff_ms  # it had been up a while: a new outage
        d = self._delay
        # Jitter from the ticks, up to half the delay, so that tables cut off
        # together do not all come back at the same instant.
        self._retry_t = time.ticks_add(now, d + time.ticks_us() % (d // 2 + 1))
        self._delay = d * 2 if d * 2 < self.backoff_max_ms else self.backoff_max_ms
        if not self._told_down:
            self._told_down = True
            if self.on_down is not None:
                self.on_down(code, detail)

    def _came_up(self, now):
        self.is_up = True
        self._up_t = now
        # In flight at the cut: sent again first, with DUP and their packet
        # ids; then everything from the cursor.
        self._redo = 0
        self._next = self.cursor
        self._more = True
        self._sub_due = True
        self._status_due = True
        self._head_sent = None
        self._head_due = self._head_of is not None
        self._ack_t = now

    # ---- sending ------------------------------------------------------------

    def _pump(self, now):
        if self._sub_due and self.ready():
            self._sub_due = not self.subscribe(self.t_ack, now)
        if self._status_due and self.ready():
            self._send_status(now)
        if self._head_due and self.ready():
            self._send_head(now)
        while self._redo < self._n and self.ready():
            self._resend(now)
        if time.ticks_diff(now, self._look_t) >= _LOOK_MS:
            self._more = True
        while self._more and self._n < self.window and self.ready():
            self._send_next(now)
        if self.cursor != self.top and time.ticks_diff(now, self._ack_t) > self.ack_wait_ms:
            # The floor did not acknowledge: lost on the way (a broker that
            # crashed before it saved them, a publish its ACL dropped) or a
            # floor that was away. Send again from the cursor.
            self.counts[_C_GOBACK] += 1
            self._next = self.cursor
            self._more = True
            self._ack_t = now

    def _pid(self):
        # The next packet id not in use (ids of the window and the status).
        while True:
            pid = self.new_pid()
            if pid == self._status_pid or pid == self._head_pid:
                continue
            for i in range(self._n):
                if self._win[4 * i] == pid:
                    break
            else:
                return pid

    def _send_status(self, now):
        status = self.status if self.status is not None else self._status
        n = status(self._payload)
        pid = self._pid()
        start = mqtt.publish(self.tx, self._at, n, self.t_status, pid, True, False)
        if self.send(self.tx, start, self._at + n - start, now):
            self._status_pid = pid
            self._status_due = False
            self.counts[_C_STATUS] += 1

    def _send_head(self, now):
        head_of = self._head_of
        h = head_of() if head_of is not None else None
        if h is None or h == self._head_sent:
            self._head_due = False
            return
        data = h.encode()
        n = len(data)
        self._payload[0:n] = data
        pid = self._pid()
        start = mqtt.publish(self.tx, self._at, n, self.t_head, pid, True, False)
        if self.send(self.tx, start, self._at + n - start, now):
            self._head_pid = pid
            self._head_sent = h
            self._head_due = False

    def _status(self, buf):
        # The status without a table (docs/floor.md), written into buf.
        o = mqtt.put(buf, 0, b'{"online": true, "seq": ')
        o = mqtt.put_decimal(buf, o, self.source.last_seq())
        o = mqtt.put(buf, o, b', "acked": ')
        o = mqtt.put_decimal(buf, o, self.cursor)
        return mqtt.put(buf, o, b"}")

    def _resend(self, now):
        i = self._redo
        n = self._win[4 * i + 3]
        got = self.source.read_after(self._win[4 * i + 1], self._payload, n)
        if got != n or _last_seq_of(self.tx, self._at, got) != self._win[4 * i + 2]:
            self._drop(i)  # rotated away meanwhile: nothing to send again
            return
        start = mqtt.publish(self.tx, self._at, n, self.t_journal, self._win[4 * i], False, True)
        if self.send(self.tx, start, self._at + n - start, now):
            self._redo = i + 1
            self.counts[_C_RESENT] += 1

    def _send_next(self, now):
        nxt = self._next
        for i in range(self._n):
            if self._win[4 * i + 1] == nxt:
                self._next = self._win[4 * i + 2]  # that batch is in flight already
                return
        self._look_t = now
        n = self.source.read_after(nxt, self._payload, self.batch)
        if n <= 0:
            self._more = False
            return
        if nxt == self.cursor:
            # Records after the cursor that the journal does not hold (a
            # corrupt stretch): the status says so, so that the floor can
            # acknowledge past them (docs/floor.md, `missing`).
            first = u32(self.tx, self._at + 4)
            skipped = first if first > nxt + 1 else 0
            if skipped != self.skipped:
                self.skipped = skipped
                self._status_due = True
        last = _last_seq_of(self.tx, self._at, n)
        pid = self._pid()
        start = mqtt.publish(self.tx, self._at, n, self.t_journal, pid, False, False)
        if not self.send(self.tx, start, self._at + n - start, now):
            return
        i = self._n
        self._win[4 * i] = pid
        self._win[4 * i + 1] = nxt
        self._win[4 * i + 2] = last
        self._win[4 * i + 3] = n
        self._n = i + 1
        self._redo = self._n  # a new publish is not one to send again
        if self.cursor == self.top:
            self._ack_t = now  # records outstanding from now
        if last > self.top:
            self.top = last
        self._next = last
        self.counts[_C_PUBLISHED] += 1

    def _drop(self, i):
        w = self._win
        n = self._n - 1
        for j in range(4 * i, 4 * n):
            w[j] = w[j + 4]
        self._n = n
        if i < self._redo:
            self._redo -= 1

    # ---- receiving ----------------------------------------------------------

    def got_suback(self, now):
        # Up once the ack topic is granted, not at CONNACK: a broker that
        # refuses it (or drops the table before) at every attempt makes one
        # outage, said once.
        self._told_down = False
        if self.on_up is not None:
            self.on_up()

    def got_puback(self, pid, now):
        for i in range(self._n):
            if self._win[4 * i] == pid:
                self._drop(i)
                return
        if pid and pid == self._status_pid:
            self._status_pid = 0
        elif pid and pid == self._head_pid:
            self._head_pid = 0
        else:
            self.counts[_C_STRAY] += 1

    def got_publish(self, p, now):
        if not mqtt.same(p.buf, p.topic, p.topic_len, self.t_ack):
            self.counts[_C_FOREIGN] += 1
            return
        v = mqtt.decimal(p.buf, p.payload, p.payload_len)
        if v < 0:
            self.counts[_C_GARBAGE] += 1
            return
        if v > self.top:
            self.counts[_C_BEYOND] += 1
            v = self.top  # what was sent is stored; the rest is not known
        if v > self.cursor:
            self.cursor = v
            self._ack_t = now
            self.counts[_C_ACKS] += 1

    def _save(self, now):
        if self.cursor != self._saved and time.ticks_diff(now, self._save_t) >= self.save_ms:
            self._save_t = now
            try:
                write_cursor(self.cursor_path, self.cursor)
                self._saved = self.cursor
            except OSError:
                self.counts[_C_SAVE_ERRORS] += 1

    def save(self):
        """Persist the cursor now (a clean stop)."""
        self._save_t = time.ticks_add(self.ticks(), -self.save_ms)
        self._save(self.ticks())
