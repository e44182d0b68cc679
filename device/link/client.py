# The MQTT client's asyncio side: one connection to the broker at a time,
# driven by its owner's task (device/link/outbox.py) through poll(), which
# never waits. One short-lived task per connection opens it (TCP through
# asyncio.open_connection, then TLS on the board); afterwards poll() reads
# and writes the non-blocking socket itself: no task, no generator, no
# I/O-queue entry per packet. Every deadline is a ticks_diff checked by
# poll(), never a socket timeout (on the ESP32 setblocking() clears a
# socket's timeout).
#
# Writes: one write per packet (the packet is whole in a buffer), with
# TCP_NODELAY (else the kernel holds a publish behind the last small packet
# until the broker's delayed ACK, 40 ms); what the socket does not take at
# once (a TLS handshake, a full send buffer) is written by the next polls,
# and nothing else goes out until it has. No allocation per packet.
#
# A fault of any kind (an exception in the opener or in a read or write, a
# protocol error, a timeout, a refusal) sets `fault` (an L_* code below) and
# `detail` (an errno, a CONNACK code, a parser code), and the state FAILED;
# the owner then calls close(). Nothing raises out of poll().
#
# The socket poll() uses has readinto(buf) (None: nothing yet, 0: closed),
# write(buf, off, n) (None or bytes taken) and close(), as MicroPython's
# sockets and TLS sockets do. `opener` (an async function (host, port, ssl,
# server_hostname) -> such a socket) replaces the board's own, open_socket
# below: the host tests run the link on CPython with one of theirs.

import asyncio
import time

from micropython import const

from link import mqtt

# States
DOWN = const(0)
OPENING = const(1)  # the TCP (and TLS) connection is being opened
CONNECTING = const(2)  # CONNECT sent, waiting for CONNACK
UP = const(3)
FAILED = const(4)  # see fault; close() next

# Faults (the owner reports them: the link's journal code)
L_NETWORK = const(1)  # no network (Wi-Fi not connected)
L_RESOLVE = const(2)  # the broker's name did not resolve
L_SOCKET = const(3)  # a socket error (refused, reset, unreachable): detail errno
L_TLS = const(4)  # a TLS failure (certificate, hostname, handshake)
L_REFUSED = const(5)  # CONNACK refused: detail its return code
L_TIMEOUT = const(6)  # no CONNACK (or SUBACK) in time: detail the state
L_DEAD = const(7)  # nothing from the broker within 1.5 keepalives
L_CLOSED = const(8)  # the broker closed the connection
L_PROTOCOL = const(9)  # a protocol error: detail -mqtt.* code, or 5 truncated, 6 unexpected
L_SUBSCRIBE = const(10)  # the subscription was refused
L_MEMORY = const(11)  # MemoryError
L_ERROR = const(12)  # anything else

_TRUNCATED = const(5)
_UNEXPECTED = const(6)

_CONNACK = const(2)
_PUBLISH = const(3)
_PUBACK = const(4)
_SUBACK = const(9)

_ACKS = const(4)  # PUBACKs owed to the broker, queued while a write is pending


def _now():
    return time.ticks_ms()  # a plain int on every port (the stubs say otherwise)


def fault_of(e, tls):
    """(L_* code, detail) of an exception caught in the link."""
    if isinstance(e, MemoryError):
        return L_MEMORY, 0
    if isinstance(e, ValueError) and tls:
        return L_TLS, 0  # MicroPython's ssl: bad certificate, wrong hostname
    if isinstance(e, OSError):
        no = e.args[0] if e.args and isinstance(e.args[0], int) else 0
        if no <= -0x1000 and tls:
            return L_TLS, -no  # an mbedtls error code
        if no < 0:
            return L_RESOLVE, -no  # lwIP's getaddrinfo (-202) and the like
        if tls and not no:
            return L_TLS, 0  # CPython's ssl errors
        return L_SOCKET, no
    if isinstance(e, EOFError):
        return L_CLOSED, 0
    return L_ERROR, 0


class Client:
    """An MQTT 3.1.1 client for one broker.

    client_id: bytes (the table id); host, port: the broker (an address; a
    name is resolved by a blocking lookup); ssl: an SSLContext or None;
    server_hostname: the name the broker's certificate must carry; user,
    password: bytes or None; will_topic, will_msg: bytes (the last will,
    retained, QoS 1); tx_size: the largest packet sent; rx_size: the
    largest taken."""

    def __init__(self, client_id, host, port, keepalive_s=30, ssl=None, server_hostname=None,
                 user=None, password=None, will_topic=None, will_msg=None, connect_ms=10000,
                 tx_size=1120, rx_size=160, ticks_ms=None, opener=None):
        if keepalive_s <= 0:
            raise ValueError("keepalive must be above 0")
        self.host = host
        self.port = port
        self.ssl = ssl
        self.server_hostname = server_hostname
        self.ka_ms = keepalive_s * 1000
        self.connect_ms = connect_ms
        self.ticks = ticks_ms or _now
        self.opener = opener or open_socket
        self.tx = bytearray(tx_size)
        # CONNECT is the same at every connection: made once.
        self._hello = bytes(memoryview(self.tx)[:mqtt.connect(
            self.tx, client_id, keepalive_s, will_topic, will_msg, user, password)])
        self.parser = mqtt.Parser(rx_size)
        self._ack = bytearray(4)
        self._acks = [0] * _ACKS  # PUBACKs owed
        self._nacks = 0
        self.state = DOWN
        self.fault = 0
        self.detail = 0
        self.pid = 0
        self.sub_pid = 0
        self.subscribed = False
        self.session = False  # CONNACK's session present
        self.packets = 0  # packets sent
        self.writes = 0  # calls to the socket's write (one per packet but for partial writes)
        self.t0 = 0  # when the state began
        self.last_rx = 0
        self.last_tx = 0
        self._ping = 0
        self._sock = None
        self._opener = None
        self._pbuf = None  # a packet partly written: its buffer, offset, bytes left
        self._poff = 0
        self._pend = 0

    # ---- to override --------------------------------------------------------

    def got_connack(self, now):
        pass

    def got_suback(self, now):
        pass

    def got_puback(self, pid, now):
        pass

    def got_publish(self, p, now):
        pass

    # ---- life ---------------------------------------------------------------

    def open(self, now):
        """Start opening a connection (DOWN -> OPENING)."""
        self.close()
        self.state = OPENING
        self.t0 = now
        self._opener = asyncio.create_task(self._open())

    async def _open(self):
        try:
            sock = await self.opener(self.host, self.port, self.ssl,
                                     self.server_hostname or self.host)
        except Exception as e:  # noqa: BLE001 - every fault is the link's, never the table's
            self._fail_exc(e)
            self._opener = None
            return
        if self.state != OPENING:  # closed meanwhile
            _close(sock)
            return
        self._opener = None  # done: its task and frame are garbage now
        self._sock = sock
        now = self.ticks()
        self.last_rx = now
        self._ping = now
        self._connect(now)

    def _connect(self, now):
        self.state = CONNECTING
        self.t0 = now
        self.send(self._hello, 0, len(self._hello), now)

    def close(self):
        """Drop the connection (any state -> DOWN); keeps fault/detail."""
        t = self._opener
        self._opener = None
        if t is not None and not t.done():
            try:
                t.cancel()
            except Exception:  # noqa: BLE001, S110 - a task that just ended
                pass
        if self._sock is not None:
            _close(self._sock)
        self._sock = None
        self._pend = 0
        self._pbuf = None
        self._nacks = 0
        self.parser.reset()
        self.subscribed = False
        self.state = DOWN

    def _fail(self, code, detail=0):
        if self.state != FAILED:
            self.state = FAILED
            self.fault = code
            self.detail = detail

    def _fail_exc(self, e):
        code, detail = fault_of(e, self.ssl is not None)
        self._fail(code, detail)

    # ---- writing ------------------------------------------------------------

    def ready(self):
        """True when a packet can be sent now (connected, nothing pending)."""
        return self.state >= CONNECTING and self.state != FAILED and not self._pend

    def send(self, buf, off, n, now):
        """Write buf[off:off + n], one packet, at once; what the socket does
        not take goes out at the next polls (buf must stay as it is until
        ready()). False if it cannot be sent now, or on a fault."""
        s = self._sock
        if self._pend or s is None or self.state == FAILED:
            return False
        try:
            r = s.write(buf, off, n)
        except Exception as e:  # noqa: BLE001
            self._fail_exc(e)
            return False
        if r is None:
            r = 0
        self.packets += 1
        self.writes += 1
        self.last_tx = now
        if r < n:
            self._pbuf = buf
            self._poff = off + r
            self._pend = n - r
        return True

    def _flush(self, now):
        s = self._sock
        if s is None:  # never with a packet pending: close() drops both
            return
        try:
            r = s.write(self._pbuf, self._poff, self._pend)
        except Exception as e:  # noqa: BLE001
            self._fail_exc(e)
            return
        self.writes += 1
        if r:
            self.last_tx = now
            self._poff += r
            self._pend -= r
            if not self._pend:
                self._pbuf = None

    def subscribe(self, topic, now):
        """SUBSCRIBE to topic at QoS 1 (SUBACK within connect_ms, or a fault)."""
        t = self.tx
        self.pid = mqtt.next_pid(self.pid)
        self.sub_pid = self.pid
        self.subscribed = False
        self.t0 = now
        return self.send(t, 0, mqtt.subscribe(t, self.pid, topic), now)

    def new_pid(self):
        self.pid = mqtt.next_pid(self.pid)
        return self.pid

    # ---- the owner's pass ---------------------------------------------------

    def poll(self, now):
        """Progress the connection: pending writes, PUBACKs owed, deadlines,
        keepalive. Returns the state."""
        st = self.state
        if st == DOWN or st == FAILED or st == OPENING and self._sock is None:
            if st == OPENING and time.ticks_diff(now, self.t0) > self.connect_ms:
                self._fail(L_TIMEOUT, st)
            return self.state
        self._pull(now)
        st = self.state
        if st == FAILED:
            return st
        if self._pend:
            self._flush(now)
        if st == OPENING or st == CONNECTING or (self.sub_pid and not self.subscribed):
            if time.ticks_diff(now, self.t0) > self.connect_ms:
                self._fail(L_TIMEOUT, st)
                return FAILED
        if st >= CONNECTING:
            if time.ticks_diff(now, self.last_rx) > self.ka_ms * 3 // 2:
                self._fail(L_DEAD)
                return FAILED
        if st == UP and not self._pend:
            while self._nacks and not self._pend:
                # In the order the PUBLISHes came (MQTT 3.1.1, 4.6).
                a = self._acks
                pid = a[0]
                n = self._nacks - 1
                for i in range(n):
                    a[i] = a[i + 1]
                self._nacks = n
                self.send(self._ack, 0, mqtt.puback(self._ack, pid), now)
            # A ping when the line has been quiet, either way, for half a
            # keepalive; at most one per half keepalive.
            half = self.ka_ms // 2
            if (not self._pend and time.ticks_diff(now, self._ping) >= half
                    and (time.ticks_diff(now, self.last_tx) >= half
                         or time.ticks_diff(now, self.last_rx) >= half)):
                self._ping = now
                self.send(mqtt.PINGREQ, 0, 2, now)
        return self.state

    # ---- reading ------------------------------------------------------------

    def _pull(self, now):
        # The packets the buffer holds, then everything the socket holds now,
        # packet by packet. A QoS 1 PUBLISH waits in the buffer while _ACKS
        # PUBACKs are owed (poll sends them, then reads on): under MQTT 3.1.1
        # the broker sends one again only after a reconnection.
        p = self.parser
        while True:
            while True:
                k = p.next()
                if not k:
                    break
                if k < 0:
                    self._fail(L_PROTOCOL, -k)
                    return
                if k == _PUBLISH and p.qos and self._nacks >= _ACKS:
                    return
                self._take(k, p, now)
                if self.state == FAILED:
                    return
                p.drop()
            s = self._sock
            if s is None:
                return
            try:
                n = s.readinto(p.space())
            except Exception as e:  # noqa: BLE001
                self._fail_exc(e)
                return
            if n is None:
                return  # nothing more now
            if not n:
                if p.have:
                    self._fail(L_PROTOCOL, _TRUNCATED)  # closed inside a packet
                else:
                    self._fail(L_CLOSED)
                return
            p.have += n
            self.last_rx = now

    def _take(self, k, p, now):
        buf = p.buf
        if self.state == CONNECTING:
            if k != _CONNACK:
                self._fail(L_PROTOCOL, _UNEXPECTED)  # the broker's first packet is CONNACK
                return
            rc = buf[p.body + 1]
            if rc:
                self._fail(L_REFUSED, rc)
                return
            self.session = bool(buf[p.body] & 1)
            self.state = UP
            self.t0 = now
            self.got_connack(now)
        elif k == _CONNACK:
            self._fail(L_PROTOCOL, _UNEXPECTED)
        elif k == _PUBLISH:
            if p.qos and self._nacks < _ACKS:  # _pull holds it back while all are owed
                self._acks[self._nacks] = p.pid
                self._nacks += 1
            self.got_publish(p, now)
        elif k == _PUBACK:
            self.got_puback(p.pid, now)
        elif k == _SUBACK:
            if p.pid != self.sub_pid or self.subscribed:
                self._fail(L_PROTOCOL, _UNEXPECTED)
            elif buf[p.body + 2] & 0x80:
                self._fail(L_SUBSCRIBE, buf[p.body + 2])
            else:
                self.subscribed = True
                self.got_suback(now)
        # PINGRESP: last_rx is all it is for


def _close(sock):
    try:
        sock.close()
    except Exception:  # noqa: BLE001, S110 - closing a broken connection
        pass


async def open_socket(host, port, ssl, server_hostname):
    """The board's connection: TCP through asyncio.open_connection (the
    virtual board's simulated network routes it), TCP_NODELAY, then TLS
    over it when ssl (an SSLContext) is given; the non-blocking socket."""
    r, w = await asyncio.open_connection(host, port)
    s = w.s  # type: ignore[attr-defined]  # MicroPython's Stream
    try:
        s.setsockopt(6, 1, 1)  # IPPROTO_TCP, TCP_NODELAY (the same numbers in lwIP)
    except (OSError, AttributeError):
        pass
    if ssl is not None:
        s = ssl.wrap_socket(s, server_hostname=server_hostname, do_handshake_on_connect=False)
        s.setblocking(False)
    return s


def tls_context(ca, cert, key):
    """A TLS client context for the board (MicroPython's ssl): the site's CA
    and the table's certificate and key, all DER bytes (the unix port's
    mbedtls reads no PEM); the broker's certificate is verified, its name
    against server_hostname."""
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.verify_mode = ssl.CERT_REQUIRED  # type: ignore[attr-defined]
    ctx.load_verify_locations(cadata=ca)
    ctx.load_cert_chain(cert, key)
    return ctx
