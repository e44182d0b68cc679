# What a round is, as the journal says: the one place where the round's state
# changes. RoundState._apply(buf, off) applies one record; the live machine
# (round.py) applies every record it writes, the boot applies the journal's
# bytes (feed), through the same code. take() checks a record read back before
# it is applied: a CRC proves only that the bytes are the ones written, so a
# record its type, the sequence, the round or the state does not allow is
# counted as damage and never applied (docs/journal.md, Recovery rules).
#
# RoundMachine (round.py) is a RoundState; recall.py, diag and the host tools
# use a bare RoundState to read a journal without a table's configuration.
# The board's meters are counted here too (self.meters, sicbo.meters).

from micropython import const

from sicbo import events as E
from sicbo.journal import (
    CRC_LEN,
    HEADER,
    METERS_CONFIG,
    METERS_HEAD,
    Scanner,
    check_payload,
    u32,
)

ENTRY_DICE = const(0)
ENTRY_VOID = const(1)
KEEP_DAMAGE = const(3)  # damaged records remembered one by one for J_DAMAGE

# Bit s set: a record of this type may follow a record that left the round in
# state s (index: J_* type). J_ROUND may start a round in any state: it is
# where the replay finds its way again after a damaged record.
_IN = (b"\x00\x7f\x7f\x02\x04\x08\x50\x60\x5e\x20\x7f\x70\x7f\x30\x38\x7f\x7f\x7f"
       b"\x7f\x7f\x7f\x7f\x7f")


class RoundState:
    """The round's state and its one transition function (see module doc)."""

    def __init__(self):
        self.state = E.ST_IDLE
        self.round = 0
        self.seq = 0  # of the last record applied (or counted as damage)
        self.boot = 0
        self.open_seq = 0  # seq of this round's J_ROUND while it is unfinished
        self.dice = bytearray(3)  # the effective result
        self.has_result = False
        self.reader = bytearray(3)
        self.has_reader = False
        self.hold = bytearray(3)  # the dealer's (or the effective) dice of a hold
        self.alarm = False
        self.violation = False
        self.void_lit = False
        self.faults = 0  # bit per sensor id
        self.config_id = bytearray(6)  # of the last J_CONFIG: the files in force
        # The last wall-clock time known while those files were in force (the
        # J_CONFIG's, or a later record's), None if none: the approval check
        # of a board whose clock is not set (appboot).
        self.config_wall = None
        # The dealer's entry (not journaled: reset by every change of state).
        self.entry_n = 0
        self.entry_mode = ENTRY_DICE
        self.void_reason = 0
        # Reading the journal.
        self.scanner = Scanner()
        self.synced = False  # the round's state is known (journal from seq 1, or a J_ROUND)
        self.duplicates = 0
        self.damaged = 0  # records not applied: damage
        self.pending = 0  # damage found since the last J_DAMAGE
        self.bad_seq = 0  # seq of the last damaged record not followed (0: none)
        self.damage = bytearray(6 * KEEP_DAMAGE)  # per damaged record: code, type, seq
        # The table's meters (sicbo.meters.Meters), counted by _apply; None
        # for a reader that keeps no meters.
        self.meters = None

    def feed(self, data):
        """Apply every valid record of one segment's bytes (bytes or memoryview,
        possibly ending in a torn record), in order; duplicates are ignored."""
        self.scanner.walk(data, self.take)

    def take(self, b, o, gap=False):
        """Check the CRC-valid record at b[o] and apply it: returns 0, or -1 for
        a duplicate (ignored), or the damage code E.BAD_* of a record that is
        counted and not applied. gap: records may be missing just before it."""
        seq = u32(b, o + 4)
        if seq <= self.seq:
            self.duplicates += 1
            return -1
        t = b[o + 1]
        code = check_payload(t, b[o + 2] | (b[o + 3] << 8), b, o + HEADER)
        head = True
        if self.seq:
            # After the first record: the sequence and round ids follow on.
            rid = u32(b, o + 8)
            nxt = self.round + 1 if t == E.J_ROUND else self.round
            bad = self.bad_seq
            if bad and (seq == bad + 1 or seq == self.seq + 2):
                # It follows on from a damaged record that took the place of
                # one (its seq or round id wrong): a record is missing before
                # it, no more; the journal goes on from here, and no sequence
                # number or round id of the journal is used again after boot.
                gap = True
            if not (seq == self.seq + 1 or gap):
                code = E.BAD_SEQ
                head = False
            elif not (rid == nxt or gap and rid >= nxt):
                code = E.BAD_ROUND
                head = False
            elif not code and self.synced:
                code = self._allowed(t, b, o + HEADER)
        elif seq == 1:
            self.synced = True  # the table's first record: the state is idle
        if code:
            self.damaged += 1
            k = self.pending
            if k < KEEP_DAMAGE:
                d = self.damage
                d[6 * k] = code
                d[6 * k + 1] = t
                for i in range(4):
                    d[6 * k + 2 + i] = b[o + 4 + i]
            self.pending = k + 1
            if head:
                # Its sequence number and round id are in order: the next
                # records follow on from them.
                self.seq = seq
                self.round = u32(b, o + 8)
                self.bad_seq = 0
            else:
                self.bad_seq = seq
            return code
        self.bad_seq = 0
        self._apply(b, o)
        return 0

    def _allowed(self, t, b, p):
        # What the record says against the state the journal left the round in.
        st = self.state
        if not (_IN[t] >> st) & 1:
            return E.BAD_STATE
        if t == E.J_RESULT or t == E.J_VOID:
            ok = not (st == E.ST_HOLD and self.has_result)
        elif t == E.J_CORRECTION:
            ok = self.has_result and _same(b, p, self.dice)
        elif t == E.J_HOLD:
            ok = self.has_reader and _same(b, p + 3, self.reader) and (
                st != E.ST_PAYING or _same(b, p, self.dice))
        elif t == E.J_READER:
            ok = not self.has_reader
        else:
            ok = True
        return 0 if ok else E.BAD_STATE

    def _apply(self, b, o):
        # The transition of one record (sealed or not) at b[o].
        t = b[o + 1]
        self.seq = u32(b, o + 4)
        self.round = u32(b, o + 8)
        self.boot = b[o + 12] | (b[o + 13] << 8)
        p = o + HEADER
        mt = self.meters
        if mt is not None:
            # Before the transition: a payout's wins are those of the result it pays.
            mt.count(t, b, p, o + (b[o + 2] | (b[o + 3] << 8)) - CRC_LEN,
                     self.dice if self.has_result else None)
        if b[o + 14] & 1:  # journal.FLAG_WALL
            self.config_wall = u32(b, o + 20)
        elif t == E.J_CONFIG:
            self.config_wall = None
        if t == E.J_ROUND:
            self.synced = True
            self.open_seq = self.seq
            self.has_result = False
            self.has_reader = False
            self.violation = False
            self.void_lit = False
            self.alarm = False
            st = E.ST_SHAKING
        elif t == E.J_OPEN:
            st = E.ST_OPEN
        elif t == E.J_BELL:
            st = E.ST_CLOSED
        elif t == E.J_COVER_OFF:
            st = E.ST_RESULT
        elif t == E.J_RESULT or t == E.J_CORRECTION:
            k = p if t == E.J_RESULT else p + 3
            for i in range(3):
                self.dice[i] = b[k + i]
            self.has_result = True
            st = E.ST_PAYING
        elif t == E.J_HOLD:
            for i in range(3):
                self.hold[i] = b[p + i]
                self.reader[i] = b[p + 3 + i]
            self.has_reader = True
            st = E.ST_HOLD
        elif t == E.J_READER:
            for i in range(3):
                self.reader[i] = b[p + i]
            self.has_reader = True
            return
        elif t == E.J_VOID or t == E.J_PAYOUT:
            self.void_lit = t == E.J_VOID
            self.has_result = False
            self.has_reader = False
            self.open_seq = 0
            st = E.ST_IDLE
        elif t == E.J_ALARM:
            self.alarm = True
            if b[p] == E.R_SENSOR_FAULT:
                self.faults |= 1 << (b[p + 1] & 15)
            return
        elif t == E.J_VIOLATION:
            self.alarm = True
            self.violation = True
            return
        elif t == E.J_ALARM_CLEAR:
            self.alarm = False
            self.faults = 0
            return
        elif t == E.J_BOOT:
            self.faults = 0  # sensor faults are detected again, not resumed
            return
        elif t == E.J_CONFIG:
            for i in range(6):
                self.config_id[i] = b[p + i]
            return
        elif t == E.J_METERS:
            # A checkpoint carries the configuration in force: rotation may
            # have deleted its J_CONFIG (journal.METERS_CONFIG).
            q = p + METERS_HEAD - 2
            c = q + 2 + 4 * (b[q] | (b[q + 1] << 8))
            if c + METERS_CONFIG <= o + (b[o + 2] | (b[o + 3] << 8)) - CRC_LEN:
                for i in range(6):
                    self.config_id[i] = b[c + i]
                if b[c + 6] & 1 and self.config_wall is None:
                    self.config_wall = u32(b, c + 8)
            return
        elif t == E.J_DAMAGE:
            # Reported: what was found before it is not reported again. A round
            # being paid is held for the supervisor (docs/journal.md).
            self.pending = 0
            if self.state != E.ST_PAYING:
                return
            st = E.ST_HOLD
        else:
            return
        self.state = st
        self._entry_reset()

    def _entry_reset(self):
        # (void_reason is reset when a void entry starts.)
        self.entry_n = 0
        self.entry_mode = ENTRY_DICE


def _same(b, p, dice):
    return b[p] == dice[0] and b[p + 1] == dice[1] and b[p + 2] == dice[2]
