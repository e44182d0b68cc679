# mprun-heap: controller
# What diag.status() and diag.meters() print, line by line, as a technician
# reads them: the dice of a round awaiting payout, the hash of each deployed
# configuration file, and every won area of the wrapped wins listing.
import json

from appkit import Table, board_dict, reboot
from diagkit import _out, _table

import diag
from sicbo import logtext
from sicbo import records as R


def _setup(t):
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]


def _lines(head):
    return [x for x in _out if x.startswith(head + " ")]


def _file_lines():
    # The config lines of the deployed files (not the configuration's id).
    return [x for x in _lines("config") if not x.startswith("config    id ")]


def test_status_shows_the_dice_of_a_round_awaiting_payout():
    t = Table(board=board_dict(bell_ms=50))
    t.to_result()
    t.close()
    _setup(t)
    diag.status()
    assert _lines("result") == [], _out  # no dice entered yet
    t = Table(board=board_dict(bell_ms=50))
    t.to_result()
    t.enter(4, 5, 6)
    t.close()
    _setup(t)
    diag.status()
    assert _lines("state")[0].startswith("state     paying "), _out
    assert _lines("result") == ["result    4-5-6"], _out


_CODE = "c0de" * 16
_BOARD = "b0a2d" + "1" * 59
_TABLE = "7ab1e" + "2" * 59


def _status_with_manifest(t, manifest):
    # The manifest is /manifest.json on the board: read from the test's folder.
    path = t.folder + "/manifest.json"
    with open(path, "w") as f:
        f.write(json.dumps(manifest))
    read = diag._read_json

    def _read(name):
        return read(path if name == "/manifest.json" else name)

    diag._read_json = _read
    try:
        _setup(t)
        diag.status()
    finally:
        diag._read_json = read
    return list(_out)


def test_status_names_the_sha256_of_each_deployed_config_file():
    t = _table(play=False)
    # board.json as sicbo deploy names it, table.json by its absolute path.
    out = _status_with_manifest(t, {"code_sha256": _CODE, "firmware": "1.4", "revision": "abc",
                                    "files": {"board.json": _BOARD, "/table.json": _TABLE}})
    assert _lines("firmware") == ["firmware  1.4  revision abc"], out
    assert _file_lines() == ["config    board.json  sha256 " + _BOARD[:16],
                             "config    table.json  sha256 " + _TABLE[:16]], out


def test_status_shows_a_question_mark_for_a_config_file_the_manifest_omits():
    t = _table(play=False)
    out = _status_with_manifest(t, {"firmware": "1.4", "revision": "abc", "files": {}})
    assert _file_lines() == ["config    board.json  sha256 ?",
                             "config    table.json  sha256 ?"], out
    assert not [x for x in out if "failed" in x], out


def test_meters_lists_every_won_area_when_the_listing_wraps():
    _table()  # one round of 1-2-3 paid: six areas won
    diag.meters()
    i = _out.index("wins per area (paid rounds):")
    rows = _out[i + 1:]
    # Three cells of 21 columns to a row of at most 76: two rows, the last too.
    assert len(rows) == 2, _out
    won = {}
    for row in rows:
        assert row.startswith("  "), _out
        cells = row.split()
        assert len(cells) == 6, _out
        for k in range(0, 6, 2):
            won[cells[k]] = int(cells[k + 1])
    assert won == {"SMALL": 1, "EVEN": 1, "SINGLE_1": 1, "SINGLE_2": 1, "SINGLE_3": 1,
                   "PAIR_1_2": 1}, _out


def test_status_names_the_alarm_its_lamp_is_lit_for():
    # A power cut with betting open: the boot voids the round and raises an
    # alarm; status says which, from its record, not a bare ALARM.
    t = Table(board=board_dict(bell_ms=50))
    t.open_round()
    t = reboot(t)
    alarms = [r for r in t.journal() if r.type == R.J_ALARM]
    t.close()
    assert len(alarms) == 1, t.types()
    a = alarms[0]
    _setup(t)
    diag.status()
    want = "alarms    ALARM: %s (journal %d, round %d)" % (
        logtext.message_text(a.p(R.P_CODE), a.p(R.P_DETAIL)), a.seq, a.round)
    assert _lines("alarms") == [want], _out
    assert "power cut" in want, want
    # acknowledged by the supervisor: no alarm left to name
    t = reboot(t)
    t.set("supervisor", 1)
    t.run(200)
    t.set("supervisor", 0)
    t.run(200)
    cleared = R.J_ALARM_CLEAR in t.types()
    t.close()
    assert cleared, t.types()
    _setup(t)
    diag.status()
    assert _lines("alarms") == ["alarms    none"], _out
