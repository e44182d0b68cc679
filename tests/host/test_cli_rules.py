"""`sicbo settle` and `sicbo paytable` as a user runs them."""

import json
import os
import subprocess
import sys

import pytest

from host_tools.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = os.path.join(REPO, "board_config", "tables")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_settle_json(capsys):
    code, out, err = run(capsys, "settle", "1", "1", "2", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["dice"] == [1, 1, 2] and data["total"] == 4 and data["triple"] is False
    wins = [(w["area"], w["odds"]) for w in data["wins"]]
    assert wins == [("SMALL", 1), ("SINGLE_1", 2), ("SINGLE_2", 1), ("TOTAL_4", 50),
                    ("EVEN", 1), ("COMBO_1_1_2", 50), ("PAIR_1_2", 5), ("DOUBLE_1", 8)]


def test_settle_triple_human(capsys):
    code, out, _ = run(capsys, "settle", "3", "3", "3")
    assert code == 0 and "TRIPLE" in out and "TOTAL_9" in out and "SMALL " not in out


def test_settle_with_wagers(capsys, tmp_path):
    f = tmp_path / "w.json"
    f.write_text(json.dumps([{"area": "TRIPLE_4", "stake": 100}, {"area": "BIG", "stake": 50}]))
    code, out, _ = run(capsys, "settle", "4", "4", "4", "--wagers", str(f), "--json")
    data = json.loads(out)
    assert code == 0
    assert [w["payout"] for w in data["wagers"]] == [15100, 0]
    assert [(w["win"], w["stake_returned"]) for w in data["wagers"]] == [(15000, 100), (0, 0)]
    assert data["total_stake"] == 150 and data["total_paid"] == 15100


def test_settle_says_the_win_and_the_returned_stake_apart(capsys, tmp_path):
    f = tmp_path / "w.json"
    f.write_text(json.dumps([{"area": "TRIPLE_4", "stake": 100}, {"area": "BIG", "stake": 50}]))
    code, out, _ = run(capsys, "settle", "4", "4", "4", "--wagers", str(f))
    assert code == 0
    lines = out.splitlines()
    triple = next(ln for ln in lines if ln.strip().startswith("TRIPLE_4") and "stake" in ln)
    assert triple.endswith("at 150 to 1: wins 15000 + stake 100 returned = 15100"), triple
    big = next(ln for ln in lines if ln.strip().startswith("BIG") and "stake" in ln)
    assert big.endswith("loses (stake 50 kept by the house)"), big
    assert lines[-1] == ("total staked 150; total paid 15100 (wins 15000 + stakes 100 "
                         "returned); house result -14950")


@pytest.mark.parametrize("argv, words", [
    (["settle", "0", "1", "2"], "1 to 6"),
    (["settle", "1", "2", "x"], "1 to 6"),
    (["settle", "1", "2", "3", "--table", "/nonexistent.json"], "cannot read table file"),
])
def test_settle_bad_input_exit_2_one_line(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert words in err and err.count("\n") == 1


@pytest.mark.parametrize("content, words", [
    ("[{\"area\": \"SMALL\", \"stake\": 0}]", "positive whole number"),
    ("[{\"area\": \"NOPE\", \"stake\": 5}]", "unknown area"),
    ("[{\"area\": \"SMALL\"}]", "exactly"),
    ("{\"area\": \"SMALL\"}", "JSON list"),
    ("[{\"area\": \"SMALL\", \"stake\": 5}", "not valid JSON"),
    ("[{\"area\": \"SMALL\", \"stake\": 2.5}]", "positive whole number"),
])
def test_settle_bad_wager_file(capsys, tmp_path, content, words):
    f = tmp_path / "w.json"
    f.write_text(content)
    code, out, err = run(capsys, "settle", "1", "2", "3", "--wagers", str(f))
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


def test_settle_refused_table(capsys, tmp_path):
    table = json.load(open(os.path.join(TABLES, "macau-2004.json")))
    table["odds"]["TOTAL_5"] = 40
    f = tmp_path / "t.json"
    f.write_text(json.dumps(table))
    code, _, err = run(capsys, "settle", "1", "2", "3", "--table", str(f))
    assert code == 2 and "odds.TOTAL_5" in err and "18 to 30" in err


def test_paytable_json_2004(capsys):
    code, out, _ = run(capsys, "paytable", "--json")
    data = json.loads(out)
    assert code == 0 and data["edition"] == 2004 and len(data["areas"]) == 117
    by = {a["area"]: a for a in data["areas"]}
    assert by["SMALL"] == {"area": "SMALL", "odds": 1, "ways": 105, "edge": "6/216",
                           "edge_pct": 2.778, "flag": False}
    assert by["SINGLE_1"]["odds"] == [1, 2, 3] and by["SINGLE_1"]["edge"] == "17/216"
    assert by["ODD"]["flag"] is True and by["EVEN"]["flag"] is True
    assert [a for a in by if by[a]["flag"]] == ["ODD", "EVEN"]


def test_paytable_human_groups_and_flags(capsys):
    code, out, _ = run(capsys, "paytable")
    assert code == 0
    assert "Small / Big" in out and "Four numbers" in out
    assert "FLAGGED: 2 area(s)" in out and "ODD, EVEN" in out


def test_paytable_2003(capsys):
    code, out, _ = run(capsys, "paytable", "--table", os.path.join(TABLES, "macau-2003.json"),
                       "--json")
    data = json.loads(out)
    assert data["edition"] == 2003 and len(data["areas"]) == 29
    assert not any(a["flag"] for a in data["areas"])


def test_shipped_tables_load():
    from sicbo import config
    for name in ("macau-2004.json", "macau-2003.json"):
        with open(os.path.join(TABLES, name)) as f:
            cfg = config.load_table(f.read())
        assert cfg.edition == (2004 if "2004" in name else 2003)


def test_console_script_and_module_entry_point(tmp_path):
    # From an empty folder of its own (a shared /tmp may hold any .py that
    # `python -m` would put first on sys.path).
    exe = os.path.join(os.path.dirname(sys.executable), "sicbo")
    for argv in ([exe, "settle", "--help"], [sys.executable, "-m", "host_tools", "paytable",
                                             "--help"]):
        r = subprocess.run(argv, capture_output=True, text=True, cwd=str(tmp_path))
        assert r.returncode == 0 and "--table" in r.stdout
