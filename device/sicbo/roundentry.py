# Result entry, void and the dice reader: the part of the round machine that
# runs once the cover is off (see round.py for the whole machine and its API).

from sicbo import events as E
from sicbo.roundbase import RoundBase, same
from sicbo.roundstate import ENTRY_VOID


class RoundEntry(RoundBase):
    """Face keys, confirm, void and reader dice (RoundMachine adds the rest)."""

    def reader_dice(self, rid, d1, d2, d3, now, wall=None):
        """Dice reported by the optional reader for round rid (already parsed
        and checksummed by dicereader.py). Returns the number of commands."""
        self._begin(now, wall)
        st = self.state
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6 and 1 <= d3 <= 6):
            self.reader_ignored += 1
            self._refuse(E.R_DICE_RANGE, d1 if not 1 <= d1 <= 6 else (
                d2 if not 1 <= d2 <= 6 else d3))
            return self.ncmd
        if rid != self.round or not (st == E.ST_CLOSED or st == E.ST_RESULT
                                     or st == E.ST_PAYING):
            self.reader_ignored += 1
            self._show(E.R_READER_ROUND if rid != self.round else E.R_DICE_NOT_NOW)
            return self.ncmd
        if self.has_reader:
            self.reader_ignored += 1  # the first reading of a round counts
            return self.ncmd
        self._rec(E.J_READER, d1, d2, d3)
        if st == E.ST_PAYING and not same(self.dice, self.reader):
            self._rec(E.J_HOLD, self.dice[0], self.dice[1], self.dice[2], d1, d2, d3)
            self._lamps()
            self._show(E.M_HOLD)
        else:
            self._show(E.M_READER_OK)
        return self.ncmd

    # ---- pieces ----------------------------------------------------------------

    def _void_key(self):
        st = self.state
        if (st == E.ST_RESULT or (st == E.ST_HOLD and not self.has_result)) and (
                st == E.ST_RESULT or self.supervisor):
            if self.entry_mode == ENTRY_VOID:
                self._entry_reset()
                self._show(E.M_VOID_CANCELLED)
            else:
                self.entry_mode = ENTRY_VOID  # the faces keyed so far wait
                self.void_reason = 0
                self._show(E.M_VOID_REASON)
        elif st == E.ST_HOLD:
            self._not_now(E.R_NEED_SUPERVISOR)
        else:
            self._refuse(E.R_VOID_NOT_NOW)

    def _face(self, face):
        st = self.state
        if type(face) is not int or not 1 <= face <= 6:
            self._refuse(E.R_DICE_RANGE, face if type(face) is int else 255)
            return
        if self.entry_mode == ENTRY_VOID:
            if face <= 3:
                self.void_reason = face
                self._show(E.M_VOID_REASON, face)
            else:
                self._not_now(E.R_VOID_REASON)
            return
        if st == E.ST_RESULT or ((st == E.ST_PAYING or st == E.ST_HOLD) and self.supervisor):
            if self.entry_n >= 3:
                self.entry_n = 0  # a fourth face key starts the entry again
            self.entry[self.entry_n] = face
            self.entry_n += 1
            self._show(E.M_DICE_SO_FAR, self.entry_n)
        elif st == E.ST_PAYING:
            self._refuse(E.R_SECOND_RESULT)
        elif st == E.ST_HOLD:
            self._not_now(E.R_NEED_SUPERVISOR)
        else:
            self._refuse(E.R_DICE_NOT_NOW)

    def _confirm(self):
        st = self.state
        if self.entry_mode == ENTRY_VOID:
            if self.void_reason:
                self._void(self.void_reason)
            else:
                self._not_now(E.R_VOID_REASON)
            return
        if not (st == E.ST_RESULT or ((st == E.ST_PAYING or st == E.ST_HOLD)
                                      and self.supervisor)):
            if st == E.ST_HOLD:
                self._not_now(E.R_NEED_SUPERVISOR)
            else:
                self._not_now()
            return
        if self.entry_n < 3:
            self._not_now(E.R_INCOMPLETE)
            return
        e = self.entry
        if st == E.ST_RESULT and self.has_reader and not same(e, self.reader):
            r = self.reader
            self._rec(E.J_HOLD, e[0], e[1], e[2], r[0], r[1], r[2])
            msg = E.M_HOLD
        elif st == E.ST_RESULT or not self.has_result:
            # The dealer's result (p3 0), or the supervisor's decision of a
            # hold raised before any result (p3 1).
            self._rec(E.J_RESULT, e[0], e[1], e[2], 0 if st == E.ST_RESULT else 1)
            msg = E.M_PAYING
        else:
            # A correction under the supervisor key (or the decision of a hold
            # raised after the result): journaled with both results.
            if st == E.ST_PAYING and same(e, self.dice):
                self._entry_reset()
                self._not_now(E.R_SAME_RESULT)
                return
            d = self.dice
            self._rec(E.J_CORRECTION, d[0], d[1], d[2], e[0], e[1], e[2])
            msg = E.M_CORRECTED
        self._lamps()
        self._show(msg)
