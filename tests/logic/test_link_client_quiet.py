# The floor link's MQTT client (device/link/client.py) on a quiet or closing
# line: a ping is due when nothing came from the broker for half a keepalive,
# however recently we wrote; a new connection times its dead-peer limit from
# its own opening, not from the last connection's traffic; a broker closing
# between packets or inside one is told apart; and once a read finds a
# fault, the rest of a part-written packet is not written. The clock is the
# test's. Portable.
import linkkit
from link import client as C

KA_S = 10  # keepalive, seconds
KA_MS = KA_S * 1000
T0 = 700000  # a clock far from 0


def _client(clock, connect_ms=10000):
    """A Client that opens a new Closing socket at each opening: (client,
    the sockets, in order)."""
    return linkkit.client_on(linkkit.Closing, KA_S, clock, connect_ms=connect_ms)


def _up(clock=None):
    clock = clock or linkkit.Clock()
    c, socks = _client(clock)
    linkkit.open_client(c, clock)
    sock = socks[-1]
    sock.incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    return c, sock, clock


def _publish0(payload):
    """A QoS 0 PUBLISH from the table (topic "t")."""
    body = b"\x00\x01t" + payload
    return bytes([0x30, len(body)]) + body


# ---- pings ------------------------------------------------------------------


def test_a_ping_is_due_when_the_broker_is_quiet_although_we_wrote_just_now():
    # MQTT's keepalive is about hearing from the broker too: a table that
    # publishes all the time must still ping a broker that says nothing.
    c, sock, clock = _up()
    half = KA_MS // 2
    clock.now += half - 1
    pkt = _publish0(b"x")
    assert c.send(pkt, 0, len(pkt), clock.now)
    n = len(sock.written)
    clock.now += 1  # half a keepalive since the CONNACK, 1 ms since our write
    assert c.poll(clock.now) == C.UP
    assert sock.written[n:] == [b"\xc0\x00"]


def test_a_broker_that_talks_to_a_silent_table_is_pinged_too():
    # The other way: the broker's publishes keep coming, the table writes
    # nothing; a ping after half a keepalive of our silence.
    c, sock, clock = _up()
    half = KA_MS // 2
    n = len(sock.written)
    clock.now += half - 1
    sock.incoming += b"\xd0\x00"
    assert c.poll(clock.now) == C.UP and sock.written[n:] == []
    clock.now += 1
    assert c.poll(clock.now) == C.UP
    assert sock.written[n:] == [b"\xc0\x00"]


# ---- the dead-peer limit of a new connection --------------------------------


def test_a_first_connection_far_from_tick_0_is_not_dead_while_the_connack_is_awaited():
    clock = linkkit.Clock()
    clock.now = T0
    c, socks = _client(clock, connect_ms=60000)
    linkkit.open_client(c, clock)
    assert c.poll(clock.now) == C.CONNECTING, (c.fault, c.detail)
    clock.now += KA_MS * 3 // 2  # the limit, from the opening
    assert c.poll(clock.now) == C.CONNECTING, (c.fault, c.detail)
    clock.now += 1
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_DEAD


def test_a_new_connection_times_its_dead_peer_limit_from_its_opening():
    # The last connection died of silence a minute ago; the next one has
    # heard nothing yet either, but it has just begun.
    clock = linkkit.Clock()
    clock.now = T0
    c, socks = _client(clock, connect_ms=60000)
    linkkit.open_client(c, clock)
    socks[0].incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    clock.now += KA_MS * 3 // 2 + 1
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_DEAD
    c.close()
    clock.now += 60000
    t1 = clock.now
    linkkit.open_client(c, clock)
    assert len(socks) == 2 and socks[1].written[0][0] == 0x10  # its CONNECT
    assert c.poll(clock.now) == C.CONNECTING, (c.fault, c.detail)
    clock.now = t1 + KA_MS * 3 // 2
    assert c.poll(clock.now) == C.CONNECTING, (c.fault, c.detail)
    socks[1].incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP, (c.fault, c.detail)


# ---- the broker closing -----------------------------------------------------


def test_a_broker_closing_between_packets_is_a_closed_connection():
    c, sock, clock = _up()
    sock.incoming += b"\xd0\x00"  # a whole PINGRESP, then the close
    sock.eof = True
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_CLOSED, 0)


def test_a_broker_closing_inside_a_packet_is_a_truncated_packet():
    c, sock, clock = _up()
    got = []
    c.got_publish = lambda p, now: got.append(p.pid)
    sock.incoming += b"\x30\x05\x00\x01"  # a PUBLISH cut after its topic's length
    sock.eof = True
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, 5)  # truncated
    assert got == []


def test_a_broker_closing_before_the_connack_is_a_closed_connection():
    clock = linkkit.Clock()
    c, socks = _client(clock)
    linkkit.open_client(c, clock)
    socks[0].eof = True
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_CLOSED, 0)


# ---- a part-written packet when a read fails --------------------------------


def _part_written():
    """UP, with a publish part-written: the socket took 3 of its bytes."""
    c, sock, clock = _up()
    sock.room = 3
    pkt = _publish0(b"0123456789")
    assert c.send(pkt, 0, len(pkt), clock.now) and not c.ready()
    assert sock.written[-1] == pkt[:3]
    return c, sock, clock


def test_a_close_found_by_the_read_stops_the_part_written_packet():
    c, sock, clock = _part_written()
    n, w = len(sock.written), c.writes
    sock.eof = True
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_CLOSED
    assert len(sock.written) == n and c.writes == w  # nothing more written
    assert c.poll(clock.now) == C.FAILED and len(sock.written) == n


def test_a_protocol_fault_found_by_the_read_stops_the_part_written_packet():
    c, sock, clock = _part_written()
    n, w = len(sock.written), c.writes
    sock.incoming += b"\x60\x00"  # PUBREL: never an answer to this client
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_PROTOCOL
    assert len(sock.written) == n and c.writes == w


def test_without_a_fault_the_part_written_packet_goes_on():
    # The same packet, the line staying up: the next pass writes more of it.
    c, sock, clock = _part_written()
    n = len(sock.written)
    sock.incoming += b"\xd0\x00"
    assert c.poll(clock.now) == C.UP
    assert len(sock.written) == n + 1
