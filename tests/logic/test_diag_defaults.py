# mprun-heap: controller
# diag's reports at their defaults and when a part is missing: journal()
# with no argument lists the last 20 records, as diag.help() says; meters()
# on a board whose table file is refused still gives the counts, and says
# why the wins per area are missing rather than leaving them out silently.
from appkit import Table, board_dict, table_dict, write_files
from diagkit import _out, _table

import diag


def _journal_lines(n=None):
    del _out[:]
    if n is None:
        diag.journal()
    else:
        diag.journal(n)
    return list(_out)


def test_journal_with_no_argument_lists_the_last_twenty_records():
    t = Table(board=board_dict(bell_ms=50))
    for dice in ((1, 2, 3), (2, 2, 5), (6, 6, 6), (1, 1, 4), (3, 4, 5)):
        t.play(*dice)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    every = _journal_lines(1000)
    assert len(every) > 21 and "journal is empty" not in every, every  # more than the default
    lines = _journal_lines()
    assert len(lines) == 20, (len(lines), lines)
    assert lines == every[-20:], lines


def test_meters_with_the_table_file_refused_say_why_wins_per_area_are_missing():
    t = _table()  # one round paid: wins the table would name
    bad = table_dict()
    bad["edition"] = 1999  # not an edition the firmware knows: the pair is refused
    write_files(t.folder, None, bad)
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.meters()
    assert "rounds       1" in _out and "paid         1" in _out, _out  # the counts read on
    told = [x for x in _out if x.endswith(": wins per area not shown)")]
    assert len(told) == 1, _out
    assert told[0].startswith("(configuration refused: edition:"), told  # the refusal, named
    assert not [x for x in _out if x.startswith("wins")], _out
