# One power-on of the table, for bench/board_heap.py (the CPython driver),
# which compiles this file to .mpy and runs it in a fresh interpreter each
# time, as a board boots after a power cut with a fresh heap:
#
#   micropython -X heapsize=N -m heap_worker FOLDER MODE ROUNDS CUT_STEP SEED BOOT
#
# MICROPYPATH (set by the driver): '.frozen', this module's folder (and
# build/mpy/sim where sim/ is not frozen in), after the port's own '' (FOLDER,
# the working directory): firmware deployed as .mpy is found there, at the
# board's root, as on a board. On the frozen image FOLDER holds no firmware:
# `import faults` finds the frozen one.
#
# FOLDER holds board.json, table.json and the journal (as /board.json,
# /table.json and /journal on a board), `pins` (the GPIO of each input, then
# its inversion, in sicbo.signals order), and `levels`: the table's physical
# state (cover, clasps, supervisor key) as the last power cut left it, since
# the table survives a cut of the board. The table is started exactly as
# main.py starts it (faults.boot, log=print, the watchdog armed), on the
# simulated machine with its manual clock and the RTC set (as deploy sets it).
# Then rounds are played through the pins: MODE "play" finishes the round the
# board resumed in, then starts ROUNDS new rounds and stops between rounds
# (exit 0), unless CUT_STEP clock steps pass first (0: never): then the
# process exits at once, mid-round (exit status 3), which is what a power cut
# leaves of a board. MODE "fill": plays until the journal has rotated and
# deleted a segment, then ROUNDS rounds more.
#
# Lines for the driver start with "@" (the rest is the board's console):
#   @boot <round> <state> <heap in use> <heap total> <heap before the firmware>
#         <frozen_id imports 0/1> <the firmware loaded from .mpy files 0/1>
#         <heap in use as this worker started: the interpreter's own>
#   @start <round>            a round began (shake taken)
#   @end <round> paid <d1><d2><d3> | @end <round> void <reason>
#   @meters <rounds> <paid> <voids>
#   @cut <step> <state>       the power goes now
#   @restart                  the configuration was checked and cached: reset (exit 4)
#   @exit <steps> <rounds> <deleted segments>
#   @names boot|exit          then MicroPython's "qstr pool: n_pool=P, n_qstr=N, ..."
#                             line: the interned names after boot, at the end
#   @link <up 0/1> <cursor> <last sent> <journal's last seq> <publishes> <failures>
#             the floor link (board.json's floor section), at a cut and at the end
#   @linkdown <code> <detail>   the link lost its connection (device/link L_* code)
#
# With a floor link the table's link task runs too: the controller's link
# pass (LinkedController.link_pass) after the table's passes at every clock step,
# on the real clock (the broker and the floor service are real processes),
# and one pass of the asyncio loop while the link opens its connection (its
# opener task). Each power-on waits (real time, bounded) for the link to be
# connected and subscribed before it plays, and the last one for the floor
# to have acknowledged every record the journal holds.
import gc
import sys
import time

gc.collect()
_BASE = gc.mem_alloc()

import machine  # noqa: E402  (the simulated one: frozen in, or build/mpy/sim)

# A board's machine classes are C, there before the firmware starts; the
# simulated ones load on first use (sim/machine.py): load them now, so that
# the simulator's module objects are not made in the middle of a boot.
for _name in ("Timer", "WDT", "SPI", "UART", "RTC", "PWM"):
    getattr(machine, _name)
del _name

from tablerig import Rng, TableRig  # noqa: E402

_DIRECT = 255  # Rig.bit of an input that is a GPIO, not a chain bit
_OPENING = 1  # link.client.OPENING
_LINK_UP_S = 30  # real seconds a power-on waits for the link to connect
_LINK_DRAIN_S = 60  # ... and the last one for the floor to acknowledge everything

# Folded away when compiled as the firmware is (host_tools.constfold): these
# lines then load nothing, as the firmware's own do not.
from sicbo import events as E  # noqa: E402
from sicbo import signals as S  # noqa: E402

# Inputs in sicbo.signals order; the physical ones a cut leaves as they are.
_KEPT = (S.COVER, S.CLASP_LEFT, S.CLASP_RIGHT, S.SUPERVISOR)


class Cut(Exception):
    pass


class Rig(TableRig):
    """The table's hands (bench/tablerig.py), with the keys on a 74HC165
    chain where the board has one, and the power cut at clock step
    cut_step (0: never)."""

    def __init__(self, folder, cut_step):
        TableRig.__init__(self, None, None, 0, 0)  # pins and timings: main()
        self.folder = folder
        self.cut_step = cut_step
        self.lv = bytearray(S.COUNT)
        self.load = 0  # the 74HC165 chain's load pin, if the board has the chain

    def load_levels(self):
        try:
            with open(self.folder + "/levels") as f:
                s = f.read()
            for i in _KEPT:
                self.lv[i] = 1 if s[i] == "1" else 0
        except (OSError, IndexError):
            pass

    def save_levels(self):
        with open(self.folder + "/levels", "w") as f:
            f.write("".join(str(v) for v in self.lv))

    def set(self, sig, level):
        self.lv[sig] = level
        bit = self.bit[sig]
        if bit == _DIRECT:
            machine.sim_set(self.gpio[sig], level ^ self.inv[sig])
        else:  # a key on the 74HC165 chain (its parallel input)
            machine.sim_set_165(self.load, bit, level ^ self.inv[sig])

    def step(self, ms):
        if self.steps + 1 == self.cut_step:
            self.steps += 1
            raise Cut()
        w = TableRig.step(self, ms)
        if self.ctl.link is not None:
            link_pass(self.ctl)
        return w


async def _yield():
    pass


def link_pass(ctl):
    # The link task's pass, then (while it opens) one turn of asyncio's loop
    # for its opener task.
    ctl.link_pass(time.ticks_ms())
    link = ctl.link
    if link is not None and link.state == _OPENING:
        import asyncio

        asyncio.run(_yield())


def link_wait(ctl, done, seconds):
    # Link passes on the real clock until done() (True), or False at the deadline.
    t0 = time.ticks_ms()
    while not done():
        if time.ticks_diff(time.ticks_ms(), t0) > seconds * 1000:
            return False
        link_pass(ctl)
        time.sleep_ms(1)
    return True


def link_line(ctl):
    link = ctl.link
    if link is not None:
        print("@link", 1 if link.is_up else 0, link.cursor, link.top, ctl.store.last,
              link.counts[0], link.counts[8])


def play(rig, rng):
    """From the state the board is in to the end of one round. Returns the
    id of the round started here, or 0 if the round was resumed."""
    m = rig.ctl.m
    started = 0
    if m.alarm:
        rig.press(S.SUPERVISOR)  # the supervisor acknowledges (a resumed void)
    if m.state == E.ST_IDLE:
        rig.dome(1)
        rig.press(S.SHAKE)
        if m.state != E.ST_SHAKING:
            raise AssertionError("shake refused in round %d (state %d)" % (m.round, m.state))
        started = m.round
        print("@start", started)
        n = 0
        while m.state == E.ST_SHAKING:
            rig.wait()
            n += 1
            if n > 200:
                raise AssertionError("the shake never ended")
    if m.state == E.ST_OPEN:
        rig.press(S.KEY_BELL)
        if m.state != E.ST_CLOSED:
            raise AssertionError("bell refused in round %d (state %d)" % (m.round, m.state))
    if m.state == E.ST_CLOSED:
        rig.step(rig.bell_ms)  # the bell rings out
        rig.dome(0)
    if m.state == E.ST_RESULT:
        r = rng.below(10)
        if r == 0:
            reason = 1 + rng.below(3)  # stacked, leaning, other
            for k in (S.KEY_VOID, S.KEY_FACE_1 + reason - 1, S.KEY_CONFIRM):
                rig.press(k)
            if m.state != E.ST_IDLE:
                raise AssertionError("void not taken in round %d (state %d)"
                                     % (m.round, m.state))
            print("@end", m.round, "void", reason)
            return started
        d = (1 + rng.below(6), 1 + rng.below(6), 1 + rng.below(6))
        for f in d:
            rig.press(S.KEY_FACE_1 + f - 1)
        rig.press(S.KEY_CONFIRM)
        if m.state != E.ST_PAYING:
            raise AssertionError("dice %r not taken in round %d (state %d)"
                                 % (d, m.round, m.state))
    if m.state == E.ST_PAYING:
        rig.press(S.KEY_PAYOUT)
        if m.state != E.ST_IDLE:
            raise AssertionError("payout refused in round %d (state %d)" % (m.round, m.state))
        print("@end", m.round, "paid", "%d%d%d" % tuple(m.dice))
        return started
    if m.state != E.ST_IDLE:
        raise AssertionError("round %d in state %d" % (m.round, m.state))
    return started


def names(when):
    # The interned names (qstrs) so far: MicroPython's own line, "qstr pool:
    # n_pool=.., n_qstr=..", after this one. Their pools grow by doubling,
    # each new one a single block (at 620 names: 640 entries, 4.4 KiB).
    import micropython

    print("@names", when)
    micropython.qstr_info()


def meters(ctl):
    mt = ctl.m.meters
    print("@meters", mt.get("rounds"), mt.get("paid"), mt.get("voids"))


def main():
    a = sys.argv[-6:]
    folder = a[0]
    fill = a[1] == "fill"
    rounds = int(a[2])
    cut_step = int(a[3])
    seed = int(a[4])
    boot_no = int(a[5])
    rig = Rig(folder, cut_step)
    rng = Rng(seed)
    try:
        import frozen_id  # noqa: F401  (the firmware frozen into the image)

        frozen = 1
        del frozen_id
    except ImportError:
        frozen = 0
    machine.sim_reset(ticks=1000)
    # The RTC, as deploy sets it: an hour later at each boot (approval in force).
    machine.RTC().datetime((2026, 12, 1 + boot_no // 24 % 28, 0, boot_no % 24, 0, 0, 0))
    rig.load_levels()
    import json

    with open(folder + "/board.json") as f:
        bd = json.load(f)
    with open(folder + "/table.json") as f:
        lamps = len(json.load(f)["lamp_order"])
    # GPIO and inversion of each input in sicbo.signals order, as the driver
    # wrote them from the board file (no copy of the signal list here).
    with open(folder + "/pins") as f:
        gpio, inv = f.read().split("\n")[:2]
    # "g<GPIO>" for a direct input, "c<bit>" for a key on the 74HC165 chain
    # (then a third line: load sck miso nbits and the bits tied high).
    rig.gpio = bytearray(int(x[1:]) if x[0] == "g" else 0 for x in gpio.split())
    rig.bit = bytearray(int(x[1:]) if x[0] == "c" else _DIRECT for x in gpio.split())
    rig.inv = bytearray(int(x) for x in inv.split())
    del gpio, inv
    rig.debounce = bd["timings"]["debounce_ms"]
    rig.bell_ms = bd["timings"]["bell_ms"]
    lb = bd["lamps"]
    machine.sim_attach_595(lb["spi"], lb["latch"], (lamps + 7) >> 3)
    kc = bd.get("keys")
    if kc:
        rig.load = kc["load"]
        machine.sim_attach_165(kc["load"], lb["sck"], lb["miso"], 8 * kc["chips"])
        for b in kc["high"]:
            machine.sim_set_165(kc["load"], b, 1)  # the sentinel bits tied high
    del bd, lb, json
    for i in range(S.COUNT):
        rig.set(i, rig.lv[i])
    gc.collect()
    before = gc.mem_alloc()
    import faults

    # As main.py starts it (faults.start's boot: start-up, then its modules
    # forgotten), with the simulated clock and this folder's fault file.
    ctl, restart = faults.boot(faults.Faults(folder + "/fault.txt", print),
                               folder + "/board.json", folder + "/table.json", folder,
                               log=print, ticks_ms=machine.sim_ticks_ms)
    if restart:
        # The files were checked and cached (sicbo/cache.py): a board resets
        # here; the next power-on, a new process, runs the table.
        print("@restart")
        sys.exit(4)
    if ctl is None:
        print("@refused")
        sys.exit(2)
    rig.ctl = ctl

    gc.collect()
    # The firmware loaded from .mpy files (never with a frozen image, whose
    # modules' paths end in .py).
    on_path = 1 if sys.modules["faults"].__file__.endswith(".mpy") else 0
    print("@boot", ctl.m.round, ctl.m.state, gc.mem_alloc(), gc.mem_alloc() + gc.mem_free(),
          before, frozen, on_path, _BASE)
    names("boot")
    meters(ctl)
    link = None
    if ctl._plan is not None:
        # Every outage the controller journals (the link's, and its making's)
        # said to the driver too; set on the class (link.table's
        # LinkedController): the instance's attribute table stays as it is.
        cls = type(ctl)
        told = cls.link_down

        def down(self, code, detail):
            print("@linkdown", code, detail)
            told(self, code, detail)

        cls.link_down = down
        link_pass(ctl)  # the link task's first pass makes the link (controller.link_pass)
        link = ctl.link
        if link is None:
            print("@nolink 0 0 0")
            sys.exit(5)
    if link is not None:
        if not link_wait(ctl, lambda: link.is_up and link.subscribed, _LINK_UP_S):
            print("@nolink", link.state, link.fault, link.detail)
            link_line(ctl)
            sys.exit(5)
        gc.collect()
        print("@linkup", gc.mem_alloc())
    started = 0
    try:
        while True:
            if ctl.m.state == E.ST_IDLE and started >= rounds and (
                    ctl.store.deleted or not fill):
                break
            if play(rig, rng) and (ctl.store.deleted or not fill):
                started += 1
    except Cut:
        rig.save_levels()
        link_line(ctl)
        print("@cut", rig.steps, ctl.m.state)
        sys.exit(3)  # the journal was flushed at every append: nothing else survives
    # A clean stop between rounds (the campaign's last process).
    rig.save_levels()
    meters(ctl)
    if link is not None and rounds == 0 and not fill:
        # The campaign's last power-on: the floor stores and acknowledges all.
        link_wait(ctl, lambda: link.cursor >= ctl.store.last, _LINK_DRAIN_S)
        link.save()
    link_line(ctl)
    names("exit")
    print("@exit", rig.steps, started, ctl.store.deleted)
    ctl.store.close()


main()
