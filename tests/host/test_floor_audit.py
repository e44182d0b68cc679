# The audit trail as compliance reads it: every entry reachable, page by page
# (the newest page live), filtered by account, action or table, exported as
# CSV, and from the command line; bad filters refused with the reason.
import csv
import io
import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse

import pytest

from floorwebkit import NextEvent, feed, get, start_view
from host_tools import REPO
from host_tools.floor import staff, views
from host_tools.floor.simtables import TableJournal

ENTRIES = 2 * views.AUDIT_PAGE + 37  # three pages, the last one short


def sicbo(*args):
    return subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


@pytest.fixture
def trail(tmp_path):
    db = str(tmp_path / "floor.db")
    feed(db, {"T1": TableJournal(1)})
    conn = staff.open_rw(db)
    staff.add_user(conn, "ann", "ann-password")  # one user-add entry
    for i in range(ENTRIES):
        who = ("ann", "bob", None)[i % 3]
        action = "sign-in-failed" if i % 2 else "sign-in"
        staff.audit(conn, who, action, "T1" if i % 5 == 0 else None, None,
                    "=HYPERLINK(\"http://x\")" if i == 7 else "entry %d" % i, "10.0.0.%d" % (i % 4))
    yield db, conn
    conn.close()


@pytest.fixture
def view(trail):
    v = start_view(trail[0])
    yield v
    v.stop()


def _ids(body):
    return [int(x) for x in re.findall(r'data-audit="(\d+)"', body)]


def _older(body):
    m = re.search(r'<p id="audit-more"( hidden)?><a id="audit-older" href="([^"]*)"', body)
    assert m, "no older-entries paragraph"
    return None if m.group(1) else m.group(2).replace("&amp;", "&")


def _get_400(url):
    with pytest.raises(urllib.error.HTTPError) as e:
        get(url)
    assert e.value.code == 400
    return e.value.read().decode()


def _db_ids(conn, where="", args=()):
    return [i for i, in conn.execute("SELECT id FROM audit" + where + " ORDER BY id DESC",
                                     args)]


def test_every_entry_is_reached_page_by_page_newest_first(trail, view):
    _db, conn = trail
    everything = _db_ids(conn)
    assert len(everything) == ENTRIES + 1
    _s, body, _h = get(view.url + "audit")
    assert 'id="audit"' in body  # the newest page: live
    first = _ids(body)
    assert first == everything[:views.AUDIT_PAGE]
    assert re.search(r'id="audit-total">%d<' % len(everything), body)
    seen = list(first)
    href = _older(body)
    pages = 1
    while href is not None:
        _s, body, _h = get(view.url + href.lstrip("/"))
        assert 'id="audit-page"' in body and 'id="audit"' not in body  # not live
        ids = _ids(body)
        assert ids and max(ids) < min(seen)
        seen += ids
        href = _older(body)
        pages += 1
    assert seen == everything and pages == 3
    # A page holds nothing that could change the trail: its one form reads.
    main = body.split("<main>")[1]
    assert main.count("<form") == 1 and 'method="get"' in main and "post" not in main.lower()


def test_filters_by_account_action_and_table(trail, view):
    _db, conn = trail
    _s, body, _h = get(view.url + "audit?user=ann&action=sign-in-failed")
    want = _db_ids(conn, " WHERE user=? AND action=?", ("ann", "sign-in-failed"))
    assert 0 < len(want) < views.AUDIT_PAGE
    assert _ids(body) == want and _older(body) is None
    assert set(re.findall(r'data-user="([^"]*)"', body)) == {"ann"}
    assert re.search(r'id="audit-total">%d<' % len(want), body) and "match" in body
    assert 'id="audit-page"' in body  # a filtered page is not live
    _s, body, _h = get(view.url + "audit?table=T1")
    assert _ids(body) == _db_ids(conn, " WHERE table_id='T1'")
    # Filters and paging together: the second page of one action's entries.
    _s, body, _h = get(view.url + "audit?action=sign-in-failed")
    failed = _db_ids(conn, " WHERE action='sign-in-failed'")
    assert len(failed) > views.AUDIT_PAGE and _ids(body) == failed[:views.AUDIT_PAGE]
    href = _older(body)
    assert "action=sign-in-failed" in href
    _s, body, _h = get(view.url + href.lstrip("/"))
    assert _ids(body) == failed[views.AUDIT_PAGE:] and _older(body) is None
    _s, body, _h = get(view.url + "audit?user=nobody")
    assert _ids(body) == [] and "No entry matches" in body


def test_bad_filters_are_refused_with_the_reason(view):
    for query, why in (("before=12x", "before=12x is not an entry&#039;s number"),
                       ("before=99999999999", "is not an entry"),
                       ("before=" + urllib.parse.quote("\u00b2"), "is not an entry"),
                       ("action=delete", "action=delete is none of the audit trail"),
                       ("user=" + urllib.parse.quote("bad name!"), "is not an account"),
                       ("table=" + urllib.parse.quote("<script>"), "is not a table id")):
        for path in ("audit", "audit.csv"):
            body = _get_400(view.url + path + "?" + query)
            assert why in body, (query, body)
            assert "<script>" not in body


def test_the_csv_holds_every_matching_entry_and_starts_no_formula(trail, view):
    _db, conn = trail
    _s, text, headers = get(view.url + "audit.csv")
    assert headers["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["id", "at_utc", "user", "action", "table", "alarm", "detail", "from"]
    assert [int(r[0]) for r in rows[1:]] == _db_ids(conn)  # all, not a page
    formula = [r for r in rows[1:] if "HYPERLINK" in r[6]]
    assert len(formula) == 1 and formula[0][6].startswith("'=")
    _s, text, _h = get(view.url + "audit.csv?action=sign-in&before=100")
    ids = [int(r[0]) for r in list(csv.reader(io.StringIO(text)))[1:]]
    assert ids == _db_ids(conn, " WHERE action='sign-in' AND id<100")


def test_the_live_page_follows_new_entries_and_its_older_link(trail, view):
    _db, conn = trail
    ev = NextEvent(view, "audit", "audit")
    new = staff.audit(conn, "ann", "sign-out", None, None, "signed out", "10.0.0.9")
    view.hub.notify((), audit=True)
    d = ev.wait()
    everything = _db_ids(conn)
    assert _ids(d["html"]) == everything[:views.AUDIT_PAGE] and _ids(d["html"])[0] == new
    assert d["older"] == "/audit?before=%d" % everything[views.AUDIT_PAGE - 1]
    assert d["total"] == len(everything)


def test_the_audit_command_lists_filters_and_exports(trail, view):
    db, conn = trail
    r = sicbo("floor", "audit", "--db", db, "--user", "ann", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["audit"]
    assert [e["id"] for e in out] == _db_ids(conn, " WHERE user='ann'")
    assert {e["user"] for e in out} == {"ann"}
    assert (out[-1]["action"], out[-1]["table"], out[-1]["detail"], out[-1]["from"]) == (
        "sign-in", "T1", "entry 0", "10.0.0.0")
    r = sicbo("floor", "audit", "--db", db, "--table", "T1", "--limit", "3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and all("table T1: " in x for x in lines)
    assert [int(x.split()[0]) for x in lines] == _db_ids(conn, " WHERE table_id='T1'")[:3]
    r = sicbo("floor", "audit", "--db", db, "--csv")
    _s, text, _h = get(view.url + "audit.csv")
    assert r.returncode == 0 and r.stdout == text
    r = sicbo("floor", "audit", "--db", db, "--action", "sign-in", "--user", "carl")
    assert r.returncode == 0 and r.stdout == "no audit entry matches\n"
    for args, why in ((["--action", "delete"], "--action delete is none of"),
                      (["--before", "x"], "--before x is not an entry"),
                      (["--limit", "0"], "--limit must be 1 or more")):
        r = sicbo("floor", "audit", "--db", db, *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and why in r.stderr, r.stderr


def test_the_audit_command_on_a_store_the_view_never_wrote(tmp_path):
    db = str(tmp_path / "floor.db")
    feed(db, {"T1": TableJournal(1)})  # the service's store: no account, no approval yet
    r = sicbo("floor", "audit", "--db", db)
    assert r.returncode == 0 and r.stdout == "no audit entry\n", r.stderr
    r = sicbo("floor", "audit", "--db", db, "--csv")
    assert r.returncode == 0 and r.stdout.splitlines() == [
        "id,at_utc,user,action,table,alarm,detail,from"]
    r = sicbo("floor", "audit", "--db", str(tmp_path / "none.db"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr


def test_an_action_the_trail_does_not_know_is_refused(trail):
    _db, conn = trail
    before = conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0]
    with pytest.raises(ValueError, match="no audit action"):
        staff.audit(conn, "ann", "delete-everything", None, None, "x", None)
    assert conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0] == before
