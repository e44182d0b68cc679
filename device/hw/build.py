# The adapters of a checked board file (sicbo.board.parse_board or the
# configuration cache), all off: start-up and diag build them here, then
# drop this module (its code is not needed once they exist).
#
#   build(board, row_bytes, ticks_ms, watchdog)  hw.Hardware, every adapter
#   lamps(board, row_bytes, spi)                 the lamp driver alone (the
#                                                fault lamps when the rest fails)
#   solenoid(board), bell(board)                 one adapter alone (diag's tests)
#   outputs_off(board)                           every output pin driven low
#
# Order on the ESP32: the lamps' SPI bus first (the keys' chain shares it; a
# Pin made later on one of its GPIOs takes it back), the latch and /OE after
# it, the keys' chain after the lamps.

from machine import Pin, Timer

from hw import Hardware, inputs


def lamps(board, row_bytes, spi=None):
    """The lamp driver of the board file's `lamps` (an all-off frame shown)."""
    lb = board.lamps
    if lb["bus"] == "hc595":
        from hw.lamps import ShiftLamps

        if spi is None:
            spi = inputs.spi_for(board)
        oe = Pin(lb["oe"], Pin.OUT, value=1) if lb["oe"] is not None else None
        return ShiftLamps(spi, Pin(lb["latch"], Pin.OUT, value=0), row_bytes, oe=oe)
    from neopixel import NeoPixel

    from hw.lamps import PixelLamps

    strip = NeoPixel(Pin(lb["pin"], Pin.OUT), lb["count"], bpp=len(lb["colour"]))
    return PixelLamps(strip, row_bytes, tuple(lb["colour"]))


def outputs_off(board):
    """Every output of the board file driven low, without its adapter: the
    state a board out of service holds."""
    for name in board.outputs:
        Pin(board.outputs[name], Pin.OUT, value=0)


def solenoid(board, ticks_ms=None):
    """The shaker's coil (PWM with a hold duty when the board file asks)."""
    from hw.solenoid import Solenoid

    t = board.timings
    pin = board.outputs["solenoid"]
    timer = Timer(board.timers["solenoid"])
    if t["hold_percent"]:
        from machine import PWM

        pwm = PWM(Pin(pin, Pin.OUT, value=0), freq=t["pwm_freq"], duty_u16=0)
        return Solenoid(None, timer, t["max_on_ms"], t["rest_ms"], pwm=pwm,
                        hold_duty_u16=t["hold_percent"] * 65535 // 100,
                        pull_in_ms=t["pull_in_ms"], ticks_ms=ticks_ms)
    return Solenoid(Pin(pin, Pin.OUT, value=0), timer, t["max_on_ms"], t["rest_ms"],
                    ticks_ms=ticks_ms)


def bell(board, ticks_ms=None):
    from hw.bell import Bell

    return Bell(Pin(board.outputs["bell"], Pin.OUT, value=0), Timer(board.timers["bell"]),
                board.timings["bell_ms"], ticks_ms=ticks_ms)


def build(board, row_bytes, ticks_ms=None, watchdog=True, hw=None):
    """Every adapter of a Board, into `hw` (a new hw.Hardware if None), the
    lamps first: should a later adapter fail, the fault path can still show
    the fault pattern and stop what exists. row_bytes is the lamp frame's
    size (the table's SettlementTable.row_bytes)."""
    if hw is None:
        hw = Hardware()
    spi = inputs.spi_for(board)  # the lamps' bus, shared with the keys' chain: made first
    hw.lamps = lamps(board, row_bytes, spi)
    hw.switches = inputs.make_switches(board, ticks_ms, spi)
    out = board.outputs
    if "solenoid" in out:
        hw.solenoid = solenoid(board, ticks_ms)
    if "shaker_motor" in out:
        from hw.solenoid import ShakerMotor

        hw.motor = ShakerMotor(Pin(out["shaker_motor"], Pin.OUT, value=0),
                               Timer(board.timers["shaker_motor"]),
                               board.timings["electric_run_ms"], ticks_ms=ticks_ms)
    hw.bell = bell(board, ticks_ms)
    rd = board.reader
    if rd is not None:
        from machine import UART

        hw.uart = UART(rd["uart"], baudrate=rd["baudrate"], tx=Pin(rd["tx"]), rx=Pin(rd["rx"]))
    if watchdog:
        from hw.watchdog import arm

        hw.watchdog = arm(board.timings["watchdog_ms"], ticks_ms)
    return hw
