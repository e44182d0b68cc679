# The journal as the outbox (device/link/outbox.py) without a network: the
# link's passes driven with a clock of the test's own, packets captured as
# they are sent, the broker's answers fed to its parser. Portable.
import os

import linkkit
from link import client as C
from link.outbox import Link, read_cursor, write_cursor
from link.source import OutboxStore

from sicbo import records as R

DIR = "/tmp/sicbo-test-outbox"


def _dir(name):
    for d in (DIR, DIR + "/" + name):
        try:
            os.mkdir(d)
        except OSError:
            pass
    d = DIR + "/" + name
    for f in os.listdir(d):
        os.remove(d + "/" + f)
    return d


class Rig(linkkit.made_rig(Link)):
    """A Link whose packets go to a list; connected at once when opened."""

    def __init__(self, source, name, **kw):
        self.sent = []
        self.ups = 0
        self.downs = []
        kw.setdefault("ticks_ms", lambda: 0)
        path = kw.pop("cursor_path", None) or _dir(name) + "/cursor"
        Link.__init__(self, source, "S1", "T01", "127.0.0.1", 1, path,
                      up=self._up, down=self._down, **kw)

    def _up(self):
        self.ups += 1

    def _down(self, code, detail):
        self.downs.append((code, detail))

    def publishes(self, since=0):
        """(pid, dup, retain, topic, seqs) of the PUBLISH packets sent."""
        out = []
        for pkt in self.sent[since:]:
            if pkt[0] >> 4 != 3:
                continue
            pid, topic, payload = linkkit.publish_parts(pkt)
            seqs = linkkit.seqs_of(payload) if topic.endswith(b"journal") else payload
            out.append((pid, bool(pkt[0] & 8), bool(pkt[0] & 1), topic, seqs))
        return out

    def journal(self, since=0):
        return [p for p in self.publishes(since) if p[3].endswith(b"journal")]


def _ack(value, pid=100):
    topic = b"sicbo/S1/T01/ack"
    body = len(topic).to_bytes(2, "big") + topic + pid.to_bytes(2, "big") + value
    return bytes([0x32, len(body)]) + body


def _puback(pid):
    return b"\x40\x02" + pid.to_bytes(2, "big")


def _source(n):
    s = linkkit.MemorySource()
    s.add(1, n)
    return s


def test_connects_subscribes_publishes_status_then_a_window_of_whole_batches():
    link = Rig(_source(100), "window", window=4, batch=512)
    link.connack(0, suback=True)
    kinds = [pkt[0] >> 4 for pkt in link.sent]
    assert kinds[:2] == [8, 3]  # SUBSCRIBE (the ack topic), the status
    assert link.sent[0][-1] == 1 and b"sicbo/S1/T01/ack" in link.sent[0]  # QoS 1
    status = link.publishes()[0]
    assert status[2] and status[3] == b"sicbo/S1/T01/status"  # retained
    j = link.journal()
    assert len(j) == 4  # the window
    assert [p[4] for p in j] == [list(range(1 + 14 * i, 15 + 14 * i)) for i in range(4)]
    assert link.top == 56 and link.cursor == 0 and link.ups == 1
    link.step(10)
    assert len(link.journal()) == 4  # nothing more until a PUBACK


def test_puback_frees_the_window_but_only_the_ack_moves_the_cursor():
    link = Rig(_source(100), "puback", window=2)
    link.connack(0)
    j = link.journal()
    link.deliver(_puback(j[0][0]) + _puback(j[1][0]), 1)
    assert link.cursor == 0
    link.step(2)
    assert len(link.journal()) == 4 and link.cursor == 0
    link.deliver(_ack(b"20"), 3)
    assert link.cursor == 20
    link.deliver(_ack(b"7"), 4)  # older: never back
    assert link.cursor == 20
    link.deliver(_ack(b"5000"), 5)  # beyond what was sent: only what was sent
    assert link.cursor == link.top == 56
    link.deliver(_ack(b"x1"), 6)
    assert linkkit.stats(link)["beyond"] == 1 and linkkit.stats(link)["garbage"] == 1
    # every ack publish got its PUBACK
    assert [pkt for pkt in link.sent if pkt[0] == 0x40] == []  # not yet: the next pass
    link.step(7)
    assert len([pkt for pkt in link.sent if pkt[0] == 0x40]) == 4


def test_a_publish_on_another_topic_and_a_stray_puback_are_counted_and_ignored():
    link = Rig(_source(20), "foreign")
    link.connack(0)
    topic = b"sicbo/S1/T02/ack"
    body = len(topic).to_bytes(2, "big") + topic + b"\x00\x05" + b"20"
    link.deliver(bytes([0x32, len(body)]) + body, 1)
    link.deliver(_puback(999), 1)
    assert link.cursor == 0
    assert linkkit.stats(link)["foreign"] == 1 and linkkit.stats(link)["stray_pubacks"] == 1


def test_without_ack_it_goes_back_to_the_cursor():
    link = Rig(_source(30), "goback", window=4, ack_wait_ms=1000)
    link.connack(0)
    j = link.journal()
    for p in j:
        link.deliver(_puback(p[0]), 10)
    link.deliver(_ack(b"14"), 10)
    n = len(link.sent)
    link.step(500)
    assert link.journal(n) == []  # everything sent, waiting
    link.step(1011)  # the ack has not moved for ack_wait_ms
    link.step(1012)
    again = link.journal(n)
    assert again and again[0][4][0] == 15 and linkkit.stats(link)["gobacks"] == 1
    assert not again[0][1]  # a new publish, not a DUP


def test_after_a_reconnection_the_window_goes_again_with_dup_and_its_ids():
    link = Rig(_source(100), "dup", window=3)
    link.connack(0, suback=True)
    first = link.journal()
    link.deliver(_puback(first[0][0]), 1)  # the first is through
    link.step(2)  # and one more goes
    inflight = link.journal()[1:]
    assert len(inflight) == 3
    link._fail(C.L_CLOSED)
    link.step(3)
    assert link.downs == [(C.L_CLOSED, 0)] and link.state == C.DOWN
    n = len(link.sent)
    link.step(100000)  # after the backoff: connect again
    link.deliver(b"\x20\x02\x01\x00", 100000)
    link.step(100001)
    again = link.journal(n)
    assert [(p[0], p[1], p[4]) for p in again[:3]] == [(p[0], True, p[4]) for p in inflight]
    assert linkkit.stats(link)["resent"] == 3 and link.ups == 1  # up: once subscribed
    link.deliver(bytes((0x90, 3, link.sub_pid >> 8, link.sub_pid & 0xFF, 1)), 100002)
    assert link.ups == 2


def test_packet_ids_skip_those_in_flight_across_the_wrap():
    link = Rig(_source(200), "pids", window=4)
    link.pid = 65533
    link.connack(0)
    pids = [p[0] for p in link.publishes()]
    assert pids == [65535, 1, 2, 3, 4]  # (65534: SUBSCRIBE) status, then the window
    link.pid = 65535  # as if the counter came round again
    link.deliver(_puback(2), 1)  # 65535, 1 and 3 still in flight
    link.step(2)
    assert link.publishes()[-1][0] == 2  # 1 is skipped: in flight


def test_cursor_saved_atomically_and_read_back():
    d = _dir("cursor")
    path = d + "/cursor"
    assert read_cursor(path) == 0
    write_cursor(path, 123)
    write_cursor(path, 4567)
    assert read_cursor(path) == 4567
    assert sorted(os.listdir(d)) == ["cursor"]  # no temporary file left
    with open(path, "w") as f:
        f.write("garbage")
    assert read_cursor(path) == 0  # then everything goes again
    link = Rig(_source(50), "saved", save_ms=100)
    link.connack(0)
    link.deliver(_ack(b"14"), 10)
    link.step(50)
    assert read_cursor(link.cursor_path) == 0  # not yet: at most every save_ms
    link.step(150)
    assert read_cursor(link.cursor_path) == 14
    d = _dir("saved2")
    write_cursor(d + "/cursor", 999)
    # a journal behind the file (lost, started again): all it holds goes to
    # the floor (which flags what conflicts with what it stored before), once
    # the link looks, before it connects; and the cursor 0 is saved
    link = Rig(_source(50), "saved2", cursor_path=d + "/cursor", save_ms=100)
    assert link.cursor == 999
    link.step(0)
    assert link.cursor == link.top == 0
    link.connack(200, suback=True)
    assert read_cursor(d + "/cursor") == 0
    assert link.journal()[0][4][0] == 1  # from the journal's first record


def test_the_saved_cursor_holds_when_the_journal_is_read_after_the_link_is_made():
    # The table makes its link before it replays its journal: the journal
    # then says 0 records; the cursor saved stays and is checked when the
    # link first connects.
    d = _dir("before_replay")
    write_cursor(d + "/cursor", 30)
    src = _source(0)
    link = Rig(src, "before_replay", cursor_path=d + "/cursor")
    assert link.cursor == 30
    for seq in range(1, 51):
        src.append(linkkit.record(seq))
    link.connack(0)
    assert link.cursor == 30 and link.is_up
    assert link.journal()[0][4][0] == 31  # from the saved cursor on, not from 1


def test_an_outage_is_told_once_and_retried_with_a_capped_backoff():
    link = Rig(_source(5), "backoff", backoff_ms=100, backoff_max_ms=400)
    tries = []
    now = 0
    for _ in range(400):
        was = link.state
        link.step(now)
        if was == C.DOWN and link.state == C.CONNECTING:
            tries.append(now)
            link._fail(C.L_SOCKET, 111)
            link.step(now)
        now += 10
    assert link.downs == [(C.L_SOCKET, 111)]
    gaps = [tries[i + 1] - tries[i] for i in range(len(tries) - 1)]
    assert len(tries) >= 6
    assert 100 <= gaps[0] <= 170 and 200 <= gaps[1] <= 320
    assert all(400 <= g <= 620 for g in gaps[3:])  # capped (plus jitter)



def _reopened(link, since):
    """Passes every 10 ms after `since` until the link opens a connection
    again: the wait, in ms (to the 10 ms)."""
    now = since
    while link.state == C.DOWN:
        now += 10
        link.step(now)
        assert now - since < 100000, "never opened again"
    return now - since


def _wait_after_a_connection_held(held):
    """Four connections refused in a row (the waits double: 100, 200, 400,
    800 ms), then one connected and lost `held` ms after its CONNACK: the
    wait before the next attempt."""
    link = Rig(_source(5), "backoff_held", keepalive_s=10, backoff_ms=100,
               backoff_max_ms=60000)
    now = 0
    link.step(now)  # the first attempt
    for d in (100, 200, 400, 800):
        link._fail(C.L_SOCKET, 111)
        link.step(now)
        w = _reopened(link, now)
        assert d <= w <= d + d // 2 + 10, (d, w)  # plus up to half of it in jitter
        now += w
    link.deliver(b"\x20\x02\x00\x00", now)  # the fifth attempt is accepted
    link.step(now)
    link.deliver(bytes([0x90, 3, link.sub_pid >> 8, link.sub_pid & 0xFF, 1]), now)  # SUBACK
    assert link.is_up and link.ups == 1
    lost = now + held
    link._fail(C.L_CLOSED, 0)
    link.step(lost)
    assert link.state == C.DOWN and link.downs == [(C.L_SOCKET, 111), (C.L_CLOSED, 0)]
    return _reopened(link, lost)


def test_a_connection_that_held_a_keepalive_starts_the_backoff_again():
    # Up for a whole keepalive (10 s here): its loss is a new outage, retried
    # after backoff_ms, not after the wait the refusals before it had grown to.
    w = _wait_after_a_connection_held(10000)
    assert 100 <= w <= 160, w


def test_a_connection_lost_within_a_keepalive_does_not_start_the_backoff_again():
    # A broker that accepts and drops each connection at once must not be
    # hammered every backoff_ms: the wait goes on growing (1600 ms next).
    w = _wait_after_a_connection_held(9999)
    assert 1600 <= w <= 2410, w

def test_a_fault_in_the_source_is_contained_by_the_task():
    _contained(OSError(5), C.L_SOCKET, 5)


def test_memory_error_in_the_link_is_contained_by_the_task():
    _contained(MemoryError(), C.L_MEMORY, 0)


def _contained(exc, code, detail):
    import asyncio

    class Broken(linkkit.MemorySource):
        def read_after(self, seq, buf, limit):
            raise exc

    s = Broken()
    s.add(1, 10)
    link = Rig(s, "broken", tick_ms=1, backoff_ms=5)
    link.ticks = lambda: 0
    beats = []
    link.alive = lambda: beats.append(1)

    async def main():
        t = asyncio.create_task(link.run())
        for _ in range(500):
            if len(beats) >= 20 and link.downs:
                break
            if link.state == C.CONNECTING:
                link.deliver(b"\x20\x02\x00\x00", 0)
            await asyncio.sleep(0.002)
        t.cancel()
        try:
            await t
        except BaseException:  # noqa: B036 - cancelled
            pass

    asyncio.run(main())
    assert link.downs and link.downs[0] == (code, detail)
    assert len(beats) >= 20  # alive() went on


def _store(name, n, segment_bytes=300):
    st = OutboxStore(_dir(name), segment_bytes=segment_bytes, max_segments=100)
    st.boot(lambda piece: None)
    for seq in range(1, n + 1):
        st.append(linkkit.record(seq))
    return st


def test_the_store_reads_every_record_after_a_cursor_across_segments_in_batches():
    st = _store("src", 60)
    assert len(st.segments()) >= 7
    src = st
    buf = bytearray(1024)
    seq = 0
    got = []
    while True:
        n = src.read_after(seq, buf, 200)
        if not n:
            break
        assert n <= 200
        seqs = linkkit.seqs_of(buf[:n])
        got += seqs
        seq = seqs[-1]
    assert got == list(range(1, 61))
    # a buffer of the table's largest record only (Link's `largest`)
    small = bytearray(100)
    seq = 0
    got = []
    while True:
        n = src.read_after(seq, small, 100)
        if not n:
            break
        got += linkkit.seqs_of(small[:n])
        seq = got[-1]
    assert got == list(range(1, 61))
    # from anywhere (a go-back, a DUP resend)
    n = src.read_after(33, buf, 72)
    assert linkkit.seqs_of(buf[:n]) == [34, 35]
    # a record appended later is found where the last read stopped
    st.append(linkkit.record(61))
    assert src.read_after(60, buf, 512) == 36 and linkkit.seqs_of(buf[:36]) == [61]
    st.close()


def test_the_store_reads_past_damage_and_rotated_segments():
    st = _store("damage", 30, segment_bytes=4000)
    st.close()
    path = st.path(st.segments()[-1])
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[36 * 5 + 10] ^= 0xFF  # record 6 damaged
    data += b"\xa5\x01\x24"  # a torn tail
    with open(path, "wb") as f:
        f.write(data)
    src = st
    buf = bytearray(1024)
    n = src.read_after(0, buf, 1024)
    assert linkkit.seqs_of(buf[:n]) == [1, 2, 3, 4, 5]
    n = src.read_after(5, buf, 1024)
    assert linkkit.seqs_of(buf[:n]) == list(range(7, 31))
    assert src.read_after(30, buf, 1024) == 0
    # rotation deleted the oldest segments: what is left is read
    st2 = _store("rotated", 40)
    for n in st2.segments()[:3]:
        os.remove(st2.path(n))
    st2 = OutboxStore(st2.folder, segment_bytes=300, max_segments=100)  # as after rotation
    src = st2
    n = src.read_after(0, buf, 1024)
    assert linkkit.seqs_of(buf[:n])[0] > 1
    st2.close()


def test_an_ack_of_exactly_what_was_sent_is_not_beyond_it():
    link = Rig(_source(30), "exact", window=4)
    link.connack(0)
    link.deliver(_ack(str(link.top).encode()), 1)
    st = linkkit.stats(link)
    assert link.cursor == link.top and st["beyond"] == 0 and st["acks"] == 1, st


def test_each_status_publish_and_protocol_fault_is_counted_once():
    link = Rig(_source(5), "counts")
    link.connack(0)
    assert linkkit.stats(link)["status"] == 1
    link._fail(C.L_PROTOCOL, 1)
    link.step(1)
    st = linkkit.stats(link)
    assert st["failures"] == 1 and st["protocol_errors"] == 1, st
    link._fail(C.L_CLOSED)  # not a protocol error
    link.step(2)
    st = linkkit.stats(link)
    assert st["protocol_errors"] == 1, st


def test_records_journaled_go_at_the_next_pass_not_at_the_next_look():
    src = _source(5)
    link = Rig(src, "prompt", window=4)
    link.connack(0)
    j = link.journal()
    assert [p[4] for p in j] == [[1, 2, 3, 4, 5]]
    link.deliver(_puback(j[0][0]) + _ack(b"5"), 1)
    link.step(2)
    n = len(link.sent)
    src.add(6, 8)
    link.step(3)  # not told yet, and the periodic look is not due: nothing
    assert link.journal(n) == []
    link.journaled()
    link.step(4)
    assert [p[4] for p in link.journal(n)] == [[6, 7, 8]]


def test_the_window_is_one_to_eight_publishes():
    for bad in (0, 9):
        try:
            Rig(_source(5), "window_bad", window=bad)
        except ValueError as e:
            assert "1..8" in str(e)
        else:
            raise AssertionError("window %d taken" % bad)
    for window in (1, 8):
        link = Rig(_source(200), "window_%d" % window, window=window)
        link.connack(0)
        assert len(link.journal()) == window


class Station:
    """A Wi-Fi station whose association the test decides."""

    def __init__(self):
        self.is_up = False

    def up(self, now):
        return self.is_up

    def connected(self):
        return self.is_up

    def status(self):
        return 201  # STAT_NO_AP_FOUND, say


def test_without_wifi_nothing_is_opened_and_the_outage_waits_for_connect_ms():
    # An association takes seconds: the outage is told only once the Wi-Fi
    # was not up for connect_ms, on a clock that is not near 0.
    t0 = 500000
    wifi = Station()
    link = Rig(_source(5), "nowifi", wifi=wifi, connect_ms=3000, ticks_ms=lambda: t0)
    now = t0
    while now < t0 + 2900:
        link.step(now)
        now += 50
    assert link.sent == [] and link.state == C.DOWN and link.downs == []
    while now < t0 + 3200:
        link.step(now)
        now += 50
    assert link.downs == [(C.L_NETWORK, 201)] and link.sent == []
    wifi.is_up = True
    for _ in range(200):  # the backoff, then a connection
        link.step(now)
        if link.state == C.CONNECTING:
            break
        now += 50
    assert link.state == C.CONNECTING


def test_one_subscription_per_connection():
    link = Rig(_source(60), "subscribe_once", window=2)
    link.connack(0)
    for now in range(1, 40):
        j = link.journal()
        link.deliver(b"".join(_puback(p[0]) for p in j[-2:]), now)
        link.step(now)
    assert len(link.journal()) > 4
    assert [pkt[0] >> 4 for pkt in link.sent].count(8) == 1


def test_a_go_back_does_not_publish_again_what_is_still_in_flight():
    # Three batches sent, none PUBACKed, the ack not moving: the go-back
    # finds each batch after the cursor in flight already (the broker has
    # them; they go again with DUP only after a reconnection).
    link = Rig(_source(30), "goback_inflight", window=4, ack_wait_ms=1000)
    link.connack(0)
    first = link.journal()
    assert [p[4][0] for p in first] == [1, 15, 29]
    n = len(link.sent)
    link.step(1011)
    link.step(1012)
    assert linkkit.stats(link)["gobacks"] == 1
    assert link.journal(n) == []


def test_a_gap_after_the_cursor_is_said_by_the_status_once():
    link = Rig(_source(30), "nogap")
    link.connack(0)
    assert link.skipped == 0
    assert [p[3] for p in link.publishes()].count(b"sicbo/S1/T01/status") == 1
    s = linkkit.MemorySource()
    s.add(5, 30)  # 1..4 not in the journal (a corrupt stretch)
    link = Rig(s, "gap")
    link.connack(0)
    link.step(1)
    assert link.skipped == 5
    link.step(2)
    assert [p[3] for p in link.publishes()].count(b"sicbo/S1/T01/status") == 2


def test_the_link_is_made_from_the_boards_floor_section():
    from link.outbox import made

    floor = {"site": "S1", "table": "T07", "broker": "10.0.0.5", "port": 1884,
             "server_name": None, "keepalive_s": 45}
    path = _dir("made") + "/cursor"
    link = made(_source(3), [0, None, floor, None, b"table-secret", None, "code-id", path])
    assert (link.host, link.port, link.ka_ms, link.ssl, link.wifi) == ("10.0.0.5", 1884, 45000,
                                                                        None, None)
    assert link.t_ack == b"sicbo/S1/T07/ack" and link.cursor_path == path
    assert link.code == b"code-id" and len(link.tx) >= link._at + 512
    # Room for the largest record the journal holds (a sealed checkpoint of
    # R.MAX_CHANNELS channels is no longer): none is ever skipped.
    assert len(link.tx) >= link._at + R.MAX_LEN, (len(link.tx), link._at)
    hello = link._hello
    assert hello.endswith(b"\x00\x03T07\x00\x0ctable-secret")  # user: the table, its password
    # docs/floor.md: batches of at most 512 bytes of payload, at most 4 in flight
    link.open = lambda now: Rig.open(link, now)
    link.send = lambda buf, off, n, now: Rig.send(link, buf, off, n, now)
    link.sent = []
    link.source = _source(200)
    now = link.ticks()  # the board's clock: made() gives it no other
    link.step(now)
    Rig.deliver(link, b"\x20\x02\x00\x00", now)
    link.step(now)
    journal = [p for p in Rig.publishes(link) if p[3].endswith(b"journal")]
    assert [len(p[4]) for p in journal] == [14, 14, 14, 14]  # 14 records of 36 bytes: 504
