"""`sicbo demo` (`make run`): the firmware on a virtual board, playing rounds.

Starts a virtual board (the MicroPython unix port behind a pty, with the
simulated table), deploys the firmware to it exactly as to a real board
(`sicbo deploy`), then a scripted dealer plays rounds on the simulated table
while the terminal shows the layout with the lit areas, the round state, the
dice and the journal lines the board prints. Ctrl-C stops everything."""

import os
import random
import shutil
import signal
import sys
import threading
import time

from host_tools import REPO
from host_tools.cli import UsageError
from host_tools.console import lines, render

NAME = "demo"
HELP = "start a virtual board, deploy the firmware to it and play rounds (make run)"

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
RUN = os.path.join(REPO, "run", "demo")
# How a 2004 layout card groups the areas, row by row.
LAYOUT = (
    ("", ["SMALL", "ODD", "ANY_TRIPLE", "EVEN", "BIG"]),
    ("triple", ["TRIPLE_%d" % n for n in range(1, 7)]),
    ("double", ["DOUBLE_%d" % n for n in range(1, 7)]),
    ("total", ["TOTAL_%d" % t for t in range(4, 18)]),
    ("single", ["SINGLE_%d" % n for n in range(1, 7)]),
    ("pair", None),  # every PAIR_ area
    ("combo", None),  # every COMBO_ area
    ("four", None),  # every FOUR_ area
    ("lamps", ["PLACE_BETS", "PAYING", "VOID", "ALARM"]),
)


def add_arguments(p):
    p.add_argument("--rounds", type=int, default=0,
                   help="stop after this many rounds (default: until Ctrl-C)")
    p.add_argument("--folder", default=RUN, help="the virtual board's run folder")
    p.add_argument("--board", default=BOARD, help="board file (default: virtual.json)")
    p.add_argument("--table", default=TABLE, help="table file (default: macau-2004.json)")
    p.add_argument("--fresh", action="store_true",
                   help="start from an empty board filesystem (forget the journal)")
    p.add_argument("--seed", type=int, help="dice of the scripted dealer (default: random)")
    p.add_argument("--pace", type=float, default=1.0,
                   help="seconds the dealer waits at each step (default 1.0)")
    p.add_argument("--heap", default=None,
                   help="interpreter heap (default: the board's, host_tools/heaps.py)")


class Console:
    """What the board prints on its serial port, shown as it comes."""

    def __init__(self, port, out, table=None):
        self.port = port
        self.out = out
        self.table = table  # SettlementTable: the compact lines rendered with it
        self.lines = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-console", daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(2)

    def _run(self):
        import serial  # pyserial, installed with mpremote

        while not self._stop.is_set():
            try:
                for text in lines(self.port, self._stop.is_set):
                    if text.strip():
                        self.lines.append(text)
                        self.out("  board | " + render(text, self.table))
            except (OSError, serial.SerialException):
                time.sleep(0.2)  # the port comes and goes with power cuts


def layout_lines(lit, codes, colour):
    """The layout card as text, lit areas marked."""
    def mark(code):
        short = code.replace("TRIPLE_", "T").replace("DOUBLE_", "D").replace(
            "TOTAL_", "").replace("SINGLE_", "S").replace("PAIR_", "P").replace(
            "COMBO_", "C").replace("FOUR_", "F").replace("ANY_TRIPLE", "ANY3")
        if code in lit:
            return ("\x1b[1;30;43m %s \x1b[0m" % short) if colour else "[%s]" % short
        return " %s " % short

    out = []
    for label, row in LAYOUT:
        if row is None:
            prefix = label.upper() + "_"
            row = [c for c in codes if c.startswith(prefix)]
        row = [c for c in row if c in codes or c in lit or label == "lamps"]
        if not row:
            continue
        cells = [mark(c) for c in row]
        line = "  %-7s" % label
        for cell in cells:
            if len(_strip(line + cell)) > 78:
                out.append(line)
                line = "  %-7s" % ""
            line += cell
        out.append(line)
    return out


def _strip(text):
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def wait_app(client, frames_before, timeout=30.0):
    """Until the app runs: the lamp adapter latches an all-off frame when it is
    made, the controller latches its own once the journal is replayed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.lamps()["frames"] >= frames_before + 2:
            time.sleep(0.5)  # its polling tasks start
            return
        time.sleep(0.05)
    raise UsageError("the app did not start on the virtual board (see its console above)")


class Dealer:
    """Plays rounds through the simulated table's control channel."""

    def __init__(self, client, names, pace, rng, out):
        self.c = client
        self.names = names  # lamp channel -> area / status lamp name
        self.pace = pace
        self.rng = rng
        self.out = out

    def lit(self):
        lamps = self.c.lamps()
        return {self.names[ch] for ch in lamps.get("lit", [])
                if isinstance(ch, int) and ch < len(self.names) and self.names[ch]}

    def wait_lamp(self, name, on=True, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (name in self.lit()) == on:
                return True
            time.sleep(0.05)
        return False

    def press(self, key):
        # until the board has seen the press and the release (simclient)
        try:
            self.c.press(key, ms=120, wait=True)
        except TimeoutError:
            raise UsageError("the board never took the %s key" % key) from None

    def set_all(self, levels):
        # until the board has taken them: a key pressed as the cover goes on
        # (or off) can be taken before it
        try:
            self.c.set_all(levels, wait_ms=100)
        except TimeoutError:
            raise UsageError("the board never took %s" % ", ".join(sorted(levels))) from None

    def step(self, text):
        self.out("dealer: " + text)
        time.sleep(self.pace)

    def play(self, n):
        self.out("")
        self.out("=== round %d ===" % n)
        self.step("cover on the dome, both clasps fastened")
        self.set_all({"cover": 1, "clasp_left": 1, "clasp_right": 1})
        self.step("shake")
        self.press("shake")
        if not self.wait_lamp("PLACE_BETS", timeout=6.0):
            self.press("shake")  # as a dealer would, if the table was not ready
        if not self.wait_lamp("PLACE_BETS"):
            raise UsageError("the board did not open betting (place-bets lamp stayed off)")
        self.step("place your bets ... (lamp lit)")
        self.step("bell: no more bets")
        self.press("key_bell")
        self.wait_lamp("PLACE_BETS", on=False)
        time.sleep(1.6)  # the bell rings
        self.set_all({"clasp_left": 0, "clasp_right": 0, "cover": 0})
        if self.rng.random() < 0.1:
            self.step("dice are stacked: void round")
            for key in ("key_void", "key_face_1", "key_confirm"):
                self.press(key)
            self.wait_lamp("VOID")
            return None
        dice = [self.rng.randint(1, 6) for _ in range(3)]
        self.step("the dice show %d-%d-%d" % tuple(dice))
        for d in dice:
            self.press("key_face_%d" % d)
        self.press("key_confirm")
        if not self.wait_lamp("PAYING"):
            raise UsageError("the board did not settle the round (paying lamp stayed off)")
        return dice


def run(args):
    from host_tools.deploy import deploy
    from host_tools.rules import load_table
    from host_tools.simclient import TableClient
    from host_tools.vboard import VirtualBoard

    cfg, table = load_table(args.table)
    names = list(cfg.lamp_order)
    codes = [n for n in names if n]
    colour = sys.stdout.isatty()
    out = print
    if args.fresh and os.path.isdir(args.folder):
        shutil.rmtree(args.folder)
    os.makedirs(args.folder, exist_ok=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    vb = VirtualBoard(args.folder, board=args.board, heap=args.heap)
    console = None
    try:
        vb.start()
        out("virtual board: %s (mpremote connect %s), table control %s"
            % (vb.pty, vb.port, vb.control))
        rng = random.Random(args.seed)
        with TableClient(vb.control) as client:
            frames = client.lamps()["frames"]
            report = deploy(vb.port, args.board, args.table,
                            log=lambda t: out("deploy: " + t))
            out("deploy: " + report.summary())
            console = Console(vb.port, out, table)
            console.start()
            wait_app(client, frames)
            dealer = Dealer(client, names, args.pace, rng, out)
            n = 0
            while not args.rounds or n < args.rounds:
                n += 1
                dice = dealer.play(n)
                lit = dealer.lit()
                out("")
                out("layout (lit: %d areas)%s" % (
                    len([x for x in lit if x in codes and x not in
                         ("PLACE_BETS", "PAYING", "VOID", "ALARM")]),
                    "" if dice else "  -- round void"))
                for line in layout_lines(lit, codes, colour):
                    out(line)
                if dice:
                    dealer.step("pay the winners, then payout complete")
                    dealer.press("key_payout")
                    dealer.wait_lamp("PAYING", on=False)
        out("")
        out("%d rounds played; the journal is in %s" % (n, os.path.join(vb.fs, "journal")))
        return 0
    except KeyboardInterrupt:
        out("\nstopped")
        return 130
    finally:
        if console is not None:
            console.stop()
        vb.stop()
        signal.signal(signal.SIGTERM, old)
