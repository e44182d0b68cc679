"""`sicbo diag` says what the board itself printed as it started after its
reset (host_tools/boardstate.py), whatever that is: the running table, a
board out of service, a refused table file put there by hand; never
"the table resumes" when it does not. Exit 0 whenever the board answered."""

import json
import os
import subprocess
import sys

import pytest

from host_tools import REPO
from host_tools.deploy import deploy
from host_tools.mprun import CONTROLLER_HEAP
from host_tools.vboard import VirtualBoard

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
HEAP = os.environ.get("SICBO_VBOARD_HEAP", CONTROLLER_HEAP)
SICBO = [sys.executable, "-m", "host_tools"]


@pytest.fixture(scope="module")
def vb(tmp_path_factory):
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-diag")), board=BOARD, heap=HEAP) as board:
        deploy(board.port, BOARD, TABLE)
        yield board


def diag(vb, *args):
    r = subprocess.run(SICBO + ["diag", "--port", vb.port, *args], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    return r


def test_a_running_table_is_said_running(vb):
    r = diag(vb, "status")
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last == "board reset: the table runs: Macau Sic Bo, 2004 edition, full layout, " \
                   "round 0, idle", r.stdout
    r = diag(vb, "help", "--no-restart")
    assert r.returncode == 0 and "board reset" not in r.stdout, r.stdout
    r = diag(vb, "help")  # from the REPL --no-restart left it at
    assert r.stdout.strip().splitlines()[-1].startswith("board reset: the table runs: "), r.stdout


def test_a_board_out_of_service_is_said_so(vb):
    fault = os.path.join(vb.fs, "fault.txt")
    with open(fault, "w") as f:
        f.write("3\nstage 3: MemoryError: a test\n")
    try:
        r = diag(vb, "help")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().splitlines()
        assert lines[-2] == ("board reset: OUT OF SERVICE after 3 failed boots (last: stage 3: "
                             "MemoryError: a test). Outputs are off."), r.stdout
        assert lines[-1].startswith("  do: sicbo diag --port %s status" % vb.port), r.stdout
        assert "diag.clear_fault()" in lines[-1]
    finally:
        os.remove(fault)
    r = diag(vb, "help")
    assert r.stdout.strip().splitlines()[-1].startswith("board reset: the table runs: ")


def test_a_table_file_refused_by_the_board_is_said_with_its_reason(vb):
    table = os.path.join(vb.fs, "table.json")
    cache = os.path.join(vb.fs, "config.cache")
    good = open(table).read()
    obj = json.loads(good)
    obj["odds"]["TOTAL_5"] = 31  # outside the 2004 edition's 18..30
    with open(table, "w") as f:
        json.dump(obj, f)
    os.remove(cache)  # as by hand: the board parses the files again
    try:
        r = diag(vb, "help")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().splitlines()
        assert lines[-2].startswith("board reset: the table did not start: configuration "
                                    "refused, table not started: odds.TOTAL_5"), r.stdout
        assert lines[-1].startswith("  do: fix the board or table file, then sicbo deploy")
    finally:
        with open(table, "w") as f:
            f.write(good)
    deploy(vb.port, BOARD, TABLE)  # mends the cache too
    r = diag(vb, "help")
    assert r.stdout.strip().splitlines()[-1].startswith("board reset: the table runs: ")
