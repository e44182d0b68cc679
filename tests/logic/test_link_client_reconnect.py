# What one connection of the floor link's MQTT client (device/link/client.py)
# leaves to the next: none of the broker's bytes. A packet the broker had
# only begun when the connection ended (the broker closed inside it, or went
# silent, or the owner dropped the connection) is dropped with it: the next
# broker's CONNACK is read as the first byte of the new connection, not
# glued after the old bytes (which would leave the table waiting, never up,
# until the connect window times out). The clock is the test's. Portable.
import linkkit
from link import client as C

KA_S = 10  # keepalive, seconds
KA_MS = KA_S * 1000
CONNACK = b"\x20\x02\x00\x00"


def _first(make_sock):
    """A Client UP on its first socket: (client, sockets, clock)."""
    clock = linkkit.Clock()
    c, socks = linkkit.client_on(make_sock, KA_S, clock)
    linkkit.open_client(c, clock)
    socks[0].incoming += CONNACK
    assert c.poll(clock.now) == C.UP
    return c, socks, clock


def _next_connection_takes_its_connack(c, socks, clock):
    c.close()
    assert c.state == C.DOWN
    linkkit.open_client(c, clock)
    sock = socks[-1]
    sock.incoming += CONNACK
    assert c.poll(clock.now) == C.UP, (c.state, c.fault, c.detail)
    # and the packets after it are read as they come: a QoS 1 publish, acknowledged
    got = []
    c.got_publish = lambda p, now: got.append(p.pid)
    sock.incoming += b"\x32\x06\x00\x01a\x00\x07" + b"1"  # topic "a", packet id 7
    assert c.poll(clock.now) == C.UP, (c.state, c.fault, c.detail)
    assert got == [7]
    c.poll(clock.now)
    assert b"\x40\x02\x00\x07" in sock.written, sock.written


def test_a_packet_cut_by_the_broker_s_close_is_not_read_into_the_next_connection():
    c, socks, clock = _first(linkkit.Closing)
    socks[0].incoming += b"\x32\x10\x00"  # a PUBLISH of 18 bytes: its first 3
    assert c.poll(clock.now) == C.UP  # the rest is awaited
    socks[0].eof = True
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, 5)  # truncated
    _next_connection_takes_its_connack(c, socks, clock)


def test_a_packet_begun_by_a_broker_that_went_silent_is_not_read_into_the_next_one():
    c, socks, clock = _first(linkkit.Sock)
    socks[0].incoming += b"\x90\x03\x00"  # a SUBACK: its first 3 bytes, then nothing
    assert c.poll(clock.now) == C.UP
    clock.now += KA_MS * 3 // 2 + 1
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_DEAD
    _next_connection_takes_its_connack(c, socks, clock)


def test_a_packet_begun_when_the_owner_drops_the_connection_goes_with_it():
    # The owner closes a working connection (its Wi-Fi went, say) while a
    # packet is on its way in.
    c, socks, clock = _first(linkkit.Sock)
    socks[0].incoming += b"\x30\x08\x00\x01"  # a QoS 0 PUBLISH of 10 bytes: its first 4
    assert c.poll(clock.now) == C.UP
    _next_connection_takes_its_connack(c, socks, clock)
