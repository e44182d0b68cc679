# The bet areas of the Sic Bo legal rules (Despacho 31/2003, 2003 and 2004
# editions), with their codes, kinds, fixed odds and direct win predicates.
#
# One catalogue serves both editions: it follows the order of Art. 5 of the
# 2004 edition, and the 29 areas of 2003 are exactly its first 29 entries.
# An area is identified by its index in this catalogue everywhere in the
# firmware; codes are for people, files and journals.

from micropython import const

EDITION_2003 = const(2003)
EDITION_2004 = const(2004)
EDITIONS = (EDITION_2003, EDITION_2004)

# Kinds of bet (Art. 5).
SMALL = const(0)
BIG = const(1)
SINGLE = const(2)  # 三軍: n on one, two or three dice
TRIPLE = const(3)  # 圍骰: a named triple
ANY_TRIPLE = const(4)  # 全圍 / 全骰
TOTAL = const(5)  # 點數
ODD = const(6)  # 單
EVEN = const(7)  # 雙
COMBO_DOUBLE = const(8)  # a double of a plus a single b
COMBO_THREE = const(9)  # three named different numbers
PAIR = const(10)  # 長牌: two named different numbers
DOUBLE = const(11)  # 短牌: at least two dice show n
FOUR = const(12)  # three different numbers, all among four named

KIND_NAMES = (
    "Small", "Big", "Single", "Triple", "Any triple", "Total", "Odd", "Even",
    "Combination with a double", "Combination of three", "Pair", "Double",
    "Four numbers",
)

# Odds of the totals (Art. 6(6)), indexed by the total 4..17; 5/16 and 6/15
# hold the lowest legal value, the configured value replaces it.
_TOTAL_ODDS = b"\x00\x00\x00\x00\x32\x12\x0e\x0c\x08\x06\x06\x06\x06\x08\x0c\x0e\x12\x32"
# Fixed odds by kind; TOTAL reads _TOTAL_ODDS, SINGLE pays 1 per matching die.
_KIND_ODDS = (1, 1, 1, 150, 24, 0, 1, 1, 50, 30, 5, 8, 7)

# Totals whose odds a 2004 table may choose (Art. 6(6)): total -> (low, high).
# The 2003 edition fixes them at the low value.
ODDS_RANGES = {5: (18, 30), 16: (18, 30), 6: (14, 18), 15: (14, 18)}

AREA_COUNT_2003 = const(29)
AREA_COUNT_2004 = const(117)


def _build():
    codes = []  # type: list[str]
    kinds = bytearray(AREA_COUNT_2004)
    # Up to four numbers per area; unused ones are 0.
    params = bytearray(4 * AREA_COUNT_2004)

    def add(code, kind, a=0, b=0, c=0, d=0):
        i = len(codes)
        codes.append(code)
        kinds[i] = kind
        params[4 * i] = a
        params[4 * i + 1] = b
        params[4 * i + 2] = c
        params[4 * i + 3] = d

    add("SMALL", SMALL)
    add("BIG", BIG)
    for n in range(1, 7):
        add("SINGLE_%d" % n, SINGLE, n)
    for n in range(1, 7):
        add("TRIPLE_%d" % n, TRIPLE, n)
    add("ANY_TRIPLE", ANY_TRIPLE)
    for t in range(4, 18):
        add("TOTAL_%d" % t, TOTAL, t)
    # End of the 2003 edition.
    add("ODD", ODD)
    add("EVEN", EVEN)
    # The double is a, the single is b; the code lists the three numbers in
    # ascending order, so COMBO_1_1_2 and COMBO_1_2_2 are different areas.
    for a in range(1, 7):
        for b in range(1, 7):
            if a != b:
                if a < b:
                    add("COMBO_%d_%d_%d" % (a, a, b), COMBO_DOUBLE, a, b)
                else:
                    add("COMBO_%d_%d_%d" % (b, a, a), COMBO_DOUBLE, a, b)
    for a in range(1, 7):
        for b in range(a + 1, 7):
            for c in range(b + 1, 7):
                add("COMBO_%d_%d_%d" % (a, b, c), COMBO_THREE, a, b, c)
    for a in range(1, 7):
        for b in range(a + 1, 7):
            add("PAIR_%d_%d" % (a, b), PAIR, a, b)
    for n in range(1, 7):
        add("DOUBLE_%d" % n, DOUBLE, n)
    for a in range(1, 7):
        for b in range(a + 1, 7):
            for c in range(b + 1, 7):
                for d in range(c + 1, 7):
                    add("FOUR_%d_%d_%d_%d" % (a, b, c, d), FOUR, a, b, c, d)
    return tuple(codes), bytes(kinds), bytes(params)


CODES, KINDS, PARAMS = _build()


def area_count(edition):
    """Number of areas of an edition; its areas are CODES[:area_count]."""
    if edition == EDITION_2003:
        return AREA_COUNT_2003
    if edition == EDITION_2004:
        return AREA_COUNT_2004
    raise ValueError("edition must be 2003 or 2004, not %r" % (edition,))


def index_of(code):
    """Catalogue index of an area code, or -1 if no edition has it."""
    try:
        return CODES.index(code)
    except ValueError:
        return -1


def kind_of(area):
    return KINDS[area]


def param(area, k):
    return PARAMS[4 * area + k]


def base_odds(area):
    """Legal odds of an area before any table choice (SINGLE: per die)."""
    kind = KINDS[area]
    if kind == TOTAL:
        return _TOTAL_ODDS[PARAMS[4 * area]]
    return _KIND_ODDS[kind]


def _count(n, d1, d2, d3):
    return (d1 == n) + (d2 == n) + (d3 == n)


def hits(area, d1, d2, d3):
    """How many times the area's bet is won by the dice, by the definition of
    Art. 5 alone (before Art. 7 and the table's triple rule): the number of
    matching dice for SINGLE, otherwise 0 or 1."""
    kind = KINDS[area]
    p = 4 * area
    a = PARAMS[p]
    total = d1 + d2 + d3
    triple = d1 == d2 == d3
    if kind == SMALL:
        return 1 if 4 <= total <= 10 else 0
    if kind == BIG:
        return 1 if 11 <= total <= 17 else 0
    if kind == SINGLE:
        return _count(a, d1, d2, d3)
    if kind == TRIPLE:
        return 1 if triple and d1 == a else 0
    if kind == ANY_TRIPLE:
        return 1 if triple else 0
    if kind == TOTAL:
        return 1 if total == a else 0
    if kind == ODD:
        return total & 1
    if kind == EVEN:
        return 1 - (total & 1)
    b = PARAMS[p + 1]
    if kind == COMBO_DOUBLE:
        return 1 if _count(a, d1, d2, d3) == 2 and _count(b, d1, d2, d3) == 1 else 0
    if kind == COMBO_THREE:
        c = PARAMS[p + 2]
        return 1 if (_count(a, d1, d2, d3) == 1 and _count(b, d1, d2, d3) == 1
                     and _count(c, d1, d2, d3) == 1) else 0
    if kind == PAIR:
        # Paid once even when a number shows twice (1-1-2 wins PAIR_1_2 once).
        return 1 if _count(a, d1, d2, d3) and _count(b, d1, d2, d3) else 0
    if kind == DOUBLE:
        return 1 if _count(a, d1, d2, d3) >= 2 else 0
    if kind == FOUR:
        if d1 == d2 or d2 == d3 or d1 == d3:
            return 0
        c = PARAMS[p + 2]
        d = PARAMS[p + 3]
        for x in (d1, d2, d3):
            if x != a and x != b and x != c and x != d:
                return 0
        return 1
    raise ValueError("unknown area kind")
