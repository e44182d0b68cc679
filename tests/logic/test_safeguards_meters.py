# The meters (sicbo.meters): every counter and void reason restored from its
# own offset of a checkpoint, a checkpoint of another table (or a short one)
# refused whole, the checkpoint record itself (sequence, configuration in
# force), and the damage list kept bounded.
from roundkit import Rig, forge, make_cfg
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters, checkpoint
from sicbo.recall import Recall
from sicbo.roundstate import RoundState


def _filled(channels):
    m = Meters(channels)
    for i in range(8):
        m.counts[i] = 0x01010101 * (i + 1)
        m.void_reasons[i] = 0x10203040 + 7 * i
    for c in range(channels):
        m.wins[c] = 5000 + 3 * c
    return m


def test_every_counter_comes_back_from_its_own_place():
    m = _filled(20)
    back = Meters(20)
    assert back.load(m.payload())
    assert back.counts == m.counts and back.void_reasons == m.void_reasons
    assert back.wins == m.wins
    d = back.as_dict()
    assert d["rounds"] == 0x01010101 and d["holds"] == 0x08080808
    assert d["void_reasons"] == [0x10203040 + 7 * i for i in range(8)]
    assert [back.get(n) for n in ("rounds", "paid", "voids", "alarms", "violations",
                                  "corrections", "refusals", "holds")] == m.counts
    # The layout: 8 counters, 8 void reasons, the channel count, the wins.
    p = m.payload()
    assert len(p) == 4 * 8 + 4 * 8 + 2 + 4 * 20
    assert p[0:4] == b"\x01\x01\x01\x01" and p[32:36] == b"\x40\x30\x20\x10"
    assert p[64] == 20 and p[65] == 0 and p[66:70] == bytes((0x88, 0x13, 0, 0))


def test_a_table_of_many_lamp_channels_comes_back_whole():
    # The channel count is a u16: 300 channels (spares included) and more.
    for n in (255, 256, 300):
        m = _filled(n)
        back = Meters(n)
        assert back.load(m.payload()) and back.wins == m.wins, n
        assert not Meters(n - 256 if n >= 256 else n + 256).load(m.payload())


def test_a_checkpoint_of_another_table_or_cut_short_is_refused_whole():
    m = _filled(6)
    p = m.payload()
    for other in (5, 7):
        x = Meters(other)
        assert not x.load(p)
        assert x.counts == [0] * 8 and x.void_reasons == [0] * 8 and x.wins == [0] * other
    x = Meters(6)
    assert not x.load(p[:-1]) and x.counts == [0] * 8
    assert not x.load(p[:65]) and not x.load(b"")
    assert x.load(p[:66 + 4 * 6]) and x.counts == m.counts
    assert x.load(p + b"\x00\x00")  # room to spare is no harm


def test_the_checkpoint_record_carries_the_meters_and_the_configuration():
    r = Rig(wall=820000000)
    r.round(1, 2, 3)
    r.void_round(2)
    r.m.config_id[:] = b"CONFIG"
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    seq = r.m.seq
    known = r.m.config_wall
    assert known == 820000000
    r.m.meters = rc.meters  # as counted: a checkpoint writes the machine's meters
    rec = bytes(checkpoint(r.m, r.now, 820000123))
    assert r.m.seq == seq + 1 and rc.meters.checkpoints == 1  # the machine took it
    got = journal.records(rec)[0]
    assert got.type == R.J_METERS and got.seq == seq + 1 and got.round == r.m.round
    assert got.wall == 820000123 and journal.check(got) == 0
    tail = got.payload[-R.METERS_CHAIN - R.METERS_CONFIG:-R.METERS_CHAIN]
    assert tail[:6] == b"CONFIG" and tail[6] == 1
    assert tail[8] | tail[9] << 8 | tail[10] << 16 | tail[11] << 24 == known
    # A fresh recall restores everything from the checkpoint alone.
    rc2 = Recall(r.m.table)
    rc2.feed(rec)
    assert rc2.meters.checkpoints == 1
    assert rc2.meters.counts == rc.meters.counts and rc2.meters.wins == rc.meters.wins
    assert rc2.meters.get("voids") == 1 and rc2.meters.void_reasons[E.V_LEANING] == 1
    assert rc2.meters.get("paid") == 1 and rc2.meters.get("rounds") == 2
    # And a bare RoundState learns the configuration in force from it.
    rs = RoundState()
    rs.feed(rec)
    assert bytes(rs.config_id) == b"CONFIG" and rs.config_wall == 820000123  # its own time


def test_a_checkpoint_without_a_known_time_says_so():
    r = Rig()
    r.round(1, 2, 3)
    r.m.meters = Meters(r.m.table.channels, r.m.table)
    rec = bytes(checkpoint(r.m, r.now, None))
    tail = journal.records(rec)[0].payload[-R.METERS_CHAIN - R.METERS_CONFIG:-R.METERS_CHAIN]
    assert tail[6] == 0 and tail[8:12] == bytes(4)
    rs = RoundState()
    rs.feed(rec)
    assert rs.config_wall is None


def test_recall_takes_a_checkpoint_as_the_board_does():
    m = _filled(Rig().m.table.channels)
    rc = Recall(Rig().m.table)
    rc.feed(journal.encode(R.J_METERS, 1, 0, 1, 0, None, m.payload()))
    assert rc.meters.checkpoints == 1 and rc.meters.counts == m.counts
    assert rc.rounds == []


def test_void_reasons_counted_per_reason():
    cfg = make_cfg()
    r = Rig(cfg)
    for reason in (1, 2, 2, 3, 3, 3):
        r.void_round(reason)
    r.to_open()
    r.ev(E.EV_COVER_OFF)  # tamper
    rc = Recall(r.m.table)
    rc.feed(bytes(r.journal))
    assert rc.meters.void_reasons == [0, 1, 2, 3, 1, 0, 0, 0]
    assert rc.meters.get("voids") == 7


def test_the_damage_list_keeps_only_the_last_ones():
    r = Rig()
    r.round(1, 2, 3)
    data = bytearray(r.journal)
    seq = r.m.seq
    for k in range(15):  # each a result with no round to take it: damage
        data.extend(forge(R.J_RESULT, seq + 1 + k, 1, bytes((1, 2, 3, 0, 0, 0, 0, 0))))
    rc = Recall(r.m.table, keep=4)
    rc.feed(bytes(data))
    assert rc.damaged == 15
    assert len(rc.damage) == 4
    assert [d[0] for d in rc.damage] == [seq + 12, seq + 13, seq + 14, seq + 15]
    rc = Recall(r.m.table)
    rc.feed(bytes(data))
    assert len(rc.damage) == 10 and rc.damage[-1][0] == seq + 15


def test_a_checkpoint_written_without_the_clock_keeps_the_last_known_time():
    r = Rig(wall=820000000)
    r.round(1, 2, 3)
    r.m.config_id[:] = b"CONFIG"
    r.m.meters = Meters(r.m.table.channels, r.m.table)
    rec = bytes(checkpoint(r.m, r.now, None))
    assert journal.records(rec)[0].wall is None
    rs = RoundState()
    rs.feed(rec)
    assert rs.config_wall == 820000000 and bytes(rs.config_id) == b"CONFIG"


def test_a_table_without_win_lamps_restores_its_counters():
    m = Meters(0)
    m.counts[0] = 9
    p = m.payload()
    assert len(p) == 66
    back = Meters(0)
    assert back.load(p) and back.counts[0] == 9
    assert not back.load(p[:65])
