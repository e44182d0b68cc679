# Settling recorded wagers (sicbo.wagers.settle_wagers) on dice that are not
# dice: refused before any wager is looked at, the refusal naming the three
# values in the order they were given (the first die first), so that whoever
# entered them sees which one is wrong; and dice given in any order settle
# the same wagers the same way, the settlement keeping them as given.
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
