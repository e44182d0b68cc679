"""Technician access journaled on the virtual board running the whole app,
through the real mpremote and the sicbo commands: a deploy (the clock set,
the files changed, the code hash, the configuration id), the app stopped
into the REPL by mpremote, every diag test by its name with the clock set
it rides on, the clock set back by hand (found at boot), recovery mode; each
a record of its own, named by `sicbo journal` (text and --json) and listed by
the floor (`sicbo floor access`)."""

import json
import os
import subprocess
import sys
import time

import pytest

from host_tools import REPO
from host_tools import deploy as dp
from host_tools.cli import main
from host_tools.mprun import CONTROLLER_HEAP
from host_tools.simclient import TableClient
from host_tools.vboard import VirtualBoard
from sicbo import records as R

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
HEAP = os.environ.get("SICBO_VBOARD_HEAP", CONTROLLER_HEAP)
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")


def wait_app(client, frames_before, timeout=30):
    """The app has booted: the lamps latched the adapter's all-off frame and
    the controller's (tests/host/test_system.py's rule)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.lamps()["frames"] >= frames_before + 2:
            return
        time.sleep(0.05)
    raise AssertionError("the app did not start (no lamp frame)")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    vb = VirtualBoard(str(tmp_path_factory.mktemp("vb-access")), board=BOARD, heap=HEAP)
    vb.start()
    try:
        with TableClient(vb.control) as client:
            frames = client.lamps()["frames"]
            report = dp.deploy(vb.port, BOARD, TABLE)
            wait_app(client, frames)
            yield vb, client, report
    finally:
        vb.stop()


def journal(vb, capsys):
    """`sicbo journal --json` of the board's journal folder: its records."""
    assert main(["journal", os.path.join(vb.fs, "journal"), "--table", TABLE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert not [d for d in data["damage"] if d["kind"] == "record"], data["damage"]
    return data["records_listed"]


def text(vb, capsys, n=12):
    assert main(["journal", os.path.join(vb.fs, "journal"), "--records", str(n)]) == 0
    return capsys.readouterr().out


def since(records, seq):
    return [r for r in records if r["seq"] > seq]


def test_a_deploy_is_journaled_with_its_clock_files_code_and_configuration(table, capsys):
    vb, _client, report = table
    recs = journal(vb, capsys)
    types = [r["type"] for r in recs]
    # The deploy when its manifest committed, then the clock set with the reset.
    assert types[:3] == ["deploy", "clock", "boot"], types
    dep, clock = recs[0], recs[1]
    assert clock["old"] is None and clock["new"] == clock["wall"]  # a new board: never set
    assert dep["wall"] is None  # nor at the commit
    assert dep["kind"] == "deployed files" and dep["code"] == report.code[:16]
    with open(BOARD) as f, open(TABLE) as g:
        assert dep["config_id"] == dp.config_cache_id(f.read(), g.read())
    # As many files as fit one record, in the deploy's order; the counts whole
    # and the cut flagged (a first deploy of the whole firmware does not fit).
    listed = dep["files"]["copied"]
    room = R.MAX_LEN - R.MIN_LEN - R.MAC_LEN - R.DEPLOY_HEAD
    used = sum(len(n) + 1 for n in listed) + len(listed) - 1
    assert listed == report.copied[:len(listed)] and used <= room
    if len(listed) < len(report.copied):
        assert dep["cut_short"] == 1 and used + 2 + len(report.copied[len(listed)]) > room
    else:
        assert dep["cut_short"] == 0
    assert dep["copied"] == len(report.copied) and dep["files"]["removed"] == []
    assert report.journaled == [(True, "deploy")]
    out = text(vb, capsys, 40)
    assert "deploy      deployed files %s" % report.code[:16] in out, out


def test_mpremote_stops_the_app_into_the_repl_and_it_is_journaled(table, capsys):
    vb, client, _report = table
    last = journal(vb, capsys)[-1]["seq"]
    frames = client.lamps()["frames"]
    r = subprocess.run([MPREMOTE, "connect", vb.port, "exec", "print('at the REPL')"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "at the REPL" in r.stdout
    new = since(journal(vb, capsys), last)
    assert [x["type"] for x in new] == ["repl"], new
    assert new[0]["while"] == "table running" and new[0]["wall"] is not None
    assert "repl        app stopped: table running" in text(vb, capsys, 1)
    subprocess.run([MPREMOTE, "connect", vb.port, "reset"], capture_output=True, timeout=60)
    wait_app(client, frames)


def test_every_diag_test_is_journaled_by_name_with_its_clock_set(table, capsys):
    vb, client, _report = table
    client.cover_on()
    client.fasten_clasps()
    time.sleep(0.2)
    for what in ("sensors", "bell"):
        last = journal(vb, capsys)[-1]["seq"]
        frames = client.lamps()["frames"]
        assert main(["diag", "--port", vb.port, what]) == 0
        capsys.readouterr()
        wait_app(client, frames)
        new = since(journal(vb, capsys), last)
        assert [x["type"] for x in new][:4] == ["repl", "clock", "diag", "boot"], new
        test = new[2]
        assert test["test"] == {"sensors": "sensors read", "bell": "bell test"}[what]
        assert new[1]["old"] is not None and new[1]["new"] is not None
        # after the app's own records, in its segment: no file of their own
        assert new[0]["segment"] == new[1]["segment"] == new[2]["segment"]
        assert new[3]["segment"] != new[2]["segment"]  # the next boot's
    out = text(vb, capsys, 8)
    assert "diag        sensors read" in out and "diag        bell test" in out, out
    client.cover_off()
    client.open_clasps()


def test_a_code_check_is_journaled_and_the_table_resumes(table, capsys):
    vb, client, _report = table
    last = journal(vb, capsys)[-1]["seq"]
    frames = client.lamps()["frames"]
    assert main(["verify", "--port", vb.port, "--seed", "5eed" * 8, "--by", "inspector"]) == 0
    out = capsys.readouterr().out
    assert "MATCH: the board runs the approved release" in out, out
    assert "board reset: the table runs" in out, out
    wait_app(client, frames)
    new = since(journal(vb, capsys), last)
    assert [x["type"] for x in new][:3] == ["repl", "verify", "boot"], new
    assert new[1]["seed"] == "5eed" * 3 and new[1]["by"] == "inspector"
    assert "verify      code files, " in text(vb, capsys, 12)


def test_the_clock_set_back_by_hand_is_found_at_boot(table, capsys):
    vb, client, _report = table
    recs = journal(vb, capsys)
    last, seen = recs[-1]["seq"], recs[-1]["wall_seconds"]
    frames = client.lamps()["frames"]
    # Back by hand (not through the firmware), to after the approval's effective date.
    r = subprocess.run([MPREMOTE, "connect", vb.port, "exec",
                        "import machine; machine.RTC().datetime((2026, 11, 20, 4, 12, 0, 0, 0))",
                        "+", "reset"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    wait_app(client, frames)
    new = since(journal(vb, capsys), last)
    moved = [x for x in new if x["type"] == "clock_moved"]
    assert len(moved) == 1, new
    assert moved[0]["last"] is not None and moved[0]["last_seconds"] >= seen
    assert moved[0]["now_seconds"] < moved[0]["last_seconds"] - 3600
    assert "clock_moved journal's last" in text(vb, capsys, 3)
    # Set right again through the firmware: journaled as a clock set, no move.
    last = new[-1]["seq"]
    frames = client.lamps()["frames"]
    assert main(["diag", "--port", vb.port, "status"]) == 0
    capsys.readouterr()
    wait_app(client, frames)
    new = since(journal(vb, capsys), last)
    assert "clock" in [x["type"] for x in new] and "clock_moved" not in [x["type"] for x in new]


def test_recovery_mode_is_journaled(table, capsys):
    vb, client, _report = table
    last = journal(vb, capsys)[-1]["seq"]
    client.set("key_confirm", 1)  # held at power-on
    try:
        vb.restart(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "recovery" in [x["type"] for x in since(journal(vb, capsys), last)]:
                break
            time.sleep(0.1)
    finally:
        client.set("key_confirm", 0)
    new = since(journal(vb, capsys), last)
    assert [x["type"] for x in new] == ["recovery"], new
    assert new[0]["reset"] == "power-on"
    frames = client.lamps()["frames"]
    vb.restart(timeout=30)
    wait_app(client, frames)


def test_the_floor_lists_the_access(table, capsys, tmp_path):
    from host_tools.commands import journal as jcmd
    from host_tools.floor import ingest, store
    from host_tools.rules import load_table

    vb, _client, _report = table
    _cfg, tbl = load_table(TABLE)
    db = str(tmp_path / "floor.db")
    conn = store.open_rw(db)
    floor = ingest.Floor("s1", tbl)
    out = ingest.Batch()
    for _name, data in jcmd.segments([os.path.join(vb.fs, "journal")]):
        floor.message("sicbo/s1/T1/journal", data, 1000.0, out)
    floor.finish(out)
    store.write(conn, out, floor.feeds)
    conn.close()
    assert main(["floor", "access", "--db", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["access"]
    kinds = [x["type"] for x in listed]
    for kind in ("clock", "deploy", "repl", "diag", "clock_moved", "recovery"):
        assert kind in kinds, (kind, kinds)
    assert all(x["table"] == "T1" and x["checked"] == "applied" for x in listed)
    assert main(["floor", "access", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(listed) and any("repl        app stopped" in x for x in lines)
