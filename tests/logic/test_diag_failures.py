# mprun-heap: controller
# Failures as diag says them: a command that fails for a reason of its own
# (not a refused file, not memory) says which command and why in one line,
# and the technician stays at the REPL with the table as it was (no
# traceback, no record); failed boots in the status, each with its stage,
# and out of service from the last one allowed.
import faults
from appkit import Table, journal_records
from diagkit import _out

import diag
from sicbo import events as E


def test_a_clock_set_to_nonsense_is_said_as_a_failure_of_the_command():
    t = Table()
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    before = len(journal_records(t.folder))
    del _out[:]
    assert diag.set_clock((2026, 13, 40, 0, 0, 0, 0, 0)) is None
    assert len(_out) == 1 and _out[0].startswith("set_clock: failed: ValueError "), _out
    assert "month" in _out[0], _out
    assert len(journal_records(t.folder)) == before


def _status(t, n, entries):
    path = t.folder + "/fault.txt"
    faults.write_file(n, entries, path)
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder, path)
    del _out[:]
    diag.status()
    return _out[:]


def test_status_says_out_of_service_from_the_last_allowed_failed_boot_and_names_each_stage():
    t = Table()
    t.close()
    hw = [3, 1, 0, 1, "stage 3: MemoryError x"]
    resume = [4, 2, 0, 0, "stage 4: OSError 5"]
    n = E.MAX_FAILED_BOOTS
    out = _status(t, n - 1, [hw, resume][:n - 1])
    assert out[0] == "running   yes, after %d failed boots (see faults below)" % (n - 1), out
    out = _status(t, n, [hw] + [resume] * (n - 1))
    assert out[0] == ("running   no: OUT OF SERVICE after %d failed boots; mend the cause, then "
                      "diag.clear_fault() and machine.reset()" % n), out
    assert out[1] == "faults    %d failed boots in a row - OUT OF SERVICE" % n, out
    assert out[2] == "          hardware: stage 3: MemoryError x", out
    assert out[3] == "          resume: stage 4: OSError 5 (not yet in the journal)", out
    assert not [x for x in out if "failed:" in x], out
