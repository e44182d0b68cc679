# The journal's records, declared once: the record layout (named offsets),
# every record type (its code, name, payload fields, the round states it may
# follow, the meter it counts, its text), and nothing else. docs/journal.md
# describes them for people.
#
# What derives from the declarations:
#   - the board's tables (the payload checks, the states each type may follow,
#     the meter each type counts): generated into a block of sicbo/journal.py by
#     `python -m host_tools.records --write`, at build time, since the board
#     never loads this module: its integer constants are folded into their
#     uses (host_tools/constfold.py), like those of sicbo.events;
#   - the names in sicbo/texts.py (a generated block) and the host's decoder
#     (host_tools/commands/journal.py reads RECORD_TYPES).
# tests/host/test_records.py fails when any of them disagrees with this file.
#
# Adding a record type: one entry in RECORD_TYPES with its J_ constant (and
# its payload offsets), its transition in sicbo/roundstate.py (RoundState._apply)
# if it changes the round, then `python -m host_tools.records --write`.

from micropython import const

from sicbo import events as E

# ---- The record (little endian) -------------------------------------------
MAGIC = const(0xA5)
OFF_MAGIC = const(0)  # u8 MAGIC
OFF_TYPE = const(1)  # u8 J_*
OFF_LENGTH = const(2)  # u16 the whole record, CRC included
OFF_SEQ = const(4)  # u32 sequence number: 1, 2, 3, ... over the table's life, never reused
OFF_ROUND = const(8)  # u32 round id (monotonic across reboots)
OFF_BOOT = const(12)  # u16 boot count (1 for the first boot)
OFF_FLAGS = const(14)  # u16 FLAG_*
OFF_TICKS = const(16)  # u32 time.ticks_ms() of the event (wraps at 2**30 on the ESP32)
OFF_WALL = const(20)  # u32 seconds since 2000-01-01 UTC, valid only with FLAG_WALL
HEADER = const(24)  # the payload starts here
CRC_LEN = const(4)  # u32 CRC-32 of every byte before it, at the end
PAYLOAD = const(8)  # the payload of every record but J_METERS
REC_LEN = const(36)  # HEADER + PAYLOAD + CRC_LEN
MIN_LEN = const(28)  # an empty payload
MAX_LEN = const(1024)
# The highest sequence number or round id a record may carry, and the most
# a record may skip ahead after a gap: a CRC-valid record past them is damage
# (RoundState.take), so that numbers stay small ints on the board and the
# next record's never overflows its u32 (a forged 2**32 - 1 stopped every boot).
MAX_ID = const(0x3FFF0000)
MAX_SKIP = const(0xFFFF)
FLAG_WALL = const(1)  # the wall field holds the RTC's time (else 0: never guessed)
# The record carries a MAC (sicbo/chain.py, docs/tamper-evidence.md): MAC_LEN
# bytes between its payload and its CRC, counted by the length field and
# covered by the CRC. A record without this flag is not authenticated.
FLAG_MAC = const(2)
MAC_LEN = const(8)
CHAIN_LEN = const(16)  # the chain hash: the head published off the table

# ---- Record types -----------------------------------------------------------
J_BOOT = const(1)
J_ROUND = const(2)
J_OPEN = const(3)
J_BELL = const(4)
J_COVER_OFF = const(5)
J_RESULT = const(6)
J_CORRECTION = const(7)
J_VOID = const(8)
J_PAYOUT = const(9)
J_ALARM = const(10)
J_VIOLATION = const(11)
J_REFUSED = const(12)
J_HOLD = const(13)
J_READER = const(14)
J_SUPERVISOR = const(15)
J_RESUME = const(16)
J_ALARM_CLEAR = const(17)
J_METERS = const(18)
J_CONFIG = const(19)
J_DIAG = const(20)
J_FAULT = const(21)
J_DAMAGE = const(22)
J_LINK = const(23)
J_PROVISION = const(24)
# Technician access (ACCESS below): each its own record.
J_REPL = const(25)
J_CLOCK = const(26)
J_CLOCK_MOVED = const(27)
J_DEPLOY = const(28)
J_VERIFY = const(29)
J_RECOVERY = const(30)
J_LAST = const(30)  # the highest record type

# ---- Payload fields: offsets from the payload's start ------------------------
P_CAUSE = const(0)  # J_BOOT: the board's machine.reset_cause()
P_SHAKER = const(0)  # J_ROUND: SHAKER_*
P_DICE = const(0)  # J_RESULT, J_READER: three dice
P_SOURCE = const(3)  # J_RESULT: SOURCE_*
P_OLD_DICE = const(0)  # J_CORRECTION
P_NEW_DICE = const(3)
P_REASON = const(0)  # J_VOID: V_* of sicbo.events
P_POLICY = const(1)  # J_VOID: POLICY_*
P_CODE = const(0)  # J_ALARM, J_VIOLATION, J_REFUSED: R_* of sicbo.events
P_DETAIL = const(1)  # J_ALARM, J_REFUSED: clasp side, sensor id, ...
P_DEALER_DICE = const(0)  # J_HOLD: the dealer's (or the effective) result
P_READER_DICE = const(3)  # J_HOLD: the reader's
P_KEY = const(0)  # J_SUPERVISOR: 1 on, 0 off
P_STATE = const(0)  # J_RESUME: the state resumed in
P_FOUND = const(1)  # J_RESUME: the state the replay found
P_CONFIG_ID = const(0)  # J_CONFIG: 6 bytes, the configuration's id
CONFIG_ID_LEN = const(6)
P_TEST = const(0)  # J_DIAG: D_* of sicbo.events
P_TEST_DETAIL = const(1)  # J_DIAG: D_CLEAR_FAULT's failed boots cleared (at most 255)
P_STAGE = const(0)  # J_FAULT: F_* of sicbo.events
P_KIND = const(1)  # J_FAULT: K_*
P_FAULT_DETAIL = const(2)  # J_FAULT: which task, ...
P_LATE = const(3)  # J_FAULT: 1 for a fault of an earlier boot, journaled by a later one
P_BAD = const(0)  # J_DAMAGE: E.BAD_* of the damaged record
P_BAD_TYPE = const(1)  # J_DAMAGE: its type
P_BAD_SEQ = const(2)  # J_DAMAGE: its sequence number (u32)
P_LINK = const(0)  # J_LINK: LINK_DOWN or LINK_UP
P_LINK_FAULT = const(1)  # J_LINK down: why (the L_* codes of device/link/client.py)
P_LINK_DETAIL = const(2)  # J_LINK down: an errno, a CONNACK code, ... (u16)
P_LINK_SEQ = const(4)  # J_LINK up: the sequence number the floor had acknowledged (u32)
# J_PROVISION: the first record of a MAC chain, under the chain's first key
# (its own sequence number is the chain's first).
P_CHAIN = const(0)  # u32 the provisioning's id (the host's key store names it)
P_PREVIOUS = const(4)  # u32 the provisioning it replaces, 0 if none
# Technician access. J_REPL: the app stopped into the REPL (Ctrl-C, mpremote).
P_STOP_WHILE = const(0)  # STOP_*
P_STOP_STAGE = const(1)  # the start-up stage (F_* of sicbo.events) of a STOP_STARTUP
# J_CLOCK: the RTC set through the firmware (access.set_clock: sicbo deploy,
# sicbo diag); J_CLOCK_MOVED: the boot found the RTC before the journal's
# last wall-clock time (set back by hand). Seconds since 2000-01-01 UTC
# (u32), 0: not set.
P_CLOCK_OLD = const(0)  # J_CLOCK: before; J_CLOCK_MOVED: the journal's last time
P_CLOCK_NEW = const(4)  # J_CLOCK: after; J_CLOCK_MOVED: the RTC at boot
# J_DEPLOY (its payload is not fixed: DEPLOY_HEAD bytes, then the files):
P_DEPLOY_KIND = const(0)  # CODE_*: what the board runs
P_DEPLOY_COPIED = const(1)  # files copied (at most 255)
P_DEPLOY_REMOVED = const(2)  # files removed (at most 255)
P_DEPLOY_FLAGS = const(3)  # bit 0: the list of files is cut short (MAX_LEN)
P_DEPLOY_CODE = const(4)  # the first 8 bytes of the code's sha256
CODE_ID_LEN = const(8)
P_DEPLOY_CONFIG = const(12)  # the configuration id (CONFIG_ID_LEN bytes, as J_CONFIG)
DEPLOY_HEAD = const(20)  # then the files: "+path" copied, "-path" removed, "\n" between
# J_VERIFY (its payload is not fixed: VERIFY_HEAD bytes, then who asked, text):
P_VERIFY_KIND = const(0)  # CHECK_*: the code files only, or the running partition too
P_VERIFY_ITEMS = const(1)  # files (and partition) hashed (at most 255)
P_VERIFY_SEED = const(2)  # the inspector's seed, its first SEED_LEN bytes
SEED_LEN = const(6)
P_VERIFY_ANSWER = const(8)  # the board's answer (the keyed hash), its first 8 bytes
ANSWER_LEN = const(8)
VERIFY_HEAD = const(16)
WHO_LEN = const(64)  # who asked, at most
P_RECOVERY_CAUSE = const(0)  # J_RECOVERY: the board's machine.reset_cause()
# J_METERS: the meters checkpoint (sicbo/meters.py): 8 counters and 8 void
# reasons (u32), the channel count (u16), a u32 per channel, then the
# configuration in force (rotation may delete its J_CONFIG), then the chain's
# head (a journal whose older segments rotation deleted is verified from it).
P_COUNTERS = const(0)
COUNTERS = const(8)
P_VOID_REASONS = const(32)
VOID_REASONS = const(8)
P_CHANNELS = const(64)  # u16
P_WINS = const(66)  # u32 per channel
METERS_HEAD = const(66)  # the payload before the wins
# ... after the wins: the configuration tail, offsets from its start
C_ID = const(0)  # 6 bytes
C_FLAGS = const(6)  # bit 0: C_WALL holds a time
C_WALL = const(8)  # u32 the last wall-clock time known under that configuration
METERS_CONFIG = const(12)
# ... then the chain's head before the checkpoint (offsets from its start),
# filled in by the chain as it seals the record; zeros without a chain. A
# checkpoint written before the chain existed ends at the configuration.
H_SEQ = const(0)  # u32 the last authenticated record's sequence number (0: none)
H_HASH = const(4)  # CHAIN_LEN bytes: the chain hash after it
METERS_CHAIN = const(20)
# The most lamp channels a table may have: its meters checkpoint, sealed
# with its MAC, must fit MAX_LEN (HEADER + METERS_HEAD + 4 per channel +
# METERS_CONFIG + METERS_CHAIN + MAC_LEN + CRC_LEN); the journal refuses a
# longer record as damage, and the meters it carried would be lost.
MAX_CHANNELS = const(222)

# Codes of the fields above.
SHAKER_SOLENOID = const(0)
SHAKER_ELECTRIC = const(1)
SHAKER_MANUAL = const(2)
SOURCE_DEALER = const(0)
SOURCE_SUPERVISOR = const(1)  # the supervisor's decision of a hold
POLICY_BETS_STAY = const(0)
POLICY_PLAYERS_CHOOSE = const(1)
LINK_DOWN = const(1)  # the floor link was lost (once per outage, not per retry)
LINK_UP = const(2)  # connected again
STOP_RUNNING = const(1)  # J_REPL: the table was running
STOP_STARTUP = const(2)  # J_REPL: during start-up (P_STOP_STAGE says where)
CODE_FILES = const(1)  # J_DEPLOY: code deployed as files
CODE_FROZEN = const(2)  # code frozen into the firmware (the running partition)
CHECK_FILES = const(1)  # J_VERIFY: the code files on the board's filesystem
CHECK_PARTITION = const(2)  # J_VERIFY: those and the running application partition

# ---- The declarations ---------------------------------------------------------
# A field: (name, offset, size, kind, lo, hi, names). kind: "code" (a byte;
# lo..hi is what the type allows, `names` the sicbo.texts table that names
# it), "dice" (size dice, each 1..6), "byte", "bytes", "u16", "u32", "wall" (a
# u32 of seconds since 2000-01-01 UTC, 0 for none), "text" (UTF-8 to the end of
# a payload that is not fixed, VARIABLE). Only a code's lo..hi is checked on
# the board: the other kinds declare their whole range (1..6 a die, 0..255 a
# byte), or 0..0 for a number or a text; and a code or a byte is 1 byte, a
# u16 2, a u32 or a wall 4, a text 0 (host_tools/records.py refuses others). A record type:
# (code, name, fields, follows, meter, text): `follows` the round states
# (ST_* of sicbo.events) a record of this type may follow, ALWAYS for any;
# `meter` the counter it adds one to (a name of sicbo.meters.NAMES), None if
# none; `text` what it says, for people.
ALWAYS = (E.ST_IDLE, E.ST_SHAKING, E.ST_OPEN, E.ST_CLOSED, E.ST_RESULT, E.ST_PAYING,
          E.ST_HOLD)
_MESSAGE = (E.R_COVER_NOT_ON, E.R_LAST)  # the codes of alarms, violations, refusals

RECORD_TYPES = (
    (J_BOOT, "boot", (("reset", P_CAUSE, 1, "byte", 0, 255, "RESET_NAMES"),),
     ALWAYS, None, "the controller started (boot count in the header)"),
    (J_ROUND, "round", (("shaker", P_SHAKER, 1, "code", 0, 2, "SHAKER_NAMES"),),
     ALWAYS, "rounds", "a round started: the shake"),
    (J_OPEN, "open", (), (E.ST_SHAKING,), None, "betting opened (place-bets lamp)"),
    (J_BELL, "bell", (), (E.ST_OPEN,), None, "bell rung: betting closed"),
    (J_COVER_OFF, "cover_off", (), (E.ST_CLOSED,), None, "cover lifted: result entry"),
    (J_RESULT, "result", (("dice", P_DICE, 3, "dice", 1, 6, None),
                          ("source", P_SOURCE, 1, "code", 0, 1, "SOURCE_NAMES")),
     (E.ST_RESULT, E.ST_HOLD), None, "the result"),
    (J_CORRECTION, "correction", (("old_dice", P_OLD_DICE, 3, "dice", 1, 6, None),
                                  ("new_dice", P_NEW_DICE, 3, "dice", 1, 6, None)),
     (E.ST_PAYING, E.ST_HOLD), "corrections", "the result corrected under the supervisor key"),
    (J_VOID, "void", (("reason", P_REASON, 1, "code", 1, E.V_LAST, "VOID_NAMES"),
                      ("policy", P_POLICY, 1, "code", 0, 1, "POLICY_NAMES")),
     (E.ST_SHAKING, E.ST_OPEN, E.ST_CLOSED, E.ST_RESULT, E.ST_HOLD), "voids",
     "the round is void"),
    (J_PAYOUT, "payout", (), (E.ST_PAYING,), "paid", "payout complete: the round closed"),
    (J_ALARM, "alarm", (("message", P_CODE, 1, "code", _MESSAGE[0], _MESSAGE[1], "MESSAGE"),
                        ("detail", P_DETAIL, 1, "byte", 0, 255, None)),
     ALWAYS, "alarms", "an alarm"),
    (J_VIOLATION, "violation", (("message", P_CODE, 1, "code", _MESSAGE[0], _MESSAGE[1],
                                 "MESSAGE"),),
     (E.ST_RESULT, E.ST_PAYING, E.ST_HOLD), "violations", "a violation of the procedure"),
    (J_REFUSED, "refused", (("message", P_CODE, 1, "code", _MESSAGE[0], _MESSAGE[1],
                             "MESSAGE"),
                            ("detail", P_DETAIL, 1, "byte", 0, 255, None)),
     ALWAYS, "refusals", "an interlock refused an action"),
    (J_HOLD, "hold", (("dealer_dice", P_DEALER_DICE, 3, "dice", 1, 6, None),
                      ("reader_dice", P_READER_DICE, 3, "dice", 1, 6, None)),
     (E.ST_RESULT, E.ST_PAYING), "holds", "dealer and reader disagree: held for the supervisor"),
    (J_READER, "reader", (("dice", P_DICE, 3, "dice", 1, 6, None),),
     (E.ST_CLOSED, E.ST_RESULT, E.ST_PAYING), None, "the dice reader's result"),
    (J_SUPERVISOR, "supervisor", (("key", P_KEY, 1, "code", 0, 1, "KEY_NAMES"),),
     ALWAYS, None, "the supervisor key turned"),
    (J_RESUME, "resume", (("state", P_STATE, 1, "code", 0, E.ST_HOLD, "STATE_NAMES"),
                          ("found", P_FOUND, 1, "code", 0, E.ST_HOLD, "STATE_NAMES")),
     ALWAYS, None, "the round resumed after a restart"),
    (J_ALARM_CLEAR, "alarm_clear", (), ALWAYS, None,
     "the supervisor acknowledged the alarm (and sensor faults)"),
    (J_METERS, "meters", (), ALWAYS, None, "meters checkpoint"),
    (J_CONFIG, "config", (("config_id", P_CONFIG_ID, CONFIG_ID_LEN, "bytes", 0, 255, None),),
     ALWAYS, None, "a configuration change"),
    (J_DIAG, "diag", (("test", P_TEST, 1, "code", 1, E.D_LAST, "DIAG_NAMES"),
                      ("detail", P_TEST_DETAIL, 1, "byte", 0, 255, None)),
     ALWAYS, None, "a technician's test from diag"),
    (J_FAULT, "fault", (("stage", P_STAGE, 1, "byte", 0, 255, "FAULT_STAGES"),
                        ("kind", P_KIND, 1, "byte", 0, 255, "FAULT_KINDS"),
                        ("detail", P_FAULT_DETAIL, 1, "byte", 0, 255, None),
                        ("late", P_LATE, 1, "code", 0, 1, None)),
     ALWAYS, None, "a contained fault"),
    (J_DAMAGE, "damage", (("code", P_BAD, 1, "code", 1, E.BAD_LAST, "DAMAGE_NAMES"),
                          ("type", P_BAD_TYPE, 1, "byte", 0, 255, None),
                          ("seq", P_BAD_SEQ, 4, "u32", 0, 0, None)),
     ALWAYS, None, "a damaged record found at boot"),
    (J_LINK, "link", (("event", P_LINK, 1, "code", LINK_DOWN, LINK_UP, "LINK_EVENTS"),
                      ("fault", P_LINK_FAULT, 1, "byte", 0, 255, "LINK_FAULTS"),
                      ("detail", P_LINK_DETAIL, 2, "u16", 0, 0, None),
                      ("acked", P_LINK_SEQ, 4, "u32", 0, 0, None)),
     ALWAYS, None, "the floor link lost, or connected again"),
    (J_PROVISION, "provision", (("chain", P_CHAIN, 4, "u32", 0, 0, None),
                                ("previous", P_PREVIOUS, 4, "u32", 0, 0, None)),
     ALWAYS, None, "a MAC chain started: the board took a provisioning"),
    (J_REPL, "repl", (("while", P_STOP_WHILE, 1, "code", STOP_RUNNING, STOP_STARTUP,
                       "STOP_NAMES"),
                      ("stage", P_STOP_STAGE, 1, "byte", 0, 255, "FAULT_STAGES")),
     ALWAYS, None, "the app stopped into the REPL (Ctrl-C, mpremote)"),
    (J_CLOCK, "clock", (("old", P_CLOCK_OLD, 4, "wall", 0, 0, None),
                        ("new", P_CLOCK_NEW, 4, "wall", 0, 0, None)),
     ALWAYS, None, "the clock set (sicbo deploy, sicbo diag)"),
    (J_CLOCK_MOVED, "clock_moved", (("last", P_CLOCK_OLD, 4, "wall", 0, 0, None),
                                    ("now", P_CLOCK_NEW, 4, "wall", 0, 0, None)),
     ALWAYS, None, "the boot found the clock set back by hand"),
    (J_DEPLOY, "deploy", (("kind", P_DEPLOY_KIND, 1, "code", CODE_FILES, CODE_FROZEN,
                           "CODE_KIND_NAMES"),
                          ("copied", P_DEPLOY_COPIED, 1, "byte", 0, 255, None),
                          ("removed", P_DEPLOY_REMOVED, 1, "byte", 0, 255, None),
                          ("cut_short", P_DEPLOY_FLAGS, 1, "code", 0, 1, None),
                          ("code", P_DEPLOY_CODE, CODE_ID_LEN, "bytes", 0, 255, None),
                          ("config_id", P_DEPLOY_CONFIG, CONFIG_ID_LEN, "bytes", 0, 255, None),
                          ("files", DEPLOY_HEAD, 0, "text", 0, 0, None)),
     ALWAYS, None, "a deploy (sicbo deploy): the files changed, the code and configuration"),
    (J_VERIFY, "verify", (("kind", P_VERIFY_KIND, 1, "code", CHECK_FILES, CHECK_PARTITION,
                           "CHECK_NAMES"),
                          ("items", P_VERIFY_ITEMS, 1, "byte", 0, 255, None),
                          ("seed", P_VERIFY_SEED, SEED_LEN, "bytes", 0, 255, None),
                          ("answer", P_VERIFY_ANSWER, ANSWER_LEN, "bytes", 0, 255, None),
                          ("by", VERIFY_HEAD, 0, "text", 0, 0, None)),
     ALWAYS, None, "the code verified on demand (sicbo verify): who asked, the seed, the answer"),
    (J_RECOVERY, "recovery", (("reset", P_RECOVERY_CAUSE, 1, "byte", 0, 255,
                               "RESET_NAMES"),),
     ALWAYS, None, "recovery mode: the confirm key held at power-on, the app not started"),
)
# The record types whose payload is not fixed, with its least length: J_METERS
# (checked for length only; meters.Meters.load checks the rest), J_DEPLOY and
# J_VERIFY (their fields checked, the text after them not; at most MAX_LEN).
VARIABLE = {J_METERS: METERS_HEAD, J_DEPLOY: DEPLOY_HEAD, J_VERIFY: VERIFY_HEAD}
# The record types of technician access, which the floor lists
# (host_tools/floor): tests, the REPL, the clock, deploys, code checks,
# recovery mode, a MAC chain provisioned.
ACCESS = (J_DIAG, J_PROVISION, J_REPL, J_CLOCK, J_CLOCK_MOVED, J_DEPLOY, J_VERIFY, J_RECOVERY)
