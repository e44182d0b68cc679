# The dealer's and the technician's text of every message code of events.py.
# Kept apart from events.py so that the round machine does not carry the
# strings; the shell and the host tools import this module.

from sicbo import events as E

# Every text, one line each, in one string: one object on the heap instead of
# one per message (this module is loaded only where text is shown).
_TEXTS = (
    "\n"  # M_NONE
    "put the cover on and fasten both clasps\n"  # M_WAIT_COVER
    "ready: press shake\n"  # M_READY
    "shaking\n"  # M_SHAKING
    "place your bets\n"  # M_PLACE_BETS
    "no more bets: lift the cover\n"  # M_BETS_CLOSED
    "enter the three faces, then confirm\n"  # M_ENTER_DICE
    "faces entered\n"  # M_DICE_SO_FAR
    "pay the winning bets, then press payout\n"  # M_PAYING
    "payout complete: ready for the next round\n"  # M_ROUND_DONE
    "round void: every bet stays on the layout\n"  # M_VOID_BETS_STAY
    "round void: players may cancel, keep or change their bets\n"  # M_VOID_PLAYERS_CHOOSE
    "void: press 1 stacked, 2 leaning or 3 other, then confirm\n"  # M_VOID_REASON
    "void cancelled\n"  # M_VOID_CANCELLED
    "result corrected under the supervisor key\n"  # M_CORRECTED
    "reader and dealer disagree: round held for the supervisor\n"  # M_HOLD
    "resumed after restart\n"  # M_RESUMED
    "alarm acknowledged by the supervisor\n"  # M_ALARM_CLEARED
    "supervisor key on\n"  # M_SUPERVISOR_ON
    "supervisor key off\n"  # M_SUPERVISOR_OFF
    "dice reader result received\n"  # M_READER_OK
    "refused: no shaking unless the cover is on\n"  # R_COVER_NOT_ON
    "refused: no shaking unless both clasps are fastened\n"  # R_CLASP_OPEN
    "alarm: cover opened between shake and bell: round void\n"  # R_TAMPER_COVER
    "alarm: clasp opened between shake and bell: round void\n"  # R_TAMPER_CLASP
    "refused: dice can be entered only after the cover is lifted\n"  # R_DICE_NOT_NOW
    "refused: a die must show 1 to 6\n"  # R_DICE_RANGE
    "violation: dome covered before payout complete (Art. 4)\n"  # R_COVER_BEFORE_PAYOUT
    "refused: confirm payout complete before the next round\n"  # R_PAYOUT_PENDING
    "refused: result already confirmed; a correction needs the supervisor key\n"  # R_SECOND_RESULT
    "refused: void only with the cover off, before the result is confirmed\n"  # R_VOID_NOT_NOW
    "refused: void reason must be 1 stacked, 2 leaning or 3 other\n"  # R_VOID_REASON
    "refused: enter three faces before confirm\n"  # R_INCOMPLETE
    "refused: the round is held for the supervisor key\n"  # R_NEED_SUPERVISOR
    "alarm: sensor fault (chatter)\n"  # R_SENSOR_FAULT
    "refused: a sensor fault is active; supervisor must acknowledge\n"  # R_FAULT_ACTIVE
    "key not valid now\n"  # R_KEY_NOT_NOW
    "reader result for another round ignored\n"  # R_READER_ROUND
    "round interrupted by a power cut before the bell: void\n"  # R_POWER_CUT
    "refused: the correction equals the current result\n"  # R_SAME_RESULT
    "alarm: reader disagrees with the confirmed result\n"  # R_READER_MISMATCH
    "alarm: damaged journal records ignored; the round is void or held for the supervisor\n"
    # R_DAMAGE
)

# The message codes in the order of their lines in _TEXTS.
_CODES = bytes((
    E.M_NONE, E.M_WAIT_COVER, E.M_READY, E.M_SHAKING, E.M_PLACE_BETS, E.M_BETS_CLOSED,
    E.M_ENTER_DICE, E.M_DICE_SO_FAR, E.M_PAYING, E.M_ROUND_DONE, E.M_VOID_BETS_STAY,
    E.M_VOID_PLAYERS_CHOOSE, E.M_VOID_REASON, E.M_VOID_CANCELLED, E.M_CORRECTED, E.M_HOLD,
    E.M_RESUMED, E.M_ALARM_CLEARED, E.M_SUPERVISOR_ON, E.M_SUPERVISOR_OFF, E.M_READER_OK,
    E.R_COVER_NOT_ON, E.R_CLASP_OPEN, E.R_TAMPER_COVER, E.R_TAMPER_CLASP, E.R_DICE_NOT_NOW,
    E.R_DICE_RANGE, E.R_COVER_BEFORE_PAYOUT, E.R_PAYOUT_PENDING, E.R_SECOND_RESULT,
    E.R_VOID_NOT_NOW, E.R_VOID_REASON, E.R_INCOMPLETE, E.R_NEED_SUPERVISOR, E.R_SENSOR_FAULT,
    E.R_FAULT_ACTIVE, E.R_KEY_NOT_NOW, E.R_READER_ROUND, E.R_POWER_CUT, E.R_SAME_RESULT,
    E.R_READER_MISMATCH, E.R_DAMAGE,
))


STATE_NAMES = ("idle", "shaking", "open", "closed", "result", "paying", "hold")
J_NAMES = ("?", "boot", "round", "open", "bell", "cover_off", "result", "correction",
           "void", "payout", "alarm", "violation", "refused", "hold", "reader",
           "supervisor", "resume", "alarm_clear", "meters", "config", "diag", "fault",
           "damage")
VOID_NAMES = ("?", "stacked", "leaning", "other", "tamper", "power cut", "sensor fault",
              "journal damage")
# Why a record was not applied (E.BAD_*, J_DAMAGE p0).
DAMAGE_NAMES = ("?", "unknown record type", "bad length for its type", "dice not 1..6",
                "value its type does not have", "sequence number skips ahead",
                "round id out of order", "not possible in the round's state")
SENSOR_NAMES = ("?", "cover", "clasp_left", "clasp_right", "shake", "keys", "supervisor",
                "reader", "solenoid")
DIAG_NAMES = ("?", "solenoid test", "bell test", "lamp walk")
# machine.reset_cause() (J_BOOT p0): the ESP32's constants, which sim/machine.py
# uses too (PWRON_RESET 1 .. SOFT_RESET 5); 0 when the boot was not given one.
RESET_NAMES = ("?", "power-on", "hard reset", "watchdog reset", "deep-sleep wake",
               "soft reset")
# Where a contained fault happened (E.F_*) and what it was (E.K_*): J_FAULT p0, p1.
FAULT_STAGES = ("?", "files", "journal", "hardware", "resume", "task", "watchdog", "start")
FAULT_KINDS = ("?", "MemoryError", "OSError", "ValueError", "other exception")


def text(code):
    """The text of a message code ("?" if unknown)."""
    start = 0
    for c in _CODES:
        if c == code:
            return _TEXTS[start:_TEXTS.index("\n", start)]
        start = _TEXTS.index("\n", start) + 1
    return "?"

