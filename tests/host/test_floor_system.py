"""The whole table on the floor through its faults: the real firmware on the
64-bit virtual board over TLS with the table's own client certificate,
deployed with sicbo deploy --secrets, the real mosquitto, the real floor
service (tests/host/floorsys.py). After each fault the floor's store holds
every record of the table's journal exactly once, in order, with no gap the
board's own journal does not have; the table played on through the fault;
its J_LINK records say each outage once."""

import random
import time

import pytest
from floorsys import (
    DEADLINE_S,
    Site,
    Table,
    assert_one_down_per_outage,
    assert_store_matches,
    wait_delivered,
)

from floorkit import wait_for
from sicbo import records as R

L_NETWORK, L_SOCKET, L_CLOSED = 1, 3, 8
CUTS = 12


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, ["T01"])
    s.start_floor()
    yield s
    s.stop()


@pytest.fixture
def table(site, tmp_path):
    t = Table(site, "T01", tmp_path / "T01", seed=3)
    try:
        t.start()
        yield t
    finally:
        t.stop()


def test_the_tables_network_dropped_for_50_rounds_and_restored(site, table):
    table.play(3)
    wait_delivered(site, table)
    since = table.last_seq()
    with table.player() as p:
        p.wait_rounds(2)
        r = table.vb.table.handle({"op": "network_down"})
        assert r["ok"] and r["connections"] == 1, r
        first = table.last_seq()
        paid = len(table.rounds_paid())
        p.wait_rounds(50, "50 rounds with the network down")
        # the table played on: 50 rounds settled while the floor saw nothing new
        assert len(table.rounds_paid()) >= paid + 50
        acked = site.acked("T01")
        assert acked <= first + 2, (acked, first)
        last = table.last_seq()
        assert table.vb.table.handle({"op": "network_up"})["ok"]
        p.wait_rounds(2)
    wait_delivered(site, table, "the backlog of 50 rounds stored")
    assert_store_matches(site, table)
    links = assert_one_down_per_outage(table, [(first, last)], since)
    down = [x for x in links if x[1] == R.LINK_DOWN][0]
    assert down[2] == L_NETWORK, links  # the Wi-Fi, as the station says


def test_the_broker_killed_and_restarted_in_the_middle_of_a_stream(site, table):
    table.play(2)
    wait_delivered(site, table)
    since = table.last_seq()
    with table.player() as p:
        p.wait_rounds(3)
        first = table.last_seq()
        site.broker.kill()  # kill -9: what it had not saved is lost
        p.wait_rounds(3, "rounds while the broker is down")
        site.broker.restart()
        p.wait_rounds(2)
        last = table.last_seq()
        wait_for(lambda: site.acked("T01") > last, "the floor stores again",
                 timeout=DEADLINE_S)
        p.wait_rounds(2)
    wait_delivered(site, table)
    assert_store_matches(site, table)
    links = assert_one_down_per_outage(table, [(first, last)], since)
    down = [x for x in links if x[1] == R.LINK_DOWN][0]
    assert down[2] in (L_SOCKET, L_CLOSED), links


class Traffic:
    """The board's network relay's tap: when the board last sent bytes
    towards the broker (TLS: only that something went)."""

    def __init__(self):
        self.up = 0.0

    def __call__(self, number, way, data, held):
        if way == "up" and not held:
            self.up = time.monotonic()


def test_power_cuts_while_a_publish_is_in_flight(site, table):
    # The power is cut at random moments just after the board journaled a
    # record (its console line): a cut "lands mid-publish" when the board
    # had sent bytes to the broker since that record and the floor had not
    # yet stored it (its acknowledgement below the journal's last record,
    # read back after the cut).
    traffic = Traffic()
    table.vb.network.tap = traffic
    table.play(2)
    wait_delivered(site, table)
    since = table.last_seq()
    rng = random.Random(17)
    cuts = landed = 0
    with table.player() as p:
        while cuts < CUTS:
            # the board up, its link up, a round played since: then the
            # next record it journals
            p.wait_rounds(1)
            c = table.console
            n = c.mark()[0]
            c.wait(lambda n=n, c=c: c.mark()[0] > n, DEADLINE_S)
            seen = time.monotonic()
            time.sleep(rng.uniform(0, 0.06))  # the moment of the cut
            acked = site.acked("T01")
            sent = traffic.up > seen
            cut_at = table.last_seq()
            table.power_cut()
            cuts += 1
            if sent and table.last_seq() > acked:
                landed += 1
            wait_for(lambda cut_at=cut_at: any(x[1] == R.LINK_UP for x in table.links(cut_at)),
                     "the link up after power cut %d" % cuts, timeout=DEADLINE_S)
        p.wait_rounds(2)
    assert landed, "none of %d power cuts landed while a publish was in flight" % cuts
    wait_delivered(site, table)
    assert_store_matches(site, table)
    # a power cut is no outage of the link: each boot says it up, none down
    links = assert_one_down_per_outage(table, [], since)
    ups = [x for x in links if x[1] == R.LINK_UP]
    assert len(ups) == cuts, links
    # each boot resumed from the cursor it saved (at most every 2 s), never
    # from the start of the journal
    assert all(x[3] >= since for x in ups), ups
    print("power cuts: %d, of which %d while a publish was in flight" % (cuts, landed))


def test_the_floor_service_killed_and_restarted(site, table):
    table.play(2)
    wait_delivered(site, table)
    since = table.last_seq()
    dups = site.floor_table("T01")["duplicates"]
    with table.player() as p:
        p.wait_rounds(2)
        site.floor.kill()  # kill -9: what it had not committed is delivered again
        first = table.last_seq()
        p.wait_rounds(5, "rounds while the floor service is down")
        assert site.acked("T01") <= first
        site.floor.start()  # the same store, the same persistent session
        wait_for(lambda: site.acked("T01") > first, "the floor stores again",
                 timeout=DEADLINE_S, alive=site.floor.dead)
        p.wait_rounds(2)
    wait_delivered(site, table)
    assert_store_matches(site, table)
    # the link itself never went down: the broker was there all along
    assert_one_down_per_outage(table, [], since)
    assert site.floor_table("T01")["duplicates"] >= dups
