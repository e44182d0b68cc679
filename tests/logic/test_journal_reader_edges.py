# Edges of the journal's readers and of the boot: an alarm, a violation or a
# refusal is shown by its own message and detail, an app stopped during
# start-up names the stage it stopped in; a round recall still lists as open
# has not ended, even in a RoundInfo an earlier round used; meters read
# without their table take any checkpoint's channels; and the boot's records
# follow on from a damaged last record up to 65,535 numbers ahead, never
# from one further ahead (docs/journal.md, Reading and recovery rules).
from roundkit import Rig, booted, forge
from sicbo import events as E
from sicbo import journal, logtext
from sicbo import records as R
from sicbo.meters import Meters
from sicbo.recall import Recall


def _rec(rtype, payload):
    recs = journal.records(journal.encode(rtype, 7, 3, 1, 0, None, bytes(payload)))
    assert len(recs) == 1
    return recs[0]


HEAD = "journal      7 round     3 "


# ---- journal lines ------------------------------------------------------------------

def test_an_alarm_violation_or_refusal_line_shows_its_message_and_detail():
    line = logtext.journal_line(_rec(R.J_ALARM, (E.R_SENSOR_FAULT, 2, 0, 0, 0, 0, 0, 0)))
    assert line == HEAD + "alarm       alarm: sensor fault (chatter): clasp_left", line
    line = logtext.journal_line(_rec(R.J_REFUSED, (E.R_CLASP_OPEN, 3, 0, 0, 0, 0, 0, 0)))
    assert line == HEAD + "refused     refused: no shaking unless both clasps are fastened", line
    line = logtext.journal_line(_rec(R.J_VIOLATION,
                                     (E.R_COVER_BEFORE_PAYOUT, 0, 0, 0, 0, 0, 0, 0)))
    assert line == HEAD + ("violation   violation: dome covered before payout complete"
                           " (Art. 4)"), line


def test_an_app_stopped_during_start_up_names_its_stage():
    line = logtext.journal_line(_rec(R.J_REPL, (R.STOP_STARTUP, E.F_TASK, 0, 0, 0, 0, 0, 0)))
    assert line == HEAD + "repl        app stopped: start-up (task)", line
    # A stage the texts do not name: its number.
    line = logtext.journal_line(_rec(R.J_REPL, (R.STOP_STARTUP, 9, 0, 0, 0, 0, 0, 0)))
    assert line == HEAD + "repl        app stopped: start-up (stage 9)", line
    # Stopped while the table ran: no stage.
    line = logtext.journal_line(_rec(R.J_REPL, (R.STOP_RUNNING, E.F_TASK, 0, 0, 0, 0, 0, 0)))
    assert line == HEAD + "repl        app stopped: table running", line


# ---- recall -------------------------------------------------------------------------------

def test_a_round_still_open_has_not_ended_in_a_reused_round_info():
    # keep=1: the second round's RoundInfo is the first one's, made anew.
    r = Rig()
    r.round(1, 2, 3)
    r.to_result()
    rc = Recall(r.m.table, keep=1)
    rc.feed(bytes(r.journal))
    (info,) = rc.last()
    assert info.round == 2 and info.status == "open", (info.round, info.status)
    assert info.ended is None, info.ended
    assert info.dice is None and info.bell is not None
    # Paid, it has ended.
    r.enter(4, 5, 6)
    r.ev(E.EV_PAYOUT)
    rc = Recall(r.m.table, keep=1)
    rc.feed(bytes(r.journal))
    (info,) = rc.last()
    assert info.status == "paid" and info.ended is not None and info.ended[1] > info.bell[1]


# ---- meters without a table -------------------------------------------------------

def test_meters_read_without_their_table_take_the_checkpoints_channels():
    r = Rig()
    table = r.m.table
    counted = Meters(table.channels, table)
    r.m.meters = counted
    r.round(1, 2, 3)
    r.round(6, 6, 6)
    assert sum(counted.wins) > 0
    m = Meters(None)
    assert m.wins == []
    assert m.load(counted.payload()) is True
    assert len(m.wins) == table.channels and m.wins == counted.wins, m.wins
    assert m.get("paid") == 2
    # A checkpoint of a table of fewer channels after it: its channels again.
    small = Meters(3)
    small.wins = [7, 8, 9]
    assert m.load(small.payload()) is True
    assert m.wins == [7, 8, 9] and m.get("paid") == 0, m.wins


# ---- the boot after a damaged last record ---------------------------------------------

def _boot_after_damage(ahead):
    """The first record's seq of a boot whose journal ends in a record
    numbered `ahead` after the last good one (a damaged one: out of order),
    and that last good seq."""
    r = Rig()
    r.round(1, 2, 3)
    last = r.m.seq
    r.journal.extend(forge(R.J_SUPERVISOR, last + ahead, r.m.round))
    b = booted(r)
    assert b.m.damaged == 1 and b.m.damage[0] == E.BAD_SEQ, (b.m.damaged, b.m.damage[0])
    assert b.recs[0].type == R.J_BOOT, b.types()
    return b.recs[0].seq, last


def test_the_boot_follows_a_damaged_last_record_up_to_65535_ahead():
    seq, last = _boot_after_damage(0xFFFF)
    assert seq == last + 0xFFFF + 1, (seq, last)
    seq, last = _boot_after_damage(2)
    assert seq == last + 3, (seq, last)


def test_the_boot_does_not_follow_a_damaged_last_record_65536_ahead():
    # A number that far ahead is taken for a forgery: the journal's own go on.
    seq, last = _boot_after_damage(0x10000)
    assert seq == last + 1, (seq, last)
