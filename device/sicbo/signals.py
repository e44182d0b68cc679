# The table's signals, named once: the index of every input in the switch
# bank (hw.switches.Switches is built with the pins in this order and its
# events carry these indices), their names as board files and the simulated
# table spell them, and the status lamps a table file may wire. Firmware,
# diag, the simulated table, tests and benches use these names, never the
# bare numbers.

from micropython import const

# Levels: sensors and the supervisor's key switch.
COVER = const(0)  # 1 = cover on the dome
CLASP_LEFT = const(1)  # 1 = fastened
CLASP_RIGHT = const(2)
SHAKE = const(3)  # handle sensor (manual shaker) or the dealer's shake key
SUPERVISOR = const(4)  # 1 = key turned on
# The dealer's keys: they act when pressed.
KEY_BELL = const(5)
KEY_VOID = const(6)
KEY_PAYOUT = const(7)
KEY_CONFIRM = const(8)  # held at power-on: recovery mode
KEY_FACE_1 = const(9)  # KEY_FACE_1 + f - 1 is face f's key, f = 1..6
KEY_FACE_6 = const(14)
LEVELS = const(5)  # signals below this are levels, not keys
COUNT = const(15)

INPUT_SIGNALS = ("cover", "clasp_left", "clasp_right", "shake", "supervisor",
                 "key_bell", "key_void", "key_payout", "key_confirm",
                 "key_face_1", "key_face_2", "key_face_3", "key_face_4",
                 "key_face_5", "key_face_6")

# Status lamps: names a table file's lamp_order may give a channel.
LAMP_PLACE_BETS = "PLACE_BETS"
LAMP_ALARM = "ALARM"
LAMP_VOID = "VOID"
LAMP_PAYING = "PAYING"
STATUS_LAMPS = (LAMP_PLACE_BETS, LAMP_ALARM, LAMP_VOID, LAMP_PAYING)
