"""`sicbo journal`: a journal written by the controller on the simulated
hardware, read back offline as compliance staff would."""

import json

import pytest
from appkit import Table, reboot, table_dict

from host_tools.cli import main
from sicbo import records as R


def played(tmp_path):
    t = Table()
    t.play(1, 1, 2)
    t.play(3, 3, 3)
    t.open_round()
    t.press("key_bell")
    t.set("cover", 0)
    t.run(60)
    t.press("key_void")
    t.press("key_face_1")  # stacked
    t.press("key_confirm")
    t.play(6, 5, 4)
    t.open_round()  # a round left open by a power cut
    t2 = reboot(t)
    t2.close()
    tf = tmp_path / "table.json"
    tf.write_text(json.dumps(table_dict()))
    return t.folder, str(tf)


def test_journal_recall_and_meters(tmp_path, capsys):
    folder, table = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    assert main(["journal", folder, "--table", table, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    recall = data["recall"]
    by_round = {r["round"]: r for r in recall}
    assert by_round[1]["dice"] == [1, 1, 2] and by_round[1]["status"] == "paid"
    assert {"area": "PAIR_1_2", "odds": 5} in by_round[1]["wins"]
    assert by_round[2]["dice"] == [3, 3, 3]
    assert all(w["area"] not in ("SMALL", "BIG") for w in by_round[2]["wins"])
    assert by_round[3]["void_reason"] == "stacked" and by_round[3]["wins"] == []
    assert by_round[4]["dice"] == [4, 5, 6] or by_round[4]["dice"] == [6, 5, 4]
    # Round 5 was open at the power cut; the table's resume policy voids it.
    assert by_round[5]["status"] == "void" and by_round[5]["void_reason"] == "power cut"
    m = data["meters"]
    assert m["rounds"] == 5 and m["paid"] == 3 and m["voids"] == 2
    assert data["boots"] == 2 and data["unreadable_bytes"] == 0


def test_journal_torn_tail_is_reported_not_used(tmp_path, capsys):
    folder, table = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    import os

    segs = sorted(n for n in os.listdir(folder) if n.endswith(".log"))
    last = os.path.join(folder, segs[-1])
    with open(last, "ab") as f:
        f.write(b"\xa5\x06\x24\x00garbage")  # a record cut short by a power cut
    assert main(["journal", folder, "--table", table]) == 0
    out = capsys.readouterr().out
    assert "not readable as records" in out and "never used" in out
    assert "meters:  rounds 5, paid 3, voids 2" in out


def test_journal_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(["journal", str(tmp_path / "nope.log")]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and err.count("\n") == 1


# ---- --json: every record with its fields ----------------------------------------


def test_json_lists_records_with_their_fields(tmp_path, capsys):
    folder, table = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    assert main(["journal", folder, "--table", table, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    recs = data["records_listed"]
    assert len(recs) == data["records"] and data["empty"] is False  # all, with --json
    assert [r["seq"] for r in recs] == sorted(r["seq"] for r in recs)
    for r in recs:
        for key in ("seq", "boot", "round", "type", "type_code", "wall", "ticks", "length",
                    "segment", "offset", "payload", "damage"):
            assert key in r, (key, r)
        assert r["damage"] is None
    by_type = {}
    for r in recs:
        by_type.setdefault(r["type"], []).append(r)
    assert by_type["boot"][0]["boot"] == 1 and by_type["boot"][-1]["boot"] == 2
    assert by_type["round"][0]["shaker"] == "solenoid"
    results = [(r["round"], r["dice"], r["source"]) for r in by_type["result"]]
    assert (1, [1, 1, 2], "dealer") in results and (2, [3, 3, 3], "dealer") in results
    voids = {r["round"]: r for r in by_type["void"]}
    assert voids[3]["reason"] == "stacked" and voids[3]["reason_code"] == 1
    assert voids[3]["policy"] in ("bets stay", "players choose")
    assert voids[5]["reason"] == "power cut"
    alarms = by_type["alarm"]
    assert alarms and all(isinstance(a["message"]["code"], int) and a["message"]["text"]
                          for a in alarms)


def test_json_records_n_and_zero(tmp_path, capsys):
    folder, table = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    assert main(["journal", folder, "--table", table, "--json", "--records", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["seq"] for r in data["records_listed"]] == [
        data["last_seq"] - 2, data["last_seq"] - 1, data["last_seq"]]
    assert main(["journal", folder, "--table", table, "--json", "--records", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["records_listed"] == []


def test_meters_checkpoint_and_correction_fields(tmp_path, capsys):
    from appkit import table_dict as td

    from sicbo import events as E
    from sicbo import journal, meters, settle
    from sicbo import records as R
    from sicbo.config import parse_table

    st = settle.SettlementTable(parse_table(td()))
    m = meters.Meters(st.channels)
    m.counts[0] = 7  # rounds
    m.wins[4] = 3
    data = (journal.encode(R.J_METERS, 1, 7, 1, 5, 0, m.payload())
            + journal.encode(R.J_ROUND, 2, 8, 1, 6, 86400, bytes(8))
            + journal.encode(R.J_CORRECTION, 3, 8, 1, 7, None, bytes((1, 2, 3, 4, 5, 6, 0, 0)))
            + journal.encode(R.J_HOLD, 4, 8, 1, 8, None, bytes((1, 2, 3, 1, 2, 4, 0, 0)))
            + journal.encode(R.J_CONFIG, 5, 8, 2, 9, None, bytes((0xAB, 1, 2, 3, 4, 0xCD, 0, 0)))
            + journal.encode(R.J_DIAG, 6, 8, 2, 9, None, bytes((E.D_BELL, 0, 0, 0, 0, 0, 0, 0)))
            + journal.encode(R.J_RESUME, 7, 8, 2, 9, None, bytes((E.ST_PAYING, E.ST_PAYING))
                             + bytes(6))
            + journal.encode(R.J_SUPERVISOR, 8, 8, 2, 9, None, bytes((1,)) + bytes(7))
            + journal.encode(R.J_REFUSED, 9, 8, 2, 9, None,
                             bytes((E.R_CLASP_OPEN, 1)) + bytes(6)))
    f = tmp_path / "j.log"
    f.write_bytes(data)
    tf = tmp_path / "table.json"
    tf.write_text(json.dumps(td()))
    assert main(["journal", str(f), "--table", str(tf), "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)["records_listed"]
    assert recs[0]["type"] == "meters" and recs[0]["meters"]["rounds"] == 7
    assert recs[0]["meters"]["wins"]["SMALL"] == 3
    assert recs[1]["wall"] == "2000-01-02T00:00:00Z" and recs[1]["wall_seconds"] == 86400
    assert recs[2]["old_dice"] == [1, 2, 3] and recs[2]["new_dice"] == [4, 5, 6]
    assert recs[2]["wall"] is None
    assert recs[3]["dealer_dice"] == [1, 2, 3] and recs[3]["reader_dice"] == [1, 2, 4]
    assert recs[4]["config_id"] == "ab01020304cd" and recs[4]["boot"] == 2
    assert recs[5]["test"] == "bell test"
    assert recs[6]["state"] == "paying" and recs[6]["found"] == "paying"
    assert recs[7]["key"] == "on"
    assert recs[8]["message"]["code"] == E.R_CLASP_OPEN and recs[8]["detail"] == 1
    assert "clasps" in recs[8]["message"]["text"]
    # Out of any round's order (a correction with no result...), most of these
    # are damage in context; their fields are listed all the same.
    assert recs[0]["damage"] is None and recs[1]["damage"] is None


# ---- An empty journal ----------------------------------------------------------------


def test_empty_journal_says_so(tmp_path, capsys):
    f = tmp_path / "empty.log"
    f.write_bytes(b"")
    assert main(["journal", str(f)]) == 0
    out = capsys.readouterr().out
    assert "the journal is empty" in out and "seq 1..0" not in out
    assert main(["journal", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["empty"] is True and data["records"] == 0 and data["records_listed"] == []
    assert data["recall"] == [] and data["damage"] == []


def test_an_empty_folder_is_an_empty_journal(tmp_path, capsys):
    # a board's /journal before its first record: empty, not an error
    d = tmp_path / "journal"
    d.mkdir()
    assert main(["journal", str(d)]) == 0
    out = capsys.readouterr().out
    assert "0 segments, 0 bytes, no records: the journal is empty" in out


def test_a_folder_without_segments_is_not_a_journal(tmp_path, capsys):
    d = tmp_path / "photos"
    d.mkdir()
    (d / "a.jpg").write_bytes(b"\xff\xd8")
    assert main(["journal", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "sicbo journal: not a journal: %s has no journal segments (j*.log)" % d


@pytest.mark.parametrize("content", [
    b'{"area": "SMALL", "stake": 500}\n' * 3,  # a JSON file
    b"\x00" * 40,  # zeros
    b"\xa5" + bytes(60),  # the magic byte, but a length no record has
])
def test_a_file_without_one_valid_record_is_not_a_journal(tmp_path, capsys, content):
    f = tmp_path / "wagers.json"
    f.write_bytes(content)
    for argv in (["journal", str(f)], ["journal", str(f), "--json"]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err.strip() == "sicbo journal: not a journal: %s has no valid record" % f


def test_a_first_record_torn_by_a_power_cut_is_an_empty_journal(tmp_path, capsys):
    from sicbo import journal

    rec = journal.encode(R.J_BOOT, 1, 0, 1, 5, None, bytes(8))
    f = tmp_path / "j00000001.log"
    f.write_bytes(rec[:20])  # the power went during its first write
    assert main(["journal", str(f)]) == 0
    out = capsys.readouterr().out
    assert "1 segment, 20 bytes, no records: the journal is empty (a first record torn" in out
    assert "20 bytes torn at the end of the segment" in out
    assert main(["journal", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["empty"] is True
    assert data["damage"] == [{"kind": "torn", "segment": str(f), "offset": 0, "bytes": 20}]


def test_codes_are_named_in_lines_and_json(tmp_path, capsys):
    from sicbo import journal

    recs = [journal.encode(R.J_BOOT, 1, 0, 1, 5, None, bytes((3, 0, 0, 0, 0, 0, 0, 0))),
            journal.encode(R.J_DIAG, 2, 0, 1, 6, None, bytes((2, 0, 0, 0, 0, 0, 0, 0))),
            journal.encode(R.J_FAULT, 3, 0, 1, 7, None, bytes((3, 1, 0, 0, 0, 0, 0, 0))),
            journal.encode(R.J_BOOT, 4, 0, 2, 5, 86400 + 3661, bytes((9, 0, 0, 0, 0, 0, 0, 0)))]
    f = tmp_path / "j.log"
    f.write_bytes(b"".join(recs))
    assert main(["journal", str(f), "--records", "-1"]) == 0
    out = capsys.readouterr().out
    assert "boot        after a watchdog reset" in out
    assert "diag        bell test" in out
    assert "fault       in stage 3 (hardware): MemoryError" in out
    # an unknown code stays a number; a wall time is given in full, in UTC
    assert "boot        after a reset cause 9 @2000-01-02T01:01:01Z" in out
    assert main(["journal", str(f), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["records_listed"]
    assert (listed[0]["reset"], listed[0]["reset_code"]) == ("watchdog reset", 3)
    assert (listed[1]["test"], listed[1]["test_code"]) == ("bell test", 2)
    assert {k: listed[2][k] for k in ("stage", "stage_code", "kind", "kind_code")} == {
        "stage": "hardware", "stage_code": 3, "kind": "MemoryError", "kind_code": 1}
    assert (listed[3]["reset"], listed[3]["reset_code"]) == (None, 9)


# ---- Damage as data, never a traceback ----------------------------------------------


def _rec(t, seq, rid, payload=bytes(8)):
    from sicbo import journal

    return journal.encode(t, seq, rid, 1, 1000 + seq, None, payload)


def _round(seq, rid, result):
    """The records of one round from J_ROUND to J_PAYOUT, result: its J_RESULT
    payload; seq: the first sequence number."""
    return [_rec(R.J_ROUND, seq, rid), _rec(R.J_OPEN, seq + 1, rid),
            _rec(R.J_BELL, seq + 2, rid), _rec(R.J_COVER_OFF, seq + 3, rid),
            _rec(R.J_RESULT, seq + 4, rid, result)]


def forged(tmp_path):
    """Three rounds, each with one CRC-valid record that its type does not
    allow: dice 0-7-6 (seq 6); a 28-byte J_RESULT, no payload (seq 13); a
    J_CORRECTION of 1-2-3 to 9-0-1 (seq 20). Then a good round of 6-6-6."""

    recs = [_rec(R.J_BOOT, 1, 0)]
    recs += _round(2, 1, bytes((0, 7, 6, 0, 0, 0, 0, 0))) + [_rec(R.J_PAYOUT, 7, 1)]
    recs += _round(8, 2, b"")[:4] + [_rec(R.J_RESULT, 12, 2, b""), _rec(R.J_PAYOUT, 13, 2)]
    recs += _round(14, 3, bytes((1, 2, 3, 0, 0, 0, 0, 0))) + [
        _rec(R.J_CORRECTION, 19, 3, bytes((1, 2, 3, 9, 0, 1, 0, 0))), _rec(R.J_PAYOUT, 20, 3)]
    recs += _round(21, 4, bytes((6, 6, 6, 0, 0, 0, 0, 0))) + [_rec(R.J_PAYOUT, 26, 4)]
    f = tmp_path / "forged.log"
    f.write_bytes(b"".join(recs))
    return str(f)


FORGED_SEQS = (6, 12, 19)


def test_forged_records_are_damage_in_text(tmp_path, capsys):
    f = forged(tmp_path)
    assert main(["journal", f, "--records", "-1"]) == 0
    out = capsys.readouterr().out
    assert "Traceback" not in out
    assert out.count("DAMAGED:") >= 3
    for seq in FORGED_SEQS:
        assert "record seq %d " % seq in out
    assert "meters:" in out


def test_forged_records_are_damage_in_json(tmp_path, capsys):
    f = forged(tmp_path)
    assert main(["journal", f, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    from sicbo import events as E

    bad = {d["seq"]: d for d in data["damage"] if d["kind"] == "record"}
    assert set(FORGED_SEQS) <= set(bad)
    assert all(d["code"] and d["reason"] for d in bad.values())
    assert bad[6]["code"] == E.BAD_DICE and bad[6]["type"] == "result"
    assert bad[12]["bytes"] == 28 and bad[12]["code"] == E.BAD_LENGTH
    assert bad[19]["type"] == "correction" and bad[19]["round"] == 3
    assert bad[19]["code"] == E.BAD_DICE
    recs = {r["seq"]: r for r in data["records_listed"]}
    assert recs[6]["dice"] == [0, 7, 6] and recs[6]["damage"]["code"] == E.BAD_DICE
    assert all(recs[s]["damage"] is None for s in range(21, 27))
    rounds = {r["round"]: r for r in data["recall"]}
    # Nothing is ever settled on a damaged record: rounds 1 and 2 have no
    # usable result; round 3 keeps at most its first result, 1-2-3.
    assert all(rounds[rid]["damaged"] for rid in (1, 2, 3))
    assert rounds[1]["wins"] == [] and rounds[2]["wins"] == []
    assert rounds[3]["dice"] in ([1, 2, 3], None)
    assert not rounds[4]["damaged"]
    assert {"area": "TRIPLE_6", "odds": 150} in rounds[4]["wins"]


def test_corrupt_stretch_between_records_is_located(tmp_path, capsys):
    folder, table = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    import os

    segs = sorted(n for n in os.listdir(folder) if n.endswith(".log"))
    first = os.path.join(folder, segs[0])
    raw = bytearray(open(first, "rb").read())
    raw[36 + 5] ^= 0xFF  # the second record's CRC no longer checks out
    open(first, "wb").write(bytes(raw))
    assert main(["journal", folder, "--table", table, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    corrupt = [d for d in data["damage"] if d["kind"] == "corrupt"]
    assert corrupt == [{"kind": "corrupt", "segment": first, "offset": 36, "bytes": 36}]
    assert data["unreadable_bytes"] == 36


# ---- The table file checked against the journal's configuration ---------------------


def test_the_board_and_table_files_are_checked_against_the_journals_configuration(
        tmp_path, capsys):
    # Winning areas come from the table file given: another one reads as if
    # the board had lit other areas, a dispute settled on the wrong table.
    folder, _table = played(tmp_path)
    capsys.readouterr()
    board, table = folder + "/board.json", folder + "/table.json"
    assert main(["journal", folder, "--table", table, "--board", board, "--json"]) == 0
    c = json.loads(capsys.readouterr().out)["configuration"]
    assert c["checked"] and c["files"] == c["journal"] and len(c["journal"]) == 12
    assert main(["journal", folder, "--table", table, "--board", board]) == 0
    assert "config:  %s, the board and table files given" % c["journal"] in (
        capsys.readouterr().out)
    # Without the board file: said not checked.
    assert main(["journal", folder, "--table", table]) == 0
    assert "not checked against it (--board FILE" in capsys.readouterr().out
    # The 2003 edition's table with the same board: refused, both ids named.
    from tables import table_dict as edition_table

    other = tmp_path / "t2003.json"
    other.write_text(json.dumps(edition_table(2003)))
    assert main(["journal", folder, "--table", str(other), "--board", board]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the journal's last configuration is %s" % c["journal"] in err
    assert "these files' it never names" in err


def test_a_table_file_whose_channels_the_meters_do_not_count_is_refused(tmp_path, capsys):
    from appkit import table_dict as td

    from sicbo import journal, meters, settle
    from sicbo.config import parse_table

    ident = bytes.fromhex("ab0102030405")
    st = settle.SettlementTable(parse_table(td()))
    m = meters.Meters(st.channels)
    tail = ident + bytes(6)  # the configuration in force: id, flags, wall
    data = (journal.encode(R.J_CONFIG, 1, 1, 1, 1, None, ident + bytes(2))
            + journal.encode(R.J_METERS, 2, 1, 1, 2, None, m.payload() + tail))
    f = tmp_path / "j.log"
    f.write_bytes(data)
    same = tmp_path / "t2004.json"
    same.write_text(json.dumps(td()))
    assert main(["journal", str(f), "--table", str(same), "--json"]) == 0
    c = json.loads(capsys.readouterr().out)["configuration"]
    assert c == {"journal": "ab0102030405", "files": None, "checked": False}
    from tables import table_dict as edition_table

    other = tmp_path / "t2003.json"
    other.write_text(json.dumps(edition_table(2003)))
    assert main(["journal", str(f), "--table", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "meters checkpoint seq 2" in err, err
    assert "counts %d" % st.channels in err and "not the table file it ran with" in err


def test_a_round_cut_by_a_reset_says_which_reset(tmp_path, capsys):
    t = Table()
    t.play(1, 1, 2)
    t.open_round()  # round 2, betting open: then a technician's machine.reset()
    reboot(t, hard_reset=True).close()
    tf = tmp_path / "table.json"
    tf.write_text(json.dumps(table_dict()))
    capsys.readouterr()
    assert main(["journal", t.folder, "--table", str(tf), "--json"]) == 0
    by_round = {r["round"]: r for r in json.loads(capsys.readouterr().out)["recall"]}
    # Voided as the resume policy says for a cut before the bell; the round
    # also says what cut it: the boot's reset cause, not a power cut.
    assert by_round[2]["void_reason"] == "power cut" and by_round[2]["restart"] == "hard reset"
    assert by_round[1]["restart"] is None
    assert main(["journal", t.folder, "--table", str(tf)]) == 0
    out = capsys.readouterr().out
    line = [ln for ln in out.splitlines() if ln.split()[:2] == ["2", "void"]]
    assert line and line[0].endswith(
        "void: power cut (the board restarted in this round: hard reset)"), out
    assert main(["journal", t.folder, "--table", str(tf), "--records", "20"]) == 0
    out = capsys.readouterr().out
    assert "round interrupted by a power cut or a reset before the bell" in out, out
