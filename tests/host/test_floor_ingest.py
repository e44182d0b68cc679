# What the floor makes of each message, without a broker: the service's own
# ingest (host_tools/floor/ingest.py) and store, fed journals that the
# firmware's round machine wrote (simtables.TableJournal). Every rule of
# docs/floor.md's delivery and store: once, in order, duplicates counted,
# conflicts kept, gaps waited for until declared final, what is not a record
# kept as evidence, damage flagged as the board's replay flags it, and a
# restart that rebuilds the same state from the store.
import json
import os
import re

import pytest

from host_tools import REPO
from host_tools.floor import ingest, site, store
from host_tools.floor.simtables import TableJournal
from host_tools.rules import DEFAULT_TABLE, load_table
from sicbo import board, journal
from sicbo import events as E
from sicbo import records as R
from sicbo.errors import ConfigError

SITE = "s1"
_CFG, TABLE = load_table(None)


class Rig:
    """A Floor and its store, fed message by message, one commit each."""

    def __init__(self, path):
        self.path = str(path)
        self.conn = store.open_rw(self.path)
        self.floor = ingest.Floor(SITE, TABLE, lookup=self._lookup)
        self.now = 1000.0

    def _lookup(self, tid, seq):
        row = self.conn.execute("SELECT raw FROM records WHERE table_id=? AND seq=?",
                                (tid, seq)).fetchone()
        return bytes(row[0]) if row else None

    def send(self, tid, payload, kind="journal"):
        self.now += 1
        out = ingest.Batch()
        self.floor.message("sicbo/%s/%s/%s" % (SITE, tid, kind), payload, self.now, out)
        self.floor.finish(out)
        store.write(self.conn, out, self.floor.feeds)
        return out

    def status(self, tid, **fields):
        d = {"online": True}
        d.update(fields)
        return self.send(tid, json.dumps(d).encode(), "status")

    def ack(self, tid):
        return self.floor.feeds[tid].contig

    def rows(self, tid):
        return self.conn.execute("SELECT seq, raw, checked FROM records WHERE table_id=?"
                                 " ORDER BY seq", (tid,)).fetchall()

    def table_row(self, tid):
        cur = self.conn.execute("SELECT * FROM tables WHERE table_id=?", (tid,))
        names = [c[0] for c in cur.description]
        return dict(zip(names, cur.fetchone(), strict=True))

    def q(self, sql, *args):
        return self.conn.execute(sql, args).fetchall()


def played(rounds, seed=1, **kw):
    j = TableJournal(seed, **kw)
    for _ in range(rounds):
        j.play_round()
    return j


def test_every_record_stored_once_in_order_with_its_bytes_and_acknowledged(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(12)
    for k in range(0, j.seq, 5):  # payloads of up to 5 records, back to back
        r.send("T1", b"".join(j.records[k:k + 5]))
    rows = r.rows("T1")
    assert [s for s, _raw, _c in rows] == list(range(1, j.seq + 1))
    assert [bytes(raw) for _s, raw, _c in rows] == j.records
    assert all(c == 0 for _s, _raw, c in rows)  # all applied by the replay
    assert r.ack("T1") == j.seq
    t = r.table_row("T1")
    assert (t["records"], t["last_seq"], t["acked"], t["duplicates"], t["damaged"]) == (
        j.seq, j.seq, j.seq, 0, 0)
    # The decoded columns are the record's header.
    seq, typ, rid = r.q("SELECT seq, type, round FROM records WHERE table_id='T1'"
                        " AND type=?", R.J_RESULT)[0]
    rec = journal.Record(j.records[seq - 1], 0)
    assert (typ, rid) == (rec.type, rec.round)


def test_rounds_are_the_recall_of_the_records(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(14)  # round 13 is a void (TableJournal.void_every)
    r.send("T1", b"".join(j.records))
    rounds = r.q("SELECT round, status, dice, total, void_reason FROM rounds"
                 " WHERE table_id='T1' ORDER BY round")
    assert [x[0] for x in rounds] == list(range(1, 15))
    assert rounds[12][1] == "void" and rounds[12][2] is None and rounds[12][4]
    results = [journal.Record(b, 0) for b in j.records]
    dice = [list(x.dice()) for x in results if x.type == R.J_RESULT]
    paid = [x for x in rounds if x[1] == "paid"]
    assert [json.loads(x[2]) for x in paid] == dice
    assert [x[3] for x in paid] == [sum(d) for d in dice]


def test_a_duplicate_is_counted_and_not_stored_twice(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(3)
    r.send("T1", b"".join(j.records[:10]))
    r.send("T1", b"".join(j.records[5:12]))  # 6..10 already stored, in the store
    r.send("T1", j.records[11] + j.records[11])  # 12 stored, then twice more
    assert len(r.rows("T1")) == 12
    t = r.table_row("T1")
    assert t["duplicates"] == 7 and t["conflicts"] == 0 and t["acked"] == 12


def test_the_same_seq_with_other_bytes_is_a_conflict_kept_as_evidence(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(2)
    r.send("T1", b"".join(j.records))
    rec = journal.Record(j.records[6], 0)  # the first result
    forged = journal.encode(R.J_RESULT, rec.seq, rec.round, rec.boot, rec.ticks, rec.wall,
                            bytes([6, 6, 6, 0, 0, 0, 0, 0]))
    assert forged != j.records[6]
    r.send("T1", forged)
    assert bytes(r.rows("T1")[6][1]) == j.records[6]  # the stored one stays
    assert r.table_row("T1")["conflicts"] == 1
    assert r.q("SELECT seq, raw FROM rejects WHERE table_id='T1'") == [(rec.seq, forged)]
    assert r.q("SELECT kind, seq FROM alarms WHERE table_id='T1'") == [("conflict", rec.seq)]


def test_a_gap_is_never_acknowledged_past_until_filled(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(4)
    r.send("T1", b"".join(j.records[:7]))
    out = r.send("T1", b"".join(j.records[10:]))  # 8, 9, 10 missing
    assert out.new_gaps == [("T1", 8, 10)]
    assert r.ack("T1") == 7
    t = r.table_row("T1")
    assert t["acked"] == 7 and t["open_gaps"] == 3 and t["last_seq"] == j.seq
    waiting = [s for s, _raw, c in r.rows("T1") if c is None]
    assert waiting == list(range(11, j.seq + 1))  # stored, not yet replayed
    r.send("T1", j.records[8])
    assert r.ack("T1") == 7  # 8 still missing
    r.send("T1", j.records[7] + j.records[9])
    assert r.ack("T1") == j.seq
    assert all(c == 0 for _s, _raw, c in r.rows("T1"))
    assert r.table_row("T1")["open_gaps"] == 0 and r.q("SELECT * FROM gaps") == []


def test_a_gap_the_table_declares_final_is_bridged_and_raised(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(6)
    r.send("T1", b"".join(j.records[:7]))
    r.send("T1", b"".join(j.records[12:20]))
    assert r.ack("T1") == 7
    # The status says the journal no longer holds 8..10 (rotation past the
    # budget): the floor may not bridge 11, 12, which the journal holds.
    r.status("T1", seq=j.seq, oldest=11)
    assert r.ack("T1") == 10
    assert r.q("SELECT first, last, reason FROM gaps") == [(8, 10, "oldest")]
    assert r.q("SELECT kind FROM alarms WHERE source='floor'") == [("gap",)]
    # A declared missing range is bridged up to the next record stored, no
    # further: 11 and 12 are bridged, 13..15 (stored, in the range) are replayed.
    r.status("T1", seq=j.seq, oldest=11, missing=[[11, 15]])
    assert r.ack("T1") == 20
    assert r.q("SELECT first, last, reason FROM gaps") == [(8, 10, "oldest"),
                                                           (11, 12, "missing")]
    t = r.table_row("T1")
    assert t["lost"] == 5 and t["records"] == 15 and t["open_gaps"] == 0
    # The records after the gap are replayed as after a gap, as the board
    # replays records missing from its journal: the result of round 2, whose
    # start and cover lifting are lost, is damage (BAD_STATE).
    rows = r.rows("T1")
    assert None not in [c for _s, _raw, c in rows]
    assert [c for _s, _raw, c in rows] == board_codes(rows)
    assert [(s, c) for s, _raw, c in rows if c] == [(13, E.BAD_STATE)]


def test_a_declaration_never_bridges_past_the_tables_last_record(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(1)
    r.send("T1", b"".join(j.records[:3]))
    r.status("T1", seq=3, oldest=10**6)  # a status that says more than the table holds
    assert r.ack("T1") == 3
    r.status("T1", oldest=10**6)  # without its seq: nothing bridged
    assert r.ack("T1") == 3


def test_a_late_record_in_a_closed_gap_is_stored_as_evidence_not_replayed(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(2)
    r.send("T1", b"".join(j.records[:3]))
    r.status("T1", seq=j.seq, oldest=6)
    r.send("T1", b"".join(j.records[5:]))
    assert r.ack("T1") == j.seq
    r.send("T1", j.records[3])  # seq 4 arrives after all
    assert r.q("SELECT checked FROM records WHERE table_id='T1' AND seq=4") == [(-1,)]
    assert r.table_row("T1")["late"] == 1


def test_what_is_not_a_record_is_rejected_and_kept_and_the_records_beside_it_stored(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(2)
    good = j.records
    bad_crc = bytearray(good[3])
    bad_crc[-1] ^= 0xFF
    r.send("T1", b"this is not a journal")
    r.send("T1", b"")
    r.send("T1", good[0] + good[1][:20])  # one whole record, one truncated
    r.send("T1", good[1] + bytes(bad_crc) + good[2])  # a bad CRC between two records
    r.send("T1", b"{not json", kind="status")
    rejects = r.q("SELECT reason, seq, offset, bytes, raw FROM rejects ORDER BY id")
    reasons = [x[0] for x in rejects]
    assert reasons == ["not a journal record (no record starts here)", "empty payload",
                       "truncated record (20 of its 36 bytes)", "bad CRC",
                       "status is not a JSON object"]
    assert rejects[0][4] == b"this is not a journal"
    assert rejects[2][4] == good[1][:20] and rejects[2][2] == 36
    assert rejects[3][4] == bytes(bad_crc)
    assert [s for s, _raw, _c in r.rows("T1")] == [1, 2, 3]
    t = r.table_row("T1")
    assert t["rejected"] == 5 and t["acked"] == 3
    assert len(r.q("SELECT * FROM alarms WHERE kind='rejected'")) == 5


def test_a_crc_valid_record_the_replay_calls_damage_is_stored_and_flagged(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(2)
    recs = j.records
    rec = journal.Record(recs[6], 0)
    assert rec.type == R.J_RESULT
    # CRC-valid, dice not 1..6: what the board's replay calls BAD_DICE.
    forged = journal.encode(R.J_RESULT, rec.seq, rec.round, rec.boot, rec.ticks, rec.wall,
                            bytes([0, 7, 6, 0, 0, 0, 0, 0]))
    r.send("T1", b"".join(recs[:6]) + forged + b"".join(recs[7:]))
    assert r.ack("T1") == j.seq  # stored: it is the table's record, as evidence
    checked = dict((s, c) for s, _raw, c in r.rows("T1"))
    # The payout of a round whose result was not applied is damage too.
    assert (checked[7], checked[8]) == (E.BAD_DICE, E.BAD_STATE)
    assert [s for s, c in checked.items() if c] == [7, 8]
    # The board's replay of the same journal finds the same.
    from sicbo.roundstate import RoundState

    rs = RoundState()
    data = b"".join(recs[:6]) + forged + b"".join(recs[7:])
    codes = []
    rs.scanner.walk(data, lambda b, o, gap: codes.append(rs.take(b, o, gap)))
    assert codes == [checked[s] for s in range(1, j.seq + 1)]
    assert r.table_row("T1")["damaged"] == 2
    assert r.q("SELECT kind, code, seq FROM alarms WHERE source='floor'") == [
        ("damaged", E.BAD_DICE, 7), ("damaged", E.BAD_STATE, 8)]
    assert r.q("SELECT damaged FROM rounds WHERE table_id='T1' AND round=1") == [(1,)]


def test_table_alarms_and_meters_checkpoints(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(25, tamper_every=10, checkpoint_every=25)
    r.send("T1", b"".join(j.records))
    kinds = r.q("SELECT kind, source, text FROM alarms ORDER BY id")
    assert [k for k, _s, _t in kinds] == ["alarm", "alarm"]  # rounds 10 and 20: tamper
    assert all(s == "table" and "alarm" in t for _k, s, t in kinds)
    rows = r.q("SELECT seq, checkpoint, counted, differs FROM meters")
    assert len(rows) == 1
    seq, cp, counted, differs = rows[0]
    assert journal.Record(j.records[seq - 1], 0).type == R.J_METERS
    cp = json.loads(cp)
    assert cp["rounds"] == 25 and json.loads(counted) == cp and differs == 0


def test_a_checkpoint_that_differs_from_the_records_is_an_alarm(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(5, checkpoint_every=0)
    # A checkpoint the machine wrote after its meters were altered.
    j.m.meters.counts[0] += 1
    from sicbo import meters

    cp = bytes(meters.checkpoint(j.m, j.now, None))
    r.send("T1", b"".join(j.records) + cp)
    assert r.q("SELECT differs FROM meters") == [(1,)]
    assert r.q("SELECT kind FROM alarms") == [("meters",)]


def test_a_table_of_another_layout_is_named_at_its_first_checkpoint(tmp_path):
    # The floor counts wins with its own table file (2004, the full layout);
    # a 2003 table's checkpoint counts fewer lamp channels: said so, since
    # the winning areas the floor shows for that table are not its own.
    cfg, table = load_table(os.path.join(os.path.dirname(DEFAULT_TABLE), "macau-2003.json"))
    floor_table = TABLE
    assert table.channels != floor_table.channels
    r = Rig(tmp_path / "f.db")
    j = played(6, cfg=cfg, table=table, checkpoint_every=5)
    r.send("T1", b"".join(j.records))
    texts = [t for t, in r.q("SELECT text FROM alarms WHERE kind='meters'")]
    assert len(texts) == 1, texts
    assert ("it counts %d lamp channels, the floor's table file %d: the table runs another "
            "layout" % (table.channels, floor_table.channels)) in texts[0]
    # The same table on a floor given its table file: no alarm.
    r2 = Rig(tmp_path / "g.db")
    r2.floor = ingest.Floor(SITE, table, lookup=r2._lookup)
    r2.send("T1", b"".join(j.records))
    assert r2.q("SELECT COUNT(*) FROM alarms WHERE kind='meters'") == [(0,)]
    assert r2.q("SELECT differs FROM meters") == [(0,)]


def test_status_fields_are_kept_for_the_floor_view(tmp_path):
    r = Rig(tmp_path / "f.db")
    r.status("T1", code="ab" * 32, config="0102030405ff", round=7, state="open", boot=3,
             seq=0, oldest=1, acked=0)
    t = r.table_row("T1")
    assert (t["online"], t["code"], t["config"], t["round"], t["state"], t["boot"]) == (
        1, "ab" * 32, "0102030405ff", 7, "open", 3)
    r.send("T1", b'{"online": false}', "status")
    t = r.table_row("T1")
    assert t["online"] == 0 and t["round"] == 7  # the last will keeps what was known
    assert len(r.q("SELECT * FROM status_log")) == 2


def test_a_topic_that_is_not_a_tables_is_rejected(tmp_path):
    r = Rig(tmp_path / "f.db")
    out = ingest.Batch()
    r.floor.message("sicbo/%s/bad id!/journal" % SITE, b"x", 1.0, out)
    r.floor.message("sicbo/other/T1/journal", b"x", 1.0, out)
    store.write(r.conn, out, r.floor.feeds)
    assert [x[0] for x in r.q("SELECT topic FROM rejects")] == [
        "sicbo/s1/bad id!/journal", "sicbo/other/T1/journal"]
    assert r.q("SELECT * FROM tables") == []


@pytest.mark.parametrize("name, reason", [
    ("floor", "the floor service's name, never a table's"),
    ("compliance", "the site's read-only account's name, never a table's")])
def test_the_names_the_acl_reserves_are_never_a_table(tmp_path, name, reason):
    # The ACL's table patterns give every name its own topics, the floor's
    # and the read-only account's too: records under sicbo/SITE/floor/ and
    # sicbo/SITE/compliance/ are refused and kept, and no such table appears
    # (its records, its status, its chain head).
    r = Rig(tmp_path / "f.db")
    j = played(1)
    for kind, payload in (("journal", j.records[0]), ("status", b'{"online": true}'),
                          ("head", b"1 00")):
        r.send(name, payload, kind)
    assert r.q("SELECT topic, reason FROM rejects") == [
        ("sicbo/%s/%s/%s" % (SITE, name, kind), reason) for kind in ("journal", "status", "head")]
    assert r.q("SELECT * FROM tables") == [] and r.q("SELECT * FROM records") == []
    assert name not in r.floor.feeds
    r.send("T1", j.records[0])  # a table beside it is taken
    assert [bytes(x[1]) for x in r.rows("T1")] == [j.records[0]]
    # The reserved names are exactly the ACL's users, and the firmware's
    # board file refuses each as a table's id with the host's words.
    assert sorted(site.RESERVED) == sorted(
        line.split()[1] for line in site.acl_text(SITE).splitlines() if line.startswith("user "))
    with open(os.path.join(REPO, "board_config", "boards", "virtual.json")) as f:
        bd = json.load(f)
    bd["floor"] = {"site": SITE, "table": name, "broker": "10.0.0.5"}
    with pytest.raises(ConfigError) as e:
        board.parse_board(bd)
    assert (e.value.field, e.value.message) == (
        "floor.table", "%r is %s name on the broker, never a table's" % (name, site.RESERVED[name]))


def test_a_restart_rebuilds_the_same_state_from_the_store(tmp_path):
    r = Rig(tmp_path / "f.db")
    j = played(30, checkpoint_every=10)
    recs = j.records
    rec = journal.Record(recs[20], 0)
    forged = journal.encode(rec.type, rec.seq, rec.round + 5, rec.boot, rec.ticks, rec.wall,
                            rec.payload)  # its round id wrong: BAD_ROUND
    r.send("T1", b"".join(recs[:20]) + forged + b"".join(recs[21:60]))
    r.status("T1", seq=j.seq, oldest=70)
    r.send("T1", b"".join(recs[69:100]) + b"".join(recs[110:]))  # 101..110 missing
    before = r.floor.feeds["T1"]
    damaged = before.replay.damaged
    assert before.contig == 100 and damaged >= 1 and before.damaged == damaged
    r2 = Rig(tmp_path / "f.db")
    out, differ = r2.floor.reload(r2.conn, 5000.0)
    assert differ == 0 and out.empty()
    f = r2.floor.feeds["T1"]
    assert f.contig == 100 and sorted(f.pending) == list(range(111, j.seq + 1))
    assert f.records == before.records and f.damaged == damaged and f.lost == 9
    # It goes on from there exactly as the first would have.
    r2.send("T1", b"".join(recs[100:110]))
    assert r2.ack("T1") == j.seq
    assert [s for s, _raw, _c in r2.rows("T1")] == list(range(1, 61)) + list(
        range(70, j.seq + 1))
    assert r2.table_row("T1")["damaged"] == damaged
    for name in ("state", "round", "seq", "open_seq", "damaged"):
        assert getattr(f.replay, name) == getattr(_replayed(r2.rows("T1")), name), name


def board_codes(rows):
    """What the board's replay (RoundState.take) says of these records, in
    sequence order, a gap wherever a sequence number is missing."""
    from sicbo.roundstate import RoundState

    rs = RoundState()
    prev = 0
    out = []
    for seq, raw, _c in rows:
        out.append(rs.take(bytes(raw), 0, seq != prev + 1))
        prev = seq
    return out


def _replayed(rows):
    from sicbo.roundstate import RoundState

    rs = RoundState()
    prev = 0
    for seq, raw, _c in rows:
        rs.take(bytes(raw), 0, seq != prev + 1)
        prev = seq
    return rs


def test_the_acl_of_the_contract_is_the_one_the_brokers_get():
    with open(site.__file__.replace("host_tools/floor/site.py", "docs/floor.md")) as f:
        doc = f.read()
    block = re.search(r"The\s+ACL\s+\(per\s+site\):\n\n```\n(.*?)```", doc, re.S).group(1)
    assert block == site.acl_text("SITE")
    assert "sicbo/s9/%u/journal" in site.acl_text("s9")


def test_a_round_cut_by_a_reset_says_which_on_the_floor(tmp_path):
    from appkit import Table, reboot

    from host_tools.floor import views

    t = Table()
    t.play(1, 1, 2)
    t.open_round()  # round 2, betting open: then machine.reset() (a technician's)
    reboot(t, hard_reset=True).close()
    data = b""
    for name in sorted(n for n in os.listdir(t.folder) if n.endswith(".log")):
        with open(os.path.join(t.folder, name), "rb") as f:
            data += f.read()
    r = Rig(tmp_path / "f.db")
    r.send("T1", data)
    info = {rid: json.loads(i) for rid, i in r.q("SELECT round, info FROM rounds"
                                                 " WHERE table_id='T1'")}
    assert info[2]["void_reason"] == "power cut" and info[2]["restart"] == "hard reset"
    assert info[1]["restart"] is None
    page = views.RoundView(r.conn, "T1", 2, _CFG, TABLE)
    assert page.void == "power cut" and page.restart == "hard reset"
    assert views.RoundView(r.conn, "T1", 1, _CFG, TABLE).restart is None
    # The round's page says it beside the void.
    from floorwebkit import get, start_view

    v = start_view(r.path)
    try:
        status, body, _h = get(v.url + "table/T1/round/2")
        _s1, body1, _h1 = get(v.url + "table/T1/round/1")
    finally:
        v.stop()
    assert status == 200 and 'id="void">VOID: power cut' in body, body
    assert '<b id="restart">the board restarted in this round: hard reset</b>' in body, body
    assert 'id="restart"' not in body1, body1
