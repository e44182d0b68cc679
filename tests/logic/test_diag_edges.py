# mprun-heap: controller
# diag.status() as a technician reads it at the edges: a refused table file
# named in its line, a file mended between two commands read anew, the
# failed boots and the strapping pins counted in words.
import json

from appkit import Table, board_dict, table_dict
from diagkit import _out

import diag


def _idle_table():
    t = Table()
    t.close()
    return t


def _status(t):
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder,
               t.folder + "/fault.txt")
    del _out[:]
    diag.status()
    return list(_out)


def _line(out, head):
    lines = [x for x in out if x.startswith(head + " ")]
    assert len(lines) == 1, (head, out)
    return lines[0]


def _write(path, obj):
    with open(path, "w") as g:
        g.write(json.dumps(obj))


_REFUSAL = "configuration refused: edition: must be 2003 or 2004, got 1999"


def test_status_names_the_refused_table_file_on_its_table_line():
    t = _idle_table()
    _write(t.folder + "/table.json", table_dict(edition=1999))
    out = _status(t)
    assert _line(out, "table") == "table     files refused: " + _REFUSAL, out
    assert _line(out, "running") == (
        "running   no: %s; fix the file and sicbo deploy again" % _REFUSAL), out
    assert not [x for x in out if "failed" in x], out  # said, not a command's failure


def test_a_table_file_mended_after_a_command_is_read_anew_by_the_next():
    t = _idle_table()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder,
               t.folder + "/fault.txt")
    _write(t.folder + "/table.json", table_dict(edition=1999))
    del _out[:]
    diag.status()
    assert _line(_out, "table") == "table     files refused: " + _REFUSAL, _out
    _write(t.folder + "/table.json", table_dict(name="mended table"))
    del _out[:]
    diag.status()  # the same diag.setup(): nothing of the first command kept
    assert _line(_out, "table") == (
        "table     mended table (edition 2004, approval T, effective 2026-11-05)"), _out
    assert _line(_out, "running") == (
        "running   yes: the app resumes round 0 at machine.reset()"), _out


def test_status_says_the_table_runs_after_failed_boots_counted_in_words():
    import faults

    t = _idle_table()
    entry = [3, 1, 0, 1, "stage 3: MemoryError memory allocation failed"]
    for n, words in ((1, "1 failed boot"), (2, "2 failed boots")):
        faults.write_file(n, [entry] * n, t.folder + "/fault.txt")
        out = _status(t)
        assert _line(out, "running") == (
            "running   yes, after %s (see faults below)" % words), out


def _one_strapping_input_board():
    # Four of the five keys on strapping pins moved off them (GPIO16 and 17
    # freed by taking the reader away): only key_payout on GPIO15 is left.
    b = board_dict()
    del b["reader"]
    for name, pin in (("key_face_6", 4), ("key_face_5", 16), ("key_face_3", 17),
                      ("key_face_4", 37)):
        b["inputs"][name]["pin"] = pin
    b["inputs"]["key_face_4"]["pull"] = "none"  # GPIO34-39 have no pull resistors
    b["strapping_ok"] = {"15": "simulated: no boot strapping"}
    return b


def test_status_counts_the_strapping_pins_in_words():
    t = _idle_table()
    strap = " on strapping pins, each with a reason given (sicbo deploy lists them)"
    out = _status(t)
    assert _line(out, "board") == "board     5 pins" + strap, out
    _write(t.folder + "/board.json", _one_strapping_input_board())
    out = _status(t)
    assert _line(out, "board") == "board     1 pin" + strap, out


def test_status_says_the_table_will_not_start_before_its_approval_is_effective():
    t = _idle_table()
    _write(t.folder + "/table.json", table_dict(
        approval={"reference": "T", "applied": "2026-11-02", "effective": "2099-01-01"}))
    running = _line(_status(t), "running")
    assert running.startswith("running   no: ") and "approval T" in running, running
