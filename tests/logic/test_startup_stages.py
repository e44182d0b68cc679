# mprun-heap: controller
# Start-up's stages (startup.py) as the fault path sees them: the watchdog's
# code (hw.watchdog) is loaded in the hardware stage, through the fault path,
# not first at resume. A watchdog module that cannot load there (no room for
# its code, a damaged file) fails the boot in the hardware stage, named,
# before the round is resumed: every output off, the fault pattern on the
# lamps, the failed boot counted in /fault.txt, for the next boot to journal
# (test_faults.py tests that journaling). The round machine's code is loaded
# the same way in the journal stage; files refused end the boot without a
# restart (a restart would only refuse them again).
import json

import faults
import machine
from appkit import (
    ACTIVE_HIGH,
    BELL,
    INPUTS,
    LATCH,
    MOTOR,
    RTC_NOW,
    SOLENOID,
    fresh_folder,
    journal_records,
    write_files,
)

from sicbo import events as E
from sicbo import records as R
from sicbo import settle


class _NoRoomFor(faults.Faults):
    """The fault path of a power-on on which one module's code does not load
    (the heap has no block for it): its load raises as a failed import does,
    every other module loads."""

    def __init__(self, path, log, module):
        faults.Faults.__init__(self, path, log)
        self.loaded = []
        self.missing = module

    def load(self, name):
        self.loaded.append((self.stage, name))
        if name == self.missing:
            self.module = name
            raise MemoryError("memory allocation failed, allocating 1536 bytes")
        return faults.Faults.load(self, name)


def _types(folder):
    return [r.type for r in journal_records(folder)]


def _lit(order):
    """The lamp channels lit in the last latched frame, by name."""
    frame = machine.sim_frame(LATCH)
    if frame is None:
        return []
    return [name for c, name in enumerate(order)
            if name is not None and settle.channel_on(frame, c)]


def _boot(folder, f, log):
    """faults.boot on folder's files with the fault path f, contained as
    faults.start contains it (without its reset). Returns the exception."""
    try:
        ctl, restart = faults.boot(f, folder + "/board.json", folder + "/table.json", folder,
                                   log=log.append, ticks_ms=machine.sim_ticks_ms)
    except Exception as e:  # noqa: BLE001 - the fault path takes any
        f.contain(e)
        return e
    if ctl is not None:
        ctl.hw.all_off()
        ctl.store.close()
    raise AssertionError("the table started: %r" % log)


def _power_on():
    """A fresh board as appkit.Table powers one on (the default files and
    their cache, the RTC set, cover off, clasps open, keys up), not started."""
    machine.sim_reset(ticks=1000)
    machine.RTC().datetime(RTC_NOW)
    folder = fresh_folder()
    write_files(folder)
    for name in INPUTS:
        machine.sim_set(INPUTS[name], 0 if name in ACTIVE_HIGH else 1)
    with open(folder + "/table.json") as f:
        order = json.load(f)["lamp_order"]
    machine.sim_attach_595(2, LATCH, (len(order) + 7) >> 3)
    return folder, order


def test_a_watchdog_that_cannot_load_fails_the_boot_in_the_hardware_stage():
    folder, order = _power_on()
    log = []
    path = folder + "/fault.txt"
    f = _NoRoomFor(path, log.append, "hw.watchdog")
    e = _boot(folder, f, log)
    assert isinstance(e, MemoryError), (e, log)
    # Loaded in the hardware stage, after the adapters' builders.
    assert (E.F_HARDWARE, "hw.watchdog") in f.loaded, (f.loaded, log)
    # Named, in the hardware stage, for the technician (/fault.txt, the log).
    n, text = f.failed_boots()
    assert n == 1, (n, text)
    assert text.startswith("stage %d loading hw.watchdog: MemoryError" % E.F_HARDWARE), text
    assert any(line.startswith("sicbo: FAULT in stage %d loading hw.watchdog" % E.F_HARDWARE)
               for line in log), log
    # Before the round resumed: no J_BOOT, nothing journaled yet.
    assert R.J_BOOT not in _types(folder), _types(folder)
    entry = faults.read_file(path)[1][-1]
    assert entry[:4] == [E.F_HARDWARE, E.K_MEMORY, 0, 0], entry
    # Every output off, the fault pattern on the lamps.
    for pin in (SOLENOID, MOTOR, BELL):
        assert not machine.sim_output(pin), pin
    lit = _lit(order)
    assert sorted(lit) == ["ALARM", "PAYING", "PLACE_BETS", "VOID"], lit


def test_a_round_machine_that_cannot_load_fails_the_boot_in_the_journal_stage():
    folder, _order = _power_on()
    log = []
    f = _NoRoomFor(folder + "/fault.txt", log.append, "sicbo.roundmachine")
    e = _boot(folder, f, log)
    assert isinstance(e, MemoryError), (e, log)
    n, text = f.failed_boots()
    assert n == 1 and text.startswith(
        "stage %d loading sicbo.roundmachine: MemoryError" % E.F_JOURNAL), (n, text)


def test_refused_files_end_the_boot_without_a_restart():
    folder, _order = _power_on()
    with open(folder + "/table.json", "w") as t:
        t.write('{"name": "test table"')  # cut short: not JSON
    log = []
    ctl, restart = faults.boot(faults.Faults(folder + "/fault.txt", log.append),
                               folder + "/board.json", folder + "/table.json", folder,
                               log=log.append, ticks_ms=machine.sim_ticks_ms)
    assert ctl is None and restart is False, (ctl, restart, log)
    assert any("table.json" in line for line in log), log


class _Damaged(_NoRoomFor):
    """The fault path of a power-on on which one module's file is damaged:
    its load raises as MicroPython does for a .mpy it cannot read."""

    def load(self, name):
        self.loaded.append((self.stage, name))
        if name == self.missing:
            self.module = name
            raise ValueError("incompatible .mpy file")
        return faults.Faults.load(self, name)


def _damaged_boot(module, stage):
    """A power-on on which `module`'s file is damaged: the boot fails in
    `stage`, the module named, one failed boot counted. Returns (folder,
    log)."""
    folder, _order = _power_on()
    log = []
    f = _Damaged(folder + "/fault.txt", log.append, module)
    e = _boot(folder, f, log)
    assert isinstance(e, ValueError), (e, log)
    assert (stage, module) in f.loaded, (f.loaded, log)
    n, text = f.failed_boots()
    assert n == 1 and text.startswith("stage %d loading %s: ValueError" % (stage, module)), (
        n, text)
    return folder, log


def test_a_damaged_settlement_module_is_a_fault_of_the_files_stage_not_refused_files():
    # A ValueError while the files are read is the files' refusal, unless it
    # came from loading code: then it is a fault, named, counted toward out
    # of service (a damaged file is not a configuration to fix).
    _folder, log = _damaged_boot("sicbo.settle", E.F_FILES)
    assert not [line for line in log if "configuration refused" in line], log


def test_every_module_only_start_up_needs_is_forgotten_once_the_table_runs():
    # On the board a module's code stays in the heap while sys.modules holds
    # it: the files' readers and parsers, the adapters' builders, start-up
    # and the resumption go once the table runs (CPython keeps its modules).
    import sys

    import tablefiles

    folder, _order = _power_on()
    log = []
    ctl, restart = faults.boot(faults.Faults(folder + "/fault.txt", log.append),
                               folder + "/board.json", folder + "/table.json", folder,
                               log=log.append, ticks_ms=machine.sim_ticks_ms)
    try:
        assert ctl is not None and not restart, log
        if sys.implementation.name == "micropython":
            gone = ("startup", "resumption", "memory", "sicbo.approval", "tablefiles",
                    "hw.build", "hw.inputs") + tablefiles.PARSERS
            kept = [name for name in gone if name in sys.modules]
            assert kept == [], kept
    finally:
        ctl.hw.all_off()
        ctl.store.close()


def test_a_damaged_approval_module_fails_the_boot_in_the_resume_stage_before_any_record():
    # The approval check's code is loaded when the table is resumed: a
    # damaged file there is a fault of that stage, named, before the round
    # is resumed (no J_BOOT) and before the watchdog is armed.
    folder, _log = _damaged_boot("sicbo.approval", E.F_RESUME)
    assert R.J_BOOT not in _types(folder), _types(folder)
    for pin in (SOLENOID, MOTOR, BELL):
        assert not machine.sim_output(pin), pin


def test_each_module_of_the_journal_stage_is_loaded_through_the_fault_path_and_named():
    # The store, the meters, the round machine and the controller: a damaged
    # file of any of them fails the journal stage with its name, before any
    # record is written.
    for module in ("journal_store", "sicbo.meters", "sicbo.roundmachine", "controller"):
        folder, _log = _damaged_boot(module, E.F_JOURNAL)
        assert R.J_BOOT not in _types(folder), (module, _types(folder))
