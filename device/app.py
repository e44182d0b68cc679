# The table controller: the pure round machine (sicbo/round.py) on the
# hardware adapters (hw/), with the journal written before every action.
#
#   start()            main.py's entry: files -> hardware -> Controller -> run
#   build_hardware()   the adapters, from a validated board file
#   Controller         boot (journal replay, resume), poll (one pass of inputs,
#                      timers, reader), actuators; no asyncio inside, so tests
#                      drive it with the simulated machine and clock
#
# Order of every event: the machine decides, its journal records are written
# and flushed, then its commands reach the hardware. A power cut between the
# two repeats nothing on boot: the records say what was decided.

import gc
import json
import time

from machine import PWM, RTC, SPI, UART, WDT, Pin, Timer
from micropython import const

from hw.bell import Bell
from hw.lamps import PixelLamps, ShiftLamps
from hw.solenoid import ShakerMotor, Solenoid
from hw.switches import EDGE, FAULT, RECOVER, Switches
from hw.watchdog import Watchdog
from journal_store import JournalStore
from sicbo import board as boardfile
from sicbo import config, dates, journal, recall, settle
from sicbo import events as E
from sicbo.dicereader import DiceReader
from sicbo.round import RoundMachine

BOARD_FILE = "/board.json"
TABLE_FILE = "/table.json"
JOURNAL_DIR = "/journal"

POLL_MS = const(5)  # inputs are sampled this often (debounce counts in ms)
READER_MS = const(20)
WATCHDOG_FEED_MS = const(500)
TASK_DEADLINE_MS = const(2000)  # a task silent this long stops the feeding
_RTC_VALID_YEAR = const(2025)  # an RTC before this year was never set
_DAY_2000 = const(10957)  # days from 1970-01-01 to 2000-01-01

# Switch index (sicbo.board.INPUT_SIGNALS order) -> (event on 1, event on 0,
# sensor id for faults). Keys act when pressed; releases mean nothing.
_SIGNAL_EVENTS = (
    (E.EV_COVER_ON, E.EV_COVER_OFF, E.S_COVER),
    (E.EV_CLASP_L_ON, E.EV_CLASP_L_OFF, E.S_CLASP_L),
    (E.EV_CLASP_R_ON, E.EV_CLASP_R_OFF, E.S_CLASP_R),
    (E.EV_SHAKE, 0, E.S_SHAKE),
    (E.EV_SUPERVISOR_ON, E.EV_SUPERVISOR_OFF, E.S_SUPERVISOR),
    (E.EV_BELL, 0, E.S_KEYS),
    (E.EV_VOID, 0, E.S_KEYS),
    (E.EV_PAYOUT, 0, E.S_KEYS),
    (E.EV_CONFIRM, 0, E.S_KEYS),
    (E.EV_FACE, 0, E.S_KEYS),
    (E.EV_FACE, 0, E.S_KEYS),
    (E.EV_FACE, 0, E.S_KEYS),
    (E.EV_FACE, 0, E.S_KEYS),
    (E.EV_FACE, 0, E.S_KEYS),
    (E.EV_FACE, 0, E.S_KEYS),
)
_FIRST_FACE = const(9)  # index of key_face_1
_SUPERVISOR = const(4)
_KEY_CONFIRM = const(8)
_LEVEL_SIGNALS = const(5)  # cover, clasps, shake, supervisor: levels, not keys


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
    hw = Hardware()
    hw.switches = Switches(input_pins(board), t["debounce_ms"], t["chatter_limit"],
                           t["chatter_window_ms"],
                           invert=[inv for _s, _p, _pull, inv in board.inputs],
                           ticks_ms=ticks_ms)
    out = board.outputs
    if "solenoid" in out:
        timer = Timer(board.timers["solenoid"])
        if t["hold_percent"]:
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
        spi = SPI(lb["spi"], baudrate=lb["baudrate"], sck=Pin(lb["sck"]), mosi=Pin(lb["mosi"]))
        # The latch and /OE after the SPI: a Pin made later takes its GPIO back.
        oe = Pin(lb["oe"], Pin.OUT, value=1) if lb["oe"] is not None else None
        hw.lamps = ShiftLamps(spi, Pin(lb["latch"], Pin.OUT, value=0), row_bytes, oe=oe)
    else:
        from neopixel import NeoPixel

        strip = NeoPixel(Pin(lb["pin"], Pin.OUT), lb["count"])
        hw.lamps = PixelLamps(strip, row_bytes, tuple(lb["colour"]))
    rd = board.reader
    if rd is not None:
        hw.uart = UART(rd["uart"], baudrate=rd["baudrate"], tx=Pin(rd["tx"]), rx=Pin(rd["rx"]))
    if watchdog:
        hw.watchdog = Watchdog(WDT(timeout=t["watchdog_ms"]), ticks_ms=ticks_ms)
    return hw


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


class Controller:
    """One table: the round machine, its journal and recall, on `hw`."""

    def __init__(self, cfg, board, hw, store, wall=None, log=print):
        self.cfg = cfg
        self.board = board
        self.hw = hw
        self.store = store
        self.wall = wall if wall is not None else WallClock()
        self.log = log
        self.table = settle.SettlementTable(cfg)
        t = board.timings
        self.m = RoundMachine(cfg, self.table, pulses=t["pulse_count"],
                              pulse_on_ms=t["pulse_on_ms"], pulse_off_ms=t["pulse_off_ms"],
                              shaker_ms=t["electric_run_ms"], bell_ms=t["bell_ms"])
        self.recall = recall.Recall(self.table)
        self.reader = DiceReader() if hw.uart is not None else None
        self._rx = bytearray(64)
        self._rx_mv = memoryview(self._rx)
        self._ev = [0, 0, 0, 0]
        self.message = E.M_NONE
        self.detail = 0
        self.timer_on = False
        self.deadline = 0
        self.forced_offs = 0  # solenoid hard-offs seen (each raised as a fault)
        self.events = 0
        self.booted = False
        self.config_id = b""
        self._now = 0

    # ---- boot ----------------------------------------------------------------

    def boot(self, now, config_id=b""):
        """Replay the journal, then resume with the sensors as they read now.
        config_id: a few bytes identifying the board and table files; a new
        one is journaled as a configuration change."""
        self.wall.refresh(now)
        rp = journal.Replay()
        store = self.store
        store.checkpoint = self._checkpoint
        store.boot(rp, self.recall)
        sw = self.hw.switches
        sw.update(now)
        while sw.pop(self._ev):
            pass  # levels are what counts at boot, not how they got there
        m = self.m
        wall = self.wall.seconds(now)
        n = m.resume(rp, now, wall, sw.level(0), sw.level(1), sw.level(2), sw.level(4))
        self._drain(n, now)
        if config_id and bytes(rp.config_id) != config_id:
            m._begin(now, wall)
            c = config_id
            m._rec(E.J_CONFIG, c[0], c[1], c[2], c[3], c[4], c[5])
            self._drain(0, now)
        self.config_id = config_id
        self.booted = True

    def _checkpoint(self):
        return recall.checkpoint(self.m, self.recall, self._now, self.wall.seconds(self._now))

    # ---- one event -----------------------------------------------------------

    def handle(self, ev, arg, now):
        """Give one event to the machine, journal, then act."""
        self.events += 1
        n = self.m.handle(ev, arg, now, self.wall.seconds(now))
        self._drain(n, now)

    def _drain(self, n, now):
        m = self.m
        self._now = now
        if m.rec_len:
            data = m.records()
            self.recall.feed(data)
            self.store.append(data, m.open_seq)  # flushed before any command runs
        cm = m.cmds
        hw = self.hw
        for i in range(n):
            k = i << 2
            code = cm[k]
            if code == E.C_LAMPS:
                hw.lamps.write(m.frame)
            elif code == E.C_SOLENOID:
                if hw.solenoid is not None:
                    hw.solenoid.start(cm[k + 1], cm[k + 2], cm[k + 3], now)
            elif code == E.C_SOLENOID_STOP:
                if hw.solenoid is not None:
                    hw.solenoid.stop()
            elif code == E.C_SHAKER:
                if hw.motor is not None:
                    hw.motor.run(now, cm[k + 1])
            elif code == E.C_SHAKER_STOP:
                if hw.motor is not None:
                    hw.motor.stop()
            elif code == E.C_BELL:
                hw.bell.ring(now, cm[k + 1])
            elif code == E.C_TIMER:
                self.timer_on = True
                self.deadline = time.ticks_add(now, cm[k + 1])
            elif code == E.C_TIMER_CANCEL:
                self.timer_on = False
            elif code == E.C_SHOW:
                self.message = cm[k + 1]
                self.detail = cm[k + 2]
        if self.log is not None:
            # After acting: the log is for people and may allocate.
            from sicbo.logtext import journal_line, message_text

            if m.rec_len:
                for rec in journal.Scanner().scan(m.records()):
                    self.log(journal_line(rec, self.table))
            for i in range(n):
                if cm[i << 2] == E.C_SHOW:
                    self.log("dealer: " + message_text(cm[(i << 2) + 1], cm[(i << 2) + 2]))

    # ---- the periodic passes -----------------------------------------------

    def poll(self, now):
        """Inputs and the machine's timer: one pass, every POLL_MS."""
        sw = self.hw.switches
        sw.update(now)
        ev = self._ev
        while sw.pop(ev):
            kind = ev[0]
            sig = ev[1]
            on_1, on_0, sensor = _SIGNAL_EVENTS[sig]
            if kind == EDGE:
                if ev[2]:
                    self.handle(on_1, sig - _FIRST_FACE + 1 if on_1 == E.EV_FACE else 0, now)
                elif on_0:
                    self.handle(on_0, 0, now)
            elif kind == FAULT:
                self.handle(E.EV_FAULT, sensor, now)
            elif kind == RECOVER and sig < _LEVEL_SIGNALS and sig != 3:
                # The sensor settled: tell the machine its level now.
                self.handle(on_1 if ev[2] else on_0, 0, now)
        if self.timer_on and time.ticks_diff(now, self.deadline) >= 0:
            self.timer_on = False
            self.handle(E.EV_TIMER, 0, now)

    def actuators(self, now):
        """Advance the solenoid train and the timed outputs; returns the ms
        until the next call is useful."""
        hw = self.hw
        wait = 50
        sol = hw.solenoid
        if sol is not None:
            if sol.busy():
                w = sol.update(now)
                if w < wait:
                    wait = w
            if sol.forced_offs != self.forced_offs:
                # The hard-off timer had to cut the coil: a fault, never silent.
                self.forced_offs = sol.forced_offs
                self.handle(E.EV_FAULT, E.S_SOLENOID, now)
        for a in (hw.motor, hw.bell):
            if a is not None:
                a.update(now)
        return wait if wait > 1 else 1

    def read_reader(self, now):
        """Bytes from the dice reader, if any, through its line parser."""
        uart = self.hw.uart
        rd = self.reader
        if uart is None or rd is None or not uart.any():
            return
        n = uart.readinto(self._rx)
        if not n:
            return
        m = self.m
        for i in range(n):
            if rd.feed_byte(self._rx[i]):
                k = m.reader_dice(rd.round, rd.d1, rd.d2, rd.d3, now, self.wall.seconds(now))
                self._drain(k, now)

    # ---- what diag and the host ask -----------------------------------------

    def status(self):
        from sicbo.texts import STATE_NAMES

        m = self.m
        return {
            "state": STATE_NAMES[m.state],
            "round": m.round,
            "boot": m.boot,
            "seq": m.seq,
            "alarm": m.alarm,
            "violation": m.violation,
            "faults": m.faults,
            "message": _message(self.message, self.detail),
            "dice": list(m.dice) if m.has_result else None,
        }


def _message(code, detail):
    from sicbo.logtext import message_text

    return message_text(code, detail)


# ---- start-up ------------------------------------------------------------------

def read_json(path):
    with open(path) as f:
        return json.load(f)


def file_digest(*paths):
    """First 6 bytes of the sha256 of the files: the configuration's identity."""
    import hashlib

    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.digest()[:6]


def load(board_path=BOARD_FILE, table_path=TABLE_FILE):
    """(Board, TableConfig) or ConfigError; nothing is built from a refused file."""
    board = boardfile.parse_board(read_json(board_path))
    cfg = config.parse_table(read_json(table_path))
    boardfile.check_shaker(board, cfg.shaker)
    return board, cfg


def recovery_requested(board):
    """The dealer's confirm key held at power-on: do not start the app."""
    _s, p, pull, inv = board.inputs[_KEY_CONFIRM]
    pin = input_pin(p, pull)
    return (pin.value() ^ (1 if inv else 0)) == 1


def approval_in_force(cfg, wall_seconds):
    """False when the RTC says the table's approval is not yet effective."""
    if wall_seconds is None:
        return True  # no date known: cannot be checked (a warning is logged)
    today = wall_seconds // 86400 + _DAY_2000
    return today >= dates.parse(cfg.approval["effective"])


controller = None  # the running Controller, for a technician at the REPL


def start(board_path=BOARD_FILE, table_path=TABLE_FILE, journal_dir=JOURNAL_DIR):
    """main.py's entry. Returns (to the REPL) on a refused configuration or in
    recovery mode, with every actuator off; otherwise runs the table."""
    global controller
    from sicbo.errors import ConfigError

    try:
        board, cfg = load(board_path, table_path)
    except (OSError, ValueError) as e:
        msg = str(e) if isinstance(e, ConfigError) else "cannot read %s or %s: %r" % (
            board_path, table_path, e)
        print("sicbo: configuration refused, table not started: " + msg)
        return None
    for w in board.warnings:
        print("sicbo: board warning: " + w)
    if recovery_requested(board):
        print("sicbo: recovery mode (confirm key held at power-on): app not started")
        return None
    table = settle.SettlementTable(cfg)
    hw = build_hardware(board, table.row_bytes)
    hw.all_off()
    try:
        import os

        os.mkdir(journal_dir)
    except OSError:
        pass  # it exists
    store = JournalStore(journal_dir)
    wall = WallClock(RTC())
    ctl = Controller(cfg, board, hw, store, wall)
    controller = ctl
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
    gc.collect()
    try:
        run(ctl)
    finally:
        hw.all_off()
        store.close()
    return ctl


def run(ctl):
    import asyncio

    asyncio.run(_main(ctl))


async def _main(ctl):
    import asyncio

    wd = ctl.hw.watchdog
    ids = []
    if wd is not None:
        now = time.ticks_ms()
        for name in ("inputs", "actuators", "reader"):
            ids.append(wd.register(name, TASK_DEADLINE_MS, now))
    else:
        ids = [-1, -1, -1]

    async def inputs(task):
        while True:
            now = time.ticks_ms()
            ctl.poll(now)
            if wd is not None:
                wd.alive(task, now)
            await asyncio.sleep_ms(POLL_MS)

    async def actuators(task):
        while True:
            now = time.ticks_ms()
            wait = ctl.actuators(now)
            if wd is not None:
                wd.alive(task, now)
            await asyncio.sleep_ms(wait if wait < POLL_MS else POLL_MS)

    async def reader(task):
        while True:
            now = time.ticks_ms()
            ctl.read_reader(now)
            if wd is not None:
                wd.alive(task, now)
            await asyncio.sleep_ms(READER_MS)

    asyncio.create_task(inputs(ids[0]))
    asyncio.create_task(actuators(ids[1]))
    asyncio.create_task(reader(ids[2]))
    while True:
        # Fed only while every task has reported alive within its deadline.
        if wd is not None:
            wd.feed(time.ticks_ms())
        await asyncio.sleep_ms(WATCHDOG_FEED_MS)
