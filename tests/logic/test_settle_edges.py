# Area codes at the edge of the catalogue: a code cut short inside a
# two-digit total ("TOTAL_1", the start of TOTAL_10..TOTAL_17) is an unknown
# area with its clear refusal, in a table's configuration and in a wager,
# never a crash; the two-digit totals themselves are areas and pay. And the
# areas a table leaves out of its layout pay nothing, whatever the dice.
from sicbo import areas, kinds
from sicbo.errors import InputError
from sicbo.wagers import settle_wagers
from tables import refusal, table, table_dict

T2004 = table(2004)


def test_a_total_cut_short_after_its_tens_digit_is_no_area():
    assert areas.index_of("TOTAL_1") == -1
    assert areas.index_of("TOTAL_10") == areas.index_of("TOTAL_4") + 6
    assert areas.index_of("TOTAL_17") == areas.index_of("TOTAL_4") + 13
    for code in ("TOTAL_1", "TOTAL_", "TOTAL_18", "TOTAL_170", "TOTAL_10_"):
        assert areas.index_of(code) == -1, code


def test_a_table_offering_total_1_is_refused_by_name():
    e = refusal(table_dict(offered=["SMALL", "TOTAL_1"]))
    assert e.field == "offered[1]", e.field
    assert "unknown area 'TOTAL_1'" in e.message, e.message


def test_a_wager_on_total_1_is_refused_and_total_10_pays():
    try:
        settle_wagers(T2004, (4, 3, 3), [("TOTAL_10", 10), ("TOTAL_1", 10)])
    except InputError as e:
        assert "wager 1: unknown area 'TOTAL_1'" in str(e), str(e)
    else:
        raise AssertionError("a wager on TOTAL_1 was accepted")
    s = settle_wagers(T2004, (4, 3, 3), [("TOTAL_10", 10), ("TOTAL_17", 10)])
    assert s.odds == [6, 0] and s.payouts == [70, 0]


# The areas a table does not offer have no lamp channel; SettlementTable
# odds_for of such an area is 0 whatever the dice: the table takes no bet on
# it, so it never pays (wagers.settle_wagers refuses it first, paytable and
# winning_areas never ask, but odds_for is the table's own answer).
def _pays_nothing_off_its_layout(t):
    for area in range(kinds.AREA_COUNT_2004):
        if t.cfg.is_offered(area):
            continue
        for d1 in range(1, 7):
            for d2 in range(1, 7):
                for d3 in range(1, 7):
                    assert t.odds_for(area, d1, d2, d3) == 0, (areas.code(area), d1, d2, d3)


def test_an_area_a_reduced_table_does_not_offer_pays_nothing():
    t = table(2004, offered=["SMALL", "BIG", "SINGLE_3", "DOUBLE_2", "TOTAL_10"])
    _pays_nothing_off_its_layout(t)
    # The areas it offers still pay on these dice (so the dice do win bets).
    assert t.odds_for(areas.index_of("DOUBLE_2"), 2, 2, 6) == 8
    assert t.odds_for(areas.index_of("SINGLE_3"), 3, 3, 4) == 2
    assert t.odds_for(areas.index_of("TOTAL_10"), 3, 3, 4) == 6
    # Winning areas on the same dice that the table does not offer: no odds.
    assert t.odds_for(areas.index_of("COMBO_2_2_6"), 2, 2, 6) == 0
    assert t.odds_for(areas.index_of("PAIR_3_4"), 3, 3, 4) == 0


def test_a_2003_table_pays_nothing_on_the_areas_of_2004():
    t = table(2003)
    assert t.cfg.offered == tuple(range(kinds.AREA_COUNT_2003))
    _pays_nothing_off_its_layout(t)
    assert t.odds_for(areas.index_of("TOTAL_10"), 4, 3, 3) == 6
