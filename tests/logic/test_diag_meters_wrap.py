# mprun-heap: controller
# diag.meters()' wins per area as a technician reads them off an 80-column
# terminal: cells are wrapped into rows of at most 76 columns, so a row that
# comes to exactly 76 is one row, not the last cell pushed onto the next.
# The counts come as a table of long service has them: from the meters
# checkpoint that heads a rotated journal segment.
from appkit import Table
from diagkit import _out

import diag

# One round of 1-2-3 paid wins these six areas once each; three of them are
# given 9-digit counts (a cell "%-14s %5d" is then 24 columns: three cells
# and their two separators make 76).
_BIG = (("SMALL", 300000000), ("EVEN", 200000000), ("SINGLE_1", 100000000))
_ONCE = ("SINGLE_2", "SINGLE_3", "PAIR_1_2")


def _long_service_table():
    t = Table()
    t.play(1, 2, 3)
    wins = t.m.meters.wins
    for code, n in _BIG:
        wins[t.cfg.lamp_order.index(code)] = n
    t.store.rotate()  # the new segment is headed by the meters checkpoint
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    return t


def test_a_row_of_exactly_76_columns_of_wins_stays_one_row():
    _long_service_table()
    diag.meters()
    i = _out.index("wins per area (paid rounds):")
    rows = _out[i + 1:]
    first = "  " + "  ".join(["%-14s %5d" % (code, n) for code, n in _BIG])
    assert len(first) == 2 + 76, first
    # Printed with its two trailing separator blanks: 80 columns, the terminal's width.
    assert rows[0].rstrip() == first and len(rows[0]) <= 80, _out
    assert len(rows) == 2, _out
    cells = rows[1].split()
    assert sorted(cells[0::2]) == sorted(_ONCE) and cells[1::2] == ["1", "1", "1"], _out
