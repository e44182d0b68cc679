# The table's inputs from a parsed Board (sicbo.board): direct GPIOs, and the
# dealer's keys through a 74HC165 chain on the lamps' SPI bus when the board
# file has `keys`. Start-up code (appboot, diag): drop it after use.
#
#   spi_for(board)                        the lamps' SPI bus (None for WS2812)
#   make_switches(board, ticks_ms, spi)   hw.switches.Switches, signal order
#   confirm_held(board, spi)              key_confirm pressed now (recovery)
#   where(board, i)                       "GPIO13" or "hc165 bit 3" (diag)
#
# Order on the ESP32: make the SPI before the Pins near it (a Pin made later
# takes its GPIO back); make_switches makes /PL after the bus.

from machine import Pin

from hw.switches import Switches
from sicbo.signals import KEY_CONFIRM

_PULLS = {"up": Pin.PULL_UP, "down": Pin.PULL_DOWN, "none": None}


def spi_for(board):
    """The lamps' 74HC595 bus (with MISO when the keys' chain is on it), in
    mode 0, MSB first; None for a WS2812 strip."""
    lb = board.lamps
    if lb["bus"] != "hc595":
        return None
    from machine import SPI

    if lb["miso"] is None:
        return SPI(lb["spi"], baudrate=lb["baudrate"], polarity=0, phase=0,
                   sck=Pin(lb["sck"]), mosi=Pin(lb["mosi"]))
    return SPI(lb["spi"], baudrate=lb["baudrate"], polarity=0, phase=0,
               sck=Pin(lb["sck"]), mosi=Pin(lb["mosi"]), miso=Pin(lb["miso"]))


def chain_for(board, spi=None):
    """The KeyChain of the board's keys, or None when they are direct."""
    k = board.keys
    if k is None:
        return None
    if spi is None:
        spi = spi_for(board)
    from hw.keychain import KeyChain  # loaded only for a board that has the chain

    return KeyChain(spi, Pin(k["load"], Pin.OUT, value=1), k["nbits"], k["high"], k["low"])


def _pins(board, chain):
    bits = board.keys["bits"] if chain is not None else None
    pins = []
    for signal, p, pull, _inv in board.inputs:
        if p is None:
            pins.append(chain.bit(bits[signal]))  # type: ignore[union-attr,index]
        else:
            # pull=None is the port's "no pull resistor"; the stubs only allow ints.
            pins.append(Pin(p, Pin.IN, _PULLS[pull]))  # type: ignore[arg-type]
    return pins


def make_switches(board, ticks_ms=None, spi=None):
    """Switches for every input in signal order (sicbo.signals), with the
    board's timings. `spi`: the lamps' bus when already made (spi_for)."""
    t = board.timings
    chain = chain_for(board, spi)
    return Switches(_pins(board, chain), t["debounce_ms"], t["chatter_limit"],
                    t["chatter_window_ms"], invert=[e[3] for e in board.inputs],
                    ticks_ms=ticks_ms, chain=chain)


def confirm_held(board, spi=None):
    """The dealer's confirm key pressed now (held at power-on: recovery mode),
    direct or on the chain; a chain that reads broken holds nothing."""
    _s, p, pull, inv = board.inputs[KEY_CONFIRM]
    if p is None:
        chain = chain_for(board, spi)
        if not chain.sample():  # type: ignore[union-attr]
            return False
        pin = chain.bit(board.keys["bits"][_s])  # type: ignore[union-attr]
    else:
        pin = Pin(p, Pin.IN, _PULLS[pull])  # type: ignore[arg-type]
    return (pin.value() ^ (1 if inv else 0)) == 1


def where(board, i):
    """Where input i is wired, for diag: "GPIO13" or "hc165 bit 3"."""
    signal, p, _pull, _inv = board.inputs[i]
    if p is None:
        return "hc165 bit %d" % board.keys["bits"][signal]
    return "GPIO%d" % p
