# The floor link's MQTT client (device/link/client.py, mqtt.py) at three
# edges: a read that finds the broker gone ends the pass (the socket is not
# read again), a PUBLISH too short to hold its topic's length is a protocol
# fault even when it fills the parser's buffer to its last byte, and the
# board's opener asks for TCP_NODELAY on the TCP socket before any TLS.
# Portable.
import asyncio

import linkkit
from link import client as C
from link import mqtt

KA_S = 10  # keepalive, seconds


def _opened(sock, rx_size=160):
    """A Client opened on sock, in CONNECTING with its CONNECT written:
    (client, clock)."""
    clock = linkkit.Clock()
    c, _ = linkkit.client_on(lambda: sock, KA_S, clock, rx_size=rx_size)
    linkkit.open_client(c, clock)
    return c, clock


def _up(sock, rx_size=160):
    c, clock = _opened(sock, rx_size)
    sock.incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    return c, clock


# ---- the broker gone ----------------------------------------------------------


def test_a_close_found_between_packets_is_one_read_and_one_fault():
    sock = linkkit.Closing()
    c, clock = _up(sock)
    sock.incoming += b"\xd0\x00"  # a whole PINGRESP, then the close
    sock.eof = True
    before = sock.reads
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_CLOSED, 0)
    # The PINGRESP's read and the one that found the close: no read after it.
    assert sock.reads - before == 2 and sock.ended == 1
    assert c.poll(clock.now) == C.FAILED and sock.reads - before == 2
    c.close()
    assert sock.closed == 1 and c.state == C.DOWN and (c.fault, c.detail) == (C.L_CLOSED, 0)


def test_a_close_found_inside_a_packet_is_one_read_and_one_fault():
    sock = linkkit.Closing()
    c, clock = _up(sock)
    got = []
    c.got_publish = lambda p, now: got.append(p.pid)
    sock.incoming += b"\x32\x08\x00\x01t"  # a PUBLISH cut after its topic
    sock.eof = True
    before = sock.reads
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, 5)  # truncated
    assert sock.reads - before == 2 and got == []


def test_a_close_before_the_connack_is_one_read():
    sock = linkkit.Closing()
    c, clock = _opened(sock)
    sock.eof = True
    before = sock.reads
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_CLOSED, 0)
    assert sock.reads - before == 1


# ---- a PUBLISH without room for its topic's length -------------------------------


def _first(data, size):
    p = mqtt.Parser(size)
    p.buf[0:len(data)] = data
    p.have = len(data)
    return p.next()


def test_a_publish_too_short_for_its_topic_length_is_malformed_in_a_buffer_it_fills():
    # The topic's length would be read from beyond the packet: beyond the
    # buffer too when the packet ends at its last byte.
    assert _first(b"\x30\x00", 2) == mqtt.MALFORMED
    assert _first(b"\x30\x01\x00", 3) == mqtt.MALFORMED
    assert _first(b"\x32\x01\x00", 3) == mqtt.MALFORMED  # QoS 1: no id either
    assert _first(b"\x30\x80\x00", 3) == mqtt.MALFORMED  # a length of 0 in two bytes


def test_a_broker_s_publish_too_short_for_its_topic_length_is_a_protocol_fault():
    # A parser of 4 bytes takes the CONNACK; the PUBLISH (its length of 1
    # written in two bytes) ends at the buffer's last byte.
    sock = linkkit.Sock()
    c, clock = _up(sock, rx_size=4)
    got = []
    c.got_publish = lambda p, now: got.append(p.pid)
    sock.incoming += b"\x30\x81\x00\x00"
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, -mqtt.MALFORMED)
    assert got == []


# ---- the board's opener: TCP_NODELAY ----------------------------------------------


class Recording:
    """A TCP socket as asyncio.open_connection's writer holds it (`.s`):
    what is asked of it, in order, in `asked`."""

    def __init__(self, asked):
        self.asked = asked

    def setsockopt(self, level, option, value):
        self.asked.append(("setsockopt", level, option, value))

    def setblocking(self, flag):
        self.asked.append(("setblocking", flag))


class Writer:
    def __init__(self, s):
        self.s = s


class Network:
    """Stands for the asyncio module in link.client: open_connection gives
    a Writer on a Recording socket."""

    def __init__(self):
        self.asked = []

    async def open_connection(self, host, port):
        self.asked.append(("open_connection", host, port))
        return None, Writer(Recording(self.asked))


class Tls:
    """An SSLContext that wraps a socket (recording the call)."""

    def __init__(self, asked):
        self.asked = asked

    def wrap_socket(self, s, server_hostname=None, do_handshake_on_connect=True):
        self.asked.append(("wrap_socket", server_hostname, do_handshake_on_connect))
        return Recording(self.asked)


def _open_socket(net, ssl=None):
    saved = C.asyncio
    C.asyncio = net
    try:
        return asyncio.run(C.open_socket("10.0.0.5", 8883, ssl, "floor.example"))
    finally:
        C.asyncio = saved


# Every packet goes out in one write; without TCP_NODELAY the kernel holds a
# publish behind the last small packet until the broker's delayed ACK. 6 is
# IPPROTO_TCP and 1 TCP_NODELAY, in lwIP as in Linux.
NODELAY = ("setsockopt", 6, 1, 1)


def test_the_board_s_tcp_socket_is_asked_for_tcp_nodelay():
    net = Network()
    s = _open_socket(net)
    assert isinstance(s, Recording)
    assert net.asked == [("open_connection", "10.0.0.5", 8883), NODELAY]


def test_tcp_nodelay_is_set_on_the_tcp_socket_before_tls_wraps_it():
    net = Network()
    s = _open_socket(net, Tls(net.asked))
    assert isinstance(s, Recording)
    assert net.asked == [("open_connection", "10.0.0.5", 8883), NODELAY,
                         ("wrap_socket", "floor.example", False), ("setblocking", False)]
