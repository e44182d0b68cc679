# mprun-heap: controller
# The technician's diagnostics (device/diag.py) on the simulated board, the
# app stopped as at the REPL: clear_fault, dump_journal and what diag shows
# of voids, alarms and wins.
# (Three files: one interpreter per file, at the board's heap.)
from appkit import Table, board_dict
from diagkit import _out, _table

import diag


def test_clear_fault_and_dump_journal():
    import faults

    t = _table()
    diag.clear_fault()
    assert "failed boots cleared" in _out[-1], _out
    assert faults.Faults(t.folder + "/fault.txt").failed_boots()[0] == 0
    del _out[:]
    diag.dump_journal()
    segs = [x for x in _out if x.startswith("SICBO-SEG ")]
    assert segs and _out[-1].startswith("SICBO-SEGS [") and "j00000001.log" in _out[-1]
    assert t.folder


def test_dump_journal_without_a_journal_folder():
    t = _table(play=False)
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder + "/none")
    del _out[:]
    diag.dump_journal()
    assert _out == ["SICBO-SEGS []"], _out


def test_diag_shows_voids_alarms_and_wins():
    t = Table(board=board_dict(bell_ms=50))
    t.play(1, 2, 3)
    t.to_result()
    t.press("key_void")
    t.press("key_face_1")
    t.press("key_confirm")  # void: stacked
    t.close_dome()
    t.press("shake")
    t.set("cover", 0)  # tamper: alarm
    t.run(60)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.recall()
    assert [x for x in _out if "void: stacked" in x], _out
    assert [x for x in _out if "void: tamper" in x], _out
    del _out[:]
    diag.status()
    assert [x for x in _out if x.startswith("alarms ") and "ALARM" in x], _out
    del _out[:]
    diag.meters()
    # Reason 1 (stacked) is the first of the list: it is counted like the others.
    assert "voids by     stacked 1, tamper 1" in _out, _out
    i = _out.index("wins per area (paid rounds):")
    cells = " ".join(_out[i + 1:]).split()
    assert "SMALL" in cells and cells[cells.index("SMALL") + 1] == "1", _out
