"""The whole table on the virtual board, with the real mpremote: deploy, a
round through the simulated table, every diag command, the journal pulled to
the host, and a power cut mid-round recovered."""

import json
import os
import subprocess
import sys
import time

import pytest

from host_tools import REPO
from host_tools.cli import main
from host_tools.deploy import deploy
from host_tools.mprun import CONTROLLER_HEAP
from host_tools.simclient import TableClient
from host_tools.vboard import VirtualBoard

VIRTUAL = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
# How long a wait may last (it ends when its event comes): for a busy machine.
WAIT = 60
# The virtual board's wiring and timings, but the coil's hard limit the
# longest a board file allows: a virtual board's interpreter can be starved
# by a loaded host (an ESP32 never is), and a 60 ms pulse cut at 200 ms
# would be a fault (an alarm, the round void) that a board does not have.
MAX_ON_MS = 1000
HEAP = os.environ.get("SICBO_VBOARD_HEAP", CONTROLLER_HEAP)
NAMES = json.load(open(TABLE))["lamp_order"]


def lit(client):
    return {NAMES[c] for c in client.lamps()["lit"] if NAMES[c]}


def board_file(folder):
    with open(VIRTUAL) as f:
        b = json.load(f)
    b["timings"]["max_on_ms"] = MAX_ON_MS
    path = os.path.join(str(folder), "virtual-table-test.json")
    with open(path, "w") as f:
        json.dump(b, f)
    return path


def lamp_on(client, name, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if name in lit(client):
            return True
        time.sleep(0.05)
    return False


def wait_lit(client, name, on=True, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (name in lit(client)) == on:
            return True
        time.sleep(0.05)
    events = [e for e in client.events()["events"] if e["kind"] != "pwm"][-15:]
    raise AssertionError("lamp %s never %s; lit: %s; last table events: %s" % (
        name, "on" if on else "off", sorted(lit(client)), events))


def wait_app(client, frames_before, timeout=WAIT):
    """Wait until the app has booted: the lamp adapter latches an all-off frame
    when it is made, the controller latches its frame once the journal is
    replayed. (A key pressed before its polling tasks start stays pressed
    until the board has read it: host_tools/simclient.py.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.lamps()["frames"] >= frames_before + 2:
            return
        time.sleep(0.05)
    raise AssertionError("the app did not start (no lamp frame)")


def press(client, key):
    """Until the board has seen the press and the release."""
    client.press(key, ms=100, wait=True)


def open_betting(client):
    # until the board has taken them: a shake pressed as the cover goes on
    # can be taken before it (and refused)
    client.set_all({"cover": 1, "clasp_left": 1, "clasp_right": 1}, wait_ms=100)
    press(client, "shake")
    if not lamp_on(client, "PLACE_BETS", 6):
        # As a dealer would: a press that came while the table was still
        # starting is pressed again (a shake during a shake is refused).
        press(client, "shake")
    wait_lit(client, "PLACE_BETS")


def play(client, dice):
    open_betting(client)
    rung = client.outputs()["bell"]["on_count"]
    press(client, "key_bell")
    wait_lit(client, "PLACE_BETS", on=False)
    # the bell rings (1.5 s) before the dealer lifts the cover
    client.wait_for(lambda t: (b := t.outputs()["bell"])["on_count"] > rung and not b["level"])
    client.set_all({"clasp_left": 0, "clasp_right": 0, "cover": 0}, wait_ms=100)
    for d in dice:
        press(client, "key_face_%d" % d)
    press(client, "key_confirm")
    wait_lit(client, "PAYING")
    won = lit(client)
    press(client, "key_payout")
    wait_lit(client, "PAYING", on=False)
    return won


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    board = board_file(tmp_path_factory.mktemp("board"))
    vb = VirtualBoard(str(tmp_path_factory.mktemp("vb-system")), board=board, heap=HEAP)
    vb.start()
    try:
        with TableClient(vb.control) as client:
            frames = client.lamps()["frames"]
            deploy(vb.port, board, TABLE)
            wait_app(client, frames)
            yield vb, client
    finally:
        vb.stop()


def diag(vb, client, capsys, *args):
    """sicbo diag, then wait for the app to be back after its reset."""
    frames = client.lamps()["frames"]
    code = main(["diag", "--port", vb.port, *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    wait_app(client, frames)
    return out


def test_a_whole_round_through_the_simulated_table(table):
    vb, client = table
    won = play(client, (1, 1, 2))
    for area in ("SMALL", "EVEN", "PAIR_1_2", "COMBO_1_1_2", "DOUBLE_1", "TOTAL_4",
                 "SINGLE_1", "SINGLE_2"):
        assert area in won, area
    assert "BIG" not in won and "ODD" not in won
    out = client.outputs()
    assert out["solenoid"]["on_count"] >= 3
    assert max(out["solenoid"]["on_ms"]) <= MAX_ON_MS  # the coil's hard limit
    assert out["bell"]["on_count"] >= 1


def test_diag_status_recall_meters_journal(table, capsys):
    vb, client = table
    out = diag(vb, client, capsys, "status")
    assert "state     idle" in out and "round 1" in out
    assert "sha256" in out and "heap" in out
    out = diag(vb, client, capsys, "recall", "5")
    assert "1-1-2" in out and "PAIR_1_2" in out
    out = diag(vb, client, capsys, "meters")
    assert "paid" in out and "PAIR_1_2" in out
    # Each diag journals its own access (the stop, the clock set): the round
    # is further back.
    out = diag(vb, client, capsys, "journal", "20")
    assert "payout" in out and out.count("journal ") == 20
    assert "repl        app stopped: table running" in out and "clock " in out
    out = diag(vb, client, capsys, "help")
    assert "diag.status()" in out
    out = diag(vb, client, capsys, "sensors")
    assert "cover" in out and "key_face_6" in out


def test_diag_moving_parts_refused_unless_fastened(table, capsys):
    vb, client = table
    client.cover_off()
    client.open_clasps()
    out = diag(vb, client, capsys, "solenoid")
    assert "refused" in out and "clasps" in out
    client.cover_on()
    client.fasten_clasps()  # diag polls the switches itself, after they reach the board
    before = client.outputs()["solenoid"]["on_count"]
    out = diag(vb, client, capsys, "solenoid")
    assert "one pulse" in out
    assert client.outputs()["solenoid"]["on_count"] == before + 1
    assert "rang" in diag(vb, client, capsys, "bell")
    out = diag(vb, client, capsys, "lamps", "5")
    assert "channel   4  SMALL" in out and "all off" in out
    client.cover_off()
    client.open_clasps()


def test_journal_pulled_and_read_on_the_host(table, capsys, tmp_path):
    vb, client = table
    f = tmp_path / "journal.bin"
    out = diag(vb, client, capsys, "status", "--pull-journal", str(f))
    assert "records" in out and f.stat().st_size > 0
    assert main(["journal", str(f), "--table", TABLE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rounds = {r["round"]: r for r in data["recall"]}
    assert rounds[1]["dice"] == [1, 1, 2] and rounds[1]["status"] == "paid"
    # deploy set the board's clock, and it survived the reset: a wall time.
    assert rounds[1]["started"]["wall"].startswith(time.strftime("%Y-", time.gmtime()))
    listed = data["records_listed"]
    assert listed and all("type" in r and "seq" in r for r in listed)
    assert any(r["type"] == "result" and r["round"] == 1 for r in listed), listed[:3]


def test_power_cut_mid_round_is_recovered(table, capsys):
    vb, client = table
    open_betting(client)
    vb.power_cut()
    frames = client.lamps()["frames"]
    vb.power_on(timeout=0)
    wait_app(client, frames)
    out = diag(vb, client, capsys, "recall", "3")
    # The macau tables void a round cut before the bell (resume_policy "void").
    first = out.splitlines()[1]
    assert "void" in first and "power cut" in first, out
    out = diag(vb, client, capsys, "status")
    assert "state     idle" in out
    # And the table plays on, with the next round id.
    won = play(client, (6, 6, 6))
    assert "TRIPLE_6" in won and "BIG" not in won


def test_mpremote_sees_a_board(table):
    vb, _client = table
    exe = os.path.join(os.path.dirname(sys.executable), "mpremote")
    r = subprocess.run([exe, "connect", vb.port, "exec",
                        "import sys; print(sys.implementation.name, sys.path)"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "micropython" in r.stdout and "/lib" in r.stdout


def test_a_forged_record_is_reported_as_damage_and_the_table_plays_on(table, capsys):
    # A CRC-valid J_RESULT with impossible dice (0-7-6) at the end of the
    # board's journal: the board starts, journals the damage, and plays on;
    # diag and sicbo journal report it as damage, never with a traceback.
    from sicbo import journal as jfmt
    from sicbo import records as R

    vb, client = table
    vb.power_cut()
    jdir = os.path.join(vb.fs, "journal")
    names = sorted(n for n in os.listdir(jdir) if n.endswith(".log"))
    recs = []
    for n in names:
        with open(os.path.join(jdir, n), "rb") as f:
            recs.extend(jfmt.records(f.read()))
    last = recs[-1]
    forged = jfmt.encode(R.J_RESULT, last.seq + 1, last.round, last.boot, last.ticks + 5,
                         last.wall, bytes((0, 7, 6, 0, 0, 0, 0, 0)))
    with open(os.path.join(jdir, names[-1]), "ab") as f:
        f.write(forged)
    frames = client.lamps()["frames"]
    vb.power_on(timeout=0)
    wait_app(client, frames)
    out = diag(vb, client, capsys, "journal", "8")
    assert "DAMAGED (dice not 1..6)" in out and "Traceback" not in out, out
    assert main(["journal", jdir]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "damage" in out.lower(), out
    assert main(["journal", jdir, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(d.get("seq") == last.seq + 1 for d in data["damage"]), data["damage"]
    won = play(client, (2, 2, 5))
    assert "DOUBLE_2" in won
