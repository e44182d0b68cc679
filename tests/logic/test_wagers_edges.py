# Settling recorded wagers (sicbo.wagers.settle_wagers) on dice that are not
# dice: refused before any wager is looked at, the refusal naming the three
# values in the order they were given (the first die first), so that whoever
# entered them sees which one is wrong; and dice given in any order settle
# the same wagers the same way, the settlement keeping them as given; and a
# wager whose area is not a code (a number, None, bytes) is refused as an
# unknown area, never settled as the catalogue's first area.
from sicbo import areas
from sicbo.errors import InputError
from sicbo.wagers import settle_wagers
from tables import table

T2004 = table(2004)
WAGERS = [("SMALL", 10), ("SINGLE_2", 5), ("TOTAL_9", 3), ("PAIR_2_3", 2), ("BIG", 4)]


def test_dice_that_are_not_dice_are_refused_naming_them_in_their_order():
    for dice, named in (((7, 1, 2), "7 1 2"), ((1, 9, 2), "1 9 2"), ((0, 6, 6), "0 6 6"),
                        ((3, 4, 0), "3 4 0"), (("3", 4, 5), "'3' 4 5"),
                        ((2, 1.0, 3), "2 1.0 3")):
        try:
            settle_wagers(T2004, dice, WAGERS)
        except InputError as e:
            assert str(e) == "dice must be whole numbers from 1 to 6, got " + named, str(e)
        else:
            raise AssertionError("dice accepted: %r" % (dice,))


def test_the_order_of_the_dice_changes_no_payout():
    # 2-3-4: small, one 2, total 9 (6 to 1), the pair 2-3 (5 to 1); big loses.
    first = settle_wagers(T2004, (2, 3, 4), WAGERS)
    assert first.odds == [1, 1, 6, 5, 0] and first.payouts == [20, 10, 21, 12, 0], first.odds
    for dice in ((3, 2, 4), (4, 3, 2), (2, 4, 3), [4, 2, 3]):
        s = settle_wagers(T2004, dice, WAGERS)
        assert s.dice == tuple(dice), s.dice
        assert s.odds == first.odds and s.payouts == first.payouts, dice
        assert s.house_result() == first.house_result()


def test_a_wager_whose_area_is_not_a_code_is_refused_never_taken_as_the_first_area():
    first = areas.code(0)  # catalogue index 0, offered at this table: taken by its code
    assert T2004.cfg.is_offered(0)
    assert settle_wagers(T2004, (1, 2, 3), [(first, 10)]).wagers == [(first, 10)]
    for code in (0, 1, -1, None, 0.0, False, b"SMALL", ["SMALL"]):
        try:
            settle_wagers(T2004, (1, 2, 3), [("BIG", 5), (code, 10)])
        except InputError as e:
            assert str(e) == "wager 1: unknown area %r" % (code,), str(e)
        else:
            raise AssertionError("a wager on area %r was settled" % (code,))
