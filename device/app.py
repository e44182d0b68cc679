# The table controller: the pure round machine (sicbo/round.py) on the
# hardware adapters (hw/), with the journal written before every action.
#
#   start()            (shell.start) main.py's entry: files -> hardware -> Controller -> run
#   Controller         boot (journal replay, resume), poll (one pass of inputs,
#                      timers, reader), actuators; no asyncio inside, so tests
#                      drive it with the simulated machine and clock
#
# Memory: this module is what stays loaded while the table runs. Reading and
# validating the files and building the adapters (appboot.py, sicbo.board,
# sicbo.config, sicbo.resume) happen once at start-up, after which
# unload_boot() drops those modules so that their code leaves the heap.
#
# Order of every event: the machine decides, its journal records are written
# and flushed, then its commands reach the hardware. A power cut between the
# two repeats nothing on boot: the records say what was decided.

import time

from micropython import const
from shell import (  # noqa: F401  (app.X names kept for the tests and benches)
    BOARD_FILE,
    JOURNAL_DIR,
    KEY_CONFIRM,
    TABLE_FILE,
    Hardware,
    WallClock,
    start,
    unload_boot,
)

from hw.switches import EDGE, FAULT, RECOVER
from sicbo import events as E
from sicbo import journal, recall, settle
from sicbo.round import RoundMachine

POLL_MS = const(5)  # inputs are sampled this often (debounce counts in ms)
READER_MS = const(20)
WATCHDOG_FEED_MS = const(500)
TASK_DEADLINE_MS = const(2000)  # a task silent this long stops the feeding
_DAY_2000 = const(10957)  # days from 1970-01-01 to 2000-01-01

# Switch index (sicbo.settings.INPUT_SIGNALS order) -> event on 1, event on 0,
# sensor id for faults: three bytes per switch. Keys act when pressed;
# releases mean nothing.
_SIGNAL_EVENTS = bytes((
    E.EV_COVER_ON, E.EV_COVER_OFF, E.S_COVER,
    E.EV_CLASP_L_ON, E.EV_CLASP_L_OFF, E.S_CLASP_L,
    E.EV_CLASP_R_ON, E.EV_CLASP_R_OFF, E.S_CLASP_R,
    E.EV_SHAKE, 0, E.S_SHAKE,
    E.EV_SUPERVISOR_ON, E.EV_SUPERVISOR_OFF, E.S_SUPERVISOR,
    E.EV_BELL, 0, E.S_KEYS,
    E.EV_VOID, 0, E.S_KEYS,
    E.EV_PAYOUT, 0, E.S_KEYS,
    E.EV_CONFIRM, 0, E.S_KEYS,
    E.EV_FACE, 0, E.S_KEYS,
    E.EV_FACE, 0, E.S_KEYS,
    E.EV_FACE, 0, E.S_KEYS,
    E.EV_FACE, 0, E.S_KEYS,
    E.EV_FACE, 0, E.S_KEYS,
    E.EV_FACE, 0, E.S_KEYS,
))
_FIRST_FACE = const(9)  # index of key_face_1
_SUPERVISOR = const(4)
_LEVEL_SIGNALS = const(5)  # cover, clasps, shake, supervisor: levels, not keys


class Controller:
    """One table: the round machine, its journal and recall, on `hw`."""

    def __init__(self, cfg, board, hw, store, wall=None, log=print, table=None):
        # table: the SettlementTable of cfg, if the caller has made it already.
        self.cfg = cfg
        self.board = board
        self.hw = hw
        self.store = store
        self.wall = wall if wall is not None else WallClock()
        self.log = log
        self.table = table if table is not None else settle.SettlementTable(cfg)
        t = board.timings
        self.m = RoundMachine(cfg, self.table, pulses=t["pulse_count"],
                              pulse_on_ms=t["pulse_on_ms"], pulse_off_ms=t["pulse_off_ms"],
                              shaker_ms=t["electric_run_ms"], bell_ms=t["bell_ms"])
        self.recall = recall.Recall(self.table)
        self.reader = None
        if hw.uart is not None:
            from sicbo.dicereader import DiceReader

            self.reader = DiceReader()
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
        self._unfed = None  # records written but not yet given to recall

    # ---- boot ----------------------------------------------------------------

    def boot(self, now, config_id=b""):
        """Replay the journal, then resume with the sensors as they read now.
        config_id: a few bytes identifying the board and table files; a new
        one is journaled as a configuration change. (Start-up code: it lives
        in appboot.py, dropped after boot.)"""
        import appboot

        appboot.boot(self, now, config_id)

    def _checkpoint(self):
        self._feed_recall()  # the meters count the records being written first
        return recall.checkpoint(self.m, self.recall, self._now, self.wall.seconds(self._now))

    def _feed_recall(self):
        data = self._unfed
        if data is not None:
            self._unfed = None
            self.recall.feed(data)

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
            self._unfed = data  # for recall, once the commands have run
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
        # After acting: recall and the meters decode the records (allocates;
        # a rotation inside append() has fed them already, see _checkpoint).
        self._feed_recall()
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
            k = sig * 3
            on_1 = _SIGNAL_EVENTS[k]
            on_0 = _SIGNAL_EVENTS[k + 1]
            if kind == EDGE:
                if ev[2]:
                    self.handle(on_1, sig - _FIRST_FACE + 1 if on_1 == E.EV_FACE else 0, now)
                elif on_0:
                    self.handle(on_0, 0, now)
            elif kind == FAULT:
                self.handle(E.EV_FAULT, _SIGNAL_EVENTS[k + 2], now)
            elif kind == RECOVER and sig < _LEVEL_SIGNALS and sig != 3:
                # The sensor settled: tell the machine its level now, unless it
                # has it already (re-stating it would journal a supervisor key
                # turn, or a cover violation, that never happened).
                m = self.m
                if sig == _SUPERVISOR:
                    known = m.supervisor
                elif sig == 0:
                    known = m.cover
                else:
                    known = m.clasp_l if sig == 1 else m.clasp_r
                if ev[2] != known:
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


controller = None  # type: Controller | None  # the running one, for the REPL


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

    async def every(step, task, period_ms):
        # One task of the app: a pass, the watchdog told, then sleep (less
        # when the pass asks to be called sooner, as the solenoid train does).
        while True:
            now = time.ticks_ms()
            wait = step(now)
            if wd is not None:
                wd.alive(task, now)
            await asyncio.sleep_ms(wait if wait is not None and wait < period_ms else period_ms)

    asyncio.create_task(every(ctl.poll, ids[0], POLL_MS))
    asyncio.create_task(every(ctl.actuators, ids[1], POLL_MS))
    asyncio.create_task(every(ctl.read_reader, ids[2], READER_MS))
    while True:
        # Fed only while every task has reported alive within its deadline.
        if wd is not None:
            wd.feed(time.ticks_ms())
        await asyncio.sleep_ms(WATCHDOG_FEED_MS)
