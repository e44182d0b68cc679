# The floor link's MQTT client (device/link/client.py) at three edges: a
# Client made without connect_ms waits ten seconds for its broker, no more;
# on a connection after the first, the subscription the client still owes
# is timed from the CONNACK, not from the CONNECT; and a socket whose write
# takes nothing yet (None, as a TLS socket answers during its handshake)
# leaves the whole packet for the next polls. Portable.
import linkkit
from link import client as C

KA_S = 30  # keepalive, seconds: dead only after 45 s without a byte
CONNACK = b"\x20\x02\x00\x00"


# ---- the default connect window ------------------------------------------------


def test_without_connect_ms_the_connack_is_waited_for_ten_seconds_and_no_longer():
    c, sock, clock = linkkit.opened_client(KA_S)  # the Client's own connect_ms
    start = clock.now
    clock.now = start + 10000
    assert c.poll(clock.now) == C.CONNECTING  # at the limit: still waiting
    clock.now = start + 10001
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_TIMEOUT, C.CONNECTING)


# ---- the subscription owed on a later connection ----------------------------------


def test_on_a_new_connection_the_subscription_owed_is_timed_from_the_connack():
    clock = linkkit.Clock()
    c, socks = linkkit.client_on(linkkit.Sock, KA_S, clock, connect_ms=4000)
    linkkit.open_client(c, clock)
    socks[0].incoming += CONNACK
    assert c.poll(clock.now) == C.UP
    assert c.subscribe(b"t/T01/ack", clock.now)
    socks[0].incoming += b"\x90\x03\x00" + bytes([c.sub_pid]) + b"\x01"  # SUBACK, QoS 1
    assert c.poll(clock.now) == C.UP and c.subscribed
    c.close()

    # The broker answers the second CONNECT late in the window: the owner
    # then has a whole connect_ms from the CONNACK to subscribe again.
    linkkit.open_client(c, clock)
    clock.now += 3000
    socks[1].incoming += CONNACK
    assert c.poll(clock.now) == C.UP and not c.subscribed
    up = clock.now
    clock.now = up + 2000  # 5 s after the CONNECT, 2 s after the CONNACK
    assert c.poll(clock.now) == C.UP, (c.fault, c.detail)
    clock.now = up + 4000
    assert c.poll(clock.now) == C.UP, (c.fault, c.detail)
    clock.now = up + 4001  # never subscribed again: the connection is given up
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_TIMEOUT, C.UP)


# ---- a write that takes nothing yet ------------------------------------------------


class _Stalled(linkkit.Sock):
    """A Sock whose write takes nothing and answers None while `stalled`
    (MicroPython's non-blocking socket when it would block)."""

    def __init__(self):
        linkkit.Sock.__init__(self)
        self.stalled = True
        self.refused = 0  # writes answered None

    def write(self, buf, off, n):
        if self.stalled:
            self.refused += 1
            return None
        return linkkit.Sock.write(self, buf, off, n)


def test_a_connect_the_socket_takes_nothing_of_goes_out_whole_at_a_later_poll():
    clock = linkkit.Clock()
    c, socks = linkkit.client_on(_Stalled, KA_S, clock)
    linkkit.open_client(c, clock)
    sock = socks[0]
    assert sock.refused == 1 and sock.written == []
    assert not c.ready() and c.packets == 1  # the CONNECT is pending, whole
    hello = c._hello
    assert c.poll(clock.now) == C.CONNECTING and sock.written == []  # still nothing
    sock.stalled = False
    assert c.poll(clock.now) == C.CONNECTING
    assert sock.written == [hello] and c.ready()
    assert c.packets == 1 and c.writes == 3  # one packet, three calls to write


def test_a_packet_the_socket_takes_nothing_of_is_sent_and_pending_not_a_fault():
    clock = linkkit.Clock()
    c, socks = linkkit.client_on(_Stalled, KA_S, clock)
    linkkit.open_client(c, clock)
    sock = socks[0]
    sock.stalled = False
    sock.incoming += CONNACK
    assert c.poll(clock.now) == C.UP and c.ready()
    sock.written = []
    sock.stalled = True
    pkt = bytearray(b"\xc0\x00")  # a PINGREQ, in a buffer the test owns
    assert c.send(pkt, 0, 2, clock.now)  # taken: on its way, not refused
    assert c.state == C.UP and not c.ready() and c.fault == 0
    assert not c.send(b"\xc0\x00", 0, 2, clock.now)  # nothing more while it waits
    sock.stalled = False
    assert c.poll(clock.now) == C.UP
    assert sock.written == [b"\xc0\x00"] and c.ready()
