"""Technician access on the floor, without a broker: each access record a
table journals (records.ACCESS) is stored once as any record, raised as an
alarm of kind `access` named as `sicbo journal` names it, listed by `sicbo
floor access` (text and --json, the record's fields by name), and the
rounds around it are drawn as ever."""

import json
import struct

from host_tools.cli import main
from host_tools.floor import ingest, store
from host_tools.floor.simtables import TableJournal
from host_tools.rules import load_table
from sicbo import events as E
from sicbo import records as R

_CFG, TABLE = load_table(None)


def _access(j):
    """One record of each access type, after the table's last record."""
    w = 840000000
    deploy = bytearray(R.DEPLOY_HEAD)
    deploy[R.P_DEPLOY_KIND] = R.CODE_FILES
    deploy[R.P_DEPLOY_COPIED] = 2
    deploy[R.P_DEPLOY_CODE:R.P_DEPLOY_CODE + 8] = bytes(range(1, 9))
    verify = bytearray(R.VERIFY_HEAD)
    verify[R.P_VERIFY_KIND] = R.CHECK_FILES
    verify[R.P_VERIFY_ITEMS] = 45
    for t, payload in (
            (R.J_REPL, bytes((R.STOP_RUNNING, 0, 0, 0, 0, 0, 0, 0))),
            (R.J_CLOCK, struct.pack("<II", w, w + 60)),
            (R.J_DIAG, bytes((E.D_BELL, 0, 0, 0, 0, 0, 0, 0))),
            (R.J_DEPLOY, bytes(deploy) + b"+main.py\n+sicbo/settle.mpy"),
            (R.J_VERIFY, bytes(verify) + b"inspector 7"),
            (R.J_CLOCK_MOVED, struct.pack("<II", w + 600, w)),
            (R.J_RECOVERY, bytes((1, 0, 0, 0, 0, 0, 0, 0))),
            # as a provisioning's record is laid out (the floor here holds
            # no key store: its MAC chain is tests/host/test_chain*'s part)
            (R.J_PROVISION, struct.pack("<II", 7, 0))):
        j.records.append(j.m.encode_next(t, payload, j.now, j._wall()))
    return len(R.ACCESS)


def test_the_floor_raises_and_lists_every_access(tmp_path, capsys):
    j = TableJournal(3)
    j.play_round()
    n = _access(j)
    j.play_round()  # the table plays on after them
    db = str(tmp_path / "floor.db")
    conn = store.open_rw(db)
    floor = ingest.Floor("s1", TABLE)
    out = ingest.Batch()
    floor.message("sicbo/s1/T1/journal", b"".join(j.records), 1000.0, out)
    floor.finish(out)
    store.write(conn, out, floor.feeds)
    rows = conn.execute("SELECT source, kind, text FROM alarms WHERE kind='access' ORDER BY seq"
                        ).fetchall()
    assert len(rows) == n and all(s == "table" for s, _k, _t in rows)
    texts = [t for _s, _k, t in rows]
    assert "repl        app stopped: table running" in texts[0]
    assert "diag        bell test" in texts[2]
    assert "deploy      deployed files 0102030405060708" in texts[3]
    assert "+main.py +sicbo/settle.mpy" in texts[3]
    assert "by inspector 7" in texts[4]
    assert "recovery    confirm key held at power-on" in texts[6]
    assert "provision" in texts[7]
    assert conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0] == 2
    assert conn.execute("SELECT COUNT(*) FROM records WHERE checked != 0").fetchone()[0] == 0
    conn.close()
    assert main(["floor", "access", "--db", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["access"]
    assert [x["type"] for x in listed] == ["repl", "clock", "diag", "deploy", "verify",
                                           "clock_moved", "recovery", "provision"]
    assert listed[7]["chain"] == 7 and listed[7]["previous"] == 0
    assert listed[1]["new_seconds"] - listed[1]["old_seconds"] == 60
    assert listed[3]["files"] == {"copied": ["main.py", "sicbo/settle.mpy"], "removed": []}
    assert listed[4]["by"] == "inspector 7" and listed[4]["items"] == 45
    assert listed[6]["reset"] == "power-on"
    assert main(["floor", "access", "--db", db, "--table", "T9"]) == 0
    assert capsys.readouterr().out.strip() == "no access by table T9"
