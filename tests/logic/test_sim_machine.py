# The simulated machine module (sim/machine.py): strictness like the ESP32
# port, pins and soft IRQs, the manual clock with timers, WDT and the 2**30
# wrap, SPI/595 recording, UART injection, PWM, RTC. Portable: plain asserts.
import sys

import machine
from machine import PWM, RTC, SPI, UART, WDT, Pin, Timer

MP = sys.implementation.name == "micropython"


def _raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return str(e)
    raise AssertionError("%s not raised by %r%r" % (exc.__name__, fn, args))


def test_is_the_simulated_module():
    import os

    assert hasattr(machine, "sim_reset")
    # Connected to a simulated table exactly when run on the virtual board.
    assert machine.sim_wire_connected() == bool(os.getenv("SICBO_SIM_WIRE"))


def test_pin_numbers_are_checked_like_esp32():
    machine.sim_reset()
    for bad in (20, 24, 28, 31, 40, -1, 100):
        msg = _raises(ValueError, Pin, bad, Pin.IN)
        assert "invalid pin %d" % bad in msg
    for flash in (6, 7, 8, 9, 10, 11):
        assert "flash" in _raises(ValueError, Pin, flash, Pin.OUT)
    assert "int" in _raises(TypeError, Pin, "4", Pin.IN)
    for ok in (0, 5, 19, 21, 23, 25, 27, 32, 39):
        Pin(ok, Pin.IN)


def test_input_only_pins_refuse_output_and_pulls():
    machine.sim_reset()
    for p in (34, 35, 36, 39):
        assert "input-only" in _raises(ValueError, Pin, p, Pin.OUT)
        assert "input-only" in _raises(ValueError, Pin, p, Pin.OPEN_DRAIN)
        assert "pull" in _raises(ValueError, Pin, p, Pin.IN, Pin.PULL_UP)
        Pin(p, Pin.IN)
        Pin(p, Pin.IN, None)
    assert "input-only" in _raises(ValueError, PWM, Pin(34, Pin.IN))


def test_bad_mode_and_pull_values():
    machine.sim_reset()
    assert "invalid mode" in _raises(ValueError, Pin, 4, 99)
    assert "invalid pull" in _raises(ValueError, Pin, 4, Pin.IN, 42)
    p = Pin(4, Pin.IN)
    assert "callable" in _raises(TypeError, p.irq, 5)
    assert "trigger" in _raises(ValueError, p.irq, lambda q: None, 8)


def test_input_levels_and_pulls():
    machine.sim_reset()
    up = Pin(4, Pin.IN, Pin.PULL_UP)
    down = Pin(5, Pin.IN, Pin.PULL_DOWN)
    assert up.value() == 1 and down.value() == 0
    machine.sim_set(4, 0)
    machine.sim_set(5, 1)
    assert up.value() == 0 and down() == 1
    machine.sim_set(4, None)
    assert up.value() == 1
    assert machine.sim_output(4) is None
    assert machine.sim_mode(4) == Pin.IN
    assert machine.sim_mode(13) is None
    _raises(ValueError, machine.sim_set, 4, 2)


def test_output_levels_value_kwarg_and_edges():
    machine.sim_reset(ticks=100)
    p = Pin(26, Pin.OUT, value=1)
    assert machine.sim_output(26) == 1 and p.value() == 1
    p.off()
    machine.sim_advance(30)
    p.on()
    p.on()  # no edge: already high
    machine.sim_advance(120)
    p(0)
    assert machine.sim_edges(26) == [(100, 26, 1), (100, 26, 0), (130, 26, 1), (250, 26, 0)]
    assert machine.sim_on_time(26) == [0, 120]
    # An output ignores what the outside drives.
    machine.sim_set(26, 1)
    assert p.value() == 0
    machine.sim_clear_edges()
    assert machine.sim_edges() == []


def test_open_drain_is_wired_and():
    machine.sim_reset()
    p = Pin(21, Pin.OPEN_DRAIN, Pin.PULL_UP, value=1)
    assert p.value() == 1
    p.value(0)
    assert p.value() == 0 and machine.sim_output(21) == 0
    p.value(1)
    machine.sim_set(21, 0)
    assert p.value() == 0


def test_irq_rising_falling_and_both():
    machine.sim_reset()
    seen = []
    a = Pin(12, Pin.IN, Pin.PULL_DOWN)
    b = Pin(13, Pin.IN, Pin.PULL_DOWN)
    a.irq(lambda p: seen.append(("a", p.value())), Pin.IRQ_RISING)
    b.irq(handler=lambda p: seen.append(("b", p.value())),
          trigger=Pin.IRQ_RISING | Pin.IRQ_FALLING)
    machine.sim_set(12, 1)
    machine.sim_set(12, 1)  # no change, no IRQ
    machine.sim_set(12, 0)
    machine.sim_set(13, 1)
    machine.sim_set(13, 0)
    assert seen == [("a", 1), ("b", 1), ("b", 0)]
    a.irq(None)
    machine.sim_set(12, 1)
    assert len(seen) == 3


def test_irq_is_soft_and_deferred_by_disable_irq():
    machine.sim_reset()
    seen = []
    p = Pin(14, Pin.IN, Pin.PULL_DOWN)
    p.irq(lambda q: seen.append(machine.sim_level(14)), Pin.IRQ_RISING)
    st = machine.disable_irq()
    machine.sim_set(14, 1)
    assert seen == []
    machine.enable_irq(st)
    assert seen == [1]


def test_irq_handler_is_not_nested():
    machine.sim_reset()
    order = []
    out = Pin(15, Pin.OUT, value=0)
    inp = Pin(16, Pin.IN, Pin.PULL_DOWN)

    def h(pin):
        order.append("in")
        out.value(1)  # queues nothing but must not re-enter the dispatcher
        order.append("out")

    inp.irq(h, Pin.IRQ_RISING)
    machine.sim_set(16, 1)
    assert order == ["in", "out"]


def test_irq_queue_overflow_counts_lost():
    machine.sim_reset()
    p = Pin(17, Pin.IN)
    n = []
    p.irq(lambda q: n.append(1))
    machine.disable_irq()
    for i in range(40):
        machine.sim_set(17, i & 1 ^ 1)
    machine.enable_irq(True)
    assert len(n) == 32
    assert machine.sim_lost_irqs() == 8


def test_pin_value_does_not_allocate():
    if not MP:
        return
    import micropython
    machine.sim_reset()
    o = Pin(25, Pin.OUT)
    i = Pin(27, Pin.IN, Pin.PULL_UP)
    o.value(1)
    o.value(0)
    micropython.heap_lock()
    try:
        for _ in range(50):
            o.value(1)
            o.value(0)
            i.value()
    finally:
        micropython.heap_unlock()
    assert len(machine.sim_edges(25)) == 102


def test_one_shot_and_periodic_timers_on_manual_clock():
    machine.sim_reset()
    fired = []
    t0 = Timer(0)
    t1 = Timer(1)
    t0.init(mode=Timer.ONE_SHOT, period=50,
            callback=lambda t: fired.append(("one", machine.sim_ticks_ms())))
    t1.init(mode=Timer.PERIODIC, period=20,
            callback=lambda t: fired.append(("per", machine.sim_ticks_ms())))
    machine.sim_advance(19)
    assert fired == []
    machine.sim_advance(1)
    assert fired == [("per", 20)]
    machine.sim_advance(45)
    assert fired == [("per", 20), ("per", 40), ("one", 50), ("per", 60)]
    t1.deinit()
    machine.sim_advance(1000)
    assert len(fired) == 4
    assert machine.sim_ticks_ms() == 1065


def test_timer_callback_gets_the_timer_and_can_rearm():
    machine.sim_reset()
    got = []
    t = Timer(2)

    def cb(tim):
        got.append(machine.sim_ticks_ms())
        if len(got) < 3:
            tim.init(mode=Timer.ONE_SHOT, period=7, callback=cb)

    t.init(mode=Timer.ONE_SHOT, period=5, callback=cb)
    machine.sim_advance(100)
    assert got == [5, 12, 19]


def test_timer_arguments_are_checked():
    machine.sim_reset()
    assert "Timer(4)" in _raises(ValueError, Timer, 4)
    _raises(ValueError, Timer, -1)
    t = Timer(3)
    _raises(ValueError, t.init, mode=Timer.ONE_SHOT, period=0, callback=None)
    _raises(ValueError, t.init, mode=7, period=10)
    _raises(TypeError, t.init, period=10, callback=5)
    _raises(ValueError, machine.sim_advance, -1)


def test_clock_wraps_at_2_pow_30():
    start = (1 << 30) - 10
    machine.sim_reset(ticks=start)
    fired = []
    Timer(0).init(mode=Timer.ONE_SHOT, period=25,
                  callback=lambda t: fired.append(machine.sim_ticks_ms()))
    machine.sim_advance(15)
    assert machine.sim_ticks_ms() == 5
    assert fired == []
    machine.sim_advance(10)
    assert fired == [15]
    assert machine.sim_ticks_diff(15, start) == 25
    assert machine.sim_ticks_add(start, 25) == 15
    assert machine.sim_ticks_diff(start, 15) == -25


def test_solenoid_hard_off_by_one_shot_timer():
    # The pattern of the solenoid adapter: coil on, a one-shot timer forces it off.
    machine.sim_reset()
    coil = Pin(26, Pin.OUT, value=0)
    coil.on()
    Timer(0).init(mode=Timer.ONE_SHOT, period=200, callback=lambda t: coil.off())
    machine.sim_advance(500)
    assert machine.sim_on_time(26) == [200]
    assert machine.sim_output(26) == 0


def test_wdt_expiry_records_a_reset_and_releases_outputs():
    machine.sim_reset()
    coil = Pin(26, Pin.OUT, value=1)
    w = WDT(timeout=1000)
    machine.sim_advance(900)
    w.feed()
    machine.sim_advance(999)
    assert machine.sim_resets() == []
    assert machine.reset_cause() == machine.PWRON_RESET
    machine.sim_advance(1)
    assert machine.sim_resets() == [machine.WDT_RESET]
    assert machine.reset_cause() == machine.WDT_RESET
    assert machine.sim_output(26) is None and coil.value() == 0
    assert machine.sim_edges(26)[-1] == (1900, 26, 0)
    machine.sim_advance(5000)  # the board restarted: no second expiry
    assert machine.sim_resets() == [machine.WDT_RESET]


def test_wdt_fed_by_a_timer_never_expires_and_args_checked():
    machine.sim_reset()
    w = WDT(timeout=100)
    Timer(1).init(period=50, callback=lambda t: w.feed())
    machine.sim_advance(10000)
    assert machine.sim_resets() == []
    _raises(ValueError, WDT, timeout=0)
    _raises(ValueError, WDT, 1, 100)


def test_machine_reset_records_and_does_not_return():
    machine.sim_reset()
    _raises(SystemExit, machine.reset)
    assert machine.sim_resets() == [machine.HARD_RESET]


def test_spi_records_writes_and_595_latch():
    machine.sim_reset()
    latch = Pin(5, Pin.OUT, value=0)
    spi = SPI(2, baudrate=4000000, polarity=0, phase=0, sck=Pin(18), mosi=Pin(23),
              miso=Pin(19))
    machine.sim_attach_595(2, 5, 3)
    spi.write(b"\x01\x02")
    spi.write(bytearray(b"\x03\x04"))
    assert machine.sim_spi_writes(2) == [b"\x01\x02", b"\x03\x04"]
    assert machine.sim_frame(5) is None
    latch.on()
    latch.off()
    assert machine.sim_frame(5) == b"\x02\x03\x04"
    spi.write(memoryview(b"\xaa\xbb\xcc\xdd")[1:])
    latch.on()
    assert machine.sim_frames(5) == [b"\x02\x03\x04", b"\xbb\xcc\xdd"]


def test_spi_write_readinto_and_feed():
    machine.sim_reset()
    spi = SPI(1, sck=Pin(14), mosi=Pin(13), miso=Pin(12))
    machine.sim_spi_feed(1, b"\x10\x20")
    r = bytearray(3)
    spi.write_readinto(b"abc", r)
    assert r == bytearray(b"\x10\x20\x00")
    _raises(ValueError, spi.write_readinto, b"ab", bytearray(3))
    assert machine.sim_spi_writes(1) == [b"abc"]
    _raises(TypeError, spi.write, 5)
    spi.deinit()
    _raises(OSError, spi.write, b"x")


def test_spi_arguments_are_checked():
    machine.sim_reset()
    assert "SPI(0)" in _raises(ValueError, SPI, 0)
    _raises(ValueError, SPI, 3)
    assert "expecting a Pin" in _raises(ValueError, SPI, 2, sck=18)
    assert "input-only" in _raises(ValueError, SPI, 2, sck=Pin(18), mosi=Pin(35))
    _raises(ValueError, SPI, 2, polarity=2)
    _raises(ValueError, SPI, 2, bits=9)
    _raises(ValueError, SPI, 2, baudrate=0)
    _raises(ValueError, SPI, 2, sck=Pin(18), mosi=Pin(18))


def test_uart_injection_reads_and_tx():
    machine.sim_reset()
    u = UART(2, baudrate=9600, tx=Pin(17), rx=Pin(16))
    assert u.any() == 0 and u.read() is None and u.readline() is None
    assert machine.sim_uart_inject(2, b"D 1 2 3*4F\nD 4") == 14
    assert u.any() == 14
    assert u.readline() == b"D 1 2 3*4F\n"
    assert u.readline() == b"D 4"  # a partial line, as the board gives after its timeout
    machine.sim_uart_inject(2, b"abcdef")
    assert u.read(2) == b"ab"
    buf = bytearray(3)
    assert u.readinto(buf) == 3 and buf == bytearray(b"cde")
    assert u.read() == b"f"
    assert u.write(b"ACK\n") == 4
    u.write("x")
    assert machine.sim_uart_tx(2) == b"ACK\nx"
    assert machine.sim_uart_tx(2, clear=True) == b"ACK\nx"
    assert machine.sim_uart_tx(2) == b""


def test_uart_rx_buffer_overflow_drops_bytes():
    machine.sim_reset()
    u = UART(1, tx=Pin(4), rx=Pin(36), rxbuf=8)
    assert machine.sim_uart_inject(1, b"0123456789") == 8
    assert u.read() == b"01234567"


def test_uart_arguments_are_checked():
    machine.sim_reset()
    assert "REPL" in _raises(ValueError, UART, 0)
    _raises(ValueError, UART, 3)
    assert "flash" in _raises(ValueError, UART, 1)
    assert "expecting a Pin" in _raises(ValueError, UART, 2, tx=17, rx=16)
    assert "input-only" in _raises(ValueError, UART, 2, tx=Pin(34), rx=Pin(16))
    _raises(ValueError, UART, 2, baudrate=0, tx=Pin(17), rx=Pin(16))
    _raises(ValueError, UART, 2, parity=2, tx=Pin(17), rx=Pin(16))
    u = UART(2, tx=Pin(17), rx=Pin(16))
    u.deinit()
    _raises(OSError, u.read)
    assert machine.sim_uart_inject(2, b"x") == 0


def test_pwm_duty_freq_and_level():
    machine.sim_reset()
    pin = Pin(26, Pin.OUT, value=0)
    pwm = PWM(pin, freq=20000, duty_u16=65535)
    assert machine.sim_pwm(26) == (20000, 65535)
    assert machine.sim_output(26) == 1
    pwm.duty_u16(20000)
    assert pwm.duty_u16() == 20000 and pwm.freq() == 20000
    pwm.freq(1000)
    assert machine.sim_pwm(26) == (1000, 20000)
    pwm.duty_u16(0)
    assert machine.sim_output(26) == 0
    pwm.deinit()
    assert machine.sim_pwm(26) is None
    _raises(OSError, pwm.duty_u16, 5)
    _raises(ValueError, PWM, pin, duty_u16=70000)
    _raises(ValueError, PWM, 26)
    assert [e[2] for e in machine.sim_edges(26)] == [1, 0]


def test_bitstream_records_neopixel_bytes():
    machine.sim_reset()
    import neopixel
    np = neopixel.NeoPixel(Pin(4, Pin.OUT), 3)
    np[0] = (255, 0, 0)
    np[2] = (1, 2, 3)
    assert np[2] == (1, 2, 3)
    np.write()
    assert machine.sim_neopixel(4) == bytes([0, 255, 0, 0, 0, 0, 2, 1, 3])
    np.fill((0, 0, 9))
    np.write()
    assert machine.sim_neopixel(4) == bytes([0, 0, 9] * 3)
    assert len(np) == 3


def test_rtc_counts_on_the_sim_clock_and_checks_dates():
    machine.sim_reset()
    rtc = RTC()
    assert rtc.datetime()[:7] == (2000, 1, 1, 5, 0, 0, 0)
    rtc.datetime((2026, 2, 28, 0, 23, 59, 58, 0))
    machine.sim_advance(2500)
    # 2026-03-01 is a Sunday (weekday 6).
    assert rtc.datetime() == (2026, 3, 1, 6, 0, 0, 0, 500000)
    rtc.datetime((2024, 2, 29, 0, 12, 0, 0, 0))
    assert rtc.datetime()[:3] == (2024, 2, 29)
    _raises(ValueError, rtc.datetime, (2026, 2, 29, 0, 0, 0, 0, 0))
    _raises(ValueError, rtc.datetime, (2026, 13, 1, 0, 0, 0, 0, 0))
    _raises(TypeError, rtc.datetime, (2026, 1))


def test_misc_machine_functions():
    machine.sim_reset()
    assert len(machine.unique_id()) == 6
    assert machine.freq() == 160000000
    machine.freq(240000000)
    assert machine.freq() == 240000000
    _raises(ValueError, machine.freq, 123)
    machine.idle()
    st = machine.disable_irq()
    machine.enable_irq(st)


def test_sim_reset_forgets_everything():
    machine.sim_reset()
    Pin(4, Pin.OUT, value=1)
    Pin(5, Pin.IN).irq(lambda p: None)
    WDT(timeout=10)
    machine.sim_reset()
    assert machine.sim_mode(4) is None and machine.sim_level(4) == 0
    assert machine.sim_edges() == []
    machine.sim_advance(100)
    assert machine.sim_resets() == []
    assert machine.sim_ticks_ms() == 100


def test_handler_exception_reaches_the_test_on_the_manual_clock():
    machine.sim_reset()
    p = Pin(18, Pin.IN)

    def bad(pin):
        raise KeyError("handler bug")

    p.irq(bad, Pin.IRQ_RISING)
    _raises(KeyError, machine.sim_set, 18, 1)
    seen = []
    p.irq(lambda q: seen.append(1), Pin.IRQ_FALLING)
    machine.sim_set(18, 0)  # the queue still works after the exception
    assert seen == [1]


def test_real_clock_fires_timers_when_pumped():
    import time
    machine.sim_reset(real=True)
    try:
        fired = []
        Timer(0).init(mode=Timer.ONE_SHOT, period=5, callback=lambda t: fired.append(1))

        def bad(t):
            raise KeyError("printed, not raised, as on the board")

        Timer(1).init(mode=Timer.ONE_SHOT, period=5, callback=bad)
        _raises(ValueError, machine.sim_advance, 10)
        t0 = time.ticks_ms()
        while not fired and time.ticks_diff(time.ticks_ms(), t0) < 60000:
            machine.idle()
        assert fired == [1]
        assert machine.sim_ticks_diff(machine.sim_ticks_ms(), t0) >= 5
    finally:
        machine.sim_reset()


# ---- the 74HC165 chain model (sim/_sim_hc165.py) ------------------------------

HC_LOAD = 21
HC_SCK = 18
HC_MISO = 22


def _hc(ds=0, nbits=16):
    """A 2-chip chain: chip 0 inputs A..H = 1,0,1,0,0,0,0,1 (0x85), chip 1 0x3c."""
    machine.sim_reset()
    machine.sim_attach_165(HC_LOAD, HC_SCK, HC_MISO, nbits, ds)
    for byte, v in ((0, 0x85), (1, 0x3C)):
        for j in range(8):
            machine.sim_set_165(HC_LOAD, byte * 8 + j, (v >> j) & 1)
    return Pin(HC_LOAD, Pin.OUT, value=1)


def _hc_spi(**kw):
    return SPI(2, baudrate=1000000, sck=Pin(HC_SCK), mosi=Pin(23), miso=Pin(HC_MISO), **kw)


def _pulse(load):
    load.off()
    load.on()


def test_hc165_load_then_read_msb_first_chip_0_first():
    load = _hc()
    spi = _hc_spi()
    _pulse(load)
    assert spi.read(2) == b"\x85\x3c"
    assert machine.sim_inputs_165(HC_LOAD) == bytes((1, 0, 1, 0, 0, 0, 0, 1,
                                                     0, 0, 1, 1, 1, 1, 0, 0))
    buf = bytearray(2)
    _pulse(load)
    spi.readinto(buf)
    assert buf == bytearray(b"\x85\x3c")
    machine.sim_set_165(HC_LOAD, 15, 1)  # an input changes: seen at the next load only
    spi.readinto(buf)
    assert buf == bytearray(2)  # no load pulse: the DS zeros shifted in
    _pulse(load)
    assert spi.read(2) == b"\x85\xbc"


def test_hc165_without_load_pulse_reads_leftovers_and_ds():
    load = _hc(ds=1)
    spi = _hc_spi()
    _pulse(load)
    assert spi.read(1) == b"\x85"
    assert spi.read(2) == b"\x3c\xff"  # chip 1, then DS (tied high here)
    assert spi.read(1) == b"\xff"
    # /PL held low: loading, the clock ignored, QH is chip 0's H input.
    load.off()
    assert spi.read(2) == b"\xff\xff"
    machine.sim_set_165(HC_LOAD, 7, 0)
    assert spi.read(2) == b"\x00\x00"
    # A /PL never driven reads low: the chain never shifts.
    _hc()
    machine.sim_reset()
    machine.sim_attach_165(HC_LOAD, HC_SCK, HC_MISO, 16)
    machine.sim_set_165(HC_LOAD, 7, 1)
    assert _hc_spi().read(2) == b"\xff\xff"


def test_hc165_wrong_mode_or_bit_order_reads_wrong_bits():
    load = _hc()
    spi = _hc_spi(phase=1)  # mode 1: the 165 shifts before the master samples
    _pulse(load)
    assert spi.read(2) == bytes((0x0A, 0x78))  # (0x853c << 1) & 0xffff, DS 0 last
    load = _hc()
    spi = _hc_spi(firstbit=SPI.LSB)
    _pulse(load)
    assert spi.read(2) == bytes((0xA1, 0x3C))  # each byte reversed
    load = _hc()
    spi = _hc_spi(polarity=1, phase=0)  # mode 2 samples before the shift
    _pulse(load)
    assert spi.read(2) == b"\x85\x3c"
    load = _hc()
    load.off()
    load.on()
    spi = _hc_spi(polarity=1, phase=1)  # SCK goes idle high after the load: a shift
    assert spi.read(2) == bytes((0x0A, 0x78))


def test_hc165_shares_the_clock_not_the_data():
    load = _hc()
    spi = _hc_spi()
    _pulse(load)
    spi.write(b"\x00")  # a lamp write clocks the chain too
    assert spi.read(1) == b"\x3c"
    # Another bus (another SCK) does not clock it; a bus without its MISO
    # does not read it.
    other = SPI(1, sck=Pin(14), mosi=Pin(13), miso=Pin(HC_MISO))
    _pulse(load)
    machine.sim_spi_feed(1, b"\x99")
    assert other.read(1) == b"\x99"
    assert spi.read(1) == b"\x85"
    spi2 = SPI(2, sck=Pin(HC_SCK), mosi=Pin(23), miso=Pin(19))
    _pulse(load)
    assert spi2.read(1) == b"\x00"  # MISO GPIO19: nothing drives it


def test_hc165_arguments_checked_and_reset():
    machine.sim_reset()
    _raises(ValueError, machine.sim_attach_165, 6, HC_SCK, HC_MISO, 16)
    _raises(ValueError, machine.sim_attach_165, HC_LOAD, HC_SCK, HC_MISO, 12)
    _raises(ValueError, machine.sim_attach_165, HC_LOAD, HC_SCK, HC_MISO, 72)
    _raises(ValueError, machine.sim_attach_165, HC_LOAD, HC_SCK, HC_MISO, 8, 2)
    assert "no 74HC165" in _raises(ValueError, machine.sim_set_165, HC_LOAD, 0, 1)
    machine.sim_attach_165(HC_LOAD, HC_SCK, HC_MISO, 8)
    _raises(ValueError, machine.sim_set_165, HC_LOAD, 8, 1)
    _raises(ValueError, machine.sim_set_165, HC_LOAD, 0, 2)
    machine.sim_reset()
    _raises(ValueError, machine.sim_inputs_165, HC_LOAD)


def test_595_frame_needs_mode_0_2_or_3_and_msb_first():
    def frame(**kw):
        machine.sim_reset()
        latch = Pin(5, Pin.OUT, value=0)
        spi = SPI(2, sck=Pin(18), mosi=Pin(23), miso=Pin(19), **kw)
        machine.sim_attach_595(2, 5, 2)
        spi.write(b"\x81\x03")
        latch.on()
        assert machine.sim_spi_writes(2) == [b"\x81\x03"]  # what the program wrote
        return machine.sim_frame(5)

    assert frame() == b"\x81\x03"
    assert frame(polarity=1, phase=0) == b"\x81\x03"
    assert frame(polarity=1, phase=1) == b"\x81\x03"
    assert frame(phase=1) == b"\x40\x81"  # MOSI changes on the sampling edge: one bit late
    assert frame(firstbit=SPI.LSB) == b"\x81\xc0"  # each byte reversed
