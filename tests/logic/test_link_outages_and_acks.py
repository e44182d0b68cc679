# The floor link where a review found it wrong (each test seen failing
# before its fix). Portable: CPython and MicroPython.
# - More than _ACKS acknowledgements taken in one pass: the rest were never
#   given their PUBACK (mosquitto sends a QoS 1 message again only after a
#   reconnection), and those owed went out last first.
# - A broker that refuses the ack topic at every attempt: the link said up
#   and down at every retry (a J_LINK pair each), not once per outage.
# - A cursor acknowledged just before an outage was saved only once the link
#   was up again, while rotation went by it.
# - A journal over a damaged stretch: a whole buffer read again per byte.
import os

import linkkit
from folderkit import rmdir, tmpdir
from link import client as C
from link.outbox import Link, read_cursor
from link.source import OutboxStore

T0 = 1000


def _ack_publish(value, pid):
    topic = b"sicbo/S1/T01/ack"
    body = len(topic).to_bytes(2, "big") + topic + pid.to_bytes(2, "big") + value
    return bytes([0x32, len(body)]) + body


def test_every_ack_taken_gets_its_puback_in_the_order_they_came():
    c, sock, clock = linkkit.opened_client(30)
    sock.incoming += b"\x20\x02\x00\x00"  # CONNACK
    assert c.poll(clock.now) == C.UP
    for pid in range(1, 11):  # ten at once, more than the PUBACKs a pass holds
        sock.incoming += _ack_publish(str(pid).encode(), pid)
    sock.written.clear()
    for _ in range(6):
        clock.now += 20
        assert c.poll(clock.now) == C.UP
    acked = [int.from_bytes(w[2:4], "big") for w in sock.written if w[0] == 0x40]
    assert acked == list(range(1, 11))


class Rig(linkkit.made_rig(Link)):
    def __init__(self, source, name, **kw):
        self.sent = []
        self.ups = 0
        self.downs = []
        self.folder = tmpdir("loa_" + name)
        Link.__init__(self, source, "S1", "T01", "127.0.0.1", 1, self.folder + "/cursor",
                      up=self._up, down=lambda code, d: self.downs.append((code, d)), **kw)

    def _up(self):
        self.ups += 1


def _source(n):
    s = linkkit.MemorySource()
    s.add(1, n)
    return s


def test_a_broker_that_refuses_the_ack_topic_at_every_attempt_is_one_outage():
    now = [T0]
    link = Rig(_source(5), "refused", ticks_ms=lambda: now[0], backoff_ms=1000,
               backoff_max_ms=8000)
    for _ in range(10):
        link.connack(now[0])
        pid = link.sub_pid
        link.deliver(bytes((0x90, 3, pid >> 8, pid & 0xFF, 0x80)), now[0])  # refused
        link.step(now[0])
        assert link.state == C.DOWN
        now[0] = link._retry_t + 1
    assert link.downs == [(C.L_SUBSCRIBE, 0x80)] and link.ups == 0
    link.connack(now[0], suback=True)  # granted at last: up, said once
    assert link.ups == 1 and link.is_up
    rmdir(link.folder)


def test_a_cursor_acknowledged_just_before_an_outage_is_saved_during_it():
    now = [T0]
    link = Rig(_source(50), "outage", save_ms=2000, ticks_ms=lambda: now[0],
               backoff_ms=60000, backoff_max_ms=60000)
    link.connack(T0, suback=True)
    link.deliver(_ack_publish(b"14", 100), T0 + 500)
    link.step(T0 + 500)
    assert link.cursor == 14 and read_cursor(link.cursor_path) == 0  # at most every 2 s
    link._fail(C.L_DEAD)
    link.step(T0 + 600)
    assert link.state == C.DOWN
    t = T0 + 600
    while t < T0 + 3000:  # within the backoff: the link stays down
        t += 100
        link.step(t)
    assert link.state == C.DOWN and read_cursor(link.cursor_path) == 14
    rmdir(link.folder)


class _CountingFile:
    def __init__(self, f, box):
        self.f = f
        self.box = box

    def seek(self, n):
        return self.f.seek(n)

    def readinto(self, b):
        self.box[0] += 1
        return self.f.readinto(b)

    def close(self):
        self.f.close()


def test_a_damaged_stretch_is_stepped_over_without_reading_it_again_per_byte():
    import link.source as S

    d = tmpdir("loa_damage")
    with open(d + "/j00000001.log", "wb") as f:
        f.write(linkkit.records(1, 10))
        f.write(bytes(3000))  # damage the scanner skips
        f.write(linkkit.records(11, 60))
    st = OutboxStore(d)
    st.boot(lambda piece: None)
    box = [0]
    real = open
    S.open = lambda path, mode="r": _CountingFile(real(path, mode), box)
    try:
        buf = bytearray(1024)  # the link's payload buffer (R.MAX_LEN)
        n = st.read_after(10, buf, 512)
    finally:
        del S.open
    st.close()
    assert linkkit.seqs_of(bytes(buf[:n]))[0] == 11
    assert box[0] <= 8, box  # a few windows, not one per damaged byte (3,000)
    for name in os.listdir(d):
        os.remove(d + "/" + name)
    rmdir(d)
