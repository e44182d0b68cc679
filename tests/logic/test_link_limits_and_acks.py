# The floor link at more of its edges. The MQTT client (device/link/client.py):
# a packet from the broker of 160 bytes is taken and a larger one refused, by
# default; a new connection owes the broker no PUBACK, whatever the last one
# owed; a timeout says what it waited for. The protocol's decimal numbers
# (device/link/mqtt.py): only the digits 0 to 9 are digits. The outbox
# (device/link/outbox.py): a board with Wi-Fi gets a link that brings its
# station up; journal records go out neither
# retained nor DUP the first time; an outage is not counted as time the floor
# took to acknowledge. The journal as the outbox (device/link/source.py): a
# read at the journal's end comes back empty at once. Portable.
import linkkit
from folderkit import rmdir, tmpdir
from link import client as C
from link import mqtt
from link.outbox import Link, made, read_cursor
from link.source import OutboxStore
from link.wifi import Station

from sicbo import records as R

T0 = 300000  # a clock that is not near 0
CONNACK = b"\x20\x02\x00\x00"


# ---- the client -------------------------------------------------------------------


def _publish_of(total):
    """A QoS 0 PUBLISH (topic "a") of `total` bytes, its header included."""
    rl = total - 3  # the type byte and a remaining length of two bytes
    assert 128 <= rl < 16384
    body = b"\x00\x01a" + b"7" * (rl - 3)
    return bytes([0x30, (rl & 0x7F) | 0x80, rl >> 7]) + body


def test_a_client_takes_a_160_byte_packet_and_refuses_a_161_byte_one():
    c, sock, clock = linkkit.opened_client(30)
    sock.incoming += CONNACK
    assert c.poll(clock.now) == C.UP
    sock.incoming += _publish_of(160)
    assert c.poll(clock.now) == C.UP  # the largest a client takes by default
    sock.incoming += _publish_of(161)
    assert c.poll(clock.now) == C.FAILED
    assert (c.fault, c.detail) == (C.L_PROTOCOL, -mqtt.TOO_LARGE)


def _pubacks(sock):
    return [w for w in sock.written if w[0] == 0x40]


def test_a_new_connection_owes_the_broker_no_puback():
    clock = linkkit.Clock()
    c, socks = linkkit.client_on(linkkit.Sock, 30, clock)
    linkkit.open_client(c, clock)
    first = socks[0]
    first.incoming += CONNACK
    c.poll(clock.now)
    c.poll(clock.now)
    assert _pubacks(first) == []  # nothing received: nothing to acknowledge
    first.incoming += b"\x32\x06\x00\x01a\x00\x071"  # QoS 1, packet id 7
    c.poll(clock.now)
    assert _pubacks(first) == [b"\x40\x02\x00\x07"]
    # The next connection: the broker sends again what it misses; this
    # client acknowledges only what comes on it.
    c.close()
    linkkit.open_client(c, clock)
    second = socks[1]
    second.incoming += CONNACK
    c.poll(clock.now)
    c.poll(clock.now)
    assert c.state == C.UP and _pubacks(second) == [], second.written


def test_a_timeout_says_what_it_waited_for():
    # "no answer in time" carries what was waited for (docs/floor.md): 1 the
    # connection to open, 2 the CONNACK, 3 the SUBACK; the floor reads it.
    import asyncio

    clock = linkkit.Clock()

    async def never_opens(host, port, ssl, server_hostname):
        await asyncio.sleep(3600)

    async def go():
        c = C.Client(b"T01", "127.0.0.1", 1883, keepalive_s=30, ticks_ms=clock,
                     opener=never_opens, connect_ms=1000)
        c.open(clock.now)
        await asyncio.sleep(0)
        clock.now += 1001
        state = c.poll(clock.now)
        c.close()
        return state, c.fault, c.detail

    assert asyncio.run(go()) == (C.FAILED, C.L_TIMEOUT, 1)
    c, sock, clock = linkkit.opened_client(30)
    clock.now += 10001
    assert c.poll(clock.now) == C.FAILED and (c.fault, c.detail) == (C.L_TIMEOUT, 2)
    c, sock, clock = linkkit.opened_client(30)
    sock.incoming += CONNACK
    assert c.poll(clock.now) == C.UP
    c.subscribe(b"a", clock.now)
    clock.now += 10001
    assert c.poll(clock.now) == C.FAILED and (c.fault, c.detail) == (C.L_TIMEOUT, 3)


# ---- decimal numbers ---------------------------------------------------------------


def test_a_colon_after_the_nine_is_not_a_digit():
    # ":" is the byte after "9": no number has it.
    assert mqtt.decimal(b"19", 0, 2) == 19
    assert mqtt.decimal(b"1:", 0, 2) == -1
    assert mqtt.decimal(b":", 0, 1) == -1
    d = tmpdir("limits_colon")
    with open(d + "/cursor", "w") as f:
        f.write("4:\n")
    assert read_cursor(d + "/cursor") == 0  # not a cursor: everything goes again
    rmdir(d)


# ---- the outbox ----------------------------------------------------------------------


class Rig(linkkit.made_rig(Link)):
    """A Link whose packets go to a list."""

    def __init__(self, source, name, **kw):
        self.sent = []
        self.folder = tmpdir("limits_" + name)
        Link.__init__(self, source, "S1", "T01", "127.0.0.1", 1, self.folder + "/cursor",
                      ticks_ms=lambda: T0, **kw)

    def journal_firsts(self):
        """The first byte of each journal PUBLISH sent."""
        return [p[0] for p in self.sent
                if p[0] >> 4 == 3 and linkkit.publish_parts(p)[1].endswith(b"journal")]


def _source(n):
    s = linkkit.MemorySource()
    s.add(1, n)
    return s


def test_a_board_with_wifi_gets_a_link_that_brings_its_station_up():
    floor = {"site": "S1", "table": "T07", "broker": "10.0.0.5", "port": 1883,
             "server_name": None, "keepalive_s": 30, "wifi": "casino-floor"}
    d = tmpdir("wifi_made")
    link = made(_source(1), [0, None, floor, None, b"secret", b"wifi-pass", "id", d + "/cursor"])
    assert isinstance(link.wifi, Station)
    assert (link.wifi.ssid, link.wifi.key) == ("casino-floor", b"wifi-pass")
    rmdir(d)


def test_a_first_journal_publish_is_neither_retained_nor_dup():
    # Retained, a batch would be handed to whoever subscribes next, as if new.
    link = Rig(_source(3), "flags")
    link.connack(T0)
    assert link.journal_firsts() == [0x32]  # PUBLISH, QoS 1, no DUP, no retain
    rmdir(link.folder)


def test_an_outage_is_not_time_the_floor_took_to_acknowledge():
    # Records 1..3 go out, the broker goes for a minute (longer than
    # ack_wait_ms); at reconnection they go again, and the floor gets a
    # whole ack_wait_ms from then before the link goes back to the cursor.
    link = Rig(_source(3), "outage", ack_wait_ms=30000)
    link.connack(T0)
    assert linkkit.stats(link)["sent"] == 3
    link._fail(C.L_CLOSED, 0)
    link.step(T0 + 1000)
    assert link.state == C.DOWN
    back = T0 + 61000
    link.connack(back)
    link.deliver(bytes([0x90, 3, link.sub_pid >> 8, link.sub_pid & 0xFF, 1]), back)  # SUBACK
    s = linkkit.stats(link)
    assert s["up"] and s["resent"] == 1 and s["gobacks"] == 0, s
    link.step(back + 29000)
    assert linkkit.stats(link)["gobacks"] == 0
    link.step(back + 31000)
    assert link.state == C.UP and linkkit.stats(link)["gobacks"] == 1
    rmdir(link.folder)


# ---- the journal as the outbox -----------------------------------------------------


def test_a_read_at_the_journal_s_end_comes_back_empty_at_once():
    d = tmpdir("limits_end")
    st = OutboxStore(d, segment_bytes=4 * R.REC_LEN, max_segments=4)
    st.boot(lambda piece: None)
    for seq in range(1, 7):  # two segments: 1..4, 5..6
        st.append(linkkit.record(seq))
    assert st.segments() == [1, 2]
    files = []
    path_of = st.path

    def named(n):  # each segment file read_after opens, named first
        files.append(n)
        assert len(files) < 40, ("a read that never ends", files[:8])
        return path_of(n)

    st.path = named
    buf = bytearray(R.MAX_LEN)
    got = []
    seq = 0
    while True:
        n = st.read_after(seq, buf, R.MAX_LEN)
        if not n:
            break
        got += linkkit.seqs_of(bytes(buf[:n]))
        seq = got[-1]
    assert got == [1, 2, 3, 4, 5, 6]
    assert st.read_after(6, buf, R.MAX_LEN) == 0
    assert len(files) <= 4, files
    st.close()
    rmdir(d)
