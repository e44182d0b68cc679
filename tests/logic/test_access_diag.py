# mprun-heap: controller
# What diag journals of a technician's access, and how diag.journal() names
# it: the clock set (J_CLOCK, old and new time), every test by its name
# (J_DIAG), the sensors read, a fault cleared; the records after the
# journal's last one, in its newest segment (no file of their own).
import os

from appkit import Table
from diagkit import _close, _diag_records, _out, _table

import diag
from sicbo import events as E
from sicbo import records as R


def _segments(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith(".log"))


def _u32(rec, at):
    return rec.p(at) | rec.p(at + 1) << 8 | rec.p(at + 2) << 16 | rec.p(at + 3) << 24


def _records(folder):
    from appkit import journal_records

    return journal_records(folder)


def test_set_clock_journals_old_and_new_and_the_tests_share_its_segment():
    t = _table()
    _close(t)
    before = _segments(t.folder)
    diag.set_clock((2026, 12, 1, 1, 8, 30, 0, 0))
    assert diag.sensors() is None and diag.solenoid() is True
    assert _segments(t.folder) == before  # after the boot's records: no file of their own
    recs = _records(t.folder)[-3:]
    assert [r.type for r in recs] == [R.J_CLOCK, R.J_DIAG, R.J_DIAG], recs
    clock = recs[0]
    assert _u32(clock, R.P_CLOCK_NEW) == clock.wall and _u32(clock, R.P_CLOCK_OLD) < clock.wall
    assert [r.p(0) for r in recs[1:]] == [E.D_SENSORS, E.D_SOLENOID]
    # The test and its detail, the rest of the payload zero (docs/journal.md).
    assert [bytes(r.p(i) for i in range(2, R.PAYLOAD)) for r in recs[1:]] == [bytes(6)] * 2
    assert all(r.wall is not None and r.wall >= clock.wall for r in recs[1:])
    del _out[:]
    diag.journal(3)
    assert "clock" in _out[0] and "-> 2026-12-01T08:30:00Z" in _out[0], _out
    assert "diag        sensors read" in _out[1], _out
    assert "diag        solenoid test" in _out[2], _out


def test_a_session_after_the_table_ran_follows_the_table_s_records():
    t = _table()
    _close(t)
    assert diag.bell() is True
    t2 = Table(folder=t.folder, reset=False)  # the app ran and wrote its own segment
    t2.close()
    n = len(_segments(t.folder))
    assert diag.bell() is True
    assert len(_segments(t.folder)) == n  # appended after the boot's records
    assert _diag_records(t) == [(R.J_DIAG, E.D_BELL), (R.J_DIAG, E.D_BELL)]
    from appkit import journal_records

    recs = journal_records(t.folder)
    assert [r.seq for r in recs] == list(range(1, len(recs) + 1))  # no gap, no number twice


def test_clear_fault_journals_how_many_it_cleared_by_name():
    import faults

    t = _table()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder,
               t.folder + "/fault.txt")
    f = faults.Faults(t.folder + "/fault.txt")
    faults.write_file(2, [[E.F_HARDWARE, E.K_OS, 0, 0, "stage 3: OSError 5"],
                          [E.F_HARDWARE, E.K_OS, 0, 1, "stage 3: OSError 5"]], f.path)
    diag.clear_fault()
    recs = _records(t.folder)[-2:]
    assert [r.type for r in recs] == [R.J_FAULT, R.J_DIAG], recs  # the unjournaled one first
    # As the boot journals a late fault: stage, kind, detail, late, and the
    # rest of the payload zero.
    assert recs[0].payload == bytes((E.F_HARDWARE, E.K_OS, 0, 1, 0, 0, 0, 0)), recs[0].payload
    assert recs[1].p(R.P_TEST) == E.D_CLEAR_FAULT and recs[1].p(R.P_TEST_DETAIL) == 2
    del _out[:]
    diag.journal(1)
    assert "fault cleared (2 failed boots)" in _out[0], _out


def test_diag_names_every_access_record():
    # One record of each access type (records.ACCESS) after the table's last,
    # as the firmware writes them; diag.journal() names each by its type.
    import struct

    import access

    from sicbo import texts

    t = _table()
    _close(t)
    f = t.folder
    access.record(R.J_REPL, bytes((R.STOP_RUNNING, 0, 0, 0, 0, 0, 0, 0)), f)
    access.record(R.J_CLOCK_MOVED, struct.pack("<II", 850000000, 849990000), f)
    access.deployed(R.CODE_FILES, "ab" * 32, "cd" * 6, ["main.py"], ["old.mpy"], f)
    access.verified(R.CHECK_FILES, 45, "ef" * 32, "12" * 32, "inspector", f)
    access.close()
    access.recovery(1, f)
    assert access.set_clock((2026, 12, 1, 1, 8, 0, 0, 0), f)
    assert diag.bell() is True
    # The provisioning's record is the MAC chain's first, written by a boot
    # that takes a provisioning (tests/logic/test_chain.py).
    written = [t for t in R.ACCESS if t != R.J_PROVISION]
    recs = _records(f)[-len(written):]
    assert sorted(r.type for r in recs) == sorted(written), recs
    del _out[:]
    diag.journal(len(written))
    assert len(_out) == len(written), _out
    for i, rec in enumerate(recs):
        line = _out[i]
        assert (" %s " % texts.J_NAMES[rec.type]) in line, (rec.type, line)
        assert "DAMAGED" not in line, line


def test_a_diag_command_keeps_no_module_loaded_after_it():
    # The REPL's heap after a command is what it was before: diag forgets
    # the code each command loaded (MicroPython: memory.forget keeps
    # CPython's modules, so there only the commands' output is checked).
    import sys

    t = _table()
    _close(t)
    before = set(sys.modules)
    del _out[:]
    diag.journal(3)
    diag.recall(1)
    diag.meters()
    diag.bell()
    assert len(_out) > 5 and not [line for line in _out if "failed" in line], _out
    if sys.implementation.name == "micropython":
        assert [n for n in sys.modules if n not in before] == []
