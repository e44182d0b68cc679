# An event's records are written in one append; a power cut may keep only
# its first ones (each record whole, the rest torn or never written). The
# journal then says what the event began, the round's state is the one before
# it, and the resume must finish it as the event would have (found in
# review: the round was paid, or betting reopened, on what the event had
# refused). Every case here was seen failing before the resume finished them.
from roundkit import Rig, booted, forge, make_cfg
from sicbo import events as E
from sicbo import records as R


def _cut(r, keep=1):
    """A power cut during the last event's append: only its first `keep`
    records reached the journal."""
    assert len(r.recs) > keep
    kept = sum(rec.length for rec in r.recs[:keep])
    r.journal = bytearray(r.journal[:len(r.journal) - len(r.raw) + kept])


def test_a_reader_that_disagreed_while_paying_holds_the_round_after_the_cut():
    for tear in (0, 5, R.REC_LEN - 1):  # the J_HOLD not written, or torn
        r = Rig()
        r.to_result()
        r.enter(1, 2, 3)
        r.reader(6, 6, 5)  # J_READER, J_HOLD in one append
        assert r.types() == [R.J_READER, R.J_HOLD]
        _cut(r)
        r.journal.extend(b"\xa5" * tear)
        b = booted(r)
        assert b.m.state == E.ST_HOLD and b.types() == [R.J_BOOT, R.J_HOLD], tear
        assert bytes(b.m.hold) == b"\x01\x02\x03" and bytes(b.m.reader) == b"\x06\x06\x05"
        b.ev(E.EV_PAYOUT)  # the payout key is refused: the supervisor decides
        assert b.m.state == E.ST_HOLD
        assert booted(b).m.state == E.ST_HOLD  # and the next boot agrees, adding nothing
        assert booted(b).types() == [R.J_BOOT, R.J_RESUME]


def test_a_reader_that_agreed_is_resumed_as_it_was():
    r = Rig()
    r.to_result()
    r.enter(1, 2, 3)
    r.reader(1, 2, 3)
    b = booted(r)
    assert b.m.state == E.ST_PAYING and R.J_HOLD not in b.types()


def test_a_tamper_whose_void_was_cut_off_voids_the_round_whatever_the_resume_policy():
    for policy in ("keep_open", "void"):
        for ev in (E.EV_CLASP_L_OFF, E.EV_COVER_OFF):
            r = Rig(make_cfg(resume_policy=policy))
            r.to_open()
            r.ev(ev)
            assert r.types() == [R.J_ALARM, R.J_VOID]
            _cut(r)
            b = booted(r)  # dome closed and clasped again before the power came back
            assert b.types() == [R.J_BOOT, R.J_VOID] and b.m.state == E.ST_IDLE, (policy, ev)
            assert b.recs[1].payload[0] == E.V_TAMPER


def test_a_sensor_fault_whose_void_was_cut_off_voids_the_round():
    r = Rig(make_cfg(resume_policy="keep_open"))
    r.to_open()
    r.ev(E.EV_FAULT, 3)
    assert r.types() == [R.J_ALARM, R.J_VOID]
    _cut(r)
    b = booted(r)
    assert b.types() == [R.J_BOOT, R.J_VOID] and b.recs[1].payload[0] == E.V_FAULT


def test_a_resume_cut_after_its_damage_report_voids_the_round_at_the_next_boot():
    r = Rig(make_cfg(resume_policy="keep_open"))
    r.round(1, 2, 3)
    r.to_open()
    r.journal.extend(forge(R.J_ALARM, r.m.seq + 1, r.m.round, bytes([200]) + bytes(7)))
    b = booted(r)
    assert b.types() == [R.J_BOOT, R.J_DAMAGE, R.J_ALARM, R.J_VOID]
    for keep in (2, 3):  # J_BOOT, J_DAMAGE (its alarm and void cut), or J_ALARM too
        c = Rig(b.cfg)
        c.journal = bytearray(b.journal)
        c.raw, c.recs, c.now = b.raw, b.recs, b.now
        _cut(c, keep)
        d = booted(c)
        assert d.m.state == E.ST_IDLE and d.types()[-1] == R.J_VOID, (keep, d.types())
        assert d.recs[-1].payload[0] == E.V_DAMAGE
        assert (R.J_ALARM in d.types()) == (keep == 2)  # the alarm written if it was cut
        assert booted(d).m.state == E.ST_IDLE


def test_the_resume_s_own_power_cut_void_cut_off_is_voided_again():
    r = Rig(make_cfg(resume_policy="void"))
    r.to_open()
    b = booted(r)
    assert b.types() == [R.J_BOOT, R.J_ALARM, R.J_VOID]
    _cut(b, 2)
    c = booted(b)
    assert c.types() == [R.J_BOOT, R.J_VOID] and c.recs[1].payload[0] == E.V_POWER


def test_an_event_whose_records_all_reached_the_journal_adds_nothing_at_the_boot():
    r = Rig(make_cfg(resume_policy="keep_open"))
    r.to_open()
    r.ev(E.EV_CLASP_L_OFF)
    b = booted(r)
    assert b.types() == [R.J_BOOT] and b.m.state == E.ST_IDLE
