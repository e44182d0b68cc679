# The round as the journal tells it: the one place where the round's state
# changes. RoundState._apply(buf, off) applies one record; the live machine
# (roundmachine.py) applies every record it writes, the boot applies the
# journal's bytes (feed), through the same code. take() checks a record read
# back before it is applied: a CRC proves only that the bytes are the ones
# written, so a record its type, the sequence, the round or the state does
# not allow is counted as damage and never applied (docs/journal.md, Reading
# and recovery rules).
#
# RoundMachine (roundmachine.py) is a RoundState; recall.py, diag and the host
# tools use a bare RoundState to read a journal without a table's
# configuration. The board's meters are counted here too (self.meters,
# sicbo.meters). Every record written after the journal's last one, by the
# machine or by anyone else (a meters checkpoint, a fault, a diag test), gets
# its numbers from here (put_next_header, encode_next).

from micropython import const

from sicbo import events as E
from sicbo import records as R
from sicbo.journal import FOLLOWS, Scanner, check_payload, encode, plain_len, put_header, u32

KEEP_DAMAGE = const(3)  # damaged records remembered one by one for J_DAMAGE
_MAX_SENSORS = const(16)  # sensor ids are below this (RoundState.faults is a bit each)


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
        self.faults = 0  # bit per sensor id (sicbo.events S_*)
        self.config_id = bytearray(R.CONFIG_ID_LEN)  # of the last J_CONFIG: the files in force
        # The last wall-clock time known while those files were in force (the
        # J_CONFIG's, or a later record's), None if none: the approval check
        # of a board whose clock is not set (startup.py).
        self.config_wall = None
        # Reading the journal.
        # The last record applied: its type | its payload's first byte << 8
        # (an alarm's code). A power cut may keep only the first records of
        # an event's append: RoundMachine.resume finishes what they began.
        self.last_rec = 0
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

    # ---- the next record ------------------------------------------------------

    def put_next_header(self, buf, off, rtype, length, now, wall):
        """The header of the record that follows the last one applied, at
        buf[off] (no allocation): its sequence number, round id and boot count."""
        put_header(buf, off, rtype, length, self.seq + 1,
                   self.round + 1 if rtype == R.J_ROUND else self.round,
                   self.boot + 1 if rtype == R.J_BOOT else self.boot, now, wall)

    def encode_next(self, rtype, payload, now, wall):
        """A record that follows the last one, as bytes (allocates: rare
        records, never the round's), applied to this state like any record."""
        rec = encode(rtype, self.seq + 1, self.round + 1 if rtype == R.J_ROUND else self.round,
                     self.boot + 1 if rtype == R.J_BOOT else self.boot, now, wall, payload)
        self.take(rec, 0)
        return rec

    # ---- reading the journal ----------------------------------------------------

    def feed(self, data):
        """Apply every valid record of one segment's bytes (bytes or memoryview,
        possibly ending in a torn record), in order; duplicates are ignored."""
        self.scanner.walk(data, self.take)

    def take(self, b, o, gap=False):
        """Check the CRC-valid record at b[o] and apply it: returns 0, or -1 for
        a duplicate (ignored), or the damage code E.BAD_* of a record that is
        counted and not applied. gap: records may be missing just before it."""
        seq = u32(b, o + R.OFF_SEQ)
        if seq <= self.seq:
            self.duplicates += 1
            return -1
        t = b[o + R.OFF_TYPE]
        code = check_payload(t, plain_len(b, o), b, o + R.HEADER)
        in_order = True
        rid = u32(b, o + R.OFF_ROUND)
        if seq > R.MAX_ID or rid > R.MAX_ID:
            # Numbers no table reaches (forged, or damaged with a good CRC):
            # never followed, whatever the gap.
            code = E.BAD_SEQ if seq > R.MAX_ID else E.BAD_ROUND
            in_order = False
        elif self.seq:
            # After the first record: the sequence and round ids follow on.
            nxt = self.round + 1 if t == R.J_ROUND else self.round
            bad = self.bad_seq
            if bad and (seq == bad + 1 or seq == self.seq + 2):
                # It follows on from a damaged record that took the place of
                # one (its seq or round id wrong): a record is missing before
                # it, no more; the journal goes on from here, and no sequence
                # number or round id of the journal is used again after boot.
                gap = True
            if not (seq == self.seq + 1 or gap and seq - self.seq <= R.MAX_SKIP):
                code = E.BAD_SEQ
                in_order = False
            elif not (rid == nxt or gap and nxt <= rid <= nxt + R.MAX_SKIP):
                code = E.BAD_ROUND
                in_order = False
            elif not code and self.synced:
                code = self._allowed(t, b, o + R.HEADER)
        elif seq == 1:
            self.synced = True  # the table's first record: the state is idle
        if code:
            self.damaged += 1
            k = self.pending
            if k < KEEP_DAMAGE:
                d = self.damage
                d[6 * k] = code
                d[6 * k + 1] = t
                _copy(b, o + R.OFF_SEQ, d, 6 * k + 2, 4)
            self.pending = k + 1
            if in_order:
                # Its sequence number and round id are in order: the next
                # records follow on from them.
                self.seq = seq
                self.round = u32(b, o + R.OFF_ROUND)
                self.bad_seq = 0
            else:
                self.bad_seq = seq
            return code
        self.bad_seq = 0
        self._apply(b, o)
        return 0

    def _allowed(self, t, b, p):
        # What the record says against the state the journal left the round
        # in: the states its type may follow (sicbo/records.py), then what
        # its payload must agree with.
        st = self.state
        if not (FOLLOWS[t] >> st) & 1:
            return E.BAD_STATE
        if t == R.J_RESULT or t == R.J_VOID:
            ok = not (st == E.ST_HOLD and self.has_result)
        elif t == R.J_CORRECTION:
            ok = self.has_result and _same(b, p + R.P_OLD_DICE, self.dice)
        elif t == R.J_HOLD:
            ok = self.has_reader and _same(b, p + R.P_READER_DICE, self.reader) and (
                st != E.ST_PAYING or _same(b, p + R.P_DEALER_DICE, self.dice))
        elif t == R.J_READER:
            ok = not self.has_reader
        else:
            ok = True
        return 0 if ok else E.BAD_STATE

    # ---- the transition ------------------------------------------------------------

    def _apply(self, b, o):
        """The transition of one record (sealed or not) at b[o]. True when it
        set the round's state (a record of the round's procedure), False for
        one that only notes something (an alarm, a key turn, the meters)."""
        t = b[o + R.OFF_TYPE]
        self.last_rec = t | (b[o + R.HEADER + R.P_CODE] << 8)
        self.seq = u32(b, o + R.OFF_SEQ)
        self.round = u32(b, o + R.OFF_ROUND)
        self.boot = b[o + R.OFF_BOOT] | (b[o + R.OFF_BOOT + 1] << 8)
        p = o + R.HEADER
        end = o + plain_len(b, o) - R.CRC_LEN  # a MAC is not the payload's
        mt = self.meters
        if mt is not None:
            # Before the transition: a payout's wins are those of the result it pays.
            mt.count(t, b, p, end, self.dice if self.has_result else None)
        if b[o + R.OFF_FLAGS] & R.FLAG_WALL:
            self.config_wall = u32(b, o + R.OFF_WALL)
        elif t == R.J_CONFIG:
            self.config_wall = None
        if t == R.J_ROUND:
            self.synced = True
            self.open_seq = self.seq
            self.has_result = False
            self.has_reader = False
            self.violation = False
            self.void_lit = False
            self.alarm = False
            st = E.ST_SHAKING
        elif t == R.J_OPEN:
            st = E.ST_OPEN
        elif t == R.J_BELL:
            st = E.ST_CLOSED
        elif t == R.J_COVER_OFF:
            st = E.ST_RESULT
        elif t == R.J_RESULT or t == R.J_CORRECTION:
            _copy(b, p + (R.P_DICE if t == R.J_RESULT else R.P_NEW_DICE), self.dice, 0, 3)
            self.has_result = True
            st = E.ST_PAYING
        elif t == R.J_HOLD:
            _copy(b, p + R.P_DEALER_DICE, self.hold, 0, 3)
            _copy(b, p + R.P_READER_DICE, self.reader, 0, 3)
            self.has_reader = True
            st = E.ST_HOLD
        elif t == R.J_READER:
            _copy(b, p + R.P_DICE, self.reader, 0, 3)
            self.has_reader = True
            return False
        elif t == R.J_VOID or t == R.J_PAYOUT:
            self.void_lit = t == R.J_VOID
            self.has_result = False
            self.has_reader = False
            self.open_seq = 0
            st = E.ST_IDLE
        elif t == R.J_ALARM:
            self.alarm = True
            sensor = b[p + R.P_DETAIL]
            if b[p + R.P_CODE] == E.R_SENSOR_FAULT and sensor < _MAX_SENSORS:
                self.faults |= 1 << sensor
            return False
        elif t == R.J_VIOLATION:
            self.alarm = True
            self.violation = True
            return False
        elif t == R.J_ALARM_CLEAR:
            self.alarm = False
            self.faults = 0
            return False
        elif t == R.J_BOOT:
            self.faults = 0  # sensor faults are detected again, not resumed
            return False
        elif t == R.J_CONFIG:
            _copy(b, p + R.P_CONFIG_ID, self.config_id, 0, R.CONFIG_ID_LEN)
            return False
        elif t == R.J_METERS:
            # A checkpoint carries the configuration in force: rotation may
            # have deleted its J_CONFIG.
            q = p + R.P_CHANNELS
            c = p + R.P_WINS + 4 * (b[q] | (b[q + 1] << 8))
            if c + R.METERS_CONFIG <= end:
                _copy(b, c + R.C_ID, self.config_id, 0, R.CONFIG_ID_LEN)
                if b[c + R.C_FLAGS] & 1 and self.config_wall is None:
                    self.config_wall = u32(b, c + R.C_WALL)
            return False
        elif t == R.J_DAMAGE:
            # Reported: what was found before it is not reported again. A round
            # being paid is held for the supervisor (docs/journal.md).
            self.pending = 0
            if self.state != E.ST_PAYING:
                return False
            st = E.ST_HOLD
        else:
            return False
        self.state = st
        return True


def _copy(b, p, out, at, n):
    # b[p:p + n] into out[at:at + n], without the slice a copy would allocate.
    for i in range(n):
        out[at + i] = b[p + i]


def _same(b, p, dice):
    return b[p] == dice[0] and b[p + 1] == dice[1] and b[p + 2] == dice[2]
