# Simulated `neopixel` (WS2812) for the tests and the virtual board: the same
# API as MicroPython's neopixel module; write() sends the buffer through
# machine.bitstream, which the simulated machine records (sim_neopixel(pin))
# and forwards to the simulated table.
import machine

_TIMING_800K = (400, 850, 800, 450)
_TIMING_400K = (800, 1700, 1600, 900)


class NeoPixel:
    ORDER = (1, 0, 2, 3)  # the strip wants G, R, B(, W)

    def __init__(self, pin, n, bpp=3, timing=1):
        if not isinstance(n, int) or n < 1:
            raise ValueError("NeoPixel n must be an int >= 1, got %r" % (n,))
        if bpp not in (3, 4):
            raise ValueError("NeoPixel bpp must be 3 or 4, got %r" % (bpp,))
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        pin.init(pin.OUT)
        if timing == 1:
            self.timing = _TIMING_800K
        elif timing == 0:
            self.timing = _TIMING_400K
        else:
            self.timing = timing

    def __len__(self):
        return self.n

    def __setitem__(self, i, v):
        off = i * self.bpp
        for k in range(self.bpp):
            self.buf[off + self.ORDER[k]] = v[k]

    def __getitem__(self, i):
        off = i * self.bpp
        return tuple(self.buf[off + self.ORDER[k]] for k in range(self.bpp))

    def fill(self, v):
        for i in range(self.n):
            self[i] = v

    def write(self):
        machine.bitstream(self.pin, 0, self.timing, self.buf)
