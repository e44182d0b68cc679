# mprun-heap: controller
# diag.recall's lines as the technician reads them: a round played while the
# RTC was lost is dated by its boot, and a round with more winning areas than
# fit in 80 columns wraps them under the first one, each area once.
from appkit import Table, board_dict, reboot
from diagkit import _out

import diag


def test_rounds_without_wall_time_show_their_boot_and_long_lines_wrap():
    t = Table(board=board_dict(bell_ms=50))
    t.play(1, 2, 3)
    t.close()
    # Power lost with the RTC: the journal still shows the approval in force.
    t = Table(folder=t.folder, board=board_dict(bell_ms=50), rtc=None)
    assert any("RTC not set" in line for line in t.log), t.log
    t.play(1, 1, 2)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.recall(5)
    lines = "\n".join(_out).split("\n")  # a round is one print, its lines wrapped
    assert len(lines) == 5, lines
    head = lines[1][:44]
    assert lines[1].split()[:5] == ["2", "paid", "1-1-2", "boot", "2"], lines
    assert lines[3].split()[:4] == ["1", "paid", "1-2-3", "2026-11-30"], lines
    # Each continuation starts under the first area and holds the rest.
    for first, more in ((1, 2), (3, 4)):
        assert len(lines[first]) <= 79 and lines[more][:len(head)] == " " * len(head), lines
        assert lines[more].strip() and len(lines[more]) <= 79, lines
    areas = lines[1][len(head):].split() + lines[2].split()
    assert areas == ["SMALL", "SINGLE_1", "SINGLE_2", "EVEN", "PAIR_1_2", "DOUBLE_1"], lines
    areas = lines[3][len(head):].split() + lines[4].split()
    assert len(areas) == len(set(areas)) and "PAIR_1_2" in areas, lines


def test_a_round_cut_by_a_reset_says_which_reset_and_a_round_before_it_does_not():
    t = Table(board=board_dict(bell_ms=50))
    t.play(1, 2, 3)
    t.open_round()  # round 2, betting open: then machine.reset()
    t = reboot(t, hard_reset=True, board=board_dict(bell_ms=50))
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.recall(5)
    # One print a round (wrapped within 80 columns): its words, joined.
    said = {}
    for text in _out:
        words = text.split()
        if words and words[0].isdigit():
            said[int(words[0])] = " ".join(words)
    assert said[2].endswith("void: power cut (restarted: hard reset)"), _out
    assert "restarted" not in said[1], _out
