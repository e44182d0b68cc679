"""Property tests of the rules engine against an independent definition of
every bet, written here from rules.md (not from device/sicbo/areas.py)."""

import itertools
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from sicbo import areas, config, paytable, settle
from sicbo.wagers import settle_wagers

ALL_DICE = list(itertools.product(range(1, 7), repeat=3))
TOTAL_ODDS = {4: 50, 17: 50, 5: 18, 16: 18, 6: 14, 15: 14, 7: 12, 14: 12, 8: 8, 13: 8,
              9: 6, 10: 6, 11: 6, 12: 6}


def reference_odds(code, dice, kills, total_odds):
    """Odds paid on `code` for `dice` by rules.md, 0 if it loses."""
    parts = code.split("_")
    nums = [int(p) for p in parts[1:] if p.isdigit()]
    s = sum(dice)
    triple = len(set(dice)) == 1
    if triple and code in kills:
        return 0
    counts = {n: dice.count(n) for n in range(1, 7)}
    if code == "SMALL":
        return 1 if 4 <= s <= 10 else 0
    if code == "BIG":
        return 1 if 11 <= s <= 17 else 0
    if code == "ODD":
        return 1 if s % 2 else 0
    if code == "EVEN":
        return 0 if s % 2 else 1
    if code == "ANY_TRIPLE":
        return 24 if triple else 0
    kind = parts[0]
    if kind == "SINGLE":
        return counts[nums[0]]  # 1, 2 or 3 to 1
    if kind == "TRIPLE":
        return 150 if triple and dice[0] == nums[0] else 0
    if kind == "TOTAL":
        return total_odds[nums[0]] if s == nums[0] else 0
    if kind == "DOUBLE":
        return 8 if counts[nums[0]] >= 2 else 0
    if kind == "PAIR":
        return 5 if counts[nums[0]] and counts[nums[1]] else 0
    if kind == "COMBO":
        if len(set(nums)) == 3:
            return 30 if sorted(dice) == nums else 0
        return 50 if sorted(dice) == sorted(nums) else 0
    if kind == "FOUR":
        return 7 if len(set(dice)) == 3 and set(dice) <= set(nums) else 0
    raise AssertionError(code)


def table_for(edition=2004, offered=None, kills=("SMALL", "BIG"), odds=None, lamp_order=None):
    codes = list(areas.codes(areas.area_count(edition)))
    offered = codes if offered is None else offered
    t = {"name": "t", "edition": edition, "shaker": "solenoid", "offered": offered,
         "triple_kills": list(kills), "approval": {
             "reference": "R", "applied": "2026-11-02", "effective": "2026-11-05"},
         "lamp_order": lamp_order if lamp_order is not None else ["PAYING"] + offered}
    if odds:
        t["odds"] = odds
    return settle.SettlementTable(config.parse_table(t))


def test_every_outcome_every_area_2004():
    t = table_for(2004)
    for dice in ALL_DICE:
        for area in range(117):
            code = areas.code(area)
            assert t.odds_for(area, *dice) == reference_odds(
                code, list(dice), ("SMALL", "BIG"), TOTAL_ODDS), (code, dice)


@st.composite
def tables(draw):
    edition = draw(st.sampled_from([2003, 2004]))
    codes = list(areas.codes(areas.area_count(edition)))
    offered = draw(st.lists(st.sampled_from(codes), min_size=1, unique=True))
    kills = [c for c in ("SMALL", "BIG") if c in offered]
    kills += [c for c in ("ODD", "EVEN") if c in offered and draw(st.booleans())]
    odds = {}
    total_odds = dict(TOTAL_ODDS)
    if edition == 2004:
        o5 = draw(st.integers(18, 30))
        o6 = draw(st.integers(14, 18))
        for t, o in ((5, o5), (16, o5), (6, o6), (15, o6)):
            total_odds[t] = o
            if "TOTAL_%d" % t in offered:
                odds["TOTAL_%d" % t] = o
    channels = offered + ["PLACE_BETS", "ALARM"] + [None] * draw(st.integers(0, 9))
    lamp_order = draw(st.permutations(channels))
    return (table_for(edition, offered, kills, odds, list(lamp_order)), offered, kills,
            total_odds)


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from(ALL_DICE))
def test_random_tables_agree_with_the_rules(spec, dice):
    t, offered, kills, total_odds = spec
    row = t.settle(*dice)
    for c, name in enumerate(t.cfg.lamp_order):
        expected = 0
        if name in offered:
            expected = reference_odds(name, list(dice), kills, total_odds)
        assert bool(settle.channel_on(row, c)) == bool(expected), (name, dice)
        if name in offered:
            assert t.odds_for(areas.index_of(name), *dice) == expected, (name, dice)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ALL_DICE))
def test_permutations_settle_identically(dice):
    t = table_for(2004)
    rows = {bytes(t.settle(*p)) for p in itertools.permutations(dice)}
    assert len(rows) == 1
    wagers = [(c, 7) for c in areas.codes()]
    payouts = {tuple(settle_wagers(t, p, wagers).payouts)
               for p in itertools.permutations(dice)}
    assert len(payouts) == 1


def reference_edge(code, kills=("SMALL", "BIG"), total_odds=TOTAL_ODDS):
    back = sum(Fraction(o + 1) for d in ALL_DICE
               if (o := reference_odds(code, list(d), kills, total_odds)))
    return 1 - back / 216


def test_edges_match_reference_figures_exactly():
    lines = {ln.code: ln for ln in paytable.paytable(table_for(2004))}
    for code, ln in lines.items():
        assert Fraction(ln.edge_216, 216) == reference_edge(code), code
    # The figures of rules.md, to the digit.
    assert Fraction(lines["SMALL"].edge_216, 216) == Fraction(6, 216)
    assert Fraction(lines["SINGLE_2"].edge_216, 216) == Fraction(17, 216)
    assert Fraction(lines["TRIPLE_2"].edge_216, 216) == Fraction(65, 216)
    assert lines["TOTAL_5"].edge_pct() == 47.222
    t30 = table_for(2004, odds={"TOTAL_5": 30, "TOTAL_16": 30})
    assert {ln.code: ln for ln in paytable.paytable(t30)}["TOTAL_16"].edge_pct() == 13.889


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ALL_DICE),
       st.lists(st.tuples(st.sampled_from(areas.codes()), st.integers(1, 10 ** 12)),
                max_size=30))
def test_wager_payouts_are_exact_integers(dice, wagers):
    t = table_for(2004)
    s = settle_wagers(t, dice, wagers)
    for (code, stake), payout in zip(wagers, s.payouts, strict=True):
        o = reference_odds(code, list(dice), ("SMALL", "BIG"), TOTAL_ODDS)
        assert payout == (stake * (o + 1) if o else 0)
        assert type(payout) is int
    assert s.total_paid == sum(s.payouts)
