# The dealer's keys on a 74HC165 chain (hw.keychain, hw.inputs) through the
# simulated machine's chain model (sim/_sim_hc165.py): bits in their places,
# debounce and chatter as for direct inputs, a broken chain (all ones, all
# zeros, a stuck sentinel, no load pulse, wrong mode or bit order) a fault and
# never key presses, make_switches and confirm_held from a parsed Board, a
# chain size other than 1..8 whole chips refused, and no allocation per poll.
import machine
import micropython
from hwkit import BITS, HIGH, LOAD, LOW, MISO, MOSI, NBITS, SCK, SENSORS, drain, poll
from machine import SPI, Pin

from hw import inputs
from hw.keychain import KeyChain
from hw.switches import EDGE, FAULT, RECOVER, Switches
from sicbo import signals as S


def wire(ds=0):
    """A fresh sim with the chain attached: keys up (pulled high), sentinels
    at their levels."""
    machine.sim_reset()
    machine.sim_attach_165(LOAD, SCK, MISO, NBITS, ds)
    for b in range(NBITS):
        machine.sim_set_165(LOAD, b, 0 if b in LOW else 1)


def bus(**kw):
    return SPI(2, baudrate=1000000, sck=Pin(SCK), mosi=Pin(MOSI), miso=Pin(MISO), **kw)


def chain(spi=None, load=LOAD):
    return KeyChain(spi or bus(), Pin(load, Pin.OUT, value=1), NBITS, HIGH, LOW)


def press(signal, down=True):
    machine.sim_set_165(LOAD, BITS[signal], 0 if down else 1)


def keys_switches(**kw):
    """Switches over the ten keys of the chain, in signal order from KEY_BELL."""
    c = chain()
    pins = [c.bit(BITS[n]) for n in S.INPUT_SIGNALS[S.KEY_BELL:]]
    sw = Switches(pins, 20, 6, 500, invert=[1] * len(pins), ticks_ms=machine.sim_ticks_ms,
                  chain=c, **kw)
    return c, sw


def _raises(exc, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc as e:
        return str(e)
    raise AssertionError("%s not raised" % exc.__name__)


def test_bits_read_in_their_places():
    wire()
    c = chain()
    assert c.sample() and c.good
    assert bytes(c.buf) == b"\xff\x83"  # keys up; bits 10-14 low, 15 high
    press("key_confirm")
    press("key_face_6")
    assert c.sample()
    v = c.bit(BITS["key_confirm"])
    assert v.value() == 0 and c.bit(BITS["key_face_6"]).value() == 0
    assert c.bit(BITS["key_face_5"]).value() == 1 and c.bit(BITS["key_bell"]).value() == 1
    assert c.breaks == 0


def test_chain_key_debounced_like_a_direct_input():
    wire()
    c, sw = keys_switches()
    poll(sw, 50)
    assert drain(sw) == []
    press("key_payout")
    t0 = machine.sim_ticks_ms()
    poll(sw, 10)
    assert drain(sw) == []  # not yet still for debounce_ms
    poll(sw, 30)
    i = S.KEY_PAYOUT - S.KEY_BELL
    evs = drain(sw)
    assert len(evs) == 1 and evs[0][:3] == (EDGE, i, 1)
    assert machine.sim_ticks_diff(evs[0][3], t0) >= 0
    assert sw.level(i) == 1
    press("key_payout", False)
    machine.sim_advance(1)
    press("key_payout")  # a 1 ms release: a bounce, swallowed
    poll(sw, 60)
    assert drain(sw) == []


def test_chain_key_chatter_is_a_fault_then_recovers():
    wire()
    c, sw = keys_switches()
    poll(sw, 20)
    i = S.KEY_VOID - S.KEY_BELL
    seen = []
    for k in range(10):
        press("key_void", k % 2 == 0)
        poll(sw, 10)
        seen += drain(sw)
    faults = [e for e in seen if e[0] == FAULT]
    assert len(faults) == 1 and faults[0][1] == i and sw.faulted(i)
    press("key_void", False)
    poll(sw, 600)
    evs = drain(sw)
    assert [e[:3] for e in evs] == [(RECOVER, i, 0)] and not sw.faulted(i)


def _broken_is_one_fault(level):
    wire()
    c, sw = keys_switches()
    poll(sw, 30)
    for b in range(NBITS):
        machine.sim_set_165(LOAD, b, level)  # every input at one level
    poll(sw, 200)
    evs = drain(sw)
    assert [e[:2] for e in evs] == [(FAULT, 0)], evs  # one fault, no key presses
    n = sw.count()
    assert all(sw.faulted(i) and sw.level(i) == 0 for i in range(n))
    assert sw.faults == 1 and c.breaks >= 30 and not c.good
    wire_levels()
    poll(sw, 400)  # good again, but not yet still for settle_ms (500)
    assert drain(sw) == []
    poll(sw, 200)
    evs = drain(sw)
    assert len(evs) == n and all(e[0] == RECOVER and e[2] == 0 for e in evs)
    assert not any(sw.faulted(i) for i in range(n))
    press("key_bell")
    poll(sw, 40)
    assert [e[:3] for e in drain(sw)] == [(EDGE, 0, 1)]


def wire_levels():
    for b in range(NBITS):
        machine.sim_set_165(LOAD, b, 0 if b in LOW else 1)


def test_chain_all_zeros_is_a_fault_not_ten_presses():
    _broken_is_one_fault(0)


def test_chain_all_ones_is_a_fault():
    _broken_is_one_fault(1)


def test_stuck_sentinel_is_a_fault():
    wire()
    c, sw = keys_switches()
    machine.sim_set_165(LOAD, 12, 1)  # one low sentinel stuck high
    poll(sw, 50)
    assert [e[:2] for e in drain(sw)] == [(FAULT, 0)]


def test_chain_broken_at_start_starts_faulted():
    wire()
    machine.sim_set_165(LOAD, 15, 0)
    c, sw = keys_switches()
    assert [e[:2] for e in drain(sw)] == [(FAULT, 0)]
    assert all(sw.level(i) == 0 for i in range(sw.count()))


def test_missing_load_pulse_mode_and_bit_order_are_faults():
    wire()
    # /PL on another pin: the chain never loads; it shifts out its reset
    # contents, then the zeros of its DS.
    c = chain(load=13)
    assert not c.sample() and not c.sample()
    wire()
    assert not chain(bus(phase=1)).sample()  # mode 1: every bit one place early
    wire()
    assert not chain(bus(firstbit=SPI.LSB)).sample()  # each byte reversed
    wire()
    c = chain(bus(polarity=1, phase=1))  # mode 3 samples before the shift: works
    assert c.sample()
    wire()
    # A SPI without the chain's MISO (the bus default, GPIO19) reads nothing.
    spi = SPI(2, baudrate=1000000, sck=Pin(SCK), mosi=Pin(MOSI))
    assert not chain(spi).sample()


def test_lamp_writes_between_samples_do_not_disturb_the_keys():
    wire()
    spi = bus()
    c = chain(spi)
    press("key_face_2")
    for _ in range(3):
        spi.write(b"\xaa\x55\x0f")  # the 74HC595 frame clocks the 165s too
        assert c.sample() and c.bit(BITS["key_face_2"]).value() == 0


def test_keychain_arguments_checked():
    wire()
    spi = bus()
    load = Pin(LOAD, Pin.OUT, value=1)
    _raises(ValueError, KeyChain, spi, load, 12, HIGH, LOW)
    _raises(ValueError, KeyChain, spi, load, 16, (), LOW)
    _raises(ValueError, KeyChain, spi, load, 16, HIGH, ())
    _raises(ValueError, KeyChain, spi, load, 16, (15,), (15,))
    _raises(ValueError, KeyChain, spi, load, 16, (16,), LOW)
    _raises(ValueError, KeyChain, spi, load, 16, (-1,), LOW)  # no bit before the first
    _raises(ValueError, KeyChain, spi, load, 16, HIGH, (-1,))
    c = KeyChain(spi, load, 16, HIGH, LOW)
    _raises(ValueError, c.bit, 15)  # a sentinel is no key
    _raises(ValueError, c.bit, 16)
    assert c.owns(c.bit(0)) and not c.owns(load)


def test_a_chain_of_part_of_a_chip_or_of_more_than_eight_chips_is_refused():
    # The chain is read a whole byte per 74HC165: 4 or 12 bits would name
    # key bits that no byte read holds (an IndexError when a key's bit is
    # asked for), 72 bits a ninth chip the board file never allows; each is
    # refused by its count, even with sentinels that fit, before any chain
    # is built.
    wire()
    spi = bus()
    load = Pin(LOAD, Pin.OUT, value=1)
    for nbits, high, low in ((12, (7,), (6,)), (4, (3,), (2,)), (72, (71,), (70,)),
                             (0, (0,), (1,)), (-8, (0,), (1,)), (20, (15,), (14,))):
        msg = _raises(ValueError, KeyChain, spi, load, nbits, high, low)
        assert msg == "a 74HC165 chain has 8 bits per chip, 1..8 chips", (nbits, msg)
    for nbits in (8, 64):  # one chip, eight chips
        c = KeyChain(spi, load, nbits, (nbits - 1,), (nbits - 2,))
        assert c.nbits == nbits and len(c.buf) == nbits // 8
        assert c.bit(nbits - 3).value() in (0, 1)


class _FakeSPI:
    # Allocation-free stand-ins (the sim's own machine code allocates).
    def __init__(self, data):
        self.data = data

    def readinto(self, buf, write=0):
        for i in range(len(buf)):
            buf[i] = self.data[i]


class _FakePin:
    def __init__(self, v=1):
        self.v = v

    def value(self, v=None):
        if v is None:
            return self.v
        self.v = v
        return None


def test_poll_allocates_nothing():
    data = bytearray(b"\xff\x83")
    t = [0]
    c = KeyChain(_FakeSPI(data), _FakePin(), NBITS, HIGH, LOW)
    direct = _FakePin(0)
    pins = [direct] + [c.bit(b) for b in range(10)]
    sw = Switches(pins, 20, 6, 500, invert=[0] + [1] * 10, ticks_ms=lambda: t[0], chain=c)
    ev = [0, 0, 0, 0]
    micropython.heap_lock()
    try:
        for k in range(200):
            t[0] = k * 5
            if k == 20:
                data[0] = 0xF7  # key_confirm pressed
            if k == 60:
                data[1] = 0x00  # chain broken
            if k == 80:
                data[1] = 0x83
            direct.v = k & 1 if 100 < k < 120 else 0  # chatter on the direct one
            sw.update(t[0])
            while sw.pop(ev):
                pass
    finally:
        micropython.heap_unlock()
    assert sw.faults == 2 and c.breaks == 20


def board_obj(keys=True):
    ins = {}
    for name in SENSORS:
        ins[name] = {"pin": SENSORS[name], "pull": "none"}
    ins["supervisor"] = {"pin": 32, "pull": "up", "invert": True}
    b = {"name": "chain test", "inputs": ins, "outputs": {"bell": 27},
         "lamps": {"bus": "hc595", "spi": 2, "sck": SCK, "mosi": MOSI, "miso": MISO,
                   "latch": 19},
         "timings": {"debounce_ms": 20, "chatter_limit": 6, "chatter_window_ms": 500}}
    if keys:
        b["keys"] = {"bus": "hc165", "load": LOAD, "chips": 2, "invert": True,
                     "bits": BITS, "high": list(HIGH), "low": list(LOW)}
    else:
        pins = (33, 14, 25, 13, 26, 4, 16, 17, 37, 38)
        k = 0
        for name in S.INPUT_SIGNALS[S.KEY_BELL:]:
            ins[name] = {"pin": pins[k], "pull": "none" if pins[k] >= 34 else "up",
                         "invert": True}
            k += 1
    return b


def _parse(obj):
    from sicbo import board

    return board.parse_board(obj)


def test_make_switches_and_confirm_held_from_a_board():
    b = _parse(board_obj())
    wire()
    machine.sim_set(34, 1)  # cover on
    assert not inputs.confirm_held(b)
    press("key_confirm")
    assert inputs.confirm_held(b)
    machine.sim_set_165(LOAD, 15, 0)
    assert not inputs.confirm_held(b)  # a broken chain holds nothing
    machine.sim_set_165(LOAD, 15, 1)
    press("key_confirm", False)
    spi = inputs.spi_for(b)
    sw = inputs.make_switches(b, machine.sim_ticks_ms, spi)
    assert sw.count() == S.COUNT and sw.level(S.COVER) == 1 and sw.level(S.KEY_CONFIRM) == 0
    press("key_face_3")
    poll(sw, 40)
    assert [e[:3] for e in drain(sw)] == [(EDGE, S.KEY_FACE_1 + 2, 1)]
    machine.sim_set_165(LOAD, 15, 0)
    poll(sw, 20)
    assert [e[:2] for e in drain(sw)] == [(FAULT, S.KEY_BELL)]
    assert sw.level(S.COVER) == 1 and not sw.faulted(S.COVER)  # direct inputs go on
    assert inputs.where(b, S.KEY_CONFIRM) == "hc165 bit 3"
    assert inputs.where(b, S.COVER) == "GPIO34"


def test_make_switches_direct_board():
    b = _parse(board_obj(keys=False))
    machine.sim_reset()
    assert b.keys is None
    assert not inputs.confirm_held(b)
    machine.sim_set(13, 0)  # key_confirm to GND
    assert inputs.confirm_held(b)
    sw = inputs.make_switches(b, machine.sim_ticks_ms)
    assert sw.level(S.KEY_CONFIRM) == 1 and sw.level(S.KEY_BELL) == 0
