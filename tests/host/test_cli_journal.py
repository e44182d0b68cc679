"""`sicbo journal`: a journal written by the controller on the simulated
hardware, read back offline as compliance staff would."""

import json

from appkit import Table, reboot, table_dict

from host_tools.cli import main


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
