# mprun-heap: controller
# Out of service (bootfail.out_of_service): the table files are read only to
# light the fault pattern (from the configuration cache, or parsed when there
# is none), and their parsers are forgotten as soon as the settlement table
# is built, before the lamp driver is made: a board left out of service at
# the REPL keeps no parser's code in its heap. Files that cannot light it
# are said once, and the outputs stay off.
import os
import sys

import bootfail
import faults
import machine
import memory
import tablefiles
from appkit import BELL, SOLENOID, Table, table_dict, write_files


def _out_of_service(t):
    log = []
    bootfail.out_of_service(faults.Faults(t.folder + "/fault.txt", log.append), 3,
                            "stage 4: OSError 5", t.folder + "/board.json",
                            t.folder + "/table.json", log.append)
    return log


def test_out_of_service_forgets_the_file_parsers_and_lights_the_fault_pattern():
    t = Table()
    t.power_off()
    forgotten = []
    real = memory.forget

    def forget(names):
        forgotten.extend(names)
        real(names)

    log = []
    memory.forget = forget
    try:
        bootfail.out_of_service(faults.Faults(t.folder + "/fault.txt", log.append), 3,
                                "stage 4: OSError 5", t.folder + "/board.json",
                                t.folder + "/table.json", log.append)
    finally:
        memory.forget = real
    assert [n for n in tablefiles.PARSERS if n not in forgotten] == [], forgotten
    if sys.implementation.name == "micropython":
        kept = [n for n in tablefiles.PARSERS if n in sys.modules]
        assert kept == [], kept
    assert not [line for line in log if "lamps not lit" in line], log
    assert sorted(t.lit()) == ["ALARM", "PAYING", "PLACE_BETS", "VOID"], t.lit()
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)


def test_out_of_service_without_a_configuration_cache_parses_the_files_for_the_lamps():
    t = Table()
    t.power_off()
    os.remove(t.folder + "/config.cache")
    log = _out_of_service(t)
    assert not [line for line in log if "lamps not lit" in line], log
    assert sorted(t.lit()) == ["ALARM", "PAYING", "PLACE_BETS", "VOID"], t.lit()


def test_refused_files_leave_the_lamps_dark_said_once_and_drive_no_output():
    t = Table()
    t.power_off()
    write_files(t.folder, None, table_dict(edition=1999))  # refused
    log = _out_of_service(t)
    said = [line for line in log if "lamps not lit" in line]
    assert len(said) == 1 and said[0].startswith("sicbo: fault lamps not lit: "), log
    assert log[0].startswith("sicbo: OUT OF SERVICE after 3 failed boots (last: stage 4"), log
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)
