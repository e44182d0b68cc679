# Start-up of the table controller, run once by shell.start() and then dropped
# from memory (shell.unload_boot): read and validate the board and table files,
# build the hardware adapters from the board file, replay the journal and
# resume the Controller. diag and the tests use the same functions.

import json
import time

import shell
from machine import Pin, Timer

from hw import inputs
from sicbo import dates, settle, signals
from sicbo import events as E


def build_hardware(board, row_bytes, ticks_ms=None, watchdog=True):
    """The adapters for a Board (sicbo.board.parse_board). row_bytes is the
    lamp frame size of the table's settlement table. The adapters' modules
    are imported here: start-up loads them once the journal is replayed."""
    from hw.bell import Bell
    from hw.lamps import PixelLamps, ShiftLamps
    from hw.solenoid import ShakerMotor, Solenoid

    t = board.timings
    hw = shell.Hardware()
    spi = inputs.spi_for(board)  # the lamps' bus, shared with the keys' chain: made first
    hw.switches = inputs.make_switches(board, ticks_ms, spi)
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

        from hw.watchdog import Watchdog

        hw.watchdog = Watchdog(WDT(timeout=t["watchdog_ms"]), ticks_ms=ticks_ms)
    return hw


def read_json(path):
    with open(path) as f:
        return json.load(f)


def load(board_path=shell.BOARD_FILE, table_path=shell.TABLE_FILE):
    """(Board, TableConfig) or ConfigError; nothing is built from a refused
    file. The parsers are imported here, and dropped by the caller
    (shell.PARSERS) before the adapters are built."""
    from sicbo import board as boardfile
    from sicbo import config

    board = boardfile.parse_board(read_json(board_path))
    cfg = config.parse_table(read_json(table_path))
    boardfile.check_shaker(board, cfg.shaker)
    return board, cfg


def out_of_service(n, text, board_path, table_path, boot, log=print):
    """The board's state after E.MAX_FAILED_BOOTS failed boots: outputs
    off, the fault pattern on the lamps if the files still allow it, two
    lines saying what failed and how to clear it; no watchdog."""
    log("sicbo: OUT OF SERVICE after %d failed boots (last: %s). Outputs are off."
        % (n, text))
    log("sicbo: see diag.status(); once mended: import diag; diag.clear_fault(); "
        "machine.reset()")
    try:
        board, cfg = load(board_path, table_path)
        table = settle.SettlementTable(cfg)
        shell.unload_boot(shell.PARSERS)
        boot.hw = build_hardware(board, table.row_bytes, watchdog=False)
        boot.hw.all_off()
        shell.fault_lamps(boot.hw, table)
    except Exception as e:  # noqa: BLE001 - the lamps are a courtesy here
        log("sicbo: fault lamps not lit: %s %s" % (type(e).__name__, e))


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


def approval_refusal(cfg, wall, m, config_id):
    """None when the table may run, else the one line saying why not. Fails
    closed: with the clock unknown (the ESP32's RTC does not survive a power
    cut), only a journal that shows these very files (config_id) journaled
    at a known time on or after the effective date lets the table run."""
    effective = dates.parse(cfg.approval["effective"])
    if wall is not None:
        if wall // 86400 + dates.DAY_2000 >= effective:
            return None
        return ("table approval %s is effective from %s only: table not started"
                % (cfg.approval["reference"], cfg.approval["effective"]))
    known = m.config_wall
    if bytes(m.config_id) == config_id and known is not None and (
            known // 86400 + dates.DAY_2000 >= effective):
        return None
    return ("RTC not set and the journal does not show table approval %s in force: "
            "set the clock (sicbo deploy or sicbo diag sets it); table not started"
            % cfg.approval["reference"])


def open_table(boot, board_path, table_path, journal_dir, cause=0, rtc=None,
               ticks_ms=None, log=print, watchdog=True):
    """Start-up, staged so that its peak heap stays close to the running
    table's: (1) parse the files, build the settlement table, drop the parsers;
    (2) the journal's read buffer, then every module the running table needs;
    (3) the adapters, all off; (4) replay the journal through that one buffer;
    (5) the approval check, resume, the watchdog. Returns the booted
    Controller, or None (one line printed) when the table must not run:
    refused files, recovery mode, approval not in force. Those refusals come
    before the watchdog is armed. Clock (rtc, ticks_ms), journal folder and
    log (start-up's lines and the journal's) are arguments, so that tests
    start the table exactly this way.
    `boot` (shell.Boot) tracks the stage and what exists, for containment."""
    import gc

    ticks = ticks_ms if ticks_ms is not None else time.ticks_ms
    say = log if log is not None else print  # log None: no journal lines, these still
    boot.stage = E.F_FILES
    try:
        config_id = file_digest(board_path, table_path)
        from sicbo import cache

        cache_path = board_path[:board_path.rfind("/") + 1] + shell.CACHE_NAME
        got = cache.load(cache_path, config_id)
        if got is None:
            # No cache of these files: parse them (the parsers are loaded
            # only for this), keep the result, and start again: the boot
            # that runs the table never has the parsers' garbage in its heap.
            board, cfg = load(board_path, table_path)
            if cache.save(cache_path, board, cfg, config_id):
                say("sicbo: configuration checked and kept in %s: restarting" % cache_path)
                boot.restart = True
                return None
            say("sicbo: cannot write %s: starting from the parsed files" % cache_path)
        else:
            board, cfg = got
        del got, cache
        table = settle.SettlementTable(cfg)
    except (OSError, ValueError) as e:
        # A ConfigError (the parsers') names its field; sicbo.errors is not
        # imported for the test: a boot with the cache never loads it.
        msg = str(e) if hasattr(e, "field") else "cannot read %s or %s: %r" % (
            board_path, table_path, e)
        say("sicbo: configuration refused, table not started: " + msg)
        return None
    finally:
        shell.unload_boot(shell.PARSERS)  # the lowest heap before the rest loads
    gc.collect()
    boot.table = table
    for w in board.warnings:
        say("sicbo: board warning: " + w)
    if inputs.confirm_held(board):  # the dealer's confirm key held at power-on
        say("sicbo: recovery mode (confirm key held at power-on): app not started")
        return None
    # The journal's buffer, all the running table's code and its objects,
    # while the heap is whole (a module's code needs large free blocks); then
    # the replay, whose garbage is collected before anything else is made.
    boot.stage = E.F_JOURNAL
    from journal_store import JournalStore

    store = JournalStore(journal_dir)
    buf = store.read_buffer()
    from sicbo.meters import Meters
    from sicbo.round import RoundMachine

    t = board.timings
    m = RoundMachine(cfg, table, pulses=t["pulse_count"], pulse_on_ms=t["pulse_on_ms"],
                     pulse_off_ms=t["pulse_off_ms"], shaker_ms=t["electric_run_ms"],
                     bell_ms=t["bell_ms"])
    m.meters = Meters(table.channels, table)  # its checkpoint buffer: a large block, made first
    reader = None
    if board.reader is not None:
        from sicbo.dicereader import DiceReader

        reader = DiceReader()
    import app

    boot.stage = E.F_HARDWARE
    hw = build_hardware(board, table.row_bytes, ticks_ms=ticks_ms, watchdog=False)
    boot.hw = hw
    hw.all_off()
    wall = shell.WallClock(rtc)
    ctl = app.Controller(hw, store, wall, log=log, table=table, machine=m, reader=reader)
    ctl.fault_file = boot.fault_file
    boot.stage = E.F_JOURNAL
    store.boot(m.feed, buf)  # the machine's state and its meters
    del buf
    gc.collect()
    store.checkpoint = ctl.checkpoint
    boot.ctl = ctl
    now = ticks()
    wall.refresh(now)
    why = approval_refusal(cfg, wall.seconds(now), m, config_id)
    if why is not None:
        say("sicbo: " + why)
        store.close()
        return None
    boot.stage = E.F_RESUME
    now = ticks()
    if wall.seconds(now) is None:
        say("sicbo: RTC not set: journal records carry no wall-clock time")
    resume(ctl, now, cause, config_id)
    if watchdog:
        from machine import WDT

        from hw.watchdog import Watchdog

        hw.watchdog = Watchdog(WDT(timeout=board.timings["watchdog_ms"]), ticks_ms=ticks_ms)
    app.controller = ctl
    # The state as its number (sicbo.events ST_*): its name would load texts.
    say("sicbo: %s, round %d, state %d" % (cfg.name, ctl.m.round, ctl.m.state))
    return ctl


def resume(ctl, now, cause=0, config_id=b""):
    """After replay: resume with the sensors as they read now (J_BOOT with the
    reset cause), then journal a new config_id as a configuration change."""
    import app

    sw = ctl.hw.switches
    sw.update(now)
    while sw.pop(ctl._ev):
        pass  # levels are what counts at boot, not how they got there
    faulted = 0  # but an input faulted already (a broken key chain) raises its alarm
    for i in range(signals.COUNT):
        if sw.faulted(i):
            faulted |= 1 << app.SIGNAL_EVENTS[3 * i + 2]
    m = ctl.m
    wall = ctl.wall.seconds(now)
    n = m.resume(now, wall, sw.level(signals.COVER), sw.level(signals.CLASP_LEFT),
                 sw.level(signals.CLASP_RIGHT), sw.level(signals.SUPERVISOR), cause)
    ctl.drain(n, now)
    for sensor in range(16):
        if faulted >> sensor & 1:
            ctl.handle(E.EV_FAULT, sensor, now)
    store = ctl.store
    if len(store.segs) > store.max_files:
        # Each boot opens a segment and only rotation deletes: a board that
        # keeps resetting (a boot loop) would grow its journal, and the list
        # of segments in the heap, without end. Rotate: a meters checkpoint
        # heads the new segment, then the oldest go. Not at every boot, which
        # would spend a checkpoint on every reset (each sicbo diag is one).
        store.rotate(m.open_seq)
    if config_id:
        ctl.drain(m.set_config(now, wall, config_id), now)
