# mprun-heap: controller
# diag as a technician reads it at two edges: the failed boots counted up to
# the firmware's limit (E.MAX_FAILED_BOOTS: the board is then out of
# service, at the REPL) are said to have taken it out of service at exactly
# that count, not one later; and the solenoid test on a board wired without
# a coil output is refused in words, nothing pulsed, nothing journaled.
import faults
import machine
from appkit import SOLENOID, Table, board_dict, table_dict
from diagkit import _close, _diag_records, _out, _pulses

import diag
from sicbo import events as E

_ENTRY = [3, 1, 0, 1, "stage 3: MemoryError memory allocation failed"]


def _faults_line(t, n):
    faults.write_file(n, [_ENTRY] * n, t.folder + "/fault.txt")
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder,
               t.folder + "/fault.txt")
    del _out[:]
    diag.status()
    lines = [x for x in _out if x.startswith("faults ")]
    assert len(lines) == 1, (n, _out)
    return lines[0]


def test_status_says_out_of_service_at_exactly_the_failed_boots_limit():
    t = Table()
    t.close()
    n = E.MAX_FAILED_BOOTS
    assert _faults_line(t, n) == (
        "faults    %d failed boots in a row - OUT OF SERVICE" % n), _out
    assert _faults_line(t, n - 1) == "faults    %d failed boots in a row" % (n - 1), _out


def test_the_solenoid_test_is_refused_on_a_board_without_a_coil_output():
    bd = board_dict()
    del bd["outputs"]["solenoid"]
    t = Table(board=bd, table=table_dict(shaker="electric"))
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    _close(t)
    machine.sim_clear_edges()
    del _out[:]
    assert diag.solenoid() is False
    assert _out == ["refused: this board has no solenoid output"], _out
    assert _pulses(SOLENOID) == 0 and _diag_records(t) == []
