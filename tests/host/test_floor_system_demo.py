"""`make run` with the floor (`sicbo demo --floor`): a broker on a free
loopback port and the floor service beside the virtual table, the table
deployed with its secrets, a line per round the floor stored; a second
table joins the same floor as the first demo says (`--broker`
`--site-folder` `--floor-db`); without mosquitto the demo says so in one
line and plays as before."""

import os
import queue
import re
import subprocess
import sys
import threading
import time

import pytest
from prockit import command_lines

from brokerkit import need_mosquitto
from floorkit import q
from host_tools import REPO, broker
from host_tools.cli import main

SICBO = [sys.executable, "-m", "host_tools"]
STORED = re.compile(r"^floor \| (T\d+) round (\d+) stored: (\S+) (paid|void).*records up to "
                    r"seq (\d+)")
# The command as printed: this checkout's sicbo (.venv/bin/sicbo), pasted as is.
ANOTHER = re.compile(r"^floor: another table on this floor: (?:\S*/)?sicbo demo (.*)$")


def _demo(*args, timeout=600):
    r = subprocess.run(SICBO + ["demo", "--pace", "0", "--incidents", "0", *args], cwd=REPO,
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout.splitlines(), r.stderr


def test_the_demo_shows_the_rounds_the_floor_stores_and_a_second_table_joins(tmp_path):
    need_mosquitto()
    folder = str(tmp_path / "demo")
    code, lines, err = _demo("--floor", "--rounds", "2", "--seed", "4", "--folder", folder)
    assert code == 0, "\n".join(lines[-30:]) + err
    stored = [STORED.match(ln).groups() for ln in lines if STORED.match(ln)]
    assert [(t, int(r)) for t, r, *_ in stored] == [("T01", 1), ("T01", 2)], lines[-30:]
    db = os.path.join(folder, "floor", "floor.db")
    # what the demo said the floor stored is what the store holds
    for tid, rid, dice, status, seq in stored:
        rows = q(db, "SELECT status, dice, last_seq FROM rounds WHERE table_id=? AND round=?",
                 tid, int(rid))
        assert rows and rows[0][0] == status and rows[0][2] == int(seq), rows
        assert rows[0][1].replace(", ", "-").strip("[]") == dice
    secrets = os.path.join(folder, "fs", "secrets")
    assert sorted(os.listdir(secrets)) == ["ca.der", "cert.der", "key.der", "wifi"]
    assert any("secrets: ca.der, cert.der, key.der, wifi written" in ln for ln in lines)
    # the second table, as the first demo said (its broker is gone with it:
    # a floor started again here, on the same site and store)
    another = [ANOTHER.match(ln).group(1) for ln in lines if ANOTHER.match(ln)]
    assert another and "--table-id T02" in another[0] and "--site-folder" in another[0]
    exe = [ln.split(": ")[2].split(" demo ")[0] for ln in lines if ANOTHER.match(ln)][0]
    assert os.access(os.path.join(REPO, exe), os.X_OK), exe  # runs as printed, from here
    code, lines, err = _demo("--floor", "--rounds", "1", "--seed", "5", "--folder", folder)
    assert code == 0, err
    assert any("T01: 2 rounds stored from earlier runs" in ln for ln in lines), lines
    args = ANOTHER.match([ln for ln in lines if ANOTHER.match(ln)][0]).group(1).split()
    args[args.index("--folder") + 1] = str(tmp_path / "T02")
    floor = subprocess.Popen(SICBO + ["demo", "--floor", "--rounds", "0", "--folder", folder],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        port = None
        for line in floor.stdout:
            m = re.match(r"^floor: broker 127\.0\.0\.1:(\d+) ", line)
            if m:
                port = m.group(1)
            if "=== round" in line:
                break
        assert port
        args[args.index("--broker") + 1] = "127.0.0.1:" + port
        code, lines, err = _demo(*args, "--rounds", "2", "--seed", "6")
        assert code == 0, "\n".join(lines[-30:]) + err
        stored = [STORED.match(ln).groups()[:2] for ln in lines if STORED.match(ln)]
        assert stored == [("T02", "1"), ("T02", "2")], lines[-30:]
    finally:
        floor.send_signal(2)
        floor.communicate(timeout=120)
    tables = {r[0] for r in q(db, "SELECT table_id FROM records")}
    assert tables == {"T01", "T02"}


def test_without_mosquitto_the_demo_says_so_in_one_line_and_plays(tmp_path, monkeypatch,
                                                                    capsys):
    def missing():
        raise broker.BrokerMissing("mosquitto is not installed (Debian: apt-get install "
                                   "mosquitto); .ci/run installs it")

    monkeypatch.setattr(broker, "mosquitto_path", missing)
    code = main(["demo", "--floor", "--rounds", "1", "--pace", "0", "--incidents", "0",
                 "--folder", str(tmp_path / "demo")])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    said = [ln for ln in out.splitlines() if ln.startswith("floor")]
    assert said == ["floor: not shown: mosquitto is not installed (Debian: apt-get install "
                    "mosquitto); .ci/run installs it; the table plays without it"], said
    assert "1 round played" in out


@pytest.mark.parametrize("args, said", [
    (["--floor", "--broker", "127.0.0.1:1"], "give --floor or --broker, not both"),
    (["--broker", "127.0.0.1:1"], "--broker needs --site-folder DIR"),
    (["--floor-db", "x.db"], "--floor-db goes with --broker"),
    (["--floor", "--table-id", "T 1"], "is not 1 to 32 characters"),
    (["--floor", "--table-id", "floor"],
     "--table-id 'floor' is the floor service's name on the broker, never a table's"),
])
def test_floor_options_that_do_not_go_together_are_refused(tmp_path, capsys, args, said):
    code = main(["demo", "--folder", str(tmp_path / "demo"), *args])
    err = capsys.readouterr().err
    assert code == 2 and said in err, err


def _pid_of(*words):
    """The one process whose command line holds every word."""
    found = [pid for pid, argv in command_lines() if all(any(w in a for a in argv)
                                                          for w in words)]
    assert len(found) == 1, (words, found)
    return found[0]


def test_the_demo_says_once_when_its_broker_or_floor_service_exits_and_plays_on(tmp_path):
    need_mosquitto()
    folder = str(tmp_path / "demo")
    demo = subprocess.Popen(SICBO + ["demo", "--floor", "--rounds", "0", "--pace", "0",
                                     "--incidents", "0", "--folder", folder],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    lines = []
    got = queue.Queue()
    threading.Thread(target=lambda: [got.put(x) for x in demo.stdout] + [got.put(None)],
                     daemon=True).start()

    def until(pred, limit_s=300):
        # A bound only against a hang: the demo plays until stopped.
        deadline = time.monotonic() + limit_s
        while True:
            try:
                line = got.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("not said within %d s:\n" % limit_s
                                     + "\n".join(lines[-30:])) from None
            if line is None:
                raise AssertionError("the demo ended first:\n" + "\n".join(lines[-30:]))
            lines.append(line.rstrip("\n"))
            if pred(lines[-1]):
                return lines[-1]

    try:
        until(lambda ln: STORED.match(ln))
        mq = _pid_of("mosquitto", os.path.join(folder, "floor", "mq"))
        os.kill(mq, 9)
        said = until(lambda ln: "the broker (mosquitto" in ln)
        assert said.startswith("floor | the broker (mosquitto, pid %d) exited, status -9" % mq)
        assert "the table plays on" in said
        service = _pid_of("host_tools", "floor", os.path.join(folder, "floor", "floor.db"))
        os.kill(service, 9)
        said = until(lambda ln: "the floor service (pid" in ln)
        assert said.startswith("floor | the floor service (pid %d) exited, status -9" % service)
        # The table plays on: two more rounds begin and are settled.
        before = sum(1 for ln in lines if "=== round" in ln)
        until(lambda ln: sum(1 for x in lines if "=== round" in x) >= before + 2)
    finally:
        demo.send_signal(2)
        demo.wait(timeout=120)
    while (line := got.get(timeout=60)) is not None:
        lines.append(line.rstrip("\n"))
    assert demo.returncode == 130, "\n".join(lines[-30:])
    assert sum(1 for ln in lines if "the broker (mosquitto" in ln) == 1
    assert sum(1 for ln in lines if "the floor service (pid" in ln) == 1
    assert not any("Traceback" in ln for ln in lines), "\n".join(lines[-30:])
