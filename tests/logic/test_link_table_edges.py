# The table's side of the floor link (device/link/table.py) on a real
# journal and round machine, the link itself stood in for by what the
# controller uses of it (its cursor, one pass): the floor's saved cursor
# read at start-up, the cursor journaled when the link comes up, the
# backlog's policy while the link cannot be made, and the room an
# acknowledgement makes in a full journal. Portable.
from link import table as T
from link.source import OutboxStore

from roundkit import make_cfg, rmdir, tmpdir
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters
from sicbo.roundmachine import RoundMachine

REC = R.REC_LEN
SEG = 12 * REC  # a meters checkpoint (198 bytes) and some records a segment
BUDGET = 5 * SEG


class _Lamps:
    def write(self, frame):
        pass


class _Hw:
    lamps = _Lamps()
    solenoid = motor = bell = uart = switches = watchdog = None


class _Wall:
    def seconds(self, now):
        return 800000000


class _Floor:
    """The link as the table uses it: the floor's cursor, one pass."""

    def __init__(self, cursor=0):
        self.cursor = cursor
        self.skipped = 0
        self.code = b""
        self.passes = 0

    def tick(self, now):
        self.passes += 1
        return 20

    def journaled(self, said=-1):
        pass


def _table(name, keep_when_full=True):
    d = tmpdir("lt_" + name)
    st = OutboxStore(d, segment_bytes=SEG, max_segments=2, backlog_bytes=BUDGET,
                     keep_when_full=keep_when_full)
    st.boot(lambda piece: None)
    m = RoundMachine(make_cfg())
    m.meters = Meters(m.table.channels, m.table)  # a checkpoint heads each new segment
    ctl = T.LinkedController(_Hw(), st, _Wall(), None, None, m, None, None)
    return d, ctl


def _plan(d, retry_at=0):
    # link.plan.made's list: retry at, told, floor, tls, password, wifi,
    # code, the cursor's file.
    floor = {"site": "S1", "table": "T01", "broker": "127.0.0.1", "port": 1,
             "server_name": None, "keepalive_s": 30}
    return [retry_at, 0, floor, None, b"pw", None, "code", d + "/acked"]


def _fill(ctl):
    """Records until the journal is past its backlog (the link was down)."""
    n = 0
    while not ctl.store.full:
        ctl.link_down(3, n)  # J_LINK down records, as an outage journals them
        n += 1
        assert n < 200
    return ctl.store.last


def _records(st):
    out = []
    for data in st.read_all():
        out.extend(journal.records(data))
    return out


def _alarms(st):
    return [r for r in _records(st) if r.type == R.J_ALARM and r.p(R.P_CODE) == E.R_BACKLOG_FULL]


def _close(d, ctl):
    ctl.store.close()
    rmdir(d)


def test_a_table_whose_floor_never_acknowledged_starts_with_nothing_acknowledged():
    d, ctl = _table("no_cursor")
    for n in range(5):
        ctl.link_down(3, n)
    T.attach(ctl, _plan(d))  # no cursor file: a first boot with a link
    assert ctl.store.acked == 0 and not ctl.store.full
    with open(d + "/acked", "w") as f:
        f.write("garbage")
    T.attach(ctl, _plan(d))
    assert ctl.store.acked == 0
    with open(d + "/acked", "w") as f:
        f.write("4\n")
    T.attach(ctl, _plan(d))
    assert ctl.store.acked == 4
    _close(d, ctl)


def test_link_up_journals_the_cursor_the_floor_had():
    d, ctl = _table("up")
    ctl.link = _Floor(1000)  # 0x3e8: every byte of it counts
    ctl.link_up()
    rec = _records(ctl.store)[-1]
    # Byte for byte: test_logtext reads such a payload as "up, the floor had
    # N" (logtext is not loaded here: beside the round machine and the link
    # its names leave a board no room, sicbo test --on).
    assert rec.type == R.J_LINK and rec.payload == bytes((R.LINK_UP, 0, 0, 0, 0xE8, 0x03, 0, 0))
    _close(d, ctl)


def test_while_the_link_cannot_be_made_a_full_backlog_stops_new_rounds():
    d, ctl = _table("not_made")
    _fill(ctl)
    now = 5000
    T.attach(ctl, _plan(d, retry_at=now + 60000))  # out of memory earlier: tried again later
    assert ctl.store.full
    assert ctl.link_pass(now) == 1000
    assert ctl.link is None and ctl.m.backlog == E.BACKLOG_STOP
    assert [r.p(R.P_DETAIL) for r in _alarms(ctl.store)] == [E.BACKLOG_STOP]
    for ev in (E.EV_COVER_ON, E.EV_CLASP_L_ON, E.EV_CLASP_R_ON, E.EV_SHAKE):
        ctl.handle(ev, 0, now)
    rec = _records(ctl.store)[-1]
    assert rec.type == R.J_REFUSED and rec.p(0) == E.R_BACKLOG_FULL
    assert ctl.m.state == E.ST_IDLE
    _close(d, ctl)


def test_an_acknowledgement_makes_room_in_a_full_journal_at_once():
    d, ctl = _table("acked")
    last = _fill(ctl)
    oldest = ctl.store.oldest()
    T.attach(ctl, _plan(d))
    ctl._plan = None
    ctl.link = link = _Floor(0)
    ctl.link_pass(100)
    assert ctl.m.backlog == E.BACKLOG_STOP and link.passes == 1
    assert ctl.store.oldest() == oldest  # nothing the floor lacks is deleted
    # The floor stores most of the backlog: what it has goes, the rest stays,
    # and the table takes new rounds again without waiting for a record.
    link.cursor = last - 8
    ctl.link_pass(120)
    st = ctl.store
    assert st.acked == last - 8 and not st.full and ctl.m.backlog == E.BACKLOG_ROOM
    assert oldest < st.oldest() <= last - 7 and st.total_bytes() <= BUDGET
    seqs = [r.seq for r in _records(st)]
    assert seqs == list(range(seqs[0], seqs[-1] + 1)) and seqs[-1] > last  # a checkpoint heads it
    assert last - 7 in seqs
    _close(d, ctl)


def test_the_status_names_the_table_as_the_journal_has_it():
    import json

    d, ctl = _table("status")
    buf = memoryview(bytearray(300))
    assert ctl.floor_status(buf) == 0  # no link: nothing to say
    ctl.m.config_id[:] = bytes(range(0xA0, 0xA0 + R.CONFIG_ID_LEN))
    for n in range(3):
        ctl.link_down(3, n)
    ctl.link = link = _Floor(2)
    link.code = b"0123456789abcdef"
    n = ctl.floor_status(buf)
    got = json.loads(bytes(buf[:n]))
    want = {"online": True, "code": "0123456789abcdef",
            "config": "".join("%02x" % b for b in range(0xA0, 0xA0 + R.CONFIG_ID_LEN)),
            "round": ctl.m.round, "state": "idle", "boot": ctl.m.boot, "seq": ctl.store.last,
            "oldest": ctl.store.oldest(), "acked": 2}
    assert got == want, got
    link.skipped = 1000000007  # records past the cursor the floor will never get
    got = json.loads(bytes(buf[:ctl.floor_status(buf)]))
    assert got["missing"] == [[3, 1000000006]] and got["acked"] == 2, got
    _close(d, ctl)
