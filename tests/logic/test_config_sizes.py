# The strings, lists and files a board or table file may hold are bounded:
# the board keeps them in its heap, so a 30,000-character table name the
# parser once took put the board out of service at its next boot (a
# MemoryError in every boot). The shared parsers refuse what the board
# could not boot with, naming the field; tablefiles refuses a file past
# sicbo.config.FILE_MAX before parsing it.
import os

import tablefiles
from test_board_edges import _board

from sicbo import board, config
from sicbo.errors import ConfigError
from tables import refusal, table_dict

TMP = "/tmp/sicbo-config-sizes"


def test_a_table_name_of_80_characters_loads_and_81_is_refused():
    assert config.parse_table(table_dict(name="N" * config.NAME_MAX)).name == "N" * 80
    e = refusal(table_dict(name="N" * 81))
    assert e.field == "name" and "81 characters: at most 80" in str(e)
    assert refusal(table_dict(name="  ")).field == "name"
    assert refusal(table_dict(name=7)).field == "name"


def test_the_approval_reference_and_holidays_are_bounded():
    t = table_dict()
    t["approval"]["reference"] = "R" * 101
    e = refusal(t)
    assert e.field == "approval.reference" and "at most 100" in str(e)
    t["approval"]["reference"] = "R" * 100
    config.parse_table(t)
    t["approval"]["holidays"] = ["2026-12-25"] * 101
    e = refusal(t)
    assert e.field == "approval.holidays" and "101 dates: at most 100" in str(e)


def _board_refusal(obj):
    try:
        board.parse_board(obj)
    except ConfigError as e:
        return e
    raise AssertionError("board file accepted")


def test_a_board_name_description_reasons_and_broker_name_are_bounded():
    b = _board(None)
    b["name"] = "B" * 80
    b["description"] = "d" * 2000
    assert board.parse_board(b).name == "B" * 80
    b["name"] = "B" * 81
    assert _board_refusal(b).field == "name"
    b["name"] = "ok"
    b["description"] = "d" * 2001
    e = _board_refusal(b)
    assert e.field == "description" and "2001 characters: at most 2000" in str(e)
    b["description"] = ""
    b["strapping_ok"] = {"15": "w" * 401}
    assert _board_refusal(b).field == "strapping_ok.15"
    floor = {"site": "S1", "table": "T01", "broker": "10.0.0.2", "server_name": "n" * 254}
    assert _board_refusal(_board(floor)).field == "floor.server_name"
    floor["server_name"] = "n" * 253
    assert board.parse_board(_board(floor)).floor["server_name"] == "n" * 253


def _write(path, n):
    # A valid JSON object padded with spaces to n bytes, written in pieces
    # (the test's own heap at the board's size).
    head = '{"a": 1}'
    pad = " " * 256
    with open(path, "w") as f:
        f.write(head)
        n -= len(head)
        while n > 0:
            f.write(pad[:n])
            n -= 256


def test_tablefiles_refuses_a_file_past_file_max_before_parsing_it():
    try:
        os.mkdir(TMP)
    except OSError:
        pass
    path = TMP + "/table.json"
    _write(path, config.FILE_MAX)
    assert tablefiles.read_json(path) == {"a": 1}
    _write(path, config.FILE_MAX + 1)
    try:
        tablefiles.read_json(path)
    except ValueError as e:
        assert "16385 bytes" in str(e) and "at most 16384" in str(e), e
    else:
        raise AssertionError("a file past FILE_MAX was parsed")
    os.remove(path)
