# mprun-heap: controller
# Two boots that must not run the table, and must not loop:
# - a fault whose count cannot be written (the filesystem full: every write
#   refused) is contained without a reset: a reset would boot, fault and
#   reset again for ever, never out of service (13,550 resets in 11 minutes
#   on a virtual board), and a boot that wrote nothing leaves no new segment;
# - a deploy cut by a power cut (sicbo deploy's mark: manifest.prev without
#   manifest.json, device/remote/deploy_agent.py) may have left two releases
#   mixed: the boot refuses it as a fault, counted, out of service after
#   three.

import os

import faults
import machine
from appkit import BELL, SOLENOID, Table, journal_records, write_files

from sicbo import events as E
from sicbo import records as R


def start(folder, log):
    return faults.start(folder + "/board.json", folder + "/table.json", folder, log=log.append,
                        ticks_ms=machine.sim_ticks_ms, fault_file=folder + "/fault.txt")


def _touch(path):
    with open(path, "w") as f:
        f.write("{}")


def _segments(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith(".log"))


def test_a_fault_that_cannot_be_counted_is_out_of_service_without_a_reset():
    t = Table()
    t.play(1, 2, 3)
    t.power_off()
    _touch(t.folder + "/manifest.prev")  # every boot now faults (below)
    kept = faults.write_file
    faults.write_file = lambda n, entries, path=faults.FAULT_FILE: False  # a full filesystem
    resets = len(machine.sim_resets())
    log = []
    try:
        assert start(t.folder, log) is None
    except SystemExit:
        raise AssertionError("a reset, with the fault not counted: %r" % log) from None
    finally:
        faults.write_file = kept
    assert machine.sim_resets()[resets:] == []
    assert any("FAULT in stage" in line for line in log), log
    said = [line for line in log if "OUT OF SERVICE" in line]
    assert len(said) == 1 and "could not be counted" in said[0], log
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)


def test_a_deploy_cut_before_its_commit_is_a_fault_then_out_of_service():
    t = Table()
    t.play(4, 5, 6)
    t.power_off()
    before = [r.seq for r in journal_records(t.folder)]
    segments = _segments(t.folder)
    _touch(t.folder + "/manifest.prev")
    for n in range(1, E.MAX_FAILED_BOOTS + 1):
        log = []
        try:
            start(t.folder, log)
        except SystemExit:
            pass  # the sim's machine.reset(): counted, then a reset
        else:
            raise AssertionError("no reset: %r" % log)
        count, text = faults.Faults(t.folder + "/fault.txt").failed_boots()
        assert count == n and "a deploy was cut before its end" in text, (count, text)
    log = []
    assert start(t.folder, log) is None  # out of service, at the REPL
    said = [line for line in log if "OUT OF SERVICE" in line]
    assert said and "a deploy was cut" in " ".join(log), log
    # The faulted boots read no journal and wrote none of their own: what was
    # journaled is all there, and no boot left a segment.
    assert [r.seq for r in journal_records(t.folder)] == before
    assert _segments(t.folder) == segments
    # The deploy completed (its manifest committed): the table runs, and the
    # failed boots reach the journal.
    _touch(t.folder + "/manifest.json")
    faults.Faults(t.folder + "/fault.txt").clear()  # a technician's diag.clear_fault()
    t2 = Table(folder=t.folder, reset=False)
    assert t2.m.state == E.ST_IDLE
    faulted = [r for r in journal_records(t.folder) if r.type == R.J_FAULT]
    assert len(faulted) == E.MAX_FAILED_BOOTS, [r.type for r in journal_records(t.folder)]
    assert all(r.p(1) == E.K_OS for r in faulted)
    t2.close()


def test_both_manifests_or_none_is_a_deploy_that_ended():
    # A cut just after the commit may leave manifest.prev beside the new
    # manifest.json: committed, the table runs.
    folder = Table().folder
    write_files(folder)
    _touch(folder + "/manifest.prev")
    _touch(folder + "/manifest.json")
    t = Table(folder=folder, reset=False)
    assert t.ctl is not None
    t.close()
