# The dealer's keys through a 74HC165 chain (parallel in, serial out) on the
# lamps' SPI bus: SCK clocks both chains, the 74HC595s take MOSI, the 74HC165s
# drive MISO from the QH of the chip nearest the ESP32 (chip 0); /PL is the
# chain's own load pin (docs/board-files.md, "keys").
#
# sample(): /PL low (the chips take their inputs), /PL high, then one SPI read
# of the whole chain, into a preallocated buffer: no allocation. The bus must
# be mode 0 (polarity 0, phase 0), MSB first: QH leaves first and is sampled
# on the rising edge that shifts the next bit out. Bit n of the chain is input
# n % 8 (A = 0 .. H = 7) of chip n // 8, i.e. bit n % 8 of byte n // 8 read.
#
# A chain that is cut, unpowered, unloaded or read in the wrong mode or bit
# order reads constant or shifted bits. The board ties sentinel inputs to
# fixed levels (`high`, `low`: at least one each, best on the far chip); when
# one reads wrong, sample() returns False and the read counts in `breaks`:
# the caller (hw.switches.Switches) makes that a fault, never key presses.
# Levels here are the pads' (a key to GND with a pull-up reads 0 pressed).


class _Bit:
    """One chain input, read like a Pin (value()) from the last sample."""

    def __init__(self, chain, n):
        self.chain = chain
        self._buf = chain.buf
        self._i = n >> 3
        self._s = n & 7

    def value(self):
        return (self._buf[self._i] >> self._s) & 1


class KeyChain:
    """KeyChain(spi, load, nbits, high, low): `spi` an SPI bus set up in mode
    0, MSB first, whose MISO the chain drives; `load` an output Pin on /PL;
    `nbits` 8 per chip; `high`, `low`: the sentinel bits (iterables)."""

    def __init__(self, spi, load, nbits, high, low):
        if nbits < 8 or nbits > 64 or nbits & 7:
            raise ValueError("a 74HC165 chain has 8 bits per chip, 1..8 chips")
        n = nbits >> 3
        self._spi = spi
        self._load = load
        self.nbits = nbits
        self.buf = bytearray(n)
        self._mask = bytearray(n)
        self._want = bytearray(n)
        for lv, bits in ((1, high), (0, low)):
            count = 0
            for b in bits:
                if not 0 <= b < nbits or self._mask[b >> 3] >> (b & 7) & 1:
                    raise ValueError("sentinel bit %r: not a free bit of the chain" % (b,))
                self._mask[b >> 3] |= 1 << (b & 7)
                self._want[b >> 3] |= lv << (b & 7)
                count += 1
            if not count:
                raise ValueError("the chain needs a high and a low sentinel bit")
        self.breaks = 0  # samples refused (a sentinel read wrong)
        self.good = False  # the last sample's verdict
        load.value(1)

    def bit(self, n):
        """A Pin-like view of chain bit n, for Switches."""
        if not 0 <= n < self.nbits or self._mask[n >> 3] >> (n & 7) & 1:
            raise ValueError("bit %r: not an input bit of the chain" % (n,))
        return _Bit(self, n)

    def owns(self, pin):
        return isinstance(pin, _Bit) and pin.chain is self

    def sample(self):
        """Loads and reads the chain; False (and counted) when a sentinel is wrong."""
        ld = self._load
        ld.value(0)
        ld.value(1)
        buf = self.buf
        self._spi.readinto(buf, 0)
        m = self._mask
        w = self._want
        for i in range(len(buf)):
            if buf[i] & m[i] != w[i]:
                self.breaks += 1
                self.good = False
                return False
        self.good = True
        return True
