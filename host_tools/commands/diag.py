"""`sicbo diag --port DEV [WHAT [N]]`: the board's REPL diagnostics from the host.

Runs `import diag; diag.WHAT(N)` on the board through mpremote (one connection:
set the RTC from this computer's clock, run, reset), prints what the board
prints, and can pull the journal to a local file. mpremote's raw REPL stops the
app while diag runs; the board is reset afterwards so that the table resumes
(from its journal), unless --no-restart."""

import ast
import binascii
import os
import time

from host_tools.cli import UsageError
from host_tools.deploy import RESET_SETTLE, MpRemote

NAME = "diag"
HELP = "run the board's diagnostics (status, sensors, lamps, ...) over mpremote"

RETRY_AFTER_S = 2.0
WHATS = ("status", "sensors", "lamps", "solenoid", "bell", "recall", "meters", "journal",
         "help")
_WITH_N = ("recall", "journal", "lamps")

_PULL = r'''
import os, binascii
def _sicbo_pull():
    d = '/journal'
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith('.log'))
    except OSError:
        names = []
    for n in names:
        with open(d + '/' + n, 'rb') as f:
            while True:
                b = f.read(192)
                if not b:
                    break
                print('SICBO-SEG', repr(n), binascii.hexlify(b).decode())
    print('SICBO-SEGS', repr(names))
_sicbo_pull()
'''


def add_arguments(p):
    p.add_argument("--port", required=True, metavar="DEV",
                   help="serial port of the board (or the virtual board's tty link)")
    p.add_argument("what", nargs="?", default="status", choices=WHATS,
                   help="what to run (default: status)")
    p.add_argument("n", nargs="?", type=int,
                   help="how many rounds/records (recall, journal) or ms per lamp (lamps)")
    p.add_argument("--pull-journal", metavar="FILE",
                   help="also copy the whole journal (its segments in order) to FILE")
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
    mp = mpremote or MpRemote(args.port)
    mp.check_port()
    chain = []
    if not args.no_rtc:
        chain += ["rtc", "--set", "+"]
    chain += ["exec", code]
    if args.pull_journal:
        chain += ["+", "exec", _PULL]
    if not args.no_restart:
        chain += ["+", "reset"]
    try:
        out = mp.run(*chain)
    except UsageError as e:
        if "no raw REPL" not in str(e):
            raise
        # A board that is restarting (after a reset, e.g. the last diag's)
        # loses what it is sent for about a second: ask once more.
        time.sleep(RETRY_AFTER_S)
        out = mp.run(*chain)
    text, segs, names = split_journal(out)
    if text.strip():
        print(text.rstrip())
    if args.pull_journal:
        if names is None:
            raise UsageError("the board did not list its journal")
        data = b"".join(segs.get(n, b"") for n in names)
        with open(args.pull_journal, "wb") as f:
            f.write(data)
        from sicbo import journal

        # Counted per segment: a record torn by a power cut ends its segment.
        recs = [r for n in names for r in journal.records(segs.get(n, b""))]
        print("journal: %d segments, %d bytes, %d records -> %s" % (
            len(names), len(data), len(recs), os.path.abspath(args.pull_journal)))
    if not args.no_restart:
        # What is sent to a board while it restarts is lost: let it boot.
        time.sleep(RESET_SETTLE)
        print("board reset: the table resumes from its journal")
    return 0
