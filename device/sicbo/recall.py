# Game recall (the last 10 rounds) and meters, both rebuilt from the journal:
# feed it every segment at boot and every record the round machine writes
# afterwards (Recall.feed(m.records())). Each record is first checked the way
# the round machine checks it at boot (RoundState.take): duplicates are
# ignored, and a record that its type, the sequence, the round or the state
# does not allow is damage: counted, listed, never used.
#
# Meters: rounds started, paid, voids (and per void reason), alarms,
# violations, corrections, refusals, holds, wins per lamp channel (an area's
# win is counted when its round is paid, on the effective result after any
# correction). A J_METERS record (written at the head of a new journal
# segment, see checkpoint()) carries the meters as of its sequence number, so
# rotation that deletes old segments loses no count.

import struct

from micropython import const

from sicbo import events as E
from sicbo import journal
from sicbo.roundstate import RoundState

RECALL_ROUNDS = const(10)
_COUNTERS = ("rounds", "paid", "voids", "alarms", "violations", "corrections",
             "refusals", "holds")
_NCOUNT = const(8)
_MAKE_AHEAD = const(32)


class RoundInfo:
    """One round as the journal tells it. Times: (boot, ticks, wall or None)."""

    def __init__(self, rec=None):
        # rec None: a blank one, made ahead (Recall keeps them for later rounds).
        self.round = rec.round if rec is not None else 0
        self.shaker = rec.p(0) if rec is not None else 0
        self.started = (rec.boot, rec.ticks, rec.wall) if rec is not None else None
        self.bell = None
        self.result_time = None
        self.ended = None
        self.dice = None  # the effective result
        self.first_dice = None  # the result first confirmed (if corrected)
        self.corrections = []  # [(old dice, new dice, time)]
        self.reader = None
        self.hold = None  # (dealer dice, reader dice)
        self.void_reason = 0  # V_*; 0 if not void
        self.void_policy = 0
        self.alarms = []  # [message code]
        self.violations = 0
        self.damaged = 0  # records of this round not used (damage)
        self.status = "open"  # open, paying, paid, void

    def winning_areas(self, table):
        """[(area code, odds)] of the effective result; [] if none."""
        if self.dice is None:
            return []
        from sicbo import areas

        return [(areas.code(a), o) for a, o in table.winning_areas(*self.dice)]


class Meters:
    def __init__(self, channels):
        self.counts = [0] * _NCOUNT
        self.void_reasons = [0] * 8
        self.wins = [0] * channels  # per lamp channel (status channels stay 0)
        # record()'s buffer, made with the meters at boot: the first rotation
        # may come when the heap has no free block this large.
        self._rec = bytearray(journal.HEADER + journal.METERS_HEAD + 4 * channels
                              + journal.METERS_CONFIG + journal.CRC_LEN)

    def get(self, name):
        return self.counts[_COUNTERS.index(name)]

    def add(self, name, n=1):
        self.counts[_COUNTERS.index(name)] += n

    def as_dict(self, table=None):
        d = {}  # type: dict
        for i in range(_NCOUNT):
            d[_COUNTERS[i]] = self.counts[i]
        d["void_reasons"] = list(self.void_reasons)
        if table is not None:
            wins = {}
            for c in range(len(self.wins)):
                name = table.cfg.lamp_order[c]
                if name is not None and c not in table.status_channel.values():
                    wins[name] = self.wins[c]
            d["wins"] = wins
        return d

    def payload(self):
        """The meters as a J_METERS payload (u32 counters, u32 void reasons,
        u16 channel count, u32 wins per channel)."""
        buf = bytearray(4 * _NCOUNT + 4 * 8 + 2 + 4 * len(self.wins))
        self._pack(buf, 0)
        return bytes(buf)

    def _pack(self, buf, at):
        n = len(self.wins)
        for i in range(_NCOUNT):
            struct.pack_into("<I", buf, at + 4 * i, self.counts[i])
        for i in range(8):
            struct.pack_into("<I", buf, at + 4 * _NCOUNT + 4 * i, self.void_reasons[i])
        off = at + 4 * _NCOUNT + 32
        struct.pack_into("<H", buf, off, n)
        for c in range(n):
            struct.pack_into("<I", buf, off + 2 + 4 * c, self.wins[c])

    def record(self, seq, rid, boot, now, wall, config_id=b"", config_wall=None):
        """The meters as a sealed J_METERS record, in a buffer made once
        (valid until the next call), with the configuration in force: its id
        and the last wall time known under it (journal.METERS_CONFIG)."""
        buf = self._rec
        n = len(buf)
        journal.put_header(buf, 0, E.J_METERS, n, seq, rid, boot, now, wall)
        self._pack(buf, journal.HEADER)
        c = n - journal.CRC_LEN - journal.METERS_CONFIG
        for i in range(6):
            buf[c + i] = config_id[i] if i < len(config_id) else 0
        buf[c + 6] = 0 if config_wall is None else 1
        buf[c + 7] = 0
        struct.pack_into("<I", buf, c + 8, config_wall or 0)
        journal.seal(buf, n)
        return buf

    def load(self, payload):
        off = 4 * _NCOUNT + 32
        if len(payload) < off + 2:
            return False
        n = struct.unpack_from("<H", payload, off)[0]
        if n != len(self.wins) or len(payload) < off + 2 + 4 * n:
            return False  # another table's checkpoint: ignored
        for i in range(_NCOUNT):
            self.counts[i] = struct.unpack_from("<I", payload, 4 * i)[0]
        for i in range(8):
            self.void_reasons[i] = struct.unpack_from("<I", payload, 4 * _NCOUNT + 4 * i)[0]
        for c in range(n):
            self.wins[c] = struct.unpack_from("<I", payload, off + 2 + 4 * c)[0]
        return True


class Recall:
    def __init__(self, table, keep=RECALL_ROUNDS):
        self.table = table
        self.keep = keep
        self.rounds = []  # RoundInfo, oldest first, at most keep
        self.meters = Meters(table.channels)
        # The journal's order as the round machine sees it (its checks).
        self.order = RoundState()
        self.damaged = 0
        self.damage = []  # [(seq, type, code E.BAD_*)], the last `keep`
        self._rec = None  # the Record _take decodes each record into
        # On the board (a few rounds kept), every RoundInfo made now, before
        # the replay; the host keeps many and makes them as it goes.
        self._blank = [RoundInfo() for _ in range(keep)] if keep <= _MAKE_AHEAD else []
        self.checkpoints = 0

    def feed(self, data):
        """Feed journal bytes (a segment at boot, or m.records() live)."""
        self.order.scanner.walk(data, self._take)

    def _take(self, data, off, gap):
        code = self.order.take(data, off, gap)
        if code < 0:
            return  # a duplicate: never counted twice
        if not code and data[off + 1] == E.J_METERS:
            # Read in place: a checkpoint is the journal's one large record,
            # and a copy of it may not find a free block on a boot's heap.
            end = off + (data[off + 2] | (data[off + 3] << 8)) - journal.CRC_LEN
            if self.meters.load(memoryview(data)[off + journal.HEADER:end]):
                self.checkpoints += 1
            return
        # One Record, decoded anew for each record: a boot replays hundreds,
        # and what recall keeps of them are numbers, never the Record.
        rec = self._rec
        if rec is None:
            rec = self._rec = journal.Record(data, off)
        else:
            rec.__init__(data, off)
        if code:
            self.damaged += 1
            self.damage.append((rec.seq, rec.type, code))
            if len(self.damage) > self.keep:
                self.damage.pop(0)
            info = self.current(rec.round)
            if info is not None:
                info.damaged += 1
            return
        self.apply(rec)

    def current(self, rid):
        for info in self.rounds:
            if info.round == rid:
                return info
        return None

    def apply(self, rec):
        """Count one record that passed the checks (feed() checks)."""
        t = rec.type
        mt = self.meters
        if t == E.J_METERS:
            if mt.load(rec.payload):
                self.checkpoints += 1
            return
        if t == E.J_ROUND:
            rounds = self.rounds
            # A RoundInfo made ahead, or the oldest one made anew: a boot
            # replaying a full journal allocates no RoundInfo (and its
            # attribute table) on the heap the replay fragments.
            if len(rounds) >= self.keep:
                info = rounds.pop(0)
            elif self._blank:
                info = self._blank.pop()
            else:
                info = None
            if info is None:
                info = RoundInfo(rec)
            else:
                info.__init__(rec)
            rounds.append(info)
            mt.add("rounds")
            return
        if t == E.J_REFUSED:
            mt.add("refusals")
        info = self.current(rec.round)
        if t == E.J_ALARM:
            mt.add("alarms")
            if info is not None:
                info.alarms.append(rec.p(0))
        elif t == E.J_VIOLATION:
            mt.add("violations")
            if info is not None:
                info.violations += 1
        elif t == E.J_VOID:
            mt.add("voids")
            mt.void_reasons[rec.p(0) & 7] += 1
        elif t == E.J_CORRECTION:
            mt.add("corrections")
        elif t == E.J_HOLD:
            mt.add("holds")
        if info is None:
            return
        if t == E.J_BELL or t == E.J_RESULT or t == E.J_CORRECTION or t == E.J_VOID or (
                t == E.J_PAYOUT):
            when = (rec.boot, rec.ticks, rec.wall)
        if t == E.J_BELL:
            info.bell = when
        elif t == E.J_RESULT:
            info.dice = rec.dice()
            info.first_dice = info.dice
            info.result_time = when
            info.status = "paying"
        elif t == E.J_CORRECTION:
            info.corrections.append((rec.dice(0), rec.dice(3), when))
            info.dice = rec.dice(3)
            info.status = "paying"
        elif t == E.J_READER:
            info.reader = rec.dice()
        elif t == E.J_HOLD:
            info.hold = (rec.dice(0), rec.dice(3))
        elif t == E.J_VOID:
            info.void_reason = rec.p(0)
            info.void_policy = rec.p(1)
            info.status = "void"
            info.ended = when
        elif t == E.J_PAYOUT:
            info.status = "paid"
            info.ended = when
            mt.add("paid")
            if info.dice is not None:
                row = self.table.settle(*info.dice)
                n = len(row)
                for c in range(self.table.channels):
                    if (row[n - 1 - (c >> 3)] >> (c & 7)) & 1:
                        mt.wins[c] += 1

    def last(self, n=RECALL_ROUNDS):
        """The last n rounds, newest first."""
        out = self.rounds[-n:]
        out.reverse()
        return out


def checkpoint(machine, recall, now, wall=None):
    """A sealed J_METERS record with the machine's next sequence number: the
    first bytes of a new journal segment (JournalStore(checkpoint=...)).
    In the meters' own buffer (valid until the next checkpoint). The machine and the recall take it
    like any record (its counts already include everything before it)."""
    rec = recall.meters.record(machine.seq + 1, machine.round, machine.boot, now, wall,
                               machine.config_id, machine.config_wall)
    machine.take(rec, 0)
    recall.feed(rec)
    return rec
