# The pieces of the hardware shell that the app, its start-up (appboot) and
# the REPL diagnostics (diag) share: where the files are, the bundle of
# adapters, the wall clock, and the unloading of start-up code. Small on
# purpose: diag imports it without the round machine.

import sys
import time

from micropython import const

from sicbo import dates
from sicbo import events as E

BOARD_FILE = "/board.json"
TABLE_FILE = "/table.json"
JOURNAL_DIR = "/journal"
CACHE_NAME = "config.cache"  # beside the board file: sicbo/cache.py
_RTC_VALID_YEAR = const(2025)  # an RTC before this year was never set

# Start-up only: dropped by unload_boot() once the table runs.
BOOT_MODULES = ("appboot", "sicbo.board", "sicbo.config", "sicbo.areas", "sicbo.errors",
                "hw.inputs")


class Hardware:
    """The adapters of one board, made from a validated Board. Everything the
    Controller touches goes through here, so tests can swap any part."""

    def __init__(self):
        self.switches = None
        self.solenoid = None
        self.motor = None
        self.bell = None
        self.lamps = None
        self.uart = None
        self.watchdog = None

    def all_off(self):
        """Every actuator off: at start, on exit, before a reset."""
        for a in (self.solenoid, self.motor, self.bell):
            if a is not None:
                a.stop()


class WallClock:
    """Seconds since 2000-01-01 UTC from the RTC, or None while the RTC has
    not been set (the host sets it on deploy and diagnostics). Read from the
    RTC once a minute; between reads, ticks count the seconds, so an event
    costs no RTC call and no allocation."""

    def __init__(self, rtc=None):
        self._rtc = rtc
        self._base = None
        self._base_ticks = 0

    def refresh(self, now):
        if self._rtc is None:
            self._base = None
            return
        y, mo, d, _wd, h, mi, s, _sub = self._rtc.datetime()
        if y < _RTC_VALID_YEAR:
            self._base = None
            return
        days = dates.days_from_civil(y, mo, d) - dates.DAY_2000
        self._base = days * 86400 + h * 3600 + mi * 60 + s
        self._base_ticks = now

    def seconds(self, now):
        if self._base is None:
            return None
        if time.ticks_diff(now, self._base_ticks) >= 60000:
            self.refresh(now)
            if self._base is None:
                return None
        return self._base + time.ticks_diff(now, self._base_ticks) // 1000


def unload_boot(names=BOOT_MODULES):
    """Forget start-up modules, so that the garbage collector takes their
    code (nothing that runs the table refers to them). MicroPython only: on
    CPython (host tools, pytest) modules stay, as a re-import there would
    make new classes."""
    if sys.implementation.name != "micropython":
        return
    for name in names:
        if sys.modules.pop(name, None) is None:
            continue
        dot = name.rfind(".")
        if dot > 0:
            pkg = sys.modules.get(name[:dot])
            if pkg is not None and hasattr(pkg, name[dot + 1:]):
                delattr(pkg, name[dot + 1:])


# The file parsers (and the area catalogue they use): done with once the
# files are read and the settlement table built (unload_boot(PARSERS)).
PARSERS = ("sicbo.board", "sicbo.config", "sicbo.areas", "sicbo.cache")


# ---- containment -------------------------------------------------------------
# Any exception that escapes start-up or a task ends here: every actuator off,
# the fault pattern on the lamps, a best-effort journal record and a line in
# FAULT_FILE (what failed, where), then a deliberate reset. FAULT_FILE counts
# consecutive failed boots across resets; after MAX_FAILED_BOOTS the board
# stays out of service at the REPL instead of resetting forever. The app
# clears it once the table has run for STABLE_MS.

FAULT_FILE = "/fault.txt"  # stages, limits: sicbo.events F_*, MAX_FAILED_BOOTS


class Boot:
    """What start-up has made so far, for containment: the stage it is in
    (F_* of sicbo.events) and the objects that exist."""

    def __init__(self, fault_file=FAULT_FILE):
        self.fault_file = fault_file
        self.log = print
        self.stage = E.F_START
        self.hw = None
        self.table = None
        self.ctl = None  # once the journal has been replayed: it may add a record
        self.restart = False  # the files were checked and cached: start again


def failed_boots(path=FAULT_FILE):
    """(count, text) of the consecutive failed boots, (0, "") if none."""
    try:
        with open(path) as f:
            n = int(f.readline())
            return n, f.readline().strip()
    except (OSError, ValueError):
        return 0, ""


def clear_failed_boots(path=FAULT_FILE):
    import os

    try:
        os.remove(path)
    except OSError:
        pass


def fault_kind(e):
    """K_* of sicbo.events for an exception (no allocation)."""
    if isinstance(e, MemoryError):
        return E.K_MEMORY
    if isinstance(e, OSError):
        return E.K_OS
    if isinstance(e, ValueError):
        return E.K_VALUE
    return E.K_OTHER


def record_fault(boot, e, stage, detail=0):
    """Best effort, each step on its own: outputs off and the fault lamps,
    the fault counted in FAULT_FILE, a journal record. Returns the count of
    failed boots including this one."""
    hw = boot.hw
    if hw is not None:
        try:
            hw.all_off()
        except Exception:  # noqa: BLE001 - a fault must never stop containment
            pass
        fault_lamps(hw, boot.table)
    n, _text = failed_boots(boot.fault_file)
    n += 1
    try:
        with open(boot.fault_file, "w") as f:
            f.write("%d\nstage %d: %s %s\n" % (n, stage, type(e).__name__, e))
    except Exception:  # noqa: BLE001
        pass
    ctl = boot.ctl
    if ctl is not None:
        try:
            ctl.journal_fault(stage, fault_kind(e), detail)
        except Exception:  # noqa: BLE001
            pass
    try:
        boot.log("sicbo: FAULT in stage %d: %s %s" % (stage, type(e).__name__, e))
    except Exception:  # noqa: BLE001
        pass
    return n


def fault_lamps(hw, table):
    """Every status lamp lit and every area dark: a pattern no round shows
    (PLACE_BETS and PAYING are never lit together), so no dealer can take it
    for a result. With no status lamp wired, every lamp dark."""
    lamps = hw.lamps
    if lamps is None:
        return
    try:
        n = table.row_bytes if table is not None else 0
        frame = bytearray(n)
        if table is not None:
            from sicbo.settle import set_channel

            for ch in table.status_channel.values():
                set_channel(frame, ch, 1)
        lamps.write(frame)
    except Exception:  # noqa: BLE001
        pass


def start(board_path=BOARD_FILE, table_path=TABLE_FILE, journal_dir=JOURNAL_DIR, log=print,
          ticks_ms=None, fault_file=FAULT_FILE):
    """main.py's entry. Returns (to the REPL) on a refused configuration, in
    recovery mode or out of service, with every actuator off and the watchdog
    never armed; otherwise runs the table until a fault, which is contained
    (record_fault) and ends in a reset. Ctrl-C (a technician, mpremote) stops
    the table without a reset. log and ticks_ms: as appboot.open_table."""
    import machine

    boot = Boot(fault_file)
    boot.log = log
    n, text = failed_boots(fault_file)
    if n >= E.MAX_FAILED_BOOTS:
        import appboot

        appboot.out_of_service(n, text, board_path, table_path, boot, log)
        return None
    try:
        return _run(boot, board_path, table_path, journal_dir, log, ticks_ms)
    except KeyboardInterrupt:
        if boot.hw is not None:
            boot.hw.all_off()
        raise
    except SystemExit:
        raise  # a reset under way (the unix port's machine.reset() raises it)
    except BaseException as e:  # noqa: BLE001 - contain everything, then reset
        try:
            record_fault(boot, e, boot.stage)
        finally:
            # Always a reset, even for the last allowed failure: the next boot
            # finds the count and stays out of service with no watchdog armed
            # (an armed machine.WDT cannot be stopped).
            machine.reset()
    return None


def _run(boot, board_path, table_path, journal_dir, log, ticks_ms):
    import gc

    import machine

    import appboot

    ctl = appboot.open_table(boot, board_path, table_path, journal_dir,
                             cause=machine.reset_cause(), rtc=machine.RTC(),
                             ticks_ms=ticks_ms, log=log)
    del appboot
    unload_boot()
    if boot.restart:
        machine.reset()  # the configuration is cached: the next boot runs the table
    if ctl is None:
        return None
    import app

    gc.collect()
    try:
        app.run(ctl)
    finally:
        ctl.hw.all_off()
        ctl.store.close()
    return ctl
