# The whole controller (device/controller.py) on the simulated machine, for the
# portable tests: a board wired like board_config/boards/virtual.json, a small
# 2004 table, a journal in a fresh folder under /tmp, and a manual clock that
# the rig advances in POLL_MS steps, polling as the app's tasks would.
import gc
import json

import machine
from folderkit import fresh_folder, journal_records  # noqa: F401  (the tests import them from here too)

# Folded into its uses (host_tools/constfold.py): loads nothing on the board.
from sicbo import events as E

AREAS = ["SMALL", "BIG", "ODD", "EVEN", "SINGLE_1", "SINGLE_2", "SINGLE_3", "SINGLE_4",
         "SINGLE_5", "SINGLE_6", "ANY_TRIPLE", "TOTAL_9", "TOTAL_10", "DOUBLE_1",
         "PAIR_1_2", "TRIPLE_3"]
INPUTS = {
    "cover": 34, "clasp_left": 35, "clasp_right": 36, "shake": 39, "supervisor": 32,
    "key_bell": 33, "key_void": 14, "key_payout": 15, "key_confirm": 13,
    "key_face_1": 21, "key_face_2": 22, "key_face_3": 5, "key_face_4": 12,
    "key_face_5": 2, "key_face_6": 0,
}
ACTIVE_HIGH = ("cover", "clasp_left", "clasp_right", "shake")  # sensors; keys pull low
SOLENOID = 25
MOTOR = 26
BELL = 27
LATCH = 19
READER_UART = 2


def board_dict(**timings):
    inputs = {}
    for name in INPUTS:
        if name in ACTIVE_HIGH:
            inputs[name] = {"pin": INPUTS[name], "pull": "none", "invert": False}
        else:
            inputs[name] = {"pin": INPUTS[name], "pull": "up", "invert": True}
    t = {"debounce_ms": 20, "chatter_limit": 10, "chatter_window_ms": 1000,
         "pulse_count": 3, "pulse_on_ms": 60, "pulse_off_ms": 250, "max_on_ms": 200,
         "rest_ms": 150, "bell_ms": 1500, "electric_run_ms": 3000, "watchdog_ms": 8000}
    for k in timings:
        t[k] = timings[k]
    return {"name": "test board", "inputs": inputs,
            "outputs": {"solenoid": SOLENOID, "shaker_motor": MOTOR, "bell": BELL},
            "lamps": {"bus": "hc595", "spi": 2, "sck": 18, "mosi": 23, "latch": LATCH},
            "reader": {"uart": READER_UART, "tx": 17, "rx": 16, "baudrate": 9600},
            "timers": {"solenoid": 0, "shaker_motor": 1, "bell": 2},
            "strapping_ok": {str(p): "simulated: no boot strapping" for p in (0, 2, 5, 12, 15)},
            "timings": t}


def table_dict(**changes):
    t = {"name": "test table", "edition": 2004, "shaker": "solenoid", "offered": AREAS,
         "lamp_order": ["PLACE_BETS", "ALARM", "VOID", "PAYING"] + AREAS,
         "approval": {"reference": "T", "applied": "2026-11-02", "effective": "2026-11-05"}}
    for k in changes:
        t[k] = changes[k]
    return t


def write_files(folder, board=None, table=None):
    """board.json and table.json in folder (the defaults unless given); with
    the defaults, also the configuration cache that `sicbo deploy` would
    write beside them (made once, _template), so that a test's boot, like a
    board's after a deploy, does not parse the files."""
    if board is None and table is None and _TEMPLATE:
        buf = bytearray(256)  # in pieces: a test's heap is as fragmented as a board's
        for name in ("board.json", "table.json", "config.cache"):
            with open(_TEMPLATE[0] + "/" + name, "rb") as f, open(folder + "/" + name, "wb") as g:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        break
                    g.write(buf if n == len(buf) else buf[:n])
        return
    for name, data in (("board.json", board or board_dict()),
                       ("table.json", table or table_dict())):
        with open(folder + "/" + name, "w") as f:
            json.dump(data, f)


_TEMPLATE = []


def _template():
    """The default files and their cache, made before the controller's code is
    loaded (as a board checks new files in a boot of their own)."""
    import memory
    import tablefiles

    folder = fresh_folder()
    write_files(folder)
    b, c = tablefiles.parse(folder + "/board.json", folder + "/table.json")
    tablefiles.keep(folder + "/board.json", b, c,
                    tablefiles.config_id(folder + "/board.json", folder + "/table.json"))
    memory.forget(tablefiles.PARSERS)
    _TEMPLATE.append(folder)


RTC_NOW = (2026, 11, 30, 0, 12, 0, 0, 0)  # after the test table's effective date


class Table:
    """A table started as main.py starts one (faults.boot: files,
    journal replay, hardware, resume), on the sim board with the cover off,
    clasps open, keys up, and the RTC set."""

    def __init__(self, folder=None, board=None, table=None, reset=True, rtc=RTC_NOW,
                 expect_refusal=False, held=()):
        if reset:
            machine.sim_reset(ticks=1000)
            if rtc is not None:
                machine.RTC().datetime(rtc)
        self.folder = folder or fresh_folder()
        if board is not None or table is not None or reset:
            write_files(self.folder, board, table)
        if reset:
            for name in INPUTS:
                self.set(name, 1 if name in held else 0)
        with open(self.folder + "/table.json") as f:
            lamps = len(json.load(f)["lamp_order"])
        machine.sim_attach_595(2, LATCH, (lamps + 7) >> 3)
        import faults

        for _power_on in range(2):  # a second one after the files were first cached
            self.log = []
            # Not the host's /fault.txt.
            self.faults = faults.Faults(self.folder + "/fault.txt", self.log.append)
            self.ctl, restart = faults.boot(
                self.faults, self.folder + "/board.json", self.folder + "/table.json",
                self.folder, log=self.log.append, ticks_ms=machine.sim_ticks_ms)
            if not restart:
                break
        if self.ctl is None:
            assert expect_refusal, "the table did not start: %r" % self.log
            self.hw = self.store = self.m = self.cfg = self.table = None
            return
        assert not expect_refusal, "the table started"
        self.hw = self.ctl.hw
        self.store = self.ctl.store
        self.cfg = self.ctl.table.cfg
        self.table = self.ctl.table
        self.m = self.ctl.m

    def now(self):
        return machine.sim_ticks_ms()

    def set(self, name, level):
        pad = level if name in ACTIVE_HIGH else 1 - level
        machine.sim_set(INPUTS[name], pad)

    def run(self, ms):
        """Advance the clock by ms, polling like the app's tasks."""
        while ms > 0:
            step = E.POLL_MS if ms > E.POLL_MS else ms
            machine.sim_advance(step)
            now = machine.sim_ticks_ms()
            self.ctl.poll(now)
            self.ctl.actuators(now)
            self.ctl.read_reader(now)
            if self.hw.watchdog is not None:
                self.hw.watchdog.feed(now)
            ms -= step

    def press(self, name, ms=60):
        self.set(name, 1)
        self.run(ms)
        self.set(name, 0)
        self.run(ms)

    def close_dome(self):
        self.set("cover", 1)
        self.set("clasp_left", 1)
        self.set("clasp_right", 1)
        self.run(60)

    def open_round(self):
        """Cover and clasps on, shake: returns with betting open."""
        self.close_dome()
        self.press("shake")
        self.run(2000)

    def enter(self, d1, d2, d3):
        for d in (d1, d2, d3):
            self.press("key_face_%d" % d)
        self.press("key_confirm")

    def to_result(self):
        """From idle to result entry: shake, bell, cover and clasps off."""
        self.open_round()
        self.bell_and_lift()

    def bell_and_lift(self):
        """From betting open to result entry: the bell, cover and clasps off."""
        self.press("key_bell")
        self.set("cover", 0)
        self.set("clasp_left", 0)
        self.set("clasp_right", 0)
        self.run(60)

    def play(self, d1, d2, d3):
        """A whole round from idle to payout complete."""
        self.to_result()
        self.enter(d1, d2, d3)
        self.press("key_payout")

    def frame(self):
        return machine.sim_frame(LATCH)

    def lit(self):
        """Names of the lamp channels lit in the last latched frame."""
        f = self.frame()
        if f is None:
            return []
        return [name for c, name in enumerate(self.cfg.lamp_order)
                if name is not None and settle.channel_on(f, c)]

    def state(self):
        return self.m.state

    def journal(self):
        from sicbo import journal

        out = []
        for data in self.store.read_all():
            out.extend(journal.records(data))
        return out

    def types(self):
        return [r.type for r in self.journal()]

    def close(self):
        if self.store is not None:
            self.store.close()

    def power_off(self):
        """The journal closed and the controller let go, as at a power cut:
        a boot that follows in this process has the heap to itself, as a
        board's has (two controllers do not fit the board's heap). lit() and
        frame() still read the lamps."""
        self.close()
        self.ctl = self.hw = self.store = self.m = self.table = self.faults = None
        gc.collect()


def no_watchdog_reset(ms=20000):
    """Time passes with nobody feeding: no reset means no watchdog armed."""
    before = len(machine.sim_resets())
    machine.sim_advance(ms)
    return len(machine.sim_resets()) == before


def journal_types(folder):
    return [r.type for r in journal_records(folder)]


def reboot(t, hard_reset=False, **kw):
    """Power cut and restart on the same journal and files (the table keeps
    its state). The old controller is gone, as after a real power cut: `t`
    keeps only its folder and files. hard_reset: the board restarted by
    machine.reset() (a technician's, a deploy's), its reset cause recorded
    for the next boot, instead of a power cut."""
    t.close()
    t.ctl = t.m = t.hw = t.store = None
    if hard_reset:
        try:
            machine.reset()
        except SystemExit:
            pass
        else:
            raise AssertionError("machine.reset() returned")
    return Table(folder=t.folder, reset=False, **kw)


_template()
gc.collect()

from sicbo import settle  # noqa: E402

STATE = E
