# `sicbo floor` at its edges, through the real CLI (a subprocess): files
# that are not UTF-8, `records --limit/--from` out of range, approvals of a
# length no table reports, and a --db that is not the floor's store. Each
# refusal is one line on stderr, exit 2, no traceback; what is taken has its
# real effect (the records listed, the grid's tile approved).
import hashlib
import os
import sqlite3
import subprocess
import sys

import pytest

from floorwebkit import feed
from host_tools import REPO
from host_tools.floor import staff, store, views
from host_tools.floor.simtables import TableJournal

LATIN1 = "p\xe9ssword-latin1\n".encode("latin-1")  # not UTF-8
CODE64 = hashlib.sha256(b"a release of the table's code").hexdigest()
CODE16 = CODE64[:16]  # what a table's status gives (device/link/plan.py _code_hash)


def sicbo(*args):
    return subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)


def refused(r, *words):
    """Exit 2, one line on stderr naming every word, no traceback."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("sicbo floor: "), r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    return r.stderr


def _store(db, code=CODE16, rounds=3):
    j = TableJournal(3)
    for _ in range(rounds):
        j.play_round()
    feed(db, {"T1": j}, code=code)
    staff.ensure(db)  # the view's tables, as the floor view makes them
    return j


@pytest.fixture
def fed(tmp_path):
    db = str(tmp_path / "floor.db")
    j = _store(db)
    return db, j


# ---- 1. files that are not UTF-8 --------------------------------------------------------


def test_a_password_file_not_utf8_is_refused_in_one_line(tmp_path):
    pw = tmp_path / "pw_latin1"
    pw.write_bytes(LATIN1)
    db = str(tmp_path / "x.db")
    r = sicbo("floor", "users", "add", "alice", "--db", db, "--password-file", str(pw))
    err = refused(r, str(pw), "not UTF-8")
    assert "\xe9" not in err and "0xe9" not in err  # a secret's bytes are never shown
    assert not os.path.exists(db)  # refused before any store is made
    # The service's own --password-file (the broker's password listener) the same,
    # before it connects anywhere.
    r = sicbo("floor", "--broker", "127.0.0.1:1", "--db", db, "--site", "s1",
              "--username", "floor", "--password-file", str(pw))
    refused(r, str(pw), "not UTF-8")
    # A first line without end (/dev/zero): refused, bounded.
    r = sicbo("floor", "users", "add", "alice", "--db", db, "--password-file", "/dev/zero")
    refused(r, "/dev/zero", "longer than")


def test_a_table_file_not_utf8_is_refused_in_one_line(fed, tmp_path):
    db, _j = fed
    bad = tmp_path / "table_latin1.json"
    bad.write_bytes(b'{"name": "caf\xe9"}')
    r = sicbo("floor", "records", "--db", db, "--table-file", str(bad))
    refused(r, str(bad), "not UTF-8")


# ---- 2. records: --limit and --from -----------------------------------------------------


def _listed(r):
    assert r.returncode == 0 and not r.stderr, r.stderr
    return [int(line.split()[2]) for line in r.stdout.splitlines()]


def test_records_limit_is_1_or_more_or_minus_1_for_all(fed):
    db, j = fed
    n = len(j.records)
    assert n > 10
    everything = list(range(1, n + 1))
    assert _listed(sicbo("floor", "records", "--db", db)) == everything
    assert _listed(sicbo("floor", "records", "--db", db, "--limit", "-1")) == everything
    assert _listed(sicbo("floor", "records", "--db", db, "--limit", "3")) == [1, 2, 3]
    assert _listed(sicbo("floor", "records", "--db", db, "--limit", str(1 << 62))) == everything
    for bad in ("0", "-2", str((1 << 62) + 1), str(1 << 63), "99999999999999999999999"):
        refused(sicbo("floor", "records", "--db", db, "--limit", bad), "--limit " + bad, "-1")
    # --json the same.
    r = sicbo("floor", "records", "--db", db, "--limit", "-1", "--json")
    assert r.returncode == 0 and r.stdout.count('"seq"') == n


def test_records_from_is_a_sequence_number(fed):
    db, j = fed
    n = len(j.records)
    assert _listed(sicbo("floor", "records", "--db", db, "--from", str(n - 1))) == [n - 1, n]
    assert _listed(sicbo("floor", "records", "--db", db, "--from", "0"))[0] == 1
    assert _listed(sicbo("floor", "records", "--db", db, "--from", "4", "--limit", "2")) == [
        4, 5]
    for bad in ("-1", str(1 << 32), "99999999999999999999999"):
        refused(sicbo("floor", "records", "--db", db, "--from", bad), "--from " + bad,
                "4294967295")
    # "no records" only when none matches.
    r = sicbo("floor", "records", "--db", db, "--from", str(n + 1))
    assert r.returncode == 0 and r.stdout.startswith("no records"), r.stdout
    r = sicbo("floor", "records", "--db", db, "--from", str((1 << 32) - 1))
    assert r.returncode == 0 and r.stdout.startswith("no records"), r.stdout


# ---- 3. approvals: what a table reports -------------------------------------------------


def _tile(db):
    conn = store.open_ro(db)
    try:
        (t,) = views.tiles(conn)
        return t
    finally:
        conn.close()


def test_approving_the_full_sha256_approves_the_table_that_reports_its_16_digits(fed):
    db, j = fed
    t = _tile(db)
    assert (t.code, t.code_ok, t.config_ok) == (CODE16, False, False)
    r = sicbo("floor", "approve", "--db", db, "--code", CODE64.upper(), "--note", "release 1")
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert r.stdout.strip() == ("code %s approved (the first 16 hex digits of the code sha256, "
                                "as tables report it)" % CODE16)
    r = sicbo("floor", "approve", "--db", db, "--config", j.config_id.hex().upper())
    assert r.returncode == 0 and r.stdout.strip() == "config %s approved" % j.config_id.hex()
    t = _tile(db)
    assert t.code_ok and t.config_ok
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT kind, value FROM approvals ORDER BY id").fetchall() == [
        ("code", CODE16), ("config", j.config_id.hex())]
    conn.close()
    # Revoked by either form.
    r = sicbo("floor", "approve", "--db", db, "--code", CODE64, "--revoke")
    assert r.returncode == 0 and "%s revoked" % CODE16 in r.stdout
    assert not _tile(db).code_ok
    r = sicbo("floor", "approve", "--db", db, "--code", CODE16)
    assert r.returncode == 0 and _tile(db).code_ok


def test_a_table_that_reports_all_64_digits_matches_its_approval(tmp_path):
    # The simulated tables give the whole sha256 in their status.
    db = str(tmp_path / "floor.db")
    _store(db, code=CODE64)
    assert sicbo("floor", "approve", "--db", db, "--code", CODE64).returncode == 0
    assert _tile(db).code_ok


def test_approvals_of_a_length_no_table_reports_are_refused(fed):
    db, _j = fed
    for kind, value, words in (
            ("--code", "abcd", ("code abcd is 4 hex digits", "64", "16")),
            ("--code", CODE64[:15], ("15 hex digits",)),
            ("--code", CODE64[:17], ("17 hex digits",)),
            ("--code", CODE64 + "0", ("65 hex digits",)),
            ("--config", "a9281", ("config a9281 is 5 hex digits", "12")),
            ("--config", "a92810a0ececff", ("14 hex digits", "12")),
            ("--config", "", ("is not hex",)),
            ("--code", "zz" * 8, ("is not hex",))):
        refused(sicbo("floor", "approve", "--db", db, kind, value), *words)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM approvals").fetchone() == (0,)
    conn.close()


# ---- 4. --db: the floor's store, not another file ---------------------------------------


def test_a_file_that_is_not_a_floor_store_is_refused_and_left_alone(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(str(other))
    conn.execute("CREATE TABLE x (a)")
    conn.execute("INSERT INTO x VALUES (1)")
    conn.commit()
    conn.close()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    text = tmp_path / "text.db"
    text.write_text("hello\n")
    pw = tmp_path / "pw"
    pw.write_text("a-good-password\n")
    for path in (other, empty, text, tmp_path):
        before = sorted(os.listdir(tmp_path))
        data = None if path == tmp_path else path.read_bytes()
        for args in (("approve", "--db", str(path), "--config", "a92810a0ecec"),
                     ("users", "add", "bob", "--db", str(path), "--password-file", str(pw)),
                     ("users", "list", "--db", str(path))):
            refused(sicbo("floor", *args), str(path))
        assert sorted(os.listdir(tmp_path)) == before  # no -wal, no -shm, nothing new
        if data is not None:
            assert path.read_bytes() == data
    conn = sqlite3.connect(str(other))
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("x",)]
    conn.close()


def test_a_path_where_no_store_is(tmp_path, fed):
    db, _j = fed
    pw = tmp_path / "pw"
    pw.write_text("a-good-password\n")
    # users list/disable/enable and a revoke: refused, nothing made.
    missing = str(tmp_path / "typo.db")
    for args in (("users", "list", "--db", missing), ("users", "disable", "bob", "--db", missing),
                 ("users", "enable", "bob", "--db", missing),
                 ("approve", "--db", missing, "--config", "a92810a0ecec", "--revoke")):
        refused(sicbo("floor", *args), "--db %s does not exist" % missing, "sicbo floor --db")
        assert not os.path.exists(missing)
    # users add and approve make a new store (docs/floor.md) and say so in one line.
    for i, args in enumerate((("approve", "--config", "a92810a0ecec"),
                              ("users", "add", "bob", "--password-file", str(pw)))):
        new = str(tmp_path / ("new%d.db" % i))
        r = sicbo("floor", *args, "--db", new)
        assert r.returncode == 0, r.stderr
        assert r.stderr.count("\n") == 1 and "made a new floor store" in r.stderr, r.stderr
        assert new in r.stderr
        store.open_ro(new).close()  # a floor store
        # Used again: no word of it.
        r = sicbo("floor", "users", "list", "--db", new)
        assert r.returncode == 0 and not r.stderr
    # The floor's own store: taken as it is.
    r = sicbo("floor", "users", "add", "bob", "--db", db, "--password-file", str(pw))
    assert r.returncode == 0 and not r.stderr and r.stdout.strip() == "account bob made"
    conn = staff.open_rw(db)
    assert [u[0] for u in staff.users(conn)] == ["bob"]
    conn.close()


def test_approvals_of_the_services_store_before_any_approval_are_none(tmp_path):
    # The service's store has no view tables until the first approval or
    # account: "none", not an SQL error.
    db = str(tmp_path / "floor.db")
    j = TableJournal(3)
    j.play_round()
    feed(db, {"T1": j})
    r = sicbo("floor", "approvals", "--db", db)
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    assert r.stdout.splitlines() == ["approved code: none", "approved config: none"], r.stdout
    r = sicbo("floor", "approvals", "--db", db, "--json")
    assert r.returncode == 0 and '"history": []' in r.stdout, r.stdout
