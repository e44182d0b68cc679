# Area codes at the edge of the catalogue: a code cut short inside a
# two-digit total ("TOTAL_1", the start of TOTAL_10..TOTAL_17) is an unknown
# area with its clear refusal, in a table's configuration and in a wager,
# never a crash; the two-digit totals themselves are areas and pay.
from sicbo import areas
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
