# Every alarm within reach: the open ones a page cannot show all of are
# counted and pointed to, the acknowledged ones are paged (each with who,
# when and the note), all are exported as CSV and listed by `sicbo floor
# alarms`; a bad query is refused with the reason.
import csv
import io
import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse

import pytest

from floorwebkit import feed, get, start_view
from host_tools import REPO
from host_tools.floor import staff, store, views
from host_tools.floor.simtables import TableJournal

ALARMS = 480
ACKED = 230  # of them acknowledged; the open ones are more than a page shows


def sicbo(*args):
    return subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


def _raise_alarms(db, n):
    # As the floor's ingest raises them (store.open_rw: the service's writer).
    conn = store.open_rw(db)
    with conn:
        for i in range(n):
            conn.execute("INSERT INTO alarms (table_id, seq, round, source, kind, code, text,"
                         " wall, raised) VALUES (?,?,?,?,?,?,?,?,?)",
                         ("T%d" % (1 + i % 2), 100 + i, 10 + i, "table", "alarm", 1,
                          "tamper %d" % i, None, 1_700_000_000 + i))
    conn.close()


@pytest.fixture
def alarms_db(tmp_path):
    db = str(tmp_path / "floor.db")
    feed(db, {"T1": TableJournal(1), "T2": TableJournal(2)})
    _raise_alarms(db, ALARMS)
    conn = staff.open_rw(db)
    staff.add_user(conn, "dora", "dora-password")
    ids = [i for i, in conn.execute("SELECT id FROM alarms ORDER BY id")]
    for k, aid in enumerate(ids[::2][:ACKED]):
        staff.acknowledge(conn, aid, "dora", "=cmd|'/c calc'!A1" if k == 3 else "cover "
                          "checked %d" % k, "127.0.0.1")
    yield db, conn
    conn.close()


@pytest.fixture
def view(alarms_db):
    v = start_view(alarms_db[0])
    yield v
    v.stop()


def _open_ids(conn, tid=None):
    q = "SELECT id FROM alarms WHERE id NOT IN (SELECT alarm_id FROM acks)"
    return [i for i, in conn.execute(q + (" AND table_id=?" if tid else "") + " ORDER BY id"
                                     " DESC", (tid,) if tid else ())]


def _acked_ids(conn, tid=None):
    q = "SELECT a.id FROM alarms a JOIN acks k ON k.alarm_id=a.id"
    return [i for i, in conn.execute(q + (" WHERE a.table_id=?" if tid else "")
                                     + " ORDER BY a.id DESC", (tid,) if tid else ())]


def _shown_open(body):
    return [int(x) for x in re.findall(r'<div class="alarm [^"]*" id="alarm-(\d+)"', body)]


def _shown_acked(body):
    part = body.split('id="acknowledged"')[1].split("</table>")[0]
    return [int(x) for x in re.findall(r'<tr data-alarm="(\d+)"', part)]


def test_open_alarms_a_page_cannot_show_are_counted_and_pointed_to(alarms_db, view):
    _db, conn = alarms_db
    open_ids = _open_ids(conn)
    assert len(open_ids) == ALARMS - ACKED > views.ALARMS_LISTED
    _s, body, _h = get(view.url + "alarms")
    assert _shown_open(body) == open_ids[:views.ALARMS_LISTED]
    assert ("The newest %d of %d open alarms are shown here"
            % (views.ALARMS_LISTED, len(open_ids))) in body
    assert 'href="/alarms.csv?state=open"' in body
    _s, body, _h = get(view.url)  # the grid: 50 of them
    assert _shown_open(body) == open_ids[:50]
    assert "The newest 50 of %d open alarms are shown" % len(open_ids) in body
    # A table's page: T2's alarms are all open (more than a page), T1's
    # mostly acknowledged (all of its open ones shown: nothing said).
    t2 = _open_ids(conn, "T2")
    assert len(t2) > views.ALARMS_LISTED
    _s, body, _h = get(view.url + "table/T2")
    assert _shown_open(body) == t2[:views.ALARMS_LISTED]
    assert ("The newest %d of %d open alarms of T2 are shown" % (views.ALARMS_LISTED, len(t2))
            in body) and 'href="/alarms.csv?state=open&amp;table=T2"' in body
    t1 = _open_ids(conn, "T1")
    assert 0 < len(t1) < views.ALARMS_LISTED
    _s, body, _h = get(view.url + "table/T1")
    assert _shown_open(body) == t1 and 'id="alarms-more"' not in body


def test_every_acknowledged_alarm_is_reached_page_by_page(alarms_db, view):
    _db, conn = alarms_db
    acked = _acked_ids(conn)
    assert len(acked) == ACKED
    _s, body, _h = get(view.url + "alarms")
    assert "%d acknowledged" % ACKED in body
    seen = []
    pages = 0
    while True:
        ids = _shown_acked(body)
        assert ids and (not seen or max(ids) < min(seen))
        seen += ids
        pages += 1
        m = re.search(r'<a id="acked-older" href="([^"]*)"', body)
        if m is None:
            break
        _s, body, _h = get(view.url + m.group(1).lstrip("/"))
        assert "these are below alarm" in body
    assert seen == acked and pages == 3
    # Each with who acknowledged it and the note, as acknowledged.
    note = conn.execute("SELECT note FROM acks WHERE alarm_id=?", (acked[-1],)).fetchone()[0]
    assert note in body and "dora" in body


def test_the_csv_holds_every_alarm_with_its_acknowledgement(alarms_db, view):
    _db, conn = alarms_db
    _s, text, headers = get(view.url + "alarms.csv")
    assert headers["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["id"]) for r in rows] == [i for i, in conn.execute(
        "SELECT id FROM alarms ORDER BY id DESC")]
    acked = {r["id"]: r for r in rows if r["state"] == "acknowledged"}
    assert len(acked) == ACKED and all(r["acknowledged_by"] == "dora" for r in acked.values())
    formula = [r for r in acked.values() if "calc" in r["note"]]
    assert len(formula) == 1 and formula[0]["note"].startswith("'=")
    _s, text, _h = get(view.url + "alarms.csv?state=open&table=T1")
    assert [int(r["id"]) for r in csv.DictReader(io.StringIO(text))] == _open_ids(conn, "T1")
    _s, text, _h = get(view.url + "alarms.csv?state=acknowledged")
    assert [int(r["id"]) for r in csv.DictReader(io.StringIO(text))] == _acked_ids(conn)


@pytest.mark.parametrize("path, why", [
    ("alarms?before=7x", "before=7x is not an alarm&#039;s number"),
    ("alarms?before=" + urllib.parse.quote("\u00b2"), "is not an alarm&#039;s number"),
    ("alarms.csv?state=closed", "state=closed is neither open nor acknowledged"),
    ("alarms.csv?table=" + urllib.parse.quote("<b>"), "is not a table id"),
])
def test_a_bad_query_is_refused_with_the_reason(view, path, why):
    with pytest.raises(urllib.error.HTTPError) as e:
        get(view.url + path)
    assert e.value.code == 400
    body = e.value.read().decode()
    assert why in body and "<b>" not in body


def test_the_alarms_command_lists_filters_and_exports(alarms_db, view):
    db, conn = alarms_db
    r = sicbo("floor", "alarms", "--db", db, "--open", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["alarms"]
    assert [a["id"] for a in out] == _open_ids(conn) and not any(a["note"] for a in out)
    assert all(a["open"] for a in out)
    r = sicbo("floor", "alarms", "--db", db, "--acknowledged", "--table", "T1", "--limit", "4")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [int(x.split()[0]) for x in lines] == _acked_ids(conn, "T1")[:4]
    assert all("acknowledged by dora " in x for x in lines)
    r = sicbo("floor", "alarms", "--db", db, "--csv")
    _s, text, _h = get(view.url + "alarms.csv")
    assert r.returncode == 0 and r.stdout == text
    for args, why in ((["--open", "--acknowledged"], "not allowed with argument"),
                      (["--limit", "0"], "--limit must be 1 or more"),
                      (["--table", "no such!"], "is not a table id")):
        r = sicbo("floor", "alarms", "--db", db, *args)
        assert r.returncode == 2 and why in r.stderr, r.stderr


def test_the_alarms_command_on_the_services_store_before_the_view_wrote(tmp_path):
    db = str(tmp_path / "floor.db")
    feed(db, {"T1": TableJournal(1)})
    _raise_alarms(db, 3)  # no account, no acknowledgement table yet: all open
    r = sicbo("floor", "alarms", "--db", db, "--json")
    assert r.returncode == 0, r.stderr
    assert [a["open"] for a in json.loads(r.stdout)["alarms"]] == [True] * 3
    r = sicbo("floor", "alarms", "--db", db, "--acknowledged")
    assert r.returncode == 0 and r.stdout == "no acknowledged alarm\n"
