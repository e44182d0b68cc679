# The MQTT 3.1.1 packets of the table's link (device/link/mqtt.py): encoded
# into preallocated buffers, parsed incrementally. Portable: CPython and the
# MicroPython ports.
import gc

from link import mqtt


def _hexb(s):
    return bytes(int(s[i:i + 2], 16) for i in range(0, len(s), 2))


def test_connect_persistent_session_will_and_password():
    buf = bytearray(200)
    n = mqtt.connect(buf, b"T01", 30, b"sicbo/S1/T01/status", b'{"online": false}',
                     b"T01", b"pw")
    want = (b"\x10" + bytes([n - 2])
            + b"\x00\x04MQTT\x04"
            + bytes([0x80 | 0x40 | 0x20 | 0x08 | 0x04])  # user, password, will retain/QoS 1/flag
            + b"\x00\x1e"  # keepalive 30 s
            + b"\x00\x03T01"
            + b"\x00\x13sicbo/S1/T01/status" + b'\x00\x11{"online": false}'
            + b"\x00\x03T01" + b"\x00\x02pw")
    assert bytes(buf[:n]) == want
    assert not buf[9] & 0x02  # clean session 0


def test_connect_without_user_has_no_password():
    buf = bytearray(100)
    n = mqtt.connect(buf, b"T01", 5, None, None, None, b"ignored")
    assert bytes(buf[:n]) == b"\x10\x0f\x00\x04MQTT\x04\x00\x00\x05\x00\x03T01"


def test_publish_header_sits_just_before_the_payload():
    topic = b"sicbo/S1/T01/journal"
    at = mqtt.room(topic)
    buf = bytearray(at + 1024)
    buf[at:at + 3] = b"abc"
    start = mqtt.publish(buf, at, 3, topic, 0x1234)
    assert bytes(buf[start:at + 3]) == (b"\x32" + bytes([2 + len(topic) + 2 + 3])
                                        + b"\x00\x14" + topic + b"\x12\x34abc")
    mqtt.set_dup(buf, start)
    assert buf[start] == 0x3A
    start = mqtt.publish(buf, at, 3, topic, 7, retain=True, dup=True)
    assert buf[start] == 0x3B


def test_publish_with_a_two_byte_remaining_length():
    topic = b"t"
    at = mqtt.room(topic)
    buf = bytearray(at + 1024)
    start = mqtt.publish(buf, at, 1000, topic, 1)
    rl = 2 + 1 + 2 + 1000
    assert buf[start + 1] == (rl & 0x7F) | 0x80 and buf[start + 2] == rl >> 7
    assert start + 3 + 2 + 1 + 2 == at  # header, topic, id: the payload follows
    assert start >= 0


def test_packet_ids_go_1_to_65535_then_1_never_0():
    assert mqtt.next_pid(0) == 1
    assert mqtt.next_pid(1) == 2
    assert mqtt.next_pid(65534) == 65535
    assert mqtt.next_pid(65535) == 1
    assert mqtt.next_pid(65536) == 1  # out of range: back to 1


def test_subscribe_and_puback_and_ping():
    buf = bytearray(64)
    n = mqtt.subscribe(buf, 3, b"sicbo/S1/T01/ack")
    assert bytes(buf[:n]) == b"\x82\x15\x00\x03\x00\x10sicbo/S1/T01/ack\x01"
    a = bytearray(4)
    assert mqtt.puback(a, 0xABCD) == 4 and bytes(a) == b"\x40\x02\xab\xcd"
    assert mqtt.PINGREQ == b"\xc0\x00"


def _feed(p, data):
    p.buf[p.have:p.have + len(data)] = data
    p.have += len(data)


def test_parser_takes_packets_whole_however_the_bytes_come():
    pub = (b"\x32\x19\x00\x10sicbo/S1/T01/ack\x00\x05" + b"12345")
    stream = b"\x20\x02\x01\x00" + b"\x40\x02\x00\x09" + b"\x90\x03\x00\x02\x01" + pub + b"\xd0\x00"
    for step in (1, 2, 3, 7, len(stream)):
        p = mqtt.Parser(160)
        got = []
        for i in range(0, len(stream), step):
            _feed(p, stream[i:i + step])
            while True:
                k = p.next()
                assert k >= 0
                if not k:
                    break
                if k == 3:
                    got.append((k, p.pid, p.qos, bytes(p.buf[p.topic:p.topic + p.topic_len]),
                                mqtt.decimal(p.buf, p.payload, p.payload_len)))
                else:
                    got.append((k, p.pid))
                p.drop()
        assert got == [(2, 0), (4, 9), (9, 2), (3, 5, 1, b"sicbo/S1/T01/ack", 12345), (13, 0)]
        assert p.have == 0


def test_connack_fields():
    p = mqtt.Parser(16)
    _feed(p, b"\x20\x02\x01\x05")
    assert p.next() == 2 and p.buf[p.body] == 1 and p.buf[p.body + 1] == 5


def _first(data, size=160):
    p = mqtt.Parser(size)
    _feed(p, data[:size])
    return p.next()


def test_types_a_client_must_not_receive_are_refused():
    for first in (0x00, 0x10, 0x50, 0x62, 0x70, 0x82, 0xA2, 0xB0, 0xC0, 0xE0, 0xF0):
        assert _first(bytes([first]) + b"\x02\x00\x01") == mqtt.BAD_TYPE, hex(first)


def test_reserved_flags_and_qos_are_refused():
    assert _first(b"\x41\x02\x00\x01") == mqtt.BAD_TYPE  # PUBACK with flags
    assert _first(b"\x36\x05\x00\x01t\x00\x01") == mqtt.BAD_TYPE  # PUBLISH QoS 3
    assert _first(b"\x34\x05\x00\x01t\x00\x01") == mqtt.BAD_TYPE  # PUBLISH QoS 2


def test_remaining_length_over_four_bytes_is_refused():
    assert _first(b"\x30\xff\xff\xff\xff\x01") == mqtt.BAD_LENGTH
    assert _first(b"\x30\xff\xff\xff") == 0  # not yet known


def test_an_oversized_packet_is_refused_before_its_body_arrives():
    assert _first(b"\x30\x9c\x01", size=158) == mqtt.TOO_LARGE  # 3 + 156 > 158
    assert _first(b"\x30\x9c\x01", size=159) == 0  # fits: wait for it
    assert _first(b"\x30\xa0\x8d\x06") == mqtt.TOO_LARGE


def test_malformed_bodies_are_refused():
    assert _first(b"\x40\x03\x00\x01\x00") == mqtt.MALFORMED  # PUBACK of 3
    assert _first(b"\x20\x02\x02\x00") == mqtt.MALFORMED  # CONNACK reserved flag
    assert _first(b"\x20\x01\x00") == mqtt.MALFORMED
    assert _first(b"\xd0\x01\x00") == mqtt.MALFORMED  # PINGRESP with a body
    assert _first(b"\x90\x02\x00\x01") == mqtt.MALFORMED  # SUBACK without a code
    assert _first(b"\x32\x05\x00\x09abc") == mqtt.MALFORMED  # topic beyond the packet
    assert _first(b"\x30\x04\x00\x09ab") == mqtt.MALFORMED  # the same at QoS 0
    assert _first(b"\x32\x05\x00\x01t\x00\x00") == mqtt.MALFORMED  # QoS 1 with id 0
    assert _first(b"\x30\x01\x00") == mqtt.MALFORMED


def test_decimal_acks():
    b = b"0123456789 42 4294967295 4294967296 12a"
    assert mqtt.decimal(b, 0, 10) == 123456789
    assert mqtt.decimal(b, 11, 2) == 42
    assert mqtt.decimal(b, 14, 10) == 4294967295
    assert mqtt.decimal(b, 25, 10) == -1  # beyond a u32
    assert mqtt.decimal(b, 36, 3) == -1
    assert mqtt.decimal(b, 0, 0) == -1
    assert mqtt.decimal(b, 0, 11) == -1
    assert mqtt.same(b, 11, 2, b"42") and not mqtt.same(b, 11, 2, b"43")
    assert not mqtt.same(b, 11, 2, b"420")


def test_encoding_a_publish_and_parsing_an_ack_allocate_nothing():
    if not hasattr(gc, "mem_alloc"):
        return  # CPython: no heap counter (the MicroPython runs check it)
    topic = b"sicbo/S1/T01/journal"
    at = mqtt.room(topic)
    buf = bytearray(at + 1024)
    p = mqtt.Parser(160)
    ack = b"\x32\x19\x00\x10sicbo/S1/T01/ack\x00\x05" + b"12345" + b"\x40\x02\x00\x09"
    publish = mqtt.publish
    nxt = mqtt.next_pid
    pid = 1
    for _ in range(2):  # the second round is measured
        gc.collect()
        before = gc.mem_alloc()
        for _ in range(20):
            pid = nxt(pid)
            publish(buf, at, 500, topic, pid)
            for i in range(len(ack)):
                p.buf[p.have + i] = ack[i]
            p.have += len(ack)
            while p.next() > 0:
                mqtt.decimal(p.buf, p.payload, p.payload_len)
                p.drop()
        used = gc.mem_alloc() - before
    assert used == 0, used


def test_numbers_and_hex_are_written_in_place_as_their_text():
    buf = bytearray(16)
    for v in (0, 7, 9, 10, 99, 100, 65535, 4294967295, -1, -120):
        buf[:] = b"." * 16
        end = mqtt.put_decimal(buf, 2, v)
        assert bytes(buf[2:end]) == str(v).encode() and buf[end] == 46 and buf[1] == 46, v
    buf[:] = b"." * 16
    assert mqtt.put_hex(buf, 1, b"\x00\x09\x0a\xf0\xff") == 11
    assert bytes(buf) == b".00090af0ff....."
    assert mqtt.put(buf, 11, b"end") == 14 and bytes(buf[11:15]) == b"end."
