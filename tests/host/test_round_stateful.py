"""Stateful property test of the round machine: random sequences of
events, including every event in every wrong state and power cuts at random
moments, checked after every step against the invariants of the regulated
round. The model below tracks only what the test sent, not the machine's view.
After every step, live play equals replay: a fresh machine fed the journal's
bytes is in the very state of the machine that wrote them."""

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from roundkit import Rig, levels, make_cfg, snapshot
from sicbo import events as E
from sicbo import journal, recall
from sicbo import records as R
from sicbo.meters import Meters
from sicbo.roundmachine import RoundMachine
from sicbo.settle import channel_on

EXAMPLES = int(os.environ.get("SICBO_STATEFUL_EXAMPLES", "60"))

LEVEL_EVENTS = {
    E.EV_COVER_ON: ("cover", 1), E.EV_COVER_OFF: ("cover", 0),
    E.EV_CLASP_L_ON: ("clasp_l", 1), E.EV_CLASP_L_OFF: ("clasp_l", 0),
    E.EV_CLASP_R_ON: ("clasp_r", 1), E.EV_CLASP_R_OFF: ("clasp_r", 0),
    E.EV_SUPERVISOR_ON: ("supervisor", 1), E.EV_SUPERVISOR_OFF: ("supervisor", 0),
}
KEYS = [E.EV_SHAKE, E.EV_BELL, E.EV_VOID, E.EV_PAYOUT, E.EV_CONFIRM, E.EV_TIMER]


class RoundProperties(RuleBasedStateMachine):
    @initialize(shaker=st.sampled_from(["solenoid", "electric", "manual"]),
                void_policy=st.sampled_from(["bets_stay", "players_choose"]),
                resume_policy=st.sampled_from(["void", "keep_open"]))
    def start(self, shaker, void_policy, resume_policy):
        self.cfg = make_cfg(shaker, void_policy, resume_policy)
        self.rig = Rig(self.cfg)
        self.levels = {"cover": 0, "clasp_l": 0, "clasp_r": 0, "supervisor": 0}
        self.live = recall.Recall(self.rig.m.table)
        self.rig.sink = self.live.feed
        self.boots = 0
        self._boot()

    def _boot(self):
        """Power on (again): replay the journal into a new machine."""
        m = RoundMachine(self.cfg)
        m.meters = Meters(m.table.channels, m.table)  # as the board boots: the machine counts
        data = bytes(self.rig.journal)
        # As the store gives it: pieces ending on record boundaries.
        cut = journal.records(data)[len(journal.records(data)) // 2].offset if data else 0
        m.feed(memoryview(data)[:cut])
        m.feed(memoryview(data)[cut:])
        assert m.damaged == 0
        self.rig.m = m
        self.rig.now += 5000
        lv = self.levels
        self.rig._drain(m.resume(self.rig.now, None, levels(lv["cover"], lv["clasp_l"],
                                                            lv["clasp_r"], lv["supervisor"]),
                                 self.boots & 3))
        self.boots += 1
        self.check_step()

    # ---- events ----------------------------------------------------------
    @rule(ev=st.sampled_from(sorted(LEVEL_EVENTS)))
    def level(self, ev):
        name, value = LEVEL_EVENTS[ev]
        self.levels[name] = value
        self.rig.ev(ev)
        self.check_step()

    @rule(ev=st.sampled_from(KEYS), dt=st.sampled_from([10, 100, 5000, 60000]))
    def key(self, ev, dt):
        self.rig.ev(ev, 0, dt)
        self.check_step()

    @rule(face=st.integers(-1, 8))
    def face(self, face):
        self.rig.ev(E.EV_FACE, face & 0xFF)
        self.check_step()

    @rule(sensor=st.sampled_from([E.S_COVER, E.S_CLASP_L, E.S_CLASP_R, E.S_SHAKE, E.S_KEYS]))
    def fault(self, sensor):
        self.rig.ev(E.EV_FAULT, sensor)
        self.check_step()

    @rule(d=st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(0, 7)),
          offset=st.sampled_from([0, 0, 0, -1, 1]))
    def reader(self, d, offset):
        self.rig.reader(d[0], d[1], d[2], rid=max(0, self.rig.m.round + offset))
        self.check_step()

    @rule()
    def power_cut(self):
        self._boot()

    # ---- what every step must keep ---------------------------------------
    def check_step(self):
        cmds = self.rig.last
        for c in cmds:
            if c[0] in (E.C_SOLENOID, E.C_SHAKER):
                # The solenoid never fires with the cover off or a clasp open.
                lv = self.levels
                assert lv["cover"] and lv["clasp_l"] and lv["clasp_r"], (c, lv)
        m = self.rig.m
        if m.state != E.ST_PAYING and m.state != E.ST_HOLD:
            # No winning area is lit unless a result is being paid.
            for c, name in enumerate(self.cfg.lamp_order):
                if name not in ("PLACE_BETS", "ALARM", "VOID", "PAYING"):
                    assert not channel_on(m.frame, c), (name, m.state)

    @invariant()
    def journal_rules(self):
        if not hasattr(self, "rig"):
            return
        recs = journal.records(bytes(self.rig.journal))
        seqs = [r.seq for r in recs]
        assert seqs == list(range(1, len(recs) + 1))  # nothing lost, nothing doubled
        last_round = 0
        rounds = {}
        for r in recs:
            assert r.round >= last_round  # round ids only increase
            if r.type == R.J_ROUND:
                assert r.round > last_round
                rounds[r.round] = []
            last_round = r.round
            if r.round in rounds:
                rounds[r.round].append(r)
        for rid, rs in rounds.items():
            types = [r.type for r in rs]
            # At most one effective result: one J_RESULT, then only corrections.
            assert types.count(R.J_RESULT) <= 1, (rid, types)
            if R.J_RESULT in types:
                # Never a result before the bell.
                assert R.J_BELL in types[:types.index(R.J_RESULT)], (rid, types)
            if R.J_VOID in types:
                # A void round pays nothing.
                assert R.J_RESULT not in types and R.J_PAYOUT not in types, (rid, types)
                assert R.J_CORRECTION not in types
            for r in rs:
                if r.type == R.J_CORRECTION:
                    assert r.dice(0) != r.dice(3)

    @invariant()
    def replay_rebuilds_state_and_meters(self):
        if not hasattr(self, "rig"):
            return
        data = bytes(self.rig.journal)
        m = self.rig.m
        rp = RoundMachine(self.cfg, table=m.table)
        rp.meters = Meters(m.table.channels, m.table)
        rp.feed(data)
        assert snapshot(rp) == snapshot(m)  # live play == replay
        assert rp.damaged == 0 and rp.pending == 0
        again = recall.Recall(m.table)
        again.feed(data)
        assert again.meters.as_dict() == self.live.meters.as_dict()
        # The board's meters (counted by its machine, live and across boots)
        # are the host's, and a replay's.
        assert m.meters.as_dict(m.table) == again.meters.as_dict(m.table)
        assert rp.meters.as_dict(m.table) == again.meters.as_dict(m.table)
        assert [(r.round, r.status, r.dice) for r in again.last()] == \
            [(r.round, r.status, r.dice) for r in self.live.last()]


RoundProperties.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_round_properties = RoundProperties.TestCase
