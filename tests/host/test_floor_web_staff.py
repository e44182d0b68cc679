# The floor view's accounts, audit trail, approvals, protections and
# drawings, without a broker or a browser: a store fed by the floor's own
# ingest (floorwebkit.feed), the view served in this process.
import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from floorwebkit import NextEvent, NoRedirect, feed, get, post
from host_tools import REPO
from host_tools.floor import staff, views, web
from host_tools.floor.simtables import TableJournal
from host_tools.rules import load_table


def sicbo(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120, stdin=stdin)


@pytest.fixture
def store_db(tmp_path):
    db = str(tmp_path / "floor.db")
    journals = {"T1": TableJournal(1, tamper_every=4), "T2": TableJournal(2)}
    for j in journals.values():
        for _ in range(8):
            j.play_round()
    feed(db, journals)
    return db, journals


@pytest.fixture
def view(store_db):
    db, journals = store_db
    cfg, table = load_table(None)
    v = web.FloorView(db, cfg, table).start("127.0.0.1", 0)
    conn = staff.open_rw(db)
    staff.add_user(conn, "carol", "carol-password")
    conn.close()
    v.journals = journals
    yield v
    v.stop()


def test_users_add_stores_a_salted_scrypt_hash_never_the_password(tmp_path):
    db = str(tmp_path / "floor.db")
    pw = tmp_path / "pw"
    pw.write_text("s3cret-password\n")
    r = sicbo("floor", "users", "add", "dave", "--db", db, "--password-file", str(pw))
    assert r.returncode == 0, r.stderr
    r = sicbo("floor", "users", "add", "erin", "--db", db, "--password-file", str(pw))
    assert r.returncode == 0, r.stderr
    conn = sqlite3.connect(db)
    rows = dict(conn.execute("SELECT name, kdf FROM users"))
    assert set(rows) == {"dave", "erin"}
    for kdf in rows.values():
        name, n, r_, p, salt, key = kdf.split("$")
        assert (name, n, r_, p) == ("scrypt", str(1 << 14), "8", "1")
        assert len(bytes.fromhex(salt)) == 16 and len(bytes.fromhex(key)) == 32
    assert rows["dave"] != rows["erin"]  # the same password, salted apart
    with open(db, "rb") as f:
        assert b"s3cret-password" not in f.read()
    assert staff.check_password("s3cret-password", rows["dave"])
    assert not staff.check_password("s3cret-passwore", rows["dave"])
    assert conn.execute("SELECT action, detail FROM audit ORDER BY id").fetchall() == [
        ("user-add", "account dave made"), ("user-add", "account erin made")]
    # Refusals: one line, exit 2.
    for args, why in ((["dave"], "exists already"), (["bad name!"], "is not 1 to 32"),
                      (["frank", "--password-file", str(tmp_path / "none")], "cannot read")):
        extra = [] if "--password-file" in args else ["--password-file", str(pw)]
        r = sicbo("floor", "users", "add", *args, "--db", db, *extra)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and why in r.stderr, r.stderr
    short = tmp_path / "short"
    short.write_text("abc\n")
    r = sicbo("floor", "users", "add", "gina", "--db", db, "--password-file", str(short))
    assert r.returncode == 2 and "at least 8" in r.stderr
    # No terminal to ask on, no file: refused, not read from a pipe.
    r = sicbo("floor", "users", "add", "hana", "--db", db, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "--password-file" in r.stderr
    r = sicbo("floor", "users", "list", "--db", db)
    assert [x.split()[0] for x in r.stdout.splitlines()] == ["dave", "erin"]


def test_the_audit_trail_acknowledgements_and_approvals_cannot_be_edited(store_db):
    db, _j = store_db
    conn = staff.open_rw(db)
    staff.add_user(conn, "ivan", "ivan-password")
    aid = conn.execute("SELECT MIN(id) FROM alarms").fetchone()[0]
    staff.acknowledge(conn, aid, "ivan", "checked", "127.0.0.1")
    staff.approve(conn, "code", "ab" * 32, "ivan")
    for sql in ("UPDATE audit SET detail='nothing happened'", "DELETE FROM audit",
                "UPDATE acks SET user='nobody'", "DELETE FROM acks",
                "UPDATE approvals SET action='revoke'", "DELETE FROM approvals"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(sql)
    # Another client of the file is refused the same.
    other = sqlite3.connect(db)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        other.execute("DELETE FROM audit WHERE action='acknowledge'")
    other.close()
    assert conn.execute("SELECT COUNT(*) FROM audit WHERE action='acknowledge'").fetchone() == (1,)
    with pytest.raises(staff.StaffError, match="already by ivan"):
        staff.acknowledge(conn, aid, "ivan", "again", None)
    with pytest.raises(staff.StaffError, match="needs a note"):
        staff.acknowledge(conn, aid + 1, "ivan", "  ", None)


def _sign_in(v, form, cookie):
    """The sign-in's answer, not followed (its redirect, as an HTTPError:
    code, headers; Set-Cookie holds the new session)."""
    req = urllib.request.Request(v.url + "signin", method="POST",
                                 data=urllib.parse.urlencode(form).encode(),
                                 headers={"Cookie": cookie, "Origin": v.url.rstrip("/")})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.build_opener(NoRedirect).open(req)
    return e.value


def _session(v):
    """An anonymous session's cookie and token, as a browser gets them."""
    _s, body, headers = get(v.url + "signin")
    cookie = headers["Set-Cookie"].split(";")[0]
    token = body.split('name="csrf" content="')[1].split('"')[0]
    set_cookie = headers["Set-Cookie"]
    assert "HttpOnly" in set_cookie and "samesite=strict" in set_cookie.lower()
    return cookie, token


def test_sign_in_and_acknowledge_need_the_token_the_origin_and_an_account(view):
    own = view.url.rstrip("/")
    cookie, token = _session(view)
    good = {"name": "carol", "password": "carol-password", "csrf": token, "next": "/"}
    # Sign-in is protected too (a forged sign-in would plant an account).
    assert post(view.url + "signin", good, cookie, origin="http://evil.example")[0] == 403
    assert post(view.url + "signin", dict(good, csrf="no"), cookie, origin=own)[0] == 403
    assert post(view.url + "signin", good, cookie,
                referer="http://evil.example/page")[0] == 403
    st, body = post(view.url + "signin", dict(good, password="wrong-one"), cookie, origin=own)
    assert st == 403 and "wrong name or password" in body
    st, body = post(view.url + "signin", dict(good, name="mallory"), cookie, origin=own)
    assert st == 403 and "wrong name or password" in body  # the same answer
    aid = views.alarms(sqlite3.connect(view.db))[0].id
    ack = {"note": "seen", "csrf": token, "next": "/"}
    st, body = post(view.url + "alarms/%d/ack" % aid, ack, cookie, origin=own)
    assert st == 403 and "sign in to acknowledge" in body  # an anonymous session
    # Signed in (a Referer of this site stands for the Origin): a new session
    # id, the anonymous one is worthless now.
    st, _b = post(view.url + "signin", good, cookie, referer=own + "/signin")
    assert st == 303
    assert post(view.url + "alarms/%d/ack" % aid, ack, cookie, origin=own)[0] == 403
    conn = sqlite3.connect(view.db)
    actions = [a for a, in conn.execute("SELECT action FROM audit ORDER BY id")]
    assert actions.count("sign-in-failed") == 2 and actions.count("sign-in") == 1
    assert actions.count("request-refused") == 4
    assert conn.execute("SELECT COUNT(*) FROM acks").fetchone() == (0,)
    failed = conn.execute("SELECT user, detail FROM audit WHERE action='sign-in-failed'"
                          " ORDER BY id").fetchall()
    # A name that is no account is not kept (often the password in the wrong
    # field; the trail is open to every viewer).
    assert failed == [("carol", "wrong password"), (None, "no such account")]
    assert conn.execute("SELECT COUNT(*) FROM audit WHERE detail LIKE '%mallory%'"
                        " OR user='mallory'").fetchone() == (0,)


def test_what_a_hostile_or_malformed_request_gets(view):
    # Found in review, each seen failing before its fix.
    own = view.url.rstrip("/")
    conn = sqlite3.connect(view.db)
    # A session signed in before its account was disabled acknowledges nothing.
    cookie, token = _session(view)
    good = {"name": "carol", "password": "carol-password", "csrf": token, "next": "/"}
    e = _sign_in(view, good, cookie)
    cookie = e.headers["Set-Cookie"].split(";")[0]
    token = get(view.url, cookie=cookie)[1].split('name="csrf" content="')[1].split('"')[0]
    aid = conn.execute("SELECT id FROM alarms WHERE id NOT IN (SELECT alarm_id FROM acks)"
                       " ORDER BY id").fetchone()[0]
    w = staff.open_rw(view.db)
    staff.set_disabled(w, "carol", True)
    ack = {"note": "seen", "csrf": token, "next": "/"}
    st, body = post(view.url + "alarms/%d/ack" % aid, ack, cookie, origin=own)
    assert st == 400 and "disabled" in body, (st, body[-300:])
    assert conn.execute("SELECT COUNT(*) FROM acks WHERE alarm_id=?", (aid,)).fetchone() == (0,)
    staff.set_disabled(w, "carol", False)
    w.close()
    # A long Origin is kept short in the append-only trail.
    post(view.url + "signout", {"csrf": token}, cookie, origin="http://x" + "y" * 60000)
    longest = conn.execute("SELECT MAX(LENGTH(detail)) FROM audit").fetchone()[0]
    assert longest < 400, longest
    # Numbers no table has are no page, not a failure.
    for path in ("table/T1/round/99999999999999999999999", "table/T1/round/1" + "0" * 30
                 + ".json"):
        try:
            st = get(view.url + path)[0]
        except urllib.error.HTTPError as e:
            st = e.code
        assert st == 404, path
    st, _b = post(view.url + "alarms/99999999999999999999/ack", ack, cookie, origin=own)
    assert st == 404
    # A CSV cell never starts a spreadsheet formula.
    _s, body, _h = get(view.url + "table/-x/report/2024-01-01.csv")
    assert "report,table,'-x," in body and "\n-" not in body and ",-x" not in body


def test_a_signed_in_user_acknowledges_and_the_page_cannot_edit_the_trail(view):
    own = view.url.rstrip("/")
    cookie, token = _session(view)
    good = {"name": "carol", "password": "carol-password", "csrf": token, "next": "/"}
    e = _sign_in(view, good, cookie)
    assert e.code == 303 and e.headers["Location"].endswith("/")
    signed = e.headers["Set-Cookie"].split(";")[0]
    assert signed != cookie
    _s, body, _h = get(view.url, cookie=signed)
    token3 = body.split('name="csrf" content="')[1].split('"')[0]
    assert "signed in as <b id=\"user\">carol</b>" in body
    conn = sqlite3.connect(view.db)
    aid = views.alarms(conn)[0].id
    st, _b = post(view.url + "alarms/%d/ack" % aid, {"note": "", "csrf": token3}, signed,
                  origin=own)
    assert st == 400  # a note is needed
    st, _b = post(view.url + "alarms/%d/ack" % aid, {"note": "dome replaced", "csrf": token3},
                  signed, origin=own)
    assert st == 303
    assert conn.execute("SELECT user, note FROM acks").fetchall() == [("carol", "dome replaced")]
    st, body = post(view.url + "alarms/%d/ack" % aid, {"note": "twice", "csrf": token3}, signed,
                    origin=own)
    assert st == 409 and "already by carol" in body
    # No route changes the audit trail.
    for method in ("POST", "PUT", "DELETE"):
        req = urllib.request.Request(view.url + "audit", method=method, data=b"x=1",
                                     headers={"Cookie": signed, "Origin": own})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req)
        assert e.value.code == 405
    _s, body, headers = get(view.url + "audit")
    main = body.split("<main>")[1]
    # Its one form reads (the filters), nothing on it posts.
    assert "dome replaced" in body and main.count("<form") == 1 and "post" not in main.lower()
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]


def test_the_event_stream_sends_a_tables_new_tile_after_a_commit(view):
    ev = NextEvent(view, "grid", "tiles")  # from the page's version before the commit
    j = view.journals["T2"]
    j.play_round()
    feed(view.db, {"T2": j})
    view.notify({"T2"})
    tiles = ev.wait()["tiles"]
    assert list(tiles) == ["T2"]
    assert 'data-result-round="%d"' % j.m.round in tiles["T2"]


def test_the_big_small_road_and_hot_and_cold():
    # A run goes down its column; a new outcome starts the next column; a
    # run longer than six turns right along the bottom (the dragon's
    # tail); a triple marks the cell before it.
    cells = views.road(list("BBSTSSSSSSSSB"))
    assert cells[(0, 0)] == ["B", 0] and cells[(0, 1)] == ["B", 0]
    assert cells[(1, 0)] == ["S", 1]  # S then a triple
    assert [cells[(1, r)][0] for r in range(6)] == ["S"] * 6
    assert cells[(2, 5)] == ["S", 0] and cells[(3, 5)] == ["S", 0]  # the tail
    assert cells[(2, 0)] == ["B", 0]  # the next run: the column after the run's first
    assert len(cells) == 12
    assert views.road(list("TTB")) == {(0, 0): ["B", 2]}  # before the first: on the first
    assert views.road(["T"]) == {(0, 0): ["", 1]}

    class R:
        def __init__(self, dice, void=False):
            self.dice, self.void = dice, void

    hc = views.hot_cold([R((1, 2, 3)), R((1, 2, 3)), R((6, 6, 6)), R(None, True),
                         R((4, 5, 1))])
    assert hc["rounds"] == 4
    assert hc["totals"][6] == 2 and hc["totals"][18] == 1 and hc["totals"][10] == 1
    assert hc["hot_totals"] == [6, 10, 18] and hc["cold_totals"] == [3, 4, 5]
    assert hc["faces"] == {1: 3, 2: 2, 3: 2, 4: 1, 5: 1, 6: 3}
    assert hc["hot_faces"] == [1, 6, 2] and hc["cold_faces"] == [4, 5, 2]
    assert views.outcome((2, 2, 2)) == "T" and views.outcome((5, 5, 1)) == "B"
    assert views.outcome((1, 2, 1)) == "S" and views.outcome(None) is None


def test_approvals_refuse_what_is_not_hex_and_revoke_only_what_is_approved(tmp_path):
    db = str(tmp_path / "floor.db")
    r = sicbo("floor", "approve", "--db", db, "--code", "not-a-hash")
    assert r.returncode == 2 and "is not hex" in r.stderr
    r = sicbo("floor", "approve", "--db", db, "--config", "0a0b0c0d0e0f", "--revoke")
    assert r.returncode == 2 and "is not approved" in r.stderr
    r = sicbo("floor", "approve", "--db", db, "--config", "0A0B0C0D0E0F", "--by", "judy")
    assert r.returncode == 0 and r.stdout.strip() == "config 0a0b0c0d0e0f approved"
    conn = sqlite3.connect(db)
    assert staff.approved(conn) == {"code": set(), "config": {"0a0b0c0d0e0f"}}
    assert conn.execute("SELECT user, action FROM audit").fetchall() == [("judy", "approve")]


def test_the_floor_view_refuses_a_port_in_use_in_one_line(store_db, tmp_path):
    import socket

    db, _j = store_db
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        r = sicbo("floor", "web", "--db", db, "--http", "127.0.0.1:%d" % s.getsockname()[1])
    finally:
        s.close()
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot serve" in r.stderr
    r = sicbo("floor", "web", "--db", db, "--http", "nonsense")
    assert r.returncode == 2 and "--http 'nonsense' is not HOST:PORT" in r.stderr
    r = sicbo("floor", "web", "--db", str(tmp_path / "none.db"), "--http", "127.0.0.1:0")
    assert r.returncode == 2 and "no floor store" in r.stderr
    assert not os.path.exists(tmp_path / "none.db")


def test_the_view_alone_beside_a_service_sees_each_commit(store_db):
    from host_tools.broker import free_port

    db, journals = store_db
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "host_tools", "floor", "web", "--db", db,
                             "--http", "127.0.0.1:%d" % port], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout.readline().startswith("floor: floor view at ")
        url = "http://127.0.0.1:%d/" % port
        r = urllib.request.urlopen(url + "events?page=grid", timeout=60)
        assert r.readline() == b"retry: 1000\n"
        j = journals["T1"]
        j.play_round()
        feed(db, {"T1": j})  # a commit by another process: the view polls data_version
        event = None
        deadline = time.monotonic() + 120
        for raw in r:
            assert time.monotonic() < deadline, "no tile of T1's new round"
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "tiles":
                tiles = json.loads(line[6:])["tiles"]
                if 'data-result-round="%d"' % j.m.round in tiles.get("T1", ""):
                    break
        _s, body, _h = get(url + "api/tables")
        assert [t["round"] for t in json.loads(body)["tables"]] == [j.m.round, 8]
    finally:
        proc.terminate()
        proc.wait(60)


def test_a_page_of_an_earlier_run_of_the_service_is_brought_up_to_date_whole(view):
    # Its stream says a version this run has not reached: every tile is sent.
    r = urllib.request.urlopen(view.url + "events?page=grid&since=99999", timeout=60)
    event = None
    deadline = time.monotonic() + 60
    for raw in r:
        assert time.monotonic() < deadline, "no tiles sent"
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "tiles":
            assert sorted(json.loads(line[6:])["tiles"]) == ["T1", "T2"]
            break
