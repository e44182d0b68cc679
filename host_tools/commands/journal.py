"""`sicbo journal FILE`: read a journal pulled from a table (`sicbo diag
--pull-journal FILE`, or a copy of the board's /journal segments) with the
firmware's own record format, replay, recall and meters: what compliance staff
need for a disputed round, offline."""

import json
import os

from host_tools.cli import UsageError
from host_tools.rules import add_table_argument, load_table

NAME = "journal"
HELP = "decode a table's journal: records, game recall and meters"


def add_arguments(p):
    p.add_argument("file", nargs="+", metavar="FILE",
                   help="journal file(s) or segment files (j00000001.log ...), oldest first; "
                        "a folder means every segment in it")
    add_table_argument(p)
    p.add_argument("--records", type=int, metavar="N", default=0,
                   help="also list the last N records (0: none, -1: all)")
    p.add_argument("--recall", type=int, metavar="N", default=10,
                   help="game recall of the last N rounds (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def segments(paths):
    """[(name, bytes)] of the journal files, in the order given (a folder: its
    j*.log segments in number order)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.startswith("j") and n.endswith(".log"))
            if not names:
                raise UsageError("no journal segments (j*.log) in %s" % path)
            out += [(os.path.join(path, n), _read(os.path.join(path, n))) for n in names]
        else:
            out.append((path, _read(path)))
    return out


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UsageError("cannot read %s: %s" % (path, e.strerror or e)) from None


def _round(r, table):
    return {
        "round": r.round,
        "status": r.status,
        "dice": list(r.dice) if r.dice is not None else None,
        "first_dice": list(r.first_dice) if r.first_dice is not None else None,
        "corrections": len(r.corrections),
        "void_reason": _void_name(r.void_reason) if r.void_reason else None,
        "started": {"boot": r.started[0], "ticks": r.started[1],
                    "wall": _wall(r.started[2])},
        "wins": [{"area": code, "odds": odds} for code, odds in r.winning_areas(table)],
    }


def _void_name(reason):
    from sicbo import texts

    return texts.VOID_NAMES[reason] if reason < len(texts.VOID_NAMES) else str(reason)


def _wall(seconds):
    from sicbo.logtext import wall_text

    return wall_text(seconds) if seconds is not None else None


def run(args):
    from sicbo import journal, recall
    from sicbo.logtext import journal_line

    _cfg, table = load_table(args.table)
    segs = segments(args.file)
    rp = journal.Replay()
    rc = recall.Recall(table)
    records = []
    scanned = 0
    for _name, data in segs:
        scanned += len(data)
        rp.feed(data)
        rc.feed(data)
        records += journal.records(data)
    torn = scanned - sum(r.length for r in records)
    rounds = rc.last(args.recall) if args.recall > 0 else []
    shown = records if args.records < 0 else records[-args.records:] if args.records else []
    if args.json:
        meters = rc.meters.as_dict(table)
        print(json.dumps({
            "segments": len(segs), "bytes": scanned, "records": len(records),
            "unreadable_bytes": torn, "last_seq": rp.seq, "rounds_seen": rp.round,
            "boots": rp.boot, "state": _state(rp.state), "open_round": rp.open_seq != 0,
            "recall": [_round(r, table) for r in rounds], "meters": meters,
            "records_listed": [journal_line(r, table) for r in shown]}))
        return 0
    print("journal: %d segment(s), %d bytes, %d records (seq 1..%d), %d boot(s)"
          % (len(segs), scanned, len(records), rp.seq, rp.boot))
    if torn:
        print("         %d bytes not readable as records (a record torn by a power cut, "
              "or damage): skipped, never used" % torn)
    print("state:   %s, last round %d%s" % (_state(rp.state), rp.round,
                                            " (unfinished)" if rp.open_seq else ""))
    if shown:
        print()
        for r in shown:
            print(journal_line(r, table))
    if rounds:
        print()
        print("%6s %-7s %-6s %-20s %s" % ("round", "status", "dice", "started", "winning areas"))
        for r in rounds:
            d = _round(r, table)
            dice = "-".join(str(x) for x in d["dice"]) if d["dice"] else "-"
            when = d["started"]["wall"] or "boot %d" % r.started[0]
            what = ("void: " + d["void_reason"]) if d["void_reason"] else " ".join(
                w["area"] for w in d["wins"])
            if d["first_dice"] and d["first_dice"] != d["dice"]:
                what = "corrected from %s; %s" % ("-".join(map(str, d["first_dice"])), what)
            print("%6d %-7s %-6s %-20s %s" % (r.round, r.status, dice, when, what))
    m = rc.meters.as_dict(table)
    print()
    print("meters:  " + ", ".join("%s %d" % (k, m[k]) for k in
                                  ("rounds", "paid", "voids", "alarms", "violations",
                                   "corrections", "refusals", "holds")))
    return 0


def _state(st):
    from sicbo import texts

    return texts.STATE_NAMES[st] if st < len(texts.STATE_NAMES) else str(st)
