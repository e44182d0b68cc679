# mprun-heap: controller
# The fault path's own record: a fault the journal took is marked journaled
# in the fault file and never journaled twice; the file goes once its failed
# boots are neither in a row nor left to journal; and a boot at the
# failed-boots limit opens nothing. (Apart from test_faults.py: that file is at the edge
# of the board's heap.)
import faults
import machine
from appkit import Table

from sicbo import events as E


def test_a_fault_the_journal_took_is_marked_journaled_and_not_journaled_again():
    t = Table()
    t.close()
    path = t.folder + "/fault.txt"
    f = faults.Faults(path, log=lambda line: None)
    took = []
    f.journal = lambda stage, kind, detail, late: took.append((stage, kind, detail, late))
    f.contain(ValueError("bad"), E.F_HARDWARE)
    assert took == [(E.F_HARDWARE, E.K_VALUE, 0, 0)], took
    n, entries = faults.read_file(path)
    assert n == 1 and entries[-1][3] == 1, entries  # journaled now
    assert faults.Faults(path).journal_pending(lambda *a: took.append(a)) == 0
    assert len(took) == 1, took


def test_the_fault_file_goes_once_its_failed_boots_are_cleared_and_journaled():
    # Cleared (the table ran its minute) while a failed boot was still to be
    # journaled: the count goes to 0, the entry stays; journaled at the next
    # boot; then the next clear removes the file, nothing in it left to do.
    import os

    from folderkit import tmpdir

    path = tmpdir("fault_file_goes") + "/fault.txt"
    entries = [[E.F_HARDWARE, E.K_OS, 0, 0, "stage %d: OSError 5" % E.F_HARDWARE]]
    assert faults.write_file(1, entries, path)
    f = faults.Faults(path, log=None)
    f.clear()
    n, kept = faults.read_file(path)
    assert n == 0 and kept[0][3] == 0, kept  # not in a row any more, still to journal
    took = []
    assert f.journal_pending(lambda *a: took.append(a)) == 1 and len(took) == 1
    assert faults.read_file(path)[1][0][3] == 1  # journaled now
    f.clear()
    try:
        os.stat(path)
    except OSError:
        return
    raise AssertionError("the fault file stayed: %r" % (faults.read_file(path),))


def test_the_boot_at_the_failed_boots_limit_opens_nothing():
    # Out of service before start-up is even loaded: no controller, no reset
    # asked for, whatever the files would have allowed.
    t = Table()
    t.close()
    path = t.folder + "/fault.txt"
    entry = [E.F_HARDWARE, E.K_OS, 0, 1, "stage 3: OSError 5"]
    faults.write_file(E.MAX_FAILED_BOOTS, [entry] * E.MAX_FAILED_BOOTS, path)
    log = []
    f = faults.Faults(path, log=log.append)
    got = faults.boot(f, t.folder + "/board.json", t.folder + "/table.json", t.folder,
                      log=log.append, ticks_ms=machine.sim_ticks_ms)
    assert got == (None, False), got
    assert any("OUT OF SERVICE" in line for line in log), log
