# The dealer's and the technician's text of every message code of events.py.
# Kept apart from events.py so that the round machine does not carry the
# strings; the shell and the host tools import this module.

from sicbo import events as E

TEXT = {
    E.M_NONE: "",
    E.M_WAIT_COVER: "put the cover on and fasten both clasps",
    E.M_READY: "ready: press shake",
    E.M_SHAKING: "shaking",
    E.M_PLACE_BETS: "place your bets",
    E.M_BETS_CLOSED: "no more bets: lift the cover",
    E.M_ENTER_DICE: "enter the three faces, then confirm",
    E.M_DICE_SO_FAR: "faces entered",
    E.M_PAYING: "pay the winning bets, then press payout",
    E.M_ROUND_DONE: "payout complete: ready for the next round",
    E.M_VOID_BETS_STAY: "round void: every bet stays on the layout",
    E.M_VOID_PLAYERS_CHOOSE: "round void: players may cancel, keep or change their bets",
    E.M_VOID_REASON: "void: press 1 stacked, 2 leaning or 3 other, then confirm",
    E.M_VOID_CANCELLED: "void cancelled",
    E.M_CORRECTED: "result corrected under the supervisor key",
    E.M_HOLD: "reader and dealer disagree: round held for the supervisor",
    E.M_RESUMED: "resumed after restart",
    E.M_ALARM_CLEARED: "alarm acknowledged by the supervisor",
    E.M_SUPERVISOR_ON: "supervisor key on",
    E.M_SUPERVISOR_OFF: "supervisor key off",
    E.M_READER_OK: "dice reader result received",
    E.R_COVER_NOT_ON: "refused: no shaking unless the cover is on",
    E.R_CLASP_OPEN: "refused: no shaking unless both clasps are fastened",
    E.R_TAMPER_COVER: "alarm: cover opened between shake and bell: round void",
    E.R_TAMPER_CLASP: "alarm: clasp opened between shake and bell: round void",
    E.R_DICE_NOT_NOW: "refused: dice can be entered only after the cover is lifted",
    E.R_DICE_RANGE: "refused: a die must show 1 to 6",
    E.R_COVER_BEFORE_PAYOUT: "violation: dome covered before payout complete (Art. 4)",
    E.R_PAYOUT_PENDING: "refused: confirm payout complete before the next round",
    E.R_SECOND_RESULT: "refused: result already confirmed; a correction needs the supervisor key",
    E.R_VOID_NOT_NOW: "refused: void only with the cover off, before the result is confirmed",
    E.R_VOID_REASON: "refused: void reason must be 1 stacked, 2 leaning or 3 other",
    E.R_INCOMPLETE: "refused: enter three faces before confirm",
    E.R_NEED_SUPERVISOR: "refused: the round is held for the supervisor key",
    E.R_SENSOR_FAULT: "alarm: sensor fault (chatter)",
    E.R_FAULT_ACTIVE: "refused: a sensor fault is active; supervisor must acknowledge",
    E.R_KEY_NOT_NOW: "key not valid now",
    E.R_READER_ROUND: "reader result for another round ignored",
    E.R_POWER_CUT: "round interrupted by a power cut before the bell: void",
    E.R_SAME_RESULT: "refused: the correction equals the current result",
    E.R_READER_MISMATCH: "alarm: reader disagrees with the confirmed result",
}


STATE_NAMES = ("idle", "shaking", "open", "closed", "result", "paying", "hold")
J_NAMES = ("?", "boot", "round", "open", "bell", "cover_off", "result", "correction",
           "void", "payout", "alarm", "violation", "refused", "hold", "reader",
           "supervisor", "resume", "alarm_clear", "meters", "config", "diag")
VOID_NAMES = ("?", "stacked", "leaning", "other", "tamper", "power cut", "sensor fault")
SENSOR_NAMES = ("?", "cover", "clasp_left", "clasp_right", "shake", "keys", "supervisor",
                "reader", "solenoid")
DIAG_NAMES = ("?", "solenoid test", "bell test", "lamp walk")


def text(code):
    """The text of a message code ("?" if unknown)."""
    return TEXT.get(code, "?")
