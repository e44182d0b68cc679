"""`sicbo deploy`: check the board, compile device/ for it, upload what changed
with the board and table files, verify every hash, write the manifest, reset,
and say what the board itself printed after the reset (running, refused, out
of service, ...). A board already up to date is left as it is (no copy, no
reset: its app is started again); a board running frozen firmware gets only
main.py and its configuration. See host_tools/deploy.py."""

import os
import sys

from host_tools import DEVICE, REPO

NAME = "deploy"
HELP = "deploy the firmware, board file and table file to a board (incremental, verified)"


def add_arguments(parser):
    parser.add_argument("--port", required=True, metavar="DEV",
                        help="the board's serial port (/dev/ttyUSB0, a virtual board's tty "
                             "link, or any mpremote/pyserial device)")
    parser.add_argument("--board", required=True, metavar="FILE",
                        help="board file (pin map), e.g. board_config/boards/esp32-devkitc.json")
    parser.add_argument("--table", metavar="FILE",
                        default=os.path.join(REPO, "board_config", "tables", "macau-2004.json"),
                        help="table file (default: board_config/tables/macau-2004.json)")
    parser.add_argument("--device", metavar="DIR", default=DEVICE,
                        help="the firmware's folder (default: device/ of this checkout)")
    parser.add_argument("--no-reset", action="store_true",
                        help="do not reset the board at the end, nor start the app of a board "
                             "already up to date (the app does not start)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print the board's start-up and the summary only")


def run(args):
    from host_tools.cli import UsageError
    from host_tools.deploy import deploy

    def log(text):
        if not args.quiet:
            print(text, flush=True)

    if not os.path.isdir(args.device):
        raise UsageError("no firmware folder %s" % args.device)
    report = deploy(args.port, args.board, args.table, device_dir=args.device,
                    reset=not args.no_reset, log=log)
    for rel in report.copied:
        log("  copied  %s" % rel)
    for rel in report.removed:
        log("  removed %s" % rel)
    for line in report.board_lines(args.port):
        print(line)
    print(report.summary())
    sys.stdout.flush()
    return 0
