# mprun-heap: controller
# The technician's diagnostics (device/diag.py) on the simulated board, the
# app stopped as at the REPL: the solenoid, bell and lamp tests are refused
# unless the journal shows the table idle with the cover on and both clasps
# fastened, each test that runs is journaled (J_DIAG) and drives only its
# output; recall, meters and journal report what the journal holds.
import machine
from appkit import BELL, LATCH, SOLENOID, Table, board_dict

import diag
from sicbo import events as E
from sicbo import journal

_out = []


def _print(*args):
    _out.append(" ".join([str(a) for a in args]))


diag.print = _print  # diag's output, kept for the asserts


class _Time:
    """diag's clock: the real one, but a negative sleep returns at once as
    MicroPython's does (host_tools.mpshim's sleep_ms refuses it)."""

    def __init__(self, t):
        self.ticks_ms = t.ticks_ms
        self.ticks_diff = t.ticks_diff
        self.ticks_add = t.ticks_add
        self._sleep = t.sleep_ms

    def sleep_ms(self, ms):
        if ms > 0:
            self._sleep(ms)


diag.time = _Time(diag.time)


class _Gc:
    """CPython's gc has no mem_free/mem_alloc (status() prints the heap)."""

    def __init__(self, gc):
        self.collect = gc.collect

    def mem_free(self):
        return 0

    def mem_alloc(self):
        return 0


if not hasattr(diag.gc, "mem_free"):
    diag.gc = _Gc(diag.gc)


def _pulses(pin):
    return len([1 for _t, _p, v in machine.sim_edges(pin) if v])


def _table(play=True):
    t = Table(board=board_dict(bell_ms=50))
    if play:
        t.play(1, 2, 3)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    return t


def _diag_records(t):
    from journal_store import JournalStore

    st = JournalStore(t.folder)
    out = []
    for data in st.read_all():
        out.extend([(r.type, r.p(0)) for r in journal.records(data) if r.type == E.J_DIAG])
    st.close()
    return out


def _close(t, cover=1, left=1, right=1):
    t.set("cover", cover)
    t.set("clasp_left", left)
    t.set("clasp_right", right)


def test_moving_parts_refused_unless_idle_cover_on_and_clasps_fastened():
    t = _table()
    for cover, left, right in ((0, 1, 1), (1, 0, 1), (1, 1, 0), (0, 0, 0)):
        _close(t, cover, left, right)
        machine.sim_clear_edges()
        for test in (diag.solenoid, diag.bell, diag.lamps):
            del _out[:]
            assert test() is False, (test, cover, left, right)
            assert "refused" in _out[-1] and "clasps" in _out[-1], _out
        assert _pulses(SOLENOID) == 0 and _pulses(BELL) == 0
    assert _diag_records(t) == []


def test_moving_parts_refused_while_a_round_is_open():
    t = Table()
    t.open_round()
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    _close(t)
    machine.sim_clear_edges()
    del _out[:]
    assert diag.solenoid() is False and "idle" in _out[-1], _out
    assert _pulses(SOLENOID) == 0
    assert _diag_records(t) == []


def test_each_test_runs_once_and_is_journaled():
    t = _table()
    _close(t)
    machine.sim_clear_edges()
    assert diag.solenoid() is True
    assert _pulses(SOLENOID) == 1 and machine.sim_output(SOLENOID) == 0
    assert "one pulse of 60 ms (hard limit 200 ms); forced offs 0" in _out[-1], _out
    assert diag.bell() is True
    assert _pulses(BELL) == 1 and machine.sim_output(BELL) == 0
    assert _out[-1] == "bell: rang 50 ms"
    assert diag.lamps(0) is True
    assert machine.sim_frame(LATCH) is not None
    assert _diag_records(t) == [(E.J_DIAG, E.D_SOLENOID), (E.J_DIAG, E.D_BELL),
                                (E.J_DIAG, E.D_LAMPS)]
    assert "channel   0  PLACE_BETS" in _out, _out[:3]
    assert _out[-1].startswith("lamps: ")


def test_recall_meters_and_journal_say_what_was_played():
    t = _table()
    diag.recall(5)
    assert len(_out) == 2 and _out[1].split()[:3] == ["1", "paid", "1-2-3"], _out
    del _out[:]
    diag.meters()
    assert "rounds       1" in _out and "paid         1" in _out, _out
    del _out[:]
    diag.journal(3)
    assert len(_out) == 3 and "PAYOUT" in _out[-1].upper(), _out
    del _out[:]
    diag.status()
    lines = [x for x in _out if x.startswith("table ") or x.startswith("state ")]
    assert len(lines) == 2 and "idle" in lines[1] and "round 1" in lines[1], _out
    t2 = _table(play=False)
    diag.recall()
    assert _out == ["no rounds in the journal"]
    assert t2.folder != t.folder


def test_recall_shows_the_wall_time_of_each_round():
    _table()
    diag.recall()
    # appkit's RTC: 2026-11-30 12:00 UTC.
    assert _out[1].split()[3].startswith("11-30T12:0"), _out


def test_sensors_and_status_read_the_inputs_as_they_are_now():
    t = _table()
    _close(t, 0, 0, 0)
    diag.sensors()
    assert not [x for x in _out if "differ" in x], _out
    rows = dict((x.split()[0], x.split()) for x in _out[1:])
    assert rows["cover"][3] == "0" and rows["key_confirm"][3] == "0", rows["cover"]
    _close(t)
    del _out[:]
    diag.status()  # the adapters exist already: status must poll them again
    line = [x for x in _out if x.startswith("sensors ")][0]
    assert "cover on" in line and "clasps fastened/fastened" in line, line
    del _out[:]
    diag.sensors()
    rows = dict((x.split()[0], x.split()) for x in _out[1:])
    assert rows["cover"][3] == "1" and not [x for x in _out if "differ" in x], _out


def test_clear_fault_and_dump_journal():
    import shell

    t = _table()
    diag.clear_fault()
    assert _out[-1].startswith("failed boots cleared") and shell.failed_boots()[0] == 0
    del _out[:]
    diag.dump_journal()
    segs = [x for x in _out if x.startswith("SICBO-SEG ")]
    assert segs and _out[-1].startswith("SICBO-SEGS [") and "j00000001.log" in _out[-1]
    assert t.folder


def test_dump_journal_without_a_journal_folder():
    t = _table(play=False)
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder + "/none")
    del _out[:]
    diag.dump_journal()
    assert _out == ["SICBO-SEGS []"], _out


def test_diag_shows_voids_alarms_and_wins():
    t = Table(board=board_dict(bell_ms=50))
    t.play(1, 2, 3)
    t.to_result()
    t.press("key_void")
    t.press("key_face_1")
    t.press("key_confirm")  # void: stacked
    t.close_dome()
    t.press("shake")
    t.set("cover", 0)  # tamper: alarm
    t.run(60)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.recall()
    assert [x for x in _out if "void: stacked" in x], _out
    assert [x for x in _out if "void: tamper" in x], _out
    del _out[:]
    diag.status()
    assert [x for x in _out if x.startswith("alarms ") and "ALARM" in x], _out
    del _out[:]
    diag.meters()
    i = _out.index("wins per area (paid rounds):")
    cells = " ".join(_out[i + 1:]).split()
    assert "SMALL" in cells and cells[cells.index("SMALL") + 1] == "1", _out
