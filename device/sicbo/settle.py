# The compact settlement table and wager settlement.
#
# For each of the 56 unordered outcomes of three dice the table holds the
# winning areas as a bitmap over the lamp channels of the table's lamp_order,
# so that the row of an outcome is the very frame the lamp board shifts out.
#
# Frame layout (74HC595 chain over SPI, MSB first): channel c is bit c % 8 of
# byte (row_bytes - 1 - c // 8). Shifted out as is, the last byte sent stays in
# the register nearest the controller, so channel 0 lands on its Q0.

from micropython import const

from sicbo import kinds
from sicbo.settings import lamp_name

_OUTCOMES = const(56)
ORDERED_OUTCOMES = const(216)
_NO_AREA = const(255)
# Index of the sorted outcome a <= b <= c (0-based faces) among the 56:
# _FIRST[a] counts outcomes with a smaller lowest die, _SECOND[b] - _SECOND[a]
# those with the same lowest and a smaller middle die.
_FIRST = const(b"\x00\x15\x24\x2e\x34\x37")
_SECOND = const(b"\x00\x06\x0b\x0f\x12\x14")


def outcome_index(d1, d2, d3):
    """0..55 for valid dice; raises InputError otherwise. Does not allocate."""
    if type(d1) is not int or type(d2) is not int or type(d3) is not int or not (
            1 <= d1 <= 6 and 1 <= d2 <= 6 and 1 <= d3 <= 6):
        from sicbo.errors import InputError  # here: the running table never loads it

        raise InputError("dice must be whole numbers from 1 to 6, got %r %r %r" % (d1, d2, d3))
    # Sort three values with swaps: no list, no allocation.
    if d1 > d2:
        d1, d2 = d2, d1
    if d2 > d3:
        d2, d3 = d3, d2
    if d1 > d2:
        d1, d2 = d2, d1
    d1 -= 1
    d2 -= 1
    d3 -= 1
    return _FIRST[d1] + _SECOND[d2] - _SECOND[d1] + d3 - d2


def channel_on(frame, channel):
    return (frame[len(frame) - 1 - (channel >> 3)] >> (channel & 7)) & 1


def set_channel(frame, channel, on):
    i = len(frame) - 1 - (channel >> 3)
    if on:
        frame[i] |= 1 << (channel & 7)
    else:
        frame[i] &= ~(1 << (channel & 7)) & 0xFF


def _wins(areas, cfg, area, d1, d2, d3):
    # SettlementTable.wins, with the catalogue module passed in: an import
    # inside the build loop would allocate on every call.
    h = areas.hits(area, d1, d2, d3)
    if h and d1 == d2 == d3 and area in cfg.triple_kills:
        return 0
    return h


class SettlementTable:
    """Built once from a TableConfig; settle() is the table's hot path."""

    def __init__(self, cfg):
        # The catalogue (sicbo.areas) is needed to build the table, not to use
        # it: start-up drops the parsers once the table is open (tablefiles.PARSERS).
        from sicbo import areas

        self.cfg = cfg
        codes = cfg.lamps
        self.channels = len(codes)
        self.row_bytes = (self.channels + 7) >> 3
        # Catalogue index -> its lamp channel (255: not offered here).
        self.area_channel = bytearray(b"\xff" * kinds.AREA_COUNT_2004)
        # Odds per channel, in the order the lamp board and the row use.
        self.odds = bytearray(self.channels)
        # The number of a SINGLE area's channel (paid once per matching die), else 0.
        self.single = bytearray(self.channels)
        self.status_channel = {}
        for c in range(self.channels):
            i = codes[c]
            if i >= kinds.AREA_COUNT_2004:
                if lamp_name(i) is not None:  # a status lamp, not a spare channel
                    self.status_channel[lamp_name(i)] = c
            else:
                self.area_channel[i] = c
                self.odds[c] = cfg.odds[i]
                if areas.kind_of(i) == kinds.SINGLE:
                    self.single[c] = areas.param(i, 0)
        n = self.row_bytes
        self.rows = bytearray(_OUTCOMES * n)
        mv = memoryview(self.rows)
        views = []
        for a in range(1, 7):
            for b in range(a, 7):
                for c in range(b, 7):
                    o = outcome_index(a, b, c)
                    row = mv[o * n:(o + 1) * n]
                    for area in cfg.offered:
                        if _wins(areas, cfg, area, a, b, c):
                            set_channel(row, self.area_channel[area], 1)
                    views.append(row)
        # One view per outcome, made here so that settle() allocates nothing.
        self._views = tuple(views)

    def wins(self, area, d1, d2, d3):
        """Times the area is won under this table's rules (Art. 5 and 7)."""
        from sicbo import areas

        return _wins(areas, self.cfg, area, d1, d2, d3)

    def settle(self, d1, d2, d3):
        """The lamp frame of winning areas for these dice (a read-only use of
        a preallocated view: copy it, never write through it)."""
        return self._views[outcome_index(d1, d2, d3)]

    def odds_for(self, area, d1, d2, d3):
        """Odds (N to 1) paid to a winning bet on area, 0 if it loses."""
        c = self.area_channel[area]
        if c == _NO_AREA:
            return 0
        if not channel_on(self.settle(d1, d2, d3), c):
            return 0
        n = self.single[c]
        if n:
            return self.odds[c] * ((d1 == n) + (d2 == n) + (d3 == n))
        return self.odds[c]

    def winning_areas(self, d1, d2, d3):
        """[(area index, odds)] in catalogue order; allocates (host, recall)."""
        out = []
        for area in self.cfg.offered:
            odds = self.odds_for(area, d1, d2, d3)
            if odds:
                out.append((area, odds))
        return out

    def size_bytes(self):
        """Bytes of table data (rows and per-channel odds)."""
        return len(self.rows) + len(self.odds)

