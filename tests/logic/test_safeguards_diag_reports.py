# mprun-heap: controller
# The technician's diagnostics (device/diag.py) on the simulated board, the
# app stopped as at the REPL: recall, meters, journal and status report what the journal holds and
# what the inputs read.
# (Three files: one interpreter per file, at the board's heap.)
from diagkit import _close, _out, _table

import diag


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
    clock = [x for x in _out if x.startswith("clock ")]
    assert len(clock) == 1 and "2026-11-30" in clock[0], _out  # the board's RTC, read
    t2 = _table(play=False)
    diag.recall()
    assert _out == ["no rounds in the journal"]
    assert t2.folder != t.folder


def test_recall_shows_the_wall_time_of_each_round():
    _table()
    diag.recall()
    # appkit's RTC: 2026-11-30 12:00 UTC; the time in full, to the second.
    assert "(UTC)" in _out[0], _out
    words = _out[1].split()
    assert words[3] == "2026-11-30" and words[4].startswith("12:0") and len(words[4]) == 8, _out


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




def test_help_names_itself_and_every_command():
    _table(play=False)
    diag.help()
    assert _out[0] == "diag: Sic Bo table diagnostics", _out
    text = "\n".join(_out)
    for command in ("status()", "sensors()", "lamps(", "solenoid()", "bell()", "recall(",
                    "meters()", "journal(", "clear_fault()"):
        assert command in text, (command, _out)


def test_status_flags_a_violation_and_the_unfinished_round():
    from appkit import Table, board_dict

    t = Table(board=board_dict(bell_ms=50))
    t.to_result()
    t.enter(4, 5, 6)
    t.set("cover", 1)  # covered before payout: a violation, the round unfinished
    t.run(60)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.status()
    line = [x for x in _out if x.startswith("alarms ")][0]
    assert "VIOLATION" in line and "ALARM" in line and "round 1 unfinished" in line, line
    del _out[:]
    _table()  # a round played clean
    diag.status()
    line = [x for x in _out if x.startswith("alarms ")][0]
    assert line.split() == ["alarms", "none"], line
