# Game recall (the last rounds) and the meters, rebuilt from the journal:
# feed it the journal's segments (Recall.feed). For diag.recall, diag.meters
# and the host's sicbo journal; the board's running table keeps only its
# meters (the round machine counts them, sicbo.meters). Each record is first
# checked the way the round machine checks it at boot (RoundState.take):
# duplicates are ignored, and a record that its type, the sequence, the round
# or the state does not allow is damage: counted, listed, never used. The
# meters are counted by sicbo.meters' one rule.

from micropython import const

from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters
from sicbo.roundstate import RoundState

RECALL_ROUNDS = const(10)
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


class Recall:
    def __init__(self, table, keep=RECALL_ROUNDS):
        self.table = table
        self.keep = keep
        self.rounds = []  # RoundInfo, oldest first, at most keep
        # table None: a journal read without its table (diag with the files
        # refused): no winning areas, no wins per area.
        self.meters = Meters(table.channels if table is not None else None, table)
        # The journal's order as the round machine sees it (its checks), and
        # the meters counted there, as on the board (RoundState._apply).
        self.order = RoundState()
        self.order.meters = self.meters
        self.damaged = 0
        self.damage = []  # [(seq, type, code E.BAD_*)], the last `keep`
        self._rec = None  # the Record _take decodes each record into
        # round id -> the reset cause (J_BOOT p0, texts.RESET_NAMES) of the
        # last boot while that round was unfinished: a round voided for a
        # "power cut" may have been cut by a reset or the watchdog. Kept
        # here, not on RoundInfo: one attribute more grows every RoundInfo's
        # table (168 to 216 bytes on the 32-bit VM).
        self.restarts = {}
        # A few rounds kept (diag on the board): every RoundInfo made now,
        # before the replay; the host keeps many and makes them as it goes.
        self._blank = [RoundInfo() for _ in range(keep)] if keep <= _MAKE_AHEAD else []

    def feed(self, data):
        """Feed journal bytes (a segment, or records as written)."""
        self.order.scanner.walk(data, self._take)

    def _take(self, data, off, gap):
        code = self.order.take(data, off, gap)
        if code < 0:
            return  # a duplicate: never counted twice
        if not code and data[off + 1] == R.J_METERS:
            return  # counted by the order's _apply: nothing of a round
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
        """Tell the round a record belongs to (one that passed the checks of
        the RoundState that took it, and counted by its meters)."""
        t = rec.type
        if t == R.J_ROUND:
            rounds = self.rounds
            # A RoundInfo made ahead, or the oldest one made anew: a replay
            # of a full journal allocates no RoundInfo (and its attribute
            # table) on the heap the replay fragments.
            if len(rounds) >= self.keep:
                info = rounds.pop(0)
                if self.restarts:
                    self.restarts.pop(info.round, None)
            elif self._blank:
                info = self._blank.pop()
            else:
                info = None
            if info is None:
                info = RoundInfo(rec)
            else:
                info.__init__(rec)
            rounds.append(info)
            return
        info = self.current(rec.round)
        if info is None:
            return
        if t == R.J_ALARM:
            info.alarms.append(rec.p(0))
        elif t == R.J_VIOLATION:
            info.violations += 1
        elif t == R.J_BOOT and info.ended is None:
            self.restarts[info.round] = rec.p(0)
        if t == R.J_BELL or t == R.J_RESULT or t == R.J_CORRECTION or t == R.J_VOID or (
                t == R.J_PAYOUT):
            when = (rec.boot, rec.ticks, rec.wall)
        if t == R.J_BELL:
            info.bell = when
        elif t == R.J_RESULT:
            info.dice = rec.dice()
            info.first_dice = info.dice
            info.result_time = when
            info.status = "paying"
        elif t == R.J_CORRECTION:
            info.corrections.append((rec.dice(0), rec.dice(3), when))
            info.dice = rec.dice(3)
            info.status = "paying"
        elif t == R.J_READER:
            info.reader = rec.dice()
        elif t == R.J_HOLD:
            info.hold = (rec.dice(0), rec.dice(3))
        elif t == R.J_VOID:
            info.void_reason = rec.p(0)
            info.void_policy = rec.p(1)
            info.status = "void"
            info.ended = when
        elif t == R.J_PAYOUT:
            info.status = "paid"
            info.ended = when

    def last(self, n=RECALL_ROUNDS):
        """The last n rounds, newest first."""
        out = self.rounds[-n:]
        out.reverse()
        return out
