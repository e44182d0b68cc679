# The lamp board (hw.lamps) through the simulated machine: a 74HC595 chain on
# SPI gets the settlement row as is, then the latch; a WS2812 strip shows
# channel c on pixel c; both start all off.
import machine
import neopixel
from machine import SPI, Pin

from hw.lamps import PixelLamps, ShiftLamps

SCK = 18
MOSI = 23
LATCH = 19
OE = 4
STRIP = 13


def set_channel(frame, c):
    # the frame layout of docs/design.md (sicbo.settle.set_channel)
    frame[len(frame) - 1 - c // 8] |= 1 << (c % 8)


def chain(nbytes, oe=False):
    machine.sim_reset()
    spi = SPI(2, baudrate=1000000, sck=Pin(SCK), mosi=Pin(MOSI))
    machine.sim_attach_595(2, LATCH, nbytes)
    oe_pin = Pin(OE, Pin.OUT, value=1) if oe else None
    return ShiftLamps(spi, Pin(LATCH, Pin.OUT, value=0), nbytes, oe=oe_pin)


def test_chain_all_off_on_init():
    chain(4)
    assert machine.sim_spi_writes(2) == [bytes(4)]
    assert machine.sim_frames(LATCH) == [bytes(4)]


def test_frame_shifted_as_is_then_latched():
    buf = bytearray(b"\x00\x81\x42\x00\xff\x10\x00\x01")
    frame = memoryview(buf)[2:6]  # a view, as the settlement table hands out
    lamps = chain(4)
    machine.sim_clear_edges()
    lamps.write(frame)
    assert machine.sim_spi_writes(2)[-1] == b"\x42\x00\xff\x10"
    assert machine.sim_frame(LATCH) == b"\x42\x00\xff\x10"
    # one latch pulse, after the shift: rising then falling edge
    assert [v for _t, _p, v in machine.sim_edges(LATCH)] == [1, 0]


def test_settlement_row_shifted_as_is_then_latched():
    try:
        from sicbo.settle import channel_on
        from tables import table
        t = table()
    except MemoryError:
        # The unix port's 110k heap cannot hold the simulated machine and the
        # whole rules engine at once; the CPython run covers this test.
        return
    frame = t.settle(1, 2, 3)  # a memoryview into the table's own buffer
    lamps = chain(t.row_bytes)
    machine.sim_clear_edges()
    lamps.write(frame)
    assert machine.sim_spi_writes(2)[-1] == bytes(frame)
    assert machine.sim_frame(LATCH) == bytes(frame)
    # one latch pulse, after the shift: rising then falling edge
    assert [v for _t, _p, v in machine.sim_edges(LATCH)] == [1, 0]
    # and the frame is what the settlement table says, bit for bit
    small = t.cfg.lamp_order.index("SMALL")
    big = t.cfg.lamp_order.index("BIG")
    assert channel_on(machine.sim_frame(LATCH), small) == 1
    assert channel_on(machine.sim_frame(LATCH), big) == 0


def test_each_write_latches_one_frame():
    lamps = chain(2)
    f = bytearray(2)
    for c in (0, 7, 8, 15):
        set_channel(f, c)
        lamps.write(f)
    assert machine.sim_frames(LATCH) == [b"\x00\x00", b"\x00\x01", b"\x00\x81",
                                         b"\x01\x81", b"\x81\x81"]
    lamps.clear()
    assert machine.sim_frame(LATCH) == b"\x00\x00" and lamps.frames == 6


def test_output_enable_only_after_a_blank_frame_is_latched():
    chain(3, oe=True)
    assert machine.sim_output(OE) == 0
    edges = [(p, v) for _t, p, v in machine.sim_edges() if p in (LATCH, OE)]
    first_latch = edges.index((LATCH, 1))
    assert edges.index((OE, 0)) > first_latch
    assert machine.sim_frames(LATCH) == [bytes(3)]


def test_wrong_frame_length_refused():
    lamps = chain(2)
    try:
        lamps.write(bytearray(3))
    except ValueError:
        pass
    else:
        raise AssertionError("accepted a frame of the wrong length")
    assert machine.sim_frames(LATCH) == [bytes(2)]


def strip(n, bpp=3, **kw):
    machine.sim_reset()
    np = neopixel.NeoPixel(Pin(STRIP, Pin.OUT), n, bpp=bpp)
    return np, PixelLamps(np, 2, **kw)


def test_strip_all_off_on_init():
    strip(12)
    assert machine.sim_neopixel(STRIP) == bytes(36)


def test_strip_channel_c_is_pixel_c_in_the_lit_colour():
    np, lamps = strip(16, colour=(10, 20, 30))
    f = bytearray(2)
    set_channel(f, 0)
    set_channel(f, 9)
    lamps.write(f)
    data = machine.sim_neopixel(STRIP)
    for c in range(16):
        px = data[c * 3:c * 3 + 3]
        want = b"\x14\x0a\x1e" if c in (0, 9) else b"\x00\x00\x00"  # G, R, B on the wire
        assert px == want, (c, px)
    lamps.clear()
    assert machine.sim_neopixel(STRIP) == bytes(48)


def test_strip_shorter_than_the_row_shows_what_it_has():
    np, lamps = strip(5)
    f = bytearray(b"\xff\xff")
    lamps.write(f)
    assert machine.sim_neopixel(STRIP) == b"\xff" * 15


def test_rgbw_colour_needs_an_rgbw_strip():
    np, lamps = strip(4, bpp=4, colour=(0, 0, 0, 255))
    f = bytearray(2)
    set_channel(f, 3)
    lamps.write(f)
    assert machine.sim_neopixel(STRIP)[12:16] == b"\x00\x00\x00\xff"
    try:
        strip(4, colour=(0, 0, 0, 255))
    except ValueError:
        pass
    else:
        raise AssertionError("RGBW colour accepted on an RGB strip")


def test_strip_refuses_a_frame_of_the_wrong_length():
    np, lamps = strip(16)
    for n in (1, 3):
        try:
            lamps.write(bytearray(b"\xff" * n))
        except ValueError:
            pass
        else:
            raise AssertionError("a strip accepted a frame of %d bytes for 2" % n)
    assert machine.sim_neopixel(STRIP) == bytes(48)  # nothing shown


class _PlainStrip:
    """A strip driver without neopixel's `bpp`: three values a pixel."""

    def __init__(self, n):
        self.px = [None] * n
        self.writes = 0

    def __len__(self):
        return len(self.px)

    def __setitem__(self, i, v):
        self.px[i] = v

    def fill(self, v):
        for i in range(len(self.px)):
            self.px[i] = v

    def write(self):
        self.writes += 1


def test_a_strip_that_does_not_say_its_bytes_per_pixel_takes_three():
    s = _PlainStrip(10)
    lamps = PixelLamps(s, 2, colour=(1, 2, 3))
    assert s.px == [(0, 0, 0)] * 10 and s.writes == 1
    f = bytearray(2)
    set_channel(f, 4)
    lamps.write(f)
    assert s.px[4] == (1, 2, 3) and s.px[3] == (0, 0, 0), s.px
    try:
        PixelLamps(_PlainStrip(10), 2, colour=(0, 0, 0, 255))
    except ValueError as e:
        assert "3 values" in str(e), e
    else:
        raise AssertionError("four values taken for a three-byte strip")


def test_a_strip_shows_every_channel_of_the_row_up_to_its_length():
    # Two bytes of row: 16 channels. A strip one pixel short shows 15, a
    # strip of 16 or longer shows all 16 (its last pixels, past the row, dark).
    for n in (15, 16, 20):
        np, lamps = strip(n)
        lamps.write(bytearray(b"\xff\xff"))
        shown = min(n, 16)
        assert machine.sim_neopixel(STRIP) == b"\xff" * (3 * shown) + bytes(3 * (n - shown)), n
