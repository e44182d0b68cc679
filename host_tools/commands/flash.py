"""`sicbo flash`: write a MicroPython firmware image with esptool, after checking
that it is a complete image for the chip on the port. See host_tools/flash.py."""

NAME = "flash"
HELP = "flash a MicroPython firmware image (checked against the chip) with esptool"


def add_arguments(parser):
    parser.add_argument("--port", required=True, metavar="DEV", help="the board's serial port")
    parser.add_argument("--firmware", required=True, metavar="IMAGE.bin",
                        help="complete MicroPython firmware image (e.g. ESP32_GENERIC-*.bin)")
    parser.add_argument("--erase", action="store_true",
                        help="erase the whole flash first (the board's files are lost)")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the image and print the exact esptool command, write nothing")
    parser.add_argument("--chip", default="auto",
                        help="expected chip (esptool name, e.g. esp32); default: detect it")
    parser.add_argument("--baud", type=int, default=460800, help="flashing baud rate")


def run(args):
    from host_tools.flash import flash

    flash(args.port, args.firmware, erase=args.erase, dry_run=args.dry_run, chip=args.chip,
          baud=args.baud)
    return 0
