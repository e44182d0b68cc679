# The pieces of the hardware shell that the app, its start-up (appboot) and
# the REPL diagnostics (diag) share: where the files are, the bundle of
# adapters, the wall clock, and the unloading of start-up code. Small on
# purpose: diag imports it without the round machine.

import json
import sys
import time

from micropython import const

from sicbo import dates

BOARD_FILE = "/board.json"
TABLE_FILE = "/table.json"
JOURNAL_DIR = "/journal"
KEY_CONFIRM = const(8)  # switch index of key_confirm (sicbo.settings.INPUT_SIGNALS)
_RTC_VALID_YEAR = const(2025)  # an RTC before this year was never set
_DAY_2000 = const(10957)  # days from 1970-01-01 to 2000-01-01

# Start-up only: dropped by unload_boot() once the table runs.
BOOT_MODULES = ("appboot", "sicbo.board", "sicbo.config", "sicbo.resume", "sicbo.areas")


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
        days = dates.days_from_civil(y, mo, d) - _DAY_2000
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


def read_json(path):
    with open(path) as f:
        return json.load(f)


# The file parsers (and the area catalogue they use): done with once the
# files are read and the settlement table built (unload_boot(PARSERS)).
PARSERS = ("sicbo.board", "sicbo.config", "sicbo.areas")


def load(board_path=BOARD_FILE, table_path=TABLE_FILE):
    """(Board, TableConfig) or ConfigError; nothing is built from a refused file.
    The parsers are imported here, not by this module, so that dropping them
    (PARSERS) frees them before the adapters are built."""
    from sicbo import board as boardfile
    from sicbo import config

    board = boardfile.parse_board(read_json(board_path))
    cfg = config.parse_table(read_json(table_path))
    boardfile.check_shaker(board, cfg.shaker)
    return board, cfg


def start(board_path=BOARD_FILE, table_path=TABLE_FILE, journal_dir=JOURNAL_DIR):
    """main.py's entry. Returns (to the REPL) on a refused configuration or in
    recovery mode, with every actuator off; otherwise runs the table. The files
    are parsed before the controller's code is loaded: the lowest peak."""
    import gc

    import appboot

    ctl = appboot.open_table(board_path, table_path, journal_dir)
    del appboot
    unload_boot()
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
