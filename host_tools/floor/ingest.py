"""What the floor makes of each message: pure, no MQTT (the service,
host_tools/floor/service.py, feeds it and commits what it returns).

A journal payload is split into records by the firmware's own scanner
(sicbo.journal.Scanner: whole records, CRC checked); what is not a record is
kept as evidence (`rejects`), never stored as one. Each record is stored
once: a sequence number already stored with the same bytes is a duplicate
(counted), with other bytes a conflict (kept in `rejects`, an alarm). The
records of a table are replayed in sequence order as the board replays its
journal (sicbo.roundstate.RoundState.take, the meters and game recall of
sicbo.meters and sicbo.recall, as `sicbo journal` reads a journal), so
damage is flagged as the board flags it. A record above a missing one waits
(stored, not yet replayed) until the gap is filled or the table declares it
final: records before its status's `oldest`, or in its `missing` ranges. The
acknowledgement is the highest N such that every record up to N is stored
or in a gap declared final (`TableFeed.contig`).

With the site's key stores (`keys`), every record is verified as it is
replayed against the table's MAC chain (host_tools/chaincheck.Stream: a
record that does not verify, one of another table or provisioning, one
without a MAC once the chain started, each an alarm). A table's `head`
topic (SEQ:HASH) is kept at its highest; a lower one, another hash for the
same number, or one that is not the chain hash of the records stored is a
rollback alarm (docs/tamper-evidence.md)."""

import json
import struct

from host_tools import commands as _commands  # noqa: F401  (the host package)
from host_tools.commands import journal as jcmd
from host_tools.floor import site as S
from sicbo import records as R

REJECT_KEEP = 4096  # bytes of a rejected payload kept as evidence (its length is kept whole)
RECALL_KEEP = 4  # rounds each table's recall holds (the store holds every round)
MAX_MISSING = 64  # ranges of a status's `missing` taken


_FW = None


def _fw():
    global _FW
    if _FW is None:
        from sicbo import events as E
        from sicbo import journal
        from sicbo.recall import Recall
        from sicbo.roundstate import RoundState

        _FW = (E, journal, Recall, RoundState)
    return _FW


class MemoTable:
    """A SettlementTable whose winning areas are computed once per dice (the
    firmware's settlement, sicbo.settle; 216 throws): the floor draws a
    round's row at every record that changes it."""

    def __init__(self, table):
        self._table = table
        self._wins = {}

    def winning_areas(self, d1, d2, d3):
        key = (d1, d2, d3)
        w = self._wins.get(key)
        if w is None:
            w = self._wins[key] = self._table.winning_areas(d1, d2, d3)
        return w

    def __getattr__(self, name):
        return getattr(self._table, name)


class Batch:
    """Rows of one transaction, and the messages it settles."""

    def __init__(self):
        self.records = {}  # (table, seq) -> row
        self.updates = []  # (checked, table, seq) of rows stored by an earlier batch
        self.gaps = []
        self.rounds = {}  # (table, round) -> row
        self.alarms = []
        self.meters = []
        self.rejects = []
        self.status_log = []
        self.touched = set()
        self.mids = []  # (connection, mid, qos) to acknowledge to the broker once committed
        self.dirty = {}  # table -> TableFeed whose rounds changed (rows drawn at finish)
        self.new_gaps = []  # (table, first, last) log lines
        self.heads = []  # (table, seq, hash hex, received): a table's highest head
        self.n = 0  # records stored

    def verdict(self, tid, seq, code):
        row = self.records.get((tid, seq))
        if row is not None:
            row[8] = code
        else:
            self.updates.append((code, tid, seq))

    def round_row(self, row):
        key = (row[0], row[1])
        old = self.rounds.get(key)
        if old is not None:
            row[10] = min(row[10], old[10])
            row[11] = max(row[11], old[11])
        self.rounds[key] = row

    def empty(self):
        return not (self.records or self.updates or self.gaps or self.rounds or self.alarms
                    or self.meters or self.rejects or self.status_log or self.touched
                    or self.heads)


class _Null:
    def append(self, _row):
        pass

    def add(self, _row):
        pass


class Quiet(Batch):
    """The sink of a reload's replay: the store already holds what it finds;
    only the verdict of the record just taken is kept (compared with the
    stored one)."""

    def __init__(self):
        Batch.__init__(self)
        self.gaps = self.alarms = self.meters = self.rejects = self.status_log = _Null()
        self.heads = _Null()
        self.touched = _Null()
        self.last = None

    def verdict(self, tid, seq, code):
        self.last = code

    def round_row(self, row):
        pass


def _wall_of(t):
    return t[2] if t is not None else None


def _dice_total(dice):
    if dice is None:
        return None, None
    return json.dumps(list(dice)), sum(dice)


class TableFeed:
    """One table as the floor knows it: what is stored, what is acknowledged,
    and the replay of its records in sequence order."""

    def __init__(self, tid, table, now):
        E, journal, Recall, RoundState = _fw()
        self.id = tid
        self.table = table
        self.contig = 0  # every record up to it stored, or in a gap declared final
        self.pending = {}  # seq -> bytes: stored above a missing record, not yet replayed
        self.acked = 0  # the acknowledgement last published
        self.replay = RoundState()
        self.recall = Recall(table, RECALL_KEEP)
        self.replay.meters = self.recall.meters  # counted where the replay applies
        self.gap_next = False  # the next record replayed follows a gap
        self.meters_whole = False  # the floor's count covers every record since a checkpoint
        self.changed = {}  # round id -> [RoundInfo, first seq, last seq]: rows to draw
        self.chain = None  # chaincheck.Stream when the floor has the site's keys
        self.head_seq = 0  # the highest head the table published, and its hash (hex)
        self.head_hash = None
        self.heads_waiting = {}  # seq -> hash: heads above what is replayed, checked then
        # The tables row.
        self.first_seen = now
        self.last_seen = now
        self.online = None
        self.status = None
        self.status_at = None
        self.code = self.config = self.state = None
        self.round = self.boot = None
        self.oldest = 0
        self.status_seq = 0
        self.missing = []
        self.last_seq = 0
        self.open_gaps = 0
        self.records = self.duplicates = self.conflicts = self.damaged = 0
        self.rejected = self.lost = self.late = 0

    def row(self):
        return (self.first_seen, self.last_seen, self.online, self.status, self.status_at,
                self.code, self.config, self.state, self.round, self.boot, self.oldest,
                self.status_seq, json.dumps(self.missing), self.last_seq, self.contig,
                self.open_gaps, self.records, self.duplicates, self.conflicts, self.damaged,
                self.rejected, self.lost, self.late)

    def load_row(self, r):
        (self.first_seen, self.last_seen, self.online, self.status, self.status_at, self.code,
         self.config, self.state, self.round, self.boot, self.oldest, self.status_seq,
         missing, self.last_seq, self.acked, self.open_gaps, self.records, self.duplicates,
         self.conflicts, self.damaged, self.rejected, self.lost, self.late) = r
        self.missing = json.loads(missing)

    # ---- the replay ------------------------------------------------------------------

    def _final_end(self, s):
        """The last sequence number of a gap declared final that starts at s
        (never past the table's own last sequence number), else 0."""
        top = self.status_seq
        end = 0
        if s < self.oldest:
            end = min(self.oldest - 1, top)
        for a, b in self.missing:
            if a <= s <= b:
                end = max(end, min(b, top))
        return end if end >= s else 0

    def advance(self, out, now):
        """Replay what became contiguous; close gaps declared final."""
        while True:
            s = self.contig + 1
            raw = self.pending.pop(s, None)
            if raw is not None:
                self.contig = s
                self._take(s, raw, out, now)
                continue
            end = self._final_end(s)
            if not end:
                break
            if self.pending:
                end = min(end, min(self.pending) - 1)
            reason = "oldest" if s < self.oldest else "missing"
            out.gaps.append((self.id, s, end, reason, now))
            out.alarms.append((self.id, None, None, "floor", "gap", None,
                               "records %d..%d never delivered: the table's journal no longer "
                               "holds them (%s)" % (s, end, "older than its oldest record"
                                                    if reason == "oldest" else
                                                    "declared lost by the table"), None, now))
            self.lost += end - s + 1
            self.contig = end
            self.gap_next = True
            self.meters_whole = False
            out.touched.add(self.id)
        self.open_gaps = self.last_seq - self.contig - len(self.pending) if self.pending else 0

    def _take(self, seq, raw, out, now):
        E, journal, _Recall, _RoundState = _fw()
        rp = self.replay
        first = rp.seq == 0
        t = raw[1]
        counted = None
        if t == R.J_METERS and self.meters_whole:
            counted = jcmd.meters_dict(self.recall.meters, self.table)
        loads = self.recall.meters.checkpoints
        gap = self.gap_next
        code = rp.take(raw, 0, gap)
        self.gap_next = False
        if first:
            self.meters_whole = seq == 1
        out.verdict(self.id, seq, code)
        rec = journal.Record(raw, 0)
        self._verify(seq, raw, rec, gap or first, out, now)
        if code > 0:
            self.damaged += 1
            out.alarms.append((self.id, seq, rec.round, "floor", "damaged", code,
                               "record seq %d (%s, round %d): %s: not used"
                               % (seq, jcmd._type_name(t), rec.round, jcmd.damage_name(code)),
                               rec.wall, now))
            info = self.recall.current(rec.round)
            if info is not None:
                info.damaged += 1
                self._round(info, seq, out)
            return
        if code < 0:
            return
        if t == R.J_METERS:
            if self.recall.meters.checkpoints > loads:
                self.meters_whole = True
            cp = jcmd.fields(rec, self.table)["meters"]
            differs = None if counted is None or cp is None else int(counted != cp)
            out.meters.append((self.id, seq, rec.round, rec.wall,
                               json.dumps(cp) if cp is not None else None,
                               json.dumps(counted) if counted is not None else None, differs))
            if differs:
                p = rec.payload
                channels = (struct.unpack_from("<H", p, R.P_CHANNELS)[0]
                            if len(p) >= R.P_WINS else None)
                if channels is not None and channels != self.table.channels:
                    # Another layout than the floor's table file: every
                    # winning area the floor shows for this table is wrong.
                    why = ("; it counts %d lamp channels, the floor's table file %d: the "
                           "table runs another layout, and the winning areas the floor "
                           "shows for it are not the table's (give the floor its table "
                           "file)" % (channels, self.table.channels))
                else:
                    why = ""
                out.alarms.append((self.id, seq, rec.round, "floor", "meters", None,
                                   "meters checkpoint seq %d differs from the floor's count of "
                                   "the records%s" % (seq, why), rec.wall, now))
            return
        if t == R.J_ROUND:
            self.draw_rounds(out)  # before recall reuses an old round's RoundInfo
        try:
            self.recall.apply(rec)
        except (ValueError, IndexError, KeyError, TypeError, struct.error) as e:
            out.alarms.append((self.id, seq, rec.round, "floor", "unusable", None,
                               "record seq %d: recall: %s" % (seq, e), rec.wall, now))
            return
        kind = _alarm_kind(t)
        if kind:
            out.alarms.append((self.id, seq, rec.round, "table", kind, rec.p(0),
                               jcmd.record_line(rec, 0, self.table), rec.wall, now))
        info = self.recall.current(rec.round)
        if info is not None:
            self._round(info, seq, out)

    # ---- the MAC chain (docs/tamper-evidence.md) --------------------------------------

    def _verify(self, seq, raw, rec, gap, out, now):
        if self.chain is not None:
            for kind, text in self.chain.take(raw, gap):
                out.alarms.append((self.id, seq, rec.round, "floor", kind, None, text,
                                   rec.wall, now))
        want = self.heads_waiting.pop(seq, None)
        if want is not None:
            self._head_against_chain(seq, want, out, now)

    def _head_against_chain(self, seq, hexhash, out, now):
        link = self.chain.head(seq) if self.chain is not None else None
        if link is not None and link.hex() != hexhash:
            out.alarms.append((self.id, seq, None, "floor", "rollback", None,
                               "head %d:%s is not the chain hash of the records stored "
                               "(%s): the table's journal was rewritten" % (
                                   seq, hexhash, link.hex()), None, now))

    def head(self, seq, hexhash, out, now):
        """A head the table published (its head topic)."""
        if seq < self.head_seq:
            out.alarms.append((self.id, seq, None, "floor", "rollback", None,
                               "head %d:%s is below the highest the table published, %d:%s: "
                               "its journal was rolled back" % (seq, hexhash, self.head_seq,
                                                               self.head_hash), None, now))
            return
        if seq == self.head_seq and hexhash != self.head_hash:
            out.alarms.append((self.id, seq, None, "floor", "rollback", None,
                               "head %d:%s differs from the head %d:%s published before: "
                               "its journal was rewritten" % (seq, hexhash, seq,
                                                              self.head_hash), None, now))
            return
        if seq == self.head_seq:
            return
        self.head_seq = seq
        self.head_hash = hexhash
        out.heads.append((self.id, seq, hexhash, now))
        if seq <= self.contig:
            self._head_against_chain(seq, hexhash, out, now)
        elif len(self.heads_waiting) < 64:
            self.heads_waiting[seq] = hexhash

    def _round(self, info, seq, out):
        c = self.changed.get(info.round)
        if c is None:
            self.changed[info.round] = [info, seq, seq]
            out.dirty[self.id] = self
        else:
            c[2] = seq

    def draw_rounds(self, out):
        """The rows of the rounds changed since the last drawing."""
        for info, first, last in self.changed.values():
            self._round_row(info, first, last, out)
        self.changed.clear()

    def _round_row(self, info, first, last, out):
        d = jcmd.round_dict(info, self.table, (info.round,) if info.damaged else (),
                            self.recall.restarts.get(info.round))
        d["result_wall"] = _wall_of(info.result_time)
        d["ended_wall"] = _wall_of(info.ended)
        dice, total = _dice_total(info.dice if jcmd.dice_ok(info.dice) else None)
        out.round_row([self.id, info.round, info.status, dice, total, d["void_reason"],
                       d["corrections"], int(d["damaged"]), _wall_of(info.started),
                       _wall_of(info.ended), first, last, json.dumps(d)])


_ALARM_KINDS = None


def _alarm_kind(t):
    # Alarms of the table's own, and its technician access (records.ACCESS:
    # the REPL, the clock, deploys, code checks, tests, recovery mode), which
    # the floor lists as "access" (`sicbo floor access`).
    global _ALARM_KINDS
    if _ALARM_KINDS is None:
        _ALARM_KINDS = {R.J_ALARM: "alarm", R.J_VIOLATION: "violation", R.J_HOLD: "hold",
                        R.J_FAULT: "fault", R.J_DAMAGE: "damage"}
        for code in R.ACCESS:
            _ALARM_KINDS[code] = "access"
    return _ALARM_KINDS.get(t)


def why_not_record(data, off):
    """Why the bytes at data[off] are not a record (sicbo.journal.valid_at
    said no), for people."""
    _E, journal, _R, _RS = _fw()
    n = len(data)
    if data[off] != R.MAGIC:
        return "not a journal record (no record starts here)"
    if n - off < 4:
        return "truncated record (%d bytes)" % (n - off)
    length = data[off + 2] | (data[off + 3] << 8)
    if length < R.MIN_LEN or length > R.MAX_LEN:
        return "bad record length %d" % length
    if off + length > n:
        return "truncated record (%d of its %d bytes)" % (n - off, length)
    return "bad CRC"


class Floor:
    """Every table of a site as the floor knows it (see the module doc)."""

    def __init__(self, site, table, lookup=None, log=None, keys=None):
        self.site = S.check_id("site", site)
        self.table = MemoTable(table)  # the SettlementTable that counts wins
        self.feeds = {}
        self.lookup = lookup or (lambda tid, seq: None)  # the stored bytes of a record
        self.log = log or (lambda line: None)
        self.book = None  # chaincheck.Book of the site's key stores (keystore.KeyStore)
        if keys is not None:
            from host_tools import chaincheck

            self.book = chaincheck.Book(keys)

    def feed(self, tid, now):
        f = self.feeds.get(tid)
        if f is None:
            f = self.feeds[tid] = TableFeed(tid, self.table, now)
            if self.book is not None:
                from host_tools import chaincheck

                f.chain = chaincheck.Stream(self.book, tid)
        return f

    def finish(self, out):
        """Complete a batch before it is written: the rows of the rounds its
        records changed."""
        for f in out.dirty.values():
            f.draw_rounds(out)
        out.dirty.clear()

    def message(self, topic, payload, now, out):
        """Take one message of the site's topics into the batch."""
        payload = bytes(payload)
        where = S.parse_topic(self.site, topic)
        if where is None or where[1] == "ack":
            out.rejects.append((None, topic[:200], now, "not a table's journal or status topic",
                                None, 0, len(payload), payload[:REJECT_KEEP]))
            return
        tid, kind = where
        if tid in S.RESERVED:
            # Only the floor's or the read-only account's own identity may
            # write there (the ACL's table patterns give every name its own
            # topics): no table's records.
            out.rejects.append((None, topic[:200], now, "%s name, never a table's"
                                % S.RESERVED[tid], None, 0, len(payload),
                                payload[:REJECT_KEEP]))
            return
        f = self.feed(tid, now)
        f.last_seen = now
        out.touched.add(tid)
        if kind == "status":
            self._status(f, topic, payload, now, out)
        elif kind == "head":
            self._head(f, topic, payload, now, out)
        else:
            self._journal(f, topic, payload, now, out)

    def _head(self, f, topic, payload, now, out):
        from host_tools.chaincheck import parse_head

        try:
            seq, h = parse_head(payload.decode("ascii"))
        except (UnicodeDecodeError, ValueError) as e:
            self._reject(f, topic, payload, 0, len(payload), "head: %s" % e, now, out)
            return
        f.head(seq, h.hex(), out, now)

    def _reject(self, f, topic, payload, off, end, reason, now, out, seq=None):
        f.rejected += 1
        out.rejects.append((f.id, topic, now, reason, seq, off, end - off,
                            payload[off:min(end, off + REJECT_KEEP)]))
        out.alarms.append((f.id, seq, None, "floor", "rejected", None,
                           "%d bytes on %s: %s" % (end - off, topic, reason), None, now))

    def _journal(self, f, topic, payload, now, out):
        _E, journal, _R, _RS = _fw()
        if not payload:
            self._reject(f, topic, payload, 0, 0, "empty payload", now, out)
            return
        found = []
        journal.Scanner().walk(payload, lambda d, o, gap: found.append(o))
        off = 0
        for o in found:
            if o > off:
                self._reject(f, topic, payload, off, o, why_not_record(payload, off), now, out)
            length = payload[o + 2] | (payload[o + 3] << 8)
            self._record(f, payload[o:o + length], now, out)
            off = o + length
        if off < len(payload):
            self._reject(f, topic, payload, off, len(payload), why_not_record(payload, off),
                         now, out)
        before = f.open_gaps
        f.advance(out, now)
        if f.open_gaps and not before:
            out.new_gaps.append((f.id, f.contig + 1, min(f.pending) - 1))

    def _record(self, f, raw, now, out):
        _E, journal, _R, _RS = _fw()
        rec = journal.Record(raw, 0)
        seq = rec.seq
        key = (f.id, seq)
        row = out.records.get(key)
        if row is not None:
            have = row[9]
        elif seq in f.pending:
            have = f.pending[seq]
        elif seq <= f.contig:
            have = self.lookup(f.id, seq)
        else:
            have = None
            f.pending[seq] = raw
        if have is not None:
            if have == raw:
                f.duplicates += 1
            else:
                f.conflicts += 1
                out.rejects.append((f.id, S.journal_topic(self.site, f.id), now,
                                    "conflict: seq %d is stored with other bytes" % seq, seq, 0,
                                    len(raw), raw))
                out.alarms.append((f.id, seq, rec.round, "floor", "conflict", None,
                                   "record seq %d received with other bytes than the stored one "
                                   "(kept in rejects)" % seq, rec.wall, now))
            return
        checked = None
        if seq <= f.contig:
            # Its gap was closed as final before it came: evidence, not replayed.
            checked = -1
            f.late += 1
        out.records[key] = [f.id, seq, rec.type, rec.round, rec.boot, rec.ticks, rec.wall, now,
                            checked, raw]
        out.n += 1
        f.records += 1
        if seq > f.last_seq:
            f.last_seq = seq

    def _status(self, f, topic, payload, now, out):
        try:
            d = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            d = None
        if not isinstance(d, dict):
            self._reject(f, topic, payload, 0, len(payload), "status is not a JSON object",
                         now, out)
            return
        text = payload.decode("utf-8")
        out.status_log.append((f.id, now, text))
        f.status = text
        f.status_at = now
        if isinstance(d.get("online"), bool):
            f.online = int(d["online"])
        for name in ("code", "config", "state"):
            if isinstance(d.get(name), str):
                setattr(f, name, d[name][:100])
        for name in ("round", "boot"):
            if _is_int(d.get(name)):
                setattr(f, name, d[name])
        if _is_int(d.get("seq")) and d["seq"] > f.status_seq:
            f.status_seq = d["seq"]
        if _is_int(d.get("oldest")) and d["oldest"] > f.oldest:
            f.oldest = d["oldest"]
        miss = d.get("missing")
        if isinstance(miss, list):
            f.missing = [[a, b] for a, b in (m for m in miss[:MAX_MISSING] if _is_range(m))]
        f.advance(out, now)

    # ---- a restart ---------------------------------------------------------------------

    def reload(self, conn, now):
        """Rebuild every table's state from the store: its records replayed
        in sequence order through the gaps closed before. Returns (batch,
        differ): what the tables' declarations close now (nothing, unless
        the last run stopped between a message and its commit), to be
        written; and how many stored verdicts the replay did not find again
        (0 unless the firmware's checks changed)."""
        from host_tools.floor.store import TABLE_COLUMNS

        for r in conn.execute("SELECT table_id, %s FROM tables" % ", ".join(TABLE_COLUMNS)):
            self.feed(r[0], now).load_row(r[1:])
        for tid, seq, h in conn.execute("SELECT table_id, seq, hash FROM heads"):
            f = self.feed(tid, now)
            f.head_seq, f.head_hash = seq, h
        quiet = Quiet()
        out = Batch()
        differ = 0
        for tid, f in self.feeds.items():
            saved = f.row()  # the counters are the store's: the replay counts nothing again
            gaps = conn.execute("SELECT first, last FROM gaps WHERE table_id=? ORDER BY first",
                                (tid,)).fetchall()
            gi = 0
            for seq, checked, raw in conn.execute(
                    "SELECT seq, checked, raw FROM records WHERE table_id=? ORDER BY seq", (tid,)):
                if checked == -1:
                    continue  # came after its gap was closed: never replayed
                while gi < len(gaps) and gaps[gi][0] <= f.contig + 1 <= gaps[gi][1]:
                    f.contig = gaps[gi][1]
                    f.gap_next = True
                    f.meters_whole = False
                    gi += 1
                if seq == f.contig + 1:
                    f.contig = seq
                    f._take(seq, bytes(raw), quiet, now)
                    if quiet.last != checked:
                        differ += 1
                else:
                    f.pending[seq] = bytes(raw)
            while gi < len(gaps) and gaps[gi][0] <= f.contig + 1 <= gaps[gi][1]:
                f.contig = gaps[gi][1]
                f.gap_next = True
                gi += 1
            f.load_row(saved)
            f.advance(out, now)
        return out, differ


def _is_int(v):
    # A table's numbers are u32 (its sequence numbers, round ids, boots): a
    # bigger one is not taken, since SQLite's integers stop at 2**63 and a
    # store write that fails stops the service (a table's retained status
    # did so at every restart, for every table).
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 0xFFFFFFFF


def _is_range(m):
    return (isinstance(m, list) and len(m) == 2 and _is_int(m[0]) and _is_int(m[1])
            and 1 <= m[0] <= m[1])
