"""What the floor view shows, read from the floor's store: pure data for
the templates (host_tools/floor/web.py serves them), no HTTP here.

The rounds are the store's (`rounds`: game recall of the firmware, the
winning areas by its settlement); a round's picture is drawn by
host_tools/layout_svg.py from a RoundInfo that the firmware's recall
(sicbo.recall) rebuilds from the round's stored records."""

import csv
import datetime
import io
import json
import re
import urllib.parse

from host_tools import commands as _commands  # noqa: F401  (the host package)
from host_tools.floor import site, staff

WALL_EPOCH = 946684800  # the journal's wall clock starts 2000-01-01 UTC
RESULTS_SHOWN = 20  # the results display's list
STATS_ROUNDS = 100  # hot and cold over this many results
ROAD_ROWS = 6
ROAD_COLUMNS = 20  # the road's columns shown (its newest)
HOT_COLD = 3
ALARMS_LISTED = 200

# The round's results as recalled: open rounds have none yet.
FINISHED = "status != 'open'"


def when(t):
    """A floor time (Unix seconds) for people, UTC."""
    if t is None:
        return ""
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC")


def wall(w):
    """A record's wall time (seconds since 2000) for people."""
    return when(w + WALL_EPOCH) if w is not None else ""


def short(h, n=12):
    return (h[:n] + "\u2026") if h and len(h) > n else (h or "")


# ---- the results of rounds ------------------------------------------------------------


def outcome(dice):
    """'T' (a triple: Big and Small both lose), 'B' (total 11..17), 'S'
    (4..10), or None without dice."""
    if not dice:
        return None
    if dice[0] == dice[1] == dice[2]:
        return "T"
    return "B" if sum(dice) >= 11 else "S"


class Result:
    """One finished round as the results display shows it."""

    def __init__(self, row):
        rid, status, dice, total, void_reason, corrections, damaged = row
        self.round = rid
        self.status = status
        self.dice = json.loads(dice) if dice else None
        self.void = status == "void"
        self.void_reason = void_reason
        self.total = total if not self.void else None
        self.corrected = corrections > 0
        self.damaged = bool(damaged)
        self.outcome = None if self.void else outcome(self.dice)

    def dice_text(self):
        return "-".join(str(d) for d in self.dice) if self.dice and not self.void else ""


def results(conn, tid, n=STATS_ROUNDS):
    """The last n finished rounds of a table (paying, paid, void), newest first."""
    return [Result(r) for r in conn.execute(
        "SELECT round, status, dice, total, void_reason, corrections, damaged FROM rounds"
        " WHERE table_id=? AND " + FINISHED + " ORDER BY round DESC LIMIT ?", (tid, n))]


def road(outcomes, rows=ROAD_ROWS):
    """The Big/Small road as casinos draw it (the "big road"): a column per
    run of the same outcome, top to bottom; a run longer than the column
    turns right along its last row (the "dragon's tail"); the next run
    starts at the top of the column after the previous run's first. A
    triple (Big and Small both lose) is no new cell: it is marked on the
    cell before it, as a tie is on a baccarat road (triples before the
    first cell, on the first). Voids are not results
    and are not drawn. outcomes: 'B', 'S', 'T', oldest first. Returns
    {(column, row): [outcome, triples after it]}."""
    cells = {}
    last = None
    run = None
    run_col = -1
    early = 0  # triples before the first cell
    for o in outcomes:
        if o == "T":
            if last is None:
                early += 1
            else:
                cells[last][1] += 1
            continue
        if o == run and last is not None:
            c, r = last
            pos = (c, r + 1) if r + 1 < rows and (c, r + 1) not in cells else (c + 1, r)
            while pos in cells:
                pos = (pos[0] + 1, pos[1])
        else:
            pos = (run_col + 1, 0)
            while pos in cells:
                pos = (pos[0] + 1, 0)
            run_col = pos[0]
            run = o
        cells[pos] = [o, early]
        early = 0
        last = pos
    if early:
        cells[(0, 0)] = ["", early]
    return cells


def road_grid(cells, columns=ROAD_COLUMNS, rows=ROAD_ROWS):
    """The newest `columns` columns of a road as rows of cells (None: empty)."""
    width = max((c for c, _r in cells), default=-1) + 1
    first = max(0, width - columns)
    return [[cells.get((c, r)) for c in range(first, first + columns)] for r in range(rows)]


def hot_cold(res, n=HOT_COLD):
    """Counts of each total (3..18) and face (1..6) over the results with
    dice (voids have none), and the hot (most often) and cold (least often)
    of each: ties broken by the value."""
    totals = {t: 0 for t in range(3, 19)}
    faces = {f: 0 for f in range(1, 7)}
    k = 0
    for r in res:
        if r.void or not r.dice:
            continue
        k += 1
        totals[sum(r.dice)] += 1
        for d in r.dice:
            faces[d] += 1

    def rank(counts):
        by = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        hot = [v for v, c in by[:n] if c > 0]
        cold = [v for v, c in sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))[:n]]
        return hot, cold

    th, tc = rank(totals)
    fh, fc = rank(faces)
    return {"rounds": k, "totals": totals, "faces": faces, "hot_totals": th,
            "cold_totals": tc, "hot_faces": fh, "cold_faces": fc}


# ---- the floor's tables -----------------------------------------------------------------

TILE_COLUMNS = ("table_id", "online", "last_seen", "state", "round", "code", "config",
                "last_seq", "acked", "open_gaps", "damaged", "status_at")


class Tile:
    def __init__(self, row, open_alarms, last, approved):
        for k, v in zip(TILE_COLUMNS, row, strict=True):
            setattr(self, k, v)
        self.id = self.table_id
        self.open_alarms = open_alarms
        self.last = last  # Result of its newest finished round, or None
        # A table reports the first 16 hex digits of its code's sha256 (the
        # simulated tables the whole 64): approvals hold those 16.
        self.code_ok = (bool(self.code)
                        and len(self.code) in (staff.CODE_HEX, staff.CODE_SHA256_HEX)
                        and self.code.lower()[:staff.CODE_HEX] in approved["code"])
        self.config_ok = bool(self.config) and self.config.lower() in approved["config"]

    def online_text(self):
        return {None: "never said", 1: "online", 0: "offline"}[self.online]


def open_alarm_counts(conn, tid=None):
    q = ("SELECT table_id, COUNT(*) FROM alarms WHERE id NOT IN (SELECT alarm_id FROM acks)"
         + (" AND table_id=?" if tid else "") + " GROUP BY table_id")
    return dict(conn.execute(q, (tid,) if tid else ()).fetchall())


def last_results(conn, tid=None):
    q = ("SELECT r.table_id, r.round, r.status, r.dice, r.total, r.void_reason, r.corrections,"
         " r.damaged FROM rounds r JOIN (SELECT table_id, MAX(round) AS m FROM rounds WHERE "
         + FINISHED + (" AND table_id=?" if tid else "") + " GROUP BY table_id) x"
         " ON r.table_id=x.table_id AND r.round=x.m")
    return {row[0]: Result(row[1:]) for row in conn.execute(q, (tid,) if tid else ())}


def tiles(conn, ids=None):
    """The grid's tables (all, or those of ids), in table id order."""
    approved = staff.approved(conn)
    counts = open_alarm_counts(conn)
    q = "SELECT %s FROM tables" % ", ".join(TILE_COLUMNS)
    if ids is None:
        last = last_results(conn)
        rows = conn.execute(q + " ORDER BY table_id").fetchall()
    else:
        last = {}
        rows = []
        for t in sorted(ids):
            last.update(last_results(conn, t))
            rows += conn.execute(q + " WHERE table_id=?", (t,)).fetchall()
    return [Tile(r, counts.get(r[0], 0), last.get(r[0]), approved) for r in rows]


def floor_summary(conn):
    n, online = conn.execute("SELECT COUNT(*), COALESCE(SUM(online = 1), 0) FROM tables"
                             ).fetchone()
    open_n = conn.execute("SELECT COUNT(*) FROM alarms WHERE id NOT IN"
                          " (SELECT alarm_id FROM acks)").fetchone()[0]
    return {"tables": n, "online": online, "open_alarms": open_n}


# ---- alarms and the audit trail ---------------------------------------------------------


class Alarm:
    COLUMNS = ("id", "table_id", "seq", "round", "source", "kind", "code", "text", "wall",
               "raised", "ack_user", "ack_note", "ack_at")

    def __init__(self, row):
        for k, v in zip(self.COLUMNS, row, strict=True):
            setattr(self, k, v)
        self.open = self.ack_user is None


ACKED_PAGE = 100  # acknowledged alarms a page of /alarms shows


class AlarmList(list):
    """Alarms, newest first, cut at a limit; `total`: how many match in all
    (below `before` or not), so that a page says what it does not show;
    `table`: the one table they are of (None: every table)."""

    total = 0
    table = None


def alarms(conn, tid=None, open_only=True, limit=ALARMS_LISTED, acknowledged=False,
           before=None):
    """The open alarms (open_only), the acknowledged ones (acknowledged), or
    all, of one table (tid) or every one: at most limit (None: all), those
    numbered below before when given."""
    where = []
    args = []
    if open_only:
        where.append("k.alarm_id IS NULL")
    elif acknowledged:
        where.append("k.alarm_id IS NOT NULL")
    if tid:
        where.append("a.table_id=?")
        args.append(tid)
    acks = "acks" if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND"
                                  " name='acks'").fetchone() else (
        # The service's store before the view made its tables: none acknowledged.
        "(SELECT NULL AS alarm_id, NULL AS user, NULL AS note, NULL AS at WHERE 0)")
    joined = " FROM alarms a LEFT JOIN %s k ON k.alarm_id=a.id" % acks
    out = AlarmList()
    out.table = tid or None
    out.total = conn.execute("SELECT COUNT(*)" + joined + (
        " WHERE " + " AND ".join(where) if where else ""), args).fetchone()[0]
    if before is not None:
        where.append("a.id<?")
        args.append(before)
    q = ("SELECT a.id, a.table_id, a.seq, a.round, a.source, a.kind, a.code, a.text, a.wall,"
         " a.raised, k.user, k.note, k.at" + joined
         + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY a.id DESC LIMIT ?")
    out.extend(Alarm(r) for r in conn.execute(q, args + [-1 if limit is None else limit]))
    return out


def alarms_csv(rows):
    """Alarms (Alarm) as CSV, in their order, each with its acknowledgement;
    no text cell starts a formula (an alarm's text, a note: see Report.csv)."""
    out = io.StringIO()
    w = _SafeWriter(csv.writer(out, lineterminator="\n"))
    w.writerow(["id", "table", "seq", "round", "source", "kind", "code", "text",
                "raised_utc", "state", "acknowledged_by", "acknowledged_utc", "note"])
    for a in rows:
        w.writerow([a.id, a.table_id, "" if a.seq is None else a.seq,
                    "" if a.round is None else a.round, a.source, a.kind,
                    "" if a.code is None else a.code, a.text or "", _utc(a.raised),
                    "open" if a.open else "acknowledged", a.ack_user or "", _utc(a.ack_at),
                    a.ack_note or ""])
    return out.getvalue()


def _utc(t):
    return "" if t is None else datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class AuditRow:
    def __init__(self, row):
        (self.id, self.at, self.user, self.action, self.table_id, self.alarm_id, self.detail,
         self.remote) = row


AUDIT_PAGE = 200  # rows a page of the audit trail shows


def is_number(text):
    """An entry's or an alarm's number as a query gives it: 1 to 10 ASCII
    digits (str.isdigit takes '²', which int() refuses)."""
    return re.fullmatch(r"[0-9]{1,10}", text) is not None


class AuditQuery:
    """Which part of the audit trail a page (or its CSV) shows: rows with ids
    below `before` (None: from the newest), of one user, action or table.
    Made from the request's text: ValueError, saying which and why, for
    anything else (a page that silently showed everything would mislead)."""

    def __init__(self, before=None, user=None, action=None, table=None):
        self.before = self.user = self.action = self.table = None
        if before:
            if not is_number(before):
                raise ValueError("before=%s is not an entry's number" % before[:20])
            self.before = int(before)
        if user:
            if not staff.NAME_RE.match(user):
                raise ValueError("user=%s is not an account's name (1 to 32 of A-Z a-z 0-9 "
                                 "_ . -)" % user[:40])
            self.user = user
        if action:
            if action not in staff.AUDIT_ACTIONS:
                raise ValueError("action=%s is none of the audit trail's: %s"
                                 % (action[:40], ", ".join(staff.AUDIT_ACTIONS)))
            self.action = action
        if table:
            self.table = site.check_filter("table=", table)

    def filtered(self):
        return self.user is not None or self.action is not None or self.table is not None

    def rows(self, conn, limit):
        return [AuditRow(r) for r in staff.audit_rows(conn, limit, self.before, self.user,
                                                      self.action, self.table)]

    def count(self, conn):
        return staff.audit_count(conn, self.user, self.action, self.table)

    def href(self, path="/audit", before=None):
        """The page's address with these filters (and another `before`)."""
        q = [(k, v) for k, v in (("user", self.user), ("action", self.action),
                                 ("table", self.table), ("before", before)) if v is not None]
        return path + ("?" + urllib.parse.urlencode(q) if q else "")


class AuditPage:
    """One page of the audit trail, newest first (AuditQuery): its rows, the
    address of the next older page (None: none older), the entries the
    filters match in all. Live (updated as entries are added) only as the
    newest page of the whole trail."""

    def __init__(self, conn, query, size=AUDIT_PAGE):
        got = query.rows(conn, size + 1)
        self.query = query
        self.rows = got[:size]
        self.older = query.href(before=self.rows[-1].id) if len(got) > size else None
        self.total = query.count(conn)
        self.live = query.before is None and not query.filtered()


def audit_csv(rows):
    """Rows of the audit trail (AuditRow) as CSV, in their order; no text cell
    starts a formula (a note, a refused request's detail: see Report.csv)."""
    out = io.StringIO()
    w = _SafeWriter(csv.writer(out, lineterminator="\n"))
    w.writerow(["id", "at_utc", "user", "action", "table", "alarm", "detail", "from"])
    for r in rows:
        w.writerow([r.id, _utc(r.at), r.user or "", r.action, r.table_id or "",
                    "" if r.alarm_id is None else r.alarm_id, r.detail or "", r.remote or ""])
    return out.getvalue()


# ---- a table ------------------------------------------------------------------------------


def table_row(conn, tid):
    rows = tiles(conn, [tid])
    return rows[0] if rows else None


def recent_rounds(conn, tid, n=30):
    return conn.execute("SELECT round, status, dice, total, void_reason, corrections, damaged,"
                        " started_wall FROM rounds WHERE table_id=? ORDER BY round DESC LIMIT ?",
                        (tid, n)).fetchall()


class MeterRow:
    def __init__(self, row):
        self.seq, self.round, self.wall, cp, counted, self.differs = row
        self.checkpoint = json.loads(cp) if cp else None
        self.counted = json.loads(counted) if counted else None
        self.differences = []
        if self.checkpoint is not None and self.counted is not None:
            for k in sorted(set(self.checkpoint) | set(self.counted)):
                a, b = self.checkpoint.get(k), self.counted.get(k)
                if a != b:
                    self.differences.append((k, a, b))


def meters(conn, tid, n=50):
    """The table's meter checkpoints beside the floor's count of its stored
    records by the firmware's rule (ingest: sicbo.meters), newest first."""
    return [MeterRow(r) for r in conn.execute(
        "SELECT seq, round, wall, checkpoint, counted, differs FROM meters WHERE table_id=?"
        " ORDER BY seq DESC LIMIT ?", (tid, n))]


# ---- a round on demand ------------------------------------------------------------------


class RoundView:
    """A stored round: its RoundInfo rebuilt by the firmware's recall from
    its records, its picture, and the records."""

    def __init__(self, conn, tid, rid, cfg, table):
        from host_tools import layout_svg
        from host_tools.commands import floor as fcmd
        from host_tools.commands import journal as jcmd
        from sicbo import journal
        from sicbo import records as R
        from sicbo.recall import Recall

        self.table_id = tid
        self.round = rid
        row = conn.execute("SELECT status, info, first_seq, last_seq FROM rounds"
                           " WHERE table_id=? AND round=?", (tid, rid)).fetchone()
        self.found = row is not None
        if not self.found:
            return
        self.status, info, self.first_seq, self.last_seq = row
        self.info = json.loads(info)
        recall = Recall(table, 4)
        self.records = []
        damage = None
        for _seq, checked, received, raw in conn.execute(
                "SELECT seq, checked, received, raw FROM records WHERE table_id=? AND round=?"
                " ORDER BY seq", (tid, rid)):
            raw = bytes(raw)
            rec = journal.Record(raw, 0)
            d = fcmd.record_of(tid, raw, checked, received, table)
            d["line"] = jcmd.record_line(rec, checked if checked and checked > 0 else 0, table)
            self.records.append(d)
            if checked == 0 and rec.type != R.J_METERS:
                recall.apply(rec)
            elif checked is not None and checked > 0 and damage is None:
                damage = jcmd.damage_name(checked)
        self.damage = damage
        self.r = r = recall.current(rid)
        # Lit areas from another layout than the table's would mislead a
        # dispute: not drawn, and the page says why.
        self.layout_warning = layout_mismatch(conn, tid, table)
        self.svg = (layout_svg.render_round(cfg, table, r, damage=damage)
                    if r and self.layout_warning is None else "")
        self.times = []
        if r is not None:
            for name, t in (("started", r.started), ("bell", r.bell),
                            ("result", r.result_time), ("ended", r.ended)):
                if t is not None:
                    self.times.append((name, wall(t[2]) if t[2] is not None else
                                       "boot %d ticks %d (clock not set)" % (t[0], t[1])))
            self.corrections = [("-".join(map(str, a)), "-".join(map(str, b)),
                                 wall(t[2]) if t[2] is not None else "")
                                for a, b, t in r.corrections]
            self.void = jcmd.void_name(r.void_reason) if r.void_reason else None
            self.alarm_texts = [_message(c) for c in r.alarms]
            cause = recall.restarts.get(rid)
            self.restart = jcmd.reset_name(cause) if cause is not None else None
        else:
            self.corrections, self.void, self.alarm_texts = [], None, []
            self.restart = None

    def as_dict(self):
        return {"table": self.table_id, "round": self.round, "status": self.status,
                "recall": self.info, "records": self.records,
                "layout_warning": self.layout_warning}


def _message(code):
    from sicbo import texts

    return texts.text(code)


def layout_mismatch(conn, tid, table):
    """Why the floor's table file cannot be this table's layout, or None.
    The configuration id a table journals covers its board file too, so the
    floor cannot match a table file to it (docs/floor.md); what it can see
    is the lamp channels that the table's newest meters checkpoint counts.
    Another number: the winning areas the floor draws for it are wrong."""
    from sicbo import journal
    from sicbo import records as R

    row = conn.execute("SELECT seq, raw FROM records WHERE table_id=? AND type=? AND checked=0"
                       " ORDER BY seq DESC LIMIT 1", (tid, R.J_METERS)).fetchone()
    if row is None:
        return None
    p = journal.Record(bytes(row[1]), 0).payload
    if len(p) < R.P_WINS:
        return None
    channels = p[R.P_CHANNELS] | (p[R.P_CHANNELS + 1] << 8)
    if channels == table.channels:
        return None
    return ("this table's meters checkpoint (seq %d) counts %d lamp channels, the floor's "
            "table file %d: the table runs another layout, and the winning areas the floor "
            "would draw for it are not the table's" % (row[0], channels, table.channels))


def latest_svg(conn, tid, cfg, table):
    """The picture of the table's newest finished round (the results
    display), or '', its round, and why it is not drawn (layout_mismatch)."""
    row = conn.execute("SELECT MAX(round) FROM rounds WHERE table_id=? AND " + FINISHED,
                       (tid,)).fetchone()
    if row is None or row[0] is None:
        return "", None, None
    v = RoundView(conn, tid, row[0], cfg, table)
    return v.svg, row[0], v.layout_warning


# ---- the per-day report -----------------------------------------------------------------

_ROUND_DAY = ("date(COALESCE(started_wall + %d, (SELECT received FROM records q WHERE"
              " q.table_id=rounds.table_id AND q.seq=rounds.first_seq)), 'unixepoch')"
              % WALL_EPOCH)
_ALARM_DAY = "date(COALESCE(wall + %d, raised), 'unixepoch')" % WALL_EPOCH


def days(conn, tid):
    """The UTC days on which the table started rounds, newest first."""
    return [d for d, in conn.execute(
        "SELECT DISTINCT " + _ROUND_DAY + " AS day FROM rounds WHERE table_id=?"
        " ORDER BY day DESC", (tid,))]


def check_day(day):
    try:
        return datetime.date.fromisoformat(day).isoformat()
    except (TypeError, ValueError):
        return None


class Report:
    """One table's day (UTC): rounds, voids and their reasons, wins per area
    (paid rounds, by the firmware's settlement), corrections, damage and
    alarms."""

    def __init__(self, conn, tid, day, cfg):
        from sicbo import areas

        self.table_id = tid
        self.day = day
        rows = conn.execute(
            "SELECT round, status, dice, void_reason, corrections, damaged, info FROM rounds"
            " WHERE table_id=? AND " + _ROUND_DAY + "=? ORDER BY round", (tid, day)).fetchall()
        self.rounds = len(rows)
        self.paid = sum(1 for r in rows if r[1] == "paid")
        self.voids = sum(1 for r in rows if r[1] == "void")
        self.unfinished = sum(1 for r in rows if r[1] in ("open", "paying"))
        self.void_reasons = {}
        self.corrected = []
        self.damaged = [r[0] for r in rows if r[5]]
        wins = {areas.code(i): 0 for i in cfg.offered}
        for rid, status, _dice, reason, corrections, _dmg, info in rows:
            d = json.loads(info)
            if status == "void":
                key = reason or "?"
                self.void_reasons[key] = self.void_reasons.get(key, 0) + 1
            if corrections:
                self.corrected.append((rid, corrections, d.get("first_dice"), d.get("dice")))
            if status == "paid":
                for w in d.get("wins", ()):
                    wins[w["area"]] = wins.get(w["area"], 0) + 1
        self.wins = wins
        self.first_round = rows[0][0] if rows else None
        self.last_round = rows[-1][0] if rows else None
        self.alarms = [Alarm(r) for r in conn.execute(
            "SELECT a.id, a.table_id, a.seq, a.round, a.source, a.kind, a.code, a.text, a.wall,"
            " a.raised, k.user, k.note, k.at FROM alarms a LEFT JOIN acks k ON k.alarm_id=a.id"
            " WHERE a.table_id=? AND " + _ALARM_DAY.replace("wall", "a.wall").replace(
                "raised", "a.raised") + "=? ORDER BY a.id", (tid, day))]
        self.alarm_kinds = {}
        for a in self.alarms:
            self.alarm_kinds[a.kind] = self.alarm_kinds.get(a.kind, 0) + 1

    def csv(self):
        """section,key,value,detail rows; a text cell that a spreadsheet would
        take for a formula (=, +, -, @, a tab or a carriage return first: a
        table id, an alarm's text, a staff member's note) starts with a '."""
        out = io.StringIO()
        w = _SafeWriter(csv.writer(out, lineterminator="\n"))
        w.writerow(["section", "key", "value", "detail"])
        w.writerow(["report", "table", self.table_id, ""])
        w.writerow(["report", "day", self.day, "UTC"])
        for k in ("rounds", "paid", "voids", "unfinished"):
            w.writerow(["rounds", k, getattr(self, k), ""])
        w.writerow(["rounds", "first", "" if self.first_round is None else self.first_round, ""])
        w.writerow(["rounds", "last", "" if self.last_round is None else self.last_round, ""])
        for reason, n in sorted(self.void_reasons.items()):
            w.writerow(["void_reason", reason, n, ""])
        for area, n in self.wins.items():
            w.writerow(["wins", area, n, ""])
        for rid, n, first, now in self.corrected:
            w.writerow(["correction", rid, n, "%s -> %s" % (
                "-".join(map(str, first or ())), "-".join(map(str, now or ())))])
        for rid in self.damaged:
            w.writerow(["damaged_round", rid, 1, ""])
        for kind, n in sorted(self.alarm_kinds.items()):
            w.writerow(["alarms", kind, n, ""])
        for a in self.alarms:
            w.writerow(["alarm", a.id, a.kind, "%s | %s" % (
                a.text, "open" if a.open else "acknowledged by %s: %s" % (a.ack_user,
                                                                         a.ack_note))])
        return out.getvalue()


class _SafeWriter:
    """A csv writer whose text cells never start a formula (see Report.csv)."""

    def __init__(self, w):
        self.w = w

    def writerow(self, row):
        self.w.writerow([("'" + c) if isinstance(c, str) and c[:1] in _FORMULA else c
                         for c in row])


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
