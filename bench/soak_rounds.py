# Soak of the whole controller on the MicroPython unix port:
#   python -c "from host_tools.mprun import compile_trees; compile_trees()"
#   micropython -X heapsize=111936 bench/soak_rounds.py [rounds] [seed] [cut_every]
# or `python bench/soak.py [rounds] [seed] [cut_every]` (compiles, then runs
# this at the board's heap for the interpreter, host_tools/heaps.py). cut_every:
# the mean number of rounds between power cuts (default 300; 0 for none).
#
# The table is started as main.py starts it (startup.open_table, through
# benchkit.open_table) with the virtual board's file and the full 2004 table
# (board_config/) written into a fresh folder under /tmp, which also holds
# the journal, on the simulated machine (sim/) with its manual clock and the
# RTC set, the firmware imported as .mpy from build/mpy as the board runs it.
# Rounds are played through the pins with as few clock steps as the firmware
# allows: an input change is one poll to see it and one poll `debounce_ms`
# later to accept it; the shaker's pulses and the timers are stepped by what
# Controller.actuators() and the round's deadline say. Mix (seeded): plain
# rounds, dealer voids (stacked, leaning, other), refused and meaningless
# keys, and a power cut every few hundred rounds at a random point of a round:
# the store closed, the controller forgotten, the table started again through
# open_table on the same files and journal (the pins, the table's physical
# state, stay as they were).
#
# Prints: rounds done, MemoryErrors, heap (gc.mem_alloc after gc.collect)
# after round 1,000 and after the last, journal bytes on disk at the end and
# the most seen, rounds/s and wall time; checks that the meters and the
# recall agree with what was played. Exit status 1 on any failure.
import gc
import os
import sys
import time

_T0 = time.ticks_ms()


from benchkit import (  # noqa: E402
    BOARD_FILE,
    RTC_NOW,
    TABLE_FILE,
    Console,
    Pins,
    firmware_path,
    fresh_folder,
    open_table,
    remove_folder,
    write_files,
)

firmware_path()

import machine  # noqa: E402  (the simulated one: frozen in, or build/mpy/sim)
from tablerig import Rng, TableRig  # noqa: E402

from sicbo import events as E  # noqa: E402
from sicbo import signals as S  # noqa: E402


def heap():
    gc.collect()
    return gc.mem_alloc()


class Soak(TableRig):
    def __init__(self, folder):
        machine.sim_reset(ticks=1000)
        machine.RTC().datetime(RTC_NOW)
        write_files(folder)
        self.pins = Pins(folder)
        TableRig.__init__(self, self.pins.gpio, self.pins.inv,
                          self.pins.timings["debounce_ms"], self.pins.timings["bell_ms"])
        self.folder = folder
        self.console = Console()
        self.m = None
        self.boots = 0
        self.max_journal = 0
        for s in range(S.COUNT):
            self.set(s, 0)
        self.start()

    # ---- the board ---------------------------------------------------------

    def start(self):
        """Power on: the one start-up (startup.open_table), as main.py."""
        ctl = open_table(self.folder, self.pins, self.console)
        if ctl is None:
            raise AssertionError("the table did not start: %r" % self.console.lines)
        self.ctl = ctl
        self.m = ctl.m
        self.boots += 1

    def power_cut(self):
        """The interpreter's state is gone; files and the table stay: the
        store closed, the controller forgotten (here and as controller.current),
        then the table started again through open_table."""
        ctl = self.ctl
        if ctl is not None:
            ctl.store.close()  # the files as written (every append was flushed)
            ctl.hw.all_off()  # what a reset leaves the drivers in
        self.ctl = self.m = None
        ctl = None
        running = sys.modules.get("controller")
        if running is not None:
            running.current = None
        gc.collect()
        machine.sim_advance(500)
        self.start()

    def keys(self, sigs):
        """Press keys one after the other: each release goes with the next
        press (two polls per key)."""
        prev = -1
        for s in sigs:
            if prev == s:
                self.set(prev, 0)  # the same key again: released first
                self.settle()
            elif prev >= 0:
                self.set(prev, 0)
            self.set(s, 1)
            self.settle()
            prev = s
        self.set(prev, 0)
        self.settle()

    def wait_open(self):
        """Step through the shake (pulses, then the round's timer)."""
        m = self.m
        n = 0
        while m.state == E.ST_SHAKING:
            w = self.wait()
            n += 1
            if n > 200:
                raise AssertionError("shake never ended (wait %d)" % w)

    def trim_sim(self):
        """Empty the simulated machine's logs of SPI writes and latched lamp
        frames (256 of each kept for tests: ~30 KiB that a board does not
        have, since its machine module keeps no history)."""
        import _sim_spi

        for d in (_sim_spi._spi_log, _sim_spi._frames):
            for k in d:
                d[k].clear()

    def journal_bytes(self):
        n = self.ctl.store.total_bytes()
        if n > self.max_journal:
            self.max_journal = n
        return n


# Input signals, by their names (sicbo.signals).
COVER, CLASP_L, CLASP_R, SHAKE, SUPERVISOR = (S.COVER, S.CLASP_LEFT, S.CLASP_RIGHT, S.SHAKE,
                                              S.SUPERVISOR)
BELL, VOID, PAYOUT, CONFIRM, FACE1 = (S.KEY_BELL, S.KEY_VOID, S.KEY_PAYOUT, S.KEY_CONFIRM,
                                      S.KEY_FACE_1)


class Expect:
    def __init__(self):
        self.rounds = 0
        self.paid = 0
        self.voids = 0
        self.void_reasons = [0] * 8
        self.refusals = 0
        self.last = []  # (round, status, dice), the last 10 rounds
        self.cuts = 0
        self.cut_states = [0] * 8

    def ended(self, rid, status, dice, reason=0):
        if status == "paid":
            self.paid += 1
        else:
            self.voids += 1
            self.void_reasons[reason] += 1
        self.last.append((rid, status, dice))
        if len(self.last) > 10:
            self.last.pop(0)


def check_meters(s, x, where):
    mt = s.ctl.m.meters
    got = (mt.get("rounds"), mt.get("paid"), mt.get("voids"), mt.get("refusals"))
    want = (x.rounds, x.paid, x.voids, x.refusals)
    if got != want:
        raise AssertionError("%s: meters (rounds, paid, voids, refusals) %r, played %r"
                             % (where, got, want))
    for r in range(8):
        if mt.void_reasons[r] != x.void_reasons[r]:
            raise AssertionError("%s: voids for reason %d: meters %d, played %d"
                                 % (where, r, mt.void_reasons[r], x.void_reasons[r]))


def check_recall(s, x):
    # The game recall as diag.recall makes it: read back from the journal.
    from sicbo.recall import Recall

    rc = Recall(s.ctl.table)
    for data in s.ctl.store.read_all():
        rc.feed(data)
    got = [(i.round, i.status, i.dice) for i in rc.last()]
    want = list(x.last)
    want.reverse()
    if got != want:
        raise AssertionError("recall %r, played %r" % (got, want))


def play_round(s, x, rng, cut_at):
    """One round from idle to idle. cut_at: the stage (1..6) at which the
    power is cut, 0 for none. Returns nothing; raises on a wrong state."""
    r = rng.below(100)
    # Refused and meaningless keys in idle, sometimes.
    if r < 3:
        s.press(PAYOUT)  # not now: shown, not journaled
    elif r < 5:
        s.set(CLASP_L, 0)  # a cut may have left the dome closed
        s.set(CLASP_R, 0)
        s.set(COVER, 1)
        s.settle()
        s.press(SHAKE)  # clasps open: refused, journaled
        x.refusals += 1
        if s.m.state != E.ST_IDLE:
            raise AssertionError("shake with the clasps open started a round")
    s.dome(1)
    s.press(SHAKE)
    if s.m.state != E.ST_SHAKING:
        raise AssertionError("shake did not start round %d (state %d)" % (s.m.round + 1,
                                                                          s.m.state))
    x.rounds += 1
    rid = s.m.round
    if cut_at == 1:
        return cut(s, x, rid, E.ST_IDLE, E.V_POWER)
    s.wait_open()
    if s.m.state != E.ST_OPEN:
        raise AssertionError("round %d: betting did not open (state %d)" % (rid, s.m.state))
    if r >= 95:
        s.press(FACE1 + rng.below(6))  # a face key while betting: refused
        x.refusals += 1
    if cut_at == 2:
        return cut(s, x, rid, E.ST_IDLE, E.V_POWER)
    s.press(BELL)
    if s.m.state != E.ST_CLOSED:
        raise AssertionError("round %d: bell refused (state %d)" % (rid, s.m.state))
    if r >= 90 and r < 95:
        s.press(BELL)  # again: not now
    if cut_at == 3:
        cut(s, x, rid, E.ST_CLOSED, 0)
    s.step(s.bell_ms)  # the bell rings out
    s.dome(0)
    if s.m.state != E.ST_RESULT:
        raise AssertionError("round %d: no result entry (state %d)" % (rid, s.m.state))
    if cut_at == 4:
        s.keys((FACE1 + 1,))  # keyed before the cut: lost, entered again
        cut(s, x, rid, E.ST_RESULT, 0)
    if r >= 5 and r < 11:
        reason = 1 + (r - 5) % 3  # stacked, leaning, other
        s.keys((VOID, FACE1 + reason - 1, CONFIRM))
        if s.m.state != E.ST_IDLE:
            raise AssertionError("round %d: void not taken (state %d)" % (rid, s.m.state))
        x.ended(rid, "void", None, reason)
        return
    d = (1 + rng.below(6), 1 + rng.below(6), 1 + rng.below(6))
    s.keys((FACE1 + d[0] - 1, FACE1 + d[1] - 1, FACE1 + d[2] - 1, CONFIRM))
    if s.m.state != E.ST_PAYING:
        raise AssertionError("round %d: dice %r not taken (state %d)" % (rid, d, s.m.state))
    if r >= 11 and r < 14:
        s.press(FACE1)  # a second result: refused
        x.refusals += 1
    if cut_at == 5:
        cut(s, x, rid, E.ST_PAYING, 0)
    s.press(PAYOUT)
    if s.m.state != E.ST_IDLE:
        raise AssertionError("round %d: payout refused (state %d)" % (rid, s.m.state))
    x.ended(rid, "paid", d)
    if cut_at == 6:
        cut(s, x, rid, E.ST_IDLE, 0)


def cut(s, x, rid, want_state, void_reason):
    x.cuts += 1
    x.cut_states[s.m.state] += 1
    s.power_cut()
    if s.m.state != want_state or s.m.round != rid:
        raise AssertionError("after the cut in round %d: state %d round %d, wanted %d"
                             % (rid, s.m.state, s.m.round, want_state))
    if void_reason:
        x.ended(rid, "void", None, void_reason)
        # The resumed void leaves an alarm lit: the supervisor clears it.
        s.press(SUPERVISOR)
    check_meters(s, x, "after the power cut in round %d" % rid)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    cut_every = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    rng = Rng(seed)
    x = Expect()
    try:
        s = Soak(fresh_folder("soak"))
    except MemoryError as e:
        print("soak_rounds: MemoryError at the first start-up: %s (heap %d bytes, %d in use)"
              % (e, gc.mem_alloc() + gc.mem_free(), gc.mem_alloc()))
        sys.print_exception(e)
        sys.exit(1)
    s.trim_sim()
    base_heap = heap()
    mem_errors = 0
    heap_1000 = None
    # cut_every 0: no power cuts (an in-process reboot keeps the heap, which a
    # board's reset does not: start-up's garbage fragments a tight heap).
    next_cut = 1 + rng.below(cut_every * 2) if cut_every > 0 else -1
    t0 = time.ticks_ms()
    done = 0
    status = 0
    try:
        for i in range(1, rounds + 1):
            cut_at = 0
            if i == next_cut:
                cut_at = 1 + rng.below(6)
                next_cut = i + 1 + rng.below(cut_every * 2)
            try:
                play_round(s, x, rng, cut_at)
            except MemoryError as e:
                mem_errors += 1
                print("soak_rounds: MemoryError in round %d: %s (heap %d in use)"
                      % (i, e, gc.mem_alloc()))
                sys.print_exception(e)
                if mem_errors > 5:
                    raise
                # A board would reset: power cut and replay, then go on.
                s.power_cut()
                if s.m.state != E.ST_IDLE:
                    raise AssertionError("state %d after the reset" % s.m.state)  # noqa: B904
                x.rounds = s.ctl.m.meters.get("rounds")
            done = i
            s.trim_sim()  # every round: the logs would fragment the heap
            if i % 64 == 0:
                s.journal_bytes()
            if i == 1000:
                s.trim_sim()
                heap_1000 = heap()
            if i in (1, 10, 100) and os.getenv("SICBO_SOAK_TRACE"):
                s.trim_sim()
                print("  heap after round %d: %d" % (i, heap()))
            if i % 10000 == 0:
                check_meters(s, x, "after round %d" % i)
                print("  %7d rounds  %6.1f s  heap %d  journal %d bytes"
                      % (i, time.ticks_diff(time.ticks_ms(), t0) / 1000, heap(),
                         s.journal_bytes()))
        check_meters(s, x, "at the end")
        check_recall(s, x)
    except AssertionError as e:
        print("soak_rounds: FAILED after %d rounds: %s" % (done, e))
        status = 1
    ms = time.ticks_diff(time.ticks_ms(), t0)
    s.trim_sim()
    heap_last = heap()
    jb = s.journal_bytes()
    mt = s.ctl.m.meters
    store = s.ctl.store
    segs = len(store.segments())
    store.close()
    remove_folder(s.folder)
    print("soak_rounds: MicroPython %s unix port, heap %d bytes, %s, %s, seed %d"
          % (".".join(str(v) for v in sys.implementation.version[:3]),
             gc.mem_alloc() + gc.mem_free(), BOARD_FILE.split("/")[-1],
             TABLE_FILE.split("/")[-1], seed))
    print("rounds done          %d (paid %d, voids %d: dealer %d, power cut %d; "
          "refusals journaled %d)" % (done, mt.get("paid"), mt.get("voids"),
                                      x.void_reasons[1] + x.void_reasons[2]
                                      + x.void_reasons[3], x.void_reasons[E.V_POWER],
                                      mt.get("refusals")))
    print("power cuts           %d (boots %d), cut in states %r"
          % (x.cuts, s.boots, list(x.cut_states[:7])))
    print("MemoryError          %d" % mem_errors)
    print("heap once booted     %d bytes (the interpreter, this script, the simulated "
          "machine and the firmware)" % base_heap)
    if heap_1000 is not None:
        print("heap after round 1000 %d bytes, after round %d %d bytes: "
              "difference %+d bytes (target within 1024)"
              % (heap_1000, done, heap_last,
                 heap_last - heap_1000))
        if abs(heap_last - heap_1000) > 1024:
            status = 1
    print("journal on disk      %d bytes at the end (%d segments), at most %d bytes "
          "seen (%d KiB segments x %d kept by rotation)"
          % (jb, segs, s.max_journal, store.segment_bytes // 1024, store.max_segments))
    print("meters and recall    %s" % ("agree with the rounds played" if not status
                                       else "see above"))
    print("clock steps          %d polls, %.1f per round; simulated time %.1f h"
          % (s.steps, s.steps / (done or 1),
             time.ticks_diff(machine.sim_ticks_ms(), 1000) / 3600000))
    print("rounds/s             %.0f" % (done * 1000 / (ms or 1)))
    print("wall time            %.1f s" % (time.ticks_diff(time.ticks_ms(), _T0) / 1000))
    if mem_errors:
        status = 1
    sys.exit(status)


main()
