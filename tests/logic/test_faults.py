# mprun-heap: controller
# Fault containment at each stage of a boot and in a running task, through
# faults.start as main.py runs it on the simulated board (docs/design.md):
# outputs off, the fault lamps, a J_FAULT record and /fault.txt, a reset; three
# failed boots leave the board out of service. (Split from test_boot.py: one
# interpreter per file, at the board's heap.)

import controller
import faults
import machine
from appkit import (
    BELL,
    SOLENOID,
    Table,
    fresh_folder,
    journal_records,
    no_watchdog_reset,
    reboot,
    write_files,
)

from sicbo import events as E
from sicbo import records as R


def task_id(name):
    """A task's id: its row in controller.TASKS (the watchdog's id for it)."""
    return [row[0] for row in controller.TASKS].index(name)


def start(folder, log):
    return faults.start(folder + "/board.json", folder + "/table.json", folder, log=log.append,
                        ticks_ms=machine.sim_ticks_ms, fault_file=folder + "/fault.txt")


def fault_boot(folder, journal_dir, log_fault=None):
    """faults.start on folder's files, which must fail, be contained and end in
    a reset; log_fault: raised by the log at the first journal line (resume).
    Returns (log lines, resets)."""
    log = []
    resets = len(machine.sim_resets())

    def logger(line):
        log.append(line)
        if log_fault is not None and line.startswith("J "):
            raise log_fault

    for _power_on in range(2):  # again if the first one only checked and cached the files
        del log[:]
        resets = len(machine.sim_resets())
        try:
            faults.start(folder + "/board.json", folder + "/table.json", journal_dir,
                         log=logger, ticks_ms=machine.sim_ticks_ms,
                         fault_file=folder + "/fault.txt")
        except SystemExit:
            pass  # the sim's machine.reset()
        else:
            raise AssertionError("no reset: %r" % log)
        if not any("restarting" in line for line in log):
            break
    return log, machine.sim_resets()[resets:]


def test_journal_folder_unusable_is_a_contained_fault():
    folder = fresh_folder()
    write_files(folder)
    with open(folder + "/j", "w") as f:
        f.write("a file where the journal folder should be")
    log, resets = fault_boot(folder, folder + "/j")
    assert resets == [machine.HARD_RESET], resets
    assert faults.Faults(folder + "/fault.txt").failed_boots()[0] == 1
    assert any("FAULT in stage %d" % E.F_JOURNAL in line for line in log), log
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)


def test_memory_error_while_resuming_is_journaled_and_resets():
    t = Table()
    t.play(1, 2, 3)
    t.power_off()
    log, resets = fault_boot(t.folder, t.folder, MemoryError("memory allocation failed"))
    assert resets == [machine.HARD_RESET]
    found = [r for r in journal_records(t.folder) if r.type == R.J_FAULT]
    assert len(found) == 1 and found[0].p(0) == E.F_RESUME and found[0].p(1) == E.K_MEMORY, (
        [(r.p(0), r.p(1)) for r in found], log)
    # Outputs off and the fault pattern on the lamps: every status lamp, no area.
    assert sorted(t.lit()) == ["ALARM", "PAYING", "PLACE_BETS", "VOID"], t.lit()
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)
def test_three_failed_boots_leave_the_table_out_of_service_without_watchdog():
    t = Table()
    t.power_off()
    for n in range(1, E.MAX_FAILED_BOOTS + 1):
        fault_boot(t.folder, t.folder, OSError(5))
        assert faults.Faults(t.folder + "/fault.txt").failed_boots()[0] == n
    log = []
    from machine import Pin

    for pin in (SOLENOID, BELL):  # driven high before the boot: out of service drives them low
        Pin(pin, Pin.OUT, value=1)
    assert start(t.folder, log) is None  # no reset: out of service, at the REPL
    said = [line for line in log if "OUT OF SERVICE" in line]
    assert said and said[0].startswith("sicbo: OUT OF SERVICE after %d failed boots (last: "
                                       % E.MAX_FAILED_BOOTS), log
    assert any("diag.clear_fault()" in line for line in log), log
    assert not any("lamps not lit" in line for line in log), log
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)
    assert no_watchdog_reset()
    assert sorted(t.lit()) == ["ALARM", "PAYING", "PLACE_BETS", "VOID"]
    faults.Faults(t.folder + "/fault.txt").clear()
    t2 = Table(folder=t.folder, reset=False)  # mended: the table starts again
    assert t2.m.state == E.ST_IDLE
    t2.close()


def test_out_of_service_with_its_table_file_refused_drives_the_outputs_low_all_the_same():
    # Without a table, no fault lamps; the board file alone still says where
    # the outputs are, and they are driven low, not left as the reset left them.
    t = Table()
    t.power_off()
    for _ in range(E.MAX_FAILED_BOOTS):
        fault_boot(t.folder, t.folder, OSError(5))
    with open(t.folder + "/table.json", "w") as f:
        f.write('{"name": "damaged"')  # cut short: not JSON
    from machine import Pin

    for pin in (SOLENOID, BELL):
        Pin(pin, Pin.OUT, value=1)
    log = []
    assert start(t.folder, log) is None
    assert any(line.startswith("sicbo: OUT OF SERVICE after") for line in log), log
    assert any(line.startswith("sicbo: fault lamps not lit: ") for line in log), log
    assert not any("outputs not driven" in line for line in log), log
    assert not machine.sim_output(SOLENOID) and not machine.sim_output(BELL)
    assert no_watchdog_reset()
    # With the board file refused too, it says so, and stays out of service.
    with open(t.folder + "/board.json", "w") as f:
        f.write("[]")
    for pin in (SOLENOID, BELL):
        Pin(pin, Pin.OUT, value=1)
    log = []
    assert start(t.folder, log) is None
    assert any(line.startswith("sicbo: outputs not driven (reset state): ") for line in log), log
    assert no_watchdog_reset()
    faults.Faults(t.folder + "/fault.txt").clear()


class _DyingUart:
    """A dice reader's UART that fails after a few reads (a bus fault)."""

    def __init__(self):
        self.calls = 0

    def any(self):
        self.calls += 1
        if self.calls > 3:
            raise ValueError("reader died")
        return 0


def _run_until_the_reader_dies(t):
    """Run the table's controller with a dice reader that dies: the resets
    the fault path then made."""
    t.hw.uart = _DyingUart()
    resets = len(machine.sim_resets())
    try:
        controller.run(t.ctl)
    except SystemExit:
        pass  # the sim's machine.reset()
    return machine.sim_resets()[resets:]


def test_a_task_that_dies_is_journaled_by_name_then_resets():
    t = Table()
    assert _run_until_the_reader_dies(t) == [machine.HARD_RESET]
    found = [r for r in t.journal() if r.type == R.J_FAULT]
    assert len(found) == 1, found
    assert found[0].p(0) == E.F_TASK and found[0].p(2) == task_id("reader")
    assert faults.Faults(t.folder + "/fault.txt").failed_boots()[0] == 1


def test_a_table_that_fails_before_it_has_run_stably_counts_one_more_failed_boot():
    # The failed boots are cleared only once the table has run for
    # E.STABLE_MS: a board that boots, then dies within a minute, again and
    # again, must reach MAX_FAILED_BOOTS and stay out of service.
    t = Table()
    t.power_off()
    for _n in range(1, E.MAX_FAILED_BOOTS):
        fault_boot(t.folder, t.folder, OSError(5))
    assert faults.Faults(t.folder + "/fault.txt").failed_boots()[0] == E.MAX_FAILED_BOOTS - 1
    t2 = Table(folder=t.folder, reset=False)
    assert _run_until_the_reader_dies(t2) == [machine.HARD_RESET]  # some 60 ms in
    assert faults.Faults(t.folder + "/fault.txt").failed_boots()[0] == E.MAX_FAILED_BOOTS
    log = []
    assert start(t.folder, log) is None  # out of service, at the REPL
    assert any("OUT OF SERVICE after %d failed boots" % E.MAX_FAILED_BOOTS in line
               for line in log), log


def test_without_a_watchdog_a_task_that_dies_is_named_by_its_row():
    # A board run without its watchdog (start-up not asked to arm it): the
    # task ids are the rows of controller.TASKS, and a dying task is still
    # journaled by name, then the board reset.
    t = Table()
    t.hw.watchdog = None
    assert _run_until_the_reader_dies(t) == [machine.HARD_RESET]
    found = [r for r in t.journal() if r.type == R.J_FAULT]
    assert len(found) == 1 and found[0].p(0) == E.F_TASK, found
    assert found[0].p(2) == task_id("reader")


def _watched(t):
    """The table's watchdog with every task of controller.TASKS registered
    now (as the controller's loop registers them): (watchdog, now)."""
    wd = t.hw.watchdog
    now = t.now()
    for name, _period, _step in controller.TASKS:
        wd.register(name, E.TASK_DEADLINE_MS, now)
    return wd, now


def test_a_late_task_is_named_before_the_watchdog_resets():
    t = Table()
    wd, now = _watched(t)
    for task in (0, 1):
        wd.alive(task, now + E.TASK_DEADLINE_MS + 100)
    late = now + E.TASK_DEADLINE_MS + 200
    assert t.ctl.watch(late) is False  # not fed
    assert t.ctl.watch(late + 10) is False
    found = [r for r in t.journal() if r.type == R.J_FAULT]
    assert len(found) == 1 and found[0].p(0) == E.F_WATCHDOG
    assert found[0].p(2) == task_id("reader")


def test_a_fault_while_building_the_adapters_is_contained():
    # The checked configuration is trusted from its cache: one that names a
    # pin the board cannot drive (GPIO6, the SPI flash; its hash made to
    # match, as flash damage would not) fails while the adapters are built.
    import tablefiles

    from sicbo import cache

    t = Table()
    t.power_off()
    path = t.folder + "/config.cache"
    cid = tablefiles.config_id(t.folder + "/board.json", t.folder + "/table.json")
    board, cfg = cache.load(path, cid)
    board.outputs["bell"] = 6
    assert cache.save(path, board, cfg, cid)
    log, resets = fault_boot(t.folder, t.folder)
    assert resets == [machine.HARD_RESET], resets
    assert any("FAULT in stage %d" % E.F_HARDWARE in line for line in log), log
    found = [r for r in journal_records(t.folder) if r.type == R.J_FAULT]
    assert found == []  # before the journal was replayed: /fault.txt only
    n, text = faults.Faults(t.folder + "/fault.txt").failed_boots()
    assert n == 1 and "stage %d" % E.F_HARDWARE in text, text
    assert not machine.sim_output(SOLENOID)


def test_a_fault_file_line_not_in_the_format_is_kept_as_its_text():
    # Written by hand or by an older firmware: the count and the story stay,
    # and the failed boot is still journaled (stage and kind unknown).
    folder = fresh_folder()
    path = folder + "/fault.txt"
    with open(path, "w") as f:
        f.write("3\nstage 3: MemoryError: a test\n2 1 0 1 stage 2: OSError 5\n\n")
    n, entries = faults.read_file(path)
    assert n == 3
    assert entries == [[0, 0, 0, 0, "stage 3: MemoryError: a test"],
                       [2, 1, 0, 1, "stage 2: OSError 5"]]
    f = faults.Faults(path, log=lambda line: None)
    assert f.failed_boots() == (3, "stage 2: OSError 5")
    told = []
    assert f.journal_pending(lambda *a: told.append(a)) == 1
    assert told == [(0, 0, 0, 1)]
    assert faults.read_file(path)[1][0][3] == 1


class _Lamps:
    def __init__(self):
        self.frames = []

    def write(self, frame):
        self.frames.append(bytes(frame))


def test_the_fault_lamps_go_through_the_lamp_driver_there_is_or_say_why_not():
    log = []
    f = faults.Faults(fresh_folder() + "/fault.txt", log.append)
    # Before the files are read there is no lamp layout: said, not lit.
    assert f.lamps_on() is False
    assert log == ["sicbo: fault lamps not lit: no lamp layout yet: the fault came before "
                   "the files were read"], log
    # With a driver made already (and no board file to make another from):
    # the fault pattern through it.
    f.frame = bytearray(b"\x0f\x00")
    f.lamps = _Lamps()
    assert f.lamps_on() is True and f.lamps.frames == [b"\x0f\x00"]
    # Or through the adapters' driver.
    g = faults.Faults(fresh_folder() + "/fault.txt", log.append)
    g.frame = bytearray(b"\x01")

    class _Hw:
        lamps = _Lamps()

    g.hw = _Hw()
    assert g.lamps_on() is True and _Hw.lamps.frames == [b"\x01"]


def test_the_fault_lamps_are_made_from_the_board_file_when_the_adapters_have_none():
    # The hardware stage failed before it made its lamp driver: the fault
    # path's Hardware has no lamps yet, so the fault lamps are driven from the
    # board file alone.
    from appkit import board_dict

    from hw import Hardware
    from sicbo.board import parse_board

    log = []
    f = faults.Faults(fresh_folder() + "/fault.txt", log.append)
    f.hw = Hardware()
    assert (f.hw.lamps, f.hw.solenoid, f.hw.bell, f.hw.motor) == (None, None, None, None)
    f.board = parse_board(board_dict())
    f.frame = bytearray(b"\x01")
    assert f.lamps_on() is True, log
    assert f.lamps is not None and log == []


def test_out_of_service_is_said_even_when_its_own_code_fails():
    # bootfail (loaded only after the failed boots) may itself be what is
    # damaged: the board stays out of service at the REPL, and says so.
    import sys

    class _Broken:
        @staticmethod
        def out_of_service(*args):
            raise MemoryError("bootfail.mpy damaged")

    t = Table()
    t.power_off()
    for _ in range(E.MAX_FAILED_BOOTS):
        fault_boot(t.folder, t.folder, OSError(5))
    saved = sys.modules.get("bootfail")
    sys.modules["bootfail"] = _Broken
    log = []
    try:
        assert start(t.folder, log) is None  # no reset, no table
    finally:
        if saved is not None:
            sys.modules["bootfail"] = saved
        else:
            del sys.modules["bootfail"]
    assert "sicbo: OUT OF SERVICE: MemoryError bootfail.mpy damaged" in log, log
    assert no_watchdog_reset()
    faults.Faults(t.folder + "/fault.txt").clear()


class _FullFile:
    """A journal segment on a filesystem that is full: every write refused."""

    def write(self, b):
        raise OSError(28)  # ENOSPC

    def flush(self):
        pass

    def close(self):
        pass


def test_a_task_fault_the_journal_could_not_take_is_journaled_by_the_next_boot_with_its_task():
    # The dice reader's task dies while the journal cannot be written (its
    # filesystem full): the failed boot is kept in /fault.txt, and the next
    # boot journals it late, as it was: stage, kind and which task.
    t = Table()
    t.store.f.close()
    t.store.f = _FullFile()
    assert _run_until_the_reader_dies(t) == [machine.HARD_RESET]
    path = t.folder + "/fault.txt"
    n, entries = faults.read_file(path)
    assert n == 1 and entries[-1][:4] == [E.F_TASK, E.K_VALUE, task_id("reader"), 0], entries
    assert [r for r in journal_records(t.folder) if r.type == R.J_FAULT] == []
    t2 = reboot(t)
    t2.close()
    found = [r for r in journal_records(t.folder) if r.type == R.J_FAULT]
    assert len(found) == 1, found
    assert (found[0].p(0), found[0].p(1), found[0].p(2), found[0].p(3)) == (
        E.F_TASK, E.K_VALUE, task_id("reader"), 1), found[0]
    assert faults.read_file(path)[1][-1][3] == 1  # marked journaled: not again
    t3 = reboot(t2)
    t3.close()
    assert len([r for r in journal_records(t.folder) if r.type == R.J_FAULT]) == 1


def test_a_module_that_fails_to_load_is_named_with_its_file_in_the_fault():
    # The fault a technician reads (the log line, /fault.txt, diag.status)
    # names the file a damaged module came from, so that it is the one
    # deployed again; a module with no file (frozen, or not there) by name.
    import os
    import sys

    from folderkit import process_tag

    pkg = "sicbo_fault_" + process_tag()
    d = "/tmp/" + pkg
    try:
        os.mkdir(d)
    except OSError:
        pass
    with open(d + "/bellx.py", "w") as f:
        f.write("def ring(:\n")  # cut short: not Python
    name = "tmp." + pkg + ".bellx"  # the board's "hw.bell" is /hw/bell.py
    folder = fresh_folder()
    log = []
    sys.path.append("/")  # the board imports from its filesystem's root
    try:
        for module, said in ((name, "%s (%s/bellx.py)" % (name, d)),
                             ("sicbo_no_such_module", "sicbo_no_such_module")):
            f = faults.Faults(folder + "/fault.txt", log.append)
            try:
                f.load(module)
            except Exception as e:  # noqa: BLE001 - the fault path takes any
                f.contain(e)
            else:
                raise AssertionError("loaded " + module)
            text = f.failed_boots()[1]
            assert text.startswith("stage %d loading %s: " % (E.F_START, said)), text
            line = "sicbo: FAULT in stage %d loading %s: " % (E.F_START, said)
            assert log[-1].startswith(line), log
    finally:
        sys.path.remove("/")
        for key in ("tmp." + pkg, "tmp"):
            if key in sys.modules:
                del sys.modules[key]
        os.remove(d + "/bellx.py")
        os.rmdir(d)



def test_a_task_late_once_is_contained_and_the_board_is_reset_all_the_same():
    # Found in review, seen failing before the fix: a task late once was
    # contained (outputs off, the round voided, J_FAULT), then fed again when
    # it reported once more; the table played on with its fault lamps
    # overwritten, and a later real stall was named by no J_FAULT.
    t = Table()
    wd, _now = _watched(t)
    t.close_dome()
    t.set("shake", 1)
    t.run(30)  # the shake: the first pulse is on
    for i in range(len(controller.TASKS)):
        wd.alive(i, t.now())
    assert t.state() == E.ST_SHAKING and machine.sim_output(SOLENOID) == 1
    # The loop held past the tasks' deadline by one blocking pass.
    machine.sim_advance(E.TASK_DEADLINE_MS + 100)
    late = t.now()
    assert t.ctl.watch(late) is False
    assert machine.sim_output(SOLENOID) == 0  # contained: the coil off
    assert [r for r in t.journal() if r.type == R.J_FAULT]
    # The tasks report again: still never fed, and the WDT resets the board.
    for i in range(len(controller.TASKS)):
        wd.alive(i, late + 5)
    assert t.ctl.watch(late + 10) is False
    resets = len(machine.sim_resets())
    for _ in range(40):
        machine.sim_advance(500)
        for i in range(len(controller.TASKS)):
            wd.alive(i, t.now())
        assert t.ctl.watch(t.now()) is False
        if len(machine.sim_resets()) > resets:
            break
    assert len(machine.sim_resets()) > resets
