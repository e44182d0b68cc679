# Edges of the floor link's MQTT client (device/link/client.py) and of the
# table's Wi-Fi (device/link/wifi.py): a connection that comes after its
# opening timed out, a failed connection read no further, the socket's
# writes counted, and the station driving the WLAN it is given. Portable.
import asyncio

import linkkit
from link import client as C
from link.wifi import Station

KA_S = 10  # keepalive, seconds


def _up():
    """A Client opened on a Sock through its opener and UP (CONNACK taken)."""
    c, sock, clock = linkkit.opened_client(KA_S)
    sock.incoming += b"\x20\x02\x00\x00"
    assert c.poll(clock.now) == C.UP
    return c, sock, clock


def _publish(topic, payload, pid=None):
    body = len(topic).to_bytes(2, "big") + topic
    if pid is not None:
        body += pid.to_bytes(2, "big")
    body += payload
    return bytes([0x32 if pid is not None else 0x30, len(body)]) + body


def test_a_connection_that_arrives_after_the_opening_timed_out_is_closed_unused():
    clock = linkkit.Clock()
    sock = linkkit.Sock()

    async def go():
        gate = asyncio.Event()

        async def opener(host, port, ssl, server_hostname):
            await gate.wait()  # a slow TLS handshake, say
            return sock

        c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=KA_S, ticks_ms=clock,
                     opener=opener, connect_ms=1000)
        c.open(clock.now)
        await asyncio.sleep(0)
        clock.now += 1001
        assert c.poll(clock.now) == C.FAILED
        gate.set()  # the connection comes before the owner closes the client
        for _ in range(5):
            await asyncio.sleep(0)
        return c

    c = asyncio.run(go())
    assert (c.state, c.fault, c.detail) == (C.FAILED, C.L_TIMEOUT, C.OPENING)
    assert sock.closed == 1 and sock.written == []  # no CONNECT on it
    assert c.poll(clock.now) == C.FAILED
    c.close()
    assert sock.closed == 1 and c.state == C.DOWN


def test_nothing_more_is_read_from_a_failed_connection():
    c, sock, clock = _up()
    got = []
    c.got_publish = lambda p, now: got.append(p.pid)
    clock.now += KA_S * 1000 * 3 // 2 + 1
    assert c.poll(clock.now) == C.FAILED and c.fault == C.L_DEAD
    pub = _publish(b"sicbo/S1/T01/ack", b"7", 0x1234)
    sock.incoming += pub  # the broker's, before the owner closes the client
    assert c.poll(clock.now) == C.FAILED
    assert got == [] and sock.incoming == pub and c.fault == C.L_DEAD


def test_each_packet_is_one_write_and_a_partial_one_takes_more():
    c, sock, clock = _up()
    n, w = c.packets, c.writes
    c.send(b"\xc0\x00", 0, 2, clock.now)
    assert (c.packets - n, c.writes - w) == (1, 1)
    sock.room = 3  # a full send buffer
    k = len(sock.written)
    pkt = _publish(b"sicbo/S1/T01/journal", b"0123456789")  # 34 bytes: 12 writes of at most 3
    assert c.send(pkt, 0, len(pkt), clock.now) and not c.ready()
    while not c.ready():
        c.poll(clock.now)
    assert b"".join(sock.written[k:]) == pkt and len(sock.written) - k == 12
    assert (c.packets - n, c.writes - w) == (2, 13)


class FakeWlan:
    """A station interface that records what it is asked."""

    def __init__(self):
        self.asked = []
        self.on = False

    def isconnected(self):
        return False

    def status(self):
        return 0

    def active(self, on=None):
        if on is None:
            return self.on
        self.on = on
        self.asked.append(("active", on))
        return None

    def disconnect(self):
        self.asked.append(("disconnect",))

    def connect(self, ssid, key):
        self.asked.append(("connect", ssid, key))


def test_the_station_drives_the_wlan_it_is_given():
    w = FakeWlan()
    st = Station("floor", "key", wlan=w)
    assert not st.up(0)
    assert w.asked == [("active", True), ("connect", "floor", "key")]
    assert not st.connected() and st.attempts == 1
