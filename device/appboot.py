# Start-up of the table controller, run once by app.start() and then dropped
# from memory (shell.unload_boot): read and validate the board and table files,
# build the hardware adapters from the board file, open the journal and boot
# the Controller. diag and the tests use the same functions.

import time

import shell
from machine import Pin, Timer
from micropython import const

from hw.bell import Bell
from hw.lamps import PixelLamps, ShiftLamps
from hw.solenoid import ShakerMotor, Solenoid
from hw.switches import Switches
from hw.watchdog import Watchdog
from journal_store import JournalStore
from sicbo import dates, settle
from sicbo import events as E
from sicbo.resume import Replay

_DAY_2000 = const(10957)  # days from 1970-01-01 to 2000-01-01
_PULLS = {"up": Pin.PULL_UP, "down": Pin.PULL_DOWN, "none": None}


def input_pin(gpio, pull):
    # pull=None is the port's "no pull resistor"; the stubs only allow ints.
    return Pin(gpio, Pin.IN, _PULLS[pull])  # type: ignore[arg-type]


def input_pins(board):
    return [input_pin(p, pull) for _s, p, pull, _inv in board.inputs]


def build_hardware(board, row_bytes, ticks_ms=None, watchdog=True):
    """The adapters for a Board (sicbo.board.parse_board). row_bytes is the
    lamp frame size of the table's settlement table."""
    t = board.timings
    hw = shell.Hardware()
    hw.switches = Switches(input_pins(board), t["debounce_ms"], t["chatter_limit"],
                           t["chatter_window_ms"],
                           invert=[inv for _s, _p, _pull, inv in board.inputs],
                           ticks_ms=ticks_ms)
    out = board.outputs
    if "solenoid" in out:
        timer = Timer(board.timers["solenoid"])
        if t["hold_percent"]:
            from machine import PWM

            pwm = PWM(Pin(out["solenoid"], Pin.OUT, value=0), freq=t["pwm_freq"], duty_u16=0)
            hw.solenoid = Solenoid(None, timer, t["max_on_ms"], t["rest_ms"], pwm=pwm,
                                   hold_duty_u16=t["hold_percent"] * 65535 // 100,
                                   pull_in_ms=t["pull_in_ms"], ticks_ms=ticks_ms)
        else:
            hw.solenoid = Solenoid(Pin(out["solenoid"], Pin.OUT, value=0), timer,
                                   t["max_on_ms"], t["rest_ms"], ticks_ms=ticks_ms)
    if "shaker_motor" in out:
        hw.motor = ShakerMotor(Pin(out["shaker_motor"], Pin.OUT, value=0),
                               Timer(board.timers["shaker_motor"]), t["electric_run_ms"],
                               ticks_ms=ticks_ms)
    hw.bell = Bell(Pin(out["bell"], Pin.OUT, value=0), Timer(board.timers["bell"]),
                   t["bell_ms"], ticks_ms=ticks_ms)
    lb = board.lamps
    if lb["bus"] == "hc595":
        from machine import SPI

        spi = SPI(lb["spi"], baudrate=lb["baudrate"], sck=Pin(lb["sck"]), mosi=Pin(lb["mosi"]))
        # The latch and /OE after the SPI: a Pin made later takes its GPIO back.
        oe = Pin(lb["oe"], Pin.OUT, value=1) if lb["oe"] is not None else None
        hw.lamps = ShiftLamps(spi, Pin(lb["latch"], Pin.OUT, value=0), row_bytes, oe=oe)
    else:
        from neopixel import NeoPixel

        strip = NeoPixel(Pin(lb["pin"], Pin.OUT), lb["count"], bpp=len(lb["colour"]))
        hw.lamps = PixelLamps(strip, row_bytes, tuple(lb["colour"]))
    rd = board.reader
    if rd is not None:
        from machine import UART

        hw.uart = UART(rd["uart"], baudrate=rd["baudrate"], tx=Pin(rd["tx"]), rx=Pin(rd["rx"]))
    if watchdog:
        from machine import WDT

        hw.watchdog = Watchdog(WDT(timeout=t["watchdog_ms"]), ticks_ms=ticks_ms)
    return hw


read_json = shell.read_json


def file_digest(*paths):
    """First 6 bytes of the sha256 of the files: the configuration's identity."""
    import hashlib

    h = hashlib.sha256()
    # In small pieces: a whole table file would need one large free block,
    # which a fragmented heap at start-up may not have.
    buf = bytearray(256)
    mv = memoryview(buf)
    for p in paths:
        with open(p, "rb") as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                h.update(mv[:n])
    return h.digest()[:6]


# The file parsers live in shell, so that diag can read the files before it
# loads anything else; appboot.load is the same function.
PARSERS = shell.PARSERS
load = shell.load


def recovery_requested(board):
    """The dealer's confirm key held at power-on: do not start the app."""
    _s, p, pull, inv = board.inputs[shell.KEY_CONFIRM]
    pin = input_pin(p, pull)
    return (pin.value() ^ (1 if inv else 0)) == 1


def approval_in_force(cfg, wall_seconds):
    """False when the RTC says the table's approval is not yet effective."""
    if wall_seconds is None:
        return True  # no date known: cannot be checked (a warning is logged)
    today = wall_seconds // 86400 + _DAY_2000
    return today >= dates.parse(cfg.approval["effective"])


def open_table(board_path, table_path, journal_dir):
    """app.start()'s start-up: the files, the adapters, the journal and a booted
    Controller (also app.controller), or None (printed why) when the table
    must not run: refused files, recovery mode, approval not yet in force."""
    from sicbo.errors import ConfigError

    try:
        board, cfg = load(board_path, table_path)
        table = settle.SettlementTable(cfg)
    except (OSError, ValueError) as e:
        msg = str(e) if isinstance(e, ConfigError) else "cannot read %s or %s: %r" % (
            board_path, table_path, e)
        print("sicbo: configuration refused, table not started: " + msg)
        return None
    finally:
        shell.unload_boot(PARSERS)  # the lowest heap before the adapters are built
    for w in board.warnings:
        print("sicbo: board warning: " + w)
    if recovery_requested(board):
        print("sicbo: recovery mode (confirm key held at power-on): app not started")
        return None
    from machine import RTC

    hw = build_hardware(board, table.row_bytes)
    hw.all_off()
    try:
        import os

        os.mkdir(journal_dir)
    except OSError:
        pass  # it exists
    store = JournalStore(journal_dir)
    wall = shell.WallClock(RTC())
    import app  # here, not at the top: diag uses this module without the app

    ctl = app.Controller(cfg, board, hw, store, wall, table=table)
    app.controller = ctl
    now = time.ticks_ms()
    wall.refresh(now)
    if not approval_in_force(cfg, wall.seconds(now)):
        print("sicbo: table approval %s is effective from %s only: table not started"
              % (cfg.approval["reference"], cfg.approval["effective"]))
        return None
    if wall.seconds(now) is None:
        print("sicbo: RTC not set: journal records carry no wall-clock time")
    ctl.boot(now, file_digest(board_path, table_path))
    print("sicbo: %s, round %d, state %s" % (cfg.name, ctl.m.round, ctl.status()["state"]))
    # The board file's data served start-up only (the adapters are built):
    # its pin map, timings and warnings go back to the heap.
    ctl.board = None
    return ctl


def boot(ctl, now, config_id=b""):
    """Controller.boot: replay the journal, then resume with the sensors as
    they read now; a new config_id is journaled as a configuration change."""
    ctl.wall.refresh(now)
    rp = Replay()
    store = ctl.store
    store.checkpoint = ctl._checkpoint
    store.boot(rp, ctl.recall)
    sw = ctl.hw.switches
    sw.update(now)
    while sw.pop(ctl._ev):
        pass  # levels are what counts at boot, not how they got there
    m = ctl.m
    wall = ctl.wall.seconds(now)
    n = m.resume(rp, now, wall, sw.level(0), sw.level(1), sw.level(2), sw.level(4))
    ctl._drain(n, now)
    if len(store.segs) > store.max_files:
        # Each boot opens a segment and only rotation deletes: a board that
        # keeps resetting (a boot loop) would grow its journal, and the list
        # of segments in the heap, without end. Rotate: a meters checkpoint
        # heads the new segment, then the oldest go. Not at every boot, which
        # would spend a checkpoint on every reset (each sicbo diag is one).
        store.rotate(m.open_seq)
    if config_id and bytes(rp.config_id) != config_id:
        m._begin(now, wall)
        c = config_id
        m._rec(E.J_CONFIG, c[0], c[1], c[2], c[3], c[4], c[5])
        ctl._drain(0, now)
    ctl.config_id = config_id
    ctl.booted = True
