# mprun-heap: controller
# The technician's diagnostics (device/diag.py) on the simulated board, the
# app stopped as at the REPL: the solenoid, bell and lamp tests are refused unless the journal shows
# the table idle with the cover on and both clasps fastened; each test that
# runs is journaled (J_DIAG) and drives only its output.
# (Three files: one interpreter per file, at the board's heap.)
import machine
from appkit import BELL, LATCH, SOLENOID, Table
from diagkit import _close, _diag_records, _out, _pulses, _table

import diag
from sicbo import events as E
from sicbo import records as R


def test_moving_parts_refused_unless_idle_cover_on_and_clasps_fastened():
    t = _table()
    for cover, left, right in ((0, 1, 1), (1, 0, 1), (1, 1, 0), (0, 0, 0)):
        _close(t, cover, left, right)
        machine.sim_clear_edges()
        for test in (diag.solenoid, diag.bell, diag.lamps):
            del _out[:]
            assert test() is False, (test, cover, left, right)
            assert "refused" in _out[-1] and "clasps" in _out[-1], _out
        assert _pulses(SOLENOID) == 0 and _pulses(BELL) == 0
    assert _diag_records(t) == []


def test_moving_parts_refused_while_a_round_is_open():
    t = Table()
    t.open_round()
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    _close(t)
    machine.sim_clear_edges()
    del _out[:]
    assert diag.solenoid() is False and "idle" in _out[-1], _out
    assert _pulses(SOLENOID) == 0
    assert _diag_records(t) == []


def test_each_test_runs_once_and_is_journaled():
    t = _table()
    _close(t)
    machine.sim_clear_edges()
    assert diag.solenoid() is True
    assert _pulses(SOLENOID) == 1 and machine.sim_output(SOLENOID) == 0
    assert "one pulse of 60 ms (hard limit 200 ms); forced offs 0" in _out[-1], _out
    assert diag.bell() is True
    assert _pulses(BELL) == 1 and machine.sim_output(BELL) == 0
    assert _out[-1] == "bell: rang 50 ms"
    assert diag.lamps(0) is True
    assert machine.sim_frame(LATCH) is not None
    assert _diag_records(t) == [(R.J_DIAG, E.D_SOLENOID), (R.J_DIAG, E.D_BELL),
                                (R.J_DIAG, E.D_LAMPS)]
    assert "channel   0  PLACE_BETS" in _out, _out[:3]
    assert _out[-1].startswith("lamps: ")


