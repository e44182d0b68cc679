import gc

from sicbo import paytable
from tables import table


def lines(t):
    return dict((ln.code, ln) for ln in paytable.paytable(t))


def test_reference_ways_2004():
    p = lines(table(2004))
    assert p["SMALL"].ways == 105 and p["BIG"].ways == 105
    assert p["ODD"].ways == 108 and p["EVEN"].ways == 108
    assert p["SINGLE_4"].ways == 91 and p["DOUBLE_2"].ways == 16
    assert p["TRIPLE_5"].ways == 1 and p["ANY_TRIPLE"].ways == 6
    assert p["PAIR_1_6"].ways == 30 and p["COMBO_2_2_5"].ways == 3
    assert p["COMBO_1_5_6"].ways == 6 and p["FOUR_1_3_4_6"].ways == 24
    ways = [p["TOTAL_%d" % t].ways for t in range(4, 18)]
    assert ways == [3, 6, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 6, 3]


def test_reference_edges():
    p = lines(table(2004))
    assert p["SMALL"].edge_text() == "6/216" and p["SMALL"].edge_pct() == 2.778
    assert p["SINGLE_1"].edge_text() == "17/216" and p["SINGLE_1"].odds == (1, 2, 3)
    assert p["TRIPLE_1"].edge_text() == "65/216" and p["TRIPLE_1"].edge_pct() == 30.093
    assert p["TOTAL_5"].edge_pct() == 47.222
    p30 = lines(table(2004, odds={"TOTAL_5": 30, "TOTAL_16": 30}))
    assert p30["TOTAL_5"].edge_pct() == 13.889 and p30["TOTAL_5"].edge_text() == "30/216"


def test_odd_even_flagged_when_triples_do_not_kill_them():
    p = lines(table(2004))
    assert p["ODD"].edge_216 == 0 and p["ODD"].flagged() and p["EVEN"].flagged()
    assert not p["SMALL"].flagged()
    p = None  # one table at a time: two full tables fragment the board's heap
    gc.collect()
    p = lines(table(2004, triple_kills=["SMALL", "BIG", "ODD", "EVEN"]))
    assert p["ODD"].ways == 105 and not p["ODD"].flagged()


def test_2003_paytable_has_29_lines_none_flagged():
    p = paytable.paytable(table(2003))
    assert len(p) == 29
    assert not [ln.code for ln in p if ln.flagged()]
