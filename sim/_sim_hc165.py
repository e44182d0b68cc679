# Part of the simulated `machine` (sim/machine.py): 74HC165 chains (parallel
# in, serial out), modelled bit by bit as the chips behave, so that a driver
# that gets the bus wrong reads wrong bits:
# - /PL (the load pin) low: the chips take their parallel inputs and ignore
#   the clock; QH shows chip 0's input H. The rising edge of /PL keeps the
#   inputs of that moment. A pin never driven reads low: always loading.
# - /PL high: every rising edge of SCK, from any transfer on a bus with that
#   SCK (the lamps' writes too), shifts the chain one bit towards QH; the far
#   chip's serial input (DS) fills in `ds`.
# - The master samples MISO at the first clock edge (phase 0) or the second
#   (phase 1). The 74HC165 shifts on rising edges: in mode 1 (polarity 0,
#   phase 1) the rising edge comes first and every bit arrives one place
#   early (the first is lost); modes 0, 2 and 3 sample before the shift.
#   Polarity 1 makes SCK idle high: one rising edge when the bus is set up.
#   firstbit LSB puts the first bit in bit 0: every byte comes back reversed.
# Bit n of a chain is input n % 8 (A = 0 .. H = 7) of chip n // 8; chip 0's
# QH drives MISO, and H leaves first: read MSB first, bit n is bit n % 8 of
# byte n // 8.
#
# Test API (machine.X): sim_attach_165(load, sck, miso, nbits, ds=0) a chain;
# sim_set_165(load, bit, level) drives one parallel input (a pad level: a key
# to GND with a pull-up is 0 when pressed); sim_inputs_165(load) -> bytes.
# The virtual board's table attaches and drives its chain over the wire
# ('A' load sck miso nbits ds, 'K' load bit level).
import machine as _m
from machine import _err_pin, _int_arg, _lvl

_chains = _m._hc165  # load pin -> _Chain
_held = {}  # (load << 8) | bit -> a key held for the board's attention (_sim_wire.py)


class _Chain:
    def __init__(self, load, sck, miso, nbits, ds):
        self.load = load
        self.sck = sck
        self.miso = miso
        self.ds = ds
        self.inp = bytearray(nbits)  # parallel input levels, by chain bit
        self.reg = bytearray(nbits)  # the shift register: reg[0] is on QH

    def edge(self, v):
        if v:  # /PL rising: the inputs of this moment stay in the register
            if _held:
                _held_read(self.load)
            inp = self.inp
            reg = self.reg
            for p in range(len(reg)):
                reg[p] = inp[(p & ~7) | (7 - (p & 7))]

    def q(self):
        return self.inp[7] if _lvl[self.load] == 0 else self.reg[0]

    def clock(self):
        if _lvl[self.load]:
            reg = self.reg
            n = len(reg) - 1
            for p in range(n):  # in place: a register, not a new object per bit
                reg[p] = reg[p + 1]
            reg[n] = self.ds


def _reset():
    _chains.clear()
    _held.clear()


def _clock(sck):
    for c in _chains.values():
        if c.sck == sck:
            c.clock()


def _transfer(sck, miso, n, mode):
    # n bytes clocked on sck; the bytes the master reads when a chain drives
    # miso, else None.
    pol, pha, lsb = mode
    late = pha and not pol
    out = None
    for c in _chains.values():
        if c.sck != sck:
            continue
        r = bytearray(n)
        for k in range(n):
            v = 0
            for j in range(8):
                if late:
                    c.clock()
                    bit = c.q()
                else:
                    bit = c.q()
                    c.clock()
                v |= bit << (j if lsb else 7 - j)
            r[k] = v
        if c.miso == miso:
            out = r
    return out


def sim_attach_165(load, sck, miso, nbits, ds=0):
    for p, what in ((load, "load"), (sck, "sck"), (miso, "miso")):
        _err_pin(p, "sim_attach_165 " + what)
    _int_arg(nbits, "sim_attach_165 nbits", 8, 64)
    if nbits & 7:
        raise ValueError("sim_attach_165: nbits must be a multiple of 8 (8 per chip)")
    if ds not in (0, 1):
        raise ValueError("sim_attach_165: ds must be 0 or 1")
    _chains[load] = _Chain(load, sck, miso, nbits, ds)


def _chain(load, what):
    c = _chains.get(load)
    if c is None:
        raise ValueError("%s: no 74HC165 chain is loaded by pin %r" % (what, load))
    return c


def sim_set_165(load, bit, level):
    c = _chain(load, "sim_set_165")
    _int_arg(bit, "sim_set_165 bit", 0, len(c.inp) - 1)
    if level not in (0, 1):
        raise ValueError("sim_set_165 level must be 0 or 1, got %r" % (level,))
    c.inp[bit] = level
    _m._pump()


def sim_inputs_165(load):
    return bytes(_chain(load, "sim_inputs_165").inp)


def _held_read(load):
    # A latch of chain `load` reads its held keys
    from _sim_wire import _advance

    for k in [k for k in _held if k >> 8 == load]:
        h = _held[k]
        r = _advance(h)
        inp = _chains[load].inp
        if r and inp[k & 255] != h[0]:
            inp[k & 255] = h[0]
        elif r is not False:  # done, or a level set that stays
            del _held[k]
            _m._wframe(b"E", bytes((load, k & 255)))


def _wire_in(kind, pl):
    # From the table: 'A' (65) attaches, 'K' (75) sets an input, 'L' (76)
    # presses one for the board's attention (load bit press release ms16).
    if kind == 65 and len(pl) == 5:
        sim_attach_165(pl[0], pl[1], pl[2], pl[3], pl[4])
    elif (kind == 75 and len(pl) == 3) or (kind == 76 and len(pl) == 6):
        c = _chains.get(pl[0])
        if c is not None and pl[1] < len(c.inp):
            c.inp[pl[1]] = 1 if pl[2] else 0
            k = (pl[0] << 8) | pl[1]
            if kind == 76:
                _held[k] = [1 if pl[3] else 0, (pl[4] << 8) | pl[5], 0, 0, 0]
            else:
                _held.pop(k, None)
