# mprun-heap: controller
# Start-up as main.py runs it (startup.open_table, faults.start) on the
# simulated board: every refusal before the watchdog is armed, the approval
# check that fails closed without a clock, and fault containment at each
# stage of the boot and in a running task (docs/design.md, Faults).
import json

import machine
from appkit import (
    BELL,
    SOLENOID,
    Table,
    board_dict,
    fresh_folder,
    journal_types,
    no_watchdog_reset,
    table_dict,
    write_files,
)

from sicbo import events as E
from sicbo import journal
from sicbo import records as R

EFFECTIVE = (2026, 11, 5)  # appkit's table: approval effective 2026-11-05


def test_approval_effective_tomorrow_is_refused_before_the_watchdog():
    t = Table(rtc=(2026, 11, 4, 2, 23, 59, 59, 0), expect_refusal=True)
    assert any("effective from 2026-11-05 only" in line for line in t.log), t.log
    assert R.J_BOOT not in journal_types(t.folder)
    assert no_watchdog_reset()


def test_a_table_refused_for_its_approval_stays_at_the_repl():
    import faults

    t = Table(rtc=(2026, 11, 4, 2, 23, 59, 59, 0), expect_refusal=True)  # files cached
    log = []
    # A reset would refuse again, and again: the board would never reach the REPL.
    assert faults.boot(faults.Faults(t.folder + "/fault.txt", log.append),
                       t.folder + "/board.json", t.folder + "/table.json", t.folder,
                       log=log.append, ticks_ms=machine.sim_ticks_ms) == (None, False), log
    assert any("effective from 2026-11-05 only" in line for line in log), log


def test_the_running_table_keeps_its_lamps_for_a_fault_and_not_the_board_file():
    t = Table()
    # The fault path shows its pattern on the lamps start-up made; the board
    # file it no longer needs is not held for the whole run.
    assert t.faults.lamps is t.hw.lamps and t.faults.board is None
    t.close()


def test_approval_on_its_effective_day_runs():
    t = Table(rtc=(2026, 11, 5, 3, 0, 0, 0, 0))
    assert t.m.state == E.ST_IDLE and R.J_BOOT in t.types()
    t.close()


def test_no_clock_and_no_journal_is_refused():
    t = Table(rtc=None, expect_refusal=True)
    assert any("RTC not set" in line and "table not started" in line for line in t.log), t.log
    assert no_watchdog_reset()


def test_no_clock_runs_on_a_journal_that_shows_these_files_approved():
    t = Table()  # clock set: J_CONFIG journaled with its wall time
    t.play(1, 2, 3)
    t.close()
    # A power cut: the RTC is lost with it (sim_reset), the journal stays.
    t2 = Table(folder=t.folder, rtc=None)
    assert t2.m.round == 1 and t2.types().count(R.J_CONFIG) == 1
    t2.play(2, 3, 4)
    t2.close()


def test_no_clock_and_changed_files_is_refused():
    t = Table()
    t.play(1, 2, 3)
    t.close()
    boots = journal_types(t.folder).count(R.J_BOOT)
    t2 = Table(folder=t.folder, rtc=None, table=table_dict(name="test table, new odds"),
               expect_refusal=True)
    assert any("RTC not set" in line for line in t2.log)
    # Refused before the journal: no boot of the new files was journaled.
    assert journal_types(t.folder).count(R.J_BOOT) == boots


def test_no_clock_and_a_journal_approved_before_the_effective_date_is_refused():
    # These very files in the journal (their J_CONFIG), but at a time before
    # their approval's effective date: not through this firmware (a boot with
    # the clock set refuses then), so it proves nothing. The same journal
    # dated on the effective day runs the table.
    import tablefiles

    from sicbo import dates

    early = table_dict(approval={"reference": "T2", "applied": "2026-11-02",
                                 "effective": "2026-11-12"})
    for day, runs in ((11, False), (12, True)):
        folder = fresh_folder()
        write_files(folder, table=early)
        config_id = tablefiles.config_id(folder + "/board.json", folder + "/table.json")
        wall = (dates.days_from_civil(2026, 11, day) - dates.DAY_2000) * 86400 + 3600
        with open(folder + "/j00000001.log", "wb") as f:
            f.write(journal.encode(R.J_CONFIG, 1, 0, 1, 1000, wall, config_id + bytes(2)))
        t = Table(folder=folder, rtc=None, table=early, expect_refusal=not runs)
        if runs:
            assert t.m.seq > 1 and bytes(t.m.config_id) == config_id
            t.close()
        else:
            assert any("RTC not set" in line and "approval T2" in line for line in t.log), t.log
            assert no_watchdog_reset()


def test_bad_table_file_is_refused_with_one_line_and_nothing_driven():
    bad = table_dict()
    bad["odds"] = {"SMALL": 7}
    t = Table(table=bad, expect_refusal=True)
    lines = [line for line in t.log if "configuration refused" in line]
    assert len(lines) == 1 and "odds" in lines[0], t.log
    assert machine.sim_mode(SOLENOID) is None and machine.sim_mode(BELL) is None
    assert no_watchdog_reset()


def test_bad_board_file_is_refused_with_one_line():
    folder = fresh_folder()
    write_files(folder)
    with open(folder + "/board.json") as f:
        board = json.load(f)
    board["outputs"]["bell"] = 6  # a flash pin
    t = Table(folder=folder, board=board, expect_refusal=True)
    assert [line for line in t.log if "configuration refused" in line and "bell" in line]
    assert machine.sim_mode(BELL) is None
    assert no_watchdog_reset()


def test_recovery_key_held_at_power_on_does_not_start():
    t = Table(held=("key_confirm",), expect_refusal=True)
    assert any("recovery mode" in line for line in t.log)
    assert R.J_BOOT not in journal_types(t.folder)
    assert no_watchdog_reset()


def test_another_key_held_at_power_on_starts():
    t = Table(held=("key_bell",))
    assert t.m.state == E.ST_IDLE
    t.close()


def test_boot_journals_the_reset_cause():
    t = Table()
    boots = [r for r in t.journal() if r.type == R.J_BOOT]
    assert boots[-1].p(0) == machine.PWRON_RESET
    t.close()


def test_rotation_keeps_the_configuration_and_its_approval():
    # Rotation deletes the segment holding J_CONFIG: the meters checkpoint
    # heading each new segment carries the configuration in force, so a boot
    # without a clock still finds these files approved, and a boot with one
    # journals no configuration change that did not happen.
    t = Table()
    t.play(1, 2, 3)
    for _ in range(t.store.max_files + 2):
        t.store.rotate(t.m.open_seq)
    t.close()
    assert R.J_CONFIG not in journal_types(t.folder)
    t2 = Table(folder=t.folder, rtc=None)
    assert t2.m.round == 1
    t2.close()
    t3 = Table(folder=t.folder, reset=False)
    assert R.J_CONFIG not in t3.types()
    t3.close()


def test_board_warnings_are_said_by_the_boot_that_checks_the_files_only():
    # Five lines on every boot would bury what matters: the boot that checks
    # new files says them, diag.status() counts them, sicbo deploy lists them.
    import faults

    board = board_dict()  # keys on GPIO 0, 2, 5 and 12: strapping pins, each with a reason
    folder = fresh_folder()
    write_files(folder, board)
    machine.sim_reset(ticks=1000)
    first = []
    ctl, restart = faults.boot(faults.Faults(folder + "/fault.txt", first.append),
                               folder + "/board.json", folder + "/table.json", folder,
                               log=first.append, ticks_ms=machine.sim_ticks_ms)
    assert ctl is None and restart, first
    warned = [line for line in first if line.startswith("sicbo: board warning: inputs.key_face_")]
    assert len(warned) == 4, first
    t = Table(folder=folder, board=board)
    assert not [line for line in t.log if "board warning" in line], t.log
    t.close()
