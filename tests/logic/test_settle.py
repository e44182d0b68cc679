import micropython

from sicbo import areas, settle
from sicbo.errors import InputError
from sicbo.wagers import settle_wagers
from tables import table

T2004 = table(2004)


def wins(t, d1, d2, d3):
    return dict((areas.code(a), o) for a, o in t.winning_areas(d1, d2, d3))


def test_outcome_index_is_a_bijection_onto_56():
    seen = {}
    for a in range(1, 7):
        for b in range(a, 7):
            for c in range(b, 7):
                seen[settle.outcome_index(a, b, c)] = (a, b, c)
    assert sorted(seen) == list(range(56))


def test_outcome_index_ignores_dice_order():
    for d in ((1, 2, 3), (3, 2, 1), (2, 3, 1), (1, 3, 2), (3, 1, 2), (2, 1, 3)):
        assert settle.outcome_index(*d) == settle.outcome_index(1, 2, 3)


def test_triple_3_3_3_kills_small_and_big_but_pays_total_9():
    w = wins(T2004, 3, 3, 3)
    assert "SMALL" not in w and "BIG" not in w
    assert w["TOTAL_9"] == 6
    assert w["TRIPLE_3"] == 150 and w["ANY_TRIPLE"] == 24
    assert w["SINGLE_3"] == 3 and w["DOUBLE_3"] == 8
    # By the letter of Art. 7, Odd is not killed: 9 is odd.
    assert w["ODD"] == 1 and "EVEN" not in w
    assert "PAIR_3_4" not in w and "COMBO_3_3_4" not in w


def test_triple_with_odd_even_killed_by_house_option():
    t = table(triple_kills=["SMALL", "BIG", "ODD", "EVEN"])
    w = wins(t, 3, 3, 3)
    assert "ODD" not in w and "EVEN" not in w and w["TOTAL_9"] == 6
    assert wins(t, 1, 2, 6)["ODD"] == 1


def test_1_1_2_pays_pair_1_2_once():
    w = wins(T2004, 1, 1, 2)
    assert w["PAIR_1_2"] == 5
    s = settle_wagers(T2004, (1, 1, 2), [("PAIR_1_2", 100)])
    assert s.payouts == [600]
    assert w["COMBO_1_1_2"] == 50 and "COMBO_1_2_2" not in w
    assert w["SINGLE_1"] == 2 and w["SINGLE_2"] == 1 and w["DOUBLE_1"] == 8
    assert w["TOTAL_4"] == 50 and w["SMALL"] == 1 and w["EVEN"] == 1


def test_2_2_5_loses_four_1_2_3_4_and_four_2_3_4_5():
    w = wins(T2004, 2, 2, 5)
    for code in w:
        assert not code.startswith("FOUR_"), code
    w = wins(T2004, 2, 3, 5)
    assert w["FOUR_2_3_4_5"] == 7 and w["FOUR_1_2_3_5"] == 7 and "FOUR_1_2_3_4" not in w


def test_totals_on_triples():
    for n in range(1, 7):
        w = wins(T2004, n, n, n)
        if 4 <= 3 * n <= 17:
            assert w["TOTAL_%d" % (3 * n)] == areas.base_odds(areas.index_of("TOTAL_%d" % (3 * n)))
        assert "SMALL" not in w and "BIG" not in w
    # Totals 3 and 18 are not bets.
    assert len([c for c in wins(T2004, 1, 1, 1) if c.startswith("TOTAL_")]) == 0
    assert len([c for c in wins(T2004, 6, 6, 6) if c.startswith("TOTAL_")]) == 0


def test_2003_table_has_no_2004_bets():
    w = wins(table(2003), 1, 1, 2)
    assert set(w) == {"SMALL", "SINGLE_1", "SINGLE_2", "TOTAL_4"}


def test_settle_returns_the_lamp_frame():
    t = table(offered=["SMALL", "BIG", "TRIPLE_6"], lamp_order=[
        "PLACE_BETS", "SMALL", None, "BIG", "ALARM", "VOID", "PAYING", "TRIPLE_6", None,
    ])
    assert t.row_bytes == 2
    row = t.settle(1, 2, 3)
    assert bytes(row) == b"\x00\x02"  # channel 1: SMALL
    row = t.settle(6, 5, 6)
    assert bytes(row) == b"\x00\x08"  # channel 3: BIG
    row = t.settle(6, 6, 6)
    assert bytes(row) == b"\x00\x80"  # channel 7: TRIPLE_6; triple kills BIG
    assert settle.channel_on(row, 7) and not settle.channel_on(row, 3)


def test_channel_nine_lands_in_the_first_byte():
    frame = bytearray(2)
    settle.set_channel(frame, 9, 1)
    assert bytes(frame) == b"\x02\x00"
    settle.set_channel(frame, 9, 0)
    assert bytes(frame) == b"\x00\x00"


def test_table_fits_in_one_kib():
    assert T2004.size_bytes() <= 1024
    assert T2004.channels == 121 and T2004.row_bytes == 16


def _settle_all_locked(t, out):
    micropython.heap_lock()
    try:
        n = 0
        for a in range(1, 7):
            for b in range(1, 7):
                for c in range(1, 7):
                    row = t.settle(a, b, c)
                    n += row[15]
        out[0] = n
    finally:
        micropython.heap_unlock()


def test_settle_does_not_allocate():
    # On the unix port heap_lock makes any allocation a MemoryError.
    out = [0]
    _settle_all_locked(T2004, out)
    assert out[0] > 0


def test_bad_dice_refused():
    for dice in ((0, 1, 2), (1, 2, 7), (1.0, 2, 3), ("1", 2, 3), (True, 2, 3), (-1, 2, 3)):
        try:
            T2004.settle(*dice)
        except InputError as e:
            assert "1 to 6" in str(e)
        else:
            raise AssertionError("dice accepted: %r" % (dice,))


def test_wager_settlement_exact():
    s = settle_wagers(T2004, [4, 4, 4], [
        ("TRIPLE_4", 1000), ("ANY_TRIPLE", 250), ("BIG", 5000), ("TOTAL_12", 7),
        ("SINGLE_4", 3), ("SINGLE_1", 10)])
    assert s.odds == [150, 24, 0, 6, 3, 0]
    assert s.payouts == [151000, 6250, 0, 49, 12, 0]
    assert s.total_stake == 6270 and s.total_paid == 157311
    assert s.house_result() == 6270 - 157311


def test_wager_settlement_big_stakes_stay_exact():
    big = 10 ** 15 + 1
    s = settle_wagers(T2004, (1, 2, 3), [("COMBO_1_2_3", big)])
    assert s.payouts == [big * 31]


def _refused(dice, wagers, words):
    try:
        settle_wagers(T2004, dice, wagers)
    except InputError as e:
        assert words in str(e), str(e)
        return
    raise AssertionError("accepted %r %r" % (dice, wagers))


def test_wager_refusals():
    _refused((1, 2, 3), [("SMALL", 0)], "positive whole number")
    _refused((1, 2, 3), [("SMALL", -5)], "positive whole number")
    _refused((1, 2, 3), [("SMALL", 1.5)], "positive whole number")
    _refused((1, 2, 3), [("SMALL", True)], "positive whole number")
    _refused((1, 2, 3), [("SMALL", 10), ("NOPE", 10)], "wager 1: unknown area")
    _refused((1, 2, 7), [("SMALL", 10)], "1 to 6")
    _refused((1, 2), [("SMALL", 10)], "three values")
    _refused((1, 2, 3), [("SMALL",)], "(area, stake)")


def test_wager_on_area_not_offered_refused():
    t = table(2003)
    try:
        settle_wagers(t, (1, 2, 3), [("SMALL", 10), ("ODD", 10)])
    except InputError as e:
        assert "ODD is not offered" in str(e)
    else:
        raise AssertionError("bet on ODD accepted at a 2003 table")
