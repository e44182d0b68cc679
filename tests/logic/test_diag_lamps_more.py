# mprun-heap: controller
# An RGBW lamp strip (hw.lamps.PixelLamps with bpp 4) shows every unlit
# channel dark, white LED included, from the first frame on; and
# diag.status() lets go of the files' reader (tablefiles, sicbo.cache) once
# it has said whether the table runs, before it reads the journal.
import sys

import machine
import neopixel
from diagkit import _out, _table
from machine import Pin

import diag
from hw.lamps import PixelLamps

STRIP = 13


def _rgbw(n):
    machine.sim_reset()
    np = neopixel.NeoPixel(Pin(STRIP, Pin.OUT), n, bpp=4)
    return PixelLamps(np, 2, colour=(1, 2, 3, 4))


def test_an_rgbw_strip_is_all_dark_on_init():
    _rgbw(12)
    assert machine.sim_neopixel(STRIP) == bytes(48)


def test_an_rgbw_strip_shows_unlit_channels_dark_white_included():
    lamps = _rgbw(16)
    f = bytearray(2)
    f[1] = 0x05  # channels 0 and 2
    lamps.write(f)
    data = machine.sim_neopixel(STRIP)
    lit = bytes(data[0:4])
    assert lit != bytes(4) and bytes(data[8:12]) == lit
    for c in range(16):
        if c not in (0, 2):
            assert bytes(data[c * 4:c * 4 + 4]) == bytes(4), (c, bytes(data[c * 4:c * 4 + 4]))
    lamps.clear()
    assert machine.sim_neopixel(STRIP) == bytes(64)


_READER = ("tablefiles", "sicbo.cache")


def test_status_lets_go_of_the_files_reader_once_it_says_whether_the_table_runs():
    # MicroPython's memory.forget drops a module from sys.modules (its code
    # is garbage then); CPython's keeps them, so here it does what the port
    # does for these two modules, and puts them back after the command.
    import memory

    _table()
    kept = {}
    real_forget = memory.forget

    def forget(names):
        for name in names:
            if name in _READER:
                m = sys.modules.pop(name, None)
                if m is not None and name not in kept:
                    kept[name] = m

    loaded_when_said = []
    real_print = diag.print

    def said(*args):
        text = " ".join([str(a) for a in args])
        if text.startswith("running "):
            loaded_when_said.append([n for n in _READER if n in sys.modules])
        real_print(*args)

    emulate = sys.implementation.name != "micropython"
    if emulate:
        memory.forget = forget
    diag.print = said
    try:
        del _out[:]
        diag.status()
    finally:
        diag.print = real_print
        if emulate:
            memory.forget = real_forget
            for name in kept:
                sys.modules[name] = kept[name]
            if "sicbo.cache" in kept:
                import sicbo

                sicbo.cache = kept["sicbo.cache"]
    running = [line for line in _out if line.startswith("running ")]
    assert running == ["running   yes: the app resumes round 1 at machine.reset()"], _out
    assert loaded_when_said == [[]], loaded_when_said
