# The end of start-up (Controller.resume) with stand-ins for the switches,
# the round machine and the store: the levels the round machine resumes with
# come from the right inputs, an input already faulted at boot raises its
# alarm under its own sensor id, and the journal of a board in a boot loop is
# rotated once it holds too many files.
from controller import Controller

from sicbo import events as E
from sicbo import signals as S


class _Switches:
    def __init__(self, levels, faulted=()):
        self.levels = levels
        self.bad = faulted
        self.updated = []
        self.queued = 0
        self.popped = 0

    def update(self, now):
        self.updated.append(now)
        self.queued = 2  # the edges of the levels as first read

    def pop(self, ev):
        if self.queued:
            self.queued -= 1
            self.popped += 1
            return True
        return False

    def level(self, i):
        return self.levels[i]

    def faulted(self, i):
        return i in self.bad


class _Machine:
    """Records what the controller gives it; writes no record, no command."""

    def __init__(self):
        self.resumed = None
        self.configs = []
        self.handled = []
        self.open_seq = 77
        self.rec_len = 0
        self.cmds = []
        self.levels = bytearray(S.LEVELS)

    def resume(self, now, wall, levels, cause):
        self.resumed = (now, wall) + tuple(levels) + (cause,)
        return 0

    def handle(self, ev, arg, now, wall):
        self.handled.append((ev, arg))
        return 0

    def set_config(self, now, wall, config_id):
        self.configs.append(bytes(config_id))
        return 0


class _Store:
    def __init__(self, files, max_files):
        self.n = files
        self.max_files = max_files
        self.rotated = []

    def files(self):
        return self.n

    def rotate(self, keep_seq=0):
        self.rotated.append(keep_seq)


class _Wall:
    def seconds(self, now):
        return 1234


class _Hw:
    pass


def _Ctl(levels, faulted=(), files=3, max_files=16):
    hw = _Hw()
    hw.switches = _Switches(levels, faulted)
    return Controller(hw, _Store(files, max_files), _Wall(), None, None, _Machine(), None)


def _levels(**named):
    lv = [0] * S.COUNT
    for name in named:
        lv[S.INPUT_SIGNALS.index(name)] = named[name]
    return lv


def test_resume_reads_each_level_from_its_own_input():
    for name in ("cover", "clasp_left", "clasp_right", "supervisor"):
        ctl = _Ctl(_levels(**{name: 1}))
        ctl.resume(500, 7, b"ABCDEF")
        got = ctl.m.resumed
        assert got[:2] == (500, 1234) and got[-1] == 7
        want = [1 if n == name else 0 for n in S.INPUT_SIGNALS[:S.LEVELS]]
        assert list(got[2:-1]) == want, (name, got)
        assert ctl.m.handled == []
        assert ctl.m.configs == [b"ABCDEF"]
    ctl = _Ctl(_levels(shake=1, key_confirm=1))
    ctl.resume(500)
    # The shake sensor is read as the others; no key is a level.
    assert ctl.m.resumed[2:-1] == (0, 0, 0, 1, 0) and ctl.m.configs == []
    assert ctl.m.resumed[-1] == 0  # no cause given: 0


def test_the_levels_are_read_fresh_and_their_edges_dropped():
    ctl = _Ctl(_levels(cover=1))
    ctl.resume(500)
    sw = ctl.hw.switches
    assert sw.updated == [500] and sw.popped == 2 and sw.queued == 0
    assert ctl.m.handled == []


def test_an_input_faulted_at_boot_raises_its_own_sensor_alarm():
    sensor = {S.COVER: E.S_COVER, S.CLASP_LEFT: E.S_CLASP_L, S.CLASP_RIGHT: E.S_CLASP_R,
              S.SHAKE: E.S_SHAKE, S.SUPERVISOR: E.S_SUPERVISOR}
    for i in range(S.COUNT):
        ctl = _Ctl(_levels(), faulted=(i,))
        ctl.resume(500)
        assert ctl.m.handled == [(E.EV_FAULT, sensor.get(i, E.S_KEYS))], (i, ctl.m.handled)
    # Every key of a broken chain: one alarm for the keys, not one per key.
    ctl = _Ctl(_levels(), faulted=tuple(range(S.KEY_BELL, S.COUNT)) + (S.CLASP_RIGHT,))
    ctl.resume(500)
    assert sorted(ctl.m.handled) == sorted([(E.EV_FAULT, E.S_CLASP_R), (E.EV_FAULT, E.S_KEYS)])


def test_a_boot_loop_rotates_the_journal_past_its_file_cap():
    ctl = _Ctl(_levels(), files=16, max_files=16)
    ctl.resume(500)
    assert ctl.store.rotated == []  # at the cap: a boot deletes nothing
    ctl = _Ctl(_levels(), files=17, max_files=16)
    ctl.resume(500)
    assert ctl.store.rotated == [77]  # keeping the unfinished round
