# The floor link's MQTT client (device/link/client.py) over a socket of the
# test's own: CONNECT written whole first, CONNACK refusals, SUBACK taken or
# refused, the dead-peer limit, the keepalive's pings. The clock is the
# test's. Portable.
import asyncio

import linkkit
from link import client as C

from sicbo import texts

KA_S = 10  # keepalive, seconds


Sock = linkkit.Sock
Clock = linkkit.Clock


def _opened(clock=None):
    """A Client opened on a Sock through its opener (as the board opens a
    connection), in CONNECTING with its CONNECT written."""
    return linkkit.opened_client(KA_S, clock)


def _up(clock=None):
    c, sock, clock = _opened(clock)
    sock.incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    return c, sock, clock


def test_connect_is_the_first_packet_written_whole():
    c, sock, _clock = _opened()
    assert len(sock.written) == 1
    pkt = sock.written[0]
    assert pkt[0] == 0x10 and pkt[1] + 2 == len(pkt) and b"MQTT" in pkt and b"T01" in pkt


def test_while_the_connack_is_awaited_a_packet_can_follow_the_whole_connect():
    # MQTT 3.1.1 (3.1.4) lets a client send after its CONNECT without waiting
    # for the CONNACK; only a packet still part-written holds the next one.
    c, sock, clock = _opened()
    assert c.state == C.CONNECTING and c.ready()
    sock.room = 1
    assert c.send(b"\xc0\x00", 0, 2, clock.now) and not c.ready()
    c.poll(clock.now)
    assert c.state == C.CONNECTING and c.ready() and sock.written[-1] == b"\x00"


def test_each_link_fault_code_is_its_own_and_journals_its_own_name():
    # The code is what J_LINK carries to the floor and the journal's text.
    named = ((C.L_NETWORK, "no network"), (C.L_RESOLVE, "broker name not found"),
             (C.L_SOCKET, "socket error"), (C.L_TLS, "TLS refused"),
             (C.L_REFUSED, "broker refused the connection"),
             (C.L_TIMEOUT, "no answer in time"), (C.L_DEAD, "broker went silent"),
             (C.L_CLOSED, "broker closed the connection"),
             (C.L_PROTOCOL, "protocol error"), (C.L_SUBSCRIBE, "subscription refused"),
             (C.L_MEMORY, "out of memory"), (C.L_ERROR, "error"))
    assert sorted(code for code, _ in named) == list(range(1, len(named) + 1))
    for code, name in named:
        assert texts.LINK_FAULTS[code] == name, (code, name)
    assert len(texts.LINK_FAULTS) == len(named) + 1


def test_a_refused_connack_is_a_fault_with_the_broker_s_code():
    c, sock, clock = _opened()
    sock.incoming += b"\x20\x02\x00\x05"  # not authorized
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_REFUSED, 5)


def test_a_suback_for_the_subscription_is_taken():
    c, sock, clock = _up()
    c.subscribe(b"sicbo/S1/T01/ack", clock.now)
    pid = c.sub_pid
    assert sock.written[-1][0] == 0x82
    sock.incoming += b"\x90\x03" + pid.to_bytes(2, "big") + b"\x01"
    assert c.poll(clock.now) == C.UP and c.subscribed


def test_a_refused_or_foreign_suback_is_a_fault():
    c, sock, clock = _up()
    c.subscribe(b"sicbo/S1/T01/ack", clock.now)
    sock.incoming += b"\x90\x03" + c.sub_pid.to_bytes(2, "big") + b"\x80"
    assert c.poll(clock.now) == C.FAILED and (c.fault, c.detail) == (C.L_SUBSCRIBE, 0x80)
    c, sock, clock = _up()
    c.subscribe(b"sicbo/S1/T01/ack", clock.now)
    sock.incoming += b"\x90\x03" + (c.sub_pid + 1).to_bytes(2, "big") + b"\x01"
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_PROTOCOL
    assert not c.subscribed


def test_pings_after_half_a_quiet_keepalive_and_at_most_one_per_half():
    c, sock, clock = _up()
    half = KA_S * 1000 // 2
    n = len(sock.written)
    clock.now += half - 1
    c.poll(clock.now)
    assert len(sock.written) == n  # not yet
    clock.now += 1
    c.poll(clock.now)
    assert sock.written[n:] == [b"\xc0\x00"]  # PINGREQ
    sock.incoming += b"\xd0\x00"  # PINGRESP
    clock.now += 10
    c.poll(clock.now)
    assert sock.written[n:] == [b"\xc0\x00"]  # one per half keepalive
    clock.now += half
    c.poll(clock.now)
    assert sock.written[n:] == [b"\xc0\x00", b"\xc0\x00"]


def test_a_peer_silent_for_one_and_a_half_keepalives_is_dead():
    c, sock, clock = _up()
    clock.now += KA_S * 1000 * 3 // 2
    assert c.poll(clock.now) == C.UP  # the limit itself: still up
    clock.now += 1
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_DEAD


def test_faults_are_classified_from_the_exception():
    assert C.fault_of(MemoryError(), False) == (C.L_MEMORY, 0)
    assert C.fault_of(OSError(-0x1000), True) == (C.L_TLS, 0x1000)  # mbedtls' range begins
    assert C.fault_of(OSError(-0xFFF), True) == (C.L_RESOLVE, 0xFFF)
    assert C.fault_of(OSError(-0x1000), False) == (C.L_RESOLVE, 0x1000)  # no TLS: not TLS's
    assert C.fault_of(ValueError("bad cert"), True) == (C.L_TLS, 0)


def test_a_new_client_has_no_fault_to_report():
    c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=KA_S, ticks_ms=Clock())
    assert (c.state, c.fault, c.detail, c.pid, c.packets) == (C.DOWN, 0, 0, 0, 0)


def test_closing_closes_the_socket_once_and_forgets_the_connection():
    c, sock, clock = _up()
    c.close()
    assert sock.closed == 1 and c.state == C.DOWN and not c.subscribed
    assert c.poll(clock.now) == C.DOWN  # nothing read from the closed socket
    c.close()
    assert sock.closed == 1


def test_every_other_fault_is_classified_too():
    assert C.fault_of(OSError(), False) == (C.L_SOCKET, 0)  # no errno at all
    assert C.fault_of(OSError("reset"), False) == (C.L_SOCKET, 0)
    assert C.fault_of(OSError(111), False) == (C.L_SOCKET, 111)  # ECONNREFUSED
    # CPython's socket errors: (errno, text)
    assert C.fault_of(OSError(111, "Connection refused"), False) == (C.L_SOCKET, 111)
    assert C.fault_of(OSError(-202), False) == (C.L_RESOLVE, 202)  # lwIP's getaddrinfo
    assert C.fault_of(OSError(0), True) == (C.L_TLS, 0)  # CPython's ssl errors
    assert C.fault_of(OSError(104), True) == (C.L_SOCKET, 104)  # a reset under TLS
    assert C.fault_of(ValueError("x"), False) == (C.L_ERROR, 0)  # no TLS: not TLS's
    assert C.fault_of(EOFError(), False) == (C.L_CLOSED, 0)
    assert C.fault_of(KeyError("x"), True) == (C.L_ERROR, 0)


def _publish(topic, payload, pid=None):
    body = len(topic).to_bytes(2, "big") + topic
    if pid is not None:
        body += pid.to_bytes(2, "big")
    body += payload
    return bytes([0x32 if pid is not None else 0x30, len(body)]) + body


def test_only_a_qos_1_publish_is_acknowledged():
    c, sock, clock = _up()
    got = []
    c.got_publish = lambda p, now: got.append(
        (p.qos, bytes(p.buf[p.payload:p.payload + p.payload_len])))
    topic = b"sicbo/S1/T01/ack"
    sock.incoming += _publish(topic, b"7") + _publish(topic, b"8", 0x1234)
    n = len(sock.written)
    c.poll(clock.now)
    c.poll(clock.now)
    assert got == [(0, b"7"), (1, b"8")]
    assert sock.written[n:] == [b"\x40\x02\x12\x34"]  # one PUBACK, for the QoS 1 one


def test_closing_while_opening_cancels_the_opener():
    clock = Clock()
    seen = []

    async def opener(host, port, ssl, server_hostname):
        try:
            await asyncio.sleep(3600)  # a connection that does not come
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=KA_S, ticks_ms=clock, opener=opener)

    async def go():
        c.open(clock.now)
        for _ in range(3):
            await asyncio.sleep(0)
        assert c.state == C.OPENING
        c.close()
        for _ in range(3):
            await asyncio.sleep(0)
        # here, not at asyncio.run's end (CPython's cancels what is left)
        assert seen == ["cancelled"] and c.state == C.DOWN

    asyncio.run(go())


def test_the_connack_is_waited_for_connect_ms_from_the_connect_not_the_open():
    # A slow opening (a TLS handshake, say) does not eat into the broker's
    # time to answer the CONNECT.
    clock = Clock()
    sock = Sock()

    async def opener(host, port, ssl, server_hostname):
        clock.now += 8000  # the opening took 8 s
        return sock

    c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=60, ticks_ms=clock, opener=opener,
                 connect_ms=10000)
    linkkit.open_client(c, clock)
    assert c.state == C.CONNECTING
    clock.now += 9000  # 17 s after the open, 9 s after the CONNECT
    assert c.poll(clock.now) == C.CONNECTING
    clock.now += 1001
    assert c.poll(clock.now) == C.FAILED and (c.fault, c.detail) == (C.L_TIMEOUT, C.CONNECTING)
