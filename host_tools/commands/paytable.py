"""`sicbo paytable`: ways to win, odds and the exact house edge of every
offered area, computed from the firmware's settlement table."""

import json

from host_tools.rules import add_table_argument, load_table
from sicbo import areas, kinds, paytable

NAME = "paytable"
HELP = "ways, odds and exact house edge of every offered area; flags edges <= 0"


def add_arguments(p):
    add_table_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _odds_text(line):
    if isinstance(line.odds, tuple):
        return "/".join(str(o) for o in line.odds)
    return str(line.odds)


# Bets shown under one heading: Big with Small, Even with Odd.
_GROUP = {kinds.BIG: kinds.SMALL, kinds.EVEN: kinds.ODD}
_GROUP_NAMES = {kinds.SMALL: "Small / Big", kinds.ODD: "Odd / Even"}


def run(args):
    cfg, table = load_table(args.table)
    lines = paytable.paytable(table)
    if args.json:
        print(json.dumps({
            "edition": cfg.edition,
            "name": cfg.name,
            "approval": cfg.approval["reference"],
            "triple_kills": [areas.code(a) for a in cfg.triple_kills],
            "areas": [{"area": ln.code, "odds": list(ln.odds) if isinstance(ln.odds, tuple)
                       else ln.odds, "ways": ln.ways, "edge": ln.edge_text(),
                       "edge_pct": ln.edge_pct(), "flag": ln.flagged()} for ln in lines]}))
        return 0
    print("%s (edition %d, approval %s)" % (cfg.name, cfg.edition, cfg.approval["reference"]))
    print("A triple kills: %s" % ", ".join(areas.code(a) for a in cfg.triple_kills))
    kind = None
    for ln in lines:
        group = _GROUP.get(ln.kind, ln.kind)
        if group != kind:
            kind = group
            print()
            print(_GROUP_NAMES.get(kind, areas.KIND_NAMES[kind]))
            print("  %-16s %8s %9s %9s %8s" % ("area", "odds", "ways/216", "edge", "edge %"))
        print("  %-16s %8s %9d %9s %8.3f%s" % (
            ln.code, _odds_text(ln), ln.ways, ln.edge_text(), ln.edge_pct(),
            "  <-- house edge <= 0" if ln.flagged() else ""))
    flagged = [ln.code for ln in lines if ln.flagged()]
    print()
    if flagged:
        print("FLAGGED: %d area(s) with a house edge of 0 or below: %s"
              % (len(flagged), ", ".join(flagged)))
    else:
        print("No offered area has a house edge of 0 or below.")
    return 0
