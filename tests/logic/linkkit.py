# Test doubles for the floor link (device/link): a journal held in memory
# that implements the link's source interface (device/link/outbox.py), and
# the records to fill it with. Portable: CPython and the MicroPython ports.

from sicbo.journal import encode, u32

J_BOOT = 1
J_ALARM = 10


def record(seq, payload=b"\x00" * 8, rtype=J_ALARM):
    """One sealed journal record (36 bytes with the default payload)."""
    return encode(rtype, seq, 1, 1, seq * 10, 0, payload)


def records(first, last, before=b""):
    """before, then the records first..last, each with the default payload
    (one size), in one buffer made at its final length: growing it record by
    record takes copies that a board's heap (the logic tests run there too,
    sicbo test --on) has no room for beside the firmware."""
    if last < first:
        return bytearray(before)
    size = len(record(first))
    at = len(before)
    out = bytearray(at + (last - first + 1) * size)
    out[:at] = before
    for seq in range(first, last + 1):
        out[at:at + size] = record(seq)
        at += size
    return out


class MemorySource:
    """A journal in memory: append(data) adds sealed records; the link reads
    them through read_after/last_seq; `reads` counts its calls. dropped(seq)
    removes the records up to seq, as rotation deletes the oldest."""

    def __init__(self):
        self.data = bytearray()
        self.reads = 0

    def append(self, data):
        self.data += data

    def add(self, first, last):
        """Records first..last added (see records)."""
        self.data = records(first, last, self.data)

    def last_seq(self):
        last = 0
        o = 0
        d = self.data
        while o < len(d):
            last = u32(d, o + 4)
            o += d[o + 2] | (d[o + 3] << 8)
        return last

    def drop_through(self, seq):
        d = self.data
        o = 0
        while o < len(d) and u32(d, o + 4) <= seq:
            o += d[o + 2] | (d[o + 3] << 8)
        self.data = d[o:]

    def read_after(self, seq, buf, limit):
        self.reads += 1
        d = self.data
        o = 0
        while o < len(d) and u32(d, o + 4) <= seq:
            o += d[o + 2] | (d[o + 3] << 8)
        n = 0
        while o + n < len(d):
            k = d[o + n + 2] | (d[o + n + 3] << 8)
            if n and n + k > limit:
                break
            n += k
        buf[0:n] = d[o:o + n]
        return n


def seqs_of(data):
    """The sequence numbers of the records in data (bytes of whole records)."""
    out = []
    o = 0
    while o < len(data):
        out.append(u32(data, o + 4))
        o += data[o + 2] | (data[o + 3] << 8)
    return out


# The names of Link.counts[i] (device/link/outbox.py, _C_*), in order.
COUNTERS = ("published", "resent", "gobacks", "acks", "beyond", "garbage", "foreign",
            "stray_pubacks", "failures", "protocol_errors", "save_errors", "status")


def stats(link):
    """The link's counters and state by name."""
    counts, cursor, sent, in_flight, writes, packets, up = link.stats()
    d = {}
    for i in range(len(COUNTERS)):
        d[COUNTERS[i]] = counts[i]
    d["cursor"] = cursor
    d["sent"] = sent
    d["in_flight"] = in_flight
    d["writes"] = writes
    d["packets"] = packets
    d["up"] = up
    return d


class Quiet:
    """A socket with nothing to read (the test delivers the broker's bytes)."""

    def readinto(self, buf):
        return None

    def close(self):
        pass


def deliver(link, data, now):
    """The broker's bytes fed to the link's parser, each whole packet taken
    as the link's own poll takes it."""
    p = link.parser
    p.buf[p.have:p.have + len(data)] = data
    p.have += len(data)
    link.last_rx = now
    while True:
        k = p.next()
        if k <= 0:
            assert k == 0, k
            return
        link._take(k, p, now)
        p.drop()


def publish_parts(pkt):
    """(pid, topic, payload) of a PUBLISH packet as a broker reads it."""
    from link import mqtt

    p = mqtt.Parser(2048)
    p.buf[0:len(pkt)] = pkt
    p.have = len(pkt)
    assert p.next() == 3
    return (p.pid, bytes(p.buf[p.topic:p.topic + p.topic_len]),
            bytes(p.buf[p.payload:p.payload + p.payload_len]))


def made_rig(base):
    """A class of base (link.outbox.Link) whose packets go to a list
    (`sent`), connected once the test delivers a CONNACK (connack)."""
    from link import client as C

    class Rig(base):
        def open(self, now):
            self.state = C.CONNECTING
            self.t0 = now
            self.last_rx = now
            self._sock = Quiet()

        def send(self, buf, off, n, now):
            if self.state == C.FAILED:
                return False
            self.sent.append(bytes(buf[off:off + n]))
            self.packets += 1
            self.last_tx = now
            return True

        def deliver(self, data, now):
            deliver(self, data, now)

        def connack(self, now, suback=False):
            self.step(now)  # DOWN -> CONNECTING
            self.deliver(b"\x20\x02\x00\x00", now)
            self.step(now)  # up: subscribe, status, head, publishes
            if suback:  # the ack topic granted: the link says it is up
                pid = self.sub_pid
                self.deliver(bytes((0x90, 3, pid >> 8, pid & 0xFF, 1)), now)

    return Rig


class Sock:
    """A non-blocking socket: `incoming` is what the broker sent and the
    client has not read; `written` each write's bytes; a write takes at
    most `room` bytes."""

    def __init__(self):
        self.incoming = bytearray()
        self.written = []
        self.closed = 0
        self.room = 1 << 16

    def readinto(self, buf):
        if not self.incoming:
            return None
        n = min(len(buf), len(self.incoming))
        buf[0:n] = self.incoming[0:n]
        self.incoming = self.incoming[n:]
        return n

    def write(self, buf, off, n):
        k = min(n, self.room)
        self.written.append(bytes(buf[off:off + k]))
        return k

    def close(self):
        self.closed += 1


class Clock:
    """The test's ticks_ms: `now`, moved by the test."""

    def __init__(self):
        self.now = 1000

    def __call__(self):
        return self.now


class Closing(Sock):
    """A Sock the broker closes once `eof` is set: the first read with
    nothing left returns 0 (the peer's close); every read is counted in
    `reads`, and one after the 0 returns None, so that a client that reads
    on past the close cannot spin for ever in a test."""

    def __init__(self):
        Sock.__init__(self)
        self.eof = False
        self.reads = 0
        self.ended = 0  # reads that returned 0

    def readinto(self, buf):
        self.reads += 1
        if self.incoming or not self.eof:
            return Sock.readinto(self, buf)
        if self.ended:
            return None
        self.ended += 1
        return 0


def client_on(make_sock, keepalive_s, clock, **options):
    """A Client whose opener hands out make_sock() at each opening, as the
    board opens a connection: (client, the sockets opened, in order)."""
    from link import client as C

    socks = []

    async def opener(host, port, ssl, server_hostname):
        s = make_sock()
        socks.append(s)
        return s

    c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=keepalive_s, ticks_ms=clock,
                 opener=opener, **options)
    return c, socks


def open_client(c, clock):
    """Opens c at clock.now and runs the loop until its opener has answered:
    it is then CONNECTING with its CONNECT written."""
    import asyncio

    from link import client as C

    async def go():
        c.open(clock.now)
        for _ in range(20):
            if c.state != C.OPENING:
                return
            await asyncio.sleep(0)

    asyncio.run(go())
    assert c.state == C.CONNECTING, (c.state, c.fault, c.detail)


def opened_client(keepalive_s, clock=None):
    """A Client opened on a Sock, in CONNECTING with its CONNECT written:
    (client, sock, clock)."""
    clock = clock or Clock()
    c, socks = client_on(Sock, keepalive_s, clock)
    open_client(c, clock)
    return c, socks[0], clock
