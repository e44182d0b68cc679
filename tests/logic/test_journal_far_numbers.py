# A CRC-valid record whose sequence number or round id no table reaches (a
# forged record, or one damaged under a good CRC) is damage, never followed:
# taken as the journal's last, 2**32 - 1 made the next record's number
# overflow its u32, and every boot stopped on it (the board out of service).
# After a gap (a corrupt stretch, a torn tail) a record may skip ahead, but
# no further than R.MAX_SKIP.
from roundkit import Rig, booted, forge, levels, replay_of
from sicbo import events as E
from sicbo import records as R
from sicbo.journal import records


def _played():
    r = Rig()
    r.round(1, 2, 3)
    return r


def _boot_on(data, r):
    """A power-on on data: replayed and resumed; then a round played on it."""
    m = replay_of(data, r.cfg, r.m.table)
    b = Rig(m.cfg, machine=m)
    b.journal = bytearray(data)
    b.now = r.now + 1000
    b._drain(m.resume(b.now, 780000000, levels(1, 1, 1)))
    return b


def _damage_codes(data):
    return [rec.payload[0] for rec in records(bytes(data)) if rec.type == R.J_DAMAGE]


def test_a_record_numbered_past_any_table_after_a_gap_is_damage_and_the_table_plays_on():
    for seq, rid, code in ((2 ** 32 - 1, 1, E.BAD_SEQ), (R.MAX_ID + 1, 1, E.BAD_SEQ),
                           (None, 2 ** 32 - 1, E.BAD_ROUND), (None, R.MAX_ID + 1, E.BAD_ROUND)):
        r = _played()
        last = r.m.seq
        # A corrupt byte first: the record after it is taken as after a gap.
        bad = forge(R.J_ALARM_CLEAR, seq if seq is not None else last + 1, rid)
        b = _boot_on(bytes(r.journal) + b"\x00" + bad, r)
        assert b.m.damaged == 1 and _damage_codes(b.journal) == [code], (seq, rid)
        assert b.m.seq < R.MAX_ID and b.m.round == 1
        b.round(4, 5, 6)  # the next round's records are numbered on from the good ones
        assert b.m.round == 2 and b.m.seq < last + 40
        again = booted(b)  # and every later boot replays the journal as it is
        assert again.m.round == 2 and again.m.damaged == 1


def test_the_journal_s_first_record_numbered_past_any_table_is_damage():
    r = _played()
    bad = forge(R.J_BOOT, R.MAX_ID + 5, 1)
    m = replay_of(bad + bytes(r.journal), r.cfg, r.m.table)
    assert m.damaged == 1 and m.damage[0] == E.BAD_SEQ
    assert m.seq == r.m.seq and m.round == r.m.round


def test_after_a_gap_a_record_may_skip_ahead_up_to_max_skip_and_no_further():
    r = _played()
    last = r.m.seq
    near = forge(R.J_ALARM_CLEAR, last + R.MAX_SKIP, 1)
    m = replay_of(bytes(r.journal) + b"\x00" + near, r.cfg, r.m.table)
    assert m.damaged == 0 and m.seq == last + R.MAX_SKIP
    far = forge(R.J_ALARM_CLEAR, last + R.MAX_SKIP + 1, 1)
    m = replay_of(bytes(r.journal) + b"\x00" + far, r.cfg, r.m.table)
    assert m.damaged == 1 and m.damage[0] == E.BAD_SEQ and m.seq == last
    # The round id likewise (a J_ROUND after a gap: the next round, or up to
    # MAX_SKIP past it).
    ok = forge(R.J_ROUND, last + 1, 2 + R.MAX_SKIP)
    m = replay_of(bytes(r.journal) + b"\x00" + ok, r.cfg, r.m.table)
    assert m.damaged == 0 and m.round == 2 + R.MAX_SKIP and m.state == E.ST_SHAKING
    far = forge(R.J_ROUND, last + 1, 3 + R.MAX_SKIP)
    m = replay_of(bytes(r.journal) + b"\x00" + far, r.cfg, r.m.table)
    assert m.damaged == 1 and m.damage[0] == E.BAD_ROUND and m.round == 1
