# Files the host takes from its user that are not what they should be: not
# UTF-8, nested past what a parser recurses, larger than a file of their kind
# may be (a special file such as /dev/zero included), or naming a key twice.
# Each refused by the real CLI in one line, exit status 2, with the reason,
# never a traceback: table files (paytable, settle, journal, deploy), board
# files (deploy), wager files (settle) and the key store (journal --verify).
# host_tools/jsonfile.py reads them all.
import json
import os
import subprocess
import sys

import pytest

from host_tools import REPO, jsonfile

TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
BOARD = os.path.join(REPO, "board_config", "boards", "esp32-devkitc.json")
with open(TABLE, "rb") as _f:
    GOOD_TABLE = _f.read()
with open(BOARD, "rb") as _f:
    GOOD_BOARD = _f.read()
GOOD_WAGERS = b'[{"area": "SMALL", "stake": 100}, {"area": "BIG", "stake": 50}]'
GOOD_STORE = json.dumps({
    "format": "sicbo-chain-keys", "version": 1,
    "chains": [{"id": 7, "table": "T01", "base": 1, "key": "ab" * 32,
                "created": "2026-12-01T21:00:00Z"}]}, indent=1).encode()

# A table whose name has an e acute in Latin-1: the byte 0xe9, at the offset
# of the name's first character plus len("Caf").
LATIN1_TABLE = GOOD_TABLE.replace(b'"name": "', b'"name": "Caf\xe9 ', 1)
LATIN1_AT = GOOD_TABLE.index(b'"name": "') + len(b'"name": "Caf')
# Deeper than Python's parser recurses, yet within every cap: RecursionError
DEEP = b"[" * 5000 + b"]" * 5000
# Deeper than a file here may nest, which Python's parser would take
NESTED = b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}"


def sicbo(*args):
    return subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


def refused(r, *words):
    """The run refused its input the way every refusal of the CLI is."""
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr[-2000:]
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    return r.stderr


def write(tmp_path, name, data, mode=0o644):
    path = tmp_path / name
    path.write_bytes(data)
    os.chmod(path, mode)
    return str(path)


# Each command that reads a table file: (argv with TABLE where the table goes)
TABLE_COMMANDS = {
    "paytable": lambda t, d: ["paytable", "--table", t],
    "settle": lambda t, d: ["settle", "1", "2", "3", "--table", t],
    "journal": lambda t, d: ["journal", d, "--table", t],
    "deploy": lambda t, d: ["deploy", "--port", os.path.join(d, "no-such-port"),
                            "--board", BOARD, "--table", t],
}


def table_run(tmp_path, command, table):
    folder = tmp_path / "journal"
    folder.mkdir(exist_ok=True)  # an empty folder: an empty journal
    return sicbo(*TABLE_COMMANDS[command](table, str(folder)))


def board_run(tmp_path, board):
    return sicbo("deploy", "--port", str(tmp_path / "no-such-port"), "--board", board,
                 "--table", TABLE)


def wagers_run(wagers):
    return sicbo("settle", "1", "2", "3", "--wagers", wagers)


def store_run(tmp_path, store):
    folder = tmp_path / "journal"
    folder.mkdir(exist_ok=True)
    return sicbo("journal", str(folder), "--verify", store)


# ---- the files as they should be: taken -----------------------------------------

@pytest.mark.parametrize("command", sorted(TABLE_COMMANDS))
def test_a_good_table_file_is_taken(tmp_path, command):
    r = table_run(tmp_path, command, write(tmp_path, "t.json", GOOD_TABLE))
    if command == "deploy":  # checked, then the port looked for
        refused(r, "nothing at the port")
    else:
        assert r.returncode == 0 and r.stderr == "", r.stderr


def test_good_wagers_and_key_store_are_taken(tmp_path):
    r = wagers_run(write(tmp_path, "w.json", GOOD_WAGERS))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    # the store read (its chain counted); an empty journal does not verify (1)
    r = store_run(tmp_path, write(tmp_path, "keys.json", GOOD_STORE, 0o600))
    assert r.returncode == 1 and "(1 chains)" in r.stdout and r.stderr == "", (r.stdout,
                                                                                r.stderr)


def test_a_table_file_with_crlf_lines_is_taken(tmp_path):
    r = table_run(tmp_path, "paytable", write(tmp_path, "t.json",
                                              GOOD_TABLE.replace(b"\n", b"\r\n")))
    assert r.returncode == 0 and r.stderr == "", r.stderr


# ---- 1. not UTF-8 ----------------------------------------------------------------

@pytest.mark.parametrize("command", sorted(TABLE_COMMANDS))
def test_a_table_file_not_utf8_is_refused(tmp_path, command):
    path = write(tmp_path, "t.json", LATIN1_TABLE)
    refused(table_run(tmp_path, command, path),
            "table file %s refused: not UTF-8 text (byte 0xe9 at %d)" % (path, LATIN1_AT))


def test_a_board_file_not_utf8_is_refused(tmp_path):
    data = GOOD_BOARD.replace(b'"name": "', b'"name": "\xff', 1)
    path = write(tmp_path, "b.json", data)
    refused(board_run(tmp_path, path), "board file %s refused: not UTF-8 text (byte 0xff at %d)"
            % (path, data.index(b"\xff")))


def test_a_wager_file_not_utf8_is_refused(tmp_path):
    path = write(tmp_path, "w.json", b'[{"area": "SMALL\xe9", "stake": 1}]')
    refused(wagers_run(path), "wager file %s refused: not UTF-8 text (byte 0xe9 at 16)" % path)


def test_a_key_store_not_utf8_is_refused(tmp_path):
    data = GOOD_STORE.replace(b'"T01"', b'"T\xe901"')
    path = write(tmp_path, "keys.json", data, 0o600)
    refused(store_run(tmp_path, path), "key store %s refused: not UTF-8 text (byte 0xe9 at %d)"
            % (path, data.index(b"\xe9")))


# ---- 2. nested too deep ------------------------------------------------------------

@pytest.mark.parametrize("data", [DEEP, NESTED], ids=["deeper-than-recursion", "41-deep"])
@pytest.mark.parametrize("command", sorted(TABLE_COMMANDS))
def test_a_table_file_nested_too_deep_is_refused(tmp_path, command, data):
    path = write(tmp_path, "t.json", data)
    refused(table_run(tmp_path, command, path),
            "table file %s refused: JSON arrays and objects nested more than %d deep"
            % (path, jsonfile.DEPTH_MAX))


@pytest.mark.parametrize("data", [DEEP, NESTED], ids=["deeper-than-recursion", "41-deep"])
def test_board_wager_and_key_store_nested_too_deep_are_refused(tmp_path, data):
    why = "refused: JSON arrays and objects nested more than %d deep" % jsonfile.DEPTH_MAX
    refused(board_run(tmp_path, write(tmp_path, "b.json", data)), "board file", why)
    refused(wagers_run(write(tmp_path, "w.json", data)), "wager file", why)
    refused(store_run(tmp_path, write(tmp_path, "keys.json", data, 0o600)), "key store", why)


def test_the_reviewers_deep_wager_file_is_refused(tmp_path):
    # '[' * 50000 + ']' * 50000: 100 KB, within the cap of a wager file
    path = write(tmp_path, "w.json", b"[" * 50000 + b"]" * 50000)
    refused(wagers_run(path), "nested more than")


# ---- 3. larger than the cap -----------------------------------------------------------

def padded(data, size):
    """data with spaces after it (still the same JSON) to size bytes."""
    assert len(data) <= size
    return data + b" " * (size - len(data))


@pytest.mark.parametrize("command", sorted(TABLE_COMMANDS))
def test_a_table_file_over_the_cap_is_refused(tmp_path, command):
    path = write(tmp_path, "t.json", padded(GOOD_TABLE, jsonfile.TABLE_MAX + 1))
    refused(table_run(tmp_path, command, path),
            "table file %s refused: larger than 16384 bytes" % path)


@pytest.mark.parametrize("command", sorted(TABLE_COMMANDS))
def test_dev_zero_as_a_table_file_is_refused(tmp_path, command):
    refused(table_run(tmp_path, command, "/dev/zero"),
            "table file /dev/zero refused: larger than 16384 bytes")


def test_a_table_file_of_the_cap_is_taken(tmp_path):
    r = table_run(tmp_path, "paytable", write(tmp_path, "t.json",
                                              padded(GOOD_TABLE, jsonfile.TABLE_MAX)))
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_a_board_file_over_the_cap_is_refused(tmp_path):
    path = write(tmp_path, "b.json", padded(GOOD_BOARD, jsonfile.BOARD_MAX + 1))
    refused(board_run(tmp_path, path), "board file %s refused: larger than 16384 bytes" % path)
    refused(board_run(tmp_path, "/dev/zero"),
            "board file /dev/zero refused: larger than 16384 bytes")
    # one byte less: checked, then the port looked for
    path = write(tmp_path, "b.json", padded(GOOD_BOARD, jsonfile.BOARD_MAX))
    refused(board_run(tmp_path, path), "nothing at the port")


def test_a_wager_file_over_the_cap_is_refused(tmp_path):
    path = write(tmp_path, "w.json", padded(GOOD_WAGERS, jsonfile.WAGERS_MAX + 1))
    refused(wagers_run(path), "wager file %s refused: larger than 1 MiB" % path)
    refused(wagers_run("/dev/zero"), "wager file /dev/zero refused: larger than 1 MiB")
    path = write(tmp_path, "w.json", padded(GOOD_WAGERS, jsonfile.WAGERS_MAX))
    r = wagers_run(path)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_a_key_store_over_the_cap_is_refused(tmp_path):
    path = write(tmp_path, "keys.json", padded(GOOD_STORE, jsonfile.KEYSTORE_MAX + 1), 0o600)
    refused(store_run(tmp_path, path), "key store %s refused: larger than 16 MiB" % path)


def test_the_key_store_cap_holds_many_chains():
    # A chain at its longest (a table id of 32 characters, ids and bases of
    # 10 digits) as keystore.save writes it: the cap holds 70,000 of them
    # (200 tables provisioned 350 times each).
    chain = {"id": 4294967295, "table": "T" * 32, "base": 4294967295, "key": "ab" * 32,
             "created": "2026-12-01T21:00:00Z"}
    text = json.dumps({"format": "sicbo-chain-keys", "version": 1,
                       "chains": [chain] * 70000}, indent=1) + "\n"
    assert len(text.encode()) <= jsonfile.KEYSTORE_MAX


# ---- 4. a key twice ------------------------------------------------------------------

TWICE = "the key is given twice"


@pytest.mark.parametrize("command", sorted(TABLE_COMMANDS))
@pytest.mark.parametrize("old, new, key", [
    (b'"edition": 2004', b'"edition": 2003, "edition": 2004', "edition"),
    (b'"TOTAL_5": 18', b'"TOTAL_5": 17, "TOTAL_5": 18', "odds.TOTAL_5"),
])
def test_a_table_file_naming_a_key_twice_is_refused(tmp_path, command, old, new, key):
    assert GOOD_TABLE.count(old) == 1
    path = write(tmp_path, "t.json", GOOD_TABLE.replace(old, new))
    refused(table_run(tmp_path, command, path),
            "table file %s refused: %s: %s" % (path, key, TWICE))


def test_a_board_file_naming_a_key_twice_is_refused(tmp_path):
    old = b'"mcu": "esp32"'
    assert GOOD_BOARD.count(old) == 1
    path = write(tmp_path, "b.json", GOOD_BOARD.replace(old, old + b', "mcu": "esp32"'))
    refused(board_run(tmp_path, path), "board file %s refused: mcu: %s" % (path, TWICE))


def test_a_wager_file_naming_a_key_twice_is_refused(tmp_path):
    # The reviewer's: the stake a reader sees is 1, Python's parser would settle 2
    path = write(tmp_path, "w.json", b'[{"area": "SMALL", "stake": 5}, '
                                     b'{"area": "SMALL", "stake": 1, "stake": 2}]')
    refused(wagers_run(path), "wager file %s refused: [1].stake: %s" % (path, TWICE))


def test_a_key_store_naming_a_key_twice_is_refused(tmp_path):
    data = GOOD_STORE.replace(b'"base": 1,', b'"base": 1, "base": 900,')
    assert data != GOOD_STORE
    path = write(tmp_path, "keys.json", data, 0o600)
    refused(store_run(tmp_path, path), "key store %s refused: chains[0].base: %s" % (path, TWICE))


def test_a_key_store_that_would_pass_the_cap_is_not_saved(tmp_path, monkeypatch):
    # Never a store that load() would then refuse: the one on disk stays.
    from host_tools import keystore

    path = str(tmp_path / "keys.json")
    ks = keystore.KeyStore(path, [keystore.Provisioning(1, "T01", 1, b"\x01" * 32,
                                                        "2026-12-01T21:00:00Z")])
    ks.save()
    before = open(path, "rb").read()
    monkeypatch.setattr(jsonfile, "KEYSTORE_MAX", len(before) + 10)
    ks.chains.append(keystore.Provisioning(2, "T02", 1, b"\x02" * 32, "2026-12-01T21:00:00Z"))
    with pytest.raises(keystore.UsageError, match="would be larger than"):
        ks.save()
    assert open(path, "rb").read() == before
    assert [c.id for c in keystore.load(path).chains] == [1]


def test_the_virtual_board_refuses_a_bad_table_file_in_one_line(tmp_path):
    # sicbo vboard read its table file's lamp names itself: a traceback.
    table = write(tmp_path, "table.json", LATIN1_TABLE)
    r = sicbo("vboard", "--table", table, "--folder", str(tmp_path / "vb"))
    refused(r, "table file %s refused: not UTF-8 text" % table)
