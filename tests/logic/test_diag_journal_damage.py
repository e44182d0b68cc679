# mprun-heap: controller
# diag reads a damaged journal as `sicbo journal` does: the bytes the scanner
# could not read as records are said, where they are (corrupt between
# records: skipped; torn at a segment's end: discarded), and where records
# are missing (a gap in the sequence) diag.journal() says so between the
# records around it and diag.recall() marks the round it touches (its status
# is the journal's last word on it, not the last thing that happened). And a
# board or table file that cannot be read is named, not "A or B".
import os

from appkit import Table, board_dict
from diagkit import _out

import diag
from sicbo import journal
from sicbo import records as R


def _segments(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith(".log"))


def _played():
    t = Table(board=board_dict(bell_ms=50))
    t.play(1, 2, 3)
    t.play(4, 5, 6)
    t.play(2, 2, 3)
    t.close()
    return t


def _flip_payout(folder, rid):
    """One byte flipped in the payout record of round rid: its CRC fails, it
    becomes a corrupt stretch between records. (segment name, seq, length)."""
    for name in _segments(folder):
        path = folder + "/" + name
        with open(path, "rb") as f:
            data = bytearray(f.read())
        for rec in journal.records(data):
            if rec.type == R.J_PAYOUT and rec.round == rid:
                data[rec.offset + R.HEADER] ^= 0x40
                with open(path, "wb") as f:
                    f.write(data)
                return name, rec.seq, rec.length
    raise AssertionError("no payout of round %d" % rid)


def _setup(t):
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]


def _said(head):
    return [x for x in "\n".join(_out).split("\n") if x.startswith(head)]


def test_a_corrupt_record_mid_journal_is_said_by_status_journal_and_recall():
    t = _played()
    name, seq, length = _flip_payout(t.folder, 2)
    _setup(t)
    diag.status()
    alarms = " ".join(x.strip() for x in "\n".join(_out).split("\n")
                      if x.startswith("alarms ") or x.startswith("          "))
    assert "%d corrupt bytes skipped (in %s)" % (length, name) in alarms, _out
    assert "records missing: seq %d" % seq in alarms, _out
    assert "none" not in alarms, _out

    del _out[:]
    diag.journal(60)
    lines = "\n".join(_out).split("\n")
    at = [i for i, x in enumerate(lines) if "MISSING" in x]
    assert len(at) == 1, lines
    assert lines[at[0]] == "journal ------ MISSING seq %d (journal damage below)" % seq, lines
    assert lines[at[0] - 1].split()[1] == str(seq - 1), lines  # between the records around it
    assert lines[at[0] + 1].split()[1] == str(seq + 1), lines
    assert _said("journal damage: %d corrupt bytes skipped (in %s); records missing: seq %d"
                 % (length, name, seq)), lines

    del _out[:]
    diag.journal(3)  # only the last 3 records: the gap is far before them
    assert not [x for x in _out if "MISSING" in x], _out  # seq-1.. are far before the last 3

    del _out[:]
    diag.recall(5)
    lines = "\n".join(_out).split("\n")
    two = [x for x in lines if x.split()[:1] == ["2"]]
    assert len(two) == 1 and two[0].split()[1] == "paying", lines
    assert "seq %d MISSING;" % seq in two[0], lines
    others = [x for x in lines if x.split()[:1] in (["1"], ["3"])]
    assert len(others) == 2 and all("MISSING" not in x and x.split()[1] == "paid"
                                    for x in others), lines
    assert _said("journal damage: %d corrupt bytes skipped" % length), lines


def test_a_torn_tail_is_said_with_its_segment_and_no_record_missing():
    t = _played()
    last = _segments(t.folder)[-1]
    with open(t.folder + "/" + last, "ab") as f:
        f.write(bytes((R.MAGIC, R.J_ROUND, 40, 0, 1, 2, 3)))  # a record cut short
    _setup(t)
    diag.status()
    alarms = _said("alarms ")
    assert alarms == ["alarms    7 torn bytes discarded (in %s)" % last], _out
    del _out[:]
    diag.journal(60)
    assert not [x for x in _out if "MISSING" in x], _out
    assert _said("journal damage: 7 torn bytes discarded (in %s)" % last), _out


def test_a_clean_journal_has_no_alarm():
    t = _played()
    _setup(t)
    diag.status()
    assert _said("alarms ") == ["alarms    none"], _out
    # The configuration id the journal's J_CONFIG and the floor's approvals name.
    from binascii import hexlify

    import tablefiles

    ident = hexlify(tablefiles.config_id(t.folder + "/board.json",
                                         t.folder + "/table.json")).decode()
    assert _said("config    id ") == ["config    id %s (J_CONFIG; the floor's approvals "
                                      "name it)" % ident], _out
    del _out[:]
    diag.journal(60)
    assert not [x for x in _out if "MISSING" in x or "damage" in x], _out


def test_the_file_that_cannot_be_read_is_named():
    t = _played()
    os.remove(t.folder + "/table.json")
    _setup(t)
    diag.status()
    table = _said("table ")
    assert table == ["table     files refused: cannot read %s/table.json: no such file"
                     % t.folder], _out
    run = _said("running ")
    assert run[0].startswith("running   no: cannot read %s/table.json: no such file"
                             % t.folder), _out

    with open(t.folder + "/table.json", "w") as f:
        f.write("{}")  # there again (refused for its fields, not read here)
    with open(t.folder + "/board.json", "w") as f:
        f.write('{"pins": ')  # cut short
    _setup(t)
    diag.status()
    table = _said("table ")
    # MicroPython's json raises ValueError; CPython's its JSONDecodeError.
    assert table[0].startswith("table     files refused: cannot read %s/board.json: "
                               % t.folder), _out
    assert table[0].split(": ")[2].split(" ")[0] in ("ValueError", "JSONDecodeError"), _out
    assert "table.json" not in table[0], _out
