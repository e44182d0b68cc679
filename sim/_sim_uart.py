# Part of the simulated `machine` (sim/machine.py): UART, loaded on first use
# of machine.UART or a sim_uart_* function.
import machine as _m
from machine import _bytes_arg, _int_arg, _pin_arg, _pump, _wframe

_uart_rx = {}     # id -> bytearray
_uart_rxmax = {}
_uart_tx = {}
_uart_rxpin = {}  # id -> rx pin
_uart_txpin = {}


def _reset():
    for d in (_uart_rx, _uart_rxmax, _uart_tx, _uart_rxpin, _uart_txpin):
        d.clear()


class UART:
    def __init__(self, id, baudrate=115200, bits=8, parity=None, stop=1, tx=None,
                 rx=None, timeout=0, timeout_char=0, rxbuf=256, txbuf=256):
        if not isinstance(id, int):
            raise TypeError("UART id must be an int, got %r" % (id,))
        if id == 0:
            raise ValueError("UART(0) is the REPL's; use UART(1) or UART(2)")
        if id not in (1, 2):
            raise ValueError("UART(%d) doesn't exist: the ESP32 has UART(0..2)" % id)
        self._id = id
        self._on = False
        self.init(baudrate, bits, parity, stop, tx, rx, timeout, timeout_char, rxbuf, txbuf)

    def init(self, baudrate=115200, bits=8, parity=None, stop=1, tx=None, rx=None,
             timeout=0, timeout_char=0, rxbuf=256, txbuf=256):
        _int_arg(baudrate, "UART baudrate", 300, 5000000)
        _int_arg(bits, "UART bits", 5, 8)
        if parity not in (None, 0, 1):
            raise ValueError("UART parity must be None, 0 (even) or 1 (odd), got %r"
                             % (parity,))
        _int_arg(stop, "UART stop", 1, 2)
        _int_arg(timeout, "UART timeout", 0, 0x7FFFFFFF)
        _int_arg(rxbuf, "UART rxbuf", 1, 65536)
        if tx is None or rx is None:
            if self._id == 1:
                raise ValueError("UART(1) default pins are GPIO9/10 (the SPI flash): "
                                 "pass tx= and rx= Pins")
        t = 17 if tx is None else _pin_arg(tx, "UART tx", True)
        r = 16 if rx is None else _pin_arg(rx, "UART rx", False)
        if t == r:
            raise ValueError("UART(%d): tx and rx must be different pins" % self._id)
        self.baudrate = baudrate
        self._timeout = timeout
        _uart_txpin[self._id] = t
        _uart_rxpin[self._id] = r
        _uart_rxmax[self._id] = rxbuf
        _uart_rx[self._id] = bytearray()
        _uart_tx.setdefault(self._id, bytearray())
        self._on = True

    def deinit(self):
        self._on = False
        _uart_rxpin.pop(self._id, None)

    def _check(self):
        if not self._on:
            raise OSError("UART(%d) is deinitialised" % self._id)

    def any(self):
        self._check()
        _pump()
        return len(_uart_rx[self._id])

    def _wait(self, n, line):
        # Real clock only: wait up to `timeout` ms for n bytes (or a line), as
        # the board's driver does; the manual clock never waits.
        _pump()
        if not _m._real or not self._timeout:
            return
        t0 = _m.sim_ticks_ms()
        while _m.sim_ticks_diff(_m.sim_ticks_ms(), t0) < self._timeout:
            b = _uart_rx[self._id]
            if len(b) >= n or (line and b.find(b"\n") >= 0):
                return
            _m.idle()

    def _take(self, n):
        b = _uart_rx[self._id]
        out = bytes(b[:n])
        _uart_rx[self._id] = b[n:]
        return out

    def read(self, nbytes=-1):
        self._check()
        self._wait(1 if nbytes is None or nbytes < 0 else nbytes, False)
        b = _uart_rx[self._id]
        if not b:
            return None
        if nbytes is None or nbytes < 0:
            nbytes = len(b)
        return self._take(nbytes)

    def readline(self):
        self._check()
        self._wait(_uart_rxmax[self._id], True)
        b = _uart_rx[self._id]
        if not b:
            return None
        i = b.find(b"\n")
        return self._take(len(b) if i < 0 else i + 1)

    def readinto(self, buf, nbytes=-1):
        self._check()
        self._wait(len(buf) if nbytes is None or nbytes < 0 else nbytes, False)
        b = _uart_rx[self._id]
        if not b:
            return None
        n = len(buf) if nbytes is None or nbytes < 0 else min(nbytes, len(buf))
        n = min(n, len(b))
        buf[:n] = b[:n]
        _uart_rx[self._id] = b[n:]
        return n

    def write(self, buf):
        self._check()
        data = _bytes_arg(buf, "UART.write")
        tx = _uart_tx[self._id]
        tx.extend(data)
        if len(tx) > 65536:
            _uart_tx[self._id] = tx[-65536:]
        if _m._wire is not None:
            _wframe(b"U", bytes((_uart_txpin[self._id],)) + data)
        _pump()
        return len(data)

    def flush(self):
        self._check()

    def txdone(self):
        return True

    def sendbreak(self):
        self._check()


def _uart_feed(uid, data):
    b = _uart_rx.get(uid)
    if b is None or uid not in _uart_rxpin:
        return 0
    room = _uart_rxmax[uid] - len(b)
    if room < len(data):
        data = data[:max(room, 0)]
    b.extend(data)
    return len(data)


def sim_uart_inject(uart_id, data):
    n = _uart_feed(uart_id, _bytes_arg(data, "sim_uart_inject"))
    _pump()
    return n


def sim_uart_tx(uart_id, clear=False):
    b = _uart_tx.get(uart_id)
    if b is None:
        return b""
    out = bytes(b)
    if clear:
        _uart_tx[uart_id] = bytearray()
    return out
