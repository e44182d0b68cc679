# Settlement of recorded wagers on a result (sicbo settle, the tests): kept
# out of sicbo/settle.py, which the controller holds in memory.

from sicbo import areas
from sicbo.errors import InputError
from sicbo.settle import outcome_index


class Settlement:
    """Result of settle_wagers: payouts in wager order and the totals, in minor
    currency units."""

    def __init__(self, dice, wagers, odds, payouts):
        self.dice = dice
        self.wagers = wagers  # [(area code, stake)]
        self.odds = odds  # odds each wager won at, 0 if lost
        self.payouts = payouts  # stake + stake * odds, or 0
        self.total_stake = sum(stake for _, stake in wagers)
        self.total_paid = sum(payouts)

    def house_result(self):
        """What the house keeps (negative when it pays out more)."""
        return self.total_stake - self.total_paid


def settle_wagers(table, dice, wagers):
    """Settle recorded wagers [(area code, stake)] on dice (d1, d2, d3).
    Everything is checked first: one bad wager refuses the whole lot."""
    if not isinstance(dice, (list, tuple)) or len(dice) != 3:
        raise InputError("dice must be three values, got %r" % (dice,))
    d1, d2, d3 = dice
    outcome_index(d1, d2, d3)
    if not isinstance(wagers, (list, tuple)):
        raise InputError("wagers must be a list, got %r" % (wagers,))
    checked = []
    for k, w in enumerate(wagers):
        if not isinstance(w, (list, tuple)) or len(w) != 2:
            raise InputError("wager %d: must be (area, stake), got %r" % (k, w))
        code, stake = w
        i = areas.index_of(code) if isinstance(code, str) else -1
        if i < 0:
            raise InputError("wager %d: unknown area %r" % (k, code))
        if not table.cfg.is_offered(i):
            raise InputError("wager %d: area %s is not offered at this table" % (k, code))
        if type(stake) is not int or stake <= 0:
            raise InputError("wager %d: stake must be a positive whole number of minor "
                             "units, got %r" % (k, stake))
        checked.append((i, code, stake))
    odds = []
    payouts = []
    for i, _code, stake in checked:
        o = table.odds_for(i, d1, d2, d3)
        odds.append(o)
        payouts.append(stake + stake * o if o else 0)
    return Settlement((d1, d2, d3), [(c, s) for _, c, s in checked], odds, payouts)
