# The table controller: the pure round machine (sicbo/roundmachine.py) on the
# hardware adapters (hw/), with the journal written before every action.
#
#   Controller   one table: inputs, the machine's timer, actuators, the dice
#                reader, the watchdog's pass, resumption at boot; no asyncio
#                inside, so tests drive it with the simulated machine and clock
#   TASKS        the periodic tasks of the running table, as data
#   run(ctl)     the asyncio tasks, the watchdog, fault containment
#
# With a floor link (device/link/outbox.py, docs/floor.md) the journal is
# also the outbox: the link task publishes what the controller journals and
# takes one thing from the network, the floor's acknowledgement, which moves
# its cursor (and lets rotation delete what the floor stored). Nothing it
# receives reaches a round, a lamp or an output; its faults stay in it. That
# task's code is link/table.py's (LinkedController): loaded only for a board
# file with a floor section.
#
# Order of every event: the machine decides, its journal records are written
# and flushed, then its commands reach the hardware. A power cut between the
# two repeats nothing on boot: the records say what was decided.
#
# Memory: this module, and everything it imports, is what stays loaded while
# the table runs; start-up (startup.py) imports it before the journal is
# replayed, so that no module is loaded for the first time on the heap the
# replay fragments.

import time
from binascii import hexlify

from micropython import const

from hw.switches import EDGE, FAULT, RECOVER
from sicbo import events as E
from sicbo import meters
from sicbo import records as R
from sicbo import signals as S

_MAX_SENSORS = const(16)  # sensor ids: a bit each in RoundState.faults
_MAX_TASKS = const(8)  # hw.watchdog.Watchdog's max_tasks: every task is watched
_LINK_IDLE_MS = const(1000)  # the link task's pass without a link

# The inputs, one row per signal in sicbo.signals order: the event when it
# reads 1, the event when it reads 0 (0: none; keys act when pressed, their
# release means nothing), the event's argument, and the sensor id its faults
# are reported under (sicbo.events S_*). A signal with an event on 0 is a
# level the round machine keeps (RoundMachine.levels): below S.LEVELS.
_INPUTS = (
    (E.EV_COVER_ON, E.EV_COVER_OFF, 0, E.S_COVER),  # S.COVER
    (E.EV_CLASP_L_ON, E.EV_CLASP_L_OFF, 0, E.S_CLASP_L),  # S.CLASP_LEFT
    (E.EV_CLASP_R_ON, E.EV_CLASP_R_OFF, 0, E.S_CLASP_R),  # S.CLASP_RIGHT
    (E.EV_SHAKE, 0, 0, E.S_SHAKE),  # S.SHAKE
    (E.EV_SUPERVISOR_ON, E.EV_SUPERVISOR_OFF, 0, E.S_SUPERVISOR),  # S.SUPERVISOR
    (E.EV_BELL, 0, 0, E.S_KEYS),  # S.KEY_BELL
    (E.EV_VOID, 0, 0, E.S_KEYS),  # S.KEY_VOID
    (E.EV_PAYOUT, 0, 0, E.S_KEYS),  # S.KEY_PAYOUT
    (E.EV_CONFIRM, 0, 0, E.S_KEYS),  # S.KEY_CONFIRM
    (E.EV_FACE, 0, 1, E.S_KEYS),  # S.KEY_FACE_1: the face is the argument
    (E.EV_FACE, 0, 2, E.S_KEYS),
    (E.EV_FACE, 0, 3, E.S_KEYS),
    (E.EV_FACE, 0, 4, E.S_KEYS),
    (E.EV_FACE, 0, 5, E.S_KEYS),
    (E.EV_FACE, 0, 6, E.S_KEYS),  # S.KEY_FACE_6
)


def input_table(rows):
    """The rows above as bytes, 4 a signal, checked: one row per signal, sensor
    ids below 16, and a level (an event on 0) only below S.LEVELS."""
    if len(rows) != S.COUNT:
        raise ValueError("%d input rows for %d signals" % (len(rows), S.COUNT))
    out = bytearray(4 * len(rows))
    for i in range(len(rows)):
        on_1, on_0, arg, sensor = rows[i]
        if not 0 <= sensor < _MAX_SENSORS:
            raise ValueError("signal %d: sensor id %d is not below 16" % (i, sensor))
        if on_0 and i >= S.LEVELS:
            raise ValueError("signal %d: a level (an event on 0) below S.LEVELS only" % i)
        out[4 * i] = on_1
        out[4 * i + 1] = on_0
        out[4 * i + 2] = arg
        out[4 * i + 3] = sensor
    return bytes(out)


INPUTS = input_table(_INPUTS)
del _INPUTS, input_table  # their code is not needed once the table is built


class Controller:
    """One table: the round machine, its journal and meters, on `hw`."""

    def __init__(self, hw, store, wall, log, table, machine, faults, reader=None):
        # table (SettlementTable), machine (RoundMachine, its meters
        # attached) and reader (a sicbo.dicereader.DiceReader when hw.uart
        # is one) are made by start-up before this module's code is loaded:
        # their code and buffers find large free blocks then. faults: the
        # power-on's fault path (faults.Faults), for the tasks.
        # At most 17 attributes (17 now): one more grows the instance's table (a new
        # block, the old one garbage), and a boot's heap is at its fullest
        # here. The files' data is not kept.
        self.hw = hw
        self.store = store
        self.wall = wall
        self.log = log
        self.table = table
        self.m = machine
        self.faults = faults
        self.reader = reader
        self._rx = bytearray(64)
        self._ev = [0, 0, 0, 0]
        self._levels = bytearray(S.LEVELS)
        self.forced_offs = 0  # solenoid hard-offs seen (each raised as a fault)
        self.events = 0
        self._now = 0
        self.late_told = False  # a late task has been journaled (watch)
        self.link = None  # the floor link (link.outbox.Link), once made (link.table)
        self._plan = None  # what it is made of until then (LinkedController.attach)
        store.checkpoint = self.checkpoint  # heads each segment rotation opens

    # ---- the journal -------------------------------------------------------------

    def checkpoint(self):
        """The meters checkpoint that heads a segment opened by rotation
        (JournalStore's checkpoint callable)."""
        return meters.checkpoint(self.m, self._now, self.wall.seconds(self._now))

    def journal_fault(self, stage, kind, detail=0, late=0):
        """A J_FAULT record after the journal's last one (the fault path's:
        the table resets next, nothing of the round changes). late: 1 for a
        fault of an earlier boot, journaled now."""
        self._note(R.J_FAULT, bytes((stage, kind, detail, late, 0, 0, 0, 0)))

    def _note(self, rtype, payload):
        # A record that only notes something, after the journal's last one.
        now = time.ticks_ms()
        m = self.m
        self.store.append(m.encode_next(rtype, payload, now, self.wall.seconds(now)),
                          m.open_seq)
        self._journaled()

    def _journaled(self):
        # The link sends what the journal holds, and its status again when the
        # round or its state (round << 3 | state) has changed.
        link = self.link
        if link is not None:
            m = self.m
            link.journaled(m.round << 3 | m.state)

    # ---- the floor link -------------------------------------------------------

    def link_pass(self, now):
        """The link task's pass: nothing without a floor link (the table
        with one is a link.table.LinkedController, which makes and runs it)."""
        return _LINK_IDLE_MS

    # ---- one event ---------------------------------------------------------------

    def handle(self, ev, arg, now):
        """Give one event to the machine, journal, then act."""
        self.events += 1
        n = self.m.handle(ev, arg, now, self.wall.seconds(now))
        self.drain(n, now)

    def drain(self, n, now):
        m = self.m
        self._now = now
        if m.rec_len:
            self.store.append(m.records(), m.open_seq)  # flushed before any command runs
            self._journaled()
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
        if self.log is not None:
            # After acting, compact: "J <record in hex>" per record and
            # "D <message> <detail>" per dealer message. The texts stay off
            # the board's heap: the host renders these lines (host_tools.console:
            # sicbo console, the demo) with the firmware's own sicbo.logtext.
            if m.rec_len:
                mv = m.records()
                for off in range(0, m.rec_len, R.REC_LEN):
                    self.log("J " + hexlify(mv[off:off + R.REC_LEN]).decode())
            for i in range(n):
                k = i << 2
                if cm[k] == E.C_SHOW:
                    self.log("D %d %d" % (cm[k + 1], cm[k + 2]))

    # ---- the periodic passes (TASKS) ---------------------------------------------

    def poll(self, now):
        """Inputs and the machine's timer: one pass, every E.POLL_MS."""
        sw = self.hw.switches
        sw.update(now)
        ev = self._ev
        while sw.pop(ev):
            kind = ev[0]
            k = ev[1] << 2
            if kind == EDGE:
                if ev[2]:
                    self.handle(INPUTS[k], INPUTS[k + 2], now)
                elif INPUTS[k + 1]:
                    self.handle(INPUTS[k + 1], 0, now)
            elif kind == FAULT:
                self.handle(E.EV_FAULT, INPUTS[k + 3], now)
            elif kind == RECOVER and INPUTS[k + 1] and ev[2] != self.m.levels[ev[1]]:
                # A level settled after a fault: tell the machine its level now,
                # unless it has it already (re-stating it would journal a
                # supervisor key turn, or a cover violation, that never happened).
                self.handle(INPUTS[k] if ev[2] else INPUTS[k + 1], 0, now)
        m = self.m
        if m.timer_on and time.ticks_diff(now, m.deadline) >= 0:
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
        """The watchdog's pass (every E.WATCHDOG_FEED_MS): the WDT is fed only
        while every task has reported within its deadline; a late task is
        named in the journal once (J_FAULT), then the WDT resets the board."""
        wd = self.hw.watchdog
        if wd is None:
            return False
        late = wd.stalled(now)
        if late >= 0 and not self.late_told:
            self.late_told = True
            self.faults.contain(RuntimeError("task %s late" % wd.name(late)), E.F_WATCHDOG, late)
        if self.late_told:
            # Contained (outputs off, the round voided, the fault lamps): never
            # fed again, even if the task reports once more, so that the WDT
            # resets the board as a late task must (a table that played on,
            # fed, would name no later stall).
            return False
        return wd.feed(now)

    # ---- boot ----------------------------------------------------------------------

    def resume(self, now, cause=0, config_id=b""):
        """After the replay: resume the round with the levels as they read now
        (J_BOOT with the reset cause), raise the faults of inputs already
        faulted, then journal a new config_id as a configuration change."""
        sw = self.hw.switches
        sw.update(now)
        while sw.pop(self._ev):
            pass  # levels are what counts at boot, not how they got there
        lv = self._levels
        for i in range(S.LEVELS):
            lv[i] = sw.level(i)
        faulted = 0  # but an input faulted already (a broken key chain) raises its alarm
        for i in range(S.COUNT):
            if sw.faulted(i):
                faulted |= 1 << INPUTS[4 * i + 3]
        m = self.m
        wall = self.wall.seconds(now)
        self.drain(m.resume(now, wall, lv, cause), now)
        for sensor in range(_MAX_SENSORS):
            if faulted >> sensor & 1:
                self.handle(E.EV_FAULT, sensor, now)
        store = self.store
        if store.files() > store.max_files:
            # Each boot opens a segment and only rotation deletes: a board that
            # keeps resetting (a boot loop) would grow its journal, and the list
            # of segments in the heap, without end. Rotate: a meters checkpoint
            # heads the new segment, then the oldest go. Not at every boot, which
            # would spend a checkpoint on every reset (each sicbo diag is one).
            store.rotate(m.open_seq)
        if config_id:
            self.drain(m.set_config(now, wall, config_id), now)


# The periodic tasks of the running table: (name, period in ms, pass). Each
# pass takes (controller, now) and may return the ms until it is worth
# calling again; each task reports to the watchdog after every pass. A new
# task is a row here (at most _MAX_TASKS of them).
TASKS = (
    ("inputs", E.POLL_MS, Controller.poll),
    ("actuators", E.POLL_MS, Controller.actuators),
    ("reader", E.READER_MS, Controller.read_reader),
    ("link", E.POLL_MS, lambda ctl, now: ctl.link_pass(now)),  # a LinkedController's own
)
if len(TASKS) > _MAX_TASKS:
    raise ValueError("%d tasks: the watchdog watches at most %d" % (len(TASKS), _MAX_TASKS))

current = None  # the running Controller, for a technician at the REPL


def run(ctl):
    """Run the table until a fault (contained, then a reset) or Ctrl-C."""
    import asyncio

    global current
    current = ctl
    asyncio.run(_main(ctl))


async def _every(ctl, step, task, period_ms):
    # One task: a pass, the watchdog told, then sleep (less when the pass asks
    # to be called sooner, as the solenoid train does). A pass that raises:
    # the task is named in the journal, then a reset (every task is one of
    # these: nothing can die unseen).
    import asyncio

    wd = ctl.hw.watchdog
    try:
        while True:
            now = time.ticks_ms()
            wait = step(ctl, now)
            if wd is not None:
                wd.alive(task, now)
            await asyncio.sleep_ms(wait if wait is not None and wait < period_ms else period_ms)
    except Exception as e:  # noqa: BLE001 - contained: journaled, then reset
        import machine

        try:
            ctl.faults.contain(e, E.F_TASK, task)
        finally:
            machine.reset()


async def _main(ctl):
    import asyncio

    wd = ctl.hw.watchdog
    start = time.ticks_ms()
    for i in range(len(TASKS)):
        name, period, step = TASKS[i]
        # Each task's id is the watchdog's for it (all registered before the
        # first feed, in watch() below).
        task = wd.register(name, E.TASK_DEADLINE_MS, start) if wd is not None else i
        asyncio.create_task(_every(ctl, step, task, period))
    stable = False
    while True:
        now = time.ticks_ms()
        ctl.watch(now)
        if not stable and time.ticks_diff(now, start) >= E.STABLE_MS:
            stable = True
            ctl.faults.clear()  # the table runs: the failed boots are no longer in a row
        await asyncio.sleep_ms(E.WATCHDOG_FEED_MS)
