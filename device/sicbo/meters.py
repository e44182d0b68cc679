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

from sicbo import events as E
from sicbo import journal

_COUNTERS = ("rounds", "paid", "voids", "alarms", "violations", "corrections",
             "refusals", "holds")
_NCOUNT = const(8)
# Counter index (in _COUNTERS) per record type J_0..J_13, 255: not counted:
# J_ROUND rounds, J_CORRECTION corrections, J_VOID voids, J_PAYOUT paid,
# J_ALARM alarms, J_VIOLATION violations, J_REFUSED refusals, J_HOLD holds.
_COUNTER_OF = b"\xff\xff\x00\xff\xff\xff\xff\x05\x02\x01\x03\x04\x06\x07"


class Meters:
    """Meters(channels, table): the counts of a table of `channels` lamp
    channels; `table`, its SettlementTable, says which channels a paid
    result lights (None: wins are not counted, for a checkpoint read alone)."""

    def __init__(self, channels, table=None):
        self.table = table
        self.counts = [0] * _NCOUNT
        self.void_reasons = [0] * 8
        self.wins = [0] * channels  # per lamp channel (status channels stay 0)
        self.checkpoints = 0  # J_METERS records loaded
        # record()'s buffer, made with the meters at boot: the first rotation
        # may come when the heap has no free block this large.
        self._rec = bytearray(journal.HEADER + journal.METERS_HEAD + 4 * channels
                              + journal.METERS_CONFIG + journal.CRC_LEN)

    def get(self, name):
        return self.counts[_COUNTERS.index(name)]

    def count(self, t, b, p, end, dice):
        """Count one record that passed the journal's checks: its type t, its
        payload b[p:end], and the effective dice of its round (None when not
        known). A J_METERS record replaces every count."""
        if t == E.J_METERS:
            if self.load(b, p, end):
                self.checkpoints += 1
            return
        if t >= len(_COUNTER_OF):
            return
        c = _COUNTER_OF[t]
        if c == 255:
            return
        self.counts[c] += 1
        if t == E.J_VOID:  # its payload's length is checked (journal.check_payload)
            self.void_reasons[b[p] & 7] += 1
        elif t == E.J_PAYOUT and dice is not None and self.table is not None:
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

    def record(self, seq, rid, boot, now, wall, config_id, config_wall):
        """The meters as a sealed J_METERS record, in a buffer made once
        (valid until the next call), with the configuration in force: its id
        (6 bytes) and the last wall time known under it, or None
        (journal.METERS_CONFIG; the spare byte stays 0)."""
        buf = self._rec
        n = len(buf)
        journal.put_header(buf, 0, E.J_METERS, n, seq, rid, boot, now, wall)
        self._pack(buf, journal.HEADER)
        c = n - journal.CRC_LEN - journal.METERS_CONFIG
        for i in range(6):
            buf[c + i] = config_id[i]
        buf[c + 6] = 0 if config_wall is None else 1
        struct.pack_into("<I", buf, c + 8, config_wall or 0)
        journal.seal(buf, n)
        return buf

    def load(self, b, p=0, end=None):
        """Take the counts of a J_METERS payload b[p:end] (end None: len(b)).
        False, nothing taken, for a payload too short or of another table
        (another number of channels)."""
        if end is None:
            end = len(b)
        off = p + 4 * _NCOUNT + 32
        if end < off + 2:
            return False
        n = b[off] | (b[off + 1] << 8)
        if n != len(self.wins) or end < off + 2 + 4 * n:
            return False
        for i in range(_NCOUNT):
            self.counts[i] = struct.unpack_from("<I", b, p + 4 * i)[0]
        for i in range(8):
            self.void_reasons[i] = struct.unpack_from("<I", b, p + 4 * _NCOUNT + 4 * i)[0]
        for c in range(n):
            self.wins[c] = struct.unpack_from("<I", b, off + 2 + 4 * c)[0]
        return True


def checkpoint(machine, now, wall=None):
    """A sealed J_METERS record of the machine's meters, with its next
    sequence number: the first bytes of a new journal segment
    (JournalStore(checkpoint=...)), in the meters' own buffer (valid until
    the next checkpoint). The machine takes it like any record."""
    rec = machine.meters.record(machine.seq + 1, machine.round, machine.boot, now, wall,
                                machine.config_id, machine.config_wall)
    machine.take(rec, 0)
    return rec
