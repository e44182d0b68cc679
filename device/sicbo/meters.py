# The table's meters: rounds started, paid, voids (and per void reason),
# alarms, violations, corrections, refusals, holds, and wins per lamp channel
# (an area's win is counted when its round is paid, on the effective result
# after any correction).
#
# One counting rule (count), used by both readers of the journal: the board's
# round machine counts each record it applies (RoundState._apply, live and at
# replay), and the host's game recall (sicbo.recall) counts each record it
# takes. The board keeps only these numbers: the last rounds themselves are
# read back from the journal when asked for (diag.recall, sicbo journal).
#
# A J_METERS record (the head of every segment that rotation opens, see
# checkpoint()) carries the meters as of its sequence number, so the rotation
# that deletes old segments loses no count.

import struct

from micropython import const

from sicbo import journal
from sicbo import records as R
from sicbo.journal import METER_OF

# The counters, in the order of their index (a record type's meter is
# declared with it: sicbo/records.py, as journal.METER_OF has it).
NAMES = ("rounds", "paid", "voids", "alarms", "violations", "corrections", "refusals",
         "holds")
_NO_METER = const(255)


class Meters:
    """Meters(channels, table): the counts of a table of `channels` lamp
    channels; `table`, its SettlementTable, says which channels a paid
    result lights (None: wins are not counted, for a checkpoint read alone).
    channels None: a reader that does not know the table (diag with its
    files refused) takes any checkpoint's channels."""

    def __init__(self, channels, table=None):
        self.table = table
        self.any_table = channels is None
        self.counts = [0] * R.COUNTERS
        self.void_reasons = [0] * R.VOID_REASONS
        self.wins = [0] * (channels or 0)  # per lamp channel (status channels stay 0)
        self.checkpoints = 0  # J_METERS records loaded
        # record()'s buffer, made with the meters at boot: the first rotation
        # may come when the heap has no free block this large.
        self._rec = bytearray(R.HEADER + R.METERS_HEAD + 4 * len(self.wins)
                              + R.METERS_CONFIG + R.METERS_CHAIN + R.CRC_LEN)

    def get(self, name):
        return self.counts[NAMES.index(name)]

    def count(self, t, b, p, end, dice):
        """Count one record that passed the journal's checks: its type t, its
        payload b[p:end], and the effective dice of its round (None when not
        known). A J_METERS record replaces every count."""
        if t == R.J_METERS:
            if self.load(b, p, end):
                self.checkpoints += 1
            return
        # The meter each record type counts is declared with it (sicbo/records.py).
        c = METER_OF[t] if t < len(METER_OF) else _NO_METER
        if c == _NO_METER:
            return
        self.counts[c] += 1
        if t == R.J_VOID:  # its payload's length is checked (journal.check_payload)
            self.void_reasons[b[p + R.P_REASON] & (R.VOID_REASONS - 1)] += 1
        elif t == R.J_PAYOUT and dice is not None and self.table is not None:
            table = self.table
            row = table.settle(dice[0], dice[1], dice[2])
            n = len(row)
            wins = self.wins
            for ch in range(table.channels):
                if (row[n - 1 - (ch >> 3)] >> (ch & 7)) & 1:
                    wins[ch] += 1

    def as_dict(self, table=None):
        """The counts by name; with table (a SettlementTable of this many
        channels), the wins by lamp channel name."""
        d = {}  # type: dict
        for i in range(R.COUNTERS):
            d[NAMES[i]] = self.counts[i]
        d["void_reasons"] = list(self.void_reasons)
        if table is not None:
            wins = {}
            for c in range(len(self.wins)):
                name = table.cfg.channel_name(c)
                if name is not None and c not in table.status_channel.values():
                    wins[name] = self.wins[c]
            d["wins"] = wins
        return d

    def payload(self):
        """The meters as a J_METERS payload, without the configuration tail."""
        buf = bytearray(R.P_WINS + 4 * len(self.wins))
        self._pack(buf, 0)
        return bytes(buf)

    def _pack(self, buf, at):
        n = len(self.wins)
        for i in range(R.COUNTERS):
            struct.pack_into("<I", buf, at + R.P_COUNTERS + 4 * i, self.counts[i])
        for i in range(R.VOID_REASONS):
            struct.pack_into("<I", buf, at + R.P_VOID_REASONS + 4 * i, self.void_reasons[i])
        struct.pack_into("<H", buf, at + R.P_CHANNELS, n)
        for c in range(n):
            struct.pack_into("<I", buf, at + R.P_WINS + 4 * c, self.wins[c])

    def record(self, machine, now, wall):
        """The meters as a J_METERS record after the machine's last one, in a
        buffer made once (valid until the next call), CRC filled in, with the
        configuration in force: its id and the last wall time known under it
        (the configuration tail, sicbo/records.py C_*), then room for the
        chain's head (H_*: zeros here; the chain fills it in as it seals the
        record, sicbo/chain.py)."""
        buf = self._rec
        n = len(buf)
        machine.put_next_header(buf, 0, R.J_METERS, n, now, wall)
        self._pack(buf, R.HEADER)
        c = n - R.CRC_LEN - R.METERS_CHAIN - R.METERS_CONFIG
        for i in range(R.CONFIG_ID_LEN):
            buf[c + R.C_ID + i] = machine.config_id[i]
        known = machine.config_wall
        buf[c + R.C_FLAGS] = 0 if known is None else 1
        buf[c + R.C_FLAGS + 1] = 0
        struct.pack_into("<I", buf, c + R.C_WALL, known or 0)
        journal.seal(buf, n)
        return buf

    def load(self, b, p=0, end=None):
        """Take the counts of a J_METERS payload b[p:end] (end None: len(b)).
        False, nothing taken, for a payload too short or of another table
        (another number of channels)."""
        if end is None:
            end = len(b)
        if end < p + R.METERS_HEAD:
            return False
        n = b[p + R.P_CHANNELS] | (b[p + R.P_CHANNELS + 1] << 8)
        if end < p + R.P_WINS + 4 * n:
            return False
        if n != len(self.wins):
            if not self.any_table:
                return False  # another table's
            self.wins = [0] * n
        for i in range(R.COUNTERS):
            self.counts[i] = struct.unpack_from("<I", b, p + R.P_COUNTERS + 4 * i)[0]
        for i in range(R.VOID_REASONS):
            self.void_reasons[i] = struct.unpack_from("<I", b, p + R.P_VOID_REASONS + 4 * i)[0]
        for c in range(n):
            self.wins[c] = struct.unpack_from("<I", b, p + R.P_WINS + 4 * c)[0]
        return True


def checkpoint(machine, now, wall=None):
    """A J_METERS record of the machine's meters, after its last record: the
    first bytes of a new journal segment (JournalStore(checkpoint=...)), in
    the meters' own buffer (valid until the next checkpoint). The machine
    takes it like any record."""
    rec = machine.meters.record(machine, now, wall)
    machine.take(rec, 0)
    return rec
