"""`sicbo console`: the board's serial console for people. The controller
prints journal records and dealer messages compactly (host_tools/console.py);
this shows them as text, as they come. The port is held while it runs
(host_tools/portlock.py): deploy and diag say so instead of sharing it, and
mpremote cannot open it. Ctrl-C stops."""

import os
import sys

from host_tools.cli import UsageError
from host_tools.console import lines, render
from host_tools.rules import add_table_argument, load_table

NAME = "console"
HELP = "show the board's serial console, journal records and dealer messages as text"


def add_arguments(p):
    p.add_argument("--port", required=True, help="serial port (or a virtual board's pty)")
    add_table_argument(p)
    p.add_argument("--raw", action="store_true", help="also print each line as received")


def run(args):
    import serial  # pyserial, installed with mpremote

    _cfg, table = load_table(args.table)
    if "://" not in args.port and not os.path.exists(args.port):
        raise UsageError("nothing at the port %s" % args.port)
    try:
        for text in lines(args.port):
            if args.raw:
                print("  raw | " + text)
            print(render(text, table))
            sys.stdout.flush()
    except (OSError, serial.SerialException) as e:
        raise UsageError("cannot read %s: %s" % (args.port, e)) from None
    except KeyboardInterrupt:
        pass  # Ctrl-C ends the watch
    return 0
