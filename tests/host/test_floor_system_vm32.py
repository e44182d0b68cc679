"""The whole table on the floor on the 32-bit VM at the board's heap (the
production image: the firmware frozen in), over the password listener (the
VM has no ssl), with a broker that misbehaves
once in the middle of a stream of rounds (floorsys.FaultProxy between the
board's network and the real mosquitto): garbage, a packet larger than any
the board takes, a packet cut short by the end of the connection, an
acknowledgement beyond what the table sent. The table plays on, the link
tells the protocol error once and connects again, the cursor never passes
what was sent, and the floor's store holds every record of the journal
exactly once, in order."""

import json
import threading

import pytest
from floorsys import (
    DEADLINE_S,
    FaultProxy,
    Site,
    Table,
    assert_one_down_per_outage,
    assert_store_matches,
    need_vm32,
    wait_delivered,
)

from floorkit import SITE, q, wait_for
from host_tools import heaps
from sicbo import records as R

L_PROTOCOL = 9
BAD_TYPE, TOO_LARGE, TRUNCATED = 1, 3, 5
CASES = {"garbage": BAD_TYPE, "oversized": TOO_LARGE, "truncated": TRUNCATED, "ack": None}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broker_that_misbehaves_once_mid_stream_on_the_32_bit_vm(tmp_path, case):
    exe = need_vm32(frozen=True)
    site = Site(tmp_path, [], plain=["T09"])
    proxy = FaultProxy(site.broker.port, SITE, "T09")
    table = Table(site, "T09", tmp_path / "T09", tls=False, command=[exe],
                  broker=("127.0.0.1", proxy.port), seed=5)
    try:
        assert table.vb.heap == str(heaps.BOARD_HEAP)  # the board's heap
        site.start_floor()
        table.start()
        table.play(2)
        wait_delivered(site, table)
        since = table.last_seq()
        with table.player() as p:
            p.wait_rounds(1)
            first = table.last_seq()
            proxy.arm(case, 999999)
            wait_for(lambda: proxy.fired, "the fault sent in a stream of rounds",
                     timeout=DEADLINE_S)
            beyond = []
            done = threading.Event()

            def watch():
                # the cursor the board saves never passes its journal: read
                # the cursor first, then the journal
                while not done.is_set():
                    c = table.cursor()
                    last = table.last_seq()
                    if c > last:
                        beyond.append((c, last))
                    done.wait(0.05)

            w = threading.Thread(target=watch, daemon=True)
            w.start()
            p.wait_rounds(3)
            done.set()
            w.join(30)
            last = table.last_seq()
        assert not beyond, beyond
        wait_delivered(site, table)
        assert_store_matches(site, table)
        assert table.cursor() == table.last_seq()
        # nor did the status it publishes ever say more acknowledged than it holds
        for (payload,) in q(site.db, "SELECT payload FROM status_log WHERE table_id='T09'"):
            st = json.loads(payload)
            if st.get("online"):
                assert st["acked"] <= st["seq"], st
        if CASES[case] is None:
            # an acknowledgement beyond what was sent is no protocol error
            assert_one_down_per_outage(table, [], since)
            assert proxy.connections == 1
        else:
            links = assert_one_down_per_outage(table, [(first, last)], since)
            down = [x for x in links if x[1] == R.LINK_DOWN][0]
            assert down[2:] == (L_PROTOCOL, CASES[case]), links
            assert proxy.connections >= 2  # and the table connected again
    finally:
        table.stop()
        proxy.stop()
        site.stop()
