"""`sicbo journal FILE`: read a journal pulled from a table (`sicbo diag
--pull-journal FILE`, or a copy of the board's /journal segments) with the
firmware's own record format, replay, recall and meters: what compliance staff
need for a disputed round, offline.

`--json` lists every record with its fields by name (docs/journal.md, "JSON
output"); damage (torn or corrupt bytes, CRC-valid records that their type does
not allow) is reported as data, never acted on, never a traceback.
`--round N --svg OUT.svg` draws round N on the table's layout
(host_tools/layout_svg.py)."""

import binascii
import json
import os
import struct

from host_tools.cli import UsageError
from host_tools.rules import add_table_argument, load_table
from sicbo import records as R

NAME = "journal"
HELP = "decode a table's journal: records, game recall, meters, a picture of a round"

# Every round is kept on the host (the board keeps the last 10).
ALL_ROUNDS = 1 << 30


def add_arguments(p):
    p.add_argument("file", nargs="+", metavar="FILE",
                   help="journal file(s) or segment files (j00000001.log ...), oldest first; "
                        "a folder means every segment in it")
    add_table_argument(p)
    p.add_argument("--board", metavar="FILE",
                   help="the board file the table ran with: with the table file, its "
                        "configuration id is checked against the journal's (winning areas "
                        "come from the table file)")
    p.add_argument("--records", type=int, metavar="N", default=None,
                   help="also list the last N records (0: none, -1: all; "
                        "default: none, all with --json)")
    p.add_argument("--recall", type=int, metavar="N", default=10,
                   help="game recall of the last N rounds (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--round", type=int, metavar="N", dest="round_id",
                   help="the round to draw with --svg (default: the newest)")
    p.add_argument("--svg", metavar="OUT.svg",
                   help="draw the round on the table's layout, winning areas lit")
    p.add_argument("--verify", metavar="KEYSTORE",
                   help="verify the journal's MAC chain with the key store (sicbo deploy "
                        "--provision made it): every alteration named; exit status 0 only "
                        "when the journal verified (docs/tamper-evidence.md)")
    p.add_argument("--head", metavar="SEQ:HASH",
                   help="with --verify: a head taken off the table earlier (diag status, a "
                        "meters checkpoint, the floor): truncation and rollback against it")
    p.add_argument("--table-id", metavar="ID", dest="table_id",
                   help="with --verify: the table the journal is to be of; records under "
                        "other tables' chains are replayed (default: the table whose chains "
                        "verify most of its records, named in the output)")


def segments(paths):
    """[(name, bytes)] of the journal files, in the order given (a folder: its
    j*.log segments in number order; an empty folder is an empty journal, a
    folder with other files only is not a journal)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            try:
                listed = os.listdir(path)
            except OSError as e:
                raise UsageError("cannot read %s: %s" % (path, e.strerror or e)) from None
            names = sorted(n for n in listed if n.startswith("j") and n.endswith(".log"))
            if not names and listed:
                raise UsageError("not a journal: %s has no journal segments (j*.log)" % path)
            out += [(os.path.join(path, n), _read(os.path.join(path, n))) for n in names]
        else:
            out.append((path, _read(path)))
    return out


def torn_record_only(data):
    """True when data is the start of one record cut short (a journal whose
    first record a power cut tore): its magic byte, and fewer bytes than
    the length it declares."""

    if not data or data[0] != R.MAGIC:
        return False
    if len(data) < 4:
        return True
    length = data[2] | (data[3] << 8)
    return R.MIN_LEN <= length <= R.MAX_LEN and len(data) < length


def check_is_journal(segs, reading):
    """UsageError when there are bytes but not one valid record, and they
    are not a torn first record either: not a journal (a JSON file, ...)."""
    if reading.records or not reading.bytes:
        return
    for name, data in segs:
        if data and not torn_record_only(data):
            raise UsageError("not a journal: %s has no valid record" % name)


def plural(n, word):
    """'1 record', '2 records'."""
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UsageError("cannot read %s: %s" % (path, e.strerror or e)) from None


# ---- Reading -------------------------------------------------------------------


def damage_name(code):
    """The text of a damage code E.BAD_* (texts.DAMAGE_NAMES)."""
    from sicbo import texts

    names = getattr(texts, "DAMAGE_NAMES", ())
    if 0 < code < len(names):
        return names[code]
    return "damage code %d" % code


class Reading:
    """A journal read the way the board reads it: the round machine's own
    replay (sicbo.roundstate.RoundState, which checks every record against its
    type, the sequence, the round and the state, and applies only the good
    ones) and recall, fed only the records the replay applied; plus what the
    board skips, with where it is: damaged stretches and damaged records."""

    def __init__(self, segs, table, keep=ALL_ROUNDS):
        from sicbo import journal, recall
        from sicbo.roundstate import RoundState

        self.table = table
        self.segments = len(segs)
        self.bytes = 0
        self.replay = RoundState()
        self.recall = recall.Recall(table, keep)
        self.replay.meters = self.recall.meters  # counted where the replay applies
        scanner = journal.Scanner()  # one for the whole journal, as the board's
        self.records = []  # [(segment name, Record, damage code or -1 duplicate)]
        self.damage = []  # dicts, in journal order
        self.duplicates = 0
        for name, data in segs:
            self.bytes += len(data)
            found = []
            scanner.walk(data, lambda b, o, gap, out=found: out.append((o, gap)))
            recs = [journal.Record(data, o) for o, _gap in found]
            self._stretches(name, data, recs)
            for (off, gap), rec in zip(found, recs, strict=True):
                code = self.replay.take(data, off, gap)
                self.records.append((name, rec, code))
                if code < 0:
                    self.duplicates += 1
                elif code:
                    self.damage.append({
                        "kind": "record", "segment": name, "offset": rec.offset,
                        "bytes": rec.length, "seq": rec.seq, "round": rec.round,
                        "type": _type_name(rec.type), "code": code,
                        "reason": damage_name(code)})
                else:
                    self._recall(name, rec)

    def _stretches(self, name, data, recs):
        # Bytes between valid records are corruption; after the last one, a
        # record torn by a power cut (the scanner's rules).
        off = 0
        for rec in recs:
            if rec.offset > off:
                self.damage.append({"kind": "corrupt", "segment": name, "offset": off,
                                    "bytes": rec.offset - off})
            off = rec.offset + rec.length
        if off < len(data):
            self.damage.append({"kind": "torn", "segment": name, "offset": off,
                                "bytes": len(data) - off})

    def _recall(self, name, rec):
        # Should recall still fail on a record the replay accepted, the record
        # is reported as damage and the reading goes on: never a traceback.
        try:
            self.recall.apply(rec)
        except (ValueError, IndexError, KeyError, TypeError, struct.error) as e:
            self.damage.append({
                "kind": "unusable", "segment": name, "offset": rec.offset,
                "bytes": rec.length, "seq": rec.seq, "round": rec.round,
                "type": _type_name(rec.type), "code": None, "reason": "recall: %s" % e})

    def unreadable_bytes(self):
        return sum(d["bytes"] for d in self.damage if d["kind"] in ("corrupt", "torn"))

    def round_info(self, rid):
        for r in self.recall.rounds:
            if r.round == rid:
                return r
        return None


def dice_ok(dice):
    return dice is not None and len(dice) == 3 and all(
        type(d) is int and 1 <= d <= 6 for d in dice)


def winning(r, table):
    """[(area code, odds)] of a recalled round, [] when its dice are not dice."""
    if not dice_ok(r.dice):
        return []
    return r.winning_areas(table)


# ---- Records as data -------------------------------------------------------------


def _type_name(t):
    from sicbo import texts

    return texts.J_NAMES[t] if 0 < t < len(texts.J_NAMES) else "type%d" % t


def _name(names, i):
    return names[i] if 0 <= i < len(names) and names[i] != "?" else None


def _message(code, detail):
    from sicbo import texts
    from sicbo.logtext import message_text

    known = texts.text(code) != "?"
    return {"code": code, "text": message_text(code, detail) if known else None}


def _declared(t):
    from sicbo import records as R

    for decl in R.RECORD_TYPES:
        if decl[0] == t:
            return decl
    return None


def fields(rec, table=None):
    """The type's own fields of a record, by name, as its declaration in
    sicbo/records.py gives them (docs/journal.md, "JSON output"): a coded
    field with names as its name and `<field>_code`; dice as a list; a
    message as {code, text}."""
    from sicbo import records as R
    from sicbo import texts

    t = rec.type
    if t == R.J_METERS:
        return {"meters": _meters(rec.payload, table), "head": _carried(rec)}
    decl = _declared(t)
    if decl is None:
        return {}
    least = R.VARIABLE.get(t, R.PAYLOAD)
    p = bytes(rec.payload) + bytes(least)  # a short payload reads as zeros
    out = {}
    for name, off, size, kind, _lo, _hi, names in decl[2]:
        if kind == "dice":
            out[name] = list(p[off:off + size])
        elif kind == "bytes":
            out[name] = binascii.hexlify(p[off:off + size]).decode()
        elif kind == "u32":
            out[name] = struct.unpack_from("<I", p, off)[0]
        elif kind == "u16":
            out[name] = struct.unpack_from("<H", p, off)[0]
        elif kind == "wall":
            seconds = struct.unpack_from("<I", p, off)[0]
            out[name] = _wall(seconds or None)
            out[name + "_seconds"] = seconds or None
        elif kind == "text":
            out[name] = bytes(rec.payload[off:]).decode("utf-8", "replace")
        elif names == "MESSAGE":
            out[name] = _message(p[off], p[R.P_DETAIL])
        elif names is not None:
            out[name] = _name(getattr(texts, names), p[off])
            out[name + "_code"] = p[off]
        else:
            out[name] = p[off]
    if t == R.J_DEPLOY:
        # "+path" copied, "-path" removed, one a line.
        lines = [x for x in out["files"].split("\n") if x]
        out["files"] = {"copied": [x[1:] for x in lines if x[0] == "+"],
                        "removed": [x[1:] for x in lines if x[0] == "-"]}
    if t == R.J_DAMAGE:
        # What the board found: another record, named as the host names it.
        code = out["code_code"]
        out = {"found": {"code": code, "reason": damage_name(code),
                         "type": _type_name(out["type"]), "seq": out["seq"]}}
    return out


def meters_dict(meters, table):
    """Meters.as_dict, with the voids per reason by name as well."""
    from sicbo import texts

    d = meters.as_dict(table)
    counts = d.get("void_reasons") or []
    d["void_reasons_by_name"] = {
        (texts.VOID_NAMES[i] if 0 < i < len(texts.VOID_NAMES) else "reason %d" % i): n
        for i, n in enumerate(counts) if n}
    return d


def _meters(payload, table):
    from sicbo import records as R
    from sicbo.meters import Meters

    off = R.P_CHANNELS
    if len(payload) < off + 2:
        return None
    n = struct.unpack_from("<H", payload, off)[0]
    m = Meters(n)
    if not m.load(payload):
        return None
    same = table is not None and n == table.channels
    d = meters_dict(m, table if same else None)
    if not same:
        d["wins_per_channel"] = list(m.wins)
    return d


def _carried(rec):
    # The chain's head a meters checkpoint names ("SEQ:HASH"), None if none.
    from host_tools.chaincheck import carried_head
    from sicbo import chain as C
    from sicbo import records as R

    raw = bytes(R.HEADER) + bytes(rec.payload) + bytes(R.CRC_LEN)  # the payload is what counts
    h = carried_head(raw)
    return C.head_text(*h) if h is not None else None


def record_dict(name, rec, code, table=None):
    from sicbo.logtext import wall_text

    d = {"seq": rec.seq, "boot": rec.boot, "round": rec.round, "type": _type_name(rec.type),
         "type_code": rec.type, "wall": wall_text(rec.wall) if rec.wall is not None else None,
         "wall_seconds": rec.wall, "ticks": rec.ticks, "length": rec.length,
         "segment": name, "offset": rec.offset,
         "payload": binascii.hexlify(bytes(rec.payload)).decode(),
         "authenticated": rec.mac is not None,
         "mac": binascii.hexlify(rec.mac).decode() if rec.mac is not None else None}
    d.update(fields(rec, table))
    d["damage"] = {"code": code, "reason": damage_name(code)} if code > 0 else None
    d["duplicate"] = code < 0
    return d


def record_line(rec, code, table):
    from sicbo.logtext import journal_line

    if code > 0:
        return journal_line(rec) + "  DAMAGED: %s (not used)" % damage_name(code)
    if code < 0:
        return journal_line(rec) + "  (duplicate: ignored)"
    return journal_line(rec, table)


# ---- Rounds ------------------------------------------------------------------------


def round_dict(r, table, damaged=(), restart=None):
    """A recalled round as data. restart: the reset cause of the board's last
    boot while the round was unfinished (Recall.restarts), or None."""
    return {
        "round": r.round,
        "status": r.status,
        "dice": list(r.dice) if r.dice is not None else None,
        "first_dice": list(r.first_dice) if r.first_dice is not None else None,
        "corrections": len(r.corrections),
        "void_reason": void_name(r.void_reason) if r.void_reason else None,
        # What cut it: a "power cut" void says only that the board restarted
        # before the bell; its boot's reset cause says how.
        "restart": reset_name(restart) if restart is not None else None,
        "started": {"boot": r.started[0], "ticks": r.started[1],
                    "wall": _wall(r.started[2])},
        "wins": [{"area": code, "odds": odds} for code, odds in winning(r, table)],
        "damaged": r.round in damaged or not (r.dice is None or dice_ok(r.dice)),
    }


def reset_name(cause):
    from sicbo import texts
    from sicbo.logtext import name_of

    return name_of(texts.RESET_NAMES, cause, "reset cause")


def void_name(reason):
    from sicbo import texts

    return texts.VOID_NAMES[reason] if reason < len(texts.VOID_NAMES) else str(reason)


def _wall(seconds):
    from sicbo.logtext import wall_text

    return wall_text(seconds) if seconds is not None else None


def _state(st):
    from sicbo import texts

    return texts.STATE_NAMES[st] if st < len(texts.STATE_NAMES) else str(st)


def _damage_line(d):
    if d["kind"] == "torn":
        return ("%s @%d: %s torn at the end of the segment (a record cut by a power "
                "cut): discarded" % (d["segment"], d["offset"], plural(d["bytes"], "byte")))
    if d["kind"] == "corrupt":
        return ("%s @%d: %s between records: skipped"
                % (d["segment"], d["offset"], plural(d["bytes"], "corrupt byte")))
    return ("%s @%d: record seq %d (%s, round %d): %s: not used"
            % (d["segment"], d["offset"], d["seq"], d["type"], d["round"], d["reason"]))


def svg_of_round(reading, cfg, table, rid, path):
    """Draw round rid (None: the newest) of a reading to path; the round id."""
    from host_tools import layout_svg

    rounds = reading.recall.rounds
    if not rounds:
        raise UsageError("no round in the journal to draw")
    r = rounds[-1] if rid is None else reading.round_info(rid)
    if r is None:
        raise UsageError("round %d is not in the journal (rounds %d..%d)"
                         % (rid, rounds[0].round, rounds[-1].round))
    damaged = {d["round"]: d["reason"] for d in reading.damage if d.get("round") == r.round}
    svg = layout_svg.render_round(cfg, table, r, damage=damaged.get(r.round))
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
    except OSError as e:
        raise UsageError("cannot write %s: %s" % (path, e.strerror or e)) from None
    return r.round


def verification(segs, store, head=None, table=None):
    """The MAC chain of the journal's segments verified (host_tools/chaincheck.py)."""
    from host_tools import chaincheck
    from sicbo import journal

    found = []
    stretches = []
    scanner = journal.Scanner()
    for name, data in segs:
        offs = []
        scanner.walk(data, lambda b, o, gap, out=offs: out.append(o))
        off = 0
        for o in offs:
            if o > off:
                torn = chaincheck.cut_short(data, off, o - off, journal.u32(data, o + 4))
                stretches.append((name, off, o - off, "torn" if torn else "corrupt"))
            n = data[o + 2] | data[o + 3] << 8
            found.append((name, o, data[o:o + n]))
            off = o + n
        if off < len(data):
            stretches.append((name, off, len(data) - off, "torn"))
    return chaincheck.verify(found, stretches, store, head, table)


def verify_dict(rep):
    from sicbo import chain as C

    return {
        "verified": rep.verified, "records": rep.records,
        "authenticated": rep.authenticated, "unauthenticated": rep.unauthenticated,
        "chains": rep.chains,
        "table": rep.table, "table_given": rep.table_given,
        "head": None if rep.head is None else {"seq": rep.head[0], "hash": rep.head[1].hex(),
                                               "text": C.head_text(*rep.head)},
        "head_check": rep.head_check,
        "findings": rep.findings, "notes": rep.notes}


def _run_verify(args, segs):
    from host_tools import chaincheck, keystore

    store = keystore.load(args.verify)
    head = None
    if args.head is not None:
        try:
            head = chaincheck.parse_head(args.head)
        except ValueError as e:
            raise UsageError(str(e)) from None
    if args.table_id is not None and not store.of_table(args.table_id):
        raise UsageError("the key store %s has no chain of table %s (its tables: %s)" % (
            args.verify, args.table_id,
            ", ".join(sorted({c.table for c in store.chains})) or "none"))
    rep = verification(segs, store, head, args.table_id)
    if args.json:
        print(json.dumps(verify_dict(rep)))
        return 0 if rep.verified else 1
    print("verify:  %d segment(s), %d records (%d with a MAC, %d without), key store %s "
          "(%d chains)" % (len(segs), rep.records, rep.authenticated, rep.unauthenticated,
                           args.verify, len(store.chains)))
    for c in rep.chains:
        print("chain:   provisioning %d (table %s): seq %d..%d, %d records verified%s"
              % (c["id"], c["table"], c["first_seq"], c["last_seq"], c["records"],
                 ", its first record here" if c["provisioned_here"] else ""))
    if rep.table is not None and rep.table_given:
        print("table:   %s (--table-id)" % rep.table)
    elif rep.table is not None:
        print("table:   %s, whose chains verify most of its records; --table-id %s checks "
              "that it is the table expected" % (rep.table, rep.table))
    if rep.head is not None:
        from sicbo import chain as C

        print("head:    %s" % C.head_text(*rep.head))
    if head is not None:
        print("against: head %d: %s" % (head[0], rep.head_check))
    for n in rep.notes:
        print("note:    " + n)
    for f in rep.findings:
        print("%-9s%s" % (f["kind"] + ":", f["text"]))
    print("result:  %s" % ("VERIFIED: every record authenticated by the table's chain"
                           if rep.verified else
                           "NOT VERIFIED (%d finding%s)" % (len(rep.findings),
                                                            "" if len(rep.findings) == 1
                                                            else "s")))
    return 0 if rep.verified else 1


def configurations(rd):
    """[(seq, configuration id hex)] the journal names, in its order: each
    J_CONFIG and J_DEPLOY, and the configuration in force that each meters
    checkpoint carries (rotation may have deleted its J_CONFIG); only records
    the replay applied."""
    out = []
    for _name, rec, code in rd.records:
        if code:
            continue
        p = rec.payload
        if rec.type == R.J_CONFIG:
            at = R.P_CONFIG_ID
        elif rec.type == R.J_DEPLOY:
            at = R.P_DEPLOY_CONFIG
        elif rec.type == R.J_METERS and len(p) >= R.P_WINS:
            at = R.P_WINS + 4 * struct.unpack_from("<H", p, R.P_CHANNELS)[0] + R.C_ID
        else:
            continue
        if at + R.CONFIG_ID_LEN <= len(p):
            out.append((rec.seq, p[at:at + R.CONFIG_ID_LEN].hex()))
    return out


def check_table_file(rd, table, table_path, board_path):
    """What the winning areas are computed from, checked against the journal:
    {"journal": its last configuration id (None: it names none), "files": the
    files' id (None without --board), "checked": the two agree}. Refused (a
    UsageError) when the table file cannot be the one the journal's last
    configuration ran with: its lamp channels are not as many as that
    configuration's meters count, or the board and table files are another
    configuration. Areas from another table file read as if the board had lit
    them: a dispute settled on the wrong table."""
    from host_tools.rules import DEFAULT_TABLE

    shown = table_path or "%s (the default)" % os.path.relpath(DEFAULT_TABLE)
    table_path = table_path or DEFAULT_TABLE
    names = configurations(rd)
    last = names[-1][1] if names else None
    for _name, rec, code in reversed(rd.records):
        if code or rec.type != R.J_METERS or len(rec.payload) < R.P_WINS:
            continue
        n = struct.unpack_from("<H", rec.payload, R.P_CHANNELS)[0]
        if names and dict(names).get(rec.seq) == last and n != table.channels:
            raise UsageError("table file %s has %d lamp channels; the journal's meters "
                             "checkpoint seq %d, under its last configuration %s, counts %d: "
                             "not the table file it ran with (give that one with --table)"
                             % (shown, table.channels, rec.seq, last, n))
        break
    files = None
    if board_path is not None:
        from host_tools import jsonfile
        from host_tools.deploy import config_cache_id

        board_text, _ = jsonfile.load(board_path, jsonfile.BOARD_MAX, "board file")
        table_text, _ = jsonfile.load(table_path, jsonfile.TABLE_MAX, "table file")
        files = config_cache_id(board_text, table_text)
        if last is not None and files != last:
            earlier = [seq for seq, ident in names if ident == files]
            raise UsageError(
                "board file %s and table file %s are configuration %s; the journal's last "
                "configuration is %s (seq %d)%s: give the files the table ran with"
                % (board_path, shown, files, last, names[-1][0],
                   ", these files' was in force earlier (seq %d)" % earlier[-1]
                   if earlier else ", these files' it never names"))
    return {"journal": last, "files": files, "checked": files is not None and files == last}


def run(args):
    if args.head is not None and args.verify is None:
        raise UsageError("--head needs --verify KEYSTORE")
    if args.table_id is not None and args.verify is None:
        raise UsageError("--table-id needs --verify KEYSTORE")
    if args.verify is not None:
        return _run_verify(args, segments(args.file))
    cfg, table = load_table(args.table)
    segs = segments(args.file)
    rd = Reading(segs, table)
    check_is_journal(segs, rd)
    configuration = check_table_file(rd, table, args.table, args.board)
    rp = rd.replay
    all_rounds = rd.recall.last(ALL_ROUNDS)
    rounds = all_rounds[:args.recall] if args.recall > 0 else []
    n = args.records if args.records is not None else (-1 if args.json else 0)
    shown = rd.records if n < 0 else rd.records[-n:] if n else []
    damaged_rounds = {d["round"] for d in rd.damage if "round" in d}
    drawn = None
    if args.svg:
        drawn = svg_of_round(rd, cfg, table, args.round_id, args.svg)
    elif args.round_id is not None:
        raise UsageError("--round needs --svg OUT.svg")
    if args.json:
        out = {
            "segments": rd.segments, "bytes": rd.bytes, "records": len(rd.records),
            "empty": not rd.records,
            "unreadable_bytes": rd.unreadable_bytes(), "last_seq": rp.seq,
            "rounds_seen": rp.round, "boots": rp.boot, "state": _state(rp.state),
            "open_round": rp.open_seq != 0, "duplicates": rd.duplicates,
            "authenticated": sum(1 for _nm, rec, _c in rd.records if rec.mac is not None),
            "damage": rd.damage,
            "recall": [round_dict(r, table, damaged_rounds, rd.recall.restarts.get(r.round))
                       for r in rounds],
            "meters": meters_dict(rd.recall.meters, table),
            "records_listed": [record_dict(nm, rec, code, table) for nm, rec, code in shown],
            "configuration": configuration}
        if drawn is not None:
            out["svg"] = {"round": drawn, "file": os.path.abspath(args.svg)}
        print(json.dumps(out))
        return 0
    if not rd.records:
        print("journal: %s, %s, no records: the journal is empty%s"
              % (plural(rd.segments, "segment"), plural(rd.bytes, "byte"),
                 "" if not rd.bytes else " (a first record torn by a power cut)"))
    else:
        print("journal: %s, %s, %s (seq %d..%d), last boot %d"
              % (plural(rd.segments, "segment"), plural(rd.bytes, "byte"),
                 plural(len(rd.records), "record"), rd.records[0][1].seq, rp.seq, rp.boot))
        macs = sum(1 for _nm, rec, _c in rd.records if rec.mac is not None)
        print("         %s" % (
            "every record with a MAC (sicbo journal --verify KEYSTORE checks them)"
            if macs == len(rd.records) else
            "no record authenticated (no MAC: a journal from before the chain)" if not macs else
            "%d of them with a MAC, %d not authenticated" % (macs, len(rd.records) - macs)))
    torn = rd.unreadable_bytes()
    if torn:
        print("         %s not readable as records (a record torn by a power cut, "
              "or damage): skipped, never used" % plural(torn, "byte"))
    bad = [d for d in rd.damage if d["kind"] not in ("corrupt", "torn")]
    if bad:
        n = len({d["seq"] for d in bad})
        print("         %s damaged: CRC-valid but not allowed by %s type or %s place in "
              "the journal, never used" % (plural(n, "record"), "its" if n == 1 else "their",
                                           "its" if n == 1 else "their"))
    for d in rd.damage:
        print("damage:  " + _damage_line(d))
    if rd.records:
        print("state:   %s, last round %d%s" % (_state(rp.state), rp.round,
                                                " (unfinished)" if rp.open_seq else ""))
        ident = configuration["journal"]  # None: the journal names none
        if ident is not None and configuration["checked"]:
            print("config:  %s, the board and table files given" % ident)
        elif ident is not None:
            print("config:  %s; winning areas from the table file, not checked against it "
                  "(--board FILE checks the files are the ones it ran with)" % ident)
    if shown:
        print()
        for _nm, rec, code in shown:
            print(record_line(rec, code, table))
    if rounds:
        print()
        print("%6s %-7s %-6s %-20s %s" % ("round", "status", "dice", "started", "winning areas"))
        for r in rounds:
            d = round_dict(r, table, damaged_rounds, rd.recall.restarts.get(r.round))
            dice = "-".join(str(x) for x in d["dice"]) if d["dice"] else "-"
            when = d["started"]["wall"] or "boot %d" % r.started[0]
            what = ("void: " + d["void_reason"]) if d["void_reason"] else " ".join(
                w["area"] for w in d["wins"])
            if d["restart"]:
                what += " (the board restarted in this round: %s)" % d["restart"]
            if d["first_dice"] and d["first_dice"] != d["dice"]:
                what = "corrected from %s; %s" % ("-".join(map(str, d["first_dice"])), what)
            if d["damaged"]:
                what = "DAMAGED record(s), see above; " + what
            print("%6d %-7s %-6s %-20s %s" % (r.round, r.status, dice, when, what))
    m = rd.recall.meters.as_dict(table)
    print()
    print("meters:  " + ", ".join("%s %d" % (k, m[k]) for k in
                                  ("rounds", "paid", "voids", "alarms", "violations",
                                   "corrections", "refusals", "holds")))
    if m["voids"]:
        from sicbo.logtext import void_reasons_text

        print("voids:   " + void_reasons_text(m["void_reasons"]))
    if drawn is not None:
        print("picture: round %d -> %s" % (drawn, os.path.abspath(args.svg)))
    return 0
