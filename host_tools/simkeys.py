"""The simulated table's side of a board's 74HC165 key chain (the board
file's `keys`, docs/board-files.md), for host_tools/simtable.py.

The chain itself is modelled in the interpreter (sim/_sim_hc165.py); the
table attaches it over the wire when an interpreter connects (`A load sck
miso nbits ds`), ties the sentinel inputs to their levels and drives each
key's parallel input (`K load bit level`) from the same physical key state
as a direct input: a key to GND with a pull-up (`"invert": true`) reads 0
pressed, 1 released.

The chain's reads clock the lamps' 74HC595s too (one shared SCK): the bytes
of the SPI transfer that follows a rising edge of /PL are the key read, not
lamp data, and are left out of the lamp frame (the firmware writes a whole
frame before each latch, so a real 595 chain shows the same).
"""

from __future__ import annotations

from typing import Any


class ChainKey:
    """A key on the chain, as simtable's _Input: name, pin (None), pad()."""

    def __init__(self, chain: KeyChain, name: str, bit: int, invert: bool):
        self.chain = chain
        self.name = name
        self.pin = None
        self.bit = bit
        self.invert = invert
        self.pull = "none"

    def pad(self, active: int) -> int:
        return (0 if active else 1) if self.invert else (1 if active else 0)

    def frame(self, active: int) -> tuple[bytes, bytes]:
        return b"K", bytes((self.chain.load, self.bit, self.pad(active)))


class KeyChain:
    def __init__(self, board: dict[str, Any]):
        keys = board["keys"]
        lamps = board.get("lamps") or {}
        for field, where in ((keys.get("load"), "keys.load"), (lamps.get("sck"), "lamps.sck"),
                             (lamps.get("miso"), "lamps.miso")):
            if isinstance(field, bool) or not isinstance(field, int) or not 0 <= field <= 39:
                raise ValueError("%s: a GPIO number 0..39 is needed for the key chain, got %r"
                                 % (where, field))
        self.load: int = keys["load"]
        self.sck: int = lamps["sck"]
        self.miso: int = lamps["miso"]
        self.nbits = 8 * int(keys.get("chips", 1))
        self.high = [int(b) for b in keys.get("high", [])]
        self.low = [int(b) for b in keys.get("low", [])]
        invert = bool(keys.get("invert", False))
        self.keys = {name: ChainKey(self, name, int(bit), invert)
                     for name, bit in (keys.get("bits") or {}).items()}
        self._loaded = False

    def attach(self) -> list[tuple[bytes, bytes]]:
        """The frames that wire the chain in a newly connected interpreter
        (the keys' own levels follow as their inputs are sent)."""
        out = [(b"A", bytes((self.load, self.sck, self.miso, self.nbits, 0)))]
        for b in self.high:
            out.append((b"K", bytes((self.load, b, 1))))
        for b in self.low:
            out.append((b"K", bytes((self.load, b, 0))))
        return out

    def pin(self, pin: int, level: int) -> None:
        """A board pin changed: a rising /PL announces a key read."""
        if pin == self.load and level:
            self._loaded = True

    def is_key_read(self, sck: int) -> bool:
        """An SPI transfer on the lamp bus: True (once) when it reads the keys."""
        if self._loaded and sck == self.sck:
            self._loaded = False
            return True
        return False


def chain_of(board: dict[str, Any]) -> KeyChain | None:
    keys = board.get("keys")
    if not isinstance(keys, dict) or keys.get("bus") != "hc165":
        return None
    return KeyChain(board)
