# The link against a fake broker (a small server in the test) that
# misbehaves on the first connection: garbage, an oversized packet, a
# truncated one, a remaining length over 4 bytes, a second CONNACK, an ack
# beyond what was sent. The link survives, counts the error, reconnects, and
# its cursor never passes what it sent. Later connections get a well-behaved
# broker that acknowledges every journal publish as the floor would.
import socket
import threading

import pytest
from linkrig import Driver, interpreters, split_records, wait_for

L_PROTOCOL = 9
BAD_TYPE, BAD_LENGTH, TOO_LARGE, MALFORMED, TRUNCATED, UNEXPECTED = 1, 2, 3, 4, 5, 6
ACK_TOPIC = b"sicbo/S1/T01/ack"


def _packet(kind_flags, body):
    n = len(body)
    head = bytearray([kind_flags])
    while True:
        b = n & 0x7F
        n >>= 7
        head.append(b | (0x80 if n else 0))
        if not n:
            break
    return bytes(head) + body


def _publish(topic, payload, pid=1):
    return _packet(0x32, len(topic).to_bytes(2, "big") + topic + pid.to_bytes(2, "big")
                   + payload)


class FakeBroker:
    """first(conn, send) runs after the first CONNACK; then the broker goes
    on as a good one. `connections` counts them; `seqs` holds every record
    sequence number received in journal publishes."""

    def __init__(self, first, ack=True, puback_first=True):
        self.first = first
        self.ack = ack
        self.puback_first = puback_first
        self.connections = 0
        self.seqs = []
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(8)
        self.port = self.ls.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._conn, args=(c, self.connections), daemon=True).start()

    def _packets(self, c):
        buf = b""
        while True:
            while len(buf) >= 2:
                n, shift, i = 0, 0, 1
                while i < len(buf) and buf[i] & 0x80:
                    n |= (buf[i] & 0x7F) << shift
                    shift += 7
                    i += 1
                if i >= len(buf):
                    break
                n |= buf[i] << shift
                i += 1
                if len(buf) < i + n:
                    break
                yield buf[0], buf[i:i + n]
                buf = buf[i + n:]
            data = c.recv(65536)
            if not data:
                return
            buf += data

    def _conn(self, c, number):
        try:
            for first, body in self._packets(c):
                kind = first >> 4
                if kind == 1:  # CONNECT
                    c.sendall(b"\x20\x02\x00\x00")
                    if number == 1 and self.first is not None:
                        if self.first(c) == "close":
                            c.close()
                            return
                elif kind == 8:  # SUBSCRIBE
                    c.sendall(b"\x90\x03" + body[:2] + b"\x01")
                elif kind == 3:  # PUBLISH, QoS 1
                    tl = int.from_bytes(body[:2], "big")
                    topic = body[2:2 + tl]
                    pid = body[2 + tl:4 + tl]
                    payload = body[4 + tl:]
                    if number > 1 or self.puback_first:
                        c.sendall(b"\x40\x02" + pid)
                    if topic.endswith(b"/journal"):
                        seqs = [s for s, _ in split_records(payload)]
                        self.seqs += seqs
                        if self.ack and (number > 1 or self.first is None):
                            c.sendall(_publish(ACK_TOPIC, str(seqs[-1]).encode()))
                elif kind == 12:  # PINGREQ
                    c.sendall(b"\xd0\x00")
        except OSError:
            pass

    def stop(self):
        self.ls.close()


CASES = {
    "garbage": (lambda c: c.sendall(b"\xff\xfe\xfd\xfc\xfb"), BAD_TYPE),
    "oversized": (lambda c: c.sendall(b"\x30\xa0\x8d\x06" + b"x" * 100), TOO_LARGE),
    "long_length": (lambda c: c.sendall(b"\x30\xff\xff\xff\xff\x01"), BAD_LENGTH),
    "malformed": (lambda c: c.sendall(b"\x40\x03\x00\x01\x00"), MALFORMED),
    "truncated": (lambda c: c.sendall(b"\x40\x02\x00") or "close", TRUNCATED),
    "second_connack": (lambda c: c.sendall(b"\x20\x02\x00\x00"), UNEXPECTED),
}


@pytest.mark.parametrize("which", interpreters())
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_misbehaving_broker_is_a_counted_protocol_error_then_a_reconnection(
        tmp_path, which, case):
    send, detail = CASES[case]
    fake = FakeBroker(send)
    try:
        d = Driver(which, str(tmp_path), port=fake.port, count=60, timeout_ms=60000)
        st = d.wait(120)
        down = d.kinds("down")
        assert down and down[0]["code"] == L_PROTOCOL and down[0]["detail"] == detail
        assert st["protocol_errors"] == 1 and st["failures"] == 1
        assert fake.connections == 2
        assert st["cursor"] == 60  # then delivered through the good broker
        assert d.kinds("up")  # (the first connection may fail before the link saw it up)
    finally:
        fake.stop()


@pytest.mark.parametrize("which", interpreters())
def test_an_ack_beyond_what_was_sent_moves_the_cursor_to_what_was_sent_only(tmp_path, which):
    # One publish in flight (window 1) that the broker never PUBACKs: the
    # table has sent records 1..14 of 100. An ack of 999999 (and garbage,
    # and a publish on another topic) cannot take the cursor past 14.
    def later(c):
        wait_for(lambda: fake.seqs, 30, "the first publish")
        c.sendall(_publish(b"sicbo/S1/T01/other", b"50", pid=7))
        c.sendall(_publish(ACK_TOPIC, b"not a number", pid=8))
        c.sendall(_publish(ACK_TOPIC, b"999999", pid=9))

    def first(c):
        threading.Thread(target=later, args=(c,), daemon=True).start()

    fake = FakeBroker(first, ack=False, puback_first=False)
    try:
        d = Driver(which, str(tmp_path), port=fake.port, count=100, window=1, timeout_ms=3000)
        st = d.wait(60)
        assert fake.seqs == list(range(1, 15))
        assert st["sent"] == 14 and st["cursor"] == 14
        assert st["beyond"] == 1 and st["garbage"] == 1 and st["foreign"] == 1
        assert st["failures"] == 0 and st["in_flight"] == 1
        with open(tmp_path / "cursor") as f:
            assert f.read().strip() == "14"
    finally:
        fake.stop()


@pytest.mark.parametrize("which", ["cpython", "mp64"])
def test_a_refused_connection_is_told_once_and_retried_with_backoff(tmp_path, which):
    # CONNACK 5 (not authorized), every time: one down, several attempts.
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    port = ls.getsockname()[1]
    tries = []

    def serve():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            tries.append(1)
            try:
                c.recv(1024)
                c.sendall(b"\x20\x02\x00\x05")
            except OSError:
                pass

    threading.Thread(target=serve, daemon=True).start()
    try:
        d = Driver(which, str(tmp_path), port=port, count=5, timeout_ms=4000, backoff_ms=100,
                   backoff_max_ms=800)
        st = d.wait(60)
        down = d.kinds("down")
        assert len(down) == 1 and down[0]["code"] == 5 and down[0]["detail"] == 5
        assert not d.kinds("up")
        assert 3 <= len(tries) <= 12  # backoff: 100, 200, 400, 800, 800 ms (+ jitter)
        # the last connection the listener took may still be waiting for its
        # answer when the driver's run ends: not yet counted a failure
        assert len(tries) - 1 <= st["failures"] <= len(tries), (st["failures"], len(tries))
        assert st["cursor"] == 0
        assert st["alive_calls"] > 10
    finally:
        ls.close()
