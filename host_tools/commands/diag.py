"""`sicbo diag --port DEV [WHAT [N]]`: the board's REPL diagnostics from the host.

Runs `import diag; diag.WHAT(N)` on the board through mpremote (one connection:
set the RTC from this computer's clock, in UTC, through `diag.set_clock`, which
journals the old and the new time, then run), prints what the
board prints, can pull the journal to a local file (`diag.dump_journal()` on
the board, before the diagnostic, so that a diagnostic that fails does not
stop it) and draw the newest round on the board's table layout (--svg; the
board's /table.json is copied with mpremote's own `fs cp`, in a run of its
own after the diagnostic: a board without one, or with one garbled, still
gives its status and its journal; the picture that cannot be drawn is one
line after them, naming the board's file). mpremote's raw REPL stops the app
while diag runs; the board is reset afterwards (typed at its REPL,
host_tools/boardstate.py), also when what diag was asked failed once
mpremote had reached the board, so that the table resumes from its journal,
and what the board prints as it starts is read and reported (running,
refused and why, out of service, resetting again and again, ...), never
assumed; --no-restart leaves it at the REPL. The port is held meanwhile
(host_tools/portlock.py). Exit status 0 whenever the board answered, also
when its diagnostic raised (that is said in one line) or the picture could
not be drawn; 2 for a refusal (no board at the port, a --table file refused
before the board is touched, a board without diag.dump_journal()).

Everything that runs on the board is a function of device/diag.py: the host
sends one-line calls, never MicroPython source."""

import ast
import binascii
import os
import tempfile
import time

from host_tools import boardstate
from host_tools.cli import UsageError
from host_tools.deploy import DeployError, MpRemote
from host_tools.portlock import PortLock

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


def clock_code(clock):
    """The board's clock set to `clock` (a tuple as machine.RTC().datetime()
    takes it) through diag.set_clock: journaled (J_CLOCK, the old and the
    new time)."""
    return "import diag\ndiag.set_clock(%r)\n" % (tuple(clock),)


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
    if table_arg:
        _load_table(table_arg)  # a file of this computer's: refused before the board is touched
    for out in (args.pull_journal, svg):
        # Where the journal or the picture goes: checked before the board is touched.
        folder = os.path.dirname(os.path.abspath(out)) if out else None
        if folder is not None and not os.path.isdir(folder):
            raise UsageError("cannot write %s: no folder %s" % (out, folder))
    mp = mpremote or MpRemote(args.port)
    mp.check_port()
    with PortLock(args.port, "sicbo diag") as lock:
        session = _Session()
        try:
            _diag(args, mp, code, svg, table_arg, session)
        except Exception:
            # Whatever stopped the diagnostics once mpremote had stopped the
            # app, the board is reset all the same (the refusal said is the
            # diagnostics', not the reset's).
            if session.reached and not args.no_restart:
                try:
                    _restart(args, lock)
                except (UsageError, OSError):
                    pass
            raise
        if not args.no_restart:
            _restart(args, lock)
    return 0


class _Session:
    """What one diag did: `reached`, once mpremote reached the board (its
    app stopped: diag resets it afterwards)."""

    def __init__(self):
        self.reached = False


def _restart(args, lock):
    """The board reset so that the table resumes (typed at its REPL), and
    what it printed as it started."""
    # The clock was set (and journaled) at the start: the reset sets it no
    # more (an unjournaled set, however small).
    clock = None
    try:
        states = boardstate.reset_and_read(args.port, "sicbo diag", clock, lock=lock)
    except OSError as e:
        raise UsageError("lost the board at %s at its reset (%s)" % (args.port, e)) from None
    for line in boardstate.summary(states, port=args.port):
        print("board reset: " + line)
    if states and states[-1].settled and states[-1].advice(args.port):
        print("  do: " + states[-1].advice(args.port))


def _diag(args, mp, code, svg, table_arg, session=None):
    session = session or _Session()
    chain = []
    if not args.no_rtc:
        chain += ["exec", clock_code(boardstate.clock_tuple()), "+"]
    if args.pull_journal or svg:
        chain += ["exec", PULL, "+"]
    chain += ["exec", code]
    out, failed = _run(mp, chain, session)
    text, segs, names = split_journal(out)
    if failed:
        text = _without_traceback(text)
    if text.strip():
        print(text.rstrip())
    if failed and "no module named 'diag'" in failed:
        print("the board has no diag module (%s): is the firmware deployed? sicbo deploy "
              "--port %s --board FILE --table FILE" % (failed, args.port))
    elif failed:
        print("the board's diag.%s() failed: %s" % (args.what, failed))
    if (args.pull_journal or svg) and names is None:
        raise UsageError("the board did not list its journal")
    if args.pull_journal:
        data = b"".join(segs.get(n, b"") for n in names)
        try:
            with open(args.pull_journal, "wb") as f:
                f.write(data)
        except OSError as e:
            raise UsageError("cannot write the journal to %s: %s"
                             % (args.pull_journal, e.strerror or e)) from None
        from sicbo import journal

        # Counted per segment: a record torn by a power cut ends its segment.
        recs = [r for n in names for r in journal.records(segs.get(n, b""))]
        print("journal: %s, %s, %s -> %s" % (
            plural(len(names), "segment"), plural(len(data), "byte"),
            plural(len(recs), "record"), os.path.abspath(args.pull_journal)))
    if svg:
        # The status and the journal are out: a picture that cannot be drawn
        # is said in one line (the board answered: exit 0).
        try:
            _picture(svg, mp, table_arg, [(n, segs.get(n, b"")) for n in names])
        except UsageError as e:
            print("picture: not drawn: %s" % e)


def _load_table(path, said=None):
    """(cfg, table) of a table file, or UsageError naming it (as `said`
    when given: the board's file rather than the host's copy of it)."""
    from host_tools.rules import load_table

    try:
        return load_table(path)
    except UsageError as e:
        if said is None:
            raise
        why = str(e).replace("table file %s" % path, said).replace(path, said)
        raise UsageError(why) from None


def _board_table(mp, tmp):
    """The board's own table file copied to tmp (mpremote's `fs cp`, in a
    run of its own: its failure stops nothing else); UsageError saying why
    when it cannot be."""
    local = os.path.join(tmp, "table.json")
    try:
        mp.run("fs", "cp", ":" + BOARD_TABLE, local)
    except DeployError as e:
        said = "%s\n%s" % (e, getattr(e, "output", ""))
        if "No such file" in said or "ENOENT" in said:
            raise UsageError("the board has no %s: give the table file with --table FILE"
                             % BOARD_TABLE) from None
        raise UsageError("cannot copy %s from the board: %s" % (BOARD_TABLE, e)) from None
    if not os.path.isfile(local):
        raise UsageError("cannot copy %s from the board: mpremote wrote nothing"
                         % BOARD_TABLE)
    return local


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _without_traceback(text):
    """The board's output up to its traceback (whose last line is said apart)."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            return "\n".join(lines[:k])
    return text


def _board_exception(out):
    """The last line of a traceback the board printed, or None."""
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        return lines[-1].strip()
    return None


def _run(mp, chain, session=None):
    """(output, None), or (output, the exception's line) when the board
    answered with a traceback (the chain stops there)."""
    session = session or _Session()
    try:
        try:
            out = mp.run(*chain)
        except DeployError as e:
            if "no raw REPL" not in str(e):
                raise
            # A board that is restarting (after a reset, e.g. the last diag's)
            # loses what it is sent for about a second: ask once more.
            time.sleep(RETRY_AFTER_S)
            out = mp.run(*chain)
        session.reached = True
        return out, None
    except DeployError as e:
        out = getattr(e, "output", "")
        failed = _board_exception(out)
        if failed:
            session.reached = True  # the board answered, with a traceback
        for name in ("dump_journal", "set_clock"):
            if name in str(e) or (failed and name in failed):
                raise UsageError("the board's diag has no %s(): deploy this revision "
                                 "(sicbo deploy) first" % name) from None
        if failed:
            return out, failed
        raise


def _picture(path, mp, table_arg, segs):
    from host_tools.commands.journal import Reading, svg_of_round

    if table_arg:
        cfg, table = _load_table(table_arg)
        rid = svg_of_round(Reading(segs, table), cfg, table, None, path)
    else:
        with tempfile.TemporaryDirectory(prefix="sicbo-diag-") as tmp:
            local = _board_table(mp, tmp)
            cfg, table = _load_table(local, "the board's %s" % BOARD_TABLE)
        rid = svg_of_round(Reading(segs, table), cfg, table, None, path)
    print("picture: round %d -> %s" % (rid, os.path.abspath(path)))
