"""`sicbo diag --port DEV [WHAT [N]]`: the board's REPL diagnostics from the host.

Runs `import diag; diag.WHAT(N)` on the board through mpremote (one connection:
set the RTC from this computer's clock with `diag.set_clock`, which journals
the old and the new time, run, reset), prints what the board
prints, can pull the journal to a local file (`diag.dump_journal()` on the
board) and draw the newest round on the board's table layout (--svg; the
table file is copied with mpremote's own `fs cp`). mpremote's raw REPL stops
the app while diag runs; the board is reset afterwards so that the table
resumes (from its journal), unless --no-restart.

Everything that runs on the board is a function of device/diag.py: the host
sends one-line calls, never MicroPython source."""

import ast
import binascii
import os
import tempfile
import time

from host_tools.cli import UsageError
from host_tools.deploy import RESET_SETTLE, MpRemote

NAME = "diag"
HELP = "run the board's diagnostics (status, sensors, lamps, ...) over mpremote"

RETRY_AFTER_S = 2.0
WHATS = ("status", "sensors", "lamps", "solenoid", "bell", "recall", "meters", "journal",
         "help")
_WITH_N = ("recall", "journal", "lamps")

# The journal's segments, as "SICBO-SEG <name repr> <hex>" lines (192 bytes
# each) then "SICBO-SEGS <list repr of the names in order>" (device/diag.py).
PULL = "import diag; diag.dump_journal()"
BOARD_TABLE = "/table.json"


def add_arguments(p):
    p.add_argument("--port", required=True, metavar="DEV",
                   help="serial port of the board (or the virtual board's tty link)")
    p.add_argument("what", nargs="?", default="status", choices=WHATS,
                   help="what to run (default: status)")
    p.add_argument("n", nargs="?", type=int,
                   help="how many rounds/records (recall, journal) or ms per lamp (lamps)")
    p.add_argument("--pull-journal", metavar="FILE",
                   help="also copy the whole journal (its segments in order) to FILE")
    p.add_argument("--svg", metavar="OUT.svg",
                   help="also draw the current (newest) round on the table's layout, "
                        "winning areas lit (as `sicbo journal --svg`)")
    p.add_argument("--table", metavar="FILE",
                   help="table file for --svg (default: the board's own %s)" % BOARD_TABLE)
    p.add_argument("--no-rtc", action="store_true",
                   help="do not set the board's clock from this computer's")
    p.add_argument("--no-restart", action="store_true",
                   help="leave the board at the REPL afterwards (the app stays stopped)")


def diag_code(what, n=None):
    if n is not None and what not in _WITH_N:
        raise UsageError("%s takes no number" % what)
    if n is not None and n <= 0:
        raise UsageError("the number must be positive, got %d" % n)
    return "import diag\ndiag.%s(%s)\n" % (what, "" if n is None else int(n))


def clock_code():
    """The board's clock from this computer's (as `mpremote rtc --set` gives
    it), through diag.set_clock: journaled (J_CLOCK)."""
    from host_tools.deploy import clock_now

    return "import diag\ndiag.set_clock(%r)\n" % (clock_now(),)


def split_journal(out):
    """(text without the journal lines, {segment: bytes}, [segment names])."""
    segs = {}
    names = None
    text = []
    for line in out.splitlines():
        if line.startswith("SICBO-SEG "):
            _tag, rest = line.split(" ", 1)
            name_repr, hexdata = rest.rsplit(" ", 1)
            name = ast.literal_eval(name_repr)
            segs[name] = segs.get(name, b"") + binascii.unhexlify(hexdata)
        elif line.startswith("SICBO-SEGS "):
            names = ast.literal_eval(line[len("SICBO-SEGS "):])
        else:
            text.append(line)
    return "\n".join(text), segs, names


def run(args, mpremote=None):
    code = diag_code(args.what, args.n)
    svg = getattr(args, "svg", None)
    table_arg = getattr(args, "table", None)
    if table_arg and not svg:
        raise UsageError("--table is for --svg")
    mp = mpremote or MpRemote(args.port)
    mp.check_port()
    with tempfile.TemporaryDirectory(prefix="sicbo-diag-") as tmp:
        board_table = os.path.join(tmp, "table.json")
        chain = []
        if not args.no_rtc:
            chain += ["exec", clock_code(), "+"]
        chain += ["exec", code]
        if args.pull_journal or svg:
            chain += ["+", "exec", PULL]
        if svg and not table_arg:
            chain += ["+", "fs", "cp", ":" + BOARD_TABLE, board_table]
        if not args.no_restart:
            chain += ["+", "reset"]
        out = _run(mp, chain)
        text, segs, names = split_journal(out)
        text = "\n".join(line for line in text.splitlines()
                         if not line.startswith("cp :" + BOARD_TABLE + " "))
        if text.strip():
            print(text.rstrip())
        if (args.pull_journal or svg) and names is None:
            raise UsageError("the board did not list its journal")
        if args.pull_journal:
            data = b"".join(segs.get(n, b"") for n in names)
            with open(args.pull_journal, "wb") as f:
                f.write(data)
            from sicbo import journal

            # Counted per segment: a record torn by a power cut ends its segment.
            recs = [r for n in names for r in journal.records(segs.get(n, b""))]
            print("journal: %d segments, %d bytes, %d records -> %s" % (
                len(names), len(data), len(recs), os.path.abspath(args.pull_journal)))
        if svg:
            _picture(svg, table_arg or board_table, [(n, segs.get(n, b"")) for n in names])
    if not args.no_restart:
        # What is sent to a board while it restarts is lost: let it boot.
        time.sleep(RESET_SETTLE)
        print("board reset: the table resumes from its journal")
    return 0


def _run(mp, chain):
    try:
        try:
            return mp.run(*chain)
        except UsageError as e:
            if "no raw REPL" not in str(e):
                raise
            # A board that is restarting (after a reset, e.g. the last diag's)
            # loses what it is sent for about a second: ask once more.
            time.sleep(RETRY_AFTER_S)
            return mp.run(*chain)
    except UsageError as e:
        for name in ("dump_journal", "set_clock"):
            if name in str(e):
                raise UsageError("the board's diag has no %s(): deploy this revision "
                                 "(sicbo deploy) first" % name) from None
        raise


def _picture(path, table_path, segs):
    from host_tools.commands.journal import Reading, svg_of_round
    from host_tools.rules import load_table

    cfg, table = load_table(table_path)
    rid = svg_of_round(Reading(segs, table), cfg, table, None, path)
    print("picture: round %d -> %s" % (rid, os.path.abspath(path)))
