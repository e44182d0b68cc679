# The codes shared by the round machine (roundmachine.py), the journal
# (journal.py), game recall (recall.py) and the controller: events in,
# commands out, round states, and the messages shown to the dealer and the
# technician (the journal's record types: records.py). Plain integer
# constants, so that the hot path compares small ints and allocates nothing.

from micropython import const

# ---- Events: RoundMachine.handle(ev, arg, now, wall) ---------------------------
EV_COVER_ON = const(1)  # cover put on the dome (sensor cover 0 -> 1)
EV_COVER_OFF = const(2)  # cover lifted
EV_CLASP_L_ON = const(3)  # left clasp fastened
EV_CLASP_L_OFF = const(4)  # left clasp opened
EV_CLASP_R_ON = const(5)
EV_CLASP_R_OFF = const(6)
EV_SHAKE = const(7)  # handle sensor (manual) or the dealer's shake key
EV_BELL = const(8)  # dealer keys
EV_VOID = const(9)
EV_PAYOUT = const(10)
EV_CONFIRM = const(11)
EV_FACE = const(12)  # arg: the face 1..6
EV_SUPERVISOR_ON = const(13)  # key switch turned on
EV_SUPERVISOR_OFF = const(14)
EV_TIMER = const(15)  # the machine's timer (RoundMachine.timer_on, deadline) is due
EV_FAULT = const(16)  # arg: sensor id S_* that chattered beyond its limit
EV_BACKLOG = const(17)  # the floor's backlog: arg BACKLOG_* (the journal store's budget)
BACKLOG_ROOM = const(0)  # within its budget
BACKLOG_FULL = const(1)  # at its budget: the oldest unacknowledged records go
BACKLOG_STOP = const(2)  # at its budget, kept: no new round until the floor acknowledges
# Dice from the optional reader come through RoundMachine.reader_dice().

# Sensor ids (EV_FAULT argument, alarm detail).
S_COVER = const(1)
S_CLASP_L = const(2)
S_CLASP_R = const(3)
S_SHAKE = const(4)
S_KEYS = const(5)
S_SUPERVISOR = const(6)
S_READER = const(7)
S_SOLENOID = const(8)  # the coil's hard-off timer had to cut a pulse

# ---- Commands: (code, a, b, c) in RoundMachine.cmds -------------------------
C_LAMPS = const(1)  # shift out RoundMachine.frame (the whole lamp frame)
C_SOLENOID = const(2)  # a pulses, b on ms, c off ms
C_SOLENOID_STOP = const(3)
C_SHAKER = const(4)  # electric shaker: run a ms
C_SHAKER_STOP = const(5)
C_BELL = const(6)  # ring a ms
C_SHOW = const(7)  # a message code M_*, b detail (see TEXT)

# ---- Round states -------------------------------------------------------------
ST_IDLE = const(0)  # waiting for cover on, clasps fastened, shake
ST_SHAKING = const(1)
ST_OPEN = const(2)  # betting open, place-bets lamp lit
ST_CLOSED = const(3)  # bell rung, betting closed, cover still on
ST_RESULT = const(4)  # cover off: result entry (or void)
ST_PAYING = const(5)  # result confirmed, winning areas lit
ST_HOLD = const(6)  # dealer and reader disagree: supervisor decides

# The journal's record types and their fields: sicbo/records.py.

# Where a contained fault happened (J_FAULT p0, /fault.txt; faults.py).
F_FILES = const(1)  # reading and checking the board and table files
F_JOURNAL = const(2)  # opening and replaying the journal
F_HARDWARE = const(3)  # building the adapters
F_RESUME = const(4)  # resuming the round, the configuration record
F_TASK = const(5)  # a task of the running table died (p2: which, controller.TASKS)
F_WATCHDOG = const(6)  # a task stopped reporting (p2: which); the WDT resets
F_START = const(7)  # anything else before the table ran
# The kind of a contained fault (J_FAULT p1), from its exception.
K_MEMORY = const(1)  # MemoryError
K_OS = const(2)  # OSError (the filesystem, a bus)
K_VALUE = const(3)  # ValueError (a value out of range, a bad pin)
K_OTHER = const(4)  # anything else
MAX_FAILED_BOOTS = const(3)  # then the board stays out of service, at the REPL
STABLE_MS = const(60000)  # running this long clears the failed boots

# The controller's periods (controller.TASKS), in ms.
POLL_MS = const(5)  # inputs are sampled this often (debounce counts in ms)
READER_MS = const(20)  # the dice reader's UART is read this often
WATCHDOG_FEED_MS = const(500)
TASK_DEADLINE_MS = const(2000)  # a task silent this long stops the feeding

# What a J_DIAG record tested (diag.py).
D_SOLENOID = const(1)
D_BELL = const(2)
D_LAMPS = const(3)
D_CLEAR_FAULT = const(4)  # diag.clear_fault(): p1 the failed boots it cleared
D_SENSORS = const(5)  # diag.sensors(): the inputs read live
D_LAST = const(5)

# Void reasons (J_VOID p0). 1..3 are the dealer's reason keys (Art. 3.3).
V_STACKED = const(1)
V_LEANING = const(2)
V_OTHER = const(3)
V_TAMPER = const(4)  # cover or clasp opened between shake and bell
V_POWER = const(5)  # power cut before the bell, resume policy 'void'
V_FAULT = const(6)  # sensor fault between shake and bell
V_DAMAGE = const(7)  # the journal of the round held a damaged record (docs/journal.md)
V_LAST = const(7)

# Damage: why a CRC-valid record was not applied (journal.check, RoundState.take;
# J_DAMAGE p0). Texts in texts.DAMAGE_NAMES.
BAD_TYPE = const(1)  # unknown record type
BAD_LENGTH = const(2)  # length not the one its type has
BAD_DICE = const(3)  # a die not 1..6
BAD_VALUE = const(4)  # a code, reason, policy or state its type does not have
BAD_SEQ = const(5)  # sequence number skips ahead
BAD_ROUND = const(6)  # round id not the current one (J_ROUND: not the next one)
BAD_STATE = const(7)  # not possible in the round's state (or not matching its dice)
BAD_LAST = const(7)

# ---- Messages (C_SHOW a; J_ALARM/J_REFUSED/J_VIOLATION p0); texts in texts.py ----
M_NONE = const(0)
M_WAIT_COVER = const(1)
M_READY = const(2)
M_SHAKING = const(3)
M_PLACE_BETS = const(4)
M_BETS_CLOSED = const(5)
M_ENTER_DICE = const(6)
M_DICE_SO_FAR = const(7)  # detail: faces entered so far (RoundMachine.entry)
M_PAYING = const(8)
M_ROUND_DONE = const(9)
M_VOID_BETS_STAY = const(10)
M_VOID_PLAYERS_CHOOSE = const(11)
M_VOID_REASON = const(12)
M_VOID_CANCELLED = const(13)
M_CORRECTED = const(14)
M_HOLD = const(15)
M_RESUMED = const(16)  # detail: state
M_ALARM_CLEARED = const(17)
M_SUPERVISOR_ON = const(18)
M_SUPERVISOR_OFF = const(19)
M_READER_OK = const(20)
# Refusals, alarms and violations from here on.
R_COVER_NOT_ON = const(32)
R_CLASP_OPEN = const(33)  # detail: 1 left, 2 right, 3 both
R_TAMPER_COVER = const(34)
R_TAMPER_CLASP = const(35)  # detail: 1 left, 2 right
R_DICE_NOT_NOW = const(36)
R_DICE_RANGE = const(37)  # detail: the bad value (0..255)
R_COVER_BEFORE_PAYOUT = const(38)
R_PAYOUT_PENDING = const(39)
R_SECOND_RESULT = const(40)
R_VOID_NOT_NOW = const(41)
R_VOID_REASON = const(42)
R_INCOMPLETE = const(43)
R_NEED_SUPERVISOR = const(44)
R_SENSOR_FAULT = const(45)  # detail: sensor id
R_FAULT_ACTIVE = const(46)
R_KEY_NOT_NOW = const(47)
R_READER_ROUND = const(48)
R_POWER_CUT = const(49)
R_SAME_RESULT = const(50)
R_READER_MISMATCH = const(51)
R_DAMAGE = const(52)  # detail: damaged records found (at most 255)
R_BACKLOG_FULL = const(53)  # the floor's backlog is at its flash budget; detail: 1 new rounds stop
R_LAST = const(53)
