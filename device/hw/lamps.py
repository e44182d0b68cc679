# The lamp board. A frame is the settlement table's row (docs/design.md):
# channel c is bit c%8 of byte row_bytes-1-c//8, MSB first on the wire, so a
# 74HC595 chain takes the frame exactly as it is. The board file chooses the
# bus; both adapters show an all-off frame when they are made.
#
# ShiftLamps: the chain on an SPI bus (sck -> SRCLK, mosi -> SER) with a latch
# pin (RCLK): write() shifts the frame out unchanged, then pulses the latch,
# whose rising edge moves it to the outputs at once (no flicker while
# shifting). An optional output-enable pin (/OE, active low, held high by a
# pull-up on the board) is pulled low only once an all-off frame is latched,
# so the lamps never show the registers' random power-on contents.
#
# PixelLamps: a WS2812 strip through `neopixel`: channel c -> pixel c, lit in
# one configurable colour; the strip is written whole. It reads the bits as
# sicbo.settle.channel_on does (same layout; not imported, so the adapter does
# not pull the rules engine into a heap that does not need it: diagnostics,
# the virtual board's lamp test).


class ShiftLamps:
    """ShiftLamps(spi, latch, row_bytes, oe=None). `spi` is set up by the
    caller (MSB first, mode 0); `latch` and `oe` are output Pins."""

    def __init__(self, spi, latch, row_bytes, oe=None):
        if row_bytes <= 0:
            raise ValueError("row_bytes must be > 0")
        self._spi = spi
        self._latch = latch
        self.row_bytes = row_bytes
        self._blank = bytearray(row_bytes)
        self.frames = 0
        latch.value(0)
        self.write(self._blank)
        if oe is not None:
            oe.value(0)

    def write(self, frame):
        if len(frame) != self.row_bytes:
            raise ValueError("lamp frame has %d bytes, the chain %d" % (len(frame), self.row_bytes))
        self._spi.write(frame)
        self._latch.value(1)
        self._latch.value(0)
        self.frames += 1

    def clear(self):
        self.write(self._blank)


class PixelLamps:
    """PixelLamps(strip, row_bytes, colour=(255, 255, 255)). `strip` is a
    neopixel.NeoPixel; channels beyond the strip's length are not shown."""

    def __init__(self, strip, row_bytes, colour=(255, 255, 255)):
        if row_bytes <= 0:
            raise ValueError("row_bytes must be > 0")
        bpp = getattr(strip, "bpp", 3)
        if len(colour) != bpp:
            raise ValueError("colour needs %d values for this strip" % bpp)
        self._strip = strip
        self.row_bytes = row_bytes
        n = len(strip)
        self._channels = n if n < row_bytes * 8 else row_bytes * 8
        self._lit = tuple(colour)
        self._dark = (0, 0, 0, 0) if bpp == 4 else (0, 0, 0)
        self._blank = bytearray(row_bytes)
        self.frames = 0
        strip.fill(self._dark)
        self.write(self._blank)

    def write(self, frame):
        if len(frame) != self.row_bytes:
            raise ValueError("lamp frame has %d bytes, expected %d" % (len(frame), self.row_bytes))
        strip = self._strip
        lit = self._lit
        dark = self._dark
        last = self.row_bytes - 1
        for c in range(self._channels):
            strip[c] = lit if (frame[last - (c >> 3)] >> (c & 7)) & 1 else dark
        strip.write()
        self.frames += 1

    def clear(self):
        self.write(self._blank)
