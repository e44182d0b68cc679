# The floor link's MQTT client (device/link/client.py) through a session:
# the broker's first packet must be its CONNACK (any other is a protocol
# fault, never a connection taken as up), and its only one (a second is a
# protocol fault too); a broker that keeps talking is not counted silent,
# however long the session; a packet the socket refuses is not reported
# sent. The clock is the test's. Portable.
import linkkit
from link import client as C

KA_S = 10  # keepalive, seconds
KA_MS = KA_S * 1000


def _up():
    c, sock, clock = linkkit.opened_client(KA_S)
    sock.incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    return c, sock, clock


def test_a_first_packet_other_than_the_connack_is_a_protocol_fault():
    # A PUBACK (its two bytes read as a CONNACK would be: "accepted") before
    # any CONNACK: the broker is not speaking MQTT to us.
    c, sock, clock = linkkit.opened_client(KA_S)
    acked = []
    connected = []
    c.got_puback = lambda pid, now: acked.append(pid)
    c.got_connack = lambda now: connected.append(now)
    sock.incoming += b"\x40\x02\x00\x00"
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, 6)  # unexpected
    assert connected == [] and acked == []


def test_a_suback_before_the_connack_is_a_protocol_fault_too():
    c, sock, clock = linkkit.opened_client(KA_S)
    sock.incoming += b"\x90\x03\x00\x01\x01"
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, 6)
    assert not c.subscribed


def test_a_second_connack_on_a_connection_is_a_protocol_fault():
    # The broker sends one CONNACK per CONNECT: another while the
    # connection is up is not MQTT, and is never taken as a new connection
    # (its session flag, its "accepted").
    c, sock, clock = _up()
    connected = []
    c.got_connack = lambda now: connected.append(now)
    sock.incoming += b"\x20\x02\x01\x00"  # session present, accepted
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, 6)  # unexpected
    assert connected == [] and not c.session


def test_a_broker_that_answers_is_never_counted_silent():
    # Each PINGRESP (or any packet) restarts the dead-peer limit of 1.5
    # keepalives: a session of many keepalives stays up.
    c, sock, clock = _up()
    for _ in range(6):
        clock.now += KA_MS
        sock.incoming += b"\xd0\x00"  # PINGRESP
        assert c.poll(clock.now) == C.UP, (c.fault, c.detail)
    # then silence: dead 1.5 keepalives after the last packet, not before
    clock.now += KA_MS * 3 // 2
    assert c.poll(clock.now) == C.UP
    clock.now += 1
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_DEAD


def test_a_publish_from_the_broker_counts_as_hearing_from_it():
    c, sock, clock = _up()
    topic = b"sicbo/S1/T01/ack"
    body = len(topic).to_bytes(2, "big") + topic + b"7"
    clock.now += KA_MS
    sock.incoming += bytes([0x30, len(body)]) + body
    assert c.poll(clock.now) == C.UP
    clock.now += KA_MS  # 2 keepalives after the CONNACK, 1 after the publish
    assert c.poll(clock.now) == C.UP, (c.fault, c.detail)


class _Reset(linkkit.Sock):
    """A socket whose writes fail: the connection was reset."""

    def __init__(self):
        linkkit.Sock.__init__(self)
        self.broken = False

    def write(self, buf, off, n):
        if self.broken:
            raise OSError(104)  # ECONNRESET
        return linkkit.Sock.write(self, buf, off, n)


def test_a_packet_the_socket_refuses_is_not_reported_sent():
    clock = linkkit.Clock()
    sock = _Reset()
    c, _ = linkkit.client_on(lambda: sock, KA_S, clock)
    linkkit.open_client(c, clock)
    sock.incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    n = c.packets
    sock.broken = True
    assert c.send(b"\xc0\x00", 0, 2, clock.now) is False
    assert (c.state, c.fault, c.detail) == (C.FAILED, C.L_SOCKET, 104)
    assert c.packets == n and not c.ready()
