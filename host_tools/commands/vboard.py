"""`sicbo vboard`: a virtual ESP32 (the MicroPython unix port behind a pty) with
the simulated table, for mpremote, deploy and the tests. See host_tools/vboard.py."""

import os

from host_tools import REPO
from host_tools.cli import UsageError

NAME = "vboard"
HELP = "run a virtual board: the MicroPython unix port behind a pty, with the simulated table"


def add_arguments(parser):
    parser.add_argument("--folder", metavar="DIR", default=os.path.join(REPO, "build", "vboard"),
                        help="run folder: fs/ is the board's filesystem, tty links to the "
                             "serial port, the table's sockets live here (default: build/vboard)")
    parser.add_argument("--board", metavar="FILE",
                        help="board file (pin map) for the simulated table "
                             "(default: board_config/boards/virtual.json)")
    parser.add_argument("--table", metavar="FILE",
                        help="table file: names the lamp channels on the control socket")
    parser.add_argument("--link", metavar="PATH",
                        help="stable link to the serial port (default: DIR/tty)")
    parser.add_argument("--frozen-source", action="store_true",
                        help="serve sim/ as .py sources (compiled in the VM) instead of .mpy")
    parser.add_argument("--broker", metavar="HOST:PORT",
                        help="the MQTT broker the board's simulated network leads to (a relay "
                             "the control socket can drop: network_down, network_up)")
    parser.add_argument("--heap", default=None,
                        help="interpreter heap, as micropython -X heapsize= (default: the "
                             "board's, host_tools/heaps.py: 111936 on a 32-bit interpreter, "
                             "240k on the 64-bit one); $SICBO_MICROPYTHON names the interpreter")


def run(args):
    from host_tools.vboard import run_foreground

    if args.board and not os.path.isfile(args.board):
        raise UsageError("no board file %s" % args.board)
    broker = None
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
            raise UsageError("--broker must be HOST:PORT, got %r" % args.broker)
        broker = (host, int(port))
    try:
        return run_foreground(args.folder, board=args.board, link=args.link,
                              heap=args.heap,
                              table_file=args.table, frozen_source=args.frozen_source,
                              broker=broker)
    except (OSError, RuntimeError, ValueError) as e:
        raise UsageError("cannot start the virtual board: %s" % e) from None
