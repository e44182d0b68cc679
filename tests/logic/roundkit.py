# Helpers of the round, journal, recall and recovery tests (portable: CPython
# and the MicroPython unix port). Not a test module itself.

from folderkit import process_tag, rmdir, tmpdir  # noqa: F401  (tests import them from here too)

from sicbo import areas, journal, kinds
from sicbo import events as E
from sicbo import signals as S
from sicbo.roundmachine import RoundMachine
from sicbo.settings import TableConfig
from sicbo.settle import channel_on

AREAS = ["SMALL", "BIG", "ODD", "EVEN", "SINGLE_1", "SINGLE_2", "SINGLE_3", "SINGLE_4",
         "SINGLE_5", "SINGLE_6", "ANY_TRIPLE", "TOTAL_9", "TOTAL_10", "DOUBLE_1"]


class Cfg(TableConfig):
    """What config.parse_table would return for a small 2004 table (built by
    hand: the config module's size is not needed on the 110 KiB test heap)."""

    def __init__(self, shaker, void_policy, resume_policy):
        TableConfig.__init__(self)
        self.name = "test table"
        self.edition = 2004
        self.shaker = shaker
        self.offered = tuple(sorted(areas.index_of(c) for c in AREAS))
        odds = bytearray(kinds.AREA_COUNT_2004)
        for i in self.offered:
            odds[i] = areas.base_odds(i)
        self.odds = bytes(odds)
        self.triple_kills = (areas.index_of("SMALL"), areas.index_of("BIG"))
        self.lamp_order = tuple(["PLACE_BETS", "ALARM", "VOID", "PAYING"] + AREAS)
        self.void_policy = void_policy
        self.resume_policy = resume_policy
        self.approval = {}


def levels(cover=0, clasp_l=0, clasp_r=0, supervisor=0, shake=0):
    """The level signals as RoundMachine.resume takes them (sicbo.signals order)."""
    lv = bytearray(S.LEVELS)
    lv[S.COVER] = cover
    lv[S.CLASP_LEFT] = clasp_l
    lv[S.CLASP_RIGHT] = clasp_r
    lv[S.SHAKE] = shake
    lv[S.SUPERVISOR] = supervisor
    return lv


def sensed(m):
    """(cover, clasp left, clasp right, supervisor) as the machine knows them."""
    lv = m.levels
    return (lv[S.COVER], lv[S.CLASP_LEFT], lv[S.CLASP_RIGHT], lv[S.SUPERVISOR])


def make_cfg(shaker="solenoid", void_policy="bets_stay", resume_policy="void"):
    return Cfg(shaker, void_policy, resume_policy)


class Rig:
    """A round machine driven like the controller drives it: records written to an
    in-memory journal before the commands are collected."""

    def __init__(self, cfg=None, wall=None, machine=None, **kw):
        self.cfg = cfg if cfg is not None else make_cfg()
        self.m = machine if machine is not None else RoundMachine(self.cfg, **kw)
        self.journal = bytearray()
        self.now = 1000
        self.wall = wall
        self.last = []  # commands of the last event
        self.recs = []  # records of the last event
        self.raw = b""  # their bytes
        self.keep = True  # keep every record in self.journal
        self.sink = None  # or a callable given every event's record bytes

    def _drain(self, n):
        self.recs = []
        self.raw = b""
        if self.m.rec_len:
            data = bytes(self.m.records())
            if self.keep:
                self.journal.extend(data)
            self.raw = data
            self.recs = journal.records(data)
            if self.sink is not None:
                self.sink(data)
        self.last = self.m.commands()
        assert len(self.last) == n
        return self.last

    def ev(self, code, arg=0, dt=10):
        self.now += dt
        return self._drain(self.m.handle(code, arg, self.now, self.wall))

    def reader(self, d1, d2, d3, rid=None):
        self.now += 10
        if rid is None:
            rid = self.m.round
        return self._drain(self.m.reader_dice(rid, d1, d2, d3, self.now, self.wall))

    def types(self):
        return [r.type for r in self.recs]

    def shown(self):
        return [c[1] for c in self.last if c[0] == E.C_SHOW]

    def has(self, code):
        for c in self.last:
            if c[0] == code:
                return c
        return None

    def lamp(self, name):
        if name in self.m.table.status_channel:
            ch = self.m.table.status_channel[name]
        else:
            ch = self.cfg.lamp_order.index(name)
        return channel_on(self.m.frame, ch)

    # ---- whole steps -------------------------------------------------------
    def arm(self):
        for code in (E.EV_COVER_ON, E.EV_CLASP_L_ON, E.EV_CLASP_R_ON):
            self.ev(code)

    def shake(self):
        self.ev(E.EV_SHAKE)
        if self.cfg.shaker == "manual":
            self.ev(E.EV_SHAKE)
            self.ev(E.EV_SHAKE)
        else:
            self.ev(E.EV_TIMER, 0, 60000)

    def to_open(self):
        self.arm()
        self.shake()
        assert self.m.state == E.ST_OPEN

    def to_result(self):
        self.to_open()
        self.ev(E.EV_BELL)
        self.ev(E.EV_CLASP_L_OFF)
        self.ev(E.EV_CLASP_R_OFF)
        self.ev(E.EV_COVER_OFF)
        assert self.m.state == E.ST_RESULT

    def enter(self, d1, d2, d3):
        self.ev(E.EV_FACE, d1)
        self.ev(E.EV_FACE, d2)
        self.ev(E.EV_FACE, d3)
        return self.ev(E.EV_CONFIRM)

    def round(self, d1, d2, d3):
        self.to_result()
        self.enter(d1, d2, d3)
        assert self.m.state == E.ST_PAYING
        self.ev(E.EV_PAYOUT)
        assert self.m.state == E.ST_IDLE

    def void_round(self, reason=1):
        self.to_result()
        self.ev(E.EV_VOID)
        self.ev(E.EV_FACE, reason)
        self.ev(E.EV_CONFIRM)
        assert self.m.state == E.ST_IDLE


def replay_of(data, cfg=None, table=None):
    """A fresh machine (as after a power-on) fed the journal's bytes."""
    m = RoundMachine(cfg if cfg is not None else make_cfg(), table=table)
    m.feed(data)
    return m


def booted(r, cover=1, clasp_l=1, clasp_r=1, supervisor=0, cause=0, cfg=None):
    """A Rig on a new machine (a power-on) that replayed r's journal and
    resumed with these sensor levels and reset cause; its journal goes on
    from r's."""
    m = replay_of(bytes(r.journal), cfg if cfg is not None else r.cfg, r.m.table)
    b = Rig(m.cfg, machine=m)
    b.journal = bytearray(r.journal)
    b.now = r.now + 1000
    b._drain(m.resume(b.now, 780000000, levels(cover, clasp_l, clasp_r, supervisor), cause))
    return b


def snapshot(m):
    """Everything the journal decides about the round (not the dealer's
    unfinished key entry, not the sensor levels)."""
    return (m.state, m.round, m.seq, m.boot, m.open_seq, bytes(m.dice), m.has_result,
            bytes(m.reader), m.has_reader, bytes(m.hold), m.alarm, m.violation,
            m.void_lit, m.faults, bytes(m.config_id), m.config_wall)


def forge(rtype, seq, rid, payload=bytes(8), boot=1, wall=None):
    """A CRC-valid record saying whatever the test wants (its length is the
    payload's plus 28)."""
    return journal.encode(rtype, seq, rid, boot, 0, wall, bytes(payload))
