# Part of the simulated `machine` (sim/machine.py): SPI (with 74HC595 chains
# latched by a pin), PWM and bitstream, loaded on first use of any of them.
# The 74HC595s (and the wire's S frames) get the bits as a 595 samples them:
# mode 1 (polarity 0, phase 1) delays every bit by one, LSB first reverses
# each byte; sim_spi_writes keeps what the program wrote.
# Every transfer also clocks the 74HC165 chains on the bus's SCK
# (sim/_sim_hc165.py), and a chain on the bus's MISO is what reads return;
# without one, reads return the bytes of sim_spi_feed (then zeros).
import machine as _m
from machine import (
    _bytes_arg,
    _err_pin,
    _int_arg,
    _latch,
    _pin_arg,
    _pump,
    _pwm_duty,
    _pwm_freq,
    _pwm_on,
    _update,
    _wframe,
)

# SPI writes and latched frames kept for the tests: the last few only, so that
# a long soak's heap stays flat (a longer list fragments a small heap).
LOG_KEEP = 8  # writes and frames kept for sim_spi_writes/sim_frames: few, as
# every one kept is a long-lived object in the board's heap, which a real
# machine module does not allocate

_spi_log = {}
_spi_miso = {}
_spi_shift = {}
_spi_pins = {}
_frames = {}      # latch pin -> [bytes]
_neo = {}

_SPI_DEFAULT = {1: (14, 13, 12), 2: (18, 23, 19)}


def _reset():
    for d in (_spi_log, _spi_miso, _spi_shift, _spi_pins, _frames, _neo):
        d.clear()


class SPI:
    MSB = 0
    LSB = 1

    def __init__(self, id, baudrate=500000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        if not isinstance(id, int):
            raise TypeError("SPI id must be an int, got %r" % (id,))
        if id not in (1, 2):
            raise ValueError("SPI(%d) doesn't exist: the ESP32 has SPI(1) and SPI(2)" % id)
        self._id = id
        self._on = False
        self.init(baudrate, polarity, phase, bits, firstbit, sck, mosi, miso)

    def init(self, baudrate=500000, polarity=0, phase=0, bits=8, firstbit=0,
             sck=None, mosi=None, miso=None):
        _int_arg(baudrate, "SPI baudrate", 1, 80000000)
        _int_arg(polarity, "SPI polarity", 0, 1)
        _int_arg(phase, "SPI phase", 0, 1)
        if bits != 8:
            raise ValueError("SPI bits=%r: the simulator supports 8 only" % (bits,))
        _int_arg(firstbit, "SPI firstbit", 0, 1)
        d = _SPI_DEFAULT[self._id]
        s = d[0] if sck is None else _pin_arg(sck, "SPI sck", True)
        o = d[1] if mosi is None else _pin_arg(mosi, "SPI mosi", True)
        i = d[2] if miso is None else _pin_arg(miso, "SPI miso", False)
        if s == o or (s == i or o == i):
            raise ValueError("SPI(%d): sck, mosi and miso must be different pins" % self._id)
        self.baudrate = baudrate
        self._mode = (polarity, phase, firstbit)
        _spi_pins[self._id] = (s, o, i)
        if polarity and _m._hc165:
            # SCK now idles high: one rising edge for the 74HC165s on it.
            __import__("_sim_hc165")._clock(s)
        _spi_log.setdefault(self._id, [])
        _spi_shift.setdefault(self._id, bytearray(64))
        self._on = True

    def deinit(self):
        self._on = False

    def _check(self):
        if not self._on:
            raise OSError("SPI(%d) is deinitialised" % self._id)

    def _as_595(self, data):
        # What a 74HC595 (sampling on the rising edge) receives. In mode 1
        # the master changes MOSI on that very edge: the 595 takes the bit
        # before (MOSI idles low first). LSB first reverses each byte.
        # Modes 0, 2 and 3 change MOSI away from the rising edge.
        pol, pha, lsb = self._mode
        late = pha and not pol
        if not late and not lsb:
            return data
        out = bytearray(data)
        carry = 0
        for k in range(len(out)):
            b = out[k]
            if lsb:
                r = 0
                for j in range(8):
                    r |= ((b >> j) & 1) << (7 - j)
                b = r
            if late:
                b, carry = (carry << 7) | (b >> 1), b & 1
            out[k] = b
        return bytes(out)

    def _shift(self, data):
        log = _spi_log[self._id]
        log.append(data)
        if len(log) > LOG_KEEP:
            log.pop(0)
        data = self._as_595(data)
        # The last 64 bits shifted, in place: a register, not a new object.
        sh = _spi_shift[self._id]
        n = len(data)
        if n >= 64:
            sh[:] = data[n - 64:]
        else:
            mv = memoryview(sh)
            mv[0:64 - n] = mv[n:64]
            mv[64 - n:64] = data
        if _m._wire is not None:
            pins = _spi_pins[self._id]
            _wframe(b"S", bytes((pins[1], pins[0])) + data)

    def _xfer(self, data):
        # Shift data out; returns what MISO gave meanwhile.
        self._shift(data)
        n = len(data)
        r = None
        if _m._hc165:
            pins = _spi_pins[self._id]
            r = __import__("_sim_hc165")._transfer(pins[0], pins[2], n, self._mode)
        if r is not None:
            return r
        q = _spi_miso.get(self._id)
        out = bytearray(n)
        for k in range(n):
            if q:
                out[k] = q.pop(0)
        return out

    def write(self, buf):
        self._check()
        self._xfer(_bytes_arg(buf, "SPI.write"))
        _pump()

    def write_readinto(self, wbuf, rbuf):
        self._check()
        data = _bytes_arg(wbuf, "SPI.write_readinto")
        if len(data) != len(rbuf):
            raise ValueError("SPI.write_readinto: buffers must have the same length")
        rbuf[:] = self._xfer(data)
        _pump()

    def read(self, n, write=0):
        self._check()
        r = bytes(self._xfer(bytes([write & 255]) * n))
        _pump()
        return r

    def readinto(self, buf, write=0):
        self._check()
        buf[:] = self._xfer(bytes([write & 255]) * len(buf))
        _pump()


def _do_latch(p):
    sid, n = _latch[p]
    sh = _spi_shift.get(sid)
    frame = bytes(n) if sh is None else bytes(sh)[-n:]
    fr = _frames[p]
    fr.append(frame)
    if len(fr) > LOG_KEEP:
        fr.pop(0)


class PWM:
    def __init__(self, dest, freq=-1, duty_u16=-1, duty_ns=-1, duty=-1, invert=False):
        self._p = _pin_arg(dest, "PWM pin", True)
        self._on = False
        self.init(freq=freq, duty_u16=duty_u16, duty_ns=duty_ns, duty=duty)

    def init(self, freq=-1, duty_u16=-1, duty_ns=-1, duty=-1):
        p = self._p
        if freq != -1:
            _int_arg(freq, "PWM freq", 1, 40000000)
        elif not _pwm_on[p] or not _pwm_freq[p]:
            freq = 5000
        if duty_u16 != -1:
            _int_arg(duty_u16, "PWM duty_u16", 0, 65535)
        elif duty != -1:
            _int_arg(duty, "PWM duty", 0, 1023)
            duty_u16 = duty * 65535 // 1023
        elif duty_ns != -1:
            raise ValueError("PWM duty_ns is not supported by the simulator: use duty_u16")
        elif not _pwm_on[p]:
            duty_u16 = 32768
        if freq != -1:
            _pwm_freq[p] = freq
        if duty_u16 != -1:
            _pwm_duty[p] = duty_u16
        _pwm_on[p] = 1
        self._on = True
        _update(p)
        self._send()

    def _send(self):
        if _m._wire is not None:
            p = self._p
            f = _pwm_freq[p] if _pwm_on[p] else 0
            d = _pwm_duty[p] if _pwm_on[p] else 0
            _wframe(b"M", bytes((p, (f >> 24) & 255, (f >> 16) & 255, (f >> 8) & 255,
                                 f & 255, d >> 8, d & 255)))

    def _check(self):
        if not self._on or not _pwm_on[self._p]:
            raise OSError("PWM on Pin(%d) is deinitialised" % self._p)

    def freq(self, value=None):
        self._check()
        if value is None:
            return _pwm_freq[self._p]
        _int_arg(value, "PWM freq", 1, 40000000)
        _pwm_freq[self._p] = value
        self._send()
        _pump()

    def duty_u16(self, value=None):
        self._check()
        if value is None:
            return _pwm_duty[self._p]
        _int_arg(value, "PWM duty_u16", 0, 65535)
        _pwm_duty[self._p] = value
        _update(self._p)
        self._send()
        _pump()

    def deinit(self):
        if self._on and _pwm_on[self._p]:
            _pwm_on[self._p] = 0
            _update(self._p)
            self._send()
        self._on = False
        _pump()


def bitstream(pin, encoding, timing, buf):
    p = _pin_arg(pin, "bitstream pin", True)
    if encoding != 0:
        raise ValueError("bitstream encoding must be 0")
    if not isinstance(timing, (tuple, list)) or len(timing) != 4:
        raise TypeError("bitstream timing must be a 4-tuple of ns")
    data = _bytes_arg(buf, "bitstream")
    _neo[p] = data
    if _m._wire is not None:
        _wframe(b"N", bytes((p,)) + data)
    _pump()


def sim_spi_writes(spi_id):
    return list(_spi_log.get(spi_id, ()))


def sim_spi_feed(spi_id, data):
    _spi_miso.setdefault(spi_id, []).extend(_bytes_arg(data, "sim_spi_feed"))


def sim_attach_595(spi_id, latch_pin, nbytes):
    _err_pin(latch_pin, "sim_attach_595")
    if spi_id not in (1, 2):
        raise ValueError("sim_attach_595: spi_id must be 1 or 2")
    _int_arg(nbytes, "sim_attach_595 nbytes", 1, 64)
    _latch[latch_pin] = (spi_id, nbytes)
    _frames[latch_pin] = []


def sim_frames(latch_pin):
    return list(_frames.get(latch_pin, ()))


def sim_frame(latch_pin):
    fr = _frames.get(latch_pin)
    return fr[-1] if fr else None


def sim_neopixel(pin):
    return _neo.get(pin)
