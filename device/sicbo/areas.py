# The bet areas of the Sic Bo legal rules (Despacho 31/2003, 2003 and 2004
# editions), with their codes, kinds, fixed odds and direct win predicates.
#
# One catalogue serves both editions: it follows the order of Art. 5 of the
# 2004 edition, and the 29 areas of 2003 are exactly its first 29 entries.
# An area is identified by its index in this catalogue everywhere in the
# firmware; codes are for people, files and journals. The kinds, the
# editions and their area counts are declared in kinds.py.

from micropython import const

from sicbo import kinds as K

EDITIONS = (K.EDITION_2003, K.EDITION_2004)

KIND_NAMES = (
    "Small", "Big", "Single", "Triple", "Any triple", "Total", "Odd", "Even",
    "Combination with a double", "Combination of three", "Pair", "Double",
    "Four numbers",
)

# Odds of the totals (Art. 6(6)), indexed by the total 4..17; 5/16 and 6/15
# hold the lowest legal value, the configured value replaces it.
_TOTAL_ODDS = const(b"\x00\x00\x00\x00\x32\x12\x0e\x0c\x08\x06\x06\x06\x06\x08\x0c\x0e\x12\x32")
# Fixed odds by kind; TOTAL reads _TOTAL_ODDS, SINGLE pays 1 per matching die.
_KIND_ODDS = const((1, 1, 1, 150, 24, 0, 1, 1, 50, 30, 5, 8, 7))

# Totals whose odds a 2004 table may choose (Art. 6(6)): total -> (low, high).
# The 2003 edition fixes them at the low value.
ODDS_RANGES = {5: (18, 30), 16: (18, 30), 6: (14, 18), 15: (14, 18)}


# The catalogue as two byte strings, built once at import (_build is deleted
# after, so its code leaves the heap): KINDS[i] is the kind of area i, and
# PARAMS[4*i .. 4*i+3] its up to four numbers (unused ones are 0). Codes are
# made from them on demand by code(i): 117 resident strings would cost the
# controller's heap more than the whole catalogue.
def _build():
    kinds = bytearray(K.AREA_COUNT_2004)
    params = bytearray(4 * K.AREA_COUNT_2004)
    n = 0

    def add(kind, a=0, b=0, c=0, d=0):
        nonlocal n
        kinds[n] = kind
        params[4 * n] = a
        params[4 * n + 1] = b
        params[4 * n + 2] = c
        params[4 * n + 3] = d
        n += 1

    add(K.SMALL)
    add(K.BIG)
    for a in range(1, 7):
        add(K.SINGLE, a)
    for a in range(1, 7):
        add(K.TRIPLE, a)
    add(K.ANY_TRIPLE)
    for t in range(4, 18):
        add(K.TOTAL, t)
    # End of the 2003 edition.
    add(K.ODD)
    add(K.EVEN)
    # The double is a, the single is b; the code lists the three numbers in
    # ascending order, so COMBO_1_1_2 and COMBO_1_2_2 are different areas.
    for a in range(1, 7):
        for b in range(1, 7):
            if a != b:
                add(K.COMBO_DOUBLE, a, b)
    for a in range(1, 7):
        for b in range(a + 1, 7):
            for c in range(b + 1, 7):
                add(K.COMBO_THREE, a, b, c)
    for a in range(1, 7):
        for b in range(a + 1, 7):
            add(K.PAIR, a, b)
    for a in range(1, 7):
        add(K.DOUBLE, a)
    for a in range(1, 7):
        for b in range(a + 1, 7):
            for c in range(b + 1, 7):
                for d in range(c + 1, 7):
                    add(K.FOUR, a, b, c, d)
    return bytes(kinds), bytes(params)


KINDS, PARAMS = _build()
del _build

# Code of each kind, and how many of the area's numbers follow it.
_PREFIX = const(("SMALL", "BIG", "SINGLE", "TRIPLE", "ANY_TRIPLE", "TOTAL", "ODD", "EVEN",
                 "COMBO", "COMBO", "PAIR", "DOUBLE", "FOUR"))
_NUMBERS = const(b"\x00\x00\x01\x01\x00\x01\x00\x00\x03\x03\x02\x01\x04")


def _number(area, k):
    # The k-th number of the area's code (a COMBO lists its three ascending).
    p = 4 * area
    if KINDS[area] == K.COMBO_DOUBLE:
        a = PARAMS[p]
        b = PARAMS[p + 1]
        if a < b:
            return a if k < 2 else b
        return b if k == 0 else a
    return PARAMS[p + k]


def code(area):
    """The code of catalogue index `area` (a new string: for files, journals
    and people, never the hot path)."""
    kind = KINDS[area]
    s = _PREFIX[kind]
    for k in range(_NUMBERS[kind]):
        s += "_%d" % _number(area, k)
    return s


def codes(n=K.AREA_COUNT_2004):
    """The codes of the first n areas in catalogue order (a new tuple: host
    tools and tests; the firmware itself calls code(i))."""
    return tuple(code(i) for i in range(n))


def area_count(edition):
    """Number of areas of an edition; its areas are the indices 0..area_count-1."""
    if edition == K.EDITION_2003:
        return K.AREA_COUNT_2003
    if edition == K.EDITION_2004:
        return K.AREA_COUNT_2004
    raise ValueError("edition must be 2003 or 2004, not %r" % (edition,))


def index_of(name):
    """Catalogue index of an area code, or -1 if no edition has it. Compares
    in place: no code string is made."""
    if not isinstance(name, str):
        return -1
    n = len(name)
    for i in range(K.AREA_COUNT_2004):
        kind = KINDS[i]
        pre = _PREFIX[kind]
        if not name.startswith(pre):
            continue
        j = len(pre)
        for k in range(_NUMBERS[kind]):
            x = _number(i, k)
            if j + 1 >= n or name[j] != "_":
                break
            j += 1
            if x >= 10:
                if ord(name[j]) != 48 + x // 10:
                    break
                j += 1
                if j >= n:
                    break
            if ord(name[j]) != 48 + x % 10:
                break
            j += 1
        else:
            if j == n:
                return i
    return -1


def kind_of(area):
    return KINDS[area]


def param(area, k):
    return PARAMS[4 * area + k]


def base_odds(area):
    """Legal odds of an area before any table choice (SINGLE: per die)."""
    kind = KINDS[area]
    if kind == K.TOTAL:
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
    if kind == K.SMALL:
        return 1 if 4 <= total <= 10 else 0
    if kind == K.BIG:
        return 1 if 11 <= total <= 17 else 0
    if kind == K.SINGLE:
        return _count(a, d1, d2, d3)
    if kind == K.TRIPLE:
        return 1 if triple and d1 == a else 0
    if kind == K.ANY_TRIPLE:
        return 1 if triple else 0
    if kind == K.TOTAL:
        return 1 if total == a else 0
    if kind == K.ODD:
        return total & 1
    if kind == K.EVEN:
        return 1 - (total & 1)
    b = PARAMS[p + 1]
    if kind == K.COMBO_DOUBLE:
        return 1 if _count(a, d1, d2, d3) == 2 and _count(b, d1, d2, d3) == 1 else 0
    if kind == K.COMBO_THREE:
        c = PARAMS[p + 2]
        return 1 if (_count(a, d1, d2, d3) == 1 and _count(b, d1, d2, d3) == 1
                     and _count(c, d1, d2, d3) == 1) else 0
    if kind == K.PAIR:
        # Paid once even when a number shows twice (1-1-2 wins PAIR_1_2 once).
        return 1 if _count(a, d1, d2, d3) and _count(b, d1, d2, d3) else 0
    if kind == K.DOUBLE:
        return 1 if _count(a, d1, d2, d3) >= 2 else 0
    if kind == K.FOUR:
        if d1 == d2 or d2 == d3 or d1 == d3:
            return 0
        c = PARAMS[p + 2]
        d = PARAMS[p + 3]
        for x in (d1, d2, d3):
            if x != a and x != b and x != c and x != d:
                return 0
        return 1
    raise ValueError("unknown area kind")
