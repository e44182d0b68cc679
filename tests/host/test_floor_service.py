# The floor service end to end: a real mosquitto with the site's ACL and
# passwords, the service in its own process, simulated tables publishing
# the journals the firmware's round machine wrote (docs/floor.md).
import json
import subprocess
import sys

from floorkit import (
    SITE,
    FloorProc,
    assert_every_record_once,
    broker_for,
    q,
    sim_tables,
    wait_for,
)
from host_tools import REPO
from sicbo import events as E
from sicbo import journal
from sicbo import records as R

IDS = ["T1", "T2", "T3", "T4", "T5"]


def _run(tmp_path, ids=IDS, **kw):
    b, pw = broker_for(tmp_path, ids)
    floor = FloorProc(tmp_path, b.port).start()
    sim = sim_tables(b.port, pw, ids, **kw).start()
    return b, floor, sim


def _stop(b, floor, sim):
    sim.stop()
    floor.stop()
    b.stop()


def test_every_record_of_every_table_is_stored_once_in_order_and_acknowledged(tmp_path):
    b, floor, sim = _run(tmp_path, batch=4)
    try:
        sim.play(15)
        wait_for(sim.all_acked, "every table's records acknowledged", alive=floor.dead)
        assert_every_record_once(floor.db, sim)
        for t in sim.tables:
            # The acknowledgement each table saw is its last record, and the
            # store says the same.
            assert t.last_ack == t.journal.seq
            assert q(floor.db, "SELECT acked, last_seq, open_gaps, damaged FROM tables"
                     " WHERE table_id=?", t.id) == [(t.journal.seq, t.journal.seq, 0, 0)]
        # The acknowledgement is retained: a table that connects later reads it.
        r = subprocess.run(["mosquitto_sub", "-p", str(b.port), "-u", "T1", "-P", "pw-T1",
                            "-t", "sicbo/%s/T1/ack" % SITE, "-C", "1", "-W", "30"],
                           capture_output=True, text=True, timeout=60)
        assert r.stdout.strip() == str(sim["T1"].journal.seq), r.stderr
        # The status each table published is its row.
        assert q(floor.db, "SELECT online, state, round FROM tables WHERE table_id='T2'") == [
            (1, "idle", 15)]
    finally:
        _stop(b, floor, sim)


def test_cli_lists_the_records_and_tables_it_holds(tmp_path):
    b, floor, sim = _run(tmp_path, ids=["T1", "T2"])
    try:
        sim.play(3)
        wait_for(sim.all_acked, "every table's records acknowledged", alive=floor.dead)
        cmd = [sys.executable, "-m", "host_tools", "floor"]
        r = subprocess.run(cmd + ["records", "--db", floor.db, "--table", "T2", "--from", "5",
                                  "--json"], capture_output=True, text=True, cwd=REPO,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        recs = json.loads(r.stdout)["records"]
        want = sim["T2"].journal.records[4:]
        assert [d["seq"] for d in recs] == list(range(5, len(want) + 5))
        assert [bytes.fromhex(d["raw"]) for d in recs] == want
        results = [d for d in recs if d["type"] == "result"]
        assert results and all(len(d["dice"]) == 3 and d["checked"] == "applied"
                               for d in results)
        assert {d["table"] for d in recs} == {"T2"}
        r = subprocess.run(cmd + ["tables", "--db", floor.db, "--json"], capture_output=True,
                           text=True, cwd=REPO, timeout=120)
        rows = json.loads(r.stdout)["tables"]
        assert [(d["table"], d["acked"]) for d in rows] == [
            (t.id, t.journal.seq) for t in sim.tables]
        r = subprocess.run(cmd + ["tables", "--db", floor.db], capture_output=True, text=True,
                           cwd=REPO, timeout=120)
        assert r.returncode == 0 and r.stdout.splitlines()[1].startswith("T1")
        r = subprocess.run(cmd + ["records", "--db", str(tmp_path / "none.db")],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no floor store" in r.stderr
    finally:
        _stop(b, floor, sim)


def test_a_duplicate_publish_is_counted_and_not_stored_twice(tmp_path):
    b, floor, sim = _run(tmp_path, ids=["T1"], resend_s=600)
    try:
        sim.play(2)
        wait_for(sim.all_acked, "T1's records acknowledged", alive=floor.dead)
        t = sim["T1"]
        with sim.lock:
            t.send_raw(t.journal.records[3])
            t.send_raw(b"".join(t.journal.records[5:8]))
        sim.play(1)  # after the duplicates, on the same topic: their sentinel
        wait_for(sim.all_acked, "the next round acknowledged", alive=floor.dead)
        assert_every_record_once(floor.db, sim)
        assert q(floor.db, "SELECT duplicates, conflicts FROM tables") == [(4, 0)]
    finally:
        _stop(b, floor, sim)


def test_a_gap_is_never_acknowledged_past_until_the_table_declares_it_final(tmp_path):
    b, floor, sim = _run(tmp_path, ids=["T1"], resend_s=0.5)
    try:
        t = sim["T1"]
        with sim.lock:
            t.lost = {10}  # never sent, however often the table goes back
        sim.play(6)
        last = t.journal.seq
        wait_for(lambda: q(floor.db, "SELECT last_seq, acked FROM tables") == [(last, 9)],
                 "records after the gap stored, acknowledged up to 9", alive=floor.dead)
        # The table went back to its cursor (go-back-N) and sent again, still
        # without 10: the acknowledgement stays below the gap.
        n = t.publishes
        wait_for(lambda: t.publishes > n + 2, "the table sending again from its cursor")
        assert t.cursor == 9 and t.last_ack == 9
        assert q(floor.db, "SELECT open_gaps FROM tables") == [(1,)]
        assert "T1: records 10..10 missing" in floor.log()
        with sim.lock:
            t.declare_lost([10])  # its journal lost it (status: missing)
        wait_for(lambda: t.cursor == last, "acknowledged to the last record", alive=floor.dead)
        assert q(floor.db, "SELECT first, last, reason FROM gaps") == [(10, 10, "missing")]
        # The link gap is raised; the rest of the round whose record is lost
        # is damage, as on the board.
        kinds = [k for k, in q(floor.db, "SELECT kind FROM alarms WHERE source='floor'")]
        assert kinds[0] == "gap" and set(kinds[1:]) <= {"damaged"}
        assert q(floor.db, "SELECT COUNT(*), MIN(seq), MAX(seq) FROM records") == [
            (last - 1, 1, last)]
    finally:
        _stop(b, floor, sim)


def test_garbage_truncated_bad_crc_and_damage_are_kept_as_the_contract_says(tmp_path):
    b, floor, sim = _run(tmp_path, ids=["T1"], resend_s=600)
    try:
        sim.play(1)
        wait_for(sim.all_acked, "T1's first round acknowledged", alive=floor.dead)
        t = sim["T1"]
        with sim.lock:
            recs = t.journal.records
            bad_crc = bytearray(recs[2])
            bad_crc[10] ^= 0x55
            t.send_raw(b"\x00garbage\xff" * 50)
            t.send_raw(recs[-1][:30])
            t.send_raw(bytes(bad_crc))
            # A CRC-valid record the board's replay calls damage (dice 0, 7, 6),
            # in the table's journal as the next record.
            m = t.journal.m
            forged = journal.encode(R.J_RESULT, m.seq + 1, m.round, m.boot, 0, None,
                                    bytes([0, 7, 6, 0, 0, 0, 0, 0]))
            assert t.journal.inject(forged) == E.BAD_DICE
        sim.play(2)
        wait_for(sim.all_acked, "the rounds after them acknowledged", alive=floor.dead)
        assert floor.dead() is None  # never a crash
        assert_every_record_once(floor.db, sim)
        reasons = [r[0] for r in q(floor.db, "SELECT reason FROM rejects ORDER BY id")]
        assert reasons == ["not a journal record (no record starts here)",
                           "truncated record (30 of its 36 bytes)", "bad CRC"]
        assert q(floor.db, "SELECT raw FROM rejects WHERE reason='bad CRC'") == [
            (bytes(bad_crc),)]
        seq = journal.Record(forged, 0).seq
        assert q(floor.db, "SELECT checked FROM records WHERE seq=?", seq) == [(E.BAD_DICE,)]
        assert q(floor.db, "SELECT rejected, damaged FROM tables") == [(3, 1)]
        kinds = [r[0] for r in q(floor.db, "SELECT kind FROM alarms ORDER BY id")]
        assert kinds == ["rejected", "rejected", "rejected", "damaged"]
    finally:
        _stop(b, floor, sim)


def test_a_table_cannot_publish_as_another(tmp_path):
    b, floor, sim = _run(tmp_path, ids=["T1", "T2"], resend_s=600)
    try:
        sim.play(1, tables=["T1"])
        wait_for(lambda: sim["T1"].all_acked(), "T1 acknowledged", alive=floor.dead)
        t1 = sim["T1"]
        with sim.lock:
            rec = t1.journal.records[0]
            t1.client.publish("sicbo/%s/T2/journal" % SITE, rec, qos=1)
            t1.client.publish("sicbo/%s/T2/status" % SITE, b'{"online": true}', qos=1)
            t1.client.publish("sicbo/%s/T2/ack" % SITE, b"999", qos=1, retain=True)
        sim.play(1, tables=["T1"])  # after them, on T1's own topic
        wait_for(lambda: sim["T1"].all_acked(), "T1's next round acknowledged",
                 alive=floor.dead)
        assert q(floor.db, "SELECT COUNT(*) FROM records WHERE table_id='T2'") == [
            (sim["T2"].journal.seq,)]  # only T2's own
        assert sim["T2"].last_ack in (None, sim["T2"].journal.seq)
        assert "999" not in [str(sim["T2"].last_ack)]
    finally:
        _stop(b, floor, sim)
