# The floor view's limits, found in a security review, each seen failing
# before its fix: sign-in throttled per account and per address (counted
# from the audit trail), a Host allow-list against DNS rebinding, and event
# streams limited per client and in all. Real HTTP against a view served in
# this process on 127.0.0.1 (other loopback addresses, 127.0.0.2 and .3,
# stand for other clients).
import http.client
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse

import pytest

from floorwebkit import feed
from host_tools import REPO
from host_tools.floor import staff, store, web
from host_tools.floor.simtables import TableJournal
from host_tools.rules import load_table

NAME = "floor.casino.example"


@pytest.fixture
def store_db(tmp_path):
    db = str(tmp_path / "floor.db")
    journals = {"T1": TableJournal(1), "T2": TableJournal(2)}
    for j in journals.values():
        for _ in range(2):
            j.play_round()
    feed(db, journals)
    return db


@pytest.fixture
def make_view(store_db):
    """A view served on 127.0.0.1 port 0 (constructor arguments as given),
    with the account carol."""
    made = []
    conn = staff.open_rw(store_db)
    staff.add_user(conn, "carol", "carol-password")
    conn.close()

    def make(**kw):
        cfg, table = load_table(None)
        v = web.FloorView(store_db, cfg, table, **kw).start("127.0.0.1", 0)
        v.port = v.server.server_address[1]
        made.append(v)
        return v

    yield make
    for v in made:
        v.stop()


@pytest.fixture
def view(make_view):
    return make_view()


class Clock:
    def __init__(self):
        self.t = time.time()

    def time(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    """The staff module's time (the audit trail's and the throttle's), set
    by the test."""
    c = Clock()
    monkeypatch.setattr(staff, "time", c)
    return c


@pytest.fixture
def scrypt(monkeypatch):
    """Every password check (scrypt) the view runs."""
    calls = []
    real = staff.check_password

    def counted(password, kdf):
        calls.append(kdf)
        return real(password, kdf)

    monkeypatch.setattr(staff, "check_password", counted)
    return calls


def req(port, method, path, fields=None, headers=None, source="127.0.0.1"):
    """(status, headers, body) of one request, nothing followed; Host as
    http.client makes it unless headers give one."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
    body = None
    headers = dict(headers or {})
    if fields is not None:
        body = urllib.parse.urlencode(fields)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        c.request(method, path, body, headers)
        r = c.getresponse()
        return r.status, r.headers, r.read().decode("utf-8", "replace")
    finally:
        c.close()


def _session(v, source="127.0.0.1", host=None):
    """An anonymous session's (cookie, token), as a browser gets them."""
    _st, h, body = req(v.port, "GET", "/signin", headers={"Host": host} if host else None,
                       source=source)
    return h["Set-Cookie"].split(";")[0], body.split('name="csrf" content="')[1].split('"')[0]


def _sign_in(v, session, name, password, source="127.0.0.1", headers=None):
    cookie, token = session
    h = {"Cookie": cookie, "Origin": "http://127.0.0.1:%d" % v.port}
    h.update(headers or {})
    return req(v.port, "POST", "/signin", {"name": name, "password": password,
                                           "csrf": token, "next": "/"}, h, source=source)


def _trail(db):
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT user, action, remote FROM audit WHERE action LIKE"
                            " 'sign-in%' ORDER BY id").fetchall()
    finally:
        conn.close()


# ---- sign-in throttled ------------------------------------------------------------------------


def test_five_failures_lock_the_account_unchecked_until_the_oldest_is_15_minutes_old(
        view, clock, scrypt):
    t0 = clock.t
    s = _session(view)
    for i in range(5):  # a minute apart
        clock.t = t0 + 60 * i
        st, _h, body = _sign_in(view, s, "carol", "wrong-password")
        assert st == 403 and "wrong name or password" in body
    assert len(scrypt) == 5
    # The right password now is refused without being checked.
    clock.t = t0 + 300
    st, h, body = _sign_in(view, s, "carol", "carol-password")
    assert st == 429 and h["Retry-After"] == "600", (st, dict(h))
    assert "too many failed sign-ins for this account: try again in 10 minutes" in body
    assert len(scrypt) == 5
    # A refused attempt is no failure: the lock is not extended by it.
    clock.t = t0 + 899
    st, h, body = _sign_in(view, s, "carol", "carol-password")
    assert st == 429 and h["Retry-After"] == "1" and "try again in 1 minute" in body
    # The oldest failure 15 minutes old: a sign-in is taken again. It fails,
    # five in the window again: locked until the next oldest is 15 minutes old.
    clock.t = t0 + 900
    assert _sign_in(view, s, "carol", "wrong-password")[0] == 403
    assert len(scrypt) == 6
    st, h, _b = _sign_in(view, s, "carol", "carol-password")
    assert st == 429 and h["Retry-After"] == "60"
    clock.t = t0 + 960
    assert _sign_in(view, s, "carol", "carol-password")[0] == 303
    assert len(scrypt) == 7
    lo = "127.0.0.1"
    assert _trail(view.db) == (
        [("carol", "sign-in-failed", lo)] * 5 + [("carol", "sign-in-throttled", lo)] * 2
        + [("carol", "sign-in-failed", lo), ("carol", "sign-in-throttled", lo),
           ("carol", "sign-in", lo)])
    conn = sqlite3.connect(view.db)
    details = [d for d, in conn.execute("SELECT detail FROM audit WHERE"
                                        " action='sign-in-throttled' ORDER BY id")]
    assert details[0] == ("too many failed sign-ins of this account (5 within 15 minutes): "
                          "refused unchecked for 600 s")


def test_a_sign_in_starts_the_account_s_count_again(view, clock, scrypt):
    s = _session(view)
    for _ in range(4):
        assert _sign_in(view, s, "carol", "wrong-password")[0] == 403
    assert _sign_in(view, s, "carol", "carol-password")[0] == 303
    s = _session(view)  # the old session was replaced at sign-in
    for _ in range(4):
        assert _sign_in(view, s, "carol", "wrong-password")[0] == 403
    # Eight failures within the window, four since the sign-in: taken.
    assert _sign_in(view, s, "carol", "carol-password")[0] == 303
    s = _session(view)
    for _ in range(5):
        assert _sign_in(view, s, "carol", "wrong-password")[0] == 403
    st, _h, body = _sign_in(view, s, "carol", "carol-password")
    assert st == 429 and "for this account" in body
    assert len(scrypt) == 15


def test_twenty_failures_from_one_address_lock_it_whatever_the_names(view, clock, scrypt):
    t0 = clock.t
    s = _session(view)
    # A name that is no account never locks by itself (nothing of it is
    # kept to count): the same answer as ever.
    for _ in range(6):
        st, _h, body = _sign_in(view, s, "mallory", "guess")
        assert st == 403 and "wrong name or password" in body
    for i in range(14):
        assert _sign_in(view, s, "nobody%02d" % i, "guess")[0] == 403
    assert len(scrypt) == 20
    st, h, body = _sign_in(view, s, "mallory", "guess")
    assert st == 429 and h["Retry-After"] == "900"
    assert "too many failed sign-ins from this address: try again in 15 minutes" in body
    st, _h, body = _sign_in(view, s, "carol", "carol-password")
    assert st == 429 and "from this address" in body
    # The connection's own address counts, not one the client writes.
    st, _h, _b = _sign_in(view, s, "carol", "carol-password",
                          headers={"X-Forwarded-For": "10.1.2.3"})
    assert st == 429
    assert len(scrypt) == 20
    # Another address is not locked.
    assert _sign_in(view, _session(view, "127.0.0.2"), "carol", "carol-password",
                    source="127.0.0.2")[0] == 303
    trail = _trail(view.db)
    assert trail[20:] == [(None, "sign-in-throttled", "127.0.0.1"),
                          ("carol", "sign-in-throttled", "127.0.0.1"),
                          ("carol", "sign-in-throttled", "127.0.0.1"),
                          ("carol", "sign-in", "127.0.0.2")]
    assert trail[:20] == [(None, "sign-in-failed", "127.0.0.1")] * 20
    # The window passed: the address signs in again.
    clock.t = t0 + 900
    assert _sign_in(view, s, "carol", "carol-password")[0] == 303
    assert len(scrypt) == 22


def test_the_throttle_s_index_is_made_in_an_existing_store_and_the_trail_stays_append_only(
        store_db):
    conn = staff.open_rw(store_db)
    conn.execute("DROP INDEX audit_action_at")  # a store made before the index
    staff.audit(conn, None, "sign-in-failed", None, None, "no such account", "127.0.0.1")
    conn.close()
    staff.ensure(store_db)
    conn = sqlite3.connect(store_db)
    assert "audit_action_at" in [r[1] for r in conn.execute("PRAGMA index_list(audit)")]
    plan = " ".join(r[3] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT at FROM audit WHERE action='sign-in-failed' AND at>?"
        " AND remote=? ORDER BY at DESC LIMIT 1 OFFSET 19", (0, "127.0.0.1")))
    assert "USING INDEX audit_action_at" in plan, plan
    for sql in ("DELETE FROM audit", "UPDATE audit SET at=0"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(sql)


# ---- the Host allow-list ----------------------------------------------------------------------


def test_a_request_naming_another_host_is_refused_before_anything_else(make_view):
    v = make_view(names=(NAME,))
    p = v.port
    s = _session(v)
    form = {"name": "carol", "password": "carol-password", "csrf": s[1], "next": "/"}
    before = _trail(v.db)
    # A page of evil.example whose name now leads to the view (DNS
    # rebinding): its Host and Origin agree with each other.
    evil = "evil.example:%d" % p
    st, h, body = req(p, "POST", "/signin", form, {"Host": evil, "Cookie": s[0],
                                                  "Origin": "http://" + evil})
    assert st == 421 and "does not answer to the name evil.example:%d" % p in body
    assert h["Content-Type"].startswith("text/plain") and h["X-Content-Type-Options"] == "nosniff"
    assert _trail(v.db) == before  # not signed in, not even a refusal kept
    for path in ("/", "/signin", "/events?page=grid", "/api/tables", "/static/floor.css",
                 "/no/such/page"):
        assert req(p, "GET", path, headers={"Host": evil})[0] == 421, path
    for host in ("evil.example", "localhost.evil.example", "127.0.0.1:%d, evil.example" % p,
                 "127.0.0.1:x", "[::1", "", "floor.casino.example.evil:%d" % p):
        assert req(p, "GET", "/", headers={"Host": host})[0] == 421, host
    for host in ("127.0.0.1:%d" % p, "localhost:%d" % p, "localhost", "[::1]:%d" % p,
                 "10.0.0.7", NAME, "%s:%d" % (NAME, p), "FLOOR.Casino.example.:%d" % p,
                 socket.gethostname()):
        assert req(p, "GET", "/", headers={"Host": host})[0] == 200, host
    # No Host at all (HTTP/1.0): refused the same.
    with socket.create_connection(("127.0.0.1", p), timeout=60) as c:
        c.sendall(b"GET / HTTP/1.0\r\n\r\n")
        got = b""
        while chunk := c.recv(4096):
            got += chunk
    assert got.split(b"\r\n", 1)[0].split()[1] == b"421" and b"name none" in got
    # Opened by its configured name, the view signs in (its Origin is that name's).
    own = "%s:%d" % (NAME, p)
    s = _session(v, host=own)
    st, _h, _b = req(p, "POST", "/signin", dict(form, csrf=s[1]),
                     {"Host": own, "Cookie": s[0], "Origin": "http://" + own})
    assert st == 303


def _served(args):
    """A sicbo process serving the view: (process, port)."""
    proc = subprocess.Popen([sys.executable, "-m", "host_tools", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        if "floor view at " in line:
            return proc, int(line.rsplit(":", 1)[1].strip().strip("/"))
    proc.wait(60)
    raise AssertionError("no floor view served (exit %s)" % proc.returncode)


def test_http_name_adds_a_name_to_the_view_alone_and_beside_the_service(store_db):
    from host_tools.broker import free_port

    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "web", "--db", store_db,
                        "--http", "127.0.0.1:0", "--http-name", "bad name"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "--http-name 'bad name' is not a host name" in r.stderr
    for args in (["floor", "web", "--db", store_db],
                 # The service with no broker to reach: its view serves all the same.
                 ["floor", "--broker", "127.0.0.1:%d" % free_port(), "--db", store_db,
                  "--site", "site1"]):
        proc, port = _served(args + ["--http", "127.0.0.1:0", "--http-name", NAME,
                                     "--http-name", "other.casino.example"])
        try:
            for host, want in ((NAME, 200), ("other.casino.example:%d" % port, 200),
                               ("third.casino.example", 421)):
                assert req(port, "GET", "/", headers={"Host": host})[0] == want, (args, host)
        finally:
            proc.terminate()
            proc.wait(60)
            proc.stdout.close()


# ---- event streams limited --------------------------------------------------------------------


def _stream(port, source="127.0.0.1"):
    """An event stream opened from source: (socket, status, head). A
    stream taken is read to its first bytes (it is established); a refusal
    to its end."""
    c = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    c.sendall(b"GET /events?page=grid HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = c.recv(4096)
        assert chunk, got
        got += chunk
    head, _sep, body = got.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    while (status == 200 and b"retry: 1000" not in body) or status != 200:
        chunk = c.recv(4096)
        if not chunk:
            break
        body += chunk
    return c, status, head.decode() + "\r\n\r\n" + body.decode()


def _until(cond, what, poke=lambda: None, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        poke()
        time.sleep(0.02)


def test_event_streams_are_limited_per_client_and_in_all_and_freed_when_they_end(
        make_view, monkeypatch):
    v = make_view(streams_per_client=2, streams_max=3)
    p = v.port
    # A HEAD, and a stream that fails before its first part, hold nothing.
    for _ in range(3):
        assert req(p, "HEAD", "/events?page=grid")[0] == 200
    assert v.streams_open() == 0

    def no_store(path):
        raise sqlite3.OperationalError("unable to open database file")

    with monkeypatch.context() as m:
        m.setattr(store, "open_ro", no_store)
        for _ in range(3):
            assert req(p, "GET", "/events?page=grid")[0] == 500
    assert v.streams_open() == 0
    a, st, _t = _stream(p)
    assert st == 200
    b, st, _t = _stream(p)
    assert st == 200
    assert v.streams_open("127.0.0.1") == 2
    c, st, text = _stream(p)
    c.close()
    assert st == 503 and "\r\nRetry-After: 5\r\n" in text
    assert "too many open event streams from this address (at most 2)" in text
    d, st, _t = _stream(p, "127.0.0.2")  # another client
    assert st == 200 and v.streams_open() == 3
    e, st, text = _stream(p, "127.0.0.3")
    e.close()
    assert st == 503 and "too many open event streams in all (at most 3)" in text
    # A client gone: the view sees it at its next writes to it (here: a
    # commit's tiles; else the keepalive), and frees its slot.
    a.close()
    _until(lambda: v.streams_open("127.0.0.1") == 1, "the closed stream's slot freed",
           poke=lambda: v.hub.notify(None, alarms=True))
    f, st, _t = _stream(p)
    assert st == 200 and v.streams_open() == 3
    # The view stopped: every stream ends and gives its slot back.
    v.stop()
    _until(lambda: v.streams_open() == 0, "every slot freed at stop")
    for s in (b, d, f):
        s.close()
