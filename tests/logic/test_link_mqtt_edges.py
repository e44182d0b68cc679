# Edges of the floor link's MQTT side (device/link/mqtt.py, client.py,
# outbox.py): a CONNECT string of 256 bytes or more, the parser's fields
# before and after each packet (all of them made with the parser: its first
# packets allocate nothing), the opening's deadline to the millisecond,
# and the faults the journal names when a subscription is refused or the
# connection breaks while the link sends. Portable.
import asyncio
import gc

import linkkit
from folderkit import tmpdir
from link import client as C
from link import mqtt
from link.outbox import Link

from sicbo import journal, logtext
from sicbo import records as R

# ---- CONNECT ------------------------------------------------------------------


def _strings(pkt):
    """A broker's reading of a CONNECT: (flags, [its strings after the
    keepalive]), each string read by its two-byte length."""
    i = 1
    while pkt[i] & 0x80:
        i += 1
    i += 1  # the fixed header
    assert pkt[i:i + 7] == b"\x00\x04MQTT\x04"
    flags = pkt[i + 7]
    i += 10  # protocol name, level, flags, keepalive
    out = []
    while i < len(pkt):
        n = pkt[i] << 8 | pkt[i + 1]
        out.append(bytes(pkt[i + 2:i + 2 + n]))
        i += 2 + n
    assert i == len(pkt)
    return flags, out


def test_a_password_of_300_bytes_reaches_the_broker_whole():
    # A token as password: its length needs both bytes of the prefix.
    password = bytes(48 + i % 10 for i in range(300))
    buf = bytearray(512)
    n = mqtt.connect(buf, b"T01", 30, b"sicbo/S1/T01/status", b'{"online": false}',
                     b"T01", password)
    flags, strings = _strings(buf[:n])
    assert flags & 0xC0 == 0xC0
    assert strings == [b"T01", b"sicbo/S1/T01/status", b'{"online": false}', b"T01", password]
    assert bytes(buf[n - 302:n - 300]) == b"\x01\x2c"


# ---- the parser -----------------------------------------------------------------


def _feed(p, data):
    p.buf[p.have:p.have + len(data)] = data
    p.have += len(data)


def test_the_parser_names_each_packet_s_type_in_kind():
    stream = (b"\x20\x02\x00\x00" + b"\x40\x02\x00\x09" + b"\x90\x03\x00\x02\x01"
              + b"\x32\x06\x00\x01t\x00\x05" + b"7" + b"\xd0\x00")
    p = mqtt.Parser(64)
    _feed(p, stream)
    got = []
    while True:
        k = p.next()
        if k <= 0:
            assert k == 0, k
            break
        got.append((k, p.kind))
        p.drop()
    assert got == [(2, 2), (4, 4), (9, 9), (3, 3), (13, 13)]


def test_a_parser_that_has_taken_no_publish_holds_an_empty_payload():
    p = mqtt.Parser(64)
    assert (p.kind, p.pid, p.topic, p.topic_len, p.payload, p.payload_len) == (0, 0, 0, 0, 0, 0)
    assert mqtt.decimal(p.buf, p.payload, p.payload_len) == -1  # no number acknowledged
    _feed(p, b"\x40\x02\x00\x09")  # a PUBACK: no payload either
    assert p.next() == 4
    assert (p.payload, p.payload_len) == (0, 0)



# Every kind of packet a broker sends a client, one after the other.
_EVERY_KIND = (b"\x20\x02\x01\x00" + b"\x40\x02\x00\x09" + b"\x90\x03\x00\x02\x01"
               + b"\x32\x06\x00\x01t\x00\x05" + b"7" + b"\x30\x04\x00\x01u" + b"8"
               + b"\xd0\x00")


def test_a_parser_has_every_field_from_its_making_and_packets_add_none():
    # The client makes its parser once, at start-up; on the board an
    # attribute set for the first time grows the object's table of them, an
    # allocation at the first packet of the link's life (when the heap may
    # have no block for it) where the link allocates nothing per packet.
    p = mqtt.Parser(64)
    fields = sorted(p.__dict__)
    assert "flags" in fields and "qos" in fields and "body" in fields, fields
    _feed(p, _EVERY_KIND)
    kinds = []
    while True:
        k = p.next()
        if k <= 0:
            assert k == 0, k
            break
        kinds.append((k, p.flags))
        p.drop()
    assert kinds == [(2, 0), (4, 0), (9, 0), (3, 2), (3, 0), (13, 0)], kinds
    assert sorted(p.__dict__) == fields


def test_the_first_packets_a_new_parser_takes_allocate_nothing():
    if not hasattr(gc, "mem_alloc"):
        return  # CPython: no heap counter (the MicroPython runs check it)
    p = mqtt.Parser(64)
    data = _EVERY_KIND
    n = len(data)
    buf = p.buf
    for i in range(n):
        buf[i] = data[i]
    p.have = n
    nxt = p.next
    drop = p.drop
    gc.collect()
    before = gc.mem_alloc()
    while nxt() > 0:
        drop()
    used = gc.mem_alloc() - before
    assert p.have == 0
    assert used == 0, used

# ---- the opening's deadline -------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 1000

    def __call__(self):
        return self.now


def test_an_opening_times_out_only_after_connect_ms_not_at_it():
    clock = Clock()

    async def opener(host, port, ssl, server_hostname):
        await asyncio.sleep(3600)  # a connection that does not come

    c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=10, ticks_ms=clock, opener=opener,
                 connect_ms=1000)

    async def go():
        c.open(clock.now)
        await asyncio.sleep(0)
        clock.now += 1000
        at_limit = c.poll(clock.now)
        clock.now += 1
        after = c.poll(clock.now)
        c.close()  # cancels the opener
        await asyncio.sleep(0)
        return at_limit, after

    assert asyncio.run(go()) == (C.OPENING, C.FAILED)
    assert (c.fault, c.detail) == (C.L_TIMEOUT, C.OPENING)


# ---- faults as the journal names them ------------------------------------------


class Quiet:
    """A socket with nothing to read; a write raises `error` when set."""

    def __init__(self):
        self.error = None
        self.written = []

    def readinto(self, buf):
        return None

    def write(self, buf, off, n):
        if self.error is not None:
            raise self.error
        self.written.append(bytes(buf[off:off + n]))
        return n

    def close(self):
        pass


class Rig(Link):
    """A Link on a Quiet socket (the test delivers the broker's bytes);
    its outages as the table's journal shows them."""

    def __init__(self, name):
        self.sock = Quiet()
        self.downs = []
        Link.__init__(self, linkkit.MemorySource(), "S1", "T01", "127.0.0.1", 1,
                      tmpdir("lm_" + name) + "/cursor",
                      down=lambda code, detail: self.downs.append((code, detail)),
                      ticks_ms=lambda: 0)

    def open(self, now):
        self.state = C.CONNECTING
        self.t0 = now
        self.last_rx = now
        self._sock = self.sock

    def deliver(self, data, now):
        linkkit.deliver(self, data, now)

    def down_lines(self):
        # J_LINK down as the table journals an outage (link.table's
        # link_down), then as the journal's reader shows it.
        out = []
        for code, detail in self.downs:
            data = journal.encode(R.J_LINK, 7, 3, 1, 0, 0, bytes(
                (R.LINK_DOWN, code, detail & 0xFF, (detail >> 8) & 0xFF, 0, 0, 0, 0)))
            for rec in journal.records(data):
                line = logtext.journal_line(rec)
                out.append(line[line.index(" down: "):line.index(" @")])
        return out


def test_a_refused_subscription_is_journaled_as_subscription_refused():
    link = Rig("subref")
    link.tick(0)  # DOWN -> CONNECTING
    link.deliver(b"\x20\x02\x00\x00", 0)
    link.tick(0)  # up: SUBSCRIBE sent
    sub = [w for w in link.sock.written if w[0] == 0x82]
    assert len(sub) == 1
    link.deliver(b"\x90\x03" + sub[0][2:4] + b"\x80", 1)  # SUBACK: refused
    link.tick(1)
    assert link.downs == [(C.L_SUBSCRIBE, 0x80)]
    assert link.down_lines() == [" down: subscription refused (128)"]


def test_a_connection_reset_while_the_link_sends_is_journaled_as_a_socket_error():
    link = Rig("reset")
    link.tick(0)
    link.deliver(b"\x20\x02\x00\x00", 0)
    link.sock.error = OSError(104)  # ECONNRESET, as the SUBSCRIBE goes
    link.tick(0)
    assert link.downs == [(C.L_SOCKET, 104)]
    assert link.down_lines() == [" down: socket error (104)"]
    assert not link.is_up and link.state == C.DOWN


def test_a_connect_carries_a_keepalive_of_two_bytes_high_byte_first():
    # Past 255 s the high byte carries: 300 s is 0x01 0x2C, 65535 s 0xFF 0xFF.
    buf = bytearray(64)
    for keepalive, want in ((1, b"\x00\x01"), (300, b"\x01\x2c"), (65535, b"\xff\xff")):
        n = mqtt.connect(buf, b"t1", keepalive, None, None)
        assert bytes(buf[10:12]) == want and buf[12:n] == b"\x00\x02t1", (keepalive, buf[:n])


def test_a_client_takes_a_keepalive_of_one_second_and_refuses_none():
    assert C.Client(b"t1", "127.0.0.1", 1883, keepalive_s=1).ka_ms == 1000
    for bad in (0, -1):
        try:
            C.Client(b"t1", "127.0.0.1", 1883, keepalive_s=bad)
        except ValueError as e:
            assert str(e) == "keepalive must be above 0", e
        else:
            raise AssertionError("keepalive %d taken" % bad)
