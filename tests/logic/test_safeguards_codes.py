# The numbers the journal, the log and the dealer's display share
# (sicbo.events, sicbo.records): record types, reasons, messages, states, sensors, void and
# damage codes are written to flash and read back by older and newer
# firmware and by the host tools. Each family is numbered without a gap or a
# clash from its first value, and its *_LAST is its largest: a code moved by
# one, or a new one that reuses a number, fails here.
from sicbo import events as E
from sicbo import records as R

# prefix: (first value, name of the family's last code or None, contiguous),
# in sicbo.events but J_ (record types), in sicbo.records.
FAMILIES = {
    "J_": (1, "J_LAST", True),
    "V_": (1, "V_LAST", True),
    "BAD_": (1, "BAD_LAST", True),
    "R_": (32, "R_LAST", True),
    "M_": (0, None, True),
    "ST_": (0, None, True),
    "EV_": (1, None, True),
    "S_": (1, None, True),
    "C_": (1, None, True),
    "F_": (1, None, True),
    "K_": (1, None, True),
    "D_": (1, "D_LAST", True),
}


def _module(prefix):
    return R if prefix == "J_" else E


def _family(prefix, last):
    out = {}
    mod = _module(prefix)
    for name in dir(mod):
        if name.startswith(prefix) and name != last:
            v = getattr(mod, name)
            if type(v) is int:
                out[name] = v
    return out


def test_each_family_is_numbered_without_gap_or_clash():
    for prefix in FAMILIES:
        first, last, contiguous = FAMILIES[prefix]
        codes = _family(prefix, last)
        values = sorted(codes.values())
        assert values, prefix
        assert len(set(values)) == len(values), (prefix, codes)
        assert values[0] == first, (prefix, values[0])
        if contiguous:
            assert values == list(range(first, first + len(values))), (prefix, values)
        if last is not None:
            assert getattr(_module(prefix), last) == values[-1], (prefix, last)


def test_messages_and_refusals_do_not_overlap():
    m = _family("M_", None)
    r = _family("R_", "R_LAST")
    assert max(m.values()) < min(r.values())


def test_the_journal_format_numbers():
    # docs/journal.md: what boards already in service have written.
    assert (R.J_BOOT, R.J_ROUND, R.J_RESULT, R.J_VOID, R.J_PAYOUT) == (1, 2, 6, 8, 9)
    assert (R.J_METERS, R.J_CONFIG, R.J_DIAG, R.J_DAMAGE, R.J_LINK, R.J_PROVISION) == (
        18, 19, 20, 22, 23, 24)
    assert (R.J_REPL, R.J_DEPLOY, R.J_RECOVERY) == (25, 28, 30)
    assert (R.FLAG_WALL, R.FLAG_MAC, R.MAC_LEN) == (1, 2, 8)
    assert (E.D_SOLENOID, E.D_BELL, E.D_LAMPS, E.D_CLEAR_FAULT) == (1, 2, 3, 4)
    assert (E.V_STACKED, E.V_LEANING, E.V_OTHER, E.V_LAST) == (1, 2, 3, 7)
    assert (E.ST_IDLE, E.ST_OPEN, E.ST_PAYING, E.ST_HOLD) == (0, 2, 5, 6)
    assert (E.MAX_FAILED_BOOTS, E.STABLE_MS) == (3, 60000)


def test_a_void_reason_without_a_name_is_shown_as_its_number():
    from sicbo import journal, logtext, texts

    n = len(texts.VOID_NAMES)
    for reason, expect in ((n - 1, " reason " + texts.VOID_NAMES[n - 1]),
                           (n, " reason %d" % n), (200, " reason 200")):
        rec = journal.records(journal.encode(R.J_VOID, 5, 2, 1, 0, None,
                                             bytes((reason, 0, 0, 0, 0, 0, 0, 0))))[0]
        line = logtext.journal_line(rec)
        assert line.endswith(expect), (reason, line)


def test_times_an_area_is_won():
    from tables import table

    t = table()
    from sicbo import areas

    single_1 = areas.index_of("SINGLE_1")
    big = areas.index_of("BIG")
    assert t.wins(single_1, 1, 1, 2) == 2 and t.wins(single_1, 2, 1, 1) == 2
    assert t.wins(single_1, 2, 3, 4) == 0 and t.wins(single_1, 1, 1, 1) == 3
    assert t.wins(big, 4, 5, 6) == 1 and t.wins(big, 5, 5, 5) == 0  # a triple kills Big
