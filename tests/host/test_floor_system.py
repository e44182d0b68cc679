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
    SlowDownlink,
    Table,
    assert_one_down_per_outage,
    assert_store_matches,
    wait_delivered,
)

from floorkit import q, wait_for
from sicbo import records as R

L_NETWORK, L_SOCKET, L_CLOSED = 1, 3, 8
CUTS = 12
MAX_CUTS = 40  # cuts at most until one lands mid-publish
DOWNLINK_S = 0.15  # the board's network: broker -> board


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


def test_power_cuts_while_a_publish_is_in_flight(site, table):
    # The power is cut at random moments just after the board journaled a
    # record (its console line), with the network's way back to the board
    # DOWNLINK_S slow (SlowDownlink). A cut landed mid-publish when the floor
    # had received a record (its store's `received`, on this host's clock)
    # before the cut began, and less than DOWNLINK_S before the cut was
    # done: the floor's acknowledgement of it, published after it was
    # received, could not have reached the board when the power went.
    table.vb.network.tap = SlowDownlink(DOWNLINK_S)
    table.play(2)
    wait_delivered(site, table)
    since = table.last_seq()
    rng = random.Random(17)
    cuts = []  # (before, after, the journal's last seq at the cut)
    with table.player() as p:
        while len(cuts) < CUTS or (not _landed(site, cuts) and len(cuts) < MAX_CUTS):
            # the board up, its link up, a round played since: then the
            # next record it journals
            p.wait_rounds(1)
            c = table.console
            n = c.mark()[0]
            c.wait(lambda n=n, c=c: c.mark()[0] > n, DEADLINE_S)
            time.sleep(rng.uniform(0, 0.06))  # the moment of the cut
            cuts.append(table.power_cut())
            cut_at = cuts[-1][2]
            wait_for(lambda cut_at=cut_at: any(x[1] == R.LINK_UP for x in table.links(cut_at)),
                     "the link up after power cut %d" % len(cuts), timeout=DEADLINE_S)
        p.wait_rounds(2)
    wait_delivered(site, table)
    assert_store_matches(site, table)
    landed = _landed(site, cuts)
    assert landed, "none of %d power cuts landed while a publish was in flight: %s" % (
        len(cuts), cuts)
    # A power cut is no outage of the link: each boot says it up. A down
    # may come only as the network's own (a connection reset or closed by
    # the broker's side: on a busy host the relay's connection of the boot
    # before can take the new one with it), and each is followed by an up.
    links = table.links(since)
    downs = [x for x in links if x[1] == R.LINK_DOWN]
    assert all(d[2] in (L_SOCKET, L_CLOSED) for d in downs), links
    assert all(any(u[1] == R.LINK_UP and u[0] > d[0] for u in links) for d in downs), links
    ups = [x for x in links if x[1] == R.LINK_UP]
    assert len(cuts) <= len(ups) <= len(cuts) + len(downs), links
    # each boot resumed from the cursor it saved (at most every 2 s), never
    # from the start of the journal
    assert all(x[3] >= since for x in ups), ups
    print("power cuts: %d, of which %d while a publish was in flight (records %s); the floor "
          "received %d records twice; connections reset after a power-on: %d"
          % (len(cuts), len(landed), landed, site.floor_table("T01")["duplicates"], len(downs)))


def _landed(site, cuts):
    """[seq] of a record the floor received in the window of each cut that
    landed mid-publish (one per such cut)."""
    received = q(site.db, "SELECT seq, received FROM records WHERE table_id='T01'")
    out = []
    for before, after, last in cuts:
        inside = [s for s, t in received if s <= last and after - DOWNLINK_S < t < before]
        if inside:
            out.append(max(inside))
    return out


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
