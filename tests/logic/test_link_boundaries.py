# The floor link at its edges (device/link/mqtt.py, device/link/outbox.py):
# a PUBLISH whose topic (and packet id) fill its packet exactly, an empty
# payload, is a packet and not a protocol fault; a SUBACK's packet id is
# two whole bytes (ids past 255, up to 65535); a link made without a
# keepalive keeps the board file's default (30 s: a ping after 15 s, a
# silent broker dead after 45 s, not sooner); and once the floor has
# acknowledged everything sent, records journaled later get the whole
# ack_wait_ms before they go again. Portable.
import linkkit
from folderkit import rmdir, tmpdir
from link import client as C
from link import mqtt
from link.outbox import Link

T0 = 700000  # a clock that is not near 0
ACK = b"sicbo/S1/T01/ack"


def _parsed(data, size=160):
    p = mqtt.Parser(size)
    p.buf[0:len(data)] = data
    p.have = len(data)
    return p, p.next()


class Rig(linkkit.made_rig(Link)):
    """A Link whose packets go to a list; connected when the test says so."""

    def __init__(self, source, name, **kw):
        self.sent = []
        self.downs = []
        self.folder = tmpdir("lb_" + name)
        Link.__init__(self, source, "S1", "T01", "127.0.0.1", 1, self.folder + "/cursor",
                      down=lambda code, detail: self.downs.append((code, detail)),
                      ticks_ms=lambda: T0, **kw)

    def up(self, now):
        """CONNACK, then the SUBACK for the ack topic's subscription."""
        self.connack(now)
        sub = [pkt for pkt in self.sent if pkt[0] >> 4 == 8]
        assert len(sub) == 1
        self.deliver(b"\x90\x03" + sub[0][2:4] + b"\x01", now)
        self.step(now)
        assert self.is_up and self.subscribed and self.downs == []

    def journal_seqs(self):
        out = []
        for pkt in self.sent:
            if pkt[0] >> 4 == 3:
                _pid, t, payload = linkkit.publish_parts(pkt)
                if t.endswith(b"journal"):
                    out += linkkit.seqs_of(payload)
        return out

    def journal_pids(self):
        return [linkkit.publish_parts(pkt)[0] for pkt in self.sent
                if pkt[0] >> 4 == 3 and linkkit.publish_parts(pkt)[1].endswith(b"journal")]

    def done(self):
        rmdir(self.folder)


def _ack_publish(text, pid=0):
    """The floor's ack as the broker delivers it (QoS 1 when pid)."""
    body = len(ACK).to_bytes(2, "big") + ACK + (pid.to_bytes(2, "big") if pid else b"") + text
    return bytes([0x32 if pid else 0x30, len(body)]) + body


# ---- MQTT: a PUBLISH filled by its topic, a SUBACK's two-byte id -------------


def test_a_publish_whose_topic_fills_it_exactly_is_a_publish_with_an_empty_payload():
    # QoS 0: remaining length 3 = the topic's length (2) and its one byte.
    p, k = _parsed(b"\x30\x03\x00\x01t")
    assert k == 3 and p.qos == 0 and p.pid == 0
    assert bytes(p.buf[p.topic:p.topic + p.topic_len]) == b"t"
    assert p.payload_len == 0 and p.payload == 5
    # QoS 1: the topic and the packet id fill the 5 bytes.
    p, k = _parsed(b"\x32\x05\x00\x01t\x01\x07")
    assert k == 3 and p.qos == 1 and p.pid == 0x0107 and p.payload_len == 0
    # One byte fewer: the packet id does not fit; the topic's length past the end.
    assert _parsed(b"\x32\x04\x00\x01t\x01")[1] == mqtt.MALFORMED
    assert _parsed(b"\x30\x02\x00\x01")[1] == mqtt.MALFORMED
    # A topic of its own length and nothing more (an empty topic, empty payload).
    p, k = _parsed(b"\x30\x02\x00\x00")
    assert k == 3 and p.topic_len == 0 and p.payload_len == 0


def test_an_empty_ack_is_garbage_counted_and_the_link_stays_up():
    # The floor clearing its retained ack: a PUBLISH of no payload on the
    # ack topic. Not a number (the cursor stays), not a protocol fault.
    src = linkkit.MemorySource()
    src.add(1, 3)
    link = Rig(src, "empty_ack")
    link.up(T0)
    assert linkkit.stats(link)["sent"] == 3
    link.deliver(_ack_publish(b"", pid=9), T0 + 1)
    link.step(T0 + 1)
    s = linkkit.stats(link)
    assert s["garbage"] == 1 and s["protocol_errors"] == 0 and s["cursor"] == 0
    assert link.is_up and link.downs == []
    assert link.sent[-1] == b"\x40\x02\x00\x09"  # acknowledged to the broker all the same
    link.deliver(_ack_publish(b"2"), T0 + 2)
    assert linkkit.stats(link)["cursor"] == 2 and link.is_up
    link.done()


def test_a_suback_s_packet_id_is_both_its_bytes():
    p, k = _parsed(b"\x90\x03\x01\x02\x00")
    assert k == 9 and p.pid == 0x0102
    p, k = _parsed(b"\x90\x03\xff\xff\x01")
    assert k == 9 and p.pid == 65535
    p, k = _parsed(b"\x90\x03\x00\xff\x01")
    assert k == 9 and p.pid == 255


def test_a_subscription_with_a_packet_id_past_255_is_taken():
    # A link up for a while has used hundreds of packet ids: its SUBACK
    # names the SUBSCRIBE's id whole, up to 65535.
    for before in (299, 65534):
        c, sock, clock = linkkit.opened_client(10)
        sock.incoming += b"\x20\x02\x00\x00"
        assert c.poll(clock.now) == C.UP
        c.pid = before
        c.subscribe(ACK, clock.now)
        pid = c.sub_pid
        assert pid == before + 1 and sock.written[-1][2:4] == pid.to_bytes(2, "big")
        sock.incoming += b"\x90\x03" + pid.to_bytes(2, "big") + b"\x01"
        assert c.poll(clock.now) == C.UP and c.subscribed, (before, c.fault, c.detail)


# ---- the outbox: the default keepalive, the cursor reaching the top ---------


def test_a_link_made_without_a_keepalive_keeps_the_board_file_s_30_seconds():
    link = Rig(linkkit.MemorySource(), "ka_default")
    # The CONNECT tells the broker 30 s (sicbo/board.py's floor.keepalive_s default).
    assert link._hello[0] == 0x10 and bytes(link._hello[4:9]) == b"MQTT\x04"
    assert bytes(link._hello[10:12]) == b"\x00\x1e"
    link.up(T0)
    assert link.last_rx == T0
    now = T0
    pings = []
    while now < T0 + 45000:  # a broker silent since T0 (it never answers a ping)
        now += 250
        n = len(link.sent)
        link.step(now)
        if b"\xc0\x00" in link.sent[n:]:
            pings.append(now - T0)
        assert link.is_up and link.downs == [], (now - T0, link.downs)
    assert pings == [15000, 30000, 45000], pings  # after half a keepalive, one per half
    link.step(T0 + 45001)  # 1.5 keepalives passed: dead
    assert link.downs == [(C.L_DEAD, 0)] and not link.is_up
    link.done()


def test_records_after_the_cursor_reached_the_top_get_the_whole_ack_wait():
    src = linkkit.MemorySource()
    src.add(1, 3)
    link = Rig(src, "top", ack_wait_ms=5000)
    link.up(T0)
    assert link.journal_seqs() == [1, 2, 3]
    # The floor acknowledges the last record sent: the cursor reaches the top.
    link.deliver(_ack_publish(b"3"), T0 + 100)
    s = linkkit.stats(link)
    assert s["cursor"] == 3 and s["sent"] == 3 and s["acks"] == 1
    now = T0 + 100
    while now < T0 + 20000:  # quiet: nothing outstanding, nothing goes again
        now += 500
        link.step(now)
    assert linkkit.stats(link)["gobacks"] == 0 and link.journal_seqs() == [1, 2, 3]
    # A record journaled long after that ack: outstanding from now on.
    t1 = now
    src.add(4, 4)
    link.journaled()
    link.step(t1)
    assert link.journal_seqs() == [1, 2, 3, 4]
    link.step(t1 + 5000)  # ack_wait_ms after it was sent: not yet
    s = linkkit.stats(link)
    assert s["gobacks"] == 0 and s["sent"] == 4 and link.journal_seqs() == [1, 2, 3, 4]
    link.step(t1 + 5001)  # past it, no ack: back to the cursor
    assert linkkit.stats(link)["gobacks"] == 1
    # Its PUBACK frees the window: record 4 goes again (the floor counts it twice).
    link.deliver(b"\x40\x02" + link.journal_pids()[-1].to_bytes(2, "big"), t1 + 5001)
    link.step(t1 + 5002)
    assert link.journal_seqs() == [1, 2, 3, 4, 4]
    assert link.is_up and link.downs == []
    link.done()


def test_a_link_has_every_field_from_its_making_through_a_connection_and_its_loss():
    # On the board an attribute set for the first time grows the object's
    # table of them: an allocation at the first connection or the first
    # loss, where the link allocates nothing per packet.
    src = linkkit.MemorySource()
    src.add(1, 3)
    link = Rig(src, "fields")
    fields = sorted(link.__dict__)
    link.up(T0)
    link.deliver(_ack_publish(b"3"), T0 + 100)
    now = T0 + 100
    while link.is_up and now < T0 + 60000:  # a broker gone silent: dead after 45 s
        now += 250
        link.step(now)
    assert not link.is_up and [code for code, _d in link.downs] == [C.L_DEAD], link.downs
    grown = [f for f in sorted(link.__dict__) if f not in fields and f != "t0"]  # t0: the rig's
    assert grown == [], grown
    link.done()
