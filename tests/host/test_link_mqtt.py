# The table's link (device/link) against a real mosquitto, run on CPython,
# the 64-bit MicroPython unix port and the 32-bit VM (plain TCP there: it
# has no ssl). The floor is a stand-in (linkrig.Floor) that stores each
# record once and acknowledges; the link runs in tests/host/link_driver.py.
import time

import pytest
from linkrig import Driver, Floor, Sniffer, interpreters, wait_for

from brokerkit import start_broker
from host_tools.simnet import NetRelay

L_DEAD = 7
PUBLISH = 3

ALL = pytest.mark.parametrize("which", interpreters())


@ALL
def test_every_record_published_with_qos1_is_stored_once_and_acknowledged(tmp_path, which):
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    try:
        st = Driver(which, str(tmp_path), port=b.port, count=300).wait()
        assert floor.seqs("T01") == list(range(1, 301))
        assert floor.dups == 0
        assert st["cursor"] == 300 and st["sent"] == 300 and st["failures"] == 0
        # batches of whole records up to 512 bytes: 14 records of 36 bytes
        assert st["published"] == 22
        assert all(len(m[3]) <= 512 for m in floor.journal_messages("T01"))
        # one write per packet (nothing was left for a second write)
        assert st["writes"] == st["packets"]
        # the status, retained at the connection
        assert floor.status("T01") and b'"online": true' in floor.status("T01")[0]
        assert st["alive_calls"] > 0
        with open(tmp_path / "cursor") as f:
            assert f.read().strip() == "300"  # persisted
    finally:
        floor.stop()
        b.stop()


@ALL
def test_packet_ids_wrap_from_65535_to_1_with_a_real_broker(tmp_path, which):
    # mosquitto drops a connection that uses packet id 0: a wrong wrap would
    # show as a failure and records sent again.
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    try:
        st = Driver(which, str(tmp_path), port=b.port, count=300, every_ms=5,
                    pid=65525).wait()
        assert floor.seqs("T01") == list(range(1, 301))
        assert st["failures"] == 0 and st["resent"] == 0
        assert st["published"] >= 15  # well past 65535
        assert 0 < st["pid"] < 100  # it wrapped to 1 and went on
        assert "Protocol error" not in b.log() and "protocol error" not in b.log()
    finally:
        floor.stop()
        b.stop()


@ALL
def test_broker_killed_and_restarted_mid_stream_nothing_lost(tmp_path, which):
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    try:
        d = Driver(which, str(tmp_path), port=b.port, count=400, every_ms=10, ack_wait_ms=2000,
                   timeout_ms=120000)
        wait_for(lambda: len(floor.seqs("T01")) >= 100, 60, "100 records stored")
        b.kill()  # kill -9: what it did not save is lost
        time.sleep(0.3)  # a broker that is away for a while (records go on)
        b.restart()
        st = d.wait(180)
        assert floor.seqs("T01") == list(range(1, 401))
        assert st["failures"] >= 1 and len(d.kinds("down")) == 1  # one outage, told once
        assert len(d.kinds("up")) == 2
        assert st["cursor"] == 400
    finally:
        floor.stop()
        b.stop()


@ALL
def test_in_flight_publishes_are_sent_again_with_dup_and_their_ids(tmp_path, which):
    # The broker stops answering (the relay holds everything): the window
    # fills with publishes that got no PUBACK. The broker is then killed and
    # restarted; after the reconnection those go again first, DUP set, under
    # the same packet ids, and nothing is lost.
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    sniff = Sniffer()
    relay = NetRelay("127.0.0.1", b.port, tap=sniff).start()
    try:
        d = Driver(which, str(tmp_path), port=relay.port, count=200, every_ms=20,
                   keepalive_s=30, window=4, batch=72, ack_wait_ms=3000, timeout_ms=120000)
        wait_for(lambda: len(floor.seqs("T01")) >= 20, 60, "20 records stored")
        relay.down("silent")

        def window_full():
            # No new publish for a second while records are journaled.
            n = len(sniff.of(PUBLISH))
            time.sleep(1.0)
            return n == len(sniff.of(PUBLISH)) and any(p[5] for p in sniff.of(PUBLISH))

        wait_for(window_full, 60, "the window to fill")
        b.kill()
        relay.down("reset")  # the connection is gone
        relay.up()
        b.restart()
        st = d.wait(180)
        # Journal publishes (QoS 1, not retained) of the first connection
        # whose PUBACK never reached the table, and of the next connections.
        first = [p for p in sniff.of(PUBLISH) if p[0] == 1 and not p[3] & 1]
        acked = {p[4] for p in sniff.of(4, "down") if p[0] == 1 and not p[5]}
        unacked = [p[4] for p in first if p[4] not in acked]
        later = [p for p in sniff.of(PUBLISH) if p[0] > 1 and not p[3] & 1]
        assert len(unacked) == 4  # the window
        assert not any(p[3] & 8 for p in first)
        # the first journal publishes of the next connection: DUP, same ids
        assert [p[4] for p in later[:4]] == unacked
        assert all(p[3] & 8 for p in later[:4])
        assert not any(p[3] & 8 for p in later[4:])
        assert st["resent"] == 4
        assert floor.seqs("T01") == list(range(1, 201))
    finally:
        relay.stop()
        floor.stop()
        b.stop()


@ALL
def test_a_silent_broker_is_found_dead_after_one_and_a_half_keepalives(tmp_path, which):
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    relay = NetRelay("127.0.0.1", b.port).start()
    try:
        d = Driver(which, str(tmp_path), port=relay.port, count=150, every_ms=20,
                   keepalive_s=2, connect_ms=3000, ack_wait_ms=3000, timeout_ms=120000)
        wait_for(lambda: len(floor.seqs("T01")) >= 10, 60, "10 records stored")
        t0 = time.monotonic()
        relay.down("silent")  # no byte passes, no connection closes
        down = wait_for(lambda: d.kinds("down"), 60, "the link to notice")
        silent_for = time.monotonic() - t0
        assert down[0]["code"] == L_DEAD
        assert silent_for >= 2.9  # 1.5 x keepalive, not sooner
        alive = len(d.kinds("down"))
        relay.up()
        st = d.wait(180)
        assert floor.seqs("T01") == list(range(1, 151))
        assert alive == 1 and len(d.kinds("down")) == 1
        assert st["alive_calls"] > 50  # the task went on while the broker was silent
    finally:
        relay.stop()
        floor.stop()
        b.stop()


@ALL
def test_a_floor_that_was_away_gets_everything_again_by_go_back(tmp_path, which):
    # Records the broker took (PUBACK) while no floor was subscribed are
    # lost to it: the ack does not move, the link goes back to the cursor.
    b = start_broker(tmp_path / "mq")
    try:
        d = Driver(which, str(tmp_path), port=b.port, count=50, ack_wait_ms=1500,
                   timeout_ms=120000)
        wait_for(lambda: d.kinds("up"), 60, "the link up")
        time.sleep(0.5)  # everything published to nobody
        floor = Floor(b.port, client_id="floor-late")
        try:
            st = d.wait(120)
            assert floor.seqs("T01") == list(range(1, 51))
            assert st["gobacks"] >= 1
            assert st["failures"] == 0
        finally:
            floor.stop()
    finally:
        b.stop()


def test_the_cursor_resumes_from_the_file_after_a_restart(tmp_path):
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    try:
        st = Driver("cpython", str(tmp_path), port=b.port, count=100).wait()
        assert st["cursor"] == 100
        n = len(floor.journal_messages("T01"))
        # A restart with a journal of 130: only 101..130 go.
        st = Driver("mp64", str(tmp_path), port=b.port, count=130).wait()
        assert st["cursor"] == 130
        again = floor.journal_messages("T01")[n:]
        from linkrig import split_records
        seqs = [s for m in again for s, _ in split_records(m[3])]
        assert seqs == list(range(101, 131))
        assert floor.dups == 0
    finally:
        floor.stop()
        b.stop()
