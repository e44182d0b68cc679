# The boot API of the round machine (what the shell calls at start-up):
# feed() of every journal segment, resume() with the sensors as they are and
# the board's reset cause (the lamps driven again for the state resumed),
# set_config() with the files' identity.
from roundkit import Rig, booted, levels, make_cfg, replay_of
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.roundmachine import RoundMachine


def test_resume_writes_j_boot_with_the_reset_cause_and_the_next_boot_count():
    r = Rig()
    r.round(1, 2, 3)
    b = booted(r, cause=5)
    assert b.types() == [R.J_BOOT] and b.recs[0].p(0) == 5 and b.recs[0].boot == 1
    assert b.recs[0].seq == r.m.seq + 1 and b.recs[0].round == 1 and b.recs[0].wall == 780000000
    assert b.shown() == [E.M_RESUMED] and b.last[-1] == (E.C_SHOW, E.M_RESUMED, E.ST_IDLE, 0)
    assert b.has(E.C_LAMPS)
    b2 = booted(b)
    assert b2.recs[0].boot == 2 and b2.recs[0].p(0) == 0 and b2.m.boot == 2


def test_resume_of_an_open_round_names_the_open_clasp():
    cfg = make_cfg(resume_policy="keep_open")
    for left, right, detail in ((0, 1, 1), (1, 0, 2), (0, 0, 3)):
        r = Rig(cfg)
        r.to_open()
        b = booted(r, clasp_l=left, clasp_r=right)
        assert b.types() == [R.J_BOOT, R.J_ALARM, R.J_VOID]
        assert b.recs[1].p(0) == E.R_TAMPER_CLASP and b.recs[1].p(1) == detail, detail
        assert b.m.state == E.ST_IDLE and b.m.alarm


def test_resume_of_an_open_round_with_everything_fastened_keeps_it_open():
    r = Rig(make_cfg(resume_policy="keep_open"))
    r.to_open()
    b = booted(r)
    assert b.types() == [R.J_BOOT, R.J_RESUME] and b.m.state == E.ST_OPEN
    assert b.recs[1].p(0) == E.ST_OPEN and b.recs[1].p(1) == E.ST_OPEN
    assert b.lamp("PLACE_BETS") and (E.C_SHOW, E.M_RESUMED, E.ST_OPEN, 0) in b.last


def test_set_config_journals_a_change_of_files_only():
    r = Rig()
    r.round(1, 2, 3)
    b = booted(r)
    m = b.m
    assert bytes(m.config_id) == bytes(6) and m.config_wall == 780000000  # the J_BOOT's
    b.now += 10
    assert m.set_config(b.now, 780000100, b"\x01\x02\x03\x04\x05\x06") == 0
    recs = journal.records(bytes(m.records()))
    assert [x.type for x in recs] == [R.J_CONFIG]
    assert recs[0].payload[:6] == b"\x01\x02\x03\x04\x05\x06"
    assert recs[0].seq == m.seq and recs[0].wall == 780000100 and recs[0].ticks == b.now
    assert bytes(m.config_id) == b"\x01\x02\x03\x04\x05\x06" and m.config_wall == 780000100
    b.journal.extend(m.records())
    # The next boot: the same files journal nothing; other files do.
    again = replay_of(bytes(b.journal), r.cfg, r.m.table)
    assert bytes(again.config_id) == b"\x01\x02\x03\x04\x05\x06"
    assert again.set_config(5, None, bytearray(b"\x01\x02\x03\x04\x05\x06")) == 0
    assert again.rec_len == 0
    again.set_config(6, None, b"\x01\x02\x03\x04\x05\x07")
    assert again.rec_len == R.REC_LEN and again.config_wall is None
    assert again.set_config(7, None, b"") == 0 and again.rec_len == 0  # no identity given


def test_a_fresh_machine_fed_nothing_boots_idle_at_round_zero():
    m = RoundMachine(make_cfg())
    m.feed(b"")
    m.feed(memoryview(b"\xa5\x06\x24"))  # a torn first record
    assert m.scanner.torn_bytes == 3 and m.scanner.torn_segments == 1
    n = m.resume(1, None, levels(0, 0, 0, 0))
    recs = journal.records(bytes(m.records()))
    assert n > 0 and [x.type for x in recs] == [R.J_BOOT]
    assert (recs[0].seq, recs[0].round, recs[0].boot) == (1, 0, 1)
    assert m.open_seq == 0 and m.state == E.ST_IDLE and not m.alarm


def test_resume_after_the_bell_with_the_cover_lifted_is_result_entry():
    r = Rig()
    r.to_open()
    r.ev(E.EV_BELL)
    b = booted(r, cover=0)
    assert b.types() == [R.J_BOOT, R.J_COVER_OFF] and b.m.state == E.ST_RESULT
    assert b.shown() == [E.M_ENTER_DICE]
    b = booted(r, cover=1)
    assert b.types() == [R.J_BOOT, R.J_RESUME] and b.m.state == E.ST_CLOSED


def test_resume_after_the_bell_with_the_cover_lifted_drives_the_lamps_again():
    # The lamps are dark after a power-on: resuming into dice entry sends the
    # frame again, so an alarm raised before the cut (a sensor fault after the
    # bell) is lit until the supervisor clears it, and betting is shown shut.
    r = Rig()
    r.to_open()
    r.ev(E.EV_BELL)
    r.ev(E.EV_FAULT, E.S_COVER)
    assert r.m.state == E.ST_CLOSED and r.lamp("ALARM")
    b = booted(r, cover=0, clasp_l=0, clasp_r=0)
    assert b.types() == [R.J_BOOT, R.J_COVER_OFF] and b.m.state == E.ST_RESULT
    assert b.m.alarm and b.has(E.C_LAMPS), b.last
    assert b.lamp("ALARM") and not b.lamp("PLACE_BETS") and not b.lamp("PAYING")
