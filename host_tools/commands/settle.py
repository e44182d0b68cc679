"""`sicbo settle D1 D2 D3`: the winning areas of an outcome, and optionally the
payouts of recorded wagers, from the firmware's own settlement table."""

import json

from host_tools import jsonfile
from host_tools.cli import UsageError
from host_tools.rules import add_table_argument, load_table
from sicbo import areas
from sicbo.errors import InputError
from sicbo.wagers import settle_wagers

NAME = "settle"
HELP = "winning areas and odds for three dice (and payouts of a wager file)"


def add_arguments(p):
    p.add_argument("dice", nargs=3, metavar="D", help="the three dice, 1 to 6")
    add_table_argument(p)
    p.add_argument("--wagers", metavar="FILE",
                   help='JSON list of {"area": CODE, "stake": minor units} to settle')
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _dice(texts):
    dice = []
    for t in texts:
        try:
            d = int(t, 10)
        except ValueError:
            raise UsageError("dice must be whole numbers from 1 to 6, got %r" % t) from None
        if not 1 <= d <= 6:
            raise UsageError("dice must be whole numbers from 1 to 6, got %r" % t)
        dice.append(d)
    return dice


def read_wagers(path):
    """[(area, stake)] from a wager file, or UsageError naming what is wrong."""
    # Bounded, UTF-8, JSON with no key twice (host_tools/jsonfile.py).
    _, data = jsonfile.load(path, jsonfile.WAGERS_MAX, "wager file")
    if not isinstance(data, list):
        raise UsageError("wager file %s: must be a JSON list of {\"area\", \"stake\"}" % path)
    wagers = []
    for k, w in enumerate(data):
        if not isinstance(w, dict) or set(w) != {"area", "stake"}:
            raise UsageError("wager file %s: wager %d must be an object with exactly "
                             "\"area\" and \"stake\", got %s" % (path, k, json.dumps(w)))
        wagers.append((w["area"], w["stake"]))
    return wagers


def run(args):
    dice = _dice(args.dice)
    cfg, table = load_table(args.table)
    wins = table.winning_areas(*dice)
    settlement = None
    if args.wagers:
        wagers = read_wagers(args.wagers)
        try:
            settlement = settle_wagers(table, dice, wagers)
        except InputError as e:
            raise UsageError("%s: %s" % (args.wagers, e)) from None
    total = sum(dice)
    triple = dice[0] == dice[1] == dice[2]
    if args.json:
        out = {"dice": dice, "total": total, "triple": triple,
               "wins": [{"area": areas.code(a), "odds": o} for a, o in wins]}
        if settlement is not None:
            # payout: what the player gets, win + the stake returned (0 if lost)
            out["wagers"] = [{"area": c, "stake": s, "odds": o, "payout": p,
                              "win": p - s if o else 0, "stake_returned": s if o else 0}
                             for (c, s), o, p in zip(settlement.wagers, settlement.odds,
                                                     settlement.payouts, strict=True)]
            out["total_stake"] = settlement.total_stake
            out["total_paid"] = settlement.total_paid
            out["house_result"] = settlement.house_result()
        print(json.dumps(out))
        return 0
    print("%s  dice %d-%d-%d  total %d%s" % (cfg.name, dice[0], dice[1], dice[2], total,
                                            "  TRIPLE" if triple else ""))
    print("%d winning areas:" % len(wins))
    for a, o in wins:
        print("  %-16s pays %3d to 1" % (areas.code(a), o))
    if settlement is not None:
        print("wagers:")
        rows = zip(settlement.wagers, settlement.odds, settlement.payouts, strict=True)
        returned = 0
        for (c, s), o, p in rows:
            if o:
                # What the player gets: the win at the odds, and the stake back.
                returned += s
                what = "at %d to 1: wins %d + stake %d returned = %d" % (o, p - s, s, p)
            else:
                what = "loses (stake %d kept by the house)" % s
            print("  %-16s stake %10d  %s" % (c, s, what))
        paid = settlement.total_paid
        print("total staked %d; total paid %d (wins %d + stakes %d returned); house result %d"
              % (settlement.total_stake, paid, paid - returned, returned,
                 settlement.house_result()))
    return 0
