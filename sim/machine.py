# Simulated `machine` module of an ESP32 (classic), for the tests and the
# virtual board. MicroPython code that also runs on CPython. On the unix port a
# `machine.py` on sys.path overrides the built-in `machine`.
#
# Strict like the ESP32 port: GPIOs are 0-19, 21-23, 25-27 and 32-39; 6-11 are
# the SPI flash and refused; 34-39 are input-only (no output, no pulls); buses
# take Pin objects ("expecting a Pin"), bad modes and arguments raise
# ValueError/TypeError naming the argument.
#
# Device API: Pin, SPI, UART, Timer, WDT, PWM, RTC, bitstream (for neopixel),
# reset, soft_reset, reset_cause, unique_id, freq, idle, disable_irq,
# enable_irq, and the reset-cause constants.
#
# Clock. Tests use the MANUAL clock (the default without a wire): it only moves
# with sim_advance(ms), which fires due Timers and the WDT in time order,
# deterministically, and wraps at 2**30 like the ESP32. With SICBO_SIM_WIRE set
# (the virtual board) the REAL clock is used (time.ticks_ms) and due timers,
# the WDT and the wire's input changes are handled whenever the sim is
# "pumped": any Pin read or write, UART/SPI call, idle(), sim_pump().
# Device code never reads the sim clock: adapters take a `ticks_ms` callable,
# tests pass machine.sim_ticks_ms. NOTE: on the unix port time.ticks_diff
# wraps at 2**62, not 2**30; sim_ticks_diff/sim_ticks_add wrap like the clock.
#
# IRQs are soft, as on the ESP32: a pin edge or a timer expiry queues its
# handler (queue of 32, overflow counted in sim_lost_irqs()); the queue runs at
# the end of the sim call that caused it (sim_set, sim_advance, Pin.value,
# ...), never nested, and not while disable_irq() is in force. With the manual
# clock a handler's exception propagates to the test; with the real clock it
# is printed and the board carries on, as the ESP32 does.
#
# Resets. The WDT expires when `timeout` ms pass without a feed (a feed at
# exactly `timeout` is late). An expiry, machine.reset() or soft_reset()
# records the cause (sim_resets(), reset_cause()) and does what the board's
# reset does to the hardware: timers and WDT stop, IRQs are cleared, every pin
# is released (an output falls to its external/pull level, so a coil drops).
# machine.reset()/soft_reset() then raise SystemExit (they never return); a WDT
# expiry raises SystemExit only on the real clock (the virtual board's
# interpreter ends and is restarted), not inside sim_advance. With
# SICBO_VBOARD_RESET_EXIT set (by sicbo vboard) a hard or WDT reset exits with
# that status and a soft reset with status 0.
#
# Memory: Timer/WDT/sim_advance, SPI/PWM/bitstream, UART and RTC live in
# _sim_time.py, _sim_spi.py, _sim_uart.py and _sim_rtc.py, loaded on first use
# through the module's __getattr__ (the unix port compiles a module in one
# piece, and one big file does not fit a 110 KiB heap). Use them as
# machine.X only. Resident, as .mpy on the 64-bit unix port: about 22 KiB for
# this core, 41 KiB with every part loaded.
#
# Test-facing API (all module functions):
#   sim_reset(ticks=0, real=False)  forget every pin, bus, timer, WDT, log;
#                                   manual clock starting at `ticks`
#   sim_ticks_ms()                  the sim clock (manual or real)
#   sim_ticks_diff(a, b), sim_ticks_add(t, d)   arithmetic of that clock
#   sim_advance(ms)                 manual clock: move, firing due timers/WDT
#   sim_pump()                      real clock: timers, WDT, wire, IRQ queue
#   sim_set(pin, level)             drive an input from outside: 0, 1 or
#                                   None (released: the pull decides, else 0)
#   sim_level(pin)                  the pad's level (what Pin.value() reads)
#   sim_output(pin)                 level the board drives, None if not driven
#   sim_mode(pin)                   Pin.IN/OUT/OPEN_DRAIN, or None if unused
#   sim_edges(pin=None)             [(ticks, pin, level)] of driven-level
#                                   changes (last 256; PWM with duty>0 = 1)
#   sim_clear_edges()
#   sim_on_time(pin)                [ms] of every completed high period
#   sim_spi_writes(spi_id)          [bytes] of each write (last 8)
#   sim_spi_feed(spi_id, data)      bytes that reads will return (MISO)
#   sim_attach_595(spi_id, latch_pin, nbytes)   a 74HC595 chain on that bus,
#                                   latched by a rising edge of latch_pin
#   sim_frames(latch_pin)           [bytes] latched frames (last 8)
#   sim_frame(latch_pin)            last latched frame, or None
#   sim_attach_165(load, sck, miso, nbits, ds=0)   a 74HC165 chain loaded by
#                                   the load pin (/PL), clocked by sck, driving
#                                   miso; sim_set_165(load, bit, level) drives
#                                   one parallel input (sim/_sim_hc165.py)
#   sim_uart_inject(uart_id, data)  bytes arriving on the UART's RX
#   sim_uart_tx(uart_id, clear=False)   bytes written so far
#   sim_pwm(pin)                    (freq, duty_u16) or None
#   sim_neopixel(pin)               last bytes sent by bitstream(), or None
#   sim_resets()                    [cause] of every reset recorded
#   sim_lost_irqs()                 IRQs dropped because the queue was full
#   sim_wire_connected()            True when talking to a simulated table
#
# The wire (SICBO_SIM_WIRE=path of a UNIX stream socket): frames of
# type (1 ASCII byte), payload length (2 bytes, big-endian), payload.
#   board -> table: H "sicbo-sim 1" hello; P pin level t32 (driven level
#     changed; t32 = sim ticks & 0xffffffff, big-endian); M pin freq32 duty16
#     (PWM, freq 0 = deinit); S mosi sck data (SPI write); U tx data (UART TX);
#     N pin data (bitstream/neopixel); R cause (reset: WDT or machine.reset).
#   table -> board: I pin level (0, 1, 2 = released); U rx data (bytes for
#     the UART whose rx is that pin); C cause (reset cause of this boot);
#     Y (end of the initial state; import waits for it); A load sck miso
#     nbits ds (a 74HC165 chain); K load bit level (one of its inputs); Q pin
#     press release ms16 and L load bit press release ms16 (a key pressed for
#     the board's attention, _sim_wire.py), which the board answers with
#     E pin or E load bit once it has seen the press and the release.
import sys
import time

_MP = sys.implementation.name == "micropython"

_PERIOD = 1 << 30
_MASK = _PERIOD - 1
_HALF = _PERIOD >> 1

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5

_FLASH = (6, 7, 8, 9, 10, 11)
_NPINS = 40
_VALID = bytearray(_NPINS)
for _i in list(range(0, 20)) + [21, 22, 23, 25, 26, 27] + list(range(32, 40)):
    if _i not in _FLASH:
        _VALID[_i] = 1

_IN = 1
_OUT = 3
_OD = 7
_PU = 2
_PD = 1
_FLOAT = 2

# Pin state, one byte per GPIO.
_mode = bytearray(_NPINS)     # 0 = never configured (reads as an input)
_pull = bytearray(_NPINS)     # 0, _PU or _PD
_ext = bytearray(_NPINS)      # what the outside drives: 0, 1, _FLOAT
_oreg = bytearray(_NPINS)     # output register
_lvl = bytearray(_NPINS)      # current pad level
_drv = bytearray(_NPINS)      # 1 while the board drives the pin
_pwm_on = bytearray(_NPINS)   # 1 while a PWM owns the pin
_pwm_freq = [0] * _NPINS
_pwm_duty = [0] * _NPINS
_irq_trig = bytearray(_NPINS)
_irq_fn = [None] * _NPINS
_irq_pin = [None] * _NPINS

# Edge log ring.
_EDGES = 256
_edge_t = [0] * _EDGES
_edge_p = bytearray(_EDGES)
_edge_v = bytearray(_EDGES)
_edge_n = 0

# Soft IRQ queue: codes 0-39 = pin, 100-103 = timer.
_QLEN = 32
_q = bytearray(_QLEN)
_qh = 0
_qn = 0
_lost = 0
_in_dispatch = False
_irq_enabled = True

# Timers 0-3.
_t_on = bytearray(4)
_t_mode = bytearray(4)
_t_period = [0] * 4
_t_due = [0] * 4
_t_cb = [None] * 4
_t_obj = [None] * 4


_real = False
_now = 0
_elapsed = 0  # ms the manual clock has advanced, unwrapped (the simulated RTC's count)
_resets = []
_cause = PWRON_RESET

_latch = {}       # latch pin -> (spi id, nbytes)
_hc165 = {}       # load pin -> 74HC165 chain (_sim_hc165.py)
_held = {}        # pin -> a key held for the board's attention (_sim_wire.py)

_freq = 160000000

_wire = None
_pbuf = bytearray(9)
_last_pump = -1


def _err_pin(p, what):
    if not isinstance(p, int):
        raise TypeError("pin id must be an int, got %s" % type(p).__name__)
    if p < 0 or p >= _NPINS or p in _FLASH or not _VALID[p]:
        if 6 <= p <= 11:
            raise ValueError("invalid pin %d for %s: GPIO6-11 are wired to the "
                             "SPI flash" % (p, what))
        raise ValueError("invalid pin %d for %s: ESP32 GPIOs are 0-19, 21-23, "
                         "25-27, 32-39" % (p, what))


if not hasattr(time, "ticks_ms"):  # plain CPython without host_tools.mpshim
    time.ticks_ms = lambda: int(time.monotonic() * 1000) & _MASK
    time.ticks_add = lambda t, d: (t + d) & _MASK
    time.ticks_diff = lambda a, b: ((a - b + _HALF) & _MASK) - _HALF
    time.sleep_ms = lambda ms: time.sleep(ms / 1000)


def _tdiff(a, b):
    if _real:
        return time.ticks_diff(a, b)
    return ((a - b + _HALF) & _MASK) - _HALF


def _tadd(t, d):
    if _real:
        return time.ticks_add(t, d)
    return (t + d) & _MASK


def sim_ticks_ms():
    if _real:
        return time.ticks_ms()
    return _now


def sim_ticks_diff(a, b):
    return _tdiff(a, b)


def sim_ticks_add(t, d):
    return _tadd(t, d)


# ---- pins -------------------------------------------------------------------

def _pad(p):
    if _pwm_on[p]:
        return 1 if _pwm_duty[p] else 0
    m = _mode[p]
    if m == _OUT:
        return _oreg[p]
    if m == _OD and _oreg[p] == 0:
        return 0
    e = _ext[p]
    if e != _FLOAT:
        return e
    return 1 if _pull[p] == _PU else 0


def _driven(p):
    if _pwm_on[p] or _mode[p] == _OUT:
        return 1
    if _mode[p] == _OD and _oreg[p] == 0:
        return 1
    return 0


def _log_edge(p, v):
    global _edge_n
    i = _edge_n % _EDGES
    t = sim_ticks_ms()
    _edge_t[i] = t
    _edge_p[i] = p
    _edge_v[i] = v
    _edge_n += 1
    if v and p in _latch:
        sys.modules["_sim_spi"]._do_latch(p)
    if p in _hc165:
        _hc165[p].edge(v)
    if _wire is not None:
        b = _pbuf
        b[0] = 80  # 'P'
        b[1] = 0
        b[2] = 6
        b[3] = p
        b[4] = v
        # ticks are below 2**30, a small int: no mask with 0xFFFFFFFF, a long
        # int on a 32-bit port, which an edge under a locked heap (an IRQ)
        # cannot allocate
        b[5] = (t >> 24) & 255
        b[6] = (t >> 16) & 255
        b[7] = (t >> 8) & 255
        b[8] = t & 255
        _wsend(b)


def _update(p):
    # Recompute pin p's pad level after any change; log driven edges, queue IRQs.
    v = _pad(p)
    d = _driven(p)
    was = _drv[p]
    _drv[p] = d
    if v == _lvl[p]:
        return
    _lvl[p] = v
    if d or was:
        _log_edge(p, v)
    t = _irq_trig[p]
    if t and ((v and t & 1) or (not v and t & 2)):
        _queue(p)


def _queue(code):
    global _qn, _lost
    if _qn >= _QLEN:
        _lost += 1
        return
    _q[(_qh + _qn) % _QLEN] = code
    _qn += 1


def _dispatch():
    global _qh, _qn, _in_dispatch
    if _in_dispatch or not _irq_enabled:
        return
    _in_dispatch = True
    try:
        while _qn and _irq_enabled:
            code = _q[_qh]
            _qh = (_qh + 1) % _QLEN
            _qn -= 1
            if code < 100:
                fn = _irq_fn[code]
                arg = _irq_pin[code]
            else:
                fn = _t_cb[code - 100]
                arg = _t_obj[code - 100]
            if fn is None or arg is None:
                continue
            if not _real:
                fn(arg)  # a test sees its handler's exception
                continue
            try:
                fn(arg)
            except Exception as e:  # as the board does: report, carry on
                print("Unhandled exception in IRQ callback handler")
                if _MP:
                    sys.print_exception(e)
                else:
                    print(repr(e))
    finally:
        _in_dispatch = False


def _pump():
    # Called on every sim call: run what is due, then the IRQ queue.
    global _last_pump
    if _real:
        now = time.ticks_ms()
        if now != _last_pump:
            _last_pump = now
            if _wire is not None:
                sys.modules["_sim_wire"]._wpoll_in()
            tm = sys.modules.get("_sim_time")
            if tm is not None:
                tm._fire_due(now)
    if _qn:
        _dispatch()


class _PinIRQ:
    def __init__(self, p):
        self._p = p

    def trigger(self):
        return _irq_trig[self._p]

    def flags(self):
        return _irq_trig[self._p]


class Pin:
    IN = _IN
    OUT = _OUT
    OPEN_DRAIN = _OD
    PULL_UP = _PU
    PULL_DOWN = _PD
    IRQ_RISING = 1
    IRQ_FALLING = 2
    DRIVE_0 = 0
    DRIVE_1 = 1
    DRIVE_2 = 2
    DRIVE_3 = 3

    def __init__(self, id, mode=-1, pull=-1, value=None, drive=-1, hold=None):
        _err_pin(id, "Pin")
        self._id = id
        self.init(mode, pull, value, drive, hold)

    def init(self, mode=-1, pull=-1, value=None, drive=-1, hold=None):
        p = self._id
        if mode != -1 and mode not in (_IN, _OUT, _OD):
            raise ValueError("invalid mode %r for Pin(%d): use Pin.IN, Pin.OUT or "
                             "Pin.OPEN_DRAIN" % (mode, p))
        if mode in (_OUT, _OD) and p >= 34:
            raise ValueError("Pin(%d) is input-only (GPIO34-39): cannot be an output" % p)
        if pull != -1 and pull is not None and pull not in (_PU, _PD):
            raise ValueError("invalid pull %r for Pin(%d): use Pin.PULL_UP, "
                             "Pin.PULL_DOWN or None" % (pull, p))
        if pull not in (-1, None) and p >= 34:
            raise ValueError("Pin(%d) is input-only (GPIO34-39) and has no internal "
                             "pull resistors" % p)
        if drive != -1 and drive not in (0, 1, 2, 3):
            raise ValueError("invalid drive %r for Pin(%d)" % (drive, p))
        if value is not None:
            _oreg[p] = 1 if value else 0
        if pull != -1:
            _pull[p] = 0 if pull is None else pull
        if mode != -1:
            if _pwm_on[p]:
                _pwm_on[p] = 0
            _mode[p] = mode
        _update(p)
        _pump()

    def value(self, v=None):
        p = self._id
        if v is None:
            _pump()
            if p in _held:
                sys.modules["_sim_wire"]._held_read(p)
            return _lvl[p]
        _oreg[p] = 1 if v else 0
        _update(p)
        _pump()
        return None

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def irq(self, handler=None, trigger=3, wake=None, hard=False):
        p = self._id
        if handler is not None and not callable(handler):
            raise TypeError("Pin(%d).irq handler must be callable or None" % p)
        if trigger not in (1, 2, 3):
            raise ValueError("invalid trigger %r for Pin(%d).irq: use IRQ_RISING, "
                             "IRQ_FALLING or both ORed" % (trigger, p))
        if handler is None:
            _irq_fn[p] = None
            _irq_pin[p] = None
            _irq_trig[p] = 0
        else:
            _irq_fn[p] = handler
            _irq_pin[p] = self
            _irq_trig[p] = trigger
        return _PinIRQ(p)

    def __repr__(self):
        return "Pin(%d)" % self._id


def _pin_arg(obj, what, output):
    if not isinstance(obj, Pin):
        raise ValueError("expecting a Pin for %s, got %r" % (what, obj))
    if output and obj._id >= 34:
        raise ValueError("%s: Pin(%d) is input-only (GPIO34-39)" % (what, obj._id))
    return obj._id


def _bytes_arg(buf, what):
    if isinstance(buf, str):
        return buf.encode()
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return bytes(buf)
    raise TypeError("%s needs a buffer (bytes, bytearray, memoryview), got %s"
                    % (what, type(buf).__name__))


def _int_arg(v, what, lo, hi):
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError("%s must be an int, got %r" % (what, v))
    if v < lo or v > hi:
        raise ValueError("%s must be in %d..%d, got %d" % (what, lo, hi, v))
    return v












def sim_pump():
    _pump()


def reset_cause():
    return _cause


def unique_id():
    return b"\x24\x0a\xc4\x51\xb0\x07"


def freq(hz=None):
    global _freq
    if hz is None:
        return _freq
    if hz not in (20000000, 40000000, 80000000, 160000000, 240000000):
        raise ValueError("freq must be 20, 40, 80, 160 or 240 MHz (in Hz), got %r" % (hz,))
    _freq = hz


def idle():
    _pump()
    if _real:
        time.sleep_ms(1)


def disable_irq():
    global _irq_enabled
    was = _irq_enabled
    _irq_enabled = False
    return was


def enable_irq(state=True):
    global _irq_enabled
    _irq_enabled = bool(state)
    if _irq_enabled:
        _dispatch()












# ---- test-facing functions -------------------------------------------------------

def sim_reset(ticks=0, real=False):
    global _edge_n, _qh, _qn, _lost, _in_dispatch, _irq_enabled, _real
    global _now, _cause, _freq, _last_pump
    _int_arg(ticks, "sim_reset ticks", 0, _MASK)
    _real = bool(real)
    _now = ticks
    for p in range(_NPINS):
        _mode[p] = 0
        _pull[p] = 0
        _ext[p] = _FLOAT
        _oreg[p] = 0
        _lvl[p] = 0
        _drv[p] = 0
        _pwm_on[p] = 0
        _pwm_freq[p] = 0
        _pwm_duty[p] = 0
        _irq_trig[p] = 0
        _irq_fn[p] = None
        _irq_pin[p] = None
    _edge_n = 0
    _qh = _qn = _lost = 0
    _in_dispatch = False
    _irq_enabled = True
    for i in range(4):
        _t_on[i] = 0
        _t_cb[i] = None
        _t_obj[i] = None
    _resets.clear()
    _cause = PWRON_RESET
    _latch.clear()
    _hc165.clear()
    _held.clear()
    for name in ("_sim_spi", "_sim_uart", "_sim_rtc", "_sim_time", "_sim_hc165"):
        mod = sys.modules.get(name)
        if mod is not None:
            mod._reset()
    _freq = 160000000
    _last_pump = -1


def sim_set(pin, level):
    _err_pin(pin, "sim_set")
    if level is None:
        _ext[pin] = _FLOAT
    elif level in (0, 1):
        _ext[pin] = 1 if level else 0
    else:
        raise ValueError("sim_set level must be 0, 1 or None, got %r" % (level,))
    _update(pin)
    _pump()


def sim_level(pin):
    _err_pin(pin, "sim_level")
    return _lvl[pin]


def sim_output(pin):
    _err_pin(pin, "sim_output")
    return _lvl[pin] if _drv[pin] or _mode[pin] == _OD else None


def sim_mode(pin):
    _err_pin(pin, "sim_mode")
    return _mode[pin] or None


def sim_edges(pin=None):
    out = []
    start = _edge_n - _EDGES if _edge_n > _EDGES else 0
    for k in range(start, _edge_n):
        i = k % _EDGES
        if pin is None or _edge_p[i] == pin:
            out.append((_edge_t[i], _edge_p[i], _edge_v[i]))
    return out


def sim_clear_edges():
    global _edge_n
    _edge_n = 0


def sim_on_time(pin):
    _err_pin(pin, "sim_on_time")
    out = []
    rose = None
    for t, _p, v in sim_edges(pin):
        if v:
            rose = t
        elif rose is not None:
            out.append(_tdiff(t, rose))
            rose = None
    return out
















def sim_pwm(pin):
    _err_pin(pin, "sim_pwm")
    if not _pwm_on[pin]:
        return None
    return (_pwm_freq[pin], _pwm_duty[pin])




def sim_resets():
    return list(_resets)


def sim_lost_irqs():
    return _lost


def sim_wire_connected():
    return _wire is not None



def _wsend(b):
    global _wire
    try:
        if _MP:
            _wire.write(b)
        else:
            _wire.sendall(b)
    except OSError:
        _wire = None
        print("machine(sim): the simulated table went away")


def _wframe(kind, payload):
    n = len(payload)
    if n > 65535:
        raise ValueError("machine(sim): %d bytes in one write is more than the wire "
                         "carries (65535)" % n)
    _wsend(kind + bytes(((n >> 8) & 255, n & 255)) + payload)








_LAZY = {"SPI": "_sim_spi", "PWM": "_sim_spi", "bitstream": "_sim_spi",
         "sim_spi_writes": "_sim_spi", "sim_spi_feed": "_sim_spi",
         "sim_attach_595": "_sim_spi", "sim_frames": "_sim_spi", "sim_frame": "_sim_spi",
         "sim_neopixel": "_sim_spi", "UART": "_sim_uart", "sim_uart_inject": "_sim_uart",
         "sim_uart_tx": "_sim_uart", "RTC": "_sim_rtc", "Timer": "_sim_time",
         "WDT": "_sim_time", "sim_advance": "_sim_time", "reset": "_sim_time",
         "soft_reset": "_sim_time", "sim_attach_165": "_sim_hc165",
         "sim_set_165": "_sim_hc165", "sim_inputs_165": "_sim_hc165"}


def __getattr__(name):
    # Timer, WDT, SPI, UART, PWM, RTC and their sim_* functions live in _sim_*.py,
    # loaded on first use: the unix port compiles a module in one piece, and a
    # single big machine.py does not fit an ESP32-sized heap.
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError("module 'machine' has no attribute '%s'" % name)
    return getattr(__import__(mod), name)


def _env(name):
    try:
        import os
        return os.getenv(name)
    except (ImportError, AttributeError):
        return None


sim_reset()
_wire_path = _env("SICBO_SIM_WIRE")
if _wire_path:
    sim_reset(real=True)
    __import__("_sim_wire")._connect(_wire_path)
