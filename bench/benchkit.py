# Shared by the MicroPython benchmarks (`micropython bench/X.py` puts bench/ on
# sys.path): where the project's files and the .mpy tree of host_tools.mprun
# are, and the one start-up, as main.py runs it (startup.open_table), on the
# simulated machine.
import os
import sys
import time


def _root():
    p = sys.argv[0]
    i = p.rfind("/")
    d = p[:i] if i >= 0 else "."
    i = d.rfind("/")
    return d[:i] if i >= 0 else "."


ROOT = _root()
MPY = os.getenv("SICBO_MPY_ROOT") or (ROOT + "/build/mpy")
BOARD_FILE = ROOT + "/board_config/boards/virtual.json"
TABLE_FILE = ROOT + "/board_config/tables/macau-2004.json"
# The RTC as deploy sets it: after the 2004 table's approval takes effect
# (the approval check fails closed without a clock).
RTC_NOW = (2026, 12, 1, 1, 12, 0, 0, 0)


def firmware_path():
    """build/mpy/device first on sys.path (the firmware as sicbo deploy
    installs it, .mpy), build/mpy/sim last: a simulated machine frozen into
    the interpreter ('.frozen') is found before it, as a board's built-in one."""
    sys.path.insert(0, MPY + "/device")
    sys.path.append(MPY + "/sim")
    try:
        os.stat(MPY + "/device/controller.mpy")
    except OSError:
        print("no %s/device/controller.mpy: compile first "
              "(python -c 'from host_tools.mprun import compile_trees; compile_trees()')" % MPY)
        sys.exit(2)


def fresh_folder(name):
    """An empty folder under /tmp, unique per run (the unix port has no
    os.getpid): two benchmarks may run at once."""
    path = "/tmp/sicbo-%s-%d-%d" % (name, int(time.time()), time.ticks_us() & 0xFFFFFF)
    try:
        os.mkdir(path)
    except OSError:
        for entry in os.listdir(path):
            os.remove(path + "/" + entry)
    return path


def remove_folder(path):
    for entry in os.listdir(path):
        os.remove(path + "/" + entry)
    os.rmdir(path)


def write_files(folder, board=BOARD_FILE, table=TABLE_FILE):
    """board.json and table.json in the run folder, as deploy puts them on
    a board (the folder also holds the journal, as /journal on a board)."""
    for src, name in ((board, "board.json"), (table, "table.json")):
        with open(src, "rb") as f:
            data = f.read()
        with open(folder + "/" + name, "wb") as f:
            f.write(data)


class Pins:
    """What the bench needs of the board file to play the table: the GPIO and
    inversion of each input (sicbo.signals order), the timings, the lamp bus,
    and the lamp frame's size. Read with json, not the firmware's parser
    (which must load at start-up, and be dropped after it)."""

    def __init__(self, folder):
        import json

        from sicbo.signals import INPUT_SIGNALS

        with open(folder + "/board.json") as f:
            bd = json.load(f)
        with open(folder + "/table.json") as f:
            self.row_bytes = (len(json.load(f)["lamp_order"]) + 7) >> 3
        ins = bd["inputs"]
        self.gpio = bytearray(ins[n]["pin"] for n in INPUT_SIGNALS)
        self.inv = bytearray(1 if ins[n]["invert"] else 0 for n in INPUT_SIGNALS)
        self.timings = bd["timings"]
        self.spi = bd["lamps"]["spi"]
        self.latch = bd["lamps"]["latch"]


def open_table(folder, pins, log):
    """Start the table as main.py does (faults.boot: start-up, then its
    modules dropped), on the simulated machine with its manual
    clock, the files and journal in `folder`. Returns the Controller, or
    None (refused: the line went to log). Power on, or again after a cut:
    the simulated table keeps its pins, the machine's RTC is as set."""
    import faults
    import machine

    machine.sim_attach_595(pins.spi, pins.latch, pins.row_bytes)
    for _power_on in range(2):
        ctl, restart = faults.boot(faults.Faults(folder + "/fault.txt", log),
                                   folder + "/board.json", folder + "/table.json", folder,
                                   log=log, ticks_ms=machine.sim_ticks_ms)
        if not restart:
            break
        # The files were checked and cached beside them (sicbo/cache.py): a
        # board resets now (faults.start); here, start again at once.
    return ctl


def first_power_on(folder, pins, log):
    """The first boot on new files checks them and caches them beside them
    (sicbo/cache.py), then the board resets. Run that boot, then forget every
    module it loaded, as the reset does, so that what follows (a measured
    start-up) starts from the heap a board has after it, every input off.
    Returns True if it restarted (False: the table ran at once, or was
    refused; closed)."""
    import gc

    import machine

    before = set(sys.modules)
    import faults
    import resumption
    import startup

    machine.sim_attach_595(pins.spi, pins.latch, pins.row_bytes)
    fault_path = faults.Faults(folder + "/fault.txt", log)
    ctl, restarted, opened = startup.open_table(fault_path, folder + "/board.json",
                                                folder + "/table.json", folder,
                                                cause=machine.reset_cause(), rtc=machine.RTC(),
                                                ticks_ms=machine.sim_ticks_ms, log=log)
    if ctl is not None:
        # As faults.boot resumes it, without the watchdog armed.
        resumption.resume_table(fault_path, ctl, opened, machine.reset_cause(), log,
                                machine.sim_ticks_ms, watchdog=False)
        ctl.hw.all_off()
        ctl.store.close()
    del ctl, opened, startup, resumption, faults, fault_path
    for name in list(sys.modules):
        if name not in before:
            del sys.modules[name]
            dot = name.rfind(".")
            pkg = sys.modules.get(name[:dot]) if dot > 0 else None
            if pkg is not None and hasattr(pkg, name[dot + 1:]):
                delattr(pkg, name[dot + 1:])  # a package kept (sicbo) holds its submodules
    # The reset: the machine forgets its IRQ handlers and timers (which hold
    # that boot's objects) and its RTC; the pins are set again as they were
    # (every input off), the clock as deploy sets it.
    ticks = machine.sim_ticks_ms()
    machine.sim_reset(ticks=ticks)
    machine.RTC().datetime(RTC_NOW)
    for i in range(len(pins.gpio)):
        machine.sim_set(pins.gpio[i], pins.inv[i])
    gc.collect()
    return restarted


class Console:
    """log= for the table: what a board prints on its serial port, of which
    the last few lines are kept (shown when a start-up is refused)."""

    def __init__(self, keep=8):
        self.keep = keep
        self.lines = []

    def __call__(self, line):
        lines = self.lines
        lines.append(line)
        if len(lines) > self.keep:
            lines.pop(0)
