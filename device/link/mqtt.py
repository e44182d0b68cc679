# MQTT 3.1.1, the part a publishing table needs: packets encoded into the
# caller's preallocated buffers, and an incremental parser of what a broker
# sends a client. Pure: no socket, no asyncio (device/link/client.py drives
# it), so the same code is tested on CPython and the MicroPython ports.
#
# Packet types (the spec's numbers) the parser returns: 2 CONNACK, 3 PUBLISH,
# 4 PUBACK, 9 SUBACK, 13 PINGRESP. Anything else a broker could send is an
# error here: this client never sends QoS 2 or UNSUBSCRIBE, so PUBREC,
# PUBREL, PUBCOMP and UNSUBACK cannot be answers, and CONNECT, SUBSCRIBE,
# PINGREQ, DISCONNECT go only to a broker.

from micropython import const

# Parser.next() results below 0: protocol errors (the caller closes the
# connection and counts them).
BAD_TYPE = const(-1)  # a packet type or flags a client must not receive
BAD_LENGTH = const(-2)  # a remaining length longer than 4 bytes
TOO_LARGE = const(-3)  # a packet larger than the parser's buffer
MALFORMED = const(-4)  # a body whose length or fields do not fit its type

_CONNACK = const(2)
_PUBLISH = const(3)
_PUBACK = const(4)
_SUBACK = const(9)
_PINGRESP = const(13)

PINGREQ = b"\xc0\x00"
DISCONNECT = b"\xe0\x00"


def _varint_size(n):
    k = 1
    while n >= 128:
        n >>= 7
        k += 1
    return k


def _varint(buf, at, n):
    while n >= 128:
        buf[at] = (n & 0x7F) | 0x80
        n >>= 7
        at += 1
    buf[at] = n
    return at + 1


def _str(buf, at, s):
    n = len(s)
    buf[at] = n >> 8
    buf[at + 1] = n & 0xFF
    buf[at + 2:at + 2 + n] = s
    return at + 2 + n


def next_pid(pid):
    """The packet id after pid: 1..65535, wrapping to 1 (0 is not an id)."""
    return pid + 1 if 0 < pid < 65535 else 1


def connect(buf, client_id, keepalive_s, will_topic, will_msg, user=None, password=None):
    """CONNECT into buf[0:n]; returns n. Clean session 0 (the broker keeps
    the session: the subscription, and what it queued for the client while
    it was away), keepalive in seconds (above 0: mosquitto 2.0.12 and later
    refuse 0), a last will (QoS 1, retained) when will_topic is given,
    username and password (a password needs a username)."""
    flags = 0
    rl = 12 + len(client_id)  # variable header 10, client id
    if will_topic:
        flags |= 0x2C  # will flag, will QoS 1, will retain
        rl += 4 + len(will_topic) + len(will_msg)
    if user:
        flags |= 0x80
        rl += 2 + len(user)
        if password:
            flags |= 0x40
            rl += 2 + len(password)
    buf[0] = 0x10
    at = _varint(buf, 1, rl)
    at = _str(buf, at, b"MQTT")
    buf[at] = 4  # protocol level: 3.1.1
    buf[at + 1] = flags
    buf[at + 2] = keepalive_s >> 8
    buf[at + 3] = keepalive_s & 0xFF
    at = _str(buf, at + 4, client_id)
    if will_topic:
        at = _str(buf, at, will_topic)
        at = _str(buf, at, will_msg)
    if user:
        at = _str(buf, at, user)
        if password:
            at = _str(buf, at, password)
    return at


def room(topic):
    """The bytes a PUBLISH header on topic needs before its payload."""
    return 9 + len(topic)  # type, remaining length (at most 4), topic, id


def publish(buf, at, n, topic, pid, retain=False, dup=False):
    """The header of a QoS 1 PUBLISH written into buf just before its payload,
    buf[at:at + n] (at >= room(topic)). Returns where the packet starts; it
    ends at at + n, so that it goes out in one write."""
    tl = len(topic)
    rl = 4 + tl + n
    start = at - 5 - tl - _varint_size(rl)
    buf[start] = 0x32 | (8 if dup else 0) | (1 if retain else 0)
    o = _varint(buf, start + 1, rl)
    o = _str(buf, o, topic)
    buf[o] = pid >> 8
    buf[o + 1] = pid & 0xFF
    return start


def set_dup(buf, start):
    """Mark the PUBLISH at buf[start] as sent again (DUP)."""
    buf[start] |= 8


def subscribe(buf, pid, topic):
    """SUBSCRIBE to one topic at QoS 1 into buf[0:n]; returns n."""
    buf[0] = 0x82
    at = _varint(buf, 1, 5 + len(topic))
    buf[at] = pid >> 8
    buf[at + 1] = pid & 0xFF
    at = _str(buf, at + 2, topic)
    buf[at] = 1
    return at + 1


def puback(buf, pid):
    """PUBACK for pid into buf[0:4]."""
    buf[0] = 0x40
    buf[1] = 2
    buf[2] = pid >> 8
    buf[3] = pid & 0xFF
    return 4


def decimal(buf, at, n):
    """The ASCII decimal number buf[at:at + n] (1 to 10 digits, at most
    2**32 - 1), or -1 if it is anything else."""
    if n < 1 or n > 10:
        return -1
    v = 0
    for i in range(at, at + n):
        c = buf[i] - 48
        if c < 0 or c > 9:
            return -1
        v = v * 10 + c
    return v if v <= 0xFFFFFFFF else -1


def put(buf, at, data):
    """data written into buf at `at`; returns the offset after it."""
    end = at + len(data)
    buf[at:end] = data
    return end


def put_decimal(buf, at, v):
    """The integer v written into buf at `at` in ASCII decimal, without
    making its text; returns the offset after it."""
    if v < 0:
        buf[at] = 45  # "-"
        at += 1
        v = -v
    end = at + 1
    t = v
    while t >= 10:
        t //= 10
        end += 1
    i = end
    while i > at:
        i -= 1
        buf[i] = 48 + v % 10
        v //= 10
    return end


def put_hex(buf, at, data):
    """data written into buf at `at` in lower-case hex digits; returns the
    offset after them."""
    for b in data:
        d = b >> 4
        buf[at] = d + (48 if d < 10 else 87)
        d = b & 15
        buf[at + 1] = d + (48 if d < 10 else 87)
        at += 2
    return at


def same(buf, at, n, s):
    """buf[at:at + n] == s, without a copy."""
    if n != len(s):
        return False
    for i in range(n):
        if buf[at + i] != s[i]:
            return False
    return True


class Parser:
    """Incoming bytes -> whole packets, in one buffer of `size` bytes (the
    largest packet taken, header included).

        n = stream.readinto(p.space()); p.have += n   (n == 0: the peer closed)
        while (k := p.next()) > 0: ...use p.kind, p.body, p.size...; p.drop()
        k < 0: a protocol error (BAD_TYPE, BAD_LENGTH, TOO_LARGE, MALFORMED)

    After next() returns a packet: `flags` (the low nibble of its first
    byte), `body`/`size` (offset and length of what follows the fixed
    header), `pid` (PUBACK, SUBACK, and a PUBLISH with QoS 1; 0 otherwise),
    and for a PUBLISH `qos`, `topic`/`topic_len`, `payload`/`payload_len`.
    An oversized packet is refused as soon as its length is read, before its
    body arrives."""

    def __init__(self, size):
        self.buf = bytearray(size)
        self.mv = memoryview(self.buf)
        self.have = 0
        self.kind = 0
        self.flags = 0
        self.body = 0
        self.size = 0
        self.pid = 0
        self.qos = 0
        self.topic = 0
        self.topic_len = 0
        self.payload = 0
        self.payload_len = 0

    def space(self):
        """Where the next bytes go: the buffer after what it holds."""
        return self.mv if not self.have else self.mv[self.have:]

    def reset(self):
        self.have = 0

    def next(self):
        buf = self.buf
        have = self.have
        if not have:
            return 0
        first = buf[0]
        kind = first >> 4
        flags = first & 15
        if kind == _PUBLISH:
            if (flags >> 1) & 3 > 1:
                return BAD_TYPE  # QoS 2 (never subscribed to) or 3 (reserved)
        elif kind in (_CONNACK, _PUBACK, _SUBACK, _PINGRESP):
            if flags:
                return BAD_TYPE
        else:
            return BAD_TYPE
        n = 0
        shift = 0
        i = 1
        while True:
            if i >= have:
                return 0
            b = buf[i]
            n |= (b & 0x7F) << shift
            i += 1
            if not b & 0x80:
                break
            if i == 5:
                return BAD_LENGTH
            shift += 7
        if i + n > len(buf):
            return TOO_LARGE
        if i + n > have:
            return 0
        self.kind = kind
        self.flags = flags
        self.body = i
        self.size = n
        self.pid = 0
        if kind == _PUBLISH:
            qos = (flags >> 1) & 3
            self.qos = qos
            if n < 2:
                return MALFORMED
            tl = (buf[i] << 8) | buf[i + 1]
            head = 2 + tl + (2 if qos else 0)
            if head > n:
                return MALFORMED
            self.topic = i + 2
            self.topic_len = tl
            if qos:
                self.pid = (buf[i + 2 + tl] << 8) | buf[i + 3 + tl]
                if not self.pid:
                    return MALFORMED
            self.payload = i + head
            self.payload_len = n - head
        elif kind == _PINGRESP:
            if n:
                return MALFORMED
        elif kind == _SUBACK:
            if n < 3:
                return MALFORMED
            self.pid = (buf[i] << 8) | buf[i + 1]
        else:  # CONNACK, PUBACK: two bytes
            if n != 2:
                return MALFORMED
            if kind == _PUBACK:
                self.pid = (buf[i] << 8) | buf[i + 1]
            elif buf[i] & 0xFE:
                return MALFORMED  # CONNACK: reserved acknowledge flags
        return kind

    def drop(self):
        """Remove the packet next() returned; what follows it moves to the
        front (at most a packet, byte by byte: no allocation)."""
        end = self.body + self.size
        rest = self.have - end
        buf = self.buf
        for k in range(rest):
            buf[k] = buf[end + k]
        self.have = rest
