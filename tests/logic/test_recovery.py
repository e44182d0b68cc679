# The power-cut test: record a sequence of rounds, cut the journal at every
# byte offset of its last records, reboot (replay + resume) and check that the
# state is a valid one, every completed round is present once, none doubled,
# and the table carries on with the next round id.
from roundkit import Rig, levels, make_cfg
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.recall import Recall
from sicbo.roundmachine import RoundMachine

# State each record type leaves the round in (None: no change).
_AFTER = {R.J_ROUND: E.ST_SHAKING, R.J_OPEN: E.ST_OPEN, R.J_BELL: E.ST_CLOSED,
          R.J_COVER_OFF: E.ST_RESULT, R.J_RESULT: E.ST_PAYING,
          R.J_CORRECTION: E.ST_PAYING, R.J_HOLD: E.ST_HOLD, R.J_VOID: E.ST_IDLE,
          R.J_PAYOUT: E.ST_IDLE}


def _record_session(cfg):
    r = Rig(cfg)
    r.round(1, 2, 3)
    r.void_round(2)
    r.round(6, 6, 6)
    # A corrected round, a violation, then paid.
    r.to_result()
    r.enter(1, 1, 2)
    r.ev(E.EV_COVER_ON)
    r.ev(E.EV_SUPERVISOR_ON)
    r.enter(1, 1, 3)
    r.ev(E.EV_SUPERVISOR_OFF)
    r.ev(E.EV_PAYOUT)
    # The last round is cut somewhere between its shake and its payout.
    r.to_result()
    r.enter(2, 4, 5)
    r.ev(E.EV_PAYOUT)
    return r


def _model(recs):
    state = E.ST_IDLE
    completed = []
    for rec in recs:
        s = _AFTER.get(rec.type)
        if s is not None:
            state = s
        if rec.type in (R.J_PAYOUT, R.J_VOID):
            completed.append(rec.round)
    return state, completed


def _cut_and_boot(cfg, m, data, cut):
    table = m.table
    recs = journal.records(data[:cut])
    before, completed = _model(recs)
    m.__init__(cfg, table=table)  # a fresh machine, as after a reboot
    m.feed(data[:cut])
    assert m.state == before
    replayed = m.seq
    cover = 1 if before in (E.ST_SHAKING, E.ST_OPEN, E.ST_CLOSED) else 0
    n = m.resume(777, None, levels(cover, 1, 1, 0))
    boot = bytes(m.records())
    cmds = m.commands()
    assert len(cmds) == n and (E.C_LAMPS, 0, 0, 0) in cmds
    new = journal.records(boot)
    assert new[0].type == R.J_BOOT and new[0].seq == replayed + 1
    types = [x.type for x in new]
    assert R.J_RESULT not in types and R.J_PAYOUT not in types  # never settled again
    # The state resumed in is a valid one for what was cut.
    if before == E.ST_SHAKING or (before == E.ST_OPEN and cfg.resume_policy == "void"):
        assert m.state == E.ST_IDLE and R.J_VOID in types
        assert new[types.index(R.J_VOID)].p(0) == E.V_POWER
    else:
        assert m.state == before, (cut, before, m.state)
    if m.state == E.ST_PAYING:
        row = table.settle(m.dice[0], m.dice[1], m.dice[2])
        paying = table.status_channel["PAYING"]
        for i in range(len(row)):
            mask = (1 << (paying & 7)) if i == len(row) - 1 - (paying >> 3) else 0
            alarm = table.status_channel["ALARM"]
            if i == len(row) - 1 - (alarm >> 3):
                mask |= 1 << (alarm & 7)
            assert m.frame[i] & ~mask & 0xFF == row[i]
        assert m.frame[len(row) - 1 - (paying >> 3)] & (1 << (paying & 7))
    # Completed rounds are all present, once.
    rc = Recall(table, keep=20)
    rc.feed(data[:cut])
    rc.feed(boot)
    done = [x.round for x in rc.rounds if x.status in ("paid", "void")]
    for rid in completed:
        assert done.count(rid) == 1, (cut, rid)
    assert rc.meters.get("paid") == len([x for x in recs if x.type == R.J_PAYOUT])
    return m, boot


def _finish_and_continue(m, data, boot):
    # Drive the resumed round to its end and play one more round.
    r = Rig(m.cfg, machine=m)
    r.journal = bytearray(bytes(data) + boot)
    last = m.round
    if m.state == E.ST_OPEN:
        r.ev(E.EV_BELL)
    if m.state == E.ST_CLOSED:
        r.ev(E.EV_COVER_OFF)
    if m.state == E.ST_RESULT:
        r.enter(3, 4, 5)
    if m.state == E.ST_PAYING:
        r.ev(E.EV_PAYOUT)
    assert m.state == E.ST_IDLE
    r.round(5, 5, 1)
    assert m.round == last + 1
    results = {}
    payouts = {}
    for rec in journal.records(bytes(r.journal)):
        if rec.type == R.J_RESULT:
            results[rec.round] = results.get(rec.round, 0) + 1
        if rec.type == R.J_PAYOUT:
            payouts[rec.round] = payouts.get(rec.round, 0) + 1
    assert max(results.values()) == 1 and max(payouts.values()) == 1
    rp = RoundMachine(m.cfg, m.table)
    rp.feed(bytes(r.journal))
    assert rp.state == E.ST_IDLE and rp.round == m.round and rp.seq == m.seq


def _power_cut(cfg, last_records):
    r = _record_session(cfg)
    m = r.m
    data = memoryview(bytes(r.journal))
    r = None
    start = journal.records(data)[-last_records].offset
    checked = 0
    for cut in range(start, len(data) + 1):
        m, boot = _cut_and_boot(cfg, m, data, cut)
        if cut % 7 == 0 or cut == len(data):
            _finish_and_continue(m, data[:cut], boot)
        checked += 1
    return checked


def test_power_cut_at_every_byte_of_the_last_rounds_resume_void():
    assert _power_cut(make_cfg(resume_policy="void"), 14) == 14 * R.REC_LEN + 1


def test_power_cut_at_every_byte_of_the_last_rounds_keep_open():
    assert _power_cut(make_cfg(resume_policy="keep_open"), 14) > 0


def test_keep_open_with_cover_lifted_during_the_cut_is_tamper():
    r = Rig(make_cfg(resume_policy="keep_open"))
    r.to_open()
    m = r.m
    m.__init__(r.cfg, table=m.table)
    m.feed(bytes(r.journal))
    m.resume(5, None, levels(0, 1, 1, 0))
    types = [x.type for x in journal.records(bytes(m.records()))]
    assert types == [R.J_BOOT, R.J_ALARM, R.J_VOID] and m.state == E.ST_IDLE


def test_paying_round_comes_back_paying_with_lamps_lit():
    r = Rig()
    r.to_result()
    r.enter(4, 4, 4)
    m = RoundMachine(r.cfg)
    m.feed(bytes(r.journal))
    m.resume(5, None, levels(0, 0, 0, 0))
    assert m.state == E.ST_PAYING and bytes(m.frame) == bytes(r.m.frame)
    assert m.boot == 1 and m.round == 1


def test_boot_count_and_round_ids_increase_across_reboots():
    r = Rig()
    r.round(1, 2, 3)
    data = bytes(r.journal)
    for boot in range(1, 4):
        m = RoundMachine(r.cfg)
        m.feed(data)
        m.resume(5, None, levels(1, 1, 1, 0))
        assert m.boot == boot
        data += bytes(m.records())
        r2 = Rig(r.cfg)
        r2.m = m
        r2.round(2, 3, 4)
        assert m.round == boot + 1
        data += bytes(r2.journal)
