# Controller benchmark on the MicroPython unix port (make bench), from the
# .mpy tree that host_tools.mprun compiles (build/mpy), as the board runs it:
#   python -c "from host_tools.mprun import compile_trees; compile_trees()"
#   micropython -X heapsize=111936 bench/bench_controller.py [rounds]
# The table is started as main.py starts it (startup.open_table, through
# benchkit.open_table): the virtual board's file and the full 2004 table
# written into a fresh folder under /tmp that also holds the journal, on the
# simulated machine (sim/: frozen into the interpreter when it is, else
# build/mpy/sim) with the RTC set. Prints figures:
#   heap in use once booted (open_table done, start-up modules dropped),
#     split into the simulated machine (built into a real board's firmware,
#     so 0 there), the firmware's loaded code (bytecode, its objects and
#     interned names) and the controller's state objects;
#   microseconds from a dealer key to its actuator command: the bell key,
#     Controller.handle(EV_BELL) alone, and from the debounced edge through
#     Switches.update and Controller.poll; bytes allocated on that path;
#   journal appends: bytes and microseconds each (JournalStore on /tmp);
#   journal bytes per round, and the heap after the first and the last round.
import gc
import sys
import time

_T0 = time.ticks_us()


from benchkit import (  # noqa: E402
    RTC_NOW,
    TABLE_FILE,
    Console,
    Pins,
    firmware_path,
    first_power_on,
    fresh_folder,
    open_table,
    remove_folder,
    write_files,
)

STEP_MS = 5  # sicbo.events.POLL_MS


def heap():
    gc.collect()
    return gc.mem_alloc()


def kib(n):
    return "%6.1f KiB" % (n / 1024)


class Rig:
    """The booted controller, its pins and the manual clock."""

    def __init__(self, ctl, machine, gpio, inv):
        from sicbo.signals import INPUT_SIGNALS

        self.ctl = ctl
        self.machine = machine
        self.m = ctl.m
        self.signals = INPUT_SIGNALS
        self.gpio = gpio  # per input signal, in INPUT_SIGNALS order
        self.inv = inv
        self.key_polls = []  # us from poll() to the bell's command, for key edges
        self.rang = 0  # ticks_us when the bell was commanded
        self.rang_heap = 0
        bell = ctl.hw.bell
        ring = bell.ring

        def timed_ring(now=None, ms=0):
            # The actuator command: when it runs, and the heap then.
            self.rang = time.ticks_us()
            self.rang_heap = gc.mem_alloc()
            return ring(now, ms)

        bell.ring = timed_ring

    def set(self, signal, level):
        i = self.signals.index(signal)
        self.machine.sim_set(self.gpio[i], level ^ self.inv[i])

    def run(self, ms, watch=False):
        ctl = self.ctl
        machine = self.machine
        while ms > 0:
            machine.sim_advance(STEP_MS)
            now = machine.sim_ticks_ms()
            before = ctl.events
            self.rang = 0
            t = time.ticks_us()
            ctl.poll(now)
            if watch and ctl.events != before and self.rang:
                self.key_polls.append(time.ticks_diff(self.rang, t))
                watch = False
            ctl.actuators(now)
            ctl.read_reader(now)
            wd = ctl.hw.watchdog
            if wd is not None:
                wd.feed(now)
            ms -= STEP_MS

    def press(self, signal, watch=False):
        self.set(signal, 1)
        self.run(60, watch)
        self.set(signal, 0)
        self.run(60)

    def open_round(self):
        for s in ("cover", "clasp_left", "clasp_right"):
            self.set(s, 1)
        self.run(60)
        self.press("shake")
        self.run(2000)

    def finish_round(self, d1, d2, d3):
        for s in ("cover", "clasp_left", "clasp_right"):
            self.set(s, 0)
        self.run(60)
        for d in (d1, d2, d3):
            self.press("key_face_%d" % d)
        self.press("key_confirm")
        self.press("key_payout")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    firmware_path()
    base = heap()
    STAGE[1] = base

    # The simulated machine: every part the virtual board uses.
    STAGE[0] = "importing the simulated machine"
    import machine
    from machine import PWM, RTC, SPI, UART, WDT, Pin, Timer  # noqa: F401

    STAGE[0] = "the first power-on on the files (checked, cached, reset)"

    # The files, as deploy puts them, and their first boot: it checks them,
    # caches them beside them (sicbo/cache.py) and resets; the bench then
    # starts from a heap as that reset leaves it.
    machine.sim_reset(ticks=1000)
    machine.RTC().datetime(RTC_NOW)
    folder = fresh_folder("bench")
    write_files(folder)
    pins = Pins(folder)
    for i in range(len(pins.gpio)):
        machine.sim_set(pins.gpio[i], pins.inv[i])  # every input off: keys up, dome open
    console = Console()
    if not first_power_on(folder, pins, console):
        raise AssertionError("the first power-on on new files did not check, cache and "
                             "reset: %r" % console.lines)
    # And what that boot left: the names it interned (MicroPython never frees
    # an interned name; a board's reset does), the firmware's among them.
    sim_code = heap() - base
    STAGE[0] = "importing the firmware (app and the modules it keeps)"

    # The firmware's resident code: app and what it keeps loaded while the
    # table runs (the adapters and the dice reader's parser included).
    import app  # noqa: F401
    import hw.bell  # noqa: F401
    import hw.lamps  # noqa: F401
    import hw.solenoid  # noqa: F401
    import hw.watchdog  # noqa: F401
    import journal_store  # noqa: F401
    import sicbo.dicereader  # noqa: F401
    from sicbo import events as E
    from sicbo import records as R

    code = heap() - base - sim_code
    STAGE[0] = "starting up: startup.open_table (files, adapters, journal, resume)"

    # Start-up, as main.py runs it, on the manual clock.
    t = time.ticks_us()
    ctl = open_table(folder, pins, console)
    boot_us = time.ticks_diff(time.ticks_us(), t)
    if ctl is None:
        print("bench_controller: the table did not start: %r" % console.lines)
        sys.exit(1)
    store = ctl.store
    gpio = pins.gpio
    inv = pins.inv
    bell_key = pins.timings["bell_ms"]
    del pins
    for _ in range(12):
        # 60 ms of the app's passes: the heap as the running table has it
        # (and the stack no longer holds start-up's objects).
        machine.sim_advance(STEP_MS)
        now = machine.sim_ticks_ms()
        ctl.poll(now)
        ctl.actuators(now)
        ctl.read_reader(now)
        if ctl.hw.watchdog is not None:
            ctl.hw.watchdog.feed(now)
    booted = heap() - base
    state = booted - sim_code - code

    STAGE[0] = "playing rounds"
    rig = Rig(ctl, machine, gpio, inv)
    for s in ("cover", "clasp_left", "clasp_right", "shake", "supervisor", "key_bell",
              "key_void", "key_payout", "key_confirm", "key_face_1", "key_face_2",
              "key_face_3", "key_face_4", "key_face_5", "key_face_6"):
        rig.set(s, 0)
    rig.run(60)

    handle_us = []  # us from handle(EV_BELL) to the bell's command
    whole_us = []  # the whole handle(): then recall and the meters
    alloc = []
    alloc_whole = []
    bytes0 = store.bytes_written
    appends0 = store.appends
    after_first = 0
    for r in range(rounds):
        rig.open_round()
        if rig.m.state != E.ST_OPEN:
            print("bench_controller: round %d did not open (state %d)" % (r + 1, rig.m.state))
            sys.exit(1)
        if r & 1:
            rig.press("key_bell", watch=True)  # edge -> Switches -> poll -> handle
        else:
            now = machine.sim_ticks_ms()
            gc.collect()
            a = gc.mem_alloc()
            t = time.ticks_us()
            ctl.handle(E.EV_BELL, 0, now)
            end = time.ticks_us()
            handle_us.append(time.ticks_diff(rig.rang, t))
            whole_us.append(time.ticks_diff(end, t))
            alloc.append(rig.rang_heap - a)
            alloc_whole.append(gc.mem_alloc() - a)
            rig.run(60)
        if not hw_bell_rang(machine, ctl):
            print("bench_controller: the bell did not ring in round %d" % (r + 1))
            sys.exit(1)
        rig.run(bell_key + 100)
        rig.finish_round(1 + r % 6, 1 + (r // 6) % 6, 1 + (r // 36) % 6)
        if rig.m.state != E.ST_IDLE:
            print("bench_controller: round %d did not end (state %d)" % (r + 1, rig.m.state))
            sys.exit(1)
        if r == 0:
            after_first = heap() - base
    after_last = heap() - base
    journal_bytes = store.bytes_written - bytes0
    appends = store.appends - appends0

    # Raw appends of one sealed record, flushed each time.
    from sicbo import journal

    rec = journal.encode(R.J_DIAG, ctl.m.seq + 1, ctl.m.round, ctl.m.boot, 0, None,
                         bytes(8))
    n = 200
    t = time.ticks_us()
    for _ in range(n):
        store.append(rec)
    append_us = time.ticks_diff(time.ticks_us(), t) / n
    store.close()
    remove_folder(folder)

    impl = sys.implementation
    print("bench_controller: MicroPython %s unix port (%d-bit), heap %d bytes, "
          "virtual board, %s" % (".".join(str(v) for v in impl.version[:3]),
                                 64 if sys.maxsize > 2 ** 32 else 32,
                                 gc.mem_alloc() + gc.mem_free(), TABLE_FILE.split("/")[-1]))
    print("heap in use once booted     %s (%d bytes), of which:" % (kib(booted), booted))
    print("  (the start-up's console lines and the bench's rig included; log: the board's "
          "console, kept 8 lines)")
    print("  simulated machine         %s (a board's machine is built in: 0 there), and the "
          "names the first power-on interned (a reset frees them; the firmware's among them)"
          % kib(sim_code))
    print("  firmware code (resident)  %s" % kib(code))
    print("  controller state          %s (and names left by start-up)" % kib(state))
    print("  firmware code + state     %s (target 40 KiB)" % kib(code + state))
    print("start-up (startup.open_table: files, adapters, journal replay, resume) %d us"
          % boot_us)
    print("bell key -> C_BELL executed, Controller.handle(EV_BELL): %d us median, %d max; "
          "%d bytes allocated" % (median(handle_us), max(handle_us), max(alloc)))
    print("  (the whole handle(): recall, meters and the console line after the command: "
          "%d us, %d bytes)"
          % (median(whole_us), max(alloc_whole)))
    print("bell key edge -> C_BELL executed, via Switches.update + Controller.poll: "
          "%d us median, %d max" % (median(rig.key_polls), max(rig.key_polls)))
    print("journal append (JournalStore, /tmp): %d bytes per append in play, "
          "%.0f us per 36-byte record appended and flushed" % (journal_bytes // appends,
                                                               append_us))
    print("journal bytes per round      %8d (%d rounds, %d appends, %d segments deleted)"
          % (journal_bytes // rounds, rounds, appends, store.deleted))
    print("heap after round 1           %s, after round %d %s" % (kib(after_first), rounds,
                                                                    kib(after_last)))
    print("wall time %.1f s" % (time.ticks_diff(time.ticks_us(), _T0) / 1e6))


def hw_bell_rang(machine, ctl):
    return ctl.hw.bell.ringing()


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if s else 0


STAGE = ["starting", 0]  # what the bench is doing, the heap before it began


def guarded():
    try:
        main()
    except MemoryError as e:
        print("bench_controller: MemoryError (%s) while %s, in a heap of %d bytes: "
              "%d bytes in use above the interpreter and this script"
              % (e, STAGE[0], gc.mem_alloc() + gc.mem_free(), gc.mem_alloc() - STAGE[1]))
        sys.exit(1)


guarded()
