# The paytable of a table: for each offered area, the ways to win out of the
# 216 equally likely ordered outcomes, the odds and the exact house edge.
# Computed from the settlement table itself, so it reports what the table pays.

from micropython import const

from sicbo import areas, kinds

ORDERED_OUTCOMES = const(216)


class PaytableLine:
    def __init__(self, area, odds, ways, returned):
        self.area = area
        self.code = areas.code(area)
        self.kind = areas.kind_of(area)
        self.odds = odds  # SINGLE: (1, 2, 3) per matching die
        self.ways = ways  # outcomes out of 216 that pay anything
        # Sum over the 216 outcomes of the return per unit staked (stake
        # included); edge = (216 - returned) / 216 exactly.
        self.returned = returned
        self.edge_216 = ORDERED_OUTCOMES - returned

    def edge_text(self):
        return "%d/%d" % (self.edge_216, ORDERED_OUTCOMES)

    def edge_pct(self):
        """Edge in percent, rounded to 3 decimals (from the exact fraction)."""
        # Integer rounding of 100000 * edge / 216, half away from zero.
        n = self.edge_216 * 100000
        q = (abs(n) * 2 + ORDERED_OUTCOMES) // (2 * ORDERED_OUTCOMES)
        return (q if n >= 0 else -q) / 1000

    def flagged(self):
        """A bet whose house edge is zero or negative must be looked at."""
        return self.edge_216 <= 0


def paytable(table):
    """PaytableLine for every offered area, in catalogue order."""
    lines = []
    for area in table.cfg.offered:
        ways = 0
        returned = 0
        for d1 in range(1, 7):
            for d2 in range(1, 7):
                for d3 in range(1, 7):
                    odds = table.odds_for(area, d1, d2, d3)
                    if odds:
                        ways += 1
                        returned += odds + 1
        c = table.area_channel[area]
        if areas.kind_of(area) == kinds.SINGLE:
            base = table.odds[c]
            odds_shown = (base, 2 * base, 3 * base)
        else:
            odds_shown = table.odds[c]
        lines.append(PaytableLine(area, odds_shown, ways, returned))
    return lines
