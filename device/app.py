# The table controller: the pure round machine (sicbo/round.py) on the
# hardware adapters (hw/), with the journal written before every action.
#
#   shell.start()      main.py's entry: appboot.open_table (files, journal
#                      replay, hardware, resume), then run() here
#   Controller         poll (one pass of inputs, timers, reader),
#                      actuators; no asyncio inside, so tests drive it with
#                      the simulated machine and clock
#   run()              the asyncio tasks, the watchdog, fault containment
#
# Memory: this module, and everything it imports, is what stays loaded while
# the table runs; start-up imports it before the journal is replayed, so that
# no module is loaded for the first time on the heap replay fragments. The
# file parsers and appboot are dropped once the table runs.
#
# Order of every event: the machine decides, its journal records are written
# and flushed, then its commands reach the hardware. A power cut between the
# two repeats nothing on boot: the records say what was decided.

import time
from binascii import hexlify

from micropython import const

from hw.switches import EDGE, FAULT, RECOVER
from sicbo import events as E
from sicbo import journal, meters, signals

POLL_MS = const(5)  # inputs are sampled this often (debounce counts in ms)
READER_MS = const(20)
WATCHDOG_FEED_MS = const(500)
TASK_DEADLINE_MS = const(2000)  # a task silent this long stops the feeding
TASKS = ("inputs", "actuators", "reader")  # the watchdog's task ids, in order

# Switch index (sicbo.signals order) -> event on 1, event on 0, sensor id for
# faults: three bytes per switch. Keys act when pressed; releases mean nothing.
SIGNAL_EVENTS = bytes((
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


class Controller:
    """One table: the round machine, its journal and meters, on `hw`."""

    def __init__(self, hw, store, wall, log, table, machine, reader=None):
        # table (SettlementTable), machine (RoundMachine, its meters
        # attached) and reader are made by appboot.open_table before this
        # module's code is loaded: their code and buffers find large free
        # blocks then.
        # At most 17 attributes: one more grows the instance's table (a new
        # block, the old one garbage), and a boot's heap is at its fullest
        # here. The files' data (cfg: table.cfg; the board file: its adapters
        # in hw) is not kept.
        self.hw = hw
        self.store = store
        self.wall = wall
        self.log = log
        self.table = table
        self.m = machine
        self.reader = reader  # a sicbo.dicereader.DiceReader when hw.uart is one
        self._rx = bytearray(64)
        self._ev = [0, 0, 0, 0]
        self.timer_on = False
        self.deadline = 0
        self.forced_offs = 0  # solenoid hard-offs seen (each raised as a fault)
        self.events = 0
        self._now = 0
        self.late_told = False  # a late task has been journaled (watch)
        self.fault_file = None  # where failed boots are counted (appboot: the Boot's)

    def checkpoint(self):
        # The machine counted the records being written as it made them.
        return meters.checkpoint(self.m, self._now, self.wall.seconds(self._now))

    # ---- one event -----------------------------------------------------------

    def handle(self, ev, arg, now):
        """Give one event to the machine, journal, then act."""
        self.events += 1
        n = self.m.handle(ev, arg, now, self.wall.seconds(now))
        self.drain(n, now)

    def journal_fault(self, stage, kind, detail=0):
        """A J_FAULT record after the journal's last one (containment: the
        table resets next, nothing of the round changes)."""
        m = self.m
        now = time.ticks_ms()
        rec = journal.encode(E.J_FAULT, m.seq + 1, m.round, m.boot, now, self.wall.seconds(now),
                             bytes((stage, kind, detail, 0, 0, 0, 0, 0)))
        self.store.append(rec)
        m.take(rec, 0)  # the machine's sequence goes on after it (no reset may follow soon)

    def drain(self, n, now):
        m = self.m
        self._now = now
        if m.rec_len:
            self.store.append(m.records(), m.open_seq)  # flushed before any command runs
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
        if self.log is not None:
            # After acting, compact: "J <record in hex>" per record and
            # "D <message> <detail>" per dealer message. The texts stay off
            # the board's heap: the host renders these lines (host_tools.console:
            # sicbo console, the demo) with the firmware's own sicbo.logtext.
            if m.rec_len:
                mv = m.records()
                for off in range(0, m.rec_len, journal.REC_LEN):
                    self.log("J " + hexlify(mv[off:off + journal.REC_LEN]).decode())
            for i in range(n):
                k = i << 2
                if cm[k] == E.C_SHOW:
                    self.log("D %d %d" % (cm[k + 1], cm[k + 2]))

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
            on_1 = SIGNAL_EVENTS[k]
            on_0 = SIGNAL_EVENTS[k + 1]
            if kind == EDGE:
                if ev[2]:
                    self.handle(on_1, sig - signals.KEY_FACE_1 + 1 if on_1 == E.EV_FACE else 0,
                                now)
                elif on_0:
                    self.handle(on_0, 0, now)
            elif kind == FAULT:
                self.handle(E.EV_FAULT, SIGNAL_EVENTS[k + 2], now)
            elif kind == RECOVER and sig < signals.LEVELS and sig != signals.SHAKE:
                # The sensor settled: tell the machine its level now, unless it
                # has it already (re-stating it would journal a supervisor key
                # turn, or a cover violation, that never happened).
                m = self.m
                if sig == signals.SUPERVISOR:
                    known = m.supervisor
                elif sig == signals.COVER:
                    known = m.cover
                else:
                    known = m.clasp_l if sig == signals.CLASP_LEFT else m.clasp_r
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
                self.drain(k, now)

    def watch(self, now):
        """The watchdog's pass (every WATCHDOG_FEED_MS): the WDT is fed only
        while every task has reported within its deadline; a late task is
        named in the journal once (J_FAULT), then the WDT resets the board."""
        wd = self.hw.watchdog
        if wd is None:
            return False
        late = wd.stalled(now)
        if late >= 0 and not self.late_told:
            self.late_told = True
            _fault(self, E.F_WATCHDOG, RuntimeError("task %s late" % wd.name(late)), late)
        return wd.feed(now)


controller = None  # type: Controller | None  # the running one, for the REPL


def run(ctl):
    import asyncio

    asyncio.run(_main(ctl))


def _fault(ctl, stage, e, task):
    """A task died or stopped reporting: shell.record_fault (outputs off,
    fault lamps, J_FAULT naming the task, the failed-boot count)."""
    import shell

    b = shell.Boot(ctl.fault_file)
    b.hw = ctl.hw
    b.table = ctl.table
    b.ctl = ctl
    b.log = ctl.log or print
    shell.record_fault(b, e, stage, task)


async def _main(ctl):
    import asyncio

    import machine
    import shell

    wd = ctl.hw.watchdog
    start = time.ticks_ms()

    async def every(step, task, period_ms):
        # One task of the app: a pass, the watchdog told, then sleep (less
        # when the pass asks to be called sooner, as the solenoid train does).
        # A pass that raises: the task is named in the journal, then a reset.
        # (Every task is one of these: nothing else can die unseen.)
        try:
            while True:
                now = time.ticks_ms()
                wait = step(now)
                if wd is not None:
                    wd.alive(task, now)
                await asyncio.sleep_ms(wait if wait is not None and wait < period_ms
                                       else period_ms)
        except Exception as e:  # noqa: BLE001 - contained: journaled, then reset
            try:
                _fault(ctl, E.F_TASK, e, task)
            finally:
                machine.reset()

    passes = (ctl.poll, ctl.actuators, ctl.read_reader)  # in TASKS' order
    periods = (POLL_MS, POLL_MS, READER_MS)
    for i in range(len(TASKS)):
        # Each task's id is the watchdog's for it (all registered before the
        # first feed, in watch() below).
        task = wd.register(TASKS[i], TASK_DEADLINE_MS, start) if wd is not None else i
        asyncio.create_task(every(passes[i], task, periods[i]))
    stable = False
    while True:
        now = time.ticks_ms()
        ctl.watch(now)
        if not stable and time.ticks_diff(now, start) >= E.STABLE_MS:
            stable = True
            # The table runs: failures are no longer consecutive.
            shell.clear_failed_boots(ctl.fault_file)
        await asyncio.sleep_ms(WATCHDOG_FEED_MS)
